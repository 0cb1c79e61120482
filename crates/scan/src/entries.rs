//! The scan result: a compact, immutable, path-sorted list of entries.
//!
//! A cache hit hands out an `Arc<Entries>`, so every consumer shares one list
//! and no hit copies a path. The list is stored as columns (one byte buffer
//! holding every relative path back to back, plus offset, type and mtime
//! columns) rather than one heap string per entry: that halves the memory of
//! a cached scan and keeps the cache's byte budget honest, since the size of
//! a list is simply the capacity of four vectors.

use std::{borrow::Cow, cmp::Ordering, mem, path::Path};

use crate::node_modules;

/// What kind of filesystem object an entry is, from `symlink_metadata`
/// (links are never followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum FileType {
    /// A regular file.
    File = 1,
    /// A directory.
    Dir = 2,
    /// A symbolic link (not followed).
    Symlink = 3,
    /// A FIFO, socket or device node: listed, never typed as a file, never
    /// opened.
    Other = 4,
}

impl FileType {
    /// Classify a `symlink_metadata` file type.
    pub fn from_std(file_type: std::fs::FileType) -> FileType {
        if file_type.is_symlink() {
            FileType::Symlink
        } else if file_type.is_dir() {
            FileType::Dir
        } else if file_type.is_file() {
            FileType::File
        } else {
            FileType::Other
        }
    }

    /// The numeric value used across the FFI boundary.
    pub fn as_u8(self) -> u8 {
        self as u8
    }

    /// The inverse of [`FileType::as_u8`].
    pub fn from_u8(value: u8) -> Option<FileType> {
        match value {
            1 => Some(FileType::File),
            2 => Some(FileType::Dir),
            3 => Some(FileType::Symlink),
            4 => Some(FileType::Other),
            _ => None,
        }
    }
}

/// One entry as collected by the walker, before sorting and packing.
///
/// `key` is the relative path with every `/` stored as a NUL byte. NUL
/// cannot occur in a file name, so plain byte order on keys is exactly path
/// order (see [`compare_paths`]) and the sort runs on `memcmp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unsorted<'a> {
    pub key: &'a [u8],
    pub file_type: FileType,
    pub mtime_ms: Option<i64>,
}

/// The separator as stored in an [`Unsorted`] key.
pub(crate) const KEY_SEPARATOR: u8 = 0;

/// Stored in the mtime column when the OS gave no modification time.
const MTIME_UNKNOWN: i64 = i64::MIN;

/// An immutable list of scanned entries, sorted in path order (see
/// [`compare_paths`]). Paths are relative to the scan root, `/`-separated,
/// and kept as the raw bytes the OS returned (they need not be UTF-8).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Entries {
    text: Vec<u8>,
    ends: Vec<usize>,
    types: Vec<FileType>,
    mtimes: Vec<i64>,
    /// Precomputed [`node_modules::in_node_modules`]: consumers filter on it
    /// for every query, the list is built once.
    in_node_modules: Vec<bool>,
    /// The last eight bytes of each path (see [`path_tail`]): suffix
    /// queries (`*.ts`) read this column instead of the paths themselves.
    tails: Vec<u64>,
}

/// A borrowed view of one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'a> {
    /// Relative path bytes, `/`-separated.
    pub path: &'a [u8],
    /// The entry's type.
    pub file_type: FileType,
    /// Modification time in milliseconds since the Unix epoch, if known.
    pub mtime_ms: Option<i64>,
    /// Whether the path is, or lies inside, a `node_modules` directory.
    pub in_node_modules: bool,
    /// [`path_tail`] of `path`, precomputed.
    pub(crate) tail: u64,
}

impl<'a> Entry<'a> {
    /// An entry as a walk meets it, before any list holds it: `path` below
    /// the root, `/`-separated, mtime unknown.
    pub(crate) fn walked(path: &'a [u8], file_type: FileType) -> Entry<'a> {
        Entry {
            path,
            file_type,
            mtime_ms: None,
            in_node_modules: node_modules::in_node_modules(path),
            tail: path_tail(path),
        }
    }

    /// The path as text; invalid UTF-8 is replaced with U+FFFD.
    pub fn path_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(self.path)
    }

