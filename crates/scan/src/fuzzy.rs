//! `fuzzy_find`: rank a scan's paths against a short query, the way a file
//! mention (`@httpserap`) or an agent looking for "that file" needs.
//!
//! Matching is nucleo's (fzf's algorithm with path-aware bonuses: `/` is a
//! word boundary). Ranking puts explicit tiers above nucleo's score, because
//! a user first asks "is this the thing I named?" and only then "how well do
//! the letters line up?". Best first:
//!
//! 1. **exact name**: a query word equals the entry's name (`main.rs` finds
//!    `src/main.rs`);
//! 2. **name prefix** (`main` → `src/main.rs`);
//! 3. **name substring** (`ain.r` → `src/main.rs`);
//! 4. **path substring** (`test` → `attest/a.rs`);
//! 5. **scattered in the name**: the letters appear in order within the
//!    name (`httpserap` → `http_server_api_tests/`, ahead of
//!    `src/http/server_api.ts`, whose letters span two components);
//! 6. **scattered** across the path.
//!
//! An entry's *name* is its last path component; for a query word that
//! contains `/` it is as many trailing components as the word has, so
//! `lib/util.ts` names `src/lib/util.ts` exactly. A query of several words
//! sits in the tier of its weakest word. Within a tier: the higher nucleo
//! score (summed over words), then the shallower path (fewer `/`), then
//! path order ([`compare_paths`](crate::compare_paths)). The returned
//! [`FuzzyMatch::score`] carries the tier in its high bits, so a higher
//! score always ranks first and no score of a lower tier can reach one of a
//! higher tier, however well its letters line up.
//!
//! Query syntax:
//! - surrounding whitespace, a leading `@` (mention syntax) and `./`, and a
//!   trailing `/` are dropped: `@src/` looks for `src`;
//! - words separated by spaces must all match, in any order; `\ ` is a
//!   literal space. Nothing else is special: `^ $ ! '` are ordinary
//!   characters, as they can be in file names;
//! - smart case, per word: an all-lowercase word ignores case, a word with
//!   an uppercase letter respects it. An ASCII word also matches Latin
//!   letters with diacritics (`menu` finds `menü.md`);
//! - the empty query matches every entry with score 0, shallowest first,
//!   then in path order.
//!
//! Matching sees the path without the trailing `/` that returned
//! directories carry; [`FuzzyMatch::indices`] are character (not byte)
//! positions in the returned path, ready for highlighting.
//!
//! Performance contract: the top 100 of a cached 70 k-entry list in a few
//! milliseconds, of a million entries in about 12 to 25 ms (release build).
//! With the scan's name index, one pass per ASCII query word follows its
//! letters through each directory's name (see `Progress`; on a large
//! list each word after the first on a thread of its own), then one
//! ranking pass with one [`Matcher`] and one decode buffer per call and no
//! allocation per entry (ASCII paths are matched in place) passes over what
//! a word cannot match; a match whose best possible tier (found from its
//! bytes) cannot enter the top N is counted without nucleo scoring it, and a
//! tier is only worked out for an entry whose score would enter. Without
//! the index an ASCII query word rejects a path in one byte loop before
//! nucleo runs. Indices and display strings are computed for the returned
//! matches only; memory is O(`max_results`) however many entries match,
//! plus a byte per entry and word with the index; the [`CancelToken`] is
//! polled every [`CANCEL_POLL_INTERVAL`] entries.

use std::{cmp::Reverse, path::PathBuf, sync::Arc};

use nucleo_matcher::{
    Config, Matcher, Utf32Str,
    pattern::{Atom, AtomKind, CaseMatching, Normalization, Pattern},
};

use crate::{
    beneath::{Beneath, search_root},
    cache::{ScanCache, ScanKey},
    cancel::{CANCEL_POLL_INTERVAL, CancelToken},
    entries::{Entries, FileType},
    error::Result,
    names::{self, NameIndex, Parent},
    node_modules,
    top_n::TopN,
    unreadable::{self, Unreadable},
    walk::{Detail, Needs, ScanPolicy},
};

