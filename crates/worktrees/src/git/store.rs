//! Git on object stores: reading a worktree's trees, blobs and commits out
//! whole, and working in repositories natives makes for itself.
//!
//! Checkout evidence needs two kinds of command. On the worktree's own
//! repository: which objects make up a tree, their sizes, a commit's raw
//! bytes, and a non-thin pack of exactly the listed objects (no history
//! walked, nothing left for a thin pack's receiver to supply). On a
//! [`Store`] natives made itself (a private bare repository, or a restored
//! checkout): importing that pack strictly, materialising trees, listing,
//! diffing, applying a patch, hashing a commit, committing, checking
//! everything. Commands on a store are isolated ([`Call::isolated`]): only
//! the store's own configuration counts, so the bytes they produce and the
//! answers they give are the same in any caller's environment.

use std::{
    collections::HashSet,
    ffi::OsString,
    fs,
    path::{Path, PathBuf},
};

use natives_core::{CancelToken, Error, ErrorKind, Result};
use tempfile::TempDir;

use super::driver::{Call, Dirs, Git, in_worktree};

/// The window of the delta search when packing: git's default (10) packed
/// a 25 MB tree about 9 % smaller but took 3.2 times as long.
pub const PACK_WINDOW: &str = "--window=4";

/// Packing configuration pinned so the same objects make the same pack
/// bytes wherever and whenever they are packed (a retried capture is
/// compared byte for byte with the archive it would replace): the
/// repository's or the user's compression level, window memory or
/// big-file threshold would change the deltas or their encoding.
const PACK_CONFIG: [&str; 5] = [
    "core.compression=-1",
    "pack.compression=-1",
    "pack.windowMemory=0",
    "core.bigFileThreshold=512m",
    "pack.deltaCacheSize=256m",
];

/// Who commits in a restored checkout, and when: fixed, so restoring the
/// same archive twice makes the same commits.
const RESTORE_IDENTITY: [&str; 2] = ["user.name=natives", "user.email=natives@localhost"];
const RESTORE_DATE: &str = "946684800 +0000";

/// A repository natives made for itself, whose commands are isolated from
/// the user's configuration. A private store lives (with its stand-in
/// home) in a temporary directory removed when it is dropped.
pub(crate) struct Store {
    scratch: TempDir,
    git_dir: PathBuf,
    work_tree: Option<PathBuf>,
}

/// One object of a store or of a worktree's repository.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StoreObject {
    /// Its id.
    pub id: String,
    /// `blob`, `tree`, `commit` or `tag`.
    pub kind: String,
    /// Its size once expanded, in bytes.
    pub size: u64,
}

/// One entry of a recursive tree listing (`ls-tree -r -t -z`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TreeEntry {
    /// `blob`, `tree` or `commit` (a submodule's gitlink).
    pub kind: String,
    /// The object's id.
    pub id: String,
    /// Its path in the tree, as git stores it.
    pub path: Vec<u8>,
}

/// What a tree tracks: its directories' paths and its other entries'
/// (files, links, submodules), as git stores them. What a walk of a
/// worktree judges every entry on disk by.
pub(crate) struct Tracked {
    /// The paths of its trees.
    pub dirs: HashSet<Vec<u8>>,
    /// The paths of everything else in it.
    pub files: HashSet<Vec<u8>>,
}

impl Store {
    /// The store's git directory.
    pub(crate) fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// A command on the store, isolated.
    fn call<'a>(&'a self, args: &[&str]) -> Call<'a> {
        let mut git_dir = OsString::from("--git-dir=");
        git_dir.push(&self.git_dir);
        let dir = self.work_tree.as_deref().unwrap_or(&self.git_dir);
        let mut call = Call::new(dir, &[]).arg(git_dir);
        if let Some(work_tree) = &self.work_tree {
            let mut arg = OsString::from("--work-tree=");
            arg.push(work_tree);
            call = call.arg(arg);
        }
        call.args(args).isolated(self.home())
    }

    fn home(&self) -> &Path {
        self.scratch.path()
    }

    /// A path for a private index, in the store's scratch directory.
    fn scratch_index(&self, name: &str) -> PathBuf {
        self.scratch.path().join(name)
    }
}

