//! Table-driven grep tests over small fixture trees. Agreement with `rg`
//! itself is checked in `tests/rg_parity.rs`.

use std::{
    fs,
    path::Path,
    time::{Duration, Instant},
};

use natives_testkit::tree;

use super::*;
use crate::{cache::CachePolicy, walk::ScanPolicy};

fn run_with(
    path: &Path,
    cache: &ScanCache,
    configure: impl FnOnce(&mut GrepOptions),
) -> Result<GrepOutcome> {
    let mut options = GrepOptions::new("", path);
    configure(&mut options);
    grep(&options, cache, &CancelToken::new(), &mut |_| {})
}

fn run(path: &Path, configure: impl FnOnce(&mut GrepOptions)) -> GrepOutcome {
    run_with(path, &ScanCache::new(CachePolicy::default()), configure).unwrap()
}

/// `path:line` (or `path=count` in count mode) for each result.
fn keys(outcome: &GrepOutcome) -> Vec<String> {
    outcome
        .matches
        .iter()
        .map(|m| match (m.line_number, m.match_count) {
            (0, 0) => m.path_lossy().into_owned(),
            (0, count) => format!("{}={count}", m.path_lossy()),
            (line, _) => format!("{}:{line}", m.path_lossy()),
        })
        .collect()
}

/// Twelve files, `f00` to `f11`, each with three matching lines among
/// others; listed out of order so the walk's order cannot be an accident.
fn many_files() -> tempfile::TempDir {
    let files: Vec<(String, String)> = (0..12)
        .rev()
        .map(|i| {
            let dir = if i % 2 == 0 { "even" } else { "odd" };
            let name = format!("{dir}/f{i:02}.txt");
            (name, "hit a\nmiss\nhit b\nmiss\nhit c\n".to_string())
        })
        .collect();
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    tree(&borrowed)
}

#[test]
fn results_are_in_path_then_line_order() {
    let dir = many_files();
    let outcome = run(dir.path(), |o| o.pattern = "hit".into());
    let mut expected = Vec::new();
    for dir in ["even", "odd"] {
        for i in (0..12).filter(|i| (i % 2 == 0) == (dir == "even")) {
            for line in [1, 3, 5] {
                expected.push(format!("{dir}/f{i:02}.txt:{line}"));
            }
        }
    }
    assert_eq!(keys(&outcome), expected);
    assert_eq!(outcome.total_matches, 36);
    assert_eq!(outcome.files_with_matches, 12);
    assert_eq!(outcome.files_searched, 12);
    assert!(!outcome.limit_reached);
}

/// Files three and four levels down, so a walk without the cache hands
/// them out a subtree at a time (see `walk::ordered`).
fn nested_files() -> tempfile::TempDir {
    let files: Vec<(String, String)> = (0..12)
        .rev()
        .map(|i| {
            let name = format!("d{}/e{}/{}f{i:02}.txt", i % 3, i % 2, ["", "g/"][i % 2]);
            (name, "hit a\nmiss\nhit b\n".to_string())
        })
        .collect();
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    tree(&borrowed)
}

#[test]
fn offset_and_max_count_cut_one_ordered_sequence_exactly() {
    for dir in [many_files(), nested_files()] {
        cut_one_ordered_sequence(dir.path());
    }
}

fn cut_one_ordered_sequence(dir: &Path) {
    for mode in [
        GrepMode::Content,
        GrepMode::Count,
        GrepMode::FilesWithMatches,
    ] {
        let full = keys(&run(dir, |o| {
            o.pattern = "hit".into();
            o.mode = mode;
        }));
        let cached = keys(&run(dir, |o| {
            o.pattern = "hit".into();
            o.mode = mode;
            o.cache = true;
        }));
        assert_eq!(full, cached, "{mode:?}: the walk and the cache agree");
        // (offset, max_count): around file and line boundaries and the end.
        let table = [
            (0, 0),
            (0, 1),
            (0, 2),
            (1, 2),
            (2, 3),
            (3, 3),
            (5, 7),
            (0, full.len() - 1),
            (0, full.len()),
            (1, full.len() - 1),
            (full.len() - 1, 1),
            (full.len(), 1),
            (full.len() + 4, 2),
            (0, full.len() + 10),
        ];
        for ((offset, max), use_cache) in table.into_iter().flat_map(|c| [(c, false), (c, true)]) {
            let mut seen = Vec::new();
            let mut options = GrepOptions::new("hit", dir);
            options.cache = use_cache;
            options.mode = mode;
            options.offset = offset;
            options.max_count = Some(max);
            let cache = ScanCache::new(CachePolicy::default());
            let outcome =
                grep(&options, &cache, &CancelToken::new(), &mut |m| seen.push(m)).unwrap();
            let start = offset.min(full.len());
            let end = offset.saturating_add(max).min(full.len());
            let label = format!("{mode:?} offset {offset} max {max} cache {use_cache}");
            assert_eq!(keys(&outcome), full[start..end], "{label}");
            assert_eq!(seen, outcome.matches, "{label}: on_match saw the results");
            assert_eq!(
                outcome.limit_reached,
                full.len() > offset + max,
                "{label}: limit_reached"
            );
        }
    }
}

#[test]
fn count_and_files_with_matches_modes() {
    let dir = tree(&[
        ("a.txt", "x\nx\ny\n"),
        ("b.txt", "y\n"),
        ("c/d.txt", "x y x\n"),
    ]);
    let count = run(dir.path(), |o| {
        o.pattern = "x".into();
        o.mode = GrepMode::Count;
    });
    assert_eq!(keys(&count), ["a.txt=2", "c/d.txt=1"]);
    assert_eq!(count.total_matches, 3);
    assert_eq!(count.files_with_matches, 2);
    assert_eq!(count.files_searched, 3);

    let files = run(dir.path(), |o| {
        o.pattern = "x".into();
        o.mode = GrepMode::FilesWithMatches;
    });
    assert_eq!(keys(&files), ["a.txt", "c/d.txt"]);
    assert_eq!(files.total_matches, 2);
    assert!(files.matches.iter().all(|m| m.line.is_empty()));
}

