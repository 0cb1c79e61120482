//! One index per root: readers neither walk nor watch, answer what a fresh
//! walk finds at their call, and take over from an indexer that dies.

use std::{
    fs,
    io::{BufRead, BufReader},
    path::Path,
    process::{Child, Command, Stdio},
    time::Duration,
};

use super::*;
use crate::{
    cache::{CachePolicy, ScanCache},
    entries::FileType,
    walk::{self, Needs, ScanPolicy},
};
use natives_testkit::sh;

/// A cache that shares under `home`, leaked as a process's global cache is
/// (an indexer's threads answer from it for as long as the process lives).
fn shared_cache(home: &Path, watch: bool) -> &'static ScanCache {
    let policy = CachePolicy::default()
        .ttl(Duration::from_secs(600))
        .persist(Some(home.to_path_buf()))
        .watch(watch)
        .shared(true);
    let cache: &'static ScanCache = Box::leak(Box::new(ScanCache::new(policy)));
    cache.share().unwrap();
    cache
}

/// A tree, a natives home, and two caches sharing under it: the first
/// indexes the tree, the second has read it once. (A test binds the
/// directories it does not use, `_home` say: left in a `..`, they would be
/// removed at once.)
struct Pair {
    dir: tempfile::TempDir,
    _home: tempfile::TempDir,
    key: ScanKey,
    indexer: &'static ScanCache,
    reader: &'static ScanCache,
}

fn pair(watch: bool) -> Pair {
    let (dir, home) = (tree(), tempfile::tempdir().unwrap());
    let key = key_of(dir.path());
    let indexer = shared_cache(home.path(), watch);
    let reader = shared_cache(home.path(), watch);
    assert_eq!(listed(&scan(indexer, &key)), fresh(&key));
    assert_eq!(listed(&scan(reader, &key)), fresh(&key));
    Pair {
        dir,
        _home: home,
        key,
        indexer,
        reader,
    }
}

/// A call of `reader` for `key` on a thread of its own, given 50 ms to
/// reach the link (where a held indexer keeps it waiting); whether it
/// answered, once joined.
fn asking_meanwhile(reader: &'static ScanCache, key: &ScanKey) -> thread::JoinHandle<bool> {
    let key = key.clone();
    let asking = thread::spawn(move || {
        reader
            .get_or_scan(&key, Needs::EVERYTHING, &CancelToken::new())
            .is_ok()
    });
    thread::sleep(Duration::from_millis(50));
    asking
}

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src/deep")).unwrap();
    fs::write(dir.path().join("src/a.rs"), "a").unwrap();
    fs::write(dir.path().join("src/deep/b.rs"), "b").unwrap();
    fs::write(dir.path().join("README.md"), "r").unwrap();
    dir
}

fn key_of(root: &Path) -> ScanKey {
    ScanKey {
        root: fs::canonicalize(root).unwrap(),
        policy: ScanPolicy::DEFAULT,
    }
}

fn listed(entries: &Entries) -> Vec<(String, FileType)> {
    entries
        .iter()
        .map(|entry| (entry.path_lossy().into_owned(), entry.file_type))
        .collect()
}

fn scan(cache: &ScanCache, key: &ScanKey) -> Arc<Entries> {
    cache
        .get_or_scan(key, Needs::EVERYTHING, &CancelToken::new())
        .unwrap()
        .entries
}

fn fresh(key: &ScanKey) -> Vec<(String, FileType)> {
    listed(&walk::scan(&key.root, key.policy, &CancelToken::new()).unwrap())
}