/// Default number of returned matches: a screenful for a picker, more than
/// an agent reads before refining its query.
pub const DEFAULT_MAX_RESULTS: usize = 100;

/// Entries from which each query word after the first follows its
/// progress on a thread of its own: a pass over 100 000 entries takes
/// about 2 ms, well above the cost of starting a thread (tens of µs).
const PARALLEL_PROGRESS_ENTRIES: usize = 100_000;

/// Bits of [`FuzzyMatch::score`] below the tier: nucleo's score lives here.
const TIER_SHIFT: u32 = 24;

/// nucleo's score is clamped to stay below the tier bits. Each word scores
/// at most `u16::MAX`, so only a query of over 256 perfect words could
/// reach the clamp, and even then the tiers stay apart.
const MAX_NUCLEO_SCORE: u32 = (1 << TIER_SHIFT) - 1;

/// What to look for and where. Field docs give the defaults of [`FuzzyOptions::new`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuzzyOptions {
    /// The query (see the module docs for its syntax).
    pub query: String,
    /// The directory to search (relative to the current directory).
    pub path: PathBuf,
    /// Include dot-files and dot-directories. Default: `false`
    /// ([`ScanPolicy::DEFAULT`], the one default of every search).
    pub include_hidden: bool,
    /// Honour `.gitignore`/`.ignore` files. Default: `true`.
    pub use_gitignore: bool,
    /// Include `node_modules`; `None` applies [`node_modules::include_node_modules`]
    /// to the query. Default: `None`.
    pub include_node_modules: Option<bool>,
    /// Return at most this many matches. Default: [`DEFAULT_MAX_RESULTS`].
    pub max_results: usize,
    /// Use the shared scan cache. Default: `false` (walk fresh, touch nothing).
    pub cache: bool,
    /// Stay beneath `path`, as [`crate::GlobOptions::confine`] does: only
    /// entries reached from a handle on it without following a link are
    /// ranked. Default: `false`.
    pub confine: bool,
}

impl FuzzyOptions {
    /// Options for `query` under `path`, every other field at its default.
    pub fn new(query: impl Into<String>, path: impl Into<PathBuf>) -> FuzzyOptions {
        FuzzyOptions {
            query: query.into(),
            path: path.into(),
            include_hidden: ScanPolicy::DEFAULT.include_hidden,
            use_gitignore: ScanPolicy::DEFAULT.use_gitignore,
            include_node_modules: None,
            max_results: DEFAULT_MAX_RESULTS,
            cache: false,
            confine: false,
        }
    }
}

/// One returned match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuzzyMatch {
    /// Relative, `/`-separated, as the raw bytes of its names (see
    /// [`FuzzyMatch::path_lossy`]); directories end with `/`.
    pub path: Vec<u8>,
    /// The entry's type.
    pub file_type: FileType,
    /// Higher ranks first; the tier sits in the high bits (module docs).
    pub score: u32,
    /// Why it matched.
    pub tier: Tier,
    /// Matched character positions in `path`, ascending, counting each
    /// byte that is not part of UTF-8 as one character (as
    /// [`FuzzyMatch::path_lossy`] and the escaped form of
    /// [`natives_core::names`] show it).
    pub indices: Vec<u32>,
}

impl FuzzyMatch {
    /// The path as text, each byte that is not part of UTF-8 read as one
    /// U+FFFD, so [`FuzzyMatch::indices`] count its characters.
    pub fn path_lossy(&self) -> String {
        let mut text = String::with_capacity(self.path.len());
        for chunk in self.path.utf8_chunks() {
            text.push_str(chunk.valid());
            text.extend(chunk.invalid().iter().map(|_| char::REPLACEMENT_CHARACTER));
        }
        text
    }
}

