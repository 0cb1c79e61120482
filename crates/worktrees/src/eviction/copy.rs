//! One copy, looked at closely: is it exactly its recorded `HEAD` and
//! nothing else, with an administration natives fully knows and nobody
//! touching it? What the eviction record keeps about it comes from here.
//!
//! `git worktree remove` is not a safety check (it deletes ignored files,
//! empty directories, edits hidden by index bits), so the copy is walked
//! entry by entry: every file must be one `HEAD` tracks, every directory
//! one of `HEAD`'s, and nothing may be a symlink, a FIFO or a device. The
//! content proof of the handover ([`crate::git`]'s fresh index) then shows
//! the tracked files' bytes and modes are `HEAD`'s.

use std::{
    collections::HashSet,
    ffi::{OsStr, OsString},
    fs,
    os::unix::{ffi::OsStrExt, fs::MetadataExt},
    path::{Path, PathBuf},
    time::Duration,
};

use natives_core::{CancelToken, Error, Result};

use super::{
    blocker::{Blocker, BlockerKind},
    record::{AdminFile, Entry, Name, Raw},
};
use crate::{
    evidence::OBJECTS,
    git::{self, Dirs, Git, Tracked},
    own_history,
    registry::{Authority, RunRecord, Status},
};

/// Untracked directory names that are build outputs: never archived, and
/// a copy holding one stays (someone's build may still want it).
pub const BUILD_OUTPUTS: [&str; 9] = [
    "target",
    "node_modules",
    "dist",
    "build",
    "out",
    ".next",
    "__pycache__",
    ".venv",
    ".gradle",
];

/// Files of a worktree's git administration natives knows, and that die
/// with it harmlessly once archived.
const KNOWN_ADMIN_FILES: [&str; 7] = [
    "HEAD",
    "ORIG_HEAD",
    "commondir",
    "gitdir",
    "index",
    "logs/HEAD",
    "COMMIT_EDITMSG",
];

/// Directories of it natives knows (`refs` must be empty: refs of the
/// worktree's own would die with it).
const KNOWN_ADMIN_DIRS: [&str; 2] = ["logs", "refs"];

/// The most bytes of administration kept in a record: an index this large
/// belongs to a checkout too big to evict in a pass.
const ADMIN_BYTES: u64 = 8 << 20;

/// A copy a pass may evict, as its run's record describes it.
#[derive(Clone, Debug)]
pub(super) struct Source {
    /// `review-1`, `candidate-A`.
    pub seat: String,
    /// Where it is.
    pub path: PathBuf,
    /// What it must be.
    pub expect: Expect,
}

/// What a copy must be to be evicted.
#[derive(Clone, Debug)]
pub(super) enum Expect {
    /// A seat: `HEAD` detached at `review`, evidence over `base`.
    Seat {
        base: Option<String>,
        review: Option<String>,
    },
    /// An empty superseded attempt: on `branch`, whose tip, `HEAD`, index
    /// and files are all `base`.
    Candidate {
        branch: String,
        base: Option<String>,
    },
}

/// A copy proven evictable, with what its record keeps.
#[derive(Clone, Debug)]
pub(super) struct Proven {
    pub dirs: Dirs,
    pub head: String,
    pub base: String,
    pub inventory: Vec<Entry>,
    pub dot_git: Raw,
    pub administration: Vec<AdminFile>,
    pub admin_dirs: Vec<Name>,
}

/// Either the copy is proven, or every reason it is not.
pub(super) type Proof = std::result::Result<Proven, Vec<Blocker>>;

