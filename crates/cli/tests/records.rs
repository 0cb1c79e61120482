//! `natives cache` and `natives claims` against records that are not what
//! they should be: a FIFO or a symlink to `/dev/zero` in a record's place
//! answers at once with `EFTYPE` naming it (exit 2), a corrupt claims record
//! is an error (exit 2), and commands that only read (or find nothing to
//! release) create nothing in the home they are pointed at.
//!
//! Every run of the binary is bounded in time and killed past it, so a
//! command that hangs fails its test instead of hanging the suite.

use std::{
    fs,
    os::unix::fs::symlink,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    thread,
    time::{Duration, Instant},
};

mod output;

use natives_ownership::{
    AcquireOutcome, CancelToken, Leases, Owner,
    claims::{self, Agent, ClaimRequest, Zone, store::ZoneFiles},
    layout::LeaseFiles,
};
use natives_system::paths;

/// Far longer than any of these commands takes when it does not hang.
const BOUND: Duration = Duration::from_secs(20);

/// A natives home with one cache leased and released, and one claim.
struct Scene {
    _root: tempfile::TempDir,
    base: PathBuf,
    home: PathBuf,
    cache: PathBuf,
    memory: PathBuf,
}

impl Scene {
    fn new() -> Scene {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        let cache = base.join("target");
        fs::create_dir_all(cache.join("debug/.fingerprint")).unwrap();
        fs::write(
            cache.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55\n",
        )
        .unwrap();
        let scene = Scene {
            home: base.join("home"),
            memory: base.join("config/projects/p/memory"),
            cache,
            base,
            _root: root,
        };
        let leases = Leases::open(&scene.home).unwrap();
        match leases.try_acquire(&scene.cache, &Owner::current("r", "n", "s")) {
            Ok(AcquireOutcome::Acquired(guard)) => guard.release().unwrap(),
            other => panic!("not acquired: {:?}", other.map(|_| ())),
        }
        let request = ClaimRequest {
            agent: Agent {
                uid: "agent-1".into(),
                cwd: Some(scene.base.join("work")),
                account: "ana@example.com".into(),
            },
            memory_dir: scene.memory.clone(),
            origin: "store-a".into(),
            ..ClaimRequest::default()
        };
        claims::check_and_claim(&scene.home, &request, &CancelToken::new());
        scene
    }

    fn lease_files(&self) -> LeaseFiles {
        LeaseFiles::new(&self.home, &paths::dir_id(&self.cache).unwrap())
    }

    fn claims_record(&self) -> PathBuf {
        let zone = Zone::of(&paths::dir_id(&self.memory).unwrap());
        ZoneFiles::new(&self.home, &zone).record
    }
}

/// `natives ARGS` with no terminal, killed past [`BOUND`]: exit code,
/// stdout, stderr.
fn natives(args: &[&str]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_natives"))
        .args(args)
        .env_remove(paths::HOME_ENV)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > BOUND {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("natives {args:?}: still running after {BOUND:?} (it hangs)");
        }
        thread::sleep(Duration::from_millis(10));
    }
    output::outcome(child.wait_with_output().unwrap())
}

/// Puts something that is not a regular file at a path.
type Put = fn(&Path);

