//! The content index changes no answer. A table of more than a hundred
//! patterns (literals, `-i`, smart case, Unicode classes, `\b`,
//! alternations, anchors, multiline) is searched by `rg`, by an uncached
//! grep, and by cached greps once their index is built, one trusting it by
//! file identities and one by filesystem events (watching): the four must
//! agree on every line and counter.
//!
//! The default run searches a generated tree holding every kind of file the
//! index treats apart (text, empty, binary with a NUL in its first block or
//! past it, one too large to index, byte-order marks, Latin-1, CRLF, files
//! above one block).
//! `cargo test -p natives-scan --test index_parity -- --ignored` searches
//! the bench's real trees too (`bench/real-trees.ts` builds them; they are
//! looked for in `NATIVES_BENCH_TREES`, else `~/.cache/natives-bench/trees`).

use std::{
    collections::BTreeSet,
    fs,
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use natives_scan::{
    CancelToken, ScanCache,
    cache::CachePolicy,
    grep::{GrepMode, GrepOptions, GrepOutcome, ListSource, grep},
};
use natives_testkit::rg::{self, Line};

/// One comparison: a pattern, `rg`'s flags for it, and the same request
/// in options.
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

fn plain(_: &mut GrepOptions) {}
fn literal(o: &mut GrepOptions) {
    o.literal = true;
}
fn folded(o: &mut GrepOptions) {
    o.ignore_case = true;
}
fn smart(o: &mut GrepOptions) {
    o.smart_case = true;
}
fn word(o: &mut GrepOptions) {
    o.word_regexp = true;
}
fn multiline(o: &mut GrepOptions) {
    o.multiline = true;
}

const F: &[&str] = &["-F"];
const I: &[&str] = &["-i"];
const S: &[&str] = &["-S"];
const W: &[&str] = &["-w"];
const U: &[&str] = &["-U"];
const NONE: &[&str] = &[];

/// The table: every case's `rg` run also gets `--hidden -g !.git` and
/// searches `node_modules`, as the options do.
const CASES: &[Case] = &[
    // Fixed strings.
    case("fn main", F, literal),
    case("unsafe impl", F, literal),
    case("#[derive(", F, literal),
    case("TODO", F, literal),
    case("self.", F, literal),
    case("use std::", F, literal),
    case("=> {", F, literal),
    case("console.log(", F, literal),
    case("import {", F, literal),
    case("export default", F, literal),
    case("café", F, literal),
    case("日本語", F, literal),
    case("σίσυφος", F, literal),
    case("Straße", F, literal),
    case("a.b(", F, literal),
    case("${name}", F, literal),
    case("impl<'a>", F, literal),
    case("->", F, literal),
    case("needle after the NUL", F, literal),
    case("needle before the NUL", F, literal),
    case("unsafe IMPL", &["-F", "-i"], |o| {
        o.literal = true;
        o.ignore_case = true;
    }),
    case("CAFÉ", &["-F", "-i"], |o| {
        o.literal = true;
        o.ignore_case = true;
    }),
    // Regular expressions.
    case(r"fn [a-z_]+_mut\(", NONE, plain),
    case(r"fn \w+\(", NONE, plain),
    case(r"\bstruct\b", NONE, plain),
    case(r"\bimpl\b", NONE, plain),
    case(r"^use ", NONE, plain),
    case(r"^\s*//", NONE, plain),
    case(r"\)$", NONE, plain),
    case(r";$", NONE, plain),
    case(r"^}$", NONE, plain),
    case(r"[A-Z][a-z]+Error", NONE, plain),
    case(r"(?i)error", NONE, plain),
    case(r"TODO|FIXME|XXX", NONE, plain),
    case(r"unsafe|unchecked", NONE, plain),
    case(r"\d{4}-\d{2}-\d{2}", NONE, plain),
    case(r"0x[0-9a-fA-F]+", NONE, plain),
    case(r"\p{Greek}+", NONE, plain),
    case(r"\p{Cyrillic}+", NONE, plain),
    case(r"\p{Han}", NONE, plain),
    case(r"[αβγδ]", NONE, plain),
    case(r"é", NONE, plain),
    case(r"\w+é", NONE, plain),
    case(r"caf\x{e9}", NONE, plain),
    case(r"\bself\b", NONE, plain),
    case(r"\b[A-Z_]{5,}\b", NONE, plain),
    case(r"(fn|function)\s+\w+", NONE, plain),
    case(r"[ \t]+$", NONE, plain),
    case(r"\t", NONE, plain),
    case(r"[^\x00-\x7F]", NONE, plain),
    case(r"needle\d", NONE, plain),
    case(r"zqxjkvbw_never_9", NONE, plain),
    case(r"ab", NONE, plain),
    case(r"[a-z]{12}", NONE, plain),
    case(r"^#", NONE, plain),
    case(r"//.*TODO", NONE, plain),
    case(r"let mut \w+ =", NONE, plain),
    case(r"pub(\(crate\))? fn", NONE, plain),
    case(r"Result<[A-Z]\w*, \w+>", NONE, plain),
    case(r"\bSome\(", NONE, plain),
    case(r"async fn", NONE, plain),
    case(r"=>\s*\{", NONE, plain),
    case(r"\$\{\w+\}", NONE, plain),
    case(r#""[^"]*needle[^"]*""#, NONE, plain),
    case(r"'[a-z]'", NONE, plain),
    case(r"\bK\b", NONE, plain),
    case(r"fetchUser[A-Z]\w*", NONE, plain),
    case(r"resolveWorkspaceRoot|handleIncomingRequest", NONE, plain),
    case(r"(?:foo|bar)baz", NONE, plain),
    case(r"^\s*(pub )?struct \w+ \{$", NONE, plain),
    case(r"\bunsafe\s+impl\b", NONE, plain),
    case(r"[[:upper:]]{3}[[:digit:]]", NONE, plain),
    case(r"\p{Lu}\p{Ll}+ß", NONE, plain),
    case(r"needle$", NONE, plain),
    case(r"^needle", NONE, plain),
    case(r"one\r$", NONE, plain),
    // Case-insensitive.
    case("todo", I, folded),
    case("ERROR", I, folded),
    case("straße", I, folded),
    case("STRASSE", I, folded),
    case("σίσυφος", I, folded),
    case("ΣΊΣΥΦΟΣ", I, folded),
    case("kelvin", I, folded),
    case("message", I, folded),
    case("café", I, folded),
    case("fn main", I, folded),
    case(r"[a-z]+handler", I, folded),
    case(r"unsafe\s+impl", I, folded),
    // Smart case.
    case("todo", S, smart),
    case("Todo", S, smart),
    case("error", S, smart),
    case("Error", S, smart),
    case("self", S, smart),
    case("ß", S, smart),
    // Whole words.
    case("fn", W, word),
    case("self", W, word),
    case("impl", W, word),
    case("new", W, word),
    case("é", W, word),
    // Multiline.
    case(r"fn \w+\(\)\s*\{\n", U, multiline),
    case(r"\}\n\nfn", U, multiline),
    case(r"(?s)/\*.*?\*/", U, multiline),
    case(r"impl\s*\{\n\s*fn", U, multiline),
    case(r"\n\n\n", U, multiline),
    case(r"use [^;]+;\nuse", U, multiline),
    case(r"one\r\nneedle", U, multiline),
    case(r"needle before the NUL\nfiller", U, multiline),
];

/// Further modes, compared among our three searches and, where `rg` has
/// them, with `rg`.
const MODES: &[Case] = &[
    case("needle", &["-v"], |o| o.invert_match = true),
    case("fn", &["--count"], |o| o.mode = GrepMode::Count),
    case("impl", &["-l"], |o| o.mode = GrepMode::FilesWithMatches),
    case("unsafe impl", &["-C", "2"], |o| {
        o.context(2);
    }),
    case("", &["-g", "*.md"], |o| o.globs = vec!["*.md".into()]),
    // A glob selecting a file the ignore rules leave out (`ignored.log`
    // here): `rg -g` searches it, so the cached list cannot answer.
    case("needle", &["-g", "*.log"], |o| {
        o.globs = vec!["*.log".into()]
    }),
    case("", &["-g", "*.rs"], |o| o.globs = vec!["*.rs".into()]),
];

/// A cache that never expires, trusting its index by identities or, with
/// `watch`, by events. An empty list is not walked again (seed 001's
/// recheck, which a scan that is not watched makes once it is 200 ms old):
/// where a list comes from must not hang on how long the warm-up took.
fn cache(watch: bool) -> ScanCache {
    let policy = CachePolicy::default()
        .ttl(Duration::from_secs(3600))
        .empty_recheck(Duration::from_secs(3600))
        .watch(watch);
    ScanCache::new(policy)
}

fn options(root: &Path, case: &Case) -> GrepOptions {
    let mut options = GrepOptions::new(case.pattern, root);
    options.include_node_modules = Some(true);
    // As `rg --hidden`: dot-files are searched.
    options.include_hidden = true;
    (case.configure)(&mut options);
    options
}

fn ours(options: &GrepOptions, cache: &ScanCache) -> GrepOutcome {
    grep(options, cache, &CancelToken::new(), &mut |_| {}).unwrap()
}

/// Read every file twice through the cache, so the index holds them all.
fn warm(cache: &ScanCache, root: &Path) {
    let mut options = GrepOptions::new("zz", root);
    options.include_node_modules = Some(true);
    options.include_hidden = true;
    options.cache = true;
    options.mode = GrepMode::Count;
    for _ in 0..2 {
        ours(&options, cache);
    }
}

/// `found` and `expected` are the same answer: counters first, then the
/// first result that differs (a whole outcome is too long to print).
fn assert_same(found: &GrepOutcome, expected: &GrepOutcome, label: &str) {
    let counters = |o: &GrepOutcome| {
        (
            o.total_matches,
            o.files_with_matches,
            o.files_searched,
            o.binary_files_skipped,
            o.files_skipped_too_large,
            o.files_unreadable,
            o.limit_reached,
            o.matches.len(),
        )
    };
    assert_eq!(counters(found), counters(expected), "{label}: counters");
    let differs = found
        .matches
        .iter()
        .zip(&expected.matches)
        .position(|(a, b)| a != b);
    if let Some(at) = differs {
        let (a, b) = (&found.matches[at], &expected.matches[at]);
        panic!("{label}: result {at} differs:\n{a:?}\n{b:?}");
    }
    assert_eq!(found.root, expected.root, "{label}");
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

/// `path:count` per file, as `rg --count` prints them.
fn counts(outcome: &GrepOutcome) -> Vec<String> {
    outcome
        .matches
        .iter()
        .map(|m| format!("{}:{}", m.path_lossy(), m.match_count))
        .collect()
}

/// Where a cached request's list comes from: the cache, unless its `globs`
/// select a file the cache's rules leave out (as `rg -g` does, it brings
/// such files back: `rg --files` lists one with the glob that it lists
/// without), which only a walk finds.
fn expected_source(
    rg_path: &Path,
    root: &Path,
    request: &GrepOptions,
    cached: ListSource,
) -> ListSource {
    if request.globs.is_empty() {
        return cached;
    }
    let files = |globs: &[&str]| -> BTreeSet<String> {
        let mut command = Command::new(rg_path);
        command
            .current_dir(root)
            .args(["--files", "--hidden", "-g", "!.git"]);
        for glob in globs {
            command.args(["-g", glob]);
        }
        let output = command.output().unwrap();
        let listed = String::from_utf8_lossy(&output.stdout);
        listed.lines().map(str::to_string).collect()
    };
    let globs: Vec<&str> = request.globs.iter().map(String::as_str).collect();
    match files(&globs).is_subset(&files(&[])) {
        true => cached,
        false => ListSource::Walked,
    }
}

/// The same request searched four ways, compared. Content is compared
/// line by line with `rg` up to `max_lines` results; past that, as per-file
/// counts.
fn compare(rg_path: &Path, root: &Path, case: &Case, caches: &[ScanCache; 2], max_lines: u64) {
    let label = format!(
        "{:?} {:?} in {}",
        case.pattern,
        case.rg_args,
        root.display()
    );
    let mut request = options(root, case);
    if request.mode == GrepMode::Content {
        let probe = GrepOptions {
            mode: GrepMode::Count,
            ..request.clone()
        };
        if ours(&probe, &cache(false)).total_matches > max_lines {
            request.mode = GrepMode::Count;
        }
    }
    let uncached = ours(&request, &cache(false));
    let cached = GrepOptions {
        cache: true,
        ..request.clone()
    };
    let sources = [ListSource::Cached, ListSource::Watched];
    for ((cache, how), source) in caches.iter().zip(["by identity", "by events"]).zip(sources) {
        // Twice: the second search takes what the first learned (the
        // files it found nothing in, the reports of the others).
        for time in ["first", "again"] {
            let found = ours(&cached, cache);
            let label = format!("{label}: cached, trusted {how}, {time}");
            assert_same(&found, &uncached, &label);
            let expected = expected_source(rg_path, root, &cached, source);
            assert_eq!(found.source, expected, "{label}");
        }
    }
    // A limit stops the search midway: the files ruled out before it
    // count, those after it do not.
    let limited = GrepOptions {
        max_count: Some(7),
        offset: 2,
        ..cached
    };
    let limited_uncached = GrepOptions {
        cache: false,
        ..limited.clone()
    };
    assert_same(
        &ours(&limited, &caches[1]),
        &ours(&limited_uncached, &caches[1]),
        &format!("{label}: limited"),
    );
    let mut args = vec!["--hidden", "-g", "!.git"];
    args.extend_from_slice(case.rg_args);
    match request.mode {
        GrepMode::Content => {
            let expected = rg::json(rg_path, root, &args, case.pattern, ".");
            assert_eq!(our_lines(&uncached), expected.lines, "{label}");
            assert_eq!(uncached.files_searched as u64, expected.searches, "{label}");
        }
        mode => {
            if mode == GrepMode::Count && !args.contains(&"--count") {
                args.push("--count");
            }
            let printed = rg::run(rg_path, root, &args, case.pattern, ".");
            let expected: Vec<String> = String::from_utf8_lossy(&printed.stdout)
                .lines()
                .map(|line| line.strip_prefix("./").unwrap_or(line).to_string())
                .collect();
            let ours: Vec<String> = match mode {
                GrepMode::Count => counts(&uncached),
                _ => uncached
                    .matches
                    .iter()
                    .map(|m| m.path_lossy().into_owned())
                    .collect(),
            };
            assert_eq!(ours, expected, "{label}");
        }
    }
}

/// Every case and mode on `root`, with the index of both caches built
/// first; both must have ruled files out, the event-trusted one without a
/// single `fstatat`.
fn compare_all(root: &Path, max_lines: u64) {
    let Some(rg_path) = rg::find() else { return };
    let caches = [cache(false), cache(true)];
    for cache in &caches {
        warm(cache, root);
    }
    assert!(CASES.len() >= 100, "{} patterns", CASES.len());
    for case in CASES.iter().chain(MODES) {
        compare(&rg_path, root, case, &caches, max_lines);
    }
    let [by_identity, by_events] = caches.map(|c| c.stats().content);
    assert!(by_identity.files_skipped > 0, "{by_identity:?}");
    assert!(by_identity.files_verified > 0, "{by_identity:?}");
    assert!(by_events.files_skipped > 0, "{by_events:?}");
    assert_eq!(by_events.files_verified, 0, "events vouch: {by_events:?}");
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &[
    "fn",
    "impl",
    "self",
    "struct",
    "unsafe",
    "let",
    "mut",
    "return",
    "needle",
    "error",
    "Error",
    "TODO",
    "todo",
    "FIXME",
    "café",
    "Straße",
    "STRASSE",
    "σίσυφος",
    "Σίσυφος",
    "Привет",
    "日本語",
    "naïve",
    "KELVIN",
    "\u{212A}elvin",
    "me\u{17F}\u{17F}age",
    "MESSAGE",
    "handler",
    "clickHandler",
    "fetchUserById",
    "resolveWorkspaceRoot",
    "handleIncomingRequest",
    "foobaz",
    "barbaz",
    "0xBEEF",
    "2024-01-31",
    "K",
    "ABC1",
    "ǅemal",
    "new",
    "async",
    "await",
    "Some(x)",
    "=>",
    "${name}",
    "a.b(c)",
    "ß",
    "é",
    "'q'",
    "\"a needle here\"",
    "Result<Value, Error>",
    "std::io",
    "console.log(x)",
];

/// One generated source line.
fn line(rng: &mut Rng) -> String {
    let templates = [
        "fn {w}_mut(&mut self) -> Result<Value, Error> {",
        "    let mut {w} = {w}(self.{w});",
        "pub(crate) fn {w}() {}",
        "// TODO: {w} {w}",
        "unsafe impl Send for {w} {}",
        "#[derive(Debug)] struct {w} {",
        "use std::{w};",
        "function {w}(a, b) => { return {w}; }",
        "import { {w} } from './{w}';",
        "export default {w};",
        "    {w} {w} {w}\t",
        "}",
        "",
        "/* {w}",
        "   {w} */",
        "impl {w} {",
        "    fn {w}() {}",
        "async fn {w}() { {w}.await }",
    ];
    let mut text = rng.pick(&templates).to_string();
    while let Some(at) = text.find("{w}") {
        text.replace_range(at..at + 3, rng.pick(WORDS));
    }
    text
}

fn source(rng: &mut Rng, lines: usize, ending: &str) -> Vec<u8> {
    let mut text = String::new();
    for _ in 0..lines {
        text.push_str(&line(rng));
        text.push_str(ending);
    }
    text.into_bytes()
}

/// Every kind of file the index treats apart, among a few hundred sources.
fn generated_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let extensions = ["rs", "ts", "js", "md", "txt", "py"];
    for n in 0..300 {
        let ext = extensions[n % extensions.len()];
        let path = format!("src/m{}/f{n:03}.{ext}", n % 13);
        let lines = 1 + rng.below(60);
        let ending = if n % 17 == 0 { "\r\n" } else { "\n" };
        let mut bytes = source(&mut rng, lines, ending);
        if n % 23 == 0 {
            bytes.truncate(bytes.len().saturating_sub(1));
        }
        write(root, &path, &bytes);
    }
    let large = source(&mut rng, 6_000, "\n");
    write(root, "big/large.rs", &large);
    write_special_files(root, &mut rng);
    dir
}

/// Binary, empty, marked, Latin-1 and ignored files.
fn write_special_files(root: &Path, rng: &mut Rng) {
    let late_nul = [
        b"needle before the NUL\n".as_slice(),
        &b"filler line\n".repeat(8_000),
        b"needle after the NUL? no: \0needle after the NUL\n",
    ]
    .concat();
    let early_nul_large = [
        b"needle before the NUL\x00".as_slice(),
        &source(rng, 4_000, "\n"),
    ]
    .concat();
    let mut huge_binary = b"!<arch>\nneedle before the NUL\n\0".to_vec();
    huge_binary.resize(5 << 20, b'x');
    let files: &[(&str, &[u8])] = &[
        ("bin/small.bin", b"needle\0binary fn main\n"),
        ("bin/late-nul.txt", &late_nul),
        ("bin/early-nul-large.txt", &early_nul_large),
        ("bin/huge.a", &huge_binary),
        ("bin/nul-first.bin", b"\0needle"),
        ("empty/empty.rs", b""),
        ("empty/also-empty.txt", b""),
        ("marked/utf8-bom.txt", b"\xEF\xBB\xBFneedle caf\xC3\xA9\n"),
        ("marked/utf16.txt", b"\xFF\xFEn\0e\0e\0d\0l\0e\0\n\0"),
        (
            "latin1.txt",
            b"caf\xe9 needle\n\xff\xfe other\nneedle \xe9t\xe9\n",
        ),
        ("crlf.txt", b"needle one\r\nneedle two\r\none\r\n"),
        (".hidden/secret.rs", b"fn main() { needle(); }\n"),
        (
            "node_modules/pkg/index.js",
            b"console.log(needle);\nexport default needle;\n",
        ),
        (".gitignore", b"*.log\nbuild/\n"),
        ("ignored.log", b"needle in a log\n"),
        ("build/out.rs", b"fn main() {}\n"),
        (
            "docs/readme.md",
            b"# Needle\n\nFind the needle, or needles. TODO\n",
        ),
    ];
    for (path, bytes) in files {
        write(root, path, bytes);
    }
    fs::create_dir_all(root.join(".git")).unwrap();
}

fn write(root: &Path, relative: &str, bytes: &[u8]) {
    let path = root.join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, bytes).unwrap();
}

#[test]
fn a_generated_tree_answers_alike_from_the_index_uncached_and_by_rg() {
    let dir = generated_tree();
    // Files changed less than a few seconds before their read are indexed
    // only under a watch: wait, so the identity-trusting cache indexes them.
    std::thread::sleep(Duration::from_millis(3_300));
    compare_all(dir.path(), u64::MAX);
}

/// Where `bench/real-trees.ts` keeps the real trees.
fn bench_trees() -> PathBuf {
    if let Some(dir) = std::env::var_os("NATIVES_BENCH_TREES") {
        return PathBuf::from(dir);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cache")))
        .unwrap_or_default();
    cache.join("natives-bench/trees")
}

#[test]
#[ignore = "searches the bench's real trees (hundreds of MiB): run with --ignored"]
fn the_bench_trees_answer_alike_from_the_index_uncached_and_by_rg() {
    let trees = bench_trees();
    let present: Vec<PathBuf> = ["vendor", "npm", "mixed"]
        .iter()
        .map(|name| trees.join(name))
        .filter(|dir| dir.is_dir())
        .collect();
    assert!(
        !present.is_empty(),
        "no bench trees in {} (bun bench/real-trees.ts builds them)",
        trees.display()
    );
    for dir in present {
        eprintln!("comparing on {}", dir.display());
        compare_all(&dir, 20_000);
    }
}
