//! Table-driven glob tests over a fixed fixture tree.

use std::{fs, path::Path, time::Duration};

use super::*;
use crate::cache::CachePolicy;

const FILES: &[&str] = &[
    "README.md",
    "src/index.ts",
    "src/app.tsx",
    "src/lib/util.ts",
    "src/lib/deep/x.ts",
    "src/lib/deep/y.js",
    "docs/guide.md",
    ".config/settings.ts",
    "node_modules/pkg/index.ts",
    "node_modules/pkg/index.d.ts",
    "web/node_modules/dep/a.ts",
    "Upper.TS",
];

fn fixture() -> tempfile::TempDir {
    natives_testkit::tree_of_paths(FILES)
}

fn run(dir: &Path, configure: impl FnOnce(&mut GlobOptions)) -> (Vec<String>, usize) {
    let mut options = GlobOptions::new("", dir);
    configure(&mut options);
    let cache = ScanCache::new(CachePolicy::default());
    let outcome = glob(&options, &cache, &CancelToken::new(), &mut |_| {}).unwrap();
    let paths = outcome
        .matches()
        .map(|m| m.path_lossy().into_owned())
        .collect();
    (paths, outcome.total_matches)
}

fn paths(dir: &Path, pattern: &str) -> Vec<String> {
    run(dir, |o| o.patterns = vec![pattern.into()]).0
}

#[test]
fn pattern_table() {
    let dir = fixture();
    let table: &[(&str, &[&str])] = &[
        (
            "*.ts",
            &["src/index.ts", "src/lib/deep/x.ts", "src/lib/util.ts"],
        ),
        ("src/*.ts", &["src/index.ts"]),
        (
            "src/**/*.ts",
            &["src/index.ts", "src/lib/deep/x.ts", "src/lib/util.ts"],
        ),
        ("./src/*.ts", &["src/index.ts"]),
        ("src\\lib\\*.ts", &["src/lib/util.ts"]),
        (
            "*.{ts,tsx",
            &[
                "src/app.tsx",
                "src/index.ts",
                "src/lib/deep/x.ts",
                "src/lib/util.ts",
            ],
        ),
        (
            "src/lib/{deep/*.js,util.ts}",
            &["src/lib/deep/y.js", "src/lib/util.ts"],
        ),
        ("*.TS", &["Upper.TS"]),
        ("lib", &["src/lib"]),
        ("*.md", &["README.md", "docs/guide.md"]),
        ("[s]rc/*.ts", &["src/index.ts"]),
        ("no-such-*", &[]),
        (
            "node_modules/**/*.ts",
            &["node_modules/pkg/index.d.ts", "node_modules/pkg/index.ts"],
        ),
    ];
    for &(pattern, expected) in table {
        assert_eq!(paths(dir.path(), pattern), expected, "pattern {pattern:?}");
    }
}

#[test]
fn non_recursive_patterns_stay_at_the_top() {
    let dir = fixture();
    let (got, _) = run(dir.path(), |o| {
        o.patterns = vec!["*.md".into()];
        o.recursive = false;
    });
    assert_eq!(got, ["README.md"]);
}

#[test]
fn bad_patterns_are_einval_naming_the_pattern() {
    let dir = fixture();
    for pattern in ["", "  ", "a[", "src/**/x}"] {
        let options = GlobOptions::new(pattern, dir.path());
        let cache = ScanCache::new(CachePolicy::default());
        let err = glob(&options, &cache, &CancelToken::new(), &mut |_| {}).unwrap_err();
        assert_eq!(err.code(), "EINVAL", "{pattern:?}");
        assert!(
            err.message().contains(pattern.trim()) || pattern.trim().is_empty(),
            "{}",
            err.message()
        );
        assert_eq!(
            (err.option(), err.value()),
            (Some("pattern"), Some(pattern))
        );
    }
}

