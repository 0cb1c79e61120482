//! The content index: for each searched root, which files hold which
//! trigrams, so a cached grep reads only the files that may match.
//!
//! It sits below the cache, the watch and grep: the cache owns it, the
//! watch's events keep it exact, grep queries and fills it. It knows
//! entries and file identities, nothing of the three.
//!
//! - **Postings.** A file read whole as text (at most [`MAX_INDEXED`]
//!   bytes, no NUL, no byte-order mark, on the root's own local device) is
//!   indexed the second time a cached grep reads it unchanged (the first
//!   read only notes its identity, so a file read once never pays for it):
//!   each of its distinct trigrams, ASCII case folded, gets its id appended
//!   to that trigram's [`Postings`]. A query's trigram requirements (see
//!   `grep::needs`) select the files that may match from the lists
//!   alone; every other indexed file is ruled out without being opened.
//! - **Trust.** A ruled-out file counts as searched only while its content
//!   is provably the one indexed. While the scan follows filesystem events
//!   (watching on, no fallback) an event is the proof that a file changed:
//!   every event drops the index entry of the path it names at once (on
//!   the watcher's thread, before the answer that drains it), a directory
//!   renamed or removed drops everything below it (when the scan is
//!   patched), and a file indexed under the current watch is trusted with
//!   no system call. A read that began before an event on its path (or a
//!   directory above it) was routed is never trusted: every corpus keeps
//!   the paths of its last [`RECENT_EVENTS`] events, numbered, and a read
//!   notes the number it began at. Without watching, or for an entry made
//!   under an earlier watch, one `fstatat` must show the device, inode,
//!   size, mtime and ctime it was read with (every write moves ctime, which
//!   no program can set back); a file changed less than `RACY_MARGIN`
//!   before its read is indexed only when trusted by events, and forgotten
//!   rather than checked once that trust is gone. A file with several hard
//!   links is never trusted by events: a write through a name outside the
//!   watched tree raises no event on it.
//! - **Misses and answers.** A search reads the files the trigrams admit,
//!   and many of them hold the trigrams but no match (`unsafe` and `impl`
//!   apart, not `unsafe impl`). An agent repeats its searches, so each
//!   corpus keeps, for its most recent queries (a pattern and every switch
//!   that changes a file's report), what a search found in the files it
//!   read whole while they were provably the files indexed: nothing (a
//!   miss, a bit per file) or the file's report (an answer, within a byte
//!   bound); see `learned`. The next search for the same query rules the
//!   missed files out as the trigrams do and takes the answered ones' reports
//!   as they are, trusted by events or checked by identity as any ruled-out
//!   file. A file's entry going takes its answers with it (a changed file
//!   gets a new id); rewriting the lists forgets everything learned.
//! - **Memory.** All corpora together hold at most the cache policy's
//!   `content_bytes`. Past it, whole corpora leave, least recently searched
//!   first; a corpus that alone fills the budget indexes no further file
//!   (those are read by every search, as without an index) until dropped
//!   entries free room. Dropped entries leave dead ids in the lists, which
//!   are rewritten once the dead outnumber the living.

use std::{
    collections::{HashMap, VecDeque},
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex, MutexGuard, Weak,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    time::SystemTime,
};

pub(crate) mod identity;
mod learned;
mod paths;
mod postings;

pub(crate) use self::learned::{Answer, Answers, OfferedAnswer};
use self::{
    identity::Identity,
    learned::{Known, Learned},
    paths::Paths,
    postings::{Bits, Lists, Prepared, QuickHash},
};
use crate::entries::{Entries, FileType, is_within, path_to_bytes};

/// What a query needs of a file's content: every requirement a set of
/// alternatives, each alternative trigrams that must all occur in the file
/// (see `grep::needs`).
pub(crate) type Requirements = [Vec<Vec<u32>>];

/// The largest file indexed. Few source files are larger, and a larger
/// one costs little to read compared with its share of the index.
pub(crate) const MAX_INDEXED: usize = 4 << 20;

/// Events a corpus remembers for the reads that were under way when they
/// came: a read that began before the oldest of them is not trusted.
pub(crate) const RECENT_EVENTS: usize = 4096;

/// The share of the index (one part in this many) that may be room for
/// growth and chunks left behind before a search that indexed files gives
/// it back (see [`Corpus::tighten`]).
const SLACK_KEPT: usize = 8;

/// The share of the budget (one part in this many) a corpus gives to notes
/// of files read once. A note is what makes the second read index a file,
/// but it is not an index: with no bound, the first search of a tree of
/// half a million files filled the default budget with notes alone, and
/// no file was ever indexed. Past the share, a file read for the first
/// time is not noted (a later read notes it once notes have left, as
/// their files are indexed or forgotten).
const NOTES_SHARE: usize = 4;

/// Dead ids tolerated before the lists are rewritten, at least.
const DEAD_BEFORE_COMPACTING: usize = 4096;

