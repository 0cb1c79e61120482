//! Zero stale answers: another process edits a tree (writes, appends,
//! same-size rewrites with the mtime put back, renames of files and
//! directories, deletions, new directories, ignore-file edits) and after
//! each edit a cached grep of a watched scan, whose content index is
//! trusted by events, must answer exactly as a fresh walk does. A second
//! cache, not watched, is invalidated after each edit as the agent's tools
//! do, and must answer alike too (its index trusted by file identities). A
//! third is a new process's each cycle, with persistence on: it restores
//! the scan from the record the last cycle's left, proved current by its
//! directories, and must answer alike as well. A fourth reads its list from
//! a shared index (`ScanCache::share`) another cache holds and watches, its
//! content index trusted by the paths the indexer's events named, and
//! must answer alike too.
//!
//! The default run makes 300 cycles; `NATIVES_EDIT_CYCLES=10000 cargo test
//! -p natives-scan --release --test edit_cycles -- --ignored` makes as many
//! as asked.
//!
//! The editor is this test binary itself, started again with
//! `NATIVES_EDIT_CYCLES_EDITOR` set: it reads one edit a line on its
//! standard input, makes it, and says so once the edit is done.

use std::{
    collections::BTreeSet,
    fs,
    io::{BufRead, BufReader, Write},
    path::{Path, PathBuf},
    process::{Child, ChildStdin, ChildStdout, Command, Stdio},
    time::Duration,
};

use natives_scan::{
    CancelToken, ScanCache,
    cache::CachePolicy,
    grep::{GrepOptions, GrepOutcome, ListSource, grep, grep_at_once},
};

/// Set in the editor's environment: the root it edits.
const EDITOR: &str = "NATIVES_EDIT_CYCLES_EDITOR";

/// What the editor prints once an edit is made (the test harness may have
/// left a line of its own open before it).
const DONE: &str = "edit-made";

/// The editor's entry point (a no-op in the test run itself).
#[test]
fn editor_process() {
    let Some(root) = std::env::var_os(EDITOR) else {
        return;
    };
    let root = PathBuf::from(root);
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        apply(&root, &line);
        writeln!(out, "{DONE}").unwrap();
        out.flush().unwrap();
    }
}

/// Make one edit: `op path [arg]`, content in hex.
fn apply(root: &Path, line: &str) {
    let fields: Vec<&str> = line.split(' ').collect();
    let at = |i: usize| root.join(fields[i]);
    match fields[0] {
        "write" => fs::write(at(1), hex(fields[2])).unwrap(),
        "append" => {
            let mut file = fs::OpenOptions::new().append(true).open(at(1)).unwrap();
            file.write_all(&hex(fields[2])).unwrap();
        }
        "inplace" => rewrite_in_place(&at(1), &hex(fields[2])),
        "rename" => {
            fs::create_dir_all(at(2).parent().unwrap()).unwrap();
            fs::rename(at(1), at(2)).unwrap();
        }
        "remove" => fs::remove_file(at(1)).unwrap(),
        "rmdir" => fs::remove_dir_all(at(1)).unwrap(),
        "mkdir" => fs::create_dir_all(at(1)).unwrap(),
        other => panic!("unknown edit {other}"),
    }
}

