//! Resolution as the kernel walks a path: deep and long paths, a trailing
//! slash, and the lenient walk invalidation uses. (Where writes land
//! through links is tested beside the writes, in natives-files.)

use std::{
    fs,
    os::unix::fs::symlink,
    path::{Path, PathBuf},
};

use super::{Last, MAX_PATH_BYTES, Scope};

fn real_tempdir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let real = fs::canonicalize(dir.path()).unwrap();
    (dir, real)
}

/// `levels` one-letter directories below `root`, created through handles
/// (their full path is past what `mkdir -p` could take).
fn deep_dirs(root: &Path, levels: usize) -> PathBuf {
    let mut dir = fs::File::open(root).unwrap();
    for _ in 0..levels {
        nix::sys::stat::mkdirat(&dir, "d", nix::sys::stat::Mode::from_bits_truncate(0o755))
            .unwrap();
        dir = fs::File::from(
            nix::fcntl::openat(
                &dir,
                "d",
                nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_DIRECTORY,
                nix::sys::stat::Mode::empty(),
            )
            .unwrap(),
        );
    }
    PathBuf::from("d/".repeat(levels))
}

#[test]
fn a_path_past_path_max_is_refused_before_any_lookup() {
    let (_dir, root) = real_tempdir();
    let scope = Scope::confined(&root).unwrap();
    for levels in [2_400, 10_000, 100_000] {
        let path = PathBuf::from("d/".repeat(levels) + "f");
        let err = scope.locate(&path, Last::Follow).unwrap_err();
        assert_eq!(err.code(), "ENAMETOOLONG", "{levels}: {err}");
        assert!(
            err.message().contains(&format!("{MAX_PATH_BYTES}")),
            "{err}"
        );
        assert!(
            err.message().len() < 400,
            "the message names the start only: {err}"
        );
    }
}

#[test]
fn a_real_location_past_path_max_is_refused_even_when_the_given_path_is_short() {
    let (_dir, root) = real_tempdir();
    let deep = deep_dirs(&root, 2_100);
    // Two hops, each link's text within PATH_MAX, lead past it.
    let half = "d/".repeat(1_000);
    symlink(&half, root.join("hop")).unwrap();
    symlink("d/".repeat(1_100), root.join(&half).join("hop")).unwrap();
    assert!(root.join(&deep).as_os_str().len() > MAX_PATH_BYTES);
    let scope = Scope::confined(&root).unwrap();
    let err = scope
        .locate(Path::new("hop/hop/f"), Last::Follow)
        .unwrap_err();
    assert_eq!(err.code(), "ENAMETOOLONG", "{err}");
}

#[test]
fn a_deep_path_within_path_max_resolves_one_lookup_per_component() {
    let (_dir, root) = real_tempdir();
    let levels = (MAX_PATH_BYTES - root.as_os_str().len() - 16) / 2;
    let deep = deep_dirs(&root, levels);
    let scope = Scope::confined(&root).unwrap();
    let location = scope.locate(&deep.join("f"), Last::Follow).unwrap();
    assert_eq!(location.real_path(), root.join(&deep).join("f"));
}

#[test]
fn a_trailing_slash_names_a_directory() {
    let (_dir, root) = real_tempdir();
    fs::write(root.join("file"), "x").unwrap();
    fs::create_dir(root.join("dir")).unwrap();
    let scope = Scope::confined(&root).unwrap();
    for path in ["file/", "file/."] {
        let err = scope.locate(Path::new(path), Last::Follow).unwrap_err();
        assert_eq!(err.code(), "ENOTDIR", "{path}: {err}");
    }
    for path in ["dir/", "newdir/", "file"] {
        scope.locate(Path::new(path), Last::Follow).unwrap();
    }
    assert!(super::names_a_directory(Path::new("newdir/")));
    assert!(!super::names_a_directory(Path::new("newdir")));
}

/// What invalidation names: the place the filesystem reaches, with `..`
/// applied to the real directory a link leads to, never folded by text.
#[test]
fn reach_names_what_the_filesystem_reaches_even_past_a_missing_or_broken_part() {
    let (_dir, root) = real_tempdir();
    fs::create_dir_all(root.join("sub/deep")).unwrap();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(root.join("file"), "x").unwrap();
    symlink("sub/deep", root.join("link")).unwrap();
    symlink("loop", root.join("loop")).unwrap();
    let scope = Scope::unconfined(&root).unwrap();
    let long = "d/".repeat(3_000) + "x";
    let table: &[(&str, Last, &str)] = &[
        ("link/../x", Last::Entry, "sub/x"),
        ("link/../../file", Last::Entry, "file"),
        ("link", Last::Entry, "link"),
        ("link", Last::Follow, "sub/deep"),
        ("src/new/../x.ts", Last::Entry, "src/x.ts"),
        ("src/gone/deeper/x.ts", Last::Entry, "src/gone/deeper/x.ts"),
        ("src/gone/..", Last::Entry, "src"),
        ("file/below", Last::Entry, ""),
        ("loop/x", Last::Entry, ""),
        ("/", Last::Entry, "/"),
    ];
    for (path, last, expected) in table {
        let expected = match *expected {
            "/" => PathBuf::from("/"),
            rel => root.join(rel),
        };
        let expected = if expected == root.join("") {
            root.clone()
        } else {
            expected
        };
        assert_eq!(
            scope.reach(Path::new(path), *last).unwrap(),
            expected,
            "{}",
            &path[..path.len().min(40)]
        );
    }
    // Past PATH_MAX: the longest leading part that keeps within it, a directory holding the rest.
    let reached = scope.reach(Path::new(&long), Last::Entry).unwrap();
    assert!(reached.as_os_str().len() <= MAX_PATH_BYTES);
    assert!(reached.starts_with(&root) && root.join(&long).starts_with(&reached));
    assert_eq!(
        scope.reach(Path::new(""), Last::Entry).unwrap_err().code(),
        "EINVAL"
    );
}
