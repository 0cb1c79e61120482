//! Turning the caller's pattern into a matcher: one builder for directory
//! search, in-memory search and [`has_match`], so the three can never accept
//! different patterns or match differently.
//!
//! The regex options follow `rg`'s defaults (Unicode on, `^`/`$` at line
//! boundaries, octal escapes off, NUL banned from matches). Without
//! `multiline` a match never contains `\n` and a pattern that needs one is
//! rejected; with it, the pattern may span lines but `.` still stops at `\n`
//! unless the pattern says `(?s)`, exactly like `rg -U`.

use std::{borrow::Cow, ops::Range, sync::Arc};

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};

use super::{options::GrepOptions, recent::Recent};
use crate::error::{Error, Result};

/// Compiled patterns kept, the least recently used leaving first: an
/// agent's searches repeat, and a pattern with a Unicode class (`\w`)
/// takes tens of milliseconds to compile.
pub(crate) const COMPILED_KEPT: usize = 32;

/// The compiled patterns of recent searches, by pattern and options. A
/// matcher is shared, not copied, so the lazy DFA states it built in one
/// search serve the next.
static COMPILED: Recent<SpecKey, Arc<RegexMatcher>> = Recent::new(COMPILED_KEPT);

/// Everything that decides what a pattern matches.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MatcherSpec<'a> {
    pub pattern: &'a str,
    pub ignore_case: bool,
    pub smart_case: bool,
    pub literal: bool,
    pub multiline: bool,
    /// Matches only between word boundaries (`rg -w`).
    pub word: bool,
}

impl MatcherSpec<'_> {
    /// What `options` say about matching.
    pub(crate) fn of(options: &GrepOptions) -> MatcherSpec<'_> {
        MatcherSpec {
            pattern: &options.pattern,
            ignore_case: options.ignore_case,
            smart_case: options.smart_case,
            literal: options.literal,
            multiline: options.multiline,
            word: options.word_regexp,
        }
    }
}

/// Everything in a [`MatcherSpec`], owned: what a compiled pattern is kept
/// by.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct SpecKey {
    pattern: String,
    /// ignore_case, smart_case, literal, multiline, word.
    switches: [bool; 5],
}

impl MatcherSpec<'_> {
    /// The pattern and every switch that changes what it matches, as one
    /// string: a file with no match of one query has none of another
    /// query only when the two strings are equal.
    pub(crate) fn query(&self) -> String {
        let SpecKey { pattern, switches } = self.key();
        let switches: String = switches
            .iter()
            .map(|&on| if on { '1' } else { '0' })
            .collect();
        format!("{switches}{pattern}")
    }

    pub(crate) fn key(&self) -> SpecKey {
        SpecKey {
            pattern: self.pattern.to_string(),
            switches: [
                self.ignore_case,
                self.smart_case,
                self.literal,
                self.multiline,
                self.word,
            ],
        }
    }
}

/// The matcher for `spec`, compiled once and kept for later searches with
/// the same pattern and options (see [`COMPILED_KEPT`]); a bad pattern is
/// the error of [`build_matcher`], never kept.
pub(crate) fn compiled_matcher(spec: &MatcherSpec<'_>) -> Result<Arc<RegexMatcher>> {
    COMPILED.get_or_try(spec.key(), || build_matcher(spec).map(Arc::new))
}

/// The matcher kept for `spec` by an earlier search, if any.
pub(crate) fn kept_matcher(spec: &MatcherSpec<'_>) -> Option<Arc<RegexMatcher>> {
    COMPILED.get(&spec.key())
}

/// Build the matcher for `spec`. A bad pattern is `EINVAL` naming it and
/// carrying the regex engine's explanation.
pub(crate) fn build_matcher(spec: &MatcherSpec<'_>) -> Result<RegexMatcher> {
    let pattern = matcher_pattern(spec);
    let mut builder = RegexMatcherBuilder::new();
    builder
        .multi_line(true)
        .unicode(true)
        .octal(false)
        .fixed_strings(spec.literal)
        .case_insensitive(spec.ignore_case)
        .case_smart(spec.smart_case && !spec.ignore_case)
        .word(spec.word)
        .ban_byte(Some(b'\0'));
    if spec.multiline {
        builder.dot_matches_new_line(false);
    } else {
        builder
            .line_terminator(Some(b'\n'))
            .dot_matches_new_line(false);
    }
    builder.build(&pattern).map_err(|err| {
        Error::invalid(format!("invalid regex `{}`: {err}", spec.pattern))
            .with_option("pattern", spec.pattern)
    })
}

