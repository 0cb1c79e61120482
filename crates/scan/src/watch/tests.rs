//! Watched scans against fresh walks, with the changes made by another
//! process, as an editor, a build or `git` would make them.

use std::{fs, path::Path, process::Command, time::Duration};

use super::*;
use crate::{
    cache::{CachePolicy, ScanCache},
    walk::{Needs, ScanPolicy},
};
use natives_testkit::sh;

/// Every partition of a root.
const PARTITIONS: [ScanPolicy; 4] = [
    ScanPolicy {
        include_hidden: false,
        use_gitignore: true,
    },
    ScanPolicy {
        include_hidden: true,
        use_gitignore: true,
    },
    ScanPolicy {
        include_hidden: false,
        use_gitignore: false,
    },
    ScanPolicy {
        include_hidden: true,
        use_gitignore: false,
    },
];

/// A TTL no test outlives: every answer must come from events, not age.
const LONG_TTL: Duration = Duration::from_secs(600);

fn watched_cache(budget: usize) -> ScanCache {
    let policy = CachePolicy::default()
        .ttl(LONG_TTL)
        .watch(true)
        .watch_budget(budget);
    ScanCache::new(policy)
}

fn key(root: &Path, policy: ScanPolicy) -> ScanKey {
    ScanKey {
        root: fs::canonicalize(root).unwrap(),
        policy,
    }
}

/// (path, type, mtime) of every entry.
type Listing = Vec<(String, FileType, Option<i64>)>;

fn listing(entries: &Entries) -> Listing {
    entries
        .iter()
        .map(|e| (e.path_lossy().into_owned(), e.file_type, e.mtime_ms))
        .collect()
}

fn cached(cache: &ScanCache, key: &ScanKey) -> Listing {
    listing(
        &cache
            .get_or_scan(key, Needs::EVERYTHING, &CancelToken::new())
            .unwrap()
            .entries,
    )
}

fn fresh(key: &ScanKey) -> Listing {
    listing(&walk::scan(&key.root, key.policy, &CancelToken::new()).unwrap())
}

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    sh(
        dir.path(),
        "git init -q . && mkdir -p src/deep/er .hidden ignored node_modules/pkg \
         && echo 'ignored/' > .gitignore && touch src/a.ts src/deep/b.ts .hidden/c \
         ignored/d node_modules/pkg/index.js",
    );
    dir
}

#[test]
fn a_watched_scan_sees_what_another_process_changed_without_invalidation() {
    let dir = tree();
    let cache = watched_cache(1_000);
    let keys: Vec<ScanKey> = PARTITIONS.iter().map(|&p| key(dir.path(), p)).collect();
    for key in &keys {
        assert_eq!(cached(&cache, key), fresh(key));
    }
    let walks = cache.stats().walks;
    let steps = [
        "touch src/new.ts",
        "mkdir -p src/made/inner && touch src/made/inner/x.ts src/made/.dot",
        "mv src/made src/moved",
        "rm -r src/deep",
        "echo more >> src/a.ts",
        "mv src/moved/inner/x.ts node_modules/pkg/",
        "mkdir .hidden/sub && touch .hidden/sub/y ignored/e",
        "rm -r src/moved && mkdir src/moved && touch src/moved/again",
        // Names that are not UTF-8, or hold a newline, are paths like any other.
        "mkdir \"$(printf 'src/caf\\351')\" && touch \"$(printf 'src/caf\\351/new\\nline')\"",
        "mv \"$(printf 'src/caf\\351')\" src/renamed",
    ];
    for step in steps {
        sh(dir.path(), step);
        for key in &keys {
            assert_eq!(
                cached(&cache, key),
                fresh(key),
                "after `{step}`, {:?}",
                key.policy
            );
        }
    }
    let stats = cache.stats();
    assert_eq!(stats.walks, walks, "patched, never walked again");
    assert_eq!((stats.watch.watched_roots, stats.watch.rewalks), (4, 0));
    assert!(stats.watch.events_applied >= steps.len() as u64);
}