#[test]
fn context_lines_are_attached_once() {
    let text = "1\n2 hit\n3\n4\n5 hit\n6\n7\n8\n9\n10 hit\n11\n";
    let dir = tree(&[("a.txt", text)]);
    let outcome = run(dir.path(), |o| {
        o.pattern = "hit".into();
        o.context(2);
    });
    let numbers = |lines: &[(u64, String)]| lines.iter().map(|l| l.0).collect::<Vec<_>>();
    let got: Vec<_> = outcome
        .matches
        .iter()
        .map(|m| {
            (
                numbers(&m.context_before),
                m.line_number,
                numbers(&m.context_after),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (vec![1], 2, vec![3, 4]),
            (vec![], 5, vec![6, 7]),
            (vec![8, 9], 10, vec![11]),
        ]
    );
    assert_eq!(outcome.matches[0].context_before[0].1, "1");
}

#[test]
fn max_columns_cuts_on_char_boundaries() {
    let text = "héllo wörld ✓✓✓ 🎉 end\nshort\n";
    // (max_columns, expected line, truncated)
    let table: &[(Option<usize>, &str, bool)] = &[
        (None, "héllo wörld ✓✓✓ 🎉 end", false),
        (Some(2), "hé", true),
        (Some(13), "héllo wörld ✓", true),
        (Some(17), "héllo wörld ✓✓✓ 🎉", true),
        (Some(21), "héllo wörld ✓✓✓ 🎉 end", false),
        (Some(0), "", true),
    ];
    for &(max_columns, expected, truncated) in table {
        let mut options = GrepOptions::new("llo", "");
        options.max_columns = max_columns;
        let outcome = search(text.as_bytes(), &options, &CancelToken::new()).unwrap();
        assert_eq!(outcome.matches[0].line, expected, "{max_columns:?}");
        assert_eq!(outcome.matches[0].truncated, truncated, "{max_columns:?}");
    }
    let mut options = GrepOptions::new("short", "");
    options.max_columns = Some(2);
    options.context_before = 1;
    let outcome = search(text.as_bytes(), &options, &CancelToken::new()).unwrap();
    assert_eq!(outcome.matches[0].context_before[0].1, "hé");
    assert!(
        outcome.matches[0].truncated,
        "a cut context line marks the result"
    );
}

#[test]
fn in_memory_search_modes() {
    let text = b"alpha\nbeta\nALPHA\ngamma alpha\n";
    let mut options = GrepOptions::new("alpha", "");
    options.smart_case = true;
    let outcome = search(text, &options, &CancelToken::new()).unwrap();
    let lines: Vec<_> = outcome.matches.iter().map(|m| m.line_number).collect();
    assert_eq!(lines, [1, 3, 4]);
    assert!(outcome.matches.iter().all(|m| m.path.is_empty()));
    options.mode = GrepMode::Count;
    let count = search(text, &options, &CancelToken::new()).unwrap();
    assert_eq!(count.matches[0].match_count, 3);
    options.mode = GrepMode::Content;
    options.multiline = true;
    options.pattern = r"beta\nALPHA".into();
    let multi = search(text, &options, &CancelToken::new()).unwrap();
    assert_eq!(multi.matches[0].line, "beta\nALPHA");
    assert_eq!(multi.matches[0].line_number, 2);
    assert_eq!(multi.total_matches, 1);
    let ignoring_case = HasMatchOptions {
        ignore_case: true,
        ..HasMatchOptions::default()
    };
    assert!(has_match(text, "GAMMA", ignoring_case).unwrap());
    assert!(!has_match(text, "GAMMA", HasMatchOptions::default()).unwrap());
}

/// `line:text` for each result of an in-memory search, context lines
/// marked with `-` as `rg` prints them.
fn numbered(text: &[u8], configure: impl FnOnce(&mut GrepOptions)) -> (Vec<String>, u64) {
    let mut options = GrepOptions::new("", "");
    configure(&mut options);
    let outcome = search(text, &options, &CancelToken::new()).unwrap();
    let mut lines = Vec::new();
    for m in &outcome.matches {
        let context = |(n, l): &(u64, String)| format!("{n}-{l}");
        lines.extend(m.context_before.iter().map(context));
        match m.match_count {
            0 => lines.push(format!("{}:{}", m.line_number, m.line)),
            count => lines.push(format!("count {count}")),
        }
        lines.extend(m.context_after.iter().map(context));
    }
    (lines, outcome.total_matches)
}

#[test]
fn word_invert_and_only_matching() {
    let text = b"a needle, needles\nneedle-x needle\nhay\n_needle\n";
    // (pattern, word, invert, only matching, multiline, context, mode, expected lines, total)
    type Case = (
        &'static str,
        bool,
        bool,
        bool,
        bool,
        usize,
        GrepMode,
        &'static [&'static str],
        u64,
    );
    let table: &[Case] = &[
        (
            "needle",
            true,
            false,
            false,
            false,
            0,
            GrepMode::Content,
            &["1:a needle, needles", "2:needle-x needle"],
            2,
        ),
        (
            "needle",
            false,
            true,
            false,
            false,
            0,
            GrepMode::Content,
            &["3:hay"],
            1,
        ),
        (
            "needle",
            true,
            true,
            false,
            false,
            0,
            GrepMode::Content,
            &["3:hay", "4:_needle"],
            2,
        ),
        (
            "needle",
            false,
            true,
            false,
            false,
            1,
            GrepMode::Content,
            &["2-needle-x needle", "3:hay", "4-_needle"],
            1,
        ),
        (
            "needles?",
            false,
            false,
            true,
            false,
            0,
            GrepMode::Content,
            &["1:needle", "1:needles", "2:needle", "2:needle", "4:needle"],
            5,
        ),
        (
            "needle",
            true,
            false,
            true,
            false,
            1,
            GrepMode::Content,
            &["1:needle", "2:needle", "2:needle", "3-hay"],
            3,
        ),
        // An inverted line holds no match: it is reported whole.
        (
            "needle",
            false,
            true,
            true,
            false,
            0,
            GrepMode::Content,
            &["3:hay"],
            1,
        ),
        (
            r"x needle\nhay",
            false,
            false,
            true,
            true,
            0,
            GrepMode::Content,
            &["2:x needle\nhay"],
            1,
        ),
        (
            "needle",
            false,
            false,
            true,
            false,
            0,
            GrepMode::Count,
            &["count 5"],
            5,
        ),
        (
            "needle",
            true,
            false,
            false,
            false,
            0,
            GrepMode::Count,
            &["count 2"],
            2,
        ),
        (
            "needle",
            false,
            true,
            true,
            false,
            0,
            GrepMode::Count,
            &["count 1"],
            1,
        ),
        (
            r"needle\n",
            false,
            true,
            false,
            true,
            0,
            GrepMode::Count,
            &["count 2"],
            2,
        ),
    ];
    for &(pattern, word, invert, only, multiline, context, mode, expected, total) in table {
        let got = numbered(text, |o| {
            o.pattern = pattern.into();
            o.word_regexp = word;
            o.invert_match = invert;
            o.only_matching = only;
            o.multiline = multiline;
            o.mode = mode;
            o.context(context);
        });
        let label =
            format!("{pattern:?} w={word} v={invert} o={only} U={multiline} C={context} {mode:?}");
        assert_eq!(
            got,
            (expected.iter().map(|l| l.to_string()).collect(), total),
            "{label}"
        );
    }
}

#[test]
fn filters_glob_type_hidden_node_modules() {
    let dir = tree(&[
        ("src/a.rs", "needle\n"),
        ("src/b.ts", "needle\n"),
        ("docs/c.md", "needle\n"),
        (".hidden/d.rs", "needle\n"),
        ("node_modules/pkg/e.ts", "needle\n"),
        ("web/node_modules/f.rs", "needle\n"),
    ]);
    type Configure = fn(&mut GrepOptions);
    let table: &[(&str, Configure, &[&str])] = &[
        (
            "defaults: no dot-files, as rg",
            |_| {},
            &["docs/c.md", "src/a.rs", "src/b.ts"],
        ),
        (
            "hidden",
            |o| o.include_hidden = true,
            &[".hidden/d.rs", "docs/c.md", "src/a.rs", "src/b.ts"],
        ),
        (
            "glob name",
            |o| o.globs = vec!["*.rs".into()],
            &["src/a.rs"],
        ),
        (
            "glob name, hidden",
            |o| {
                o.globs = vec!["*.rs".into()];
                o.include_hidden = true;
            },
            &[".hidden/d.rs", "src/a.rs"],
        ),
        (
            "glob anchored",
            |o| o.globs = vec!["src/*".into()],
            &["src/a.rs", "src/b.ts"],
        ),
        (
            "glob negated",
            |o| o.globs = vec!["!*.rs".into()],
            &["docs/c.md", "src/b.ts"],
        ),
        ("type", |o| o.file_types = vec!["ts".into()], &["src/b.ts"]),
        (
            "globs: either selects",
            |o| o.globs = vec!["*.md".into(), "*.ts".into()],
            &["docs/c.md", "src/b.ts"],
        ),
        (
            "globs: a later exclusion wins",
            |o| o.globs = vec!["src/**".into(), "!*.ts".into()],
            &["src/a.rs"],
        ),
        (
            "types: either selects",
            |o| o.file_types = vec!["ts".into(), "md".into()],
            &["docs/c.md", "src/b.ts"],
        ),
        (
            "type negated",
            |o| o.file_types_not = vec!["rust".into()],
            &["docs/c.md", "src/b.ts"],
        ),
        (
            "type selected and another negated",
            |o| {
                o.file_types = vec!["rust".into(), "ts".into()];
                o.file_types_not = vec!["ts".into()];
            },
            &["src/a.rs"],
        ),
        (
            "glob and type",
            |o| {
                o.globs = vec!["src/**".into()];
                o.file_types = vec!["rust".into()];
            },
            &["src/a.rs"],
        ),
        (
            "glob names node_modules",
            |o| o.globs = vec!["node_modules/**".into()],
            &["node_modules/pkg/e.ts"],
        ),
        (
            "node_modules asked for",
            |o| {
                o.globs = vec!["*.rs".into()];
                o.include_node_modules = Some(true);
            },
            &["src/a.rs", "web/node_modules/f.rs"],
        ),
    ];
    for &(label, configure, expected) in table {
        let outcome = run(dir.path(), |o| {
            o.pattern = "needle".into();
            o.mode = GrepMode::FilesWithMatches;
            configure(o);
        });
        assert_eq!(keys(&outcome), expected, "{label}");
    }
    let err = run_with(dir.path(), &ScanCache::new(CachePolicy::default()), |o| {
        o.pattern = "needle".into();
        o.file_types = vec!["rustlang".into()];
    })
    .unwrap_err();
    assert_eq!(err.code(), "EINVAL");
    assert!(err.message().contains("rust"), "{}", err.message());
}

