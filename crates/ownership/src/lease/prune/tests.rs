use std::{
    fs,
    path::{Path, PathBuf},
    time::{Duration, SystemTime},
};

use super::*;
use crate::lease::{Guard, Status};

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    leases: Leases,
    cache: PathBuf,
}

/// A home, and a registered cache directory laid out as cargo's: its tag,
/// a host `debug` profile and a cross-compiled `release` one.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let cache = root.join("target");
    fs::create_dir(&cache).unwrap();
    fs::write(
        cache.join("CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n# created by cargo\n",
    )
    .unwrap();
    fs::create_dir_all(cache.join("debug/.fingerprint")).unwrap();
    fs::create_dir_all(cache.join("x86_64-unknown-linux-gnu/release/.fingerprint")).unwrap();
    let leases = Leases::open(&root.join("home")).unwrap();
    drop(hold(&leases, &cache));
    Fixture {
        _dir: dir,
        root,
        leases,
        cache,
    }
}

fn owner() -> Owner {
    Owner::current("run-1", "node-a", "janitor")
}

fn hold(leases: &Leases, dir: &Path) -> Guard {
    match leases.try_acquire(dir, &owner()).unwrap() {
        AcquireOutcome::Acquired(guard) => guard,
        AcquireOutcome::Busy(busy) => panic!("{busy:?}"),
    }
}

/// Write `bytes` bytes at `dir/rel`, last modified `minutes` after an old
/// moment (so that a larger number is newer).
fn file(dir: &Path, rel: &str, bytes: usize, minutes: u64) {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, vec![b'x'; bytes]).unwrap();
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    let file = fs::File::options().write(true).open(&path).unwrap();
    file.set_modified(old + Duration::from_secs(minutes * 60))
        .unwrap();
}

/// Every entry under `root`, relative, sorted.
fn tree(root: &Path) -> Vec<PathBuf> {
    let mut entries = Vec::new();
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        for item in fs::read_dir(&dir).unwrap() {
            let path = item.unwrap().path();
            if fs::symlink_metadata(&path).unwrap().is_dir() {
                pending.push(path.clone());
            }
            entries.push(path.strip_prefix(root).unwrap().to_owned());
        }
    }
    entries.sort();
    entries
}

/// Only build output goes, oldest first: files of unknown purpose stay
/// however old, as do directories that were empty before, the profiles and
/// their `.fingerprint`; the directories the prune emptied go.
#[test]
fn only_build_output_is_deleted_oldest_first() {
    let f = fixture();
    file(&f.cache, "notes.txt", 1000, 0);
    file(&f.cache, "tools/bin/rg", 1000, 1);
    file(&f.cache, "doc/index.html", 1000, 2);
    file(&f.cache, "debug/.fingerprint/app-1/lib-app", 10, 3);
    file(&f.cache, "debug/deps/libapp-1.rlib", 1000, 4);
    file(&f.cache, "x86_64-unknown-linux-gnu/release/app", 1000, 5);
    file(&f.cache, "x86_64-unknown-linux-gnu/release/app.d", 0, 5);
    file(&f.cache, "debug/deps/app-1", 1000, 6);
    file(&f.cache, "debug/NOTES.md", 1000, 0);
    file(&f.cache, "debug/scratch/data", 1000, 0);
    fs::create_dir_all(f.cache.join("debug/build/empty-before")).unwrap();
    let report = f
        .leases
        .maintenance_prune(&f.cache, 1500, &owner())
        .unwrap()
        .unwrap();
    let unknown = |rel: &str| Kept {
        path: f.cache.join(rel),
        why: KeptReason::UnknownPurpose,
    };
    assert_eq!(
        report,
        PruneReport {
            bytes_before: 3010,
            bytes_after: 1000,
            files_removed: 3,
            kept: vec![unknown("debug/NOTES.md"), unknown("debug/scratch")],
        }
    );
    let left: Vec<&str> = vec![
        ".fingerprint",
        "NOTES.md",
        "build",
        "build/empty-before",
        "deps",
        "deps/app-1",
        "scratch",
        "scratch/data",
    ];
    assert_eq!(
        tree(&f.cache.join("debug")),
        left.iter().map(PathBuf::from).collect::<Vec<_>>()
    );
    for untouched in [
        "notes.txt",
        "tools/bin/rg",
        "doc/index.html",
        "CACHEDIR.TAG",
    ] {
        assert!(f.cache.join(untouched).exists(), "{untouched}");
    }
    assert!(
        f.cache
            .join("x86_64-unknown-linux-gnu/release/.fingerprint")
            .is_dir()
    );
    assert!(
        !f.cache
            .join("x86_64-unknown-linux-gnu/release/app")
            .exists()
    );
    assert_eq!(
        f.leases.classify(&f.cache).unwrap(),
        Status::Free,
        "prune released"
    );

    let all = f
        .leases
        .maintenance_prune(&f.cache, 0, &owner())
        .unwrap()
        .unwrap();
    assert_eq!((all.bytes_after, all.files_removed), (0, 2));
    assert!(
        f.cache.join("debug/.fingerprint").is_dir(),
        "still a target directory"
    );
    assert_eq!(f.leases.plan_prune(&f.cache, 0).unwrap().files, vec![]);
}