/// Look at the copy `source` of `run` closely: every blocker found, or
/// what its record keeps. `quiet`: how long it must have been left alone.
pub(super) fn prove(
    git: &Git,
    run: &RunRecord,
    source: &Source,
    quiet: Duration,
    cancel: &CancelToken,
) -> Result<Proof> {
    let mut blockers = Vec::new();
    let Some(dirs) = linked(git, &source.path, cancel)? else {
        let detail = format!(
            "{} is not the top of a linked git worktree",
            source.path.display()
        );
        return Ok(Err(vec![Blocker::new(BlockerKind::NotAWorktree, detail)]));
    };
    let admin = administration(&dirs.git_dir, &mut blockers)?;
    let head = git.resolve(&dirs.top, "HEAD^{commit}", cancel)?;
    let base = heads(
        git,
        &dirs,
        run,
        source,
        head.as_deref(),
        &mut blockers,
        cancel,
    )?;
    let tracked = git.tracked(&dirs, "HEAD^{tree}", cancel)?;
    let inventory = walk(git, &dirs, &tracked, &mut blockers, cancel)?;
    content(git, &dirs, &mut blockers, cancel)?;
    recent(run, &inventory, &admin.1, quiet, &mut blockers);
    let dot_git = fs::read(dirs.top.join(".git")).map_err(|err| Error::io(&dirs.top, err))?;
    match (blockers.is_empty(), head, base) {
        (true, Some(head), Some(base)) => Ok(Ok(Proven {
            dirs,
            head,
            base,
            inventory,
            dot_git: Raw(dot_git),
            administration: admin.0,
            admin_dirs: admin.2,
        })),
        _ => Ok(Err(blockers)),
    }
}

/// The git directories of the linked worktree at `path` (its `.git` a file
/// naming an administration of the repository's), or `None`.
pub(super) fn linked(git: &Git, path: &Path, cancel: &CancelToken) -> Result<Option<Dirs>> {
    // A copy replaced by a symlink is not the directory that was recorded.
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {}
        _ => return Ok(None),
    }
    let dot_git = path.join(".git");
    match fs::symlink_metadata(&dot_git) {
        Ok(meta) if meta.is_file() => {}
        _ => return Ok(None),
    }
    Ok(git
        .dirs(path, cancel)?
        .filter(|dirs| dirs.git_dir != dirs.common_dir))
}

type Administration = (Vec<AdminFile>, Vec<(PathBuf, fs::Metadata)>, Vec<Name>);

/// Every file of the administration at `admin` with its bytes, every
/// reason it is not one natives may let die with the copy.
fn administration(admin: &Path, blockers: &mut Vec<Blocker>) -> Result<Administration> {
    let mut files = Vec::new();
    let mut metas = Vec::new();
    let mut dirs = Vec::new();
    let mut total = 0;
    let mut pending = vec![PathBuf::new()];
    while let Some(rel) = pending.pop() {
        let dir = admin.join(&rel);
        for entry in fs::read_dir(&dir).map_err(|err| Error::io(&dir, err))? {
            let entry = entry.map_err(|err| Error::io(&dir, err))?;
            let name = rel.join(entry.file_name());
            let path = admin.join(&name);
            let meta = fs::symlink_metadata(&path).map_err(|err| Error::io(&path, err))?;
            let text = name.to_string_lossy().into_owned();
            let kind = admin_kind(&text, &meta);
            if let Some((kind, detail)) = kind {
                blockers.push(Blocker::new(kind, format!("{}: {detail}", path.display())));
            }
            if meta.is_dir() {
                dirs.push(Name(name.as_os_str().as_bytes().to_vec()));
                pending.push(name);
            } else if meta.is_file() {
                total += meta.len();
                if total > ADMIN_BYTES {
                    let detail = format!(
                        "{}: over {ADMIN_BYTES} bytes of administration",
                        admin.display()
                    );
                    blockers.push(Blocker::new(BlockerKind::EvidenceBound, detail));
                    return Ok((files, metas, dirs));
                }
                let bytes = fs::read(&path).map_err(|err| Error::io(&path, err))?;
                files.push(AdminFile {
                    name: Name(name.as_os_str().as_bytes().to_vec()),
                    bytes: Raw(bytes),
                });
                metas.push((path, meta));
            }
        }
    }
    files.sort_by(|a, b| a.name.cmp(&b.name));
    dirs.sort();
    Ok((files, metas, dirs))
}

