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
    os::fd::OwnedFd,
    path::Path,
};

use natives_core::{Error, Result};
use nix::{
    errno::Errno,
    fcntl::{Flock, FlockArg, OFlag, openat, renameat},
    sys::stat::{Mode, mkdirat},
    unistd::{UnlinkatFlags, fdatasync, unlinkat},
};

use self::{
    dir::{open_own_dir, remove_dir_if_empty},
    record::Replay,
};
use crate::sys::{errno_error, sync_dir};
use natives_system::crash;

mod dir;
mod record;
mod recover;
mod steps;
#[cfg(test)]
mod tests;

pub use dir::JOURNAL_DIR;
pub(crate) use record::{Backup, Ident, Name, Record};
pub(crate) use recover::recover_near;
pub use recover::{Recovery, recover};

/// A batch's steps, logged to disk when it can be.
#[derive(Debug, Default)]
pub(crate) struct Journal {
    replay: Replay,
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
        self.replay.take(record);
        Ok(())
    }

    /// Undo every step, newest first; what could not be undone, in words.
    pub(crate) fn roll_back(&mut self) -> Vec<String> {
        let failures = steps::undo_all(&self.replay.steps);
        self.close(failures.is_empty());
        failures
    }

    /// Record the commit, then drop what the steps kept for undoing them.
    pub(crate) fn commit(&mut self) -> Result<()> {
        self.note(Record::Commit)?;
        let failures = steps::finish_all(&self.replay.steps);
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
        let dir = open_own_dir(root, OsStr::new(JOURNAL_DIR), &dir_path)?;
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
        remove_dir_if_empty(&self.dir);
    }
}

/// 64 bits nobody can guess ahead: hidden names and journal names carry
/// them, so no file can be planted at a name a batch is about to take.
pub(crate) fn random() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}
