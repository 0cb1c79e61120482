//! Sharing the blocks members hold alike, once a holder lets its member go.
//!
//! A seed shares every block with its source (a reflink), but each member's
//! own builds write files of their own: the workspace's crates built from
//! the holder's worktree, their linked binaries and incremental state. Much
//! of those is alike from member to member, block for block at the same
//! offsets (a binary linking the same dependencies, a library whose change
//! is small), so where the filesystem can share extents each block of a
//! member's file equal to the block at the same offset of the same file in
//! another member is made to share that block. How depends on how the
//! filesystem frees what is replaced ([`Sharing`]):
//!
//! - XFS maps files block by block, so the equal blocks are shared in place
//!   (`FIDEDUPERANGE`). The kernel compares the two ranges itself under its
//!   locks and shares them only when equal, so no byte of either file
//!   changes, whatever writes them meanwhile.
//! - Btrfs keeps an extent whole while any of its blocks is still
//!   referenced, so sharing in place the equal part of a file written as one
//!   extent frees nothing (measured: the filesystem's use did not fall).
//!   There each file is written anew: the other's equal blocks cloned
//!   (`FICLONERANGE`), its own differing bytes written, the whole read back
//!   and compared with the file, and given the file's mode and times. Once
//!   the new files hold [`MOST_UNFLUSHED`] bytes of their own (and at the
//!   end), one flush of the filesystem puts them all on disk, and each
//!   file's names are moved to its new file in turn. The
//!   old file and every one of its extents go with its last name. Cargo's
//!   lock on the member's profiles is held meanwhile, so no cargo writes a
//!   file in place between its check and its names moving (a member still
//!   built in is left as it is). A kill between two names leaves names on
//!   two files with the same bytes, mode and times (cargo sees no change),
//!   and the next pass finishes the work.
//!
//! Either way a later write to either member copies a block again.
//!
//! The same file is the same relative path, except in rustc's incremental
//! state, whose session directories are named anew by each compilation:
//! there a file matches the file of the same name in any session of the
//! same crate. Files already sharing a block with their namesake at the
//! same offset (a reflink, or shared by an earlier pass) are not read.

use std::{
    collections::HashMap,
    fs::{self, File, FileTimes, OpenOptions},
    io::{self, Read},
    os::{
        fd::AsRawFd,
        unix::fs::{FileExt, MetadataExt, OpenOptionsExt},
    },
    path::{Component, Path, PathBuf},
};

use natives_system::crash;
use nix::sys::statfs;

use super::{clone, discard, extents, seed};

/// The unit compared and shared: the block of every filesystem that shares
/// extents (btrfs's and XFS's default), which ranges must be aligned to.
const BLOCK: usize = 4096;

/// Bytes read from each file at a time.
const CHUNK: usize = 1 << 20;

/// The most bytes one `FIDEDUPERANGE` call is asked to share (btrfs shares
/// at most 16 MiB per call).
const MOST_PER_CALL: u64 = 16 << 20;

/// The fewest equal bytes that make a file worth writing anew: below this,
/// writing its differing bytes again and moving its names costs more than
/// the blocks it frees.
const WORTH_WRITING_ANEW: u64 = 16 * BLOCK as u64;

/// The most bytes of their own (not cloned) the new files of a pass hold
/// before they are flushed and take their names: one flush for many files
/// (a flush each made releases seconds longer), while the old files and
/// the new ones, both on disk until then, add at most this much.
const MOST_UNFLUSHED: u64 = 32 << 20;

/// Where, in a member, a pass makes its files: the probe, and each file
/// being written anew. Removed with whatever a killed pass left there when
/// the next pass begins, and when it ends. Not a part of the member a seed
/// copies.
const SCRATCH: &str = ".natives-sharing";

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