#[test]
fn a_watched_scan_outlives_the_ttl_without_walking_again() {
    let dir = tree();
    let ttl = Duration::from_millis(20);
    let cache = ScanCache::new(CachePolicy::default().ttl(ttl).watch(true));
    let key = key(dir.path(), PARTITIONS[1]);
    let before = cached(&cache, &key);
    std::thread::sleep(ttl * 5);
    sh(dir.path(), "touch src/seen.ts");
    let after = cached(&cache, &key);
    assert_eq!(
        cache.stats().walks,
        1,
        "events keep it exact: no walk once the TTL has passed"
    );
    assert_eq!(after, fresh(&key));
    assert_ne!(after, before);
}

#[test]
fn an_ignore_file_change_drops_the_scan_and_the_next_call_walks_again() {
    let dir = tree();
    let cache = watched_cache(1_000);
    let key = key(dir.path(), PARTITIONS[0]);
    sh(
        dir.path(),
        "git init -q src/inner && touch src/inner/kept.ts",
    );
    cached(&cache, &key);
    let steps = [
        "echo '*.ts' > src/.ignore",
        "echo 'a.ts' > .rgignore",
        "echo 'deep/' >> .git/info/exclude",
        "echo '*.ts' >> src/inner/.git/info/exclude",
        "echo 'src/' >> .gitignore",
        "rm .gitignore",
    ];
    for step in steps {
        let walks = cache.stats().walks;
        sh(dir.path(), step);
        assert_eq!(cached(&cache, &key), fresh(&key), "after `{step}`");
        assert_eq!(cache.stats().walks, walks + 1, "`{step}` walks again");
    }
    assert_eq!(cache.stats().watch.rewalks, steps.len() as u64);
}

/// What a watched scan could not read stays named while nothing touches
/// it, without falling back (the watcher cannot watch it either); a change
/// at it (here: the directory the walk could not name moved up to where it
/// can) walks the scan again, and the answer then lists what was inside.
#[test]
fn a_change_at_an_unreadable_path_walks_the_watched_scan_again() {
    let dir = tree();
    let cache = watched_cache(1_000);
    let key = key(dir.path(), PARTITIONS[3]);
    let deep = natives_testkit::beyond_path_max(&key.root, "deep.txt", "");
    let unread = |cache: &ScanCache| -> Vec<String> {
        let scan = cache
            .get_or_scan(&key, Needs::EVERYTHING, &CancelToken::new())
            .unwrap();
        scan.entries
            .unreadable()
            .iter()
            .map(|u| u.path_lossy().into_owned())
            .collect()
    };
    let named = unread(&cache);
    assert_eq!(named.len(), 1, "{named:?}");
    assert!(deep.starts_with(&named[0]));
    sh(dir.path(), "touch src/new.ts");
    assert_eq!(cached(&cache, &key), fresh(&key));
    assert_eq!(unread(&cache), named, "a change elsewhere keeps the record");
    let walks = cache.stats().walks;
    assert_eq!(
        (
            cache.stats().watch.watched_roots,
            cache.stats().watch.watcher_error
        ),
        (1, 0)
    );

    // Move the directory the walk could not name (its own name first) up to the root.
    let too_long = Path::new(&named[0]);
    let parent = key.root.join(too_long.parent().unwrap());
    let name = too_long.file_name().unwrap();
    let status = Command::new("mv")
        .arg(name)
        .arg(&key.root)
        .current_dir(&parent)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(cached(&cache, &key), fresh(&key));
    assert_eq!(cache.stats().walks, walks + 1, "walked again");
    assert!(unread(&cache).is_empty(), "nothing left unreadable");
    assert!(
        cached(&cache, &key)
            .iter()
            .any(|(path, ..)| path.ends_with("/deep.txt"))
    );
}

#[test]
fn a_scan_over_the_watch_budget_falls_back_to_the_ttl_and_says_why() {
    let dir = tree();
    let cache = watched_cache(3);
    let key = key(dir.path(), PARTITIONS[1]);
    let before = cached(&cache, &key);
    assert_eq!(
        cache.stats().watch.watches,
        0,
        "the walk that went over the budget gave back what it took"
    );
    sh(dir.path(), "touch src/unseen.ts");
    assert_eq!(
        cached(&cache, &key),
        before,
        "within the TTL, as without watching"
    );
    let stats = cache.stats().watch;
    assert_eq!((stats.watched_roots, stats.watch_budget), (0, 1));
    assert_eq!(stats.watches, 0, "a fallen scan keeps no watch");
}

