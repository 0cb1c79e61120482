//! Keeping a confined search beneath its root.
//!
//! A caller that must not read outside a directory (an MCP server confining
//! a client to its roots) checks the real location of the directory it
//! searches. That check is of the root only: the walk below it goes by path
//! (`ignore` lists a directory by naming it), so a directory inside that is
//! swapped for a symlink to outside while the search runs leads the walk
//! out, and grep would read what lies there. A search with `confine` set
//! therefore reaches everything it returns or reads from a handle on its
//! root, without following a symlink at any component, at the moment it
//! looks:
//!
//! - The root is opened with `RESOLVE_NO_SYMLINKS` by the path the caller
//!   gave (a real path, as the check produced it): a path through a link is
//!   refused (`OutsideRoot`), and so is one swapped between the opening and
//!   the naming of the root.
//! - A listed entry (a glob or fuzzy-find match, a file `list_files`
//!   lists) is kept only when its directory, opened from the root handle
//!   with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`
//!   ([`open_dir_without_links`]), lists it: one listing per directory,
//!   read once for all its entries (a `fstatat` each cost a system call per
//!   match), and an entry it does not list is looked at step by step.
//! - A file grep reads is opened with one `openat2` from the root handle,
//!   with those flags and `O_NOFOLLOW` ([`open_file_without_links`]): that
//!   open is its check, so grep's candidates are not looked at first, and
//!   only one that fails to open is reached step by step ([`trace`]) to
//!   tell what to name.
//! - Where the kernel has no `openat2` (before 5.6, or a sandbox that filters
//!   it), each component is opened with `O_NOFOLLOW` relative to the one
//!   before: the same refusals, one system call per component.
//! - What cannot be reached that way is left out, and what stands in the way
//!   is named as unreadable: the symlink (`ELOOP`) or file (`ENOTDIR`) found
//!   where a directory was listed, a name beneath the root. Never a name from
//!   beyond it: a listing that was led out named entries that are not there,
//!   and an entry that is not there is left out unnamed, as one that
//!   vanished mid-walk is.
//!
//! A directory handle stays with its directory when that directory is
//! renamed: one moved out of the root while the search holds it is still
//! read. That takes moving the directory, not swapping a link in: whoever
//! can do that can also move the files themselves.

use std::path::{Path, PathBuf};

use crate::{
    error::{Error, ErrorKind, Result},
    paths::resolve_search_path,
    unreadable::{self, Unreadable},
};

#[cfg(unix)]
pub(crate) use unix::{Beneath, open_dir_without_links, open_file_without_links, open_root, trace};

/// A search root, held beneath when confined.
pub(crate) fn search_root(path: &Path, confine: bool) -> Result<(PathBuf, Option<Beneath>)> {
    if !confine {
        return Ok((resolve_search_path(path)?, None));
    }
    let (root, beneath) = Beneath::open(path)?;
    Ok((root, Some(beneath)))
}

/// What reaching an entry beneath the root found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reach {
    /// It is there, reached without a link.
    Here,
    /// It is not there (or never was: a listing led out named it).
    Gone,
    /// Something that is not a directory stands on the way: this record
    /// names it.
    Blocked(Unreadable),
}

impl Beneath {
    /// Whether `relative` is reached beneath the root; what blocks it is
    /// remembered for [`Beneath::vouch`].
    pub(crate) fn keeps(&self, relative: &[u8]) -> bool {
        match self.reach(relative) {
            Reach::Here => true,
            Reach::Gone => false,
            Reach::Blocked(record) => {
                self.note(record);
                false
            }
        }
    }

    /// The records of a walk that hold beneath the root (a record from a
    /// listing that was led out names what blocked it instead, or nothing),
    /// with what blocked the entries [`Beneath::keeps`] refused, in path
    /// order.
    pub(crate) fn vouch(&self, records: Vec<Unreadable>) -> Vec<Unreadable> {
        let mut vouched = self.blocked();
        for record in records {
            match self.reach(&record.path) {
                Reach::Here => vouched.push(record),
                Reach::Gone => {}
                Reach::Blocked(blocked) => vouched.push(blocked),
            }
        }
        unreadable::merged(vouched)
    }
}

/// The error of opening a confined root at `path` without links: a link
/// on the way is `OutsideRoot`.
pub(crate) fn root_error(path: &Path, err: std::io::Error) -> Error {
    match err.raw_os_error() {
        Some(ELOOP) => refused_root(path, "a symbolic link is on the way"),
        _ => Error::io(path, err),
    }
}