/// The answer.
#[derive(Clone, Debug)]
pub struct FuzzyOutcome {
    /// The canonical root the paths are relative to.
    pub root: PathBuf,
    /// The best matches, best first.
    pub matches: Vec<FuzzyMatch>,
    /// Matches before `max_results` was applied.
    pub total_matches: usize,
    /// What the walk could not enter or read, in path order (see
    /// [`crate::Entries::unreadable`]); none inside a `node_modules` the
    /// search leaves out.
    pub unreadable: Vec<Unreadable>,
}

/// Run a fuzzy find. `on_match` sees each returned match once, best first,
/// after the pass (only then is the ranking known).
pub fn fuzzy_find(
    options: &FuzzyOptions,
    cache: &ScanCache,
    token: &CancelToken,
    on_match: &mut dyn FnMut(&FuzzyMatch),
) -> Result<FuzzyOutcome> {
    token.check()?;
    let (root, beneath) = search_root(&options.path, options.confine)?;
    let key = ScanKey {
        root,
        policy: ScanPolicy {
            include_hidden: options.include_hidden,
            use_gitignore: options.use_gitignore,
        },
    };
    let mut finder = Finder::new(options);
    finder.beneath = beneath;
    let needs = Needs {
        node_modules: finder.include_node_modules,
        detail: Detail::TypeOnly,
    };
    let scan = if options.cache {
        cache.get_or_scan(&key, needs, token)?
    } else {
        cache.walk_fresh(&key, needs, token)?
    };
    let mut entries = Arc::clone(&scan.entries);
    let mut ranked = finder.rank(&entries, cache.name_index(&key, &entries, token), token)?;
    let recheck = options.cache && !finder.query.is_empty();
    if ranked.total == 0 && recheck && cache.rechecks_empty(&scan) {
        entries = cache.force_rescan(&key, token)?.entries;
        ranked = finder.rank(&entries, cache.name_index(&key, &entries, token), token)?;
    }
    let matches = finder.matches(&entries, &ranked.best);
    matches.iter().for_each(on_match);
    let unreadable = unreadable::reported(entries.unreadable(), finder.include_node_modules);
    Ok(FuzzyOutcome {
        root: key.root,
        matches,
        total_matches: ranked.total,
        unreadable: match &finder.beneath {
            Some(beneath) => beneath.vouch(unreadable),
            None => unreadable,
        },
    })
}

/// Why an entry matched (module docs); declared worst first, so greater
/// is better. Callers can tell a confident match from a guess by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tier {
    /// The letters appear in order, across path components.
    Scattered,
    /// The letters appear in order within the name.
    NameScattered,
    /// The query is a substring of the path (not of the name).
    PathSubstring,
    /// The query is a substring of the name.
    NameSubstring,
    /// The name starts with the query.
    NamePrefix,
    /// The name is the query.
    ExactName,
}

impl Tier {
    const ALL: [Tier; 6] = [
        Tier::Scattered,
        Tier::NameScattered,
        Tier::PathSubstring,
        Tier::NameSubstring,
        Tier::NamePrefix,
        Tier::ExactName,
    ];

    /// The tier a returned score carries in its high bits.
    fn of_score(score: u32) -> Tier {
        Tier::ALL[((score >> TIER_SHIFT) as usize).min(Tier::ALL.len() - 1)]
    }

    /// A stable camelCase name (`exactName`, `namePrefix`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Tier::Scattered => "scattered",
            Tier::NameScattered => "nameScattered",
            Tier::PathSubstring => "pathSubstring",
            Tier::NameSubstring => "nameSubstring",
            Tier::NamePrefix => "namePrefix",
            Tier::ExactName => "exactName",
        }
    }
}

/// Position in the ranking, greater is better: score (tier first), then
/// fewer `/`, then earlier in the path-ordered list.
type Rank = (u32, Reverse<usize>, Reverse<usize>);

