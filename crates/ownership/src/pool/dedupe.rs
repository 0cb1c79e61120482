//! Sharing the blocks members hold alike, once a holder lets its member go.
//!
//! A seed shares every block with its source (a reflink), but each member's
//! own builds write files of their own: the workspace's crates built from
//! the holder's worktree, their linked binaries and incremental state. Much
//! of those is alike from member to member, block for block at the same
//! offsets (a binary linking the same dependencies, a library whose change
//! is small), so where the filesystem can share extents (btrfs, XFS) each
//! block of a member's file equal to the block at the same offset of the
//! same file in another member is made to share that block
//! (`FIDEDUPERANGE`). The kernel compares the two ranges itself under its
//! locks and shares them only when equal, so no byte of either file
//! changes, whatever writes them meanwhile; a later write to either copies
//! the block again.
//!
//! Only where sharing part of a file's blocks frees the blocks it replaces:
//! XFS maps files block by block. Btrfs keeps an extent whole while any of
//! its blocks is still referenced, so sharing the equal part of a file
//! written as one extent frees nothing there (measured: the filesystem's use
//! did not fall) while its extent maps would count that part as shared, and
//! the pool's disk budget would believe it.
//!
//! The same file is the same relative path, except in rustc's incremental
//! state, whose session directories are named anew by each compilation:
//! there a file matches the file of the same name in any session of the
//! same crate. Files already sharing their extents are not read.

use std::{
    collections::HashMap,
    fs::File,
    io::{self, Read},
    os::fd::AsRawFd,
    path::{Component, Path, PathBuf},
};

use nix::sys::statfs;

use super::{clone, extents, seed};

/// The unit compared and shared: the block of every filesystem that shares
/// extents (btrfs's and XFS's default), which ranges must be aligned to.
const BLOCK: usize = 4096;

/// Bytes read from each file at a time.
const CHUNK: usize = 1 << 20;

/// The most bytes one `FIDEDUPERANGE` call is asked to share (btrfs shares
/// at most 16 MiB per call).
const MOST_PER_CALL: u64 = 16 << 20;

/// `_IOWR(0x94, 54, struct file_dedupe_range)`.
const FIDEDUPERANGE: libc::c_ulong = 0xC018_9436;

#[repr(C)]
struct DedupeRange {
    src_offset: u64,
    src_length: u64,
    dest_count: u16,
    reserved1: u16,
    reserved2: u32,
    info: [DedupeRangeInfo; 1],
}

#[repr(C)]
struct DedupeRangeInfo {
    dest_fd: i64,
    dest_offset: u64,
    bytes_deduped: u64,
    status: i32,
    reserved: u32,
}

/// Make the blocks of `member`'s files (what a copy of it would take) share
/// the equal blocks of the same files in the members `others` names, asked
/// for only once the filesystem is known to free what is replaced. Nothing
/// is done where it cannot; a file that cannot be read or shared is left as
/// it is.
pub(super) fn share_alike(member: &Path, others: impl FnOnce() -> Vec<PathBuf>) {
    if !frees_replaced_blocks(member) {
        return;
    }
    let Ok(Some(parts)) = seed::source_parts(member) else {
        return;
    };
    let Ok(plan) = clone::plan(member, &parts.all) else {
        return;
    };
    let others = others();
    if !shares_extents(member, &plan, &others) {
        return;
    }
    let partners = Partners::of(&others, &parts.all);
    for rel in plan.file_names() {
        let Some(partner) = partners.find(rel) else {
            continue;
        };
        if let Err(err) = share_file(&member.join(rel), &partner)
            && unsupported(&err)
        {
            return;
        }
    }
}

/// Whether sharing part of a file's blocks frees the blocks it replaces on
/// the filesystem under `dir` (see the module's documentation): XFS.
fn frees_replaced_blocks(dir: &Path) -> bool {
    statfs::statfs(dir).is_ok_and(|fs| fs.filesystem_type() == statfs::XFS_SUPER_MAGIC)
}

/// How many files with a namesake in another member are tried before a
/// pass decides whether the filesystem shares extents.
const PROBES: usize = 8;

