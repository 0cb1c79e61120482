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

use std::{
    collections::VecDeque,
    ffi::{OsStr, OsString},
    os::fd::{AsFd, OwnedFd},
    path::{Component, Path, PathBuf},
};

use natives_core::{Error, ErrorKind, Result};
use nix::{
    errno::Errno,
    fcntl::{AtFlags, OFlag, open, openat, readlinkat},
    sys::stat::{FileStat, Mode, SFlag, fstatat, mkdirat},
};

use crate::sys::{errno_error, file_kind};

#[cfg(test)]
mod tests;

/// Symlinks followed while resolving one path before giving up with
/// `ELOOP`: the limit Linux applies to a single lookup.
pub const MAX_LINKS: usize = 40;

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
    /// `OutsideRoot` when the real location leaves a confined scope.
    pub fn locate(&self, path: &Path, last: Last) -> Result<Location> {
        if path.as_os_str().is_empty() {
            return Err(Error::invalid("the path is empty"));
        }
        let location = Walk::start(path, last, &self.base.join(path))?.run()?;
        self.check_inside(path, &location)?;
        Ok(location)
    }

    fn check_inside(&self, path: &Path, location: &Location) -> Result<()> {
        match &self.root {
            Some(root) if !location.real_path().starts_with(root) => Err(Error::new(
                ErrorKind::OutsideRoot,
                format!(
                    "{}: resolves to {}, outside {}",
                    path.display(),
                    location.real_path().display(),
                    root.display()
                ),
            )),
            _ => Ok(()),
        }
    }
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
    pub(crate) fn dir(&self) -> Option<&OwnedFd> {
        self.missing.is_empty().then_some(&self.dir)
    }

    /// The last component's name.
    pub(crate) fn name(&self) -> &OsStr {
        &self.name
    }

    /// The entry's status, without following a link; `None` when it (or a
    /// directory on the way to it) does not exist.
    pub(crate) fn stat(&self) -> Result<Option<FileStat>> {
        let Some(dir) = self.dir() else {
            return Ok(None);
        };
        match fstatat(dir, self.name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(stat)),
            Err(Errno::ENOENT) => Ok(None),
            Err(errno) => Err(errno_error(&self.real_path(), errno)),
        }
    }

    /// Create the missing directories on the way to the last component,
    /// each inside the previous one's handle; returns their real paths,
    /// outermost first.
    pub(crate) fn create_missing_dirs(&mut self) -> Result<Vec<PathBuf>> {
        let mut created = Vec::new();
        for name in std::mem::take(&mut self.missing) {
            let path = self.dir_path.join(&name);
            match mkdirat(&self.dir, name.as_os_str(), Mode::from_bits_truncate(0o777)) {
                Ok(()) => {
                    crate::crash::point("directory created");
                    created.push(path.clone());
                }
                Err(Errno::EEXIST) => {}
                Err(errno) => return Err(errno_error(&path, errno)),
            }
            self.dir = open_dir(&self.dir, &name, &path)?;
            self.dir_path = path;
        }
        Ok(created)
    }
}

/// The state of one resolution.
struct Walk<'a> {
    given: &'a Path,
    last: Last,
    pending: VecDeque<OsString>,
    dir: OwnedFd,
    dir_path: PathBuf,
    links: usize,
}

/// One component of a path, as resolution sees it.
enum Step {
    Root,
    Parent,
    Name(OsString),
}

impl<'a> Walk<'a> {
    /// Start at `/` with `full` (an absolute path) queued.
    fn start(given: &'a Path, last: Last, full: &Path) -> Result<Walk<'a>> {
        let mut walk = Walk {
            given,
            last,
            pending: VecDeque::new(),
            dir: open_fs_root()?,
            dir_path: PathBuf::from("/"),
            links: 0,
        };
        walk.push_front(full);
        Ok(walk)
    }

    fn run(mut self) -> Result<Location> {
        while let Some(raw) = self.pending.pop_front() {
            match classify(&raw) {
                Step::Root => {
                    self.dir = open_fs_root()?;
                    self.dir_path = PathBuf::from("/");
                }
                Step::Parent => self.enter_parent()?,
                Step::Name(name) => {
                    if let Some((name, missing)) = self.step(name)? {
                        return Ok(Location {
                            dir: self.dir,
                            dir_path: self.dir_path,
                            missing,
                            name,
                        });
                    }
                }
            }
        }
        Err(Error::new(
            ErrorKind::IsADirectory,
            format!("{}: names a directory, not a file", self.given.display()),
        ))
    }

    /// Resolve one name; `Some((name, missing directories))` when resolution
    /// ends here.
    fn step(&mut self, name: OsString) -> Result<Option<(OsString, Vec<OsString>)>> {
        let is_last = self.pending.is_empty();
        let path = self.dir_path.join(&name);
        let stat = match fstatat(&self.dir, name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
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
    fn missing_from(&mut self, name: OsString) -> Result<(OsString, Vec<OsString>)> {
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
