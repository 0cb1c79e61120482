//! The git driver: the only place this crate runs git.
//!
//! natives drives the `git` program rather than a library, because only git
//! itself removes and adds worktrees with the semantics an operator sees by
//! hand. Two rules keep its answers trustworthy whatever the caller's
//! environment and configuration say:
//!
//! - **Machine formats only.** Worktrees come from `worktree list
//!   --porcelain -z`, trees from `ls-tree -r -z`, differences from `diff-tree
//!   --raw -z` and `diff-index --raw -z`, attributes from `check-attr -z`,
//!   everything else from exit codes. Human text changes with the version
//!   and the locale; it is only ever quoted in error messages.
//! - **A pinned environment.** Every `GIT_*` variable of the caller is
//!   dropped (`GIT_DIR`, `GIT_WORK_TREE`, `GIT_INDEX_FILE`,
//!   `GIT_OBJECT_DIRECTORY` and `GIT_ALTERNATE_OBJECT_DIRECTORIES` would point
//!   git at another repository, index or object store; `GIT_CONFIG_*` would
//!   inject configuration). `GIT_INDEX_FILE` is set only for a private
//!   index. `LC_ALL=C`, `GIT_TERMINAL_PROMPT=0`, `GIT_EDITOR=true`,
//!   `GIT_OPTIONAL_LOCKS=0` (inspecting someone's worktree never takes its
//!   index lock) and a null stdin mean git never waits for a human. The
//!   configuration that changes a safety answer is overridden on the command
//!   line ([`PINNED_CONFIG`]), whatever `~/.gitconfig` or the repository say;
//!   the content proof pins more ([`PROOF_CONFIG`]).
//!
//! Every call runs through [`natives_system::command`]: in a process
//! group of its own, under the caller's [`CancelToken`] and the driver's
//! timeout (whichever stops first), killed with its group when either
//! stops or the call is left early, and killed when the thread that started
//! it dies (so a git never goes on changing a worktree for a caller that is
//! gone). A command that changes a worktree can hold the caller's lock
//! (`Call::holding`): whoever takes the lock next knows that git has
//! exited. The git version is checked once per program per process: older
//! than [`MIN_VERSION`] is refused.

use std::{
    collections::HashSet,
    ffi::{OsStr, OsString},
    fs, io,
    os::{fd::BorrowedFd, unix::ffi::OsStrExt},
    path::{Path, PathBuf},
};

use natives_core::{CancelToken, Error, ErrorKind, Result};
use natives_system::durable;

use self::driver::in_worktree;

mod driver;
mod store;

pub(crate) use driver::Call;
pub use driver::{DEFAULT_TIMEOUT, Dirs, Git, MIN_VERSION, PINNED_CONFIG, PROOF_CONFIG, Version};
pub(crate) use store::{Store, Tracked};

/// The questions and the few changes the crate puts to git, each one
/// command (or a fixed short sequence) in a machine format.
impl Git {
    /// Every worktree of the repository `repo` is in (`worktree list`), the
    /// main one first.
    pub fn worktrees(&self, repo: &Path, cancel: &CancelToken) -> Result<Vec<Worktree>> {
        let out = self.ok(repo, &["worktree", "list", "--porcelain", "-z"], cancel)?;
        parse_worktree_list(&out)
    }