/// Plans kept for searches repeated while the corpus is unchanged (see
/// [`Corpus::plan`]).
const PLANS_KEPT: usize = 4;

/// Entry lists an alignment is kept for at once (the partitions of one
/// root, and the list before a patch while a search still holds it).
const ALIGNMENTS_KEPT: usize = 4;

/// No file (an alignment's entry that is not indexed).
const NONE: u32 = u32::MAX;

/// Where a read began: the corpus's event count and the clock.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadStart {
    pub seq: u64,
    pub at: SystemTime,
}

impl ReadStart {
    /// A read beginning now, outside any corpus.
    pub(crate) fn now() -> ReadStart {
        ReadStart {
            seq: 0,
            at: SystemTime::now(),
        }
    }
}

/// Which watch vouches for an entry: the generation of the scan route that
/// followed every event of the root since the entry was read (0: none).
pub(crate) type Stamp = u64;

/// One indexed file, as a search's plan reads it for every candidate:
/// 16 bytes, so the plan of a large tree walks its slots from the cache
/// (its identity, read only to verify one, is kept apart in
/// `State::identities`).
#[derive(Clone, Copy, Debug)]
struct Slot {
    /// The watch that vouches for it, 0 for none.
    trust: Stamp,
    /// Read within `RACY_MARGIN` of its last change: trusted by events
    /// only, never by its identity.
    racy: bool,
    live: bool,
    /// Its search stops at a NUL byte (it counts as binary).
    binary: bool,
    /// Nothing of it is searched: an empty file, or a binary one whose
    /// search stops before its first line. No pattern matches it.
    bare: bool,
}

/// The files of an entry list by position: which id each has (or
/// [`NONE`]), so a query finds a candidate's entry without hashing its
/// path.
struct Alignment {
    entries: Weak<Entries>,
    ids: Vec<u32>,
}

/// One root's index.
pub(crate) struct Corpus {
    state: Mutex<State>,
    /// Bytes held, mirrored for the budget's checks.
    bytes: AtomicUsize,
    /// When a search last used it (the index's clock).
    used: AtomicU64,
    /// Left the index (the budget): nothing more is added.
    evicted: AtomicBool,
}

#[derive(Default)]
struct State {
    slots: Vec<Slot>,
    /// The identity each indexed file was read with, by id.
    identities: Vec<Identity>,
    /// The indexed files' paths, by id (as `slots`), and ids by path.
    paths: Paths,
    /// Files read once, with the identity they were read with.
    noted: HashMap<Box<[u8]>, Identity, QuickHash>,
    /// Bytes the notes take (see [`NOTES_SHARE`]).
    notes_bytes: usize,
    lists: Lists,
    live: usize,
    dead: usize,
    /// Events seen so far, and the paths of the most recent.
    seq: u64,
    recent: VecDeque<(u64, Box<[u8]>)>,
    alignments: Vec<Alignment>,
    learned: Learned,
    /// The plans of recent searches, valid while nothing here changes:
    /// every change clears them ([`State::revised`]).
    plans: Vec<KeptPlan>,
    /// Files were indexed since the last [`Corpus::tighten`].
    grown: bool,
    /// Admission stopped: the corpus alone fills the budget.
    full: bool,
    bytes: usize,
}

/// What an indexed read proves, for [`Corpus::offer`].
pub(crate) struct Offer<'a> {
    pub relative: &'a [u8],
    pub identity: Identity,
    /// Hard links to the file, from the same `fstat`.
    pub links: u64,
    /// What a search of the file searches: all of a text file; of a
    /// binary one, what comes before its first NUL (nothing, when it is
    /// searched as one block).
    pub content: &'a [u8],
    /// The search stops at a NUL byte.
    pub binary: bool,
    pub start: ReadStart,
    /// The watch that vouches for this search, if any.
    pub stamp: Option<Stamp>,
    /// The entry list and position of the file, to keep its alignment.
    pub entry: Option<(&'a Arc<Entries>, usize)>,
}

/// A search's plan over a cached list: the candidates that must be read or
/// checked, and the ruled-out files around them, in order.
#[derive(Default)]
pub(crate) struct Plan {
    pub items: Vec<Item>,
    /// The ruled-out files before each item.
    pub gaps: Vec<Gap>,
    /// ... and after the last.
    pub after: Gap,
    /// Ruled out and vouched for: no system call at all.
    pub trusted: u64,
    /// The answers of this search's query, for its items that have one.
    pub answers: Option<Answers>,
}

/// A plan kept for a search asking for the same again (see
/// [`Corpus::plan`]); the lists are held weakly, and compared by address.
struct KeptPlan {
    query: Box<str>,
    entries: Weak<Entries>,
    selected: Weak<[usize]>,
    stamp: Option<Stamp>,
    limits: (Option<u64>, bool),
    plan: Arc<Plan>,
}

