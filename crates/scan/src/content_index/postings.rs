//! Posting lists: for each trigram, the ids of the files that hold it.
//!
//! Files are numbered in the order they are indexed, so a new file's id is
//! the largest yet and joins every list it belongs to by an append. One
//! corpus holds hundreds of thousands of lists, most of them a few ids long
//! (names, numbers, rare words), and a few thousand that most files share
//! (`the`, `ion`, ` = `). Each kind is stored the way it costs least:
//!
//! - **Sparse lists** keep each id as its gap from the one before, in
//!   nibbles of three bits and a flag that another follows: a gap under 8
//!   takes half a byte, under 64 a byte, under 512 a byte and a half (on the
//!   bench's trees a fifth less than seven bits a byte). Up to [`INLINE`] bytes
//!   live in the list's head; a longer list has a chunk of one shared
//!   arena and moves to a larger chunk at the arena's end when it fills,
//!   so no list is a heap block of its own (a block's own cost would exceed
//!   most lists' ids). Chunks left behind are counted and the arena is
//!   rewritten once they outweigh the chunks in use.
//! - **Dense lists** are bitmaps over every id: a list becomes one when its
//!   gaps would take more bytes than the bitmap, which happens once it
//!   holds about one id in eight. On a tree of generated or repetitive
//!   files this halves the index, and a query intersects such lists a
//!   machine word (64 files) at a time instead of decoding every id.
//!
//! A query ([`Lists::matching`]) intersects the lists of an alternative's
//! trigrams (shortest first), unites the alternatives of a requirement and
//! intersects the requirements; the result is every file that may match,
//! as a bitmap.

use std::{
    collections::HashMap,
    hash::{BuildHasherDefault, Hasher},
};

/// Gap bytes a list keeps in its head before it takes an arena chunk.
pub(crate) const INLINE: usize = 8;

/// The smallest arena chunk a list takes when it leaves its head.
const MIN_CHUNK: u32 = 16;

/// The arena grows by at least this (and by an eighth of its length), so
/// what it holds beyond its chunks stays small and is known in advance.
const MIN_ARENA_GROWTH: usize = 1 << 16;

/// One trigram's list: how many ids, the id after the last, and where the
/// ids are.
#[derive(Clone, Debug)]
struct Head {
    len: u32,
    /// The id after the last one added (a gap counts from it).
    next: u32,
    body: Body,
}

/// `used` counts nibbles (two a byte), `capacity` bytes.
#[derive(Clone, Debug)]
enum Body {
    /// Gaps held in the head.
    Inline { used: u8, gaps: [u8; INLINE] },
    /// Gaps in the chunk of `capacity` bytes at `arena[at..]`.
    Chunk { at: u32, used: u32, capacity: u32 },
    /// A bitmap: `bitmaps[index]`.
    Bitmap(u32),
}

/// Every posting list of one corpus.
#[derive(Default)]
pub(crate) struct Lists {
    by_trigram: HashMap<u32, u32, QuickHash>,
    heads: Vec<Head>,
    arena: Vec<u8>,
    /// Arena bytes in chunks no list uses any more.
    abandoned: usize,
    bitmaps: Vec<Vec<u64>>,
    /// Bytes the bitmaps hold (their capacity).
    bitmap_bytes: usize,
}

/// Where a file's trigrams go, as [`Lists::prepare`] found them: a list's
/// position, or [`NEW_LIST`].
pub(crate) struct Prepared {
    lists: Vec<u32>,
    /// Bytes adding the file will take, at most.
    pub growth: usize,
}

const NEW_LIST: u32 = u32::MAX;

/// Bytes a list costs besides its ids: its head and its map entry, with
/// the map's control byte and a share of the room both keep for growth.
pub(crate) const LIST_BYTES: usize = size_of::<Head>() + size_of::<(u32, u32)>() + 8;

/// Bytes a bitmap grows by at least when it must grow, and an eighth of
/// its length: as the arena, so what it will cost is known in advance.
const MIN_BITMAP_GROWTH: usize = 8;

