//! The journal on its own: records, what a recovery honours, and what a
//! batch leaves behind. (Killing a batch at every step is change's test.)

use std::{
    fs,
    io::Write,
    os::unix::{ffi::OsStrExt, fs::PermissionsExt},
    path::{Path, PathBuf},
};

use super::{Backup, Ident, JOURNAL_DIR, Name, Record, recover};
use crate::{Change, Expect, Scope, apply};

fn real_tempdir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let real = fs::canonicalize(dir.path()).unwrap();
    (dir, real)
}

fn ident_of(path: &Path) -> Ident {
    Ident::of(&nix::sys::stat::lstat(path).unwrap())
}

/// Plant a journal of a dead batch in `holder`, its directory as given.
fn plant(holder: &Path, mode: u32, records: &[Record]) -> PathBuf {
    let dir = holder.join(JOURNAL_DIR);
    fs::create_dir_all(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(mode)).unwrap();
    let path = dir.join("1.dead.journal");
    let mut file = fs::File::create(&path).unwrap();
    for record in records {
        writeln!(file, "{}", serde_json::to_string(record).unwrap()).unwrap();
    }
    path
}

#[test]
fn records_round_trip_one_line_each_names_byte_for_byte() {
    let name = Name(PathBuf::from(std::ffi::OsStr::from_bytes(
        b"/tmp/caf\xe9\n.txt",
    )));
    let ident = Ident {
        dev: 1,
        ino: 2,
        size: 3,
        mtime_ns: -4,
    };
    let records = [
        Record::Mkdir { path: name.clone() },
        Record::Write {
            target: name.clone(),
            temp: name.clone(),
            copy: name.clone(),
            old: Some(ident),
        },
        Record::Placing {
            new: ident,
            backup: Backup::Copied { ident },
        },
        Record::Delete {
            path: name.clone(),
            hidden: name.clone(),
            entry: ident,
        },
        Record::Commit,
    ];
    for record in records {
        let line = serde_json::to_string(&record).unwrap();
        assert!(!line.contains('\n'), "{line}");
        assert_eq!(serde_json::from_str::<Record>(&line).unwrap(), record);
    }
}

/// A dead batch that hid a file (its delete not committed): recovery puts it back.
#[test]
fn a_dead_batchs_hidden_file_is_put_back() {
    let (_dir, root) = real_tempdir();
    fs::write(root.join(".a.txt.1.0.0.deleted"), "kept bytes").unwrap();
    let entry = ident_of(&root.join(".a.txt.1.0.0.deleted"));
    let journal = plant(
        &root,
        0o700,
        &[Record::Delete {
            path: Name(root.join("a.txt")),
            hidden: Name(root.join(".a.txt.1.0.0.deleted")),
            entry,
        }],
    );
    let recovery = recover(&root).unwrap();
    assert_eq!(
        (recovery.rolled_back, recovery.unresolved.len()),
        (1, 0),
        "{recovery:?}"
    );
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"kept bytes");
    assert!(!journal.exists() && !root.join(JOURNAL_DIR).exists());
}

/// Recovery acts only on what the journal accounts for: a journal naming a
/// path outside its own directory, or one in a directory open to others,
/// moves and removes nothing.
#[test]
fn a_journal_that_is_not_trusted_moves_nothing() {
    let (_dir, base) = real_tempdir();
    let (root, elsewhere) = (base.join("root"), base.join("elsewhere"));
    fs::create_dir_all(&root).unwrap();
    fs::create_dir_all(&elsewhere).unwrap();
    fs::write(elsewhere.join("victim"), "theirs").unwrap();
    let entry = ident_of(&elsewhere.join("victim"));
    let outside = Record::Delete {
        path: Name(elsewhere.join("restored")),
        hidden: Name(elsewhere.join("victim")),
        entry,
    };
    let journal = plant(&root, 0o700, std::slice::from_ref(&outside));
    let recovery = recover(&root).unwrap();
    assert_eq!(recovery.rolled_back, 0);
    assert!(recovery.unresolved[0].contains("outside"), "{recovery:?}");
    assert!(journal.exists());
    fs::remove_dir_all(root.join(JOURNAL_DIR)).unwrap();

    fs::write(root.join("victim"), "theirs").unwrap();
    let inside = Record::Delete {
        path: Name(root.join("restored")),
        hidden: Name(root.join("victim")),
        entry: ident_of(&root.join("victim")),
    };
    plant(&root, 0o777, &[inside]);
    assert_eq!(recover(&root).unwrap(), super::Recovery::default());
    assert_eq!(fs::read(root.join("victim")).unwrap(), b"theirs");
    assert_eq!(fs::read(elsewhere.join("victim")).unwrap(), b"theirs");
    assert!(!root.join("restored").exists() && !elsewhere.join("restored").exists());
}

/// A batch leaves no journal, and where no journal can be kept (the name
/// taken by a file) the batch still runs and is still undone when it fails.
#[test]
fn a_batch_leaves_no_journal_and_runs_where_none_can_be_kept() {
    let (_dir, root) = real_tempdir();
    fs::write(root.join("a"), "old").unwrap();
    let scope = Scope::confined(&root).unwrap();
    let write = |path: &str| Change::Write {
        path: path.into(),
        data: b"new".to_vec(),
        expect: Expect::Any,
        executable: None,
    };
    apply(&scope, &[write("a"), write("sub/b")]).unwrap();
    assert!(!root.join(JOURNAL_DIR).exists());
    fs::write(root.join(JOURNAL_DIR), "not a directory").unwrap();
    fs::write(root.join("a"), "old").unwrap();
    fs::write(root.join("ro"), "ro").unwrap();
    fs::set_permissions(root.join("ro"), fs::Permissions::from_mode(0o444)).unwrap();
    let err = apply(&scope, &[write("a"), write("c/d"), write("ro")]).unwrap_err();
    assert_eq!(err.code(), "EPERM", "{err}");
    assert_eq!(fs::read(root.join("a")).unwrap(), b"old");
    assert!(!root.join("c").exists());
    assert_eq!(
        fs::read(root.join(JOURNAL_DIR)).unwrap(),
        b"not a directory"
    );
}
