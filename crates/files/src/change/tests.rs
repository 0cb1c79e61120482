//! Batches: all or nothing, byte for byte.

use std::{
    fs,
    os::unix::fs::{PermissionsExt, symlink},
    path::{Path, PathBuf},
};

use crate::{ApplyOptions, Change, Expect, Scope, apply};

fn tree() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    fs::write(root.join("a.txt"), "a\r\nold\r\n").unwrap();
    fs::write(root.join("b.txt"), b"b\xe9\xff").unwrap();
    fs::write(root.join("c.txt"), "c").unwrap();
    fs::write(root.join("ro.txt"), "ro").unwrap();
    fs::set_permissions(root.join("ro.txt"), fs::Permissions::from_mode(0o444)).unwrap();
    (dir, root)
}

/// Every entry below `dir` (relative path, kind, bytes or link target).
fn snapshot(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let meta = fs::symlink_metadata(&path).unwrap();
            let what = if meta.file_type().is_symlink() {
                format!("link {}", fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                stack.push(path.clone());
                "dir".into()
            } else {
                format!(
                    "{:o} {:?}",
                    meta.permissions().mode() & 0o7777,
                    fs::read(&path).unwrap()
                )
            };
            out.push((rel, what));
        }
    }
    out.sort();
    out
}

fn mixed_batch(last: Change) -> Vec<Change> {
    vec![
        Change::Write {
            path: "a.txt".into(),
            data: b"a\r\nnew\r\n".to_vec(),
            expect: Expect::Any,
            executable: None,
        },
        Change::Delete {
            path: "b.txt".into(),
            expect: Expect::Any,
        },
        Change::Rename {
            from: "c.txt".into(),
            to: "d/e/c2.txt".into(),
            expect: Expect::Any,
        },
        Change::Write {
            path: "new/dir/x.txt".into(),
            data: b"x".to_vec(),
            expect: Expect::Absent,
            executable: None,
        },
        last,
    ]
}

#[test]
fn a_failing_change_undoes_every_earlier_one_byte_for_byte() {
    let failures = [
        (
            "read-only target",
            Change::Write {
                path: "ro.txt".into(),
                data: vec![],
                expect: Expect::Any,
                executable: None,
            },
            "EPERM",
        ),
        (
            "rename onto an existing file",
            Change::Rename {
                from: "ro.txt".into(),
                to: "a.txt".into(),
                expect: Expect::Any,
            },
            "EEXIST",
        ),
        (
            "delete of a missing file",
            Change::Delete {
                path: "gone.txt".into(),
                expect: Expect::Any,
            },
            "ENOENT",
        ),
        (
            "creation over the file an earlier change wrote",
            Change::Write {
                path: "new/dir/x.txt".into(),
                data: vec![],
                expect: Expect::Absent,
                executable: None,
            },
            "EEXIST",
        ),
    ];
    for (name, last, code) in failures {
        let (_dir, root) = tree();
        let before = snapshot(&root);
        let scope = Scope::confined(&root).unwrap();
        let err = apply(&scope, &mixed_batch(last)).unwrap_err();
        assert_eq!(err.code(), code, "{name}: {err}");
        assert_eq!(snapshot(&root), before, "{name}");
    }
}

/// The escape target is a folder this test owns, beside the root: were the
/// confinement broken, the write would land there, not on the machine.
#[test]
fn a_path_outside_anywhere_in_the_batch_refuses_it_before_any_change() {
    let (_dir, root) = tree();
    let outside_dir = tempfile::tempdir().unwrap();
    let outside = fs::canonicalize(outside_dir.path()).unwrap();
    fs::create_dir(outside.join("tmp")).unwrap();
    let before = snapshot(&root);
    symlink(&outside, root.join("out")).unwrap();
    let scope = Scope::confined(&root).unwrap();
    let last = Change::Write {
        path: "out/tmp/escaped.txt".into(),
        data: vec![],
        expect: Expect::Any,
        executable: None,
    };
    let err = apply(&scope, &mixed_batch(last)).unwrap_err();
    assert_eq!(err.code(), "EXDEV", "{err}");
    fs::remove_file(root.join("out")).unwrap();
    assert_eq!(snapshot(&root), before);
    assert_eq!(snapshot(&outside), [("tmp".to_string(), "dir".to_string())]);
}