impl Lists {
    /// How many lists (distinct trigrams).
    pub(crate) fn count(&self) -> usize {
        self.heads.len()
    }

    /// Bytes held: heads and map entries, the arena and the bitmaps.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.heads.len() * LIST_BYTES + self.arena.capacity() + self.bitmap_bytes
    }

    /// Find the lists of `trigrams` (distinct) and what adding `id` (larger
    /// than every id added so far) to all of them would cost at most, for
    /// [`Lists::add`].
    pub(crate) fn prepare(&self, trigrams: &[u32], id: u32) -> Prepared {
        let mut chunks = 0usize;
        let mut growth = 0;
        let lists = trigrams
            .iter()
            .map(|t| match self.by_trigram.get(t) {
                Some(&list) => {
                    let (bytes, chunk) = self.growth(list, id);
                    growth += bytes;
                    chunks += chunk;
                    list
                }
                None => {
                    growth += LIST_BYTES;
                    NEW_LIST
                }
            })
            .collect();
        Prepared {
            lists,
            growth: growth.saturating_add(self.arena_growth(chunks)),
        }
    }

    /// Add `id` to the lists of `trigrams`, as `prepared` found them (no
    /// list may have changed since).
    pub(crate) fn add(&mut self, trigrams: &[u32], prepared: &Prepared, id: u32) {
        for (&trigram, &list) in trigrams.iter().zip(&prepared.lists) {
            let list = if list == NEW_LIST {
                self.new_list(trigram)
            } else {
                list
            };
            self.push(list, id);
        }
    }

    /// The ids of the files that may match: every requirement has one
    /// alternative whose trigrams all hold the file. Ids are below `ids`.
    pub(crate) fn matching(&self, requirements: &[Vec<Vec<u32>>], ids: usize) -> Bits {
        let mut result: Option<Bits> = None;
        for alternatives in requirements {
            let mut any = Bits::new(ids);
            for trigrams in alternatives {
                let lists: Option<Vec<u32>> = trigrams
                    .iter()
                    .map(|t| self.by_trigram.get(t).copied())
                    .collect();
                if let Some(lists) = lists {
                    any.or(&self.intersect(lists, ids));
                }
            }
            result = Some(match result {
                None => any,
                Some(mut so_far) => {
                    so_far.and_words(&any.words);
                    so_far
                }
            });
        }
        result.unwrap_or_else(|| Bits::new(ids))
    }

    /// The same lists with every id renumbered by `renumbered` (ids mapped
    /// to `u32::MAX` go), each stored anew as it costs least.
    pub(crate) fn renumbered(&self, renumbered: &[u32]) -> Lists {
        let mut fresh = Lists::default();
        let mut trigrams: Vec<(u32, u32)> = self.by_trigram.iter().map(|(&t, &l)| (t, l)).collect();
        trigrams.sort_unstable_by_key(|&(_, list)| list);
        for (trigram, list) in trigrams {
            let mut kept = self
                .ids(list)
                .map(|id| renumbered[id as usize])
                .filter(|&id| id != u32::MAX)
                .peekable();
            if kept.peek().is_some() {
                let at = fresh.new_list(trigram);
                kept.for_each(|id| fresh.push(at, id));
            }
        }
        fresh.shrink();
        fresh
    }

    /// Bytes held beyond the ids: room kept in chunks and bitmaps for
    /// growth, and chunks left behind.
    pub(crate) fn slack(&self) -> usize {
        let chunks: usize = self
            .heads
            .iter()
            .map(|head| match head.body {
                Body::Chunk { used, capacity, .. } => capacity as usize - bytes_of(used as usize),
                _ => 0,
            })
            .sum();
        let bitmaps: usize = self.bitmaps.iter().map(|b| b.len() * 8).sum();
        self.abandoned
            + chunks
            + (self.arena.capacity() - self.arena.len())
            + (self.bitmap_bytes - bitmaps)
    }

    /// Hold the ids in as little as they take: each chunk as long as its
    /// gaps, the arena and the bitmaps without room to grow. A list that
    /// grows again moves to a new chunk as usual.
    pub(crate) fn tighten(&mut self) {
        let used: usize = self.heads.iter().map(Head::gap_bytes).sum();
        let mut arena = Vec::with_capacity(used);
        for head in &mut self.heads {
            if let Body::Chunk { at, used, capacity } = &mut head.body {
                let (start, bytes) = (arena.len() as u32, bytes_of(*used as usize));
                arena.extend_from_slice(&self.arena[*at as usize..*at as usize + bytes]);
                (*at, *capacity) = (start, bytes as u32);
            }
        }
        self.arena = arena;
        self.abandoned = 0;
        self.shrink();
    }

    /// Release the room kept for growth: every piece copied to a fresh
    /// allocation of its exact size, made by the thread calling this. The
    /// search's worker threads grew them file by file among their own
    /// short-lived allocations; copied, the old blocks go back whole, not
    /// left pinning pages the allocator cannot return (measured: 2 MiB of
    /// the generated tree's 50 held after the bench's searches).
    fn shrink(&mut self) {
        self.heads = self.heads.to_vec();
        self.arena = self.arena.to_vec();
        self.bitmaps = self.bitmaps.iter().map(|b| b.to_vec()).collect();
        self.by_trigram = self.by_trigram.clone();
        self.bitmap_bytes = self.bitmaps.iter().map(|b| b.capacity() * 8).sum();
    }

    fn new_list(&mut self, trigram: u32) -> u32 {
        let list = self.heads.len() as u32;
        self.heads.push(Head::new());
        self.by_trigram.insert(trigram, list);
        list
    }

    /// Bytes adding `id` to list `list` takes beyond what it holds, and of
    /// them the bytes of a new arena chunk (reserved apart).
    fn growth(&self, list: u32, id: u32) -> (usize, usize) {
        let head = &self.heads[list as usize];
        match head.body {
            Body::Bitmap(bitmap) => {
                let words = &self.bitmaps[bitmap as usize];
                (bitmap_growth(words.len(), words.capacity(), id) * 8, 0)
            }
            _ if head.becomes_dense(id) => (dense_capacity(id) * 8, 0),
            _ if head.has_room(id) => (0, 0),
            _ => (0, chunk_for(head.gap_bytes()) as usize),
        }
    }

    /// Arena bytes reserved for `chunks` more chunk bytes, at most; past
    /// what a `u32` offset reaches, more than any budget.
    fn arena_growth(&self, chunks: usize) -> usize {
        let (len, capacity) = (self.arena.len(), self.arena.capacity());
        let end = len + chunks;
        if end > u32::MAX as usize {
            return usize::MAX;
        }
        if end <= capacity {
            return 0;
        }
        end + arena_step(end) - capacity
    }

    /// Append `id` to list `list`.
    fn push(&mut self, list: u32, id: u32) {
        let head = &self.heads[list as usize];
        debug_assert!(id >= head.next, "ids are added in increasing order");
        let gap = id - head.next;
        match head.body {
            Body::Bitmap(bitmap) => {
                let grown = set_bit(&mut self.bitmaps[bitmap as usize], id);
                self.bitmap_bytes += grown * 8;
            }
            _ if head.becomes_dense(id) => self.make_dense(list, id),
            _ if head.has_room(id) => self.append_gap(list, gap),
            _ => self.spill(list, gap),
        }
        let head = &mut self.heads[list as usize];
        head.len += 1;
        head.next = id + 1;
    }

    /// Write `gap` where list `list` has room for it.
    fn append_gap(&mut self, list: u32, gap: u32) {
        match &mut self.heads[list as usize].body {
            Body::Inline { used, gaps } => {
                *used += write_gap(gaps, *used as usize, gap) as u8;
            }
            Body::Chunk { at, used, capacity } => {
                let chunk = &mut self.arena[*at as usize..(*at + *capacity) as usize];
                *used += write_gap(chunk, *used as usize, gap) as u32;
            }
            Body::Bitmap(_) => unreachable!("a bitmap takes ids, not gaps"),
        }
    }

    /// Move list `list`'s gaps to a new chunk at the arena's end, then add
    /// `gap`.
    fn spill(&mut self, list: u32, gap: u32) {
        let (old, used, old_capacity) = match self.heads[list as usize].body {
            Body::Inline { used, gaps } => {
                (gaps[..bytes_of(used as usize)].to_vec(), used as u32, 0)
            }
            Body::Chunk { at, used, capacity } => {
                let old = &self.arena[at as usize..at as usize + bytes_of(used as usize)];
                (old.to_vec(), used, capacity)
            }
            Body::Bitmap(_) => unreachable!("a bitmap never spills"),
        };
        self.abandoned += old_capacity as usize;
        let capacity = chunk_for(old.len());
        let at = self.arena.len();
        if at + capacity as usize > self.arena.capacity() {
            let end = at + capacity as usize;
            self.arena.reserve_exact(end + arena_step(end) - at);
        }
        self.arena.extend_from_slice(&old);
        self.arena.resize(at + capacity as usize, 0);
        self.heads[list as usize].body = Body::Chunk {
            at: at as u32,
            used,
            capacity,
        };
        self.append_gap(list, gap);
        if self.abandoned > self.arena.len() / 2 && self.arena.len() > MIN_ARENA_GROWTH {
            self.repack();
        }
    }

    /// Turn list `list` into a bitmap, with `id` added.
    fn make_dense(&mut self, list: u32, id: u32) {
        let mut words = Vec::with_capacity(dense_capacity(id));
        words.resize(bitmap_words(id), 0);
        for old in self.ids(list).chain([id]) {
            words[old as usize / 64] |= 1 << (old % 64);
        }
        if let Body::Chunk { capacity, .. } = self.heads[list as usize].body {
            self.abandoned += capacity as usize;
        }
        self.bitmap_bytes += words.capacity() * 8;
        self.heads[list as usize].body = Body::Bitmap(self.bitmaps.len() as u32);
        self.bitmaps.push(words);
    }

    /// Rewrite the arena with only the chunks lists use.
    fn repack(&mut self) {
        let live = self.arena.len() - self.abandoned;
        let mut arena = Vec::with_capacity(live + arena_step(live));
        for head in &mut self.heads {
            if let Body::Chunk { at, capacity, .. } = &mut head.body {
                let start = arena.len() as u32;
                arena.extend_from_slice(&self.arena[*at as usize..(*at + *capacity) as usize]);
                *at = start;
            }
        }
        self.arena = arena;
        self.abandoned = 0;
    }

    /// The ids of list `list`, ascending.
    fn ids(&self, list: u32) -> Ids<'_> {
        match &self.heads[list as usize].body {
            Body::Inline { used, gaps } => Ids::Gaps {
                gaps,
                at: 0,
                end: *used as usize,
                next: 0,
            },
            Body::Chunk { at, used, .. } => Ids::Gaps {
                gaps: &self.arena[*at as usize..],
                at: 0,
                end: *used as usize,
                next: 0,
            },
            Body::Bitmap(bitmap) => {
                let words = &self.bitmaps[*bitmap as usize];
                Ids::Bits {
                    words,
                    at: 0,
                    word: words.first().copied().unwrap_or(0),
                }
            }
        }
    }

    /// The files in every one of `lists`: the shortest decoded, then
    /// narrowed by the others (a bitmap answers for an id at once).
    fn intersect(&self, mut lists: Vec<u32>, ids: usize) -> Bits {
        lists.sort_by_key(|&list| self.heads[list as usize].len);
        let Some((&shortest, rest)) = lists.split_first() else {
            return Bits::new(ids);
        };
        if let Body::Bitmap(bitmap) = self.heads[shortest as usize].body {
            let mut bits = Bits::from_words(&self.bitmaps[bitmap as usize], ids);
            for &list in rest {
                match self.heads[list as usize].body {
                    Body::Bitmap(other) => bits.and_words(&self.bitmaps[other as usize]),
                    _ => bits.and_words(&Bits::from_ids(self.ids(list), ids).words),
                }
            }
            return bits;
        }
        let mut kept: Vec<u32> = self.ids(shortest).collect();
        for &list in rest {
            if kept.is_empty() {
                break;
            }
            kept = match self.heads[list as usize].body {
                Body::Bitmap(bitmap) => {
                    let words = &self.bitmaps[bitmap as usize];
                    kept.retain(|&id| has_bit(words, id));
                    kept
                }
                _ => keep_common(&kept, self.ids(list)),
            };
        }
        Bits::from_ids(kept, ids)
    }
}

