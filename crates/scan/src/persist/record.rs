//! The bytes of a persisted scan: a versioned, checksummed record that is
//! read whole and checked before anything in it is believed.
//!
//! Layout, little-endian throughout:
//!
//! | field | bytes |
//! |---|---|
//! | [`MAGIC`] | 8 |
//! | [`VERSION`] | 4 |
//! | policy bits (hidden, gitignore) | 4 |
//! | root path: length, bytes | 4 + n |
//! | when the listing began, ns since the epoch | 8 |
//! | entries: count, then paths' total length and bytes | 8 + 8 + n |
//! | each entry's path length | 4 per entry |
//! | each entry's type | 1 per entry |
//! | identities: the root's, then each directory's in list order | [`Identity::BYTES`] each |
//! | rule files: count, then each as path length, path, present flag, identity | 4 + ... |
//! | XXH3-64 of every byte before it | 8 |
//!
//! Decoding checks the checksum first, then every length against what is
//! left, then that the paths are in strict path order, each below a
//! directory listed before it, each name plain: a record that passes the
//! checksum yet would name a path outside its root (`..`), out of order or
//! below nothing listed is refused as corrupt too.

use std::path::PathBuf;

use xxhash_rust::xxh3::xxh3_64;

use super::identity::Identity;
use crate::{
    entries::{Entries, FileType, bytes_to_path, compare_paths, path_to_bytes},
    node_modules::NODE_MODULES,
    walk::{ScanKey, ScanPolicy},
};

/// What every record starts with.
const MAGIC: &[u8; 8] = b"natscan\0";

/// The layout's version: a record of another version is rebuilt, never
/// read. Bump it with any change to the layout or to what a field means.
pub(super) const VERSION: u32 = 1;

const CHECKSUM_BYTES: usize = 8;

/// Why a record was not believed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Flaw {
    /// Not this format, or another version of it.
    Version,
    /// The checksum, a length or a path does not hold.
    Corrupt,
    /// A record of another root or policy (a name collision, or a file
    /// put in place of another).
    Key,
}

/// A decoded record.
#[derive(Debug)]
pub(super) struct Record {
    /// When the listing it holds began, in ns since the epoch.
    pub taken_at_ns: i64,
    pub entries: Entries,
    /// The root's identity, then each directory's, in list order.
    pub dirs: Vec<Identity>,
    /// The rule files read, with their identity (`None`: absent).
    pub rules: Vec<(PathBuf, Option<Identity>)>,
}

/// The record of `entries`, the scan of `key` whose listing began at
/// `taken_at_ns`, with the identities of its root and directories (`dirs`,
/// as [`Record::dirs`]) and of the rule files it read.
pub(super) fn encode(
    key: &ScanKey,
    entries: &Entries,
    taken_at_ns: i64,
    dirs: &[Identity],
    rules: &[(PathBuf, Option<Identity>)],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(
        entries.text_and_ends().0.len() + entries.len() * 5 + dirs.len() * Identity::BYTES + 256,
    );
    out.extend_from_slice(MAGIC);
    put_u32(&mut out, VERSION);
    put_u32(&mut out, policy_bits(key.policy));
    put_bytes(&mut out, &path_to_bytes(&key.root));
    out.extend_from_slice(&taken_at_ns.to_le_bytes());
    put_entries(&mut out, entries);
    dirs.iter().for_each(|dir| dir.put(&mut out));
    put_u32(&mut out, rules.len() as u32);
    for (path, identity) in rules {
        put_bytes(&mut out, &path_to_bytes(path));
        match identity {
            Some(identity) => {
                out.push(1);
                identity.put(&mut out);
            }
            None => out.push(0),
        }
    }
    let checksum = xxh3_64(&out);
    out.extend_from_slice(&checksum.to_le_bytes());
    out
}

/// The record in `bytes`, if it is an intact record of `key`.
pub(super) fn decode(bytes: &[u8], key: &ScanKey) -> Result<Record, Flaw> {
    if bytes.len() < MAGIC.len() + 4 || &bytes[..MAGIC.len()] != MAGIC {
        return Err(Flaw::Version);
    }
    let mut reader = Reader {
        bytes,
        at: MAGIC.len(),
    };
    if reader.u32()? != VERSION {
        return Err(Flaw::Version);
    }
    let body_len = bytes
        .len()
        .checked_sub(CHECKSUM_BYTES)
        .ok_or(Flaw::Corrupt)?;
    let (body, checksum) = bytes.split_at(body_len);
    if xxh3_64(body).to_le_bytes() != checksum {
        return Err(Flaw::Corrupt);
    }
    reader.bytes = body;
    if reader.u32()? != policy_bits(key.policy) || reader.bytes()? != &*path_to_bytes(&key.root) {
        return Err(Flaw::Key);
    }
    let taken_at_ns = reader.i64()?;
    let entries = read_entries(&mut reader)?;
    let dir_count = 1 + entries
        .iter()
        .filter(|e| e.file_type == FileType::Dir)
        .count();
    let dirs = (0..dir_count)
        .map(|_| Identity::take(reader.take(Identity::BYTES)?).ok_or(Flaw::Corrupt))
        .collect::<Result<Vec<_>, Flaw>>()?;
    let rules = (0..reader.u32()?)
        .map(|_| read_rule(&mut reader))
        .collect::<Result<Vec<_>, Flaw>>()?;
    if reader.at != body.len() {
        return Err(Flaw::Corrupt);
    }
    Ok(Record {
        taken_at_ns,
        entries,
        dirs,
        rules,
    })
}

