//! Records restored in place of walks: equal to a fresh walk after every
//! kind of change, refused (and counted) whenever they cannot be proved.

use std::{
    fs,
    os::unix::fs::{PermissionsExt, symlink},
    path::Path,
    time::Duration,
};

use super::*;
use crate::{
    GlobOptions,
    cache::{CachePolicy, ScanCache},
    walk::{self, Needs, ScanPolicy},
};

const POLICIES: [ScanPolicy; 2] = [
    ScanPolicy::DEFAULT,
    ScanPolicy {
        include_hidden: true,
        use_gitignore: false,
    },
];

/// Past the racy slack: what a test changes is then older than a listing
/// begun after this wait.
fn settle_clock() {
    std::thread::sleep(Duration::from_nanos(2 * identity::RACY_SLACK_NS as u64));
}

fn cache_in(home: &Path) -> ScanCache {
    let policy = CachePolicy::default()
        .ttl(Duration::from_secs(600))
        .persist(Some(home.to_path_buf()));
    ScanCache::new(policy)
}

fn key_of(root: &Path, policy: ScanPolicy) -> ScanKey {
    ScanKey {
        root: fs::canonicalize(root).unwrap(),
        policy,
    }
}

fn listed(entries: &Entries) -> Vec<(String, FileType)> {
    entries
        .iter()
        .map(|entry| (entry.path_lossy().into_owned(), entry.file_type))
        .collect()
}

fn scan(cache: &ScanCache, key: &ScanKey) -> Arc<Entries> {
    let token = CancelToken::new();
    cache
        .get_or_scan(key, Needs::EVERYTHING, &token)
        .unwrap()
        .entries
}

/// A repository with ignore rules, hidden files and nested directories.
fn project() -> tempfile::TempDir {
    let dir = natives_testkit::tree(&[
        (".gitignore", "target/\n*.log\n"),
        (".env", "SECRET=1"),
        ("src/lib.rs", "pub fn f() {}"),
        ("src/deep/mod.rs", ""),
        ("src/deep/deeper/x.rs", ""),
        ("docs/guide.md", ""),
        ("docs/.ignore", "drafts/\n"),
        ("docs/drafts/wip.md", ""),
        ("target/debug/app", ""),
        ("build.log", ""),
    ]);
    fs::create_dir(dir.path().join(".git")).unwrap();
    dir
}

/// Walk `root` with persistence on (writing its record), apply `change`,
/// then answer from a new cache (a new process): the answer equals a fresh
/// walk, and the new cache's counters are returned.
fn restore_after(root: &Path, policy: ScanPolicy, change: impl Fn(&Path)) -> PersistStats {
    let home = tempfile::tempdir().unwrap();
    let key = key_of(root, policy);
    settle_clock();
    let first = cache_in(home.path());
    scan(&first, &key);
    first.settle_records();
    assert_eq!(first.stats().persist.saved, 1, "the walk is written");
    change(root);
    settle_clock();
    let second = cache_in(home.path());
    let restored = scan(&second, &key);
    let fresh = walk::scan(&key.root, policy, &CancelToken::new()).unwrap();
    assert_eq!(listed(&restored), listed(&fresh));
    second.settle_records();
    second.stats().persist
}