/// A scan that falls back after taking more than [`RENEW_WATCHER_AT`]
/// watches gives them back by replacing the watcher, not one by one (which
/// costs the square of their number in `notify`), and a scan still watched
/// goes on hearing of every change.
#[test]
fn a_scan_falling_back_with_many_watches_gives_them_back_at_once() {
    let (small, big) = (tree(), tempfile::tempdir().unwrap());
    let dirs = RENEW_WATCHER_AT + 200;
    for at in 0..dirs {
        fs::create_dir_all(big.path().join(format!("d{}/e{at}", at % 16))).unwrap();
    }
    let cache = watched_cache(RENEW_WATCHER_AT + 100);
    let kept = key(small.path(), PARTITIONS[1]);
    assert_eq!(cached(&cache, &kept), fresh(&kept));
    let watches = cache.stats().watch.watches;
    let over = key(big.path(), PARTITIONS[1]);
    assert_eq!(cached(&cache, &over), fresh(&over));
    assert_eq!(cached(&cache, &over), fresh(&over));
    let stats = cache.stats().watch;
    assert_eq!(
        (stats.watched_roots, stats.watch_budget),
        (1, 1),
        "{stats:?}"
    );
    assert_eq!(stats.watches, watches, "only the kept scan's watches stay");
    let one_by_one = cache
        .watching()
        .unwrap()
        .shared
        .unwatched
        .load(Ordering::Relaxed);
    assert!(
        one_by_one < RENEW_WATCHER_AT,
        "{one_by_one} watches given back one by one"
    );
    sh(
        small.path(),
        "touch src/after.ts && mkdir src/new_dir && touch src/new_dir/f.ts",
    );
    let listed = cached(&cache, &kept);
    assert!(
        listed.iter().any(|(path, ..)| path == "src/new_dir/f.ts"),
        "{listed:?}"
    );
    assert_eq!(listed, fresh(&kept));
    assert_eq!(
        cache.stats().walks,
        2,
        "the kept scan followed events, no walk"
    );
}

/// The same where no second watcher fits beside the first (the kernel's
/// per-user limit, which is what makes a scan fall back at a million
/// files): the old watcher goes first, its watches at once, not one by one
/// (that took minutes of a core); the scan still kept loses the events of
/// that moment, so it is walked again at its next answer, and answers
/// every change exactly.
#[test]
fn with_no_room_for_a_second_watcher_the_watches_still_go_at_once() {
    let (small, big) = (tree(), tempfile::tempdir().unwrap());
    let dirs = RENEW_WATCHER_AT + 200;
    for at in 0..dirs {
        fs::create_dir_all(big.path().join(format!("d{}/e{at}", at % 16))).unwrap();
    }
    let cache = watched_cache(RENEW_WATCHER_AT + 100);
    let watching = cache.watching().unwrap();
    watching
        .shared
        .refuse_second_watcher
        .store(true, Ordering::Relaxed);
    let kept = key(small.path(), PARTITIONS[1]);
    assert_eq!(cached(&cache, &kept), fresh(&kept));
    let over = key(big.path(), PARTITIONS[1]);
    assert_eq!(cached(&cache, &over), fresh(&over));
    assert_eq!(cached(&cache, &over), fresh(&over));
    let one_by_one = watching.shared.unwatched.load(Ordering::Relaxed);
    assert!(
        one_by_one < RENEW_WATCHER_AT,
        "{one_by_one} watches given back one by one"
    );
    let walks = cache.stats().walks;
    sh(
        small.path(),
        "touch src/after.ts && mkdir src/new_dir && touch src/new_dir/f.ts",
    );
    assert_eq!(cached(&cache, &kept), fresh(&kept));
    assert_eq!(
        cache.stats().walks,
        walks + 1,
        "the kept scan walked again once"
    );
    sh(small.path(), "touch src/later.ts");
    assert_eq!(cached(&cache, &kept), fresh(&kept));
    assert_eq!(cache.stats().walks, walks + 1, "then followed events again");
    assert_eq!(cache.stats().watch.watched_roots, 1);
}