#[test]
fn single_file_path_and_non_files() {
    let dir = tree(&[("a.txt", "one\ntwo\n"), ("skip.md", "two\n")]);
    let outcome = run(&dir.path().join("a.txt"), |o| {
        o.pattern = "two".into();
        o.globs = vec!["*.md".into()];
    });
    assert_eq!(keys(&outcome), ["a.txt:2"], "a named file ignores the glob");
    assert_eq!(outcome.root, dir.path().canonicalize().unwrap());
    assert!(
        outcome.path_is_file,
        "the answer says the path was one file"
    );
    assert!(!run(dir.path(), |o| o.pattern = "two".into()).path_is_file);

    let missing = run_with(
        &dir.path().join("nope"),
        &ScanCache::new(CachePolicy::default()),
        |_| {},
    );
    assert_eq!(missing.unwrap_err().code(), "ENOENT");
    let bad = run_with(dir.path(), &ScanCache::new(CachePolicy::default()), |o| {
        o.pattern = "a(".into();
    });
    let bad = bad.unwrap_err();
    assert_eq!(bad.code(), "EINVAL");
    assert!(bad.message().contains("`a(`"), "{}", bad.message());
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
}

#[cfg(unix)]
#[test]
fn fifo_is_never_opened() {
    let dir = tree(&[("a.txt", "needle\n")]);
    mkfifo(&dir.path().join("pipe"));
    let started = Instant::now();
    let outcome = run(dir.path(), |o| o.pattern = "needle".into());
    assert_eq!(keys(&outcome), ["a.txt:1"]);
    assert_eq!(outcome.files_searched, 1);
    assert!(started.elapsed() < Duration::from_secs(5));

    let err = run_with(
        &dir.path().join("pipe"),
        &ScanCache::new(CachePolicy::default()),
        |o| {
            o.pattern = "needle".into();
        },
    )
    .unwrap_err();
    assert_eq!(err.code(), "EFTYPE");
    assert!(err.message().contains("pipe"), "{}", err.message());
}

#[test]
fn binary_files_are_counted_not_hidden() {
    let late = format!("needle early\n{}needle\0late\n", "filler\n".repeat(20_000));
    let dir = tree(&[
        ("early.bin", "needle\0here\nneedle again\n"),
        ("late.bin", &late),
        ("text.txt", "needle\n"),
    ]);
    let outcome = run(dir.path(), |o| o.pattern = "needle".into());
    assert_eq!(keys(&outcome), ["late.bin:1", "text.txt:1"]);
    assert_eq!(outcome.binary_files_skipped, 2);
    assert_eq!(outcome.files_searched, 3);

    let named = run(&dir.path().join("early.bin"), |o| {
        o.pattern = "needle".into()
    });
    assert_eq!(keys(&named), ["early.bin:1", "early.bin:2"]);
    assert_eq!(named.matches[0].line, "needle\0here");
    assert_eq!(named.binary_files_skipped, 0);
}

/// Whether a file whose NUL lies past its first 64 KiB shows the matches
/// before it does not depend on what the worker searched before: files with
/// lines far longer than a block, searched first by every worker, leave
/// the answer as it is alone.
#[test]
fn a_late_nul_is_judged_the_same_after_long_lines() {
    let late = format!("needle early\n{}needle\0late\n", "filler\n".repeat(12_000));
    let long = format!("{}\n", "x".repeat(300_000));
    let names: Vec<String> = (0..24).map(|i| format!("a{i:02}.txt")).collect();
    let mut files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), long.as_str())).collect();
    files.push(("z.bin", &late));
    let dir = tree(&files);
    let alone = run(&dir.path().join("z.bin"), |o| {
        o.pattern = "needle early".into()
    });
    assert_eq!(keys(&alone), ["z.bin:1"]);
    for round in 0..5 {
        let outcome = run(dir.path(), |o| o.pattern = "needle".into());
        assert_eq!(keys(&outcome), ["z.bin:1"], "round {round}");
        assert_eq!(outcome.binary_files_skipped, 1, "round {round}");
    }
}

#[test]
fn max_file_size_skips_and_counts() {
    let dir = tree(&[
        ("small.txt", "needle\n"),
        ("exact.txt", "needle 0123456789\n"),
        ("big.txt", "needle 0123456789 0123456789\n"),
    ]);
    let limit = fs::metadata(dir.path().join("exact.txt")).unwrap().len();
    let outcome = run(dir.path(), |o| {
        o.pattern = "needle".into();
        o.max_file_size = Some(limit);
    });
    assert_eq!(keys(&outcome), ["exact.txt:1", "small.txt:1"]);
    assert_eq!(outcome.files_skipped_too_large, 1);
    assert_eq!(outcome.files_searched, 2);
    let all = run(dir.path(), |o| o.pattern = "needle".into());
    assert_eq!(all.files_searched, 3);
    assert_eq!(all.files_skipped_too_large, 0);
}

#[test]
fn pre_cancelled_token_does_no_work() {
    let dir = many_files();
    let cache = ScanCache::new(CachePolicy::default());
    let token = CancelToken::new();
    token.cancel();
    let mut options = GrepOptions::new("hit", dir.path());
    options.cache = true;
    let mut calls = 0;
    let err = grep(&options, &cache, &token, &mut |_| calls += 1).unwrap_err();
    assert_eq!(err.code(), "ABORT_ERR");
    assert_eq!(calls, 0);
    assert_eq!(cache.stats().walks, 0, "no walk ran");
    let expired = CancelToken::new().with_timeout(Some(Duration::ZERO));
    assert_eq!(
        grep(&options, &cache, &expired, &mut |_| {})
            .unwrap_err()
            .code(),
        "ETIMEDOUT"
    );
    assert_eq!(
        search(b"hit", &options, &token).unwrap_err().code(),
        "ABORT_ERR"
    );
}

/// A 128 MiB text file, `big.txt` in `dir`.
fn big_file(dir: &Path) -> std::path::PathBuf {
    use std::io::Write;
    let path = dir.join("big.txt");
    let mut out = std::io::BufWriter::new(fs::File::create(&path).unwrap());
    let line = b"the quick brown fox jumps over the lazy dog 0123456789\n";
    for _ in 0..(128 << 20) / line.len() {
        out.write_all(line).unwrap();
    }
    out.flush().unwrap();
    path
}