fn rank(tier: Tier, nucleo: u32, depth: usize, index: usize) -> Rank {
    let score = (tier as u32) << TIER_SHIFT | nucleo.min(MAX_NUCLEO_SCORE);
    (score, Reverse(depth), Reverse(index))
}

/// One query word, prepared for each way it can match.
struct Word {
    fuzzy: Atom,
    exact: Atom,
    prefix: Atom,
    substring: Atom,
    /// Trailing path components the word is compared with as a name.
    components: usize,
    /// The needle when it is ASCII, to reject paths before nucleo runs.
    ascii: Option<AsciiNeedle>,
}

impl Word {
    fn new(fuzzy: Atom) -> Word {
        let with_kind = |kind| {
            let mut atom = fuzzy.clone();
            atom.kind = kind;
            atom
        };
        let needle = fuzzy.needle_text();
        let slashes = needle.chars().filter(|&c| c == '/').count();
        let ascii = needle.is_ascii().then(|| AsciiNeedle::new(needle));
        Word {
            ascii,
            exact: with_kind(AtomKind::Exact),
            prefix: with_kind(AtomKind::Prefix),
            substring: with_kind(AtomKind::Substring),
            components: slashes + 1,
            fuzzy,
        }
    }

    /// nucleo's score of `path`, or `None` when the word misses it.
    fn score(&self, path: Utf32Str<'_>, matcher: &mut Matcher) -> Option<u16> {
        if let (Utf32Str::Ascii(haystack), Some(needle)) = (path, &self.ascii)
            && !needle.is_subsequence_of(haystack)
        {
            return None;
        }
        self.fuzzy.score(path, matcher)
    }

    fn name(&self, path: Utf32Str<'_>) -> usize {
        name_start(path, self.components)
    }

    /// The tier of a path this word already matched fuzzily.
    fn tier(&self, path: Utf32Str<'_>, matcher: &mut Matcher) -> Tier {
        let name = path.slice(self.name(path)..);
        if self.substring.score(name, matcher).is_none() {
            if self.substring.score(path, matcher).is_some() {
                return Tier::PathSubstring;
            }
            if self.fuzzy.score(name, matcher).is_some() {
                return Tier::NameScattered;
            }
            return Tier::Scattered;
        }
        if self.exact.score(name, matcher).is_some() {
            Tier::ExactName
        } else if self.prefix.score(name, matcher).is_some() {
            Tier::NamePrefix
        } else {
            Tier::NameSubstring
        }
    }

    /// The best tier an ASCII `path` this word matches can be in, found
    /// without nucleo: a name tier needs the word's letters in order in
    /// the name, and above the scattered one the word whole in it; the
    /// path substring tier needs the word whole in the path.
    fn tier_bound(&self, needle: &AsciiNeedle, path: &[u8]) -> Tier {
        let name = &path[self.name(Utf32Str::Ascii(path))..];
        if needle.occurs_in(name) {
            Tier::ExactName
        } else if needle.occurs_in(path) {
            Tier::PathSubstring
        } else if needle.is_subsequence_of(name) {
            Tier::NameScattered
        } else {
            Tier::Scattered
        }
    }

    /// Push the positions that put `path` in this word's tier.
    fn indices(&self, path: Utf32Str<'_>, matcher: &mut Matcher, out: &mut Vec<u32>) {
        let start = self.name(path);
        let name = path.slice(start..);
        let (atom, haystack, offset) = match self.tier(path, matcher) {
            Tier::ExactName => (&self.exact, name, start),
            Tier::NamePrefix => (&self.prefix, name, start),
            Tier::NameSubstring => (&self.substring, name, start),
            Tier::PathSubstring => (&self.substring, path, 0),
            Tier::NameScattered => (&self.fuzzy, name, start),
            Tier::Scattered => (&self.fuzzy, path, 0),
        };
        let from = out.len();
        atom.indices(haystack, matcher, out);
        out[from..].iter_mut().for_each(|i| *i += offset as u32);
    }
}

