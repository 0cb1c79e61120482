//! `artifacts/eviction-<seat>.json`: what an eviction knew about a copy
//! before it touched anything, kept durably so a pass killed at any instant
//! can be finished, or refused, by the next.
//!
//! The record holds the copy's inventory (every entry's type, mode, size,
//! allocated blocks, inode and times), the raw bytes of every file of its
//! git administration (`.git/worktrees/<name>/`), and where its evidence
//! is. It is written in phase `pending` before the evidence is captured and
//! in phase `evicted` once the copy is gone; it is never deleted by a pass
//! that removed anything.

use std::{
    fs,
    path::{Path, PathBuf},
};

use base64::{Engine, engine::general_purpose::STANDARD};
use natives_core::{Error, ErrorKind, Result};
use natives_system::durable;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::registry::MAX_RECORD_BYTES;

/// The version of the record this natives writes.
pub const RECORD_VERSION: u32 = 1;

/// Where an eviction stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Recorded; the copy may still be there, whole or in part.
    Pending,
    /// The copy is gone and its evidence validated.
    Evicted,
}

/// A file name as the filesystem has it: text when it is UTF-8, else its
/// bytes in base64 (`{"base64": "..."}`), so no name is ever mangled.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name(pub Vec<u8>);

impl Serialize for Name {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        match std::str::from_utf8(&self.0) {
            Ok(text) => serializer.serialize_str(text),
            Err(_) => Encoded {
                base64: STANDARD.encode(&self.0),
            }
            .serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Name, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Text(String),
            Bytes(Encoded),
        }
        match Either::deserialize(deserializer)? {
            Either::Text(text) => Ok(Name(text.into_bytes())),
            Either::Bytes(encoded) => STANDARD
                .decode(encoded.base64)
                .map(Name)
                .map_err(serde::de::Error::custom),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct Encoded {
    base64: String,
}

/// Bytes kept in a record, as base64.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Raw(pub Vec<u8>);

impl Serialize for Raw {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(&self.0))
    }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Raw, D::Error> {
        let text = String::deserialize(deserializer)?;
        STANDARD
            .decode(text)
            .map(Raw)
            .map_err(serde::de::Error::custom)
    }
}

/// One entry of a copy, as it was when recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Its path in the copy.
    pub path: Name,
    /// Whether it is a directory (else a regular file).
    pub dir: bool,
    /// Its mode bits.
    pub mode: u32,
    /// Its size in bytes.
    pub size: u64,
    /// Its allocated 512-byte blocks.
    pub blocks: u64,
    /// Its device.
    pub dev: u64,
    /// Its inode.
    pub ino: u64,
    /// Its hard links, anywhere.
    pub nlink: u64,
    /// Its modification time, in nanoseconds since the epoch.
    pub mtime_ns: i128,
    /// Its change time, in nanoseconds since the epoch.
    pub ctime_ns: i128,
}

/// One file of a copy's git administration, byte for byte.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdminFile {
    /// Its path under the administration directory.
    pub name: Name,
    /// Its bytes.
    pub bytes: Raw,
}

/// What an eviction recorded about one copy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvictionRecord {
    /// The record's version (`RECORD_VERSION`).
    pub version: u32,
    /// Where the eviction stands.
    pub phase: Phase,
    /// The copy's run.
    pub run: String,
    /// The copy's seat name (`review-1`, `candidate-A`).
    pub seat: String,
    /// The copy.
    pub path: PathBuf,
    /// Its repository's common git directory.
    pub common_dir: PathBuf,
    /// Its git administration (`<common>/worktrees/<name>`).
    pub admin_dir: PathBuf,
    /// Its `HEAD` commit.
    pub head: String,
    /// The base its evidence is taken over.
    pub base: String,
    /// Its checkpoint archives: where its evidence is.
    pub archives: Vec<PathBuf>,
    /// Every entry of the copy but its `.git` file, in path order.
    pub inventory: Vec<Entry>,
    /// Its `.git` file's bytes.
    pub dot_git: Raw,
    /// Every file of its git administration, in path order.
    pub administration: Vec<AdminFile>,
    /// The directories of its git administration, in path order.
    pub admin_dirs: Vec<Name>,
    /// When it was recorded, in milliseconds since the epoch.
    pub recorded_at_ms: u64,
    /// When the copy was found gone, once evicted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evicted_at_ms: Option<u64>,
}

impl EvictionRecord {
    /// The archive whose source is the copy's `HEAD`.
    pub fn archive(&self) -> Option<&Path> {
        self.archives.first().map(PathBuf::as_path)
    }
}

/// The record of `seat` in the artifacts directory `artifacts`.
pub(crate) fn path_of(artifacts: &Path, seat: &str) -> PathBuf {
    artifacts.join(format!("eviction-{seat}.json"))
}

/// The record at `path`, if there is one: `EBADMSG` when it cannot be
/// parsed, `ENOTSUP` when a newer natives wrote it.
pub(crate) fn read(path: &Path) -> Result<Option<EvictionRecord>> {
    let Some(bytes) = durable::read_bounded(path, MAX_RECORD_BYTES)? else {
        return Ok(None);
    };
    let record: EvictionRecord = serde_json::from_slice(&bytes).map_err(|err| {
        Error::new(
            ErrorKind::Corrupt,
            format!("{}: unreadable eviction record: {err}", path.display()),
        )
    })?;
    if record.version > RECORD_VERSION {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "{}: written by a newer natives (version {}); left as it is",
                path.display(),
                record.version
            ),
        ));
    }
    Ok(Some(record))
}

/// Write `record` at `path` durably, refused (`EFBIG`) when it could not
/// be read back.
pub(crate) fn write(path: &Path, record: &EvictionRecord) -> Result<()> {
    let bytes = crate::registry::encoded(record, path)?;
    if let Some(dir) = path.parent() {
        durable::create_private_dir(dir)?;
    }
    durable::replace(path, &bytes)
}

/// Every eviction record in `artifacts`, by file name: the unreadable ones
/// as their error.
pub(crate) fn all(artifacts: &Path) -> Result<Vec<(PathBuf, Result<EvictionRecord>)>> {
    let entries = match fs::read_dir(artifacts) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(Error::io(artifacts, err)),
    };
    let mut paths = Vec::new();
    for entry in entries {
        let name = entry.map_err(|err| Error::io(artifacts, err))?.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("eviction-") && name.ends_with(".json") {
            paths.push(artifacts.join(&*name));
        }
    }
    paths.sort();
    Ok(paths
        .into_iter()
        .map(|path| {
            let record = read(&path).and_then(|record| {
                record.ok_or_else(|| Error::new(ErrorKind::NotFound, "gone while listed"))
            });
            (path, record)
        })
        .collect())
}
