//! Compressed posting lists: for one trigram, the ids of the files that
//! hold it, in increasing order, each stored as its gap from the one before
//! in LEB128 (seven bits a byte). Files are numbered in the order they are
//! indexed, so a new file's id is the largest yet and joins every list it
//! belongs to by an append; a list of a trigram most files hold costs about
//! a byte per file.
//!
//! A query intersects the lists of a literal's trigrams (shortest first),
//! unites the alternatives of a requirement and intersects the
//! requirements: the result is every file that may match.

use std::hash::{BuildHasherDefault, Hasher};

/// One trigram's files.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Postings {
    gaps: Vec<u8>,
    /// The id after the last one pushed (gaps count from it).
    next: u32,
    len: u32,
}

/// Bytes a list grows by at least when it must grow: lists grow by a
/// quarter (at least this), so what they hold beyond their ids stays small
/// and what a push costs is known before it is made (see
/// [`Postings::growth`]).
const MIN_GROWTH: usize = 8;

impl Postings {
    /// How many bytes pushing `id` adds to [`Postings::heap_bytes`].
    pub(crate) fn growth(&self, id: u32) -> usize {
        let needed = varint_len(id - self.next);
        let (len, capacity) = (self.gaps.len(), self.gaps.capacity());
        if len + needed <= capacity {
            return 0;
        }
        len + needed.max(capacity / 4 + MIN_GROWTH) - capacity
    }

    /// Append `id`, larger than every id pushed before.
    pub(crate) fn push(&mut self, id: u32) {
        debug_assert!(id >= self.next, "ids are pushed in increasing order");
        let needed = varint_len(id - self.next);
        if self.gaps.len() + needed > self.gaps.capacity() {
            let more = needed.max(self.gaps.capacity() / 4 + MIN_GROWTH);
            self.gaps.reserve_exact(more);
        }
        let mut gap = id - self.next;
        while gap >= 0x80 {
            self.gaps.push((gap as u8) | 0x80);
            gap >>= 7;
        }
        self.gaps.push(gap as u8);
        self.next = id + 1;
        self.len += 1;
    }

    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    /// The ids, in increasing order.
    pub(crate) fn ids(&self) -> Ids<'_> {
        Ids {
            gaps: &self.gaps,
            next: 0,
        }
    }

    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.gaps.capacity()
    }

    /// Release the room kept for growth.
    pub(crate) fn shrink(&mut self) {
        self.gaps.shrink_to_fit();
    }
}

/// Bytes `gap` takes in LEB128.
fn varint_len(gap: u32) -> usize {
    (32 - gap.leading_zeros() as usize).div_ceil(7).max(1)
}

/// The ids of a [`Postings`], decoded as they are read.
pub(crate) struct Ids<'a> {
    gaps: &'a [u8],
    next: u32,
}

impl Iterator for Ids<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let mut gap = 0u32;
        let mut shift = 0;
        loop {
            let (&byte, rest) = self.gaps.split_first()?;
            self.gaps = rest;
            gap |= u32::from(byte & 0x7F) << shift;
            if byte < 0x80 {
                break;
            }
            shift += 7;
        }
        let id = self.next + gap;
        self.next = id + 1;
        Some(id)
    }
}

/// The ids in every one of `lists` (ascending).
pub(crate) fn intersect(mut lists: Vec<&Postings>) -> Vec<u32> {
    lists.sort_by_key(|list| list.len());
    let Some((shortest, rest)) = lists.split_first() else {
        return Vec::new();
    };
    let mut ids: Vec<u32> = shortest.ids().collect();
    for list in rest {
        if ids.is_empty() {
            break;
        }
        ids = keep_common(&ids, list.ids());
    }
    ids
}

/// The ids of `sorted` that `other` (ascending) also holds.
pub(crate) fn keep_common(sorted: &[u32], other: impl Iterator<Item = u32>) -> Vec<u32> {
    let mut kept = Vec::with_capacity(sorted.len());
    let mut mine = sorted.iter().copied().peekable();
    for id in other {
        while mine.next_if(|&m| m < id).is_some() {}
        match mine.peek() {
            Some(&m) if m == id => {
                kept.push(id);
                mine.next();
            }
            Some(_) => {}
            None => break,
        }
    }
    kept
}

/// The ids in either ascending list, ascending, each once.
pub(crate) fn unite(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// A hasher for the index's own keys (trigrams, relative paths): they come
/// from the files of a tree, not from an adversary, so a multiply-rotate
/// per word serves where SipHash would cost several times as much per
/// lookup.
#[derive(Default, Clone, Copy)]
pub(crate) struct QuickHasher(u64);

/// Builds [`QuickHasher`]s.
pub(crate) type QuickHash = BuildHasherDefault<QuickHasher>;

const SEED: u64 = 0x51_7C_C1_B7_27_22_0A_95;

impl QuickHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for QuickHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().unwrap_or_default()));
        }
        let mut tail = [0u8; 8];
        let rest = chunks.remainder();
        tail[..rest.len()].copy_from_slice(rest);
        self.add(u64::from_le_bytes(tail) ^ ((rest.len() as u64) << 56));
    }

    fn write_u32(&mut self, value: u32) {
        self.add(u64::from(value));
    }

    fn write_usize(&mut self, value: usize) {
        self.add(value as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(ids: &[u32]) -> Postings {
        let mut postings = Postings::default();
        ids.iter().for_each(|&id| postings.push(id));
        postings
    }

    #[test]
    fn ids_come_back_as_pushed_in_about_a_byte_each() {
        let ids = [
            0,
            1,
            2,
            127,
            128,
            300,
            16_383,
            16_384,
            2_000_000,
            u32::MAX - 1,
        ];
        let postings = list(&ids);
        assert_eq!(postings.ids().collect::<Vec<_>>(), ids);
        assert_eq!(postings.len(), ids.len());
        let dense = list(&(0..1000).collect::<Vec<_>>());
        assert_eq!(dense.gaps.len(), 1000, "a gap of 0 is one byte");
    }

    /// What a push will cost is known before it is made.
    #[test]
    fn growth_is_known_before_a_push() {
        let mut postings = Postings::default();
        for id in (0..100_000).step_by(7) {
            let before = postings.heap_bytes();
            let growth = postings.growth(id);
            postings.push(id);
            assert_eq!(postings.heap_bytes() - before, growth, "{id}");
        }
        assert!(postings.heap_bytes() <= postings.gaps.len() * 5 / 4 + MIN_GROWTH + 5);
    }

    #[test]
    fn intersections_and_unions() {
        let a = list(&[1, 3, 5, 7, 9, 200]);
        let b = list(&[3, 4, 5, 200, 300]);
        let c = list(&[5, 200]);
        assert_eq!(intersect(vec![&a, &b]), [3, 5, 200]);
        assert_eq!(intersect(vec![&a, &b, &c]), [5, 200]);
        assert_eq!(intersect(vec![&a, &list(&[])]), Vec::<u32>::new());
        assert_eq!(intersect(vec![]), Vec::<u32>::new());
        assert_eq!(unite(&[1, 4, 9], &[2, 4, 10, 11]), [1, 2, 4, 9, 10, 11]);
        assert_eq!(unite(&[], &[2]), [2]);
    }
}
