//! The `natives` binary, run as a user would: flags, output and exit codes.

mod output;
mod terminal;

use std::{fs, path::Path, process::Command, time::Duration};

use terminal::{Stream, on_terminal};

fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for rel in [
        "src/main.rs",
        "src/lib.rs",
        "src/deep/mod.rs",
        "README.md",
        ".hidden/x.rs",
        "ignored.rs",
    ] {
        let path = dir.path().join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, rel).unwrap();
    }
    fs::write(dir.path().join(".ignore"), "ignored.rs\n").unwrap();
    dir
}

fn natives(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_natives"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    output::outcome(out)
}

#[test]
fn prints_one_path_per_line_and_exits_zero() {
    let dir = fixture();
    let (code, out, _) = natives(dir.path(), &["glob", "*.rs"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "src/deep/mod.rs\nsrc/lib.rs\nsrc/main.rs\n")
    );
    let (code, out, _) = natives(dir.path(), &["glob", "*.rs", "src"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "src/deep/mod.rs\nsrc/lib.rs\nsrc/main.rs\n")
    );
}

#[test]
fn flags_table() {
    let dir = fixture();
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    fs::File::options()
        .write(true)
        .open(dir.path().join("src/main.rs"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    let table: &[(&[&str], &str)] = &[
        (
            &["glob", "*.rs", "--hidden"],
            ".hidden/x.rs\nsrc/deep/mod.rs\nsrc/lib.rs\nsrc/main.rs\n",
        ),
        (
            &["glob", "*.rs", "--no-ignore"],
            "ignored.rs\nsrc/deep/mod.rs\nsrc/lib.rs\nsrc/main.rs\n",
        ),
        (&["glob", "*", "--type", "d"], "src\nsrc/deep\n"),
        (
            &["glob", "lib.rs", "-g", "*.md", "--glob", "main.rs"],
            "README.md\nsrc/lib.rs\nsrc/main.rs\n",
        ),
        (&["glob", "*.rs", "-E", "deep"], "src/lib.rs\nsrc/main.rs\n"),
        (
            &["glob", "*.rs", "--exclude", "main.rs", "-E", "src/deep"],
            "src/lib.rs\n",
        ),
        (&["glob", "*.rs", "--max", "1"], "src/deep/mod.rs\n"),
        (
            &["glob", "src/*.rs", "--sort", "mtime", "--max", "1"],
            "src/lib.rs\n",
        ),
    ];
    for &(args, expected) in table {
        let (code, out, err) = natives(dir.path(), args);
        assert_eq!((code, out.as_str()), (0, expected), "{args:?}: {err}");
    }
}

#[test]
fn json_lines_end_with_a_summary() {
    let dir = fixture();
    let (code, out, _) = natives(dir.path(), &["glob", "*.md", "--json"]);
    assert_eq!(code, 0);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["type"], "match");
    assert_eq!(lines[0]["path"], "README.md");
    // The numeric `FileType`, as the addon's objects carry it: 1 is a file.
    assert_eq!(lines[0]["fileType"], 1);
    assert!(lines[0]["mtime"].as_i64().unwrap() > 0);
    assert_eq!(
        lines[1],
        serde_json::json!({"type": "summary", "totalMatches": 1, "limitReached": false, "unreadable": []})
    );
}

#[test]
fn exit_codes_follow_ripgrep() {
    let dir = fixture();
    let table: &[(&[&str], i32, &str)] = &[
        (&["glob", "*.nothing"], 1, ""),
        // Nothing printed is nothing found, as `rg -m 0` answers.
        (&["glob", "*.rs", "-m", "0"], 1, ""),
        (&["find", "main", "-m", "0"], 1, ""),
        (&["glob", "a["], 2, "EINVAL: invalid glob pattern `a[`"),
        (
            &["glob", "*", "-E", "b["],
            2,
            "EINVAL: invalid glob pattern `b[`",
        ),
        (&["glob", "*", "missing-dir"], 2, "ENOENT: missing-dir"),
        (&["glob", "*", "README.md"], 2, "ENOTDIR"),
        (&["glob", "*", "--type", "x"], 2, "--type takes f, d or l"),
        (&["glob", "*", "--max", "-1"], 2, "--max"),
        (&["glob"], 2, "missing PATTERN"),
        (&["frobnicate"], 2, "unknown command"),
    ];
    for &(args, code, message) in table {
        let (got, out, err) = natives(dir.path(), args);
        assert_eq!(got, code, "{args:?}");
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(code != 1 || out.is_empty(), "{args:?} printed {out:?}");
    }
}

fn grep_fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("a.txt"),
        "one\ntwo foo\nthree\nfour\nfive\nsix Foo\nseven\n",
    )
    .unwrap();
    fs::write(dir.path().join("b.rs"), "fn foo() {}\n").unwrap();
    fs::write(dir.path().join(".hidden.txt"), "foo\n").unwrap();
    dir
}

