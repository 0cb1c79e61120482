//! `grep` against `rg` itself: the same tree, equivalent flags, and the
//! results compared line for line (path, line number, text, match or
//! context) along with the counters both report.
//!
//! Without `rg` (looked up on `PATH`, then in `~/.cargo/bin`) every test
//! here prints a notice and passes without comparing anything.

use std::{fs, io::Write, process::Command, time::Instant};

use natives_scan::{
    CancelToken, ScanCache,
    cache::CachePolicy,
    grep::{GrepMode, GrepOptions, GrepOutcome, grep, list_files},
};
use natives_testkit::rg::{Line, find as find_rg, json as rg_json, run as rg};

/// The fixture tree: every kind of content the comparison must cover.
fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let late_binary = [
        b"needle before the NUL\n".as_slice(),
        &b"filler line without it\n".repeat(4_000),
        b"needle\0after\nneedle end\n",
    ]
    .concat();
    // A NUL as the last byte of a file of exactly one search block (64 KiB,
    // read whole and searched as a slice) and of one a byte longer (read
    // in blocks): the first hides the file, the second only its tail.
    let block_edge = |len: usize| {
        let mut bytes = b"needle at the start\n".to_vec();
        bytes.resize(len - 1, b'x');
        bytes.push(0);
        bytes
    };
    let (edge_binary, past_edge_binary) = (block_edge(64 * 1024), block_edge(64 * 1024 + 1));
    let context: String = (1..=40)
        .map(|i| {
            if [3, 5, 12, 20, 21, 30].contains(&i) {
                format!("line {i} needle\n")
            } else {
                format!("line {i}\n")
            }
        })
        .collect();
    let files: &[(&str, &[u8])] = &[
        (".gitignore", b"*.log\nbuild/\n"),
        (
            "src/main.rs",
            b"fn main() {\n    let Needle = 1;\n    println!(\"needle\");\n}\n",
        ),
        (
            "src/lib.rs",
            b"pub struct A {\n    field: u8,\n}\n// start\nmiddle needle\n// end\nlet s = `${name}`;\nx = a.b(c)\n",
        ),
        ("web/app.ts", b"const needle = 'NEEDLE';\n"),
        ("web/view.tsx", b"export const Needle = () => null;\n"),
        ("docs/guide.md", b"# Needle\n\nFind the needle, or needles.\n"),
        (".hidden/secret.txt", b"needle hidden\n"),
        ("ignored.log", b"needle in a log\n"),
        ("build/out.txt", b"needle built\n"),
        ("node_modules/pkg/index.js", b"module.exports = 'needle';\n"),
        ("bin/early.bin", b"needle\0binary\nneedle again\n"),
        ("bin/late.bin", &late_binary),
        ("bin/edge.bin", &edge_binary),
        ("bin/past-edge.bin", &past_edge_binary),
        ("crlf.txt", b"needle one\r\nneedle two\r\nthree\r\n"),
        ("latin1.txt", b"caf\xe9 needle\n\xff\xfe other\nneedle \xe9t\xe9\n"),
        ("empty.txt", b""),
        ("context.txt", context.as_bytes()),
        // ripgrep's own ignore file, which wins over `.ignore` and `.gitignore`.
        (".rgignore", b"rgignored.txt\n"),
        ("rgignored.txt", b"needle rg-ignored\n"),
        (".dot.log", b"needle in a hidden, ignored log\n"),
    ];
    // An empty `.git` makes the tree a repository for `.gitignore` purposes,
    // for `rg` and for the walker alike.
    fs::create_dir(dir.path().join(".git")).unwrap();
    for (rel, bytes) in files {
        let path = dir.path().join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, bytes).unwrap();
    }
    dir
}

fn ours(options: &GrepOptions) -> GrepOutcome {
    let cache = ScanCache::new(CachePolicy::default());
    grep(options, &cache, &CancelToken::new(), &mut |_| {}).unwrap()
}

fn our_lines(outcome: &GrepOutcome) -> Vec<Line> {
    let mut lines = Vec::new();
    for m in &outcome.matches {
        let path = m.path_lossy().into_owned();
        let context = |(n, text): &(u64, String)| (path.clone(), *n, text.clone(), false);
        lines.extend(m.context_before.iter().map(context));
        lines.push((path.clone(), m.line_number, m.line.clone(), true));
        lines.extend(m.context_after.iter().map(context));
    }
    lines
}

