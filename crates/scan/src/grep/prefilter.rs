//! Skipping the files a cached grep cannot match, without reading them.
//!
//! A cached grep saves the walk only: every candidate is still opened and
//! read, and over a tree of small files that, not the regex, is most of the
//! time. So the cache keeps a content signature per file it has read twice
//! unchanged: a Bloom filter of the file's byte trigrams. A later search
//! whose pattern needs a trigram the signature lacks reports that file as
//! searched without a match, after one `fstatat` instead of `openat`,
//! `fstat`, `read` and `close`.
//!
//! Being exact is the whole point, so:
//! - **What a pattern needs** comes from `regex-syntax`'s prefix extractor,
//!   run on the pattern as the matcher reads it. When it yields a finite set
//!   of literals, every match starts with one of them, so a file can match
//!   only if all the trigrams of at least one of them occur in it. When
//!   `ignore_case` or `smart_case` may make the search case-insensitive, the
//!   pattern is still read case-sensitively (case variants would blow the
//!   extractor's limits after a few letters) and only trigrams of ASCII
//!   bytes other than `k` and `s` are kept: a case-insensitive match holds,
//!   where the literal has such a byte, the same byte up to ASCII case,
//!   whereas `k` and `s` also match `K` (Kelvin) and `ſ` (long s). A test
//!   checks that against the regex parser's own case folding. A set holding
//!   a literal with no trigram left, an infinite set and an inverted search
//!   need nothing, and no file is skipped.
//! - **A signature** folds ASCII case (so one serves both kinds of search)
//!   and sets one bit per trigram in a filter of about one bit per two bytes
//!   of content. It is built only for a file read whole as text: at most
//!   [`MAX_SIGNED`] bytes, no NUL, no byte-order mark (which would make the
//!   searcher transcode it). A Bloom filter can say "maybe" wrongly, never
//!   "no". A file above the one block read whole anyway is read whole here
//!   too when it may be signed: text searched as one slice reports what a
//!   stream would; with a NUL or a mark it is searched as the stream it
//!   would have been.
//! - **Trust**: a signature is used only while the file's device, inode,
//!   size, mtime and ctime are the ones it was read with, checked by an
//!   `fstatat` that does not follow links. Every write moves ctime, which no
//!   caller can set; a file whose ctime or mtime lies within [`RACY_MARGIN`]
//!   of the read is not signed, because a second write in the same timestamp
//!   tick would leave all five unchanged (git's "racily clean" entries).
//!   Only files on the search root's own device are signed, and only when it
//!   is a local filesystem: a network filesystem may answer `stat` from
//!   attributes it cached seconds ago.
//! - **Cost**: a file is signed the second time a search reads it unchanged
//!   (the first read only notes its identity), so a file read once never
//!   pays for hashing. Memory is bounded by the cache policy's
//!   `content_bytes`: past it every signature is dropped and building starts
//!   over.

use std::{
    collections::HashMap,
    fs::{File, Metadata},
    hash::{DefaultHasher, Hash, Hasher},
    io::{self, Read},
    sync::{
        Mutex, MutexGuard,
        atomic::{AtomicU64, AtomicUsize, Ordering},
    },
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use grep_regex::RegexMatcher;
use grep_searcher::Searcher;
use regex_syntax::hir::literal::{ExtractKind, Extractor, Literal};

use super::{
    pattern::{MatcherSpec, matcher_pattern},
    read::{Opener, Root},
    search::{FileReport, Opened, Shape, Stop, open_file, search_reader, search_slice, settle},
};
use crate::error::Result;

/// How long before a read a file's last change must lie for the read to be
/// signed. Timestamps come from a clock that ticks every few milliseconds,
/// and some filesystems keep whole or even two seconds; a change closer to
/// the read than this could be followed by another one that leaves every
/// timestamp as it was.
pub(crate) const RACY_MARGIN: Duration = Duration::from_secs(3);

/// The largest file signed: its signature is then at most 256 KiB. Most
/// of a real tree's bytes are in files above the 64 KiB read whole anyway
/// (two thirds of a `cargo vendor` tree), few of them above this.
const MAX_SIGNED: usize = 4 << 20;

/// Smallest signature, in bits: below this a filter of a tiny file would be
/// all ones after a few trigrams anyway.
const MIN_BITS: usize = 64;

/// Map shards, so the workers of one search rarely wait on each other.
const SHARDS: usize = 16;

/// A file's identity and timestamps: while these stay the same, so does its
/// content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Identity {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    /// Nanoseconds since the epoch.
    pub mtime: i128,
    pub ctime: i128,
}

