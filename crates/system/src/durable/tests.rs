use std::{
    os::unix::{fs::PermissionsExt, process::ExitStatusExt},
    process::Command,
};

use super::*;

const OLD: &[u8] = br#"{"version":1,"owner":"old holder, a record long enough to split"}"#;
const NEW: &[u8] = br#"{"version":1,"owner":"new holder, with different and longer content"}"#;

/// Environment the crashing child reads: which step to die at, and where.
const CRASH_STEP: &str = "NATIVES_TEST_CRASH_STEP";
const CRASH_RECORD: &str = "NATIVES_TEST_CRASH_RECORD";

#[test]
fn replace_writes_and_replaces_whole_records() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lease.json");
    assert_eq!(read(&path).unwrap(), None);
    replace(&path, OLD).unwrap();
    assert_eq!(read(&path).unwrap().as_deref(), Some(OLD));
    replace(&path, NEW).unwrap();
    assert_eq!(read(&path).unwrap().as_deref(), Some(NEW));
    let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, FILE_MODE);
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary file left"
    );
}

#[test]
fn publish_never_replaces_an_existing_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("claim.json");
    assert!(publish(&path, OLD).unwrap());
    assert!(!publish(&path, NEW).unwrap());
    assert_eq!(read(&path).unwrap().as_deref(), Some(OLD));
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary file left"
    );
}

#[test]
fn remove_reports_whether_there_was_a_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lease.json");
    replace(&path, OLD).unwrap();
    assert!(remove(&path).unwrap());
    assert!(!remove(&path).unwrap());
    assert_eq!(read(&path).unwrap(), None);
}

#[test]
fn a_bounded_read_refuses_what_is_too_large_or_not_a_file_before_reading_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    assert_eq!(read_bounded(&path, 10).unwrap(), None);
    replace(&path, b"0123456789").unwrap();
    assert_eq!(
        read_bounded(&path, 10).unwrap().as_deref(),
        Some(&b"0123456789"[..])
    );
    let err = read_bounded(&path, 9).unwrap_err();
    assert_eq!(err.code(), "EFBIG", "{err}");
    assert!(err.message().contains("10 bytes"), "{err}");
    // A sparse file far over the limit is refused from its size alone.
    let huge = dir.path().join("huge.json");
    File::create(&huge).unwrap().set_len(1 << 40).unwrap();
    assert_eq!(read_bounded(&huge, 1 << 24).unwrap_err().code(), "EFBIG");
}

/// Table: a private read takes a record its user wrote with the usual
/// mode, and refuses one others may write or one reached through a link,
/// each with its code and the record's name.
#[test]
fn a_private_read_refuses_records_others_may_have_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scan.rec");
    assert_eq!(read_private(&path, 64).unwrap(), None);
    replace(&path, b"mine").unwrap();
    assert_eq!(
        read_private(&path, 64).unwrap().as_deref(),
        Some(&b"mine"[..])
    );
    let link = dir.path().join("link.rec");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    let table = [(0o660, "EPERM"), (0o602, "EPERM"), (0o644, "")];
    for (mode, code) in table {
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        match read_private(&path, 64) {
            Ok(bytes) => assert_eq!((code, bytes.as_deref()), ("", Some(&b"mine"[..]))),
            Err(err) => {
                assert_eq!(err.code(), code, "mode {mode:o}: {err}");
                assert!(err.message().contains("scan.rec"), "{err}");
            }
        }
    }
    let err = read_private(&link, 64).unwrap_err();
    assert_eq!(err.code(), "EFTYPE", "{err}");
    assert!(err.message().contains("link.rec"), "{err}");
    assert!(
        read_bounded(&link, 64).unwrap().is_some(),
        "a plain read follows it"
    );
}

/// Every record is read through one bounded reader: a FIFO, a device (even
/// behind a symlink), a socket or a directory where a record should be is
/// refused at once, naming it and what it is; a record over the limit is
/// refused unread.
#[test]
fn a_record_that_is_not_a_regular_file_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.json");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let zero = dir.path().join("zero.json");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let socket = dir.path().join("socket.json");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let table = [
        (fifo, "a FIFO"),
        (zero, "a character device"),
        (socket, "a socket"),
        (dir.path().to_owned(), "a directory"),
    ];
    for (path, what) in table {
        let shown = path.display().to_string();
        let err = natives_testkit::within(&shown, std::time::Duration::from_secs(10), {
            let path = path.clone();
            move || read(&path).unwrap_err()
        });
        assert_eq!(err.code(), "EFTYPE", "{err}");
        assert!(err.message().contains(&shown), "{err}");
        assert!(err.message().contains(what), "{err}");
        assert_eq!(read_bounded(&path, 10).unwrap_err().code(), "EFTYPE");
    }
    let huge = dir.path().join("huge.json");
    File::create(&huge)
        .unwrap()
        .set_len(MAX_RECORD_BYTES + 1)
        .unwrap();
    assert_eq!(read(&huge).unwrap_err().code(), "EFBIG");
}