/// Table: what changes between the record and the next process, and
/// whether the record is still used (`true`) or a walk answers.
#[test]
fn a_restored_scan_equals_a_fresh_walk_after_each_kind_of_change() {
    type Change = fn(&Path);
    let table: [(&str, Change, bool); 18] = [
        ("nothing", |_| {}, true),
        (
            "a file added",
            |r| fs::write(r.join("src/deep/new.rs"), "").unwrap(),
            true,
        ),
        (
            "a file removed",
            |r| fs::remove_file(r.join("src/lib.rs")).unwrap(),
            true,
        ),
        (
            "a file edited in place",
            |r| fs::write(r.join("src/lib.rs"), "changed").unwrap(),
            true,
        ),
        (
            "a directory renamed",
            |r| fs::rename(r.join("src/deep"), r.join("src/moved")).unwrap(),
            true,
        ),
        (
            "a directory made with files",
            |r| {
                fs::create_dir_all(r.join("new/inner")).unwrap();
                fs::write(r.join("new/inner/a.rs"), "").unwrap();
            },
            true,
        ),
        (
            "a directory removed",
            |r| fs::remove_dir_all(r.join("src/deep")).unwrap(),
            true,
        ),
        (
            "a directory replaced by a file",
            |r| {
                fs::remove_dir_all(r.join("src/deep")).unwrap();
                fs::write(r.join("src/deep"), "").unwrap();
            },
            true,
        ),
        (
            "a directory replaced by another",
            |r| {
                fs::remove_dir_all(r.join("src/deep/deeper")).unwrap();
                fs::create_dir(r.join("src/deep/deeper")).unwrap();
                fs::write(r.join("src/deep/deeper/y.rs"), "").unwrap();
            },
            true,
        ),
        (
            "an ignored file added",
            |r| fs::write(r.join("other.log"), "").unwrap(),
            true,
        ),
        (
            "a hidden file added",
            |r| fs::write(r.join("src/.hidden"), "").unwrap(),
            true,
        ),
        (
            "an ignore file edited",
            |r| fs::write(r.join("docs/.ignore"), "").unwrap(),
            true,
        ),
        (
            "an ignore file made",
            |r| fs::write(r.join("src/.gitignore"), "deep/\n").unwrap(),
            true,
        ),
        (
            "an ignore file removed below the root",
            |r| fs::remove_file(r.join("docs/.ignore")).unwrap(),
            true,
        ),
        (
            "a repository made below the root",
            |r| {
                fs::create_dir(r.join("docs/.git")).unwrap();
                fs::write(r.join("docs/.gitignore"), "guide.md\n").unwrap();
            },
            true,
        ),
        (
            "git at work in the repository",
            |r| {
                fs::write(r.join(".git/index.lock"), "").unwrap();
                fs::rename(r.join(".git/index.lock"), r.join(".git/index")).unwrap();
            },
            true,
        ),
        (
            "the root's ignore file edited",
            |r| fs::write(r.join(".gitignore"), "*.log\n").unwrap(),
            false,
        ),
        (
            "the root's ignore file removed",
            |r| fs::remove_file(r.join(".gitignore")).unwrap(),
            false,
        ),
    ];
    // Changes that leave every directory as it was, when ignore files are
    // files like any other (`gitignore: false`).
    let edits_in_place = [
        "nothing",
        "a file edited in place",
        "an ignore file edited",
        "git at work in the repository",
        "the root's ignore file edited",
    ];
    for policy in POLICIES {
        for (what, change, restores) in table {
            let dir = project();
            let stats = restore_after(dir.path(), policy, change);
            // Without ignore rules an ignore file is a file like any other.
            let restores = restores || !policy.use_gitignore;
            assert_eq!(
                stats.restored,
                u64::from(restores),
                "{what} ({policy:?}): {stats:?}"
            );
            let relists = match policy.use_gitignore {
                // An ignore file edited has its directory walked again.
                true => ![
                    "nothing",
                    "a file edited in place",
                    "git at work in the repository",
                ]
                .contains(&what),
                false => !edits_in_place.contains(&what),
            };
            if restores {
                assert_eq!(
                    stats.dirs_relisted > 0,
                    relists,
                    "{what} ({policy:?}): {stats:?}"
                );
            }
        }
    }
}

#[test]
fn a_repository_exclude_file_made_later_is_seen() {
    let dir = project();
    let stats = restore_after(dir.path(), ScanPolicy::DEFAULT, |root| {
        fs::create_dir_all(root.join(".git/info")).unwrap();
        fs::write(root.join(".git/info/exclude"), "docs/\n").unwrap();
    });
    assert_eq!((stats.restored, stats.rebuilt.rules), (0, 1));
}

#[test]
fn a_root_made_again_is_walked() {
    let parent = tempfile::tempdir().unwrap();
    let root = parent.path().join("root");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("a.txt"), "").unwrap();
    // The old root stays (renamed), so its inode number cannot be reused.
    let stats = restore_after(&root, ScanPolicy::DEFAULT, |root| {
        fs::rename(root, root.with_extension("old")).unwrap();
        fs::create_dir(root).unwrap();
        fs::write(root.join("b.txt"), "").unwrap();
    });
    assert_eq!((stats.restored, stats.rebuilt.root), (0, 1));
}