/// Overwrite the start of `path` with `bytes` (no longer than it), keeping
/// its size, and put its mtime back: only ctime shows the change.
fn rewrite_in_place(path: &Path, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let mtime = fs::metadata(path).unwrap().modified().unwrap();
    let file = fs::OpenOptions::new().write(true).open(path).unwrap();
    file.write_all_at(bytes, 0).unwrap();
    file.set_modified(mtime).unwrap();
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The editor, running.
struct Editor {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Editor {
    fn start(root: &Path) -> Editor {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "editor_process",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(EDITOR, root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Editor {
            child,
            input,
            output,
        }
    }

    /// Send `edit` and wait until it is made.
    fn edit(&mut self, edit: &str) {
        writeln!(self.input, "{edit}").unwrap();
        self.input.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.output.read_line(&mut line).unwrap() > 0,
                "the editor died"
            );
            if line.trim_end().ends_with(DONE) {
                return;
            }
        }
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Words files are made of; patterns search for them.
fn word(rng: &mut Rng) -> String {
    format!("w{:02}", rng.below(40))
}

fn text(rng: &mut Rng) -> Vec<u8> {
    let lines = 1 + rng.below(8);
    let mut text = String::new();
    for _ in 0..lines {
        let words: Vec<String> = (0..1 + rng.below(6)).map(|_| word(rng)).collect();
        text.push_str(&words.join(" "));
        text.push('\n');
    }
    text.into_bytes()
}

/// What the test knows of the tree: its files and directories.
struct Model {
    files: BTreeSet<String>,
    dirs: BTreeSet<String>,
    next_name: usize,
}

impl Model {
    fn pick_file(&self, rng: &mut Rng) -> Option<String> {
        self.files.iter().nth(rng.below(self.files.len())).cloned()
    }

    fn pick_dir(&self, rng: &mut Rng) -> String {
        self.dirs
            .iter()
            .nth(rng.below(self.dirs.len()))
            .cloned()
            .unwrap()
    }

    fn fresh_name(&mut self, dir: &str, ext: &str) -> String {
        self.next_name += 1;
        format!("{dir}/n{}.{ext}", self.next_name)
    }
}

/// The next edit, applied to the model.
fn next_edit(rng: &mut Rng, model: &mut Model) -> String {
    let file = model.pick_file(rng);
    match (rng.below(10), file) {
        (0 | 1, _) | (_, None) => {
            let dir = model.pick_dir(rng);
            let path = model.fresh_name(&dir, ["rs", "ts", "log", "txt"][rng.below(4)]);
            model.files.insert(path.clone());
            format!("write {path} {}", to_hex(&text(rng)))
        }
        (2, Some(path)) => format!("write {path} {}", to_hex(&text(rng))),
        (3, Some(path)) => format!("append {path} {}", to_hex(&text(rng))),
        (4 | 5, Some(path)) => format!("inplace {path} {}", to_hex(word(rng).as_bytes())),
        (6, Some(path)) => {
            let dir = model.pick_dir(rng);
            let to = model.fresh_name(&dir, "rs");
            model.files.remove(&path);
            model.files.insert(to.clone());
            format!("rename {path} {to}")
        }
        (7, Some(path)) => {
            model.files.remove(&path);
            format!("remove {path}")
        }
        (8, _) => directory_edit(rng, model),
        (_, _) => ignore_edit(rng),
    }
}

/// Make, rename or remove a directory below `src`.
fn directory_edit(rng: &mut Rng, model: &mut Model) -> String {
    let movable: Vec<String> = model
        .dirs
        .iter()
        .filter(|d| d.matches('/').count() >= 1)
        .cloned()
        .collect();
    if movable.is_empty() || rng.below(3) == 0 {
        model.next_name += 1;
        let dir = format!("{}/d{}", model.pick_dir(rng), model.next_name);
        model.dirs.insert(dir.clone());
        return format!("mkdir {dir}");
    }
    let dir = movable[rng.below(movable.len())].clone();
    let inside = |p: &String| p == &dir || p.starts_with(&format!("{dir}/"));
    if rng.below(2) == 0 {
        model.files.retain(|p| !inside(p));
        model.dirs.retain(|p| !inside(p));
        return format!("rmdir {dir}");
    }
    model.next_name += 1;
    let to = format!("src/r{}", model.next_name);
    let moved = |set: &BTreeSet<String>| -> BTreeSet<String> {
        set.iter()
            .map(|p| match p.strip_prefix(&dir) {
                Some(rest) if inside(p) => format!("{to}{rest}"),
                _ => p.clone(),
            })
            .collect()
    };
    model.files = moved(&model.files);
    model.dirs = moved(&model.dirs);
    format!("rename {dir} {to}")
}

/// Rewrite an ignore file: which files the scan lists changes.
fn ignore_edit(rng: &mut Rng) -> String {
    let rules = ["*.log\n", "", "*.txt\n", "src/d*/\n*.log\n"];
    let file = [".gitignore", "src/.ignore"][rng.below(2)];
    format!(
        "write {file} {}",
        to_hex(rules[rng.below(rules.len())].as_bytes())
    )
}

/// Globs searches are made with: none, and globs selecting files, some of
/// which the ignore rules leave out at times (`rg -g` searches those, so
/// a cached answer must walk then).
const GLOBS: [Option<&str>; 5] = [None, Some("*.log"), Some("*.txt"), Some("d*"), Some("*.rs")];

fn search(
    cache: &ScanCache,
    root: &Path,
    (pattern, glob): (&str, Option<&str>),
    cached: bool,
) -> GrepOutcome {
    let mut options = GrepOptions::new(pattern, root);
    options.cache = cached;
    options.ignore_case = pattern.starts_with('W');
    options.globs = glob.map(String::from).into_iter().collect();
    grep(&options, cache, &CancelToken::new(), &mut |_| {}).unwrap()
}

/// The first page of `request` from `cache` when answered at once (see
/// `grep_at_once`), as a search for the repeated request tries it first.
fn first_page_at_once(
    cache: &ScanCache,
    root: &Path,
    request: (&str, Option<&str>),
) -> Option<GrepOutcome> {
    let (pattern, glob) = request;
    let mut options = GrepOptions::new(pattern, root);
    options.cache = true;
    options.max_count = Some(FIRST_PAGE);
    options.ignore_case = pattern.starts_with('W');
    options.globs = glob.map(String::from).into_iter().collect();
    grep_at_once(&options, cache, &CancelToken::new())
}

/// Results in a first page answered at once.
const FIRST_PAGE: usize = 3;

/// `cycles` edits, each followed by the same searches through both caches
/// and fresh, which must agree; the repeated search's first page is first
/// tried at once from the watched cache, right after the edit.
fn run_cycles(cycles: usize) {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    fs::create_dir_all(root.join("src/a/b")).unwrap();
    fs::create_dir(root.join(".git")).unwrap();
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let mut model = Model {
        files: BTreeSet::new(),
        dirs: ["src", "src/a", "src/a/b"].map(String::from).into(),
        next_name: 0,
    };
    let mut editor = Editor::start(&root);
    for _ in 0..60 {
        let edit = next_edit(&mut rng, &mut model);
        editor.edit(&edit);
    }
    let policy = CachePolicy::default().ttl(Duration::from_secs(3600));
    let home = tempfile::tempdir().unwrap();
    let restarted = || ScanCache::new(policy.clone().persist(Some(home.path().to_path_buf())));
    let (mut restored, mut relisted, mut walked) = (0, 0, [0; 3]);
    let watched = ScanCache::new(policy.clone().watch(true));
    let shared_home = tempfile::tempdir().unwrap();
    let sharing = |watch: bool| -> &'static ScanCache {
        let policy = policy
            .clone()
            .watch(watch)
            .persist(Some(shared_home.path().to_path_buf()))
            .shared(true);
        let cache = Box::leak(Box::new(ScanCache::new(policy)));
        cache.share().unwrap();
        cache
    };
    // The indexer asks first, so it indexes the root the reader then reads.
    let indexer = sharing(true);
    search(indexer, &root, ("x", None), true);
    let reader = sharing(false);
    let invalidated = ScanCache::new(policy.clone());
    let uncached = ScanCache::new(policy.clone());
    // Answers from the watched list, and those with a glob from it or walked.
    let (mut vouched, mut globbed, mut at_once) = (0, [0, 0], 0);
    // An agent searches, edits, and searches again: the first search of
    // each cycle repeats one of the last, whose files the index learned.
    let mut last = (word(&mut rng), None);
    for cycle in 0..cycles {
        let edit = next_edit(&mut rng, &mut model);
        editor.edit(&edit);
        // What the agent's tools do after their own edits.
        let named = edit.split(' ').skip(1).take(2);
        for path in named.filter(|p| p.contains('/') || p.starts_with('.')) {
            invalidated.invalidate_path(&root.join(path)).unwrap();
        }
        let patterns = [
            format!("{}|{}", word(&mut rng), word(&mut rng)),
            word(&mut rng).to_uppercase(),
        ];
        let mut requests = vec![(last.0.clone(), last.1)];
        for pattern in patterns {
            requests.push((pattern, GLOBS[rng.below(GLOBS.len())]));
        }
        last = requests[1 + rng.below(2)].clone();
        let by_record = restarted();
        let repeated = (requests[0].0.as_str(), requests[0].1);
        let first_page = first_page_at_once(&watched, &root, repeated);
        for (pattern, glob) in &requests {
            let request = (pattern.as_str(), *glob);
            let fresh = search(&uncached, &root, request, false);
            if let Some(page) = first_page.as_ref().filter(|_| request == repeated) {
                let expected = &fresh.matches[..fresh.matches.len().min(FIRST_PAGE)];
                assert_eq!(
                    page.matches, expected,
                    "cycle {cycle}, after `{edit}`, at once"
                );
                at_once += 1;
            }
            let by_events = search(&watched, &root, request, true);
            let by_identity = search(&invalidated, &root, request, true);
            let restored_answer = search(&by_record, &root, request, true);
            let read_answer = search(reader, &root, request, true);
            let label = format!("cycle {cycle}, after `{edit}`, {request:?}");
            let answers = [
                (&by_events, "watched"),
                (&by_identity, "invalidated"),
                (&restored_answer, "restored from its record"),
                (&read_answer, "read from a shared index"),
            ];
            for (found, how) in answers {
                let same = GrepOutcome {
                    source: ListSource::Walked,
                    ..found.clone()
                };
                assert_eq!(same, fresh, "{label}: {how}");
            }
            let from_list = by_events.source == ListSource::Watched;
            vouched += u64::from(from_list);
            if request.1.is_some() {
                globbed[usize::from(from_list)] += 1;
            }
        }
        by_record.settle_records();
        let persist = by_record.stats().persist;
        restored += persist.restored;
        relisted += persist.dirs_relisted;
        let rebuilt = persist.rebuilt;
        for (count, why) in walked
            .iter_mut()
            .zip([rebuilt.rules, rebuilt.root, rebuilt.changes])
        {
            *count += why;
        }
    }
    let content = watched.stats().content;
    assert!(content.files_skipped > 0, "{content:?}");
    assert!(
        content.files_answered > 0,
        "repeated searches answered: {content:?}"
    );
    assert!(vouched > 0, "answers came from the watched list");
    eprintln!(
        "{restored} of {cycles} new processes restored their scan ({relisted} directories \
         listed again); walked instead for a rule file, the root, a change: {walked:?}"
    );
    assert!(
        restored > 0 && relisted > 0,
        "restored {restored}, relisted {relisted}"
    );
    let shared = reader.stats().shared;
    eprintln!("the reader of the shared index: {shared:?}");
    assert_eq!((shared.reading, shared.alone), (1, 0), "{shared:?}");
    assert!(
        shared.lists_received > 1 && shared.unchanged > 0,
        "{shared:?}"
    );
    eprintln!("{at_once} of {cycles} repeated searches' first pages answered at once");
    assert!(at_once > 0, "first pages answered at once");
    assert!(globbed[0] > 0 && globbed[1] > 0, "globbed: {globbed:?}");
}

#[test]
fn edits_by_another_process_are_in_every_cached_answer() {
    run_cycles(300);
}

#[test]
#[ignore = "ten thousand cycles by default: run with --ignored (NATIVES_EDIT_CYCLES sets how many)"]
fn many_edits_by_another_process_are_in_every_cached_answer() {
    let cycles = std::env::var("NATIVES_EDIT_CYCLES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    run_cycles(cycles);
}
