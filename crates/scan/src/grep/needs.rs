//! The trigrams a pattern needs of a file's content, for the content
//! index to rule files out by (see `prefilter` and `content_index`).
//!
//! What a pattern needs comes from `regex-syntax`'s literal
//! extractor, run on the pattern as the matcher reads it. When it yields
//! a finite set of prefix literals, every match starts with one of them,
//! so a file can match only if all the trigrams of at least one of them
//! occur in it; the suffix literals are a requirement of their own. When
//! `ignore_case` or `smart_case` may make the search case-insensitive,
//! the pattern is still read case-sensitively (case variants would blow
//! the extractor's limits after a few letters) and only trigrams of ASCII
//! bytes other than `k` and `s` are kept: a case-insensitive match holds,
//! where the literal has such a byte, the same byte up to ASCII case,
//! whereas `k` and `s` also match `K` (Kelvin) and `ſ` (long s). A test
//! checks that against the regex parser's own case folding. A set holding
//! a literal with no trigram left, an infinite set and an inverted search
//! need nothing, and no file is skipped. What a pattern needs is kept
//! with its compiled matcher (see `pattern`).

use std::sync::Arc;

use regex_syntax::hir::literal::{ExtractKind, Extractor, Literal};

use super::{
    pattern::{MatcherSpec, SpecKey, matcher_pattern},
    recent::Recent,
};

/// What recent patterns need, kept beside their compiled matchers.
static NEEDS: Recent<SpecKey, Option<Arc<Needs>>> = Recent::new(super::pattern::COMPILED_KEPT);

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
            crate::content_index::distinct_trigrams(content.as_bytes())
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
}