/// One comparison: a pattern, `rg` flags, and the same request in options.
struct Case {
    pattern: &'static str,
    rg_args: &'static [&'static str],
    configure: fn(&mut GrepOptions),
}

const fn case(
    pattern: &'static str,
    rg_args: &'static [&'static str],
    configure: fn(&mut GrepOptions),
) -> Case {
    Case {
        pattern,
        rg_args,
        configure,
    }
}

/// Each side keeps its default but for what the flags ask: `--hidden` turns
/// dot-files on for both (see [`asked_hidden`]); left out, both skip them.
const CASES: &[Case] = &[
    case("needle", &["--hidden"], |_| {}),
    case(r"ne+dle\b", &["--hidden"], |_| {}),
    case(r"\bNeedle\b", &["--hidden"], |_| {}),
    case("NEEDLE", &["--hidden", "-i"], |o| o.ignore_case = true),
    case("needle", &["--hidden", "-S"], |o| o.smart_case = true),
    case("Needle", &["--hidden", "-S"], |o| o.smart_case = true),
    case("a.b(", &["--hidden", "-F"], |o| o.literal = true),
    case(r"\$\{name\}", &["--hidden"], |_| {}),
    case(r"struct A \{\n\s+field", &["--hidden", "-U"], |o| {
        o.multiline = true
    }),
    case(r"(?s)// start.*?// end", &["--hidden", "-U"], |o| {
        o.multiline = true
    }),
    case(r"one\r?\nneedle", &["--hidden", "-U"], |o| {
        o.multiline = true
    }),
    case("needle", &["--hidden", "-C", "2"], |o| {
        o.context(2);
    }),
    case("needle", &["--hidden", "-A", "1"], |o| o.context_after = 1),
    case("needle", &["--hidden", "-B", "3"], |o| o.context_before = 3),
    case("needle", &["--hidden", "-g", "*.rs"], |o| {
        o.globs = vec!["*.rs".into()]
    }),
    case("needle", &["--hidden", "-g", "src/**"], |o| {
        o.globs = vec!["src/**".into()]
    }),
    case("needle", &["--hidden", "-g", "!*.md"], |o| {
        o.globs = vec!["!*.md".into()]
    }),
    case("(?i)needle", &["--hidden", "-t", "rust"], |o| {
        o.file_types = vec!["rust".into()]
    }),
    case("(?i)needle", &["--hidden", "-t", "ts"], |o| {
        o.file_types = vec!["ts".into()]
    }),
    case("(?i)needle", &["--hidden", "-t", "md"], |o| {
        o.file_types = vec!["md".into()]
    }),
    case("needle", &[], |_| {}),
    case("needle", &["--hidden", "--no-ignore"], |o| {
        o.use_gitignore = false
    }),
    case("", &["--hidden", "-g", "*.txt"], |o| {
        o.globs = vec!["*.txt".into()]
    }),
    // A file a glob selects is searched even where ignore files (`*.log`,
    // `.rgignore`) or the hidden rule would leave it out, but not inside a
    // directory they leave out (`build/`).
    case("needle", &["-g", "*.log"], |o| {
        o.globs = vec!["*.log".into()]
    }),
    case("needle", &["--hidden", "-g", "*.{log,txt}"], |o| {
        o.globs = vec!["*.{log,txt}".into()]
    }),
    case("needle", &["--hidden", "-g", "rgignored.txt"], |o| {
        o.globs = vec!["rgignored.txt".into()]
    }),
    case("needle", &["-g", "*.txt"], |o| {
        o.globs = vec!["*.txt".into()]
    }),
    case("needle", &["--hidden", "-w"], |o| o.word_regexp = true),
    case(r"ne+dle", &["--hidden", "-w", "-i"], |o| {
        o.word_regexp = true;
        o.ignore_case = true;
    }),
    case("needle", &["--hidden", "-v"], |o| o.invert_match = true),
    case(
        "needle",
        &["--hidden", "-v", "-C", "1", "-g", "*.txt"],
        |o| {
            o.invert_match = true;
            o.context(1);
            o.globs = vec!["*.txt".into()];
        },
    ),
    case(r"needle\s+", &["--hidden", "-v", "-U"], |o| {
        o.invert_match = true;
        o.multiline = true;
    }),
    case("needle", &["--hidden", "-v", "-w"], |o| {
        o.invert_match = true;
        o.word_regexp = true;
    }),
];

/// Whether the `rg` flags ask for dot-files; without `--hidden` both sides
/// leave them out by default.
fn asked_hidden(rg_args: &[&str]) -> bool {
    rg_args.contains(&"--hidden")
}