/// A restored list holds no file mtimes (an edit in place changes no
/// directory): a glob shows, and sorts by, the mtime the file has now.
#[test]
fn a_glob_of_a_restored_scan_shows_current_mtimes() {
    let dir = natives_testkit::tree(&[("a.txt", ""), ("b.txt", "")]);
    let home = tempfile::tempdir().unwrap();
    settle_clock();
    let first = cache_in(home.path());
    let mut options = GlobOptions::new("*.txt", dir.path());
    options.cache = true;
    options.sort_by_mtime = true;
    let token = CancelToken::new();
    crate::glob(&options, &first, &token, &mut |_| {}).unwrap();
    first.settle_records();
    let older = fs::File::options()
        .write(true)
        .open(dir.path().join("b.txt"))
        .unwrap();
    older
        .set_modified(std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_000))
        .unwrap();
    let second = cache_in(home.path());
    let outcome = crate::glob(&options, &second, &token, &mut |_| {}).unwrap();
    assert_eq!(second.stats().persist.restored, 1);
    let shown: Vec<(String, Option<i64>)> = outcome
        .matches()
        .map(|m| (m.path_lossy().into_owned(), m.mtime_ms))
        .collect();
    assert_eq!(shown[1], ("b.txt".to_owned(), Some(1_000_000)));
    assert_eq!(shown[0].0, "a.txt");
    assert!(shown[0].1.is_some_and(|ms| ms > 1_000_000));
}

/// Table: a record damaged or planted in each way is not believed, the
/// answer is a walk's, the reason is counted, and a good record replaces it.
#[test]
fn a_damaged_or_foreign_record_is_rebuilt_never_trusted() {
    type Damage = fn(&Path, &Path);
    let flip: Damage = |record, _| {
        let mut bytes = fs::read(record).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x40;
        fs::write(record, bytes).unwrap();
    };
    let truncate: Damage = |record, _| {
        let bytes = fs::read(record).unwrap();
        fs::write(record, &bytes[..bytes.len() - 9]).unwrap();
    };
    let other_version: Damage = |record, _| {
        let mut bytes = fs::read(record).unwrap();
        bytes[8..12].copy_from_slice(&(record::VERSION + 1).to_le_bytes());
        fs::write(record, bytes).unwrap();
    };
    let loose_mode: Damage = |record, _| {
        fs::set_permissions(record, fs::Permissions::from_mode(0o666)).unwrap();
    };
    let link: Damage = |record, other| {
        fs::rename(record, other).unwrap();
        symlink(other, record).unwrap();
    };
    type Counted = fn(&Rebuilt) -> u64;
    let table: [(&str, Damage, Counted); 5] = [
        ("a flipped byte", flip, |r| r.corrupt),
        ("truncated", truncate, |r| r.corrupt),
        ("another version", other_version, |r| r.version),
        ("writable by others", loose_mode, |r| r.owner),
        ("a link", link, |r| r.owner),
    ];
    for (what, damage, counted) in table {
        let dir = project();
        let home = tempfile::tempdir().unwrap();
        let key = key_of(dir.path(), ScanPolicy::DEFAULT);
        settle_clock();
        let first = cache_in(home.path());
        scan(&first, &key);
        first.settle_records();
        let store = first.persisted.as_ref().unwrap();
        damage(&store.record_path(&key), &home.path().join("elsewhere"));
        let second = cache_in(home.path());
        let answer = scan(&second, &key);
        let fresh = walk::scan(&key.root, key.policy, &CancelToken::new()).unwrap();
        assert_eq!(listed(&answer), listed(&fresh), "{what}");
        second.settle_records();
        let stats = second.stats().persist;
        assert_eq!(
            (stats.restored, counted(&stats.rebuilt)),
            (0, 1),
            "{what}: {stats:?}"
        );
        assert_eq!(stats.saved, 1, "{what}: a good record replaces it");
        let third = cache_in(home.path());
        scan(&third, &key);
        assert_eq!(third.stats().persist.restored, 1, "{what}");
    }
}

