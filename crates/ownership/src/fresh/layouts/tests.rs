use std::{fs, os::unix::fs::symlink};

use super::*;

/// Lay out `entries` under a fresh directory: a path ending in `/` is a
/// directory, any other an empty file.
fn tree(entries: &[&str]) -> tempfile::TempDir {
    let files: Vec<(&str, &str)> = entries.iter().map(|entry| (*entry, "")).collect();
    natives_testkit::tree(&files)
}

fn host(profile: &str) -> Layout {
    Layout {
        target: None,
        profile: profile.to_owned(),
    }
}

fn built_for(target: &str, profile: &str) -> Layout {
    Layout {
        target: Some(target.to_owned()),
        profile: profile.to_owned(),
    }
}

/// What cargo 1.95 left in a target directory after `build`, `build
/// --release`, `build --profile ci`, `test --profile bench`, `doc`,
/// `package`, `build --target x86_64-unknown-linux-gnu [--profile ci]`.
const CARGO_1_95: &[&str] = &[
    "CACHEDIR.TAG",
    ".rustc_info.json",
    ".rustdoc_fingerprint.json",
    "debug/.cargo-lock",
    "debug/.fingerprint/probe-0f03276c611c4498/",
    "debug/deps/",
    "debug/build/",
    "debug/incremental/",
    "debug/examples/",
    "release/.cargo-lock",
    "release/.fingerprint/",
    "ci/.cargo-lock",
    "ci/.fingerprint/",
    "doc/.lock",
    "doc/probe/index.html",
    "tmp/",
    "package/probe-0.1.0.crate",
    "package/tmp-crate/",
    "x86_64-unknown-linux-gnu/CACHEDIR.TAG",
    "x86_64-unknown-linux-gnu/debug/.cargo-lock",
    "x86_64-unknown-linux-gnu/debug/.fingerprint/",
    "x86_64-unknown-linux-gnu/ci/.fingerprint/",
    "x86_64-unknown-linux-gnu/doc/",
];

#[test]
fn recognised_layouts_table() {
    let table: &[(&[&str], Vec<Layout>)] = &[
        (&[], vec![]),
        (
            CARGO_1_95,
            vec![
                host("ci"),
                host("dev"),
                host("release"),
                built_for("x86_64-unknown-linux-gnu", "ci"),
                built_for("x86_64-unknown-linux-gnu", "dev"),
            ],
        ),
        // A target directory whose intermediate output lives in a build
        // directory: the profiles hold only their lock and final artifacts.
        (
            &[
                "CACHEDIR.TAG",
                "debug/.cargo-lock",
                "debug/examples/",
                "debug/libprobe.rlib",
                "aarch64-unknown-linux-gnu/CACHEDIR.TAG",
                "aarch64-unknown-linux-gnu/release/.cargo-lock",
            ],
            vec![
                host("dev"),
                built_for("aarch64-unknown-linux-gnu", "release"),
            ],
        ),
        // Older cargo wrote no CACHEDIR.TAG in a target's directory.
        (
            &["thumbv7em-none-eabihf/release/.fingerprint/"],
            vec![built_for("thumbv7em-none-eabihf", "release")],
        ),
        // What tools leave beside cargo's output carries no mark.
        (
            &[
                "criterion/probe/report/index.html",
                "nextest/junit.xml",
                "tools/bin/rg",
                "tools/.crates.toml",
                "napi-rs/natives-0bf02a59/natives",
                "cargo-timings/cargo-timing.html",
                "notes.txt",
                "release/.fingerprint/",
            ],
            vec![host("release")],
        ),
        // A target's directory holding only its tag: nothing built there.
        (&["wasm32-unknown-unknown/CACHEDIR.TAG"], vec![]),
        (
            &["my_profile-2/.fingerprint/", "wasm32-wasip1/doc/", "tmp/x/"],
            vec![host("my_profile-2")],
        ),
    ];
    for (entries, expected) in table {
        let root = tree(entries);
        assert_eq!(
            &output_layouts(root.path()).unwrap(),
            expected,
            "{entries:?}"
        );
    }
}

