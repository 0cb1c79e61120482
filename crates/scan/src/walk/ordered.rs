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
//!   directories on the deepest level are the *units*, however many there
//!   are (a vendored tree has hundreds side by side).
//! - Consecutive units form *groups*, each walked by one single-threaded
//!   `ignore` walk from the root that enters only the group's units and the
//!   directories above them, so every walk applies the rules a walk of the
//!   whole tree applies. Walking each unit as a root of its own would read
//!   the ignore files of every directory above it again for each unit
//!   (`ignore` keeps them only while a walk below them lasts): hundreds of
//!   times in a vendored tree. A group reads them, and lists the
//!   directories above its units, once. The first group is small (about
//!   1/[`FIRST_GROUP_SHARE`] of the units), so the first units come soon;
//!   each next one is twice as large up to 1/[`GROUPS_PER_WALK`] of a
//!   walk's share, so one walk takes about a dozen groups in all.
//! - `ignore`'s walker goes depth first (a LIFO stack), so every entry of a
//!   unit arrives right after the unit's own directory and before any other
//!   unit's or frame directory's: that arrival completes the unit. Units of
//!   a group arrive in the order the directory listing gives. An entry
//!   arriving outside the unit being walked would mean that schedule
//!   changed; the walk then fails rather than hand out a wrong order (the
//!   tests pin the schedule).
//! - A completed unit is sorted and handed out right after the frame
//!   entries before it, once every unit before it is. With many cores,
//!   several walks take the next group in turn, and completed units wait
//!   for theirs.
//!
//! Types come from the directory listing, as with [`super::Detail::TypeOnly`].
//! What the walk could not enter or read is returned at the end, in path
//! order, as a scan's [`Entries::unreadable`] lists it.

use std::{
    borrow::Cow,
    collections::{HashMap, HashSet},
    ops::Range,
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    thread,
};

use ignore::{DirEntry, WalkBuilder, WalkState, overrides::Override};

use super::{
    collect::{Batch, Mtimes, collect_batches, sorted},
    rules::{ScanPolicy, walker_admitting},
};
use crate::{
    cancel::CancelToken,
    entries::{Entries, Entry, FileType, path_to_bytes},
    error::{Error, ErrorKind, Result},
    unreadable::{self, Unreadable},
};

/// Levels of the tree the frame lists.
const FRAME_DEPTH: usize = 2;

/// The first group holds about this fraction of the units (at least one):
/// it is walked before anything but the frame is handed out.
const FIRST_GROUP_SHARE: usize = 128;

/// Groups of the largest size per concurrent walk. Units of one group
/// complete in the order the directory listings give, so a group's units
/// are mostly handed out together when it ends: smaller groups hand the
/// tree out more evenly (consumers are not left waiting for one large group
/// at the end) and let walks that finish at different times share the
/// work, while each group lists the directories above its units again.
const GROUPS_PER_WALK: usize = 8;

/// Called with each run of entries, in path order, as runs complete.
pub(crate) type OnRun<'a> = dyn FnMut(&mut dyn Iterator<Item = Entry<'_>>) + Send + 'a;

/// What an ordered walk lists: the policy's entries, `node_modules` only
/// when asked for, and with `overrides` (`rg -g` globs), ripgrep's
/// precedence: a file a glob selects is listed even where an ignore file or
/// the hidden rule would leave it out, and a file none selects is not.
#[derive(Clone, Copy)]
pub(crate) struct Listing<'a> {
    pub policy: ScanPolicy,
    pub node_modules: bool,
    pub overrides: Option<&'a Override>,
}

/// Walk `root` (an existing, canonical directory) as `listing` says,
/// handing every entry but the root to `on_run` in path order, a run at a
/// time; returns what it could not enter or read, in path order. The walk
/// stops early, without error, once `halt` is set, and with the token's
/// error once it trips.
pub(crate) fn walk_in_order(
    root: &Path,
    listing: Listing<'_>,
    token: &CancelToken,
    halt: &AtomicBool,
    on_run: &mut OnRun<'_>,
) -> Result<Vec<Unreadable>> {
    let walks = walks_for_cores();
    walk_in_order_with(walks, root, listing, token, halt, on_run)
}