#[test]
fn a_successful_batch_leaves_exactly_its_changes() {
    let (_dir, root) = tree();
    let scope = Scope::confined(&root).unwrap();
    let last = Change::Write {
        path: "c-new.txt".into(),
        data: b"made".to_vec(),
        expect: Expect::Absent,
        executable: None,
    };
    let applied = apply(&scope, &mixed_batch(last)).unwrap();
    let names: Vec<_> = snapshot(&root).into_iter().map(|(rel, _)| rel).collect();
    assert_eq!(
        names,
        [
            "a.txt",
            "c-new.txt",
            "d",
            "d/e",
            "d/e/c2.txt",
            "new",
            "new/dir",
            "new/dir/x.txt",
            "ro.txt"
        ]
    );
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"a\r\nnew\r\n");
    let created: Vec<bool> = applied.outcomes.iter().map(|o| o.created).collect();
    assert_eq!(created, [false, false, false, true, true]);
    for path in [
        "a.txt",
        "b.txt",
        "c.txt",
        "d",
        "d/e/c2.txt",
        "new",
        "new/dir/x.txt",
        "c-new.txt",
    ] {
        assert!(
            applied.touched.contains(&root.join(path)),
            "{path} not in {:?}",
            applied.touched
        );
    }
}

#[test]
fn renaming_or_deleting_a_symlink_acts_on_the_link() {
    let (_dir, root) = tree();
    symlink("c.txt", root.join("link")).unwrap();
    let scope = Scope::confined(&root).unwrap();
    // The version read through the link is what the rename expects.
    let read = crate::read_file(&scope, Path::new("link"), crate::Limit::default()).unwrap();
    let rename = Change::Rename {
        from: "link".into(),
        to: "sub/moved-link".into(),
        expect: Expect::Unchanged(read.stamp),
    };
    apply(&scope, &[rename]).unwrap();
    let moved = root.join("sub/moved-link");
    assert!(
        fs::symlink_metadata(&moved)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read_link(&moved).unwrap(), Path::new("c.txt"));
    apply(
        &scope,
        &[Change::Delete {
            path: "sub/moved-link".into(),
            expect: Expect::Any,
        }],
    )
    .unwrap();
    assert!(fs::symlink_metadata(&moved).is_err());
    assert_eq!(fs::read(root.join("c.txt")).unwrap(), b"c");
}

#[test]
fn every_batch_invalidates_the_scans_that_saw_its_paths() {
    use natives_scan::{CancelToken, GlobOptions, cache};
    let (_dir, root) = tree();
    let names = |root: &Path| {
        let mut options = GlobOptions::new("*.txt", root);
        options.cache = true;
        let mut found = Vec::new();
        natives_scan::glob(
            &options,
            cache::global(),
            &CancelToken::new(),
            &mut |entry| found.push(String::from_utf8_lossy(entry.path).into_owned()),
        )
        .unwrap();
        found
    };
    assert_eq!(names(&root), ["a.txt", "b.txt", "c.txt", "ro.txt"]);
    let scope = Scope::confined(&root).unwrap();
    apply(
        &scope,
        &[Change::Rename {
            from: "c.txt".into(),
            to: "z.txt".into(),
            expect: Expect::Any,
        }],
    )
    .unwrap();
    assert_eq!(names(&root), ["a.txt", "b.txt", "ro.txt", "z.txt"]);
    // A batch that fails and is undone invalidates too: the cache never saw its middle state, but it must
    // not keep a scan that raced it.
    let failing = [
        Change::Delete {
            path: "a.txt".into(),
            expect: Expect::Any,
        },
        Change::Write {
            path: "ro.txt".into(),
            data: vec![],
            expect: Expect::Any,
            executable: None,
        },
    ];
    apply(&scope, &failing).unwrap_err();
    assert_eq!(names(&root), ["a.txt", "b.txt", "ro.txt", "z.txt"]);
}