/// Everything that is not a registered cargo target directory is refused
/// with a reason, before anything is listed; nothing is deleted.
#[test]
fn only_a_registered_cargo_target_directory_is_pruned() {
    let f = fixture();
    let unregistered = f.root.join("other-target");
    fs::create_dir_all(unregistered.join("debug/.fingerprint")).unwrap();
    fs::write(unregistered.join(".rustc_info.json"), "{}").unwrap();
    file(&unregistered, "debug/deps/a", 10, 0);
    let documents = f.root.join("documents");
    file(&documents, "letter.txt", 10, 0);
    let tag_only = f.root.join("tag-only");
    file(&tag_only, "CACHEDIR.TAG", 10, 0);
    fs::write(
        tag_only.join("CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n",
    )
    .unwrap();
    file(&tag_only, "data/file", 10, 0);
    let other_tag = f.root.join("other-tag");
    fs::create_dir_all(other_tag.join("debug/.fingerprint")).unwrap();
    fs::write(other_tag.join("CACHEDIR.TAG"), "not a cache tag\n").unwrap();
    let repository = f.root.join("repository");
    fs::create_dir_all(repository.join("debug/.fingerprint")).unwrap();
    fs::write(repository.join(".rustc_info.json"), "{}").unwrap();
    fs::create_dir(repository.join(".git")).unwrap();
    let holding_home = f.root.clone();
    fs::create_dir_all(holding_home.join("debug/.fingerprint")).unwrap();
    fs::write(holding_home.join(".rustc_info.json"), "{}").unwrap();
    for dir in [
        &documents,
        &tag_only,
        &other_tag,
        &repository,
        &holding_home,
    ] {
        drop(hold(&f.leases, dir));
    }
    let home = f.leases.home().display().to_string();
    let table: [(&Path, &str, String); 8] = [
        (&f.root.join("missing"), "ENOENT", "No such file".to_owned()),
        (
            &f.cache.join("CACHEDIR.TAG"),
            "ENOTDIR",
            "not a directory".to_owned(),
        ),
        (
            &unregistered,
            "EINVAL",
            format!("is not a build cache registered under {home}"),
        ),
        (
            &documents,
            "EINVAL",
            "does not look like a cargo target directory".to_owned(),
        ),
        (
            &tag_only,
            "EINVAL",
            "does not look like a cargo target directory".to_owned(),
        ),
        (
            &other_tag,
            "EINVAL",
            "does not look like a cargo target directory".to_owned(),
        ),
        (&repository, "EINVAL", "holds a .git".to_owned()),
        (
            &holding_home,
            "EINVAL",
            format!("contains the natives home {home}"),
        ),
    ];
    let before = tree(&f.root);
    for (dir, code, why) in table {
        for err in [
            f.leases.maintenance_prune(dir, 0, &owner()).unwrap_err(),
            f.leases.plan_prune(dir, 0).unwrap_err(),
        ] {
            assert_eq!(err.code(), code, "{}: {err}", dir.display());
            assert!(
                err.message().starts_with(&format!("{}: ", dir.display())),
                "{err}"
            );
            assert!(err.message().contains(&why), "{err}");
        }
    }
    assert_eq!(tree(&f.root), before, "a refused prune changed something");
}

/// A plan lists what would go and deletes nothing; carried out later, it
/// deletes exactly what it listed, except a file changed since, and nothing
/// that appeared meanwhile.
#[test]
fn a_planned_prune_deletes_only_what_was_planned() {
    let f = fixture();
    file(&f.cache, "debug/deps/a", 100, 0);
    file(&f.cache, "debug/deps/b", 100, 1);
    file(&f.cache, "debug/deps/c", 100, 2);
    let plan = f.leases.plan_prune(&f.cache, 100).unwrap();
    let planned: Vec<PathBuf> = plan.files.iter().map(|file| file.path.clone()).collect();
    assert_eq!(
        planned,
        [f.cache.join("debug/deps/a"), f.cache.join("debug/deps/b")]
    );
    assert_eq!((plan.bytes_before, plan.bytes_after), (300, 100));
    assert!(
        f.cache.join("debug/deps/a").exists(),
        "a plan deletes nothing"
    );

    file(&f.cache, "debug/deps/b", 100, 9);
    file(&f.cache, "debug/deps/new", 100, 0);
    let report = f.leases.prune_planned(&plan, &owner()).unwrap().unwrap();
    assert_eq!(report.files_removed, 1);
    assert!(!f.cache.join("debug/deps/a").exists());
    for kept in ["debug/deps/b", "debug/deps/c", "debug/deps/new"] {
        assert!(f.cache.join(kept).exists(), "{kept}");
    }

    let held = hold(&f.leases, &f.cache);
    let busy = f.leases.prune_planned(&plan, &owner()).unwrap();
    assert!(matches!(busy, Err(Busy::Active(_))), "{busy:?}");
    drop(held);
}

/// `git` in `dir`, with an identity and no user or system configuration.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Every file under `root` with its bytes, sorted: what must survive whole.
fn contents(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    tree(root)
        .into_iter()
        .filter(|rel| fs::symlink_metadata(root.join(rel)).unwrap().is_file())
        .map(|rel| (rel.clone(), fs::read(root.join(&rel)).unwrap()))
        .collect()
}

/// A git repository anywhere inside a profile (a clone a build script made
/// in its output, with a commit pushed nowhere; a bare mirror; a linked
/// worktree's `.git` file; a repository holding a whole triple's profiles)
/// is kept whole however old, and named; the build output around it goes.
#[test]
fn a_repository_at_any_depth_is_kept_whole_and_named() {
    let f = fixture();
    let checkout = f.cache.join("debug/build/x-1/out/checkout");
    fs::create_dir_all(&checkout).unwrap();
    git(&checkout, &["init", "-q"]);
    file(&checkout, "src/lib.rs", 100, 0);
    git(&checkout, &["add", "."]);
    git(&checkout, &["commit", "-qm", "pushed nowhere"]);
    let mirror = f.cache.join("debug/build/y-1/out/mirror.git");
    fs::create_dir_all(&mirror).unwrap();
    git(&mirror, &["init", "-q", "--bare"]);
    file(&f.cache, "debug/deps/linked/.git", 20, 0);
    file(&f.cache, "debug/deps/linked/notes.txt", 20, 0);
    let triple = f.cache.join("x86_64-unknown-linux-gnu");
    git(&triple, &["init", "-q"]);
    file(&triple, "release/deps/b-1", 100, 0);
    file(&f.cache, "debug/build/x-1/out/generated.rs", 100, 0);
    file(&f.cache, "debug/deps/a-1", 100, 0);
    let repositories = [
        &checkout,
        &mirror,
        &f.cache.join("debug/deps/linked"),
        &triple,
    ];
    let before: Vec<_> = repositories.iter().map(|repo| contents(repo)).collect();
    let head = git(&checkout, &["rev-parse", "HEAD"]);

    let plan = f.leases.plan_prune(&f.cache, 0).unwrap();
    let report = f.leases.prune_planned(&plan, &owner()).unwrap().unwrap();

    let mut expected: Vec<Kept> = repositories
        .iter()
        .map(|path| Kept {
            path: path.to_path_buf(),
            why: KeptReason::Repository,
        })
        .collect();
    expected.sort_by(|a, b| a.path.cmp(&b.path));
    assert_eq!(plan.kept, expected);
    assert_eq!(report.kept, expected);
    assert_eq!((report.files_removed, report.bytes_after), (2, 0));
    let after: Vec<_> = repositories.iter().map(|repo| contents(repo)).collect();
    assert_eq!(after, before, "a repository lost a byte");
    assert_eq!(git(&checkout, &["rev-parse", "HEAD"]), head);
    assert!(!f.cache.join("debug/build/x-1/out/generated.rs").exists());
    assert!(!f.cache.join("debug/deps/a-1").exists());
}

/// At the top of a profile only what cargo puts there is output: its lock,
/// dep-info files and artifacts beside their dep-info. Anything else, and
/// any directory cargo does not make there, is kept and named.
#[test]
fn at_the_top_of_a_profile_only_what_cargo_makes_is_output() {
    let table = [
        (".cargo-lock", true),
        ("app", true),
        ("app.d", true),
        ("libapp.rlib", true),
        ("libapp.so", true),
        ("libapp.d", true),
        ("tool.wasm", true),
        ("tool.d", true),
        ("README.md", false),
        ("backup.tar", false),
        (".env", false),
        ("deps/app-1", true),
        ("build/app-1/out/x", true),
        ("examples/demo-1", true),
        ("incremental/app-1/s-1/dep-graph.bin", true),
        ("notes/plan.md", false),
        ("doc/index.html", false),
    ];
    let f = fixture();
    for (rel, _) in table {
        file(&f.cache, &format!("debug/{rel}"), 10, 0);
    }
    let plan = f.leases.plan_prune(&f.cache, 0).unwrap();
    for (rel, output) in table {
        let path = f.cache.join("debug").join(rel);
        let listed = plan.files.iter().any(|file| file.path == path);
        let top = f.cache.join("debug").join(rel.split('/').next().unwrap());
        let kept = plan
            .kept
            .iter()
            .any(|kept| kept.path == top && kept.why == KeptReason::UnknownPurpose);
        assert_eq!((listed, kept), (output, !output), "{rel}");
    }
}

/// A user's home, any directory holding one, and the root are refused even
/// when registered and laid out as a cargo target directory (which would
/// otherwise be pruned). The home is a fake one this test owns, so a guard
/// that stopped refusing homes could only ever empty this test's folder.
#[test]
fn a_home_its_ancestors_and_the_root_are_refused_even_as_build_caches() {
    let f = fixture();
    let above = f.root.join("users");
    let fake_home = above.join("ana");
    for dir in [&above, &fake_home] {
        fs::create_dir_all(dir.join("debug/.fingerprint")).unwrap();
        fs::write(dir.join(".rustc_info.json"), "{}").unwrap();
        file(dir, "debug/deps/precious-1", 10, 0);
        drop(hold(&f.leases, dir));
    }
    let homes = [fake_home.clone()];
    let home = f.leases.home();
    let table: [(&Path, &[PathBuf], String); 4] = [
        (
            &fake_home,
            &homes,
            format!("is the home directory {}", fake_home.display()),
        ),
        (
            &above,
            &homes,
            format!("contains the home directory {}", fake_home.display()),
        ),
        (Path::new("/"), &[], "is the root directory".to_owned()),
        (Path::new("/"), &homes, "is the root directory".to_owned()),
    ];
    for (dir, user_homes, why) in table {
        let err = guard::prunable_for(dir, home, user_homes).unwrap_err();
        assert_eq!(err.code(), "EINVAL", "{}: {err}", dir.display());
        assert!(err.message().contains(&why), "{}: {err}", dir.display());
    }
    // Without the home among the user's homes, both are build caches.
    assert_eq!(
        guard::prunable_for(&fake_home, home, &[]).unwrap(),
        fake_home
    );
    assert_eq!(guard::prunable_for(&above, home, &[]).unwrap(), above);
    assert!(fake_home.join("debug/deps/precious-1").exists());
}

/// The real prune refuses the user's real home as the home it is, and the
/// root as the root, with a plan (which deletes nothing in any case).
#[test]
fn a_prune_refuses_the_real_home_and_the_root() {
    let f = fixture();
    let mut table = vec![(PathBuf::from("/"), "is the root directory".to_owned())];
    table.extend(
        natives_system::paths::user_homes()
            .into_iter()
            .filter(|home| home != Path::new("/"))
            .map(|home| {
                let why = format!("is the home directory {}", home.display());
                (home, why)
            }),
    );
    for (dir, why) in table {
        let err = f.leases.plan_prune(&dir, 0).unwrap_err();
        assert!(err.message().contains(&why), "{}: {err}", dir.display());
    }
}