/// The pattern text the matcher is built from: the caller's, with stray
/// braces escaped unless it is a fixed string (which the builder escapes).
pub(crate) fn matcher_pattern<'a>(spec: &MatcherSpec<'a>) -> Cow<'a, str> {
    if spec.literal {
        Cow::Borrowed(spec.pattern)
    } else {
        escape_stray_braces(spec.pattern)
    }
}

/// Where a search's pattern matches inside the lines it reported, for
/// highlighting them: built from the same options as the search, so it
/// finds what the search found.
#[derive(Clone, Debug)]
pub struct Highlighter {
    matcher: Arc<RegexMatcher>,
}

impl Highlighter {
    /// The highlighter for a search with `options`; a bad pattern is the
    /// search's `EINVAL`.
    pub fn new(options: &GrepOptions) -> Result<Highlighter> {
        let matcher = compiled_matcher(&MatcherSpec::of(options))?;
        Ok(Highlighter { matcher })
    }

    /// The non-empty matches in `text` (a reported line, or the lines of a
    /// multi-line result joined by `\n`), as byte ranges, in order.
    pub fn ranges(&self, text: &str) -> Vec<Range<usize>> {
        let mut ranges = Vec::new();
        // The matcher's error type is uninhabited in practice; a failure
        // would leave the text unhighlighted, which is all it can mean.
        let _ = self.matcher.find_iter(text.as_bytes(), |found| {
            if !found.is_empty() {
                ranges.push(found.start()..found.end());
            }
            true
        });
        ranges
    }
}

/// How [`has_match`] matches. Field docs give the defaults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HasMatchOptions {
    /// Match case-insensitively. Default: `false`.
    pub ignore_case: bool,
    /// Let a match span lines. Default: `false`.
    pub multiline: bool,
}

/// Whether `content` contains a match of `pattern` (a regex, `{`/`}` taken
/// literally where they cannot be a repetition). Without `multiline` no
/// match spans a line break.
pub fn has_match(content: &[u8], pattern: &str, options: HasMatchOptions) -> Result<bool> {
    let matcher = compiled_matcher(&MatcherSpec {
        pattern,
        ignore_case: options.ignore_case,
        smart_case: false,
        literal: false,
        multiline: options.multiline,
        word: false,
    })?;
    // The matcher's error type is uninhabited in practice; a failure would
    // mean no match could be decided, which is what `false` reports.
    Ok(matcher.is_match(content).unwrap_or(false))
}

/// Escape every `{` that does not open a counted repetition (`{n}`, `{n,}`,
/// `{n,m}`) and every `}` that does not close one, so `${x}` and
/// `function() {` mean what their writer meant. Escapes (`\{`, and the
/// braces of `\p{..}`, `\x{..}`, `\u{..}`, `\U{..}`) and character classes
/// are left alone. A `$` right before a stray `{` is escaped too: as an
/// anchor it could never match there.
pub(crate) fn escape_stray_braces(pattern: &str) -> Cow<'_, str> {
    if !pattern.contains(['{', '}']) {
        return Cow::Borrowed(pattern);
    }
    let bytes = pattern.as_bytes();
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut at = 0;
    while at < bytes.len() {
        let token = match bytes[at] {
            b'\\' => escape_len(bytes, at),
            b'[' => class_len(bytes, at),
            b'{' => match repetition_len(&bytes[at..]) {
                Some(len) => len,
                None => {
                    out.push_str("\\{");
                    at += 1;
                    continue;
                }
            },
            // `$` before a stray `{` could only be an anchor that never
            // matches (no line ends in `{`): it is the `${` of a template.
            b'$' if bytes.get(at + 1) == Some(&b'{')
                && repetition_len(&bytes[at + 1..]).is_none() =>
            {
                out.push_str("\\$");
                at += 1;
                continue;
            }
            b'}' => {
                out.push_str("\\}");
                at += 1;
                continue;
            }
            _ => char_len(bytes[at]),
        };
        let end = (at + token).min(bytes.len());
        out.push_str(&pattern[at..end]);
        at = end;
    }
    Cow::Owned(out)
}