/// When a cancelled search must have stopped, after its deadline or abort
/// (the promise is 50 ms; the margin absorbs a loaded, shared machine).
const STOP_BOUND: Duration = Duration::from_millis(500);
/// When the deadline fires, or the abort is raised.
const CANCEL_AFTER: Duration = Duration::from_millis(100);

/// The count search the cancellation test runs over `path`.
fn count_o(path: &Path, token: &CancelToken) -> Result<GrepOutcome> {
    // `o` occurs on every line: the slow path of one match per line.
    let mut options = GrepOptions::new("o", path);
    options.mode = GrepMode::Count;
    grep(&options, crate::cache::global(), token, &mut |_| {})
}

/// A directory of hard links to one 128 MiB text file, as many as it takes
/// for an uncancelled search of it to outlast twice the cancellation point
/// plus the stop bound here: on a fast machine (or in a release build) one
/// file could be searched before a late stop would show.
fn slow_to_search(dir: &Path) -> std::path::PathBuf {
    let corpus = dir.join("corpus");
    fs::create_dir(&corpus).unwrap();
    let first = big_file(&corpus);
    let wanted = 2 * (CANCEL_AFTER + STOP_BOUND);
    let mut names = 1;
    loop {
        // Still running at `wanted` is all this needs to know.
        let started = Instant::now();
        let token = CancelToken::new().with_timeout(Some(wanted));
        match count_o(&corpus, &token) {
            Err(err) if err.code() == "ETIMEDOUT" => return corpus,
            searched => drop(searched.unwrap()),
        }
        let took = started.elapsed();
        eprintln!("an uncancelled search of {names} x 128 MiB: {took:?}");
        let more = (wanted.as_secs_f64() / took.as_secs_f64()).ceil() as usize;
        for n in names..names * more.max(2) {
            fs::hard_link(&first, corpus.join(format!("big-{n}.txt"))).unwrap();
        }
        names *= more.max(2);
    }
}

#[test]
fn cancelling_inside_a_big_file_stops_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let path = slow_to_search(dir.path());
    for timeout in [false, true] {
        let token = CancelToken::new();
        let token = if timeout {
            token.with_timeout(Some(CANCEL_AFTER))
        } else {
            token
        };
        let canceller = token.clone();
        let started = Instant::now();
        let stopped_at = std::thread::scope(|scope| {
            if !timeout {
                scope.spawn(move || {
                    std::thread::sleep(CANCEL_AFTER);
                    canceller.cancel();
                });
            }
            let err = count_o(&path, &token).unwrap_err();
            assert_eq!(err.code(), if timeout { "ETIMEDOUT" } else { "ABORT_ERR" });
            started.elapsed()
        });
        let late = stopped_at.saturating_sub(CANCEL_AFTER);
        eprintln!(
            "stopped {late:?} after the {} fired",
            if timeout { "deadline" } else { "abort" }
        );
        assert!(late < STOP_BOUND, "stopped {late:?} late");
    }
}

#[test]
fn cache_partitions_follow_seed_001() {
    let dir = tree(&[("a.txt", "needle\n")]);
    // (cache, use_gitignore, scans stored afterwards)
    let table = [(false, true, 0), (true, false, 0), (true, true, 1)];
    for (use_cache, gitignore, stored) in table {
        let cache = ScanCache::new(CachePolicy::default());
        let outcome = run_with(dir.path(), &cache, |o| {
            o.pattern = "needle".into();
            o.cache = use_cache;
            o.use_gitignore = gitignore;
        })
        .unwrap();
        assert_eq!(outcome.files_with_matches, 1);
        assert_eq!(
            cache.stats().scans,
            stored,
            "cache {use_cache} gitignore {gitignore}"
        );
    }
}

#[test]
fn empty_candidate_list_is_rechecked_once() {
    let dir = tree(&[("a.md", "needle\n")]);
    let policy = CachePolicy::default()
        .ttl(Duration::from_secs(600))
        .empty_recheck(Duration::ZERO);
    let cache = ScanCache::new(policy);
    // A type, not a glob: a glob that selects files walks privately (see
    // `GrepOptions::glob`), and this is about the cached list.
    let configure = |o: &mut GrepOptions| {
        o.pattern = "needle".into();
        o.file_types = vec!["rust".into()];
        o.cache = true;
    };
    assert_eq!(
        run_with(dir.path(), &cache, configure)
            .unwrap()
            .files_searched,
        0
    );
    fs::write(dir.path().join("new.rs"), "needle\n").unwrap();
    let walks = cache.stats().walks;
    let outcome = run_with(dir.path(), &cache, configure).unwrap();
    assert_eq!(
        keys(&outcome),
        ["new.rs:1"],
        "the stale empty list was rescanned"
    );
    assert_eq!(cache.stats().walks, walks + 1);
    // A non-empty candidate list is served from the cache as is.
    run_with(dir.path(), &cache, configure).unwrap();
    assert_eq!(cache.stats().walks, walks + 1);
}

#[test]
fn on_match_streams_before_the_search_ends() {
    let dir = tree(&[("a.txt", "needle\n")]);
    big_file(dir.path());
    let token = CancelToken::new();
    let mut options = GrepOptions::new("needle|o", dir.path());
    options.mode = GrepMode::Count;
    let mut seen = Vec::new();
    // The first result cancels the search: that can only stop it if the
    // result arrived while `big.txt` was still being searched.
    let err = grep(&options, crate::cache::global(), &token, &mut |m| {
        seen.push(m.path_lossy().into_owned());
        token.cancel();
    })
    .unwrap_err();
    assert_eq!(err.code(), "ABORT_ERR");
    assert_eq!(seen, ["a.txt"]);
}

/// A pattern with a Unicode class compiles slowly enough that workers read
/// files ahead meanwhile (see `run`); the results must not change.
#[test]
fn files_read_while_the_pattern_compiles_are_searched_alike() {
    let mut files: Vec<(String, String)> = (0..30)
        .map(|i| {
            let text = if i % 3 == 0 {
                format!("a\nneedle{i}x\nb\n")
            } else {
                "nothing\n".to_string()
            };
            (format!("d{}/f{i:02}.txt", i % 4), text)
        })
        .collect();
    files.push((
        "d3/zbig.txt".into(),
        format!("{}needleBig\n", "x\n".repeat(60_000)),
    ));
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = tree(&borrowed);
    let mut expected: Vec<String> = (0..30)
        .filter(|i| i % 3 == 0)
        .map(|i| format!("d{}/f{i:02}.txt:2", i % 4))
        .chain(["d3/zbig.txt:60001".to_string()])
        .collect();
    expected.sort();
    for use_cache in [false, true] {
        let outcome = run(dir.path(), |o| {
            o.pattern = r"needle\w+".into();
            o.cache = use_cache;
        });
        assert_eq!(keys(&outcome), expected, "cache {use_cache}");
        assert_eq!(outcome.files_searched, 31, "cache {use_cache}");
    }
}

/// More files than the walk of a limited search may find ahead of the
/// workers (it pauses and resumes, see `queue`): a pattern with a Unicode
/// class keeps the workers waiting for the compile while the walk goes on.
#[test]
fn a_limited_walk_far_ahead_of_the_search_pauses_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let sub = |i: usize| dir.path().join(format!("d{}/e{}", i % 5, i % 7));
    for i in 0..35 {
        fs::create_dir_all(sub(i)).unwrap();
    }
    for i in 0..4500 {
        let text = if i % 500 == 0 { "needle\n" } else { "hay\n" };
        fs::write(sub(i).join(format!("f{i:04}.txt")), text).unwrap();
    }
    let search = |max_count| {
        run(dir.path(), |o| {
            o.pattern = r"needle\w*".into();
            o.max_count = Some(max_count);
        })
    };
    let mut expected: Vec<String> = (0..4500)
        .step_by(500)
        .map(|i| format!("d{}/e{}/f{i:04}.txt:1", i % 5, i % 7))
        .collect();
    expected.sort();
    // A limit that needs every file, then one that stops early.
    let all = search(expected.len());
    assert_eq!(keys(&all), expected);
    assert_eq!(all.files_searched, 4500);
    assert!(!all.limit_reached);
    let first = search(3);
    assert_eq!(keys(&first), expected[..3]);
    assert!(first.limit_reached);
}

