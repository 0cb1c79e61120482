//! `ensure_fresh` against real cargo: two git worktrees of one small crate,
//! building into one shared target directory.
//!
//! The worktrees differ only in what `probe::built_from()` returns, and the
//! crate's test prints it, so each `cargo test` tells which worktree's source
//! its binary was compiled from.
//!
//! Reproducing the stale artifact reliably: Cargo names a workspace
//! package's output by a hash that ignores where the source lives, and treats
//! that output as fresh when no source file is newer than it. So worktree B's
//! source files are dated to 2001, older than anything built from worktree A;
//! `cargo test` in B then finds A's output fresh and runs it, whatever the
//! order or timestamp granularity of the checkouts. Going back, A's sources
//! are older than B's builds, so plain cargo is stale that way too.
//!
//! Each layout cargo lays out (dev, release, a custom profile, `--target` the
//! host, a separate build directory, and all of them in one cache) gets its
//! own row: A builds, plain cargo in B is shown stale (the control), then
//! builds alternate B, A through `ensure_fresh`, each from its own source. A
//! refresh killed after any of its steps leaves no identity recorded, and
//! the next acquisition refreshes every layout again.
//!
//! Offline, no dependencies, `CARGO_HOME` as inherited.

use std::{
    env,
    fs::{self, File},
    io::Read,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    thread,
    time::{Duration, Instant, SystemTime},
};

use natives_ownership::{
    CancelToken, Leases, Owner, Status,
    fresh::{Build, Cargo, Freshness, Identity, Refresh, Target, ensure_fresh, needs_refresh},
};

const MANIFEST: &str = r#"[package]
name = "probe"
version = "0.1.0"
edition = "2021"

[workspace]

[profile.ci]
inherits = "dev"
"#;

const PROBE_TEST: &str = r#"#[test]
fn reports_its_source() {
    println!("built_from={}", probe::built_from());
}
"#;

/// Before anything a build could produce.
const OLD_SOURCE: Duration = Duration::from_secs(1_000_000_000);

fn lib_source(worktree: &str) -> String {
    format!("pub fn built_from() -> &'static str {{\n    \"{worktree}\"\n}}\n")
}

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=probe",
            "-c",
            "user.email=probe@example.invalid",
        ])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// Worktree A on `main` and worktree B on branch `b`, whose `built_from`
