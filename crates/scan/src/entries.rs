//! The scan result: a compact, immutable, path-sorted list of entries.
//!
//! A cache hit hands out an `Arc<Entries>`, so every consumer shares one list
//! and no hit copies a path. The list is stored as columns (one byte buffer
//! holding every relative path back to back, plus offset, type and mtime
//! columns) rather than one heap string per entry: that halves the memory of
//! a cached scan and keeps the cache's byte budget honest, since the size of
//! a list is simply the capacity of four vectors.
//!
//! Beside the entries, a cached list may record what its walk's rules left
//! out ([`Entries::skipped`]), listed the first time a search needs it.

use std::{
    borrow::Cow,
    mem,
    path::Path,
    sync::{Arc, OnceLock},
};

pub use crate::path_bytes::compare_paths;
pub(crate) use crate::path_bytes::{bytes_to_path, is_within, path_to_bytes};
use crate::{node_modules, unreadable::Unreadable};

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
    /// What the walk could not enter or read, in path order.
    unreadable: Vec<Unreadable>,
    /// What the walk's rules left out, once recorded (see
    /// [`Entries::skipped`]).
    skipped: OnceLock<Arc<Entries>>,
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
            unreadable: Vec::new(),
            skipped: OnceLock::new(),
        };
        for item in items {
            let separators = item
                .key
                .iter()
                .map(|&b| if b == KEY_SEPARATOR { b'/' } else { b });
            entries.text.extend(separators);
            entries.close_entry(item.file_type, item.mtime_ms);
        }
        entries
    }

    /// An empty list with room for `count` entries whose paths total
    /// `text_len` bytes.
    pub(crate) fn with_capacity(count: usize, text_len: usize) -> Entries {
        Entries {
            text: Vec::with_capacity(text_len),
            ends: Vec::with_capacity(count),
            types: Vec::with_capacity(count),
            mtimes: Vec::with_capacity(count),
            in_node_modules: Vec::with_capacity(count),
            tails: Vec::with_capacity(count),
            unreadable: Vec::new(),
            skipped: OnceLock::new(),
        }
    }

    /// This list with `unreadable` (in path order) as what its walk could
    /// not enter or read.
    pub(crate) fn with_unreadable(mut self, unreadable: Vec<Unreadable>) -> Entries {
        self.unreadable = unreadable;
        self
    }

    /// What the walk could not enter or read (directories it could not
    /// list, ignore files it could not open), in path order.
    pub fn unreadable(&self) -> &[Unreadable] {
        &self.unreadable
    }

    /// The entries the walk's rules (ignore files, the hidden rule) left out
    /// of the directories it listed, each where it was left out: a
    /// directory left out stands for everything below it, which no walk by
    /// those rules lists. `.git` is never among them (no walk enters it).
    /// Types only, in path order; `None` until recorded (see
    /// `walk::skipped`).
    pub fn skipped(&self) -> Option<&Entries> {
        self.skipped.get().map(Arc::as_ref)
    }

    /// Record `skipped` as what the walk's rules left out, unless a record
    /// is already there; returns the record kept.
    pub(crate) fn record_skipped(&self, skipped: Entries) -> &Entries {
        self.skipped.get_or_init(|| Arc::new(skipped))
    }

    /// Append an entry after the last one (the caller keeps path order).
    pub(crate) fn push(&mut self, path: &[u8], file_type: FileType, mtime_ms: Option<i64>) {
        self.text.extend_from_slice(path);
        self.close_entry(file_type, mtime_ms);
    }

    /// Finish the entry whose path was just appended to `text`.
    fn close_entry(&mut self, file_type: FileType, mtime_ms: Option<i64>) {
        let start = self.ends.last().copied().unwrap_or(0);
        let in_node_modules = node_modules::in_node_modules(&self.text[start..]);
        self.close_placed_entry(file_type, mtime_ms, in_node_modules);
    }

    /// [`Entries::push`] for an entry whose caller knows, from its parent,
    /// whether it lies in `node_modules`; mtime unknown.
    pub(crate) fn push_placed(&mut self, path: &[u8], file_type: FileType, in_node_modules: bool) {
        self.text.extend_from_slice(path);
        self.close_placed_entry(file_type, None, in_node_modules);
    }

    fn close_placed_entry(
        &mut self,
        file_type: FileType,
        mtime_ms: Option<i64>,
        in_node_modules: bool,
    ) {
        let start = self.ends.last().copied().unwrap_or(0);
        self.in_node_modules.push(in_node_modules);
        self.tails.push(path_tail(&self.text[start..]));
        self.ends.push(self.text.len());
        self.types.push(file_type);
        self.mtimes.push(mtime_ms.unwrap_or(MTIME_UNKNOWN));
    }

    /// This list with `changes` applied, in one pass: every entry at or
    /// below a removed path goes, then the added entries take their place
    /// in path order (an added path that is also listed replaces it). Each
    /// change is found by binary search and the untouched runs between
    /// changes are copied column by column, so a patch costs a copy of the
    /// list plus a search per change. A record of what the rules left out
    /// is patched alike, with the same removals and the patch's `skipped`.
    pub(crate) fn patched(&self, changes: &Patch) -> Entries {
        let out = self.changed(&changes.removed, &changes.added);
        if let Some(skipped) = self.skipped() {
            out.record_skipped(skipped.changed(&changes.removed, &changes.skipped));
        }
        out
    }

    /// This list without what lies at or below each of `removed`, with
    /// `added` (see [`Entries::patched`]).
    fn changed(&self, removed: &[Vec<u8>], added: &[Added]) -> Entries {
        let mut removed = removed.iter().peekable();
        // Room for every old and added entry: a list that had to grow would
        // double (a cached list holding twice its bytes) and copy itself.
        let added_text: usize = added.iter().map(|add| add.path.len()).sum();
        let mut out =
            Entries::with_capacity(self.len() + added.len(), self.text.len() + added_text);
        let mut added = added.iter().peekable();
        // Old entries before `at` are copied or dropped.
        let mut at = 0;
        loop {
            // A removal goes before an addition of the same path.
            let removal_first = match (removed.peek(), added.peek()) {
                (Some(r), Some(a)) => compare_paths(r, &a.path).is_le(),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let path: &[u8] = match removal_first {
                true => removed.peek().map(|r| r.as_slice()),
                false => added.peek().map(|a| a.path.as_slice()),
            }
            .unwrap_or_default();
            let found = at
                + partition_point(self.len() - at, |i| {
                    compare_paths(self.get(at + i).path, path).is_lt()
                });
            out.copy_run(self, at..found);
            at = found;
            if removal_first {
                while at < self.len() && is_within(self.get(at).path, path) {
                    at += 1;
                }
                removed.next();
            } else {
                if at < self.len() && self.get(at).path == path {
                    at += 1;
                }
                if let Some(add) = added.next() {
                    out.push(&add.path, add.file_type, add.mtime_ms);
                }
            }
        }
        out.copy_run(self, at..self.len());
        // A change at or around an unreadable path walks the scan again
        // (see `watch`), so what could not be read is as it was.
        out.unreadable = self.unreadable.clone();
        out
    }

    /// Append the entries `range` of `source`, column by column.
    fn copy_run(&mut self, source: &Entries, range: std::ops::Range<usize>) {
        if range.is_empty() {
            return;
        }
        let text_start = range.start.checked_sub(1).map_or(0, |i| source.ends[i]);
        let text_end = source.ends[range.end - 1];
        let base = self.text.len();
        self.text
            .extend_from_slice(&source.text[text_start..text_end]);
        let ends = source.ends[range.clone()]
            .iter()
            .map(|end| end - text_start + base);
        self.ends.extend(ends);
        self.types.extend_from_slice(&source.types[range.clone()]);
        self.mtimes.extend_from_slice(&source.mtimes[range.clone()]);
        self.in_node_modules
            .extend_from_slice(&source.in_node_modules[range.clone()]);
        self.tails.extend_from_slice(&source.tails[range]);
    }

    /// Every path's bytes back to back, and where each ends: the columns a
    /// persisted record keeps (see `persist`).
    pub(crate) fn text_and_ends(&self) -> (&[u8], &[usize]) {
        (&self.text, &self.ends)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The length of entry `index`'s path, without reading it.
    pub(crate) fn path_len(&self, index: usize) -> usize {
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        self.ends[index] - start
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

    /// The index of the entry at `path`, if listed.
    pub(crate) fn find(&self, path: &[u8]) -> Option<usize> {
        let at = partition_point(self.len(), |i| {
            compare_paths(self.get(i).path, path).is_lt()
        });
        (at < self.len() && self.get(at).path == path).then_some(at)
    }

    /// The index just past everything below the entry at `index` (its
    /// subtree is the run of entries after it that lie within its path).
    pub(crate) fn subtree_end(&self, index: usize) -> usize {
        let dir = self.get(index).path;
        let after = index + 1;
        after
            + partition_point(self.len() - after, |i| {
                is_within(self.get(after + i).path, dir)
            })
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
            + self.unreadable.capacity() * mem::size_of::<Unreadable>()
            + self
                .unreadable
                .iter()
                .map(|u| u.path.capacity() + u.message.capacity())
                .sum::<usize>()
            + self.skipped().map_or(0, Entries::heap_bytes)
    }
}

/// Changes to apply to a list with [`Entries::patched`]: paths whose
/// entries (and everything below them) go, entries to add, and entries the
/// rules leave out, to add to the list's record of them; each in path order
/// without repeats.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Patch {
    pub removed: Vec<Vec<u8>>,
    pub added: Vec<Added>,
    pub skipped: Vec<Added>,
}

/// An entry to add to a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Added {
    pub path: Vec<u8>,
    pub file_type: FileType,
    pub mtime_ms: Option<i64>,
}