#[test]
fn max_count_per_file_caps_each_file_as_rg_m() {
    let dir = tree(&[
        ("a.txt", "needle 1\nhay\nneedle 3\nneedle 4\n"),
        ("b.txt", "needle 1\nneedle 2\n"),
    ]);
    // (per file, total, mode, context after, results)
    type Row = (u64, Option<usize>, GrepMode, usize, &'static [&'static str]);
    let table: &[Row] = &[
        (1, None, GrepMode::Content, 0, &["a.txt:1", "b.txt:1"]),
        (
            2,
            None,
            GrepMode::Content,
            0,
            &["a.txt:1", "a.txt:3", "b.txt:1", "b.txt:2"],
        ),
        (
            2,
            Some(3),
            GrepMode::Content,
            0,
            &["a.txt:1", "a.txt:3", "b.txt:1"],
        ),
        (0, None, GrepMode::Content, 0, &[]),
        (2, None, GrepMode::Count, 0, &["a.txt:2", "b.txt:2"]),
        (
            1,
            None,
            GrepMode::FilesWithMatches,
            0,
            &["a.txt:0", "b.txt:0"],
        ),
    ];
    for &(per_file, total, mode, after, expected) in table {
        let outcome = run(dir.path(), |o| {
            o.pattern = "needle".into();
            o.max_count_per_file = Some(per_file);
            o.max_count = total;
            o.mode = mode;
            o.context_after = after;
        });
        let got: Vec<String> = outcome
            .matches
            .iter()
            .map(|m| match mode {
                GrepMode::Content => format!("{}:{}", m.path_lossy(), m.line_number),
                _ => format!("{}:{}", m.path_lossy(), m.match_count),
            })
            .collect();
        assert_eq!(got, expected, "-m {per_file} {total:?} {mode:?}");
    }
    // As `rg -m 1 -A 1`: the last match's after-context is still printed.
    let outcome = run(dir.path(), |o| {
        o.pattern = "needle".into();
        o.max_count_per_file = Some(1);
        o.context_after = 1;
    });
    assert_eq!(outcome.matches[0].context_after, [(2, "hay".to_string())]);
}

/// A cached list is up to a TTL old: a file or a directory it lists that
/// has since been replaced by a symlink out of the root must not be
/// searched through the link (it counts as unreadable), while a file the
/// caller names through a link is followed.
#[cfg(unix)]
#[test]
fn listed_files_replaced_by_links_are_not_followed_out_of_the_root() {
    use std::os::unix::fs::symlink;
    let outside = tree(&[
        ("secret.txt", "needle outside\n"),
        ("dir/secret.txt", "needle outside\n"),
    ]);
    // (case, what is replaced, the link's target, what a search still finds)
    let cases = [
        (
            "file replaced",
            "a/f.txt",
            outside.path().join("secret.txt"),
            &["a/secret.txt:1", "b.txt:1"][..],
        ),
        (
            "directory replaced",
            "a",
            outside.path().join("dir"),
            &["b.txt:1"][..],
        ),
    ];
    for (name, replaced, target, left) in cases {
        let dir = tree(&[
            ("a/f.txt", "needle inside\n"),
            ("a/secret.txt", "needle inside\n"),
            ("b.txt", "needle b\n"),
        ]);
        let cache = ScanCache::new(CachePolicy::default().ttl(Duration::from_secs(600)));
        let search = |cache: &ScanCache| {
            run_with(dir.path(), cache, |o| {
                o.pattern = "needle".into();
                o.cache = true;
            })
            .unwrap()
        };
        assert_eq!(
            keys(&search(&cache)),
            ["a/f.txt:1", "a/secret.txt:1", "b.txt:1"],
            "{name}"
        );
        let at = dir.path().join(replaced);
        if at.is_dir() {
            fs::remove_dir_all(&at).unwrap();
        } else {
            fs::remove_file(&at).unwrap();
        }
        symlink(&target, &at).unwrap();
        let after = search(&cache);
        assert!(
            after.matches.iter().all(|m| !m.line.contains("outside")),
            "{name}: {:?}",
            keys(&after)
        );
        assert_eq!(keys(&after), left, "{name}");
        assert!(after.files_unreadable >= 1, "{name}: {after:?}");
    }
    let named = tempfile::tempdir().unwrap();
    symlink(
        outside.path().join("secret.txt"),
        named.path().join("link.txt"),
    )
    .unwrap();
    let outcome = run(&named.path().join("link.txt"), |o| {
        o.pattern = "needle".into()
    });
    assert_eq!(outcome.matches.len(), 1);
}

/// A cached grep over a tree the cache refused as too large searches while
/// a walk goes (no whole list built to be thrown away), and finds the same.
#[test]
fn a_scan_refused_as_too_large_is_searched_while_walked() {
    let dir = many_files();
    let configure = |o: &mut GrepOptions| {
        o.pattern = "hit".into();
        o.cache = true;
    };
    let mut options = GrepOptions::new("", dir.path());
    configure(&mut options);
    let cache = ScanCache::new(
        CachePolicy::default()
            .ttl(Duration::from_secs(600))
            .max_bytes(1),
    );
    let token = CancelToken::new();
    let first = select::candidates(&options, &cache, &token).unwrap();
    assert!(matches!(first, select::Candidates::Tree { .. }));
    assert_eq!(cache.stats().refused, 1);
    let then = select::candidates(&options, &cache, &token).unwrap();
    assert!(matches!(then, select::Candidates::Walk { .. }));
    let expected = keys(&run(dir.path(), |o| o.pattern = "hit".into()));
    assert_eq!(
        keys(&run_with(dir.path(), &cache, configure).unwrap()),
        expected
    );
    assert_eq!(cache.stats().scans, 0);
}

/// One slow file first in path order, then many files full of results: the
/// results waiting behind the slow file stay near the bound, where without a
/// bound they pile up; the answer is the same either way.
#[test]
fn results_waiting_behind_a_slow_file_stay_within_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    // Word-like text with digits that never matches but keeps the regex busy
    // (no literal in the pattern lets it skip ahead).
    let slow: String = (0..1_500_000)
        .map(|i| format!("alpha beta gamma {i}\n"))
        .collect();
    fs::write(dir.path().join("a-slow.txt"), slow).unwrap();
    let line = format!("{}1\n", "w".repeat(40));
    for i in 0..2000 {
        fs::write(dir.path().join(format!("b{i:04}.txt")), line.repeat(20)).unwrap();
    }
    let bound = 64 * 1024;
    let search = |max_buffered_bytes: usize| {
        let mut options = GrepOptions::new(r"\w{30}\d", dir.path());
        options.max_buffered_bytes = max_buffered_bytes;
        let backlog = Backlog::new(max_buffered_bytes);
        let cache = ScanCache::new(CachePolicy::default());
        let hooks = Hooks {
            on_match: &mut |_| {},
            on_progress: &mut |_| {},
            observed: None,
        };
        let outcome =
            grep_with_backlog(&options, &cache, &CancelToken::new(), hooks, &backlog).unwrap();
        (outcome, backlog.peak())
    };
    let (bounded, bounded_peak) = search(bound);
    let (unbounded, unbounded_peak) = search(usize::MAX);
    assert_eq!(bounded.matches.len(), 2000 * 20);
    assert_eq!(keys(&bounded), keys(&unbounded));
    // Each worker may hand in a report or two (of ~4 KB) after the bound is passed.
    let workers = thread::available_parallelism().map_or(1, |n| n.get());
    assert!(
        bounded_peak <= bound + workers * 8 * 1024,
        "bounded peak {bounded_peak}"
    );
    // With one worker nothing is searched ahead, so nothing can pile up.
    if workers > 1 {
        assert!(
            unbounded_peak > 8 * bound,
            "the slow file did not hold anything up ({unbounded_peak} bytes)"
        );
    }
}