/// Why an administration entry named `name` blocks, if it does.
fn admin_kind(name: &str, meta: &fs::Metadata) -> Option<(BlockerKind, &'static str)> {
    if git::OPERATION_MARKERS.contains(&name.split('/').next().unwrap_or(name)) {
        return Some((
            BlockerKind::OperationInProgress,
            "an operation stopped half way",
        ));
    }
    if name == "locked" {
        return Some((BlockerKind::Locked, "the registration is locked"));
    }
    if own_history::is_own_ref(name) {
        return Some((BlockerKind::LocalRefs, "a ref of the worktree's own"));
    }
    let known = match meta.file_type() {
        kind if kind.is_dir() => KNOWN_ADMIN_DIRS.contains(&name),
        kind if kind.is_file() => KNOWN_ADMIN_FILES.contains(&name),
        _ => false,
    };
    (!known).then_some((
        BlockerKind::UnknownAdministration,
        "not a file natives knows",
    ))
}

/// The base the evidence is taken over, checking `HEAD` is what the record
/// says the copy must be.
fn heads(
    git: &Git,
    dirs: &Dirs,
    run: &RunRecord,
    source: &Source,
    head: Option<&str>,
    blockers: &mut Vec<Blocker>,
    cancel: &CancelToken,
) -> Result<Option<String>> {
    let head_file =
        fs::read(dirs.git_dir.join("HEAD")).map_err(|err| Error::io(&dirs.git_dir, err))?;
    match &source.expect {
        Expect::Seat { base, review } => Ok(seat_base(
            base.as_deref(),
            review.as_deref(),
            &head_file,
            head,
            blockers,
        )),
        Expect::Candidate { branch, base } => {
            let mut changed =
                |detail: String| blockers.push(Blocker::new(BlockerKind::ChangedCandidate, detail));
            if run.status != Status::Superseded {
                changed(format!(
                    "run {} is {}: only superseded attempts are evicted",
                    run.id, run.status
                ));
            }
            let Some(base) = base else {
                changed("its base was never recorded".into());
                return Ok(None);
            };
            let tip = git.resolve(
                &dirs.top,
                &format!("refs/heads/{branch}^{{commit}}"),
                cancel,
            )?;
            let on_branch = head_file == format!("ref: refs/heads/{branch}\n").into_bytes();
            if !on_branch || head != Some(base.as_str()) || tip.as_deref() != Some(base.as_str()) {
                changed(format!(
                    "HEAD {}, branch {branch} at {}: not both at its base {base}",
                    String::from_utf8_lossy(&head_file).trim(),
                    tip.as_deref().unwrap_or("nothing")
                ));
            }
            Ok(Some(base.clone()))
        }
    }
}

/// A seat's base, when its heads were recorded; a blocker when they were
/// not, or when `HEAD` (the file's bytes `head_file`, resolving to `head`)
/// is not its review head, detached.
fn seat_base(
    base: Option<&str>,
    review: Option<&str>,
    head_file: &[u8],
    head: Option<&str>,
    blockers: &mut Vec<Blocker>,
) -> Option<String> {
    let (Some(base), Some(review)) = (base, review) else {
        let detail = "a seat is evicted only with its base and review heads recorded";
        blockers.push(Blocker::new(BlockerKind::UnrecordedHeads, detail));
        return None;
    };
    if head_file.starts_with(b"ref:") || head != Some(review) {
        let detail = format!(
            "HEAD is {}, not {review} detached",
            String::from_utf8_lossy(head_file).trim()
        );
        blockers.push(Blocker::new(BlockerKind::HeadMoved, detail));
    }
    Some(base.to_owned())
}