#[test]
fn invalidation_and_eviction_give_the_watches_back() {
    let dir = tree();
    let cache = watched_cache(1_000);
    let key = key(dir.path(), PARTITIONS[1]);
    cached(&cache, &key);
    assert!(cache.stats().watch.watches > 3);
    cache.invalidate(&key.root);
    assert_eq!(cache.stats().watch.watches, 0);
    cached(&cache, &key);
    cache.clear();
    assert_eq!(
        (
            cache.stats().watch.watches,
            cache.stats().watch.watched_roots
        ),
        (0, 0)
    );
}

#[test]
fn a_scan_evicted_from_the_cache_stops_being_watched() {
    let (one, two) = (tree(), tree());
    let policy = CachePolicy::default()
        .ttl(LONG_TTL)
        .watch(true)
        .max_entries(1);
    let cache = ScanCache::new(policy);
    let first = key(one.path(), PARTITIONS[1]);
    cached(&cache, &first);
    let watches = cache.stats().watch.watches;
    cached(&cache, &key(two.path(), PARTITIONS[0]));
    let stats = cache.stats();
    assert_eq!((stats.scans, stats.watch.watched_roots), (1, 1));
    assert!(stats.watch.watches < watches, "{watches} -> {stats:?}");
    assert!(!cache.watching().unwrap().follows(&first));
}

/// A randomised run of external changes: after every batch, each
/// partition's watched scan equals a fresh walk.
#[test]
fn random_external_changes_keep_every_partition_exact() {
    let dir = tree();
    let cache = watched_cache(10_000);
    let keys: Vec<ScanKey> = PARTITIONS.iter().map(|&p| key(dir.path(), p)).collect();
    keys.iter().for_each(|key| drop(cached(&cache, key)));
    let mut rng = Rng(0x5eed_1234_abcd);
    let mut changes = 0;
    let mut batch = 0;
    while changes < 2_000 {
        let script: Vec<String> = (0..20).map(|_| rng.change()).collect();
        changes += script.len();
        batch += 1;
        sh(dir.path(), &script.join("\n"));
        for key in &keys {
            let got = cached(&cache, key);
            let want = fresh(key);
            assert!(
                got == want,
                "batch {batch} {:?}:\n{}\n{}",
                key.policy,
                script.join("\n"),
                diff(&got, &want)
            );
        }
    }
    let stats = cache.stats().watch;
    assert_eq!(stats.watched_roots, 4, "{stats:?}");
    assert!(
        stats.events_applied > 4 * 1_000,
        "patched, mostly: {stats:?}"
    );
    assert!(
        stats.rewalks < 2 * batch as u64,
        "walked again for rule edits only: {stats:?}"
    );
}

fn diff(got: &Listing, want: &Listing) -> String {
    let extra: Vec<_> = got.iter().filter(|e| !want.contains(e)).collect();
    let missing: Vec<_> = want.iter().filter(|e| !got.contains(e)).collect();
    format!("extra {extra:?}\nmissing {missing:?}")
}

/// A small deterministic generator (xorshift), so a failure replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }

    /// A directory at some depth, inside and outside ignored and hidden areas.
    fn dir(&mut self) -> String {
        let tops = [
            "src",
            "src/deep",
            "src/deep/er",
            ".hidden",
            "ignored",
            "node_modules/pkg",
            "lib",
            "lib/x",
        ];
        self.pick(&tops).to_string()
    }

    fn name(&mut self) -> String {
        let names = [
            "a.ts",
            "b.rs",
            ".dot",
            "c",
            "d.txt",
            "e",
            "node_modules",
            "f.js",
        ];
        self.pick(&names).to_string()
    }

    /// One shell command changing the tree (never failing).
    fn change(&mut self) -> String {
        let (dir, name, other) = (self.dir(), self.name(), self.dir());
        // Rule edits are rare (1 in 50), as in real work: most batches must
        // be patched, not walked again.
        match self.next() % 50 / 5 {
            0 | 1 => format!("mkdir -p {dir} && touch {dir}/{name}"),
            2 => format!("mkdir -p {dir}/{name}.d/sub && touch {dir}/{name}.d/sub/f"),
            3 => format!("rm -rf {dir}/{name}"),
            4 => format!("rm -rf {dir}"),
            5 => format!(
                "[ -e {dir} ] && mkdir -p {other} && mv {dir} {other}/moved$(date +%N) || true"
            ),
            6 => format!(
                "[ -e {dir}/{name} ] && mkdir -p {other} && mv {dir}/{name} {other}/ || true"
            ),
            7 => format!("[ -f {dir}/{name} ] && echo x >> {dir}/{name} || true"),
            8 if !self.next().is_multiple_of(5) => format!("mkdir -p {dir} && touch {dir}/{name}"),
            8 => match self.next() % 3 {
                0 => "echo 'lib/x' >> .gitignore".to_string(),
                1 => format!("mkdir -p {dir} && echo '*.txt' > {dir}/.ignore"),
                _ => "printf 'ignored/\\n' > .gitignore".to_string(),
            },
            _ => format!("mkdir -p {dir} && ln -sf ../{name} {dir}/link"),
        }
    }
}

