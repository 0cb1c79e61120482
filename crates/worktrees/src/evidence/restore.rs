//! Restoring a validated archive as a new, independent repository: for an
//! operator to inspect, never to resume anything.
//!
//! The destination must not exist; it is created, and removed again if the
//! restore fails. The repository gets the archive's objects, a commit of
//! the base tree and one of the source tree over it (the original commits'
//! parents are not archived, so they are remade, by a fixed identity at a
//! fixed date: restoring twice makes the same commits; the originals stay
//! byte for byte in the archive's `commits/`), the source checked out, and
//! is then proven: `fsck --strict` clean, the index and the files writing
//! the source tree, the diff from the base equal to the archived patch.
//! Restoring the source, its files and directories then get the checkout's
//! permission bits ([`format::MODES`]), not the restorer's umask's.

use std::{
    ffi::OsStr,
    fs, io,
    os::unix::{ffi::OsStrExt, fs::PermissionsExt},
    path::{Path, PathBuf},
};

use natives_core::{CancelToken, Error, ErrorKind, Result};
use serde::Serialize;

use super::{
    archive::Archive,
    format::{self, Tip},
};
use crate::git::{Git, Store};

/// The branch the restored source is checked out on.
pub const SOURCE_BRANCH: &str = "source";
/// The branch at the restored base.
pub const BASE_BRANCH: &str = "base";

/// A restored repository.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Restored {
    /// Where it is.
    pub dir: PathBuf,
    /// The commit of the base tree (branch `base`).
    pub base_commit: String,
    /// The commit of the source tree over it (branch `source`, checked
    /// out).
    pub source_commit: String,
    /// The source tree, as the archive records it.
    pub source_tree: String,
}

impl Archive {
    /// Rebuild the source as a new repository at `dest`, which must not
    /// exist (its parent must): the source's index and files, a base commit
    /// and a source commit over it, `fsck --strict` clean, its diff from
    /// the base equal to the archived patch. It selects no recovery source,
    /// resumes nothing and changes no branch anywhere else.
    pub fn restore(&self, git: &Git, dest: &Path, cancel: &CancelToken) -> Result<Restored> {
        restore(git, self, Which::Source, dest, cancel)
    }

    /// Rebuild the archived commit `commit` (the source, or any other tip:
    /// an earlier entry of the checkout's reflog, `ORIG_HEAD`) as a new
    /// repository at `dest`, as [`Archive::restore`] does: its tree
    /// committed over the base. `ENOENT` when the archive holds no such
    /// tip (a full id is required).
    pub fn restore_tip(
        &self,
        git: &Git,
        commit: &str,
        dest: &Path,
        cancel: &CancelToken,
    ) -> Result<Restored> {
        if commit == self.manifest().head {
            return self.restore(git, dest, cancel);
        }
        let tip = self
            .manifest()
            .tips
            .iter()
            .find(|tip| tip.commit == commit)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::NotFound,
                    format!("{}: archives no commit {commit}", self.dir().display()),
                )
            })?;
        restore(git, self, Which::Tip(tip), dest, cancel)
    }
}

/// Which archived commit a restore rebuilds: the source, or another tip
/// (an earlier entry of the checkout's reflog, `ORIG_HEAD`).
#[derive(Clone, Copy, Debug)]
enum Which<'a> {
    /// The archived source (`HEAD`), proven against the archived patch.
    Source,
    /// The archived tip with this tree.
    Tip(&'a Tip),
}

fn restore(
    git: &Git,
    archive: &Archive,
    which: Which<'_>,
    dest: &Path,
    cancel: &CancelToken,
) -> Result<Restored> {
    match fs::create_dir(dest) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
            return Err(Error::new(
                ErrorKind::AlreadyExists,
                format!(
                    "{}: exists; a restore goes into a new directory only",
                    dest.display()
                ),
            ));
        }
        Err(err) => return Err(Error::io(dest, err)),
    }
    let restored = build(git, archive, which, dest, cancel);
    if restored.is_err() {
        let _ = fs::remove_dir_all(dest);
    }
    restored
}