/// Whether the filesystem shares extents between `member`'s files and the
/// other members': asked of the first files with a namesake there, before
/// the other members are walked.
fn shares_extents(member: &Path, plan: &clone::Plan, others: &[PathBuf]) -> bool {
    let big = |path: &Path| {
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.len() >= BLOCK as u64)
    };
    let pairs = plan.file_names().flat_map(|rel| {
        let path = member.join(rel);
        let partner = others.iter().map(|other| other.join(rel)).find(|p| big(p));
        partner
            .filter(|_| big(&path))
            .map(|partner| (path, partner))
    });
    for (path, partner) in pairs.take(PROBES) {
        match probe(&path, &partner) {
            Ok(()) => return true,
            Err(err) if unsupported(&err) => return false,
            Err(_) => {}
        }
    }
    false
}

/// Whether the filesystem shares extents between `path` and `partner`:
/// their first blocks offered to share (the kernel shares them only if
/// equal), before anything is read.
fn probe(path: &Path, partner: &Path) -> io::Result<()> {
    let (mine, theirs) = (File::open(path)?, File::open(partner)?);
    let len = mine.metadata()?.len().min(theirs.metadata()?.len());
    if len < BLOCK as u64 {
        return Err(io::Error::from_raw_os_error(libc::ENODATA));
    }
    dedupe(&theirs, &mine, 0, BLOCK as u64)
}

/// Whether `err` says the filesystem cannot share extents at all (or not
/// across these files).
fn unsupported(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::EOPNOTSUPP | libc::ENOTTY | libc::EXDEV | libc::EINVAL)
    )
}

/// The files of the other members a member's file may share blocks with.
struct Partners {
    /// By relative path.
    files: HashMap<PathBuf, PathBuf>,
    /// Incremental state by crate directory and file name.
    incremental: HashMap<(PathBuf, PathBuf), PathBuf>,
}

impl Partners {
    fn of(others: &[PathBuf], parts: &[PathBuf]) -> Partners {
        let mut partners = Partners {
            files: HashMap::new(),
            incremental: HashMap::new(),
        };
        for other in others {
            let Ok(plan) = clone::plan(other, parts) else {
                continue;
            };
            for rel in plan.file_names() {
                let path = other.join(rel);
                if let Some(key) = session_key(rel) {
                    partners
                        .incremental
                        .entry(key)
                        .or_insert_with(|| path.clone());
                }
                partners.files.entry(rel.to_owned()).or_insert(path);
            }
        }
        partners
    }

    fn find(&self, rel: &Path) -> Option<PathBuf> {
        let by_session = || session_key(rel).and_then(|key| self.incremental.get(&key));
        self.files.get(rel).or_else(by_session).cloned()
    }
}

/// For a file of rustc's incremental state
/// (`<profile>/incremental/<crate>/<session>/<name>`), its crate directory
/// (`<profile>/incremental/<crate>`) and name.
fn session_key(rel: &Path) -> Option<(PathBuf, PathBuf)> {
    let parts: Vec<Component<'_>> = rel.components().collect();
    let at = parts.iter().position(|c| c.as_os_str() == "incremental")?;
    match &parts[at..] {
        [_, krate, _session, name] => {
            let dir: PathBuf = parts[..=at].iter().chain([krate]).collect();
            Some((dir, PathBuf::from(name.as_os_str())))
        }
        _ => None,
    }
}

/// Share `path`'s blocks equal to `partner`'s at the same offsets.
fn share_file(path: &Path, partner: &Path) -> io::Result<()> {
    let (mut mine, mut theirs) = (File::open(path)?, File::open(partner)?);
    let (len, other_len) = (mine.metadata()?.len(), theirs.metadata()?.len());
    if len.min(other_len) < BLOCK as u64 || extents::same_blocks(&mine, &theirs) {
        return Ok(());
    }
    for (offset, length) in equal_runs(&mut mine, &mut theirs)? {
        dedupe(&theirs, &mine, offset, length)?;
    }
    Ok(())
}