/// Repositories natives makes for itself, and the commands on them.
impl Git {
    /// A new, empty bare repository of `object_format` (`sha1`, `sha256`) in
    /// a private temporary directory: no template, no alternates, no
    /// configuration but its own.
    pub(crate) fn private_store(&self, object_format: &str, cancel: &CancelToken) -> Result<Store> {
        let scratch = scratch("natives-store-")?;
        let git_dir = scratch.path().join("store.git");
        let store = Store {
            git_dir,
            work_tree: None,
            scratch,
        };
        let format = format!("--object-format={object_format}");
        let init = Call::new(
            store.home(),
            &["init", "-q", "--bare", "--template=", &format],
        )
        .arg(&store.git_dir)
        .isolated(store.home());
        self.ok_call(&init, cancel)?;
        Ok(store)
    }

    /// A new repository with its work tree at `dir` (which exists and is
    /// empty), `HEAD` on the unborn `branch`.
    pub(crate) fn new_checkout(
        &self,
        dir: &Path,
        object_format: &str,
        branch: &str,
        cancel: &CancelToken,
    ) -> Result<Store> {
        let store = Store {
            scratch: scratch("natives-home-")?,
            git_dir: dir.join(".git"),
            work_tree: Some(dir.to_owned()),
        };
        let format = format!("--object-format={object_format}");
        let initial = format!("--initial-branch={branch}");
        let init = Call::new(dir, &["init", "-q", "--template=", &format, &initial])
            .arg(dir)
            .isolated(store.home());
        self.ok_call(&init, cancel)?;
        Ok(store)
    }

    /// Import `pack` into `store` with `index-pack --strict`: every object
    /// is checked, and every object a tree names must be in the pack.
    pub(crate) fn import_pack(
        &self,
        store: &Store,
        pack: &[u8],
        cancel: &CancelToken,
    ) -> Result<()> {
        let call = store
            .call(&["index-pack", "--strict", "--stdin"])
            .input(pack.to_vec());
        self.ok_call(&call, cancel).map(drop)
    }

    /// Every object in `store`, with its type and expanded size.
    pub(crate) fn stored_objects(
        &self,
        store: &Store,
        cancel: &CancelToken,
    ) -> Result<Vec<StoreObject>> {
        let call = store.call(&[
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(objectname) %(objecttype) %(objectsize)",
        ]);
        parse_batch_check(&self.ok_call(&call, cancel)?)
    }

    /// The type of object `id` in `store`, or `None` when it is missing.
    pub(crate) fn object_type(
        &self,
        store: &Store,
        id: &str,
        cancel: &CancelToken,
    ) -> Result<Option<String>> {
        let call = store
            .call(&[
                "cat-file",
                "--batch-check=%(objectname) %(objecttype) %(objectsize)",
            ])
            .input(format!("{id}\n").into_bytes());
        let out = self.ok_call(&call, cancel)?;
        if out.ends_with(b" missing\n") {
            return Ok(None);
        }
        Ok(parse_batch_check(&out)?.pop().map(|object| object.kind))
    }

    /// The id `tree` gets when read into a private index and written back
    /// (`read-tree`, `write-tree`): equal to `tree` only when every object
    /// it names is present and it hashes as recorded.
    pub(crate) fn tree_through_index(
        &self,
        store: &Store,
        tree: &str,
        cancel: &CancelToken,
    ) -> Result<String> {
        let index = store.scratch_index("tree.index");
        let _ = fs::remove_file(&index);
        let private = |args: &[&str]| store.call(args).private_index(&index);
        self.ok_call(&private(&["read-tree", "--end-of-options", tree]), cancel)?;
        let written = self.ok_call(&private(&["write-tree"]), cancel)?;
        Ok(trimmed(&written))
    }