/// Every entry of the copy (its `.git` file left out), each reason one of
/// them blocks noted.
fn walk(
    git: &Git,
    dirs: &Dirs,
    tracked: &Tracked,
    blockers: &mut Vec<Blocker>,
    cancel: &CancelToken,
) -> Result<Vec<Entry>> {
    let mut inventory = Vec::new();
    let mut untracked = Vec::new();
    let mut pending = vec![Vec::new()];
    while let Some(rel) = pending.pop() {
        cancel.check()?;
        let names = sorted_names(&dirs.top.join(OsStr::from_bytes(&rel)))?;
        if names.is_empty() && !rel.is_empty() && !tracked.dirs.contains(&rel) {
            let detail = format!("{}: an empty directory git does not track", shown(&rel));
            blockers.push(Blocker::new(BlockerKind::UnknownDirectory, detail));
        }
        for name in names {
            if rel.is_empty() && name == ".git" {
                continue;
            }
            let path = joined(&rel, name.as_bytes());
            let full = dirs.top.join(OsStr::from_bytes(&path));
            let meta = fs::symlink_metadata(&full).map_err(|err| Error::io(&full, err))?;
            match judge(&path, &name, Kind::of(&meta.file_type()), tracked) {
                Found::Blocks(kind, detail) => blockers.push(Blocker::new(kind, detail)),
                Found::Dir => {
                    inventory.push(entry(&path, true, &meta));
                    pending.push(path);
                }
                Found::TrackedFile => inventory.push(entry(&path, false, &meta)),
                Found::Untracked => untracked.push(path),
            }
            if inventory.len() as u64 > OBJECTS {
                let detail = format!("more than {OBJECTS} entries");
                blockers.push(Blocker::new(BlockerKind::EvidenceBound, detail));
                return Ok(inventory);
            }
        }
    }
    block_untracked(git, dirs, untracked, blockers, cancel)?;
    inventory.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(inventory)
}

/// A blocker for each `untracked` file: ignored or untracked, as git says.
fn block_untracked(
    git: &Git,
    dirs: &Dirs,
    untracked: Vec<Vec<u8>>,
    blockers: &mut Vec<Blocker>,
    cancel: &CancelToken,
) -> Result<()> {
    let ignored: HashSet<Vec<u8>> = git.ignored(dirs, &untracked, cancel)?.into_iter().collect();
    for path in untracked {
        let kind = match ignored.contains(&path) {
            true => BlockerKind::Ignored,
            false => BlockerKind::Untracked,
        };
        blockers.push(Blocker::new(kind, shown(&path)));
    }
    Ok(())
}

/// The names in `dir`, sorted.
fn sorted_names(dir: &Path) -> Result<Vec<OsString>> {
    let mut names: Vec<_> = fs::read_dir(dir)
        .map_err(|err| Error::io(dir, err))?
        .map(|entry| {
            entry
                .map(|e| e.file_name())
                .map_err(|err| Error::io(dir, err))
        })
        .collect::<Result<_>>()?;
    names.sort();
    Ok(names)
}

/// What an entry is, as far as the walk cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Symlink,
    Dir,
    File,
    Special,
}

impl Kind {
    fn of(kind: &fs::FileType) -> Kind {
        if kind.is_symlink() {
            Kind::Symlink
        } else if kind.is_dir() {
            Kind::Dir
        } else if kind.is_file() {
            Kind::File
        } else {
            Kind::Special
        }
    }
}

/// What the walk does with an entry.
#[derive(Debug, PartialEq, Eq)]
enum Found {
    /// It keeps the copy: a blocker of this kind and detail.
    Blocks(BlockerKind, String),
    /// A directory to inventory and walk into.
    Dir,
    /// A file git tracks, inventoried.
    TrackedFile,
    /// A file git does not track: ignored or untracked, git says which.
    Untracked,
}

/// What the walk does with the entry at `path` (named `name`) of `kind`.
fn judge(path: &[u8], name: &OsStr, kind: Kind, tracked: &Tracked) -> Found {
    match kind {
        Kind::Symlink => Found::Blocks(BlockerKind::Symlink, shown(path)),
        Kind::Dir
            if !tracked.dirs.contains(path)
                && BUILD_OUTPUTS.contains(&name.to_string_lossy().as_ref()) =>
        {
            Found::Blocks(BlockerKind::BuildOutput, format!("{}/", shown(path)))
        }
        Kind::Dir => Found::Dir,
        Kind::Special => Found::Blocks(BlockerKind::SpecialFile, shown(path)),
        Kind::File if tracked.files.contains(path) => Found::TrackedFile,
        Kind::File => Found::Untracked,
    }
}

