//! Where a path really lands, decided one component at a time.
//!
//! A writing tool must not be led outside its working directory by a chain of
//! symlinks, a dangling link whose target goes through another link, or a
//! directory swapped for a link after the check. Checking a path and then
//! handing the same *text* to `open` cannot promise that: the kernel resolves
//! it again, later. So resolution here walks the path the way the kernel
//! would — symlinks followed (at most [`MAX_LINKS`]), `..` applied to the
//! directory reached so far rather than to the text — while holding an open
//! handle on each directory it reaches. The answer is a [`Location`]: the
//! handle on the directory that holds the last component, that directory's
//! real path, and the name. The confinement check is made on that real path,
//! and every later operation (`openat`, `renameat`, ...) goes through the
//! handle, so it lands in the directory that was checked, wherever that
//! directory has been moved since, or fails if it was removed.
//!
//! Each step is one `fstatat` or `openat` relative to the handle reached, so
//! resolving costs one system call per component however deep the path is.
//! Paths are bounded as the kernel bounds them: the path as given, and the
//! real location it reaches, are at most [`MAX_PATH_BYTES`] long
//! (`NameTooLong` otherwise, before any lookup for the path as given).
//!
//! [`Scope::reach`] is the same walk for callers that must name the place a
//! path touched even when the path no longer resolves (cache invalidation
//! after a deletion): it never fails on a missing or unreachable tail, and
//! answers with the deepest real directory it could reach instead.

use std::{
    collections::VecDeque,
    ffi::{OsStr, OsString},
    io,
    os::{
        fd::{AsFd, OwnedFd},
        unix::ffi::OsStrExt,
    },
    path::{Component, Path, PathBuf},
};

use nix::{
    errno::Errno,
    fcntl::{AtFlags, OFlag, open, openat, readlinkat},
    sys::stat::{FileStat, Mode, SFlag, fstatat, mkdirat},
};

use crate::{Error, ErrorKind, Result};

#[cfg(test)]
mod tests;

/// Symlinks followed while resolving one path before giving up with
/// `ELOOP`: the limit Linux applies to a single lookup.
pub const MAX_LINKS: usize = 40;

/// The longest path resolved, in bytes, both as given (made absolute) and
/// as the real location it reaches: Linux's `PATH_MAX`. A longer path is
/// refused (`NameTooLong`) rather than walked.
pub const MAX_PATH_BYTES: usize = 4096;

/// What to do when the last component is a symlink.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Last {
    /// Follow it: reading or writing a file through a link reaches the
    /// link's target.
    Follow,
    /// Stop at the link itself: deleting or renaming an entry acts on the
    /// link, not on what it points to.
    Entry,
}

/// Where relative paths start and, when confined, the directory no path may
/// leave.
#[derive(Clone, Debug)]
pub struct Scope {
    base: PathBuf,
    root: Option<PathBuf>,
}

impl Scope {
    /// [`Scope::confined`] to `dir` when `confine`, else
    /// [`Scope::unconfined`].
    pub fn new(dir: &Path, confine: bool) -> Result<Scope> {
        if confine {
            Scope::confined(dir)
        } else {
            Scope::unconfined(dir)
        }
    }

    /// Paths resolve against `dir` and must land inside its real path.
    /// `dir` must exist.
    pub fn confined(dir: &Path) -> Result<Scope> {
        let real = std::fs::canonicalize(dir).map_err(|err| Error::io(dir, err))?;
        Ok(Scope {
            base: real.clone(),
            root: Some(real),
        })
    }

    /// Paths resolve against `dir` (made absolute against the process's
    /// current directory) and may land anywhere.
    pub fn unconfined(dir: &Path) -> Result<Scope> {
        let base = std::path::absolute(dir).map_err(|err| Error::io(dir, err))?;
        Ok(Scope { base, root: None })
    }