/// The point (0-based) the crash test's child dies at.
const CRASH_AT: &str = "NATIVES_FILES_CRASH_AT";
const CRASH_ROOT: &str = "NATIVES_FILES_CRASH_ROOT";
const CRASH_FAILING: &str = "NATIVES_FILES_CRASH_FAILING";
const CRASH_WORK: &str = "NATIVES_FILES_CRASH_WORK";

/// The batch the crash test kills: it ends with a creation, or (`failing`)
/// with a write to a read-only file, so the crash lands in the undoing.
fn crash_batch(failing: bool) -> Vec<Change> {
    let last = match failing {
        true => Change::Write {
            path: "ro.txt".into(),
            data: vec![],
            expect: Expect::Any,
            executable: None,
        },
        false => Change::Write {
            path: "c-new.txt".into(),
            data: b"made".to_vec(),
            expect: Expect::Absent,
            executable: None,
        },
    };
    mixed_batch(last)
}

/// How the crash test runs a batch: swapping old files aside, or copying
/// them (a filesystem that cannot swap).
#[derive(Clone, Copy, Debug)]
enum Keeping {
    Swap,
    Copy,
}

/// A real process applying a batch is SIGKILLed at each point in turn
/// (journaling, making the changes, committing, finishing, undoing); after
/// every crash, the next recovery leaves the tree exactly as it was before
/// the batch, or (once the batch committed) exactly as the batch made it:
/// no hidden file, no journal, no byte lost.
#[test]
fn a_crash_at_any_point_is_finished_or_rolled_back_by_the_next_recovery() {
    for keeping in [Keeping::Swap, Keeping::Copy] {
        for failing in [false, true] {
            let what = format!("{keeping:?}, failing batch: {failing}");
            let points = count_points(
                |root| {
                    drop(apply(
                        &Scope::confined(root).unwrap(),
                        &crash_batch(failing),
                    ))
                },
                keeping,
            );
            assert!(points >= 30, "{what}: only {points} crash points");
            let before = snapshot(&tree().1);
            let after = after_batch(failing, keeping);
            for point in 0..points {
                let (_dir, root) = tree();
                kill_child_at("batch", &root, point, failing, keeping);
                let what = format!("{what}, point {point} of {points}");
                nothing_lost(&root, &what);
                let said = journal_says(&root);
                // Every other time, the next batch in the directory recovers it rather than a sweep.
                match point % 2 {
                    0 => drop(crate::recover(&root).unwrap()),
                    _ => next_batch(&root),
                }
                let now = snapshot(&root);
                match said {
                    // As the journal says: committed is finished, anything else rolled back.
                    Some(true) => assert!(
                        now == after,
                        "{what}: a committed batch not finished: {now:#?}"
                    ),
                    Some(false) => {
                        assert!(now == before, "{what}: a batch not rolled back: {now:#?}")
                    }
                    None => assert!(
                        now == before || now == after,
                        "{what}: neither before nor after: {now:#?}"
                    ),
                }
            }
        }
    }
}

