//! A validated archive: opened only through every check of `validate.rs`,
//! its files kept as they were checked, so that what restores from it
//! (`restore.rs`) and what shows it reads those very bytes.

use std::{
    collections::BTreeMap,
    fmt,
    path::{Path, PathBuf},
};

use natives_core::{CancelToken, Result, view::number};
use serde::Serialize;

use super::{
    format::{self, Manifest, Tip},
    validate,
};
use crate::git::Git;

/// A validated archive, its files as they were checked.
pub struct Archive {
    dir: PathBuf,
    manifest: Manifest,
    files: BTreeMap<String, Vec<u8>>,
}

impl fmt::Debug for Archive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Archive")
            .field("dir", &self.dir)
            .field("manifest", &self.manifest)
            .finish_non_exhaustive()
    }
}

impl Archive {
    /// Open and validate the archive at `dir`: every check the evidence
    /// [module docs](super) list, in a fresh repository. Errors: unreadable (`ENOENT`, ...), or
    /// failing a check (`EBADMSG`, naming the [`Check`](validate::Check)).
    pub fn open(git: &Git, dir: &Path, cancel: &CancelToken) -> Result<Archive> {
        let files = validate::read(dir)?;
        let name = dir
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let manifest = validate::check(git, &name, dir, &files, cancel)?;
        Ok(Archive {
            dir: dir.to_owned(),
            manifest,
            files,
        })
    }

    /// Where it is.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// What it holds.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The binary patch from the base to the source, as validated.
    pub fn patch(&self) -> &[u8] {
        self.file(format::PATCH)
    }

    /// The archive's file `name` ([`format::PACK`], ...), as validated.
    pub(super) fn file(&self, name: &str) -> &[u8] {
        &self.files[name]
    }

    /// Its size on disk: the sum of its files' sizes.
    pub fn bytes(&self) -> u64 {
        self.files.values().map(|bytes| bytes.len() as u64).sum()
    }

    /// What the fronts show of it.
    pub fn view(&self) -> ArchiveView {
        let manifest = &self.manifest;
        ArchiveView {
            dir: self.dir.to_string_lossy().into_owned(),
            head: manifest.head.clone(),
            base: manifest.base.clone(),
            source_tree: manifest.source_tree.clone(),
            base_tree: manifest.base_tree.clone(),
            tips: manifest.tips.clone(),
            objects: number(manifest.objects),
            object_bytes: number(manifest.object_bytes),
            bytes: number(self.bytes()),
            patch_bytes: number(self.patch().len() as u64),
        }
    }
}

/// An archive as the fronts show it.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveView {
    /// Its directory.
    pub dir: String,
    /// The source commit (the checkout's `HEAD`).
    pub head: String,
    /// The base commit.
    pub base: String,
    /// The source tree.
    pub source_tree: String,
    /// The base tree.
    pub base_tree: String,
    /// Every archived commit.
    pub tips: Vec<Tip>,
    /// Objects in its pack.
    pub objects: i64,
    /// Their expanded size in bytes.
    pub object_bytes: i64,
    /// Its size on disk in bytes.
    pub bytes: i64,
    /// The binary patch's size in bytes.
    pub patch_bytes: i64,
}