    /// The git directories of the worktree whose top is `path`, or `None`
    /// when `path` is not the top of a worktree (a missing directory, a
    /// missing or broken `.git` file: git would otherwise find an enclosing
    /// repository and answer for it).
    pub fn dirs(&self, path: &Path, cancel: &CancelToken) -> Result<Option<Dirs>> {
        if !path.is_dir() {
            return Ok(None);
        }
        let call = Call::new(
            path,
            &[
                "rev-parse",
                "--path-format=absolute",
                "--git-dir",
                "--git-common-dir",
                "--show-toplevel",
            ],
        );
        let out = self.output(&call, cancel)?;
        if !out.status.success() {
            return Ok(None);
        }
        let lines: Vec<PathBuf> = out
            .stdout
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
            .map(|line| PathBuf::from(OsStr::from_bytes(line)))
            .collect();
        let [git_dir, common_dir, top] = <[PathBuf; 3]>::try_from(lines).map_err(|_| {
            Error::new(ErrorKind::Io, "`git rev-parse` printed an unexpected shape")
        })?;
        let same = |a: &Path, b: &Path| matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b);
        Ok(same(&top, path).then_some(Dirs {
            git_dir,
            common_dir,
            top,
        }))
    }

    /// The object `rev` names in the repository at `dir` (`rev-parse
    /// --verify`), or `None` when it names nothing.
    pub fn resolve(&self, dir: &Path, rev: &str, cancel: &CancelToken) -> Result<Option<String>> {
        let call = Call::new(
            dir,
            &["rev-parse", "--verify", "--quiet", "--end-of-options", rev],
        );
        let out = self.output(&call, cancel)?;
        match out.status.code() {
            Some(0) => Ok(Some(String::from_utf8_lossy(&out.stdout).trim().to_owned())),
            Some(1) => Ok(None),
            _ => Err(self.failed(&call, &out)),
        }
    }

    /// The tree the worktree's files would make, hidden bits ignored: a
    /// private index read from `HEAD`, every tracked file looked at again
    /// (`add -u` with [`PROOF_CONFIG`]), written as a tree. Equal to
    /// `HEAD^{tree}` exactly when every tracked file's bytes and mode on
    /// disk are `HEAD`'s, whatever `assume-unchanged` or `skip-worktree`
    /// say in the real index.
    pub(crate) fn fresh_tree(&self, dirs: &Dirs, cancel: &CancelToken) -> Result<String> {
        let scratch = scratch_dir()?;
        let index = scratch.path().join("index");
        let private = |args: &[&str]| in_worktree(dirs, args).private_index(&index).proof();
        self.ok_call(&private(&["read-tree", "HEAD"]), cancel)?;
        self.ok_call(&private(&["add", "-u"]), cancel)?;
        let tree = self.ok_call(&private(&["write-tree"]), cancel)?;
        Ok(String::from_utf8_lossy(&tree).trim().to_owned())
    }

    /// How tree `to` differs from tree `from`, path by path.
    pub(crate) fn diff_trees(
        &self,
        dirs: &Dirs,
        from: &str,
        to: &str,
        cancel: &CancelToken,
    ) -> Result<Vec<RawChange>> {
        let args = ["diff-tree", "-r", "-z", "--raw", "--no-renames", from, to];
        parse_raw(&self.ok_call(&in_worktree(dirs, &args), cancel)?)
    }

    /// What the worktree's real index holds that `HEAD` does not (staged
    /// changes, unmerged paths), read without refreshing or writing it.
    pub(crate) fn staged(&self, dirs: &Dirs, cancel: &CancelToken) -> Result<Vec<RawChange>> {
        let args = [
            "diff-index",
            "--cached",
            "-z",
            "--raw",
            "--no-renames",
            "HEAD",
        ];
        parse_raw(&self.ok_call(&in_worktree(dirs, &args), cancel)?)
    }

    /// Which of `commits` nothing that outlives one linked worktree names,
    /// asked in the repository's main worktree `main`: no ref of the
    /// repository, no reflog entry of one, not the main worktree's `HEAD`
    /// or its reflog, not one of `other_heads` (the other worktrees'
    /// `HEAD`s) reaches them (`rev-list --single-worktree ... --not --all
    /// --reflog`). A commit no longer in the repository is not listed.
    pub(crate) fn named_by_nothing_else(
        &self,
        main: &Path,
        commits: &[&str],
        other_heads: &[String],
        cancel: &CancelToken,
    ) -> Result<HashSet<String>> {
        if commits.is_empty() {
            return Ok(HashSet::new());
        }
        // `--stdin` before `--not`: what it reads stays positive.
        let args = [
            "rev-list",
            "--single-worktree",
            "--ignore-missing",
            "--stdin",
            "--not",
            "--all",
            "--reflog",
        ];
        let mut call = Call::new(main, &args);
        for head in other_heads {
            call = call.arg(head);
        }
        let input = commits
            .iter()
            .flat_map(|id| [id.as_bytes(), b"\n"].concat())
            .collect();
        let out = self.ok_call(&call.input(input), cancel)?;
        let out = String::from_utf8_lossy(&out);
        let unreached: HashSet<&str> = out.lines().collect();
        Ok(commits
            .iter()
            .filter(|id| unreached.contains(*id))
            .map(|id| id.to_string())
            .collect())
    }

    /// Which of `paths` (untracked, relative to the top) the worktree's
    /// ignore rules ignore (`check-ignore`, every source of rules: an
    /// eviction asks whether anyone at all called them disposable).
    pub(crate) fn ignored(
        &self,
        dirs: &Dirs,
        paths: &[Vec<u8>],
        cancel: &CancelToken,
    ) -> Result<Vec<Vec<u8>>> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let input = paths
            .iter()
            .flat_map(|p| p.iter().copied().chain([0]))
            .collect();
        let call = in_worktree(dirs, &["check-ignore", "-z", "--stdin", "--no-index"]).input(input);
        let out = self.output(&call, cancel)?;
        match out.status.code() {
            Some(0) | Some(1) => Ok(out
                .stdout
                .split(|&b| b == 0)
                .filter(|p| !p.is_empty())
                .map(<[u8]>::to_vec)
                .collect()),
            _ => Err(self.failed(&call, &out)),
        }
    }

    /// Index entries whose flags hide changes from git (`assume-unchanged`,
    /// `skip-worktree`), as `ls-files -v` tags them.
    pub(crate) fn hidden_in_index(&self, dirs: &Dirs, cancel: &CancelToken) -> Result<Vec<String>> {
        let out = self.ok_call(&in_worktree(dirs, &["ls-files", "-v", "-z"]), cancel)?;
        Ok(nul_fields(&out)
            .into_iter()
            .filter_map(|field| {
                let (tag, path) = field.split_once(' ')?;
                let hidden = tag == "S" || tag.chars().all(|c| c.is_ascii_lowercase());
                hidden.then(|| path.to_owned())
            })
            .collect())
    }

    /// What makes equal trees not mean equal bytes, or leaves bytes outside
    /// the tree: submodules, and files whose attributes (read from `HEAD`
    /// and the repository's and user's attribute files) transform content.
    pub(crate) fn unsupported(&self, dirs: &Dirs, cancel: &CancelToken) -> Result<Vec<String>> {
        let tree = self.ok_call(
            &in_worktree(dirs, &["ls-tree", "-r", "-z", "--full-tree", "HEAD"]),
            cancel,
        )?;
        let mut found = Vec::new();
        let mut paths = Vec::new();
        for entry in tree.split(|&b| b == 0).filter(|e| !e.is_empty()) {
            let (meta, path) = entry
                .iter()
                .position(|&b| b == b'\t')
                .map(|tab| (&entry[..tab], &entry[tab + 1..]))
                .ok_or_else(|| Error::new(ErrorKind::Io, "`ls-tree -z` output is malformed"))?;
            if meta.starts_with(b"160000 ") {
                found.push(format!("submodule {}", String::from_utf8_lossy(path)));
            } else if path == b".gitmodules" {
                found.push("submodules (.gitmodules)".to_owned());
            }
            paths.extend_from_slice(path);
            paths.push(0);
        }
        let mut args = vec!["check-attr", "-z", "--stdin", "--source=HEAD"];
        args.extend(TRANSFORMING_ATTRIBUTES);
        let out = self.ok_call(&in_worktree(dirs, &args).input(paths), cancel)?;
        found.extend(transforming_attributes(&out)?);
        Ok(found)
    }

    /// The files of `HEAD` missing on disk, as git names them (bytes).
    pub(crate) fn missing_from_head(
        &self,
        dirs: &Dirs,
        cancel: &CancelToken,
    ) -> Result<Vec<Vec<u8>>> {
        let listing = ["ls-tree", "-r", "-z", "--full-tree", "--name-only", "HEAD"];
        let tree = self.ok_call(&in_worktree(dirs, &listing), cancel)?;
        let mut missing = Vec::new();
        for path in tree.split(|&b| b == 0).filter(|p| !p.is_empty()) {
            let on_disk = dirs.top.join(OsStr::from_bytes(path));
            match fs::symlink_metadata(&on_disk) {
                Ok(_) => {}
                Err(err) if err.kind() == io::ErrorKind::NotFound => missing.push(path.to_vec()),
                Err(err) => return Err(Error::io(&on_disk, err)),
            }
        }
        Ok(missing)
    }

    /// Write back every file of `HEAD` that is missing on disk (a removal
    /// cut short deleted it); existing files are never touched. Git holds
    /// `lock` while it writes.
    pub(crate) fn restore_missing(
        &self,
        dirs: &Dirs,
        lock: BorrowedFd<'_>,
        cancel: &CancelToken,
    ) -> Result<()> {
        let missing = self.missing_from_head(dirs, cancel)?;
        if missing.is_empty() {
            return Ok(());
        }
        let scratch = scratch_dir()?;
        let index = scratch.path().join("index");
        let private = |args: &[&str]| in_worktree(dirs, args).private_index(&index).proof();
        self.ok_call(&private(&["read-tree", "HEAD"]), cancel)?;
        let input = missing
            .into_iter()
            .flat_map(|path| path.into_iter().chain([0]))
            .collect();
        let checkout = private(&["checkout-index", "-z", "--stdin"]);
        self.ok_call(&checkout.input(input).holding(lock), cancel)?;
        Ok(())
    }

    /// Rewrite a worktree's missing `.git` file (`worktree repair`), git
    /// holding `lock` while it writes. Its exit status is not trusted (git
    /// 2.47 reports the broken file it just repaired as an error): callers
    /// check [`Git::dirs`] afterwards.
    pub(crate) fn repair_worktree(
        &self,
        repo: &Path,
        path: &Path,
        lock: BorrowedFd<'_>,
        cancel: &CancelToken,
    ) -> Result<()> {
        let call = Call::new(repo, &["worktree", "repair"]).arg(path);
        self.output(&call.holding(lock), cancel).map(drop)
    }

    /// `git worktree remove` without `--force`: git's own checks stand on
    /// top of the crate's proof.
    pub(crate) fn remove_worktree(
        &self,
        repo: &Path,
        path: &Path,
        cancel: &CancelToken,
    ) -> Result<()> {
        let call = Call::new(repo, &["worktree", "remove", "--end-of-options"]).arg(path);
        self.ok_call(&call, cancel).map(drop)
    }

    /// [`Git::remove_worktree`], git holding `lock` until it exits (so the
    /// next taker of the lock never races a removal still deleting), and
    /// its check that nothing untracked would be lost told that what the
    /// gitignore patterns `let_go` match may go.
    pub(crate) fn remove_worktree_holding(
        &self,
        repo: &Path,
        path: &Path,
        lock: BorrowedFd<'_>,
        let_go: &[String],
        cancel: &CancelToken,
    ) -> Result<()> {
        let scratch = scratch_dir()?;
        let excludes = scratch.path().join("let-go");
        let mut lines = let_go.join("\n");
        lines.push('\n');
        fs::write(&excludes, lines).map_err(|err| Error::io(&excludes, err))?;
        let mut setting = OsString::from("core.excludesFile=");
        setting.push(&excludes);
        let call = Call::new(repo, &["-c"]).arg(setting);
        let call = call.arg("worktree").arg("remove").arg("--end-of-options");
        self.ok_call(&call.arg(path).holding(lock), cancel)
            .map(drop)
    }

    /// `git worktree add PATH BRANCH`: the branch checked out at `path`.
    pub(crate) fn add_worktree(
        &self,
        repo: &Path,
        path: &Path,
        branch: &str,
        cancel: &CancelToken,
    ) -> Result<()> {
        let call = Call::new(repo, &["worktree", "add", "--end-of-options"])
            .arg(path)
            .arg(branch);
        self.ok_call(&call, cancel).map(drop)
    }

    /// Point `refs/heads/BRANCH` at `to`, only if it still points at `from`
    /// (git's compare-and-swap; the old value stays in the branch's reflog).
    pub(crate) fn move_branch(
        &self,
        repo: &Path,
        branch: &str,
        to: &str,
        from: &str,
        cancel: &CancelToken,
    ) -> Result<()> {
        let reference = format!("refs/heads/{branch}");
        let args = [
            "update-ref",
            "-m",
            "natives: restore a released worktree",
            &reference,
            to,
            from,
        ];
        self.ok(repo, &args, cancel).map(drop)
    }
}