/// Ruled-out files between two items: each counts as searched without a
/// match, and the binary ones as binary, as reading them would count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Gap {
    pub files: u32,
    pub binary: u32,
}

/// One candidate a search must look at.
#[derive(Clone)]
pub(crate) struct Item {
    /// Position in the selected candidates.
    pub candidate: u32,
    /// Known by the index (ruled out, or answered) if still the file
    /// indexed: an `fstatat` decides.
    pub verify: Option<Verify>,
    /// The file's id when a search for this search's query found a
    /// report in the file indexed (see [`Plan::answers`]): valid as it is
    /// when `verify` is `None` (the watch vouches), else once it passes.
    pub answered: Option<u32>,
}

/// An indexed file a search rules out once its identity is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Verify {
    pub id: u32,
    pub identity: Identity,
    pub binary: bool,
}

/// What a plan does with one candidate.
enum Fate {
    Read,
    /// Ruled out (no answer) or answered, once its identity is checked.
    Verify(Verify, bool),
    /// Answered, and vouched for.
    Answered(u32),
    /// Ruled out and vouched for (binary or not).
    Skip(bool),
}

/// The index's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ContentStats {
    /// Roots with an index.
    pub roots: usize,
    /// Files indexed.
    pub files: usize,
    /// Distinct trigrams with a posting list.
    pub trigrams: usize,
    /// Bytes the index holds (posting lists, files, paths, identities
    /// noted once).
    pub bytes: usize,
    /// Files cached greps ruled out without reading them, since the cache
    /// was created.
    pub files_skipped: u64,
    /// ... of which an `fstatat` proved unchanged (the others were
    /// vouched for by events).
    pub files_verified: u64,
    /// Files whose report a cached grep took, without reading them, from
    /// an earlier search for the same query (see the module docs).
    pub files_answered: u64,
}

/// Every root's index (part of the scan cache).
pub(crate) struct ContentIndex {
    max_bytes: usize,
    corpora: Mutex<HashMap<PathBuf, Arc<Corpus>>>,
    clock: AtomicU64,
    skipped: AtomicU64,
    verified: AtomicU64,
    answered: AtomicU64,
}

