//! `rg` itself, for the tests that compare a search with ripgrep's: where
//! it is, its raw output, and its `--json` report as lines and counters.

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
};

use base64::Engine;
use serde_json::Value;

/// `rg` on `PATH`, else in `~/.cargo/bin`. Without it a test prints a
/// notice and compares nothing, unless `NATIVES_REQUIRE_RG` is set (as in
/// CI), where a missing `rg` fails.
pub fn find() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>());
    let in_cargo = std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo/bin"));
    let found = on_path
        .chain(in_cargo)
        .map(|dir| dir.join("rg"))
        .find(|rg| rg.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os("NATIVES_REQUIRE_RG").is_none(),
            "NATIVES_REQUIRE_RG is set but rg is not on PATH or in ~/.cargo/bin"
        );
        eprintln!(
            "\n!!!!!!!! rg not found on PATH or in ~/.cargo/bin: rg parity NOT CHECKED !!!!!!!!\n"
        );
    }
    found
}

/// One reported line: (path, line number, text without its final `\n`,
/// `true` for a match, `false` for context).
pub type Line = (String, u64, String, bool);

/// What `rg --json` reported.
#[derive(Debug, Default)]
pub struct Report {
    /// Match and context lines, in the order printed.
    pub lines: Vec<Line>,
    /// Match records (lines, or blocks of lines with `-U`).
    pub match_records: u64,
    /// Files searched (the summary's `searches`).
    pub searches: u64,
    /// Files with a match.
    pub searches_with_match: u64,
}

/// `rg --sort path ARGS -e PATTERN -- TARGET` in `dir`; exit codes above 1
/// fail the test.
pub fn run(rg: &Path, dir: &Path, args: &[&str], pattern: &str, target: &str) -> Output {
    let output = Command::new(rg)
        .current_dir(dir)
        .args(["--sort", "path"])
        .args(args)
        .args(["-e", pattern, "--", target])
        .output()
        .unwrap();
    assert!(
        output.status.code().is_some_and(|c| c <= 1),
        "rg failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// [`run`] with `--json`, its records read into a [`Report`] (paths
/// without a leading `./`; text that is not UTF-8 replaced as our search
/// replaces it).
pub fn json(rg: &Path, dir: &Path, args: &[&str], pattern: &str, target: &str) -> Report {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let output = run(rg, dir, &all, pattern, target);
    let mut report = Report::default();
    let records = output
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty());
    for record in records {
        let message: Value = serde_json::from_slice(record).unwrap();
        let data = &message["data"];
        match message["type"].as_str().unwrap() {
            kind @ ("match" | "context") => {
                let path = text_of(&data["path"]);
                let path = path.strip_prefix("./").unwrap_or(&path).to_string();
                let text = text_of(&data["lines"]);
                let text = text.strip_suffix('\n').unwrap_or(&text).to_string();
                let number = data["line_number"].as_u64().unwrap();
                report.match_records += u64::from(kind == "match");
                report.lines.push((path, number, text, kind == "match"));
            }
            "summary" => {
                let stats = &data["stats"];
                report.searches = stats["searches"].as_u64().unwrap();
                report.searches_with_match = stats["searches_with_match"].as_u64().unwrap();
            }
            _ => {}
        }
    }
    report
}

/// A JSON text or bytes field as text.
fn text_of(value: &Value) -> String {
    if let Some(text) = value.get("text").and_then(Value::as_str) {
        return text.to_string();
    }
    let encoded = value["bytes"].as_str().expect("text or bytes");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .unwrap();
    String::from_utf8_lossy(&bytes).into_owned()
}