impl Head {
    fn new() -> Head {
        Head {
            len: 0,
            next: 0,
            body: Body::Inline {
                used: 0,
                gaps: [0; INLINE],
            },
        }
    }

    /// Nibbles its gaps take (0 for a bitmap).
    fn gap_nibbles(&self) -> usize {
        match self.body {
            Body::Inline { used, .. } => used as usize,
            Body::Chunk { used, .. } => used as usize,
            Body::Bitmap(_) => 0,
        }
    }

    /// Bytes its gaps take (0 for a bitmap).
    fn gap_bytes(&self) -> usize {
        bytes_of(self.gap_nibbles())
    }

    /// Whether adding `id` makes it a bitmap: its gaps would outweigh one.
    fn becomes_dense(&self, id: u32) -> bool {
        !matches!(self.body, Body::Bitmap(_))
            && bytes_of(self.gap_nibbles() + nibbles_of(id - self.next)) > bitmap_words(id) * 8
    }

    /// Whether the gap to `id` fits where its gaps are.
    fn has_room(&self, id: u32) -> bool {
        let room = match self.body {
            Body::Inline { .. } => INLINE,
            Body::Chunk { capacity, .. } => capacity as usize,
            Body::Bitmap(_) => return false,
        };
        self.gap_nibbles() + nibbles_of(id - self.next) <= room * 2
    }
}

