//! Checkout evidence against real repositories: what an archive holds,
//! publication and immutability, the bounds, every refusal, corruption of
//! every kind, independence from the repository and the caller's
//! environment, and restore.

use std::{
    collections::BTreeMap,
    fs,
    io::Write,
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

use natives_core::CancelToken;
use tempfile::TempDir;

use super::{format::Manifest, *};
use crate::testing::{Repo, snapshot};
use natives_system::crash;

/// A checkout with history worth archiving: a base on `main` holding a
/// binary file, a script and a file to delete; a candidate worktree whose
/// reflog holds an abandoned commit (an unrelated earlier tip, also its
/// `ORIG_HEAD`), then a commit changing the binary, making the script
/// executable, deleting a file, adding and editing others.
pub(super) struct Scene {
    pub repo: Repo,
    pub wt: PathBuf,
    pub artifacts: PathBuf,
    pub base: String,
    pub abandoned: String,
    pub git: Git,
}

pub(super) const BINARY: &[u8] = b"\x00\x01binary\xff\xfe\x00 data\n\x00";

impl Scene {
    pub(super) fn new() -> Scene {
        let repo = Repo::new();
        fs::create_dir_all(repo.main.join("bin")).unwrap();
        fs::write(repo.main.join("bin/data.bin"), BINARY).unwrap();
        repo.write(&repo.main, "tool.sh", "#!/bin/sh\necho tool\n");
        repo.write(&repo.main, "gone.txt", "to be deleted\n");
        let base = repo.commit(&repo.main, "base");
        let wt = repo.runs.join("r1/A");
        fs::create_dir_all(wt.parent().unwrap()).unwrap();
        let shown = wt.to_str().unwrap();
        repo.git(
            &repo.main,
            &["worktree", "add", "-q", "-b", "t1/A", shown, "main"],
        );
        repo.write(&wt, "abandoned.txt", "a first try\n");
        let abandoned = repo.commit(&wt, "abandoned");
        repo.git(&wt, &["reset", "-q", "--hard", "HEAD~1"]);
        let mut changed = BINARY.to_vec();
        changed.extend_from_slice(b"\x00\x80more\x00");
        fs::write(wt.join("bin/data.bin"), changed).unwrap();
        fs::set_permissions(wt.join("tool.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        fs::remove_file(wt.join("gone.txt")).unwrap();
        repo.write(&wt, "new.txt", NEW_TXT);
        repo.write(&wt, "README", "natives, changed\n");
        repo.commit(&wt, "work");
        let artifacts = repo.runs.join("r1/artifacts");
        Scene {
            repo,
            wt,
            artifacts,
            base,
            abandoned,
            git: Git::new().unwrap(),
        }
    }

    pub(super) fn capture_with(&self, bounds: &Bounds) -> Result<Captured> {
        capture(
            &self.git,
            &self.wt,
            &self.base,
            &self.artifacts,
            bounds,
            &CancelToken::new(),
        )
    }

    pub(super) fn capture(&self) -> Result<Captured> {
        self.capture_with(&Bounds::default())
    }

    pub(super) fn published(&self) -> Archive {
        match self.capture().unwrap() {
            Captured::Published(archive) => archive,
            other => panic!("not published: {other:?}"),
        }
    }

    pub(super) fn head(&self) -> String {
        self.repo.head(&self.wt)
    }

    pub(super) fn evidence(&self) -> PathBuf {
        self.artifacts.join(EVIDENCE_DIR)
    }

    pub(super) fn archive_dir(&self) -> PathBuf {
        self.evidence()
            .join(format::archive_name(&self.head(), &self.base))
    }

    pub(super) fn open(&self, dir: &Path) -> Result<Archive> {
        Archive::open(&self.git, dir, &CancelToken::new())
    }
}

/// Every file under `dir` with its bytes: an archive's identity.
pub(super) fn fingerprint(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    snapshot(dir)
}

/// The entries of the evidence directory but the lock.
pub(super) fn evidence_entries(evidence: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(evidence) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != publish::LOCK_FILE)
        .collect();
    names.sort();
    names
}

#[test]
fn a_capture_publishes_every_tip_and_the_change() {
    let scene = Scene::new();
    let archive = scene.published();
    let head = scene.head();
    assert_eq!(archive.dir(), scene.archive_dir());
    let manifest = archive.manifest();
    assert_eq!(
        (manifest.head.as_str(), manifest.base.as_str()),
        (head.as_str(), scene.base.as_str())
    );
    let git = |args: &[&str]| scene.repo.git(&scene.wt, args);
    assert_eq!(manifest.source_tree, git(&["rev-parse", "HEAD^{tree}"]));
    assert_eq!(
        manifest.base_tree,
        git(&["rev-parse", &format!("{}^{{tree}}", scene.base)])
    );
    let abandoned = manifest
        .tip(&scene.abandoned)
        .expect("the abandoned commit is archived");
    assert!(
        abandoned.seen_as.contains(&"ORIG_HEAD".to_owned()),
        "{abandoned:?}"
    );
    assert!(
        abandoned.seen_as.iter().any(|s| s.starts_with("HEAD@{")),
        "{abandoned:?}"
    );
    let reflog = git(&["rev-list", "--walk-reflogs", "HEAD"]);
    for commit in reflog.lines() {
        let tip = manifest
            .tip(commit)
            .expect("every reflog entry is archived");
        let raw = Command::new("git")
            .current_dir(&scene.wt)
            .args(["cat-file", "commit", commit])
            .output()
            .unwrap()
            .stdout;
        assert_eq!(
            fs::read(archive.dir().join(format::commit_file(&tip.commit))).unwrap(),
            raw
        );
    }
    let expected_patch = git(&[
        "-c",
        "core.quotePath=true",
        "diff",
        "--binary",
        "--full-index",
        "--no-renames",
        "--no-color",
        &scene.base,
        &head,
    ]);
    assert_eq!(
        String::from_utf8_lossy(archive.patch()).trim_end(),
        expected_patch
    );
    assert!(expected_patch.contains("GIT binary patch"));
    assert!(expected_patch.contains("deleted file mode 100644"));
    assert!(expected_patch.contains("new mode 100755"));
    assert_eq!(
        evidence_entries(&scene.evidence()),
        [format::archive_name(&head, &scene.base)]
    );
}

// ---------------------------------------------------------------------
// The format.

#[test]
fn sums_are_read_in_their_canonical_form_only() {
    let sum = "a".repeat(64);
    let table: [(&str, bool); 9] = [
        (&format!("{sum}  a\n{sum}  b\n"), true),
        ("", true),
        (&format!("{sum}  b\n{sum}  a\n"), false),
        (&format!("{sum}  a\n{sum}  a\n"), false),
        (&format!("{sum}  a"), false),
        (&format!("{sum} a\n"), false),
        (&format!("{}  a\n", "A".repeat(64)), false),
        (&format!("{}  a\n", "a".repeat(63)), false),
        (&format!("{sum}  a\n\n"), false),
    ];
    for (text, good) in table {
        assert_eq!(
            format::parse_sums(text.as_bytes()).is_ok(),
            good,
            "{text:?}"
        );
    }
    let files = BTreeMap::from([
        ("b".to_owned(), b"x".to_vec()),
        ("a".to_owned(), Vec::new()),
    ]);
    let parsed = format::parse_sums(&format::sums(&files)).unwrap();
    assert_eq!(parsed.keys().collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(parsed["a"], format::sha256_hex(b""));
}

#[test]
fn reflog_entries_are_read_newest_first() {
    let (a, b, zero) = ("a".repeat(40), "b".repeat(40), "0".repeat(40));
    let entry = |old: &str, new: &str| format!("{old} {new} T <t@x> 1700000000 +0000\tcommit: x\n");
    let log = [entry(&zero, &a), entry(&a, &b), entry(&b, &a)].concat();
    let table: [(&str, Option<Vec<&str>>); 5] = [
        (&log, Some(vec![&a, &b, &a])),
        ("", Some(vec![])),
        (&entry(&a, &zero), Some(vec![])),
        ("garbage\n", None),
        (&format!("{a}{b} T <t@x> 1 +0000\tx\n"), None),
    ];
    for (text, expected) in table {
        let parsed = crate::own_history::reflog_tips(text.as_bytes(), 40).ok();
        let expected = expected.map(|ids| ids.into_iter().map(str::to_owned).collect::<Vec<_>>());
        assert_eq!(parsed, expected, "{text:?}");
    }
}

#[test]
fn ids_and_commit_trees_are_read_strictly() {
    let table = [
        ("a".repeat(40), 40, true),
        ("a".repeat(64), 64, true),
        ("a".repeat(40), 64, false),
        ("A".repeat(40), 40, false),
        ("g".repeat(40), 40, false),
        (String::new(), 40, false),
    ];
    for (id, len, good) in table {
        assert_eq!(crate::git::is_id(&id, len), good, "{id} {len}");
    }
    let tree = "c".repeat(40);
    assert_eq!(
        format::commit_tree(format!("tree {tree}\nparent x\n").as_bytes()),
        Some(tree)
    );
    assert_eq!(format::commit_tree(b"parent x\ntree y\n"), None);
    assert_eq!(
        (
            crate::git::id_len("sha1"),
            crate::git::id_len("sha256"),
            crate::git::id_len("md5")
        ),
        (Some(40), Some(64), None)
    );
}

#[test]
fn a_manifest_is_read_in_its_canonical_form_only() {
    let scene = Scene::new();
    let archive = scene.published();
    let bytes = archive.manifest().to_bytes();
    assert_eq!(&format::parse_manifest(&bytes).unwrap(), archive.manifest());
    let text = String::from_utf8(bytes).unwrap();
    let table = [
        text.replace("\n", "\r\n"),
        text.trim_end().to_owned(),
        text.replacen("{", "{\n  \"extra\": 1,", 1),
        text.replace("\"format\": 1", "\"format\": 2"),
    ];
    for bad in &table[..3] {
        assert!(format::parse_manifest(bad.as_bytes()).is_err(), "{bad}");
    }
    assert_eq!(
        format::parse_manifest(table[3].as_bytes()).unwrap().format,
        2
    );
}

// ---------------------------------------------------------------------
// Publication and immutability.

#[test]
fn a_retry_with_the_same_bytes_revalidates_and_succeeds() {
    let scene = Scene::new();
    let first = scene.published();
    let before = fingerprint(first.dir());
    for _ in 0..2 {
        match scene.capture().unwrap() {
            Captured::Existing(archive) => assert_eq!(archive.dir(), first.dir()),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(fingerprint(first.dir()), before);
    assert_eq!(evidence_entries(&scene.evidence()).len(), 1);
}

#[test]
fn a_retry_with_different_bytes_is_refused_and_the_archive_is_unchanged() {
    let scene = Scene::new();
    let archive = scene.published();
    let before = fingerprint(archive.dir());
    // The same HEAD, a longer reflog: the archive would differ.
    scene
        .repo
        .git(&scene.wt, &["checkout", "-q", "--detach", &scene.base]);
    scene.repo.git(&scene.wt, &["checkout", "-q", "t1/A"]);
    let err = scene.capture().unwrap_err();
    assert_eq!(err.code(), "EEXIST", "{err}");
    assert!(err.message().contains("immutable"), "{err}");
    assert_eq!(fingerprint(archive.dir()), before);
    scene.open(archive.dir()).unwrap();
    assert_eq!(
        evidence_entries(&scene.evidence()).len(),
        1,
        "no staging left"
    );
}

#[test]
fn a_directory_taking_the_name_is_never_replaced() {
    // Before the capture: an empty directory, or a partial copy.
    let scene = Scene::new();
    let target = scene.archive_dir();
    fs::create_dir_all(&target).unwrap();
    let err = scene.capture().unwrap_err();
    assert_eq!(err.code(), "EEXIST", "{err}");
    assert_eq!(fs::read_dir(&target).unwrap().count(), 0);
    fs::write(target.join(format::MANIFEST), "{}").unwrap();
    assert_eq!(scene.capture().unwrap_err().code(), "EEXIST");
    assert_eq!(fs::read(target.join(format::MANIFEST)).unwrap(), b"{}");
    // During publication, between the checks and the rename: the rename
    // does not replace it either.
    let scene = Scene::new();
    let target = scene.archive_dir();
    let made = target.clone();
    crash::install(Some(Box::new(move |point| {
        if point == "synced" {
            fs::create_dir(&made).unwrap();
        }
    })));
    let err = scene.capture().unwrap_err();
    crash::install(None);
    assert_eq!(err.code(), "EEXIST", "{err}");
    assert_eq!(fs::read_dir(&target).unwrap().count(), 0);
    let left = evidence_entries(&scene.evidence());
    assert_eq!(
        left,
        [target.file_name().unwrap().to_string_lossy()],
        "the staging is gone"
    );
}

#[test]
fn published_files_are_read_only_and_private() {
    let scene = Scene::new();
    let archive = scene.published();
    let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(archive.dir()), 0o700);
    assert_eq!(mode(&archive.dir().join(format::COMMITS)), 0o700);
    assert_eq!(mode(&archive.dir().join(format::PACK)), 0o400);
    assert_eq!(
        mode(&archive.dir().join(format::commit_file(&scene.base))),
        0o400
    );
}

// ---------------------------------------------------------------------
// Bounds and refusals.

#[test]
fn over_any_bound_nothing_is_written() {
    let scene = Scene::new();
    let size = {
        let archive = scene.published();
        let size = archive.bytes();
        fs::remove_dir_all(archive.dir()).unwrap();
        size
    };
    let tips = 3; // HEAD, base (also the worktree's first), the abandoned commit.
    let table = [
        (
            Bounds {
                run_bytes: size - 1,
                ..Bounds::default()
            },
            Bound::RunBytes,
            size,
        ),
        (
            Bounds {
                new_bytes: size - 1,
                ..Bounds::default()
            },
            Bound::NewBytes,
            size,
        ),
        (
            Bounds {
                objects: 3,
                ..Bounds::default()
            },
            Bound::Objects,
            0,
        ),
        (
            Bounds {
                object_bytes: 10,
                ..Bounds::default()
            },
            Bound::ObjectBytes,
            0,
        ),
        (
            Bounds {
                checkpoints: tips - 1,
                ..Bounds::default()
            },
            Bound::Checkpoints,
            tips as u64,
        ),
    ];
    for (bounds, expected, expected_actual) in table {
        match scene.capture_with(&bounds).unwrap() {
            Captured::Refused(Refusal::OverBound {
                bound,
                limit,
                actual,
            }) => {
                assert_eq!(bound, expected);
                assert!(actual > limit, "{bound:?}");
                if expected_actual > 0 {
                    assert_eq!(actual, expected_actual, "{bound:?}");
                }
            }
            other => panic!("{expected:?}: {other:?}"),
        }
        assert_eq!(
            evidence_entries(&scene.evidence()),
            Vec::<String>::new(),
            "{expected:?}"
        );
    }
    let exact = Bounds {
        run_bytes: size,
        checkpoints: tips,
        ..Bounds::default()
    };
    assert!(matches!(
        scene.capture_with(&exact).unwrap(),
        Captured::Published(_)
    ));
}

#[test]
fn the_run_bound_counts_every_archive_and_anything_left_in_the_directory() {
    let scene = Scene::new();
    let first = scene.published();
    let size = first.bytes();
    scene.repo.write(&scene.wt, "more.txt", "more\n");
    scene.repo.commit(&scene.wt, "more");
    let leftover = scene.evidence().join("leftover");
    fs::write(&leftover, vec![0; 1000]).unwrap();
    // The second archive is about the size of the first.
    let bounds = Bounds {
        run_bytes: 2 * size + 500,
        ..Bounds::default()
    };
    match scene.capture_with(&bounds).unwrap() {
        Captured::Refused(Refusal::OverBound {
            bound: Bound::RunBytes,
            actual,
            ..
        }) => {
            assert!(actual > 2 * size + 1000, "{actual}");
        }
        other => panic!("{other:?}"),
    }
    fs::remove_file(&leftover).unwrap();
    let second = match scene
        .capture_with(&Bounds {
            run_bytes: 3 * size,
            ..bounds
        })
        .unwrap()
    {
        Captured::Published(archive) => archive,
        other => panic!("{other:?}"),
    };
    assert_ne!(second.dir(), first.dir());
}

#[test]
fn a_checkout_an_archive_would_not_rebuild_is_refused() {
    type Setup = fn(&Scene);
    let table: [(&str, Setup, &str); 9] = [
        (
            "edited",
            |s| s.repo.write(&s.wt, "README", "unsaved\n"),
            "changed or untracked: README",
        ),
        (
            "untracked",
            |s| s.repo.write(&s.wt, "draft.md", "x\n"),
            "draft.md",
        ),
        (
            "staged",
            |s| {
                s.repo.write(&s.wt, "README", "staged\n");
                s.repo.git(&s.wt, &["add", "README"]);
                s.repo.write(&s.wt, "README", "natives, changed\n");
            },
            "staged: README",
        ),
        (
            "hidden",
            |s| {
                s.repo
                    .git(&s.wt, &["update-index", "--assume-unchanged", "README"]);
                s.repo.write(&s.wt, "README", "hidden\n");
            },
            "README",
        ),
        (
            "merging",
            |s| {
                let git_dir = s.repo.git(&s.wt, &["rev-parse", "--absolute-git-dir"]);
                fs::write(Path::new(&git_dir).join("MERGE_HEAD"), &s.base).unwrap();
            },
            "in progress: MERGE_HEAD",
        ),
        (
            "filtered",
            |s| {
                s.repo.write(&s.wt, ".gitattributes", "*.bin filter=lfs\n");
                s.repo.commit(&s.wt, "lfs");
            },
            "unsupported",
        ),
        (
            "a fifo",
            |s| {
                let mode = nix::sys::stat::Mode::from_bits_truncate(0o600);
                nix::unistd::mkfifo(&s.wt.join("bin/pipe"), mode).unwrap();
            },
            "bin/pipe",
        ),
        (
            "an empty directory",
            |s| fs::create_dir(s.wt.join("later")).unwrap(),
            "later/",
        ),
        (
            "directories holding only directories",
            |s| fs::create_dir_all(s.wt.join("bin/a/b")).unwrap(),
            "bin/a/",
        ),
    ];
    for (name, setup, expected) in table {
        let scene = Scene::new();
        setup(&scene);
        match scene.capture().unwrap() {
            Captured::Refused(Refusal::NotClean(why)) => {
                assert!(why.contains(expected), "{name}: {why}")
            }
            other => panic!("{name}: {other:?}"),
        }
        assert!(!scene.evidence().exists(), "{name}");
    }
}

#[test]
fn what_cannot_be_archived_is_refused_with_its_reason() {
    let scene = Scene::new();
    let cancel = CancelToken::new();
    let capture_at = |worktree: &Path, base: &str| {
        capture(
            &scene.git,
            worktree,
            base,
            &scene.artifacts,
            &Bounds::default(),
            &cancel,
        )
        .unwrap()
    };
    let refused = |captured: Captured| match captured {
        Captured::Refused(refusal) => refusal,
        other => panic!("{other:?}"),
    };
    let sub = scene.wt.join("bin");
    assert_eq!(
        refused(capture_at(&sub, &scene.base)),
        Refusal::NotAWorktree(sub.clone())
    );
    let missing = scene.repo.runs.join("nowhere");
    assert_eq!(
        refused(capture_at(&missing, &scene.base)),
        Refusal::NotAWorktree(missing)
    );
    assert_eq!(
        refused(capture_at(&scene.wt, "no-such-rev")),
        Refusal::UnknownBase("no-such-rev".to_owned())
    );
    // The abandoned commit, reachable only from the reflog and ORIG_HEAD,
    // is lost (a loose object deleted by hand).
    let loose = scene.repo.main.join(format!(
        ".git/objects/{}/{}",
        &scene.abandoned[..2],
        &scene.abandoned[2..]
    ));
    fs::remove_file(loose).unwrap();
    match refused(capture_at(&scene.wt, &scene.base)) {
        Refusal::Unarchivable { seen_as, why } => {
            assert!(
                seen_as.contains("ORIG_HEAD") && seen_as.contains("HEAD@{"),
                "{seen_as}"
            );
            assert!(why.contains(&scene.abandoned), "{why}");
            let shown = Refusal::Unarchivable { seen_as, why }.to_string();
            assert!(shown.starts_with("not archived: "), "{shown}");
        }
        other => panic!("{other:?}"),
    }
    assert!(!scene.evidence().exists());
}

// ---------------------------------------------------------------------
// Corruption.

/// A writable copy of the archive at `dir`, under the same name.
fn copy_archive(dir: &Path) -> (TempDir, PathBuf) {
    let parent = tempfile::tempdir().unwrap();
    let copy = parent.path().join(dir.file_name().unwrap());
    let ok = Command::new("cp")
        .arg("-r")
        .arg(dir)
        .arg(&copy)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    make_writable(&copy);
    (parent, copy)
}

fn make_writable(path: &Path) {
    let meta = fs::symlink_metadata(path).unwrap();
    if meta.is_symlink() {
        return;
    }
    let mode = if meta.is_dir() { 0o700 } else { 0o600 };
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    if meta.is_dir() {
        for entry in fs::read_dir(path).unwrap() {
            make_writable(&entry.unwrap().path());
        }
    }
}

/// Every file of the archive at `dir`, by relative name.
fn files_of(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    validate::read(dir).unwrap()
}

/// Make the manifest's sizes (unless `keep_manifest`) and the sums agree
/// with the files again: a tampering that covers its tracks.
fn reseal(dir: &Path, keep_manifest: bool) {
    let mut files = files_of(dir);
    if !keep_manifest {
        let mut manifest = format::parse_manifest(&files[format::MANIFEST]).unwrap();
        manifest.files = files
            .iter()
            .filter(|(name, _)| *name != format::MANIFEST && *name != format::SUMS)
            .map(|(name, bytes)| (name.clone(), bytes.len() as u64))
            .collect();
        fs::write(dir.join(format::MANIFEST), manifest.to_bytes()).unwrap();
        files.insert(format::MANIFEST.to_owned(), manifest.to_bytes());
    }
    files.remove(format::SUMS);
    fs::write(dir.join(format::SUMS), format::sums(&files)).unwrap();
}

fn edit_manifest(dir: &Path, edit: impl FnOnce(&mut Manifest)) {
    let mut manifest =
        format::parse_manifest(&fs::read(dir.join(format::MANIFEST)).unwrap()).unwrap();
    edit(&mut manifest);
    fs::write(dir.join(format::MANIFEST), manifest.to_bytes()).unwrap();
}

/// `modes` (the bytes of [`format::MODES`]) with the record of `path`
/// edited (a record whose path is emptied is left out), in canonical form.
fn edit_modes(modes: &mut Vec<u8>, path: &str, edit: fn(&mut format::ModeEntry)) {
    let mut entries = format::parse_modes(modes).unwrap();
    let entry = entries
        .iter_mut()
        .find(|entry| entry.path == path.as_bytes())
        .unwrap_or_else(|| panic!("no record of {path}"));
    edit(entry);
    entries.retain(|entry| !entry.path.is_empty());
    *modes = format::modes(&entries);
}

/// Validation fails, naming `check`.
fn fails(scene: &Scene, dir: &Path, check: Check, case: &str) {
    let err = match scene.open(dir) {
        Ok(_) => panic!("{case}: a corrupt archive passed validation"),
        Err(err) => err,
    };
    assert_eq!(err.code(), "EBADMSG", "{case}: {err}");
    let named = format!("check `{check}` failed");
    assert!(err.message().contains(&named), "{case}: {err}");
}

/// Positions to flip in a file of `len` bytes: both ends, the middle, and
/// a spread of others.
fn positions(len: usize, seed: u64) -> Vec<usize> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut picked = vec![0, len / 2, len - 1];
    for _ in 0..5 {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        picked.push((state >> 33) as usize % len);
    }
    picked.sort_unstable();
    picked.dedup();
    picked
}

#[test]
fn a_flipped_byte_or_a_truncation_in_any_file_is_detected() {
    let scene = Scene::new();
    let archive = scene.published();
    let (_keep, copy) = copy_archive(archive.dir());
    let files = files_of(&copy);
    let mut cases = 0;
    for (seed, (name, bytes)) in files.iter().enumerate() {
        let path = copy.join(name);
        for at in positions(bytes.len(), seed as u64) {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x01;
            fs::write(&path, &flipped).unwrap();
            fails(
                &scene,
                &copy,
                Check::Checksums,
                &format!("{name} byte {at}"),
            );
            cases += 1;
        }
        for len in [0, bytes.len() / 2, bytes.len() - 1] {
            fs::write(&path, &bytes[..len]).unwrap();
            fails(
                &scene,
                &copy,
                Check::Checksums,
                &format!("{name} cut to {len}"),
            );
            cases += 1;
        }
        fs::write(&path, bytes).unwrap();
    }
    assert!(cases > 60, "{cases}");
    // No false failure of the clean archive, again and again.
    for _ in 0..3 {
        scene.open(&copy).unwrap();
    }
}

#[test]
fn tampering_that_updates_the_sums_is_caught_by_the_deeper_checks() {
    let scene = Scene::new();
    let archive = scene.published();
    let head = archive.manifest().head.clone();
    type Tamper = Box<dyn Fn(&Path)>;
    let rewrite = |name: &'static str, edit: fn(&mut Vec<u8>)| -> Tamper {
        Box::new(move |dir: &Path| {
            let mut bytes = fs::read(dir.join(name)).unwrap();
            edit(&mut bytes);
            fs::write(dir.join(name), bytes).unwrap();
            reseal(dir, false);
        })
    };
    let replace = |from: &'static str, to: &'static str| {
        move |bytes: &mut Vec<u8>| {
            let text = String::from_utf8(bytes.clone()).unwrap();
            assert!(text.contains(from), "{from:?} in {text}");
            *bytes = text.replacen(from, to, 1).into_bytes();
        }
    };
    let table: Vec<(&str, Tamper, Check)> = vec![
        (
            "an edited line of the patch",
            Box::new({
                let edit = replace("+new\n", "+New\n");
                move |dir: &Path| {
                    let mut bytes = fs::read(dir.join(format::PATCH)).unwrap();
                    edit(&mut bytes);
                    fs::write(dir.join(format::PATCH), bytes).unwrap();
                    reseal(dir, false);
                }
            }),
            Check::Patch,
        ),
        (
            "a patch whose header no longer applies",
            rewrite(format::PATCH, |bytes| {
                *bytes = [b"diff --git a/x b/x\n", &bytes[..]].concat()
            }),
            Check::Patch,
        ),
        (
            "an edited hunk header the patch applies the same without",
            Box::new(|dir: &Path| {
                let text = String::from_utf8(fs::read(dir.join(format::PATCH)).unwrap()).unwrap();
                let at = text.find("@@ -1 +1 @@").expect("a one-line hunk");
                let edited = format!("{}@@ -1 +1 @@ context{}", &text[..at], &text[at + 11..]);
                fs::write(dir.join(format::PATCH), edited).unwrap();
                reseal(dir, false);
            }),
            Check::Diff,
        ),
        (
            "an edited raw diff",
            rewrite(format::RAW, |b| b.push(0)),
            Check::Diff,
        ),
        (
            "an edited source index",
            rewrite(format::SOURCE_INDEX, |b| b.truncate(b.len() - 1)),
            Check::Indexes,
        ),
        (
            "an edited base index",
            rewrite(format::BASE_INDEX, |b| b.extend_from_slice(b"x\0")),
            Check::Indexes,
        ),
        (
            "a script's permission bits without its executable bit",
            rewrite(format::MODES, |b| {
                edit_modes(b, "tool.sh", |entry| entry.mode &= !0o111)
            }),
            Check::Modes,
        ),
        (
            "a directory's permission bits given to a file",
            rewrite(format::MODES, |b| {
                edit_modes(b, "README", |entry| entry.dir = true)
            }),
            Check::Modes,
        ),
        (
            "a file's permission bits left out",
            rewrite(format::MODES, |b| {
                edit_modes(b, "new.txt", |entry| entry.path.clear())
            }),
            Check::Modes,
        ),
        (
            "permission bits of a file the tree does not hold",
            rewrite(format::MODES, |b| {
                edit_modes(b, "README", |entry| entry.path.push(b'~'))
            }),
            Check::Modes,
        ),
        (
            "permission bits out of order",
            rewrite(format::MODES, |b| {
                b.splice(0..0, *b"f 0644 zz\0").for_each(drop)
            }),
            Check::Modes,
        ),
        (
            "an edited commit",
            Box::new(move |dir: &Path| {
                let path = dir.join(format::commit_file(&head));
                let text = String::from_utf8(fs::read(&path).unwrap()).unwrap();
                fs::write(&path, text.replace("work", "play")).unwrap();
                reseal(dir, false);
            }),
            Check::Commits,
        ),
        (
            "a manifest counting another object",
            Box::new(|dir: &Path| {
                edit_manifest(dir, |m| m.objects += 1);
                reseal(dir, true);
            }),
            Check::Pack,
        ),
        (
            "a manifest naming another source tree",
            Box::new(|dir: &Path| {
                edit_manifest(dir, |m| m.source_tree = m.base_tree.clone());
                reseal(dir, true);
            }),
            Check::Manifest,
        ),
        (
            "a manifest naming another head",
            Box::new(|dir: &Path| {
                edit_manifest(dir, |m| m.head = m.base.clone());
                reseal(dir, true);
            }),
            Check::Manifest,
        ),
        (
            "a manifest in another form",
            Box::new(|dir: &Path| {
                let bytes = fs::read(dir.join(format::MANIFEST)).unwrap();
                let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
                fs::write(
                    dir.join(format::MANIFEST),
                    serde_json::to_vec(&value).unwrap(),
                )
                .unwrap();
                reseal(dir, true);
            }),
            Check::Manifest,
        ),
        (
            "a manifest without a tip",
            Box::new(|dir: &Path| {
                edit_manifest(dir, |m| {
                    m.tips.pop();
                });
                reseal(dir, true);
            }),
            Check::Manifest,
        ),
        (
            "a missing object",
            Box::new(|dir: &Path| {
                fs::write(dir.join(format::PACK), pack_without_a_blob(dir)).unwrap();
                reseal(dir, false);
            }),
            Check::Pack,
        ),
        (
            "a missing object, counted out of the manifest too",
            Box::new(|dir: &Path| {
                let (pack, removed) = (pack_without_a_blob(dir), NEW_TXT.len() as u64);
                fs::write(dir.join(format::PACK), pack).unwrap();
                edit_manifest(dir, |m| {
                    m.objects -= 1;
                    m.object_bytes -= removed;
                });
                reseal(dir, false);
            }),
            Check::Pack,
        ),
        (
            "an extra file",
            Box::new(|dir: &Path| fs::write(dir.join("notes.txt"), "x").unwrap()),
            Check::Layout,
        ),
        (
            "an extra file, listed in the sums",
            Box::new(|dir: &Path| {
                fs::write(dir.join(format::COMMITS).join("f".repeat(40)), "x").unwrap();
                reseal(dir, true);
            }),
            Check::Manifest,
        ),
        (
            "an extra directory",
            Box::new(|dir: &Path| fs::create_dir(dir.join("objects")).unwrap()),
            Check::Layout,
        ),
        (
            "a missing file",
            Box::new(|dir: &Path| fs::remove_file(dir.join(format::RAW)).unwrap()),
            Check::Layout,
        ),
        (
            "a missing commit",
            Box::new(move |dir: &Path| {
                let first = fs::read_dir(dir.join(format::COMMITS))
                    .unwrap()
                    .next()
                    .unwrap();
                fs::remove_file(first.unwrap().path()).unwrap();
            }),
            Check::Checksums,
        ),
        (
            "a file replaced by a symlink to its copy",
            Box::new(|dir: &Path| {
                let aside = dir.with_file_name("aside.patch");
                fs::rename(dir.join(format::PATCH), &aside).unwrap();
                std::os::unix::fs::symlink(&aside, dir.join(format::PATCH)).unwrap();
            }),
            Check::Layout,
        ),
    ];
    for (case, tamper, check) in table {
        let (_keep, copy) = copy_archive(archive.dir());
        tamper(&copy);
        fails(&scene, &copy, check, case);
    }
    let (_keep, renamed) = copy_archive(archive.dir());
    let elsewhere = renamed.with_file_name(format::archive_name(&scene.base, &scene.base));
    fs::rename(&renamed, &elsewhere).unwrap();
    fails(
        &scene,
        &elsewhere,
        Check::Manifest,
        "an archive under another name",
    );
    scene.open(archive.dir()).unwrap();
}

/// Run the test's git in `dir` with `input`; its stdout bytes.
fn git_bytes(dir: &Path, args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut child = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}");
    out.stdout
}

/// The id of `new.txt`'s blob, which only the source tree holds.
fn new_blob(dir: &Path) -> String {
    let index = fs::read(dir.join(format::SOURCE_INDEX)).unwrap();
    let entry = index
        .split(|&b| b == 0)
        .find(|entry| entry.ends_with(b"\tnew.txt"))
        .unwrap();
    String::from_utf8_lossy(&entry[12..52]).into_owned()
}

/// The archive's pack without `new.txt`'s blob.
fn pack_without_a_blob(dir: &Path) -> Vec<u8> {
    let store = tempfile::tempdir().unwrap();
    let bare = store.path();
    git_bytes(bare, &["init", "-q", "--bare", "."], b"");
    git_bytes(
        bare,
        &["index-pack", "--stdin"],
        &fs::read(dir.join(format::PACK)).unwrap(),
    );
    let listed = git_bytes(
        bare,
        &[
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(objectname)",
        ],
        b"",
    );
    let removed = new_blob(dir);
    let kept: String = String::from_utf8(listed)
        .unwrap()
        .lines()
        .filter(|id| *id != removed)
        .map(|id| format!("{id}\n"))
        .collect();
    git_bytes(bare, &["pack-objects", "--stdout", "-q"], kept.as_bytes())
}

/// The size of `new.txt`'s blob.
const NEW_TXT: &str = "new\n";

// ---------------------------------------------------------------------
// Independence and restore.

/// Permission bits no single umask makes together (`0600` and `0644`,
/// `0700` and `0755`), for the checkout's top, files and directories.
const MODES: [(&str, u32); 6] = [
    ("", 0o750),
    ("README", 0o600),
    ("new.txt", 0o644),
    ("tool.sh", 0o700),
    ("bin", 0o700),
    ("src", 0o755),
];

fn mode_of(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn permission_bits_git_does_not_keep_are_archived_and_restored() {
    let scene = Scene::new();
    for (rel, mode) in MODES {
        fs::set_permissions(scene.wt.join(rel), fs::Permissions::from_mode(mode)).unwrap();
    }
    let archive = scene.published();
    let parent = tempfile::tempdir().unwrap();
    let dest = parent.path().join("restored");
    archive
        .restore(&scene.git, &dest, &CancelToken::new())
        .unwrap();
    for (rel, mode) in MODES {
        assert_eq!(mode_of(&dest.join(rel)), mode, "{rel:?}");
    }
    // A historical tip was never on disk as archived: git's modes.
    let older = parent.path().join("older");
    archive
        .restore_tip(&scene.git, &scene.base, &older, &CancelToken::new())
        .unwrap();
    assert!(older.join("README").exists());
}

fn is_executable(path: &Path) -> bool {
    fs::metadata(path).unwrap().permissions().mode() & 0o111 != 0
}

/// Restore `archive` into a new directory and prove it holds the source:
/// the files of `expected`, the executable script, the deleted file gone.
fn restores(scene: &Scene, archive: &Archive, expected: &[(PathBuf, Vec<u8>)]) -> Restored {
    let parent = tempfile::tempdir().unwrap();
    let dest = parent.path().join("restored");
    let restored = archive
        .restore(&scene.git, &dest, &CancelToken::new())
        .unwrap();
    assert_eq!(snapshot(&dest), expected);
    assert!(is_executable(&dest.join("tool.sh")));
    assert!(!is_executable(&dest.join("README")));
    assert!(!dest.join("gone.txt").exists());
    let git = |args: &[&str]| scene.repo.git(&dest, args);
    assert_eq!(
        git(&["rev-parse", "HEAD^{tree}"]),
        archive.manifest().source_tree
    );
    assert_eq!(git(&["rev-parse", "HEAD"]), restored.source_commit);
    assert_eq!(
        git(&["rev-parse", "base^{tree}"]),
        archive.manifest().base_tree
    );
    assert_eq!(git(&["status", "--porcelain", "--untracked-files=all"]), "");
    assert!(scene.repo.git_succeeds(&dest, &["fsck", "--strict"]));
    assert!(!dest.join(".git/objects/info/alternates").exists());
    let diff = git_bytes(
        &dest,
        &[
            "-c",
            "core.quotePath=true",
            "diff",
            "--binary",
            "--full-index",
            "--no-renames",
            "base",
            "source",
        ],
        b"",
    );
    assert_eq!(diff, archive.patch());
    restored
}

#[test]
fn archives_validate_and_restore_after_the_repository_is_gone() {
    let scene = Scene::new();
    let expected = snapshot(&scene.wt);
    let archive = scene.published();
    let dir = archive.dir().to_owned();
    let first = restores(&scene, &archive, &expected);
    let git = |args: &[&str]| scene.repo.git(&scene.repo.main, args);
    git(&["worktree", "remove", scene.wt.to_str().unwrap()]);
    git(&["branch", "-D", "t1/A"]);
    git(&[
        "reflog",
        "expire",
        "--expire=now",
        "--expire-unreachable=now",
        "--all",
    ]);
    git(&["gc", "-q", "--prune=now"]);
    assert!(!scene.repo.git_succeeds(
        &scene.repo.main,
        &["cat-file", "-e", &archive.manifest().head]
    ));
    let archive = scene.open(&dir).unwrap();
    let second = restores(&scene, &archive, &expected);
    assert_eq!(
        second.source_commit, first.source_commit,
        "a restore is reproducible"
    );
    fs::remove_dir_all(&scene.repo.main).unwrap();
    let archive = scene.open(&dir).unwrap();
    let third = restores(&scene, &archive, &expected);
    assert_eq!(third.base_commit, first.base_commit);
}

#[test]
fn a_restore_goes_into_a_new_directory_only() {
    let scene = Scene::new();
    let archive = scene.published();
    let parent = tempfile::tempdir().unwrap();
    let cancel = CancelToken::new();
    let empty = parent.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let err = archive.restore(&scene.git, &empty, &cancel).unwrap_err();
    assert_eq!(err.code(), "EEXIST", "{err}");
    let full = parent.path().join("full");
    fs::create_dir(&full).unwrap();
    fs::write(full.join("mine.txt"), "mine").unwrap();
    assert_eq!(
        archive
            .restore(&scene.git, &full, &cancel)
            .unwrap_err()
            .code(),
        "EEXIST"
    );
    assert_eq!(fs::read(full.join("mine.txt")).unwrap(), b"mine");
    let orphan = parent.path().join("no/parent");
    assert_eq!(
        archive
            .restore(&scene.git, &orphan, &cancel)
            .unwrap_err()
            .code(),
        "ENOENT"
    );
    assert!(!orphan.exists());
    let expected = snapshot(&scene.wt);
    restores(&scene, &archive, &expected);
}

#[test]
fn a_sha256_repository_and_a_main_worktree_are_archived_too() {
    let repo = Repo::new();
    let dir = repo.runs.join("sha256");
    fs::create_dir_all(&dir).unwrap();
    repo.git(
        &dir,
        &["init", "-q", "--object-format=sha256", "-b", "main"],
    );
    repo.write(&dir, "a.txt", "a\n");
    let base = repo.commit(&dir, "a");
    repo.write(&dir, "b.txt", "b\n");
    let head = repo.commit(&dir, "b");
    assert_eq!(head.len(), 64);
    let git = Git::new().unwrap();
    let cancel = CancelToken::new();
    let artifacts = repo.runs.join("artifacts");
    let captured = capture(
        &git,
        &dir,
        "HEAD~1",
        &artifacts,
        &Bounds::default(),
        &cancel,
    )
    .unwrap();
    let Captured::Published(archive) = captured else {
        panic!("{captured:?}");
    };
    assert_eq!(archive.manifest().object_format, "sha256");
    assert_eq!(archive.manifest().base, base);
    let dest = repo.runs.join("restored");
    let restored = archive.restore(&git, &dest, &cancel).unwrap();
    assert_eq!(
        restored.source_tree,
        repo.git(&dir, &["rev-parse", "HEAD^{tree}"])
    );
    assert_eq!(fs::read(dest.join("b.txt")).unwrap(), b"b\n");
}

/// What the hostile-environment child reads: the scene and the archives.
const HOSTILE: &str = "NATIVES_TEST_EVIDENCE_HOSTILE";

/// A home whose git configuration and attributes would change every answer
/// and byte evidence depends on, and run code if let: hooks, a signing
/// program, a template.
fn hostile_home(ran: &Path) -> TempDir {
    let home = tempfile::tempdir().unwrap();
    let at = |name: &str| home.path().join(name);
    let script = at("run.sh");
    fs::write(
        &script,
        format!("#!/bin/sh\ntouch '{}'\nexit 1\n", ran.display()),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    for hooks in ["hooks", "template/hooks"] {
        fs::create_dir_all(at(hooks)).unwrap();
        for hook in [
            "post-checkout",
            "pre-commit",
            "post-commit",
            "reference-transaction",
        ] {
            fs::copy(&script, at(hooks).join(hook)).unwrap();
        }
    }
    fs::write(at("order"), "tool.sh\nnew.txt\n").unwrap();
    // Attributes that change a diff's bytes without transforming content
    // (a transforming one makes a capture refuse, as the content proof must).
    fs::write(at("attributes"), "* -diff\n").unwrap();
    fs::create_dir_all(at(".config/git")).unwrap();
    fs::write(at(".config/git/attributes"), "*.txt diff=hostile\n").unwrap();
    let config = format!(
        "[diff]\n\tnoprefix = true\n\tcontext = 1\n\torderFile = {order}\n\talgorithm = patience\n\trenames = copies\n\texternal = {run}\n\
         [apply]\n\twhitespace = fix\n\
         [commit]\n\tgpgSign = true\n[gpg]\n\tprogram = {run}\n\
         [core]\n\thooksPath = {hooks}\n\tattributesFile = {attributes}\n\tautocrlf = true\n\tfileMode = false\n\tquotePath = false\n\tcompression = 0\n\tbigFileThreshold = 1\n\
         [pack]\n\twindow = 0\n\tdepth = 1\n\tcompression = 1\n\
         [init]\n\ttemplateDir = {template}\n\tdefaultBranch = hostile\n\
         [user]\n\tuseConfigOnly = true\n\
         [fsck]\n\tmissingEmail = ignore\n\
         [diff \"hostile\"]\n\ttextconv = {run}\n\tbinary = true\n",
        order = at("order").display(),
        run = script.display(),
        hooks = at("hooks").display(),
        attributes = at("attributes").display(),
        template = at("template").display(),
    );
    fs::write(at(".gitconfig"), config).unwrap();
    home
}

#[test]
fn evidence_is_independent_of_the_callers_environment_and_configuration() {
    let scene = Scene::new();
    let archive = scene.published();
    let (_keep, missing) = copy_archive(archive.dir());
    fs::write(missing.join(format::PACK), pack_without_a_blob(&missing)).unwrap();
    reseal(&missing, false);
    let ran = scene.repo.runs.join("hostile-code-ran");
    let home = hostile_home(&ran);
    let objects = scene.repo.main.join(".git/objects");
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "evidence::tests::hostile_environment_child",
            "--nocapture",
        ])
        .env(
            HOSTILE,
            format!(
                "{}\n{}\n{}\n{}",
                scene.wt.display(),
                scene.base,
                archive.dir().display(),
                missing.display()
            ),
        )
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("GIT_DIR", scene.repo.main.join(".git"))
        .env("GIT_WORK_TREE", &scene.repo.main)
        .env("GIT_INDEX_FILE", home.path().join("no-such-index"))
        .env("GIT_OBJECT_DIRECTORY", &objects)
        .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", &objects)
        .env(
            "GIT_CONFIG_PARAMETERS",
            "'diff.noprefix'='true' 'apply.whitespace'='fix'",
        )
        .env("GIT_CONFIG_GLOBAL", home.path().join(".gitconfig"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("hostile environment: right answers"));
    assert!(
        !ran.exists(),
        "a hook, template or program of the caller's ran"
    );
}

/// The child of the hostile-environment test.
#[test]
#[ignore = "run by evidence_is_independent_of_the_callers_environment_and_configuration in a child process"]
fn hostile_environment_child() {
    let Ok(given) = std::env::var(HOSTILE) else {
        return;
    };
    let [wt, base, dir, missing] =
        <[&str; 4]>::try_from(given.lines().collect::<Vec<_>>()).unwrap();
    let git = Git::new().unwrap();
    let cancel = CancelToken::new();
    let archive = Archive::open(&git, Path::new(dir), &cancel).unwrap();
    let err = Archive::open(&git, Path::new(missing), &cancel).unwrap_err();
    assert!(err.message().contains("check `pack` failed"), "{err}");
    // A capture here writes the bytes a capture in a clean environment did.
    let artifacts = tempfile::tempdir().unwrap();
    let captured = capture(
        &git,
        Path::new(wt),
        base,
        artifacts.path(),
        &Bounds::default(),
        &cancel,
    )
    .unwrap();
    let Captured::Published(again) = captured else {
        panic!("{captured:?}");
    };
    assert_eq!(snapshot(again.dir()), snapshot(archive.dir()));
    let dest = artifacts.path().join("restored");
    let restored = archive.restore(&git, &dest, &cancel).unwrap();
    assert_eq!(restored.source_tree, archive.manifest().source_tree);
    assert_eq!(snapshot(&dest), snapshot(Path::new(wt)));
    assert!(is_executable(&dest.join("tool.sh")));
    println!("hostile environment: right answers");
}

#[test]
fn a_cancelled_capture_stops_and_publishes_nothing() {
    let scene = Scene::new();
    let cancel = CancelToken::new();
    let stop = cancel.clone();
    crash::install(Some(Box::new(move |point| {
        if point == "collected" {
            stop.cancel();
        }
    })));
    let captured = capture(
        &scene.git,
        &scene.wt,
        &scene.base,
        &scene.artifacts,
        &Bounds::default(),
        &cancel,
    );
    crash::install(None);
    assert_eq!(captured.unwrap_err().code(), "ABORT_ERR");
    assert!(!scene.evidence().exists());
    let err = Archive::open(&scene.git, &scene.archive_dir(), &cancel).unwrap_err();
    assert_eq!(err.code(), "ENOENT", "{err}");
}

#[test]
fn history_that_cannot_be_read_whole_is_refused() {
    type Damage = fn(&Path);
    type Expected = fn(&Refusal) -> bool;
    let table: [(&str, Damage, Expected); 3] = [
        (
            "ORIG_HEAD not an id",
            |git_dir| fs::write(git_dir.join("ORIG_HEAD"), "ref: refs/heads/x\n").unwrap(),
            |r| matches!(r, Refusal::Unarchivable { seen_as, .. } if seen_as == "ORIG_HEAD"),
        ),
        (
            "a malformed reflog entry",
            |git_dir| {
                let mut log = fs::OpenOptions::new()
                    .append(true)
                    .open(git_dir.join("logs/HEAD"))
                    .unwrap();
                log.write_all(b"not an entry\n").unwrap();
            },
            |r| matches!(r, Refusal::Unarchivable { why, .. } if why.contains("line")),
        ),
        (
            "a reflog over its bound",
            |git_dir| {
                let line = format!("{0} {0} T <t@x> 1 +0000\tx\n", "a".repeat(40));
                let log = line.repeat((REFLOG_BYTES as usize / line.len()) + 1);
                fs::write(git_dir.join("logs/HEAD"), log).unwrap();
            },
            |r| {
                matches!(
                    r,
                    Refusal::OverBound {
                        bound: Bound::ReflogBytes,
                        ..
                    }
                )
            },
        ),
    ];
    for (case, damage, expected) in table {
        let scene = Scene::new();
        let git_dir = PathBuf::from(
            scene
                .repo
                .git(&scene.wt, &["rev-parse", "--absolute-git-dir"]),
        );
        damage(&git_dir);
        match scene.capture().unwrap() {
            Captured::Refused(refusal) => assert!(expected(&refusal), "{case}: {refusal:?}"),
            other => panic!("{case}: {other:?}"),
        }
        assert!(!scene.evidence().exists(), "{case}");
    }
}

#[test]
fn a_source_equal_to_its_base_archives_an_empty_patch_and_restores() {
    let scene = Scene::new();
    let head = scene.head();
    let captured = capture(
        &scene.git,
        &scene.wt,
        &head,
        &scene.artifacts,
        &Bounds::default(),
        &CancelToken::new(),
    )
    .unwrap();
    let Captured::Published(archive) = captured else {
        panic!("not published: {captured:?}");
    };
    assert!(archive.patch().is_empty());
    assert_eq!(archive.manifest().source_tree, archive.manifest().base_tree);
    let archive = scene.open(archive.dir()).unwrap();
    let parent = tempfile::tempdir().unwrap();
    let dest = parent.path().join("restored");
    archive
        .restore(&scene.git, &dest, &CancelToken::new())
        .unwrap();
    assert_eq!(snapshot(&dest), snapshot(&scene.wt));
}

#[test]
fn an_earlier_tip_restores_by_its_full_id_and_nothing_else_does() {
    let scene = Scene::new();
    let archive = scene.published();
    let parent = tempfile::tempdir().unwrap();
    let cancel = CancelToken::new();
    let dest = parent.path().join("abandoned");
    let restored = archive
        .restore_tip(&scene.git, &scene.abandoned, &dest, &cancel)
        .unwrap();
    assert_eq!(
        fs::read_to_string(dest.join("abandoned.txt")).unwrap(),
        "a first try\n"
    );
    let tree = scene.repo.git(
        &scene.repo.main,
        &["rev-parse", &format!("{}^{{tree}}", scene.abandoned)],
    );
    assert_eq!(restored.source_tree, tree);
    assert_eq!(scene.repo.git(&dest, &["rev-parse", "HEAD^{tree}"]), tree);
    let short = &scene.abandoned[..12];
    let err = archive
        .restore_tip(&scene.git, short, &parent.path().join("short"), &cancel)
        .unwrap_err();
    assert_eq!(err.kind(), natives_core::ErrorKind::NotFound);
    assert!(!parent.path().join("short").exists());
}