#[test]
fn unrecognised_layouts_are_refused_naming_the_directory() {
    let table: &[(&[&str], &str)] = &[
        (&["dev/.fingerprint/"], "dev"),
        (&["test/.cargo-lock"], "test"),
        (&["bench/.fingerprint/"], "bench"),
        (&[".hidden/.fingerprint/"], ".hidden"),
        (&["with.dot/.cargo-lock"], "with.dot"),
        (
            &["x86_64-unknown-linux-gnu/test/.fingerprint/"],
            "x86_64-unknown-linux-gnu/test",
        ),
        (
            &["-flag/CACHEDIR.TAG", "-flag/debug/.fingerprint/"],
            "-flag",
        ),
        (&["a target/release/.fingerprint/"], "a target"),
        // A tool's own target directory nested in the cache.
        (
            &[
                "llvm-cov-target/CACHEDIR.TAG",
                "llvm-cov-target/CACHEDIR.TAG",
                "llvm-cov-target/tmp/",
                "llvm-cov-target/x86_64-unknown-linux-gnu/CACHEDIR.TAG",
            ],
            "llvm-cov-target/x86_64-unknown-linux-gnu",
        ),
        (
            &[
                "rust-analyzer/flycheck0/CACHEDIR.TAG",
                "rust-analyzer/flycheck0/debug/.fingerprint/",
            ],
            "rust-analyzer/flycheck0",
        ),
    ];
    for (entries, culprit) in table {
        let root = tree(entries);
        let err = output_layouts(root.path()).unwrap_err();
        assert_eq!(err.code(), "ENOTSUP", "{entries:?}: {err}");
        let named = format!("{}: ", root.path().join(culprit).display());
        assert!(err.message().starts_with(&named), "{named} in {err}");
        assert!(err.message().contains("not recognised"), "{err}");
    }
}

#[test]
fn profile_directories_round_trip_as_cargo_names_them() {
    for profile in ["dev", "release", "ci", "release-lto", "my_profile"] {
        let dir = profile_dir(profile);
        assert_eq!(profile_of_dir(dir), Some(profile), "{profile}");
    }
    assert_eq!(profile_dir("test"), "debug");
    assert_eq!(profile_dir("bench"), "release");
    for never in ["dev", "test", "bench", "", "a.b", "-x", "a b", "ü"] {
        assert_eq!(profile_of_dir(never), None, "{never}");
    }
    let layout = built_for("x86_64-unknown-linux-gnu", "dev");
    assert_eq!(
        layout.dir(Path::new("/c")),
        Path::new("/c/x86_64-unknown-linux-gnu/debug")
    );
    assert_eq!(host("bench").dir(Path::new("/c")), Path::new("/c/release"));
}

#[test]
fn links_are_followed_as_cargo_follows_them_and_a_missing_root_has_none() {
    let elsewhere = tree(&["release/.fingerprint/", "x/debug/.fingerprint/"]);
    let root = tree(&["debug/.fingerprint/"]);
    symlink(
        elsewhere.path().join("release"),
        root.path().join("release"),
    )
    .unwrap();
    symlink(
        elsewhere.path().join("x"),
        root.path().join("aarch64-apple-darwin"),
    )
    .unwrap();
    symlink(root.path().join("gone"), root.path().join("dangling")).unwrap();
    assert_eq!(
        output_layouts(root.path()).unwrap(),
        vec![
            host("dev"),
            host("release"),
            built_for("aarch64-apple-darwin", "dev")
        ]
    );
    assert_eq!(
        output_layouts(&root.path().join("missing")).unwrap(),
        vec![]
    );
}

#[test]
fn an_unreadable_directory_is_an_error_naming_it() {
    use std::os::unix::fs::PermissionsExt;
    let root = tree(&["sealed/debug/.fingerprint/"]);
    let sealed = root.path().join("sealed");
    fs::set_permissions(&sealed, fs::Permissions::from_mode(0o000)).unwrap();
    let outcome = output_layouts(root.path());
    fs::set_permissions(&sealed, fs::Permissions::from_mode(0o755)).unwrap();
    if nix::unistd::geteuid().is_root() {
        // Root reads through any mode: the directory is a target's as laid out.
        assert_eq!(outcome.unwrap(), vec![built_for("sealed", "dev")]);
        return;
    }
    let err = outcome.unwrap_err();
    assert_eq!(err.code(), "EACCES", "{err}");
    assert!(err.message().contains("sealed"), "{err}");
}
