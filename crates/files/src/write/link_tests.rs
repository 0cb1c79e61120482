//! Where writes land: the symlink matrix, table-driven, plus the directory
//! swapped for a link between the check and the write.

use std::{fs, os::unix::fs::symlink, path::Path};

use crate::{Change, Expect, Last, Scope, apply};

/// A working directory `cwd` and a folder `outside` beside it.
struct Tree {
    _dir: tempfile::TempDir,
    cwd: std::path::PathBuf,
    outside: std::path::PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let (cwd, outside) = (base.join("cwd"), base.join("outside"));
    fs::create_dir_all(cwd.join("d/e")).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(cwd.join("in.txt"), "in").unwrap();
    fs::write(outside.join("f"), "outside").unwrap();
    Tree {
        _dir: dir,
        cwd,
        outside,
    }
}

/// Every file below `dir`, with its contents.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            out.extend(snapshot(&path));
        } else {
            out.push((
                path.display().to_string(),
                fs::read(&path).unwrap_or_default(),
            ));
        }
    }
    out.sort();
    out
}

#[test]
fn writes_through_links_are_decided_on_the_real_location() {
    // (links to create in cwd: name -> target, path written, lands at (relative to cwd) or None when refused)
    type Case = (
        &'static str,
        &'static [(&'static str, &'static str)],
        &'static str,
        Option<&'static str>,
    );
    let cases: &[Case] = &[
        ("plain file", &[], "new.txt", Some("new.txt")),
        ("missing parents", &[], "a/b/c.txt", Some("a/b/c.txt")),
        ("dot-dot inside", &[], "d/e/../../x.txt", Some("x.txt")),
        ("dot-dot out", &[], "../outside/g", None),
        ("direct link out", &[("out", "@/")], "out/x", None),
        ("link to a file out", &[("f", "@/f")], "f", None),
        (
            "link to link out",
            &[("l1", "l2"), ("l2", "@/f")],
            "l1",
            None,
        ),
        (
            "dangling link through an in-cwd link",
            &[("sub", "@/"), ("a", "sub/new")],
            "a",
            None,
        ),
        (
            "link target with .. out",
            &[("d/up", "../../outside/f")],
            "d/up",
            None,
        ),
        (
            "link target with .. inside",
            &[("d/e/up", "../../in.txt")],
            "d/e/up",
            Some("in.txt"),
        ),
        (
            "absolute link back inside",
            &[("back", "#/in.txt")],
            "back",
            Some("in.txt"),
        ),
        (
            "out and back through links",
            &[("sub", "@/"), ("@/back", "#/d")],
            "sub/back/z",
            Some("d/z"),
        ),
        (
            "dot-dot after a link is applied to the real directory",
            &[("deep", "@/")],
            "deep/../cwd/k",
            Some("k"),
        ),
        (
            "dot-dot after an inside link",
            &[("inner", "d/e")],
            "inner/../k2",
            Some("d/k2"),
        ),
        (
            "dangling link inside",
            &[("dang", "d/new.txt")],
            "dang",
            Some("d/new.txt"),
        ),
    ];
    for (name, links, path, lands) in cases {
        let t = tree();
        for (link, target) in *links {
            let at = |s: &str| {
                s.replace('@', &t.outside.display().to_string())
                    .replace('#', &t.cwd.display().to_string())
            };
            let link = at(link);
            let link_path = if link.starts_with('/') {
                link.into()
            } else {
                t.cwd.join(link)
            };
            symlink(at(target), link_path).unwrap();
        }
        let before = snapshot(&t.outside);
        let scope = Scope::confined(&t.cwd).unwrap();
        let change = Change::Write {
            path: path.into(),
            data: b"written".to_vec(),
            expect: Expect::Any,
            executable: None,
        };
        let result = apply(&scope, &[change]);
        match lands {
            Some(rel) => {
                let applied = result.unwrap_or_else(|err| panic!("{name}: {err}"));
                assert_eq!(applied.outcomes[0].path, t.cwd.join(rel), "{name}");
                assert_eq!(fs::read(t.cwd.join(rel)).unwrap(), b"written", "{name}");
            }
            None => {
                let err = result.expect_err(name);
                assert_eq!(err.code(), "EXDEV", "{name}: {err}");
                assert!(err.message().contains(path), "{name}: {err}");
            }
        }
        assert_eq!(snapshot(&t.outside), before, "{name}: outside changed");
    }
}

#[test]
fn a_link_loop_is_an_error_not_a_hang() {
    let t = tree();
    symlink("b", t.cwd.join("a")).unwrap();
    symlink("a", t.cwd.join("b")).unwrap();
    let err = Scope::confined(&t.cwd)
        .unwrap()
        .locate(Path::new("a"), Last::Follow)
        .unwrap_err();
    assert!(err.message().contains("symlinks"), "{err}");
}

#[test]
fn a_directory_swapped_for_a_link_after_the_check_still_gets_the_write_inside() {
    let t = tree();
    let scope = Scope::confined(&t.cwd).unwrap();
    let mut location = scope.locate(Path::new("d/e/f.txt"), Last::Follow).unwrap();
    // Between the check and the write, d is moved away and replaced by a link out.
    fs::rename(t.cwd.join("d"), t.cwd.join("moved")).unwrap();
    symlink(&t.outside, t.cwd.join("d")).unwrap();
    crate::write::write_at(
        &mut crate::journal::Journal::default(),
        &mut location,
        Path::new("d/e/f.txt"),
        &late(),
    )
    .unwrap();
    assert_eq!(fs::read(t.cwd.join("moved/e/f.txt")).unwrap(), b"late");
    assert_eq!(
        snapshot(&t.outside),
        vec![(
            t.outside.join("f").display().to_string(),
            b"outside".to_vec()
        )]
    );
}

#[test]
fn a_directory_removed_after_the_check_fails_the_write() {
    let t = tree();
    let scope = Scope::confined(&t.cwd).unwrap();
    let mut location = scope.locate(Path::new("d/e/f.txt"), Last::Follow).unwrap();
    fs::remove_dir(t.cwd.join("d/e")).unwrap();
    symlink(&t.outside, t.cwd.join("d/e")).unwrap();
    let err = crate::write::write_at(
        &mut crate::journal::Journal::default(),
        &mut location,
        Path::new("d/e/f.txt"),
        &late(),
    )
    .unwrap_err();
    assert_eq!(err.code(), "ENOENT", "{err}");
    assert_eq!(snapshot(&t.outside).len(), 1);
}

#[test]
fn unconfined_scopes_follow_links_anywhere() {
    let t = tree();
    symlink(t.outside.join("f"), t.cwd.join("f")).unwrap();
    let scope = Scope::unconfined(&t.cwd).unwrap();
    let location = scope.locate(Path::new("f"), Last::Follow).unwrap();
    assert_eq!(location.real_path(), t.outside.join("f"));
    let entry = scope.locate(Path::new("f"), Last::Entry).unwrap();
    assert_eq!(entry.real_path(), t.cwd.join("f"));
}

fn late() -> crate::write::NewContents<'static> {
    crate::write::NewContents {
        data: b"late",
        expect: Expect::Any,
        executable: None,
    }
}