/// The crash points of writing a file anew, for the tests that kill a pass
/// at each.
pub(super) mod points {
    /// One more file is compared with its namesake; its new copy is not
    /// written yet.
    pub const COMPARED: &str = "pool share file compared";
    /// One more file's new copy is written and checked; no name moved yet.
    pub const WRITTEN: &str = "pool share file written anew";
    /// Every new copy is flushed; no name moved yet.
    pub const SYNCED: &str = "pool share new files flushed";
    /// One more name of a file is its new copy.
    pub const MOVED: &str = "pool share name moved to the new file";
}

/// How a member's file is made to share the equal blocks of another's,
/// chosen by what the filesystem frees (see the module's documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sharing {
    /// Shared in place (`FIDEDUPERANGE`): XFS.
    InPlace,
    /// Written anew from the other's blocks and its own: btrfs.
    Anew,
}

impl Sharing {
    /// How on the filesystem under `dir`; `None` where no block is shared.
    fn on(dir: &Path) -> Option<Sharing> {
        match statfs::statfs(dir).ok()?.filesystem_type() {
            statfs::XFS_SUPER_MAGIC => Some(Sharing::InPlace),
            statfs::BTRFS_SUPER_MAGIC => Some(Sharing::Anew),
            _ => None,
        }
    }
}

/// Make `member`'s files (what a copy of it would take) share the equal
/// blocks of the same files in the members `others` names, asked for only
/// once the filesystem is known to share and free blocks. Nothing is done
/// where it cannot; a file that cannot be read or shared is left as it is.
pub(super) fn share_alike(member: &Path, others: impl FnOnce() -> Vec<PathBuf>) {
    let Some(sharing) = Sharing::on(member) else {
        return;
    };
    let Ok(Some(parts)) = seed::source_parts(member) else {
        return;
    };
    let Ok(plan) = clone::plan(member, &parts.all) else {
        return;
    };
    let others = others();
    let Ok(scratch) = Scratch::clear(member) else {
        return;
    };
    if !shares_extents(&plan, &others, &scratch) {
        return;
    }
    let partners = Partners::of(&others, &parts.all);
    match sharing {
        Sharing::InPlace => share_in_place(member, &plan, &partners),
        Sharing::Anew => {
            // No cargo writes a file in place between its check and its
            // names moving (the holder let go of a member it still builds
            // in: it is left as it is).
            if let Ok(Some(_no_cargo)) = discard::cargo_locks(member) {
                write_anew(member, &plan, &partners, &scratch);
            }
        }
    }
}

