//! The relative paths of the indexed files: by id, and ids by path.
//!
//! Every path's bytes go into one buffer, and a table keyed by the path's
//! hash holds ids, so an indexed file costs its path's bytes and about a
//! dozen more, where a map of owned paths cost a heap block and a 24-byte
//! entry per file (at a million files, the difference is tens of MiB). A
//! path that leaves keeps its bytes until the lists are rewritten
//! ([`Paths::renumbered`]), as its id does.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::postings::QuickHash;

/// Where an id's path lies in the buffer; `start == GONE` once it left.
#[derive(Clone, Copy)]
struct Span {
    start: u32,
    len: u32,
}

const GONE: u32 = u32::MAX;

/// Paths by id, ids by path.
#[derive(Default)]
pub(crate) struct Paths {
    bytes: Vec<u8>,
    spans: Vec<Span>,
    ids: HashTable<u32>,
    hasher: QuickHash,
}

impl Paths {
    /// The id of `path`, if it is here.
    pub(crate) fn get(&self, path: &[u8]) -> Option<u32> {
        let hash = self.hasher.hash_one(path);
        self.ids.find(hash, |&id| self.path(id) == path).copied()
    }

    /// Give `path` the next id, which must be the number of ids given so
    /// far (ids follow the index's files); `false`, and nothing added, when
    /// the buffer has no room left for it (4 GiB of paths).
    pub(crate) fn push(&mut self, path: &[u8], id: u32) -> bool {
        debug_assert_eq!(id as usize, self.spans.len(), "ids are given in order");
        let Ok(start) = u32::try_from(self.bytes.len()) else {
            return false;
        };
        if start
            .checked_add(path.len() as u32)
            .is_none_or(|end| end == GONE)
        {
            return false;
        }
        self.bytes.extend_from_slice(path);
        self.spans.push(Span {
            start,
            len: path.len() as u32,
        });
        let hash = self.hasher.hash_one(path);
        let (bytes, spans, hasher) = (&self.bytes, &self.spans, &self.hasher);
        self.ids.insert_unique(hash, id, |&other| {
            hasher.hash_one(span_bytes(bytes, spans[other as usize]))
        });
        true
    }

    /// Take `path` out; its id, if it was here.
    pub(crate) fn remove(&mut self, path: &[u8]) -> Option<u32> {
        let hash = self.hasher.hash_one(path);
        let (bytes, spans) = (&self.bytes, &self.spans);
        let found = self
            .ids
            .find_entry(hash, |&id| span_bytes(bytes, spans[id as usize]) == path)
            .ok()?;
        let (id, _) = found.remove();
        self.spans[id as usize].start = GONE;
        Some(id)
    }

    /// The path of a live `id`; empty for one that left.
    pub(crate) fn path(&self, id: u32) -> &[u8] {
        let span = self.spans[id as usize];
        if span.start == GONE {
            return &[];
        }
        span_bytes(&self.bytes, span)
    }

    /// Every live path with its id.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&[u8], u32)> {
        self.ids.iter().map(|&id| (self.path(id), id))
    }

    /// The live paths under ids renumbered by `renumbered` (the ids of
    /// paths that left map to `u32::MAX`), in order, their bytes alone.
    pub(crate) fn renumbered(&self, renumbered: &[u32]) -> Paths {
        let mut fresh = Paths::default();
        for (old, &new) in renumbered.iter().enumerate() {
            if new != u32::MAX {
                fresh.push(self.path(old as u32), new);
            }
        }
        fresh.bytes.shrink_to_fit();
        fresh.spans.shrink_to_fit();
        fresh
    }

    /// Bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.bytes.capacity()
            + self.spans.capacity() * size_of::<Span>()
            + self.ids.capacity() * (size_of::<u32>() + 1)
    }

    /// Bytes adding `path` may take, at most: its own, its span, and a
    /// doubling of the table when it is full.
    pub(crate) fn growth(&self, path: &[u8]) -> usize {
        if self.bytes.len() + path.len() >= GONE as usize {
            return usize::MAX;
        }
        let table = match self.ids.len() < self.ids.capacity() {
            true => 0,
            false => (self.ids.capacity().max(3) + 1) * 2 * (size_of::<u32>() + 1),
        };
        let grows = |len: usize, capacity: usize, more: usize| match len + more <= capacity {
            true => 0,
            false => (len + more).max(capacity * 2) - capacity,
        };
        grows(self.bytes.len(), self.bytes.capacity(), path.len())
            + grows(self.spans.len(), self.spans.capacity(), 1) * size_of::<Span>()
            + table
    }

    /// Give back the room kept for growth, the buffers copied to fresh
    /// allocations of their exact size (see `Lists::shrink` for why).
    pub(crate) fn shrink(&mut self) {
        self.bytes = self.bytes.to_vec();
        self.spans = self.spans.to_vec();
        let hasher = &self.hasher;
        let (bytes, spans) = (&self.bytes, &self.spans);
        self.ids
            .shrink_to_fit(|&id| hasher.hash_one(span_bytes(bytes, spans[id as usize])));
    }
}

fn span_bytes(bytes: &[u8], span: Span) -> &[u8] {
    &bytes[span.start as usize..(span.start + span.len) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_ids_both_ways() {
        let mut paths = Paths::default();
        let names: Vec<String> = (0..5000)
            .map(|n| format!("dir{}/file{n}.rs", n % 7))
            .collect();
        for (id, name) in names.iter().enumerate() {
            assert!(paths.push(name.as_bytes(), id as u32));
        }
        for (id, name) in names.iter().enumerate() {
            assert_eq!(paths.get(name.as_bytes()), Some(id as u32));
            assert_eq!(paths.path(id as u32), name.as_bytes());
        }
        assert_eq!(paths.get(b"dir0/missing.rs"), None);
        assert_eq!(paths.remove(b"dir3/file3.rs"), Some(3));
        assert_eq!(paths.remove(b"dir3/file3.rs"), None);
        assert_eq!(paths.get(b"dir3/file3.rs"), None);
        assert_eq!(paths.path(3), b"");
        assert_eq!(paths.iter().count(), 4999);
        // Renumber without the removed one: every later id moves down.
        let renumbering: Vec<u32> = (0..5000u32)
            .map(|id| match id {
                3 => u32::MAX,
                id if id > 3 => id - 1,
                id => id,
            })
            .collect();
        let fresh = paths.renumbered(&renumbering);
        assert_eq!(fresh.get(b"dir4/file4.rs"), Some(3));
        assert_eq!(fresh.get(b"dir2/file4999.rs"), None);
        assert_eq!(fresh.get(names[4999].as_bytes()), Some(4998));
        assert!(fresh.heap_bytes() < paths.heap_bytes());
    }

    /// What adding a path will cost is known before it is added.
    #[test]
    fn growth_is_known_before_a_path_is_added() {
        let mut paths = Paths::default();
        for id in 0..20_000u32 {
            let path = format!("some/dir{}/name{id}", id % 13);
            let (before, growth) = (paths.heap_bytes(), paths.growth(path.as_bytes()));
            paths.push(path.as_bytes(), id);
            assert!(paths.heap_bytes() <= before + growth, "{id}");
        }
        let full = paths.heap_bytes();
        paths.shrink();
        assert!(paths.heap_bytes() <= full);
        assert_eq!(paths.get(b"some/dir0/name0"), Some(0));
    }
}
