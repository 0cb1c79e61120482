//! What in a target directory is build output: the profile directories cargo
//! fills (`debug`, `release`, a custom profile; under a target triple when
//! cross-compiling), each known by its `.fingerprint` directory. Anything
//! else there (the cache tag, tools or notes someone put beside the output)
//! is of unknown purpose and never listed, so never deleted.

use std::{
    fs, io,
    os::unix::fs::MetadataExt,
    path::{Path, PathBuf},
    time::SystemTime,
};

use natives_core::{Error, Result};

/// The directory whose presence makes a directory one of cargo's profiles.
const FINGERPRINT: &str = ".fingerprint";

/// One file of build output, as it was when listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// When it was last modified.
    pub modified: SystemTime,
    /// Which file it was (device and inode), so that a file replaced since
    /// the listing is not deleted in its place.
    identity: (u64, u64),
}

impl OutputFile {
    /// Whether `path` still names this very file, unchanged.
    pub(super) fn unchanged(&self) -> bool {
        fs::symlink_metadata(&self.path).is_ok_and(|meta| {
            meta.is_file()
                && (meta.dev(), meta.ino()) == self.identity
                && meta.len() == self.bytes
                && meta.modified().ok() == Some(self.modified)
        })
    }
}

/// Build output under a target directory: its files, and the directories
/// below its profiles that held something (the ones a prune may remove once
/// it has emptied them; directories that were already empty are left).
#[derive(Debug, Default)]
pub(super) struct Listing {
    pub files: Vec<OutputFile>,
    pub filled_dirs: Vec<PathBuf>,
}

/// The profile directories of the target directory `target`: `<target>/P`
/// and `<target>/TRIPLE/P` holding a `.fingerprint` directory. Symbolic
/// links are not followed.
pub(super) fn profile_dirs(target: &Path) -> Result<Vec<PathBuf>> {
    let mut profiles = Vec::new();
    for child in subdirectories(target)? {
        if is_profile(&child) {
            profiles.push(child);
        } else {
            profiles.extend(
                subdirectories(&child)?
                    .into_iter()
                    .filter(|p| is_profile(p)),
            );
        }
    }
    profiles.sort();
    Ok(profiles)
}

/// Every file of build output under `target`'s profile directories.
pub(super) fn list(target: &Path) -> Result<Listing> {
    let mut listing = Listing::default();
    for profile in profile_dirs(target)? {
        list_below(&profile, &mut listing)?;
    }
    // A profile and its `.fingerprint` mark the directory as cargo's: they
    // stay even when emptied, so the next prune still recognises it.
    listing
        .filled_dirs
        .retain(|dir| !dir.ends_with(FINGERPRINT) || !dir.parent().is_some_and(is_profile));
    Ok(listing)
}

fn list_below(dir: &Path, listing: &mut Listing) -> Result<()> {
    for item in read_dir(dir)? {
        let item = item.map_err(|err| Error::io(dir, err))?;
        let path = item.path();
        let meta = fs::symlink_metadata(&path).map_err(|err| Error::io(&path, err))?;
        if meta.is_dir() {
            if fs::read_dir(&path)
                .map_err(|err| Error::io(&path, err))?
                .next()
                .is_some()
            {
                listing.filled_dirs.push(path.clone());
            }
            list_below(&path, listing)?;
        } else if meta.is_file() {
            listing.files.push(OutputFile {
                modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                bytes: meta.len(),
                identity: (meta.dev(), meta.ino()),
                path,
            });
        }
    }
    Ok(())
}

fn is_profile(dir: &Path) -> bool {
    fs::symlink_metadata(dir.join(FINGERPRINT)).is_ok_and(|meta| meta.is_dir())
}

/// The real subdirectories of `dir` (not links to directories).
fn subdirectories(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for item in read_dir(dir)? {
        let item = item.map_err(|err| Error::io(dir, err))?;
        if item
            .file_type()
            .map_err(|err| Error::io(dir, err))?
            .is_dir()
        {
            found.push(item.path());
        }
    }
    Ok(found)
}

/// `dir`'s entries; a directory removed meanwhile has none.
fn read_dir(dir: &Path) -> Result<impl Iterator<Item = io::Result<fs::DirEntry>>> {
    match fs::read_dir(dir) {
        Ok(listing) => Ok(Some(listing).into_iter().flatten()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None.into_iter().flatten()),
        Err(err) => Err(Error::io(dir, err)),
    }
}