/// `ELOOP`, what opening through a link without following it answers.
#[cfg(unix)]
const ELOOP: i32 = nix::libc::ELOOP;
#[cfg(not(unix))]
const ELOOP: i32 = 40;

/// The refusal of a root that cannot be held beneath.
fn refused_root(path: &Path, why: &str) -> Error {
    Error::new(
        ErrorKind::OutsideRoot,
        format!(
            "{}: {why}; a confined search starts at a real path and follows no link",
            path.display()
        ),
    )
}

#[cfg(unix)]
mod unix {
    use std::{
        collections::{HashMap, HashSet},
        fs::File,
        os::fd::{AsFd, BorrowedFd, OwnedFd},
        path::{Path, PathBuf},
        sync::{Mutex, MutexGuard},
    };

    use nix::{
        dir::Dir,
        errno::Errno,
        fcntl::{AtFlags, OFlag, OpenHow, ResolveFlag, openat, openat2},
        sys::stat::{FileStat, Mode, SFlag, fstat, fstatat},
    };

    use super::{Reach, refused_root, root_error};
    use crate::{
        error::{Error, Result},
        unreadable::Unreadable,
    };

    /// A confined search's root, held open, and what keeps it beneath.
    #[derive(Debug)]
    pub(crate) struct Beneath {
        root: OwnedFd,
        /// The names of the directories read lately, by path below the
        /// root: one listing answers for all the entries of a directory,
        /// where a `fstatat` each cost a system call per match.
        listings: Mutex<HashMap<Vec<u8>, HashSet<Vec<u8>>>>,
        /// What blocked the entries refused so far.
        blocked: Mutex<Vec<Unreadable>>,
    }

    /// Directory listings a [`Beneath`] keeps: entries come in path order,
    /// so a directory's entries are interleaved only with those of the
    /// directories below it.
    const LISTINGS_MAX: usize = 64;

    impl Beneath {
        /// Open `path` (absolute, or relative to the current directory)
        /// without following a link at any component; returns its
        /// canonical path with the handle.
        pub(crate) fn open(path: &Path) -> Result<(PathBuf, Beneath)> {
            if path.as_os_str().is_empty() {
                return Err(Error::invalid("search path is empty").with_option("path", ""));
            }
            let absolute = std::path::absolute(path).map_err(|err| Error::io(path, err))?;
            let root = open_root(&absolute).map_err(|err| root_error(path, err))?;
            let canonical = std::fs::canonicalize(&absolute).map_err(|err| Error::io(path, err))?;
            let named = nix::sys::stat::stat(&canonical).map_err(|e| Error::io(path, e.into()))?;
            let held = fstat(&root).map_err(|errno| Error::io(path, errno.into()))?;
            if (named.st_dev, named.st_ino) != (held.st_dev, held.st_ino) {
                return Err(refused_root(path, "it changed while it was opened"));
            }
            let beneath = Beneath {
                root,
                listings: Mutex::new(HashMap::new()),
                blocked: Mutex::new(Vec::new()),
            };
            Ok((canonical, beneath))
        }

        /// Whether `relative` (below the root, `/`-separated) is there,
        /// reached without a link: its directory, opened beneath the root
        /// without links, lists it.
        pub(crate) fn reach(&self, relative: &[u8]) -> Reach {
            let (parent, name) = match memchr::memrchr(b'/', relative) {
                Some(slash) => (&relative[..slash], &relative[slash + 1..]),
                None => (&b""[..], relative),
            };
            let mut listings = lock(&self.listings);
            if !listings.contains_key(parent) {
                if listings.len() >= LISTINGS_MAX {
                    listings.clear();
                }
                if let Ok(names) = list_without_links(&self.root, parent) {
                    listings.insert(parent.to_vec(), names);
                }
            }
            let listed = listings
                .get(parent)
                .is_some_and(|names| names.contains(name));
            drop(listings);
            match listed {
                true => Reach::Here,
                false => trace(&self.root, relative),
            }
        }

        pub(super) fn note(&self, record: Unreadable) {
            lock(&self.blocked).push(record);
        }

        pub(super) fn blocked(&self) -> Vec<Unreadable> {
            lock(&self.blocked).clone()
        }
    }