/// The largest gap's bytes: eleven nibbles of a 32-bit gap, and the half
/// byte its first may start in.
const GAP_MAX_BYTES: u32 = 6;

/// The chunk a list whose gaps take `used` bytes moves to: half as large
/// again, with room for one more gap.
fn chunk_for(used: usize) -> u32 {
    let used = used as u32;
    (used + GAP_MAX_BYTES).max(used * 3 / 2).max(MIN_CHUNK)
}

/// How much the arena grows by when it must, at `len` bytes.
fn arena_step(len: usize) -> usize {
    (len / 8).max(MIN_ARENA_GROWTH)
}

/// Words a new bitmap holding `id` reserves.
fn dense_capacity(id: u32) -> usize {
    let words = bitmap_words(id);
    words + (words / 8).max(MIN_BITMAP_GROWTH)
}

/// Words [`set_bit`] adds to a bitmap of `len` words and `capacity` for `id`.
fn bitmap_growth(len: usize, capacity: usize, id: u32) -> usize {
    let word = id as usize / 64;
    if word < capacity {
        return 0;
    }
    let additional = (word + 1 - len).max((len / 8).max(MIN_BITMAP_GROWTH));
    len + additional - capacity
}

/// Words a bitmap holding `id` needs.
fn bitmap_words(id: u32) -> usize {
    id as usize / 64 + 1
}

