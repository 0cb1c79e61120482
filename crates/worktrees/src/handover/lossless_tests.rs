//! What a handover may let go with a worktree, and what keeps it, against
//! real repositories: files a `.gitignore` ignores, an uncommitted
//! `.gitignore`, empty directories, commits and refs only the worktree's
//! administration remembers; caches and declared regenerable paths. Each
//! case compares the whole state before and after: every entry of the
//! worktree and of the repository's git directory (refs, reflogs, the
//! worktree's administration, indexes) with its mode and bytes.

use std::{fs, os::unix::fs::symlink, path::Path};

use natives_core::CancelToken;

use super::{
    tests::{BRANCH, Scene},
    *,
};
use crate::registry::EventKind;

/// A valid `CACHEDIR.TAG`, as cargo writes it.
const CACHE_TAG: &str = "Signature: 8a477f597d28d172789f06886806bc55\n\
                         # This file is a cache directory tag created by cargo.\n";

/// The worktree's administration directory name.
const ADMIN: &str = "A";

fn takeover(scene: &Scene, regenerable: &[&str]) -> Takeover {
    let patterns = regenerable.iter().map(|p| p.to_string()).collect();
    scene
        .takeover()
        .with_regenerable(Regenerable::new(patterns).unwrap())
}

/// Commit a `.gitignore` holding `rules` on the worktree's branch.
fn ignore_committed(scene: &Scene, rules: &str) {
    scene.repo.write(&scene.wt, ".gitignore", rules);
    scene.repo.commit(&scene.wt, "ignore rules");
}

/// A refusal that changed nothing at all; its reasons.
fn refused_changing_nothing(scene: &Scene, takeover: &Takeover) -> Vec<Reason> {
    let before = scene.repo.state(&scene.wt);
    let record = scene.r1();
    let Outcome::Refused(refused) = scene.release_by(takeover) else {
        panic!("released");
    };
    assert_eq!(scene.repo.state(&scene.wt), before, "{refused}");
    assert_eq!(scene.r1(), record, "{refused}");
    refused.reasons().to_vec()
}

/// A release that removed the worktree and its administration and left
/// every other byte of the repository's git directory as it was.
fn released_changing_nothing_else(scene: &Scene, takeover: &Takeover) -> Released {
    let before = scene.repo.state(&scene.wt);
    let tip = scene.repo.tip(BRANCH);
    let released = match scene.release_by(takeover) {
        Outcome::Released(released) => released,
        other => panic!("not released: {other:?}"),
    };
    let after = scene.repo.state(&scene.wt);
    assert!(after.worktree.is_empty() && !scene.wt.exists());
    assert_eq!(after.git_without(ADMIN), before.git_without(ADMIN));
    assert_eq!(scene.repo.tip(BRANCH), tip);
    released
}

fn dirty(paths: &[&str]) -> Vec<Reason> {
    vec![Reason::Dirty(Paths::of(
        paths.iter().map(|p| p.to_string()),
    ))]
}

/// A case: its name, what it does to the worktree, what the new run
/// declares regenerable, and the paths the refusal names.
type Refusal = (
    &'static str,
    fn(&Scene),
    &'static [&'static str],
    Vec<&'static str>,
);

