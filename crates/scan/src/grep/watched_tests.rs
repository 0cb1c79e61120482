//! Cached greps of watched scans: the content index vouched for by events,
//! against what another process does to the tree meanwhile.

use std::{fs, path::Path, time::Duration};

use crate::{
    CancelToken,
    cache::{CachePolicy, ScanCache},
    grep::{ContentStats, GrepOptions, GrepOutcome, ListSource, grep},
};
use natives_testkit::sh;

fn watched_cache() -> ScanCache {
    ScanCache::new(
        CachePolicy::default()
            .ttl(Duration::from_secs(600))
            .watch(true),
    )
}

fn search(cache: &ScanCache, root: &Path, pattern: &str) -> GrepOutcome {
    let mut options = GrepOptions::new(pattern, root);
    options.cache = true;
    grep(&options, cache, &CancelToken::new(), &mut |_| {}).unwrap()
}

/// `path:line` of each result.
fn found(outcome: &GrepOutcome) -> Vec<String> {
    outcome
        .matches
        .iter()
        .map(|m| format!("{}:{}", m.path_lossy(), m.line_number))
        .collect()
}

/// Thirty small Rust files and a `lib.rs`, just written.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src/deep")).unwrap();
    for n in 0..30 {
        let text = format!("fn item_{n}() {{\n    let value_{n} = {n};\n}}\n");
        fs::write(dir.path().join(format!("src/deep/m{n:02}.rs")), text).unwrap();
    }
    fs::write(
        dir.path().join("src/lib.rs"),
        "pub fn resolveWorkspaceRoot() {}\n",
    )
    .unwrap();
    dir
}

fn content(cache: &ScanCache) -> ContentStats {
    cache.stats().content
}

/// Files just written are indexed at once under a watch (no waiting for
/// their timestamps to settle), then ruled out with no system call; an
/// edit by another process that keeps the size and puts the mtime back is
/// seen at the next search all the same.
#[test]
fn a_watched_index_rules_files_out_with_no_system_call_and_sees_every_edit() {
    let dir = tree();
    let cache = watched_cache();
    for _ in 0..2 {
        assert_eq!(search(&cache, dir.path(), "value_1\\b").total_matches, 1);
    }
    assert_eq!(content(&cache).files, 31);
    let before = content(&cache);
    let outcome = search(&cache, dir.path(), "zqxjkvbw_never");
    assert_eq!((outcome.total_matches, outcome.files_searched), (0, 31));
    let after = content(&cache);
    assert_eq!(after.files_skipped - before.files_skipped, 31);
    assert_eq!(after.files_verified, before.files_verified, "no fstatat");
    sh(
        dir.path(),
        "m=$(stat -c %Y src/lib.rs) \
         && printf swapped | dd of=src/lib.rs bs=1 seek=7 conv=notrunc 2>/dev/null \
         && touch -d @$m src/lib.rs",
    );
    assert_eq!(
        found(&search(&cache, dir.path(), "swappedWorkspaceRoot")),
        ["src/lib.rs:1"]
    );
    sh(
        dir.path(),
        "echo 'let zqxjkvbw_never = 1;' >> src/deep/m07.rs",
    );
    assert_eq!(
        found(&search(&cache, dir.path(), "zqxjkvbw_never")),
        ["src/deep/m07.rs:4"]
    );
    assert_eq!(content(&cache).files_verified, before.files_verified);
    assert_eq!(cache.stats().watch.rewalks, 0);
}

/// A directory renamed away and another renamed into its place: what was
/// indexed below the old one is not taken for what lies there now.
#[test]
fn a_directory_renamed_into_another_ones_place_takes_its_entries_along() {
    let dir = tempfile::tempdir().unwrap();
    sh(
        dir.path(),
        "mkdir a b && echo alpha_x > a/x.rs && echo omega_x > b/x.rs \
         && touch -d @1000000000 a/x.rs b/x.rs",
    );
    let cache = watched_cache();
    for _ in 0..2 {
        search(&cache, dir.path(), "x_x");
    }
    assert_eq!(content(&cache).files, 2);
    sh(dir.path(), "mv b c && mv a b");
    assert_eq!(found(&search(&cache, dir.path(), "alpha_x")), ["b/x.rs:1"]);
    assert_eq!(found(&search(&cache, dir.path(), "omega_x")), ["c/x.rs:1"]);
}

/// An invalidation inside a watched scan's root is reconciled like an
/// event: the scan is not walked again, and the index keeps vouching for
/// the files it did not name.
#[test]
fn an_invalidated_path_of_a_watched_scan_is_reconciled_not_walked() {
    let dir = tree();
    let cache = watched_cache();
    for _ in 0..2 {
        search(&cache, dir.path(), "value_1\\b");
    }
    let (walks, verified) = (cache.stats().walks, content(&cache).files_verified);
    let added = dir.path().join("src/deep/added.rs");
    fs::write(&added, "let fresh_token = 1;\n").unwrap();
    cache.invalidate(&fs::canonicalize(&added).unwrap());
    assert_eq!(
        found(&search(&cache, dir.path(), "fresh_token")),
        ["src/deep/added.rs:1"]
    );
    assert_eq!(cache.stats().walks, walks, "reconciled, not walked again");
    assert_eq!(content(&cache).files_verified, verified);
}