#[test]
fn a_git_checkout_of_thousands_of_files_is_patched_exactly() {
    let dir = tempfile::tempdir().unwrap();
    sh(
        dir.path(),
        "git init -q . && git config user.email t@t && git config user.name t \
         && for d in $(seq 1 30); do mkdir -p pkg$d/src; for f in $(seq 1 100); do echo $d$f > pkg$d/src/f$f.ts; done; done \
         && echo 'dist/' > .gitignore && git add -A && git commit -qm one && git checkout -qb two \
         && rm -r pkg1 pkg2 pkg3 pkg4 pkg5 pkg6 pkg7 pkg8 pkg9 pkg10 \
         && for d in $(seq 31 45); do mkdir -p app$d/lib; for f in $(seq 1 100); do echo $d$f > app$d/lib/g$f.js; done; done \
         && for f in $(seq 1 100); do echo changed >> pkg20/src/f$f.ts; done \
         && git add -A && git commit -qm two && git checkout -q master 2>/dev/null || git checkout -q main",
    );
    let cache = watched_cache(10_000);
    let keys: Vec<ScanKey> = PARTITIONS.iter().map(|&p| key(dir.path(), p)).collect();
    keys.iter().for_each(|key| drop(cached(&cache, key)));
    let walks = cache.stats().walks;
    for branch in ["two", "-"] {
        sh(dir.path(), &format!("git checkout -q {branch}"));
        for key in &keys {
            assert_eq!(
                cached(&cache, key),
                fresh(key),
                "after checkout {branch}, {:?}",
                key.policy
            );
        }
    }
    let stats = cache.stats();
    assert_eq!(stats.watch.overflow, 0, "{stats:?}");
    assert_eq!(stats.walks - walks, 0, "patched: {stats:?}");
}

#[test]
fn an_overflowing_event_queue_falls_back_to_the_ttl_and_says_why() {
    let dir = tree();
    let cache = watched_cache(1_000);
    let key = key(dir.path(), PARTITIONS[1]);
    let before = cached(&cache, &key);
    let queue: usize = fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .map_or(16_384, |text| text.trim().parse().unwrap());
    let watching = cache.watching().unwrap();
    let stalled = watching.shared.stall.lock().unwrap();
    // The watcher's thread is stalled inside one event; the kernel queues
    // the rest until it overflows.
    fs::write(dir.path().join("src/first"), "").unwrap();
    std::thread::sleep(Duration::from_millis(50));
    for n in 0..queue + 100 {
        fs::write(dir.path().join(format!("src/flood{n}")), "").unwrap();
    }
    drop(stalled);
    assert_eq!(
        cached(&cache, &key),
        before,
        "within the TTL, as without watching"
    );
    let stats = cache.stats().watch;
    assert_eq!(
        (stats.overflow, stats.watched_roots, stats.watches),
        (1, 0, 0),
        "{stats:?}"
    );
    cache.invalidate(&key.root);
    assert_eq!(cached(&cache, &key), fresh(&key));
    assert_eq!(
        cache.stats().watch.watched_roots,
        1,
        "a new walk follows events again"
    );
}

