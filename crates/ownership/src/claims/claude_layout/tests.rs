use std::time::Duration;

use super::*;
use crate::claims::test_fixture::repos;

/// Expected names computed by running the rule in JavaScript (`replace(/[^a-zA-Z0-9]/g, '-')`,
/// `(h << 5) - h + charCodeAt(i) | 0`, `Math.abs(h).toString(36)`) under Node 20.
#[test]
fn folder_names_match_the_cli_rule() {
    let long_e = format!("/tmp/{}", "é".repeat(250));
    let a199 = format!("/{}", "a".repeat(199));
    let a200 = format!("/{}", "a".repeat(200));
    let deep = format!("/srv/repos/{}10", "deep-folder-".repeat(20));
    let table: Vec<(&str, String)> = vec![
        ("/home/ana/proj", "-home-ana-proj".into()),
        ("/srv/ação 😀/x_y.z", "-srv-a--o----x-y-z".into()),
        (
            "C:\\Users\\bo\\文档\\some project",
            "C--Users-bo----some-project".into(),
        ),
        ("", String::new()),
        (&long_e, format!("-tmp{}-wtvgxz", "-".repeat(196))),
        (&a199, format!("-{}", "a".repeat(199))),
        (&a200, format!("-{}-b6ymvl", "a".repeat(199))),
        (
            &deep,
            format!("-srv-repos-{}deep-fold-11fq5w", "deep-folder-".repeat(15)),
        ),
    ];
    for (path, expected) in table {
        assert_eq!(folder_name(path), expected, "{path}");
    }
}

#[test]
fn java_hash_and_base36_edges() {
    let units = |s: &str| s.encode_utf16().collect::<Vec<_>>();
    assert_eq!(java_string_hash(&units("/home/ana/proj")), 1903426073);
    assert_eq!(
        java_string_hash(&units(&format!("/{}", "a".repeat(200)))),
        -676821585
    );
    assert_eq!(java_string_hash(&units("/srv/ação 😀/x_y.z")), 837493561);
    assert_eq!(base36(0), "0");
    assert_eq!(base36(35), "z");
    assert_eq!(base36(i64::from(i32::MIN).unsigned_abs()), "zik0zk");
}

#[test]
fn memory_roots_of_real_repositories() {
    let repos = repos();
    let none = CancelToken::new();
    let table = [
        ("plain/sub", "plain/sub", false),
        ("solo", "solo", false),
        ("solo/src", "solo", false),
        ("main", "main", true),
        ("main/src/deep", "main", true),
        ("wt", "main", true),
        ("wt/src/deep", "main", true),
        ("bare.git", "bare.git", true),
        ("bare-wt", "bare.git", true),
        ("bogus", "bogus", false),
        ("bogus/sub", "bogus", false),
        ("impostor", "impostor", false),
        ("module", "module", false),
        ("link-deep", "main", true),
        ("link-wt", "main", true),
        ("link-solo", "solo", false),
        ("main/src/deep/not-yet/created", "main", true),
    ];
    for (cwd, root, worktrees) in table {
        let found = memory_project_root(&repos.at(cwd), &none).unwrap();
        assert_eq!(found, repos.at(root), "root of {cwd}");
        assert_eq!(
            has_linked_worktrees(&found, &none).unwrap(),
            worktrees,
            "worktrees of {cwd}"
        );
    }
}

#[test]
fn memory_dirs_are_per_repository_under_projects() {
    let repos = repos();
    let none = CancelToken::new();
    let config = Path::new("/home/ana/.claude");
    let expected = config
        .join("projects")
        .join(folder_name(&repos.at("main").to_string_lossy()))
        .join("memory");
    for cwd in ["main", "wt/src/deep", "link-deep"] {
        assert_eq!(
            memory_dir(config, &repos.at(cwd), &none).unwrap(),
            expected,
            "{cwd}"
        );
    }
}

#[test]
fn a_passed_deadline_stops_the_probe() {
    let repos = repos();
    let past = CancelToken::new().with_timeout(Some(Duration::ZERO));
    for cwd in ["plain", "wt"] {
        let err = memory_project_root(&repos.at(cwd), &past).unwrap_err();
        assert_eq!(err.code(), "ETIMEDOUT", "{cwd}");
    }
    assert_eq!(
        has_linked_worktrees(&repos.at("main"), &past)
            .unwrap_err()
            .code(),
        "ETIMEDOUT"
    );
}
