//! A generated tree for the tests that compare an indexed answer with the
//! answer of a pass over every entry: names that share long prefixes and
//! suffixes, names with glob metacharacters, upper case, names that are
//! not ASCII, hidden and ignored parts, nested `node_modules`.

/// The relative paths of the files of the tree (directories follow).
pub(crate) fn paths() -> Vec<String> {
    let words = [
        "index",
        "userService",
        "file",
        "Parser",
        "api-client",
        "README",
    ];
    let exts = ["ts", "tsx", "test.ts", "md", "rs", "json"];
    let dirs = [
        "src",
        "src/lib",
        "src/lib/deep/er",
        "packages/core/src",
        "packages/ui/src/components",
        "docs",
        "node_modules/pkg/lib",
        "web/node_modules/dep",
        ".hidden/conf",
        "Menü/größe",
        "weird[x]/{y}",
        "build",
    ];
    let mut state: u64 = 0x5eed;
    let mut next = move |below: usize| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize % below
    };
    let mut paths: Vec<String> = Vec::new();
    for i in 0..1_200 {
        let dir = dirs[next(dirs.len())];
        let name = match next(6) {
            0 => format!("file_{}_{}_{}", next(4), next(4), i),
            1 => format!("{}{}", words[next(words.len())], i % 7),
            2 => words[next(words.len())].to_string(),
            3 => format!("{}-{}", words[next(words.len())], i),
            4 => format!("Ünïcode_{}", next(9)),
            _ => format!("a[b]{{c}},d_{}", next(5)),
        };
        paths.push(format!("{dir}/{name}.{}", exts[next(exts.len())]));
    }
    paths.extend(
        [
            "file_1_2_9.ts",
            "index.ts",
            "f",
            "file_1_2_",
            "build/.gitignore",
        ]
        .map(String::from),
    );
    paths.sort();
    paths.dedup();
    paths
}

/// The tree of [`paths`], ignoring `build/` and `*.json` (in a git
/// repository, so `.gitignore` applies).
pub(crate) fn tree() -> tempfile::TempDir {
    let dir = natives_testkit::tree_of_paths(&paths());
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join(".gitignore"), "build/\n*.json\n").unwrap();
    dir
}