/// A second cache of the same user reads the first one's list: it neither
/// walks nor watches, gets each change made in the tree by anyone (no
/// invalidation) at its next call, and receives the list again only when
/// it changed.
#[test]
fn a_reader_neither_walks_nor_watches_and_sees_every_change() {
    let Pair {
        dir,
        _home,
        key,
        indexer,
        reader,
    } = pair(true);

    fs::write(dir.path().join("src/deep/new.rs"), "n").unwrap();
    fs::remove_file(dir.path().join("src/a.rs")).unwrap();
    assert_eq!(listed(&scan(reader, &key)), fresh(&key));
    assert_eq!(listed(&scan(reader, &key)), fresh(&key));

    let (read, indexed) = (reader.stats(), indexer.stats());
    assert_eq!(read.walks, 0);
    assert_eq!(read.watch.watches, 0);
    assert_eq!((read.shared.reading, read.shared.indexing), (1, 0));
    assert_eq!(read.shared.lists_received, 2);
    assert_eq!(read.shared.unchanged, 1);
    assert_eq!(indexed.walks, 1);
    assert_eq!((indexed.shared.indexing, indexed.shared.served), (1, 3));
    assert!(indexed.watch.watches >= 3, "{:?}", indexed.watch);
}

/// An indexer that cannot watch keeps its list to its TTL; a reader's own
/// invalidation is forwarded to it, so the reader's next answer holds the
/// change it reported.
#[test]
fn a_reader_s_invalidation_reaches_an_unwatched_indexer() {
    let Pair {
        dir,
        _home,
        key,
        reader,
        ..
    } = pair(false);
    let written = dir.path().join("src/written.rs");
    fs::write(&written, "w").unwrap();
    reader.invalidate_path(&written).unwrap();
    assert_eq!(listed(&scan(reader, &key)), fresh(&key));
    assert_eq!(reader.stats().walks, 0);
}

/// An error at the indexer reaches the reader with its code and path.
#[test]
fn an_indexer_s_error_reaches_the_reader_with_its_code() {
    let home = tempfile::tempdir().unwrap();
    let gone = tempfile::tempdir().unwrap();
    let key = key_of(gone.path());
    fs::remove_dir(gone.path()).unwrap();
    let indexer = shared_cache(home.path(), true);
    let reader = shared_cache(home.path(), true);
    let token = CancelToken::new();
    let at_indexer = indexer
        .get_or_scan(&key, Needs::EVERYTHING, &token)
        .unwrap_err();
    let at_reader = reader
        .get_or_scan(&key, Needs::EVERYTHING, &token)
        .unwrap_err();
    assert_eq!(at_reader.kind(), at_indexer.kind());
    assert_eq!(at_reader.message(), at_indexer.message());
    assert_eq!(reader.stats().shared.reading, 1);
}

/// A home too deep for a socket address still shares (the socket is
/// reached through the directory's descriptor).
#[test]
fn a_long_home_still_shares() {
    let dir = tree();
    let base = tempfile::tempdir().unwrap();
    let home = base.path().join("h".repeat(120));
    let key = key_of(dir.path());
    let indexer = shared_cache(&home, true);
    let reader = shared_cache(&home, true);
    scan(indexer, &key);
    assert_eq!(listed(&scan(reader, &key)), fresh(&key));
    assert_eq!(reader.stats().shared.reading, 1);
    assert_eq!(reader.stats().walks, 0);
}

/// Set in the indexer child's environment: the natives home and the tree.
const CHILD_HOME: &str = "NATIVES_SHARED_TEST_HOME";
const CHILD_TREE: &str = "NATIVES_SHARED_TEST_TREE";

/// The indexer process of the takeover test (a no-op in the test run
/// itself): indexes the tree, writes its record, says so, and sleeps until
/// it is killed.
#[test]
fn indexer_process() {
    let (Some(home), Some(tree)) = (std::env::var_os(CHILD_HOME), std::env::var_os(CHILD_TREE))
    else {
        return;
    };
    let cache = shared_cache(Path::new(&home), true);
    scan(cache, &key_of(Path::new(&tree)));
    cache.settle_records();
    assert_eq!(cache.stats().shared.indexing, 1);
    println!("indexing");
    std::thread::sleep(Duration::from_secs(600));
}

