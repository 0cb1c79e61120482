//! `natives cache show|prune|release`, run as an operator would, against
//! leases held or forged by this test process through the library: the
//! binary is another process, so a lease held here is a live owner to it.

use std::{
    fs,
    io::Write,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, SystemTime},
};

mod output;
mod terminal;

use natives_ownership::{
    AcquireOutcome, Guard, Leases, Owner,
    fresh::{self, Identity},
    layout::LeaseFiles,
    lease::LeaseRecord,
};
use natives_system::paths;
use natives_system::process::ProcessIdentity;
use serde_json::Value;
use terminal::{Stream, on_terminal};

/// A natives home and a cache directory inside one temporary folder.
struct Fixture {
    _root: tempfile::TempDir,
    home: PathBuf,
    cache: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        let cache = base.join("target");
        fs::create_dir(&cache).unwrap();
        Fixture {
            _root: root,
            home: base.join("home"),
            cache,
        }
    }

    fn leases(&self) -> Leases {
        Leases::open(&self.home).unwrap()
    }

    /// Hold `dir`'s cache lease from this process as `run`/`node`/`seat`.
    fn hold(&self, dir: &Path, owner: &Owner) -> Guard {
        match self.leases().try_acquire(dir, owner).unwrap() {
            AcquireOutcome::Acquired(guard) => guard,
            AcquireOutcome::Busy(busy) => panic!("busy: {}", busy.describe()),
        }
    }

    /// The path of `dir`'s lease record.
    /// Where `dir`'s lease record lives, with the store created.
    fn record_path(&self, dir: &Path) -> PathBuf {
        LeaseFiles::create_dirs(&self.home).unwrap();
        LeaseFiles::new(&self.home, &paths::dir_id(dir).unwrap()).record
    }

    /// `natives ARGS --home HOME`: exit code, stdout, stderr.
    fn natives(&self, args: &[&str]) -> (i32, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_natives"))
            .args(args)
            .arg("--home")
            .arg(&self.home)
            .env_remove(paths::HOME_ENV)
            .output()
            .unwrap();
        output::outcome(out)
    }

    fn cache_arg(&self) -> &str {
        self.cache.to_str().unwrap()
    }
}

fn owner() -> Owner {
    Owner::current("run-7", "node-3", "seat-a")
}

/// The pid of a process that has exited and been reaped.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    child.wait().unwrap();
    child.id()
}

/// The table row whose first column is `dir`, split into its columns.
fn row<'a>(table: &'a str, dir: &Path) -> Vec<&'a str> {
    let dir = dir.to_str().unwrap();
    let line = table
        .lines()
        .find(|line| line.split_whitespace().next() == Some(dir))
        .unwrap_or_else(|| panic!("no row for {dir} in\n{table}"));
    line.split("  ")
        .map(str::trim)
        .filter(|cell| !cell.is_empty())
        .collect()
}

fn json_lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn show_on_an_empty_home_says_so_and_exits_one() {
    let fixture = Fixture::new();
    let (code, out, err) = fixture.natives(&["cache", "show"]);
    let expected = format!(
        "no build caches registered under {}\n",
        fixture.home.display()
    );
    assert_eq!((code, out, err), (1, expected, String::new()));
    let (code, out, err) = fixture.natives(&["cache", "show", "--json"]);
    assert_eq!((code, out.as_str(), err.as_str()), (1, "", ""));
}