/// Length of the escape starting at `at` (a `\`), including the braced
/// argument of `\p{..}`-style escapes.
fn escape_len(bytes: &[u8], at: usize) -> usize {
    let Some(&next) = bytes.get(at + 1) else {
        return 1;
    };
    let braced =
        matches!(next, b'p' | b'P' | b'x' | b'u' | b'U') && bytes.get(at + 2) == Some(&b'{');
    if braced {
        return match bytes[at + 2..].iter().position(|&b| b == b'}') {
            Some(close) => close + 3,
            None => bytes.len() - at,
        };
    }
    1 + char_len(next)
}

/// Length of the character class starting at `at` (a `[`), nested classes
/// and escapes included; an unclosed class runs to the end (the regex
/// engine then reports it).
fn class_len(bytes: &[u8], at: usize) -> usize {
    let mut i = at + 1;
    if bytes.get(i) == Some(&b'^') {
        i += 1;
    }
    if bytes.get(i) == Some(&b']') {
        i += 1;
    }
    let mut depth = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1 - at;
                }
            }
            _ => {}
        }
        i += 1;
    }
    bytes.len() - at
}

/// Length of a counted repetition (`{n}`, `{n,}`, `{n,m}`; the regex
/// engine has no `{,m}`) at the start of `bytes`, if it is one.
fn repetition_len(bytes: &[u8]) -> Option<usize> {
    let digits = |from: usize| {
        bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let low = digits(1);
    if low == 0 {
        return None;
    }
    let mut i = 1 + low;
    if bytes.get(i) == Some(&b',') {
        i += 1 + digits(i + 1);
    }
    (bytes.get(i) == Some(&b'}')).then_some(i + 1)
}

/// Bytes in the UTF-8 character that starts with `lead`.
fn char_len(lead: u8) -> usize {
    match lead {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MULTILINE: HasMatchOptions = HasMatchOptions {
        ignore_case: false,
        multiline: true,
    };

    #[test]
    fn stray_braces_are_escaped() {
        let table: &[(&str, &str)] = &[
            ("${x}", r"\$\{x\}"),
            ("$", "$"),
            ("a${2}", "a${2}"),
            (r"\${x}", r"\$\{x\}"),
            ("function() {", r"function() \{"),
            ("a{2}", "a{2}"),
            ("a{2,}", "a{2,}"),
            ("a{2,5}", "a{2,5}"),
            ("a{,5}", r"a\{,5\}"),
            ("a{,}", r"a\{,\}"),
            ("a{x,2}", r"a\{x,2\}"),
            ("a{2", r"a\{2"),
            ("}", r"\}"),
            ("{}", r"\{\}"),
            ("{{2}}", r"\{{2}\}"),
            (r"\{x\}", r"\{x\}"),
            (r"\p{Greek}+{", r"\p{Greek}+\{"),
            (r"\x{41}{2}", r"\x{41}{2}"),
            ("[{}]{3}", "[{}]{3}"),
            ("[]{]", "[]{]"),
            ("[[:alpha:]{]x{", r"[[:alpha:]{]x\{"),
            ("é{1}ü{", r"é{1}ü\{"),
            (r"\\{", r"\\\{"),
            ("no braces", "no braces"),
        ];
        for &(input, expected) in table {
            assert_eq!(escape_stray_braces(input), expected, "{input}");
        }
    }

    #[test]
    fn braces_match_literally_or_as_repetitions() {
        let table: &[(&str, &str, bool)] = &[
            ("${name}", "let s = `${name}`;", true),
            (r"function\(\) {", "const f = function() {", true),
            ("} else {", "  } else {", true),
            ("a{3}", "xaaay", true),
            ("a{3}", "xaay", false),
            ("a{,2}b", "xa{,2}b", true),
            ("x}", "x}", true),
        ];
        for &(pattern, text, expected) in table {
            let got = has_match(text.as_bytes(), pattern, HasMatchOptions::default()).unwrap();
            assert_eq!(got, expected, "{pattern} in {text}");
        }
    }

    #[test]
    fn bad_regex_is_einval_with_engine_message() {
        let err = has_match(b"x", "a(b", HasMatchOptions::default()).unwrap_err();
        assert_eq!(err.code(), "EINVAL");
        assert!(err.message().contains("`a(b`"), "{}", err.message());
        assert_eq!((err.option(), err.value()), (Some("pattern"), Some("a(b")));
        assert!(
            err.message().contains("unclosed group"),
            "{}",
            err.message()
        );
        let err = has_match(b"x", r"a\nb", HasMatchOptions::default()).unwrap_err();
        assert_eq!(err.code(), "EINVAL", "a line break needs multiline");
        assert!(has_match(b"a\nb", r"a\nb", MULTILINE).unwrap());
    }

    #[test]
    fn case_and_literal_table() {
        // (pattern, ignore_case, smart_case, literal, haystack, expected)
        let table: &[(&str, bool, bool, bool, &str, bool)] = &[
            ("hello", false, false, false, "HELLO", false),
            ("hello", true, false, false, "HELLO", true),
            ("hello", false, true, false, "HELLO", true),
            ("Hello", false, true, false, "HELLO", false),
            ("Hello", false, true, false, "Hello", true),
            ("Hello", true, true, false, "HELLO", true),
            ("a.b", false, false, true, "axb", false),
            ("a.b", false, false, true, "a.b", true),
            ("(x", false, false, true, "f(x)", true),
            ("${x}", false, false, true, "${x}", true),
            ("A.B", false, true, true, "a.b", false),
            ("a.b", false, true, true, "A.B", true),
        ];
        for &(pattern, ignore_case, smart_case, literal, text, expected) in table {
            let matcher = build_matcher(&MatcherSpec {
                pattern,
                ignore_case,
                smart_case,
                literal,
                multiline: false,
                word: false,
            })
            .unwrap();
            assert_eq!(
                matcher.is_match(text.as_bytes()).unwrap(),
                expected,
                "{pattern:?} i={ignore_case} s={smart_case} F={literal} in {text:?}"
            );
        }
    }

    #[test]
    fn highlights_are_the_matches_of_the_same_options() {
        let mut options = GrepOptions::new("needle", "");
        options.word_regexp = true;
        options.ignore_case = true;
        let highlighter = Highlighter::new(&options).unwrap();
        assert_eq!(
            highlighter.ranges("a Needle, needles, NEEDLE"),
            [2..8, 19..25]
        );
        options.pattern = "x*".into();
        let empty_only = Highlighter::new(&options).unwrap();
        assert!(empty_only.ranges("abc").is_empty());
        options.pattern = "(".into();
        assert_eq!(Highlighter::new(&options).unwrap_err().code(), "EINVAL");
    }

    /// A pattern compiled once is kept for the next search with the same
    /// options, shared rather than rebuilt; another option is another
    /// matcher, and a bad pattern is refused every time.
    #[test]
    fn compiled_patterns_are_kept_by_pattern_and_options() {
        let spec = MatcherSpec {
            pattern: "kept_by_pattern_and_options\\w+",
            ignore_case: false,
            smart_case: false,
            literal: false,
            multiline: false,
            word: false,
        };
        let first = compiled_matcher(&spec).unwrap();
        assert!(Arc::ptr_eq(&first, &compiled_matcher(&spec).unwrap()));
        let folded = MatcherSpec {
            ignore_case: true,
            ..spec
        };
        let other = compiled_matcher(&folded).unwrap();
        assert!(!Arc::ptr_eq(&first, &other));
        assert!(other.is_match(b"KEPT_BY_PATTERN_AND_OPTIONSx").unwrap());
        assert!(!first.is_match(b"KEPT_BY_PATTERN_AND_OPTIONSx").unwrap());
        let bad = MatcherSpec {
            pattern: "kept(",
            ..spec
        };
        for _ in 0..2 {
            assert_eq!(compiled_matcher(&bad).unwrap_err().code(), "EINVAL");
        }
    }

    #[test]
    fn multiline_dot_stops_at_newline_unless_dotall() {
        assert!(has_match(b"a\nb", r"a\s+b", MULTILINE).unwrap());
        assert!(!has_match(b"a\nb", "a.b", MULTILINE).unwrap());
        assert!(has_match(b"a\nb", "(?s)a.b", MULTILINE).unwrap());
        assert!(!has_match(b"a\nb", r"a\s+b", HasMatchOptions::default()).unwrap());
    }
}
