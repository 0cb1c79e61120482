use std::time::{Duration, Instant};

use super::*;
use crate::{
    handover::{self, Outcome, Reason, Takeover},
    registry::{Candidate, NewRun, Registry, Status},
    testing::{OPERATIONS, Repo, stop_operation},
};

#[test]
fn versions_table() {
    let table = [
        ("git version 2.47.3\n", Some((2, 47, 3))),
        ("git version 2.40.0.windows.1", Some((2, 40, 0))),
        ("git version 2.39.5 (Apple Git-154)", Some((2, 39, 5))),
        ("git version 2.45", Some((2, 45, 0))),
        ("git version 3.0.0-rc1", Some((3, 0, 0))),
        ("hub version 2.14", None),
        ("git version x.y", None),
        ("", None),
    ];
    for (text, expected) in table {
        let parsed = Version::parse(text).map(|v| (v.major, v.minor, v.patch));
        assert_eq!(parsed, expected, "{text:?}");
    }
    assert!(Version::parse("git version 2.39.9").unwrap() < MIN_VERSION);
    assert!(Version::parse("git version 2.40.0").unwrap() >= MIN_VERSION);
}

#[test]
fn worktree_lists_table() {
    let list = b"worktree /r\0HEAD 1111\0branch refs/heads/main\0\0\
        worktree /runs/a b\0HEAD 2222\0detached\0locked on usb\0\0\
        worktree /gone\0HEAD 3333\0branch refs/heads/x\0locked\0prunable gitdir file points to non-existent location\0newfield 1\0\0";
    let parsed = parse_worktree_list(list).unwrap();
    let expected = [
        Worktree {
            path: "/r".into(),
            head: Some("1111".into()),
            branch: Some("refs/heads/main".into()),
            ..Worktree::default()
        },
        Worktree {
            path: "/runs/a b".into(),
            head: Some("2222".into()),
            detached: true,
            locked: Some("on usb".into()),
            ..Worktree::default()
        },
        Worktree {
            path: "/gone".into(),
            head: Some("3333".into()),
            branch: Some("refs/heads/x".into()),
            locked: Some(String::new()),
            prunable: Some("gitdir file points to non-existent location".into()),
            ..Worktree::default()
        },
    ];
    assert_eq!(parsed, expected);
    let bare = parse_worktree_list(b"worktree /r.git\0bare\0\0").unwrap();
    assert!(bare[0].bare && bare[0].head.is_none());
    assert!(parse_worktree_list(b"HEAD 1111\0\0").is_err());
    assert!(parse_worktree_list(b"worktree\0\0").is_err());
    assert_eq!(parse_worktree_list(b"").unwrap(), []);
}

#[test]
fn raw_diffs_table() {
    let raw = b":100644 100644 aaaa bbbb M\0src/a b.rs\0:000000 100644 0000 cccc A\0new\0:100644 000000 dddd 0000 D\0gone\0";
    let parsed = parse_raw(raw).unwrap();
    let summary: Vec<(char, &str)> = parsed.iter().map(|c| (c.status, c.path.as_str())).collect();
    assert_eq!(summary, [('M', "src/a b.rs"), ('A', "new"), ('D', "gone")]);
    assert_eq!(parse_raw(b"").unwrap(), []);
    assert!(parse_raw(b"M\0x\0").is_err(), "no leading colon");
    assert!(
        parse_raw(b":100644 100644 aaaa bbbb M\0").is_err(),
        "no path"
    );
}

#[test]
fn transforming_attributes_table() {
    let out = b"a.bin\0filter\0lfs\0a.bin\0text\0unspecified\0b.txt\0text\0set\0c\0text\0unset\0d\0crlf\0unset\0e\0eol\0crlf\0";
    assert_eq!(
        transforming_attributes(out).unwrap(),
        ["a.bin: filter=lfs", "b.txt: text=set", "e: eol=crlf"]
    );
    assert_eq!(transforming_attributes(b"").unwrap(), Vec::<String>::new());
    assert!(transforming_attributes(b"a\0text\0").is_err());
}