/// differs and whose files predate any build.
fn two_worktrees(root: &Path) -> (Identity, Identity) {
    let a = root.join("a");
    write(&a.join("Cargo.toml"), MANIFEST);
    write(&a.join("src/lib.rs"), &lib_source("worktree-a"));
    write(&a.join("tests/probe.rs"), PROBE_TEST);
    write(&a.join(".gitignore"), "Cargo.lock\n");
    git(&a, &["init", "-q"]);
    git(&a, &["add", "."]);
    git(&a, &["commit", "-q", "-m", "probe"]);
    let b = root.join("b");
    git(
        &a,
        &["worktree", "add", "-q", "-b", "b", b.to_str().unwrap()],
    );
    write(&b.join("src/lib.rs"), &lib_source("worktree-b"));
    git(&b, &["commit", "-q", "-am", "probe from b"]);
    for file in ["Cargo.toml", "src/lib.rs", "tests/probe.rs"] {
        let old = SystemTime::UNIX_EPOCH + OLD_SOURCE;
        File::options()
            .write(true)
            .open(b.join(file))
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    let identity = |worktree: PathBuf| Identity {
        head: git(&worktree, &["rev-parse", "HEAD"]),
        worktree,
    };
    (identity(a), identity(b))
}

/// `cargo test` in `worktree` against the shared `target_dir`: the source
/// its test binary says it was built from.
fn cargo_test(worktree: &Path, target_dir: &Path) -> String {
    cargo_test_with(worktree, target_dir, &[], None)
}

/// [`cargo_test`] of the probe test alone, with `flags`, and with
/// `CARGO_BUILD_BUILD_DIR` set to `build_dir` when given (cleared if not).
fn cargo_test_with(
    worktree: &Path,
    target_dir: &Path,
    flags: &[String],
    build_dir: Option<&Path>,
) -> String {
    let mut command = Command::new(&Cargo::default().program);
    command
        .args(["test", "--offline", "-q", "--test", "probe"])
        .args(flags)
        .args(["--", "--nocapture"])
        .current_dir(worktree)
        .env("CARGO_TARGET_DIR", target_dir)
        .env_remove(BUILD_DIR_ENV);
    if let Some(build_dir) = build_dir {
        command.env(BUILD_DIR_ENV, build_dir);
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    let line = stdout
        .lines()
        .find_map(|line| line.strip_prefix("built_from="));
    line.unwrap_or_else(|| panic!("no report in {stdout}"))
        .to_owned()
}

/// The real cargo behind a script that counts its invocations and keeps it
/// offline.
fn counting_cargo(dir: &Path) -> (Cargo, PathBuf) {
    let log = dir.join("cargo-calls");
    let program = dir.join("counting-cargo");
    let real = Cargo::default().program;
    let script = format!(
        "#!/bin/sh\necho \"$*\" >> '{}'\nCARGO_NET_OFFLINE=true exec '{}' \"$@\"\n",
        log.display(),
        real.display()
    );
    natives_testkit::install_script(&program, &script);
    (Cargo { program }, log)
}

fn calls(log: &Path) -> usize {
    fs::read_to_string(log).map_or(0, |text| text.lines().count())
}

#[test]
fn switching_worktrees_builds_from_the_current_source() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let (a, b) = two_worktrees(&root);
    let (home, shared) = (root.join("home"), root.join("shared-target"));
    let (cargo, log) = counting_cargo(&root);

    assert_eq!(cargo_test(&a.worktree, &shared), "worktree-a");
    assert_eq!(
        cargo_test(&b.worktree, &shared),
        "worktree-a",
        "the stale-artifact bug reproduces: B runs a binary compiled from A"
    );

    let outcome = cargo
        .ensure_fresh(&home, &shared, &b, &Build::default(), &CancelToken::new())
        .unwrap();
    assert_eq!(
        outcome,
        Freshness::Refreshed {
            cleaned: vec!["probe".into()]
        }
    );
    assert_eq!(calls(&log), 2, "one metadata, one clean");
    assert_eq!(cargo_test(&b.worktree, &shared), "worktree-b");

    let missing = Cargo {
        program: root.join("no-cargo-here"),
    };
    let again = missing
        .ensure_fresh(&home, &shared, &b, &Build::default(), &CancelToken::new())
        .unwrap();
    assert_eq!(
        again,
        Freshness::Unchanged,
        "no subprocess when the identity matches"
    );
    assert_eq!(
        cargo
            .ensure_fresh(&home, &shared, &b, &Build::default(), &CancelToken::new())
            .unwrap(),
        again
    );
    assert_eq!(calls(&log), 2);

    let manifest = Target::for_commands(&["cargo test --manifest-path=Cargo.toml"]);
    let back = cargo
        .ensure_fresh(
            &home,
            &shared,
            &a,
            &Build::from(manifest),
            &CancelToken::new(),
        )
        .unwrap();
    assert_eq!(
        back,
        Freshness::Refreshed {
            cleaned: vec!["probe".into()]
        }
    );
    assert_eq!(cargo_test(&a.worktree, &shared), "worktree-a");
    assert_eq!(
        ensure_fresh(&home, &shared, &a, &Build::default(), &CancelToken::new()).unwrap(),
        again
    );
    assert_eq!(calls(&log), 4);
}

/// The environment variable cargo reads its build directory from.
const BUILD_DIR_ENV: &str = "CARGO_BUILD_BUILD_DIR";

/// The host's target triple, as rustc names it.
fn host_triple() -> String {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc).arg("-vV").output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let host = text.lines().find_map(|line| line.strip_prefix("host: "));
    host.expect("rustc -vV names the host").to_owned()
}

/// Where a build keeps its intermediate output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BuildDir {
    /// In the shared target directory, as by default.
    Cache,
    /// In a build directory of its own, set by `CARGO_BUILD_BUILD_DIR` and
    /// given to the refresh.
    Given,
    /// In a build directory set by each worktree's `.cargo/config.toml`,
    /// which the refresh learns from cargo.
    Configured,
}

/// Two worktrees of the probe crate sharing one target directory, built as
/// `layouts` say (cargo flags, `{host}` standing for the host triple).
struct Scene {
    _root: tempfile::TempDir,
    root: PathBuf,
    a: Identity,
    b: Identity,
    home: PathBuf,
    shared: PathBuf,
    build_dir: BuildDir,
    layouts: Vec<Vec<String>>,
}

impl Scene {
    fn new(layouts: &[&str], build_dir: BuildDir) -> Scene {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (a, b) = two_worktrees(&root);
        let host = host_triple();
        let scene = Scene {
            a,
            b,
            home: root.join("home"),
            shared: root.join("shared-target"),
            build_dir,
            layouts: layouts
                .iter()
                .map(|flags| {
                    flags
                        .split_whitespace()
                        .map(|f| f.replace("{host}", &host))
                        .collect()
                })
                .collect(),
            root,
            _root: dir,
        };
        if build_dir == BuildDir::Configured {
            let config = format!("[build]\nbuild-dir = {:?}\n", scene.build_dir_path());
            for worktree in [&scene.a.worktree, &scene.b.worktree] {
                write(&worktree.join(".cargo/config.toml"), &config);
            }
        }
        scene
    }

