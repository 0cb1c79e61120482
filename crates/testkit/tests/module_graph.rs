//! Each crate's modules form layers: each module imports only modules
//! below it, so any one can be read, tested and changed without the ones
//! above. This test reads, for every crate of the workspace, the
//! `use crate::…`, `use super::…`, `use self::…` and child-module `use`
//! lines of its `src/` (test modules left out: those declared under
//! `#[cfg(test)]`, and files named `…tests`), follows re-exports to the
//! module that defines a name, and fails when a crate's import graph has a
//! circle, between files or between top-level modules (all of `grep/`
//! counting as `grep`), or when a module imports an item one of its
//! ancestors defines: the ancestor declares (and mostly uses) the module,
//! so the import back up is a circle too. An item both need lives in a
//! module of its own below the ancestor, which both import; the ancestor
//! may re-export it, since a re-export is followed to the module that
//! defines the name. The crate root is left out of that rule: a root that
//! only declares modules and re-exports defines nothing to import, and
//! what a root does define (a front's `Outcome`, an inline module) is its
//! own layer under the modules it declares.
//! `cargo test -p natives-testkit --test module_graph -- --nocapture`
//! prints each crate's graph, its imports back up, its circles and the
//! imports inside them.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
};

/// Module path (`""` for the crate root, `grep::needs`) to its source text.
type Sources = BTreeMap<String, String>;
/// Module path to the module paths it imports from.
type Graph = BTreeMap<String, BTreeSet<String>>;

#[test]
fn every_crate_imports_its_modules_downward_without_a_circle() {
    let crates = workspace_crates();
    assert!(crates.len() > 1, "no crates found beside {crates:?}");
    let found: Vec<String> = crates.iter().flat_map(|src| faults_of_crate(src)).collect();
    assert!(
        found.is_empty(),
        "the module imports go back up or form circles: {found:?}"
    );
}

/// The `src/` of every crate beside this one, in name order.
fn workspace_crates() -> Vec<PathBuf> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crates/");
    let mut dirs: Vec<PathBuf> = fs::read_dir(crates)
        .expect("read crates/")
        .map(|entry| entry.expect("entry").path().join("src"))
        .filter(|src| src.join("lib.rs").is_file() || src.join("main.rs").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// One crate's imports of an ancestor's items, named `crate: module ->
/// ancestor (name)`, and the circles of its import graph, named
/// `crate: a <-> b`.
fn faults_of_crate(src: &Path) -> Vec<String> {
    let name = src.parent().and_then(Path::file_name).expect("crate dir");
    let name = name.to_string_lossy();
    let (files, upward) = import_graph(&read_sources(src));
    println!(
        "== {name}: imports of an ancestor's items: {}",
        upward.len()
    );
    let mut found: Vec<String> = upward
        .iter()
        .map(|import| format!("{name}: {import}"))
        .collect();
    for import in &found {
        println!("{import}");
    }
    for (module, imports) in &files {
        let list: Vec<&str> = imports.iter().map(String::as_str).collect();
        println!("{module} -> {}", list.join(", "));
    }
    let tops = collapse(&files);
    for (view, graph) in [("file", &files), ("top-level module", &tops)] {
        let circles = circles(graph);
        let inside: usize = circles
            .iter()
            .map(|circle| edges_within(graph, circle))
            .sum();
        for circle in &circles {
            let names: Vec<&str> = circle.iter().map(String::as_str).collect();
            found.push(format!("{name}: {}", names.join(" <-> ")));
        }
        println!(
            "{name}: {view} circles: {}, imports inside them: {inside}",
            circles.len()
        );
    }
    found
}

/// The graph between top-level modules (`grep::needs` counts as `grep`).
fn collapse(files: &Graph) -> Graph {
    let top = |module: &str| module.split("::").next().unwrap_or_default().to_string();
    let mut graph = Graph::new();
    for (module, imports) in files {
        let targets = graph.entry(top(module)).or_default();
        targets.extend(
            imports
                .iter()
                .map(|target| top(target))
                .filter(|t| *t != top(module)),
        );
    }
    graph
}

/// Every module of the crate at `root` but its test modules.
fn read_sources(root: &Path) -> Sources {
    let mut sources = Sources::new();
    collect(root, root, &mut sources);
    let tests = test_modules(&sources);
    sources.retain(|module, _| !tests.iter().any(|test| is_within(module, test)));
    sources
}

/// The modules declared under `#[cfg(test)]` (`#[cfg(test)] mod fixture;`).
fn test_modules(sources: &Sources) -> Vec<String> {
    let mut tests = Vec::new();
    for (module, text) in sources {
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for pair in lines.windows(2) {
            if pair[0] == "#[cfg(test)]"
                && let Some(name) = declared_module(pair[1])
            {
                let path: Vec<String> = segments(module).chain([name.to_string()]).collect();
                tests.push(path.join("::"));
            }
        }
    }
    tests
}

/// The name of the file module `line` declares (`mod fixture;`).
fn declared_module(line: &str) -> Option<&str> {
    let line = ["pub ", "pub(crate) ", "pub(super) "]
        .iter()
        .find_map(|visibility| line.strip_prefix(visibility))
        .unwrap_or(line);
    line.strip_prefix("mod ")?.strip_suffix(';')
}

fn collect(root: &Path, dir: &Path, sources: &mut Sources) {
    for entry in fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            collect(root, &path, sources);
            continue;
        }
        let relative = path
            .strip_prefix(root)
            .expect("under src")
            .with_extension("");
        let mut parts: Vec<String> = relative
            .iter()
            .map(|part| part.to_string_lossy().into_owned())
            .collect();
        if matches!(parts.last().map(String::as_str), Some("lib" | "mod")) {
            parts.pop();
        }
        if parts.last().is_some_and(|name| name.ends_with("tests")) {
            continue;
        }
        sources.insert(parts.join("::"), fs::read_to_string(&path).expect("read"));
    }
}

