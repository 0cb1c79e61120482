use std::{fs, os::unix::fs::symlink};

use tempfile::TempDir;

use super::*;

/// A home, a cache directory and a worktree, each in its own folder.
struct Scene {
    _root: TempDir,
    home: PathBuf,
    cache: PathBuf,
    worktree: PathBuf,
}

impl Scene {
    fn new() -> Scene {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        let scene = Scene {
            home: base.join("home"),
            cache: base.join("cache"),
            worktree: base.join("worktree"),
            _root: root,
        };
        fs::create_dir_all(&scene.worktree).unwrap();
        scene
    }

    fn identity(&self, head: &str) -> Identity {
        Identity {
            worktree: self.worktree.clone(),
            head: head.to_owned(),
        }
    }

    fn identity_record(&self) -> PathBuf {
        identity_path(&self.home, &self.cache).unwrap()
    }

    /// Leave build output of `profile_dir` (`debug`, `release`) in the cache.
    fn built(&self, profile_dir: &str) {
        fs::create_dir_all(self.cache.join(profile_dir).join(".fingerprint")).unwrap();
    }

    /// Serve `metadata` for the workspace whose manifest sits in `dir`
    /// (relative to the worktree).
    fn workspace(&self, dir: &str, metadata: &str) {
        let dir = self.worktree.join(dir);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("metadata.json"), metadata).unwrap();
    }

    /// A stand-in cargo, see [`FakeCargo`].
    fn fake_cargo(&self, behaviour: &str) -> FakeCargo {
        FakeCargo::new(&self.identity_record(), &self.cache, behaviour)
    }
}

/// A stand-in for cargo that appends each invocation's arguments to a log,
/// refuses to run while an identity record exists (a refresh must forget the
/// old identity first) or with a target directory other than the cache,
/// answers `metadata` with the `metadata.json` beside the `--manifest-path`
/// (or in the worktree), then runs `behaviour`.
struct FakeCargo {
    dir: TempDir,
    cargo: Cargo,
}

impl FakeCargo {
    fn new(identity_record: &Path, cache: &Path, behaviour: &str) -> FakeCargo {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let script = format!(
            r#"#!/bin/sh
printf '%s\n' "$*" >> '{log}'
if [ -e '{identity}' ]; then echo "identity still recorded" >&2; exit 3; fi
if [ "$CARGO_TARGET_DIR" != '{cache}' ]; then echo "target dir $CARGO_TARGET_DIR" >&2; exit 4; fi
if [ "$1" = metadata ]; then
  dir=.; previous=
  for arg in "$@"; do
    if [ "$previous" = --manifest-path ]; then dir=$(dirname "$arg"); fi
    previous=$arg
  done
  cat "$dir/metadata.json"
fi
{behaviour}
"#,
            log = log.display(),
            identity = identity_record.display(),
            cache = cache.display(),
        );
        let program = dir.path().join("cargo");
        natives_testkit::install_script(&program, &script);
        FakeCargo {
            cargo: Cargo { program },
            dir,
        }
    }

