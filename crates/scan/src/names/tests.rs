//! The index narrows without losing: every entry a literal names is a
//! candidate, and parents are the listed directories.

use super::*;
use crate::entries::Added;

fn list(paths: &[(&str, FileType)]) -> Entries {
    let mut sorted: Vec<(&str, FileType)> = paths.to_vec();
    sorted.sort_by(|a, b| crate::compare_paths(a.0.as_bytes(), b.0.as_bytes()));
    let added: Vec<Added> = sorted
        .iter()
        .map(|&(path, file_type)| Added {
            path: path.as_bytes().to_vec(),
            file_type,
            mtime_ms: None,
        })
        .collect();
    Entries::default().patched(&crate::entries::Patch {
        added,
        ..Default::default()
    })
}

fn build(entries: &Entries) -> NameIndex {
    NameIndex::build(entries, &CancelToken::new())
        .unwrap()
        .unwrap()
}

const DIR: FileType = FileType::Dir;
const FILE: FileType = FileType::File;

fn sample() -> Entries {
    list(&[
        ("a", DIR),
        ("a/file_1_2_3.ts", FILE),
        ("a/file_1_2_3.tsx", FILE),
        ("a/file_1_20.ts", FILE),
        ("a/b", DIR),
        ("a/b/file_1_2_9.ts", FILE),
        ("a/b/index.ts", FILE),
        ("a-b", FILE),
        ("file_1_2_.ts", FILE),
        ("f", FILE),
        ("indexes.ts", FILE),
        ("x/y/orphan.ts", FILE),
        ("x/y", DIR),
        ("UserService.ts", FILE),
        ("src/userService.ts", FILE),
    ])
}

fn named(entries: &Entries, indices: &[usize]) -> Vec<String> {
    indices
        .iter()
        .map(|&i| entries.get(i).path_lossy().into_owned())
        .collect()
}

/// Every entry whose name has the literals is among the candidates, in
/// path order; the candidates are fewer than the list.
#[test]
fn candidates_table() {
    let entries = sample();
    let index = build(&entries);
    let table: &[(&str, &str, &[&str])] = &[
        (
            "file_1_2_",
            "",
            &[
                "a/b/file_1_2_9.ts",
                "a/file_1_2_3.ts",
                "a/file_1_2_3.tsx",
                "file_1_2_.ts",
            ],
        ),
        (
            "f",
            "",
            &[
                "a/b/file_1_2_9.ts",
                "a/file_1_20.ts",
                "a/file_1_2_3.ts",
                "a/file_1_2_3.tsx",
                "f",
                "file_1_2_.ts",
            ],
        ),
        ("index.ts", "index.ts", &["a/b/index.ts"]),
        ("", ".tsx", &["a/file_1_2_3.tsx"]),
        ("", "Service.ts", &["UserService.ts", "src/userService.ts"]),
        ("", "userService.ts", &["src/userService.ts"]),
        ("file_1_2_", ".tsx", &["a/file_1_2_3.tsx"]),
        ("zzz", "", &[]),
        ("", "", &[]),
    ];
    for &(prefix, suffix, wanted) in table {
        let literals = NameLiterals {
            prefix: prefix.as_bytes().to_vec(),
            suffix: suffix.as_bytes().to_vec(),
        };
        let Some(found) = index.candidates(&entries, &literals) else {
            assert!(
                prefix.is_empty() && suffix.is_empty(),
                "{prefix:?} {suffix:?}"
            );
            continue;
        };
        assert!(found.is_sorted(), "{prefix:?} {suffix:?}");
        let found = named(&entries, &found);
        for want in wanted {
            assert!(
                found.contains(&want.to_string()),
                "{prefix:?} {suffix:?}: {found:?}"
            );
        }
        let exact: Vec<&String> = found
            .iter()
            .filter(|path| {
                let name = name(path.as_bytes());
                name.starts_with(prefix.as_bytes()) && name.ends_with(suffix.as_bytes())
            })
            .collect();
        assert_eq!(exact, wanted.to_vec(), "{prefix:?} {suffix:?}");
        // Past eight bytes a literal narrows to its first (or last) eight.
        assert!(
            found.len() < entries.len() / 2,
            "{prefix:?} {suffix:?}: {found:?}"
        );
    }
}

#[test]
fn parents_are_the_listed_directories() {
    let entries = sample();
    let index = build(&entries);
    let parent = |path: &str| {
        let at = entries.find(path.as_bytes()).unwrap();
        match index.parent(at) {
            Parent::Listed(dir) => entries.get(dir).path_lossy().into_owned(),
            other => format!("{other:?}"),
        }
    };
    assert_eq!(parent("a"), "Root");
    assert_eq!(parent("a/b"), "a");
    assert_eq!(parent("a/b/index.ts"), "a/b");
    assert_eq!(parent("a/file_1_20.ts"), "a");
    assert_eq!(parent("a-b"), "Root");
    assert_eq!(parent("x/y"), "Unlisted");
    assert_eq!(parent("x/y/orphan.ts"), "x/y");
    assert_eq!(index.heap_bytes(), 16 * entries.len());
}

#[test]
fn letters_table() {
    let holds = |text: &str, wanted: &str| {
        let wanted = letters(wanted.as_bytes());
        letters(text.as_bytes()) & wanted == wanted
    };
    let table = [
        ("getCurrency.scss", "curscss", true),
        ("getCurrency.scss", "CURR", true),
        ("getCurrency.scss", "x", false),
        ("a_b-c.d", "_-.", true),
        ("a1", "9", true),
        ("ab", "a/", false),
        ("/ab", "a/", true),
        ("menü", "menu", true),
        ("menu", "ü", false),
        ("", "", true),
    ];
    for (text, wanted, expected) in table {
        assert_eq!(holds(text, wanted), expected, "{text:?} {wanted:?}");
    }
}

#[test]
fn building_stops_when_cancelled() {
    let token = CancelToken::new();
    token.cancel();
    assert!(NameIndex::build(&sample(), &token).is_err());
}
