//! Table-driven fuzzy-find tests over small real trees.

use std::{fs, path::Path, time::Duration};

use super::*;
use crate::cache::CachePolicy;

/// A temp tree: a path ending in `/` is a directory, anything else a file.
fn tree(paths: &[&str]) -> tempfile::TempDir {
    natives_testkit::tree_of_paths(paths)
}

fn find(dir: &Path, query: &str, configure: impl FnOnce(&mut FuzzyOptions)) -> FuzzyOutcome {
    let mut options = FuzzyOptions::new(query, dir);
    configure(&mut options);
    let cache = ScanCache::new(CachePolicy::default());
    fuzzy_find(&options, &cache, &CancelToken::new(), &mut |_| {}).unwrap()
}

fn found(dir: &Path, query: &str) -> Vec<String> {
    let outcome = find(dir, query, |_| {});
    outcome.matches.iter().map(FuzzyMatch::path_lossy).collect()
}

#[test]
fn ranking_table() {
    // (query, tree, the best results in order)
    type Case = (
        &'static str,
        &'static [&'static str],
        &'static [&'static str],
    );
    let table: &[Case] = &[
        // Exact name beats a shallower prefix, a substring and a scatter.
        (
            "main.rs",
            &[
                "src/main.rs.orig",
                "deep/er/main.rs",
                "domain.rs",
                "m/a/i/n/x.rs",
            ],
            &[
                "deep/er/main.rs",
                "src/main.rs.orig",
                "domain.rs",
                "m/a/i/n/x.rs",
            ],
        ),
        // Prefix beats a shallower substring.
        (
            "util",
            &["ioutil.ts", "a/b/utils.ts"],
            &["a/b/utils.ts", "ioutil.ts"],
        ),
        // Name substring beats path substring beats scattered.
        (
            "test",
            &["attest/a.rs", "t/e/s/t.rs"],
            &["attest/", "attest/a.rs", "t/e/s/t.rs"],
        ),
        // The mention users asked for.
        (
            "@httpserap",
            &[
                "src/http/server.ts",
                "src/http/server_api.ts",
                "docs/api.md",
                "http_server_api_tests/test_api.py",
                "http_server_api_tests/http_server_app.py",
            ],
            &["http_server_api_tests/"],
        ),
        // Equal scores: shallower first, then path order.
        (
            "readme.md",
            &[
                "docs/README.md",
                "b/README.md",
                "README.md",
                "a/b/README.md",
            ],
            &[
                "README.md",
                "b/README.md",
                "docs/README.md",
                "a/b/README.md",
            ],
        ),
        // A word with `/` names as many trailing components.
        (
            "lib/util.ts",
            &["src/lib/util.ts.bak", "x/src/lib/util.ts"],
            &["x/src/lib/util.ts", "src/lib/util.ts.bak"],
        ),
        // Directories carry a trailing `/`; `@`, `./` and a trailing `/` are dropped.
        (
            "@./src/",
            &["resources/", "src/", "src/a.rs"],
            &["src/", "src/a.rs"],
        ),
        // Smart case: lowercase ignores case.
        (
            "readme",
            &["readme.txt", "README.md"],
            &["README.md", "readme.txt"],
        ),
        // Every word must match, in any order.
        (
            "main src",
            &["lib/main.rs", "src/lib.rs", "src/main.rs"],
            &["src/main.rs"],
        ),
        // `^` and `$` are ordinary characters.
        ("^a$", &["a", "^a$.txt"], &["^a$.txt"]),
    ];
    for &(query, paths, expected) in table {
        let dir = tree(paths);
        let got = found(dir.path(), query);
        assert!(
            got.len() >= expected.len() && got[..expected.len()] == *expected,
            "{query:?}: got {got:?}, expected to start with {expected:?}"
        );
    }
}

#[test]
fn filter_table() {
    // (query, tree, every result in order)
    type Case = (
        &'static str,
        &'static [&'static str],
        &'static [&'static str],
    );
    let table: &[Case] = &[
        // Smart case: an uppercase letter makes the word case-sensitive.
        ("README", &["readme.txt", "README.md"], &["README.md"]),
        ("Main", &["main.rs", "Main.java"], &["Main.java"]),
        // node_modules only when the query names it.
        (
            "index",
            &["node_modules/pkg/index.js", "src/index.ts"],
            &["src/index.ts"],
        ),
        (
            "node_modules/pkg/index",
            &["node_modules/pkg/index.js", "src/index.ts"],
            &["node_modules/pkg/index.js"],
        ),
        // ASCII words match Latin letters with diacritics.
        ("menu", &["docs/café/menü.md"], &["docs/café/menü.md"]),
        ("zzz", &["a.rs", "b/"], &[]),
    ];
    for &(query, paths, expected) in table {
        let dir = tree(paths);
        assert_eq!(found(dir.path(), query), expected, "{query:?}");
    }
}