fn spawn_indexer(home: &Path, tree: &Path) -> Child {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "shared::tests::indexer_process", "--nocapture"])
        .env(CHILD_HOME, home)
        .env(CHILD_TREE, tree)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("indexing") {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "the indexer died");
    }
    child
}

/// An indexer SIGKILLed between two calls of a reader: the reader's next
/// call takes the index over within that call (restoring the dead
/// indexer's record, not walking), answers what a fresh walk finds,
/// changes made meanwhile included, and follows events from then on.
#[test]
fn a_reader_takes_over_from_an_indexer_killed() {
    let (dir, home) = (tree(), tempfile::tempdir().unwrap());
    let key = key_of(dir.path());
    // Past the racy slack (50 ms in tests), so the record vouches for the
    // tree's directories.
    std::thread::sleep(Duration::from_millis(100));
    let mut child = spawn_indexer(home.path(), dir.path());
    let reader = shared_cache(home.path(), true);
    assert_eq!(listed(&scan(reader, &key)), fresh(&key));
    assert_eq!(reader.stats().shared.reading, 1);

    child.kill().unwrap();
    child.wait().unwrap();
    fs::write(dir.path().join("src/deep/after.rs"), "x").unwrap();
    assert_eq!(listed(&scan(reader, &key)), fresh(&key));
    let stats = reader.stats();
    assert_eq!((stats.shared.indexing, stats.shared.takeovers), (1, 1));
    assert_eq!(stats.walks, 0, "restored, not walked: {:?}", stats.persist);
    assert_eq!(stats.persist.restored, 1);

    fs::write(dir.path().join("src/later.rs"), "y").unwrap();
    assert_eq!(listed(&scan(reader, &key)), fresh(&key));
    assert_eq!(reader.stats().walks, 0);
}

/// A reader whose indexer answers slowly gives up when its own token is
/// cancelled, without waiting for the answer, and its next call is answered.
#[test]
fn a_reader_s_cancellation_is_honoured_while_it_waits() {
    let Pair {
        dir: _dir,
        _home,
        key,
        indexer,
        reader,
    } = pair(true);
    let refresh = indexer.hold_refresh();
    let token = CancelToken::new().with_timeout(Some(Duration::from_millis(100)));
    let started = std::time::Instant::now();
    let err = reader
        .get_or_scan(&key, Needs::EVERYTHING, &token)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut);
    assert!(started.elapsed() < Duration::from_secs(1));
    // Another call of the reader holds the link, waiting: this one still
    // ends at its own deadline.
    let waiting = asking_meanwhile(reader, &key);
    let token = CancelToken::new().with_timeout(Some(Duration::from_millis(100)));
    let started = std::time::Instant::now();
    let err = reader
        .get_or_scan(&key, Needs::EVERYTHING, &token)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut);
    assert!(started.elapsed() < Duration::from_millis(500));
    drop(refresh);
    assert!(waiting.join().unwrap());
    assert_eq!(listed(&scan(reader, &key)), fresh(&key));
}

fn grep_paths(cache: &ScanCache, root: &Path, pattern: &str) -> Vec<String> {
    let mut options = crate::GrepOptions::new(pattern, root);
    options.cache = true;
    let outcome = crate::grep(&options, cache, &CancelToken::new(), &mut |_| {}).unwrap();
    outcome
        .matches
        .iter()
        .map(|m| format!("{}:{}", m.path_lossy(), m.line_number))
        .collect()
}