/// An ASCII word as bytes, with nucleo's smart-case decision.
struct AsciiNeedle {
    bytes: Vec<u8>,
    /// No uppercase letter: compare ignoring ASCII case.
    fold: bool,
}

impl AsciiNeedle {
    fn new(needle: Utf32Str<'_>) -> AsciiNeedle {
        let bytes: Vec<u8> = needle.chars().map(|c| c as u8).collect();
        let fold = !bytes.iter().any(u8::is_ascii_uppercase);
        AsciiNeedle { bytes, fold }
    }

    /// Whether the needle's bytes occur in order in `haystack`: exactly the
    /// ASCII paths nucleo can match, found by one tight byte loop. Most
    /// entries fail a query, and rejecting them here costs a fraction of
    /// nucleo's own prefilter (a `memchr` call per needle character).
    fn is_subsequence_of(&self, haystack: &[u8]) -> bool {
        let Some(&first) = self.bytes.first() else {
            return true;
        };
        let Some(start) = self.find(first, haystack) else {
            return false;
        };
        self.advance(1, &haystack[start + 1..]) == self.bytes.len()
    }

    /// How many bytes of the needle occur in order in a text in which its
    /// first `done` bytes occur, followed by `haystack`: taking each needle
    /// byte at its first occurrence is never worse than any other choice,
    /// so a path's count follows from its parent's.
    fn advance(&self, mut done: usize, haystack: &[u8]) -> usize {
        let needle = self.bytes.as_slice();
        for &byte in haystack {
            let Some(&want) = needle.get(done) else {
                break;
            };
            let byte = if self.fold {
                byte.to_ascii_lowercase()
            } else {
                byte
            };
            done += usize::from(byte == want);
        }
        done
    }

    /// Whether the needle's bytes occur together in `haystack`: exactly
    /// the ASCII paths nucleo's substring match finds it in.
    fn occurs_in(&self, haystack: &[u8]) -> bool {
        let Some((&first, rest)) = self.bytes.split_first() else {
            return true;
        };
        let mut from = 0;
        while let Some(at) = self.find(first, &haystack[from..]) {
            let after = &haystack[from + at + 1..];
            let same = |(&h, &n): (&u8, &u8)| {
                if self.fold {
                    h.to_ascii_lowercase() == n
                } else {
                    h == n
                }
            };
            if after.len() >= rest.len() && after.iter().zip(rest).all(same) {
                return true;
            }
            from += at + 1;
        }
        false
    }

    /// The first `byte` in `haystack` (either case when folding), by `memchr`.
    fn find(&self, byte: u8, haystack: &[u8]) -> Option<usize> {
        if self.fold && byte.is_ascii_lowercase() {
            memchr::memchr2(byte, byte.to_ascii_uppercase(), haystack)
        } else {
            memchr::memchr(byte, haystack)
        }
    }
}

/// Where the last `components` components of `path` begin (in chars).
fn name_start(path: Utf32Str<'_>, components: usize) -> usize {
    let slash = match path {
        Utf32Str::Ascii(bytes) => memchr::memrchr_iter(b'/', bytes).nth(components - 1),
        Utf32Str::Unicode(chars) => chars
            .iter()
            .enumerate()
            .rev()
            .filter(|&(_, &c)| c == '/')
            .nth(components - 1)
            .map(|(at, _)| at),
    };
    slash.map_or(0, |at| at + 1)
}

/// The query as words; no words means "match everything".
struct Query {
    words: Vec<Word>,
}

impl Query {
    fn new(raw: &str) -> Query {
        let text = normalize_query(raw);
        let pattern = Pattern::new(
            text,
            CaseMatching::Smart,
            Normalization::Smart,
            AtomKind::Fuzzy,
        );
        Query {
            words: pattern.atoms.into_iter().map(Word::new).collect(),
        }
    }

    fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The [`Progress`] of each word whose needle is ASCII and short
    /// enough to count in a byte. On a large list each word after the
    /// first is followed on a thread of its own: the passes are
    /// independent, and a query of two words otherwise paid for two.
    fn progress(
        &self,
        entries: &Entries,
        index: &NameIndex,
        token: &CancelToken,
    ) -> Result<Vec<Progress>> {
        let needles: Vec<&AsciiNeedle> = self
            .words
            .iter()
            .filter_map(|word| word.ascii.as_ref())
            .filter(|needle| needle.bytes.len() < usize::from(Progress::UNKNOWN))
            .collect();
        let of = |needle: &AsciiNeedle| Progress::of(needle, entries, index, token);
        match needles.split_first() {
            Some((first, rest))
                if !rest.is_empty() && entries.len() >= PARALLEL_PROGRESS_ENTRIES =>
            {
                std::thread::scope(|scope| {
                    let others: Vec<_> = rest
                        .iter()
                        .map(|&needle| scope.spawn(move || of(needle)))
                        .collect();
                    let mut all = vec![of(first)];
                    all.extend(others.into_iter().map(|other| {
                        other
                            .join()
                            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                    }));
                    all.into_iter().collect()
                })
            }
            _ => needles.into_iter().map(of).collect(),
        }
    }

    /// nucleo's score summed over words, or `None` when a word misses.
    fn score(&self, path: Utf32Str<'_>, matcher: &mut Matcher) -> Option<u32> {
        self.words.iter().try_fold(0u32, |sum, word| {
            Some(sum + u32::from(word.score(path, matcher)?))
        })
    }

    /// The weakest word's tier (the empty query: the lowest tier, score 0).
    fn tier(&self, path: Utf32Str<'_>, matcher: &mut Matcher) -> Tier {
        self.words
            .iter()
            .map(|word| word.tier(path, matcher))
            .min()
            .unwrap_or(Tier::Scattered)
    }