#[test]
fn grep_prints_like_ripgrep() {
    let dir = grep_fixture();
    let table: &[(&[&str], &str)] = &[
        (&["grep", "foo"], "a.txt:2:two foo\nb.rs:1:fn foo() {}\n"),
        (
            &["grep", "-i", "foo", "a.txt"],
            "a.txt:2:two foo\na.txt:6:six Foo\n",
        ),
        (&["grep", "-S", "Foo"], "a.txt:6:six Foo\n"),
        (&["grep", "-F", "foo() {", "."], "./b.rs:1:fn foo() {}\n"),
        (
            &["grep", "-C1", "-i", "foo", "a.txt"],
            "a.txt-1-one\na.txt:2:two foo\na.txt-3-three\n--\na.txt-5-five\na.txt:6:six Foo\na.txt-7-seven\n",
        ),
        (&["grep", "-c", "-i", "foo"], "a.txt:2\nb.rs:1\n"),
        (
            &["grep", "-l", "foo", "--hidden"],
            ".hidden.txt\na.txt\nb.rs\n",
        ),
        (&["grep", "-t", "rust", "foo"], "b.rs:1:fn foo() {}\n"),
        // As `rg -g`, a glob selects a dot-file it matches.
        (
            &["grep", "-g", "*.txt", "--max-results", "1", "-i", "foo"],
            ".hidden.txt:1:foo\n",
        ),
        (
            &["grep", "-g", "a.txt", "-m", "1", "-i", "foo"],
            "a.txt:2:two foo\n",
        ),
        // As `rg -m`, per file; `--max-results` caps the whole.
        (
            &["grep", "-g", "*.txt", "-m", "1", "-i", "foo"],
            ".hidden.txt:1:foo\na.txt:2:two foo\n",
        ),
        (&["grep", "-m", "1", "-c", "-i", "foo"], "a.txt:1\nb.rs:1\n"),
        (
            &["grep", "-m", "2", "--max-results", "3", "-i", "o"],
            "a.txt:1:one\na.txt:2:two foo\nb.rs:1:fn foo() {}\n",
        ),
        // As `rg -g`/`-t` repeated: any of them selects, `!` excludes.
        (
            &["grep", "-g", "*.rs", "-g", "a.*", "-l", "foo"],
            "a.txt\nb.rs\n",
        ),
        (
            &["grep", "-g", "*", "-g", "!*.rs", "-l", "foo"],
            ".hidden.txt\na.txt\n",
        ),
        (
            &["grep", "-t", "rust", "-t", "txt", "-l", "foo"],
            "a.txt\nb.rs\n",
        ),
        (&["grep", "-T", "txt", "-l", "foo"], "b.rs\n"),
        (
            &["grep", "-U", "two foo\\nthree"],
            "a.txt:2:two foo\na.txt:3:three\n",
        ),
    ];
    for &(args, expected) in table {
        let (code, out, err) = natives(dir.path(), args);
        assert_eq!((code, out.as_str()), (0, expected), "{args:?}: {err}");
    }
}