impl ContentIndex {
    /// An index holding at most about `max_bytes` (0: none, indexing off).
    pub(crate) fn new(max_bytes: usize) -> ContentIndex {
        ContentIndex {
            max_bytes,
            corpora: Mutex::default(),
            clock: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
            verified: AtomicU64::new(0),
            answered: AtomicU64::new(0),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.max_bytes > 0
    }

    /// The index of `root` (made on first use), marked as used now.
    pub(crate) fn corpus(&self, root: &Path) -> Option<Arc<Corpus>> {
        if !self.enabled() {
            return None;
        }
        let tick = self.clock.fetch_add(1, Ordering::Relaxed) + 1;
        let mut corpora = lock(&self.corpora);
        let corpus = corpora.entry(root.to_path_buf()).or_insert_with(|| {
            Arc::new(Corpus {
                state: Mutex::default(),
                bytes: AtomicUsize::new(0),
                used: AtomicU64::new(tick),
                evicted: AtomicBool::new(false),
            })
        });
        corpus.used.store(tick, Ordering::Relaxed);
        Some(Arc::clone(corpus))
    }

    /// The file (or directory) at `path` changed: an event or an
    /// invalidation named it. Every root above it forgets it (see
    /// [`Corpus::changed`]).
    pub(crate) fn changed_at(&self, path: &Path) {
        for (root, corpus) in lock(&self.corpora).iter() {
            if let Ok(relative) = path.strip_prefix(root)
                && !relative.as_os_str().is_empty()
            {
                corpus.changed(&path_to_bytes(relative));
            }
        }
    }

    /// The directory `relative` under `root` was removed or replaced:
    /// every entry below it goes.
    pub(crate) fn forget_within(&self, root: &Path, relative: &[u8]) {
        if let Some(corpus) = lock(&self.corpora).get(root) {
            corpus.forget_within(relative);
        }
    }

    /// Forget everything.
    pub(crate) fn clear(&self) {
        for (_, corpus) in lock(&self.corpora).drain() {
            corpus.evict();
        }
    }

    pub(crate) fn stats(&self) -> ContentStats {
        let corpora = lock(&self.corpora);
        let mut stats = ContentStats {
            roots: corpora.len(),
            files_skipped: self.skipped.load(Ordering::Relaxed),
            files_verified: self.verified.load(Ordering::Relaxed),
            files_answered: self.answered.load(Ordering::Relaxed),
            ..ContentStats::default()
        };
        for corpus in corpora.values() {
            let state = corpus.lock();
            stats.files += state.live;
            stats.trigrams += state.lists.count();
            stats.bytes += state.bytes;
        }
        stats
    }

    /// Count a file answered from what an earlier search learned.
    pub(crate) fn count_answered(&self) {
        self.answered.fetch_add(1, Ordering::Relaxed);
    }

    /// Count files ruled out: `trusted` without a system call, `verified`
    /// after one.
    pub(crate) fn count_skipped(&self, trusted: u64, verified: u64) {
        self.skipped
            .fetch_add(trusted + verified, Ordering::Relaxed);
        self.verified.fetch_add(verified, Ordering::Relaxed);
    }

    /// Offer a file just read whole to `corpus` (see [`Corpus::offer`]),
    /// making room for it when the budget is reached.
    pub(crate) fn offer(&self, corpus: &Corpus, offer: &Offer<'_>) {
        let notes_room = self.max_bytes / NOTES_SHARE;
        let mut room = self.room_for(corpus);
        while let Offered::NeedsRoom(bytes) = corpus.offer(offer, (room, notes_room)) {
            if !self.make_room(corpus, bytes) {
                return;
            }
            room = self.room_for(corpus);
        }
    }

    /// Remember what a search for `query` found in a file it read whole
    /// (see [`Corpus::learn`]), within the budget.
    pub(crate) fn learn(
        &self,
        corpus: &Corpus,
        (query, relative): (&str, &[u8]),
        (identity, links): (&Identity, u64),
        (start, stamp): (ReadStart, Option<Stamp>),
        found: Option<OfferedAnswer<'_>>,
    ) {
        let room = self.room_for(corpus);
        let at = (query, relative);
        corpus.learn(at, (identity, links), (start, stamp), (found, room));
    }

    /// The bytes `corpus` may hold: the budget less what the others hold.
    fn room_for(&self, corpus: &Corpus) -> usize {
        let others: usize = lock(&self.corpora)
            .values()
            .filter(|c| !std::ptr::eq(c.as_ref(), corpus))
            .map(|c| c.bytes.load(Ordering::Relaxed))
            .sum();
        self.max_bytes.saturating_sub(others)
    }

    /// Make room for `needed` more bytes in `corpus`: the least recently
    /// searched other corpora leave first; when none is left to leave,
    /// `corpus` stops admitting files and `false` is returned.
    fn make_room(&self, corpus: &Corpus, needed: usize) -> bool {
        let mut corpora = lock(&self.corpora);
        loop {
            let total: usize = corpora
                .values()
                .map(|c| c.bytes.load(Ordering::Relaxed))
                .sum();
            if total + needed <= self.max_bytes {
                return true;
            }
            let oldest = corpora
                .iter()
                .filter(|(_, c)| !std::ptr::eq(c.as_ref(), corpus))
                .min_by_key(|(_, c)| c.used.load(Ordering::Relaxed))
                .map(|(root, _)| root.clone());
            match oldest.and_then(|root| corpora.remove(&root)) {
                Some(evicted) => evicted.evict(),
                None => {
                    corpus.lock().full = true;
                    return false;
                }
            }
        }
    }
}

/// What became of an offer.
enum Offered {
    /// Indexed, noted, or left out.
    Done,
    /// Indexing or noting it takes this many bytes more than the room.
    NeedsRoom(usize),
}

impl Corpus {
    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// The number a read beginning now starts at.
    pub(crate) fn start(&self) -> ReadStart {
        ReadStart {
            seq: self.lock().seq,
            at: SystemTime::now(),
        }
    }

    fn evict(&self) {
        self.evicted.store(true, Ordering::Relaxed);
        let mut state = self.lock();
        *state = State::default();
        self.bytes.store(0, Ordering::Relaxed);
    }

    /// `relative` changed: its entry goes now, and reads under way that
    /// began before this are not trusted (see [`State::events_since`]).
    fn changed(&self, relative: &[u8]) {
        let mut state = self.lock();
        state.seq += 1;
        let seq = state.seq;
        state.recent.push_back((seq, relative.into()));
        if state.recent.len() > RECENT_EVENTS {
            state.recent.pop_front();
        }
        state.forget(relative);
        self.settle(&mut state);
    }

    fn forget_within(&self, dir: &[u8]) {
        let mut state = self.lock();
        let indexed = state.paths.iter().map(|(path, _)| path);
        let below: Vec<Box<[u8]>> = indexed
            .chain(state.noted.keys().map(|path| &path[..]))
            .filter(|path| is_within(path, dir))
            .map(Box::from)
            .collect();
        for path in below {
            state.forget(&path);
        }
        self.settle(&mut state);
    }

