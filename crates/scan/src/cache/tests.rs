//! One test per seed-001 contract point; each fails if its point breaks.

use std::{fs, sync::Barrier, thread};

use super::*;
use crate::walk::ScanPolicy;

const LONG: Duration = Duration::from_secs(600);

fn policy() -> CachePolicy {
    CachePolicy::default().ttl(LONG)
}

fn tree(files: usize) -> tempfile::TempDir {
    let paths: Vec<String> = (0..files)
        .map(|i| format!("d{}/f{i}.txt", i % 50))
        .collect();
    natives_testkit::tree_of_paths(&paths)
}

fn key(dir: &Path) -> ScanKey {
    ScanKey {
        root: fs::canonicalize(dir).unwrap(),
        policy: ScanPolicy {
            include_hidden: false,
            use_gitignore: true,
        },
    }
}

fn scan(cache: &ScanCache, key: &ScanKey) -> ScanResult {
    cache
        .get_or_scan(key, Needs::EVERYTHING, &CancelToken::new())
        .unwrap()
}

/// `true` when the call was served from the cache.
fn was_hit(cache: &ScanCache, key: &ScanKey) -> bool {
    scan(cache, key).cache_age_ms > 0
}

#[test]
fn env_policy_with_defaults_and_bad_values() {
    let vars = [
        ("FS_SCAN_CACHE_TTL_MS", "0"),
        ("FS_SCAN_EMPTY_RECHECK_MS", "nope"),
        ("FS_SCAN_CACHE_MAX_ENTRIES", " 3 "),
        ("FS_SCAN_CACHE_MAX_BYTES", "-1"),
    ];
    let got = CachePolicy::from_lookup(|name| {
        vars.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_string())
    });
    let expected = CachePolicy::default().ttl(Duration::ZERO).max_entries(3);
    assert_eq!(got, expected);
    assert_eq!(CachePolicy::from_lookup(|_| None), CachePolicy::default());
}

/// Sharing turns watching and persistence on (the home from `NATIVES_HOME`);
/// the watch budget is left to be found when watching starts unless
/// `FS_SCAN_CACHE_WATCH_MAX` gives it.
#[test]
fn sharing_s_policy_from_the_environment() {
    let lookup = |vars: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    };
    let shared = CachePolicy::from_lookup(lookup(&[
        ("FS_SCAN_CACHE_SHARED", "1"),
        ("NATIVES_HOME", "/srv/home"),
    ]));
    let expected = CachePolicy::default()
        .watch(true)
        .persist(Some(PathBuf::from("/srv/home")))
        .shared(true);
    assert_eq!(shared, expected);
    let bounded = CachePolicy::from_lookup(lookup(&[
        ("FS_SCAN_CACHE_SHARED", "1"),
        ("FS_SCAN_CACHE_WATCH_MAX", "77"),
        ("NATIVES_HOME", "/srv/home"),
    ]));
    assert_eq!(bounded, expected.watch_budget(77));
}

/// The content index's default budget follows usable memory, within its
/// floor and cap.
#[test]
fn the_content_budget_follows_memory() {
    const GIB: u64 = 1 << 30;
    let table: &[(Option<u64>, usize)] = &[
        (None, MIN_CONTENT_BYTES),
        (Some(GIB), MIN_CONTENT_BYTES),
        (Some(2 * GIB), MIN_CONTENT_BYTES),
        (Some(8 * GIB), 256 << 20),
        (Some(24 * GIB), 768 << 20),
        (Some(256 * GIB), MAX_DEFAULT_CONTENT_BYTES),
        (Some(u64::MAX), MAX_DEFAULT_CONTENT_BYTES),
    ];
    for &(usable, budget) in table {
        assert_eq!(content_bytes_for(usable), budget, "{usable:?}");
    }
    let given = CachePolicy::from_lookup(|name| {
        (name == "FS_SCAN_CACHE_CONTENT_BYTES").then(|| "1234".to_owned())
    });
    assert_eq!(given, CachePolicy::default().content_bytes(1234));
}

#[test]
fn ttl_zero_bypasses_the_cache() {
    let dir = tree(3);
    let cache = ScanCache::new(policy().ttl(Duration::ZERO));
    let key = key(dir.path());
    let first = scan(&cache, &key);
    fs::write(dir.path().join("new.txt"), "").unwrap();
    let second = scan(&cache, &key);
    assert_eq!((first.cache_age_ms, second.cache_age_ms), (0, 0));
    assert_eq!(second.entries.len(), first.entries.len() + 1);
    assert_eq!(cache.stats().scans, 0);
}

