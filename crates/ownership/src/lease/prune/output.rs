//! What in a target directory is build output: the profile directories cargo
//! fills (`debug`, `release`, a custom profile; under a target triple when
//! cross-compiling), each known by its `.fingerprint` directory. Anything
//! else there (the cache tag, tools or notes someone put beside the output)
//! is of unknown purpose and never listed, so never deleted.
//!
//! Within a profile, only what cargo makes is build output: the directories
//! it fills (`.fingerprint`, `build`, `deps`, `examples`, `incremental`),
//! its lock, dep-info files and the artifacts it copies up beside their
//! dep-info. Anything else there is kept and named, as is any git
//! repository found at any depth (a directory holding a `.git`, or a git
//! directory itself): a build script may clone one into its output, and a
//! commit made there may exist nowhere else.

use std::{
    ffi::OsStr,
    fmt, fs, io,
    os::unix::fs::MetadataExt,
    path::{Path, PathBuf},
    time::SystemTime,
};

use natives_core::{Error, Result};

/// The directory whose presence makes a directory one of cargo's profiles.
const FINGERPRINT: &str = ".fingerprint";

/// The directories cargo fills inside a profile: everything in them is
/// build output (but a repository found in one).
const CARGO_DIRS: [&str; 5] = [FINGERPRINT, "build", "deps", "examples", "incremental"];

/// The lock cargo keeps at the top of a profile.
const CARGO_LOCK: &str = ".cargo-lock";

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

/// Something inside a profile that a prune keeps whatever its age.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kept {
    /// The file or directory (a directory is kept with all it holds).
    pub path: PathBuf,
    /// Why it is kept.
    pub why: KeptReason,
}

/// Why a prune keeps something inside a profile.
#[cfg_attr(feature = "napi", napi_derive::napi(string_enum = "kebab-case"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeptReason {
    /// A git repository: a directory holding a `.git`, or a git directory
    /// itself. It may hold commits and work that exist nowhere else.
    Repository,
    /// Not something cargo makes there, so not known to be build output.
    UnknownPurpose,
}

impl KeptReason {
    /// The stable name every front shows (`repository`, `unknown-purpose`).
    pub fn name(self) -> &'static str {
        match self {
            KeptReason::Repository => "repository",
            KeptReason::UnknownPurpose => "unknown-purpose",
        }
    }
}

impl fmt::Display for KeptReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KeptReason::Repository => "a git repository, kept whole",
            KeptReason::UnknownPurpose => "not something cargo makes here",
        })
    }
}

/// Build output under a target directory: its files, the directories below
/// its profiles that held something (the ones a prune may remove once it
/// has emptied them; directories that were already empty are left), and
/// what it keeps, named.
#[derive(Debug, Default)]
pub(super) struct Listing {
    pub files: Vec<OutputFile>,
    pub filled_dirs: Vec<PathBuf>,
    pub kept: Vec<Kept>,
}

impl Listing {
    fn keep(&mut self, path: PathBuf, why: KeptReason) {
        self.kept.push(Kept { path, why });
    }
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

/// Every file of build output under `target`'s profile directories, and
/// what is kept there.
pub(super) fn list(target: &Path) -> Result<Listing> {
    let mut listing = Listing::default();
    for profile in profile_dirs(target)? {
        let triple = profile.parent().filter(|parent| *parent != target);
        match triple {
            Some(triple) if is_repository(triple) => {
                if !listing.kept.iter().any(|kept| kept.path == triple) {
                    listing.keep(triple.to_owned(), KeptReason::Repository);
                }
            }
            _ => list_profile(&profile, &mut listing)?,
        }
    }
    // A profile and its `.fingerprint` mark the directory as cargo's: they
    // stay even when emptied, so the next prune still recognises it.
    listing
        .filled_dirs
        .retain(|dir| !dir.ends_with(FINGERPRINT) || !dir.parent().is_some_and(is_profile));
    listing.kept.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(listing)
}

/// The top of one profile: cargo's directories are walked, its own files
/// listed, anything else kept.
fn list_profile(profile: &Path, listing: &mut Listing) -> Result<()> {
    if is_repository(profile) {
        listing.keep(profile.to_owned(), KeptReason::Repository);
        return Ok(());
    }
    for item in read_dir(profile)? {
        let item = item.map_err(|err| Error::io(profile, err))?;
        let (path, name) = (item.path(), item.file_name());
        let meta = fs::symlink_metadata(&path).map_err(|err| Error::io(&path, err))?;
        if meta.is_dir() && CARGO_DIRS.iter().any(|dir| name == *dir) {
            note_if_filled(&path, listing)?;
            list_below(&path, listing)?;
        } else if meta.is_file() && made_by_cargo_at_top(profile, &name) {
            listing.files.push(output_file(path, &meta));
        } else if meta.is_dir() || meta.is_file() {
            listing.keep(path, KeptReason::UnknownPurpose);
        }
    }
    Ok(())
}

/// Whether cargo made the file `name` at the top of `profile`: its lock, a
/// dep-info file, or an artifact it copied up beside its dep-info
/// (`app` beside `app.d`, `libapp.rlib` beside `libapp.d`).
fn made_by_cargo_at_top(profile: &Path, name: &OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    if name == CARGO_LOCK || name.ends_with(".d") {
        return true;
    }
    let stem = name.split('.').next().unwrap_or(name);
    !stem.is_empty()
        && fs::symlink_metadata(profile.join(format!("{stem}.d"))).is_ok_and(|meta| meta.is_file())
}

/// Every file below `dir` (one of cargo's directories), keeping any
/// repository whole.
fn list_below(dir: &Path, listing: &mut Listing) -> Result<()> {
    for item in read_dir(dir)? {
        let item = item.map_err(|err| Error::io(dir, err))?;
        let path = item.path();
        let meta = fs::symlink_metadata(&path).map_err(|err| Error::io(&path, err))?;
        if meta.is_dir() {
            if is_repository(&path) {
                listing.keep(path, KeptReason::Repository);
                continue;
            }
            note_if_filled(&path, listing)?;
            list_below(&path, listing)?;
        } else if meta.is_file() {
            listing.files.push(output_file(path, &meta));
        }
    }
    Ok(())
}

/// Remember `dir` as one a prune may remove once emptied, if it holds
/// anything now.
fn note_if_filled(dir: &Path, listing: &mut Listing) -> Result<()> {
    let filled = fs::read_dir(dir)
        .map_err(|err| Error::io(dir, err))?
        .next()
        .is_some();
    if filled {
        listing.filled_dirs.push(dir.to_owned());
    }
    Ok(())
}

fn output_file(path: PathBuf, meta: &fs::Metadata) -> OutputFile {
    OutputFile {
        modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        bytes: meta.len(),
        identity: (meta.dev(), meta.ino()),
        path,
    }
}

/// The first git repository at or below `dir` ([`is_repository`]), links
/// not followed: what makes a whole directory not a cache's to delete.
pub(crate) fn repository_within(dir: &Path) -> Result<Option<PathBuf>> {
    if is_repository(dir) {
        return Ok(Some(dir.to_owned()));
    }
    for below in subdirectories(dir)? {
        if let Some(found) = repository_within(&below)? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// Whether `dir` is a git repository: it holds a `.git` (a directory, or a
/// file pointing at one), or it is a git directory itself (`HEAD`,
/// `objects` and `refs`, as a bare repository is laid out).
fn is_repository(dir: &Path) -> bool {
    let exists = |name: &str| fs::symlink_metadata(dir.join(name)).is_ok();
    exists(".git") || (exists("HEAD") && exists("objects") && exists("refs"))
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