#[test]
fn show_names_a_live_holder_and_its_identity() {
    let fixture = Fixture::new();
    let head = "0123456789abcdef0123456789abcdef01234567";
    let worktree = fixture.home.parent().unwrap().to_owned();
    let identity = Identity {
        worktree: worktree.clone(),
        head: head.to_owned(),
    };
    fresh::record_identity(&fixture.home, &fixture.cache, &identity).unwrap();
    let _guard = fixture.hold(&fixture.cache, &owner());
    let me = ProcessIdentity::current();

    let (code, out, _) = fixture.natives(&["cache", "show"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("DIRECTORY"), "{out}");
    let identity_cell = format!("{} @ 0123456789ab", worktree.display());
    let pid_host = format!("{}@{}", me.pid, me.host);
    let columns = row(&out, &fixture.cache);
    assert_eq!(
        [&columns[..4], &columns[5..]].concat(),
        [
            fixture.cache_arg(),
            "active",
            "run-7/node-3/seat-a",
            pid_host.as_str(),
            identity_cell.as_str(),
        ]
    );
    assert!(columns[4].ends_with("s ago"), "{out}");
    assert!(!out.contains("process cleanup"), "{out}");

    let (code, out, _) = fixture.natives(&["cache", "show", "--json"]);
    assert_eq!(code, 0);
    let entries = json_lines(&out);
    assert_eq!(entries.len(), 1);
    let entry = &entries[0];
    assert_eq!(entry["dir"], fixture.cache_arg());
    assert_eq!(entry["status"], "active");
    assert_eq!(entry["owner"]["run"], "run-7");
    assert_eq!(entry["owner"]["node"], "node-3");
    assert_eq!(entry["owner"]["seat"], "seat-a");
    assert_eq!(entry["owner"]["pid"], me.pid);
    assert_eq!(entry["owner"]["host"], me.host);
    assert_eq!(entry["owner"]["machineId"], me.machine_id.unwrap());
    assert!(entry["sinceMs"].is_u64(), "{entry}");
    assert!(entry["releasedAtMs"].is_null(), "{entry}");
    assert_eq!(entry["outputsHeld"], false);
    assert_eq!(entry["identity"]["worktree"], worktree.to_str().unwrap());
    assert_eq!(entry["identity"]["head"], head);
    assert_eq!(entry["slug"].as_str().unwrap().len(), 64);
    assert!(entry.get("reason").is_none(), "{entry}");
}

#[test]
fn show_marks_a_free_cache_whose_outputs_cleanup_holds() {
    let fixture = Fixture::new();
    fixture.hold(&fixture.cache, &owner()).release().unwrap();
    let leases = fixture.leases();
    let cleanup = Owner::current("run-7", "node-3", "cleanup");
    let AcquireOutcome::Acquired(_output) =
        leases.try_acquire_output(&fixture.cache, &cleanup).unwrap()
    else {
        panic!("output lease busy");
    };

    let (code, out, _) = fixture.natives(&["cache", "show"]);
    assert_eq!(code, 0);
    let columns = row(&out, &fixture.cache);
    assert_eq!(columns[1..3], ["free*", "run-7/node-3/seat-a"], "{out}");
    assert!(columns[4].ends_with(" ago"), "{out}");
    assert!(
        out.ends_with("* process cleanup holds the output lease\n"),
        "{out}"
    );

    let (_, out, _) = fixture.natives(&["cache", "show", "--json"]);
    let entry = &json_lines(&out)[0];
    assert_eq!(entry["status"], "free");
    assert_eq!(entry["outputsHeld"], true);
    assert!(entry["releasedAtMs"].is_u64(), "{entry}");
}

#[test]
fn release_refuses_a_live_owner_and_names_it() {
    let fixture = Fixture::new();
    let owner = owner();
    let _guard = fixture.hold(&fixture.cache, &owner);
    let (code, out, err) = fixture.natives(&["cache", "release", fixture.cache_arg()]);
    assert_eq!((code, out.as_str()), (2, ""));
    let expected = format!(
        "natives: EBUSY: {}: build cache held by {}; not released\n",
        fixture.cache.display(),
        owner.describe()
    );
    assert_eq!(err, expected);
    assert!(fixture.record_path(&fixture.cache).exists());
}

#[test]
fn release_removes_a_dead_owners_record() {
    let fixture = Fixture::new();
    let mut dead = owner();
    dead.pid = dead_pid();
    let record = LeaseRecord {
        version: 1,
        dir: paths::dir_id(&fixture.cache).unwrap(),
        owner: dead.clone(),
        acquired_at_ms: 1,
    };
    let path = fixture.record_path(&fixture.cache);
    let mut bytes = serde_json::to_vec_pretty(&record).unwrap();
    bytes.push(b'\n');
    fs::write(&path, bytes).unwrap();

    let (code, out, _) = fixture.natives(&["cache", "show"]);
    assert_eq!(code, 0);
    assert_eq!(row(&out, &fixture.cache)[1], "stale", "{out}");

    let (code, out, err) = fixture.natives(&["cache", "release", fixture.cache_arg()]);
    let expected = format!(
        "released {}: removed the record of {}, which is gone\n",
        fixture.cache.display(),
        dead.describe()
    );
    assert_eq!((code, out, err), (0, expected, String::new()));
    assert!(!path.exists());

    let (code, out, err) = fixture.natives(&["cache", "release", fixture.cache_arg()]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.ends_with(": no lease record; nothing released\n"),
        "{err}"
    );
}

#[test]
fn release_moves_an_unreadable_record_aside_whole() {
    let fixture = Fixture::new();
    let path = fixture.record_path(&fixture.cache);
    let bytes = b"{\"version\": 1, \"dir\": \"/cut sh";
    fs::write(&path, bytes).unwrap();

    let (code, out, _) = fixture.natives(&["cache", "show"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("unknown  ")
            && out.contains("\n  why: truncated lease record (no final newline)\n"),
        "{out}"
    );
    let (_, json, _) = fixture.natives(&["cache", "show", "--json"]);
    let entry = &json_lines(&json)[0];
    assert_eq!(entry["status"], "unknown");
    assert_eq!(entry["reason"], "truncated lease record (no final newline)");
    assert!(entry["dir"].is_null(), "{entry}");

    let (code, out, _) = fixture.natives(&["cache", "release", fixture.cache_arg()]);
    assert_eq!(code, 0);
    let aside = out
        .trim_end()
        .rsplit(" aside to ")
        .next()
        .map(PathBuf::from)
        .unwrap();
    assert!(
        out.starts_with(&format!(
            "released {}: moved its unreadable record (truncated lease record",
            fixture.cache.display()
        )),
        "{out}"
    );
    assert_eq!(fs::read(&aside).unwrap(), bytes);
    assert!(!path.exists());
}

/// Write `bytes` bytes to `cache/rel`, last modified `age` ago.
fn cache_file(cache: &Path, rel: &str, bytes: usize, age: Duration) {
    let path = cache.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, vec![b'x'; bytes]).unwrap();
    let file = fs::File::options().write(true).open(&path).unwrap();
    file.set_modified(SystemTime::now() - age).unwrap();
}

/// A registered cache laid out as cargo's, whose build output's names sort
/// opposite to its age (so only the mtimes can pick the order), beside a
/// file of unknown purpose that is older than all of it.
fn prune_fixture() -> Fixture {
    let fixture = Fixture::new();
    let hour = Duration::from_secs(3600);
    cargo_marks(&fixture.cache);
    cache_file(&fixture.cache, "notes.txt", 500, 9 * hour);
    cache_file(&fixture.cache, "debug/deps/z-oldest", 1000, 3 * hour);
    cache_file(&fixture.cache, "debug/build/x/m-middle", 2000, 2 * hour);
    cache_file(&fixture.cache, "debug/examples/a-newest", 4000, hour);
    fixture.hold(&fixture.cache, &owner()).release().unwrap();
    fixture
}

#[test]
fn prune_removes_the_oldest_build_output_first_down_to_the_limit() {
    let fixture = prune_fixture();
    let cache = fixture.cache_arg();
    let (code, out, err) = fixture.natives(&["cache", "prune", cache, "--limit", "5000"]);
    let expected =
        format!("pruned {cache}: 7000 -> 4000 bytes (6.8 KiB -> 3.9 KiB); files removed: 2\n");
    assert_eq!((code, out, err), (0, expected, String::new()));
    assert!(!fixture.cache.join("debug/deps").exists());
    assert!(!fixture.cache.join("debug/build").exists());
    assert!(fixture.cache.join("debug/examples/a-newest").exists());
    assert!(fixture.cache.join("notes.txt").exists(), "not build output");

    let (code, out, _) = fixture.natives(&["cache", "prune", cache, "--limit=4KiB"]);
    let expected =
        format!("pruned {cache}: 4000 -> 4000 bytes (3.9 KiB -> 3.9 KiB); files removed: 0\n");
    assert_eq!((code, out), (0, expected));

    let (_, out, _) = fixture.natives(&["cache", "show"]);
    assert_eq!(
        row(&out, &fixture.cache)[1..3],
        ["free", "cli/prune/operator"]
    );
}

/// `--dry-run` lists what would go, oldest first, and deletes nothing.
#[test]
fn a_dry_run_lists_what_would_go() {
    let fixture = prune_fixture();
    let cache = fixture.cache_arg();
    let before = tree(&fixture.cache);
    let (code, out, err) =
        fixture.natives(&["cache", "prune", cache, "--limit", "5000", "--dry-run"]);
    let expected = format!(
        "would remove {cache}/debug/deps/z-oldest (1000 B)\n\
         would remove {cache}/debug/build/x/m-middle (2000 B)\n\
         would prune {cache}: 7000 -> 4000 bytes (6.8 KiB -> 3.9 KiB); files to remove: 2\n"
    );
    assert_eq!((code, out, err), (0, expected, String::new()));
    assert_eq!(tree(&fixture.cache), before);
}

/// With standard input a terminal, a person is asked first: anything but
/// yes deletes nothing (exit 1); yes prunes what was shown.
#[test]
fn a_person_at_a_terminal_is_asked_before_anything_goes() {
    let fixture = prune_fixture();
    let cache = fixture.cache_arg();
    let before = tree(&fixture.cache);
    let question =
        format!("prune {cache}: remove 2 files of build output, 6.8 KiB -> 3.9 KiB? [y/N] ");
    let (code, out, err) = at_terminal(
        &fixture,
        &["cache", "prune", cache, "--limit", "5000"],
        "n\n",
    );
    assert_eq!((code, out.as_str()), (1, ""));
    assert_eq!(err, format!("{question}natives: not pruned\n"));
    assert_eq!(tree(&fixture.cache), before);

    let (code, out, err) = at_terminal(
        &fixture,
        &["cache", "prune", cache, "--limit", "5000"],
        "yes\n",
    );
    assert_eq!((code, err), (0, question));
    assert!(out.ends_with("files removed: 2\n"), "{out}");
    assert!(!fixture.cache.join("debug/deps/z-oldest").exists());
}

/// `natives ARGS --home HOME` with a terminal as standard input, on which
/// `typed` is typed: exit code, stdout, stderr.
fn at_terminal(fixture: &Fixture, args: &[&str], typed: &str) -> (i32, String, String) {
    let pty = nix::pty::openpty(None, None).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_natives"))
        .args(args)
        .arg("--home")
        .arg(&fixture.home)
        .env_remove(paths::HOME_ENV)
        .stdin(Stdio::from(pty.slave))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    fs::File::from(pty.master)
        .write_all(typed.as_bytes())
        .unwrap();
    output::outcome(child.wait_with_output().unwrap())
}

/// A prune says what it is doing when standard error is a terminal, and
/// not a byte of that reaches standard error as a pipe, even with the
/// report on a terminal.
#[test]
fn a_prune_shows_progress_only_on_a_terminal() {
    let fixture = prune_fixture();
    let cache = fixture.cache_arg();
    let prune = |limit: &str| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_natives"));
        command
            .args(["cache", "prune", cache, "--limit", limit, "--yes", "--home"])
            .arg(&fixture.home)
            .env_remove(paths::HOME_ENV)
            .env("TERM", "xterm");
        command
    };
    let (code, progress, out) = on_terminal(&mut prune("6000"), Stream::Stderr);
    assert_eq!(code, 0, "{progress}");
    assert!(
        progress.contains(&format!("pruning {cache}")),
        "{progress:?}"
    );
    assert!(out.ends_with("files removed: 1\n"), "{out}");
    let (code, out, err) = on_terminal(&mut prune("5000"), Stream::Stdout);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(out.ends_with("files removed: 1\n"), "{out}");
}