    /// The real path every location must stay inside, when confined.
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// Resolve `path` (relative to the base, or absolute): every existing
    /// component is resolved on the filesystem, and the components past the
    /// first missing one are kept as names to create. Refuses with
    /// `OutsideRoot` when the real location leaves a confined scope, and
    /// with `NameTooLong` past [`MAX_PATH_BYTES`]. A path ending in `/`
    /// must name a directory: a file there is `NotADirectory`.
    pub fn locate(&self, path: &Path, last: Last) -> Result<Location> {
        let full = self.full_path(path)?;
        if full.as_os_str().len() > MAX_PATH_BYTES {
            return Err(too_long(path, "is", full.as_os_str().len()));
        }
        let location = Walk::start(path, last, &full, Strictness::Strict)?.run()?;
        let real = location.real_path();
        if real.as_os_str().len() > MAX_PATH_BYTES {
            return Err(too_long(
                path,
                "resolves to a path that is",
                real.as_os_str().len(),
            ));
        }
        self.check_inside(path, &real)?;
        let kind = location.stat()?.as_ref().map(file_kind);
        if names_a_directory(path)
            && kind.is_some_and(|k| k != SFlag::S_IFDIR && k != SFlag::S_IFLNK)
        {
            return Err(Error::new(
                ErrorKind::NotADirectory,
                format!("{}: not a directory", path.display()),
            ));
        }
        Ok(location)
    }

    /// The real path `path` lands on (links in its last component followed
    /// or not, as `last` says), as far as the filesystem can tell: never
    /// refused for a missing component, a `..` past one, a file where a
    /// directory should be, an unreadable directory, a link loop or a length
    /// past [`MAX_PATH_BYTES`]; the answer is then the deepest real directory
    /// the walk reached, which holds whatever the path could name.
    /// Confinement is not checked. Only an empty path is refused.
    pub fn reach(&self, path: &Path, last: Last) -> Result<PathBuf> {
        let full = self.full_path(path)?;
        let mut walk = Walk::start(path, last, &full, Strictness::Lenient)?;
        Ok(match walk.step_all() {
            Ok(Some((name, missing))) => {
                walk.missing = missing;
                walk.missing.push(name);
                walk.reached()
            }
            Ok(None) | Err(_) => walk.reached(),
        })
    }

    fn full_path(&self, path: &Path) -> Result<PathBuf> {
        if path.as_os_str().is_empty() {
            return Err(Error::invalid("the path is empty"));
        }
        Ok(self.base.join(path))
    }

    fn check_inside(&self, path: &Path, real: &Path) -> Result<()> {
        match &self.root {
            Some(root) if !real.starts_with(root) => Err(Error::new(
                ErrorKind::OutsideRoot,
                format!(
                    "{}: resolves to {}, outside {}",
                    path.display(),
                    real.display(),
                    root.display()
                ),
            )),
            _ => Ok(()),
        }
    }
}

/// Whether `path` ends in `/` (or `/.`), which makes it the name of a
/// directory whatever its last component is.
pub fn names_a_directory(path: &Path) -> bool {
    let bytes = path.as_os_str().as_bytes();
    bytes.ends_with(b"/") || bytes.ends_with(b"/.") || bytes == b"."
}

/// The refusal of a path past [`MAX_PATH_BYTES`], naming its start.
fn too_long(path: &Path, what: &str, bytes: usize) -> Error {
    const SHOWN: usize = 120;
    let text = path.to_string_lossy();
    let shown = match text.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.into_owned(),
    };
    Error::new(
        ErrorKind::NameTooLong,
        format!(
            "{shown}: {what} {bytes} bytes long, more than the {MAX_PATH_BYTES} a path may have"
        ),
    )
}

/// A resolved path: an open handle on the directory that holds (or will
/// hold) the last component, with that directory's real path at the time
/// it was reached.
#[derive(Debug)]
pub struct Location {
    dir: OwnedFd,
    dir_path: PathBuf,
    /// Directories that do not exist yet between `dir` and `name`.
    missing: Vec<OsString>,
    name: OsString,
}