#[test]
fn errors_name_the_record() {
    let err = replace(Path::new("/nonexistent-dir/x/lease.json"), OLD).unwrap_err();
    assert_eq!(err.code(), "ENOENT");
    assert!(
        err.message().contains("/nonexistent-dir/x/lease.json"),
        "{err}"
    );
}

/// A real process writing a record is SIGKILLed right after each step; the
/// record left behind is always the old one or the new one, whole.
#[test]
fn a_crash_at_any_step_leaves_the_old_or_the_new_record() {
    for had_old in [true, false] {
        for (index, step) in Step::ALL.iter().enumerate() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("lease.json");
            if had_old {
                replace(&path, OLD).unwrap();
            }
            let status = crash_child_at("durable::tests::crash_child", index, &path);
            assert_eq!(
                status.signal(),
                Some(libc::SIGKILL),
                "child for {step:?}: {status}"
            );
            let left = read(&path).unwrap();
            let expected_before_rename = if had_old { Some(OLD) } else { None };
            match left.as_deref() {
                Some(bytes) if bytes == NEW => {
                    assert!(index >= 4, "new record before rename at {step:?}")
                }
                other => assert_eq!(other, expected_before_rename, "after a crash at {step:?}"),
            }
            if index >= 4 {
                assert_eq!(
                    left.as_deref(),
                    Some(NEW),
                    "renamed record lost at {step:?}"
                );
            }
            // A later writer is not confused by the stray temporary file.
            replace(&path, OLD).unwrap();
            assert_eq!(read(&path).unwrap().as_deref(), Some(OLD));
        }
    }
}

/// A real process publishing a record is SIGKILLed right after each step:
/// the name holds nothing or the new record whole, never a torn or empty
/// one; an existing record is never touched; and whatever was left, a later
/// publisher is not confused by it.
#[test]
fn a_crash_at_any_step_of_a_publish_leaves_nothing_or_the_whole_record() {
    for had_old in [true, false] {
        for (index, step) in Step::ALL.iter().enumerate() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("lease.json");
            if had_old {
                assert!(publish(&path, OLD).unwrap());
            }
            let status = crash_child_at("durable::tests::publish_crash_child", index, &path);
            let reached = !had_old || index < 4;
            assert_eq!(
                status.signal(),
                reached.then_some(libc::SIGKILL),
                "child for {step:?}: {status}"
            );
            let left = read(&path).unwrap();
            let expected = match (had_old, index >= 4) {
                (true, _) => Some(OLD),
                (false, true) => Some(NEW),
                (false, false) => None,
            };
            assert_eq!(left.as_deref(), expected, "after a crash at {step:?}");
            assert_eq!(publish(&path, OLD).unwrap(), left.is_none());
            assert_eq!(
                read(&path).unwrap().as_deref(),
                Some(expected.unwrap_or(OLD))
            );
        }
    }
}

/// The child of the publish crash test: publishes [`NEW`] and dies at the
/// crash point it is told (a refused publish exits normally).
#[test]
#[ignore = "run by a_crash_at_any_step_of_a_publish_leaves_nothing_or_the_whole_record in a child process"]
fn publish_crash_child() {
    let (Ok(step), Ok(path)) = (std::env::var(CRASH_STEP), std::env::var(CRASH_RECORD)) else {
        return;
    };
    crate::crash::install(Some(crate::crash::kill_at(step.parse().unwrap())));
    publish(Path::new(&path), NEW).unwrap();
}

/// Run the crash child `test` told to die at its `index`th crash point of
/// writing `path`; a child killed there must say it died at step `index`
/// of [`Step::ALL`], so a step skipped or out of order fails the test.
fn crash_child_at(test: &str, index: usize, path: &Path) -> std::process::ExitStatus {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", test, "--nocapture"])
        .env(CRASH_STEP, index.to_string())
        .env(CRASH_RECORD, path)
        .output()
        .unwrap();
    if out.status.signal() == Some(libc::SIGKILL) {
        let said = String::from_utf8_lossy(&out.stderr);
        let step = Step::ALL[index].name();
        assert!(
            said.contains(&format!("({step})")),
            "{test} at {index}: {said}"
        );
    }
    out.status
}

/// The child of the crash test: writes [`NEW`] and dies at the crash point
/// it is told.
#[test]
#[ignore = "run by a_crash_at_any_step_leaves_the_old_or_the_new_record in a child process"]
fn crash_child() {
    let (Ok(step), Ok(path)) = (std::env::var(CRASH_STEP), std::env::var(CRASH_RECORD)) else {
        return;
    };
    crate::crash::install(Some(crate::crash::kill_at(step.parse().unwrap())));
    replace(Path::new(&path), NEW).unwrap();
}