#[test]
fn grep_takes_ripgreps_habits() {
    let dir = grep_fixture();
    let table: &[(&[&str], &str)] = &[
        (
            &["grep", "-n", "foo"],
            "a.txt:2:two foo\nb.rs:1:fn foo() {}\n",
        ),
        (
            &["grep", "-H", "--no-heading", "foo"],
            "a.txt:2:two foo\nb.rs:1:fn foo() {}\n",
        ),
        (&["grep", "-N", "foo"], "a.txt:two foo\nb.rs:fn foo() {}\n"),
        (&["grep", "-N", "-n", "foo", "a.txt"], "a.txt:2:two foo\n"),
        (
            &["grep", "-n", "-N", "-C1", "two", "a.txt"],
            "a.txt-one\na.txt:two foo\na.txt-three\n",
        ),
        (
            &["grep", "-w", "-i", "fo+", "a.txt"],
            "a.txt:2:two foo\na.txt:6:six Foo\n",
        ),
        (&["grep", "-w", "fo"], ""),
        (
            &["grep", "-v", "o", "a.txt"],
            "a.txt:3:three\na.txt:5:five\na.txt:7:seven\n",
        ),
        (
            &["grep", "-o", r"f\w+", "a.txt"],
            "a.txt:2:foo\na.txt:4:four\na.txt:5:five\n",
        ),
        (&["grep", "-o", "-c", "o", "a.txt"], "a.txt:7\n"),
        (&["grep", "-c", "-l", "foo"], "a.txt\nb.rs\n"),
        (&["grep", "--files"], "a.txt\nb.rs\n"),
        (
            &["grep", "--files", "--hidden", "."],
            "./.hidden.txt\n./a.txt\n./b.rs\n",
        ),
        (&["grep", "--files", "-t", "rust"], "b.rs\n"),
        (
            &["grep", "--color", "never", "foo", "b.rs"],
            "b.rs:1:fn foo() {}\n",
        ),
        // The bytes `rg --color always` writes (through termcolor).
        (
            &["grep", "--color", "always", "-i", "foo", "a.txt"],
            "\x1b[0m\x1b[35ma.txt\x1b[0m:\x1b[0m\x1b[32m2\x1b[0m:two \x1b[0m\x1b[1m\x1b[31mfoo\x1b[0m\n\
             \x1b[0m\x1b[35ma.txt\x1b[0m:\x1b[0m\x1b[32m6\x1b[0m:six \x1b[0m\x1b[1m\x1b[31mFoo\x1b[0m\n",
        ),
        (
            &["grep", "--color=always", "-o", "-N", "t.o", "a.txt"],
            "\x1b[0m\x1b[35ma.txt\x1b[0m:\x1b[0m\x1b[1m\x1b[31mtwo\x1b[0m\n",
        ),
        (
            &["grep", "--stats", "two"],
            "a.txt:2:two foo\n\n1 results\n1 files contained matches\n2 files searched\n\
             0 binary files skipped\n0 files skipped as too large\n0 paths unreadable\n",
        ),
    ];
    for &(args, expected) in table {
        let (code, out, err) = natives(dir.path(), args);
        let out = match out.rfind(" seconds\n") {
            Some(end) if args.contains(&"--stats") => {
                out[..out[..end].rfind('\n').unwrap() + 1].to_string()
            }
            _ => out,
        };
        let code_expected = if expected.is_empty() { 1 } else { 0 };
        assert_eq!(
            (code, out.as_str()),
            (code_expected, expected),
            "{args:?}: {err}"
        );
    }
}