/// [`walk_in_order`] with at most `walks` group walks at once.
fn walk_in_order_with(
    walks: usize,
    root: &Path,
    listing: Listing<'_>,
    token: &CancelToken,
    halt: &AtomicBool,
    on_run: &mut OnRun<'_>,
) -> Result<Vec<Unreadable>> {
    let frame = frame(root, listing, token)?;
    let unread = Mutex::new(frame.unreadable().to_vec());
    let plan = Plan::new(&frame, walks);
    let walks = walks.min(plan.groups.len());
    let merger = Mutex::new(Merger::new(&frame, &plan, on_run));
    let stop = || token.is_stopped() || halt.load(Ordering::Relaxed);
    let next_group = AtomicUsize::new(0);
    let walk = GroupWalker {
        root,
        root_len: path_to_bytes(root).len(),
        listing,
        plan: &plan,
        merger: &merger,
        stop: &stop,
        unread: &unread,
    };
    let outcomes: Vec<Result<()>> = thread::scope(|scope| {
        let handles: Vec<_> = (0..walks)
            .map(|_| scope.spawn(|| walk.take_groups(&next_group)))
            .collect();
        handles.into_iter().map(join).collect()
    });
    outcomes.into_iter().collect::<Result<()>>()?;
    token.check()?;
    if !halt.load(Ordering::Relaxed) {
        lock(&merger).finish();
    }
    let unread = unread.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok(unreadable::merged(unread))
}

/// The top [`FRAME_DEPTH`] levels of the tree, sorted.
///
/// A walk limited by depth looks for ignore files in every directory on its
/// last level, one lookup per file name, though it never lists them; here
/// those directories, the units, are set aside as the walk reaches them
/// (after the rules have let them through) instead of entered.
fn frame(root: &Path, listing: Listing<'_>, token: &CancelToken) -> Result<Entries> {
    let root_len = path_to_bytes(root).len();
    let units = Arc::new(Mutex::new(Batch::default()));
    let found = Arc::clone(&units);
    let admit = move |entry: &DirEntry| {
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let unit = is_dir && entry.depth() == FRAME_DEPTH;
        if unit {
            let path = path_to_bytes(entry.path());
            let mut found = found.lock().unwrap_or_else(|p| p.into_inner());
            found.push(&path[root_len..], FileType::Dir, None);
        }
        !unit
    };
    let mut builder = listing.walker(root, admit);
    builder.max_depth(Some(FRAME_DEPTH)).threads(1);
    let mut batches = collect_batches(root, &builder, Mtimes::None, token)?;
    batches.push(std::mem::take(
        &mut *units.lock().unwrap_or_else(|p| p.into_inner()),
    ));
    Ok(sorted(&batches))
}

impl Listing<'_> {
    /// Every entry `policy` admits, `node_modules` included, no globs.
    #[cfg(test)]
    pub(crate) fn all(policy: ScanPolicy) -> Listing<'static> {
        Listing {
            policy,
            node_modules: true,
            overrides: None,
        }
    }

    /// The walk of `root` this listing asks for, entering (and reporting)
    /// below the root only the entries `admit` accepts as well.
    fn walker(
        &self,
        root: &Path,
        admit: impl Fn(&DirEntry) -> bool + Send + Sync + 'static,
    ) -> WalkBuilder {
        let mut builder = walker_admitting(root, self.policy, self.node_modules, admit);
        if let Some(overrides) = self.overrides {
            builder.overrides(overrides.clone());
        }
        builder
    }
}