#[test]
fn tiers_dominate_nucleo_scores() {
    // `a_b` lines up better for nucleo (two word starts) than `xab`, but a
    // name substring still outranks a scattered match.
    let dir = tree(&["a_b.rs", "xab.rs"]);
    let outcome = find(dir.path(), "ab", |_| {});
    let [first, second] = &outcome.matches[..] else {
        panic!("{:?}", outcome.matches)
    };
    assert_eq!(
        (first.path_lossy().as_str(), second.path_lossy().as_str()),
        ("xab.rs", "a_b.rs")
    );
    let nucleo = |m: &FuzzyMatch| m.score & MAX_NUCLEO_SCORE;
    assert!(nucleo(second) > nucleo(first), "{first:?} {second:?}");
    assert!(first.score > second.score);
    assert_eq!(first.score >> TIER_SHIFT, Tier::NameSubstring as u32);
    assert_eq!(second.score >> TIER_SHIFT, Tier::NameScattered as u32);
    assert_eq!(
        (first.tier, second.tier),
        (Tier::NameSubstring, Tier::NameScattered)
    );
}

#[test]
fn indices_are_char_positions_in_the_returned_path() {
    // (query, the one entry, its returned path, indices)
    type Case = (&'static str, &'static str, &'static str, &'static [u32]);
    let table: &[Case] = &[
        ("main", "src/main.rs", "src/main.rs", &[4, 5, 6, 7]),
        ("src", "src/", "src/", &[0, 1, 2]),
        (
            "src main",
            "src/main.rs",
            "src/main.rs",
            &[0, 1, 2, 4, 5, 6, 7],
        ),
        (
            "menu",
            "docs/café/menü.md",
            "docs/café/menü.md",
            &[10, 11, 12, 13],
        ),
        ("cafe", "docs/café/", "docs/café/", &[5, 6, 7, 8]),
        (
            "ü.md",
            "docs/café/menü.md",
            "docs/café/menü.md",
            &[13, 14, 15, 16],
        ),
        (
            "httpserap",
            "http_server_api_tests/",
            "http_server_api_tests/",
            &[0, 1, 2, 3, 5, 6, 7, 12, 13],
        ),
        (
            "lib/u",
            "src/lib/util.ts",
            "src/lib/util.ts",
            &[4, 5, 6, 7, 8],
        ),
    ];
    for &(query, entry, path, expected) in table {
        let dir = tree(&[entry]);
        let outcome = find(dir.path(), query, |_| {});
        let m = outcome.matches.iter().find(|m| m.path_lossy() == path);
        let m = m.unwrap_or_else(|| panic!("{query:?}: {path} in {:?}", outcome.matches));
        assert_eq!(m.indices, expected, "{query:?} in {path}");
        let chars: Vec<char> = m.path_lossy().chars().collect();
        assert!(m.indices.iter().all(|&i| (i as usize) < chars.len()));
    }
}

/// A name that is not UTF-8 comes back as its bytes, and its indices count
/// each stray byte as one character, as the escaped form in JS does.
#[cfg(unix)]
#[test]
fn names_that_are_not_utf8_come_back_as_their_bytes() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join(std::ffi::OsStr::from_bytes(b"d\xe0\xa0x"));
    fs::create_dir(&odd).unwrap();
    fs::write(odd.join("menu.md"), "").unwrap();
    let outcome = find(dir.path(), "menu", |_| {});
    let [found] = &outcome.matches[..] else {
        panic!("{:?}", outcome.matches)
    };
    assert_eq!(found.path, b"d\xe0\xa0x/menu.md");
    assert_eq!(found.path_lossy(), "d\u{fffd}\u{fffd}x/menu.md");
    assert_eq!(found.indices, [5, 6, 7, 8]);
}