/// `retain_matches: false` passes every result to `on_match` and keeps none.
#[test]
fn results_can_be_streamed_without_being_retained() {
    let dir = many_files();
    let mut seen = Vec::new();
    let mut options = GrepOptions::new("hit", dir.path());
    options.retain_matches = false;
    let outcome = grep(
        &options,
        &ScanCache::new(CachePolicy::default()),
        &CancelToken::new(),
        &mut |m| seen.push(format!("{}:{}", m.path_lossy(), m.line_number)),
    )
    .unwrap();
    assert!(outcome.matches.is_empty());
    assert_eq!(outcome.total_matches, 36);
    assert_eq!(seen, keys(&run(dir.path(), |o| o.pattern = "hit".into())));
}

#[test]
fn progress_follows_every_file_in_order() {
    let dir = many_files();
    let mut options = GrepOptions::new("hit", dir.path());
    let mut seen = Vec::new();
    let token = CancelToken::new();
    let cache = ScanCache::new(CachePolicy::default());
    let mut first = None;
    let outcome = grep_with_progress(&options, &cache, &token, &mut |_| {}, &mut |so_far| {
        first.get_or_insert_with(|| so_far.clone());
        seen.push((so_far.files_searched, so_far.total_matches))
    })
    .unwrap();
    // First the resolved `path`, before any file is searched.
    let first = first.unwrap();
    assert_eq!(
        (first.root.clone(), first.path_is_file),
        (outcome.root.clone(), false)
    );
    let expected: Vec<(usize, u64)> = (0..=12).map(|files| (files, 3 * files as u64)).collect();
    assert_eq!(seen, expected);
    assert_eq!(outcome.files_searched, 12);
    // A limited search stops at the file proving the limit, and so do the reports.
    options.max_count = Some(4);
    seen.clear();
    grep_with_progress(&options, &cache, &token, &mut |_| {}, &mut |so_far| {
        seen.push((so_far.files_searched, so_far.total_matches))
    })
    .unwrap();
    assert_eq!(seen, [(0, 0), (1, 3), (2, 6)]);
    // A named file is known to be one before its results come.
    options.path = dir
        .path()
        .join(keys(&outcome)[0].split(':').next().unwrap());
    let mut named = Vec::new();
    grep_with_progress(&options, &cache, &token, &mut |_| {}, &mut |so_far| {
        named.push((so_far.files_searched, so_far.path_is_file))
    })
    .unwrap();
    assert_eq!(named, [(0, true), (1, true)]);
}

/// Files whose last change is older than the racy margin, so cached greps
/// sign them: sources that differ in the identifiers they hold, a binary
/// file, a file with a byte-order mark, a text file above one block and one
/// whose NUL lies past the first block.
fn settled_tree() -> tempfile::TempDir {
    let mut files: Vec<(String, Vec<u8>)> = (0..40)
        .map(|i| {
            let text = format!("fn item_{i}() {{\n    let value_{i} = compute({i});\n}}\n");
            (format!("src/m{:02}.rs", i % 7), text.into_bytes())
        })
        .collect();
    files.sort();
    files.dedup_by(|a, b| a.0 == b.0);
    files.push((
        "src/lib.rs".into(),
        b"pub fn resolveWorkspaceRoot() {}\n// TODO: more\n".to_vec(),
    ));
    files.push(("data.bin".into(), b"needle\0resolveWorkspaceRoot".to_vec()));
    files.push((
        "bom.txt".into(),
        b"\xEF\xBB\xBFresolveWorkspaceRoot\n".to_vec(),
    ));
    files.push(("big.txt".into(), "filler line\n".repeat(8000).into_bytes()));
    let mut late_nul = "filler line\n".repeat(7000).into_bytes();
    late_nul.extend_from_slice(b"needle past the first block\n\0needle after the NUL\n");
    files.push(("late-nul.txt".into(), late_nul));
    let borrowed: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_slice()))
        .collect();
    let dir = tree(&borrowed);
    std::thread::sleep(crate::content_index::identity::RACY_MARGIN + Duration::from_millis(200));
    dir
}

fn long_lived_cache() -> ScanCache {
    ScanCache::new(CachePolicy::default().ttl(Duration::from_secs(600)))
}

/// Once cached greps have signed a tree, a cached grep answers exactly as an
/// uncached one for every kind of pattern and mode, while reading only the
/// files that may match.
#[test]
fn signatures_skip_files_without_changing_any_answer() {
    let dir = settled_tree();
    let cache = long_lived_cache();
    let warm = |pattern: &str| {
        for _ in 0..2 {
            run_with(dir.path(), &cache, |o| {
                o.pattern = pattern.into();
                o.cache = true;
            })
            .unwrap();
        }
    };
    warm("value");
    let mut answered = 0;
    // Every file is indexed, the large one too, and the binary ones (for
    // what their search reads before the NUL); the BOM one is not.
    let signed = cache.stats().content.files;
    assert_eq!(signed, 11, "{:?}", cache.stats().content);
    type Configure = fn(&mut GrepOptions);
    let cases: &[(&str, Configure)] = &[
        ("resolveWorkspaceRoot", |_| {}),
        ("resolveworkspaceroot", |o| o.ignore_case = true),
        ("resolveworkspaceroot", |o| o.smart_case = true),
        ("RESOLVEWORKSPACEROOT", |o| o.ignore_case = true),
        ("value_1[0-9]", |_| {}),
        ("item_3|value_5", |_| {}),
        ("[a-z]+WorkspaceRoot", |_| {}),
        ("compute(3)", |o| o.literal = true),
        ("todo", |o| o.ignore_case = true),
        ("zqxjkvbw_never", |_| {}),
        ("value_2", |o| o.word_regexp = true),
        ("value_2\\d", |o| o.mode = GrepMode::Count),
        ("item_1", |o| o.mode = GrepMode::FilesWithMatches),
        ("compute", |o| o.invert_match = true),
        ("item_4\\(\\) \\{\\n    let", |o| o.multiline = true),
        ("let value_6", |o| {
            o.context(1);
        }),
        ("filler", |o| o.max_count = Some(3)),
        ("needle", |_| {}),
        ("needle past", |_| {}),
        ("after the NUL", |_| {}),
        ("needle", |o| o.invert_match = true),
        ("", |o| o.mode = GrepMode::Count),
        ("resolveWorkspaceRoot", |o| o.max_file_size = Some(100)),
    ];
    for (pattern, configure) in cases {
        let uncached = run(dir.path(), |o| {
            o.pattern = (*pattern).into();
            configure(o);
        });
        let before = cache.stats().content.files_skipped;
        let cached = |cache: &ScanCache| {
            run_with(dir.path(), cache, |o| {
                o.pattern = (*pattern).into();
                o.cache = true;
                configure(o);
            })
            .unwrap()
        };
        let first = cached(&cache);
        let skipped = cache.stats().content.files_skipped - before;
        let answered_before = cache.stats().content.files_answered;
        // Again, with the files the first found nothing in ruled out too,
        // and those it found results in answered by their reports.
        let again = cached(&cache);
        answered += cache.stats().content.files_answered - answered_before;
        for cached in [first, again] {
            assert_eq!(cached.source, ListSource::Cached, "{pattern}");
            let walked = GrepOutcome {
                source: ListSource::Walked,
                ..cached
            };
            assert_eq!(walked, uncached, "{pattern}");
        }
        if *pattern == "zqxjkvbw_never" {
            assert_eq!(skipped, signed as u64, "{pattern} skips every signed file");
        }
        if *pattern == "compute" {
            assert_eq!(
                skipped, 1,
                "an inverted search skips only the binary file it never reads a line of"
            );
        }
    }
    assert!(
        answered > 20,
        "the repeated searches took reports as kept: {answered}"
    );
}