/// The runs of whole blocks, as (offset, length), where `a` and `b` hold
/// the same bytes at the same offsets.
fn equal_runs(a: &mut File, b: &mut File) -> io::Result<Vec<(u64, u64)>> {
    let (mut left, mut right) = (vec![0u8; CHUNK], vec![0u8; CHUNK]);
    let mut runs: Vec<(u64, u64)> = Vec::new();
    let mut offset = 0u64;
    loop {
        let got = read_full(a, &mut left)?.min(read_full(b, &mut right)?);
        let whole = got - got % BLOCK;
        for (i, (x, y)) in left[..whole]
            .chunks(BLOCK)
            .zip(right[..whole].chunks(BLOCK))
            .enumerate()
        {
            if x == y {
                let at = offset + (i * BLOCK) as u64;
                match runs.last_mut() {
                    Some((start, length)) if *start + *length == at => *length += BLOCK as u64,
                    _ => runs.push((at, BLOCK as u64)),
                }
            }
        }
        if got < CHUNK {
            return Ok(runs);
        }
        offset += CHUNK as u64;
    }
}

/// Read until `buf` is full or the file ends; how many bytes.
fn read_full(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..])? {
            0 => break,
            read => filled += read,
        }
    }
    Ok(filled)
}

/// Make `dest`'s `length` bytes at `offset` share `source`'s at the same
/// offset, in calls of at most [`MOST_PER_CALL`] (a range found different
/// by the kernel is left as it is).
fn dedupe(source: &File, dest: &File, offset: u64, length: u64) -> io::Result<()> {
    let mut at = offset;
    while at < offset + length {
        let step = (offset + length - at).min(MOST_PER_CALL);
        let mut range = DedupeRange {
            src_offset: at,
            src_length: step,
            dest_count: 1,
            reserved1: 0,
            reserved2: 0,
            info: [DedupeRangeInfo {
                dest_fd: i64::from(dest.as_raw_fd()),
                dest_offset: at,
                bytes_deduped: 0,
                status: 0,
                reserved: 0,
            }],
        };
        // SAFETY: `range` is a `struct file_dedupe_range` with room for its
        // one `dest_count` entry, as FIDEDUPERANGE requires, and lives
        // through the call; both descriptors are open.
        let rc = unsafe { libc::ioctl(source.as_raw_fd(), FIDEDUPERANGE, &mut range) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        let status = range.info[0].status;
        if status < 0 {
            return Err(io::Error::from_raw_os_error(-status));
        }
        at += step;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incremental_files_match_by_crate_and_name_table() {
        let table: [(&str, Option<(&str, &str)>); 4] = [
            (
                "debug/incremental/app-1x/s-abc-def/cgu.o",
                Some(("debug/incremental/app-1x", "cgu.o")),
            ),
            ("debug/deps/libapp-1.rlib", None),
            ("debug/incremental/app-1x/s-abc.lock", None),
            (
                "x86_64-unknown-linux-gnu/debug/incremental/a/s/dep-graph.bin",
                Some((
                    "x86_64-unknown-linux-gnu/debug/incremental/a",
                    "dep-graph.bin",
                )),
            ),
        ];
        for (rel, expected) in table {
            let expected = expected.map(|(dir, name)| (PathBuf::from(dir), PathBuf::from(name)));
            assert_eq!(session_key(Path::new(rel)), expected, "{rel}");
        }
    }

    /// Equal blocks are found at the same offsets only, whole blocks only.
    #[test]
    fn equal_runs_are_whole_blocks_at_the_same_offsets() {
        let dir = tempfile::tempdir().unwrap();
        let block = |byte: u8| vec![byte; BLOCK];
        let a = [block(1), block(2), block(3), block(4), vec![5; 100]].concat();
        let b = [block(1), block(9), block(3), block(4), vec![5; 100]].concat();
        std::fs::write(dir.path().join("a"), a).unwrap();
        std::fs::write(dir.path().join("b"), b).unwrap();
        let mut a = File::open(dir.path().join("a")).unwrap();
        let mut b = File::open(dir.path().join("b")).unwrap();
        let runs = equal_runs(&mut a, &mut b).unwrap();
        let block = BLOCK as u64;
        assert_eq!(runs, [(0, block), (2 * block, 2 * block)]);
    }
}