/// Recovery itself is killed at each of its points (after a batch died
/// just before its commit); the recovery after that still ends the batch
/// cleanly.
#[test]
fn a_recovery_killed_at_any_point_is_taken_up_by_the_next() {
    let keeping = Keeping::Swap;
    let points = count_points(
        |root| drop(apply(&Scope::confined(root).unwrap(), &crash_batch(false))),
        keeping,
    );
    let before = snapshot(&tree().1);
    let after = after_batch(false, keeping);
    // The last point before the commit is recorded: every change made, none finished.
    let before_commit = (0..points)
        .rev()
        .find(|&point| {
            let (_dir, root) = tree();
            kill_child_at("batch", &root, point, false, keeping);
            crate::recover(&root).unwrap();
            snapshot(&root) == before
        })
        .unwrap();
    let recovery_points = {
        let (_dir, root) = tree();
        kill_child_at("batch", &root, before_commit, false, keeping);
        natives_system::crash::count_points(|| drop(crate::recover(&root)))
    };
    assert!(
        recovery_points >= 5,
        "only {recovery_points} recovery points"
    );
    for point in 0..recovery_points {
        let (_dir, root) = tree();
        kill_child_at("batch", &root, before_commit, false, keeping);
        kill_child_at("recovery", &root, point, false, keeping);
        let what = format!("recovery killed at point {point} of {recovery_points}");
        nothing_lost(&root, &what);
        crate::recover(&root).unwrap();
        let now = snapshot(&root);
        assert!(
            now == before || now == after,
            "{what}: neither before nor after: {now:#?}"
        );
    }
}

/// Another batch in `root`, on a file of its own (removed again).
fn next_batch(root: &Path) {
    let other = Change::Write {
        path: "d/other.txt".into(),
        data: b"other".to_vec(),
        expect: Expect::Absent,
        executable: None,
    };
    apply(&Scope::confined(root).unwrap(), &[other]).unwrap();
    fs::remove_file(root.join("d/other.txt")).unwrap();
    let _ = fs::remove_dir(root.join("d"));
}

/// Whether the journal left in `root` records a commit; `None` when there
/// is no journal.
fn journal_says(root: &Path) -> Option<bool> {
    let dir = root.join(crate::journal::JOURNAL_DIR);
    let journals: Vec<String> = fs::read_dir(&dir)
        .ok()?
        .map(|entry| fs::read_to_string(entry.unwrap().path()).unwrap())
        .collect();
    (!journals.is_empty()).then(|| {
        journals
            .iter()
            .any(|text| text.contains(r#"{"record":"commit"}"#))
    })
}

/// The crash points `work` passes on a fresh tree.
fn count_points(work: impl FnOnce(&Path), keeping: Keeping) -> usize {
    let (_dir, root) = tree();
    with_keeping(keeping, || {
        natives_system::crash::count_points(|| work(&root))
    })
}

/// Run `work` with the environment a child of `keeping` has.
fn with_keeping<T>(keeping: Keeping, work: impl FnOnce() -> T) -> T {
    let _guard = ENV.lock().unwrap_or_else(|p| p.into_inner());
    // SAFETY: tests that read or write the environment hold `ENV`.
    unsafe {
        match keeping {
            Keeping::Copy => std::env::set_var(crate::write::NO_SWAP, "1"),
            Keeping::Swap => std::env::remove_var(crate::write::NO_SWAP),
        }
    }
    let result = work();
    unsafe { std::env::remove_var(crate::write::NO_SWAP) };
    result
}

static ENV: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// What the whole batch leaves when nothing goes wrong (or, failing, when
/// it is undone).
fn after_batch(failing: bool, keeping: Keeping) -> Vec<(String, String)> {
    let (_dir, root) = tree();
    with_keeping(keeping, || {
        drop(apply(
            &Scope::confined(&root).unwrap(),
            &crash_batch(failing),
        ))
    });
    snapshot(&root)
}

/// Run `work` ("batch" or "recovery") in a child process killed at `point`.
fn kill_child_at(work: &str, root: &Path, point: usize, failing: bool, keeping: Keeping) {
    use std::{os::unix::process::ExitStatusExt, process::Command};
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--ignored",
            "--exact",
            "change::tests::crash_child",
            "--nocapture",
        ])
        .env(CRASH_AT, point.to_string())
        .env(CRASH_ROOT, root)
        .env(CRASH_FAILING, failing.to_string())
        .env(CRASH_WORK, work);
    if let Keeping::Copy = keeping {
        command.env(crate::write::NO_SWAP, "1");
    }
    let output = command.output().unwrap();
    assert_eq!(
        output.status.signal(),
        Some(nix::libc::SIGKILL),
        "{work} at point {point}: {output:?}"
    );
}