/// A change that keeps the size and puts the mtime back is still seen: the
/// signature is not trusted once ctime moved. A file changed just before
/// it was read is never signed.
#[test]
fn a_signed_file_changed_in_place_is_read_again() {
    let dir = settled_tree();
    let cache = long_lived_cache();
    let search = |pattern: &str| {
        run_with(dir.path(), &cache, |o| {
            o.pattern = pattern.into();
            o.cache = true;
        })
        .unwrap()
    };
    for _ in 0..2 {
        search("value");
    }
    let path = dir.path().join("src/lib.rs");
    assert!(keys(&search("swapped")).is_empty());
    let signed = cache.stats().content.files;
    let old = fs::read(&path).unwrap();
    let mtime = fs::metadata(&path).unwrap().modified().unwrap();
    let new = String::from_utf8(old.clone())
        .unwrap()
        .replace("resolveWorkspaceRoot", "swappedWorkspaceRoot");
    assert_eq!(new.len(), old.len());
    fs::write(&path, &new).unwrap();
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(keys(&search("swapped")), ["src/lib.rs:1"]);
    // Read twice right after its change: forgotten, not signed again.
    search("value");
    search("value");
    assert_eq!(cache.stats().content.files, signed - 1);
    assert_eq!(keys(&search("swapped")), ["src/lib.rs:1"]);
    // A signed file of the cached list replaced by a link to a match is
    // neither followed nor trusted: it is counted unreadable.
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("target.txt"), "zqxjkvbw").unwrap();
    let m00 = dir.path().join("src/m00.rs");
    fs::remove_file(&m00).unwrap();
    std::os::unix::fs::symlink(outside.path().join("target.txt"), &m00).unwrap();
    let outcome = search("zqxjkvbw");
    assert!(keys(&outcome).is_empty());
    assert_eq!(outcome.files_unreadable, 1);
}

/// With no budget for them, nothing is signed and nothing skipped.
#[test]
fn signatures_can_be_turned_off() {
    let dir = settled_tree();
    let cache = ScanCache::new(
        CachePolicy::default()
            .ttl(Duration::from_secs(600))
            .content_bytes(0),
    );
    for _ in 0..3 {
        run_with(dir.path(), &cache, |o| {
            o.pattern = "zqxjkvbw_never".into();
            o.cache = true;
        })
        .unwrap();
    }
    assert_eq!(cache.stats().content, ContentStats::default());
}

/// A text file too large to index is read by every cached search, whole:
/// what its first block holds does not stand for the rest.
#[test]
fn a_file_too_large_to_index_is_searched_whole_every_time() {
    let mut big = "filler line\n".repeat(400_000).into_bytes();
    big.extend_from_slice(b"needle at the very end\n");
    let dir = tree(&[("big.txt", big.as_slice()), ("small.txt", b"needle\n")]);
    std::thread::sleep(crate::content_index::identity::RACY_MARGIN + Duration::from_millis(200));
    let cache = long_lived_cache();
    for _ in 0..3 {
        let outcome = run_with(dir.path(), &cache, |o| {
            o.pattern = "needle at".into();
            o.cache = true;
        })
        .unwrap();
        assert_eq!(keys(&outcome), ["big.txt:400001"]);
    }
    assert_eq!(cache.stats().content.files, 1, "only the small file");
}

/// A file too large to index is searched alike whether read whole (one
/// line of megabytes, text throughout, or a NUL past its first block) or
/// streamed (above the size read whole): cached as uncached.
#[test]
fn a_file_too_large_to_index_answers_alike_read_whole_or_streamed() {
    let one_line = format!("needle {} needle\n", "x".repeat(5 << 20));
    let mut late_nul = "needle before\n".repeat(400_000).into_bytes();
    late_nul.extend_from_slice(b"\0needle after\n");
    let streamed = "needle line\n".repeat(1_600_000);
    let dir = tree(&[
        ("a-one-line.js", one_line.as_bytes()),
        ("b-late-nul.txt", late_nul.as_slice()),
        ("c-streamed.txt", streamed.as_bytes()),
    ]);
    let cache = long_lived_cache();
    let search = |cached: bool| {
        let outcome = run_with(dir.path(), &cache, |o| {
            o.pattern = "needle".into();
            o.cache = cached;
        })
        .unwrap();
        let lines = outcome
            .matches
            .iter()
            .map(|m| (m.line_number, m.line.len()));
        (
            keys(&outcome).len(),
            lines.collect::<Vec<_>>(),
            outcome.binary_files_skipped,
        )
    };
    let uncached = search(false);
    assert_eq!(uncached.1[0], (1, one_line.len() - 1), "the whole line");
    for _ in 0..2 {
        assert_eq!(search(true), uncached);
    }
}

/// Writes `path:line` for every match its sink sees.
struct LineNumbers;

impl FileObserver for LineNumbers {
    fn observe(
        &self,
        path: &[u8],
        _: &grep_regex::RegexMatcher,
        search: &mut dyn FnMut(
            &mut dyn grep_searcher::Sink<Error = std::io::Error>,
        ) -> std::io::Result<()>,
    ) -> std::io::Result<Vec<u8>> {
        let mut written = Vec::new();
        let mut sink = grep_searcher::sinks::UTF8(|line, _: &str| {
            written.extend_from_slice(path);
            written.extend_from_slice(format!(":{line}\n").as_bytes());
            Ok(true)
        });
        search(&mut sink)?;
        Ok(written)
    }
}

#[test]
fn an_observer_sees_every_file_s_events_handed_out_in_path_order() {
    let files: Vec<(String, String)> = (0..40)
        .map(|i| {
            (
                format!("d{}/f{i:02}.txt", i % 3),
                "hay\nneedle\nneedle\n".repeat(1 + i % 4),
            )
        })
        .collect();
    let spec: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let dir = tree(&spec);
    let mut options = GrepOptions::new("needle", dir.path());
    options.max_count_per_file = Some(3);
    let mut observed = Vec::new();
    let outcome = grep_observed(
        &options,
        &ScanCache::new(CachePolicy::default()),
        &CancelToken::new(),
        &LineNumbers,
        &mut |bytes| observed.extend_from_slice(bytes),
        &mut |_| {},
    )
    .unwrap();
    let expected: String = outcome
        .matches
        .iter()
        .map(|m| format!("{}:{}\n", m.path_lossy(), m.line_number))
        .collect();
    assert_eq!(String::from_utf8(observed).unwrap(), expected);
    assert_eq!(outcome.files_with_matches, 40);

    options.max_count = Some(1);
    let err = grep_observed(
        &options,
        &ScanCache::new(CachePolicy::default()),
        &CancelToken::new(),
        &LineNumbers,
        &mut |_| {},
        &mut |_| {},
    )
    .unwrap_err();
    assert_eq!(err.code(), "EINVAL");
}