#[test]
fn hit_within_ttl_shares_the_list_and_reports_age() {
    let dir = tree(3);
    let cache = ScanCache::new(policy());
    let key = key(dir.path());
    let first = scan(&cache, &key);
    fs::write(dir.path().join("new.txt"), "").unwrap();
    let second = scan(&cache, &key);
    assert!(
        Arc::ptr_eq(&first.entries, &second.entries),
        "a hit must not copy"
    );
    assert_eq!(first.cache_age_ms, 0);
    assert!(second.cache_age_ms >= 1);
    assert_eq!(cache.stats().walks, 1);
}

#[test]
fn expired_hit_rescans_and_stores() {
    let dir = tree(3);
    let cache = ScanCache::new(policy().ttl(Duration::from_millis(30)));
    let key = key(dir.path());
    let first = scan(&cache, &key);
    fs::write(dir.path().join("new.txt"), "").unwrap();
    thread::sleep(Duration::from_millis(40));
    let second = scan(&cache, &key);
    assert_eq!(second.cache_age_ms, 0);
    assert_eq!(second.entries.len(), first.entries.len() + 1);
    assert!(was_hit(&cache, &key), "the rescan is stored");
}

#[test]
fn eviction_drops_the_oldest_created_not_the_least_used() {
    let dirs: Vec<_> = (0..3).map(|_| tree(2)).collect();
    let keys: Vec<_> = dirs.iter().map(|d| key(d.path())).collect();
    let cache = ScanCache::new(policy().max_entries(2));
    scan(&cache, &keys[0]);
    thread::sleep(Duration::from_millis(2));
    scan(&cache, &keys[1]);
    assert!(
        was_hit(&cache, &keys[0]),
        "recent use does not protect an entry"
    );
    scan(&cache, &keys[2]);
    assert_eq!(cache.stats().scans, 2);
    assert!(was_hit(&cache, &keys[1]));
    assert!(was_hit(&cache, &keys[2]));
    assert!(
        !was_hit(&cache, &keys[0]),
        "the oldest-created entry was evicted"
    );
}

#[test]
fn byte_budget_evicts_oldest_and_refuses_oversized_scans() {
    let small = tree(10);
    let big = tree(400);
    let (small_key, big_key) = (key(small.path()), key(big.path()));
    let probe = ScanCache::new(policy());
    let small_bytes = scan(&probe, &small_key).entries.heap_bytes();
    let big_bytes = scan(&probe, &big_key).entries.heap_bytes();
    assert_eq!(probe.stats().bytes, small_bytes + big_bytes);

    // Room for either, not both: the older one goes.
    let cache = ScanCache::new(policy().max_bytes(big_bytes + small_bytes - 1));
    scan(&cache, &small_key);
    thread::sleep(Duration::from_millis(2));
    scan(&cache, &big_key);
    let stats = cache.stats();
    assert_eq!((stats.scans, stats.bytes), (1, big_bytes));
    assert!(!was_hit(&cache, &small_key));

    // A scan bigger than the whole budget is returned but never stored.
    let tiny = ScanCache::new(policy().max_bytes(small_bytes - 1));
    assert_eq!(scan(&tiny, &small_key).entries.len(), 20);
    assert_eq!(tiny.stats().scans, 0);
    assert!(stats.entries > 0 && probe.stats().bytes_per_entry() > 0.0);
}