#[test]
fn a_walk_fenced_out_late_leaves_the_watches_of_the_walk_that_replaced_it() {
    let dir = tree();
    let cache = watched_cache(1_000);
    let key = key(dir.path(), PARTITIONS[1]);
    let (open_gate, gate) = std::sync::mpsc::channel();
    *cache.landing_gate.lock().unwrap() = Some(gate);
    std::thread::scope(|scope| {
        let late = scope.spawn(|| cached(&cache, &key));
        // The first walk is done and waits to land.
        while cache.landing_gate.lock().unwrap().is_some() {
            std::thread::yield_now();
        }
        cache.force_rescan(&key, &CancelToken::new()).unwrap();
        open_gate.send(()).unwrap();
        late.join().unwrap();
    });
    assert!(cache.watching().unwrap().follows(&key));
    sh(dir.path(), "touch src/after.ts");
    assert_eq!(cached(&cache, &key), fresh(&key));
    assert_eq!(cache.stats().watch.watched_roots, 1);
}

/// Set in the child of the test below: the tree it scans, which holds its
/// temp directory.
const COOKIE_CHILD_TREE: &str = "NATIVES_WATCH_COOKIE_TREE";

#[test]
fn a_scan_of_the_temp_directory_itself_keeps_draining_promptly() {
    let dir = tree();
    let temp = dir.path().join("tmp");
    fs::create_dir(&temp).unwrap();
    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "watch::tests::cookie_child",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("TMPDIR", &temp)
        .env(COOKIE_CHILD_TREE, dir.path())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&child.stdout);
    assert!(
        child.status.success() && out.contains("1 passed"),
        "{out}\n{}",
        String::from_utf8_lossy(&child.stderr)
    );
}

/// Run by the test above in a child whose temp directory lies in the tree:
/// the cookie directory is one of the scan's directories.
#[test]
#[ignore = "run by a_scan_of_the_temp_directory_itself_keeps_draining_promptly in a child process"]
fn cookie_child() {
    let root = PathBuf::from(std::env::var_os(COOKIE_CHILD_TREE).unwrap());
    let cache = watched_cache(1_000);
    let (whole, src) = (
        key(&root, PARTITIONS[3]),
        key(&root.join("src"), PARTITIONS[3]),
    );
    cached(&cache, &whole);
    sh(&root, "touch src/one.ts");
    assert_eq!(
        cached(&cache, &whole),
        fresh(&whole),
        "cookies come and go like other files"
    );
    // Dropping the scan that listed the cookie directory must leave it watched.
    cache.invalidate(&whole.root);
    cached(&cache, &src);
    sh(&root, "touch src/two.ts");
    let started = std::time::Instant::now();
    assert_eq!(cached(&cache, &src), fresh(&src));
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(cache.stats().watch.cookie_timeout, 0);
}

/// A bind mount made for a test, taken away (lazily, so a failing test
/// still leaves nothing mounted) when dropped.
struct BindMount(std::path::PathBuf);

impl BindMount {
    /// Bind `source` at `target`; `None` where this process may not mount.
    fn new(source: &Path, target: &Path) -> Option<BindMount> {
        let status = Command::new("mount")
            .arg("--bind")
            .arg(source)
            .arg(target)
            .stderr(std::process::Stdio::null())
            .status()
            .ok()?;
        status.success().then(|| BindMount(target.to_path_buf()))
    }
}