/// `watched_only` uses the cache only while the scan follows events: not
/// at all without watching, nor once the scan fell back (here, its watches
/// would exceed the budget); each answer says where its list came from.
#[test]
fn a_search_for_watched_lists_only_walks_fresh_unless_the_scan_follows_events() {
    let dir = tree();
    let watched_only = |cache: &ScanCache| {
        let mut options = GrepOptions::new("value_1\\b", dir.path());
        options.cache = true;
        options.watched_only = true;
        let outcome = grep(&options, cache, &CancelToken::new(), &mut |_| {}).unwrap();
        assert_eq!(outcome.total_matches, 1);
        outcome.source
    };
    let unwatched = ScanCache::new(CachePolicy::default().ttl(Duration::from_secs(600)));
    assert_eq!(watched_only(&unwatched), ListSource::Walked);
    assert_eq!(unwatched.stats().scans, 0, "the cache is left alone");
    let cache = watched_cache();
    assert_eq!(watched_only(&cache), ListSource::Watched, "walked, watched");
    assert_eq!(watched_only(&cache), ListSource::Watched);
    let over_budget = ScanCache::new(
        CachePolicy::default()
            .ttl(Duration::from_secs(600))
            .watch(true)
            .watch_budget(1),
    );
    assert_eq!(watched_only(&over_budget), ListSource::Walked, "walked now");
    let walks = over_budget.stats().walks;
    assert_eq!(watched_only(&over_budget), ListSource::Walked);
    assert_eq!(over_budget.stats().walks, walks + 1, "walked again, fresh");
    let mut cached = GrepOptions::new("value_1\\b", dir.path());
    cached.cache = true;
    let outcome = grep(&cached, &over_budget, &CancelToken::new(), &mut |_| {}).unwrap();
    assert_eq!(outcome.source, ListSource::Cached, "by the TTL");
}

/// A `glob` that selects files is answered from the watched list while it
/// selects nothing the scan's rules left out. An ignored file made after
/// the scan is such a thing: as with `rg -g`, the glob selecting it walks
/// and finds it, while other globs keep the list; once the file is
/// deleted, its event takes it out of the record and the list answers
/// again, with no walk.
#[test]
fn an_ignored_file_made_after_the_scan_is_found_by_a_glob_selecting_it() {
    let dir = tree();
    sh(
        dir.path(),
        "git init -q . && printf '*.log\\n!keep.log\\n' > .gitignore \
         && echo needle_log > keep.log && echo needle_log > src/lib.rs",
    );
    let cache = watched_cache();
    let globbed = |glob: &str| {
        let mut options = GrepOptions::new("needle_log", dir.path());
        options.cache = true;
        options.globs = vec![glob.into()];
        let outcome = grep(&options, &cache, &CancelToken::new(), &mut |_| {}).unwrap();
        (found(&outcome), outcome.source)
    };
    let watched = |paths: &[&str]| {
        (
            paths.iter().map(|p| format!("{p}:1")).collect(),
            ListSource::Watched,
        )
    };
    search(&cache, dir.path(), "needle_log");
    assert_eq!(globbed("*.log"), watched(&["keep.log"]));
    sh(dir.path(), "echo needle_log > debug.log");
    let (paths, source) = globbed("*.log");
    assert_eq!(paths, ["debug.log:1", "keep.log:1"]);
    assert_eq!(
        source,
        ListSource::Walked,
        "rg -g '*.log' searches debug.log"
    );
    assert_eq!(globbed("*.rs"), watched(&["src/lib.rs"]));
    sh(dir.path(), "rm debug.log");
    let walks = cache.stats().walks;
    assert_eq!(globbed("*.log"), watched(&["keep.log"]));
    assert_eq!(cache.stats().walks, walks, "answered from the list");
    assert_eq!(cache.stats().watch.rewalks, 0);
}

/// An empty answer from a watched scan that follows its events walks no
/// tree again, however old the scan: the events prove it, and the skipped
/// recheck is counted. Without watching, seed 001's recheck walks.
#[test]
fn an_empty_answer_of_a_watched_scan_walks_nothing_again() {
    use crate::{
        fuzzy::{FuzzyOptions, fuzzy_find},
        glob::{GlobOptions, glob},
    };
    let dir = tree();
    for watch in [true, false] {
        let policy = CachePolicy::default()
            .ttl(Duration::from_secs(600))
            .empty_recheck(Duration::ZERO)
            .watch(watch);
        let cache = ScanCache::new(policy);
        let token = CancelToken::new();
        assert_eq!(search(&cache, dir.path(), "value_1\\b").total_matches, 1);
        let walks = cache.stats().walks;
        let mut options = GrepOptions::new("value", dir.path());
        (options.cache, options.globs) = (true, vec!["*.nothing".into()]);
        let grepped = grep(&options, &cache, &token, &mut |_| {}).unwrap();
        // All three share the grep's partition (the default scan policy).
        let mut options = GlobOptions::new("**/*.nothing", dir.path());
        options.cache = true;
        let globbed = glob(&options, &cache, &token, &mut |_| {}).unwrap();
        let mut options = FuzzyOptions::new("zqxjkvbw", dir.path());
        options.cache = true;
        let fuzzy = fuzzy_find(&options, &cache, &token, &mut |_| {}).unwrap();
        let found = (
            grepped.files_searched,
            globbed.total_matches,
            fuzzy.total_matches,
        );
        assert_eq!(found, (0, 0, 0), "watch {watch}");
        let stats = cache.stats();
        let expected = match watch {
            true => (walks, 3),
            false => (walks + 3, 0),
        };
        let counted = (stats.walks, stats.empty_rechecks_skipped);
        assert_eq!(counted, expected, "watch {watch}");
    }
}