/// A record of one root under another's name (a collision, a copy) is
/// refused by its key.
#[test]
fn a_record_of_another_root_is_refused() {
    let (one, two) = (project(), project());
    let home = tempfile::tempdir().unwrap();
    let (key_one, key_two) = (
        key_of(one.path(), ScanPolicy::DEFAULT),
        key_of(two.path(), ScanPolicy::DEFAULT),
    );
    settle_clock();
    let first = cache_in(home.path());
    scan(&first, &key_one);
    first.settle_records();
    let store = first.persisted.as_ref().unwrap();
    fs::copy(store.record_path(&key_one), store.record_path(&key_two)).unwrap();
    let second = cache_in(home.path());
    scan(&second, &key_two);
    assert_eq!(second.stats().persist.rebuilt.key, 1);
}

/// As root, a record another user owns is refused (the mode is private,
/// only the owner differs).
#[test]
fn a_record_another_user_owns_is_refused() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: only root can give a file to another user");
        return;
    }
    let dir = project();
    let home = tempfile::tempdir().unwrap();
    let key = key_of(dir.path(), ScanPolicy::DEFAULT);
    settle_clock();
    let first = cache_in(home.path());
    scan(&first, &key);
    first.settle_records();
    let record = first.persisted.as_ref().unwrap().record_path(&key);
    std::os::unix::fs::chown(&record, Some(65534), Some(65534)).unwrap();
    let second = cache_in(home.path());
    scan(&second, &key);
    assert_eq!(second.stats().persist.rebuilt.owner, 1);
}

#[test]
fn records_stay_within_their_budget() {
    let (one, two) = (project(), project());
    let home = tempfile::tempdir().unwrap();
    settle_clock();
    let sized = cache_in(home.path());
    let key_one = key_of(one.path(), ScanPolicy::DEFAULT);
    scan(&sized, &key_one);
    sized.settle_records();
    let record_one = sized.persisted.as_ref().unwrap().record_path(&key_one);
    let one_record = fs::metadata(&record_one).unwrap().len();
    let policy = CachePolicy::default()
        .ttl(Duration::from_secs(600))
        .persist(Some(home.path().to_path_buf()))
        .persist_bytes(one_record * 3 / 2);
    let budgeted = ScanCache::new(policy);
    let key_two = key_of(two.path(), ScanPolicy::DEFAULT);
    std::thread::sleep(Duration::from_millis(20));
    scan(&budgeted, &key_two);
    budgeted.settle_records();
    let record_two = budgeted.persisted.as_ref().unwrap().record_path(&key_two);
    assert!(record_two.exists());
    assert!(!record_one.exists(), "the least recently written goes");
    let tiny = CachePolicy::default()
        .persist(Some(home.path().to_path_buf()))
        .persist_bytes(16);
    let refused = ScanCache::new(tiny);
    scan(&refused, &key_one);
    refused.settle_records();
    assert_eq!(refused.stats().persist.not_saved, 1);
}

/// Seed 001's recheck of an empty answer walks the tree, even when a
/// record would answer.
#[test]
fn the_empty_recheck_walks() {
    let dir = project();
    let home = tempfile::tempdir().unwrap();
    let key = key_of(dir.path(), ScanPolicy::DEFAULT);
    settle_clock();
    let first = cache_in(home.path());
    scan(&first, &key);
    first.settle_records();
    let second = cache_in(home.path());
    second.force_rescan(&key, &CancelToken::new()).unwrap();
    let stats = second.stats();
    assert_eq!((stats.walks, stats.persist.restored), (1, 0));
}

/// A scan with a path it could not read is not written: a later walk
/// could read it.
#[test]
fn a_scan_with_unreadable_paths_is_not_written() {
    if nix::unistd::geteuid().is_root() {
        eprintln!("skipped: root reads a directory whatever its mode");
        return;
    }
    let dir = project();
    let locked = dir.path().join("src/deep");
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    let home = tempfile::tempdir().unwrap();
    let cache = cache_in(home.path());
    scan(&cache, &key_of(dir.path(), ScanPolicy::DEFAULT));
    cache.settle_records();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(cache.stats().persist.not_saved, 1);
}

