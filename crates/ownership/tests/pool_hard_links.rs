//! Why a pool never seeds a member with hard links: cargo rewrites files of
//! a target directory in place.
//!
//! A crate whose build script reads a file is built into target A; A is
//! copied to B as hard links (what `cp -al` makes); the file changes and
//! the crate is built into B. Cargo then truncates and rewrites, through the
//! inode A shares, the build script's `output` (and its fingerprints and
//! dep-info): A's record of its own build now describes B's. Measured with
//! cargo 1.95: the build script's `output`, `root-output` and
//! `invoked.timestamp`, the fingerprints and the `.d` file are rewritten in
//! place; rustc's outputs are replaced by new files.
//!
//! Offline, no dependencies.

use std::{
    collections::BTreeMap,
    fs,
    os::unix::fs::MetadataExt,
    path::{Path, PathBuf},
    process::Command,
    time::SystemTime,
};

use natives_ownership::fresh::Cargo;

const MANIFEST: &str = r#"[package]
name = "flavoured"
version = "0.1.0"
edition = "2021"

[workspace]
"#;

const BUILD_SCRIPT: &str = r#"fn main() {
    println!("cargo:rerun-if-changed=flavour.txt");
    let flavour = std::fs::read_to_string("flavour.txt").unwrap();
    println!("cargo:rustc-env=FLAVOUR={}", flavour.trim());
}
"#;

const LIB: &str = "pub fn flavour() -> &'static str {\n    env!(\"FLAVOUR\")\n}\n";

#[test]
fn cargo_rewrites_a_hard_linked_target_directory_in_place() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let krate = root.join("crate");
    for (rel, text) in [
        ("Cargo.toml", MANIFEST),
        ("build.rs", BUILD_SCRIPT),
        ("src/lib.rs", LIB),
        ("flavour.txt", "one"),
    ] {
        fs::create_dir_all(krate.join(rel).parent().unwrap()).unwrap();
        fs::write(krate.join(rel), text).unwrap();
    }
    let (a, b) = (root.join("a"), root.join("b"));
    build(&krate, &a);
    let before = contents(&a);
    link_tree(&a, &b);
    fs::write(krate.join("flavour.txt"), "two").unwrap();
    build(&krate, &b);
    let after = contents(&a);
    let rewritten: Vec<&PathBuf> = before
        .iter()
        .filter(|(path, old)| after.get(*path).is_some_and(|new| new != *old))
        .map(|(path, _)| path)
        .collect();
    println!("rewritten in A through B's hard links: {rewritten:#?}");
    let output = rewritten
        .iter()
        .find(|path| path.starts_with("debug/build") && path.ends_with("output"))
        .expect("the build script's output was not rewritten in place");
    let text = fs::read_to_string(a.join(output)).unwrap();
    assert!(text.contains("FLAVOUR=two"), "A's output now says: {text}");
}

fn build(krate: &Path, target: &Path) {
    let status = Command::new(Cargo::default().program)
        .args(["build", "--offline", "-q"])
        .current_dir(krate)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("CARGO_BUILD_BUILD_DIR")
        .status()
        .unwrap();
    assert!(status.success());
}

/// Every file under `dir` (relative) with its inode, modification time and
/// bytes.
fn contents(dir: &Path) -> BTreeMap<PathBuf, (u64, SystemTime, Vec<u8>)> {
    let mut found = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(next) = stack.pop() {
        for item in fs::read_dir(&next).unwrap() {
            let path = item.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else if meta.is_file() {
                let rel = path.strip_prefix(dir).unwrap().to_owned();
                let modified = meta.modified().unwrap();
                found.insert(rel, (meta.ino(), modified, fs::read(&path).unwrap()));
            }
        }
    }
    found
}

/// `cp -al from to`: directories made, files hard-linked.
fn link_tree(from: &Path, to: &Path) {
    fs::create_dir(to).unwrap();
    for item in fs::read_dir(from).unwrap() {
        let path = item.unwrap().path();
        let dest = to.join(path.file_name().unwrap());
        if fs::symlink_metadata(&path).unwrap().is_dir() {
            link_tree(&path, &dest);
        } else {
            fs::hard_link(&path, &dest).unwrap();
        }
    }
}