impl Location {
    /// The real path this location names.
    pub fn real_path(&self) -> PathBuf {
        let mut path = self.dir_path.clone();
        path.extend(&self.missing);
        path.push(&self.name);
        path
    }

    /// The directory holding the last component, when it exists.
    pub fn dir(&self) -> Option<&OwnedFd> {
        self.missing.is_empty().then_some(&self.dir)
    }

    /// The deepest existing directory on the way: the one holding the last
    /// component, or the one the missing directories would go in.
    pub fn existing_dir(&self) -> (&OwnedFd, &Path) {
        (&self.dir, &self.dir_path)
    }

    /// The last component's name.
    pub fn name(&self) -> &OsStr {
        &self.name
    }

    /// The first name on the way that the deepest existing directory does
    /// not hold: the first missing directory, else the last component
    /// (which then may or may not exist: see [`Location::stat`]).
    pub fn first_missing(&self) -> &OsStr {
        self.missing.first().unwrap_or(&self.name)
    }

    /// The entry's status, without following a link; `None` when it (or a
    /// directory on the way to it) does not exist.
    pub fn stat(&self) -> Result<Option<FileStat>> {
        let Some(dir) = self.dir() else {
            return Ok(None);
        };
        match fstatat(dir, self.name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(stat)),
            Err(Errno::ENOENT) => Ok(None),
            Err(errno) => Err(errno_error(&self.real_path(), errno)),
        }
    }

    /// The real paths of the directories [`Location::create_missing_dirs`]
    /// would create, outermost first.
    pub fn missing_dirs(&self) -> Vec<PathBuf> {
        let mut path = self.dir_path.clone();
        self.missing
            .iter()
            .map(|name| {
                path.push(name);
                path.clone()
            })
            .collect()
    }

    /// Create the missing directories on the way to the last component,
    /// each inside the previous one's handle, calling `created` after each;
    /// returns their real paths, outermost first.
    pub fn create_missing_dirs(&mut self, mut created: impl FnMut(&Path)) -> Result<Vec<PathBuf>> {
        let mut made = Vec::new();
        for name in std::mem::take(&mut self.missing) {
            let path = self.dir_path.join(&name);
            match mkdirat(&self.dir, name.as_os_str(), Mode::from_bits_truncate(0o777)) {
                Ok(()) => {
                    created(&path);
                    made.push(path.clone());
                }
                Err(Errno::EEXIST) => {}
                Err(errno) => return Err(errno_error(&path, errno)),
            }
            self.dir = open_dir(&self.dir, &name, &path)?;
            self.dir_path = path;
        }
        Ok(made)
    }
}

/// How a walk treats what stops it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Strictness {
    /// Refuse, naming the component (what operations need).
    Strict,
    /// Carry on by the text past a missing component (`..` drops a missing
    /// name again), and leave the rest to [`Walk::reached`].
    Lenient,
}

/// The state of one resolution.
struct Walk<'a> {
    given: &'a Path,
    last: Last,
    mode: Strictness,
    pending: VecDeque<OsString>,
    dir: OwnedFd,
    dir_path: PathBuf,
    /// Names past the first missing component (lenient walks only).
    missing: Vec<OsString>,
    links: usize,
}

/// Where a walk ends: the last name, and the missing directories before it.
type Ending = (OsString, Vec<OsString>);

/// One component of a path, as resolution sees it.
enum Step {
    Root,
    Parent,
    Name(OsString),
}