/// A stand-in git printing `version` for `git version` (its last
/// argument: pinned configuration comes first), sleeping otherwise.
fn fake_git(dir: &Path, version: &str) -> PathBuf {
    let path = dir.join("git");
    natives_testkit::install_script(
        &path,
        &format!(
            "#!/bin/sh\nfor last; do :; done\n\
             if [ \"$last\" = version ]; then echo 'git version {version}'; else exec sleep 600; fi\n"
        ),
    );
    path
}

#[test]
fn a_git_older_than_the_minimum_is_refused_and_a_missing_one_named() {
    let dir = tempfile::tempdir().unwrap();
    let err = Git::with_program(fake_git(dir.path(), "2.39.2")).unwrap_err();
    assert_eq!(err.code(), "ENOTSUP", "{err}");
    assert!(
        err.message().contains("2.39.2") && err.message().contains("2.40.0"),
        "{err}"
    );
    let err = Git::with_program(dir.path().join("no-such-git")).unwrap_err();
    assert_eq!(err.code(), "ENOENT", "{err}");
    assert_eq!(Git::new().unwrap().version().major, 2);
}

#[test]
fn a_command_past_its_timeout_or_cancelled_is_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let git = Git::with_program(fake_git(dir.path(), "2.47.0"))
        .unwrap()
        .with_timeout(Duration::from_millis(200));
    let started = Instant::now();
    let err = git.worktrees(dir.path(), &CancelToken::new()).unwrap_err();
    assert_eq!(err.code(), "ETIMEDOUT", "{err}");
    assert!(err.message().contains("worktree list"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10));
    let cancelled = CancelToken::new();
    cancelled.cancel();
    let err = git.worktrees(dir.path(), &cancelled).unwrap_err();
    assert_eq!(err.code(), "ABORT_ERR", "{err}");
    let short = CancelToken::new().with_timeout(Some(Duration::from_millis(100)));
    let slow = git.with_timeout(Duration::from_secs(600));
    let started = Instant::now();
    let err = slow.worktrees(dir.path(), &short).unwrap_err();
    assert_eq!(err.code(), "ETIMEDOUT", "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the caller's deadline was not kept"
    );
}

#[test]
fn a_stopped_rebase_or_a_bisect_names_the_branch_it_holds() {
    let repo = Repo::new();
    let wt = repo.worktree(&repo.runs.join("r1/A"), "feat");
    repo.write(&wt, "g", "1\n");
    repo.commit(&wt, "g1");
    let git = Git::new().unwrap();
    let dirs = git.dirs(&wt, &CancelToken::new()).unwrap().unwrap();
    assert_eq!(branch_in_operation(&dirs.git_dir).unwrap(), None);
    assert_eq!(
        operations_in_progress(&dirs.git_dir).unwrap(),
        Vec::<&str>::new()
    );
    repo.git(
        &wt,
        &[
            "-c",
            "sequence.editor=sed -i s/^pick/edit/",
            "rebase",
            "-q",
            "-i",
            "HEAD~2",
        ],
    );
    assert_eq!(
        branch_in_operation(&dirs.git_dir).unwrap().as_deref(),
        Some("refs/heads/feat")
    );
    assert!(
        operations_in_progress(&dirs.git_dir)
            .unwrap()
            .contains(&"rebase-merge")
    );
    repo.git(&wt, &["rebase", "--abort"]);
    repo.git(&wt, &["bisect", "start"]);
    assert_eq!(
        branch_in_operation(&dirs.git_dir).unwrap().as_deref(),
        Some("refs/heads/feat")
    );
    assert!(
        operations_in_progress(&dirs.git_dir)
            .unwrap()
            .contains(&"BISECT_LOG")
    );
}