    /// `tree`'s raw index: every path with its mode, type and object
    /// (`ls-tree -r -z --full-tree`), NUL-delimited bytes.
    pub(crate) fn list_tree(
        &self,
        store: &Store,
        tree: &str,
        cancel: &CancelToken,
    ) -> Result<Vec<u8>> {
        let args = [
            "ls-tree",
            "-r",
            "-z",
            "--full-tree",
            "--end-of-options",
            tree,
        ];
        self.ok_call(&store.call(&args), cancel)
    }

    /// How tree `to` differs from tree `from`, path by path (`diff-tree
    /// --raw -z`, full ids, no renames).
    pub(crate) fn raw_diff(
        &self,
        store: &Store,
        from: &str,
        to: &str,
        cancel: &CancelToken,
    ) -> Result<Vec<u8>> {
        let args = [
            "diff-tree",
            "-r",
            "-z",
            "--raw",
            "--no-abbrev",
            "--no-renames",
            from,
            to,
        ];
        self.ok_call(&store.call(&args), cancel)
    }

    /// The binary patch from tree `from` to tree `to`: `diff --binary
    /// --full-index --no-renames`, paths quoted, no external diff, no text
    /// conversion, no colour.
    pub(crate) fn binary_patch(
        &self,
        store: &Store,
        from: &str,
        to: &str,
        cancel: &CancelToken,
    ) -> Result<Vec<u8>> {
        let args = [
            "-c",
            "core.quotePath=true",
            "diff",
            "--binary",
            "--full-index",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
            from,
            to,
        ];
        self.ok_call(&store.call(&args), cancel)
    }

    /// The tree `patch` makes when applied to `base` in a private index
    /// (`read-tree`, `apply --cached`, `write-tree`). An empty patch (a
    /// source equal to its base) makes the base's tree: `git apply` would
    /// refuse it as "no valid patches".
    pub(crate) fn apply_patch(
        &self,
        store: &Store,
        base: &str,
        patch: &[u8],
        cancel: &CancelToken,
    ) -> Result<String> {
        let index = store.scratch_index("apply.index");
        let _ = fs::remove_file(&index);
        let private = |args: &[&str]| store.call(args).private_index(&index);
        self.ok_call(&private(&["read-tree", "--end-of-options", base]), cancel)?;
        if !patch.is_empty() {
            let apply = private(&["apply", "--cached", "--binary", "-"]).input(patch.to_vec());
            self.ok_call(&apply, cancel)?;
        }
        Ok(trimmed(&self.ok_call(&private(&["write-tree"]), cancel)?))
    }

    /// The id of `bytes` as a commit object, checked as git checks a
    /// commit it is given (`hash-object -t commit`), not written.
    pub(crate) fn hash_commit(
        &self,
        store: &Store,
        bytes: &[u8],
        cancel: &CancelToken,
    ) -> Result<String> {
        let call = store
            .call(&["hash-object", "-t", "commit", "--stdin"])
            .input(bytes.to_vec());
        Ok(trimmed(&self.ok_call(&call, cancel)?))
    }

    /// A new commit of `tree` (with `parent`) in `store`, by a fixed
    /// identity at a fixed date.
    pub(crate) fn commit_tree(
        &self,
        store: &Store,
        tree: &str,
        parent: Option<&str>,
        message: &str,
        cancel: &CancelToken,
    ) -> Result<String> {
        let mut args = Vec::new();
        for setting in RESTORE_IDENTITY {
            args.extend(["-c", setting]);
        }
        args.extend(["commit-tree", "-m", message]);
        if let Some(parent) = parent {
            args.extend(["-p", parent]);
        }
        args.push(tree);
        let call = store
            .call(&args)
            .env("GIT_AUTHOR_DATE", RESTORE_DATE)
            .env("GIT_COMMITTER_DATE", RESTORE_DATE);
        Ok(trimmed(&self.ok_call(&call, cancel)?))
    }