/// A reader's content index trusts the files it read as a watching
/// process's does: the indexer hands over the paths its events named, so a
/// search that rules every file out makes no system call per file, and an
/// edit by another process (same size, mtime put back) is found at once.
/// When the indexer's watch starts over (a new walk), what the reader
/// trusted is checked again.
#[test]
fn a_reader_trusts_its_content_index_by_the_indexer_s_events() {
    let dir = tree();
    for n in 0..20 {
        fs::write(
            dir.path().join(format!("src/m{n:02}.rs")),
            format!("fn item_{n}() {{}}\n"),
        )
        .unwrap();
    }
    let home = tempfile::tempdir().unwrap();
    let indexer = shared_cache(home.path(), true);
    let reader = shared_cache(home.path(), true);
    grep_paths(indexer, dir.path(), "item_3");
    for _ in 0..2 {
        assert_eq!(
            grep_paths(reader, dir.path(), "item_3\\b"),
            ["src/m03.rs:1"]
        );
    }
    let verified = reader.stats().content.files_verified;
    assert!(grep_paths(reader, dir.path(), "zqxjkvbw_never").is_empty());
    assert_eq!(
        reader.stats().content.files_verified,
        verified,
        "no fstatat"
    );

    sh(
        dir.path(),
        "m=$(stat -c %Y src/m05.rs) \
         && printf swap | dd of=src/m05.rs bs=1 seek=3 conv=notrunc 2>/dev/null \
         && touch -d @$m src/m05.rs",
    );
    assert_eq!(
        grep_paths(reader, dir.path(), "fn swap_5"),
        ["src/m05.rs:1"]
    );
    sh(dir.path(), "echo 'let zqxjkvbw_never = 1;' >> src/m07.rs");
    assert_eq!(
        grep_paths(reader, dir.path(), "zqxjkvbw_never"),
        ["src/m07.rs:2"]
    );
    assert_eq!(
        reader.stats().content.files_verified,
        verified,
        "no fstatat"
    );

    // A new ignore file at the root: the indexer walks again, under a new
    // watch; the reader trusts nothing it trusted before.
    let key = key_of(dir.path());
    let stamp = reader.vouching_watch(&key);
    assert!(stamp.is_some());
    fs::write(dir.path().join(".ignore"), "src/m0*.rs\n").unwrap();
    assert_eq!(
        grep_paths(reader, dir.path(), "item_1"),
        [
            "src/m10.rs:1",
            "src/m11.rs:1",
            "src/m12.rs:1",
            "src/m13.rs:1",
            "src/m14.rs:1",
            "src/m15.rs:1",
            "src/m16.rs:1",
            "src/m17.rs:1",
            "src/m18.rs:1",
            "src/m19.rs:1"
        ]
    );
    assert!(!matches!(reader.vouching_watch(&key), Some(again) if Some(again) == stamp));
    assert_eq!(reader.stats().walks, 0);
}

/// An indexer that is alive but answers nothing (stopped): the reader gives
/// up after [`REPLY_WAIT`], answers alone what a fresh walk finds, asks
/// that indexer nothing for as long again, and reads from it once more
/// after that.
#[test]
fn a_stopped_indexer_is_waited_for_a_bounded_time() {
    use nix::{
        sys::signal::{Signal, kill},
        unistd::Pid,
    };
    let (dir, home) = (tree(), tempfile::tempdir().unwrap());
    let key = key_of(dir.path());
    let mut child = spawn_indexer(home.path(), dir.path());
    let reader = shared_cache(home.path(), true);
    scan(reader, &key);
    let pid = Pid::from_raw(child.id() as i32);
    kill(pid, Signal::SIGSTOP).unwrap();
    fs::write(dir.path().join("src/while-stopped.rs"), "s").unwrap();
    let asked = std::time::Instant::now();
    assert_eq!(listed(&scan(reader, &key)), fresh(&key));
    assert!(asked.elapsed() < REPLY_WAIT + Duration::from_secs(5));
    let stats = reader.stats();
    assert_eq!((stats.shared.alone, stats.shared.reading), (1, 0));
    // Within the wait, answered alone at once.
    let again = std::time::Instant::now();
    assert_eq!(listed(&scan(reader, &key)), fresh(&key));
    assert!(again.elapsed() < REPLY_WAIT);

    kill(pid, Signal::SIGCONT).unwrap();
    std::thread::sleep(REPLY_WAIT);
    fs::write(dir.path().join("src/after.rs"), "a").unwrap();
    assert_eq!(listed(&scan(reader, &key)), fresh(&key));
    assert_eq!(reader.stats().shared.reading, 1);
    child.kill().unwrap();
    child.wait().unwrap();
}