    /// What reaching `relative` from `root` finds, one component at a time
    /// without following a link, naming what stands in the way: the slow
    /// path, for an entry a quicker look (or an open) did not reach.
    pub(crate) fn trace(root: &OwnedFd, relative: &[u8]) -> Reach {
        let names: Vec<&[u8]> = relative
            .split(|&b| b == b'/')
            .filter(|n| !n.is_empty())
            .collect();
        let mut dir: Option<OwnedFd> = None;
        for (depth, name) in names.iter().enumerate() {
            let at = dir.as_ref().unwrap_or(root).as_fd();
            let so_far = names[..=depth].join(&b'/');
            let stat = match fstatat(at, *name, AtFlags::AT_SYMLINK_NOFOLLOW) {
                Ok(stat) => stat,
                Err(Errno::ENOENT) => return Reach::Gone,
                // The directory holding it cannot be searched: that one is named.
                Err(errno) => return Reach::Blocked(record(&names[..depth].join(&b'/'), errno)),
            };
            if depth + 1 == names.len() {
                break;
            }
            if let Some(blocked) = not_a_directory(&so_far, &stat) {
                return Reach::Blocked(blocked);
            }
            match open_dir(at, name) {
                Ok(opened) => dir = Some(opened),
                Err(Errno::ENOENT) => return Reach::Gone,
                Err(errno) => return Reach::Blocked(record(&so_far, errno)),
            }
        }
        Reach::Here
    }

    /// The names in the directory `path` below `root`, opened without
    /// following a link at any component.
    fn list_without_links(root: &OwnedFd, path: &[u8]) -> std::io::Result<HashSet<Vec<u8>>> {
        let opened = match path.is_empty() {
            true => None,
            false => Some(open_dir_without_links(root, path)?),
        };
        let dir = opened.as_ref().unwrap_or(root);
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let mut listing = Dir::openat(dir, ".", flags, Mode::empty())?;
        let names = listing.iter().filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name().to_bytes();
            (name != b"." && name != b"..").then(|| name.to_vec())
        });
        Ok(names.collect())
    }

    fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
        mutex.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The record for `stat`, found at `path` where a directory was listed,
    /// when it is not one.
    fn not_a_directory(path: &[u8], stat: &FileStat) -> Option<Unreadable> {
        let (code, message) = match SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT {
            SFlag::S_IFDIR => return None,
            SFlag::S_IFLNK => (
                "ELOOP",
                "a symbolic link where a directory was listed; a confined search does not follow it",
            ),
            _ => ("ENOTDIR", "not a directory where one was listed"),
        };
        Some(Unreadable {
            path: path.to_vec(),
            code,
            message: message.to_owned(),
        })
    }

    fn record(path: &[u8], errno: Errno) -> Unreadable {
        Unreadable::new(path, &std::io::Error::from(errno))
    }

    fn open_dir(at: BorrowedFd<'_>, name: &[u8]) -> nix::Result<OwnedFd> {
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        openat(at, name, flags, Mode::empty())
    }

    /// `absolute` opened as a directory with no link at any component
    /// (`ELOOP` when one is on the way).
    pub(crate) fn open_root(absolute: &Path) -> std::io::Result<OwnedFd> {
        let how = OpenHow::new()
            .flags(OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC)
            .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS);
        match openat2(nix::fcntl::AT_FDCWD, absolute, how) {
            Err(Errno::ENOSYS | Errno::EPERM) => {
                let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
                let fs_root = nix::fcntl::open("/", flags, Mode::empty())?;
                let below = crate::entries::path_to_bytes(absolute);
                open_dir_component_wise(&fs_root, &below)
            }
            opened => Ok(opened?),
        }
    }

    /// An `O_PATH` handle on the directory `path` below `root`, refusing
    /// (`ELOOP` or `ENOTDIR`) a symlink at any component: one `openat2`
    /// where the kernel has it, else one `openat` with `O_NOFOLLOW` per
    /// component.
    pub(crate) fn open_dir_without_links(root: &OwnedFd, path: &[u8]) -> std::io::Result<OwnedFd> {
        let how = OpenHow::new()
            .flags(OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC)
            .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS | ResolveFlag::RESOLVE_BENEATH);
        match openat2(root, path, how) {
            // No openat2 (kernel before 5.6, or a sandbox that filters it).
            Err(Errno::ENOSYS | Errno::EPERM) => open_dir_component_wise(root, path),
            opened => Ok(opened?),
        }
    }

    /// The regular file (or whatever is there, for the caller to check) at
    /// `path` below `root`, opened for reading without blocking and without
    /// following a symlink at any component, the last included.
    pub(crate) fn open_file_without_links(root: &OwnedFd, path: &[u8]) -> std::io::Result<File> {
        let flags = OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let how = OpenHow::new()
            .flags(flags)
            .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS | ResolveFlag::RESOLVE_BENEATH);
        match openat2(root, path, how) {
            Err(Errno::ENOSYS | Errno::EPERM) => {
                let (dir, name) = match memchr::memrchr(b'/', path) {
                    Some(slash) => (
                        open_dir_component_wise(root, &path[..slash])?,
                        &path[slash + 1..],
                    ),
                    None => (root.try_clone()?, path),
                };
                Ok(File::from(openat(&dir, name, flags, Mode::empty())?))
            }
            opened => Ok(File::from(opened?)),
        }
    }

    /// [`open_dir_without_links`] one component at a time.
    pub(super) fn open_dir_component_wise(root: &OwnedFd, path: &[u8]) -> std::io::Result<OwnedFd> {
        let mut dir: Option<OwnedFd> = None;
        for name in path
            .split(|&byte| byte == b'/')
            .filter(|name| !name.is_empty())
        {
            let at = dir.as_ref().unwrap_or(root).as_fd();
            dir = Some(open_dir(at, name)?);
        }
        match dir {
            Some(dir) => Ok(dir),
            None => Ok(root.try_clone()?),
        }
    }
}