/// A private directory for a scratch index, removed when dropped.
fn scratch_dir() -> Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix("natives-index-")
        .tempdir()
        .map_err(|err| Error::io(&std::env::temp_dir(), err))
}

/// The NUL-terminated fields of `bytes`, as text.
fn nul_fields(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|&b| b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect()
}

/// One entry of `git worktree list --porcelain -z`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Worktree {
    /// Its path as git records it.
    pub path: PathBuf,
    /// The commit checked out, unless the repository is bare.
    pub head: Option<String>,
    /// The branch checked out (`refs/heads/...`), unless detached or bare.
    pub branch: Option<String>,
    /// `HEAD` is detached.
    pub detached: bool,
    /// The main worktree of a bare repository.
    pub bare: bool,
    /// Locked (`git worktree lock`), with its reason (maybe empty).
    pub locked: Option<String>,
    /// Git could prune it (its directory is gone), with git's reason.
    pub prunable: Option<String>,
}

/// Parse `git worktree list --porcelain -z`: records of `key value` fields,
/// each field ended by NUL, each record by an empty field.
pub fn parse_worktree_list(bytes: &[u8]) -> Result<Vec<Worktree>> {
    let mut worktrees = Vec::new();
    let mut current: Option<Worktree> = None;
    for field in bytes.split(|&b| b == 0) {
        if field.is_empty() {
            worktrees.extend(current.take());
            continue;
        }
        let (key, value) = match field.iter().position(|&b| b == b' ') {
            Some(space) => (&field[..space], Some(&field[space + 1..])),
            None => (field, None),
        };
        let text = || value.map(|v| String::from_utf8_lossy(v).into_owned());
        if key == b"worktree" {
            worktrees.extend(current.take());
            let path = value.ok_or_else(|| malformed_list("a worktree without a path"))?;
            current = Some(Worktree {
                path: PathBuf::from(OsStr::from_bytes(path)),
                ..Worktree::default()
            });
            continue;
        }
        let worktree = current
            .as_mut()
            .ok_or_else(|| malformed_list("a field before any worktree"))?;
        match key {
            b"HEAD" => worktree.head = text(),
            b"branch" => worktree.branch = text(),
            b"detached" => worktree.detached = true,
            b"bare" => worktree.bare = true,
            b"locked" => worktree.locked = Some(text().unwrap_or_default()),
            b"prunable" => worktree.prunable = Some(text().unwrap_or_default()),
            // Fields of later git versions say nothing this driver needs.
            _ => {}
        }
    }
    worktrees.extend(current);
    Ok(worktrees)
}

