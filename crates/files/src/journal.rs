//! A batch's undo log, kept on disk while the batch runs.
//!
//! A batch ([`crate::apply`]) makes its changes one after the other; each
//! leaves something to take back: the old file swapped into a hidden name
//! beside its replacement, a deleted file hidden under a temporary name, a
//! renamed entry, a created directory. Before each step the journal records
//! what it is about to do (write-ahead, synced), so whoever finds the
//! journal of a batch that died knows what each hidden file is and what to
//! do with it: a batch that recorded its commit is finished (hidden old
//! files removed); any other is rolled back, newest step first (old files
//! put back, created files and directories removed, renames reversed).
//! The same steps undo a batch that fails while its process lives, so there
//! is one way back, whether the process survived or not.
//!
//! Where: a directory [`JOURNAL_DIR`] (mode 0700) in the deepest directory
//! holding every path of the batch, one file `<pid>.<random>.journal` per
//! running batch, locked (`flock`) by the process running it: a journal
//! whose lock can be taken belongs to a batch that died. The next batch
//! whose paths lie below that directory recovers it before it starts, and
//! [`recover`] does so on demand (see recover.rs). When the directory
//! cannot hold a journal (not writable, or one planted there by another
//! user), the batch keeps its log in memory only: it is still undone when
//! it fails, but a crash leaves its hidden files for a person to sort out.
//!
//! Recovery never deletes bytes it cannot account for: each file a step
//! removes must still be the very file the record names (device, inode,
//! size and modification time); anything else is left where it is, the
//! journal with it, and reported.

use std::{
    ffi::{OsStr, OsString},
    fs::File,
    io::Write,
    os::{
        fd::OwnedFd,
        unix::ffi::{OsStrExt, OsStringExt},
    },
    path::{Path, PathBuf},
};

use natives_core::{Error, Result};
use nix::{
    errno::Errno,
    fcntl::{Flock, FlockArg, OFlag, openat, renameat},
    sys::stat::{FileStat, Mode, mkdirat},
    unistd::{UnlinkatFlags, fdatasync, unlinkat},
};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::sys::{errno_error, sync_dir};
use natives_system::crash;

mod recover;
mod steps;
#[cfg(test)]
mod tests;

pub(crate) use recover::recover_near;
pub use recover::{Recovery, recover};

/// The directory that holds the journals of the batches running below its
/// parent.
pub const JOURNAL_DIR: &str = ".natives-changes";

/// What a file is, to tell it from any other: device, inode, size and
/// modification time. The status-change time is left out: renaming a file
/// moves it, and a batch renames the files it keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Ident {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i64,
}

impl Ident {
    pub(crate) fn of(stat: &FileStat) -> Ident {
        Ident {
            dev: stat.st_dev,
            ino: stat.st_ino,
            size: stat.st_size as u64,
            mtime_ns: stat.st_mtime.saturating_mul(1_000_000_000) + stat.st_mtime_nsec,
        }
    }

    /// The same file (whatever was written into it since).
    pub(crate) fn same_inode(&self, stat: &FileStat) -> bool {
        self.dev == stat.st_dev && self.ino == stat.st_ino
    }

    /// The same file, unchanged.
    pub(crate) fn matches(&self, stat: &FileStat) -> bool {
        *self == Ident::of(stat)
    }
}

/// A path in a record: its bytes (names need not be UTF-8), as hex text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Name(pub(crate) PathBuf);

impl Serialize for Name {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let hex: String = self
            .0
            .as_os_str()
            .as_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        serializer.serialize_str(&hex)
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Name, D::Error> {
        let hex = String::deserialize(deserializer)?;
        let bytes = (0..hex.len())
            .step_by(2)
            .map(|i| {
                hex.get(i..i + 2)
                    .and_then(|b| u8::from_str_radix(b, 16).ok())
            })
            .collect::<Option<Vec<u8>>>()
            .ok_or_else(|| serde::de::Error::custom("a path must be hex bytes"))?;
        Ok(Name(PathBuf::from(OsString::from_vec(bytes))))
    }
}

/// Where a replaced file is kept until the batch ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Backup {
    /// Nothing is replaced: the write creates the file.
    None,
    /// The old file is swapped into the temporary file's name
    /// (`RENAME_EXCHANGE`), whole: inode, bytes and metadata.
    Swapped,
    /// The filesystem cannot swap: the old file is copied (bytes, metadata,
    /// times) to the write's copy name, and the copy is `ident`.
    Copied {
        /// What the copy is.
        ident: Ident,
    },
}

/// One line of a journal: what the batch is about to do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub(crate) enum Record {
    /// A directory is about to be created.
    Mkdir {
        /// Its real path.
        path: Name,
    },
    /// A file is about to be written at `target` through `temp`, a new
    /// hidden file beside it; `old` is the file it replaces, and `copy`
    /// where a copy of it goes if the filesystem cannot swap.
    Write {
        /// The real path written.
        target: Name,
        /// The temporary file's real path.
        temp: Name,
        /// Where a copy of the old file would go.
        copy: Name,
        /// The file replaced, if any.
        old: Option<Ident>,
    },
    /// The last write's new file (`new`) is complete and about to be put in
    /// place, keeping the old one as `backup` says.
    Placing {
        /// The new file.
        new: Ident,
        /// Where the old file goes.
        backup: Backup,
    },
    /// The entry at `path` (`entry`) is about to be hidden as `hidden`.
    Delete {
        /// Its real path.
        path: Name,
        /// The hidden name beside it.
        hidden: Name,
        /// What it is.
        entry: Ident,
    },
    /// The entry at `from` (`entry`) is about to move to `to`.
    Rename {
        /// Its real path.
        from: Name,
        /// Where it goes.
        to: Name,
        /// What it is.
        entry: Ident,
    },
    /// Every change is made: the batch is to be finished, not undone.
    Commit,
}