    /// Plan a search of `selected` (positions in `entries`): the
    /// candidates `needs` rules out (and those with nothing searched, for
    /// any pattern) are skipped when `stamp` vouches for them, checked by
    /// identity otherwise; files above `max_size` are read (their report
    /// says so), as are, in `multiline` mode, files with a NUL past their
    /// first block (such a search reads them whole, not up to the NUL).
    ///
    /// A search repeated while nothing of the corpus changed (no file
    /// indexed, forgotten or vouched for anew, nothing learned) asks for
    /// the plan it had: the last [`PLANS_KEPT`] are kept and shared.
    pub(crate) fn plan(
        &self,
        (needs, query): (Option<&Requirements>, Option<&str>),
        (entries, selected): (&Arc<Entries>, &Arc<[usize]>),
        stamp: Option<Stamp>,
        limits: (Option<u64>, bool),
    ) -> Arc<Plan> {
        let mut state = self.lock();
        let Some(query) = query else {
            return Arc::new(state.make_plan((needs, None), (entries, selected), stamp, limits));
        };
        state.learned.touch(query);
        let asked = |kept: &KeptPlan| {
            *kept.query == *query
                && std::ptr::eq(kept.entries.as_ptr(), Arc::as_ptr(entries))
                && std::ptr::eq(kept.selected.as_ptr(), Arc::as_ptr(selected))
                && (kept.stamp, kept.limits) == (stamp, limits)
        };
        if let Some(kept) = state.plans.iter().find(|kept| asked(kept)) {
            return Arc::clone(&kept.plan);
        }
        let plan =
            Arc::new(state.make_plan((needs, Some(query)), (entries, selected), stamp, limits));
        if state.plans.len() >= PLANS_KEPT {
            state.plans.remove(0);
        }
        state.plans.push(KeptPlan {
            query: query.into(),
            entries: Arc::downgrade(entries),
            selected: Arc::downgrade(selected),
            stamp,
            limits,
            plan: Arc::clone(&plan),
        });
        plan
    }