    fn indices(&self, path: Utf32Str<'_>, matcher: &mut Matcher) -> Vec<u32> {
        let mut out = Vec::new();
        for word in &self.words {
            word.indices(path, matcher, &mut out);
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Strip what wraps a path-like query: whitespace, the mention `@`, a
/// leading `./` and a trailing `/` (matching never sees a trailing `/`).
fn normalize_query(raw: &str) -> &str {
    let mut text = raw.trim();
    text = text.strip_prefix('@').unwrap_or(text);
    while let Some(rest) = text.strip_prefix("./") {
        text = rest;
    }
    text.trim_end_matches('/')
}

/// How much of one ASCII needle each entry's path holds in order, found in
/// one pass over the names: a path is its parent's path, `/` and its name,
/// so its count continues its parent's ([`AsciiNeedle::advance`]) and only
/// the name is read. A path that is not ASCII, or whose parent is not
/// listed, is [`Progress::UNKNOWN`] (nucleo decides it, as without the
/// index). Where the count is known it is exactly what the needle's own
/// check finds on the whole path.
struct Progress {
    needle_len: u8,
    counts: Vec<u8>,
}

impl Progress {
    const UNKNOWN: u8 = u8::MAX;

    fn of(
        needle: &AsciiNeedle,
        entries: &Entries,
        index: &NameIndex,
        token: &CancelToken,
    ) -> Result<Progress> {
        let mut counts: Vec<u8> = Vec::with_capacity(entries.len());
        // The letters the needle still needs after its first `k` bytes.
        let needs: Vec<u32> = (0..=needle.bytes.len())
            .map(|k| names::letters(&needle.bytes[k..]))
            .collect();
        for (at, entry) in entries.iter().enumerate() {
            if at % CANCEL_POLL_INTERVAL == 0 {
                token.check()?;
            }
            // The parent's count, and where this entry's `/` and name
            // begin: the parent's path is everything before it.
            let (done, text) = match index.parent(at) {
                Parent::Root => (0, entry.path),
                Parent::Listed(parent) => (counts[parent], &entry.path[entries.path_len(parent)..]),
                Parent::Unlisted => (Self::UNKNOWN, entry.path),
            };
            let short = entry.file_type != FileType::Dir
                && Self::lacks(needle, done, index.letters(at), &needs);
            // A file short of a letter the needle still needs keeps its
            // parent's count, below the needle's: nothing goes on from it.
            counts.push(if short {
                done
            } else {
                Self::step(needle, done, text)
            });
        }
        Ok(Progress {
            needle_len: needle.bytes.len() as u8,
            counts,
        })
    }

    /// Whether a name whose letters are `letters`, after a path whose
    /// count is `done`, lacks a letter the rest of the needle needs: the
    /// entry cannot hold the whole needle.
    fn lacks(needle: &AsciiNeedle, done: u8, letters: u32, needs: &[u32]) -> bool {
        if done == Self::UNKNOWN || usize::from(done) >= needle.bytes.len() {
            return false;
        }
        let need = needs[usize::from(done)];
        letters & need != need
    }

    /// The count of a path made of a path whose count is `done`, then
    /// `text`. A path the whole needle is in stays complete whatever
    /// follows (nucleo matches it, as when the count is unknown).
    fn step(needle: &AsciiNeedle, done: u8, text: &[u8]) -> u8 {
        let complete = needle.bytes.len() as u8;
        match done {
            Self::UNKNOWN => Self::UNKNOWN,
            done if done == complete => complete,
            // Below the length of the needle, which is below UNKNOWN.
            done => match needle.advance(usize::from(done), text) as u8 {
                count if count < complete && !text.is_ascii() => Self::UNKNOWN,
                count => count,
            },
        }
    }

    /// Whether the needle is known to be whole in the path of entry `at`.
    fn holds(&self, at: usize) -> bool {
        self.counts[at] == self.needle_len
    }

    /// Whether the needle is known not to be in the path of entry `at`.
    fn misses(&self, at: usize) -> bool {
        let count = self.counts[at];
        count != Self::UNKNOWN && count < self.needle_len
    }
}

/// Turns entry bytes into a nucleo haystack: ASCII in place, anything else
/// decoded into a reused char buffer, each byte that is not part of UTF-8
/// as one U+FFFD (as [`FuzzyMatch::path_lossy`] reads it).
#[derive(Default)]
struct Decoder {
    chars: Vec<char>,
}

impl Decoder {
    fn decode<'a>(&'a mut self, path: &'a [u8]) -> Utf32Str<'a> {
        if path.is_ascii() {
            return Utf32Str::Ascii(path);
        }
        self.chars.clear();
        for chunk in path.utf8_chunks() {
            self.chars.extend(chunk.valid().chars());
            let invalid = chunk.invalid().iter();
            self.chars
                .extend(invalid.map(|_| char::REPLACEMENT_CHARACTER));
        }
        Utf32Str::Unicode(&self.chars)
    }
}

/// The ranked selection of one pass.
struct Ranked {
    /// Best first.
    best: Vec<Rank>,
    total: usize,
    /// Matches nucleo scored; the others were passed over unscored (see
    /// [`Finder::passed_over`]).
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "what the tests show the pass over does")
    )]
    scored: usize,
}

/// Per-call state: the query, the filters, and the reused matcher memory.
struct Finder {
    query: Query,
    include_node_modules: bool,
    limit: usize,
    matcher: Matcher,
    decoder: Decoder,
    /// A confined find's root: only entries reached beneath it are ranked.
    beneath: Option<Beneath>,
}