/// How many group walks run at once: the walk is about a third of a
/// search's work, so one walk per four cores keeps the searchers fed.
fn walks_for_cores() -> usize {
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    (cores / 4).max(1)
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

/// The directories walked as units, and how they are grouped into walks.
struct Plan {
    units: Vec<Unit>,
    /// Consecutive ranges of `units`, in path order.
    groups: Vec<Range<usize>>,
}

/// A directory walked as part of a group, and the frame entries handed out
/// before it: those before index `after`.
struct Unit {
    /// Relative to the root, `/`-separated.
    path: Vec<u8>,
    after: usize,
}

impl Plan {
    /// Every directory on the frame's deepest level is a unit; the groups
    /// suit `walks` concurrent walks.
    fn new(frame: &Entries, walks: usize) -> Plan {
        let units: Vec<Unit> = frame
            .iter()
            .enumerate()
            .filter(|(_, e)| e.file_type == FileType::Dir && depth_of(e.path) == FRAME_DEPTH)
            .map(|(at, e)| Unit {
                path: e.path.to_vec(),
                after: at + 1,
            })
            .collect();
        let groups = group_sizes(units.len(), walks);
        Plan { units, groups }
    }

    /// The relative paths a walk of group `group` enters: its units and the
    /// directories above them.
    fn admitted(&self, group: usize) -> HashSet<Vec<u8>> {
        let mut admitted = HashSet::new();
        for unit in &self.units[self.groups[group].clone()] {
            let path = unit.path.as_slice();
            let ancestors = memchr::memchr_iter(b'/', path).map(|slash| path[..slash].to_vec());
            admitted.extend(ancestors);
            admitted.insert(unit.path.clone());
        }
        admitted
    }
}

/// Split `units` into consecutive groups for `walks` concurrent walks: the
/// first about 1/[`FIRST_GROUP_SHARE`] of them, each next twice as large, up
/// to 1/[`GROUPS_PER_WALK`] of a walk's share.
fn group_sizes(units: usize, walks: usize) -> Vec<Range<usize>> {
    let largest = units.div_ceil(walks * GROUPS_PER_WALK).max(1);
    let mut size = units.div_ceil(FIRST_GROUP_SHARE).clamp(1, largest);
    let mut groups = Vec::new();
    let mut start = 0;
    while start < units {
        let end = units.min(start + size);
        groups.push(start..end);
        start = end;
        size = largest.min(size * 2);
    }
    groups
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

    /// Hand out the frame entries before index `end`.
    fn frame_before(&mut self, end: usize) {
        if self.next_frame >= end {
            return;
        }
        let frame = self.frame;
        (self.on_run)(&mut (self.next_frame..end).map(|at| frame.get(at)));
        self.next_frame = end;
    }
}

/// What every group walk shares.
struct GroupWalker<'w, 'a> {
    root: &'w Path,
    root_len: usize,
    listing: Listing<'w>,
    plan: &'w Plan,
    merger: &'w Mutex<Merger<'a>>,
    stop: &'w (dyn Fn() -> bool + Sync),
    /// What the walks could not enter or read (groups that list the same
    /// directory above their units may each meet its error).
    unread: &'w Mutex<Vec<Unreadable>>,
}

impl GroupWalker<'_, '_> {
    /// Walk the next group not yet taken until none is left, the walk
    /// stops or a group fails.
    fn take_groups(&self, next_group: &AtomicUsize) -> Result<()> {
        loop {
            let group = next_group.fetch_add(1, Ordering::Relaxed);
            if group >= self.plan.groups.len() || (self.stop)() {
                return Ok(());
            }
            self.walk_group(group)?;
        }
    }

    /// One single-threaded `ignore` walk from the root through group
    /// `group`'s units, completing each into the merger.
    fn walk_group(&self, group: usize) -> Result<()> {
        let admitted = Arc::new(self.plan.admitted(group));
        let root_len = self.root_len;
        let admit = move |entry: &DirEntry| {
            let depth = entry.depth();
            depth > FRAME_DEPTH || admitted.contains(relative(entry.path(), root_len).as_ref())
        };
        let mut builder = self.listing.walker(self.root, admit);
        let range = self.plan.groups[group].clone();
        let state = Mutex::new(UnitWalk::new(
            &self.plan.units[range.clone()],
            range.start,
            root_len,
        ));
        let (merger, stop, unread) = (self.merger, self.stop, self.unread);
        builder.threads(1).build_parallel().run(|| {
            Box::new(|entry| {
                if stop() {
                    return WalkState::Quit;
                }
                match entry {
                    Ok(entry) if !lock_walk(&state).take(&entry, merger) => WalkState::Quit,
                    Ok(_) => WalkState::Continue,
                    Err(err) => {
                        let mut unread = unread.lock().unwrap_or_else(|p| p.into_inner());
                        unread.extend(Unreadable::from_walk(&err, root_len));
                        WalkState::Continue
                    }
                }
            })
        });
        let state = state.into_inner().unwrap_or_else(|p| p.into_inner());
        state.finish(merger, stop())
    }
}

/// `path` relative to the root whose path is `root_len` bytes long.
fn relative(path: &Path, root_len: usize) -> Cow<'_, [u8]> {
    match path_to_bytes(path) {
        Cow::Borrowed(bytes) => Cow::Borrowed(below_root(bytes, root_len)),
        Cow::Owned(bytes) => Cow::Owned(below_root(&bytes, root_len).to_vec()),
    }
}