/// Append the entries section of the layout (count, paths' total length
/// and bytes, each path's length, each type) for `entries`: the part of a
/// record that is the list itself, also what an indexer hands its readers
/// (see `crate::shared`).
pub(crate) fn put_entries(out: &mut Vec<u8>, entries: &Entries) {
    let (text, ends) = entries.text_and_ends();
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    out.extend_from_slice(&(text.len() as u64).to_le_bytes());
    out.extend_from_slice(text);
    let mut start = 0;
    for &end in ends {
        put_u32(out, (end - start) as u32);
        start = end;
    }
    out.extend(entries.iter().map(|entry| entry.file_type.as_u8()));
}

/// The entries `bytes` holds, when it is exactly one entries section (see
/// [`put_entries`]) that passes every check a record's does.
pub(crate) fn take_entries(bytes: &[u8]) -> Option<Entries> {
    let mut reader = Reader { bytes, at: 0 };
    let entries = read_entries(&mut reader).ok()?;
    (reader.at == bytes.len()).then_some(entries)
}

fn read_entries(reader: &mut Reader<'_>) -> Result<Entries, Flaw> {
    let count = usize::try_from(reader.u64()?).map_err(|_| Flaw::Corrupt)?;
    let text_len = usize::try_from(reader.u64()?).map_err(|_| Flaw::Corrupt)?;
    let text = reader.take(text_len)?;
    let lengths = reader.take(count.checked_mul(4).ok_or(Flaw::Corrupt)?)?;
    let types = reader.take(count)?;
    let mut entries = Entries::with_capacity(count, text_len);
    // The directories above the entry read last, each with whether it lies
    // in `node_modules`: every entry's parent must be one of them (a walk
    // lists a directory before what it holds), so only its own name needs
    // checking, and its place in `node_modules` follows from its parent's.
    let mut above: Vec<(&[u8], bool)> = Vec::new();
    let mut start = 0usize;
    let mut previous: &[u8] = &[];
    for (length, &file_type) in lengths.chunks_exact(4).zip(types) {
        let length = u32::from_le_bytes(length.try_into().map_err(|_| Flaw::Corrupt)?) as usize;
        let end = start.checked_add(length).ok_or(Flaw::Corrupt)?;
        let path = text.get(start..end).ok_or(Flaw::Corrupt)?;
        let file_type = FileType::from_u8(file_type).ok_or(Flaw::Corrupt)?;
        let (parent, name) = match memchr::memrchr(b'/', path) {
            Some(slash) => (&path[..slash], &path[slash + 1..]),
            None => (&[][..], path),
        };
        let in_order = start == 0 || compare_paths(previous, path).is_lt();
        if !in_order || !is_clean_name(name) {
            return Err(Flaw::Corrupt);
        }
        while above.last().is_some_and(|(dir, _)| *dir != parent) {
            above.pop();
        }
        let parent_in_node_modules = match above.last() {
            Some(&(_, in_node_modules)) => in_node_modules,
            None if parent.is_empty() => false,
            None => return Err(Flaw::Corrupt),
        };
        let in_node_modules = parent_in_node_modules || name == NODE_MODULES.as_bytes();
        entries.push_placed(path, file_type, in_node_modules);
        if file_type == FileType::Dir {
            above.push((path, in_node_modules));
        }
        previous = path;
        start = end;
    }
    if start != text.len() {
        return Err(Flaw::Corrupt);
    }
    Ok(entries)
}

fn read_rule(reader: &mut Reader<'_>) -> Result<(PathBuf, Option<Identity>), Flaw> {
    let path = bytes_to_path(reader.bytes()?).into_owned();
    if !path.is_absolute() {
        return Err(Flaw::Corrupt);
    }
    let identity = match reader.take(1)?[0] {
        0 => None,
        1 => Some(Identity::take(reader.take(Identity::BYTES)?).ok_or(Flaw::Corrupt)?),
        _ => return Err(Flaw::Corrupt),
    };
    Ok((path, identity))
}

/// Whether `name` is a plain file name: not empty, `.` or `..`, no NUL (so
/// a path of such names stays below the root it is joined to).
fn is_clean_name(name: &[u8]) -> bool {
    !name.is_empty() && name != b"." && name != b".." && !name.contains(&0)
}

fn policy_bits(policy: ScanPolicy) -> u32 {
    u32::from(policy.include_hidden) | (u32::from(policy.use_gitignore) << 1)
}

fn put_u32(out: &mut Vec<u8>, value: u32) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_u32(out, bytes.len() as u32);
    out.extend_from_slice(bytes);
}