#[test]
fn hidden_and_gitignore_partitions() {
    let dir = tree(&[".git/", "app.ts", ".config/app.ts", "gen/app.ts"]);
    fs::write(dir.path().join(".gitignore"), "gen/\n").unwrap();
    type Case = (&'static str, fn(&mut FuzzyOptions), &'static [&'static str]);
    let table: &[Case] = &[
        ("defaults", |_| {}, &["app.ts"]),
        (
            "hidden",
            |o| o.include_hidden = true,
            &["app.ts", ".config/app.ts"],
        ),
        (
            "no gitignore",
            |o| o.use_gitignore = false,
            &["app.ts", "gen/app.ts"],
        ),
    ];
    for (name, configure, expected) in table {
        let outcome = find(dir.path(), "app.ts", configure);
        let got: Vec<_> = outcome.matches.iter().map(FuzzyMatch::path_lossy).collect();
        assert_eq!(got, *expected, "{name}");
    }
}

#[test]
fn limit_counts_every_match_and_streams_the_returned_ones() {
    let dir = tree(&["f1.rs", "f2.rs", "d/f3.rs", "f4.rs"]);
    let mut options = FuzzyOptions::new("f", dir.path());
    options.max_results = 2;
    let cache = ScanCache::new(CachePolicy::default());
    let mut streamed = Vec::new();
    let outcome = fuzzy_find(&options, &cache, &CancelToken::new(), &mut |m| {
        streamed.push(m.path_lossy())
    })
    .unwrap();
    assert_eq!(outcome.total_matches, 4);
    assert_eq!(streamed, ["f1.rs", "f2.rs"]);
    assert_eq!(outcome.matches.len(), 2);

    options.max_results = 0;
    let none = fuzzy_find(&options, &cache, &CancelToken::new(), &mut |_| {
        panic!("nothing returned")
    })
    .unwrap();
    assert_eq!((none.matches.len(), none.total_matches), (0, 4));
}

#[test]
fn empty_query_lists_shallow_first_then_path_order() {
    let dir = tree(&["b/c/d.rs", "z.rs", "b/a.rs", "a.rs", "node_modules/x.js"]);
    for query in ["", "  ", "@"] {
        let outcome = find(dir.path(), query, |o| o.max_results = 4);
        let got: Vec<_> = outcome.matches.iter().map(FuzzyMatch::path_lossy).collect();
        assert_eq!(got, ["a.rs", "b/", "z.rs", "b/a.rs"], "{query:?}");
        assert_eq!(outcome.total_matches, 6, "{query:?}");
        assert!(
            outcome
                .matches
                .iter()
                .all(|m| m.score == 0 && m.indices.is_empty())
        );
    }
}

#[test]
fn cancelled_before_start_does_no_work() {
    let dir = tree(&["a.rs"]);
    let cache = ScanCache::new(CachePolicy::default());
    let token = CancelToken::new();
    token.cancel();
    let options = FuzzyOptions::new("a", dir.path());
    let err = fuzzy_find(&options, &cache, &token, &mut |_| {}).unwrap_err();
    assert_eq!(err.code(), "ABORT_ERR");
    assert_eq!(cache.stats().walks, 0);
}

#[test]
fn uncached_calls_never_touch_the_shared_cache() {
    let dir = tree(&["old.rs"]);
    let cache = ScanCache::new(CachePolicy::default().ttl(Duration::from_secs(600)));
    let mut options = FuzzyOptions::new("rs", dir.path());
    let mut count = |cache_on: bool| {
        options.cache = cache_on;
        fuzzy_find(&options, &cache, &CancelToken::new(), &mut |_| {})
            .unwrap()
            .total_matches
    };
    assert_eq!(count(true), 1);
    let cached = cache.stats();
    fs::write(dir.path().join("new.rs"), "").unwrap();
    assert_eq!(count(false), 2, "a fresh walk sees the new file");
    let after = cache.stats();
    assert_eq!((after.scans, after.entries), (cached.scans, cached.entries));
    assert_eq!(count(true), 1, "the cached scan is still served");
}

#[test]
fn empty_result_recheck_only_past_the_threshold() {
    let dir = tree(&["a.rs"]);
    // The "younger than the threshold" half means something only if the
    // second call came before it, which a loaded machine may not manage in
    // the shortest: a longer one is tried then.
    for threshold in [80, 800, 8_000].map(Duration::from_millis) {
        let cache = ScanCache::new(
            CachePolicy::default()
                .ttl(Duration::from_secs(600))
                .empty_recheck(threshold),
        );
        let count = |query: &str| {
            let mut options = FuzzyOptions::new(query, dir.path());
            options.cache = true;
            fuzzy_find(&options, &cache, &CancelToken::new(), &mut |_| {})
                .unwrap()
                .total_matches
        };
        let _ = fs::remove_file(dir.path().join("late.rs"));
        let filled = std::time::Instant::now();
        assert_eq!(count("late"), 0);
        fs::write(dir.path().join("late.rs"), "").unwrap();
        let young = count("late");
        if filled.elapsed() >= threshold {
            eprintln!("{threshold:?} passed before the second call: trying a longer one");
            continue;
        }
        assert_eq!(young, 0, "younger than the threshold: served from cache");
        std::thread::sleep(threshold + Duration::from_millis(20));
        assert_eq!(count("late"), 1, "older than the threshold: rechecked");
        assert_eq!(cache.stats().walks, 2);
        return;
    }
    panic!("no threshold outlasted two cached finds of a file");
}

#[test]
fn empty_query_never_rechecks() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ScanCache::new(
        CachePolicy::default()
            .ttl(Duration::from_secs(600))
            .empty_recheck(Duration::ZERO),
    );
    let mut options = FuzzyOptions::new("", dir.path());
    options.cache = true;
    for _ in 0..2 {
        let outcome = fuzzy_find(&options, &cache, &CancelToken::new(), &mut |_| {}).unwrap();
        assert_eq!(outcome.total_matches, 0);
    }
    assert_eq!(cache.stats().walks, 1);
}

#[test]
fn query_normalization_table() {
    let table = [
        ("@src/", "src"),
        ("  ./lib/x.ts ", "lib/x.ts"),
        ("@", ""),
        ("a b", "a b"),
        ("@@x", "@x"),
    ];
    for (raw, expected) in table {
        assert_eq!(normalize_query(raw), expected, "{raw:?}");
    }
}

/// A monorepo-shaped list of about 70 k paths, built in memory.
fn synthetic_entries() -> Entries {
    const AREAS: [&str; 8] = [
        "components",
        "utils",
        "hooks",
        "http",
        "server",
        "api",
        "tests",
        "styles",
    ];
    const STEMS: [&str; 10] = [
        "index", "button", "dialog", "client", "router", "format", "parse", "cache", "config",
        "types",
    ];
    const EXTENSIONS: [&str; 4] = ["ts", "tsx", "test.ts", "json"];
    let mut paths = Vec::new();
    for package in 0..143 {
        let root = format!("packages/pkg_{package}");
        paths.push(root.clone());
        paths.push(format!("{root}/src"));
        for area in AREAS {
            let dir = format!("{root}/src/{area}");
            paths.push(dir.clone());
            for (n, stem) in STEMS.iter().enumerate() {
                for extension in EXTENSIONS {
                    paths.push(format!("{dir}/{stem}_{n}{package}.{extension}"));
                }
                paths.push(format!("{dir}/{stem}"));
                paths.push(format!("{dir}/{stem}/{stem}.md"));
            }
        }
    }
    let keys: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| p.bytes().map(|b| if b == b'/' { 0 } else { b }).collect())
        .collect();
    let unsorted = keys
        .iter()
        .map(|key| crate::entries::Unsorted {
            key,
            file_type: FileType::File,
            mtime_ms: None,
        })
        .collect();
    Entries::from_unsorted(unsorted)
}

