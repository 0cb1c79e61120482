//! What a replace keeps and what it refuses.

use std::{
    fs,
    os::unix::fs::{MetadataExt, PermissionsExt, symlink},
    path::Path,
};

use xattr::FileExt;

use crate::{Change, Expect, Limit, Scope, apply, read_file};

fn write(
    scope: &Scope,
    path: &str,
    data: &[u8],
    expect: Expect,
) -> natives_core::Result<crate::Applied> {
    apply(
        scope,
        &[Change::Write {
            path: path.into(),
            data: data.to_vec(),
            expect,
            executable: None,
        }],
    )
}

#[test]
fn a_replaced_file_keeps_mode_owner_group_and_extended_attributes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.sh");
    fs::write(&file, "old").unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o750)).unwrap();
    let privileged = nix::unistd::geteuid().is_root();
    if privileged {
        std::os::unix::fs::chown(&file, Some(1234), Some(5678)).unwrap();
    }
    let with_xattr = fs::File::open(&file)
        .unwrap()
        .set_xattr("user.natives.test", b"kept")
        .is_ok();
    let scope = Scope::confined(dir.path()).unwrap();
    let applied = write(&scope, "f.sh", b"new", Expect::Any).unwrap();
    assert!(!applied.outcomes[0].created);
    let meta = fs::metadata(&file).unwrap();
    assert_eq!(fs::read(&file).unwrap(), b"new");
    assert_eq!(meta.mode() & 0o7777, 0o750);
    if privileged {
        assert_eq!((meta.uid(), meta.gid()), (1234, 5678));
    }
    if with_xattr {
        let value = fs::File::open(&file)
            .unwrap()
            .get_xattr("user.natives.test")
            .unwrap();
        assert_eq!(value.as_deref(), Some(&b"kept"[..]));
    }
    // No temporary file is left beside it.
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn read_only_hard_linked_and_special_targets_are_refused_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("ro"), "ro").unwrap();
    fs::set_permissions(root.join("ro"), fs::Permissions::from_mode(0o444)).unwrap();
    fs::write(root.join("linked"), "linked").unwrap();
    fs::hard_link(root.join("linked"), root.join("other-name")).unwrap();
    nix::unistd::mkfifo(
        &root.join("pipe"),
        nix::sys::stat::Mode::from_bits_truncate(0o644),
    )
    .unwrap();
    fs::create_dir(root.join("dir")).unwrap();
    let scope = Scope::confined(root).unwrap();
    let cases = [
        ("ro", "EPERM", "read-only (mode 0444)"),
        ("linked", "EMLINK", "2 hard links"),
        ("pipe", "EFTYPE", "a FIFO"),
        ("dir", "EISDIR", "directory"),
    ];
    for (path, code, words) in cases {
        let err = write(&scope, path, b"changed", Expect::Any).unwrap_err();
        assert_eq!(err.code(), code, "{path}: {err}");
        assert!(err.message().contains(words), "{path}: {err}");
    }
    assert_eq!(fs::read(root.join("ro")).unwrap(), b"ro");
    assert_eq!(fs::read(root.join("other-name")).unwrap(), b"linked");
    assert_eq!(fs::metadata(root.join("linked")).unwrap().nlink(), 2);
}

#[test]
fn a_write_through_a_link_replaces_the_target_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    fs::write(root.join("target.txt"), "old").unwrap();
    symlink("target.txt", root.join("link")).unwrap();
    let scope = Scope::confined(&root).unwrap();
    let applied = write(&scope, "link", b"new", Expect::Any).unwrap();
    assert_eq!(applied.outcomes[0].path, root.join("target.txt"));
    assert!(
        fs::symlink_metadata(root.join("link"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read(root.join("target.txt")).unwrap(), b"new");
}

#[test]
fn expectations_refuse_a_file_that_changed_appeared_or_vanished() {
    let dir = tempfile::tempdir().unwrap();
    let scope = Scope::confined(dir.path()).unwrap();
    fs::write(dir.path().join("f"), "v1").unwrap();
    let stamp = read_file(&scope, Path::new("f"), Limit::default())
        .unwrap()
        .stamp;
    fs::write(dir.path().join("f"), "version 2").unwrap();
    let err = write(&scope, "f", b"mine", Expect::Unchanged(stamp)).unwrap_err();
    assert_eq!(err.code(), "ESTALE", "{err}");
    assert_eq!(fs::read(dir.path().join("f")).unwrap(), b"version 2");
    let err = write(&scope, "f", b"mine", Expect::Absent).unwrap_err();
    assert_eq!(err.code(), "EEXIST", "{err}");
    fs::remove_file(dir.path().join("f")).unwrap();
    let err = write(&scope, "f", b"mine", Expect::Unchanged(stamp)).unwrap_err();
    assert_eq!(err.code(), "ESTALE", "{err}");
    assert!(!dir.path().join("f").exists());
}

#[test]
fn a_failed_write_leaves_no_directory_it_created() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir(root.join("locked")).unwrap();
    let scope = Scope::confined(root).unwrap();
    // A FIFO where the file should go: refused before any directory is made.
    nix::unistd::mkfifo(
        &root.join("locked/pipe"),
        nix::sys::stat::Mode::from_bits_truncate(0o644),
    )
    .unwrap();
    write(&scope, "locked/pipe", b"x", Expect::Any).unwrap_err();
    // A name too long for the filesystem fails after the parents were created.
    let long = format!("a/b/{}", "n".repeat(300));
    let err = write(&scope, &long, b"x", Expect::Any).unwrap_err();
    assert!(
        err.message().contains("name too long") || err.message().contains("File name too long"),
        "{err}"
    );
    assert!(!root.join("a").exists(), "created parents were left behind");
}

