//! A cached fuzzy find, whose pass skips what the name index proves a word
//! cannot match, ranks exactly as a pass that reads every path.

use std::{path::Path, time::Duration};

use super::*;
use crate::{cache::CachePolicy, names::generated};

const QUERIES: &[&str] = &[
    "file_1_2",
    "f12",
    "index",
    "index.ts",
    "Index",
    "userservice",
    "userService",
    "USERSERVICE",
    "src/lib",
    "src/file",
    "ui/src/comp/api",
    "lib/deep er",
    "pkgcore",
    "packages/ui components",
    "srcfile",
    "readme md",
    "README",
    "api-client3",
    "apicl",
    "parser",
    "Parser.rs",
    "ts",
    "t",
    "/",
    "menu",
    "größe",
    "Ünïcode",
    "unicode",
    "a[b]{c}",
    "d_3",
    "node_modules pkg",
    "nm dep",
    "zzzz",
    "file_1_2 test",
    "e r",
    "deeperfile",
];

fn ranked(
    cache: &ScanCache,
    dir: &Path,
    query: &str,
    cached: bool,
    hidden: bool,
    limit: usize,
) -> FuzzyOutcome {
    let mut options = FuzzyOptions::new(query, dir);
    (options.cache, options.include_hidden, options.max_results) = (cached, hidden, limit);
    fuzzy_find(&options, cache, &CancelToken::new(), &mut |_| {}).unwrap()
}

/// Every query, hidden entries in and out, lists of several lengths: the
/// same matches, scores, tiers, highlights and totals cached (indexed) and
/// uncached.
#[test]
fn indexed_ranking_equals_a_pass_over_every_path() {
    let dir = generated::tree();
    let cache = ScanCache::new(CachePolicy::default().ttl(Duration::from_secs(3600)));
    let walks = ScanCache::new(CachePolicy::default());
    let mut matched = 0;
    for hidden in [false, true] {
        for query in QUERIES {
            // Short lists fill at once, so most matches are passed over.
            for limit in [1, 3, 40] {
                let indexed = ranked(&cache, dir.path(), query, true, hidden, limit);
                let walked = ranked(&walks, dir.path(), query, false, hidden, limit);
                assert_eq!(
                    indexed.matches, walked.matches,
                    "{query:?}, hidden {hidden}, limit {limit}"
                );
                assert_eq!(indexed.total_matches, walked.total_matches, "{query:?}");
                matched += usize::from(indexed.total_matches > 0);
            }
        }
    }
    assert!(matched > 3 * QUERIES.len(), "the queries match: {matched}");
    assert_eq!(cache.stats().names.indexes, 2);
}

/// A cache holding the scan of `dir` with these hidden and gitignore
/// settings, its key and its entries.
fn cached_scan(
    dir: &Path,
    include_hidden: bool,
    use_gitignore: bool,
) -> (ScanCache, ScanKey, Arc<Entries>) {
    let cache = ScanCache::new(CachePolicy::default().ttl(Duration::from_secs(3600)));
    let key = ScanKey {
        root: dir.canonicalize().unwrap(),
        policy: ScanPolicy {
            include_hidden,
            use_gitignore,
        },
    };
    let entries = cache
        .get_or_scan(&key, Needs::EVERYTHING, &CancelToken::new())
        .unwrap()
        .entries;
    (cache, key, entries)
}