/// Several patterns and an ignore list, as fast-glob and tinyglobby take
/// them: any pattern selects; an ignore pattern, or a `!` pattern, leaves
/// out what it matches and all below a directory it matches.
#[test]
fn patterns_and_ignore_table() {
    let dir = fixture();
    type Lists = (&'static [&'static str], &'static [&'static str]);
    let table: &[(Lists, &[&str])] = &[
        (
            (&["src/*.ts", "docs/**"], &[]),
            &["docs/guide.md", "src/index.ts"],
        ),
        (
            (&["*.ts", "*.md"], &["src/lib"]),
            &["README.md", "docs/guide.md", "src/index.ts"],
        ),
        (
            (&["src/**/*.ts"], &["**/deep/**"]),
            &["src/index.ts", "src/lib/util.ts"],
        ),
        (
            (&["src/**/*.ts", "!util.ts"], &[]),
            &["src/index.ts", "src/lib/deep/x.ts"],
        ),
        (
            (&["src/**"], &["*.ts", "deep"]),
            &["src/app.tsx", "src/lib"],
        ),
        (
            (&["node_modules/**/*.ts"], &["**/*.d.ts"]),
            &["node_modules/pkg/index.ts"],
        ),
    ];
    for &((patterns, ignore), expected) in table {
        let (got, total) = run(dir.path(), |o| {
            o.patterns = patterns.iter().map(|p| p.to_string()).collect();
            o.ignore = ignore.iter().map(|p| p.to_string()).collect();
        });
        let label = format!("{patterns:?} ignoring {ignore:?}");
        assert_eq!(got, expected, "{label}");
        assert_eq!(total, expected.len(), "{label}");
    }
}

#[test]
fn bad_patterns_and_ignore_patterns_name_their_option_and_value() {
    let dir = fixture();
    type Lists = (&'static [&'static str], &'static [&'static str]);
    let table: &[(Lists, &str, &str)] = &[
        ((&["*.ts", "a["], &[]), "pattern", "a["),
        ((&["*.ts"], &["b["]), "ignore", "b["),
        ((&["*.ts"], &["c[", "*.md"]), "ignore", "c["),
        ((&["*.ts"], &[""]), "ignore", ""),
        ((&["*.ts", "!x["], &[]), "pattern", "!x["),
        ((&["!*.ts"], &[]), "pattern", "!*.ts"),
        ((&[], &[]), "pattern", ""),
    ];
    for &((patterns, ignore), option, value) in table {
        let mut options = GlobOptions::new("", dir.path());
        options.patterns = patterns.iter().map(|p| p.to_string()).collect();
        options.ignore = ignore.iter().map(|p| p.to_string()).collect();
        let cache = ScanCache::new(CachePolicy::default());
        let err = glob(&options, &cache, &CancelToken::new(), &mut |_| {}).unwrap_err();
        let label = format!("{patterns:?} ignoring {ignore:?}: {err}");
        assert_eq!(err.code(), "EINVAL", "{label}");
        assert_eq!(
            (err.option(), err.value()),
            (Some(option), Some(value)),
            "{label}"
        );
        assert!(err.message().contains(&format!("`{value}`")), "{label}");
    }
}