    /// A search for `query` read `relative` whole, from `start` on, and
    /// found it as `identity` (with `links` hard links): when that is
    /// provably the file indexed, the next search for `query` takes what
    /// it found (`None`: nothing, a miss) without reading it (see the
    /// module docs). `room`: the bytes the corpus may hold.
    fn learn(
        &self,
        (query, relative): (&str, &[u8]),
        (identity, links): (&Identity, u64),
        (start, stamp): (ReadStart, Option<Stamp>),
        (found, room): (Option<OfferedAnswer<'_>>, usize),
    ) {
        let mut state = self.lock();
        let Some(id) = state.paths.get(relative) else {
            return;
        };
        let slot = state.slots[id as usize];
        // As for the file's index entry: its identity proves the content
        // once settled, else only the watch (a racy entry is used only
        // while a watch vouches for it).
        let trusted = stamp.is_some() && links == 1 && !state.events_since(start.seq, relative);
        let settled = identity.settled_before(start.at) && !slot.racy;
        let same = state.identities[id as usize] == *identity;
        if !slot.live || !same || !(settled || trusted) {
            return;
        }
        let size = found.as_ref().map_or(0, |(_, bytes)| *bytes);
        if state.bytes + Learned::growth(query, id, size) > room {
            return;
        }
        let before = state.learned.bytes();
        match found {
            None => state.learned.miss(query, id),
            Some(answer) => state.learned.answer(query, id, answer),
        }
        state.revised();
        state.bytes = state.bytes - before + state.learned.bytes();
        self.bytes.store(state.bytes, Ordering::Relaxed);
    }

    /// After a search that indexed files: give back what the index holds
    /// beyond what it needs, once that is more than [`SLACK_KEPT`] of it
    /// (room kept for growth, chunks left behind, the map of files read
    /// once, which never shrinks by itself). Indexing a tree grows the
    /// lists file by file; once it is done, little more comes.
    pub(crate) fn tighten(&self) {
        let mut state = self.lock();
        if !std::mem::take(&mut state.grown) {
            return;
        }
        let noted_room = state.noted.capacity() - state.noted.len();
        let slots_room = state.slots.capacity() - state.slots.len();
        let slack = state.lists.slack()
            + noted_room * size_of::<(Box<[u8]>, Identity)>()
            + slots_room * FILE_BYTES;
        if slack <= state.bytes / SLACK_KEPT {
            return;
        }
        let before = state.lists.heap_bytes() + state.paths.heap_bytes();
        state.lists.tighten();
        state.paths.shrink();
        state.noted.shrink_to_fit();
        // Copied rather than shrunk in place: see `Lists::shrink`.
        state.slots = state.slots.to_vec();
        state.identities = state.identities.to_vec();
        state.bytes = state.bytes - before + state.lists.heap_bytes() + state.paths.heap_bytes();
        self.settle(&mut state);
    }

    /// Whether the file `verify.id` still has its identity, as an
    /// `fstatat` of its path found it (with `links` hard links) after
    /// `start`; when so and `stamp` is given, the watch vouches for it from
    /// now on. A file found changed is forgotten.
    pub(crate) fn verified(
        &self,
        relative: &[u8],
        verify: &Verify,
        (found, links): (&Identity, u64),
        (start, stamp): (ReadStart, Option<Stamp>),
    ) -> bool {
        let id = verify.id;
        let mut state = self.lock();
        if state.paths.get(relative) != Some(id) {
            return false;
        }
        if *found != verify.identity {
            state.forget(relative);
            self.settle(&mut state);
            return false;
        }
        if let Some(stamp) = stamp
            && links == 1
            && !state.events_since(start.seq, relative)
        {
            state.set_trust(id, stamp);
        }
        true
    }

    /// Consider indexing a file just read whole, within `room` bytes for
    /// the whole corpus and `notes_room` for its notes (see
    /// [`NOTES_SHARE`]).
    fn offer(&self, offer: &Offer<'_>, (room, notes_room): (usize, usize)) -> Offered {
        let trust = match self.admit(offer, (room, notes_room)) {
            Admitted::Index(trust) => trust,
            Admitted::No => return Offered::Done,
            Admitted::NeedsRoom(bytes) => return Offered::NeedsRoom(bytes),
        };
        let trigrams = distinct_trigrams(offer.content);
        let mut state = self.lock();
        // Re-checked under the lock: an event, or another worker's read of
        // the same path, may have come meanwhile.
        let noted = state.noted.get(offer.relative) == Some(&offer.identity);
        let still_trusted = trust == 0 || !state.events_since(offer.start.seq, offer.relative);
        let settled = offer.identity.settled_before(offer.start.at);
        if !noted || !(still_trusted || settled) || self.evicted.load(Ordering::Relaxed) {
            return Offered::Done;
        }
        let prepared = state.prepare(offer.relative, &trigrams);
        let growth = prepared.growth;
        if state.bytes.saturating_add(growth) > room {
            return Offered::NeedsRoom(growth);
        }
        let trust = if still_trusted { trust } else { 0 };
        let id = state.insert(offer, (&trigrams, &prepared), trust, !settled);
        if let Some((entries, at)) = offer.entry {
            align(&mut state, entries, at, id);
        }
        self.settle(&mut state);
        Offered::Done
    }

    /// What to do with a read, under the lock: index it (with the stamp it
    /// will carry), or not now (read for the first time, so only noted;
    /// already indexed; not provably settled; no admission), or first make
    /// room for its note.
    fn admit(&self, offer: &Offer<'_>, (room, notes_room): (usize, usize)) -> Admitted {
        let mut state = self.lock();
        let trust = match offer.stamp {
            Some(stamp)
                if offer.links == 1 && !state.events_since(offer.start.seq, offer.relative) =>
            {
                stamp
            }
            _ => 0,
        };
        let settled = offer.identity.settled_before(offer.start.at);
        if let Some(id) = state.paths.get(offer.relative) {
            let slot = state.slots[id as usize];
            let same = state.identities[id as usize] == offer.identity;
            if same && !slot.racy && (settled || trust != 0) {
                if trust != 0 {
                    state.set_trust(id, trust);
                }
                if let Some((entries, at)) = offer.entry {
                    align(&mut state, entries, at, id);
                }
                return Admitted::No;
            }
            state.forget(offer.relative);
        }
        if trust == 0 && !settled || state.full || self.evicted.load(Ordering::Relaxed) {
            return Admitted::No;
        }
        if state.noted.get(offer.relative) == Some(&offer.identity) {
            return Admitted::Index(trust);
        }
        let bytes = noted_bytes(offer.relative);
        state.forget(offer.relative);
        if state.notes_bytes + bytes > notes_room {
            return Admitted::No;
        }
        if state.bytes + bytes > room {
            return Admitted::NeedsRoom(bytes);
        }
        state.noted.insert(offer.relative.into(), offer.identity);
        state.notes_bytes += bytes;
        state.bytes += bytes;
        self.bytes.store(state.bytes, Ordering::Relaxed);
        Admitted::No
    }

    /// After a change to `state`: rewrite the lists when the dead
    /// outnumber the living, and publish the size.
    fn settle(&self, state: &mut State) {
        if state.dead >= DEAD_BEFORE_COMPACTING && state.dead > state.live {
            state.compact();
        }
        self.bytes.store(state.bytes, Ordering::Relaxed);
    }
}

/// What [`Corpus::admit`] decided.
enum Admitted {
    Index(Stamp),
    No,
    NeedsRoom(usize),
}

impl State {
    /// A plan over `selected` (see [`Corpus::plan`]).
    fn make_plan(
        &mut self,
        (needs, query): (Option<&Requirements>, Option<&str>),
        (entries, selected): (&Arc<Entries>, &[usize]),
        stamp: Option<Stamp>,
        (max_size, multiline): (Option<u64>, bool),
    ) -> Plan {
        let mut plan = Plan::default();
        let may_match = needs.map(|needs| self.may_match_bits(needs));
        let at = alignment_of(self, entries);
        let state = &*self;
        let (ids, slots) = (&state.alignments[at].ids, &state.slots);
        let judge = Judge {
            slots,
            identities: &state.identities,
            may_match: may_match.as_ref(),
            known: query.and_then(|query| state.learned.of(query)),
            max_size,
            multiline,
            stamp,
        };
        let mut gap = Gap::default();
        for (candidate, &entry) in selected.iter().enumerate() {
            let verify = match judge.fate(ids[entry]) {
                Fate::Skip(binary) => {
                    gap.files += 1;
                    gap.binary += u32::from(binary);
                    plan.trusted += 1;
                    continue;
                }
                Fate::Read => (None, None),
                Fate::Verify(verify, answered) => (Some(verify), answered.then_some(verify.id)),
                Fate::Answered(id) => (None, Some(id)),
            };
            plan.items.push(Item {
                candidate: candidate as u32,
                verify: verify.0,
                answered: verify.1,
            });
            plan.gaps.push(std::mem::take(&mut gap));
        }
        plan.after = gap;
        plan.answers = judge.known.map(|known| Arc::clone(known.answers));
        plan
    }