fn build(
    git: &Git,
    archive: &Archive,
    which: Which<'_>,
    dest: &Path,
    cancel: &CancelToken,
) -> Result<Restored> {
    let manifest = archive.manifest();
    let (commit, tree) = match which {
        Which::Source => (&manifest.head, &manifest.source_tree),
        Which::Tip(tip) => (&tip.commit, &tip.tree),
    };
    let store = git.new_checkout(dest, &manifest.object_format, SOURCE_BRANCH, cancel)?;
    git.import_pack(&store, archive.file(format::PACK), cancel)?;
    let base_message = format!(
        "base {} (restored from source evidence {})",
        manifest.base,
        manifest.name()
    );
    let base = git.commit_tree(&store, &manifest.base_tree, None, &base_message, cancel)?;
    let source_message = format!(
        "source {commit} (restored from source evidence {})",
        manifest.name()
    );
    let source = git.commit_tree(&store, tree, Some(&base), &source_message, cancel)?;
    git.create_ref(&store, &format!("refs/heads/{BASE_BRANCH}"), &base, cancel)?;
    git.create_ref(
        &store,
        &format!("refs/heads/{SOURCE_BRANCH}"),
        &source,
        cancel,
    )?;
    git.check_out_head(&store, cancel)?;
    prove(git, &store, archive, which, tree, (&base, &source), cancel)?;
    if matches!(which, Which::Source) {
        set_modes(dest, archive.file(format::MODES))?;
    }
    Ok(Restored {
        dir: dest.to_owned(),
        base_commit: base,
        source_commit: source,
        source_tree: tree.clone(),
    })
}

/// The restored repository is whole and holds exactly `tree`; restoring
/// the source, its diff from the base is the archived patch.
fn prove(
    git: &Git,
    store: &Store,
    archive: &Archive,
    which: Which<'_>,
    tree: &str,
    (base, source): (&str, &str),
    cancel: &CancelToken,
) -> Result<()> {
    git.fsck(store, cancel)?;
    let failed = |what: String| {
        Error::new(
            ErrorKind::Io,
            format!("restore into {}: {what}", store.git_dir().display()),
        )
    };
    let index = git.index_tree(store, cancel)?;
    if index != *tree {
        return Err(failed(format!("the index writes {index}, not {tree}")));
    }
    let files = git.files_tree(store, cancel)?;
    if files != *tree {
        return Err(failed(format!("the files make tree {files}, not {tree}")));
    }
    if matches!(which, Which::Source)
        && git.binary_patch(store, base, source, cancel)? != archive.patch()
    {
        return Err(failed(
            "the diff from the base is not the archived patch".into(),
        ));
    }
    Ok(())
}

/// Give the restored files and directories the permission bits `modes`
/// records (validated): the files, then the directories deepest first and
/// the top last, so that a directory closed even to its owner is closed
/// only once everything in it is set. A symbolic link is never followed.
fn set_modes(dest: &Path, modes: &[u8]) -> Result<()> {
    let mut entries = format::parse_modes(modes)
        .map_err(|why| Error::new(ErrorKind::Corrupt, format!("{}: {why}", format::MODES)))?;
    let depth = |entry: &format::ModeEntry| match entry.path.as_slice() {
        format::TOP => -1,
        path => path.iter().filter(|&&b| b == b'/').count() as isize,
    };
    entries.sort_by_key(|entry| (entry.dir, std::cmp::Reverse(depth(entry))));
    for entry in entries {
        let path = match entry.path.as_slice() {
            format::TOP => dest.to_owned(),
            rel => dest.join(OsStr::from_bytes(rel)),
        };
        let meta = fs::symlink_metadata(&path).map_err(|err| Error::io(&path, err))?;
        if meta.is_symlink() || meta.is_dir() != entry.dir {
            let why = "restored as another kind of file than the archive records";
            return Err(Error::new(
                ErrorKind::Io,
                format!("{}: {why}", path.display()),
            ));
        }
        fs::set_permissions(&path, fs::Permissions::from_mode(entry.mode))
            .map_err(|err| Error::io(&path, err))?;
    }
    Ok(())
}
