//! An index of the names in a cached scan list, so a query that names what
//! it looks for does not read every path of a large tree.
//!
//! A cached glob whose last component has a literal prefix (`file_1_2_*.ts`,
//! `index.ts`) or suffix (`*Service.ts`) used to build a globset candidate
//! for every entry: about 100 ms per call on a million entries. The index
//! keeps the entries ordered twice, by the first eight bytes of their names
//! and by the last eight bytes of their paths read backwards, so those
//! queries find their candidates by binary search. It only narrows: every
//! entry whose name has the literal is a candidate, some candidates lack it
//! (names sharing eight bytes), and the glob still decides every candidate.
//!
//! It also links every entry to its listed parent directory and notes the
//! letters of its name, so a fuzzy search can carry a query's progress
//! through a directory's path once rather than once per entry below it,
//! and pass over a file whose name lacks a letter the query still needs
//! without reading it (see `fuzzy`).
//!
//! An index belongs to one immutable list: the cache keeps it beside the
//! list it was built from and drops it with that list, when the list
//! expires, is invalidated, evicted or replaced by a list patched from
//! filesystem events. It is built on a query's first use, not with the
//! scan (a scan nobody queries by name costs nothing more), and holds 16
//! bytes per entry: two orderings, a parent link and a letter set, four
//! bytes each.

use std::ops::RangeInclusive;

use crate::{
    cancel::{CANCEL_POLL_INTERVAL, CancelToken},
    entries::{Entries, FileType, path_tail},
    error::Result,
};

/// Where an entry's parent directory is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parent {
    /// The entry lies directly in the scan root.
    Root,
    /// The entry at this index is the directory holding it.
    Listed(usize),
    /// The directory holding it is not in the list.
    Unlisted,
}

/// Marks an entry directly in the root in [`NameIndex::parents`].
const ROOT: u32 = u32::MAX;
/// Marks an entry whose directory is not listed in [`NameIndex::parents`].
const UNLISTED: u32 = u32::MAX - 1;

/// The index of one list (see the module docs).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct NameIndex {
    /// Entry indices ordered by [`name_head`], equal heads by index.
    by_head: Vec<u32>,
    /// Entry indices ordered by [`reversed_tail`], equal keys by index.
    by_tail: Vec<u32>,
    /// Each entry's parent: an index, [`ROOT`] or [`UNLISTED`].
    parents: Vec<u32>,
    /// Each entry's [`letters`], with the `/` before its name.
    letters: Vec<u32>,
}

/// What a query knows of the names it can match: each of them starts with
/// `prefix` and ends with `suffix` (either may be empty).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct NameLiterals {
    pub prefix: Vec<u8>,
    pub suffix: Vec<u8>,
}

impl NameIndex {
    /// The index of `entries`; `None` when it holds more entries than a
    /// `u32` counts (below the marker values). `token` is checked between
    /// the orderings and while linking parents.
    pub(crate) fn build(entries: &Entries, token: &CancelToken) -> Result<Option<NameIndex>> {
        if entries.len() >= UNLISTED as usize {
            return Ok(None);
        }
        token.check()?;
        let by_head = ordered(entries.iter().map(|entry| name_head(name(entry.path))));
        token.check()?;
        let by_tail = ordered(entries.iter().map(|entry| entry.tail.swap_bytes()));
        token.check()?;
        let parents = parents(entries, token)?;
        token.check()?;
        let slash = letters(b"/");
        let letters = entries.iter().map(|e| letters(name(e.path)) | slash);
        Ok(Some(NameIndex {
            by_head,
            by_tail,
            parents,
            letters: letters.collect(),
        }))
    }

    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        let columns = [&self.by_head, &self.by_tail, &self.parents, &self.letters];
        columns.iter().map(|c| c.capacity()).sum::<usize>() * std::mem::size_of::<u32>()
    }

    /// Where the entry at `index` lies.
    pub(crate) fn parent(&self, index: usize) -> Parent {
        match self.parents[index] {
            ROOT => Parent::Root,
            UNLISTED => Parent::Unlisted,
            parent => Parent::Listed(parent as usize),
        }
    }

    /// The [`letters`] of the `/` and name that end the path of the entry
    /// at `index`.
    pub(crate) fn letters(&self, index: usize) -> u32 {
        self.letters[index]
    }

    /// The indices, ascending, of every entry of `entries` (the list this
    /// index was built from) whose name starts with `literals.prefix` and
    /// ends with `literals.suffix`, and of some entries that do not (see
    /// the module docs); `None` when neither literal narrows the list.
    pub(crate) fn candidates(
        &self,
        entries: &Entries,
        literals: &NameLiterals,
    ) -> Option<Vec<usize>> {
        let by_head = (!literals.prefix.is_empty()).then(|| {
            let keys = key_range(&literals.prefix, false);
            range(&self.by_head, keys, |i| {
                name_head(name(entries.get(i).path))
            })
        });
        let by_tail = (!literals.suffix.is_empty()).then(|| {
            let keys = key_range(&literals.suffix, true);
            range(&self.by_tail, keys, |i| entries.get(i).tail.swap_bytes())
        });
        let narrowest = match (by_head, by_tail) {
            (Some(head), Some(tail)) if tail.len() < head.len() => tail,
            (Some(head), _) => head,
            (None, tail) => tail?,
        };
        let mut indices: Vec<usize> = narrowest.iter().map(|&i| i as usize).collect();
        indices.sort_unstable();
        Some(indices)
    }
}