    /// Point `reference` at `id` in `store`, only if it does not exist yet.
    pub(crate) fn create_ref(
        &self,
        store: &Store,
        reference: &str,
        id: &str,
        cancel: &CancelToken,
    ) -> Result<()> {
        let zero = "0".repeat(id.len());
        let args = ["update-ref", "-m", "natives: restore", reference, id, &zero];
        self.ok_call(&store.call(&args), cancel).map(drop)
    }

    /// Fill a checkout store's index and files from `HEAD`.
    pub(crate) fn check_out_head(&self, store: &Store, cancel: &CancelToken) -> Result<()> {
        self.ok_call(&store.call(&["reset", "-q", "--hard", "HEAD"]), cancel)
            .map(drop)
    }

    /// The tree a checkout store's real index writes.
    pub(crate) fn index_tree(&self, store: &Store, cancel: &CancelToken) -> Result<String> {
        Ok(trimmed(
            &self.ok_call(&store.call(&["write-tree"]), cancel)?,
        ))
    }

    /// The tree a checkout store's files make (the content proof's fresh
    /// index, isolated).
    pub(crate) fn files_tree(&self, store: &Store, cancel: &CancelToken) -> Result<String> {
        let index = store.scratch_index("files.index");
        let _ = fs::remove_file(&index);
        let private = |args: &[&str]| store.call(args).private_index(&index).proof();
        self.ok_call(&private(&["read-tree", "HEAD"]), cancel)?;
        self.ok_call(&private(&["add", "-A"]), cancel)?;
        Ok(trimmed(&self.ok_call(&private(&["write-tree"]), cancel)?))
    }

    /// `fsck --strict` of everything in `store`, reachable or not.
    pub(crate) fn fsck(&self, store: &Store, cancel: &CancelToken) -> Result<()> {
        let args = [
            "fsck",
            "--strict",
            "--full",
            "--no-dangling",
            "--no-progress",
        ];
        self.ok_call(&store.call(&args), cancel).map(drop)
    }
}

/// Reading a worktree's repository out: its objects whole, never its
/// history.
impl Git {
    /// The repository's object format (`sha1`, `sha256`).
    pub(crate) fn object_format(&self, dirs: &Dirs, cancel: &CancelToken) -> Result<String> {
        let args = ["rev-parse", "--show-object-format"];
        Ok(trimmed(&self.ok_call(&in_worktree(dirs, &args), cancel)?))
    }

    /// Every object under `tree`, trees included, recursively (`ls-tree
    /// -r -t -z --full-tree`).
    pub(crate) fn tree_entries(
        &self,
        dirs: &Dirs,
        tree: &str,
        cancel: &CancelToken,
    ) -> Result<Vec<TreeEntry>> {
        let args = [
            "ls-tree",
            "-r",
            "-t",
            "-z",
            "--full-tree",
            "--end-of-options",
            tree,
        ];
        parse_tree_listing(&self.ok_call(&in_worktree(dirs, &args), cancel)?)
    }

    /// What `tree` tracks ([`Git::tree_entries`], sorted into directories
    /// and the rest).
    pub(crate) fn tracked(&self, dirs: &Dirs, tree: &str, cancel: &CancelToken) -> Result<Tracked> {
        let mut tracked = Tracked {
            dirs: HashSet::new(),
            files: HashSet::new(),
        };
        for entry in self.tree_entries(dirs, tree, cancel)? {
            match entry.kind.as_str() {
                "tree" => tracked.dirs.insert(entry.path),
                _ => tracked.files.insert(entry.path),
            };
        }
        Ok(tracked)
    }

    /// The type and expanded size of each of `ids` (`cat-file
    /// --batch-check`); a missing object is an error naming it.
    pub(crate) fn object_sizes(
        &self,
        dirs: &Dirs,
        ids: &[&str],
        cancel: &CancelToken,
    ) -> Result<Vec<StoreObject>> {
        let input: Vec<u8> = ids
            .iter()
            .flat_map(|id| [id.as_bytes(), b"\n"].concat())
            .collect();
        let args = [
            "cat-file",
            "--batch-check=%(objectname) %(objecttype) %(objectsize)",
        ];
        let out = self.ok_call(&in_worktree(dirs, &args).input(input), cancel)?;
        parse_batch_check(&out)
    }