#[cfg(not(unix))]
pub(crate) use other::Beneath;

#[cfg(not(unix))]
mod other {
    use std::path::{Path, PathBuf};

    use super::Reach;
    use crate::{
        error::{Error, ErrorKind, Result},
        unreadable::Unreadable,
    };

    /// Confinement needs `openat2` or `O_NOFOLLOW` opens: refused here.
    #[derive(Debug)]
    pub(crate) struct Beneath;

    impl Beneath {
        pub(crate) fn open(path: &Path) -> Result<(PathBuf, Beneath)> {
            Err(Error::new(
                ErrorKind::Unsupported,
                format!("{}: a confined search needs a Unix system", path.display()),
            ))
        }

        pub(crate) fn reach(&self, _: &[u8]) -> Reach {
            Reach::Gone
        }

        pub(super) fn note(&self, _: Unreadable) {}

        pub(super) fn blocked(&self) -> Vec<Unreadable> {
            Vec::new()
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::{fs, os::fd::OwnedFd, os::unix::fs::symlink};

    use super::{unix::open_dir_component_wise, *};
    use crate::{
        CancelToken,
        cache::{CachePolicy, ScanCache},
        fuzzy::{FuzzyOptions, fuzzy_find},
        glob::{GlobOptions, glob},
        grep::{GrepOptions, grep, list_files},
    };

    /// `root/in/` and `root/in/deep/` hold files, `outside/` a marker;
    /// `root/out` is a link to it and `root/file` a plain file.
    fn tree() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let (root, outside) = (base.join("root"), base.join("outside"));
        fs::create_dir_all(root.join("in/deep")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(root.join("in/a.txt"), "needle inside\n").unwrap();
        fs::write(root.join("in/deep/b.txt"), "needle deep\n").unwrap();
        fs::write(root.join("file"), "x").unwrap();
        fs::write(outside.join("marker.txt"), "needle OUTSIDE\n").unwrap();
        symlink(&outside, root.join("out")).unwrap();
        (dir, root, outside)
    }

    #[test]
    fn a_root_is_held_only_by_a_real_path() {
        let (_dir, root, _) = tree();
        let (canonical, _) = Beneath::open(&root.join("in/../in")).unwrap();
        assert_eq!(canonical, root.join("in"));
        let table = [
            (root.join("out"), "EXDEV"),
            (root.join("out/."), "EXDEV"),
            (root.join("missing"), "ENOENT"),
            (root.join("file"), "ENOTDIR"),
            (PathBuf::new(), "EINVAL"),
        ];
        for (path, code) in table {
            let err = Beneath::open(&path).unwrap_err();
            assert_eq!(err.code(), code, "{path:?}: {err}");
        }
    }

    /// (path below the root, what reaching it finds).
    #[test]
    fn entries_are_reached_without_links_and_what_blocks_them_is_named() {
        let (_dir, root, _) = tree();
        let (_, beneath) = Beneath::open(&root).unwrap();
        let blocked = |path: &str| match beneath.reach(path.as_bytes()) {
            Reach::Blocked(record) => (record.path_lossy().into_owned(), record.code),
            other => panic!("{path}: {other:?}"),
        };
        for here in ["in", "in/a.txt", "in/deep/b.txt", "out", "file"] {
            assert_eq!(beneath.reach(here.as_bytes()), Reach::Here, "{here}");
        }
        for gone in ["missing", "in/missing.txt", "in/missing/x"] {
            assert_eq!(beneath.reach(gone.as_bytes()), Reach::Gone, "{gone}");
        }
        // What lies behind the link is never named: the link is.
        assert_eq!(blocked("out/marker.txt"), ("out".into(), "ELOOP"));
        assert_eq!(blocked("out/x/y"), ("out".into(), "ELOOP"));
        assert_eq!(blocked("file/x"), ("file".into(), "ENOTDIR"));
    }

    #[test]
    fn a_walks_records_hold_beneath_the_root_or_name_what_blocks_them() {
        let (_dir, root, _) = tree();
        let (_, beneath) = Beneath::open(&root).unwrap();
        let record =
            |path: &str| Unreadable::new(path.as_bytes(), &std::io::Error::from_raw_os_error(13));
        assert!(!beneath.keeps(b"out/marker.txt"));
        let vouched = beneath.vouch(vec![
            record("in/deep"),
            record("out/secret"),
            record("gone/x"),
        ]);
        let named: Vec<_> = vouched
            .iter()
            .map(|r| (r.path_lossy().into_owned(), r.code))
            .collect();
        assert_eq!(
            named,
            [("in/deep".into(), "EACCES"), ("out".into(), "ELOOP")]
        );
    }

    type OpenDir = fn(&OwnedFd, &[u8]) -> std::io::Result<OwnedFd>;

    /// Both ways of opening a listed directory refuse a symlink at any
    /// component and open a plain path (the fallback runs where the kernel
    /// has no `openat2`).
    #[test]
    fn directories_open_only_without_links() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("a/b")).unwrap();
        symlink("a", dir.path().join("link")).unwrap();
        symlink("b", dir.path().join("a/link-b")).unwrap();
        let root = unix::open_root(dir.path()).unwrap();
        let ways: [(&str, OpenDir); 2] = [
            ("openat2", open_dir_without_links),
            ("component-wise", open_dir_component_wise),
        ];
        // ELOOP, or ENOTDIR where O_PATH opened the link itself and it is no directory.
        let refused = [Some(nix::libc::ELOOP), Some(nix::libc::ENOTDIR)];
        for (way, open) in ways {
            assert!(open(&root, b"a/b").is_ok(), "{way}");
            for linked in [&b"link/b"[..], b"a/link-b", b"link"] {
                let err = open(&root, linked).unwrap_err();
                assert!(
                    refused.contains(&err.raw_os_error()),
                    "{way} {linked:?}: {err}"
                );
            }
        }
        assert!(open_file_without_links(&root, b"link/b").is_err());
    }