#[test]
fn content_matches_rg_line_for_line() {
    let Some(rg_path) = find_rg() else { return };
    let dir = fixture();
    for case in CASES {
        let label = format!("pattern {:?}, rg {:?}", case.pattern, case.rg_args);
        let expected = rg_json(&rg_path, dir.path(), case.rg_args, case.pattern, ".");
        let mut options = GrepOptions::new(case.pattern, dir.path());
        options.include_node_modules = Some(true);
        options.include_hidden = asked_hidden(case.rg_args);
        (case.configure)(&mut options);
        let outcome = ours(&options);
        assert_eq!(our_lines(&outcome), expected.lines, "{label}");
        options.cache = true;
        assert_eq!(
            our_lines(&ours(&options)),
            expected.lines,
            "{label}, cached"
        );
        assert_eq!(outcome.total_matches, expected.match_records, "{label}");
        assert_eq!(
            outcome.files_with_matches as u64, expected.searches_with_match,
            "{label}"
        );
        assert_eq!(outcome.files_searched as u64, expected.searches, "{label}");
        assert!(
            !expected.lines.is_empty(),
            "{label}: the case tests something"
        );
    }
}

#[test]
fn binary_files_match_rg_and_are_counted() {
    let Some(rg_path) = find_rg() else { return };
    let dir = fixture();
    let in_bin = |lines: Vec<Line>| -> Vec<Line> {
        lines
            .into_iter()
            .map(|(path, n, text, kind)| (path.trim_start_matches("bin/").into(), n, text, kind))
            .collect()
    };
    let expected = rg_json(&rg_path, dir.path(), &["--hidden"], "needle", "bin");
    let mut options = GrepOptions::new("needle", dir.path().join("bin"));
    let outcome = ours(&options);
    assert_eq!(our_lines(&outcome), in_bin(expected.lines));
    let line = |path: &str, text: &str| (path.to_string(), 1, text.to_string(), true);
    assert_eq!(
        our_lines(&outcome),
        [
            line("late.bin", "needle before the NUL"),
            line("past-edge.bin", "needle at the start"),
        ]
    );
    assert_eq!(outcome.binary_files_skipped, 4);

    // A file named explicitly is searched whole, NUL bytes and all.
    options.path = dir.path().join("bin/early.bin");
    let named = ours(&options);
    let expected = rg_json(&rg_path, dir.path(), &[], "needle", "bin/early.bin");
    assert_eq!(our_lines(&named), in_bin(expected.lines));
    assert_eq!(named.matches.len(), 2);
}

#[test]
fn count_and_file_modes_match_rg() {
    let Some(rg_path) = find_rg() else { return };
    let dir = fixture();
    let rg_text = |args: &[&str], pattern: &str| {
        let mut all = vec!["--hidden"];
        all.extend_from_slice(args);
        let output = rg(&rg_path, dir.path(), &all, pattern, ".");
        String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .map(|l| l.strip_prefix("./").unwrap_or(l).to_string())
            .collect::<Vec<_>>()
    };
    for (pattern, multiline) in [("needle", false), (r"needle\s+", true), ("Needle", false)] {
        let flags: &[&str] = if multiline { &["-U"] } else { &[] };
        let mut options = GrepOptions::new(pattern, dir.path());
        options.include_hidden = true; // as `rg --hidden`
        options.include_node_modules = Some(true);
        options.multiline = multiline;

        options.mode = GrepMode::Count;
        let counts: Vec<String> = ours(&options)
            .matches
            .iter()
            .map(|m| format!("{}:{}", m.path_lossy(), m.match_count))
            .collect();
        assert_eq!(
            counts,
            rg_text(&[flags, &["--count"]].concat(), pattern),
            "{pattern}"
        );

        options.mode = GrepMode::FilesWithMatches;
        let files: Vec<String> = ours(&options)
            .matches
            .iter()
            .map(|m| m.path_lossy().into_owned())
            .collect();
        assert_eq!(
            files,
            rg_text(&[flags, &["-l"]].concat(), pattern),
            "{pattern}"
        );
    }
}