#[test]
fn switches_table() {
    let dir = fixture();
    type Case = (&'static str, fn(&mut GlobOptions), &'static [&'static str]);
    let table: &[Case] = &[
        (
            "hidden off by default",
            |o| o.patterns = vec!["settings.ts".into()],
            &[],
        ),
        (
            "hidden on",
            |o| {
                o.patterns = vec!["settings.ts".into()];
                o.include_hidden = true;
            },
            &[".config/settings.ts"],
        ),
        (
            "node_modules hidden by default",
            |o| o.patterns = vec!["a.ts".into()],
            &[],
        ),
        (
            "node_modules on request",
            |o| {
                o.patterns = vec!["a.ts".into()];
                o.include_node_modules = Some(true);
            },
            &["web/node_modules/dep/a.ts"],
        ),
        (
            "node_modules named in the pattern",
            |o| o.patterns = vec!["web/node_modules/*/a.ts".into()],
            &["web/node_modules/dep/a.ts"],
        ),
        (
            "node_modules refused even when named",
            |o| {
                o.patterns = vec!["node_modules/**".into()];
                o.include_node_modules = Some(false);
            },
            &[],
        ),
        (
            "directories only",
            |o| {
                o.patterns = vec!["*".into()];
                o.file_type = Some(FileType::Dir);
            },
            &["docs", "src", "src/lib", "src/lib/deep", "web"],
        ),
    ];
    for (name, configure, expected) in table {
        assert_eq!(run(dir.path(), configure).0, *expected, "{name}");
    }
}

#[test]
fn limit_counts_every_match_and_streams_only_returned_ones() {
    let dir = fixture();
    let mut options = GlobOptions::new("*.ts", dir.path());
    options.max_results = Some(2);
    let cache = ScanCache::new(CachePolicy::default());
    let mut seen = Vec::new();
    let outcome = glob(&options, &cache, &CancelToken::new(), &mut |m| {
        seen.push(m.path_lossy().into_owned())
    })
    .unwrap();
    assert_eq!(outcome.total_matches, 3);
    assert!(outcome.limit_reached());
    assert_eq!(seen, ["src/index.ts", "src/lib/deep/x.ts"]);

    options.max_results = Some(0);
    let none = glob(&options, &cache, &CancelToken::new(), &mut |_| {
        panic!("nothing returned")
    })
    .unwrap();
    assert_eq!((none.matches().len(), none.total_matches), (0, 3));
}

#[test]
fn sort_by_mtime_keeps_the_newest_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let ages = [
        ("a.ts", 5),
        ("b.ts", 1),
        ("c.ts", 9),
        ("d.ts", 9),
        ("e.ts", 3),
    ];
    for (name, secs) in ages {
        let file = fs::File::create(dir.path().join(name)).unwrap();
        file.set_modified(base + Duration::from_secs(secs)).unwrap();
    }
    let mut options = GlobOptions::new("*.ts", dir.path());
    options.sort_by_mtime = true;
    options.max_results = Some(3);
    let cache = ScanCache::new(CachePolicy::default());
    let mut streamed = 0;
    let outcome = glob(&options, &cache, &CancelToken::new(), &mut |_| {
        streamed += 1
    })
    .unwrap();
    let got: Vec<_> = outcome
        .matches()
        .map(|m| m.path_lossy().into_owned())
        .collect();
    assert_eq!(
        got,
        ["c.ts", "d.ts", "a.ts"],
        "newest first, ties in path order"
    );
    assert_eq!((streamed, outcome.total_matches), (3, 5));
    let mtime = outcome.matches().next().unwrap().mtime_ms.unwrap();
    assert_eq!(mtime, 1_700_000_009_000);
}

#[test]
fn newest_n_table() {
    type Case = (usize, &'static [(i64, usize)], &'static [usize]);
    let table: &[Case] = &[
        (0, &[(1, 0)], &[]),
        (2, &[(1, 0), (3, 1), (2, 2)], &[1, 2]),
        (2, &[(5, 3), (5, 1), (5, 2)], &[1, 2]),
        (5, &[(i64::MIN, 0), (0, 1)], &[1, 0]),
    ];
    for &(limit, offers, expected) in table {
        let mut top = TopN::new(limit);
        offers.iter().for_each(|&(m, i)| top.offer((m, Reverse(i))));
        let indices: Vec<_> = top
            .into_sorted()
            .into_iter()
            .map(|(_, Reverse(i))| i)
            .collect();
        assert_eq!(indices, expected, "limit {limit} offers {offers:?}");
    }
}

/// The thresholds a recheck test tries, shortest first: the "younger than
/// the threshold" half means something only if the second call came before
/// it, which a loaded machine may not manage in the shortest.
const RECHECK_THRESHOLDS_MS: [u64; 3] = [80, 800, 8_000];

#[test]
fn empty_result_recheck_only_past_the_threshold() {
    let dir = fixture();
    for threshold in RECHECK_THRESHOLDS_MS.map(Duration::from_millis) {
        let cache = ScanCache::new(
            CachePolicy::default()
                .ttl(Duration::from_secs(600))
                .empty_recheck(threshold),
        );
        let mut options = GlobOptions::new("*.new", dir.path());
        options.cache = true;
        let count = |cache: &ScanCache| {
            glob(&options, cache, &CancelToken::new(), &mut |_| {})
                .unwrap()
                .total_matches
        };
        let _ = fs::remove_file(dir.path().join("late.new"));
        let filled = std::time::Instant::now();
        assert_eq!(count(&cache), 0);
        fs::write(dir.path().join("late.new"), "").unwrap();
        let young = count(&cache);
        if filled.elapsed() >= threshold {
            eprintln!("{threshold:?} passed before the second call: trying a longer one");
            continue;
        }
        assert_eq!(young, 0, "younger than the threshold: served from cache");
        std::thread::sleep(threshold + Duration::from_millis(20));
        assert_eq!(count(&cache), 1, "older than the threshold: rechecked");
        assert_eq!(cache.stats().walks, 2);
        return;
    }
    panic!("no threshold outlasted two cached globs of a few files");
}

#[test]
fn cancelled_before_start_does_no_work() {
    let dir = fixture();
    let cache = ScanCache::new(CachePolicy::default());
    let token = CancelToken::new();
    token.cancel();
    let options = GlobOptions::new("*", dir.path().join("missing"));
    let err = glob(&options, &cache, &token, &mut |_| {}).unwrap_err();
    assert_eq!(err.code(), "ABORT_ERR");
    assert_eq!(cache.stats().walks, 0);
}

#[test]
fn suffix_fast_path_agrees_with_globset() {
    let paths = [
        "a.ts",
        ".ts",
        "src/a.ts",
        "src/a.tsx",
        "src/a.ts/b",
        "a.d.ts",
        "ts",
        "src/ts",
        "a.js",
        "deep/er/x.test.ts",
        "x.TS",
        "a.",
        "dir/.",
        "notes.md",
        "a{b}.ts",
        "app/x.component.spec.ts",
        "component.spec.ts",
        "x.component.specs.ts",
        "abcdefgh.d.ts",
        "bcdefgh",
    ];
    let patterns = [
        ("*.ts", true),
        ("**/*.ts", true),
        ("*.{ts,tsx}", true),
        ("*.{ts,", true),
        ("*.{ts,}", true),
        ("*", true),
        ("**/*", false),
        ("*.d.ts", true),
        ("*test.{ts,js}", true),
        ("*.component.spec.ts", true),
        ("*.{d.ts,component.spec.ts}", true),
    ];
    for (pattern, recursive) in patterns {
        let written = written("pattern", pattern);
        let fast = Matcher::new(written, recursive).unwrap();
        assert!(
            matches!(fast, Matcher::Suffixes(_)),
            "{pattern} takes the fast path"
        );
        let normalized = normalize_pattern(written, recursive).unwrap();
        let slow = build_globset(written, vec![compile(written, &normalized).unwrap()]).unwrap();
        for path in paths {
            let expected = slow.is_match(path);
            let entry = Entry {
                path: path.as_bytes(),
                file_type: FileType::File,
                mtime_ms: None,
                in_node_modules: false,
                tail: path_tail(path.as_bytes()),
            };
            assert_eq!(fast.is_match(&entry), expected, "{pattern} on {path}");
        }
    }
    for pattern in ["src/*.ts", "*.[tj]s", "**/a*.ts", "*.{t?,js}", "**/*/x.ts"] {
        assert!(
            matches!(
                Matcher::new(written("pattern", pattern), true).unwrap(),
                Matcher::Glob(..)
            ),
            "{pattern}"
        );
    }
}

/// A walk that is not stored lists types only and learns the mtimes of the
/// matches it returns; the answer (paths, types, mtimes, order, totals) is
/// the one a cached scan gives, for every limit and order.
#[test]
fn uncached_answers_show_the_mtimes_a_cached_scan_shows() {
    let dir = fixture();
    for (i, rel) in FILES.iter().enumerate() {
        let time = std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + 1_000 * i as u64);
        let file = fs::File::options()
            .write(true)
            .open(dir.path().join(rel))
            .unwrap();
        file.set_modified(time).unwrap();
    }
    let answer = |cache: &ScanCache, cached: bool, configure: &dyn Fn(&mut GlobOptions)| {
        let mut options = GlobOptions::new("**/*", dir.path());
        options.cache = cached;
        configure(&mut options);
        let outcome = glob(&options, cache, &CancelToken::new(), &mut |_| {}).unwrap();
        let matches: Vec<_> = outcome
            .matches()
            .map(|m| (m.path_lossy().into_owned(), m.file_type, m.mtime_ms))
            .collect();
        (matches, outcome.total_matches)
    };
    type Configure = dyn Fn(&mut GlobOptions);
    let table: &[(&str, &Configure)] = &[
        ("all", &|_| {}),
        ("files", &|o| o.file_type = Some(FileType::File)),
        ("first 3", &|o| o.max_results = Some(3)),
        ("newest", &|o| o.sort_by_mtime = true),
        ("newest 2", &|o| {
            (o.sort_by_mtime, o.max_results) = (true, Some(2))
        }),
        ("node_modules", &|o| o.include_node_modules = Some(true)),
    ];
    let cached = ScanCache::new(CachePolicy::default());
    let no_ttl = ScanCache::new(CachePolicy::default().ttl(Duration::ZERO));
    for (name, configure) in table {
        let expected = answer(&cached, true, configure);
        assert!(
            expected.0.iter().all(|(_, _, mtime)| mtime.is_some()),
            "{name}"
        );
        assert_eq!(
            answer(&cached, false, configure),
            expected,
            "uncached, {name}"
        );
        assert_eq!(answer(&no_ttl, true, configure), expected, "TTL 0, {name}");
    }
}