/// The edges, each import resolved to the module that defines the name,
/// and the imports of an ancestor module's items (`module -> ancestor
/// (name)`), the crate root's left out.
fn import_graph(sources: &Sources) -> (Graph, Vec<String>) {
    let imports: BTreeMap<&str, Vec<Import>> = sources
        .iter()
        .map(|(module, text)| (module.as_str(), uses(module, text, sources)))
        .collect();
    let mut graph = Graph::new();
    let mut upward = Vec::new();
    for (module, list) in &imports {
        let targets = graph.entry(module.to_string()).or_default();
        for import in list {
            let target = defining_module(&import.path, &imports, sources, 0);
            if !is_within(module, &target) {
                targets.insert(target);
            } else if !target.is_empty() && *module != target {
                upward.push(format!("{module} -> {target} ({})", import.name));
            }
        }
    }
    (graph, upward)
}

/// Whether `module` is `ancestor` or lies inside it (`""` holds them all).
fn is_within(module: &str, ancestor: &str) -> bool {
    ancestor.is_empty()
        || module == ancestor
        || module
            .strip_prefix(ancestor)
            .is_some_and(|rest| rest.starts_with("::"))
}

/// One imported path, absolute from the crate root, and the name it binds.
struct Import {
    path: Vec<String>,
    name: String,
}

/// The module a path names, or the module it re-exports the last name from.
fn defining_module(
    path: &[String],
    imports: &BTreeMap<&str, Vec<Import>>,
    sources: &Sources,
    depth: usize,
) -> String {
    let (module, rest) = longest_module(path, sources);
    let Some(name) = rest.first() else {
        return module;
    };
    let reexport = imports
        .get(module.as_str())
        .and_then(|list| list.iter().find(|import| import.name == *name));
    match reexport {
        Some(import) if depth < 8 => {
            let mut next = import.path.clone();
            next.extend(rest[1..].iter().cloned());
            defining_module(&next, imports, sources, depth + 1)
        }
        _ => module,
    }
}

fn longest_module<'p>(path: &'p [String], sources: &Sources) -> (String, &'p [String]) {
    (0..=path.len())
        .rev()
        .map(|len| (path[..len].join("::"), &path[len..]))
        .find(|(module, _)| sources.contains_key(module))
        .expect("the crate root is a module")
}

/// The crate-internal imports of one module's non-test code.
fn uses(module: &str, text: &str, sources: &Sources) -> Vec<Import> {
    let mut imports = Vec::new();
    for statement in use_statements(text) {
        for (path, name) in expand(&statement.tree) {
            if let Some(path) = absolute(module, &path, statement.nested, sources) {
                imports.push(Import { path, name });
            }
        }
    }
    imports
}

struct UseStatement {
    tree: String,
    /// Inside an inline module or function, where `super` is this file.
    nested: bool,
}