/// What can stand where a record should be.
fn hostile_kinds() -> [(&'static str, Put); 2] {
    [
        ("a FIFO", |at| {
            nix::unistd::mkfifo(at, nix::sys::stat::Mode::S_IRWXU).unwrap()
        }),
        ("a symlink to /dev/zero", |at| {
            symlink("/dev/zero", at).unwrap()
        }),
    ]
}

fn replace_with(path: &Path, put: Put) {
    let _ = fs::remove_file(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    put(path);
}

#[test]
fn a_lease_record_that_is_not_a_file_fails_each_cache_command_at_once() {
    for (kind, put) in hostile_kinds() {
        let scene = Scene::new();
        let record = scene.lease_files().record;
        replace_with(&record, put);
        let (home, cache) = (scene.home.to_str().unwrap(), scene.cache.to_str().unwrap());
        let commands: [&[&str]; 3] = [
            &["cache", "show", "--home", home],
            &["cache", "release", cache, "--home", home],
            &[
                "cache", "prune", cache, "--limit", "0", "-y", "--home", home,
            ],
        ];
        for args in commands {
            let (code, _, err) = natives(args);
            assert_eq!(code, 2, "{kind}: {args:?}: {err}");
            assert!(err.contains("EFTYPE"), "{kind}: {args:?}: {err}");
            assert!(err.contains(record.to_str().unwrap()), "{err}");
        }
    }
}

#[test]
fn a_catalog_entry_that_is_not_a_file_is_shown_as_unnamed_at_once() {
    for (kind, put) in hostile_kinds() {
        let scene = Scene::new();
        replace_with(&scene.lease_files().catalog, put);
        let (code, out, err) = natives(&["cache", "show", "--home", scene.home.to_str().unwrap()]);
        assert_eq!(code, 0, "{kind}: {err}");
        assert!(out.contains("(unnamed)"), "{kind}: {out}");
    }
}

#[test]
fn a_cache_tag_that_is_not_a_file_refuses_the_prune_at_once() {
    for (kind, put) in hostile_kinds() {
        let scene = Scene::new();
        let tag = scene.cache.join("CACHEDIR.TAG");
        replace_with(&tag, put);
        let (home, cache) = (scene.home.to_str().unwrap(), scene.cache.to_str().unwrap());
        for dry_run in [true, false] {
            let mut args = vec![
                "cache", "prune", cache, "--limit", "0", "-y", "--home", home,
            ];
            if dry_run {
                args.push("--dry-run");
            }
            let (code, _, err) = natives(&args);
            assert_eq!(code, 2, "{kind}: {err}");
            assert!(err.contains("EFTYPE"), "{kind}: {err}");
            assert!(err.contains(tag.to_str().unwrap()), "{err}");
        }
    }
}

#[test]
fn a_claims_record_that_is_not_a_file_fails_each_claims_command_at_once() {
    for (kind, put) in hostile_kinds() {
        let scene = Scene::new();
        let record = scene.claims_record();
        replace_with(&record, put);
        let home = scene.home.to_str().unwrap();
        let memory = scene.memory.to_str().unwrap();
        let commands: [&[&str]; 2] = [
            &["claims", "list", "--home", home],
            &["claims", "release", "agent-1", memory, "-y", "--home", home],
        ];
        for args in commands {
            let (code, _, err) = natives(args);
            assert_eq!(code, 2, "{kind}: {args:?}: {err}");
            assert!(err.contains("EFTYPE"), "{kind}: {args:?}: {err}");
            assert!(err.contains(record.to_str().unwrap()), "{err}");
        }
    }
}

/// A corrupt record is an error, as ripgrep's are: exit 2, named, even
/// when it is the only record (nothing else to list) and when another
/// folder was listed.
#[test]
fn claims_list_exits_2_when_a_record_is_corrupt() {
    let scene = Scene::new();
    let record = scene.claims_record();
    let home = scene.home.to_str().unwrap();
    assert_eq!(natives(&["claims", "list", "--home", home]).0, 0);
    fs::write(&record, "{\"zone\": \"memory-dir:").unwrap();
    for json in [false, true] {
        let mut args = vec!["claims", "list", "--home", home];
        if json {
            args.push("--json");
        }
        let (code, out, err) = natives(&args);
        assert_eq!(code, 2, "{out}{err}");
        assert!(
            out.contains(record.to_str().unwrap()) || err.contains(record.to_str().unwrap()),
            "{out}{err}"
        );
        assert!(err.contains("could not be read"), "{err}");
    }
    let other = ZoneFiles::new(&scene.home, &Zone::of(Path::new("/elsewhere"))).record;
    let valid = r#"{"zone": "memory-dir:x", "dir": "/elsewhere", "claims": {"b": {"at_ms": 1, "origin": "o"}}}"#;
    fs::write(other, valid).unwrap();
    let (code, out, _) = natives(&["claims", "list", "--home", home]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("/elsewhere"), "{out}");
}

/// Reading creates nothing, and neither does a release with nothing to
/// release: the home stays missing, or empty, as it was.
#[test]
fn reading_and_releasing_nothing_create_nothing_in_the_home() {
    let root = tempfile::tempdir().unwrap();
    let empty = root.path().join("empty-home");
    fs::create_dir(&empty).unwrap();
    let missing = root.path().join("missing-home");
    let somewhere = root.path().to_str().unwrap();
    for home in [&empty, &missing] {
        let home_arg = home.to_str().unwrap();
        let commands: [(&[&str], i32); 4] = [
            (&["cache", "show", "--home", home_arg], 1),
            (&["claims", "list", "--home", home_arg], 1),
            (&["cache", "release", somewhere, "--home", home_arg], 1),
            (
                &[
                    "claims", "release", "agent-1", somewhere, "-y", "--home", home_arg,
                ],
                1,
            ),
        ];
        for (args, expected) in commands {
            let (code, out, err) = natives(args);
            assert_eq!(code, expected, "{args:?}: {out}{err}");
        }
        let left: Vec<_> = fs::read_dir(root.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(left, ["empty-home"], "{}", home.display());
        assert_eq!(
            fs::read_dir(&empty).unwrap().count(),
            0,
            "{}",
            home.display()
        );
    }
}