    /// Each invocation's arguments, in order.
    fn calls(&self) -> Vec<String> {
        fs::read_to_string(self.dir.path().join("log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

/// `cargo metadata` JSON for a workspace at `root` defining `names`.
fn metadata_json(root: &str, names: &[&str]) -> String {
    let ids: Vec<String> = names
        .iter()
        .map(|name| format!("path+file://{root}/{name}#0.1.0"))
        .collect();
    let packages: Vec<serde_json::Value> = names
        .iter()
        .zip(&ids)
        .map(|(name, id)| serde_json::json!({"name": name, "id": id, "version": "0.1.0"}))
        .collect();
    serde_json::json!({
        "packages": packages,
        "workspace_members": ids,
        "workspace_root": root,
        "version": 1,
    })
    .to_string()
}

/// Which source a build's acquisition refreshes for: by default the owner's
/// own (worktree at head) when it names both, nothing when it names only one.
#[test]
fn a_refresh_names_the_owners_source_by_default() {
    let given = Identity {
        worktree: PathBuf::from("/given"),
        head: "g".repeat(40),
    };
    let owner = |worktree: Option<&str>, head: Option<&str>| crate::Owner {
        worktree: worktree.map(PathBuf::from),
        head: head.map(String::from),
        ..crate::Owner::current("run", "node", "seat")
    };
    let own = Identity {
        worktree: PathBuf::from("/own"),
        head: "h".into(),
    };
    let table = [
        (
            Refresh::OwnersSource,
            owner(Some("/own"), Some("h")),
            Some(own.clone()),
        ),
        (Refresh::OwnersSource, owner(Some("/own"), None), None),
        (Refresh::OwnersSource, owner(None, Some("h")), None),
        (
            Refresh::default(),
            owner(Some("/own"), Some("h")),
            Some(own),
        ),
        (Refresh::Skip, owner(Some("/own"), Some("h")), None),
        (
            Refresh::For(given.clone()),
            owner(Some("/own"), Some("h")),
            Some(given.clone()),
        ),
        (Refresh::For(given.clone()), owner(None, None), Some(given)),
    ];
    for (refresh, owner, expected) in table {
        assert_eq!(
            refresh.clone().identity(&owner),
            expected,
            "{refresh:?} {owner:?}"
        );
    }
}

#[test]
fn nothing_recorded_needs_a_refresh_and_a_recorded_match_does_not() {
    let scene = Scene::new();
    let identity = scene.identity("c0ffee");
    assert!(needs_refresh(&scene.home, &scene.cache, &identity).unwrap());
    record_identity(&scene.home, &scene.cache, &identity).unwrap();
    assert!(!needs_refresh(&scene.home, &scene.cache, &identity).unwrap());
    let recorded: serde_json::Value =
        serde_json::from_slice(&fs::read(scene.identity_record()).unwrap()).unwrap();
    assert_eq!(
        recorded,
        serde_json::json!({"worktree": scene.worktree, "head": "c0ffee"})
    );
}

#[test]
fn another_head_or_worktree_needs_a_refresh() {
    let scene = Scene::new();
    record_identity(&scene.home, &scene.cache, &scene.identity("c0ffee")).unwrap();
    let other_worktree = Identity {
        worktree: scene.worktree.join("elsewhere"),
        head: "c0ffee".to_owned(),
    };
    for identity in [scene.identity("decaf"), other_worktree] {
        assert!(
            needs_refresh(&scene.home, &scene.cache, &identity).unwrap(),
            "{identity:?}"
        );
    }
}

#[test]
fn routes_to_one_worktree_or_cache_are_one_identity() {
    let scene = Scene::new();
    record_identity(&scene.home, &scene.cache, &scene.identity("c0ffee")).unwrap();
    let linked = scene.worktree.with_file_name("linked");
    symlink(&scene.worktree, &linked).unwrap();
    let via_link = Identity {
        worktree: linked.join("."),
        head: "c0ffee".to_owned(),
    };
    let cache_route = scene.cache.join("sub/..");
    assert!(!needs_refresh(&scene.home, &cache_route, &via_link).unwrap());
}

#[test]
fn an_unreadable_record_needs_a_refresh() {
    let scene = Scene::new();
    let identity = scene.identity("c0ffee");
    record_identity(&scene.home, &scene.cache, &identity).unwrap();
    let valid = fs::read(scene.identity_record()).unwrap();
    let corrupt: Vec<Vec<u8>> = vec![
        Vec::new(),
        valid[..valid.len() / 2].to_vec(),
        b"\xff\xfe garbage".to_vec(),
        br#"{"worktree": 7}"#.to_vec(),
        br#"["c0ffee"]"#.to_vec(),
    ];
    for bytes in corrupt {
        fs::write(scene.identity_record(), &bytes).unwrap();
        assert!(
            needs_refresh(&scene.home, &scene.cache, &identity).unwrap(),
            "{}",
            String::from_utf8_lossy(&bytes)
        );
    }
}

#[test]
fn invalidating_forgets_the_identity_and_is_idempotent() {
    let scene = Scene::new();
    let identity = scene.identity("c0ffee");
    invalidate_identity(&scene.home, &scene.cache).unwrap();
    record_identity(&scene.home, &scene.cache, &identity).unwrap();
    invalidate_identity(&scene.home, &scene.cache).unwrap();
    assert!(needs_refresh(&scene.home, &scene.cache, &identity).unwrap());
    invalidate_identity(&scene.home, &scene.cache).unwrap();
}

#[test]
fn a_matching_identity_spawns_nothing() {
    let scene = Scene::new();
    let identity = scene.identity("c0ffee");
    scene.built("debug");
    record_identity(&scene.home, &scene.cache, &identity).unwrap();
    let fake = scene.fake_cargo("");
    let outcome = fake
        .cargo
        .ensure_fresh(
            &scene.home,
            &scene.cache,
            &identity,
            &Build::default(),
            &CancelToken::new(),
        )
        .unwrap();
    assert_eq!(outcome, Freshness::Unchanged);
    assert_eq!(fake.calls(), Vec::<String>::new());
}

#[test]
fn a_cache_without_build_output_is_recorded_without_running_cargo() {
    let scene = Scene::new();
    let identity = scene.identity("c0ffee");
    let fake = scene.fake_cargo("");
    let outcome = fake
        .cargo
        .ensure_fresh(
            &scene.home,
            &scene.cache,
            &identity,
            &Build::default(),
            &CancelToken::new(),
        )
        .unwrap();
    assert_eq!(outcome, Freshness::Refreshed { cleaned: vec![] });
    assert_eq!(fake.calls(), Vec::<String>::new());
    assert!(!needs_refresh(&scene.home, &scene.cache, &identity).unwrap());
}

#[test]
fn a_new_identity_cleans_the_workspace_packages_in_each_built_profile() {
    let scene = Scene::new();
    scene.workspace(".", &metadata_json("/ws", &["zeta", "alpha"]));
    scene.built("debug");
    scene.built("release");
    record_identity(&scene.home, &scene.cache, &scene.identity("old")).unwrap();
    let fake = scene.fake_cargo("");
    let identity = scene.identity("new");
    let outcome = fake
        .cargo
        .ensure_fresh(
            &scene.home,
            &scene.cache,
            &identity,
            &Build::default(),
            &CancelToken::new(),
        )
        .unwrap();
    let cleaned = vec!["alpha".to_owned(), "zeta".to_owned()];
    assert_eq!(outcome, Freshness::Refreshed { cleaned });
    assert_eq!(
        fake.calls(),
        [
            "metadata --no-deps --format-version 1",
            "clean --profile dev -p zeta -p alpha",
            "clean --profile release -p zeta -p alpha",
        ]
    );
    assert!(!needs_refresh(&scene.home, &scene.cache, &identity).unwrap());
}

/// `metadata_json` of a workspace whose cargo reports `build_dir` as its
/// build directory.
fn metadata_with_build_dir(root: &str, names: &[&str], build_dir: &Path) -> String {
    let mut json: serde_json::Value = serde_json::from_str(&metadata_json(root, names)).unwrap();
    json["build_directory"] = build_dir.to_str().unwrap().into();
    json.to_string()
}

impl Scene {
    /// Leave marked build output at `path` (relative to the cache).
    fn marked(&self, path: &str) {
        let path = self.cache.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "").unwrap();
    }

    fn refresh(&self, fake: &FakeCargo, build: &Build) -> Result<Freshness> {
        fake.cargo.ensure_fresh(
            &self.home,
            &self.cache,
            &self.identity("new"),
            build,
            &CancelToken::new(),
        )
    }
}

#[test]
fn every_host_and_target_profile_is_cleaned_with_its_own_flags() {
    let scene = Scene::new();
    scene.workspace(".", &metadata_json("/ws", &["app"]));
    for marked in [
        "CACHEDIR.TAG",
        "debug/.cargo-lock",
        "release/.fingerprint/x",
        "release-lto/.cargo-lock",
        "x86_64-unknown-linux-gnu/CACHEDIR.TAG",
        "x86_64-unknown-linux-gnu/debug/.cargo-lock",
        "x86_64-unknown-linux-gnu/ci/.cargo-lock",
        "wasm32-unknown-unknown/release/.cargo-lock",
        "doc/app/index.html",
        "tmp/scratch",
        "tools/bin/rg",
    ] {
        scene.marked(marked);
    }
    let fake = scene.fake_cargo("");
    let outcome = scene.refresh(&fake, &Build::default()).unwrap();
    assert_eq!(
        outcome,
        Freshness::Refreshed {
            cleaned: vec!["app".into()]
        }
    );
    let tail = "-p app";
    let custom = |profile: &str| format!("--config profile.{profile}.inherits=\"dev\"");
    assert_eq!(
        fake.calls(),
        [
            "metadata --no-deps --format-version 1".to_owned(),
            format!("clean --profile dev {tail}"),
            format!("clean --profile release {tail}"),
            format!(
                "clean --profile release-lto {} {tail}",
                custom("release-lto")
            ),
            format!("clean --profile release --target wasm32-unknown-unknown {tail}"),
            format!(
                "clean --profile ci --target x86_64-unknown-linux-gnu {} {tail}",
                custom("ci")
            ),
            format!("clean --profile dev --target x86_64-unknown-linux-gnu {tail}"),
        ]
    );
}

#[test]
fn an_unrecognised_layout_runs_nothing_and_records_nothing() {
    let table = [
        ("test/.fingerprint/x", "test"),
        (
            "llvm-cov-target/nested/CACHEDIR.TAG",
            "llvm-cov-target/nested",
        ),
    ];
    for (marked, culprit) in table {
        let scene = Scene::new();
        scene.workspace(".", &metadata_json("/ws", &["app"]));
        scene.built("debug");
        scene.marked(marked);
        let old = scene.identity("old");
        record_identity(&scene.home, &scene.cache, &old).unwrap();
        let fake = scene.fake_cargo("");
        let err = scene.refresh(&fake, &Build::default()).unwrap_err();
        assert_eq!(err.code(), "ENOTSUP", "{err}");
        let named = format!("{}: ", scene.cache.join(culprit).display());
        assert!(err.message().starts_with(&named), "{named} in {err}");
        assert_eq!(fake.calls(), Vec::<String>::new());
        for identity in [old, scene.identity("new")] {
            assert!(needs_refresh(&scene.home, &scene.cache, &identity).unwrap());
        }
    }
}

#[test]
fn a_failed_clean_of_one_layout_names_its_directory_and_records_nothing() {
    let scene = Scene::new();
    scene.workspace(".", &metadata_json("/ws", &["app"]));
    scene.built("debug");
    scene.marked("thumbv7em-custom/release/.cargo-lock");
    let fake = scene.fake_cargo(
        r#"case "$*" in *"--target thumbv7em-custom"*) echo "error: no such target" >&2; exit 101;; esac"#,
    );
    let err = scene.refresh(&fake, &Build::default()).unwrap_err();
    assert_eq!(err.code(), "EIO", "{err}");
    let named = format!(
        "{}: ",
        scene.cache.join("thumbv7em-custom/release").display()
    );
    assert!(err.message().starts_with(&named), "{named} in {err}");
    assert!(err.message().contains("error: no such target"), "{err}");
    assert_eq!(fake.calls().len(), 3, "metadata, debug, then the failure");
    assert!(needs_refresh(&scene.home, &scene.cache, &scene.identity("new")).unwrap());
}

#[test]
fn a_build_directory_is_passed_to_cargo_and_its_layouts_are_cleaned() {
    let scene = Scene::new();
    let build_dir = scene.worktree.with_file_name("build-dir");
    scene.workspace(".", &metadata_with_build_dir("/ws", &["app"], &build_dir));
    for path in [
        "release/.fingerprint/x",
        "aarch64-apple-darwin/debug/.cargo-lock",
    ] {
        let path = build_dir.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "").unwrap();
    }
    let seen = scene.worktree.with_file_name("seen-build-dir");
    let fake = scene.fake_cargo(&format!(
        "printf '%s\\n' \"$CARGO_BUILD_BUILD_DIR\" >> '{}'",
        seen.display()
    ));
    // Given: the cache holds nothing yet, the build directory does.
    let given = Build {
        workspaces: Target::Worktree,
        build_dir: Some(PathBuf::from("../build-dir")),
    };
    let outcome = scene.refresh(&fake, &given).unwrap();
    assert_eq!(
        outcome,
        Freshness::Refreshed {
            cleaned: vec!["app".into()]
        }
    );
    let tail = "-p app";
    let cleans = [
        format!("clean --profile release {tail}"),
        format!("clean --profile dev --target aarch64-apple-darwin {tail}"),
    ];
    assert_eq!(fake.calls()[1..], cleans);
    let relative = scene.worktree.join("../build-dir").display().to_string();
    assert_eq!(
        fs::read_to_string(&seen).unwrap(),
        format!("{relative}\n").repeat(3)
    );
    // Set by cargo's configuration alone: cargo reports it, and it is
    // cleaned from there; the cache's own layouts too.
    fs::remove_file(&seen).unwrap();
    invalidate_identity(&scene.home, &scene.cache).unwrap();
    scene.built("debug");
    let fake = scene.fake_cargo("");
    scene.refresh(&fake, &Build::default()).unwrap();
    let calls = fake.calls();
    assert_eq!(calls[1], format!("clean --profile dev {tail}"));
    assert_eq!(calls[2..], cleans);
}

#[test]
fn manifests_of_one_workspace_are_cleaned_once_and_others_apart() {
    let scene = Scene::new();
    scene.workspace("ws/a", &metadata_json("/ws", &["a", "b"]));
    scene.workspace("ws/b", &metadata_json("/ws", &["a", "b"]));
    scene.workspace("tools", &metadata_json("/tools", &["tool"]));
    scene.built("debug");
    let fake = scene.fake_cargo("");
    let target = Target::for_commands(&[
        "cargo test --manifest-path ws/a/Cargo.toml",
        "cargo test --manifest-path=ws/b/Cargo.toml && cargo run --manifest-path tools/Cargo.toml",
    ]);
    let outcome = fake
        .cargo
        .ensure_fresh(
            &scene.home,
            &scene.cache,
            &scene.identity("h"),
            &Build::from(target),
            &CancelToken::new(),
        )
        .unwrap();
    let cleaned = ["a", "b", "tool"].map(str::to_owned).to_vec();
    assert_eq!(outcome, Freshness::Refreshed { cleaned });
    let metadata = "metadata --no-deps --format-version 1 --manifest-path";
    let clean = "clean --profile dev";
    assert_eq!(
        fake.calls(),
        [
            format!("{metadata} ws/a/Cargo.toml"),
            format!("{metadata} ws/b/Cargo.toml"),
            format!("{metadata} tools/Cargo.toml"),
            format!("{clean} -p a -p b --manifest-path ws/a/Cargo.toml"),
            format!("{clean} -p tool --manifest-path tools/Cargo.toml"),
        ]
    );
}

#[test]
fn a_workspace_without_packages_is_never_cleaned_whole() {
    let scene = Scene::new();
    scene.workspace(".", &metadata_json("/ws", &[]));
    scene.built("debug");
    let fake = scene.fake_cargo("");
    let outcome = fake
        .cargo
        .ensure_fresh(
            &scene.home,
            &scene.cache,
            &scene.identity("h"),
            &Build::default(),
            &CancelToken::new(),
        )
        .unwrap();
    assert_eq!(outcome, Freshness::Refreshed { cleaned: vec![] });
    assert_eq!(
        fake.calls(),
        ["metadata --no-deps --format-version 1".to_owned()]
    );
}

#[test]
fn a_failed_clean_names_the_command_and_leaves_no_identity() {
    let scene = Scene::new();
    scene.workspace(".", &metadata_json("/ws", &["app"]));
    scene.built("debug");
    let old = scene.identity("old");
    record_identity(&scene.home, &scene.cache, &old).unwrap();
    let fake = scene
        .fake_cargo(r#"if [ "$1" = clean ]; then echo "error: disk on fire" >&2; exit 101; fi"#);
    let new = scene.identity("new");
    let err = fake
        .cargo
        .ensure_fresh(
            &scene.home,
            &scene.cache,
            &new,
            &Build::default(),
            &CancelToken::new(),
        )
        .unwrap_err();
    assert_eq!(err.code(), "EIO");
    for part in [
        "clean --profile dev",
        "-p app",
        "error: disk on fire",
        "101",
    ] {
        assert!(err.message().contains(part), "{part} in {err}");
    }
    for identity in [old, new] {
        assert!(needs_refresh(&scene.home, &scene.cache, &identity).unwrap());
    }
}

#[test]
fn a_failed_or_garbled_metadata_names_the_command() {
    let cases = [
        (
            r#"echo "error: no manifest" >&2; exit 101"#,
            "EIO",
            "error: no manifest",
        ),
        ("", "EINVAL", "cargo metadata output"),
    ];
    for (behaviour, code, detail) in cases {
        let scene = Scene::new();
        scene.workspace(".", "not json");
        scene.built("debug");
        let fake = scene.fake_cargo(behaviour);
        let err = fake
            .cargo
            .ensure_fresh(
                &scene.home,
                &scene.cache,
                &scene.identity("h"),
                &Build::default(),
                &CancelToken::new(),
            )
            .unwrap_err();
        assert_eq!(err.code(), code, "{err}");
        for part in ["metadata --no-deps --format-version 1", detail] {
            assert!(err.message().contains(part), "{part} in {err}");
        }
    }
}

/// The pids a stand-in cargo wrote to `dir`, once it has written them all.
fn wait_for_pids(dir: &Path, names: &[&str]) -> Vec<i32> {
    let started = std::time::Instant::now();
    loop {
        let pids: Vec<Option<i32>> = names
            .iter()
            .map(|name| fs::read_to_string(dir.join(name)).ok()?.trim().parse().ok())
            .collect();
        if let Some(pids) = pids.into_iter().collect::<Option<Vec<i32>>>() {
            return pids;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "the stand-in cargo never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Whether process `pid` still runs (a zombie waiting to be reaped does not).
fn running(pid: i32) -> bool {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat.rsplit_once(") ").map(|(_, rest)| rest.chars().next());
    !matches!(state, Some(Some('Z' | 'X')))
}

#[test]
fn a_cancel_kills_the_running_cargo_and_everything_it_started() {
    let scene = Scene::new();
    scene.workspace(".", &metadata_json("/ws", &["app"]));
    scene.built("debug");
    let pids = scene.worktree.join("pids");
    fs::create_dir(&pids).unwrap();
    let fake = scene.fake_cargo(&format!(
        "echo $$ > '{pids}/cargo.tmp' && mv '{pids}/cargo.tmp' '{pids}/cargo'\n\
         sleep 600 &\n\
         echo $! > '{pids}/child.tmp' && mv '{pids}/child.tmp' '{pids}/child'\n\
         wait",
        pids = pids.display()
    ));
    let token = CancelToken::new();
    let (done, finished) = std::sync::mpsc::channel();
    let (cargo, home, cache, identity, refresh_token) = (
        fake.cargo.clone(),
        scene.home.clone(),
        scene.cache.clone(),
        scene.identity("new"),
        token.clone(),
    );
    std::thread::spawn(move || {
        let outcome =
            cargo.ensure_fresh(&home, &cache, &identity, &Build::default(), &refresh_token);
        done.send(outcome).unwrap();
    });
    let started = wait_for_pids(&pids, &["cargo", "child"]);
    let cancelled_at = std::time::Instant::now();
    token.cancel();
    let outcome = finished.recv_timeout(std::time::Duration::from_secs(20));
    let settled = cancelled_at.elapsed();
    let gone = started.iter().all(|&pid| {
        let deadline = cancelled_at + std::time::Duration::from_secs(5);
        while running(pid) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        !running(pid)
    });
    for &pid in &started {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
    }
    let err = outcome
        .expect("ensure_fresh still waits for the cargo it was told to stop")
        .unwrap_err();
    assert_eq!(err.code(), "ABORT_ERR", "{err}");
    assert!(err.message().contains("metadata"), "{err}");
    assert!(gone, "cargo or its child outlived the cancel: {started:?}");
    assert!(
        settled < std::time::Duration::from_secs(2),
        "stopped {settled:?} after the cancel"
    );
    assert!(needs_refresh(&scene.home, &scene.cache, &scene.identity("new")).unwrap());
}

#[test]
fn a_missing_cargo_is_reported_by_its_command() {
    let scene = Scene::new();
    scene.built("debug");
    let cargo = Cargo {
        program: scene.worktree.join("no-such-cargo"),
    };
    let err = cargo
        .ensure_fresh(
            &scene.home,
            &scene.cache,
            &scene.identity("h"),
            &Build::default(),
            &CancelToken::new(),
        )
        .unwrap_err();
    assert_eq!(err.code(), "ENOENT");
    assert!(err.message().contains("no-such-cargo metadata"), "{err}");
}

#[test]
fn commands_without_manifests_target_the_worktree() {
    assert_eq!(Target::for_commands(&[]), Target::Worktree);
    assert_eq!(
        Target::for_commands(&["cargo test --workspace"]),
        Target::Worktree
    );
    assert_eq!(
        Target::for_commands(&["cargo test --manifest-path x/Cargo.toml"]),
        Target::Manifests(vec![PathBuf::from("x/Cargo.toml")])
    );
}

/// A small deterministic generator, so property tests need no new crate and
/// a failure replays identically.
struct Xorshift(u64);

impl Xorshift {
    fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % bound as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Paths a manifest flag may carry, including ones that need quoting.
const MANIFESTS: [&str; 7] = [
    "Cargo.toml",
    "crates/a/Cargo.toml",
    "/abs/ws/Cargo.toml",
    "dir with space/Cargo.toml",
    "it's/Cargo.toml",
    "say \"hi\"/Cargo.toml",
    "tab\there/$HOME/Cargo.toml",
];

/// `word` as a shell would need it written, in one of three styles.
fn quote(word: &str, style: usize) -> String {
    match style {
        0 => word
            .chars()
            .flat_map(|c| {
                let special = c.is_whitespace() || "'\"\\$`;&|()<>".contains(c);
                special.then_some('\\').into_iter().chain([c])
            })
            .collect(),
        1 => format!("'{}'", word.replace('\'', r"'\''")),
        _ => {
            let escaped: String = word
                .chars()
                .flat_map(|c| ("\"\\$`".contains(c).then_some('\\').into_iter()).chain([c]))
                .collect();
            format!("\"{escaped}\"")
        }
    }
}

/// One `--manifest-path` flag for `path`, spelled one of several ways.
fn manifest_flag(path: &str, rng: &mut Xorshift) -> String {
    let style = rng.below(3);
    match rng.below(3) {
        0 => format!("--manifest-path {}", quote(path, style)),
        1 => format!("--manifest-path={}", quote(path, style)),
        _ => quote(&format!("--manifest-path={path}"), style),
    }
}

#[test]
fn manifest_paths_survive_every_quoting_and_ordering() {
    let noise = [
        "cargo",
        "test",
        "-p",
        "x",
        "--workspace",
        "--",
        "--nocapture",
    ];
    let joins = [" ", " && ", "; ", " | ", "\n", " \\\n  "];
    let mut rng = Xorshift(0x9e37_79b9_7f4a_7c15);
    for _ in 0..2000 {
        let mut commands: Vec<String> = vec![String::new()];
        let mut expected: Vec<PathBuf> = Vec::new();
        for _ in 0..rng.below(6) {
            let path = *rng.pick(&MANIFESTS);
            let flag = manifest_flag(path, &mut rng);
            let line = commands.last_mut().unwrap();
            line.push_str(&format!("{} {flag}{}", rng.pick(&noise), rng.pick(&joins)));
            if !expected.contains(&PathBuf::from(path)) {
                expected.push(PathBuf::from(path));
            }
            if rng.below(3) == 0 {
                commands.push(String::new());
            }
        }
        let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
        assert_eq!(extract_manifest_paths(&commands), expected, "{commands:?}");
    }
}

/// One way cargo has written a package id, by era.
fn package_id(name: &str, version: &str, path: &str, format: usize) -> String {
    match format {
        0 => format!("path+file://{path}#{name}@{version}"),
        1 => format!("path+file://{path}/{name}#{version}"),
        2 => format!("registry+https://github.com/rust-lang/crates.io-index#{name}@{version}"),
        _ => format!("{name} {version} (path+file://{path})"),
    }
}

#[test]
fn workspace_names_are_members_only_whatever_the_id_format() {
    let names = ["app", "core", "serde", "log", "app-cli"];
    let mut rng = Xorshift(0x2545_f491_4f6c_dd1d);
    for _ in 0..500 {
        let mut packages = Vec::new();
        let mut members = Vec::new();
        let mut expected: Vec<String> = Vec::new();
        for (index, name) in names.iter().enumerate() {
            let member = rng.below(2) == 0;
            let dependency = rng.below(2) == 0;
            let path = format!("/ws/p{index}");
            if member {
                let id = package_id(name, "0.1.0", &path, [0, 1, 3][rng.below(3)]);
                members.push(id.clone());
                packages.push(serde_json::json!({"name": name, "id": id}));
                expected.push((*name).to_owned());
            }
            if dependency {
                let id = package_id(name, "9.9.9", "/registry", rng.below(4));
                packages.push(serde_json::json!({"name": name, "id": id}));
            }
        }
        for i in (1..packages.len()).rev() {
            packages.swap(i, rng.below(i + 1));
        }
        let json = serde_json::json!({"packages": packages, "workspace_members": members});
        let parsed = parse_workspace_package_names(&json.to_string()).unwrap();
        assert_eq!(parsed, expected, "{json}");
    }
}

#[test]
fn manifest_paths_table() {
    let table: &[(&[&str], &[&str])] = &[
        (&[], &[]),
        (&["cargo test --workspace"], &[]),
        (
            &["cargo test --manifest-path a/Cargo.toml"],
            &["a/Cargo.toml"],
        ),
        (
            &["cargo test --manifest-path=a/Cargo.toml"],
            &["a/Cargo.toml"],
        ),
        (
            &["cargo test --manifest-path 'a b/Cargo.toml'"],
            &["a b/Cargo.toml"],
        ),
        (
            &["cargo test --manifest-path \"a b/Cargo.toml\""],
            &["a b/Cargo.toml"],
        ),
        (
            &["cargo test --manifest-path='a b/Cargo.toml'"],
            &["a b/Cargo.toml"],
        ),
        (
            &["cargo test '--manifest-path=a b/Cargo.toml'"],
            &["a b/Cargo.toml"],
        ),
        (
            &["cargo test --manifest-path a\\ b/Cargo.toml"],
            &["a b/Cargo.toml"],
        ),
        (
            &["cargo test --manifest-path \"it's/Cargo.toml\""],
            &["it's/Cargo.toml"],
        ),
        (
            &["cargo test --manifest-path 'say \"hi\"/Cargo.toml'"],
            &["say \"hi\"/Cargo.toml"],
        ),
        (
            &["cargo test --manifest-path \"a\\\"b/Cargo.toml\""],
            &["a\"b/Cargo.toml"],
        ),
        (
            &["cargo test --manifest-path \"a\\b/Cargo.toml\""],
            &["a\\b/Cargo.toml"],
        ),
        (
            &[
                "cargo build --manifest-path b/Cargo.toml",
                "cargo test --manifest-path a/Cargo.toml --manifest-path=b/Cargo.toml",
            ],
            &["b/Cargo.toml", "a/Cargo.toml"],
        ),
        (
            &[
                "cd x && cargo test --manifest-path=a/Cargo.toml&&echo ok;cargo run --manifest-path c/Cargo.toml|tee log",
            ],
            &["a/Cargo.toml", "c/Cargo.toml"],
        ),
        (
            &["cargo test \\\n  --manifest-path a/Cargo.toml"],
            &["a/Cargo.toml"],
        ),
        (
            &["cargo test --manifest-path=a/\\\nCargo.toml"],
            &["a/Cargo.toml"],
        ),
        (&["cargo test --manifest-path"], &[]),
        (&["cargo test --manifest-path="], &[]),
        (&["cargo test --manifest-path ''"], &[]),
        (
            &["cargo test --manifest-paths=a/Cargo.toml --manifest-pathological"],
            &[],
        ),
        (&["echo '--manifest-path a/Cargo.toml'"], &[]),
    ];
    for (commands, expected) in table {
        let expected: Vec<PathBuf> = expected.iter().map(PathBuf::from).collect();
        assert_eq!(extract_manifest_paths(commands), expected, "{commands:?}");
    }
}

#[test]
fn workspace_package_names_table() {
    let table: &[(&str, &[&str])] = &[
        (
            include_str!("../../tests/fixtures/metadata-no-deps.json"),
            &["acme-core", "cli"],
        ),
        (
            include_str!("../../tests/fixtures/metadata-with-deps.json"),
            &["acme-core", "cli"],
        ),
        (r#"{"packages":[],"workspace_members":[]}"#, &[]),
        (
            r#"{"packages":[
                {"name":"serde","id":"serde 1.0.0 (registry+https://github.com/rust-lang/crates.io-index)"},
                {"name":"app","id":"app 0.1.0 (path+file:///ws/app)"}],
              "workspace_members":["app 0.1.0 (path+file:///ws/app)"]}"#,
            &["app"],
        ),
        (
            r#"{"packages":[
                {"name":"b","id":"path+file:///ws/b#0.1.0"},
                {"name":"a","id":"path+file:///ws/crates/x#a@0.2.0"}],
              "workspace_members":["path+file:///ws/crates/x#a@0.2.0","path+file:///ws/b#0.1.0"]}"#,
            &["a", "b"],
        ),
        (
            r#"{"packages":[
                {"name":"ws","id":"path+file:///ws#0.1.0"},
                {"name":"vendored","id":"path+file:///ws/vendor/v#vendored@0.1.0"}],
              "workspace_members":["path+file:///ws#0.1.0"]}"#,
            &["ws"],
        ),
    ];
    for (json, expected) in table {
        assert_eq!(
            parse_workspace_package_names(json).unwrap(),
            *expected,
            "{json}"
        );
    }
}

#[test]
fn malformed_metadata_table() {
    let table = [
        ("", "cargo metadata output"),
        ("[]", "cargo metadata output"),
        (r#"{"packages":[]}"#, "workspace_members"),
        (
            r#"{"packages":[{"name":"a"}],"workspace_members":[]}"#,
            "id",
        ),
        (
            r#"{"packages":[],"workspace_members":["path+file:///ws#0.1.0"]}"#,
            "workspace member path+file:///ws#0.1.0 has no package entry",
        ),
    ];
    for (json, detail) in table {
        let err = parse_workspace_package_names(json).unwrap_err();
        assert_eq!(err.code(), "EINVAL", "{json}");
        assert!(err.message().contains(detail), "{detail} in {err}");
    }
}

#[test]
fn named_manifests_are_the_target_and_none_is_the_worktree() {
    assert_eq!(Target::of_manifests(vec![]), Target::Worktree);
    let named = vec![PathBuf::from("a/Cargo.toml")];
    assert_eq!(
        Target::of_manifests(named.clone()),
        Target::Manifests(named)
    );
}