fn below_root(path: &[u8], root_len: usize) -> &[u8] {
    let rest = path.get(root_len..).unwrap_or_default();
    rest.strip_prefix(b"/").unwrap_or(rest)
}

fn lock_walk<'m, 'u>(state: &'m Mutex<UnitWalk<'u>>) -> std::sync::MutexGuard<'m, UnitWalk<'u>> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One group walk's progress through its units.
struct UnitWalk<'u> {
    /// The group's units, in path order; the first is unit `first` of
    /// the plan.
    units: &'u [Unit],
    first: usize,
    /// Position in `units` of each unit's path.
    positions: HashMap<&'u [u8], usize>,
    /// Whether each unit has been completed.
    completed: Vec<bool>,
    /// Position in `units` of the unit being walked, and its entries so far.
    at: Option<usize>,
    batch: Batch,
    root_len: usize,
    /// The first entry that arrived outside the unit being walked.
    stray: Option<PathBuf>,
}

impl<'u> UnitWalk<'u> {
    fn new(units: &'u [Unit], first: usize, root_len: usize) -> UnitWalk<'u> {
        UnitWalk {
            units,
            first,
            positions: units
                .iter()
                .enumerate()
                .map(|(at, unit)| (unit.path.as_slice(), at))
                .collect(),
            completed: vec![false; units.len()],
            at: None,
            batch: Batch::default(),
            root_len,
            stray: None,
        }
    }

    /// Record `entry`; `false` (stop the walk) when it is out of order.
    fn take(&mut self, entry: &DirEntry, merger: &Mutex<Merger<'_>>) -> bool {
        let path = relative(entry.path(), self.root_len);
        match entry.depth() {
            0 => true,
            depth if depth < FRAME_DEPTH => {
                self.complete_current(merger);
                true
            }
            FRAME_DEPTH => self.start(entry.path(), &path, merger),
            _ => self.push(entry, &path),
        }
    }

    /// A unit's directory arrived: the unit walked so far is complete.
    fn start(&mut self, full: &Path, path: &[u8], merger: &Mutex<Merger<'_>>) -> bool {
        self.complete_current(merger);
        match self.positions.get(path) {
            Some(&at) if !self.completed[at] => {
                self.at = Some(at);
                true
            }
            _ => {
                self.stray = Some(full.to_path_buf());
                false
            }
        }
    }

    /// An entry below the frame: it belongs to the unit being walked.
    fn push(&mut self, entry: &DirEntry, path: &[u8]) -> bool {
        let inside = self.at.is_some_and(|at| {
            let unit = self.units[at].path.as_slice();
            path.starts_with(unit) && path.get(unit.len()) == Some(&b'/')
        });
        if !inside {
            self.stray = Some(entry.path().to_path_buf());
            return false;
        }
        if let Some(file_type) = entry.file_type() {
            self.batch.push(path, FileType::from_std(file_type), None);
        }
        true
    }

    /// Hand the unit being walked, if any, to the merger.
    fn complete_current(&mut self, merger: &Mutex<Merger<'_>>) {
        if let Some(at) = self.at.take() {
            self.complete(at, merger);
        }
    }

    fn complete(&mut self, at: usize, merger: &Mutex<Merger<'_>>) {
        let batch = std::mem::take(&mut self.batch);
        let entries = Entries::from_unsorted(batch.items().collect());
        self.completed[at] = true;
        lock(merger).complete(self.first + at, entries);
    }

    /// The walk ended: unless it was stopped, its last unit and any it
    /// never reached (directories that vanished) are complete.
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
            self.complete_current(merger);
            for at in 0..self.units.len() {
                if !self.completed[at] {
                    self.complete(at, merger);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::{fs, process::Command};

    use super::*;
    use crate::walk::{Detail, Needs, scan_for};

    /// Most groups one walk takes: four doublings from 1/128 of the units
    /// to 1/8, eight of 1/8, and one for what rounding leaves.
    const MOST_GROUPS: usize = 4 + GROUPS_PER_WALK + 1;

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
        ordered_with(walks_for_cores(), root, policy)
    }

    /// [`ordered`] with `walks` group walks at once.
    fn ordered_with(
        walks: usize,
        root: &Path,
        policy: ScanPolicy,
    ) -> (Vec<(String, FileType)>, usize) {
        let (mut seen, mut runs) = (Vec::new(), 0);
        let mut on_run = |run: &mut dyn Iterator<Item = Entry<'_>>| {
            runs += 1;
            seen.extend(run.map(|e| (e.path_lossy().into_owned(), e.file_type)));
        };
        let halt = AtomicBool::new(false);
        let token = CancelToken::new();
        walk_in_order_with(
            walks,
            root,
            Listing::all(policy),
            &token,
            &halt,
            &mut on_run,
        )
        .unwrap();
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

    /// A tree wider than a walk per unit could afford: 300 directories on
    /// the frame's deepest level under one parent, more beside them, and
    /// ignore rules above the root, at the root, beside the units, in a
    /// unit and deeper, some naming paths inside units.
    fn wide_tree() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap().join("repo");
        let git = Command::new("git")
            .arg("init")
            .arg("-q")
            .arg(&root)
            .status();
        assert!(git.unwrap().success());
        touch(dir.path(), ".ignore", "*.above\n");
        touch(
            &root,
            ".gitignore",
            "*.log\n/vendor/c007/skip/\nvendor/*/tmp/\n",
        );
        touch(&root, ".ignore", "*.bak\n!keep.bak\n");
        touch(&root, "vendor/.gitignore", "gen/\n");
        touch(&root, "vendor/c010/.ignore", "x.tmp\n");
        touch(&root, "vendor/c200/sub/.gitignore", "inner.txt\n");
        for crate_ in 0..300 {
            let base = format!("vendor/c{crate_:03}");
            for rel in [
                "src/lib.rs",
                "a.log",
                "keep.bak",
                "drop.bak",
                "gen/g.rs",
                "tmp/t.rs",
            ] {
                touch(&root, &format!("{base}/{rel}"), rel);
            }
        }
        for rel in [
            "vendor/c007/skip/s.rs",
            "vendor/c010/x.tmp",
            "vendor/c200/sub/inner.txt",
            "vendor/c200/sub/outer.txt",
            "vendor/c299/z.above",
            "vendor/Cargo.toml",
            "a/b/c.rs",
            "a.rs",
            ".hidden/h/x.rs",
            "z/y/x/w.rs",
        ] {
            touch(&root, rel, rel);
        }
        (dir, root)
    }

    #[test]
    fn wide_trees_are_handed_out_a_unit_at_a_time_in_order() {
        let (_dir, root) = wide_tree();
        for walks in [1, 3] {
            for policy in policies() {
                let (got, runs) = ordered_with(walks, &root, policy);
                assert_eq!(got, sorted(&root, policy), "{walks} walks, {policy:?}");
                assert!(runs > 300, "{walks} walks, {policy:?}: {runs} runs");
            }
        }
        let policy = policies().last().unwrap();
        let frame = frame(&root, Listing::all(policy), &CancelToken::new()).unwrap();
        let plan = Plan::new(&frame, 1);
        assert_eq!(plan.units.len(), 303);
        assert!(plan.groups.len() <= MOST_GROUPS, "{:?}", plan.groups);
    }

    #[test]
    fn groups_start_small_double_and_cover_every_unit_once() {
        for (units, walks) in [(0, 1), (1, 1), (3, 1), (305, 1), (305, 4), (100_000, 1)] {
            let groups = group_sizes(units, walks);
            let covered: Vec<usize> = groups.iter().cloned().flatten().collect();
            assert_eq!(covered, (0..units).collect::<Vec<_>>(), "{units} {walks}");
            let sizes: Vec<usize> = groups.iter().map(ExactSizeIterator::len).collect();
            let largest = units.div_ceil(walks * GROUPS_PER_WALK).max(1);
            assert!(sizes.iter().all(|&size| size <= largest), "{sizes:?}");
            assert!(sizes.windows(2).all(|w| w[1] <= 2 * w[0]), "{sizes:?}");
            if units > 0 {
                assert!(sizes[0] <= units.div_ceil(FIRST_GROUP_SHARE), "{sizes:?}");
                assert!(groups.len() >= walks.min(units), "{sizes:?}");
            }
            if walks == 1 {
                assert!(groups.len() <= MOST_GROUPS, "{units}: {sizes:?}");
            }
        }
    }

    /// How many times `walk` opened each of `files`.
    #[cfg(target_os = "linux")]
    fn opens(files: &[PathBuf], walk: impl FnOnce()) -> Vec<usize> {
        use nix::{
            errno::Errno,
            sys::inotify::{AddWatchFlags, InitFlags, Inotify},
        };
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).unwrap();
        // Closes between opens keep the kernel from merging repeated opens.
        let listened = AddWatchFlags::IN_OPEN | AddWatchFlags::IN_CLOSE_NOWRITE;
        let watches: Vec<_> = files
            .iter()
            .map(|file| inotify.add_watch(file, listened).unwrap())
            .collect();
        walk();
        let mut counts = vec![0; files.len()];
        loop {
            match inotify.read_events() {
                Ok(events) => {
                    for event in events
                        .iter()
                        .filter(|e| e.mask.contains(AddWatchFlags::IN_OPEN))
                    {
                        counts[watches.iter().position(|wd| *wd == event.wd).unwrap()] += 1;
                    }
                }
                Err(Errno::EAGAIN) => break,
                Err(err) => panic!("reading inotify events: {err}"),
            }
        }
        counts
    }