/// Set `id` in `words`; returns the words of capacity added.
fn set_bit(words: &mut Vec<u64>, id: u32) -> usize {
    let word = id as usize / 64;
    let before = words.capacity();
    if word >= words.len() {
        let growth = bitmap_growth(words.len(), before, id);
        if growth > 0 {
            words.reserve_exact(before + growth - words.len());
        }
        words.resize(word + 1, 0);
    }
    words[word] |= 1 << (id % 64);
    words.capacity() - before
}

fn has_bit(words: &[u64], id: u32) -> bool {
    words
        .get(id as usize / 64)
        .is_some_and(|word| word & (1 << (id % 64)) != 0)
}

/// Nibbles `gap` takes: three of its bits each.
fn nibbles_of(gap: u32) -> usize {
    (32 - gap.leading_zeros() as usize).div_ceil(3).max(1)
}

/// Bytes `nibbles` nibbles take.
fn bytes_of(nibbles: usize) -> usize {
    nibbles.div_ceil(2)
}

/// Write `gap` into `bytes` from nibble `at` on (the low nibble of a byte
/// first; the nibbles written are still zero); returns the nibbles
/// written. Each holds three bits of the gap, lowest first, and its top
/// bit says another follows.
fn write_gap(bytes: &mut [u8], at: usize, mut gap: u32) -> usize {
    let mut written = 0;
    loop {
        let more = gap >= 8;
        let nibble = (gap & 7) as u8 | if more { 8 } else { 0 };
        let at = at + written;
        bytes[at / 2] |= nibble << (4 * (at % 2));
        written += 1;
        gap >>= 3;
        if !more {
            return written;
        }
    }
}