/// The content proof: tracked files' bytes and modes are `HEAD`'s, the
/// index holds nothing else, nothing hides in index flags, nothing git
/// transforms.
fn content(
    git: &Git,
    dirs: &Dirs,
    blockers: &mut Vec<Blocker>,
    cancel: &CancelToken,
) -> Result<()> {
    let head_tree = git
        .resolve(&dirs.top, "HEAD^{tree}", cancel)?
        .unwrap_or_default();
    let fresh = git.fresh_tree(dirs, cancel)?;
    if fresh != head_tree {
        for change in git.diff_trees(dirs, &head_tree, &fresh, cancel)? {
            blockers.push(Blocker::new(BlockerKind::Dirty, change.path));
        }
    }
    for change in git.staged(dirs, cancel)? {
        blockers.push(Blocker::new(BlockerKind::Staged, change.path));
    }
    for path in git.hidden_in_index(dirs, cancel)? {
        blockers.push(Blocker::new(BlockerKind::IndexHidden, path));
    }
    for what in git.unsupported(dirs, cancel)? {
        blockers.push(Blocker::new(BlockerKind::UnsupportedContent, what));
    }
    Ok(())
}

/// Note recent activity: the copy's entries, its administration's files,
/// or its run's history changed within `quiet`.
fn recent(
    run: &RunRecord,
    inventory: &[Entry],
    admin: &[(PathBuf, fs::Metadata)],
    quiet: Duration,
    blockers: &mut Vec<Blocker>,
) {
    let now_ns = i128::from(natives_system::process::now_ms()) * 1_000_000;
    let since = now_ns - quiet.as_nanos() as i128;
    let copy = inventory.iter().map(|e| e.mtime_ns.max(e.ctime_ns)).max();
    let administration = admin
        .iter()
        .map(|(_, meta)| times(meta).0.max(times(meta).1))
        .max();
    let history = run
        .events
        .iter()
        .map(|e| i128::from(e.at_ms) * 1_000_000)
        .max();
    for (what, newest) in [
        ("the copy", copy),
        ("its git administration", administration),
        ("its run's history", history),
    ] {
        if newest.is_some_and(|newest| newest > since) {
            let detail = format!("{what} changed within the last {} s", quiet.as_secs());
            blockers.push(Blocker::new(BlockerKind::RecentActivity, detail));
        }
    }
}

/// An inventory entry for `path` from its metadata.
pub(super) fn entry(path: &[u8], dir: bool, meta: &fs::Metadata) -> Entry {
    let (mtime_ns, ctime_ns) = times(meta);
    Entry {
        path: Name(path.to_vec()),
        dir,
        mode: meta.mode(),
        size: if dir { 0 } else { meta.len() },
        blocks: meta.blocks(),
        dev: meta.dev(),
        ino: meta.ino(),
        nlink: meta.nlink(),
        mtime_ns,
        ctime_ns,
    }
}

fn times(meta: &fs::Metadata) -> (i128, i128) {
    let ns = |secs: i64, nanos: i64| i128::from(secs) * 1_000_000_000 + i128::from(nanos);
    (
        ns(meta.mtime(), meta.mtime_nsec()),
        ns(meta.ctime(), meta.ctime_nsec()),
    )
}

fn joined(rel: &[u8], name: &[u8]) -> Vec<u8> {
    match rel.is_empty() {
        true => name.to_vec(),
        false => [rel, b"/", name].concat(),
    }
}

fn shown(path: &[u8]) -> String {
    String::from_utf8_lossy(path).into_owned()
}