fn use_statements(text: &str) -> Vec<UseStatement> {
    let mut statements = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let test_only = line.starts_with("#[cfg(") && line.contains("test");
        if test_only && lines.peek().is_some_and(|next| next.ends_with('{')) {
            lines.by_ref().find(|line| *line == "}");
            continue;
        }
        let trimmed = line.trim_start();
        let Some(start) = trimmed
            .find("use ")
            .filter(|at| is_use_prefix(&trimmed[..*at]))
        else {
            continue;
        };
        let mut tree = trimmed[start + 4..].to_string();
        while !tree.contains(';') {
            let Some(next) = lines.next() else { break };
            tree.push_str(next.trim());
        }
        let tree = tree.split(';').next().unwrap_or_default();
        let tree = tree.split_whitespace().collect::<Vec<_>>().join(" ");
        statements.push(UseStatement {
            tree,
            nested: line.starts_with(' '),
        });
    }
    statements
}

fn is_use_prefix(prefix: &str) -> bool {
    matches!(prefix, "" | "pub " | "pub(crate) " | "pub(super) ")
}

/// `a::{b,c::{d,e as f}}` to `(a::b, b)`, `(a::c::d, d)`, `(a::c::e, f)`.
fn expand(tree: &str) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    expand_into(&[], tree, &mut out);
    out
}

fn expand_into(prefix: &[String], tree: &str, out: &mut Vec<(Vec<String>, String)>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let mut base = prefix.to_vec();
        base.extend(segments(tree[..open].trim_end_matches("::")));
        for part in split_top(&tree[open + 1..tree.len() - 1]) {
            expand_into(&base, part, out);
        }
        return;
    }
    let (path, alias) = tree
        .split_once(" as ")
        .map_or((tree, None), |(p, a)| (p, Some(a)));
    let mut full = prefix.to_vec();
    full.extend(segments(path).filter(|part| *part != "self"));
    let name = alias
        .map(str::to_string)
        .or_else(|| full.last().cloned())
        .unwrap_or_default();
    out.push((full, name));
}

fn segments(path: &str) -> impl Iterator<Item = String> + '_ {
    path.split("::")
        .filter(|part| !part.is_empty())
        .map(str::to_string)
}

fn split_top(list: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (at, byte) in list.bytes().enumerate() {
        match byte {
            b'{' => depth += 1,
            b'}' => depth -= 1,
            b',' if depth == 0 => {
                parts.push(&list[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&list[start..]);
    parts
        .into_iter()
        .filter(|part| !part.trim().is_empty())
        .collect()
}

/// The path from the crate root, or `None` for an import from outside.
fn absolute(module: &str, path: &[String], nested: bool, sources: &Sources) -> Option<Vec<String>> {
    let here: Vec<String> = segments(module).collect();
    let (first, rest) = path.split_first()?;
    let mut base = match first.as_str() {
        "crate" => Vec::new(),
        "self" => here,
        "super" if nested => here,
        "super" => here[..here.len().saturating_sub(1)].to_vec(),
        child => {
            let mut inner = here.clone();
            inner.push(child.to_string());
            if !sources.contains_key(&inner.join("::")) {
                return None;
            }
            here
        }
    };
    if !matches!(first.as_str(), "crate" | "self" | "super") {
        base.push(first.clone());
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The strongly connected components with more than one module.
fn circles(graph: &Graph) -> Vec<BTreeSet<String>> {
    let mut circles: Vec<BTreeSet<String>> = Vec::new();
    for module in graph.keys() {
        if circles.iter().any(|circle| circle.contains(module)) {
            continue;
        }
        let forward = reachable(graph, module);
        let circle: BTreeSet<String> = forward
            .into_iter()
            .filter(|other| other != module && reachable(graph, other).contains(module))
            .chain([module.clone()])
            .collect();
        if circle.len() > 1 {
            circles.push(circle);
        }
    }
    circles
}

fn reachable(graph: &Graph, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(module) = stack.pop() {
        for next in graph.get(&module).into_iter().flatten() {
            if seen.insert(next.clone()) {
                stack.push(next.clone());
            }
        }
    }
    seen
}

fn edges_within(graph: &Graph, circle: &BTreeSet<String>) -> usize {
    circle
        .iter()
        .map(|module| {
            graph[module]
                .iter()
                .filter(|target| circle.contains(*target))
                .count()
        })
        .sum()
}