impl Drop for BindMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// What watching covers of mounts: a filesystem mounted below the root
/// when the scan is walked is watched like any directory (a change made
/// through the bind mount's source is seen), but mounting or unmounting
/// sends no event, so a scan whose root gains or loses a mount point
/// afterwards falls back to the TTL, and says why.
#[cfg(target_os = "linux")]
#[test]
fn mounts_made_after_the_walk_fall_back_to_the_ttl_and_say_why() {
    let dir = tree();
    let source = tempfile::tempdir().unwrap();
    fs::write(source.path().join("bound.txt"), "").unwrap();
    fs::create_dir(dir.path().join("before")).unwrap();
    fs::create_dir(dir.path().join("after")).unwrap();
    // SAFETY: `geteuid` reads the process's effective user and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let Some(_before) = BindMount::new(source.path(), &dir.path().join("before")).filter(|_| root)
    else {
        eprintln!("skipped: mounting needs root (and a system that lets it mount)");
        return;
    };
    let cache = watched_cache(1_000);
    let key = key(dir.path(), PARTITIONS[3]);
    assert!(
        cached(&cache, &key)
            .iter()
            .any(|(p, ..)| p == "before/bound.txt")
    );
    fs::write(source.path().join("through-source.txt"), "").unwrap();
    let seen = cached(&cache, &key);
    assert_eq!(seen, fresh(&key), "a mount there at the walk is watched");
    assert!(seen.iter().any(|(p, ..)| p == "before/through-source.txt"));
    assert_eq!(cache.stats().watch.mounts, 0);

    let after = BindMount::new(source.path(), &dir.path().join("after")).unwrap();
    let stale = cached(&cache, &key);
    assert_eq!(stale, seen, "within the TTL, as without watching");
    assert!(!stale.iter().any(|(p, ..)| p == "after/bound.txt"));
    assert!(
        fresh(&key).iter().any(|(p, ..)| p == "after/bound.txt"),
        "the mount is there"
    );
    let stats = cache.stats().watch;
    assert_eq!((stats.mounts, stats.watched_roots), (1, 0));
    drop(after);
    // Walked again (here by invalidation), the scan follows events again.
    cache.invalidate(&key.root);
    cached(&cache, &key);
    assert_eq!(cache.stats().watch.watched_roots, 1);
}

/// A scan that fell back (its event queue overflowed, so events were lost)
/// no longer vouches for the content index: a cached grep sees an edit
/// whose event was lost.
#[test]
fn a_scan_that_fell_back_stops_vouching_for_the_content_index() {
    use crate::grep::{GrepOptions, grep};
    let dir = tree();
    fs::write(dir.path().join("src/kept.ts"), "export const before = 1;\n").unwrap();
    fs::write(dir.path().join("src/other.ts"), "export const other = 1;\n").unwrap();
    let cache = watched_cache(1_000);
    let search = |pattern: &str| {
        let mut options = GrepOptions::new(pattern, dir.path());
        options.cache = true;
        grep(&options, &cache, &CancelToken::new(), &mut |_| {}).unwrap()
    };
    for _ in 0..2 {
        search("before");
    }
    assert!(cache.stats().content.files >= 2);
    let queue: usize = fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .map_or(16_384, |text| text.trim().parse().unwrap());
    let watching = cache.watching().unwrap();
    let stalled = watching.shared.stall.lock().unwrap();
    fs::write(dir.path().join("src/first"), "").unwrap();
    std::thread::sleep(Duration::from_millis(50));
    for n in 0..queue + 100 {
        fs::write(dir.path().join(format!("src/flood{n}")), "").unwrap();
    }
    // Same size, mtime put back: only ctime tells, and its event is lost.
    let kept = dir.path().join("src/kept.ts");
    let mtime = fs::metadata(&kept).unwrap().modified().unwrap();
    fs::write(&kept, "export const zqxjkv = 1;\n").unwrap();
    fs::File::options()
        .write(true)
        .open(&kept)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    drop(stalled);
    let skipped = cache.stats().content.files_skipped;
    let outcome = search("zqxjkv");
    assert_eq!(outcome.total_matches, 1, "{outcome:?}");
    assert_eq!(cache.stats().watch.overflow, 1);
    // Written just now, the files were indexed on the watch's word alone:
    // without it they are read, not checked by their timestamps.
    assert_eq!(cache.stats().content.files_skipped, skipped);
}

#[test]
fn global_rules_come_from_the_files_git_reads() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| std::ffi::OsString::from(value))
        }
    };
    type Vars = &'static [(&'static str, &'static str)];
    let cases: [(Vars, &[&str]); 4] = [
        (
            &[("HOME", "/h")],
            &[
                "/h/.gitconfig",
                "/h/.config/git/config",
                "/etc/gitconfig",
                "/h/.config/git/ignore",
            ],
        ),
        (
            &[
                ("HOME", "/h"),
                ("XDG_CONFIG_HOME", "/x"),
                ("GIT_CONFIG_SYSTEM", "/s"),
            ],
            &["/h/.gitconfig", "/x/git/config", "/s", "/x/git/ignore"],
        ),
        (
            &[
                ("HOME", "/h"),
                ("GIT_CONFIG_GLOBAL", "/g"),
                ("XDG_CONFIG_HOME", ""),
            ],
            &["/g", "/etc/gitconfig", "/h/.config/git/ignore"],
        ),
        (&[], &["/etc/gitconfig"]),
    ];
    for (vars, expected) in cases {
        let files = global_rule_files(&env(vars));
        let expected: Vec<PathBuf> = expected.iter().map(PathBuf::from).collect();
        assert_eq!(files, expected, "{vars:?}");
    }
}