#[test]
fn prune_refuses_while_the_cache_is_held() {
    let fixture = prune_fixture();
    let owner = owner();
    let guard = fixture.hold(&fixture.cache, &owner);
    let (code, out, err) =
        fixture.natives(&["cache", "prune", fixture.cache_arg(), "--limit", "0"]);
    let expected = format!(
        "natives: {}: build cache held by {}; nothing pruned\n",
        fixture.cache.display(),
        owner.describe()
    );
    assert_eq!((code, out, err), (1, String::new(), expected));
    drop(guard);

    let cleanup = Owner::current("run-7", "node-3", "cleanup");
    let AcquireOutcome::Acquired(_output) = fixture
        .leases()
        .try_acquire_output(&fixture.cache, &cleanup)
        .unwrap()
    else {
        panic!("output lease busy");
    };
    let (code, _, err) = fixture.natives(&["cache", "prune", fixture.cache_arg(), "--limit", "0"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("held by process cleanup by run-7/node-3/cleanup"),
        "{err}"
    );
    for rel in [
        "debug/deps/z-oldest",
        "debug/build/x/m-middle",
        "debug/examples/a-newest",
    ] {
        assert!(fixture.cache.join(rel).exists(), "{rel}");
    }
}

/// Every entry under `root` (relative path, and the length of each file),
/// in order: what a refused prune must leave exactly as it was.
fn tree(root: &Path) -> Vec<(PathBuf, Option<u64>)> {
    let mut entries = Vec::new();
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        for item in fs::read_dir(&dir).unwrap() {
            let path = item.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                pending.push(path.clone());
            }
            let len = meta.is_file().then_some(meta.len());
            entries.push((path.strip_prefix(root).unwrap().to_owned(), len));
        }
    }
    entries.sort();
    entries
}