fn first_page(root: &Path, pattern: &str, max: usize) -> GrepOptions {
    let mut options = GrepOptions::new(pattern, root);
    (options.cache, options.literal, options.max_count) = (true, true, Some(max));
    options
}

/// The answer at once to `options`, tried until one fits the budget (a
/// test build is several times slower, and the machine may be busy): the
/// first tries after a pattern is compiled still learn what files hold.
fn answered_at_once(options: &GrepOptions, cache: &ScanCache) -> Option<GrepOutcome> {
    (0..50).find_map(|_| crate::grep::grep_at_once(options, cache, &CancelToken::new()))
}

/// A first page from a watched cache is answered at once, as the search on
/// another thread answers it; anything else is left to that search.
#[test]
fn a_first_page_is_answered_at_once_as_the_search_answers_it() {
    use crate::grep::{AT_ONCE_RESULTS, grep_at_once};
    let dir = tree();
    let cache = watched_cache();
    let token = CancelToken::new();
    let options = first_page(dir.path(), "value_", 5);
    assert!(
        grep_at_once(&options, &cache, &token).is_none(),
        "not compiled yet"
    );
    let searched = grep(&options, &cache, &token, &mut |_| {}).unwrap();
    let answered = answered_at_once(&options, &cache).expect("answered at once");
    assert_eq!(answered.source, ListSource::Watched);
    assert_eq!(found(&answered), found(&searched));
    assert_eq!(answered.total_matches, searched.total_matches);
    let left = [
        GrepOptions {
            max_count: None,
            ..options.clone()
        },
        GrepOptions {
            max_count: Some(AT_ONCE_RESULTS + 1),
            ..options.clone()
        },
        GrepOptions {
            cache: false,
            ..options.clone()
        },
    ];
    for options in left {
        grep(&options, &cache, &token, &mut |_| {}).unwrap();
        assert!(
            grep_at_once(&options, &cache, &token).is_none(),
            "{options:?}"
        );
    }
    let unwatched = ScanCache::new(CachePolicy::default().ttl(Duration::from_secs(600)));
    grep(&options, &unwatched, &token, &mut |_| {}).unwrap();
    assert!(
        grep_at_once(&options, &unwatched, &token).is_none(),
        "unwatched"
    );
}

/// A file written just before the call (its event queued, not yet read by
/// the watcher's thread) is in the answer given at once: the cookie rule
/// holds on this path too.
#[test]
fn an_answer_at_once_is_never_older_than_the_call() {
    use crate::grep::grep_at_once;
    let dir = tree();
    let cache = watched_cache();
    let token = CancelToken::new();
    let mut at_once = 0;
    for n in 0..100 {
        let word = format!("written{n}x");
        let options = first_page(dir.path(), &word, 10);
        grep(&options, &cache, &token, &mut |_| {}).unwrap(); // compiles it
        fs::write(dir.path().join(format!("src/w{n}.rs")), format!("{word}\n")).unwrap();
        let outcome = match grep_at_once(&options, &cache, &token) {
            Some(outcome) => {
                at_once += 1;
                outcome
            }
            None => grep(&options, &cache, &token, &mut |_| {}).unwrap(),
        };
        assert_eq!(found(&outcome), [format!("src/w{n}.rs:1")]);
    }
    assert!(at_once >= 10, "answered at once {at_once} times of 100");
}

/// An answer at once does not wait out another caller's refresh (which may
/// wait seconds for a stuck watch): it gives up within its budget.
#[test]
fn an_answer_at_once_does_not_wait_for_another_refresh() {
    use crate::grep::grep_at_once;
    let dir = tree();
    let cache = watched_cache();
    let token = CancelToken::new();
    // A pattern of its own: compiled patterns are kept for the process, and
    // the tests beside this one run at the same time.
    let options = first_page(dir.path(), "alue_", 5);
    assert!(
        answered_at_once(&options, &cache).is_none(),
        "not compiled yet"
    );
    grep(&options, &cache, &token, &mut |_| {}).unwrap();
    assert!(answered_at_once(&options, &cache).is_some());
    let refreshing = cache.hold_refresh();
    let started = std::time::Instant::now();
    assert!(grep_at_once(&options, &cache, &token).is_none());
    let waited = started.elapsed();
    drop(refreshing);
    assert!(waited < Duration::from_secs(1), "waited {waited:?}");
    assert!(answered_at_once(&options, &cache).is_some());
}