/// The crash test's child: applies the batch (or recovers) and dies where it is told.
#[test]
#[ignore = "run by the crash tests in a child process"]
fn crash_child() {
    let root = PathBuf::from(std::env::var(CRASH_ROOT).unwrap());
    let failing = std::env::var(CRASH_FAILING).unwrap() == "true";
    let point = std::env::var(CRASH_AT).unwrap().parse().unwrap();
    natives_system::crash::install(Some(natives_system::crash::kill_at(point)));
    match std::env::var(CRASH_WORK).unwrap().as_str() {
        "batch" => drop(apply(
            &Scope::confined(&root).unwrap(),
            &crash_batch(failing),
        )),
        _ => drop(crate::recover(&root)),
    }
    unreachable!("the work passed its crash point without dying");
}

/// What [`tree`] and [`crash_batch`] may leave after a crash, before any
/// recovery: each file whole, old or new, and every byte of the old ones
/// somewhere (at its name, or kept hidden beside it).
fn nothing_lost(root: &Path, what: &str) {
    let read = |rel: &str| fs::read(root.join(rel)).ok();
    let hidden: Vec<String> = fs::read_dir(root)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect();
    let kept = |name: &str, bytes: &[u8]| {
        read(name).as_deref() == Some(bytes)
            || hidden
                .iter()
                .any(|h| h.starts_with(&format!(".{name}.")) && read(h).as_deref() == Some(bytes))
    };
    let one_of = |rel: &str, allowed: &[Option<&[u8]>]| {
        let found = read(rel);
        assert!(
            allowed.contains(&found.as_deref()),
            "{what}: {rel} holds {found:?}"
        );
    };
    one_of("a.txt", &[Some(b"a\r\nold\r\n"), Some(b"a\r\nnew\r\n")]);
    assert!(
        kept("a.txt", b"a\r\nold\r\n") || read("c-new.txt").is_some(),
        "{what}: a.txt's old bytes are gone"
    );
    one_of("ro.txt", &[Some(b"ro")]);
    one_of("new/dir/x.txt", &[None, Some(b"x")]);
    one_of("c-new.txt", &[None, Some(b"made")]);
    let c_places = [read("c.txt"), read("d/e/c2.txt")];
    assert_eq!(
        c_places.iter().flatten().collect::<Vec<_>>(),
        [b"c"],
        "{what}: c.txt is in {c_places:?}"
    );
    assert!(
        kept("b.txt", b"b\xe9\xff") || read("c-new.txt").is_some(),
        "{what}: b.txt's bytes are gone ({hidden:?})"
    );
    for name in &hidden {
        assert!(
            [".tmp", ".deleted", ".orig"]
                .iter()
                .any(|end| name.ends_with(end))
                || name == crate::journal::JOURNAL_DIR,
            "{what}: unexpected {name}"
        );
    }
}

#[test]
fn changes_are_confined_unless_a_caller_lifts_it_and_expect_nothing_by_default() {
    let (_dir, root) = tree();
    let scope = Scope::new(&root, ApplyOptions::default().confine).unwrap();
    assert_eq!(scope.root(), Some(root.as_path()));
    assert_eq!(Scope::new(&root, false).unwrap().root(), None);
    let write = Change::Write {
        path: "a.txt".into(),
        data: b"new".to_vec(),
        expect: Expect::default(),
        executable: None,
    };
    apply(&scope, &[write]).unwrap();
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"new");
}

