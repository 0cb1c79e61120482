//! Skipping the files a cached grep cannot match, without reading them:
//! what a pattern needs of a file's content, and one search's use of the
//! content index (see `index`).
//!
//! A cached grep saves the walk only: every candidate is still opened and
//! read, and over a tree of small files that, not the regex, is most of the
//! time. So the cache indexes the trigrams of the files cached greps read,
//! and a search reads only the files whose trigrams admit a match.
//!
//! - **What a pattern needs** comes from `regex-syntax`'s literal
//!   extractor, run on the pattern as the matcher reads it. When it yields
//!   a finite set of prefix literals, every match starts with one of them,
//!   so a file can match only if all the trigrams of at least one of them
//!   occur in it; the suffix literals are a requirement of their own. When
//!   `ignore_case` or `smart_case` may make the search case-insensitive,
//!   the pattern is still read case-sensitively (case variants would blow
//!   the extractor's limits after a few letters) and only trigrams of ASCII
//!   bytes other than `k` and `s` are kept: a case-insensitive match holds,
//!   where the literal has such a byte, the same byte up to ASCII case,
//!   whereas `k` and `s` also match `K` (Kelvin) and `ſ` (long s). A test
//!   checks that against the regex parser's own case folding. A set holding
//!   a literal with no trigram left, an infinite set and an inverted search
//!   need nothing, and no file is skipped. What a pattern needs is kept
//!   with its compiled matcher (see `pattern`).
//! - **Which files are indexed**: those read whole as text, at most
//!   `index::MAX_INDEXED` bytes, no NUL, no byte-order mark (which would
//!   make the searcher transcode it), on the search root's own device when
//!   that is a local filesystem (a network filesystem may answer `stat`
//!   from attributes it cached seconds ago, and reports no remote change).
//!   A file above the one block read whole anyway is read whole here too:
//!   text searched as one slice reports what a stream would; with a NUL or
//!   a mark it is searched as the stream it would have been.
//! - **Trust** is the index's (see `index`): a ruled-out file is skipped
//!   with no system call while the scan's watch vouches for it, else after
//!   an `fstatat` proving its identity unchanged.