/// The last component of `path`.
pub(crate) fn name(path: &[u8]) -> &[u8] {
    memchr::memrchr(b'/', path).map_or(path, |slash| &path[slash + 1..])
}

/// The set of bytes in `text`, as bits, case folded: one bit per ASCII
/// letter, one for the digits and one each for `.`, `_` and `-`, one for
/// any other ASCII byte. A text holding a byte that is not ASCII has every
/// bit (it may match letters it does not hold: `ü` matches `u`). Whether
/// `text` holds every byte of `wanted` (itself ASCII) then shows as
/// `letters(text) & letters(wanted) == letters(wanted)`, or is unknown.
pub(crate) fn letters(text: &[u8]) -> u32 {
    text.iter().fold(0, |set, &byte| {
        set | match byte.to_ascii_lowercase() {
            letter @ b'a'..=b'z' => 1 << (letter - b'a'),
            b'0'..=b'9' => 1 << 26,
            b'.' => 1 << 27,
            b'_' => 1 << 28,
            b'-' => 1 << 29,
            0..=0x7f => 1 << 30,
            _ => u32::MAX,
        }
    })
}

/// The first (up to) eight bytes of `name` as a big-endian integer, zero
/// padded on the right: integer order is byte order on those bytes, and a
/// shorter name sorts first since names hold no NUL.
fn name_head(name: &[u8]) -> u64 {
    let take = name.len().min(8);
    let mut bytes = [0u8; 8];
    bytes[..take].copy_from_slice(&name[..take]);
    u64::from_be_bytes(bytes)
}

/// The keys of the names starting with `literal` (`reversed`: the tails
/// ending with it), as far as eight bytes of it tell.
fn key_range(literal: &[u8], reversed: bool) -> RangeInclusive<u64> {
    let (low, high) = if reversed {
        let tail = path_tail(literal).swap_bytes();
        let known = literal.len().min(8);
        (tail, tail | unknown_bits(known))
    } else {
        let head = name_head(literal);
        (head, head | unknown_bits(literal.len().min(8)))
    };
    low..=high
}

/// The low bits of a key past its first `known` bytes.
fn unknown_bits(known: usize) -> u64 {
    match known {
        8.. => 0,
        n => u64::MAX >> (8 * n),
    }
}

/// Indices `0..keys.len()` ordered by key, equal keys by index.
fn ordered(keys: impl Iterator<Item = u64>) -> Vec<u32> {
    let mut pairs: Vec<(u64, u32)> = keys.zip(0u32..).collect();
    pairs.sort_unstable();
    pairs.into_iter().map(|(_, index)| index).collect()
}

/// The run of `order` (indices ordered by `key`) whose keys lie in `keys`.
fn range(order: &[u32], keys: RangeInclusive<u64>, key: impl Fn(usize) -> u64) -> &[u32] {
    let start = order.partition_point(|&i| key(i as usize) < *keys.start());
    let end = start + order[start..].partition_point(|&i| key(i as usize) <= *keys.end());
    &order[start..end]
}

/// Each entry's parent, found in one pass: in path order a directory comes
/// right before everything below it, so the open directories form a stack.
fn parents(entries: &Entries, token: &CancelToken) -> Result<Vec<u32>> {
    let mut parents = Vec::with_capacity(entries.len());
    let mut open: Vec<usize> = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        if index % CANCEL_POLL_INTERVAL == 0 {
            token.check()?;
        }
        let Some(slash) = memchr::memrchr(b'/', entry.path) else {
            open.clear();
            parents.push(ROOT);
            open.extend((entry.file_type == FileType::Dir).then_some(index));
            continue;
        };
        let holds = |dir: usize| {
            let dir = entries.get(dir).path;
            entry.path.len() > dir.len()
                && entry.path[dir.len()] == b'/'
                && entry.path.starts_with(dir)
        };
        while open.last().is_some_and(|&dir| !holds(dir)) {
            open.pop();
        }
        parents.push(match open.last() {
            Some(&dir) if entries.get(dir).path.len() == slash => dir as u32,
            _ => UNLISTED,
        });
        if entry.file_type == FileType::Dir {
            open.push(index);
        }
    }
    Ok(parents)
}

#[cfg(test)]
pub(crate) mod generated;
#[cfg(test)]
mod tests;