#[test]
fn every_search_starts_from_the_one_scan_policy_that_skips_dot_files() {
    let policy = |include_hidden, use_gitignore| ScanPolicy {
        include_hidden,
        use_gitignore,
    };
    let glob = crate::GlobOptions::new("*", ".");
    let fuzzy = crate::FuzzyOptions::new("", ".");
    let grep = GrepOptions::new("", ".");
    for (label, defaults) in [
        ("glob", policy(glob.include_hidden, glob.use_gitignore)),
        ("fuzzy", policy(fuzzy.include_hidden, fuzzy.use_gitignore)),
        ("grep", policy(grep.include_hidden, grep.use_gitignore)),
    ] {
        assert_eq!(defaults, ScanPolicy::DEFAULT, "{label}");
    }
    const { assert!(!ScanPolicy::DEFAULT.include_hidden, "as rg and fd") };
}

/// A cached search with globs selects the files of a list once: the next
/// search of the same list with the same filters takes that selection,
/// whatever its limit, and answers as the first did; other filters, or a
/// list changed since (a new list), select again, so a file added is found.
#[test]
fn a_cached_list_s_selection_is_made_once_per_filter() {
    let dir = tree(&[
        ("a/one.rs", "hit\n"),
        ("b/two.txt", "hit\n"),
        ("c/three.rs", "hit\nhit\n"),
    ]);
    let cache = long_lived_cache();
    let search = |glob: &str, limit: Option<usize>| {
        let before = select::SELECTIONS_MADE.with(|made| made.get());
        let checked = select::SKIPPED_CHECKED.with(|checked| checked.get());
        let outcome = run_with(dir.path(), &cache, |o| {
            o.pattern = "hit".into();
            o.cache = true;
            o.globs = vec![glob.into()];
            o.max_count = limit;
        })
        .unwrap();
        let made = select::SELECTIONS_MADE.with(|made| made.get()) - before;
        // A selecting glob checks the entries the scan left out as often.
        let checked = select::SKIPPED_CHECKED.with(|checked| checked.get()) - checked;
        assert_eq!(checked, made, "{glob} {limit:?}");
        (keys(&outcome), made)
    };
    let all: Vec<String> = ["a/one.rs:1", "c/three.rs:1", "c/three.rs:2"]
        .map(String::from)
        .into();
    assert_eq!(search("*.rs", None), (all.clone(), 1));
    assert_eq!(
        search("*.rs", None),
        (all.clone(), 0),
        "taken from the first"
    );
    assert_eq!(search("*.rs", Some(2)), (all[..2].to_vec(), 0));
    assert_eq!(search("*.txt", None), (vec!["b/two.txt:1".to_string()], 1));
    fs::write(dir.path().join("a/zero.rs"), "hit\n").unwrap();
    cache
        .invalidate_path(&dir.path().join("a/zero.rs"))
        .unwrap();
    let (found, made) = search("*.rs", None);
    assert_eq!(made, 1, "a changed list is selected again");
    assert_eq!(found[..2], ["a/one.rs:1", "a/zero.rs:1"]);
}

/// A limited search, or one of a short known list, whose pattern an
/// earlier search compiled is searched on the calling thread: no worker
/// starts unless it outlasts `run::ALONE_FOR`, when workers take the rest
/// and the answer is the same. A walk, or a long list without a limit,
/// starts its workers at once.
#[test]
fn a_short_or_limited_search_is_searched_on_the_calling_thread() {
    let dir = many_files();
    let cache = long_lived_cache();
    // Whatever the machine's speed: alone for as long as it takes.
    run::ALONE_FOR_IN_TESTS.set(Some(Duration::from_secs(3600)));
    let search = |path: &Path, pattern: &str, cached: bool, limit: Option<usize>| {
        let before = run::WORKERS_STARTED.with(|started| started.get());
        let outcome = run_with(path, &cache, |o| {
            o.pattern = pattern.into();
            o.cache = cached;
            o.max_count = limit;
        })
        .unwrap();
        let started = run::WORKERS_STARTED.with(|started| started.get()) - before;
        (keys(&outcome), outcome.files_searched, started)
    };
    let all = search(dir.path(), "hit", true, None);
    assert_eq!((all.0.len(), all.1), (36, 12));
    let (found, _, started) = search(dir.path(), "hit", true, None);
    assert_eq!(
        (found, started),
        (all.0.clone(), 0),
        "a short list, compiled"
    );
    let (found, _, started) = search(dir.path(), "hit", true, Some(4));
    assert_eq!((found, started), (all.0[..4].to_vec(), 0), "limited");
    let (found, _, started) = search(dir.path(), "hit", false, Some(4));
    assert_eq!(found, all.0[..4]);
    assert!(started > 0, "a walk finds its files as it goes");

    // The only match in the last of many files: the calling thread gives
    // up after `ALONE_FOR` (here at once, after one file) and the workers
    // find it.
    run::ALONE_FOR_IN_TESTS.set(Some(Duration::ZERO));
    let many: Vec<(String, &str)> = (0..300)
        .map(|n| (format!("d{}/f{n:04}.txt", n / 10), "miss\n"))
        .chain([("d99/last.txt".to_string(), "late hit\n")])
        .collect();
    let borrowed: Vec<(&str, &str)> = many.iter().map(|(p, c)| (p.as_str(), *c)).collect();
    let big = tree(&borrowed);
    search(big.path(), "late hit", true, None);
    let (found, searched, started) = search(big.path(), "late hit", true, Some(1));
    assert_eq!((found, searched), (vec!["d99/last.txt:1".to_string()], 301));
    assert!(started > 0, "the workers took over");
    run::ALONE_FOR_IN_TESTS.set(Some(Duration::from_secs(3600)));
    let (_, searched, started) = search(big.path(), "zzz", true, None);
    assert_eq!(searched, 301);
    assert!(started > 0, "a long list without a limit");
}

/// The files a cached search reads whole and finds nothing in are ruled
/// out unread by the next search for the same pattern and switches, and
/// those it found results in are answered by their reports, unread too;
/// the answer is the same. Another pattern reads them, and a file changed
/// since is read again.
#[test]
fn a_repeated_search_skips_the_files_it_found_nothing_in() {
    let dir = tree(&[
        ("a.rs", "unsafe impl A {}\n"),
        ("b.rs", "unsafe x\nsafe impl\n"),
        ("c.rs", "nothing here\n"),
    ]);
    std::thread::sleep(crate::content_index::identity::RACY_MARGIN + Duration::from_millis(200));
    let cache = long_lived_cache();
    let search = |pattern: &str, ignore_case: bool| {
        let before = cache.stats().content.files_skipped;
        let outcome = run_with(dir.path(), &cache, |o| {
            o.pattern = pattern.into();
            o.ignore_case = ignore_case;
            o.cache = true;
        })
        .unwrap();
        let skipped = cache.stats().content.files_skipped - before;
        (keys(&outcome), outcome.files_searched, skipped)
    };
    let found = vec!["a.rs:1".to_string()];
    // The second search indexes every file, and finds nothing in b.rs.
    search("unsafe impl", false);
    search("unsafe impl", false);
    let answered = cache.stats().content.files_answered;
    assert_eq!(
        search("unsafe impl", false),
        (found.clone(), 3, 2),
        "c.rs ruled out by its trigrams, b.rs by its miss"
    );
    assert_eq!(
        cache.stats().content.files_answered - answered,
        1,
        "a.rs answered by the report the last search found in it"
    );
    assert_eq!(
        search("unsafe impl", true),
        (found, 3, 1),
        "another query reads b.rs"
    );
    fs::write(dir.path().join("b.rs"), "unsafe impl B {}\n").unwrap();
    cache.invalidate_path(&dir.path().join("b.rs")).unwrap();
    let both = vec!["a.rs:1".to_string(), "b.rs:1".to_string()];
    assert_eq!(
        search("unsafe impl", false).0,
        both,
        "the changed file is read"
    );
}