fn malformed_list(what: &str) -> Error {
    Error::new(
        ErrorKind::Io,
        format!("`git worktree list --porcelain -z` output is malformed: {what}"),
    )
}

/// One record of `--raw -z` output: the status letter and the path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawChange {
    /// `A`, `D`, `M`, `T`, `U` (unmerged), ...
    pub status: char,
    /// The path, as git printed it.
    pub path: String,
}

/// Parse `diff-* --raw -z --no-renames`: `:mode mode oid oid STATUS` NUL
/// `path` NUL, repeated.
pub fn parse_raw(bytes: &[u8]) -> Result<Vec<RawChange>> {
    let mut fields = bytes.split(|&b| b == 0).filter(|f| !f.is_empty());
    let mut changes = Vec::new();
    while let Some(meta) = fields.next() {
        let malformed = || Error::new(ErrorKind::Io, "`--raw -z` diff output is malformed");
        if meta.first() != Some(&b':') {
            return Err(malformed());
        }
        let status = meta
            .rsplit(|&b| b == b' ')
            .next()
            .and_then(|s| s.first())
            .map(|&b| b as char)
            .ok_or_else(malformed)?;
        let path = fields.next().ok_or_else(malformed)?;
        changes.push(RawChange {
            status,
            path: String::from_utf8_lossy(path).into_owned(),
        });
    }
    Ok(changes)
}

