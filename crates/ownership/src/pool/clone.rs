//! Copying a member's build output into a new member: one clone per file,
//! in parallel.
//!
//! Where the filesystem shares extents (btrfs, XFS, bcachefs...), each file
//! is cloned with `FICLONE`: instant, and no block is written until one side
//! changes it. Elsewhere each file is copied with `copy_file_range` (what the
//! standard library's copy does), inside the kernel. Every file keeps its
//! permission bits and its modification time, because cargo decides what is
//! fresh by comparing modification times.
//!
//! Never hard links between members: cargo rewrites files of a target
//! directory in place (a build script's `output`, fingerprints, dep-info:
//! the same inode, truncated and rewritten, as `tests/pool_hard_links.rs`
//! shows), so two members sharing an inode would share those rewrites and
//! one of them would believe another's build was its own. A file cargo gave
//! two names within the source (an uplifted binary and its `deps/`
//! original) is copied once and given both names in the new member, as
//! cargo left it.
//!
//! A plain copy can be slower than building from nothing. It is measured as
//! it goes: once a sample (an eighth of the bytes, at least one file) is
//! copied, the whole copy's time is projected, and when that exceeds what a
//! build from nothing was measured to take here, the copy stops and the
//! caller builds cold instead.

use std::{
    collections::{HashMap, hash_map::Entry},
    fs::{self, File, FileTimes, OpenOptions},
    io,
    os::{
        fd::AsRawFd,
        unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt},
    },
    path::{Path, PathBuf},
    sync::atomic::{AtomicBool, AtomicUsize, Ordering},
    thread,
    time::{Duration, Instant},
};

use natives_core::{CancelToken, Error, ErrorKind, Result};

/// What lies under the parts of a tree to copy, found before anything is
/// copied.
#[derive(Debug, Default)]
pub(super) struct Plan {
    /// Directories, parents first (relative).
    dirs: Vec<PathBuf>,
    /// Regular files (relative) with their sizes.
    files: Vec<(PathBuf, u64)>,
    /// Symbolic links (relative) and what they point to.
    links: Vec<(PathBuf, PathBuf)>,
    /// Further names (relative) of files listed under another name.
    names: Vec<(PathBuf, PathBuf)>,
    /// The first name of each file with several, by device and inode.
    named: HashMap<(u64, u64), PathBuf>,
    /// Entries that are neither (FIFOs, sockets, devices): not copied.
    pub skipped: u64,
}

impl Plan {
    /// The bytes of every file.
    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|(_, bytes)| bytes).sum()
    }

    /// How many files.
    pub fn files(&self) -> u64 {
        self.files.len() as u64
    }

    /// The first file (relative), if any.
    pub fn first_file(&self) -> Option<&Path> {
        self.files.first().map(|(rel, _)| rel.as_path())
    }
}

/// The entries of `parts` (relative to `root`; a missing part is left out):
/// a part that is a directory is walked without following links.
pub(super) fn plan(root: &Path, parts: &[PathBuf]) -> Result<Plan> {
    let mut plan = Plan::default();
    for part in parts {
        add(root, part, &mut plan)?;
    }
    Ok(plan)
}

fn add(root: &Path, rel: &Path, plan: &mut Plan) -> Result<()> {
    let path = root.join(rel);
    let meta = match fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(Error::io(&path, err)),
    };
    if meta.is_dir() {
        plan.dirs.push(rel.to_owned());
        let listing = fs::read_dir(&path).map_err(|err| Error::io(&path, err))?;
        let mut names = Vec::new();
        for item in listing {
            names.push(item.map_err(|err| Error::io(&path, err))?.file_name());
        }
        names.sort();
        for name in names {
            add(root, &rel.join(name), plan)?;
        }
    } else if meta.is_file() {
        if meta.nlink() > 1 {
            let first = plan.named.entry((meta.dev(), meta.ino()));
            if let Entry::Occupied(first) = first {
                plan.names.push((rel.to_owned(), first.get().clone()));
                return Ok(());
            }
            first.or_insert_with(|| rel.to_owned());
        }
        plan.files.push((rel.to_owned(), meta.len()));
    } else if meta.is_symlink() {
        let target = fs::read_link(&path).map_err(|err| Error::io(&path, err))?;
        plan.links.push((rel.to_owned(), target));
    } else {
        plan.skipped += 1;
    }
    Ok(())
}

/// How the files are copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Method {
    /// `FICLONE`, one clone per file.
    Reflink,
    /// `copy_file_range`, stopped when it is projected to take longer than
    /// this (a build from nothing), if given.
    Copy(Option<Duration>),
}

/// How a copy ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Copied {
    /// Every file is there.
    Whole,
    /// Stopped after the sample: the whole copy was projected to take
    /// this long, past the bar.
    TooSlow(Duration),
}