/// The records' directory and files are private to their user.
#[test]
fn records_are_private() {
    let dir = project();
    let home = tempfile::tempdir().unwrap();
    let cache = cache_in(home.path());
    let key = key_of(dir.path(), ScanPolicy::DEFAULT);
    scan(&cache, &key);
    cache.settle_records();
    let record = cache.persisted.as_ref().unwrap().record_path(&key);
    let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(record.parent().unwrap()), 0o700);
    assert_eq!(mode(&record), 0o600);
}

/// With watching on, a restored scan follows events from the start: a
/// change made after the restore is in the next answer, with no walk, and
/// the watches are the ones a walk would have taken.
#[test]
fn a_restored_scan_follows_events_when_watching() {
    let dir = project();
    let home = tempfile::tempdir().unwrap();
    let key = key_of(dir.path(), ScanPolicy::DEFAULT);
    let watched = |home: &Path| {
        let policy = CachePolicy::default()
            .ttl(Duration::from_secs(600))
            .persist(Some(home.to_path_buf()))
            .watch(true);
        ScanCache::new(policy)
    };
    settle_clock();
    let first = watched(home.path());
    scan(&first, &key);
    first.settle_records();
    let walked_watches = first.stats().watch.watches;
    drop(first);
    fs::write(dir.path().join("src/before.rs"), "").unwrap();
    settle_clock();
    let second = watched(home.path());
    let restored = scan(&second, &key);
    assert_eq!(second.stats().persist.restored, 1);
    assert!(listed(&restored).contains(&("src/before.rs".to_owned(), FileType::File)));
    fs::write(dir.path().join("src/deep/after.rs"), "").unwrap();
    fs::create_dir(dir.path().join("made")).unwrap();
    fs::write(dir.path().join("made/inside.rs"), "").unwrap();
    let answer = scan(&second, &key);
    let fresh = walk::scan(&key.root, key.policy, &CancelToken::new()).unwrap();
    assert_eq!(listed(&answer), listed(&fresh));
    let stats = second.stats();
    assert_eq!(stats.walks, 0);
    assert_eq!(stats.watch.watched_roots, 1);
    assert!(stats.watch.events_applied > 0);
    assert_eq!(
        stats.watch.watches,
        walked_watches + 1,
        "the made directory is watched too"
    );
}

/// Set in the lock holder's environment: the lock file it holds.
const HOLDER: &str = "NATIVES_PERSIST_TEST_HOLDER";

/// The other process of the listing-lock test (a no-op in the test run
/// itself): takes the lock its environment names, says so, and sleeps
/// until it is killed.
#[test]
fn listing_lock_holder_process() {
    let Some(path) = std::env::var_os(HOLDER) else {
        return;
    };
    let _held = natives_system::lock::try_exclusive(Path::new(&path))
        .unwrap()
        .expect("the lock is free");
    println!("held");
    std::thread::sleep(Duration::from_secs(600));
}