#[test]
fn executable_sets_or_clears_execute_where_read_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let scope = Scope::confined(dir.path()).unwrap();
    fs::write(dir.path().join("old.sh"), "old").unwrap();
    fs::set_permissions(dir.path().join("old.sh"), fs::Permissions::from_mode(0o640)).unwrap();
    fs::write(dir.path().join("tool"), "old").unwrap();
    fs::set_permissions(dir.path().join("tool"), fs::Permissions::from_mode(0o755)).unwrap();
    let umask = 0o022; // the test sets it: new files get 0o777 & !umask
    nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(umask));
    for (path, executable, mode) in [
        ("new.sh", true, 0o755),
        ("old.sh", true, 0o750),
        ("tool", false, 0o644),
        ("plain", false, 0o644),
    ] {
        let change = Change::Write {
            path: path.into(),
            data: b"#!/bin/sh\n".to_vec(),
            expect: Expect::Any,
            executable: Some(executable),
        };
        apply(&scope, &[change]).unwrap();
        assert_eq!(
            fs::metadata(dir.path().join(path)).unwrap().mode() & 0o7777,
            mode,
            "{path}"
        );
    }
}

/// Another writer rewrites the file in place, keeping its size, and puts
/// the mtime back (as `cp -p` or `rsync --inplace -t` do): only the
/// status-change time tells, and the stamp must see it.
#[test]
fn a_rewrite_in_place_with_the_mtime_put_back_is_still_a_change() {
    use std::{io::Write, time::Duration};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    fs::write(&file, "name=A\n").unwrap();
    let scope = Scope::confined(dir.path()).unwrap();
    let stamp = read_file(&scope, Path::new("f"), Limit::default())
        .unwrap()
        .stamp;
    let before = fs::metadata(&file).unwrap();
    // The other writer; retried until the clock has moved on, so its status change is visible.
    while fs::metadata(&file).unwrap().ctime_nsec() == before.ctime_nsec()
        && fs::metadata(&file).unwrap().ctime() == before.ctime()
    {
        std::thread::sleep(Duration::from_millis(5));
        let mut other = fs::OpenOptions::new().write(true).open(&file).unwrap();
        other.write_all(b"name=B\n").unwrap();
        other
            .set_times(fs::FileTimes::new().set_modified(before.modified().unwrap()))
            .unwrap();
    }
    let now = fs::metadata(&file).unwrap();
    assert_eq!(
        (now.len(), now.mtime(), now.mtime_nsec(), now.ino()),
        (
            before.len(),
            before.mtime(),
            before.mtime_nsec(),
            before.ino()
        ),
        "the precondition: size, mtime and inode as they were"
    );
    let err = write(&scope, "f", b"mine\n", Expect::Unchanged(stamp)).unwrap_err();
    assert_eq!(err.code(), "ESTALE", "{err}");
    assert_eq!(fs::read(&file).unwrap(), b"name=B\n");
}

/// A batch's own undo expects the version it wrote: the rename into place
/// moves that version's status-change time, so the stamp is taken after it.
#[test]
fn a_failed_batch_restores_a_file_it_wrote_whatever_its_status_change_time() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a"), "old a").unwrap();
    fs::write(dir.path().join("ro"), "ro").unwrap();
    fs::set_permissions(dir.path().join("ro"), fs::Permissions::from_mode(0o444)).unwrap();
    let scope = Scope::confined(dir.path()).unwrap();
    let changes = [
        Change::Write {
            path: "a".into(),
            data: b"new a".to_vec(),
            expect: Expect::Any,
            executable: None,
        },
        Change::Write {
            path: "ro".into(),
            data: b"x".to_vec(),
            expect: Expect::Any,
            executable: None,
        },
    ];
    let err = apply(&scope, &changes).unwrap_err();
    assert_eq!(err.code(), "EPERM", "{err}");
    assert!(!err.message().contains("undoing"), "{err}");
    assert_eq!(fs::read(dir.path().join("a")).unwrap(), b"old a");
}

#[test]
fn a_path_ending_in_a_slash_is_never_written_as_a_file() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("file"), "x").unwrap();
    let scope = Scope::confined(dir.path()).unwrap();
    for (path, code) in [
        ("newdir/", "EISDIR"),
        ("newdir/.", "EISDIR"),
        ("file/", "EISDIR"),
    ] {
        let err = write(&scope, path, b"x", Expect::Any).unwrap_err();
        assert_eq!(err.code(), code, "{path}: {err}");
        assert!(err.message().contains(path), "{err}");
    }
    assert!(!dir.path().join("newdir").exists());
    assert_eq!(fs::read(dir.path().join("file")).unwrap(), b"x");
    let err = read_file(&scope, Path::new("file/"), Limit::default()).unwrap_err();
    assert_eq!(err.code(), "ENOTDIR", "{err}");
}

#[test]
fn a_path_past_path_max_is_refused_at_once_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let scope = Scope::confined(dir.path()).unwrap();
    for levels in [2_400, 10_000] {
        let path = "d/".repeat(levels) + "f";
        let err = write(&scope, &path, b"x", Expect::Any).unwrap_err();
        assert_eq!(err.code(), "ENAMETOOLONG", "{err}");
        let err = read_file(&scope, Path::new(&path), Limit::default()).unwrap_err();
        assert_eq!(err.code(), "ENAMETOOLONG", "{err}");
    }
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}