impl Finder {
    fn new(options: &FuzzyOptions) -> Finder {
        Finder {
            query: Query::new(&options.query),
            include_node_modules: node_modules::include_node_modules(
                options.include_node_modules,
                &options.query,
            ),
            limit: options.max_results,
            matcher: Matcher::new(Config::DEFAULT.match_paths()),
            decoder: Decoder::default(),
            beneath: None,
        }
    }

    /// Rank `entries`; with their name index, entries that some ASCII
    /// query word cannot match are passed over unread (see [`Progress`]).
    fn rank(
        &mut self,
        entries: &Entries,
        index: Option<Arc<NameIndex>>,
        token: &CancelToken,
    ) -> Result<Ranked> {
        let progress = match index {
            Some(index) => self.query.progress(entries, &index, token)?,
            None => Vec::new(),
        };
        let mut top = TopN::new(self.limit);
        let (mut total, mut scored) = (0, 0);
        for (index, entry) in entries.iter().enumerate() {
            if index % CANCEL_POLL_INTERVAL == 0 {
                token.check()?;
            }
            if entry.in_node_modules && !self.include_node_modules {
                continue;
            }
            if progress.iter().any(|words| words.misses(index)) {
                continue;
            }
            if self.passed_over(&progress, &top, entry.path, index) {
                total += 1;
                continue;
            }
            let path = self.decoder.decode(entry.path);
            let Some(score) = self.query.score(path, &mut self.matcher) else {
                continue;
            };
            if !self.beneath.as_ref().is_none_or(|b| b.keeps(entry.path)) {
                continue;
            }
            total += 1;
            scored += 1;
            let depth = memchr::memchr_iter(b'/', entry.path).count();
            if top.admits(&rank(Tier::ExactName, score, depth, index)) {
                let tier = self.query.tier(path, &mut self.matcher);
                top.offer(rank(tier, score, depth, index));
            }
        }
        Ok(Ranked {
            best: top.into_sorted(),
            total,
            scored,
        })
    }

    /// Whether the entry at `index`, with path `path`, is known to match
    /// and known to rank below every match kept so far, so nucleo need not
    /// score it: the path is ASCII and every word's progress shows the word
    /// whole in it (so nucleo matches it), and the best tier the words allow
    /// with the highest score cannot enter `top`. Most matches of a short
    /// query are scattered across the path and, once the top holds better
    /// ones, cost one pass over the path's bytes here instead of nucleo's
    /// scoring.
    fn passed_over(
        &self,
        progress: &[Progress],
        top: &TopN<Rank>,
        path: &[u8],
        index: usize,
    ) -> bool {
        let words = &self.query.words;
        if progress.len() != words.len()
            || progress.iter().any(|word| !word.holds(index))
            || !path.is_ascii()
            || self.beneath.as_ref().is_some_and(|b| !b.keeps(path))
        {
            return false;
        }
        let bound = words
            .iter()
            .map(|word| {
                word.ascii
                    .as_ref()
                    .map(|needle| word.tier_bound(needle, path))
            })
            .min()
            .flatten();
        let Some(bound) = bound else {
            return false;
        };
        let depth = memchr::memchr_iter(b'/', path).count();
        !top.admits(&rank(bound, MAX_NUCLEO_SCORE, depth, index))
    }

    fn matches(&mut self, entries: &Entries, best: &[Rank]) -> Vec<FuzzyMatch> {
        let to_match = |&(score, _, Reverse(index)): &Rank| {
            let entry = entries.get(index);
            let path = self.decoder.decode(entry.path);
            let indices = self.query.indices(path, &mut self.matcher);
            let mut path = entry.path.to_vec();
            if entry.file_type == FileType::Dir {
                path.push(b'/');
            }
            FuzzyMatch {
                path,
                file_type: entry.file_type,
                score,
                tier: Tier::of_score(score),
                indices,
            }
        };
        best.iter().map(to_match).collect()
    }
}

#[cfg(test)]
mod indexed_tests;
#[cfg(test)]
mod tests;