/// A copy a pass considers, with its authority and the fields other
/// versions wrote in its record.
pub(super) type SourceOf<'r> = (
    Source,
    &'r Authority,
    &'r serde_json::Map<String, serde_json::Value>,
);

/// The copies of `run` a pass considers: every seat, every candidate not
/// handed over.
pub(super) fn sources_of(run: &RunRecord) -> Vec<SourceOf<'_>> {
    let seats = run.seats.iter().map(|seat| {
        let source = Source {
            seat: seat.source_name(),
            path: seat.path.clone(),
            expect: Expect::Seat {
                base: seat.base_head.clone(),
                review: seat.review_head.clone(),
            },
        };
        (source, &seat.authority, &seat.extra)
    });
    let candidates = run
        .candidates
        .iter()
        .filter(|c| !c.folded)
        .map(|candidate| {
            let source = Source {
                seat: candidate.source_name(),
                path: candidate.path.clone(),
                expect: Expect::Candidate {
                    branch: candidate.branch.clone(),
                    base: candidate.base.clone(),
                },
            };
            (source, &candidate.authority, &candidate.extra)
        });
    seats.chain(candidates).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seat is evicted from its recorded base only while HEAD is its
    /// review head, detached.
    #[test]
    fn a_seat_needs_its_heads_recorded_and_head_detached_at_review() {
        let table = [
            (
                None,
                Some("r"),
                b"r\n".as_slice(),
                Some("r"),
                None,
                vec![BlockerKind::UnrecordedHeads],
            ),
            (
                Some("b"),
                None,
                b"r\n",
                Some("r"),
                None,
                vec![BlockerKind::UnrecordedHeads],
            ),
            (Some("b"), Some("r"), b"r\n", Some("r"), Some("b"), vec![]),
            (
                Some("b"),
                Some("r"),
                b"x\n",
                Some("x"),
                Some("b"),
                vec![BlockerKind::HeadMoved],
            ),
            (
                Some("b"),
                Some("r"),
                b"ref: refs/heads/main\n",
                Some("r"),
                Some("b"),
                vec![BlockerKind::HeadMoved],
            ),
        ];
        for (n, (base, review, head_file, head, expected, kinds)) in table.into_iter().enumerate() {
            let mut blockers = Vec::new();
            let found = seat_base(base, review, head_file, head, &mut blockers);
            assert_eq!(found.as_deref(), expected, "row {n}");
            let found: Vec<BlockerKind> = blockers.iter().map(|b| b.kind).collect();
            assert_eq!(found, kinds, "row {n}");
        }
    }

    /// Every kind of entry, tracked or not, against what the walk does.
    #[test]
    fn entries_are_judged_by_kind_and_tracking() {
        let tracked = Tracked {
            dirs: [b"src".to_vec(), b"target".to_vec()].into(),
            files: [b"src/a.rs".to_vec()].into(),
        };
        let table = [
            (
                "link",
                Kind::Symlink,
                Found::Blocks(BlockerKind::Symlink, "link".into()),
            ),
            ("src", Kind::Dir, Found::Dir),
            ("docs", Kind::Dir, Found::Dir),
            ("target", Kind::Dir, Found::Dir),
            (
                "node_modules",
                Kind::Dir,
                Found::Blocks(BlockerKind::BuildOutput, "node_modules/".into()),
            ),
            (
                "sub/target",
                Kind::Dir,
                Found::Blocks(BlockerKind::BuildOutput, "sub/target/".into()),
            ),
            (
                "fifo",
                Kind::Special,
                Found::Blocks(BlockerKind::SpecialFile, "fifo".into()),
            ),
            ("src/a.rs", Kind::File, Found::TrackedFile),
            ("src/b.rs", Kind::File, Found::Untracked),
            ("target", Kind::File, Found::Untracked),
        ];
        for (path, kind, expected) in table {
            let name = path.rsplit('/').next().unwrap();
            let found = judge(path.as_bytes(), OsStr::new(name), kind, &tracked);
            assert_eq!(found, expected, "{path} ({kind:?})");
        }
    }
}