/// An empty answer from a list read from a watching indexer walks nothing
/// again, however old the list: the indexer's events prove it (seed 001's
/// recheck is for lists no event follows).
#[test]
fn an_empty_answer_read_from_a_watching_indexer_walks_nothing() {
    let (dir, home) = (tree(), tempfile::tempdir().unwrap());
    let indexer = shared_cache(home.path(), true);
    let reader = shared_cache(home.path(), true);
    let mut options = crate::GlobOptions::new("**/*.nothing", dir.path());
    options.cache = true;
    let token = CancelToken::new();
    crate::glob(&options, indexer, &token, &mut |_| {}).unwrap();
    crate::glob(&options, reader, &token, &mut |_| {}).unwrap();
    std::thread::sleep(Duration::from_millis(250));
    for _ in 0..3 {
        let outcome = crate::glob(&options, reader, &token, &mut |_| {}).unwrap();
        assert_eq!(outcome.total_matches, 0);
    }
    assert_eq!((indexer.stats().walks, reader.stats().walks), (1, 0));
    assert_eq!(reader.stats().empty_rechecks_skipped, 3);
}

/// Something else at an indexer's socket path, with no indexer holding the
/// lock (a file, or a listener that says nothing): the first process to
/// ask becomes the indexer in its place, within the greeting's wait, and
/// the next reads from it.
#[test]
fn a_socket_path_taken_by_something_else_is_replaced() {
    let dir = tree();
    let key = key_of(dir.path());
    for silent_listener in [false, true] {
        let home = tempfile::tempdir().unwrap();
        let names = Names::of(&home.path().join(INDEX_DIR), &key);
        durable::create_private_dir(names.socket.parent().unwrap()).unwrap();
        let _listener = match silent_listener {
            true => Some(UnixListener::bind(&names.socket).unwrap()),
            false => {
                fs::write(&names.socket, "not a socket").unwrap();
                None
            }
        };
        let first = shared_cache(home.path(), true);
        let started = std::time::Instant::now();
        assert_eq!(listed(&scan(first, &key)), fresh(&key));
        assert!(started.elapsed() < HELLO_WAIT + Duration::from_secs(3));
        assert_eq!(first.stats().shared.indexing, 1);
        let second = shared_cache(home.path(), true);
        assert_eq!(listed(&scan(second, &key)), fresh(&key));
        assert_eq!(second.stats().shared.reading, 1);
    }
}

/// A socket whose holder greets and hangs up at once, the lock held: a
/// call gives up after [`LINK_TRIES`] lost links and answers alone, rather
/// than going round.
#[test]
fn a_socket_that_greets_and_hangs_up_is_given_up() {
    let (dir, home) = (tree(), tempfile::tempdir().unwrap());
    let key = key_of(dir.path());
    let names = Names::of(&home.path().join(INDEX_DIR), &key);
    durable::create_private_dir(names.socket.parent().unwrap()).unwrap();
    let _held = lock::try_exclusive(&names.lock).unwrap().unwrap();
    let listener = UnixListener::bind(&names.socket).unwrap();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut hello = HELLO.to_vec();
            hello.extend_from_slice(&VERSION.to_le_bytes());
            let _ = stream.write_all(&hello);
        }
    });
    let reader = shared_cache(home.path(), true);
    let started = std::time::Instant::now();
    assert_eq!(listed(&scan(reader, &key)), fresh(&key));
    assert!(started.elapsed() < Duration::from_secs(5));
    let stats = reader.stats();
    assert_eq!(
        (stats.shared.alone, stats.shared.reading, stats.walks),
        (1, 0, 1)
    );
}