use std::{
    fs::{File, Metadata},
    io::{self, Read},
    sync::Arc,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use grep_regex::RegexMatcher;
use grep_searcher::Searcher;
use regex_syntax::hir::literal::{ExtractKind, Extractor, Literal};

use super::{
    index::{ContentIndex, Corpus, Item, MAX_INDEXED, Offer, Plan, ReadStart, Stamp},
    pattern::{MatcherSpec, SpecKey, matcher_pattern},
    read::{Opener, Root, SLICE_MAX},
    recent::Recent,
    search::{FileReport, Opened, Shape, Stop, open_file, search_reader, search_slice, settle},
};
use crate::{entries::Entries, error::Result};

/// How long before a read a file's last change must lie for the read to be
/// trusted by the file's identity alone. Timestamps come from a clock that
/// ticks every few milliseconds, and some filesystems keep whole or even
/// two seconds; a change closer to the read than this could be followed by
/// another one that leaves every timestamp as it was.
pub(crate) const RACY_MARGIN: Duration = Duration::from_secs(3);

/// What recent patterns need, kept beside their compiled matchers.
static NEEDS: Recent<SpecKey, Option<Arc<Needs>>> = Recent::new(super::pattern::COMPILED_KEPT);

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
    pub(crate) fn settled_before(&self, read: SystemTime) -> bool {
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
    pub(crate) fn of(spec: &MatcherSpec<'_>, invert: bool) -> Option<Arc<Needs>> {
        if invert {
            return None;
        }
        let found: std::result::Result<_, ()> =
            NEEDS.get_or_try(spec.key(), || Ok(Needs::parse(spec).map(Arc::new)));
        found.ok().flatten()
    }

    /// [`Needs::of`], worked out.
    fn parse(spec: &MatcherSpec<'_>) -> Option<Needs> {
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

    /// Each requirement's alternatives, each a literal's trigrams.
    pub(crate) fn requirements(&self) -> &[Vec<Vec<u32>>] {
        &self.requirements
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

/// Whether the searcher would transcode `content` rather than search its
/// bytes (a UTF-8 or UTF-16 byte-order mark).
fn has_bom(content: &[u8]) -> bool {
    content.starts_with(&[0xEF, 0xBB, 0xBF])
        || content.starts_with(&[0xFF, 0xFE])
        || content.starts_with(&[0xFE, 0xFF])
}

/// One cached search's use of the index: its plan, and the files it reads
/// offered for indexing.
pub(super) struct Prefilter<'a> {
    index: &'a ContentIndex,
    corpus: Arc<Corpus>,
    /// The root's device: only files on it are indexed.
    device: u64,
    /// The watch that vouches for this search's files, if any.
    stamp: Option<Stamp>,
    plan: Plan,
    entries: &'a Arc<Entries>,
    selected: &'a [usize],
}

/// A cached list and the watch that vouches for it, as a search sees them.
pub(super) struct Listed<'a> {
    pub entries: &'a Arc<Entries>,
    pub selected: &'a [usize],
    pub stamp: Option<Stamp>,
}

impl<'a> Prefilter<'a> {
    /// The prefilter of a search of `listed` under `root`, its plan made,
    /// or `None` when the index is off or `root` is not on a local
    /// filesystem.
    pub(super) fn new(
        index: &'a ContentIndex,
        root: &Root,
        needs: Option<&Needs>,
        listed: Listed<'a>,
        shape: &Shape,
    ) -> Option<Prefilter<'a>> {
        let device = root.local_device()?;
        let corpus = index.corpus(root.path())?;
        let plan = corpus.plan(
            needs,
            (listed.entries, listed.selected),
            listed.stamp,
            (shape.max_file_size, shape.multiline),
        );
        index.count_skipped(plan.trusted, 0);
        Some(Prefilter {
            index,
            corpus,
            device,
            stamp: listed.stamp,
            plan,
            entries: listed.entries,
            selected: listed.selected,
        })
    }

    /// The plan: which candidates are looked at, in order, and the files
    /// ruled out around them.
    pub(super) fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Where the read of a file begins (see `index::ReadStart`).
    pub(super) fn start(&self) -> ReadStart {
        self.corpus.start()
    }

    fn item(&self, index: usize) -> Item {
        self.plan.items[index]
    }

    /// Search the plan's item `index` (at `relative`) as
    /// `search::search_file` does, unless an `fstatat` shows it is still
    /// the file the index ruled out; offer what is read for indexing.
    pub(super) fn search_file(
        &self,
        (searcher, matcher, shape): (&mut Searcher, &RegexMatcher, &Shape<'_>),
        opener: &mut Opener<'_>,
        index: usize,
        relative: &[u8],
        stop: &Stop<'_>,
    ) -> Result<FileReport> {
        stop.token.check()?;
        if let Some(report) = self.skip(opener, index, relative) {
            return Ok(report);
        }
        let start = self.start();
        let searched = match open_file(opener, shape, relative, false, stop)? {
            Opened::Content(content, metadata) => {
                self.consider(index, relative, &metadata, start, (content, true));
                search_slice(searcher, matcher, shape, content, relative)
            }
            Opened::Stream(file) => {
                let at = (index, relative, start);
                self.search_large(file, at, (searcher, matcher, shape), stop)
            }
            Opened::Done(report) => return Ok(report),
        };
        settle(searched, opener, relative, false, stop)
    }

    /// Search a file above the block read whole (or reporting size 0):
    /// read whole too when it may be indexed, then searched as a slice if
    /// it is text, else as the stream it is; offered for indexing either
    /// way. Of a file too large to index only the first block is read
    /// ahead: a NUL there says all that its search can ever find.
    pub(super) fn search_large(
        &self,
        mut file: File,
        (index, relative, start): (usize, &[u8], ReadStart),
        (searcher, matcher, shape): (&mut Searcher, &RegexMatcher, &Shape<'_>),
        stop: &Stop<'_>,
    ) -> io::Result<FileReport> {
        let metadata = file.metadata()?;
        let size = metadata.len();
        let (limit, whole) = match size {
            // Size 0 says nothing of a pseudo-file: at most a block more.
            0 => (SLICE_MAX as u64 + 1, true),
            size if size > MAX_INDEXED as u64 => (SLICE_MAX as u64, false),
            size => (size, true),
        };
        let mut content = Vec::with_capacity(limit as usize);
        (&mut file).take(limit).read_to_end(&mut content)?;
        self.consider(index, relative, &metadata, start, (&content, whole));
        let text = whole && memchr::memchr(0, &content).is_none() && !has_bom(&content);
        if text && content.len() as u64 == size {
            return search_slice(searcher, matcher, shape, &content, relative);
        }
        let stream = io::Cursor::new(content).chain(file);
        search_reader(shape, false, matcher, stream, stop, relative)
    }

    /// The report of item `index` when the index ruled it out and an
    /// `fstatat` shows it unchanged: searched, nothing found (binary when
    /// its search stops at a NUL), as reading it would report.
    pub(super) fn skip(
        &self,
        opener: &mut Opener<'_>,
        index: usize,
        relative: &[u8],
    ) -> Option<FileReport> {
        let indexed = self.item(index).verify?;
        let start = self.start();
        let (found, links) = opener.identity(relative).ok()?;
        let trust = (start, self.stamp);
        if !self
            .corpus
            .verified(relative, &indexed, (&found, links), trust)
        {
            return None;
        }
        self.index.count_skipped(0, 1);
        Some(FileReport {
            searched: true,
            binary: indexed.binary,
            ..FileReport::default()
        })
    }

    /// Offer item `index` (at `relative`) for indexing: `content` is what a
    /// read that began at `start` found, all of it (`whole`) or its first
    /// block; its `fstat` said `metadata`. What its search searches is
    /// indexed: the whole of a text file; of a file with a NUL, nothing
    /// when it is searched as one block, else what comes before the NUL
    /// (the searcher stops there).
    pub(super) fn consider(
        &self,
        index: usize,
        relative: &[u8],
        metadata: &Metadata,
        start: ReadStart,
        (content, whole): (&[u8], bool),
    ) {
        let identity = Identity::of(metadata);
        let complete = !whole || identity.size == content.len() as u64;
        if identity.dev != self.device || !complete || has_bom(content) {
            return;
        }
        let searched = match memchr::memchr(0, content) {
            None if whole => content,
            None => return,
            Some(_) if identity.size <= SLICE_MAX as u64 => &[][..],
            Some(at) => &content[..at],
        };
        let entry = self.selected[self.item(index).candidate as usize];
        let offer = Offer {
            relative,
            identity,
            links: links_of(metadata),
            content: searched,
            binary: searched.len() < content.len(),
            start,
            stamp: self.stamp,
            entry: Some((self.entries, entry)),
        };
        self.index.offer(&self.corpus, &offer);
    }
}

/// The hard links of the file `metadata` describes (1 off Unix, where no
/// file is indexed anyway).
fn links_of(metadata: &Metadata) -> u64 {
    #[cfg(unix)]
    {
        std::os::unix::fs::MetadataExt::nlink(metadata)
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        1
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

    /// Whether a file holding `content` may match `needs`, as the index
    /// decides it from the file's trigrams.
    fn may_match(needs: &Needs, content: &str) -> bool {
        let held: std::collections::HashSet<u32> =
            super::super::index::distinct_trigrams(content.as_bytes())
                .into_iter()
                .collect();
        needs.requirements().iter().all(|alternatives| {
            alternatives
                .iter()
                .any(|trigrams| trigrams.iter().all(|t| held.contains(t)))
        })
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
            assert_eq!(Needs::parse(&spec(pattern)), None, "{pattern}");
        }
        assert_eq!(Needs::of(&spec("resolveWorkspaceRoot"), true), None);
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