#[test]
fn an_oversized_scan_is_remembered_for_the_ttl_and_forgotten_on_invalidation() {
    let dir = tree(10);
    let key = key(dir.path());
    let bytes = scan(&ScanCache::new(policy()), &key).entries.heap_bytes();
    let cache = ScanCache::new(policy().max_bytes(bytes - 1));
    assert!(!cache.refuses(&key));
    assert_eq!(scan(&cache, &key).entries.len(), 20);
    let stats = cache.stats();
    assert_eq!((stats.scans, stats.refused, stats.walks), (0, 1, 1));
    assert!(cache.refuses(&key));
    // Meanwhile each call walks once, as an uncached one, and stores nothing.
    for _ in 0..2 {
        assert_eq!(scan(&cache, &key).cache_age_ms, 0);
    }
    let stats = cache.stats();
    assert_eq!((stats.scans, stats.refused, stats.walks), (0, 1, 3));
    // A change under the root may have shrunk it: the refusal is forgotten.
    cache.invalidate(&key.root.join("d0/f0.txt"));
    assert!(!cache.refuses(&key));
    assert_eq!(cache.stats().refused, 0);

    // The refusal lasts the TTL, no longer (a TTL the check right after the
    // scan outlasts, however loaded the machine).
    for ttl in [50, 500, 5_000].map(Duration::from_millis) {
        let short = ScanCache::new(CachePolicy::default().ttl(ttl).max_bytes(bytes - 1));
        let started = Instant::now();
        scan(&short, &key);
        let refused = short.refuses(&key);
        if started.elapsed() >= ttl {
            continue;
        }
        assert!(refused);
        thread::sleep(ttl + Duration::from_millis(10));
        assert!(!short.refuses(&key));
        assert_eq!(short.stats().refused, 0);
        return;
    }
    panic!("no TTL outlasted a scan of 20 entries");
}

#[test]
fn no_store_rescan_never_touches_the_shared_entry() {
    let dir = tree(3);
    let cache = ScanCache::new(policy());
    let key = key(dir.path());
    let cached = scan(&cache, &key);
    let token = CancelToken::new();
    let bypass = cache.walk_fresh(&key, Needs::EVERYTHING, &token).unwrap();
    assert!(!Arc::ptr_eq(&cached.entries, &bypass.entries));
    assert!(
        Arc::ptr_eq(&cached.entries, &scan(&cache, &key).entries),
        "still cached"
    );

    let other = tree(1);
    cache
        .walk_fresh(&self::key(other.path()), Needs::EVERYTHING, &token)
        .unwrap();
    assert_eq!(cache.stats().scans, 1, "a no-store scan is not stored");
}

#[test]
fn store_rescan_replaces_the_entry() {
    let dir = tree(3);
    let cache = ScanCache::new(policy());
    let key = key(dir.path());
    let old = scan(&cache, &key);
    fs::write(dir.path().join("new.txt"), "").unwrap();
    let token = CancelToken::new();
    let new = cache.force_rescan(&key, &token).unwrap();
    assert_eq!(new.entries.len(), old.entries.len() + 1);
    assert!(Arc::ptr_eq(&new.entries, &scan(&cache, &key).entries));
}

#[test]
fn concurrent_misses_share_one_walk() {
    let dir = tree(3000);
    let cache = ScanCache::new(policy());
    let key = key(dir.path());
    let start = Barrier::new(8);
    let lists: Vec<_> = thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    start.wait();
                    scan(&cache, &key).entries
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(cache.stats().walks, 1);
    assert!(lists.iter().all(|l| Arc::ptr_eq(l, &lists[0])));
}

#[test]
fn a_waiter_survives_the_leaders_cancellation() {
    let dir = tree(200);
    let (cache, key, open_gate) = gated(dir.path());
    let leader_token = CancelToken::new();
    thread::scope(|s| {
        let leader = s.spawn(|| cache.get_or_scan(&key, Needs::EVERYTHING, &leader_token));
        wait_for_flight(&cache, &key);
        let waiter = s.spawn(|| scan(&cache, &key));
        leader_token.cancel();
        open_gate.send(()).unwrap();
        // The leader's walk finished before its cancel was seen; either way
        // the waiter gets a complete list.
        let _ = leader.join().unwrap();
        assert_eq!(waiter.join().unwrap().entries.len(), 250);
    });
}

#[test]
fn a_walk_that_began_before_an_invalidation_is_not_stored() {
    let dir = tree(20);
    let (cache, key, open_gate) = gated(dir.path());
    thread::scope(|s| {
        let leader = s.spawn(|| scan(&cache, &key));
        wait_for_flight(&cache, &key);
        cache.invalidate(&key.root.join("d1/f1.txt"));
        open_gate.send(()).unwrap();
        assert_eq!(
            leader.join().unwrap().entries.len(),
            40,
            "the caller still gets its walk"
        );
    });
    assert_eq!(cache.stats().scans, 0, "the fenced walk was not stored");
    assert!(!was_hit(&cache, &key));
    assert!(
        was_hit(&cache, &key),
        "a walk after the invalidation is stored"
    );
}

