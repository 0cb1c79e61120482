//! A cached glob answers from the name index's candidates exactly as a pass
//! over every entry does, and never from an index of a list gone stale.

use std::{fs, path::Path, time::Duration};

use super::*;
use crate::{cache::CachePolicy, names::generated};

type Answer = (Vec<(String, FileType)>, usize);

fn answer(
    cache: &ScanCache,
    dir: &Path,
    cached: bool,
    configure: &dyn Fn(&mut GlobOptions),
) -> Answer {
    let mut options = GlobOptions::new("", dir);
    (options.cache, options.mtime) = (cached, false);
    configure(&mut options);
    let mut streamed = Vec::new();
    let outcome = glob(&options, cache, &CancelToken::new(), &mut |m| {
        streamed.push(m.path_lossy().into_owned())
    })
    .unwrap();
    let matches: Vec<_> = outcome
        .matches()
        .map(|m| (m.path_lossy().into_owned(), m.file_type))
        .collect();
    let returned: Vec<_> = matches.iter().map(|(path, _)| path.clone()).collect();
    assert_eq!(streamed, returned, "{:?}", options.patterns);
    (matches, outcome.total_matches)
}

const PATTERNS: &[&str] = &[
    "**/file_1_2_*.ts",
    "file_1_*",
    "file_1_2_",
    "src/**/file_*_3_*.tsx",
    "**/index.ts",
    "index*",
    "*Service*.ts",
    "**/userService?.test.ts",
    "packages/*/src/*.md",
    "**/file_1_{2,3}_*.ts",
    "**/{file,index}*.ts",
    "**/[f]ile_1_*",
    "**/file?1_2_*",
    "**/a[b]{c},d_*.rs",
    "**/a[[]b]*",
    "{src,docs}/*.md",
    "{src/lib,docs}/README*",
    "src/lib/{deep/er/*.rs,index*}",
    "**/Ünïcode_*.md",
    "Menü/**/*.rs",
    "**/größe/*",
    "weird[[]x]/*/*",
    "**/*_1_*.json",
    "**/node_modules/**/index*",
    "src/**",
    "**/lib",
    "lib",
    "*.ts",
    "**/*",
    "no-such-*",
    "**/-*",
];

/// The answer of a pass over every entry of the scan `cache` holds for
/// `options` (the index left out).
fn unindexed(cache: &ScanCache, options: &GlobOptions) -> Answer {
    let (root, _) = search_root(&options.path, false).unwrap();
    let key = ScanKey {
        root: root.clone(),
        policy: ScanPolicy {
            include_hidden: options.include_hidden,
            use_gitignore: options.use_gitignore,
        },
    };
    let filter = Filter::new(options).unwrap();
    let token = CancelToken::new();
    let scan = cache.get_or_scan(&key, filter.needs(), &token).unwrap();
    let outcome = select(root, scan, None, &filter, &token, &mut |_| {}).unwrap();
    let matches = outcome
        .matches()
        .map(|m| (m.path_lossy().into_owned(), m.file_type))
        .collect();
    (matches, outcome.total_matches)
}

/// Every pattern, with every filter that changes what is returned: the
/// indexed answer (a cached scan) equals the answer of a pass over every
/// entry of the same scan, match for match and in order, and, unfiltered,
/// the answer of a fresh walk, whose list is never indexed.
#[test]
fn indexed_answers_equal_a_pass_over_every_entry() {
    let dir = generated::tree();
    type Configure = dyn Fn(&mut GlobOptions);
    let filters: &[(&str, &Configure)] = &[
        ("plain", &|_| {}),
        ("not recursive", &|o| o.recursive = false),
        ("files", &|o| o.file_type = Some(FileType::File)),
        ("dirs", &|o| o.file_type = Some(FileType::Dir)),
        ("first 5", &|o| o.max_results = Some(5)),
        ("newest 3", &|o| {
            (o.sort_by_mtime, o.max_results) = (true, Some(3))
        }),
        ("hidden, no ignore files", &|o| {
            (o.include_hidden, o.use_gitignore) = (true, false)
        }),
        ("node_modules", &|o| o.include_node_modules = Some(true)),
        ("an ignore list", &|o| {
            o.ignore = vec!["**/src/**".into(), "*.json".into()]
        }),
        ("a second pattern", &|o| {
            o.patterns.push("**/README*".into())
        }),
    ];
    let cache = ScanCache::new(CachePolicy::default().ttl(Duration::from_secs(3600)));
    let walks = ScanCache::new(CachePolicy::default());
    let mut matched = 0;
    for pattern in PATTERNS {
        for (name, filter) in filters {
            let configure = |o: &mut GlobOptions| {
                o.patterns = vec![pattern.to_string()];
                filter(o);
            };
            let indexed = answer(&cache, dir.path(), true, &configure);
            let mut options = GlobOptions::new("", dir.path());
            (options.cache, options.mtime) = (true, false);
            configure(&mut options);
            assert_eq!(indexed, unindexed(&cache, &options), "{pattern}, {name}");
            if *name == "plain" {
                let walked = answer(&walks, dir.path(), false, &configure);
                assert_eq!(indexed, walked, "{pattern}, walked");
            }
            matched += usize::from(indexed.1 > 0);
        }
    }
    assert!(
        matched > PATTERNS.len() * 4,
        "the patterns match: {matched}"
    );
    let stats = cache.stats();
    assert_eq!(
        stats.names.indexes, stats.scans,
        "every cached scan was indexed"
    );
    assert_eq!(stats.names.bytes, 16 * stats.names.entries);
    assert_eq!(
        walks.stats().names,
        Default::default(),
        "fresh walks are not indexed"
    );
}