impl Identity {
    #[cfg(unix)]
    pub(super) fn of(metadata: &std::fs::Metadata) -> Identity {
        use std::os::unix::fs::MetadataExt;
        Identity {
            dev: metadata.dev(),
            ino: metadata.ino(),
            size: metadata.size(),
            mtime: nanos(metadata.mtime(), metadata.mtime_nsec()),
            ctime: nanos(metadata.ctime(), metadata.ctime_nsec()),
        }
    }

    /// Off Unix there is no identity to trust: no file is ever signed.
    #[cfg(not(unix))]
    pub(super) fn of(metadata: &std::fs::Metadata) -> Identity {
        Identity {
            dev: u64::MAX,
            ino: 0,
            size: metadata.len(),
            mtime: 0,
            ctime: 0,
        }
    }

    /// Whether its last change came at least [`RACY_MARGIN`] before `read`.
    fn settled_before(&self, read: SystemTime) -> bool {
        let Ok(read) = read.duration_since(UNIX_EPOCH) else {
            return false;
        };
        let limit = read.as_nanos() as i128 - RACY_MARGIN.as_nanos() as i128;
        self.mtime < limit && self.ctime < limit
    }
}

/// A timestamp as nanoseconds since the epoch.
pub(super) fn nanos(seconds: i64, nanoseconds: i64) -> i128 {
    i128::from(seconds) * 1_000_000_000 + i128::from(nanoseconds)
}

/// The trigrams a pattern needs. Each requirement is a set of alternatives:
/// a file can match only if, for every requirement, all the trigrams of at
/// least one of its alternatives occur in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Needs {
    requirements: Vec<Vec<Vec<u32>>>,
}

impl Needs {
    /// What a search for `spec` needs; `None` when it needs nothing the
    /// signatures can check (see the module docs). Every match starts with
    /// one of the prefix literals and ends with one of the suffix literals,
    /// so each set is a requirement of its own: `fn [a-z_]+_mut\(` needs
    /// `fn ` and `_mut(`.
    pub(crate) fn of(spec: &MatcherSpec<'_>, invert: bool) -> Option<Needs> {
        if invert {
            return None;
        }
        let pattern = match spec.literal {
            true => regex_syntax::escape(spec.pattern),
            false => matcher_pattern(spec).into_owned(),
        };
        let hir = regex_syntax::ParserBuilder::new()
            .unicode(true)
            .utf8(false)
            .octal(false)
            .multi_line(true)
            .build()
            .parse(&pattern)
            .ok()?;
        let folds_case = spec.ignore_case || spec.smart_case;
        let mut requirements: Vec<Vec<Vec<u32>>> = [ExtractKind::Prefix, ExtractKind::Suffix]
            .into_iter()
            .filter_map(|kind| {
                let seq = Extractor::new().kind(kind).extract(&hir);
                alternatives(seq.literals()?, folds_case)
            })
            .collect();
        requirements.dedup();
        (!requirements.is_empty()).then_some(Needs { requirements })
    }

    /// Whether a file with `signature` may hold a match.
    fn admits(&self, signature: &[u64]) -> bool {
        let log2 = bits_log2(signature);
        let has = |&trigram: &u32| {
            let at = bit(trigram, log2);
            signature[at / 64] & (1 << (at % 64)) != 0
        };
        self.requirements
            .iter()
            .all(|alternatives| alternatives.iter().any(|trigrams| trigrams.iter().all(has)))
    }
}