#[test]
fn an_event_on_a_global_rule_or_a_directory_above_it_walks_again() {
    let rules = [PathBuf::from("/h/.config/git/ignore")];
    let table = [
        ("/h/.config/git/ignore", false, true),
        ("/h/.config/git/ignore", true, true),
        ("/h/.config", true, true),
        ("/h/.config", false, false),
        ("/h/.config/git/other", true, false),
        ("/h/.bashrc", true, false),
    ];
    for (path, structural, expected) in table {
        assert_eq!(
            is_global_rule(Path::new(path), structural, &rules),
            expected,
            "{path} {structural}"
        );
    }
}

/// Set in the child of the test below: the tree it scans and the home
/// whose git configuration it edits.
const GLOBAL_RULES_CHILD: &str = "NATIVES_WATCH_GLOBAL_RULES_TREE";

/// An edit to git's global excludes file, or to the configuration naming
/// it, reaches a watched scan at once (watched scans do not expire).
#[test]
fn a_global_excludes_edit_reaches_a_watched_scan() {
    let dir = tree();
    let home = tempfile::tempdir().unwrap();
    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "watch::tests::global_rules_child",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("HOME", home.path())
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("GIT_CONFIG_GLOBAL")
        .env("GIT_CONFIG_SYSTEM", home.path().join("no-system-config"))
        .env(GLOBAL_RULES_CHILD, dir.path())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&child.stdout);
    assert!(
        child.status.success() && out.contains("1 passed"),
        "{out}\n{}",
        String::from_utf8_lossy(&child.stderr)
    );
}

/// Run by the test above in a child with a home of its own.
#[test]
#[ignore = "run by a_global_excludes_edit_reaches_a_watched_scan in a child process"]
fn global_rules_child() {
    let root = PathBuf::from(std::env::var_os(GLOBAL_RULES_CHILD).unwrap());
    let home = PathBuf::from(std::env::var_os("HOME").unwrap());
    let cache = watched_cache(1_000);
    let key = key(&root, PARTITIONS[0]);
    sh(&root, "touch src/debug.log");
    let has = |listing: &Listing, path: &str| listing.iter().any(|(p, ..)| p == path);
    assert!(has(&cached(&cache, &key), "src/debug.log"));
    let steps = [
        (
            "mkdir -p .config/git && echo '*.log' > .config/git/ignore",
            "src/debug.log",
            false,
        ),
        (
            "printf '[core]\\n\\texcludesFile = %s/extra\\n' \"$HOME\" > .gitconfig",
            "src/debug.log",
            true,
        ),
        ("echo '*.ts' > extra", "src/a.ts", false),
    ];
    for (script, path, present) in steps {
        sh(&home, script);
        let seen = cached(&cache, &key);
        assert_eq!(seen, fresh(&key), "after {script}");
        assert_eq!(has(&seen, path), present, "{path} after {script}");
    }
    assert!(
        cache.stats().watch.rewalks >= 3,
        "{:?}",
        cache.stats().watch
    );
}

/// The journal of event paths is kept only when asked for (a process that
/// shares its index); one not kept never claims to be complete.
#[test]
fn the_journal_is_kept_only_when_asked_for() {
    let root = Path::new("/srv/tree");
    for kept_on in [false, true] {
        let mut journal = Journal {
            kept_on,
            ..Journal::default()
        };
        journal.note(&root.join("a.rs"));
        journal.note(Path::new("/elsewhere/b.rs"));
        let expected = kept_on.then(|| vec![root.join("a.rs")]);
        assert_eq!(journal.since(0, root), expected, "kept {kept_on}");
        journal.lose();
        assert_eq!(journal.since(0, root), None);
        assert_eq!(journal.since(journal.last, root), kept_on.then(Vec::new));
    }
}