/// `mtime: false`: no match carries an mtime, cached or not, in either
/// order (sorting by mtime still sorts by it), and a walk that is not
/// stored learns none.
#[test]
fn without_mtime_matches_carry_none_and_a_fresh_walk_stats_nothing() {
    let dir = fixture();
    for (i, rel) in FILES.iter().enumerate() {
        let time = std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + 1_000 * i as u64);
        let file = fs::File::options()
            .write(true)
            .open(dir.path().join(rel))
            .unwrap();
        file.set_modified(time).unwrap();
    }
    let cache = ScanCache::new(CachePolicy::default());
    let answer = |cached: bool, sort_by_mtime: bool, mtime: bool| {
        let mut options = GlobOptions::new("**/*.ts", dir.path());
        (options.cache, options.sort_by_mtime, options.mtime) = (cached, sort_by_mtime, mtime);
        let mut streamed = Vec::new();
        let outcome = glob(&options, &cache, &CancelToken::new(), &mut |m| {
            streamed.push(m.mtime_ms)
        })
        .unwrap();
        let matches: Vec<_> = outcome
            .matches()
            .map(|m| (m.path_lossy().into_owned(), m.mtime_ms))
            .collect();
        (matches, streamed)
    };
    for sort_by_mtime in [false, true] {
        let (shown, _) = answer(true, sort_by_mtime, true);
        for cached in [false, true] {
            let (matches, streamed) = answer(cached, sort_by_mtime, false);
            let paths: Vec<_> = shown.iter().map(|(path, _)| (path.clone(), None)).collect();
            assert_eq!(matches, paths, "cached {cached}, by mtime {sort_by_mtime}");
            assert!(streamed.iter().all(Option::is_none));
        }
    }

    let needs = Needs {
        node_modules: false,
        detail: Detail::TypeOnly,
    };
    let token = CancelToken::new();
    for mtime in [false, true] {
        let mut options = GlobOptions::new("**/*.ts", dir.path());
        options.mtime = mtime;
        let filter = Filter::new(&options).unwrap();
        let policy = ScanPolicy {
            include_hidden: false,
            use_gitignore: true,
        };
        let mut listed = walk::scan_for(dir.path(), policy, needs, &token).unwrap();
        filter
            .stat_returned(dir.path(), &mut listed, &token)
            .unwrap();
        let learnt = listed.iter().filter(|e| e.mtime_ms.is_some()).count();
        assert_eq!(learnt, if mtime { 3 } else { 0 }, "mtime {mtime}");
    }
}