/// Share each file's equal blocks in place.
fn share_in_place(member: &Path, plan: &clone::Plan, partners: &Partners) {
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

/// Write each file with enough equal blocks anew; each time the new files
/// hold [`MOST_UNFLUSHED`] bytes of their own, and at the end, flush them
/// all (one `syncfs`) and move each file's names to its new file.
fn write_anew(member: &Path, plan: &clone::Plan, partners: &Partners, scratch: &Scratch) {
    let mut further: HashMap<&Path, Vec<&Path>> = HashMap::new();
    for (name, first) in plan.further_names() {
        further.entry(first).or_default().push(name);
    }
    let mut written = Vec::new();
    let mut unflushed = 0;
    for (at, rel) in plan.file_names().enumerate() {
        let Some(partner) = partners.find(rel) else {
            continue;
        };
        let names: Vec<PathBuf> = std::iter::once(rel)
            .chain(further.get(rel).into_iter().flatten().copied())
            .map(|name| member.join(name))
            .collect();
        let copy = scratch.copy(at);
        match file_anew(&names, &partner, &copy) {
            Ok(Some(own)) => {
                crash::point(points::WRITTEN);
                written.push((copy, names));
                unflushed += own;
            }
            Ok(None) => {}
            Err(err) => {
                let _ = fs::remove_file(&copy);
                if unsupported(&err) || no_room(&err) {
                    break;
                }
            }
        }
        if unflushed >= MOST_UNFLUSHED {
            if !move_names(scratch, std::mem::take(&mut written)) {
                return;
            }
            unflushed = 0;
        }
    }
    move_names(scratch, written);
}

/// Flush the new files `written` (one `syncfs`), then move each file's
/// names to its new file; whether the flush was done (else nothing moved).
fn move_names(scratch: &Scratch, written: Vec<(PathBuf, Vec<PathBuf>)>) -> bool {
    if written.is_empty() {
        return true;
    }
    if scratch.sync().is_err() {
        return false;
    }
    crash::point(points::SYNCED);
    for (copy, names) in written {
        for name in names {
            if scratch.move_name(&copy, &name).is_err() {
                break;
            }
            crash::point(points::MOVED);
        }
        let _ = fs::remove_file(copy);
    }
    true
}

/// How many files with a namesake in another member are tried before a
/// pass decides whether the filesystem shares extents.
const PROBES: usize = 8;

/// Whether the filesystem shares extents between the member and the other
/// members: a block of the first files of theirs with a namesake in `plan`
/// cloned into `scratch`, before the other members are walked, leaving
/// every file of every member as it was.
fn shares_extents(plan: &clone::Plan, others: &[PathBuf], scratch: &Scratch) -> bool {
    let big = |path: &Path| {
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.len() >= BLOCK as u64)
    };
    let namesakes = plan
        .file_names()
        .filter_map(|rel| others.iter().map(|other| other.join(rel)).find(|p| big(p)));
    for partner in namesakes.take(PROBES) {
        let probed = probe(&partner, scratch);
        let _ = fs::remove_file(scratch.probe());
        match probed {
            Ok(()) => return true,
            Err(err) if unsupported(&err) => return false,
            Err(_) => {}
        }
    }
    false
}

/// Whether the filesystem shares `partner`'s blocks with a file in
/// `scratch`: its first block cloned into a new file there.
fn probe(partner: &Path, scratch: &Scratch) -> io::Result<()> {
    let theirs = File::open(partner)?;
    let probe = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(scratch.probe())?;
    clone_range(&theirs, &probe, 0, BLOCK as u64)
}

/// Whether `err` says the filesystem cannot share extents at all (or not
/// across these files).
fn unsupported(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::EOPNOTSUPP | libc::ENOTTY | libc::EXDEV | libc::EINVAL)
    )
}

