//! A pool member seeded while a real cargo compiles in its source.
//!
//! A seed does not wait for the cargo writing its source: it keeps what is
//! known unchanged and leaves out every unit still changing, trusting
//! cargo's rule that a unit it rebuilds has its fingerprint emptied before
//! any of its output is written, and written again only after. This test
//! holds a real cargo in the middle of a build (a dependency's build script
//! waits for a gate file), checks that rule on the fingerprints cargo left,
//! seeds a member while that cargo still runs (the emptied fingerprints are
//! copied as they are), and checks that the new member builds and runs what
//! the sources say now.

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Child, Command, Output, Stdio},
    thread,
    time::{Duration, Instant},
};

use natives_ownership::{CancelToken, Leases, Owner, fresh::Cargo, pool::PoolOptions};

/// Longer than any filesystem's timestamps can hide a write in, so the
/// first build's files count as settled when the seed starts.
const SETTLED: Duration = Duration::from_millis(2_200);

#[test]
fn a_seed_never_waits_for_a_compiling_cargo_and_its_member_builds_right() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let app = lay_out_sources(&root);
    let leases = Leases::open(&root.join("home")).unwrap();
    let pool = root.join("pool");
    let options = PoolOptions {
        size: 2,
        ..PoolOptions::default()
    };
    let owner = |seat: &str| Owner::current("in-flux", "build", seat);
    let cancel = CancelToken::new();
    let holder = leases
        .acquire_from_pool(&pool, &owner("holder"), &options, None, &cancel)
        .unwrap();
    let built = cargo_build(&app, &holder.env(), None)
        .wait_with_output()
        .unwrap();
    assert!(built.status.success(), "{built:?}");
    assert_eq!(run(holder.dir()), "v1");
    thread::sleep(SETTLED);

    write(&root.join("slow/src/lib.rs"), &lib_source("v2"));
    let gate = root.join("gate");
    let mut compiling = Compiling(Some(cargo_build(&app, &holder.env(), Some(&gate))));
    wait_for_build_script(&gate, compiling.id());
    let emptied = slow_fingerprints(holder.dir());
    assert!(!emptied.is_empty(), "no fingerprint of slow's library");
    for (path, len) in emptied {
        assert_eq!(
            len,
            0,
            "cargo did not empty {} before it rebuilt the unit",
            path.display()
        );
    }

    let wait = CancelToken::new().with_timeout(Some(Duration::from_secs(30)));
    let seeded = leases
        .acquire_from_pool(&pool, &owner("seeded"), &options, Some(&wait), &cancel)
        .unwrap();
    assert!(
        compiling.running(),
        "the seed waited for the holder's cargo to end"
    );
    let seed = seeded.seed().unwrap();
    assert_eq!(seed.from.as_deref(), Some("member-0"), "{seed:?}");
    assert!(seed.files > 0, "{seed:?}");
    for (path, len) in slow_fingerprints(seeded.dir()) {
        assert_eq!(len, 0, "{} was copied filled", path.display());
    }
    let rebuilt = cargo_build(&app, &seeded.env(), None)
        .wait_with_output()
        .unwrap();
    let said = String::from_utf8_lossy(&rebuilt.stderr);
    assert!(rebuilt.status.success(), "{rebuilt:?}");
    assert!(
        said.contains("Compiling slow"),
        "the unit in flux was trusted: {said}"
    );
    assert_eq!(run(seeded.dir()), "v2");

    fs::write(&gate, "").unwrap();
    let finished = compiling.wait();
    assert!(finished.status.success(), "{finished:?}");
    assert_eq!(run(holder.dir()), "v2");
}

/// A cargo command, killed if the test ends before it does.
struct Compiling(Option<Child>);

impl Compiling {
    fn id(&self) -> u32 {
        self.0.as_ref().map_or(0, Child::id)
    }

    fn running(&mut self) -> bool {
        self.0
            .as_mut()
            .is_some_and(|c| c.try_wait().unwrap().is_none())
    }

    fn wait(mut self) -> Output {
        self.0.take().unwrap().wait_with_output().unwrap()
    }
}

impl Drop for Compiling {
    fn drop(&mut self) {
        if let Some(child) = &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `app` (a workspace of one package) depending on `slow` outside it, whose
/// build script waits for the file `SLOW_GATE` names, when set.
fn lay_out_sources(root: &Path) -> PathBuf {
    write(&root.join("slow/Cargo.toml"), SLOW_MANIFEST);
    write(&root.join("slow/build.rs"), SLOW_BUILD_SCRIPT);
    write(&root.join("slow/src/lib.rs"), &lib_source("v1"));
    let app = root.join("app");
    write(&app.join("Cargo.toml"), APP_MANIFEST);
    write(&app.join("src/main.rs"), APP_SOURCE);
    app
}

fn lib_source(version: &str) -> String {
    format!("pub fn version() -> &'static str {{\n    \"{version}\"\n}}\n")
}

fn cargo_build(app: &Path, env: &[(String, PathBuf)], gate: Option<&Path>) -> Child {
    let mut command = Command::new(Cargo::default().program);
    command
        .args(["build", "--offline"])
        .current_dir(app)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env_remove("SLOW_GATE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(gate) = gate {
        command.env("SLOW_GATE", gate);
    }
    command.spawn().unwrap()
}

/// Wait until the build script behind `gate` runs (a guard against a hang,
/// not a timing check, after two minutes).
fn wait_for_build_script(gate: &Path, cargo: u32) {
    let started = gate.with_extension("started");
    let guard = Instant::now();
    while !started.exists() {
        assert!(
            guard.elapsed() < Duration::from_secs(120),
            "cargo {cargo} never ran the build script"
        );
        thread::sleep(Duration::from_millis(10));
    }
}

/// The fingerprint files of `slow`'s library in `member`, with their sizes.
fn slow_fingerprints(member: &Path) -> Vec<(PathBuf, u64)> {
    let units = fs::read_dir(member.join("debug/.fingerprint")).unwrap();
    units
        .map(|unit| unit.unwrap().path().join("lib-slow"))
        .filter(|file| file.is_file())
        .map(|file| {
            let len = fs::metadata(&file).unwrap().len();
            (file, len)
        })
        .collect()
}

fn run(member: &Path) -> String {
    let ran = Command::new(member.join("debug/app")).output().unwrap();
    assert!(ran.status.success(), "{ran:?}");
    String::from_utf8(ran.stdout).unwrap().trim().to_owned()
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

const SLOW_MANIFEST: &str = r#"[package]
name = "slow"
version = "0.1.0"
edition = "2021"
"#;

const SLOW_BUILD_SCRIPT: &str = r#"use std::{env, fs, path::Path, thread, time::Duration};

fn main() {
    println!("cargo:rerun-if-changed=src/lib.rs");
    println!("cargo:rerun-if-env-changed=SLOW_GATE");
    if let Ok(gate) = env::var("SLOW_GATE") {
        fs::write(format!("{gate}.started"), "").unwrap();
        while !Path::new(&gate).exists() {
            thread::sleep(Duration::from_millis(20));
        }
    }
}
"#;

const APP_MANIFEST: &str = r#"[package]
name = "app"
version = "0.1.0"
edition = "2021"

[dependencies]
slow = { path = "../slow" }

[workspace]
"#;

const APP_SOURCE: &str = "fn main() {\n    println!(\"{}\", slow::version());\n}\n";