/// Whether the filesystem under `dest_dir` clones `source`'s files:
/// tried on a scratch file in `dest_dir`, removed after.
pub(super) fn reflink_works(source: &Path, dest_dir: &Path) -> Result<bool> {
    let from = File::open(source).map_err(|err| Error::io(source, err))?;
    let probe = dest_dir.join(".reflink-probe");
    let to = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&probe)
        .map_err(|err| Error::io(&probe, err))?;
    let works = ficlone(&to, &from).is_ok();
    fs::remove_file(&probe).map_err(|err| Error::io(&probe, err))?;
    Ok(works)
}

/// Copy what `plan` lists from `source` into `dest` (which exists and is
/// empty) by `method`; `sampled` is told once the sample is copied (what
/// a plain copy is measured on). Fails with `cancel`'s error once it stops.
pub(super) fn copy(
    source: &Path,
    dest: &Path,
    plan: &Plan,
    method: Method,
    cancel: &CancelToken,
    sampled: &mut dyn FnMut(),
) -> Result<Copied> {
    for dir in plan.dirs.iter().filter(|d| !d.as_os_str().is_empty()) {
        let path = dest.join(dir);
        fs::create_dir(&path).map_err(|err| Error::io(&path, err))?;
    }
    for (link, target) in &plan.links {
        let path = dest.join(link);
        std::os::unix::fs::symlink(target, &path).map_err(|err| Error::io(&path, err))?;
    }
    let sample = sample_len(&plan.files);
    let started = Instant::now();
    let (first, rest) = plan.files.split_at(sample);
    copy_files(source, dest, first, method, cancel)?;
    sampled();
    if let Method::Copy(Some(bar)) = method {
        let projected = project(started.elapsed(), bytes_of(first), plan.bytes());
        if projected > bar {
            return Ok(Copied::TooSlow(projected));
        }
    }
    copy_files(source, dest, rest, method, cancel)?;
    for (name, first) in &plan.names {
        let path = dest.join(name);
        fs::hard_link(dest.join(first), &path).map_err(|err| Error::io(&path, err))?;
    }
    Ok(Copied::Whole)
}

/// How many of `files` make the sample: an eighth of the bytes, at least
/// one file.
fn sample_len(files: &[(PathBuf, u64)]) -> usize {
    let total: u64 = files.iter().map(|(_, b)| b).sum();
    let mut bytes = 0;
    for (i, (_, size)) in files.iter().enumerate() {
        bytes += size;
        if bytes.saturating_mul(8) >= total {
            return i + 1;
        }
    }
    files.len()
}

fn bytes_of(files: &[(PathBuf, u64)]) -> u64 {
    files.iter().map(|(_, b)| b).sum()
}

/// The time a copy of `total` bytes takes at the rate `copied` took `took`.
fn project(took: Duration, copied: u64, total: u64) -> Duration {
    if copied == 0 {
        return took;
    }
    took.mul_f64(total as f64 / copied as f64)
}