#[test]
fn name_literals_table() {
    let literals = |pattern: &str| {
        name_literals(&normalize_pattern(written("pattern", pattern), true).unwrap()).map(|l| {
            let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
            (text(l.prefix), text(l.suffix))
        })
    };
    let some = |prefix: &str, suffix: &str| Some((prefix.to_string(), suffix.to_string()));
    let table = [
        ("**/file_1_2_*.ts", some("file_1_2_", ".ts")),
        ("index.ts", some("index.ts", "index.ts")),
        ("src/*Service.ts", some("", "Service.ts")),
        ("src/index*", some("index", "")),
        ("a/b?c", some("b", "c")),
        ("{a,b}/x*", some("x", "")),
        ("x{a,b}y", some("x", "y")),
        ("[ab]/x*", some("x", "")),
        ("*.{ts,tsx}", None),
        ("**", None),
        ("src/**", None),
        ("src/x**", None),
        ("{a/b,c}*.ts", None),
        ("{a,b/c}", None),
        ("[/]x*", None),
        ("[]]x*", None),
        ("[!]]x*", None),
        ("*", None),
        ("src/", None),
    ];
    for (pattern, expected) in table {
        assert_eq!(literals(pattern), expected, "{pattern}");
    }
}

/// With watching on, a cached glob after files were written, renamed and
/// deleted answers as a fresh walk does, and its index is the patched
/// list's own.
#[test]
fn a_watched_scan_never_answers_from_a_stale_index() {
    let dir = generated::tree();
    let root = dir.path();
    let policy = CachePolicy::default()
        .ttl(Duration::from_secs(3600))
        .watch(true);
    let cache = ScanCache::new(policy);
    let walks = ScanCache::new(CachePolicy::default());
    let pattern = |o: &mut GlobOptions| o.patterns = vec!["**/file_1_2_*".into()];
    let check = |step: &str| {
        let indexed = answer(&cache, root, true, &pattern);
        assert_eq!(indexed, answer(&walks, root, false, &pattern), "{step}");
        indexed
    };
    let first = check("warm");
    assert_eq!(cache.stats().names.indexes, 1);
    let removed = first.0.last().unwrap().0.clone();
    let steps: &[(&str, &dyn Fn())] = &[
        ("written", &|| {
            fs::write(root.join("src/file_1_2_new.ts"), "").unwrap()
        }),
        ("dir written", &|| {
            fs::create_dir_all(root.join("fresh/file_1_2_dir")).unwrap();
            fs::write(root.join("fresh/file_1_2_dir/file_1_2_in.rs"), "").unwrap();
        }),
        ("renamed", &|| {
            fs::rename(
                root.join("src/file_1_2_new.ts"),
                root.join("src/renamed.ts"),
            )
            .unwrap()
        }),
        ("renamed in", &|| {
            fs::rename(
                root.join("src/renamed.ts"),
                root.join("docs/file_1_2_back.md"),
            )
            .unwrap()
        }),
        ("deleted", &|| fs::remove_file(root.join(&removed)).unwrap()),
        ("dir deleted", &|| {
            fs::remove_dir_all(root.join("fresh")).unwrap()
        }),
    ];
    let mut last = first;
    for (step, change) in steps {
        change();
        let now = check(step);
        assert_ne!(now, last, "{step} changed the answer");
        last = now;
        let stats = cache.stats();
        assert_eq!(stats.watch.rewalks, 0, "{step}: patched, not walked again");
        assert_eq!((stats.scans, stats.names.indexes), (1, 1), "{step}");
    }
    assert_eq!(cache.stats().walks, 1);
}

/// Invalidating a root that is not watched drops its scan with its index;
/// the next glob walks, indexes the new list and sees the change.
#[test]
fn invalidation_drops_the_index_with_its_scan() {
    let dir = generated::tree();
    let root = dir.path();
    let cache = ScanCache::new(CachePolicy::default().ttl(Duration::from_secs(3600)));
    let pattern = |o: &mut GlobOptions| o.patterns = vec!["**/file_1_2_*".into()];
    let before = answer(&cache, root, true, &pattern);
    fs::write(root.join("docs/file_1_2_late.md"), "").unwrap();
    assert_eq!(
        answer(&cache, root, true, &pattern),
        before,
        "within the TTL"
    );
    cache
        .invalidate_path(&root.join("docs/file_1_2_late.md"))
        .unwrap();
    assert_eq!(cache.stats().names.indexes, 0);
    let after = answer(&cache, root, true, &pattern);
    assert_eq!(after.1, before.1 + 1);
    assert_eq!(cache.stats().names.indexes, 1);
}