/// Files and directories in a worktree's git directory that say an
/// operation (merge, cherry-pick, revert, rebase, bisect, a sequence of
/// picks) stopped half way: a worktree holding one is never removed.
pub const OPERATION_MARKERS: [&str; 8] = [
    "MERGE_HEAD",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "REBASE_HEAD",
    "BISECT_LOG",
    "rebase-merge",
    "rebase-apply",
    "sequencer",
];

/// The operation markers present in `git_dir`. An unreadable directory is
/// an error, never "none".
pub fn operations_in_progress(git_dir: &Path) -> Result<Vec<&'static str>> {
    let mut found = Vec::new();
    for marker in OPERATION_MARKERS {
        let path = git_dir.join(marker);
        match fs::symlink_metadata(&path) {
            Ok(_) => found.push(marker),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(Error::io(&path, err)),
        }
    }
    Ok(found)
}

/// The branch (`refs/heads/...`) a detached worktree is still working on:
/// the one a stopped rebase will return to, or the one a bisect started
/// from. Git counts such a branch as checked out there.
pub fn branch_in_operation(git_dir: &Path) -> Result<Option<String>> {
    for head_name in ["rebase-merge/head-name", "rebase-apply/head-name"] {
        if let Some(name) = read_marker(&git_dir.join(head_name))? {
            return Ok(Some(name).filter(|name| name.starts_with("refs/heads/")));
        }
    }
    let bisected = read_marker(&git_dir.join("BISECT_START"))?;
    Ok(bisected
        .filter(|name| !name.is_empty())
        .map(|name| format!("refs/heads/{name}")))
}