/// Copy `files` by `method`, one file per task, on as many threads as the
/// machine has processors.
fn copy_files(
    source: &Path,
    dest: &Path,
    files: &[(PathBuf, u64)],
    method: Method,
    cancel: &CancelToken,
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let workers = thread::available_parallelism().map_or(2, |n| n.get());
    thread::scope(|scope| {
        let handles: Vec<_> = (0..workers.min(files.len()))
            .map(|_| {
                scope.spawn(|| -> Result<()> {
                    while !failed.load(Ordering::Relaxed) {
                        let Some((rel, _)) = files.get(next.fetch_add(1, Ordering::Relaxed)) else {
                            return Ok(());
                        };
                        let outcome = cancel
                            .check()
                            .and_then(|()| copy_file(&source.join(rel), &dest.join(rel), method));
                        if let Err(err) = outcome {
                            failed.store(true, Ordering::Relaxed);
                            return Err(err);
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a copying thread does not panic"))
            .collect::<Result<Vec<()>>>()
            .map(drop)
    })
}

/// Copy one file: cloned when `method` says so (else, or where a clone is
/// refused, copied), its permission bits and times kept.
fn copy_file(from_path: &Path, to_path: &Path, method: Method) -> Result<()> {
    let mut from = File::open(from_path).map_err(|err| Error::io(from_path, err))?;
    let meta = from.metadata().map_err(|err| Error::io(from_path, err))?;
    let mut to = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(to_path)
        .map_err(|err| Error::io(to_path, err))?;
    let cloned = method == Method::Reflink && ficlone(&to, &from).is_ok();
    if !cloned {
        io::copy(&mut from, &mut to).map_err(|err| Error::io(to_path, err))?;
    }
    let times = FileTimes::new()
        .set_accessed(meta.accessed().map_err(|err| Error::io(from_path, err))?)
        .set_modified(meta.modified().map_err(|err| Error::io(from_path, err))?);
    to.set_permissions(fs::Permissions::from_mode(meta.mode() & 0o7777))
        .and_then(|()| to.set_times(times))
        .map_err(|err| Error::io(to_path, err))
}

/// Make `to` share `from`'s extents (`FICLONE`).
fn ficlone(to: &File, from: &File) -> io::Result<()> {
    // SAFETY: both descriptors are open files owned by the caller for the
    // whole call; FICLONE reads only the source descriptor's number.
    let rc = unsafe { libc::ioctl(to.as_raw_fd(), libc::FICLONE, from.as_raw_fd()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Flush the filesystem `dir` is on, so what was copied is on disk before
/// a record says it is there.
pub(super) fn sync_filesystem(dir: &Path) -> Result<()> {
    let handle = File::open(dir).map_err(|err| Error::io(dir, err))?;
    nix::unistd::syncfs(&handle).map_err(|errno| Error::io(dir, errno.into()))
}

/// `ENOTSUP` for a reflink asked for where the filesystem cannot clone.
pub(super) fn no_reflink(dir: &Path) -> Error {
    Error::new(
        ErrorKind::Unsupported,
        format!(
            "{}: the filesystem does not clone files (FICLONE); seed by copy instead",
            dir.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn a_copy_keeps_bytes_modes_times_and_links() {
        let source = natives_testkit::tree(&[
            ("debug/deps/libx.rlib", "rlib bytes"),
            ("debug/.fingerprint/x-1/lib-x", "abc"),
            ("debug/empty/", ""),
            (
                "CACHEDIR.TAG",
                "Signature: 8a477f597d28d172789f06886806bc55",
            ),
        ]);
        let src = source.path();
        let old = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        let rlib = src.join("debug/deps/libx.rlib");
        File::options()
            .write(true)
            .open(&rlib)
            .unwrap()
            .set_modified(old)
            .unwrap();
        fs::set_permissions(&rlib, fs::Permissions::from_mode(0o751)).unwrap();
        symlink("deps/libx.rlib", src.join("debug/libx.rlib")).unwrap();
        fs::hard_link(&rlib, src.join("debug/x-uplifted")).unwrap();
        let dest = tempfile::tempdir().unwrap();
        let parts = [
            PathBuf::from("debug"),
            "CACHEDIR.TAG".into(),
            "absent".into(),
        ];
        let plan = plan(src, &parts).unwrap();
        assert_eq!(plan.files(), 3);
        let copied = copy(
            src,
            dest.path(),
            &plan,
            Method::Copy(None),
            &CancelToken::new(),
            &mut || {},
        )
        .unwrap();
        assert_eq!(copied, Copied::Whole);
        let copy = dest.path().join("debug/deps/libx.rlib");
        assert_eq!(fs::read(&copy).unwrap(), b"rlib bytes");
        let meta = fs::metadata(&copy).unwrap();
        assert_eq!(meta.modified().unwrap(), old);
        assert_eq!(meta.mode() & 0o7777, 0o751);
        assert_ne!(
            meta.ino(),
            fs::metadata(&rlib).unwrap().ino(),
            "never a hard link"
        );
        assert!(dest.path().join("debug/empty").is_dir());
        let link = fs::read_link(dest.path().join("debug/libx.rlib")).unwrap();
        assert_eq!(link, Path::new("deps/libx.rlib"));
    }

    #[test]
    fn a_copy_projected_past_the_bar_stops_after_its_sample() {
        let files: Vec<(String, Vec<u8>)> = (0..16)
            .map(|i| (format!("debug/f{i:02}"), vec![7u8; 4096]))
            .collect();
        let named: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        let source = natives_testkit::tree(&named);
        let plan = plan(source.path(), &[PathBuf::from("debug")]).unwrap();
        let dest = tempfile::tempdir().unwrap();
        let mut told = false;
        let bar = Method::Copy(Some(Duration::ZERO));
        let copied = copy(
            source.path(),
            dest.path(),
            &plan,
            bar,
            &CancelToken::new(),
            &mut || told = true,
        )
        .unwrap();
        assert!(told);
        assert!(matches!(copied, Copied::TooSlow(_)), "{copied:?}");
        let left = fs::read_dir(dest.path().join("debug")).unwrap().count();
        assert_eq!(left, 2, "the sample is an eighth of the bytes");
    }

    #[test]
    fn samples_and_projections_table() {
        let files = |sizes: &[u64]| -> Vec<(PathBuf, u64)> {
            sizes.iter().map(|&s| (PathBuf::from("f"), s)).collect()
        };
        let table: [(&[u64], usize); 4] = [
            (&[], 0),
            (&[10], 1),
            (&[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], 2),
            (&[100, 1, 1], 1),
        ];
        for (sizes, expected) in table {
            assert_eq!(sample_len(&files(sizes)), expected, "{sizes:?}");
        }
        let second = Duration::from_secs(1);
        assert_eq!(project(second, 10, 80), Duration::from_secs(8));
        assert_eq!(project(second, 0, 80), second);
    }
}