fn refusals() -> Vec<Refusal> {
    vec![
        (
            "a log a committed .gitignore ignores",
            |s| {
                ignore_committed(s, "target/\n*.log\n");
                s.repo.write(&s.wt, "findings.log", "what I found\n");
            },
            &[],
            vec!["findings.log"],
        ),
        (
            "an ignored .env",
            |s| {
                ignore_committed(s, ".env\n");
                s.repo.write(&s.wt, ".env", "TOKEN=secret\n");
            },
            &[],
            vec![".env"],
        ),
        (
            "an ignored notes folder",
            |s| {
                ignore_committed(s, "notes/\n");
                s.repo.write(&s.wt, "notes/a.md", "a\n");
                s.repo.write(&s.wt, "notes/b.md", "b\n");
            },
            &[],
            vec!["notes/a.md", "notes/b.md"],
        ),
        (
            "an ignored local database",
            |s| {
                ignore_committed(s, "*.db\n");
                s.repo.write(&s.wt, "data/app.db", "rows\n");
            },
            &[],
            vec!["data/app.db"],
        ),
        (
            "a folder an uncommitted .gitignore hides",
            |s| {
                s.repo.write(&s.wt, "notes/.gitignore", "*\n");
                s.repo.write(&s.wt, "notes/design.md", "the design\n");
            },
            &[],
            vec!["notes/.gitignore", "notes/design.md"],
        ),
        (
            "an empty new directory",
            |s| fs::create_dir(s.wt.join("later")).unwrap(),
            &[],
            vec!["later/"],
        ),
        (
            "a CACHEDIR.TAG without the signature",
            |s| {
                s.repo
                    .write(&s.wt, "target/CACHEDIR.TAG", "a cache, trust me\n");
                s.repo.write(&s.wt, "target/debug/app", "binary\n");
            },
            &[],
            vec!["target/CACHEDIR.TAG", "target/debug/app"],
        ),
        (
            "a CACHEDIR.TAG at the top of the worktree",
            |s| {
                s.repo.write(&s.wt, "CACHEDIR.TAG", CACHE_TAG);
                s.repo.write(&s.wt, "notes.txt", "mine\n");
            },
            &[],
            vec!["CACHEDIR.TAG", "notes.txt"],
        ),
        (
            "a symlink git does not track",
            |s| symlink("README", s.wt.join("link")).unwrap(),
            &[],
            vec!["link"],
        ),
        (
            "what a regenerable pattern does not match",
            |s| {
                s.repo.write(&s.wt, "dist/app.js", "built\n");
                s.repo.write(&s.wt, "node_modules/x/index.js", "module\n");
            },
            &["dist/"],
            vec!["node_modules/x/index.js"],
        ),
        (
            "many files",
            |s| {
                for n in 0..7 {
                    s.repo.write(&s.wt, &format!("f{n}.txt"), "x\n");
                }
            },
            &[],
            vec![
                "f0.txt", "f1.txt", "f2.txt", "f3.txt", "f4.txt", "f5.txt", "f6.txt",
            ],
        ),
    ]
}

/// Run every case, naming each that fails (not only the first).
fn every_case<T>(cases: Vec<T>, name: fn(&T) -> &'static str, check: fn(T)) {
    let failed: Vec<&str> = cases
        .into_iter()
        .filter_map(|case| {
            let name = name(&case);
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(case)))
                .err()
                .map(|_| name)
        })
        .collect();
    assert!(failed.is_empty(), "failed: {failed:?}");
}

#[test]
fn whatever_head_does_not_hold_keeps_the_worktree_named() {
    every_case(
        refusals(),
        |case| case.0,
        |(case, prepare, regenerable, named)| {
            let scene = Scene::new();
            prepare(&scene);
            let reasons = refused_changing_nothing(&scene, &takeover(&scene, regenerable));
            assert_eq!(reasons, dirty(&named), "{case}");
        },
    );
}

#[test]
fn a_refusal_names_five_paths_and_counts_the_rest() {
    let scene = Scene::new();
    for n in 0..7 {
        scene.repo.write(&scene.wt, &format!("f{n}.txt"), "x\n");
    }
    let Outcome::Refused(refused) = scene.release() else {
        panic!("released");
    };
    let text = refused.to_string();
    assert!(
        text.contains("uncommitted changes: f0.txt, f1.txt, f2.txt, f3.txt, f4.txt and 2 more"),
        "{text}"
    );
}

/// A case that releases: its name, what it does to the worktree, what the
/// new run declares regenerable, and what the record says went with it.
type Release = (
    &'static str,
    fn(&Scene),
    &'static [&'static str],
    &'static str,
);

fn releases() -> Vec<Release> {
    vec![
        (
            "cargo's target/, a cache",
            |s| {
                s.repo.write(&s.wt, "target/CACHEDIR.TAG", CACHE_TAG);
                s.repo.write(&s.wt, "target/debug/app", "binary\n");
            },
            &[],
            "let go with it: target/",
        ),
        (
            "a cache no .gitignore ignores",
            |s| {
                s.repo.write(&s.wt, ".cache/CACHEDIR.TAG", CACHE_TAG);
                s.repo.write(&s.wt, ".cache/blob", "cached\n");
            },
            &[],
            "let go with it: .cache/",
        ),
        (
            "a cache inside an untracked folder",
            |s| {
                s.repo.write(&s.wt, "build/cache/CACHEDIR.TAG", CACHE_TAG);
                s.repo.write(&s.wt, "build/cache/obj.o", "object\n");
            },
            &[],
            "let go with it: build/cache/",
        ),
        (
            "what the new run declared regenerable",
            |s| {
                s.repo.write(&s.wt, "node_modules/a/index.js", "module\n");
                s.repo.write(&s.wt, "web/node_modules/b.js", "module\n");
                s.repo.write(&s.wt, "dist/app.js", "built\n");
            },
            &["node_modules/", "dist/"],
            "let go with it: dist/, node_modules/, web/node_modules/",
        ),
    ]
}