    /// The ignore files above the units are read once per group walk (and
    /// once by the frame), not once per unit.
    #[cfg(target_os = "linux")]
    #[test]
    fn ignore_files_above_the_units_are_read_once_per_group() {
        let (dir, root) = wide_tree();
        let files = [
            dir.path().join(".ignore"),
            root.join(".gitignore"),
            root.join(".ignore"),
            root.join("vendor/.gitignore"),
        ];
        let policy = ScanPolicy {
            include_hidden: false,
            use_gitignore: true,
        };
        let counts = opens(&files, || drop(ordered_with(1, &root, policy)));
        // The frame, then each group.
        let most = 1 + MOST_GROUPS;
        for (file, count) in files.iter().zip(counts) {
            assert!(
                (1..=most).contains(&count),
                "{}: read {count} times",
                file.display()
            );
        }
    }

    /// The first unit's entries come before the last unit beside it is
    /// listed: a wide directory is not walked whole before any of it is
    /// handed out.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_wide_directory_hands_out_its_first_unit_before_the_rest_is_listed() {
        let (_dir, root) = wide_tree();
        let last = root.join("vendor/c299");
        let policy = policies().last().unwrap();
        let halt = AtomicBool::new(false);
        let mut on_run = |run: &mut dyn Iterator<Item = Entry<'_>>| {
            for entry in run {
                if entry.path.starts_with(b"vendor/c000/") {
                    halt.store(true, Ordering::Relaxed);
                }
            }
        };
        let token = CancelToken::new();
        let listed = crate::walk::tests::entered(std::slice::from_ref(&last), || {
            walk_in_order_with(1, &root, Listing::all(policy), &token, &halt, &mut on_run).unwrap();
        });
        assert!(
            listed.is_empty(),
            "the last unit was listed before the halt"
        );
        let (got, _) = ordered_with(1, &root, policy);
        assert!(got.iter().any(|(path, _)| path == "vendor/c299/src/lib.rs"));
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
            Listing::all(policy),
            &CancelToken::new(),
            &halt,
            &mut on_run,
        )
        .unwrap();
        assert!(runs < 20, "{runs} runs after the halt");

        let cancelled = CancelToken::new();
        cancelled.cancel();
        let halt = AtomicBool::new(false);
        let err = walk_in_order(
            dir.path(),
            Listing::all(policy),
            &cancelled,
            &halt,
            &mut |_| {},
        )
        .unwrap_err();
        assert_eq!(err.code(), "ABORT_ERR");
    }
}