/// One file named two ways in a batch is refused before anything changes,
/// naming both paths; two files whose paths read alike (`a` and `dir/../a`
/// through a linked `dir`) are two files, each changed where it is.
#[test]
fn a_batch_names_each_file_by_one_path() {
    let (_dir, root) = tree();
    fs::create_dir_all(root.join("sub/deep")).unwrap();
    fs::write(root.join("sub/a.txt"), "name=S\n").unwrap();
    symlink("sub/deep", root.join("dir")).unwrap();
    symlink("a.txt", root.join("b-link")).unwrap();
    let scope = Scope::confined(&root).unwrap();
    let write = |path: &str, data: &str| Change::Write {
        path: path.into(),
        data: data.as_bytes().to_vec(),
        expect: Expect::Any,
        executable: None,
    };
    let before = snapshot(&root);
    let refused: [(&str, Vec<Change>); 3] = [
        (
            "a link and its target",
            vec![write("b-link", "1"), write("a.txt", "2")],
        ),
        (
            "a write through a link and a delete of the target",
            vec![
                write("b-link", "1"),
                Change::Delete {
                    path: "a.txt".into(),
                    expect: Expect::Any,
                },
            ],
        ),
        (
            "a path and its detour",
            vec![write("sub/a.txt", "1"), write("dir/../a.txt", "2")],
        ),
    ];
    for (name, batch) in refused {
        let err = apply(&scope, &batch).unwrap_err();
        assert_eq!(err.code(), "EINVAL", "{name}: {err}");
        let paths: Vec<String> = batch
            .iter()
            .map(|change| match change {
                Change::Write { path, .. } | Change::Delete { path, .. } => {
                    path.display().to_string()
                }
                Change::Rename { from, .. } => from.display().to_string(),
            })
            .collect();
        assert!(
            paths
                .iter()
                .all(|path| err.message().contains(path.as_str())),
            "{name}: {err}"
        );
        assert_eq!(snapshot(&root), before, "{name}");
    }
    apply(
        &scope,
        &[write("a.txt", "A2\n"), write("dir/../a.txt", "S2\n")],
    )
    .unwrap();
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"A2\n");
    assert_eq!(fs::read(root.join("sub/a.txt")).unwrap(), b"S2\n");
    apply(&scope, &[write("./c.txt", "1"), write("c.txt", "2")]).unwrap();
    assert_eq!(fs::read(root.join("c.txt")).unwrap(), b"2");
}

/// A write, rename or delete of a lossy copy of a name that is not UTF-8
/// (U+FFFD for its byte) is refused naming the real file, and nothing is
/// created beside it; a name with U+FFFD that copies nothing is written.
#[test]
fn a_lossy_copy_of_a_name_is_refused_and_creates_no_second_file() {
    use std::os::unix::ffi::OsStrExt;
    let (_dir, root) = tree();
    let latin1 = root.join(std::ffi::OsStr::from_bytes(b"caf\xe9.txt"));
    fs::write(&latin1, "x").unwrap();
    let scope = Scope::confined(&root).unwrap();
    let before = snapshot(&root);
    let lossy = "caf\u{fffd}.txt";
    let write = |path: &str, data: &str| Change::Write {
        path: path.into(),
        data: data.as_bytes().to_vec(),
        expect: Expect::Any,
        executable: None,
    };
    let batches = [
        vec![write(lossy, "y")],
        vec![Change::Delete {
            path: lossy.into(),
            expect: Expect::Any,
        }],
        vec![Change::Rename {
            from: "c.txt".into(),
            to: lossy.into(),
            expect: Expect::Any,
        }],
    ];
    for batch in batches {
        let err = apply(&scope, &batch).unwrap_err();
        assert_eq!(err.code(), "EILSEQ", "{err}");
        assert!(err.message().contains(r#""caf\351.txt""#), "{err}");
        assert_eq!(snapshot(&root), before);
    }
    apply(&scope, &[write("new\u{fffd}.txt", "z")]).unwrap();
    assert_eq!(fs::read(root.join("new\u{fffd}.txt")).unwrap(), b"z");
}