/// A FIFO where git keeps the branch a bisect or a rebase will return to
/// is refused at once (`EFTYPE`), never opened: opening it for reading
/// would wait for a writer forever.
#[test]
fn a_fifo_in_place_of_an_operation_marker_is_refused_at_once() {
    let repo = Repo::new();
    let wt = repo.worktree(&repo.runs.join("r1/A"), "feat");
    let git = Git::new().unwrap();
    let dirs = git.dirs(&wt, &CancelToken::new()).unwrap().unwrap();
    for marker in ["BISECT_START", "rebase-merge/head-name"] {
        let path = dirs.git_dir.join(marker);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let git_dir = dirs.git_dir.clone();
        let answer = natives_testkit::within(marker, Duration::from_secs(20), move || {
            branch_in_operation(&git_dir)
        });
        let err = answer.unwrap_err();
        assert_eq!(err.code(), "EFTYPE", "{marker}: {err}");
        assert!(err.to_string().contains(marker), "{marker}: {err}");
        fs::remove_file(&path).unwrap();
    }
}

#[test]
fn a_directory_that_is_not_a_worktree_top_has_no_dirs() {
    let repo = Repo::new();
    let git = Git::new().unwrap();
    let cancel = CancelToken::new();
    let wt = repo.worktree(&repo.runs.join("r1/A"), "feat");
    let dirs = git.dirs(&wt, &cancel).unwrap().unwrap();
    assert_eq!(dirs.common_dir, repo.main.join(".git"));
    assert!(dirs.git_dir.starts_with(repo.main.join(".git/worktrees")));
    assert_eq!(
        git.dirs(&wt.join("src"), &cancel).unwrap(),
        None,
        "a subdirectory"
    );
    assert_eq!(git.dirs(&repo.runs.join("missing"), &cancel).unwrap(), None);
    // Without its `.git` file a worktree inside the main one would be
    // answered for by the main repository: refused instead.
    let inside = repo.worktree(&repo.main.join("nested"), "inner");
    fs::remove_file(inside.join(".git")).unwrap();
    assert_eq!(git.dirs(&inside, &cancel).unwrap(), None);
}

#[test]
fn a_folder_outside_any_repository_is_einval_naming_it() {
    let outside = tempfile::tempdir().unwrap();
    let git = Git::new().unwrap();
    let err = git
        .worktrees(outside.path(), &CancelToken::new())
        .unwrap_err();
    assert_eq!(err.code(), "EINVAL", "{err}");
    let message = err.message();
    assert!(
        message.contains(&outside.path().display().to_string()),
        "{message}"
    );
    assert!(message.contains("not in a git repository"), "{message}");
}

#[test]
fn every_marker_has_a_way_to_make_it_with_real_git() {
    let mut listed = OPERATION_MARKERS.to_vec();
    let mut made = OPERATIONS.to_vec();
    listed.sort_unstable();
    made.sort_unstable();
    assert_eq!(listed, made);
}

#[test]
fn every_operation_git_can_leave_stopped_refuses_a_handover_naming_its_marker() {
    let cancel = CancelToken::new();
    for marker in OPERATIONS {
        let repo = Repo::new();
        let home = tempfile::tempdir().unwrap();
        let registry = Registry::open(home.path());
        registry.create_task("t1", &cancel).unwrap();
        for (run, status) in [("r1", Status::Failed), ("r2", Status::Running)] {
            let new = NewRun {
                id: run.into(),
                task: "t1".into(),
                worktree_root: repo.runs.join(run),
                status,
            };
            registry.create_run(&new, &cancel).unwrap();
        }
        let wt = repo.worktree(&repo.runs.join("r1/A"), "t1/A");
        let candidate = Candidate::new("A", "t1/A", &wt);
        registry.add_candidate("r1", &candidate, &cancel).unwrap();
        stop_operation(&repo, &wt, marker);
        let takeover = Takeover::for_task(&registry, "t1", "r2").unwrap();
        let git = Git::new().unwrap();
        let outcome = handover::release(&registry, &git, &repo.main, "t1/A", &takeover, &cancel);
        let Outcome::Refused(refused) = outcome.unwrap() else {
            panic!("{marker}: not refused");
        };
        let named = refused.reasons().iter().any(|reason| {
            matches!(reason, Reason::OperationInProgress(found) if found.iter().any(|m| m == marker))
        });
        assert!(named, "{marker}: {refused}");
        assert!(wt.join(".git").exists(), "{marker}: the worktree went");
    }
}