    /// The raw bytes of commit `id` (`cat-file commit`): author, dates,
    /// message and all, exactly as stored.
    pub(crate) fn raw_commit(
        &self,
        dirs: &Dirs,
        id: &str,
        cancel: &CancelToken,
    ) -> Result<Vec<u8>> {
        self.ok_call(&in_worktree(dirs, &["cat-file", "commit", id]), cancel)
    }

    /// A pack of exactly `objects` (id, path hint), complete: not thin, no
    /// object reached through history, no delta or object reused from the
    /// repository's packs, one thread, pinned configuration: the same
    /// objects always make the same bytes.
    pub(crate) fn pack_objects(
        &self,
        dirs: &Dirs,
        objects: &[(&str, &[u8])],
        cancel: &CancelToken,
    ) -> Result<Vec<u8>> {
        let mut input = Vec::new();
        for (id, path) in objects {
            input.extend_from_slice(id.as_bytes());
            input.push(b' ');
            // The path is only a hint for delta search; a newline would end
            // the line early.
            input.extend(path.iter().map(|&b| if b == b'\n' { b' ' } else { b }));
            input.push(b'\n');
        }
        let mut args = Vec::new();
        for setting in PACK_CONFIG {
            args.extend(["-c", setting]);
        }
        args.extend([
            "pack-objects",
            "--stdout",
            "-q",
            "--no-reuse-delta",
            "--no-reuse-object",
            "--threads=1",
            PACK_WINDOW,
            "--depth=50",
        ]);
        self.ok_call(&in_worktree(dirs, &args).input(input), cancel)
    }
}

fn scratch(prefix: &str) -> Result<TempDir> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(|err| Error::io(&std::env::temp_dir(), err))
}

fn trimmed(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim().to_owned()
}

fn malformed(what: &str) -> Error {
    Error::new(ErrorKind::Io, format!("`{what}` output is malformed"))
}

/// Parse `cat-file --batch-check` lines of `id type size`.
pub(crate) fn parse_batch_check(bytes: &[u8]) -> Result<Vec<StoreObject>> {
    let text = std::str::from_utf8(bytes).map_err(|_| malformed("cat-file --batch-check"))?;
    let mut objects = Vec::new();
    for line in text.lines() {
        let mut fields = line.split(' ');
        let (Some(id), Some(kind), Some(size), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            if line.ends_with(" missing") {
                return Err(Error::new(
                    ErrorKind::NotFound,
                    format!("object {} is missing", line.trim_end_matches(" missing")),
                ));
            }
            return Err(malformed("cat-file --batch-check"));
        };
        let size = size
            .parse()
            .map_err(|_| malformed("cat-file --batch-check"))?;
        objects.push(StoreObject {
            id: id.to_owned(),
            kind: kind.to_owned(),
            size,
        });
    }
    Ok(objects)
}

/// Parse `ls-tree -z` records: `mode type id` TAB `path` NUL.
pub(crate) fn parse_tree_listing(bytes: &[u8]) -> Result<Vec<TreeEntry>> {
    let mut entries = Vec::new();
    for record in bytes.split(|&b| b == 0).filter(|r| !r.is_empty()) {
        let tab = record
            .iter()
            .position(|&b| b == b'\t')
            .ok_or_else(|| malformed("ls-tree -z"))?;
        let meta = std::str::from_utf8(&record[..tab]).map_err(|_| malformed("ls-tree -z"))?;
        let mut fields = meta.split(' ');
        let (Some(_mode), Some(kind), Some(id), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(malformed("ls-tree -z"));
        };
        entries.push(TreeEntry {
            kind: kind.to_owned(),
            id: id.to_owned(),
            path: record[tab + 1..].to_vec(),
        });
    }
    Ok(entries)
}