#[test]
fn caches_and_declared_regenerable_paths_go_with_the_worktree_and_are_recorded() {
    every_case(
        releases(),
        |case| case.0,
        |(case, prepare, regenerable, note)| {
            let scene = Scene::new();
            prepare(&scene);
            let released = released_changing_nothing_else(&scene, &takeover(&scene, regenerable));
            let record = scene.r1();
            let event = record.release_event(&released.handover).unwrap();
            assert_eq!(event.regenerable, *regenerable, "{case}");
            assert_eq!(event.repo.as_deref(), Some(scene.repo.main.as_path()));
            let removing = record.events.last().unwrap();
            assert_eq!(removing.kind, EventKind::Removing, "{case}");
            assert_eq!(removing.note.as_deref(), Some(note), "{case}");
        },
    );
}

/// A commit made on a detached `HEAD` in the worktree, which a checkout
/// then left: only the worktree's `HEAD` reflog names it.
fn detached_commit(scene: &Scene) -> String {
    scene.repo.git(&scene.wt, &["checkout", "-q", "--detach"]);
    scene.repo.write(&scene.wt, "tried.txt", "an idea\n");
    let commit = scene.repo.commit(&scene.wt, "tried something");
    scene.repo.git(&scene.wt, &["checkout", "-q", BRANCH]);
    commit
}

fn only_here(names: &[String]) -> Vec<Reason> {
    vec![Reason::OnlyHere(Paths::of(names.iter().cloned()))]
}

#[test]
fn a_commit_only_the_worktrees_reflog_names_keeps_it() {
    let scene = Scene::new();
    let commit = detached_commit(&scene);
    let reasons = refused_changing_nothing(&scene, &scene.takeover());
    assert_eq!(
        reasons,
        only_here(&[format!("{} (HEAD@{{1}})", &commit[..12])])
    );
    assert!(scene.repo.has_commit(&commit));
}

#[test]
fn a_ref_of_the_worktrees_own_keeps_it() {
    let scene = Scene::new();
    let kept = scene.repo.git(
        &scene.wt,
        &["commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "kept"],
    );
    scene
        .repo
        .git(&scene.wt, &["update-ref", "refs/worktree/keep", &kept]);
    let reasons = refused_changing_nothing(&scene, &scene.takeover());
    assert_eq!(reasons, only_here(&["refs/worktree/keep".to_owned()]));
}

/// The worktree remembers commits something that stays names too: a
/// commit amended away (its branch's reflog), a commit another worktree has
/// checked out. It goes, and they stay.
#[test]
fn commits_something_else_names_do_not_keep_it() {
    let scene = Scene::new();
    let amended = scene.repo.head(&scene.wt);
    scene
        .repo
        .git(&scene.wt, &["commit", "-q", "--amend", "-m", "reworded"]);
    let elsewhere = detached_commit(&scene);
    let other = scene.repo.runs.join("other");
    scene.repo.git(
        &scene.repo.main,
        &[
            "worktree",
            "add",
            "-q",
            "--detach",
            other.to_str().unwrap(),
            &elsewhere,
        ],
    );
    released_changing_nothing_else(&scene, &scene.takeover());
    assert!(scene.repo.has_commit(&amended) && scene.repo.has_commit(&elsewhere));
}

/// Whether a path is in the snapshot, for the dry run below.
fn listed(entries: &[crate::testing::Entry], path: &str) -> bool {
    entries.iter().any(|(p, ..)| p == Path::new(path))
}

#[test]
fn a_dry_run_says_what_would_go_and_what_keeps_it() {
    let scene = Scene::new();
    scene
        .repo
        .write(&scene.wt, "target/CACHEDIR.TAG", CACHE_TAG);
    scene.repo.write(&scene.wt, "target/debug/app", "binary\n");
    let plan = plan(
        &scene.registry,
        &scene.git,
        &scene.repo.main,
        BRANCH,
        &scene.takeover(),
        &CancelToken::new(),
    )
    .unwrap();
    let Plan::Release(holder) = plan else {
        panic!("{plan:?}");
    };
    assert_eq!(holder.content.let_go, Paths::of(["target/".to_owned()]));
    assert!(listed(
        &scene.repo.state(&scene.wt).worktree,
        "target/debug/app"
    ));
}