    /// A cached list that still names entries of a directory since swapped
    /// for a link to outside: a confined glob, fuzzy find and grep return
    /// none of them and read nothing there, naming the link; unconfined
    /// ones trust the list (grep opens nothing through the link either way).
    #[test]
    fn confined_answers_drawn_from_a_stale_list_stay_beneath_the_root() {
        let (_dir, root, outside) = tree();
        let cache = ScanCache::new(CachePolicy::default());
        let token = CancelToken::new();
        let mut globbing = GlobOptions::new("**/*.txt", &root);
        globbing.cache = true;
        assert_eq!(
            glob(&globbing, &cache, &token, &mut |_| {})
                .unwrap()
                .total_matches,
            2
        );
        // `in` goes outside with its files; a link to it takes its place.
        fs::rename(root.join("in"), outside.join("in")).unwrap();
        symlink(outside.join("in"), root.join("in")).unwrap();
        fs::write(outside.join("in/a.txt"), "needle OUTSIDE\n").unwrap();
        let unconfined = glob(&globbing, &cache, &token, &mut |_| {}).unwrap();
        assert_eq!(unconfined.total_matches, 2, "the stale list, trusted");
        globbing.confine = true;
        let confined = glob(&globbing, &cache, &token, &mut |_| {}).unwrap();
        assert_eq!(confined.total_matches, 0);
        let links = |records: &[Unreadable]| -> Vec<(String, &str)> {
            records
                .iter()
                .map(|r| (r.path_lossy().into_owned(), r.code))
                .collect()
        };
        assert_eq!(links(&confined.unreadable), [("in".to_string(), "ELOOP")]);
        let mut finding = FuzzyOptions::new("txt", &root);
        (finding.cache, finding.confine) = (true, true);
        let found = fuzzy_find(&finding, &cache, &token, &mut |_| {}).unwrap();
        assert_eq!(
            (found.total_matches, links(&found.unreadable)),
            (0, vec![("in".to_string(), "ELOOP")])
        );
        let mut grepping = GrepOptions::new("needle", &root);
        // The glob's partition of the cache, with the stale list.
        (grepping.cache, grepping.confine, grepping.include_hidden) = (true, true, false);
        let grepped = grep(&grepping, &cache, &token, &mut |_| {}).unwrap();
        // `file`, beside the link, is the one file searched.
        assert_eq!((grepped.files_searched, grepped.total_matches), (1, 0));
        assert_eq!(links(&grepped.unreadable), [("in".to_string(), "ELOOP")]);
        let mut listed = Vec::new();
        let files = list_files(&grepping, &cache, &token, &mut |_, path| {
            listed.push(path.to_vec())
        })
        .unwrap();
        assert_eq!(listed, [b"file".to_vec()]);
        assert_eq!(links(&files.unreadable), [("in".to_string(), "ELOOP")]);
    }