/// `rg -o` prints one line per match, which its `--json` does not show:
/// compared with its text output, `path:line:text`, a match spanning lines
/// printed one line at a time; `-c -o` counts matches. rg's notice that it
/// stopped at a binary file's NUL is left out: grep counts such files in
/// `binary_files_skipped` (checked above) rather than printing a line.
#[test]
fn only_matching_matches_rg_o() {
    let Some(rg_path) = find_rg() else { return };
    let dir = fixture();
    type Configure = fn(&mut GrepOptions);
    let cases: &[(&str, &[&str], Configure)] = &[
        ("needle", &[], |_| {}),
        (r"ne+dles?|NEEDLE", &[], |_| {}),
        (r"\bneedle\b", &["-i"], |o| o.ignore_case = true),
        ("needle", &["-w"], |o| o.word_regexp = true),
        ("needle", &["-C", "1"], |o| {
            o.context(1);
        }),
        ("e*", &["-g", "*.txt"], |o| o.globs = vec!["*.txt".into()]),
        (r"needle\s+\w+", &["-U"], |o| o.multiline = true),
        ("needle", &["-v", "-g", "*.txt"], |o| {
            o.invert_match = true;
            o.globs = vec!["*.txt".into()];
        }),
    ];
    for &(pattern, args, configure) in cases {
        let label = format!("pattern {pattern:?}, rg -o {args:?}");
        let mut options = GrepOptions::new(pattern, dir.path());
        options.include_hidden = true; // as `rg --hidden`
        options.include_node_modules = Some(true);
        options.only_matching = true;
        configure(&mut options);
        let flags = [&["--hidden", "-o"], args].concat();
        let printed = |extra: &[&str]| {
            let all = [flags.as_slice(), extra].concat();
            let output = rg(&rg_path, dir.path(), &all, pattern, ".");
            String::from_utf8_lossy(&output.stdout)
                .split_terminator('\n')
                .filter(|l| !l.contains(": WARNING: stopped searching binary file"))
                .map(|l| l.strip_prefix("./").unwrap_or(l).to_string())
                .collect::<Vec<_>>()
        };
        let expected = printed(&["-n", "--no-heading", "-H"]);
        assert!(!expected.is_empty(), "{label}: the case tests something");
        let outcome = ours(&options);
        let context = options.context_before + options.context_after > 0;
        assert_eq!(printed_like_rg(&outcome, context), expected, "{label}");
        options.mode = GrepMode::Count;
        let counts: Vec<String> = ours(&options)
            .matches
            .iter()
            .map(|m| format!("{}:{}", m.path_lossy(), m.match_count))
            .collect();
        assert_eq!(counts, printed(&["--count", "-H"]), "{label} --count");
    }
}

/// Results as `rg -n --no-heading -H` prints them; with `context`, groups
/// that do not touch are set apart by `--`.
fn printed_like_rg(outcome: &GrepOutcome, context: bool) -> Vec<String> {
    let mut lines = Vec::new();
    let mut last: Option<(String, u64)> = None;
    for m in &outcome.matches {
        let path = m.path_lossy().into_owned();
        let first = m.context_before.first().map_or(m.line_number, |(n, _)| *n);
        let joins = last
            .as_ref()
            .is_some_and(|(p, n)| *p == path && first <= n + 1);
        if context && last.is_some() && !joins {
            lines.push("--".to_string());
        }
        for (n, text) in &m.context_before {
            lines.push(format!("{path}-{n}-{text}"));
        }
        let mut end = m.line_number;
        for (offset, text) in m.line.split('\n').enumerate() {
            end = m.line_number + offset as u64;
            lines.push(format!("{path}:{end}:{text}"));
        }
        for (n, text) in &m.context_after {
            lines.push(format!("{path}-{n}-{text}"));
            end = *n;
        }
        last = Some((path, end.max(last.as_ref().map_or(0, |l| l.1))));
    }
    lines
}

