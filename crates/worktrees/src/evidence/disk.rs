//! What a checkout holds on disk that git does not see.
//!
//! Git keeps a file's executable bit and nothing else of its permissions:
//! a `0600` file or a `0700` directory would come back as whatever the
//! restorer's umask makes. So the permission bits of every file and
//! directory `HEAD` tracks are archived ([`format::MODES`]) and restored.
//!
//! Git lists untracked files, but never a FIFO, a socket or a device, nor
//! a directory that holds no file: an archive of `HEAD` would not rebuild
//! them, and `git worktree remove` deletes them all the same. So the
//! checkout is walked, every directory `HEAD` tracks, and a capture refuses
//! one holding such an entry that no ignore rule claims. What the ignore
//! rules claim is left to the content proof, as every ignored file is.

use std::{
    collections::HashSet,
    ffi::OsStr,
    fs,
    os::unix::{ffi::OsStrExt, fs::MetadataExt},
};

use natives_core::{CancelToken, Error, Result};

use super::format::{self, ModeEntry};
use crate::git::{Dirs, Git, Tracked};

/// What the walk found.
pub(super) struct Disk {
    /// The permission bits of the top, of every directory `HEAD` tracks and
    /// of every regular file it tracks.
    pub modes: Vec<ModeEntry>,
    /// Directories `HEAD` does not track, and FIFOs, sockets and devices,
    /// that no ignore rule claims (relative paths, directories ending with
    /// `/`).
    pub unseen: Vec<String>,
}

/// Walk the checkout `dirs` names, whose `HEAD` has tree `head_tree`.
pub(super) fn look(git: &Git, dirs: &Dirs, head_tree: &str, cancel: &CancelToken) -> Result<Disk> {
    let tracked = git.tracked(dirs, head_tree, cancel)?;
    let top = fs::symlink_metadata(&dirs.top).map_err(|err| Error::io(&dirs.top, err))?;
    let mut walk = Walk {
        modes: vec![mode_entry(format::TOP, &top)],
        candidates: Vec::new(),
        pending: vec![Vec::new()],
    };
    while let Some(rel) = walk.pending.pop() {
        cancel.check()?;
        let dir = dirs.top.join(OsStr::from_bytes(&rel));
        for entry in fs::read_dir(&dir).map_err(|err| Error::io(&dir, err))? {
            let name = entry.map_err(|err| Error::io(&dir, err))?.file_name();
            if rel.is_empty() && name == ".git" {
                continue;
            }
            let path = match rel.is_empty() {
                true => name.as_bytes().to_vec(),
                false => [rel.as_slice(), b"/", name.as_bytes()].concat(),
            };
            let full = dirs.top.join(OsStr::from_bytes(&path));
            let meta = fs::symlink_metadata(&full).map_err(|err| Error::io(&full, err))?;
            walk.visit(&tracked, path, &meta);
        }
    }
    Ok(Disk {
        modes: walk.modes,
        unseen: unclaimed(git, dirs, walk.candidates, cancel)?,
    })
}

/// A walk under way.
struct Walk {
    modes: Vec<ModeEntry>,
    /// Untracked directories and special files (path, whether a directory).
    candidates: Vec<(Vec<u8>, bool)>,
    /// Tracked directories still to read.
    pending: Vec<Vec<u8>>,
}

impl Walk {
    fn visit(&mut self, tracked: &Tracked, path: Vec<u8>, meta: &fs::Metadata) {
        let kind = meta.file_type();
        if tracked.dirs.contains(&path) && kind.is_dir() {
            self.modes.push(mode_entry(&path, meta));
            self.pending.push(path);
        } else if tracked.files.contains(&path) && kind.is_file() {
            self.modes.push(mode_entry(&path, meta));
        } else if tracked.files.contains(&path) || tracked.dirs.contains(&path) {
            // A tracked path of another type, or a symbolic link (which has
            // no permissions of its own): the content proof judges it.
        } else if kind.is_dir() || !(kind.is_file() || kind.is_symlink()) {
            self.candidates.push((path, kind.is_dir()));
        }
    }
}

fn mode_entry(path: &[u8], meta: &fs::Metadata) -> ModeEntry {
    ModeEntry {
        path: path.to_vec(),
        dir: meta.is_dir(),
        mode: meta.mode() & 0o7777,
    }
}

/// The `candidates` (path, whether a directory) no ignore rule claims, as
/// [`Disk::unseen`] shows them, sorted.
fn unclaimed(
    git: &Git,
    dirs: &Dirs,
    candidates: Vec<(Vec<u8>, bool)>,
    cancel: &CancelToken,
) -> Result<Vec<String>> {
    let paths: Vec<Vec<u8>> = candidates.iter().map(|(path, _)| path.clone()).collect();
    let ignored: HashSet<Vec<u8>> = git.ignored(dirs, &paths, cancel)?.into_iter().collect();
    let mut unseen: Vec<String> = candidates
        .into_iter()
        .filter(|(path, _)| !ignored.contains(path))
        .map(|(path, dir)| {
            let shown = String::from_utf8_lossy(&path).into_owned();
            if dir { shown + "/" } else { shown }
        })
        .collect();
    unseen.sort();
    Ok(unseen)
}