/// Reads fields off a record, each checked against what is left.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize) -> Result<&'a [u8], Flaw> {
        let end = self.at.checked_add(len).ok_or(Flaw::Corrupt)?;
        let taken = self.bytes.get(self.at..end).ok_or(Flaw::Corrupt)?;
        self.at = end;
        Ok(taken)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Flaw> {
        self.take(N)?.try_into().map_err(|_| Flaw::Corrupt)
    }

    fn u32(&mut self) -> Result<u32, Flaw> {
        self.array().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Result<u64, Flaw> {
        self.array().map(u64::from_le_bytes)
    }

    fn i64(&mut self) -> Result<i64, Flaw> {
        self.array().map(i64::from_le_bytes)
    }

    fn bytes(&mut self) -> Result<&'a [u8], Flaw> {
        let len = self.u32()? as usize;
        self.take(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> ScanKey {
        ScanKey {
            root: PathBuf::from("/srv/tree"),
            policy: ScanPolicy::DEFAULT,
        }
    }

    /// A record of `paths` (a trailing `/` marks a directory), as written.
    fn record_of(paths: &[&str]) -> Vec<u8> {
        let mut entries = Entries::with_capacity(paths.len(), 64);
        for path in paths {
            let (path, file_type) = match path.strip_suffix('/') {
                Some(dir) => (dir, FileType::Dir),
                None => (*path, FileType::File),
            };
            entries.push(path.as_bytes(), file_type, None);
        }
        let dirs = entries
            .iter()
            .filter(|e| e.file_type == FileType::Dir)
            .count();
        let rules = [(PathBuf::from("/srv/.gitignore"), None)];
        encode(
            &key(),
            &entries,
            7,
            &vec![Identity::MISSING; dirs + 1],
            &rules,
        )
    }

    /// Table: lists as a record may hold them, and whether they are
    /// believed. Every record here has a good checksum: what is checked is
    /// the list itself.
    #[test]
    fn only_a_clean_ordered_tree_is_believed() {
        let table: [(&[&str], Result<(), Flaw>); 9] = [
            (
                &["a/", "a/b.rs", "a/node_modules/", "a/node_modules/x", "c"],
                Ok(()),
            ),
            (&[], Ok(())),
            (&["a/b.rs"], Err(Flaw::Corrupt)),
            (&["a", "a/b.rs"], Err(Flaw::Corrupt)),
            (&["b", "a"], Err(Flaw::Corrupt)),
            (&["a", "a"], Err(Flaw::Corrupt)),
            (&[".."], Err(Flaw::Corrupt)),
            (&["a/", "a/.."], Err(Flaw::Corrupt)),
            (&["a/", "a//b"], Err(Flaw::Corrupt)),
        ];
        for (paths, expected) in table {
            let decoded = decode(&record_of(paths), &key());
            assert_eq!(
                decoded.as_ref().map(|_| ()).map_err(|f| *f),
                expected,
                "{paths:?}"
            );
            if let Ok(record) = decoded {
                let listed: Vec<_> = record
                    .entries
                    .iter()
                    .map(|e| e.path_lossy().into_owned())
                    .collect();
                let written: Vec<_> = paths.iter().map(|p| p.trim_end_matches('/')).collect();
                assert_eq!(listed, written);
                let in_node_modules: Vec<_> =
                    record.entries.iter().map(|e| e.in_node_modules).collect();
                let expected: Vec<_> = written
                    .iter()
                    .map(|p| crate::node_modules::in_node_modules(p.as_bytes()))
                    .collect();
                assert_eq!(in_node_modules, expected, "{paths:?}");
                assert_eq!((record.taken_at_ns, record.rules.len()), (7, 1));
            }
        }
    }

    /// Table: a record cut, flipped, of another version or of another key
    /// is refused with its flaw.
    #[test]
    fn a_damaged_record_names_its_flaw() {
        let good = record_of(&["a/", "a/b.rs"]);
        let flipped = |at: usize| {
            let mut bytes = good.clone();
            bytes[at] ^= 1;
            bytes
        };
        let other_root = ScanKey {
            root: PathBuf::from("/srv/other"),
            ..key()
        };
        let other_switches = ScanKey {
            policy: ScanPolicy {
                include_hidden: true,
                use_gitignore: true,
            },
            ..key()
        };
        let table: [(Vec<u8>, &ScanKey, Flaw); 7] = [
            (good[..good.len() - 1].to_vec(), &key(), Flaw::Corrupt),
            (flipped(good.len() / 2), &key(), Flaw::Corrupt),
            (flipped(good.len() - 1), &key(), Flaw::Corrupt),
            (flipped(0), &key(), Flaw::Version),
            (flipped(8), &key(), Flaw::Version),
            (good.clone(), &other_root, Flaw::Key),
            (good.clone(), &other_switches, Flaw::Key),
        ];
        for (bytes, key, flaw) in &table {
            assert_eq!(decode(bytes, key).map(|_| ()), Err(*flaw), "{flaw:?}");
        }
        assert!(decode(&good, &key()).is_ok());
        assert_eq!(decode(&[], &key()).map(|_| ()), Err(Flaw::Version));
    }
}