    fn build_dir_path(&self) -> PathBuf {
        self.root.join("build-dir")
    }

    /// `cargo test` from `who` in each layout: the sources reported.
    fn test_each(&self, who: &Identity) -> Vec<String> {
        let given = (self.build_dir == BuildDir::Given).then(|| self.build_dir_path());
        self.layouts
            .iter()
            .map(|flags| cargo_test_with(&who.worktree, &self.shared, flags, given.as_deref()))
            .collect()
    }

    fn build(&self) -> Build {
        Build {
            workspaces: Target::Worktree,
            build_dir: (self.build_dir == BuildDir::Given).then(|| self.build_dir_path()),
        }
    }

    /// A's build in every layout, then plain cargo in B in every layout: it
    /// runs A's binaries (the control showing the cache stale).
    fn build_a_then_show_b_stale(&self) {
        let layouts = &self.layouts;
        assert_eq!(
            self.test_each(&self.a),
            vec!["worktree-a"; layouts.len()],
            "A builds {layouts:?}"
        );
        assert_eq!(
            self.test_each(&self.b),
            vec!["worktree-a"; layouts.len()],
            "the control: without a refresh, B runs A's build in each of {layouts:?}"
        );
    }
}

/// A builds, plain cargo in B is stale, then B and A alternate, each after
/// `ensure_fresh` for its own source, each building from that source.
fn alternate_builds(layouts: &[&str], build_dir: BuildDir) {
    let scene = Scene::new(layouts, build_dir);
    scene.build_a_then_show_b_stale();
    for (who, source) in [(&scene.b, "worktree-b"), (&scene.a, "worktree-a")] {
        let outcome = ensure_fresh(
            &scene.home,
            &scene.shared,
            who,
            &scene.build(),
            &CancelToken::new(),
        );
        assert_eq!(
            scene.test_each(who),
            vec![source; layouts.len()],
            "after a refresh for {source}, in each of {layouts:?}"
        );
        assert_eq!(
            outcome.unwrap(),
            Freshness::Refreshed {
                cleaned: vec!["probe".into()]
            }
        );
    }
}

#[test]
fn dev_builds_alternate_from_their_own_source() {
    alternate_builds(&[""], BuildDir::Cache);
}

#[test]
fn release_builds_alternate_from_their_own_source() {
    alternate_builds(&["--release"], BuildDir::Cache);
}

#[test]
fn custom_profile_builds_alternate_from_their_own_source() {
    alternate_builds(&["--profile ci"], BuildDir::Cache);
}

#[test]
fn host_target_builds_alternate_from_their_own_source() {
    alternate_builds(&["--target {host}"], BuildDir::Cache);
}

#[test]
fn every_layout_in_one_cache_alternates_from_its_own_source() {
    alternate_builds(
        &[
            "",
            "--release",
            "--profile ci",
            "--target {host}",
            "--target {host} --profile ci",
        ],
        BuildDir::Cache,
    );
}

#[test]
fn builds_with_a_given_build_directory_alternate_from_their_own_source() {
    alternate_builds(&["", "--target {host}"], BuildDir::Given);
}

#[test]
fn builds_with_a_configured_build_directory_alternate_from_their_own_source() {
    alternate_builds(&["--release"], BuildDir::Configured);
}

/// The environment a refresher child reads: home, cache, worktree, head.
const CHILD_ENV: [&str; 4] = [
    "NATIVES_TEST_FRESH_HOME",
    "NATIVES_TEST_FRESH_CACHE",
    "NATIVES_TEST_FRESH_WORKTREE",
    "NATIVES_TEST_FRESH_HEAD",
];

/// After which of its commands a refresher child's cargo pauses, to be
/// killed (0: never).
const PAUSE_ENV: &str = "NATIVES_TEST_FRESH_PAUSE_AFTER";

/// The real cargo behind a script that logs each invocation and, after the
/// one [`PAUSE_ENV`] counts to, names its pid in
/// `paused` and sleeps (to be killed) instead of exiting.
fn pausing_cargo(dir: &Path) -> PathBuf {
    let program = dir.join("pausing-cargo");
    let (calls, paused) = (dir.join("calls"), dir.join("paused"));
    let script = format!(
        r#"#!/bin/sh
echo "$*" >> '{calls}'
CARGO_NET_OFFLINE=true '{real}' "$@"
status=$?
if [ "$(wc -l < '{calls}')" -eq "${{{pause}:-0}}" ]; then
  echo $$ > '{paused}.tmp' && mv '{paused}.tmp' '{paused}'
  exec sleep 600
fi
exit $status
"#,
        calls = calls.display(),
        real = Cargo::default().program.display(),
        pause = PAUSE_ENV,
        paused = paused.display(),
    );
    natives_testkit::install_script(&program, &script);
    program
}