/// The first index in `0..len` for which `before` is false (`before` is
/// true for a prefix of the range).
fn partition_point(len: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut low, mut high) = (0, len);
    while low < high {
        let mid = low + (high - low) / 2;
        if before(mid) {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    low
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

    fn listed(paths: &[&str]) -> Entries {
        let keys: Vec<Vec<u8>> = paths.iter().map(|p| key(p)).collect();
        Entries::from_unsorted(
            keys.iter()
                .map(|k| unsorted(k, FileType::File, Some(1)))
                .collect(),
        )
    }

    fn added(path: &str, mtime_ms: i64) -> Added {
        Added {
            path: path.as_bytes().to_vec(),
            file_type: FileType::File,
            mtime_ms: Some(mtime_ms),
        }
    }

    #[test]
    fn a_patch_removes_subtrees_and_adds_in_path_order() {
        let before = ["a", "a/b", "a/b/c", "a/d", "a.txt", "b", "b/x", "c"];
        let table: &[(&[&str], &[&str], &[&str])] = &[
            // removed, added, expected paths
            (&[], &[], &before),
            (&["a"], &[], &["a.txt", "b", "b/x", "c"]),
            (&["a", "a/b"], &[], &["a.txt", "b", "b/x", "c"]),
            (
                &["a/b"],
                &["a/b"],
                &["a", "a/b", "a/d", "a.txt", "b", "b/x", "c"],
            ),
            (
                &[],
                &["0", "a/a", "a/c", "b/y", "d"],
                &[
                    "0", "a", "a/a", "a/b", "a/b/c", "a/c", "a/d", "a.txt", "b", "b/x", "b/y", "c",
                    "d",
                ],
            ),
            (
                &["b/x", "c"],
                &["a-"],
                &["a", "a/b", "a/b/c", "a/d", "a-", "a.txt", "b"],
            ),
            (&["missing"], &[], &before),
            (&["a", "a.txt", "b", "c"], &[], &[]),
        ];
        for &(removed, adds, expected) in table {
            let patch = Patch {
                removed: removed.iter().map(|p| p.as_bytes().to_vec()).collect(),
                added: adds.iter().map(|p| added(p, 2)).collect(),
                skipped: Vec::new(),
            };
            let after = listed(&before).patched(&patch);
            let paths: Vec<String> = after.iter().map(|e| e.path_lossy().into_owned()).collect();
            assert_eq!(paths, expected, "removed {removed:?}, added {adds:?}");
            for entry in after.iter() {
                let mtime = if adds.contains(&&*entry.path_lossy()) {
                    2
                } else {
                    1
                };
                assert_eq!(entry.mtime_ms, Some(mtime), "{entry:?}");
                assert_eq!(entry.tail, path_tail(entry.path));
            }
            let mut sorted = paths.clone();
            sorted.sort_by(|x, y| compare_paths(x.as_bytes(), y.as_bytes()));
            assert_eq!(paths, sorted);
        }
    }

    #[test]
    fn a_patched_entry_replaces_the_listed_one_and_keeps_its_columns_right() {
        let patch = Patch {
            removed: Vec::new(),
            added: vec![added("node_modules/x/index.js", 9)],
            skipped: Vec::new(),
        };
        let before = listed(&["node_modules", "node_modules/x", "node_modules/x/index.js"]);
        let after = before.patched(&patch);
        let last = after.get(2);
        assert_eq!(
            (last.path, last.mtime_ms),
            (&b"node_modules/x/index.js"[..], Some(9))
        );
        assert!(last.in_node_modules);
        assert_eq!(last.tail, path_tail(b"index.js"));
        assert_eq!(after.len(), 3);
    }

    /// A patched list holds what a list of the same entries built at once
    /// holds, not the spare room of columns that grew.
    #[test]
    fn a_patched_list_takes_no_more_memory_than_its_entries() {
        let before: Vec<String> = (0..1000).map(|i| format!("dir/file_{i:04}.rs")).collect();
        let before: Vec<&str> = before.iter().map(String::as_str).collect();
        let patch = Patch {
            removed: Vec::new(),
            added: vec![
                added("dir/file_0500a.rs", 2),
                added("zzz/a_rather_long_new_name.rs", 2),
            ],
            skipped: Vec::new(),
        };
        let after = listed(&before).patched(&patch);
        let mut all = before.clone();
        all.extend(["dir/file_0500a.rs", "zzz/a_rather_long_new_name.rs"]);
        assert_eq!(after.len(), all.len());
        assert!(
            after.heap_bytes() <= listed(&all).heap_bytes(),
            "{} > {}",
            after.heap_bytes(),
            listed(&all).heap_bytes()
        );
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
