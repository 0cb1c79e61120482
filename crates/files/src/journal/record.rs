//! What a journal holds: the records a batch writes before each step, as
//! they go to disk, and the steps they describe. A running batch replays
//! its records as it notes them (journal.rs) and a recovery replays those
//! of a batch that died (recover.rs), so both read them from here.

use std::{
    ffi::OsString,
    os::unix::ffi::{OsStrExt, OsStringExt},
    path::PathBuf,
};

use nix::sys::stat::FileStat;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a file is, to tell it from any other: device, inode, size and
/// modification time. The status-change time is left out: renaming a file
/// moves it, and a batch renames the files it keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Ident {
    pub(super) dev: u64,
    pub(super) ino: u64,
    pub(super) size: u64,
    pub(super) mtime_ns: i64,
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

/// A batch's steps as its records describe them, oldest first, and whether
/// it recorded its commit.
#[derive(Debug, Default)]
pub(super) struct Replay {
    pub(super) steps: Vec<Step>,
    pub(super) committed: bool,
}

impl Replay {
    /// Take a record into the steps (as it is written, or as it is read back).
    pub(super) fn take(&mut self, record: Record) {
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
}