/// Run with `cargo test --release -p natives-scan -- --ignored --nocapture cached_top_100`.
#[test]
#[ignore = "timing; run in release"]
fn cached_top_100_over_70k_entries() {
    let entries = synthetic_entries();
    let token = CancelToken::new();
    let index = Arc::new(NameIndex::build(&entries, &token).unwrap().unwrap());
    println!("{} entries", entries.len());
    for query in [
        "",
        "index",
        "httpserap",
        "btn",
        "src/http/client",
        "Router",
        "zzqx",
    ] {
        let options = FuzzyOptions::new(query, ".");
        for index in [None, Some(&index)] {
            let mut times: Vec<Duration> = (0..31)
                .map(|_| {
                    let started = std::time::Instant::now();
                    let mut finder = Finder::new(&options);
                    let ranked = finder.rank(&entries, index.cloned(), &token).unwrap();
                    std::hint::black_box(finder.matches(&entries, &ranked.best));
                    started.elapsed()
                })
                .collect();
            times.sort();
            let median = times[times.len() / 2];
            let indexed = index.is_some();
            println!(
                "{query:>16}, indexed {indexed}: median {median:?}, min {:?}",
                times[0]
            );
            if !cfg!(debug_assertions) {
                assert!(median < Duration::from_millis(25), "{query:?}: {median:?}");
            }
        }
    }
}

#[test]
fn subsequence_prefilter_agrees_with_nucleo() {
    let paths = [
        "src/main.rs",
        "SRC/Main.RS",
        "a",
        "",
        "http_server_api_tests",
        "packages/pkg_1/src/http/client_31.ts",
        "my file.txt",
        "x/y/z",
    ];
    let needles = [
        "main",
        "Main",
        "MAIN",
        "srcmain",
        "src/main.rs",
        "rs/",
        "a",
        "aa",
        "httpserap",
        "client.ts",
        "src/http/client",
        "my\\ file",
        "zyx",
        "x/y/z/",
    ];
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    for needle in needles {
        let query = Query::new(needle);
        for path in paths {
            let haystack = Utf32Str::Ascii(path.as_bytes());
            for word in &query.words {
                let ascii = word.ascii.as_ref().unwrap();
                let fast = ascii.is_subsequence_of(path.as_bytes());
                let nucleo = word.fuzzy.score(haystack, &mut matcher).is_some();
                assert_eq!(fast, nucleo, "{needle:?} in {path:?}");
            }
        }
    }
}
