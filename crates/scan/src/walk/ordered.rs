//! The entries of a tree in path order, handed out while the walk goes on.
//!
//! A consumer that needs entries in path order (grep's results are, and
//! its `max_count` cuts that order) could only start once the whole tree
//! had been walked and sorted, so a search that needs only its first few
//! files paid for listing all of them. This walk hands out the tree a
//! subtree at a time, in order, as soon as each is complete, and stops as
//! soon as the consumer has enough. `ignore`'s rules apply exactly as in
//! [`super::scan`]:
//!
//! - A shallow walk, the *frame*, lists the top [`FRAME_DEPTH`] levels. Its
//!   directories on the deepest level are the *units*; if there are more
//!   than [`MAX_UNITS`], the level above is used instead.
//! - One `ignore` walk takes every unit as a root, in path order, on one
//!   thread. With `parents`, `ignore` starts a root from the ignore files of
//!   the directories above it, which are the rules a walk from the top
//!   applies on the way down; the frame only offers units the rules let
//!   through. `ignore`'s walker goes depth first (a LIFO stack) and starts
//!   its roots in the order given, so every entry of a unit arrives before
//!   the next unit's root does: that arrival completes the unit. An entry
//!   arriving outside the unit being walked would mean that schedule
//!   changed; the walk then fails rather than hand out a wrong order (the
//!   tests pin the schedule).
//! - A completed unit is sorted and handed out right after the frame
//!   entries before it. With many cores, several such walks each take every
//!   n-th unit, and completed units wait for their turn.
//!
//! Types come from the directory listing, as with [`Detail::TypeOnly`].

use std::{
    path::{Path, PathBuf},
    sync::{
        Mutex,
        atomic::{AtomicBool, Ordering},
    },
    thread,
};

use ignore::{DirEntry, WalkState};

use super::{Batch, Detail, ScanPolicy, collect, walker};
use crate::{
    cancel::CancelToken,
    entries::{Entries, Entry, FileType, path_to_bytes},
    error::{Error, ErrorKind, Result},
};

/// Levels of the tree the frame lists.
const FRAME_DEPTH: usize = 2;

/// Most units one ordered walk takes: `ignore` reads a root's parent ignore
/// files afresh for each root, so a frame whose deepest level has more
/// directories than this uses the level above.
const MAX_UNITS: usize = 256;

/// Called with each run of entries, in path order, as runs complete.
pub(crate) type OnRun<'a> = dyn FnMut(&mut dyn Iterator<Item = Entry<'_>>) + Send + 'a;

/// Walk `root` (an existing, canonical directory) under `policy`, handing
/// every entry but the root to `on_run` in path order, a run at a time.
/// The walk stops early, without error, once `halt` is set, and with the
/// token's error once it trips.
pub(crate) fn walk_in_order(
    root: &Path,
    policy: ScanPolicy,
    node_modules: bool,
    token: &CancelToken,
    halt: &AtomicBool,
    on_run: &mut OnRun<'_>,
) -> Result<()> {
    let mut frame_builder = walker(root, policy, node_modules);
    frame_builder.max_depth(Some(FRAME_DEPTH)).threads(1);
    let frame = collect(root, &frame_builder, Detail::TypeOnly, token)?;
    let plan = Plan::new(&frame, root);
    let merger = Mutex::new(Merger::new(&frame, &plan, on_run));
    let walks = walks_for(plan.units.len());
    let stop = || token.is_stopped() || halt.load(Ordering::Relaxed);
    let root_len = path_to_bytes(root).len();
    let outcomes: Vec<Result<()>> = thread::scope(|scope| {
        let handles: Vec<_> = (0..walks)
            .map(|first| {
                let (units, merger, stop) = (&plan.units, &merger, &stop);
                let mine = units.iter().enumerate().skip(first).step_by(walks);
                let mine: Vec<(usize, &Path)> = mine.map(|(i, u)| (i, u.path.as_path())).collect();
                scope
                    .spawn(move || walk_units(mine, root_len, (policy, node_modules), merger, stop))
            })
            .collect();
        handles.into_iter().map(join).collect()
    });
    outcomes.into_iter().collect::<Result<()>>()?;
    token.check()?;
    if !halt.load(Ordering::Relaxed) {
        lock(&merger).finish();
    }
    Ok(())
}

/// How many unit walks run at once: the walk is about a third of a
/// search's work, so one walk per four cores keeps the searchers fed.
fn walks_for(units: usize) -> usize {
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    (cores / 4).clamp(1, units.max(1))
}