/// A file the rules leave out, written by another process: the indexer's
/// list holds the same paths, but what its rules left out changed, and a
/// reader's search whose glob selects that file (`rg -g`) finds it. (Sending
/// "unchanged" for a list made again with the same paths kept the reader's
/// stale record of what was left out.)
#[test]
fn a_file_the_rules_leave_out_is_found_by_a_reader_s_selecting_glob() {
    for watch in [true, false] {
        let dir = tree();
        fs::write(dir.path().join(".gitignore"), "*.log\n").unwrap();
        fs::create_dir(dir.path().join(".git")).unwrap();
        let home = tempfile::tempdir().unwrap();
        let key = key_of(dir.path());
        let policy = CachePolicy::default()
            .ttl(Duration::from_millis(50))
            .persist(Some(home.path().to_path_buf()))
            .watch(watch)
            .shared(true);
        let indexer: &'static ScanCache = Box::leak(Box::new(ScanCache::new(policy)));
        indexer.share().unwrap();
        scan(indexer, &key);
        let reader = shared_cache(home.path(), watch);
        let search = || {
            let mut options = crate::GrepOptions::new("needle", dir.path());
            options.cache = true;
            options.globs = vec!["*.log".into()];
            let outcome = crate::grep(&options, reader, &CancelToken::new(), &mut |_| {}).unwrap();
            outcome
                .matches
                .iter()
                .map(|m| m.path_lossy().into_owned())
                .collect::<Vec<_>>()
        };
        assert!(search().is_empty());
        std::thread::sleep(Duration::from_millis(100));
        sh(dir.path(), "echo needle > src/new.log");
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(search(), ["src/new.log"], "watch {watch}");
        assert_eq!(reader.stats().shared.reading, 1);
    }
}

/// An index directory others may enter, or another user's: no socket in it
/// is trusted and no lock taken; the process answers alone at once.
#[test]
fn an_index_directory_that_is_not_private_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tree();
    let key = key_of(dir.path());
    let mut cases = vec![("open to all", 0o777, None)];
    if nix::unistd::geteuid().is_root() {
        cases.push(("another user's", 0o700, Some(65_534)));
    } else {
        eprintln!("skipped another user's index directory: needs root to chown");
    }
    for (what, mode, owner) in cases {
        let home = tempfile::tempdir().unwrap();
        let index = home.path().join(INDEX_DIR);
        fs::create_dir(&index).unwrap();
        fs::set_permissions(&index, fs::Permissions::from_mode(mode)).unwrap();
        if let Some(uid) = owner {
            std::os::unix::fs::chown(&index, Some(uid), None).unwrap();
        }
        let cache = shared_cache(home.path(), true);
        let started = std::time::Instant::now();
        assert_eq!(listed(&scan(cache, &key)), fresh(&key), "{what}");
        assert!(started.elapsed() < STARTING_WAIT, "{what}");
        let stats = cache.stats().shared;
        assert_eq!(
            (stats.alone, stats.indexing, stats.reading),
            (1, 0, 0),
            "{what}"
        );
        assert_eq!(fs::read_dir(&index).unwrap().count(), 0, "{what}");
    }
}

/// Two processes each indexing a root the other reads, one root inside the
/// other: an invalidation inside both is forwarded once to each indexer and
/// taken in there without being forwarded on (back and forth, each would
/// wait for the other), at once, and both answer it.
#[test]
fn invalidations_between_two_indexers_of_nested_roots_end() {
    let dir = tree();
    let home = tempfile::tempdir().unwrap();
    let (outer, inner) = (key_of(dir.path()), key_of(&dir.path().join("src")));
    let first = shared_cache(home.path(), false);
    let second = shared_cache(home.path(), false);
    scan(first, &outer);
    scan(second, &inner);
    scan(first, &inner);
    scan(second, &outer);
    for cache in [first, second] {
        assert_eq!(
            (cache.stats().shared.indexing, cache.stats().shared.reading),
            (1, 1)
        );
    }
    let written = dir.path().join("src/deep/written.rs");
    fs::write(&written, "w").unwrap();
    // Passed back, the invalidation would wait on the link its sender
    // holds, up to the forwarding wait (5 s).
    natives_testkit::within(
        "a forwarded invalidation",
        Duration::from_secs(2),
        move || {
            first.invalidate_path(&written).unwrap();
        },
    );
    for cache in [first, second] {
        for key in [&outer, &inner] {
            assert_eq!(listed(&scan(cache, key)), fresh(key));
        }
    }
}