    /// Something a plan reads changed: no kept plan stands any more.
    fn revised(&mut self) {
        self.plans.clear();
    }

    /// File `id` is vouched for by `stamp` (0: by none) from now on.
    fn set_trust(&mut self, id: u32, stamp: Stamp) {
        if self.slots[id as usize].trust != stamp {
            self.slots[id as usize].trust = stamp;
            self.revised();
        }
    }

    /// Drop the entry (and note) of `relative`.
    fn forget(&mut self, relative: &[u8]) {
        self.revised();
        if self.noted.remove(relative).is_some() {
            self.bytes = self.bytes.saturating_sub(noted_bytes(relative));
            self.notes_bytes -= noted_bytes(relative);
        }
        if let Some(id) = self.paths.remove(relative) {
            let before = self.learned.bytes();
            self.learned.forget(id);
            self.bytes = self.bytes - before + self.learned.bytes();
            let slot = &mut self.slots[id as usize];
            if slot.live {
                slot.live = false;
                self.live -= 1;
                self.dead += 1;
            }
        }
    }

    /// Whether an event on `relative`, or on a directory above it, came
    /// after `seq`, or may have (it is older than the events kept).
    fn events_since(&self, seq: u64, relative: &[u8]) -> bool {
        if self.seq == seq {
            return false;
        }
        if self
            .recent
            .front()
            .is_none_or(|(first, _)| *first > seq + 1)
        {
            return true;
        }
        self.recent
            .iter()
            .rev()
            .take_while(|(at, _)| *at > seq)
            .any(|(_, path)| is_within(relative, path))
    }

    /// Where a file at `relative` with `trigrams` goes, and the bytes
    /// [`State::insert`] would add for it (its note's are not taken off:
    /// an upper bound).
    fn prepare(&self, relative: &[u8], trigrams: &[u32]) -> Prepared {
        let mut prepared = self.lists.prepare(trigrams, self.slots.len() as u32);
        prepared.growth = prepared
            .growth
            .saturating_add(FILE_BYTES)
            .saturating_add(self.paths.growth(relative));
        prepared
    }

    /// Index `offer` as a new file with these trigrams, where `prepared`
    /// found their lists; returns its id.
    fn insert(
        &mut self,
        offer: &Offer<'_>,
        (trigrams, prepared): (&[u32], &Prepared),
        trust: Stamp,
        racy: bool,
    ) -> u32 {
        self.revised();
        let id = self.slots.len() as u32;
        self.identities.push(offer.identity);
        self.slots.push(Slot {
            trust,
            racy,
            live: true,
            binary: offer.binary,
            bare: offer.content.is_empty(),
        });
        self.live += 1;
        if self.noted.remove(offer.relative).is_some() {
            self.bytes = self.bytes.saturating_sub(noted_bytes(offer.relative));
            self.notes_bytes -= noted_bytes(offer.relative);
        }
        self.grown = true;
        let before = self.lists.heap_bytes() + self.paths.heap_bytes();
        let pushed = self.paths.push(offer.relative, id);
        debug_assert!(pushed, "`prepare` leaves no room past what the paths take");
        self.lists.add(trigrams, prepared, id);
        self.bytes =
            self.bytes - before + self.lists.heap_bytes() + self.paths.heap_bytes() + FILE_BYTES;
        id
    }

