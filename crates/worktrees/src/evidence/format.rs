//! The archive's format: its file names, its manifest, and its checksums.
//!
//! Everything an archive holds is anchored to its directory's name,
//! `<head>-<base>`: the head commit's bytes re-hash to the name, name the
//! source tree, whose objects the pack holds and `index-pack --strict`
//! checks link by link. The manifest and `SHA256SUMS` only say what the
//! files should be; every claim in them is checked against the files.

use std::collections::BTreeMap;

use natives_core::{Error, ErrorKind, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::git::is_id;

/// The manifest format written, and the only one read.
pub const FORMAT: u32 = 1;

/// The archive's files, by name.
pub const MANIFEST: &str = "manifest.json";
/// SHA-256 of every other file, in `sha256sum` format (`sha256sum -c`
/// checks an archive by hand).
pub const SUMS: &str = "SHA256SUMS";
/// Every tip's complete tree and blobs: a non-thin pack, no commits.
pub const PACK: &str = "objects.pack";
/// `diff --binary --full-index --no-renames` base tree to source tree.
pub const PATCH: &str = "change.patch";
/// `diff-tree --raw -z` base tree to source tree.
pub const RAW: &str = "change.raw";
/// `ls-tree -r -z --full-tree` of the base tree.
pub const BASE_INDEX: &str = "base.index";
/// `ls-tree -r -z --full-tree` of the source tree.
pub const SOURCE_INDEX: &str = "source.index";
/// The permission bits of every regular file and directory of the
/// checkout (git keeps only a file's executable bit; the rest came from
/// whoever made the files): NUL-terminated records `f 0644 <path>` and
/// `d 0755 <path>`, sorted by path, the checkout's top as `.`.
pub const MODES: &str = "modes";
/// The directory of the tips' raw commit objects, one file per id.
pub const COMMITS: &str = "commits";

/// The files every archive has beside its commits, in the order they are
/// written (the manifest and the sums last: an archive is read from them).
pub const FIXED_FILES: [&str; 8] = [
    PACK,
    PATCH,
    RAW,
    BASE_INDEX,
    SOURCE_INDEX,
    MODES,
    MANIFEST,
    SUMS,
];

/// The path [`MODES`] gives the checkout's top directory.
pub const TOP: &[u8] = b".";

/// One record of [`MODES`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModeEntry {
    /// Its path in the checkout ([`TOP`] for the top).
    pub path: Vec<u8>,
    /// A directory (else a regular file).
    pub dir: bool,
    /// Its permission bits (`0o7777` at most).
    pub mode: u32,
}

/// [`MODES`] for `entries`: sorted by path, one record each.
pub fn modes(entries: &[ModeEntry]) -> Vec<u8> {
    let mut sorted: Vec<&ModeEntry> = entries.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    let mut bytes = Vec::new();
    for entry in sorted {
        let kind = if entry.dir { 'd' } else { 'f' };
        bytes.extend_from_slice(format!("{kind} {:04o} ", entry.mode & 0o7777).as_bytes());
        bytes.extend_from_slice(&entry.path);
        bytes.push(0);
    }
    bytes
}

/// Parse [`MODES`] strictly: well-formed records with non-empty paths, no
/// path twice, in canonical form (the bytes are rebuilt and compared).
pub fn parse_modes(bytes: &[u8]) -> Result<Vec<ModeEntry>> {
    let mut entries = Vec::new();
    if bytes.is_empty() {
        return Ok(entries);
    }
    let body = bytes
        .strip_suffix(b"\0")
        .ok_or_else(|| malformed("the last record is not NUL-terminated"))?;
    for (number, record) in body.split(|&b| b == 0).enumerate() {
        let bad = || {
            malformed(format!(
                "record {} is not `f|d <octal mode> <path>`",
                number + 1
            ))
        };
        let (head, path) = record.split_at_checked(7).ok_or_else(bad)?;
        let dir = match head {
            [b'f', b' ', .., b' '] => false,
            [b'd', b' ', .., b' '] => true,
            _ => return Err(bad()),
        };
        let digits = std::str::from_utf8(&head[2..6]).map_err(|_| bad())?;
        let mode = u32::from_str_radix(digits, 8).map_err(|_| bad())?;
        if path.is_empty() || !digits.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
            return Err(bad());
        }
        entries.push(ModeEntry {
            path: path.to_vec(),
            dir,
            mode,
        });
    }
    if modes(&entries) != bytes || entries.windows(2).any(|w| w[0].path == w[1].path) {
        return Err(malformed(
            "not in canonical form (sorted by path, each path once)",
        ));
    }
    Ok(entries)
}