/// Mark `dir` as cargo marks a target directory: its `CACHEDIR.TAG`, a
/// `.rustc_info.json`, and a `debug` profile with its `.fingerprint`.
fn cargo_marks(dir: &Path) {
    fs::create_dir_all(dir.join("debug/.fingerprint")).unwrap();
    fs::write(
        dir.join("CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n\
         # This file is a cache directory tag created by cargo.\n",
    )
    .unwrap();
    fs::write(dir.join(".rustc_info.json"), "{}").unwrap();
}

/// What cargo leaves in a target directory: its marks and some output.
fn cargo_target(dir: &Path) {
    let hour = Duration::from_secs(3600);
    cargo_marks(dir);
    cache_file(dir, "debug/.fingerprint/app-1/lib-app", 16, 3 * hour);
    cache_file(dir, "debug/deps/libapp-1.rlib", 4000, 2 * hour);
}

/// A folder of documents, `$HOME` and the natives home are refused with
/// `EINVAL` naming why, and not one file is deleted, even where the folder
/// is registered as a build cache and laid out as cargo's.
#[test]
fn prune_refuses_documents_home_and_the_natives_home() {
    let fixture = Fixture::new();
    let base = fixture.home.parent().unwrap().to_owned();
    let docs = base.join("documents");
    cache_file(&docs, "letter.txt", 300, Duration::from_secs(7200));
    cache_file(&docs, "taxes/2024.pdf", 5000, Duration::from_secs(3600));
    fs::create_dir(docs.join("empty")).unwrap();
    let user_home = base.join("user");
    cargo_target(&user_home);
    cache_file(&user_home, "notes/todo.md", 100, Duration::from_secs(60));
    cargo_target(&fixture.home);
    let repository = base.join("repository");
    cargo_target(&repository);
    fs::create_dir(repository.join(".git")).unwrap();
    for dir in [&docs, &user_home, &fixture.home, &repository] {
        fixture.hold(dir, &owner()).release().unwrap();
    }
    let table: [(&Path, String); 6] = [
        (
            &docs,
            "does not look like a cargo target directory".to_owned(),
        ),
        (
            &user_home,
            format!("is the home directory {}", user_home.display()),
        ),
        (
            &base,
            format!("contains the home directory {}", user_home.display()),
        ),
        (Path::new("/"), "is the root directory".to_owned()),
        (
            &fixture.home,
            format!("contains the natives home {}", fixture.home.display()),
        ),
        (&repository, "holds a .git".to_owned()),
    ];
    for (dir, why) in table {
        // The root is refused by name, before anything is read; it is not
        // registered either, nor laid out as cargo's, so no rule lets it by.
        let snapshot = |dir: &Path| (dir != Path::new("/")).then(|| tree(dir));
        let before = snapshot(dir);
        let out = Command::new(env!("CARGO_BIN_EXE_natives"))
            .args(["cache", "prune"])
            .arg(dir)
            .args(["--limit", "0", "--yes", "--home"])
            .arg(&fixture.home)
            .env("HOME", &user_home)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{}: {err}", dir.display());
        assert!(out.stdout.is_empty(), "{}", dir.display());
        let expected = format!("natives: EINVAL: {}: ", dir.display());
        assert!(err.starts_with(&expected) && err.contains(&why), "{err}");
        assert_eq!(snapshot(dir), before, "{} changed", dir.display());
    }
}

#[test]
fn bad_limits_and_arguments_are_errors_naming_them() {
    let fixture = Fixture::new();
    let cache = fixture.cache_arg();
    for bad in ["", "abc", "10X", "-1", "1.5G", "1 G", "1KB", "16777216T"] {
        let limit = format!("--limit={bad}");
        let (code, out, err) = fixture.natives(&["cache", "prune", cache, &limit]);
        assert_eq!((code, out.as_str()), (2, ""), "{bad:?}");
        assert!(
            err.starts_with("natives: cache prune: --limit takes bytes")
                && err.ends_with(&format!("got `{bad}`\n")),
            "{bad:?}: {err}"
        );
    }
    let missing = fixture.cache.join("missing");
    let table: &[(&[&str], &str)] = &[
        (
            &["cache", "prune", cache],
            "cache prune: missing --limit SIZE",
        ),
        (
            &["cache", "prune", "--limit", "1K"],
            "cache prune: missing DIR",
        ),
        (
            &["cache", "prune", missing.to_str().unwrap(), "--limit", "1K"],
            "ENOENT:",
        ),
        (&["cache", "release"], "cache release: missing DIR"),
        (&["cache", "release", cache, "x"], "unexpected argument `x`"),
        (
            &["cache", "show", "--all"],
            "cache show: unknown option --all",
        ),
        (&["cache", "wipe"], "cache: unknown subcommand `wipe`"),
    ];
    for (args, expected) in table {
        let (code, out, err) = fixture.natives(args);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}");
        assert!(
            err.starts_with("natives: ") && err.contains(expected),
            "{args:?}: {err}"
        );
    }
    assert!(!missing.exists());
}

#[test]
fn the_home_comes_from_the_environment_without_home() {
    let fixture = Fixture::new();
    fixture.hold(&fixture.cache, &owner()).release().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_natives"))
        .args(["cache", "show", "--json"])
        .env(paths::HOME_ENV, &fixture.home)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let entries = json_lines(std::str::from_utf8(&out.stdout).unwrap());
    assert_eq!(entries[0]["dir"], fixture.cache_arg());
}