impl<'a> Walk<'a> {
    /// Start at `/` with `full` (an absolute path) queued.
    fn start(given: &'a Path, last: Last, full: &Path, mode: Strictness) -> Result<Walk<'a>> {
        let mut walk = Walk {
            given,
            last,
            mode,
            pending: VecDeque::new(),
            dir: open_fs_root()?,
            dir_path: PathBuf::from("/"),
            missing: Vec::new(),
            links: 0,
        };
        walk.push_front(full);
        Ok(walk)
    }

    fn run(mut self) -> Result<Location> {
        match self.step_all()? {
            Some((name, missing)) => Ok(Location {
                dir: self.dir,
                dir_path: self.dir_path,
                missing,
                name,
            }),
            None => Err(Error::new(
                ErrorKind::IsADirectory,
                format!("{}: names a directory, not a file", self.given.display()),
            )),
        }
    }

    /// Take every pending component: the last name and the missing
    /// directories before it, or `None` when the path ends at a directory
    /// (`/`, `x/..`).
    fn step_all(&mut self) -> Result<Option<Ending>> {
        while let Some(raw) = self.pending.pop_front() {
            if let Some(ending) = self.take(classify(&raw))? {
                return Ok(Some(ending));
            }
        }
        Ok(None)
    }

    fn take(&mut self, step: Step) -> Result<Option<Ending>> {
        if !self.missing.is_empty() {
            return Ok(self.past_missing(step));
        }
        match step {
            Step::Root => {
                self.dir = open_fs_root()?;
                self.dir_path = PathBuf::from("/");
            }
            Step::Parent => self.enter_parent()?,
            Step::Name(name) => return self.step(name),
        }
        Ok(None)
    }

    /// A lenient walk past a missing component: names stack up, `..` drops
    /// the last one (back to resolving on the filesystem when none is left).
    fn past_missing(&mut self, step: Step) -> Option<Ending> {
        match step {
            Step::Name(name) => self.missing.push(name),
            Step::Parent => {
                self.missing.pop();
            }
            Step::Root => {
                self.missing.clear();
                self.pending.push_front(OsString::from("/"));
            }
        }
        match self.pending.is_empty() {
            true => self.missing_ending(),
            false => None,
        }
    }

    /// The missing names taken as the ending: the last one and those before it.
    fn missing_ending(&mut self) -> Option<Ending> {
        let name = self.missing.pop()?;
        Some((name, std::mem::take(&mut self.missing)))
    }

    /// The deepest real directory a lenient walk reached, with the missing
    /// names past it while they keep within [`MAX_PATH_BYTES`].
    fn reached(&self) -> PathBuf {
        let mut path = self.dir_path.clone();
        for name in &self.missing {
            if path.as_os_str().len() + 1 + name.len() > MAX_PATH_BYTES {
                break;
            }
            path.push(name);
        }
        path
    }

    /// Resolve one name; `Some((name, missing directories))` when resolution
    /// ends here.
    fn step(&mut self, name: OsString) -> Result<Option<Ending>> {
        let is_last = self.pending.is_empty();
        let path = self.dir_path.join(&name);
        if path.as_os_str().len() > MAX_PATH_BYTES {
            return Err(too_long(
                self.given,
                "resolves to a path that is at least",
                path.as_os_str().len(),
            ));
        }
        let stat = match fstatat(&self.dir, name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            Err(Errno::ENOENT) if self.mode == Strictness::Lenient => {
                self.missing.push(name);
                return Ok(if is_last { self.missing_ending() } else { None });
            }
            Err(Errno::ENOENT) => return self.missing_from(name).map(Some),
            Err(errno) => return Err(errno_error(&path, errno)),
        };
        match file_kind(&stat) {
            SFlag::S_IFLNK if !is_last || self.last == Last::Follow => {
                self.follow(&name, &path)?;
                Ok(None)
            }
            SFlag::S_IFDIR if !is_last => {
                self.dir = open_dir(&self.dir, &name, &path)?;
                self.dir_path = path;
                Ok(None)
            }
            _ if !is_last => Err(Error::new(
                ErrorKind::NotADirectory,
                format!(
                    "{}: {} is not a directory",
                    self.given.display(),
                    path.display()
                ),
            )),
            _ => Ok(Some((name, Vec::new()))),
        }
    }

    /// The rest of the path does not exist: every remaining component must
    /// be a plain name, to be created.
    fn missing_from(&mut self, name: OsString) -> Result<Ending> {
        let mut names = vec![name];
        for raw in std::mem::take(&mut self.pending) {
            match classify(&raw) {
                Step::Name(next) => names.push(next),
                Step::Root | Step::Parent => {
                    return Err(Error::new(
                        ErrorKind::NotFound,
                        format!(
                            "{}: {} does not exist",
                            self.given.display(),
                            self.dir_path.join(&names[0]).display()
                        ),
                    ));
                }
            }
        }
        let name = names.pop().unwrap_or_default();
        Ok((name, names))
    }

    /// Replace a symlink by its target's components.
    fn follow(&mut self, name: &OsStr, path: &Path) -> Result<()> {
        self.links += 1;
        if self.links > MAX_LINKS {
            return Err(Error::new(
                ErrorKind::Io,
                format!(
                    "{}: more than {MAX_LINKS} symlinks on the way (a loop?)",
                    self.given.display()
                ),
            ));
        }
        let target = readlinkat(&self.dir, name).map_err(|errno| match errno {
            // No longer a link: it was swapped since it was looked at.
            Errno::EINVAL => changed_while_resolving(path),
            errno => errno_error(path, errno),
        })?;
        if target.is_empty() {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!(
                    "{}: {} is an empty symlink",
                    self.given.display(),
                    path.display()
                ),
            ));
        }
        self.push_front(Path::new(&target));
        Ok(())
    }

    /// Queue `path`'s components ahead of what is left.
    fn push_front(&mut self, path: &Path) {
        let components: Vec<OsString> = path
            .components()
            .filter_map(|component| match component {
                Component::RootDir => Some(OsString::from("/")),
                Component::ParentDir => Some(OsString::from("..")),
                Component::Normal(name) => Some(name.to_os_string()),
                Component::CurDir | Component::Prefix(_) => None,
            })
            .collect();
        for component in components.into_iter().rev() {
            self.pending.push_front(component);
        }
    }

    /// `..` of the directory reached so far (the root's parent is itself).
    fn enter_parent(&mut self) -> Result<()> {
        self.dir = open_dir(&self.dir, OsStr::new(".."), &self.dir_path)?;
        if self.dir_path.parent().is_some() {
            self.dir_path.pop();
        }
        Ok(())
    }
}