/// `list_files` is `rg --files`: the same files in the same order, from a
/// walk and from the cache alike, and a named file is listed alone.
#[test]
fn listed_files_match_rg_files() {
    let Some(rg_path) = find_rg() else { return };
    let dir = fixture();
    type Configure = fn(&mut GrepOptions);
    let cases: &[(&[&str], Configure)] = &[
        (&["--hidden"], |_| {}),
        (&[], |_| {}),
        (&["--hidden", "--no-ignore"], |o| o.use_gitignore = false),
        (&["--hidden", "-g", "*.rs"], |o| {
            o.globs = vec!["*.rs".into()]
        }),
        (&["--hidden", "-g", "!bin"], |o| {
            o.globs = vec!["!bin".into()]
        }),
        (&["--hidden", "-t", "md"], |o| {
            o.file_types = vec!["md".into()]
        }),
    ];
    for &(args, configure) in cases {
        let output = Command::new(&rg_path)
            .current_dir(dir.path())
            .args(["--files", "--sort", "path"])
            .args(args)
            .output()
            .unwrap();
        let expected: Vec<String> = String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        assert!(!expected.is_empty(), "rg --files {args:?}");
        for cache in [false, true] {
            let mut options = GrepOptions::new("", dir.path());
            options.include_node_modules = Some(true);
            options.include_hidden = asked_hidden(args);
            options.cache = cache;
            configure(&mut options);
            let mut listed = Vec::new();
            let scans = ScanCache::new(CachePolicy::default());
            let outcome = list_files(&options, &scans, &CancelToken::new(), &mut |_, path| {
                listed.push(String::from_utf8_lossy(path).into_owned())
            })
            .unwrap();
            assert_eq!(listed, expected, "rg --files {args:?}, cache {cache}");
            assert_eq!(outcome.files, expected.len());
        }
    }
    let options = GrepOptions::new("", dir.path().join("src/lib.rs"));
    let mut listed = Vec::new();
    let scans = ScanCache::new(CachePolicy::default());
    list_files(&options, &scans, &CancelToken::new(), &mut |_, path| {
        listed.push(path.to_vec())
    })
    .unwrap();
    assert_eq!(listed, [b"lib.rs".to_vec()]);
}

/// `-c` and `-l` with `-v` and `-w`: counted and listed as rg does, binary
/// files included (an inverted `-l` drops a file that stops at a NUL, as
/// `rg -l -v` does, where a plain `-l` lists it at its first match).
#[test]
fn inverted_and_word_modes_match_rg() {
    let Some(rg_path) = find_rg() else { return };
    let dir = fixture();
    type Configure = fn(&mut GrepOptions);
    let cases: &[(&[&str], Configure)] = &[
        (&["-v"], |o| o.invert_match = true),
        (&["-w"], |o| o.word_regexp = true),
        (&["-v", "-w", "-i"], |o| {
            o.invert_match = true;
            o.word_regexp = true;
            o.ignore_case = true;
        }),
    ];
    for &(args, configure) in cases {
        for (mode, flag) in [
            (GrepMode::Count, "--count"),
            (GrepMode::FilesWithMatches, "-l"),
        ] {
            let all = [&["--hidden", flag], args].concat();
            let output = rg(&rg_path, dir.path(), &all, "needle", ".");
            let expected: Vec<String> = String::from_utf8(output.stdout)
                .unwrap()
                .lines()
                .map(|l| l.strip_prefix("./").unwrap_or(l).to_string())
                .collect();
            let mut options = GrepOptions::new("needle", dir.path());
            options.include_hidden = true; // as `rg --hidden`
            options.include_node_modules = Some(true);
            options.mode = mode;
            configure(&mut options);
            let got: Vec<String> = ours(&options)
                .matches
                .iter()
                .map(|m| match mode {
                    GrepMode::Count => format!("{}:{}", m.path_lossy(), m.match_count),
                    _ => m.path_lossy().into_owned(),
                })
                .collect();
            assert_eq!(got, expected, "rg {all:?}");
        }
    }
}

/// Real text lines, 100 MiB and more, with one unique match near the end:
/// searched whole (nothing truncated) and agreeing with `rg`.
#[test]
fn file_over_100_mib_matches_rg() {
    let Some(rg_path) = find_rg() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.txt");
    let mut out = std::io::BufWriter::new(fs::File::create(&path).unwrap());
    let line = b"lorem ipsum dolor sit amet, consectetur adipiscing elit 0123456789\n";
    let lines = (100 << 20) / line.len() + 1_000;
    for i in 0..lines {
        if i == lines - 10 {
            out.write_all(b"the one unique marker-7f3a line\n").unwrap();
        }
        out.write_all(line).unwrap();
    }
    out.flush().unwrap();
    drop(out);
    assert!(fs::metadata(&path).unwrap().len() > 100 << 20);

    let started = Instant::now();
    let expected = rg_json(&rg_path, dir.path(), &["--hidden"], "marker-7f3a", ".");
    let rg_time = started.elapsed();
    let started = Instant::now();
    let outcome = ours(&GrepOptions::new("marker-7f3a", dir.path()));
    let our_time = started.elapsed();
    eprintln!("100 MiB file: natives grep {our_time:?}, rg {rg_time:?}");
    assert_eq!(our_lines(&outcome), expected.lines);
    assert_eq!(outcome.matches[0].line_number, lines as u64 - 9);
}