    /// Rewrite every list without the dead ids, numbering the living anew
    /// (in the same order, so the lists stay ascending).
    fn compact(&mut self) {
        self.revised();
        let mut renumbered = vec![NONE; self.slots.len()];
        let mut slots = Vec::with_capacity(self.live);
        let mut identities = Vec::with_capacity(self.live);
        for (old, slot) in self.slots.iter().enumerate() {
            if slot.live {
                renumbered[old] = slots.len() as u32;
                slots.push(*slot);
                identities.push(self.identities[old]);
            }
        }
        self.lists = self.lists.renumbered(&renumbered);
        self.paths = self.paths.renumbered(&renumbered);
        let mut bytes = self.lists.heap_bytes() + self.paths.heap_bytes();
        bytes += slots.len() * FILE_BYTES;
        bytes += self.noted.keys().map(|p| noted_bytes(p)).sum::<usize>();
        self.slots = slots;
        self.identities = identities;
        self.dead = 0;
        self.alignments.clear();
        self.learned = Learned::default();
        self.bytes = bytes;
        self.full = false;
    }
}

/// Bytes an indexed file costs besides its path and lists: its slot and
/// identity.
const FILE_BYTES: usize = size_of::<Slot>() + size_of::<Identity>();

/// Bytes a file read once costs (its map entry and text).
fn noted_bytes(relative: &[u8]) -> usize {
    size_of::<(Box<[u8]>, Identity)>() + 8 + relative.len()
}

/// What decides a candidate's [`Fate`] in a plan.
struct Judge<'a> {
    slots: &'a [Slot],
    identities: &'a [Identity],
    /// The files the pattern may match; `None` when its needs rule out
    /// nothing.
    may_match: Option<&'a Bits>,
    /// What searches for the same query found in files they read.
    known: Option<Known<'a>>,
    max_size: Option<u64>,
    multiline: bool,
    stamp: Option<Stamp>,
}

impl Judge<'_> {
    /// The fate of the candidate indexed as `id` ([`NONE`]: not indexed).
    fn fate(&self, id: u32) -> Fate {
        let Some(slot) = self.slots.get(id as usize) else {
            return Fate::Read;
        };
        let identity = || self.identities[id as usize];
        let small_enough = self.max_size.is_none_or(|max| identity().size <= max);
        let same_search = !(self.multiline && slot.binary && !slot.bare);
        let known = self.known.as_ref();
        let unmatched = slot.bare
            || self.may_match.is_some_and(|may| !may.contains(id))
            || known.is_some_and(|known| known.missed.contains(id));
        let answered = !unmatched && known.is_some_and(|known| known.answers.contains_key(&id));
        if !slot.live || !small_enough || !same_search || !(unmatched || answered) {
            return Fate::Read;
        }
        if self.stamp.is_some_and(|stamp| stamp == slot.trust) {
            return match answered {
                true => Fate::Answered(id),
                false => Fate::Skip(slot.binary),
            };
        }
        if slot.racy {
            return Fate::Read;
        }
        let verify = Verify {
            id,
            identity: identity(),
            binary: slot.binary,
        };
        Fate::Verify(verify, answered)
    }
}

/// The position of `entries`' alignment, built when missing.
fn alignment_of(state: &mut State, entries: &Arc<Entries>) -> usize {
    state.alignments.retain(|a| a.entries.strong_count() > 0);
    if let Some(at) = state
        .alignments
        .iter()
        .position(|a| std::ptr::eq(a.entries.as_ptr(), Arc::as_ptr(entries)))
    {
        return at;
    }
    let ids = entries
        .iter()
        .map(|entry| match entry.file_type {
            FileType::File => state.paths.get(entry.path).unwrap_or(NONE),
            _ => NONE,
        })
        .collect();
    if state.alignments.len() >= ALIGNMENTS_KEPT {
        state.alignments.remove(0);
    }
    state.alignments.push(Alignment {
        entries: Arc::downgrade(entries),
        ids,
    });
    state.alignments.len() - 1
}

/// Record that entry `at` of `entries` is file `id`.
fn align(state: &mut State, entries: &Arc<Entries>, at: usize, id: u32) {
    let found = alignment_of(state, entries);
    if let Some(slot) = state.alignments[found].ids.get_mut(at)
        && *slot != id
    {
        *slot = id;
        state.revised();
    }
}

impl State {
    /// The files `needs` may match, as bits over every id.
    fn may_match_bits(&self, needs: &Requirements) -> Bits {
        self.lists.matching(needs, self.slots.len())
    }
}

std::thread_local! {
    /// One bit per possible trigram, for deduplicating a file's trigrams
    /// in one pass (2 MiB per searching thread, cleared after each file).
    static SEEN: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The distinct trigrams of `content`, ASCII case folded (see
/// `grep::needs`), in the order they first occur.
pub(crate) fn distinct_trigrams(content: &[u8]) -> Vec<u32> {
    SEEN.with_borrow_mut(|seen| {
        if seen.is_empty() {
            seen.resize((1 << 24) / 64, 0);
        }
        let mut found = Vec::new();
        let mut window = 0u32;
        for (at, &byte) in content.iter().enumerate() {
            window = (window << 8 | u32::from(byte.to_ascii_lowercase())) & 0xFF_FFFF;
            if at < 2 {
                continue;
            }
            let (word, bit) = (window as usize / 64, 1u64 << (window % 64));
            if seen[word] & bit == 0 {
                seen[word] |= bit;
                found.push(window);
            }
        }
        for &trigram in &found {
            seen[trigram as usize / 64] = 0;
        }
        found
    })
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests;
