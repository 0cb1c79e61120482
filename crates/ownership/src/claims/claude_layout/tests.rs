use std::{fs, time::Duration};

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

/// A FIFO where a `.git` file (or a worktree's `commondir`) should be is
/// refused at once with `EFTYPE` naming it: reading it would wait for a
/// writer forever, past any deadline.
#[test]
fn a_git_file_that_is_a_fifo_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let fifo_project = root.join("fifo-project");
    fs::create_dir_all(fifo_project.join("src")).unwrap();
    let mode = nix::sys::stat::Mode::S_IRWXU;
    nix::unistd::mkfifo(&fifo_project.join(".git"), mode).unwrap();
    let admin = root.join("main/.git/worktrees/wt");
    fs::create_dir_all(&admin).unwrap();
    nix::unistd::mkfifo(&admin.join("commondir"), mode).unwrap();
    fs::create_dir_all(root.join("wt")).unwrap();
    fs::write(
        root.join("wt/.git"),
        format!("gitdir: {}\n", admin.display()),
    )
    .unwrap();
    let table = [
        (fifo_project.join("src"), fifo_project.join(".git")),
        (root.join("wt"), admin.join("commondir")),
    ];
    for (cwd, fifo) in table {
        let err = natives_testkit::within(&cwd.display().to_string(), Duration::from_secs(10), {
            let cwd = cwd.clone();
            move || {
                let deadline = CancelToken::new().with_timeout(Some(Duration::from_secs(60)));
                memory_project_root(&cwd, &deadline).unwrap_err()
            }
        });
        assert_eq!(err.code(), "EFTYPE", "{err}");
        assert!(err.message().contains(&fifo.display().to_string()), "{err}");
        assert!(err.message().contains("a FIFO"), "{err}");
    }
}