/// Whether `err` says the filesystem (or the user's quota) is full: the
/// next file would fail alike, so the pass stops.
fn no_room(err: &io::Error) -> bool {
    matches!(err.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
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
            for (name, _) in plan.further_names() {
                let path = other.join(name);
                partners.files.entry(name.to_owned()).or_insert(path);
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

/// The file at `path` and its namesake `partner`, opened, when they are
/// worth comparing: both at least a block long, sharing no block yet.
fn pair(path: &Path, partner: &Path) -> io::Result<Option<(File, File)>> {
    let (mine, theirs) = (File::open(path)?, File::open(partner)?);
    let shortest = mine.metadata()?.len().min(theirs.metadata()?.len());
    if shortest < BLOCK as u64 || extents::share_a_block(&mine, &theirs) {
        return Ok(None);
    }
    Ok(Some((mine, theirs)))
}

/// Share `path`'s blocks equal to `partner`'s at the same offsets, in place.
fn share_file(path: &Path, partner: &Path) -> io::Result<()> {
    let Some((mut mine, mut theirs)) = pair(path, partner)? else {
        return Ok(());
    };
    for (offset, length) in equal_runs(&mut mine, &mut theirs)? {
        dedupe(&theirs, &mine, offset, length)?;
    }
    Ok(())
}

/// A member's directory for a pass's files (the probe, the file being
/// written anew), emptied of what a killed pass left there; removed when
/// dropped.
struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn clear(member: &Path) -> io::Result<Scratch> {
        let dir = member.join(SCRATCH);
        match fs::remove_dir_all(&dir) {
            Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
            _ => fs::create_dir(&dir)?,
        }
        Ok(Scratch { dir })
    }

    /// Where the probe clones a block.
    fn probe(&self) -> PathBuf {
        self.dir.join("probe")
    }

    /// Where the new copy of the member's `at`th file is written.
    fn copy(&self, at: usize) -> PathBuf {
        self.dir.join(at.to_string())
    }

    /// Flush every new copy (and whatever else the filesystem holds).
    fn sync(&self) -> io::Result<()> {
        let dir = File::open(&self.dir)?;
        nix::unistd::syncfs(&dir).map_err(io::Error::from)
    }

    /// Make `name` a name of `copy`: a further name of it made here, then
    /// moved over `name`, so `name` always names one whole file.
    fn move_name(&self, copy: &Path, name: &Path) -> io::Result<()> {
        let link = self.dir.join("name");
        let _ = fs::remove_file(&link);
        fs::hard_link(copy, &link)?;
        fs::rename(&link, name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Write the file that has `names` (every one of them; the first is read)
/// anew at `copy` from `partner`'s equal blocks and its own differing
/// bytes; when it was, how many bytes of its own (not cloned) it holds. Not
/// when it has too few equal blocks, belongs to
/// another user, has a name outside the member (a link someone made to it
/// elsewhere stays the same file), or the new file does not read back the
/// same.
fn file_anew(names: &[PathBuf], partner: &Path, copy: &Path) -> io::Result<Option<u64>> {
    let Some((mut mine, mut theirs)) = pair(&names[0], partner)? else {
        return Ok(None);
    };
    let meta = mine.metadata()?;
    let named_elsewhere = meta.nlink() != names.len() as u64;
    if named_elsewhere || meta.uid() != nix::unistd::geteuid().as_raw() {
        return Ok(None);
    }
    let runs = equal_runs(&mut mine, &mut theirs)?;
    let equal: u64 = runs.iter().map(|(_, length)| length).sum();
    if equal < WORTH_WRITING_ANEW {
        return Ok(None);
    }
    crash::point(points::COMPARED);
    if !write_from(copy, &mine, &theirs, &runs)? {
        fs::remove_file(copy)?;
        return Ok(None);
    }
    Ok(Some(meta.len() - equal))
}

/// Write `mine`'s bytes to the new file `fresh`: `theirs`' blocks cloned
/// where `runs` says they are equal, `mine`'s bytes written elsewhere.
/// Then read it back; when it holds exactly `mine`'s bytes (`theirs` may
/// have changed meanwhile), give it `mine`'s mode and times and say so.
fn write_from(fresh: &Path, mine: &File, theirs: &File, runs: &[(u64, u64)]) -> io::Result<bool> {
    let meta = mine.metadata()?;
    let out = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(fresh)?;
    let mut at = 0;
    for &(offset, length) in runs {
        write_bytes(mine, &out, at, offset)?;
        clone_range(theirs, &out, offset, length)?;
        at = offset + length;
    }
    write_bytes(mine, &out, at, meta.len())?;
    if !same_bytes(mine, &out)? {
        return Ok(false);
    }
    out.set_permissions(meta.permissions())?;
    let times = FileTimes::new()
        .set_accessed(meta.accessed()?)
        .set_modified(meta.modified()?);
    out.set_times(times)?;
    Ok(true)
}

/// Write `from`'s bytes from `start` to `end` at the same offsets of `to`,
/// as new bytes: never `copy_file_range`, which clones on btrfs and would
/// keep the old extents alive.
fn write_bytes(from: &File, to: &File, start: u64, end: u64) -> io::Result<()> {
    let mut buf = vec![0u8; CHUNK.min((end - start) as usize)];
    let mut at = start;
    while at < end {
        let want = (end - at).min(CHUNK as u64) as usize;
        from.read_exact_at(&mut buf[..want], at)?;
        to.write_all_at(&buf[..want], at)?;
        at += want as u64;
    }
    Ok(())
}

/// Whether `a` and `b` hold the same bytes, read from their starts.
fn same_bytes(a: &File, b: &File) -> io::Result<bool> {
    let len = a.metadata()?.len();
    if b.metadata()?.len() != len {
        return Ok(false);
    }
    let (mut left, mut right) = (vec![0u8; CHUNK], vec![0u8; CHUNK]);
    let mut at = 0;
    while at < len {
        let want = (len - at).min(CHUNK as u64) as usize;
        a.read_exact_at(&mut left[..want], at)?;
        b.read_exact_at(&mut right[..want], at)?;
        if left[..want] != right[..want] {
            return Ok(false);
        }
        at += want as u64;
    }
    Ok(true)
}

/// Make `dest`'s `length` bytes at `offset` the very blocks of `source`'s
/// at the same offset (`FICLONERANGE`).
fn clone_range(source: &File, dest: &File, offset: u64, length: u64) -> io::Result<()> {
    let range = libc::file_clone_range {
        src_fd: i64::from(source.as_raw_fd()),
        src_offset: offset,
        src_length: length,
        dest_offset: offset,
    };
    // SAFETY: `range` is a `struct file_clone_range`, as FICLONERANGE
    // requires, and lives through the call; both descriptors are open.
    let rc = unsafe { libc::ioctl(dest.as_raw_fd(), libc::FICLONERANGE, &range) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
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
    use std::{
        os::unix::{fs::PermissionsExt, process::ExitStatusExt},
        process::Command,
        time::{Duration, SystemTime},
    };

    use natives_testkit::mount::{LoopMount, REFLINKING};
    use nix::fcntl::{self, FallocateFlags};

    use super::*;

    /// The blocks of the linked binary each test member holds.
    const BINARY_BLOCKS: usize = 256;
    /// Its blocks that differ from member to member.
    const DIFFERING: std::ops::Range<usize> = 100..116;
    /// When every test file was last modified, to the nanosecond.
    fn modified() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::new(1_000_000_000, 123_456_789)
    }

    /// The files of a test member: a binary with two names (an uplifted
    /// binary and its `deps/` original, as cargo leaves them), a library
    /// differing in its first block, a file smaller than a block. `mark`
    /// makes the differing parts differ.
    fn member_files(mark: u8) -> Vec<(&'static str, Vec<u8>)> {
        let block = |i: usize| {
            let fill = if DIFFERING.contains(&i) {
                mark
            } else {
                i as u8
            };
            vec![fill; BLOCK]
        };
        let mut binary: Vec<u8> = (0..BINARY_BLOCKS).flat_map(block).collect();
        binary.extend([mark; 100]);
        let mut library = vec![7u8; 64 * BLOCK];
        library[..BLOCK].fill(mark);
        vec![
            ("debug/app", binary),
            ("debug/deps/libx-1.rlib", library),
            ("debug/.fingerprint/x-1/lib-x", vec![mark; 16]),
        ]
    }

    /// A member at `dir` holding [`member_files`] with `mark`, each
    /// executable and last modified at [`modified`]; the binary also named
    /// `debug/deps/app-1`.
    fn lay_out(dir: &Path, mark: u8) {
        natives_testkit::write(dir, "debug/.cargo-lock", "");
        for (rel, bytes) in member_files(mark) {
            let path = dir.join(rel);
            natives_testkit::write(dir, rel, bytes);
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
            File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(modified())
                .unwrap();
        }
        fs::hard_link(dir.join("debug/app"), dir.join("debug/deps/app-1")).unwrap();
    }

    /// Two members under `root`, the second's files to share with the
    /// first's.
    fn two_members(root: &Path) -> (PathBuf, PathBuf) {
        let (first, second) = (root.join("member-0"), root.join("member-1"));
        lay_out(&first, 1);
        lay_out(&second, 2);
        (first, second)
    }

    /// Every name of `member`'s files still holds what it held, with its
    /// mode and its time to the nanosecond.
    fn assert_unchanged(member: &Path, mark: u8, when: &str) {
        let mut files = member_files(mark);
        files.push(("debug/deps/app-1", files[0].1.clone()));
        for (rel, bytes) in files {
            let path = member.join(rel);
            let meta = fs::metadata(&path).unwrap();
            assert!(fs::read(&path).unwrap() == bytes, "{rel} changed {when}");
            assert_eq!(meta.permissions().mode() & 0o7777, 0o755, "{rel} {when}");
            assert_eq!(meta.modified().unwrap(), modified(), "{rel} {when}");
        }
    }

    /// Whether `rel` of `member` shares a block with `rel` of `other`.
    fn shares(member: &Path, other: &Path, rel: &str) -> bool {
        let open = |dir: &Path| File::open(dir.join(rel)).unwrap();
        extents::share_a_block(&open(member), &open(other))
    }

    /// A btrfs mounted in a folder of its own; unmounted, then the folder
    /// removed, when dropped (fields drop in order).
    struct Btrfs {
        mount: LoopMount,
        _folder: tempfile::TempDir,
    }

    /// A new [`Btrfs`], or `None` (the test skipped, saying why) where this
    /// process cannot make one.
    fn btrfs() -> Option<Btrfs> {
        let folder = tempfile::tempdir().unwrap();
        let mount = LoopMount::or_skip(folder.path(), &REFLINKING[..1], "btrfs")?;
        Some(Btrfs {
            mount,
            _folder: folder,
        })
    }

    /// On btrfs a released member's files are written anew from the blocks
    /// they hold alike with another member's: the filesystem's use falls by
    /// about the blocks alike, and every name keeps its bytes, mode and
    /// time. A second pass finds them shared and writes nothing.
    #[test]
    fn on_btrfs_a_file_is_written_anew_under_every_name_from_the_blocks_alike() {
        let Some(btrfs) = btrfs() else {
            return;
        };
        let mount = &btrfs.mount;
        let (first, second) = two_members(&mount.dir);
        let before = mount.used();
        share_alike(&second, || vec![first.clone()]);
        let freed = before.saturating_sub(mount.used());
        let alike = ((BINARY_BLOCKS - DIFFERING.len()) + 63) * BLOCK;
        assert!(freed >= alike as u64 / 2, "freed {freed} of {alike} alike");
        assert_unchanged(&second, 2, "once shared");
        assert_unchanged(&first, 1, "as the partner");
        for rel in ["debug/app", "debug/deps/libx-1.rlib"] {
            assert!(shares(&second, &first, rel), "{rel}");
        }
        let ino = |rel: &str| fs::metadata(second.join(rel)).unwrap().ino();
        assert_eq!(ino("debug/app"), ino("debug/deps/app-1"));
        assert!(!second.join(SCRATCH).exists());
        let inode = ino("debug/app");
        share_alike(&second, || vec![first.clone()]);
        assert_eq!(ino("debug/app"), inode, "written anew twice");
    }

    /// A member a cargo still builds in (its holder let it go too soon)
    /// has no file written anew: the cargo could be writing one in place.
    #[test]
    fn on_btrfs_no_file_is_written_anew_while_a_cargo_builds_in_the_member() {
        let Some(btrfs) = btrfs() else {
            return;
        };
        let mount = &btrfs.mount;
        let (first, second) = two_members(&mount.dir);
        let ino = || fs::metadata(second.join("debug/app")).unwrap().ino();
        let before = ino();
        let cargo = natives_system::lock::try_cargo_lock(&second.join("debug/.cargo-lock"), true);
        let cargo = cargo.unwrap().unwrap();
        share_alike(&second, || vec![first.clone()]);
        assert_eq!(ino(), before, "written anew under a cargo");
        drop(cargo);
        share_alike(&second, || vec![first.clone()]);
        assert_ne!(ino(), before);
        assert_unchanged(&second, 2, "once shared");
    }

    /// New files holding more than [`MOST_UNFLUSHED`] bytes of their own
    /// take their names before the next file is written anew, so a pass
    /// adds at most that much disk while it runs.
    #[test]
    fn on_btrfs_new_files_take_their_names_each_time_they_hold_enough_of_their_own() {
        let Some(btrfs) = btrfs() else {
            return;
        };
        let mount = &btrfs.mount;
        let own = MOST_UNFLUSHED as usize;
        let (first, second) = (mount.dir.join("member-0"), mount.dir.join("member-1"));
        for (dir, mark) in [(&first, 1u8), (&second, 2u8)] {
            natives_testkit::write(dir, "debug/.cargo-lock", "");
            for rel in ["debug/deps/a", "debug/deps/b"] {
                let bytes = [vec![mark; own], vec![7; WORTH_WRITING_ANEW as usize]].concat();
                natives_testkit::write(dir, rel, bytes);
            }
        }
        let passed = points_of(|| share_alike(&second, || vec![first.clone()]));
        let (compared, written) = (points::COMPARED, points::WRITTEN);
        let (synced, moved) = (points::SYNCED, points::MOVED);
        let each = [compared, written, synced, moved];
        assert_eq!(passed, [each, each].concat());
    }

    /// Every crash point `work` passes on this thread, in order.
    fn points_of(work: impl FnOnce()) -> Vec<&'static str> {
        let passed = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let seen = passed.clone();
        crash::install(Some(Box::new(move |point| seen.borrow_mut().push(point))));
        work();
        crash::install(None);
        passed.take()
    }

    /// The other member's file rewritten in place between the comparison
    /// and the cloning (its holder's cargo at work): the new copy does not
    /// read back the same, so the file is left as it is (the others are
    /// still written anew).
    #[test]
    fn on_btrfs_a_namesake_changed_after_the_comparison_is_not_cloned() {
        let Some(btrfs) = btrfs() else {
            return;
        };
        let mount = &btrfs.mount;
        let (first, second) = two_members(&mount.dir);
        let ino = |rel: &str| fs::metadata(second.join(rel)).unwrap().ino();
        let (binary, library) = (ino("debug/app"), ino("debug/deps/libx-1.rlib"));
        let namesake = first.join("debug/app");
        crash::install(Some(Box::new(move |point| {
            if point == points::COMPARED {
                let file = File::options().write(true).open(&namesake).unwrap();
                file.write_all_at(&vec![0x55; 8 * BLOCK], 0).unwrap();
            }
        })));
        share_alike(&second, || vec![first.clone()]);
        crash::install(None);
        assert_unchanged(&second, 2, "after its namesake changed");
        assert_eq!(ino("debug/app"), binary, "written anew from changed blocks");
        assert_eq!(ino("debug/deps/app-1"), binary);
        assert_ne!(
            ino("debug/deps/libx-1.rlib"),
            library,
            "its namesake held still"
        );
    }

    /// A file with a name outside the member (a link a user made to a
    /// binary) stays the same file under every name; the other files are
    /// still written anew.
    #[test]
    fn on_btrfs_a_file_linked_from_outside_the_member_is_not_written_anew() {
        let Some(btrfs) = btrfs() else {
            return;
        };
        let mount = &btrfs.mount;
        let (first, second) = two_members(&mount.dir);
        let outside = mount.dir.join("app-installed");
        fs::hard_link(second.join("debug/app"), &outside).unwrap();
        let ino = |path: &Path| fs::metadata(path).unwrap().ino();
        let (binary, library) = (ino(&outside), ino(&second.join("debug/deps/libx-1.rlib")));
        share_alike(&second, || vec![first.clone()]);
        for name in ["debug/app", "debug/deps/app-1"] {
            assert_eq!(ino(&second.join(name)), binary, "{name}");
        }
        assert_ne!(ino(&second.join("debug/deps/libx-1.rlib")), library);
        assert_unchanged(&second, 2, "once shared");
    }

    /// A filesystem too full for a file's new copy loses nothing: every
    /// name keeps its bytes, mode and time, and no scratch is left.
    #[test]
    fn on_btrfs_a_full_filesystem_leaves_every_file_as_it_was() {
        let Some(btrfs) = btrfs() else {
            return;
        };
        let mount = &btrfs.mount;
        let (first, second) = two_members(&mount.dir);
        let filler = File::create(mount.dir.join("filler")).unwrap();
        let mut filled = 0;
        for step in [64 << 20, 1 << 20, BLOCK as i64] {
            let allocate = |at| fcntl::fallocate(&filler, FallocateFlags::empty(), at, step);
            while allocate(filled).is_ok() {
                filled += step;
            }
        }
        share_alike(&second, || vec![first.clone()]);
        assert_unchanged(&second, 2, "on a full filesystem");
        assert!(!second.join(SCRATCH).exists());
    }

    /// The environment variable naming the crash point a child pass is
    /// killed at, and the one naming its two members.
    const CHILD_ENV: [&str; 2] = ["NATIVES_TEST_SHARE_KILL_AT", "NATIVES_TEST_SHARE_MEMBERS"];

    /// A pass writing files anew killed at each of its steps loses nothing:
    /// every name keeps its bytes, mode and time, and the next pass
    /// finishes the work and leaves no scratch behind.
    #[test]
    fn on_btrfs_a_pass_killed_at_every_step_of_writing_anew_loses_nothing() {
        let Some(btrfs) = btrfs() else {
            return;
        };
        let mount = &btrfs.mount;
        let (first, second) = two_members(&mount.dir.join("counted"));
        let passed = points_of(|| share_alike(&second, || vec![first.clone()]));
        let (compared, written) = (points::COMPARED, points::WRITTEN);
        let (synced, moved) = (points::SYNCED, points::MOVED);
        let each = [compared, written];
        assert_eq!(
            passed,
            [each, each]
                .concat()
                .into_iter()
                .chain([synced, moved, moved, moved])
                .collect::<Vec<_>>()
        );
        for (index, point) in passed.into_iter().enumerate() {
            let (first, second) = two_members(&mount.dir.join(index.to_string()));
            let out = Command::new(std::env::current_exe().unwrap())
                .args([
                    "--ignored",
                    "--exact",
                    "pool::dedupe::tests::share_child",
                    "--nocapture",
                ])
                .env(CHILD_ENV[0], index.to_string())
                .env(
                    CHILD_ENV[1],
                    format!("{}:{}", first.display(), second.display()),
                )
                .output()
                .unwrap();
            assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{out:?}");
            let said = String::from_utf8_lossy(&out.stderr);
            assert!(said.contains(&format!("({point})")), "{point}: {said}");
            let when = format!("after a kill at {index} ({point})");
            assert_unchanged(&second, 2, &when);
            share_alike(&second, || vec![first.clone()]);
            assert_unchanged(&second, 2, &format!("finished {when}"));
            for rel in ["debug/app", "debug/deps/app-1", "debug/deps/libx-1.rlib"] {
                assert!(shares(&second, &first, rel), "{rel} {when}");
            }
            assert!(!second.join(SCRATCH).exists(), "{when}");
        }
    }

    /// The child of the kill test: one pass, killed at the point it is told.
    #[test]
    #[ignore = "run by the kill test in a child process"]
    fn share_child() {
        let (Ok(index), Ok(members)) = (std::env::var(CHILD_ENV[0]), std::env::var(CHILD_ENV[1]))
        else {
            return;
        };
        let (first, second) = members.split_once(':').unwrap();
        crash::install(Some(crash::kill_at(index.parse().unwrap())));
        share_alike(Path::new(second), || vec![PathBuf::from(first)]);
    }

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