/// A query many paths match, with a short list to fill: past the first
/// matches, those whose best possible tier cannot enter the list are
/// counted without nucleo scoring them, and the list is the one a pass
/// that scores every path makes.
#[test]
fn matches_that_cannot_enter_the_list_are_not_scored() {
    let dir = generated::tree();
    let walks = ScanCache::new(CachePolicy::default());
    let (cache, key, entries) = cached_scan(dir.path(), false, true);
    let token = CancelToken::new();
    for (query, limit) in [("src/lib", 1), ("src/file", 3), ("d_3", 3), ("e r", 3)] {
        let mut options = FuzzyOptions::new(query, dir.path());
        options.max_results = limit;
        let mut finder = Finder::new(&options);
        let ranked = finder
            .rank(&entries, cache.name_index(&key, &entries, &token), &token)
            .unwrap();
        let (total, scored) = (ranked.total, ranked.scored);
        assert!(total > 10 * limit, "{query:?} matches many: {total}");
        assert!(scored < total, "{query:?}: {scored} of {total} scored");
        options.cache = true;
        let indexed = fuzzy_find(&options, &cache, &token, &mut |_| {}).unwrap();
        options.cache = false;
        let walked = fuzzy_find(&options, &walks, &token, &mut |_| {}).unwrap();
        assert_eq!(indexed.matches, walked.matches, "{query:?}");
        assert_eq!(indexed.total_matches, ranked.total, "{query:?}");
    }
}

/// Where the index knows a word's count, it misses a path exactly when
/// the word's own check over the whole path does, and a directory's count
/// is the count over its whole path (what the entries below go on from);
/// it is unknown only for paths that are not ASCII, and those it never
/// misses.
#[test]
fn progress_counts_equal_the_whole_path_check() {
    let dir = generated::tree();
    let (cache, key, entries) = cached_scan(dir.path(), true, false);
    let token = CancelToken::new();
    let index = cache.name_index(&key, &entries, &token).unwrap();
    for query in QUERIES {
        let query = Query::new(query);
        let progress = query.progress(&entries, &index, &token).unwrap();
        let needles = query.words.iter().filter_map(|w| w.ascii.as_ref());
        for (needle, counts) in needles.zip(&progress) {
            for (at, entry) in entries.iter().enumerate() {
                let count = counts.counts[at];
                let whole = needle.advance(0, entry.path);
                if !entry.path.is_ascii() {
                    assert!(!counts.misses(at), "{:?}", entry.path_lossy());
                    assert!(count == Progress::UNKNOWN || whole == needle.bytes.len());
                    continue;
                }
                if entry.file_type == FileType::Dir {
                    assert_eq!(usize::from(count), whole, "{:?}", entry.path_lossy());
                }
                assert_eq!(counts.misses(at), !needle.is_subsequence_of(entry.path));
            }
        }
    }
}

/// A list large enough that the words after the first are followed on
/// threads of their own: each word's counts are those of its own pass.
#[test]
fn words_followed_at_once_count_as_one_at_a_time() {
    let mut keys: Vec<(Vec<u8>, FileType)> = Vec::new();
    for dir in 0..400 {
        let dir_key = format!("pkg_{dir}").into_bytes();
        keys.push((dir_key.clone(), FileType::Dir));
        for file in 0..PARALLEL_PROGRESS_ENTRIES / 399 {
            let mut key = dir_key.clone();
            key.push(crate::entries::KEY_SEPARATOR);
            key.extend(format!("adapter_{file}_update.ts").bytes());
            keys.push((key, FileType::File));
        }
    }
    let items = keys
        .iter()
        .map(|(key, file_type)| crate::entries::Unsorted {
            key,
            file_type: *file_type,
            mtime_ms: None,
        })
        .collect();
    let entries = Entries::from_unsorted(items);
    assert!(entries.len() >= PARALLEL_PROGRESS_ENTRIES);
    let token = CancelToken::new();
    let index = NameIndex::build(&entries, &token).unwrap().unwrap();
    for query in ["adapters update", "pkg1 7up ts", "a u t"] {
        let query = Query::new(query);
        let together = query.progress(&entries, &index, &token).unwrap();
        let needles = query.words.iter().filter_map(|w| w.ascii.as_ref());
        let alone: Vec<Progress> = needles
            .map(|needle| Progress::of(needle, &entries, &index, &token).unwrap())
            .collect();
        assert_eq!(together.len(), alone.len());
        for (together, alone) in together.iter().zip(&alone) {
            assert!(together.counts == alone.counts);
        }
        assert!(
            alone
                .iter()
                .any(|p| (0..entries.len()).any(|at| p.holds(at)))
        );
    }
}