/// The ids of a list, decoded as they are read.
enum Ids<'a> {
    /// Gaps in nibbles `at..end` of `gaps`.
    Gaps {
        gaps: &'a [u8],
        at: usize,
        end: usize,
        next: u32,
    },
    Bits {
        words: &'a [u64],
        at: usize,
        word: u64,
    },
}

impl Iterator for Ids<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        match self {
            Ids::Gaps {
                gaps,
                at,
                end,
                next,
            } => {
                let mut gap = 0u32;
                let mut shift = 0;
                loop {
                    if *at >= *end {
                        return None;
                    }
                    let nibble = (gaps[*at / 2] >> (4 * (*at % 2))) & 0xF;
                    *at += 1;
                    gap |= u32::from(nibble & 7) << shift;
                    if nibble < 8 {
                        break;
                    }
                    shift += 3;
                }
                let id = *next + gap;
                *next = id + 1;
                Some(id)
            }
            Ids::Bits { words, at, word } => {
                while *word == 0 {
                    *at += 1;
                    *word = *words.get(*at)?;
                }
                let bit = word.trailing_zeros();
                *word &= *word - 1;
                Some((*at * 64) as u32 + bit)
            }
        }
    }
}

/// The ids of `sorted` that `other` (ascending) also holds.
fn keep_common(sorted: &[u32], other: impl Iterator<Item = u32>) -> Vec<u32> {
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

/// A set of ids below a bound, one bit each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Bits {
    words: Vec<u64>,
    len: usize,
}

impl Bits {
    /// No id, below `len`.
    pub(crate) fn new(len: usize) -> Bits {
        Bits {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    fn from_ids(ids: impl IntoIterator<Item = u32>, len: usize) -> Bits {
        let mut bits = Bits::new(len);
        for id in ids.into_iter().filter(|&id| (id as usize) < len) {
            bits.words[id as usize / 64] |= 1 << (id % 64);
        }
        bits
    }

    fn from_words(words: &[u64], len: usize) -> Bits {
        let mut bits = Bits::new(len);
        let common = bits.words.len().min(words.len());
        bits.words[..common].copy_from_slice(&words[..common]);
        bits.clear_past_len();
        bits
    }

    fn clear_past_len(&mut self) {
        if !self.len.is_multiple_of(64)
            && let Some(last) = self.words.last_mut()
        {
            *last &= (1 << (self.len % 64)) - 1;
        }
    }

    pub(crate) fn contains(&self, id: u32) -> bool {
        has_bit(&self.words, id)
    }

    /// Add `id`, growing the set past it when it must.
    pub(crate) fn insert(&mut self, id: u32) {
        let word = id as usize / 64;
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
        }
        self.words[word] |= 1 << (id % 64);
        self.len = self.len.max(id as usize + 1);
    }

    /// Bytes its words take.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.words.capacity() * 8
    }

    fn or(&mut self, other: &Bits) {
        self.words
            .iter_mut()
            .zip(&other.words)
            .for_each(|(a, b)| *a |= b);
    }

    /// Keep only the ids set in `words` (ids past its end are not).
    fn and_words(&mut self, words: &[u64]) {
        for (at, word) in self.words.iter_mut().enumerate() {
            *word &= words.get(at).copied().unwrap_or(0);
        }
    }

    /// How many ids it holds.
    #[cfg(test)]
    fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }
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
mod tests;