/// An invalidation while another call of the reader waits for a stuck
/// indexer returns at once (it is a tool's synchronous call), and the
/// reader's next answer includes it once the indexer answers again.
#[test]
fn an_invalidation_never_waits_for_the_indexer() {
    let Pair {
        dir,
        _home,
        key,
        indexer,
        reader,
    } = pair(true);
    let refresh = indexer.hold_refresh();
    let waiting = asking_meanwhile(reader, &key);
    let written = dir.path().join("src/written.rs");
    fs::write(&written, "w").unwrap();
    let started = std::time::Instant::now();
    reader.invalidate_path(&written).unwrap();
    assert!(started.elapsed() < Duration::from_millis(100));
    drop(refresh);
    assert!(waiting.join().unwrap());
    assert_eq!(listed(&scan(reader, &key)), fresh(&key));
    assert_eq!(reader.stats().shared.alone, 0);
}

/// Invalidations queued past [`PENDING_KEPT`] before the next question
/// become one of the whole root: the indexer receives one, not thousands,
/// and the answer holds every write.
#[test]
fn invalidations_queued_past_the_bound_become_one_of_the_root() {
    let Pair {
        dir,
        _home,
        key,
        indexer,
        reader,
    } = pair(false);
    let served = indexer.stats().shared.served;
    for n in 0..PENDING_KEPT + 10 {
        let written = dir.path().join(format!("src/w{n}.rs"));
        fs::write(&written, "w").unwrap();
        reader.invalidate_path(&written).unwrap();
    }
    assert_eq!(listed(&scan(reader, &key)), fresh(&key));
    assert_eq!(
        indexer.stats().shared.served - served,
        2,
        "one invalidation, one question"
    );
}

/// A process that starts indexing removes what dead indexers of other roots
/// left in the index directory, and nothing a live one holds.
#[test]
fn the_names_of_dead_indexers_are_removed_when_a_process_starts_indexing() {
    let (dir, home) = (tree(), tempfile::tempdir().unwrap());
    let index = home.path().join(INDEX_DIR);
    durable::create_private_dir(&index).unwrap();
    let name = |stem: &str, ext: &str| index.join(format!("{stem}.{ext}"));
    for stem in ["gone.2.v1", "older.0.v0"] {
        fs::write(name(stem, "lock"), "").unwrap();
        fs::write(name(stem, "sock"), "").unwrap();
    }
    fs::write(name("live.2.v1", "sock"), "").unwrap();
    let live = lock::try_exclusive(&name("live.2.v1", "lock"))
        .unwrap()
        .unwrap();
    fs::write(index.join("notes.txt"), "kept").unwrap();
    let cache = shared_cache(home.path(), false);
    scan(cache, &key_of(dir.path()));
    assert_eq!(cache.stats().shared.indexing, 1);
    for gone in [
        name("gone.2.v1", "lock"),
        name("gone.2.v1", "sock"),
        name("older.0.v0", "lock"),
        name("older.0.v0", "sock"),
    ] {
        assert!(!gone.exists(), "{} left", gone.display());
    }
    for kept in [
        name("live.2.v1", "lock"),
        name("live.2.v1", "sock"),
        index.join("notes.txt"),
    ] {
        assert!(kept.exists(), "{} removed", kept.display());
    }
    let own = Names::of(&index, &key_of(dir.path()));
    assert!(
        own.lock.exists() && own.socket.exists(),
        "this process's own names stay"
    );
    drop(live);
}