    /// Another thread swaps a directory inside the root with a link to
    /// outside (atomically, so the name is always one or the other) while
    /// confined greps and globs run, uncached and cached, from the root and
    /// from the swapped directory: no answer holds a byte or a name from
    /// outside.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_directory_swapped_for_a_link_during_confined_searches_leads_nowhere() {
        let leaks = searches_during_swaps(true, 600);
        assert!(
            leaks.is_empty(),
            "{} leaks: {:?}",
            leaks.len(),
            &leaks[..leaks.len().min(3)]
        );
    }

    /// The answers, of `rounds` greps and globs (`confine` as given) while
    /// another thread swaps a directory and a link to outside, that hold a
    /// byte or a name from outside.
    #[cfg(target_os = "linux")]
    fn searches_during_swaps(confine: bool, rounds: usize) -> Vec<String> {
        use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
        use std::sync::atomic::{AtomicBool, Ordering};
        let (_dir, root, outside) = tree();
        fs::write(outside.join("OUTSIDE-name.txt"), "needle OUTSIDE\n").unwrap();
        let (dir, link) = (root.join("in"), root.join("in-link"));
        symlink(&outside, &link).unwrap();
        let cache = ScanCache::new(CachePolicy::default().ttl(std::time::Duration::ZERO));
        let token = CancelToken::new();
        let stop = AtomicBool::new(false);
        let leaks = |text: &str| text.contains("OUTSIDE") || text.contains("marker");
        let mut leaked = Vec::new();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let _ = renameat2(
                        AT_FDCWD,
                        &dir,
                        AT_FDCWD,
                        &link,
                        RenameFlags::RENAME_EXCHANGE,
                    );
                }
            });
            for round in 0..rounds {
                let from = if round % 2 == 0 {
                    root.clone()
                } else {
                    dir.clone()
                };
                let mut grepping = GrepOptions::new("needle", &from);
                (grepping.confine, grepping.cache) = (confine, round % 4 < 2);
                if let Ok(found) = grep(&grepping, &cache, &token, &mut |_| {}) {
                    leaked.push(format!("grep {:?} {:?}", found.matches, found.unreadable));
                }
                let mut globbing = GlobOptions::new("**/*", &from);
                (globbing.confine, globbing.include_hidden) = (confine, true);
                if let Ok(found) = glob(&globbing, &cache, &token, &mut |_| {}) {
                    let names: Vec<_> = found
                        .matches()
                        .map(|m| m.path_lossy().into_owned())
                        .collect();
                    leaked.push(format!("glob {names:?} {:?}", found.unreadable));
                }
                leaked.retain(|answer| leaks(answer));
            }
            stop.store(true, Ordering::Relaxed);
        });
        leaked
    }
}
