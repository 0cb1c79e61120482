//! Only regular files are read, never past the limit, and nothing blocks.

use std::{
    fs,
    os::unix::{fs::symlink, net::UnixListener},
    path::Path,
    time::{Duration, Instant},
};

use crate::{DEFAULT_MAX_BYTES, Limit, ReadOptions, Scope, Stamp, read_file};

#[test]
fn anything_but_a_regular_file_is_refused_at_once_naming_its_type() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    nix::unistd::mkfifo(
        &root.join("pipe"),
        nix::sys::stat::Mode::from_bits_truncate(0o644),
    )
    .unwrap();
    let _socket = UnixListener::bind(root.join("sock")).unwrap();
    fs::create_dir(root.join("dir")).unwrap();
    symlink("nowhere", root.join("dangling")).unwrap();
    symlink("pipe", root.join("to-pipe")).unwrap();
    let scope = Scope::unconfined(&root).unwrap();
    let cases = [
        ("pipe", "EFTYPE", "a FIFO"),
        ("to-pipe", "EFTYPE", "a FIFO"),
        ("sock", "EFTYPE", "a socket"),
        ("/dev/zero", "EFTYPE", "a character device"),
        ("/dev/null", "EFTYPE", "a character device"),
        ("dir", "EISDIR", "directory"),
        ("dangling", "ENOENT", "no such file"),
        ("missing", "ENOENT", "no such file"),
    ];
    for (path, code, words) in cases {
        let started = Instant::now();
        let err = read_file(&scope, Path::new(path), Limit::default()).unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{path} took {:?}",
            started.elapsed()
        );
        assert_eq!(err.code(), code, "{path}: {err}");
        assert!(
            err.message().contains(path) && err.message().contains(words),
            "{path}: {err}"
        );
    }
}

#[test]
fn limits_refuse_a_huge_file_or_read_only_its_head() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big");
    // Sparse: 2 GiB on paper, nothing on disk.
    fs::File::create(&big).unwrap().set_len(2 << 30).unwrap();
    let scope = Scope::unconfined(dir.path()).unwrap();
    let started = Instant::now();
    let err = read_file(&scope, Path::new("big"), Limit::default()).unwrap_err();
    assert_eq!(err.code(), "EFBIG", "{err}");
    assert!(err.message().contains("2147483648 bytes"), "{err}");
    let head = read_file(&scope, Path::new("big"), Limit::Head(4096)).unwrap();
    assert_eq!(
        (head.bytes.len(), head.size, head.complete),
        (4096, 2 << 30, false)
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );

    fs::write(dir.path().join("small"), "abc").unwrap();
    let whole = read_file(&scope, Path::new("small"), Limit::Whole(3)).unwrap();
    assert_eq!(
        (whole.bytes.as_slice(), whole.complete),
        (&b"abc"[..], true)
    );
    let err = read_file(&scope, Path::new("small"), Limit::Whole(2)).unwrap_err();
    assert_eq!(err.code(), "EFBIG");
    let head = read_file(&scope, Path::new("small"), Limit::Head(3)).unwrap();
    assert!(head.complete);
}

#[test]
fn stamps_round_trip_and_change_with_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let scope = Scope::unconfined(dir.path()).unwrap();
    fs::write(dir.path().join("f"), "one").unwrap();
    let first = read_file(&scope, Path::new("f"), Limit::default())
        .unwrap()
        .stamp;
    assert_eq!(Stamp::parse(&first.token()).unwrap(), first);
    fs::write(dir.path().join("f"), "three").unwrap();
    let second = read_file(&scope, Path::new("f"), Limit::default())
        .unwrap()
        .stamp;
    assert_ne!(first, second);
    for bad in ["", "1.2.3", "1.2.3.4", "1.2.3.4.5.6", "x.2.3.4.5"] {
        assert_eq!(Stamp::parse(bad).unwrap_err().code(), "EINVAL", "{bad}");
    }
}

#[test]
fn read_options_ask_for_the_whole_file_up_to_the_default_limit_unless_told() {
    let limit = |max_bytes, head| {
        ReadOptions {
            confine: false,
            max_bytes,
            head,
        }
        .limit()
    };
    assert_eq!(
        ReadOptions::default().limit().unwrap(),
        Limit::Whole(DEFAULT_MAX_BYTES)
    );
    assert_eq!(limit(Some(10), false).unwrap(), Limit::Whole(10));
    assert_eq!(limit(Some(10), true).unwrap(), Limit::Head(10));
    let err = limit(None, true).unwrap_err();
    assert_eq!(err.code(), "EINVAL");
    assert!(err.message().contains("head needs maxBytes"), "{err}");
}

/// A read of a lossy copy of a name that is not UTF-8 says so, naming the
/// path to give instead; a name that really holds U+FFFD is read.
#[test]
fn a_lossy_copy_of_a_name_is_named_for_what_it_is() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    fs::create_dir(root.join("sub")).unwrap();
    fs::write(
        root.join("sub")
            .join(std::ffi::OsStr::from_bytes(b"caf\xe9.txt")),
        "latin",
    )
    .unwrap();
    fs::write(root.join("sub/real\u{fffd}.txt"), "utf8").unwrap();
    let scope = Scope::confined(&root).unwrap();
    let err = read_file(&scope, Path::new("sub/caf\u{fffd}.txt"), Limit::default()).unwrap_err();
    assert_eq!(err.code(), "EILSEQ");
    assert!(err.message().contains(r#""sub/caf\351.txt""#), "{err}");
    let read = read_file(&scope, Path::new("sub/real\u{fffd}.txt"), Limit::default()).unwrap();
    assert_eq!(read.bytes, b"utf8");
    let missing = read_file(&scope, Path::new("sub/other\u{fffd}.txt"), Limit::default());
    assert_eq!(missing.unwrap_err().code(), "ENOENT");
}