/// A process that misses a root another process is listing waits for that
/// listing rather than walking too; when the other is SIGKILLed mid-way the
/// kernel frees its lock, and the waiter walks at once: no hang, and an
/// answer equal to a fresh walk.
#[test]
fn a_listing_holder_killed_lets_the_waiter_walk_at_once() {
    use std::io::{BufRead, BufReader};
    let dir = project();
    let home = tempfile::tempdir().unwrap();
    let key = key_of(dir.path(), ScanPolicy::DEFAULT);
    let cache = Arc::new(cache_in(home.path()));
    let lock = cache
        .persisted
        .as_ref()
        .unwrap()
        .record_path(&key)
        .with_extension("lock");
    fs::create_dir_all(lock.parent().unwrap()).unwrap();
    let mut holder = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "persist::tests::listing_lock_holder_process",
            "--nocapture",
        ])
        .env(HOLDER, &lock)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut out = BufReader::new(holder.stdout.take().unwrap());
    while !line.contains("held") {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "the holder died");
    }
    let waiter = {
        let (cache, key) = (Arc::clone(&cache), key.clone());
        std::thread::spawn(move || {
            let answer = scan(&cache, &key);
            (answer, std::time::Instant::now())
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !waiter.is_finished(),
        "the waiter walked while another listed"
    );
    assert_eq!(cache.stats().walks, 0);
    holder.kill().unwrap();
    let killed = std::time::Instant::now();
    holder.wait().unwrap();
    let (answer, answered) = waiter.join().unwrap();
    assert!(answered.duration_since(killed) < Duration::from_secs(5));
    let fresh = walk::scan(&key.root, key.policy, &CancelToken::new()).unwrap();
    assert_eq!(listed(&answer), listed(&fresh));
    assert_eq!(cache.stats().walks, 1);
}

/// Set in the child's environment by the global-rules test: the tree.
const GLOBAL_RULES_TREE: &str = "NATIVES_PERSIST_TEST_GLOBAL_TREE";

/// The child of the global-rules test (a no-op in the test run itself): git's
/// global configuration, named by its environment, lies inside the tree and
/// names an excludes file there too; the excludes file is edited after the
/// record, and the restore must answer as a fresh walk does.
#[test]
fn global_rules_inside_the_tree_process() {
    let Some(tree) = std::env::var_os(GLOBAL_RULES_TREE) else {
        return;
    };
    let root = Path::new(&tree);
    let stats = restore_after(root, ScanPolicy::DEFAULT, |root| {
        fs::write(root.join("conf/ignore"), "*.md\n").unwrap();
    });
    assert_eq!((stats.restored, stats.rebuilt.rules), (0, 1), "{stats:?}");
}

/// Git's global excludes apply to the whole tree wherever the file lies:
/// one inside the tree that changed walks the whole tree again, not the
/// subtree holding it (as an ignore file there would). Run in a child,
/// whose environment names the global configuration.
#[test]
fn a_changed_global_excludes_file_inside_the_tree_walks_it_whole() {
    let dir = project();
    let root = fs::canonicalize(dir.path()).unwrap();
    fs::create_dir(root.join("conf")).unwrap();
    let excludes = root.join("conf/ignore");
    fs::write(&excludes, "").unwrap();
    let config = format!("[core]\n\texcludesFile = {}\n", excludes.display());
    fs::write(root.join("conf/gitconfig"), config).unwrap();
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "persist::tests::global_rules_inside_the_tree_process",
            "--nocapture",
        ])
        .env(GLOBAL_RULES_TREE, &root)
        .env("GIT_CONFIG_GLOBAL", root.join("conf/gitconfig"))
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&child.stdout);
    assert!(
        child.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&child.stderr)
    );
    assert!(report.contains("1 passed"), "{report}");
}

/// A process that restores a root whose record it wrote less than
/// `REWRITE_AFTER` ago does not write it again for a few changes: without
/// watching, a changing tree would have its record rewritten at every
/// restore the TTL brings. A walk's list is always written.
#[test]
fn a_record_is_not_rewritten_at_every_restore() {
    let dir = project();
    let home = tempfile::tempdir().unwrap();
    let key = key_of(dir.path(), ScanPolicy::DEFAULT);
    let policy = CachePolicy::default()
        .ttl(Duration::from_millis(1))
        .persist(Some(home.path().to_path_buf()));
    let cache = ScanCache::new(policy);
    settle_clock();
    scan(&cache, &key);
    cache.settle_records();
    for round in 0..3 {
        fs::write(dir.path().join(format!("src/deep/new{round}.rs")), "").unwrap();
        settle_clock();
        let answer = scan(&cache, &key);
        cache.settle_records();
        let fresh = walk::scan(&key.root, key.policy, &CancelToken::new()).unwrap();
        assert_eq!(listed(&answer), listed(&fresh));
    }
    let stats = cache.stats();
    assert_eq!((stats.walks, stats.persist.restored), (1, 3), "{stats:?}");
    assert_eq!(stats.persist.saved, 1, "{stats:?}");
}