fn classify(raw: &OsStr) -> Step {
    if raw == "/" {
        Step::Root
    } else if raw == ".." {
        Step::Parent
    } else {
        Step::Name(raw.to_os_string())
    }
}

/// Open the directory `name` inside `dir` as a handle for further lookups,
/// refusing to follow a link that appeared there since it was checked.
fn open_dir(dir: impl AsFd, name: &OsStr, path: &Path) -> Result<OwnedFd> {
    openat(
        dir,
        name,
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| match errno {
        // No longer a directory: it was swapped since it was looked at.
        Errno::ELOOP | Errno::ENOTDIR => changed_while_resolving(path),
        errno => errno_error(path, errno),
    })
}

fn changed_while_resolving(path: &Path) -> Error {
    Error::new(
        ErrorKind::Changed,
        format!("{}: changed while it was being resolved", path.display()),
    )
}

/// A lookup handle on `/`, where every resolution starts.
fn open_fs_root() -> Result<OwnedFd> {
    open(
        "/",
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| errno_error(Path::new("/"), errno))
}

/// `errno` from an operation on `path`, as the shared error type.
pub fn errno_error(path: &Path, errno: Errno) -> Error {
    Error::io(path, io::Error::from_raw_os_error(errno as i32))
}

/// The file-type bits of a status.
pub fn file_kind(stat: &FileStat) -> SFlag {
    SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits())
}