/// Colour and progress are for a person at a screen: on a terminal the
/// results are coloured and `--stats` shows its progress line; through a
/// pipe neither appears.
#[test]
fn colour_and_progress_only_on_a_terminal() {
    let dir = grep_fixture();
    let grep = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_natives"));
        command
            .args(args)
            .current_dir(dir.path())
            .env("TERM", "xterm")
            .env_remove("NO_COLOR");
        command
    };
    let (code, shown, _) = on_terminal(&mut grep(&["grep", "two", "a.txt"]), Stream::Stdout);
    assert_eq!(code, 0);
    assert!(
        shown.contains("\x1b[0m\x1b[1m\x1b[31mtwo\x1b[0m foo"),
        "{shown:?}"
    );
    for (name, value) in [("TERM", "dumb"), ("NO_COLOR", "1")] {
        let mut plain = grep(&["grep", "two", "a.txt"]);
        plain.env(name, value);
        let (_, shown, _) = on_terminal(&mut plain, Stream::Stdout);
        assert_eq!(shown, "a.txt:2:two foo\n", "{name}={value}");
    }
    let (_, piped, _) = natives(dir.path(), &["grep", "two", "a.txt"]);
    assert_eq!(piped, "a.txt:2:two foo\n");

    let (code, progress, out) = on_terminal(&mut grep(&["grep", "--stats", "two"]), Stream::Stderr);
    assert_eq!(code, 0);
    assert!(progress.contains("searching"), "{progress:?}");
    assert!(out.starts_with("a.txt:2:two foo\n\n1 results\n"), "{out}");
    let out = grep(&["grep", "--stats", "two"]).output().unwrap();
    assert!(
        out.stderr.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn grep_json_and_exit_codes() {
    let dir = grep_fixture();
    let (code, out, _) = natives(dir.path(), &["grep", "--json", "two"]);
    assert_eq!(code, 0);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // rg's JSON Lines: begin, match, end, then the summary.
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["begin", "match", "end", "summary"]);
    assert_eq!(lines[1]["data"]["path"]["text"], "a.txt");
    assert_eq!(lines[1]["data"]["lines"]["text"], "two foo\n");
    assert_eq!(lines[1]["data"]["line_number"], 2);
    assert_eq!(lines[1]["data"]["absolute_offset"], 4);
    let submatch = &lines[1]["data"]["submatches"][0];
    assert_eq!(
        (
            &submatch["match"]["text"],
            &submatch["start"],
            &submatch["end"]
        ),
        (&"two".into(), &0.into(), &3.into())
    );
    assert_eq!(lines[3]["data"]["stats"]["matches"], 1);
    // The last of --json, -c and -l wins, as in rg.
    let (_, counted, _) = natives(dir.path(), &["grep", "--json", "-c", "two"]);
    assert_eq!(counted, "a.txt:1\n");
    let (code, _, err) = natives(dir.path(), &["grep", "--json", "--max-results", "1", "two"]);
    assert_eq!(code, 2, "{err}");
    let table: &[(&[&str], i32, &str)] = &[
        (&["grep", "nothing-here"], 1, ""),
        (&["grep", "-m", "0", "two"], 1, ""),
        (&["grep", "-m", "0", "-c", "two"], 1, ""),
        (&["grep", "-m", "0", "-l", "two"], 1, ""),
        (&["grep", "-m", "0", "--json", "two"], 1, ""),
        (&["grep", "--max-results", "0", "two"], 1, ""),
        (&["grep", "("], 2, "EINVAL: invalid regex `(`"),
        (
            &["grep", "x", "-t", "nosuchtype"],
            2,
            "EINVAL: unknown file type",
        ),
        (&["grep", "x", "missing"], 2, "ENOENT"),
        (&["grep", "-C"], 2, "missing argument"),
    ];
    for &(args, code, message) in table {
        let (got, out, err) = natives(dir.path(), args);
        assert_eq!(got, code, "{args:?}");
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(code != 1 || out.is_empty(), "{args:?} printed {out:?}");
    }
}

#[test]
fn find_ranks_and_exits_like_the_others() {
    let dir = tempfile::tempdir().unwrap();
    for rel in [
        "http_server_api_tests/test_api.py",
        "src/http/server.ts",
        "docs/api.md",
        "src/main.rs",
    ] {
        let path = dir.path().join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "").unwrap();
    }
    let (code, out, _) = natives(dir.path(), &["find", "@httpserap", "--max", "1"]);
    assert_eq!((code, out.as_str()), (0, "http_server_api_tests/\n"));
    let (code, out, _) = natives(dir.path(), &["find", "main.rs", "src", "--max", "1"]);
    assert_eq!((code, out.as_str()), (0, "src/main.rs\n"));
    let (code, out, _) = natives(dir.path(), &["find", "api", "--json", "--max", "1"]);
    assert_eq!(code, 0);
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let path = first["path"].as_str().unwrap().to_string();
    let highlighted: String = first["indices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| path.chars().nth(i.as_u64().unwrap() as usize).unwrap())
        .collect();
    assert_eq!(highlighted.to_lowercase(), "api");
    assert_eq!(natives(dir.path(), &["find", "zzzzqqq"]).0, 1);
    assert_eq!(natives(dir.path(), &["find", "x", "missing"]).0, 2);
}

/// A name that is not UTF-8 is printed as its own bytes by every command,
/// as rg and fd print it, so the path can be handed to another program.
#[cfg(unix)]
#[test]
fn names_that_are_not_utf8_are_printed_as_their_bytes() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    fs::write(dir.path().join(name), "needle\n").unwrap();
    let table: &[(&[&str], &[u8])] = &[
        (&["grep", "needle"], b"caf\xe9.txt:1:needle\n"),
        (&["grep", "-l", "needle"], b"caf\xe9.txt\n"),
        (&["glob", "*.txt"], b"caf\xe9.txt\n"),
        (&["find", "caf"], b"caf\xe9.txt\n"),
    ];
    for (args, printed) in table {
        let out = Command::new(env!("CARGO_BIN_EXE_natives"))
            .args(*args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(out.stdout, *printed, "{args:?}");
    }
}