/// What an archive says it holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Manifest {
    /// [`FORMAT`].
    pub format: u32,
    /// The repository's object format: `sha1` or `sha256`.
    pub object_format: String,
    /// The checkout's `HEAD` commit: the source.
    pub head: String,
    /// The commit the change is measured from.
    pub base: String,
    /// `head`'s tree.
    pub source_tree: String,
    /// `base`'s tree.
    pub base_tree: String,
    /// Every archived commit: the head, the base, every entry of the
    /// checkout's `HEAD` reflog and its `ORIG_HEAD`, each once.
    pub tips: Vec<Tip>,
    /// How many objects the pack holds.
    pub objects: u64,
    /// Their size once expanded, in bytes.
    pub object_bytes: u64,
    /// The size of every file but the manifest and the sums, by name.
    pub files: BTreeMap<String, u64>,
}

/// One archived commit.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Tip {
    /// The commit's id.
    pub commit: String,
    /// Its tree.
    pub tree: String,
    /// Where the checkout showed it: `HEAD`, `base`, `HEAD@{n}`,
    /// `ORIG_HEAD`.
    pub seen_as: Vec<String>,
}

impl Manifest {
    /// The archive's directory name: `<head>-<base>`.
    pub fn name(&self) -> String {
        archive_name(&self.head, &self.base)
    }

    /// The canonical bytes: pretty JSON, fields in their declared order,
    /// a final newline. A manifest in any other form is refused.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a manifest serialises");
        bytes.push(b'\n');
        bytes
    }

    /// The tip for `commit`, if archived.
    pub fn tip(&self, commit: &str) -> Option<&Tip> {
        self.tips.iter().find(|tip| tip.commit == commit)
    }
}

/// The directory name of the archive of `head` over `base`.
pub fn archive_name(head: &str, base: &str) -> String {
    format!("{head}-{base}")
}

/// The relative name of the file holding commit `id`.
pub fn commit_file(id: &str) -> String {
    format!("{COMMITS}/{id}")
}

/// The SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `SHA256SUMS` for `files` (name, bytes): one `<sum>  <name>` line per
/// file, sorted by name.
pub fn sums(files: &BTreeMap<String, Vec<u8>>) -> Vec<u8> {
    let mut text = String::new();
    for (name, bytes) in files {
        text.push_str(&sha256_hex(bytes));
        text.push_str("  ");
        text.push_str(name);
        text.push('\n');
    }
    text.into_bytes()
}

/// Parse `SHA256SUMS` strictly: lines of 64 lowercase hex digits, two
/// spaces and a name, sorted, no name twice, a final newline. Its
/// canonical form is the only one accepted (the text is rebuilt and
/// compared), so no byte of it goes unchecked.
pub fn parse_sums(bytes: &[u8]) -> Result<BTreeMap<String, String>> {
    let text = std::str::from_utf8(bytes).map_err(|_| malformed("not UTF-8"))?;
    let mut sums = BTreeMap::new();
    for (number, line) in text.split_terminator('\n').enumerate() {
        let (sum, name) = line
            .split_once("  ")
            .ok_or_else(|| malformed(format!("line {} is not `<sum>  <name>`", number + 1)))?;
        if !is_id(sum, 64) {
            return Err(malformed(format!(
                "line {}: {sum:?} is not a SHA-256",
                number + 1
            )));
        }
        if sums.insert(name.to_owned(), sum.to_owned()).is_some() {
            return Err(malformed(format!("{name} is listed twice")));
        }
    }
    let rebuilt: String = sums
        .iter()
        .map(|(name, sum)| format!("{sum}  {name}\n"))
        .collect();
    if rebuilt != text {
        return Err(malformed(
            "not in canonical form (sorted lines, each ended by a newline)",
        ));
    }
    Ok(sums)
}

/// Parse a manifest, refusing unknown fields and any form but the
/// canonical one.
pub fn parse_manifest(bytes: &[u8]) -> Result<Manifest> {
    let manifest: Manifest = serde_json::from_slice(bytes).map_err(malformed)?;
    if manifest.to_bytes() != bytes {
        return Err(malformed("not in canonical form"));
    }
    Ok(manifest)
}

/// A file of an archive that is not what its format says (`Corrupt`,
/// `EBADMSG`), saying what is wrong; validation names the archive and the
/// check.
pub(crate) fn malformed(detail: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Corrupt, detail.to_string())
}

/// The tree a raw commit object names (its first header line, `tree
/// <id>`), if it is well formed enough to name one.
pub fn commit_tree(commit: &[u8]) -> Option<String> {
    let line = commit.split(|&b| b == b'\n').next()?;
    let id = line.strip_prefix(b"tree ")?;
    String::from_utf8(id.to_vec()).ok()
}