    /// The path as a [`Path`] (exact bytes on Unix).
    pub fn as_path(&self) -> Cow<'_, Path> {
        bytes_to_path(self.path)
    }
}

impl Entries {
    /// Sort walker entries into path order and pack them into columns.
    ///
    /// The stable sort finds runs that are already sorted (each walker
    /// thread hands in one) and merges them in near-linear time.
    pub(crate) fn from_unsorted(mut items: Vec<Unsorted<'_>>) -> Entries {
        items.sort_by(|a, b| a.key.cmp(b.key));
        let text_len = items.iter().map(|e| e.key.len()).sum();
        let mut entries = Entries {
            text: Vec::with_capacity(text_len),
            ends: Vec::with_capacity(items.len()),
            types: Vec::with_capacity(items.len()),
            mtimes: Vec::with_capacity(items.len()),
            in_node_modules: Vec::with_capacity(items.len()),
            tails: Vec::with_capacity(items.len()),
        };
        for item in items {
            let start = entries.text.len();
            let separators = item
                .key
                .iter()
                .map(|&b| if b == KEY_SEPARATOR { b'/' } else { b });
            entries.text.extend(separators);
            let path = &entries.text[start..];
            entries
                .in_node_modules
                .push(node_modules::in_node_modules(path));
            entries.tails.push(path_tail(path));
            entries.ends.push(entries.text.len());
            entries.types.push(item.file_type);
            entries.mtimes.push(item.mtime_ms.unwrap_or(MTIME_UNKNOWN));
        }
        entries
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// `true` when the scan found nothing.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The entry at `index` (panics when out of range, like slice indexing).
    pub fn get(&self, index: usize) -> Entry<'_> {
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        let mtime = self.mtimes[index];
        Entry {
            path: &self.text[start..self.ends[index]],
            file_type: self.types[index],
            mtime_ms: (mtime != MTIME_UNKNOWN).then_some(mtime),
            in_node_modules: self.in_node_modules[index],
            tail: self.tails[index],
        }
    }

    /// Every entry, in path order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Entry<'_>> + '_ {
        // Zipped columns and a running start: this is the hot loop of every
        // cached query, so no per-entry index arithmetic or bounds checks.
        let mut start = 0;
        let columns = self.ends.iter().zip(&self.types).zip(&self.mtimes);
        let columns = columns.zip(&self.in_node_modules).zip(&self.tails);
        columns.map(
            move |((((&end, &file_type), &mtime), &in_node_modules), &tail)| {
                let path = &self.text[start..end];
                start = end;
                Entry {
                    path,
                    file_type,
                    mtime_ms: (mtime != MTIME_UNKNOWN).then_some(mtime),
                    in_node_modules,
                    tail,
                }
            },
        )
    }

    /// Record the mtime of an entry of a list walked for types only
    /// (see [`crate::walk::stat_mtimes`]).
    pub(crate) fn set_mtime(&mut self, index: usize, mtime_ms: i64) {
        self.mtimes[index] = mtime_ms;
    }

    /// Heap bytes held by this list plus its own size: what the cache's byte
    /// budget charges for it.
    pub fn heap_bytes(&self) -> usize {
        mem::size_of::<Entries>()
            + self.text.capacity()
            + self.ends.capacity() * mem::size_of::<usize>()
            + self.types.capacity() * mem::size_of::<FileType>()
            + self.mtimes.capacity() * mem::size_of::<i64>()
            + self.in_node_modules.capacity()
            + self.tails.capacity() * mem::size_of::<u64>()
    }
}

/// The last (up to) eight bytes of `path` as a big-endian integer, zero
/// padded on the left. File names never contain NUL, so a suffix of at most
/// eight bytes matches exactly when its masked bits equal the tail's.
pub(crate) fn path_tail(path: &[u8]) -> u64 {
    let take = path.len().min(8);
    let mut bytes = [0u8; 8];
    bytes[8 - take..].copy_from_slice(&path[path.len() - take..]);
    u64::from_be_bytes(bytes)
}