#[test]
fn waiters_on_a_fenced_walk_walk_again() {
    let dir = tree(20);
    let (cache, key, open_gate) = gated(dir.path());
    thread::scope(|s| {
        let leader = s.spawn(|| scan(&cache, &key));
        wait_for_flight(&cache, &key);
        let waiter = s.spawn(|| scan(&cache, &key));
        thread::sleep(Duration::from_millis(20));
        cache.clear();
        fs::write(dir.path().join("late.txt"), "").unwrap();
        open_gate.send(()).unwrap();
        leader.join().unwrap();
        assert_eq!(
            waiter.join().unwrap().entries.len(),
            41,
            "the waiter saw the late file"
        );
    });
    assert_eq!(cache.stats().walks, 2);
}

#[test]
fn a_waiter_honours_its_own_cancellation() {
    let dir = tree(5);
    let (cache, key, open_gate) = gated(dir.path());
    thread::scope(|s| {
        let leader = s.spawn(|| scan(&cache, &key));
        wait_for_flight(&cache, &key);
        let token = CancelToken::new().with_timeout(Some(Duration::from_millis(20)));
        let started = Instant::now();
        let err = cache
            .get_or_scan(&key, Needs::EVERYTHING, &token)
            .unwrap_err();
        assert_eq!(err.code(), "ETIMEDOUT");
        assert!(started.elapsed() < Duration::from_millis(500));
        open_gate.send(()).unwrap();
        leader.join().unwrap();
    });
}

#[test]
fn invalidation_drops_containing_and_contained_roots_only() {
    let dir = tree(0);
    let base = fs::canonicalize(dir.path()).unwrap();
    for sub in ["a/b/c", "ab", "z"] {
        fs::create_dir_all(base.join(sub)).unwrap();
    }
    let cache = ScanCache::new(policy());
    let keys: HashMap<&str, ScanKey> = ["a", "a/b", "a/b/c", "ab", "z"]
        .into_iter()
        .map(|sub| (sub, key(&base.join(sub))))
        .collect();
    let cached = |cache: &ScanCache| {
        let mut roots: Vec<_> = keys
            .iter()
            .filter(|(_, k)| cache.lock().cached.contains_key(k))
            .map(|(name, _)| *name)
            .collect();
        roots.sort();
        roots
    };
    let fill = |cache: &ScanCache| keys.values().for_each(|k| drop(scan(cache, k)));

    // A file: every root above it goes; siblings and look-alikes ("ab") stay.
    fill(&cache);
    cache.invalidate(&base.join("a/b/new.ts"));
    assert_eq!(cached(&cache), ["a/b/c", "ab", "z"]);

    // A directory (renamed or deleted): roots above it and inside it go.
    fill(&cache);
    cache.invalidate(&base.join("a/b"));
    assert_eq!(cached(&cache), ["ab", "z"]);

    // A deleted directory, resolved the way the public entry point does.
    fill(&cache);
    fs::remove_dir_all(base.join("a")).unwrap();
    cache
        .invalidate_path(&dir.path().join("a/b/c/../x"))
        .unwrap();
    assert_eq!(cached(&cache), ["a/b/c", "ab", "z"]);

    cache.clear();
    assert!(cached(&cache).is_empty());
}

#[cfg(unix)]
#[test]
fn a_symlink_invalidates_the_root_holding_it_and_the_root_it_points_into() {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    fs::create_dir_all(base.join("a")).unwrap();
    fs::create_dir_all(base.join("b")).unwrap();
    fs::write(base.join("b/file"), "x").unwrap();
    std::os::unix::fs::symlink("../b/file", base.join("a/link")).unwrap();
    let cache = ScanCache::new(policy());
    let (a, b) = (key(&base.join("a")), key(&base.join("b")));
    drop((scan(&cache, &a), scan(&cache, &b)));

    cache.invalidate_path(&base.join("a/link")).unwrap();
    assert!(!was_hit(&cache, &a), "the root holding the link");
    assert!(!was_hit(&cache, &b), "the root the link points into");
}

/// A cache whose next walk waits to land until the returned sender fires.
fn gated(dir: &Path) -> (ScanCache, ScanKey, std::sync::mpsc::Sender<()>) {
    let cache = ScanCache::new(policy());
    let (open_gate, gate) = std::sync::mpsc::channel();
    *cache.landing_gate.lock().unwrap() = Some(gate);
    (cache, key(dir), open_gate)
}

fn wait_for_flight(cache: &ScanCache, key: &ScanKey) {
    while !cache.lock().flights.contains_key(key) {
        thread::yield_now();
    }
}