/// Run [`refresher_child`] for `who`'s build into the scene's cache, its
/// cargo pausing after command `pause_after` (never when `None`).
fn spawn_refresher(scene: &Scene, who: &Identity, pause_after: Option<usize>) -> Child {
    let values = [
        scene.home.as_os_str(),
        scene.shared.as_os_str(),
        who.worktree.as_os_str(),
        who.head.as_ref(),
    ];
    let mut command = Command::new(env::current_exe().unwrap());
    command
        .args([
            "--ignored",
            "--exact",
            "refresher_child",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .envs(CHILD_ENV.iter().zip(values))
        .env(PAUSE_ENV, pause_after.unwrap_or(0).to_string())
        .env("CARGO", pausing_cargo(&scene.root))
        .stdout(Stdio::piped());
    command.spawn().unwrap()
}

/// The pid the pausing cargo wrote once it paused; panics if `child` ended
/// first (it should be waiting on that cargo).
fn wait_for_pause(scene: &Scene, child: &mut Child) -> i32 {
    let paused = scene.root.join("paused");
    let started = Instant::now();
    loop {
        if let Some(pid) = fs::read_to_string(&paused)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            fs::remove_file(&paused).unwrap();
            return pid;
        }
        if let Some(status) = child.try_wait().unwrap() {
            let mut out = String::new();
            child
                .stdout
                .take()
                .unwrap()
                .read_to_string(&mut out)
                .unwrap();
            panic!("the refresher ended ({status}) before its cargo paused: {out}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "cargo never paused"
        );
        thread::sleep(Duration::from_millis(10));
    }
}

fn sigkill(pid: i32) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
}

/// Killed after each of its steps in turn (its metadata, then each layout's
/// clean, the last one just before the identity would be recorded), a
/// refresh leaves no identity; the next acquisition does every step again,
/// and every layout then builds from its own source.
#[test]
fn a_refresh_killed_after_any_step_is_redone_by_the_next_acquisition() {
    let scene = Scene::new(&["", "--release", "--target {host}"], BuildDir::Cache);
    let calls = scene.root.join("calls");
    let steps = 1 + scene.layouts.len();
    scene.build_a_then_show_b_stale();
    for step in 1..=steps {
        let _ = fs::remove_file(&calls);
        let mut child = spawn_refresher(&scene, &scene.b, Some(step));
        let cargo = wait_for_pause(&scene, &mut child);
        sigkill(child.id() as i32);
        child.wait().unwrap();
        sigkill(cargo);
        for who in [&scene.a, &scene.b] {
            assert!(
                needs_refresh(&scene.home, &scene.shared, who).unwrap(),
                "killed after step {step} of {steps}: an identity is recorded"
            );
        }
        let status = Leases::open(&scene.home)
            .unwrap()
            .classify(&scene.shared)
            .unwrap();
        assert!(matches!(status, Status::Stale(_)), "{status:?}");
    }
    // Stale again in every layout: only a full refresh can set it right.
    scene.build_a_then_show_b_stale();
    let _ = fs::remove_file(&calls);
    let child = spawn_refresher(&scene, &scene.b, None);
    let output = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{said}");
    assert!(said.contains(r#"refreshed ["probe"]"#), "{said}");
    let ran = fs::read_to_string(&calls).unwrap();
    assert_eq!(ran.lines().count(), steps, "every step again: {ran}");
    assert_eq!(
        scene.test_each(&scene.b),
        vec!["worktree-b"; scene.layouts.len()]
    );
}

/// Child: acquire the cache for a build from the worktree and head the
/// environment names (the refresh running the cargo of `$CARGO`), and say
/// what the refresh did.
#[test]
#[ignore = "run by a_refresh_killed_after_any_step_is_redone_by_the_next_acquisition in a child"]
fn refresher_child() {
    let [Ok(home), Ok(cache), Ok(worktree), Ok(head)] = CHILD_ENV.map(env::var) else {
        return;
    };
    let owner = Owner::current("run", "node", "refresher").building(worktree.into(), head);
    let leases = Leases::open(Path::new(&home)).unwrap();
    let (_guard, freshness) = leases
        .acquire_for_build(
            Path::new(&cache),
            &owner,
            Refresh::OwnersSource,
            &Build::default(),
            None,
            &CancelToken::new(),
        )
        .unwrap();
    match freshness {
        Some(Freshness::Refreshed { cleaned }) => println!("refreshed {cleaned:?}"),
        other => println!("{other:?}"),
    }
}