/// Path order: component by component, byte-wise within a component.
///
/// This is the order of a depth-first walk that visits siblings sorted by
/// name (`a`, `a/b`, `a.txt`), and of [`Path`]'s own `Ord`. On the joined
/// bytes it amounts to comparing byte-wise with `/` below every other byte.
pub fn compare_paths(a: &[u8], b: &[u8]) -> Ordering {
    let common = a.iter().zip(b).position(|(x, y)| x != y);
    match common {
        Some(i) => sort_key(a[i]).cmp(&sort_key(b[i])),
        None => a.len().cmp(&b.len()),
    }
}

fn sort_key(byte: u8) -> u16 {
    if byte == b'/' { 0 } else { u16::from(byte) + 1 }
}

/// Relative path bytes of `path` (exact on Unix, lossy elsewhere), with `/`
/// as the separator.
pub(crate) fn path_to_bytes(path: &Path) -> Cow<'_, [u8]> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Cow::Borrowed(path.as_os_str().as_bytes())
    }
    #[cfg(not(unix))]
    {
        let text = path.to_string_lossy().replace('\\', "/");
        Cow::Owned(text.into_bytes())
    }
}

/// The inverse of [`path_to_bytes`].
pub(crate) fn bytes_to_path(bytes: &[u8]) -> Cow<'_, Path> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Cow::Borrowed(Path::new(std::ffi::OsStr::from_bytes(bytes)))
    }
    #[cfg(not(unix))]
    {
        Cow::Owned(std::path::PathBuf::from(
            String::from_utf8_lossy(bytes).into_owned(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(path: &str) -> Vec<u8> {
        path.bytes()
            .map(|b| if b == b'/' { KEY_SEPARATOR } else { b })
            .collect()
    }

    fn unsorted(key: &[u8], file_type: FileType, mtime_ms: Option<i64>) -> Unsorted<'_> {
        Unsorted {
            key,
            file_type,
            mtime_ms,
        }
    }

    #[test]
    fn path_order_matches_std_path_order() {
        let table: &[(&str, &str)] = &[
            ("a", "a/b"),
            ("a/b", "a.txt"),
            ("a/z", "ab"),
            ("a-b/c", "a.b"),
            ("a/b/c", "a/b.c"),
            ("", "a"),
        ];
        for &(lo, hi) in table {
            assert_eq!(
                compare_paths(lo.as_bytes(), hi.as_bytes()),
                Ordering::Less,
                "{lo} < {hi}"
            );
            assert_eq!(
                Path::new(lo).cmp(Path::new(hi)),
                Ordering::Less,
                "std: {lo} < {hi}"
            );
        }
    }

    #[test]
    fn packs_sorted_and_round_trips() {
        let keys = [key("b.txt"), key("a/x"), key("a"), key("a.txt")];
        let list = Entries::from_unsorted(vec![
            unsorted(&keys[0], FileType::File, Some(5)),
            unsorted(&keys[1], FileType::Symlink, None),
            unsorted(&keys[2], FileType::Dir, Some(-3)),
            unsorted(&keys[3], FileType::Other, Some(0)),
        ]);
        let got: Vec<_> = list
            .iter()
            .map(|e| (e.path_lossy().into_owned(), e.file_type, e.mtime_ms))
            .collect();
        assert_eq!(
            got,
            vec![
                ("a".to_string(), FileType::Dir, Some(-3)),
                ("a/x".to_string(), FileType::Symlink, None),
                ("a.txt".to_string(), FileType::Other, Some(0)),
                ("b.txt".to_string(), FileType::File, Some(5)),
            ]
        );
        assert!(list.heap_bytes() >= "aa/xa.txtb.txt".len() + 4 * 26);
    }

    #[test]
    fn file_type_numbers_round_trip() {
        for t in [
            FileType::File,
            FileType::Dir,
            FileType::Symlink,
            FileType::Other,
        ] {
            assert_eq!(FileType::from_u8(t.as_u8()), Some(t));
        }
        assert_eq!(FileType::from_u8(0), None);
    }
}