fn join(handle: thread::ScopedJoinHandle<'_, Result<()>>) -> Result<()> {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

fn lock<'m, 'a>(merger: &'m Mutex<Merger<'a>>) -> std::sync::MutexGuard<'m, Merger<'a>> {
    merger
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Which frame entries are handed out as they are (those at most `depth`
/// levels down), and which directories are walked as units.
struct Plan {
    depth: usize,
    units: Vec<Unit>,
}

/// A directory walked on its own, and the frame entries handed out before
/// it: those before index `after`.
struct Unit {
    path: PathBuf,
    after: usize,
}

impl Plan {
    /// Units on the deepest level with at most [`MAX_UNITS`] directories;
    /// failing that, the root itself is the one unit.
    fn new(frame: &Entries, root: &Path) -> Plan {
        let at_depth = |depth| Plan {
            depth,
            units: frame
                .iter()
                .enumerate()
                .filter(|(_, e)| e.file_type == FileType::Dir && depth_of(e.path) == depth)
                .map(|(at, e)| Unit {
                    path: root.join(e.as_path()),
                    after: at + 1,
                })
                .collect(),
        };
        (1..=FRAME_DEPTH)
            .rev()
            .map(at_depth)
            .find(|plan| plan.units.len() <= MAX_UNITS)
            .unwrap_or_else(|| Plan {
                depth: 0,
                units: vec![Unit {
                    path: root.to_path_buf(),
                    after: 0,
                }],
            })
    }

    /// `true` when the frame entry at `at` is handed out as it is.
    fn shows(&self, frame: &Entries, at: usize) -> bool {
        depth_of(frame.get(at).path) <= self.depth
    }
}

/// Levels below the root: `a` is 1, `a/b` is 2.
fn depth_of(path: &[u8]) -> usize {
    1 + memchr::memchr_iter(b'/', path).count()
}

/// Puts frame entries and completed units back in path order and hands
/// them out.
struct Merger<'a> {
    frame: &'a Entries,
    plan: &'a Plan,
    /// Completed units waiting for the ones before them.
    done: Vec<Option<Entries>>,
    /// The next unit to hand out, and the next frame entry.
    next_unit: usize,
    next_frame: usize,
    on_run: &'a mut OnRun<'a>,
}

impl<'a> Merger<'a> {
    fn new(frame: &'a Entries, plan: &'a Plan, on_run: &'a mut OnRun<'a>) -> Merger<'a> {
        Merger {
            frame,
            plan,
            done: plan.units.iter().map(|_| None).collect(),
            next_unit: 0,
            next_frame: 0,
            on_run,
        }
    }

    /// Unit `unit` is complete: hand out everything now in order.
    fn complete(&mut self, unit: usize, entries: Entries) {
        self.done[unit] = Some(entries);
        while let Some(entries) = self.done.get_mut(self.next_unit).and_then(Option::take) {
            self.frame_before(self.plan.units[self.next_unit].after);
            (self.on_run)(&mut entries.iter());
            self.next_unit += 1;
        }
    }

    /// Every unit is complete: hand out the rest of the frame.
    fn finish(&mut self) {
        self.frame_before(self.frame.len());
    }

    /// Hand out the shown frame entries before index `end`.
    fn frame_before(&mut self, end: usize) {
        if self.next_frame >= end {
            return;
        }
        let (frame, plan) = (self.frame, self.plan);
        let mut shown = (self.next_frame..end)
            .filter(|&at| plan.shows(frame, at))
            .map(|at| frame.get(at));
        (self.on_run)(&mut shown);
        self.next_frame = end;
    }
}

/// Walk `units` (global index, path) as the roots of one single-threaded
/// `ignore` walk, completing each into `merger`.
fn walk_units(
    units: Vec<(usize, &Path)>,
    root_len: usize,
    (policy, node_modules): (ScanPolicy, bool),
    merger: &Mutex<Merger<'_>>,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<()> {
    let Some(((_, first), rest)) = units.split_first() else {
        return Ok(());
    };
    let mut builder = walker(first, policy, node_modules);
    for (_, root) in rest {
        builder.add(root);
    }
    let state = Mutex::new(UnitWalk::new(units.clone(), root_len));
    builder.threads(1).build_parallel().run(|| {
        Box::new(|entry| {
            if stop() {
                return WalkState::Quit;
            }
            match entry {
                Ok(entry) if !lock_walk(&state).take(&entry, merger) => WalkState::Quit,
                _ => WalkState::Continue,
            }
        })
    });
    let state = state.into_inner().unwrap_or_else(|p| p.into_inner());
    state.finish(merger, stop())
}

fn lock_walk<'m, 'u>(state: &'m Mutex<UnitWalk<'u>>) -> std::sync::MutexGuard<'m, UnitWalk<'u>> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One walk's progress through its units.
struct UnitWalk<'u> {
    /// (global index, path), in path order.
    units: Vec<(usize, &'u Path)>,
    /// Position in `units` of the unit being walked.
    at: Option<usize>,
    /// Its entries so far.
    batch: Batch,
    root_len: usize,
    /// The first entry that arrived outside the unit being walked.
    stray: Option<PathBuf>,
}

impl<'u> UnitWalk<'u> {
    fn new(units: Vec<(usize, &'u Path)>, root_len: usize) -> UnitWalk<'u> {
        UnitWalk {
            units,
            at: None,
            batch: Batch::default(),
            root_len,
            stray: None,
        }
    }

    /// Record `entry`; `false` (stop the walk) when it is out of order.
    fn take(&mut self, entry: &DirEntry, merger: &Mutex<Merger<'_>>) -> bool {
        if entry.depth() == 0 {
            return self.start(entry.path(), merger);
        }
        let path = path_to_bytes(entry.path());
        let inside = self.at.is_some_and(|at| {
            let unit = path_to_bytes(self.units[at].1);
            path.starts_with(&unit) && path.get(unit.len()) == Some(&b'/')
        });
        if !inside {
            self.stray = Some(entry.path().to_path_buf());
            return false;
        }
        if let Some(file_type) = entry.file_type() {
            let relative = &path[self.root_len..];
            self.batch
                .push(relative, FileType::from_std(file_type), None);
        }
        true
    }

    /// A unit's root arrived: the unit walked so far, and any the walk
    /// skipped (roots that vanished), are complete.
    fn start(&mut self, root: &Path, merger: &Mutex<Merger<'_>>) -> bool {
        let from = self.at.map_or(0, |at| at + 1);
        match self.units[from..]
            .iter()
            .position(|(_, unit)| *unit == root)
        {
            Some(offset) => {
                self.complete_before(from + offset, merger);
                self.at = Some(from + offset);
                true
            }
            None => {
                self.stray = Some(root.to_path_buf());
                false
            }
        }
    }

    /// Complete the unit being walked and those after it before position
    /// `end` (empty: the walk skipped them).
    fn complete_before(&mut self, end: usize, merger: &Mutex<Merger<'_>>) {
        for position in self.at.unwrap_or(0)..end {
            let batch = std::mem::take(&mut self.batch);
            let entries = Entries::from_unsorted(batch.items().collect());
            lock(merger).complete(self.units[position].0, entries);
        }
    }

    /// The walk ended: unless it was stopped, its last units are complete.
    fn finish(mut self, merger: &Mutex<Merger<'_>>, stopped: bool) -> Result<()> {
        if let Some(stray) = self.stray {
            return Err(Error::new(
                ErrorKind::Io,
                format!(
                    "{}: the directory walk reached this entry out of order",
                    stray.display()
                ),
            ));
        }
        if !stopped {
            self.complete_before(self.units.len(), merger);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::{fs, process::Command};

    use super::*;
    use crate::walk::{Needs, scan_for};

    const TYPES_ONLY: Needs = Needs {
        node_modules: true,
        detail: Detail::TypeOnly,
    };

    fn touch(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// The ordered walk's entries, and how many runs carried them.
    fn ordered(root: &Path, policy: ScanPolicy) -> (Vec<(String, FileType)>, usize) {
        let (mut seen, mut runs) = (Vec::new(), 0);
        let mut on_run = |run: &mut dyn Iterator<Item = Entry<'_>>| {
            runs += 1;
            seen.extend(run.map(|e| (e.path_lossy().into_owned(), e.file_type)));
        };
        let halt = AtomicBool::new(false);
        walk_in_order(root, policy, true, &CancelToken::new(), &halt, &mut on_run).unwrap();
        (seen, runs)
    }

    fn sorted(root: &Path, policy: ScanPolicy) -> Vec<(String, FileType)> {
        let entries = scan_for(root, policy, TYPES_ONLY, &CancelToken::new()).unwrap();
        entries
            .iter()
            .map(|e| (e.path_lossy().into_owned(), e.file_type))
            .collect()
    }

    fn policies() -> impl Iterator<Item = ScanPolicy> {
        [(false, false), (false, true), (true, false), (true, true)]
            .into_iter()
            .map(|(include_hidden, use_gitignore)| ScanPolicy {
                include_hidden,
                use_gitignore,
            })
    }

    /// Ignore rules at every level, including rules of a parent that name
    /// paths inside a unit, negations, a nested repository and `.ignore`.
    #[test]
    fn same_entries_and_order_as_a_sorted_scan() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let git = Command::new("git").arg("init").arg("-q").arg(root).status();
        assert!(git.unwrap().success());
        let rules = "*.log\n!keep.log\nbuild/\n/apps/admin/gen\napps/*/tmp/\n";
        touch(root, ".gitignore", rules);
        touch(root, "apps/.gitignore", "secret/\n");
        touch(root, "apps/docs/.ignore", "draft.md\n");
        touch(root, "apps/docs/nested/repo/.gitignore", "own.txt\n");
        fs::create_dir_all(root.join("apps/docs/nested/repo/.git")).unwrap();
        for rel in [
            "README.md",
            "a.log",
            "keep.log",
            ".env",
            ".github/workflows/ci.yml",
            "apps/admin/gen/out.ts",
            "apps/admin/src/gen/keep.ts",
            "apps/admin/src/index.ts",
            "apps/admin/tmp/x.ts",
            "apps/admin/secret/key.txt",
            "apps/admin/.hidden/h.ts",
            "apps/admin.ts",
            "apps/docs/draft.md",
            "apps/docs/guide.md",
            "apps/docs/nested/repo/own.txt",
            "apps/docs/nested/repo/other.txt",
            "apps/docs/nested/repo/x.log",
            "apps/top.txt",
            "build/out.js",
            "node_modules/pkg/index.js",
            "packages/p1/build/b.js",
            "packages/p1/src/deep/er/file.rs",
            "packages/p1/logs/keep.log",
            "packages/p2.txt",
            "z/y/x/w.txt",
        ] {
            touch(root, rel, rel);
        }
        for policy in policies() {
            let (got, runs) = ordered(root, policy);
            assert_eq!(got, sorted(root, policy), "{policy:?}");
            assert!(runs > 2, "{policy:?}: handed out in {runs} runs");
        }
    }

    /// Too many directories on the frame's deepest level: units move up a
    /// level; too many there as well: the root is the one unit.
    #[test]
    fn wide_trees_use_fewer_units() {
        let dir = tempfile::tempdir().unwrap();
        for top in 0..3 {
            for sub in 0..=MAX_UNITS / 2 {
                touch(dir.path(), &format!("t{top}/s{sub:03}/f.txt"), "x");
            }
        }
        let flat = tempfile::tempdir().unwrap();
        for top in 0..=MAX_UNITS {
            touch(flat.path(), &format!("t{top:03}/s/f.txt"), "x");
        }
        for (root, units) in [(dir.path(), 3), (flat.path(), 1)] {
            let policy = ScanPolicy {
                include_hidden: true,
                use_gitignore: true,
            };
            let frame = scan_for(root, policy, TYPES_ONLY, &CancelToken::new()).unwrap();
            assert_eq!(Plan::new(&frame, root).units.len(), units);
            assert_eq!(ordered(root, policy).0, sorted(root, policy));
        }
    }

    #[test]
    fn halt_stops_the_walk_without_error() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..20 {
            touch(dir.path(), &format!("d{i:02}/e/f.txt"), "x");
        }
        let halt = AtomicBool::new(false);
        let mut runs = 0;
        let mut on_run = |_: &mut dyn Iterator<Item = Entry<'_>>| {
            runs += 1;
            halt.store(true, Ordering::Relaxed);
        };
        let policy = ScanPolicy {
            include_hidden: true,
            use_gitignore: true,
        };
        walk_in_order(
            dir.path(),
            policy,
            true,
            &CancelToken::new(),
            &halt,
            &mut on_run,
        )
        .unwrap();
        assert!(runs < 20, "{runs} runs after the halt");

        let cancelled = CancelToken::new();
        cancelled.cancel();
        let halt = AtomicBool::new(false);
        let err =
            walk_in_order(dir.path(), policy, true, &cancelled, &halt, &mut |_| {}).unwrap_err();
        assert_eq!(err.code(), "ABORT_ERR");
    }
}