/// A step of the batch, as the records describe it.
#[derive(Debug)]
pub(crate) enum Step {
    Mkdir(PathBuf),
    Write {
        target: PathBuf,
        temp: PathBuf,
        copy: PathBuf,
        old: Option<Ident>,
        placing: Option<(Ident, Backup)>,
    },
    Delete {
        path: PathBuf,
        hidden: PathBuf,
        entry: Ident,
    },
    Rename {
        from: PathBuf,
        to: PathBuf,
        entry: Ident,
    },
}

/// A batch's steps, logged to disk when it can be.
#[derive(Debug, Default)]
pub(crate) struct Journal {
    steps: Vec<Step>,
    committed: bool,
    log: Option<Log>,
}

/// The journal's file: locked while the batch runs.
#[derive(Debug)]
struct Log {
    file: Flock<File>,
    dir: OwnedFd,
    name: OsString,
}

impl Journal {
    /// A journal for a batch whose paths all lie below `root` (an open
    /// handle on it, `root_path` its real path); in memory only when `root`
    /// cannot hold one.
    pub(crate) fn open(root: &OwnedFd, root_path: &Path) -> Journal {
        Journal {
            log: Log::create(root, root_path).ok(),
            ..Journal::default()
        }
    }

    /// Record what the batch is about to do, on disk first.
    pub(crate) fn note(&mut self, record: Record) -> Result<()> {
        if let Some(log) = &mut self.log {
            log.append(&record)?;
        }
        crash::point("journal noted");
        self.replay(record);
        Ok(())
    }

    /// Take a record into the steps (as it is written, or as it is read back).
    fn replay(&mut self, record: Record) {
        match record {
            Record::Mkdir { path } => self.steps.push(Step::Mkdir(path.0)),
            Record::Write {
                target,
                temp,
                copy,
                old,
            } => self.steps.push(Step::Write {
                target: target.0,
                temp: temp.0,
                copy: copy.0,
                old,
                placing: None,
            }),
            Record::Placing { new, backup } => {
                if let Some(Step::Write { placing, .. }) = self.steps.last_mut() {
                    *placing = Some((new, backup));
                }
            }
            Record::Delete {
                path,
                hidden,
                entry,
            } => self.steps.push(Step::Delete {
                path: path.0,
                hidden: hidden.0,
                entry,
            }),
            Record::Rename { from, to, entry } => self.steps.push(Step::Rename {
                from: from.0,
                to: to.0,
                entry,
            }),
            Record::Commit => self.committed = true,
        }
    }

    /// Undo every step, newest first; what could not be undone, in words.
    pub(crate) fn roll_back(&mut self) -> Vec<String> {
        let failures = steps::undo_all(&self.steps);
        self.close(failures.is_empty());
        failures
    }

    /// Record the commit, then drop what the steps kept for undoing them.
    pub(crate) fn commit(&mut self) -> Result<()> {
        self.note(Record::Commit)?;
        let failures = steps::finish_all(&self.steps);
        self.close(failures.is_empty());
        Ok(())
    }

    /// Remove the journal (kept when some step was left unresolved, for a
    /// later recovery to try again).
    fn close(&mut self, resolved: bool) {
        if let Some(log) = self.log.take()
            && resolved
        {
            log.remove();
        }
    }
}

impl Log {
    /// Create `<root>/JOURNAL_DIR/<pid>.<random>.journal`, locked, its
    /// directory private to this user.
    fn create(root: &OwnedFd, root_path: &Path) -> Result<Log> {
        let dir_path = root_path.join(JOURNAL_DIR);
        match mkdirat(root, JOURNAL_DIR, Mode::from_bits_truncate(0o700)) {
            Ok(()) => sync_dir(root),
            Err(Errno::EEXIST) => {}
            Err(errno) => return Err(errno_error(&dir_path, errno)),
        }
        let dir = recover::open_own_dir(root, OsStr::new(JOURNAL_DIR), &dir_path)?;
        let token = format!("{}.{:016x}", std::process::id(), random());
        let (new, name) = (
            format!("{token}.new"),
            OsString::from(format!("{token}.journal")),
        );
        let fd = openat(
            &dir,
            new.as_str(),
            OFlag::O_RDWR | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(0o600),
        )
        .map_err(|errno| errno_error(&dir_path.join(&new), errno))?;
        let file = Flock::lock(File::from(fd), FlockArg::LockExclusiveNonblock)
            .map_err(|(_, errno)| errno_error(&dir_path.join(&new), errno))?;
        // Locked before it is named as a journal: a recovery never sees it unlocked while it runs.
        renameat(&dir, new.as_str(), &dir, name.as_os_str())
            .map_err(|errno| errno_error(&dir_path.join(&name), errno))?;
        sync_dir(&dir);
        Ok(Log { file, dir, name })
    }

    fn append(&mut self, record: &Record) -> Result<()> {
        let mut line = serde_json::to_vec(record).map_err(|err| Error::invalid(err.to_string()))?;
        line.push(b'\n');
        let path = Path::new(&self.name);
        self.file
            .write_all(&line)
            .map_err(|err| Error::io(path, err))?;
        fdatasync(&*self.file).map_err(|errno| errno_error(path, errno))
    }

    /// Unlink the journal (still locked), then its directory if that was the last one.
    fn remove(self) {
        let _ = unlinkat(&self.dir, self.name.as_os_str(), UnlinkatFlags::NoRemoveDir);
        crash::point("journal removed");
        recover::remove_dir_if_empty(&self.dir);
    }
}

/// 64 bits nobody can guess ahead: hidden names and journal names carry
/// them, so no file can be planted at a name a batch is about to take.
pub(crate) fn random() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}