/// The trigrams of each literal (only case-proof ones when the search may
/// fold case); `None` when some literal has none, or there is no literal,
/// since then any file may match.
fn alternatives(literals: &[Literal], folds_case: bool) -> Option<Vec<Vec<u32>>> {
    if literals.is_empty() {
        return None;
    }
    let mut alternatives = Vec::with_capacity(literals.len());
    for literal in literals {
        let mut trigrams: Vec<u32> = literal
            .as_bytes()
            .windows(3)
            .filter(|three| !folds_case || three.iter().all(|&byte| same_up_to_ascii_case(byte)))
            .map(|three| trigram(three[0], three[1], three[2]))
            .collect();
        if trigrams.is_empty() {
            return None;
        }
        trigrams.sort_unstable();
        trigrams.dedup();
        alternatives.push(trigrams);
    }
    alternatives.sort_unstable();
    alternatives.dedup();
    Some(alternatives)
}

/// Whether every character a case-insensitive search matches for `byte` is
/// `byte` up to ASCII case.
fn same_up_to_ascii_case(byte: u8) -> bool {
    byte.is_ascii() && !matches!(byte.to_ascii_lowercase(), b'k' | b's')
}

/// Three bytes, ASCII case folded, as one number.
fn trigram(a: u8, b: u8, c: u8) -> u32 {
    u32::from(a.to_ascii_lowercase()) << 16
        | u32::from(b.to_ascii_lowercase()) << 8
        | u32::from(c.to_ascii_lowercase())
}

/// The bit a trigram sets in a signature of `2^log2` bits (a multiplicative
/// hash: its top bits are well mixed).
fn bit(trigram: u32, log2: u32) -> usize {
    (trigram.wrapping_mul(0x9E37_79B1) >> (32 - log2)) as usize
}

fn bits_log2(signature: &[u64]) -> u32 {
    (signature.len() * 64).trailing_zeros()
}

/// The signature of `content`: about one bit per two bytes, a power of two.
fn sign(content: &[u8]) -> Box<[u64]> {
    let bits = (content.len() / 2)
        .next_power_of_two()
        .clamp(MIN_BITS, MAX_SIGNED / 2);
    let log2 = bits.trailing_zeros();
    let mut words = vec![0u64; bits / 64].into_boxed_slice();
    if let [a, b, rest @ ..] = content {
        let mut window = trigram(0, *a, *b);
        for &byte in rest {
            window = (window << 8 | u32::from(byte.to_ascii_lowercase())) & 0xFF_FFFF;
            let at = bit(window, log2);
            words[at / 64] |= 1 << (at % 64);
        }
    }
    words
}

/// Whether the searcher would transcode `content` rather than search its
/// bytes (a UTF-8 or UTF-16 byte-order mark).
fn has_bom(content: &[u8]) -> bool {
    content.starts_with(&[0xEF, 0xBB, 0xBF])
        || content.starts_with(&[0xFF, 0xFE])
        || content.starts_with(&[0xFE, 0xFF])
}

/// A file as the index knows it: its identity when read, and its signature
/// once it has been read twice unchanged.
struct Known {
    identity: Identity,
    signature: Option<Box<[u64]>>,
}

impl Known {
    fn bytes(&self) -> usize {
        size_of::<(u64, Known)>() + self.signature.as_ref().map_or(0, |words| words.len() * 8)
    }
}

/// The signatures of the files cached greps have read, shared by all of
/// them (part of the scan cache).
pub(crate) struct ContentIndex {
    shards: Box<[Mutex<HashMap<u64, Known>>]>,
    bytes: AtomicUsize,
    signed: AtomicUsize,
    max_bytes: usize,
    skipped: AtomicU64,
}

/// The index's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ContentStats {
    /// Files with a signature.
    pub signatures: usize,
    /// Bytes the index holds (signatures and noted identities).
    pub bytes: usize,
    /// Files cached greps skipped unread since the cache was created.
    pub files_skipped: u64,
}

impl ContentIndex {
    /// An index holding at most about `max_bytes` (0: none, signing off).
    pub(crate) fn new(max_bytes: usize) -> ContentIndex {
        ContentIndex {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            bytes: AtomicUsize::new(0),
            signed: AtomicUsize::new(0),
            max_bytes,
            skipped: AtomicU64::new(0),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.max_bytes > 0
    }

    pub(crate) fn stats(&self) -> ContentStats {
        ContentStats {
            signatures: self.signed.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            files_skipped: self.skipped.load(Ordering::Relaxed),
        }
    }

    /// Forget every file.
    pub(crate) fn clear(&self) {
        for shard in &self.shards {
            let mut shard = lock(shard);
            for known in shard.values() {
                self.forget(known);
            }
            shard.clear();
        }
    }

    fn shard(&self, key: u64) -> MutexGuard<'_, HashMap<u64, Known>> {
        lock(&self.shards[key as usize % SHARDS])
    }