/// The most a marker naming a branch may hold: a ref name, far below.
const MARKER_BYTES: u64 = 64 << 10;

/// A marker file's text, trimmed, through the one bounded reader: a FIFO or
/// device in its place is `EFTYPE` at once, never a read that blocks.
fn read_marker(path: &Path) -> Result<Option<String>> {
    let bytes = durable::read_bounded(path, MARKER_BYTES)?;
    Ok(bytes.map(|bytes| String::from_utf8_lossy(&bytes).trim().to_owned()))
}

/// Attributes that make git transform a file between the disk and the
/// object store (so equal trees would not mean equal bytes).
pub const TRANSFORMING_ATTRIBUTES: [&str; 6] = [
    "filter",
    "text",
    "eol",
    "crlf",
    "ident",
    "working-tree-encoding",
];

/// From `check-attr -z` output (`path` NUL `attribute` NUL `value` NUL,
/// repeated): every `path: attribute=value` that transforms content.
/// `unspecified` never does; `unset` (`-text`, `-crlf`) only turns
/// conversion off.
pub fn transforming_attributes(bytes: &[u8]) -> Result<Vec<String>> {
    let fields: Vec<&[u8]> = bytes.split(|&b| b == 0).collect();
    let mut found = Vec::new();
    let mut records = fields.chunks_exact(3);
    for record in records.by_ref() {
        let [path, attribute, value] =
            [record[0], record[1], record[2]].map(String::from_utf8_lossy);
        if value != "unspecified" && value != "unset" {
            found.push(format!("{path}: {attribute}={value}"));
        }
    }
    if records.remainder() != [b""] {
        return Err(Error::new(
            ErrorKind::Io,
            "`check-attr -z` output is malformed",
        ));
    }
    Ok(found)
}

#[cfg(test)]
mod tests;

/// How long an object id is in `object_format`, if known.
pub fn id_len(object_format: &str) -> Option<usize> {
    match object_format {
        "sha1" => Some(40),
        "sha256" => Some(64),
        _ => None,
    }
}

/// Whether `id` is a full lowercase hex object id of `len` digits.
pub fn is_id(id: &str, len: usize) -> bool {
    id.len() == len && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}