    fn forget(&self, known: &Known) {
        self.bytes.fetch_sub(known.bytes(), Ordering::Relaxed);
        if known.signature.is_some() {
            self.signed.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// The identity a file was signed with, when that signature rules out
    /// a match of `needs` (the caller still has to check the file is
    /// unchanged).
    fn rules_out(&self, key: u64, needs: &Needs) -> Option<Identity> {
        let shard = self.shard(key);
        let known = shard.get(&key)?;
        let signature = known.signature.as_deref()?;
        (!needs.admits(signature)).then_some(known.identity)
    }

    /// Forget the file at `key` if it is still known as `stale`.
    fn forget_stale(&self, key: u64, stale: &Identity) {
        let mut shard = self.shard(key);
        if shard
            .get(&key)
            .is_some_and(|known| known.identity == *stale)
            && let Some(known) = shard.remove(&key)
        {
            self.forget(&known);
        }
    }

    /// Whether a read of a file with `identity` should be signed: it was
    /// read before with the same identity. Otherwise its identity is noted.
    fn read_again(&self, key: u64, identity: &Identity) -> bool {
        let shard = self.shard(key);
        if let Some(known) = shard.get(&key)
            && known.identity == *identity
        {
            return known.signature.is_none();
        }
        self.put(shard, key, identity, None);
        false
    }

    fn store(&self, key: u64, identity: &Identity, signature: Box<[u64]>) {
        self.put(self.shard(key), key, identity, Some(signature));
    }

    /// Record `key` in its (locked) shard; past the byte budget, drop
    /// everything, noted identities too.
    fn put(
        &self,
        mut shard: MutexGuard<'_, HashMap<u64, Known>>,
        key: u64,
        identity: &Identity,
        signature: Option<Box<[u64]>>,
    ) {
        let known = Known {
            identity: *identity,
            signature,
        };
        self.bytes.fetch_add(known.bytes(), Ordering::Relaxed);
        if known.signature.is_some() {
            self.signed.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(old) = shard.insert(key, known) {
            self.forget(&old);
        }
        drop(shard);
        if self.bytes.load(Ordering::Relaxed) > self.max_bytes {
            self.clear();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One cached search's use of the index.
pub(super) struct Prefilter<'a> {
    index: &'a ContentIndex,
    /// `None`: signatures are built, but no file is skipped.
    needs: Option<Needs>,
    /// Hashes the root into every key.
    root: u64,
    /// The root's device: only files on it are signed.
    device: u64,
}

impl<'a> Prefilter<'a> {
    /// The prefilter of a search under `root`, or `None` when the index is
    /// off or `root` is not on a local filesystem.
    pub(super) fn new(
        index: &'a ContentIndex,
        root: &Root,
        needs: Option<Needs>,
    ) -> Option<Prefilter<'a>> {
        if !index.enabled() {
            return None;
        }
        let device = root.local_device()?;
        let mut hasher = DefaultHasher::new();
        root.path().hash(&mut hasher);
        Some(Prefilter {
            index,
            needs,
            root: hasher.finish(),
            device,
        })
    }

    fn key(&self, relative: &[u8]) -> u64 {
        let mut hasher = DefaultHasher::new();
        self.root.hash(&mut hasher);
        relative.hash(&mut hasher);
        hasher.finish()
    }

    /// Search `relative` as `search::search_file` does, unless its signature
    /// proves it has no match; sign it when it is read a second time
    /// unchanged.
    pub(super) fn search_file(
        &self,
        searcher: &mut Searcher,
        opener: &mut Opener<'_>,
        matcher: &RegexMatcher,
        shape: &Shape,
        relative: &[u8],
        stop: &Stop<'_>,
    ) -> Result<FileReport> {
        stop.token.check()?;
        if let Some(report) = self.skip(opener, shape, relative) {
            return Ok(report);
        }
        let read_at = SystemTime::now();
        let searched = match open_file(opener, shape, relative, false, stop)? {
            Opened::Content(content, metadata) => {
                self.consider(relative, &metadata, read_at, content);
                search_slice(searcher, matcher, shape, content)
            }
            Opened::Stream(file) => {
                self.search_large(file, relative, read_at, (searcher, matcher, shape), stop)
            }
            Opened::Done(report) => return Ok(report),
        };
        settle(searched, opener, relative, false, stop)
    }

    /// Search a file above the block read whole: read whole too when it may
    /// be signed, then searched as a slice if it is text (and considered for
    /// signing), else as the stream it is.
    pub(super) fn search_large(
        &self,
        mut file: File,
        relative: &[u8],
        read_at: SystemTime,
        (searcher, matcher, shape): (&mut Searcher, &RegexMatcher, &Shape),
        stop: &Stop<'_>,
    ) -> io::Result<FileReport> {
        let metadata = file.metadata()?;
        let size = metadata.len();
        if size == 0 || size > MAX_SIGNED as u64 {
            return search_reader(shape, false, matcher, file, stop);
        }
        let mut content = Vec::with_capacity(size as usize);
        (&mut file).take(size).read_to_end(&mut content)?;
        if memchr::memchr(0, &content).is_some() || has_bom(&content) {
            let stream = io::Cursor::new(content).chain(file);
            return search_reader(shape, false, matcher, stream, stop);
        }
        self.consider(relative, &metadata, read_at, &content);
        search_slice(searcher, matcher, shape, &content)
    }

    /// The report of `relative` when it is still as signed and its
    /// signature rules out a match: searched, nothing found, as reading it
    /// would report.
    pub(super) fn skip(
        &self,
        opener: &mut Opener<'_>,
        shape: &Shape,
        relative: &[u8],
    ) -> Option<FileReport> {
        if !self.unmatchable(opener, shape, self.key(relative), relative) {
            return None;
        }
        self.index.skipped.fetch_add(1, Ordering::Relaxed);
        Some(FileReport {
            searched: true,
            ..FileReport::default()
        })
    }

    /// Whether the file at `relative` is still as signed and its signature
    /// rules out a match.
    fn unmatchable(
        &self,
        opener: &mut Opener<'_>,
        shape: &Shape,
        key: u64,
        relative: &[u8],
    ) -> bool {
        // The signature first: a file it admits is read anyway, so only a
        // file it rules out pays for the `fstatat` that proves it unchanged.
        let Some(signed) = self
            .needs
            .as_ref()
            .and_then(|needs| self.index.rules_out(key, needs))
        else {
            return false;
        };
        let Ok(identity) = opener.identity(relative) else {
            return false;
        };
        if identity != signed {
            self.index.forget_stale(key, &signed);
            return false;
        }
        shape.max_file_size.is_none_or(|max| identity.size <= max)
    }

    /// Note or sign `relative`, just read whole as `content` (its `fstat`
    /// said `metadata`; the read began at `read_at`).
    pub(super) fn consider(
        &self,
        relative: &[u8],
        metadata: &Metadata,
        read_at: SystemTime,
        content: &[u8],
    ) {
        let identity = &Identity::of(metadata);
        let signable = identity.dev == self.device
            && identity.size == content.len() as u64
            && identity.settled_before(read_at)
            && !has_bom(content)
            && memchr::memchr(0, content).is_none();
        let key = self.key(relative);
        if signable && self.index.read_again(key, identity) {
            self.index.store(key, identity, sign(content));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(pattern: &str) -> MatcherSpec<'_> {
        MatcherSpec {
            pattern,
            ignore_case: false,
            smart_case: false,
            literal: false,
            multiline: false,
            word: false,
        }
    }

    /// Whether a file holding `content` may match `needs`.
    fn may_match(needs: &Needs, content: &str) -> bool {
        needs.admits(&sign(content.as_bytes()))
    }

    /// (pattern, ignore_case, literal, content, whether the content matches).
    /// Every content that matches must be admitted; the ones that do not are
    /// there to show the filter skips something.
    const CASES: &[(&str, bool, bool, &str, bool)] = &[
        (
            "resolveWorkspaceRoot",
            false,
            false,
            "x = resolveWorkspaceRoot(a)\n",
            true,
        ),
        (
            "resolveWorkspaceRoot",
            false,
            false,
            "nothing of the kind here\n",
            false,
        ),
        (
            "fetchUser[A-Z]\\w*",
            false,
            false,
            "await fetchUserById(1)\n",
            true,
        ),
        (
            "fetchUser[A-Z]\\w*",
            false,
            false,
            "fetch the user by id\n",
            false,
        ),
        (
            "fn [a-z_]+_mut\\(|function [A-Z]\\w*\\(",
            false,
            false,
            "function Foo(x) {}\n",
            true,
        ),
        (
            "fn [a-z_]+_mut\\(|function [A-Z]\\w*\\(",
            false,
            false,
            "fn get_mut(&mut self)\n",
            true,
        ),
        (
            "fn [a-z_]+_mut\\(",
            false,
            false,
            "fn get_mut(&mut self)\n",
            true,
        ),
        (
            "fn [a-z_]+_mut\\(",
            false,
            false,
            "fn get(&self) -> &T\n",
            false,
        ),
        (
            "[a-z]+Handler",
            false,
            false,
            "const clickHandler = 1;\n",
            true,
        ),
        ("[a-z]+Handler", false, false, "const click = 1;\n", false),
        ("todo", true, false, "// TODO: later\n", true),
        ("todo", true, false, "// ToDo: later\n", true),
        ("deprecated", true, false, "#[DEPRECATED]\n", true),
        (
            "resolveworkspaceroot",
            true,
            true,
            "ResolveWorkspaceRoot\n",
            true,
        ),
        (
            "resolveworkspaceroot",
            true,
            true,
            "resolve the workspace\n",
            false,
        ),
        ("abc(?i)kelvin", false, false, "abc\u{212A}ELVIN\n", true),
        ("(?i)ab[c-e]", false, false, "ABE\n", true),
        ("ab[c-e]", true, false, "ABE\n", true),
        ("caf\u{e9} latte", true, false, "CAF\u{c9} LATTE\n", true),
        ("kelvin", true, false, "\u{212A}ELVIN\n", true),
        ("message", true, false, "ME\u{17F}\u{17F}AGE\n", true),
        ("a.b+c", false, true, "x a.b+c y\n", true),
        ("a.b+c", false, true, "x aXbbc y\n", false),
        ("${name}", false, false, "let x = `${name}`;\n", true),
        ("zqxjkvbw_never_9", false, false, "const zqx = 1;\n", false),
    ];

    #[test]
    fn matching_contents_are_always_admitted() {
        for &(pattern, ignore_case, literal, content, matches) in CASES {
            let spec = MatcherSpec {
                ignore_case,
                literal,
                ..spec(pattern)
            };
            let matcher = super::super::pattern::build_matcher(&spec).unwrap();
            use grep_matcher::Matcher;
            assert_eq!(
                matcher.is_match(content.as_bytes()).unwrap(),
                matches,
                "{pattern} on {content:?}"
            );
            let needs = Needs::of(&spec, false).unwrap_or_else(|| panic!("{pattern}: no needs"));
            if matches {
                assert!(may_match(&needs, content), "{pattern} on {content:?}");
            } else {
                assert!(!may_match(&needs, content), "{pattern} skips {content:?}");
            }
        }
    }

    /// The claim behind case-insensitive needs, checked against the parser
    /// that builds the matcher: an ASCII character other than `k` and `s`
    /// matches only ASCII characters case-insensitively.
    #[test]
    fn ascii_case_folding_stays_ascii_except_k_and_s() {
        use regex_syntax::hir::{Class, HirKind};
        for byte in 0..0x80u8 {
            let pattern = format!(
                "(?i){}",
                regex_syntax::escape(&char::from(byte).to_string())
            );
            let hir = regex_syntax::ParserBuilder::new()
                .unicode(true)
                .utf8(false)
                .build()
                .parse(&pattern)
                .unwrap();
            let stays_ascii = match hir.kind() {
                HirKind::Literal(literal) => literal.0.is_ascii(),
                HirKind::Class(Class::Unicode(class)) => class.is_ascii(),
                other => panic!("{byte}: {other:?}"),
            };
            assert_eq!(
                stays_ascii,
                same_up_to_ascii_case(byte),
                "{:?}",
                char::from(byte)
            );
        }
    }

    /// Patterns whose every match need not hold three known bytes in a row
    /// filter nothing; an inverted search neither.
    #[test]
    fn patterns_that_need_nothing_skip_nothing() {
        for pattern in ["", "ab", "a*", "\\w+", "x|yz", "[a-z]{3}", ".", "(?s).+"] {
            assert_eq!(Needs::of(&spec(pattern), false), None, "{pattern}");
        }
        assert_eq!(Needs::of(&spec("resolveWorkspaceRoot"), true), None);
    }

    #[test]
    fn signatures_grow_with_content_within_bounds() {
        assert_eq!(sign(b"").len() * 64, MIN_BITS);
        assert_eq!(sign(&[b'a'; 1000]).len() * 64, 512);
        assert_eq!(sign(&vec![b'a'; MAX_SIGNED]).len() * 64, MAX_SIGNED / 2);
        assert_eq!(sign(&vec![b'a'; 2 * MAX_SIGNED]).len() * 64, MAX_SIGNED / 2);
    }

    /// A file is signed on its second unchanged read only, and a changed
    /// identity is never trusted.
    #[test]
    fn signing_waits_for_a_second_unchanged_read() {
        let index = ContentIndex::new(1 << 20);
        let identity = Identity {
            dev: 1,
            ino: 2,
            size: 3,
            mtime: 0,
            ctime: 0,
        };
        assert!(!index.read_again(7, &identity));
        assert!(index.read_again(7, &identity));
        index.store(7, &identity, sign(b"abc"));
        assert!(!index.read_again(7, &identity), "already signed");
        let needs = Needs::of(&spec("xyz"), false).unwrap();
        assert_eq!(index.rules_out(7, &needs), Some(identity));
        let admitted = Needs::of(&spec("abc"), false).unwrap();
        assert_eq!(index.rules_out(7, &admitted), None);
        let changed = Identity {
            ctime: 1,
            ..identity
        };
        index.forget_stale(7, &changed);
        assert_eq!(
            index.stats().signatures,
            1,
            "not the identity it was signed with"
        );
        index.forget_stale(7, &identity);
        assert_eq!(index.stats(), ContentStats::default(), "forgotten");
        index.read_again(8, &identity);
        index.clear();
        assert_eq!(index.stats(), ContentStats::default());
    }

    /// Past its byte budget the index drops everything rather than grow,
    /// whether it grows by signatures or by identities noted once.
    #[test]
    fn the_byte_budget_bounds_the_index() {
        let index = ContentIndex::new(4096);
        for ino in 0..1000 {
            let identity = Identity {
                dev: 1,
                ino,
                size: 1,
                mtime: 0,
                ctime: 0,
            };
            index.read_again(ino, &identity);
            assert!(index.stats().bytes <= 4096, "{:?}", index.stats());
        }
        for ino in 0..100 {
            let identity = Identity {
                dev: 1,
                ino,
                size: 2048,
                mtime: 0,
                ctime: 0,
            };
            index.read_again(ino, &identity);
            index.store(ino, &identity, sign(&[b'x'; 2048]));
            assert!(index.stats().bytes <= 4096, "{:?}", index.stats());
        }
    }

    #[test]
    fn recent_changes_are_not_settled() {
        let now = SystemTime::now();
        let since = |ago: Duration| {
            let at = (now - ago).duration_since(UNIX_EPOCH).unwrap().as_nanos() as i128;
            Identity {
                dev: 0,
                ino: 0,
                size: 0,
                mtime: at,
                ctime: at,
            }
        };
        assert!(since(RACY_MARGIN * 2).settled_before(now));
        assert!(!since(RACY_MARGIN / 2).settled_before(now));
        assert!(!since(Duration::ZERO).settled_before(now));
    }
}
