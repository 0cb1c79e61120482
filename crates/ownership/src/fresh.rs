//! Keeping a shared build cache honest about which source it was built from.
//!
//! Cargo names a workspace package's compiled output by a hash that leaves
//! out where the source lives, and decides freshness by comparing file
//! mtimes. So when two worktrees of one repository build the same package
//! name and version into one `CARGO_TARGET_DIR`, the second worktree can find
//! the first one's output "fresh" and `cargo test` runs binaries compiled from
//! source nobody is looking at: a false green.
//!
//! The cure is cheap and targeted. The cache remembers the source identity
//! (worktree and `HEAD`) it was last built from, in a record under the
//! natives home. [`ensure_fresh`] compares it with the build about to start:
//! when they match it does nothing, not even spawn a process, which is the
//! common case once a cache settles on one worktree. When they differ it asks
//! `cargo metadata --no-deps` for the workspace's own packages and removes
//! only their output with `cargo clean -p`, keeping every dependency's
//! compiled output, which is what makes a shared cache worth sharing.
//!
//! Crash safety comes from ordering: the old identity is forgotten before the
//! first clean and the new one recorded only after every clean succeeded, so
//! an interrupted or failed refresh is retried by the next build instead of
//! being trusted. That is also what makes a refresh safe to cancel: cargo
//! runs in a process group of its own, and a cancel kills the group.
//!
//! Scope: the output of the `dev` and `release` profiles built for the host
//! (`<cache>/debug`, `<cache>/release`), the layouts of `cargo build`,
//! `cargo test` and `cargo build --release`. Builds with `--target` or a
//! custom profile lay their output out by configuration this module cannot
//! see, and are not cleaned.
//!
//! Call [`ensure_fresh`] while holding the cache directory's lease: the lease
//! is what keeps two refreshes (or a refresh and a build) apart.

use std::{
    ffi::{OsStr, OsString},
    io,
    path::{Path, PathBuf},
    process::{Command, ExitStatus},
};

use natives_core::{CancelToken, Error, ErrorKind, Result};
use serde::{Deserialize, Serialize};

use crate::{
    command::{self, Ended},
    durable,
    layout::LeaseFiles,
    paths::dir_id,
};

/// The source a build against a cache directory comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Identity {
    /// The worktree the build runs in. Compared by canonical path, so two
    /// routes to one worktree are one identity.
    pub worktree: PathBuf,
    /// The commit checked out there.
    pub head: String,
}

/// Which source an acquisition for a build makes the cache fresh for.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Refresh {
    /// The owner's own source: its worktree at its head, when the owner
    /// names both; otherwise nothing is refreshed.
    #[default]
    OwnersSource,
    /// Nothing: the caller takes the cache as it is.
    Skip,
    /// This source.
    For(Identity),
}

impl Refresh {
    /// The identity this choice names for a build by `owner`, if any.
    pub fn identity(self, owner: &crate::Owner) -> Option<Identity> {
        match self {
            Refresh::OwnersSource => Some(Identity {
                worktree: owner.worktree.clone()?,
                head: owner.head.clone()?,
            }),
            Refresh::Skip => None,
            Refresh::For(identity) => Some(identity),
        }
    }
}

/// Where cargo is asked about the workspace's own packages. Cargo always runs
/// in the identity's worktree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// The workspace cargo finds from the worktree itself (its root manifest,
    /// searched for upward from the worktree as cargo does).
    Worktree,
    /// The workspaces of these manifests (relative paths are resolved against
    /// the worktree): what a task's commands build when they pass
    /// `--manifest-path`. Manifests of one workspace are cleaned once.
    Manifests(Vec<PathBuf>),
}

impl Target {
    /// The manifests a caller named, or the worktree's workspace when it
    /// named none.
    pub fn of_manifests(manifests: Vec<PathBuf>) -> Target {
        if manifests.is_empty() {
            Target::Worktree
        } else {
            Target::Manifests(manifests)
        }
    }

    /// What a task's `commands` build: the manifests they name with
    /// `--manifest-path`, or the worktree's workspace when they name none.
    pub fn for_commands(commands: &[&str]) -> Target {
        let manifests = extract_manifest_paths(commands);
        if manifests.is_empty() {
            Target::Worktree
        } else {
            Target::Manifests(manifests)
        }
    }
}

/// What [`ensure_fresh`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Freshness {
    /// The recorded identity matched: nothing ran and nothing was removed.
    Unchanged,
    /// The identity changed: these workspace packages' output was removed
    /// from the cache (none when the cache held no build output yet), and the
    /// new identity recorded.
    Refreshed {
        /// The packages cleaned, sorted, without duplicates.
        cleaned: Vec<String>,
    },
}

/// The cargo program to run: `$CARGO` (set when running under cargo) or
/// `cargo` from `PATH` by default. Tests substitute their own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cargo {
    /// The program's path, or a name looked up in `PATH`.
    pub program: PathBuf,
}

impl Default for Cargo {
    fn default() -> Cargo {
        let program = std::env::var_os("CARGO").filter(|program| !program.is_empty());
        Cargo {
            program: program.map_or_else(|| PathBuf::from("cargo"), PathBuf::from),
        }
    }
}

/// Guarantee that a build against `cache_dir` from `identity` cannot reuse
/// another source's compiled output, running the default [`Cargo`]. See
/// [`Cargo::ensure_fresh`].
pub fn ensure_fresh(
    home: &Path,
    cache_dir: &Path,
    identity: &Identity,
    target: &Target,
    cancel: &CancelToken,
) -> Result<Freshness> {
    Cargo::default().ensure_fresh(home, cache_dir, identity, target, cancel)
}

/// Whether the source building against `cache_dir` differs from the one last
/// recorded: `true` when nothing was recorded, or the record cannot be read
/// or parsed, since none of those vouches for the cache's contents.
pub fn needs_refresh(home: &Path, cache_dir: &Path, identity: &Identity) -> Result<bool> {
    let current = canonical(identity)?;
    Ok(recorded_identity(home, cache_dir)?.as_ref() != Some(&current))
}

/// Record `identity` as the source last built into `cache_dir`.
pub fn record_identity(home: &Path, cache_dir: &Path, identity: &Identity) -> Result<()> {
    let current = canonical(identity)?;
    let bytes = serde_json::to_vec(&current).map_err(|err| {
        Error::invalid(format!(
            "{}: cannot record this worktree: {err}",
            identity.worktree.display()
        ))
    })?;
    LeaseFiles::create_dirs(home)?;
    durable::replace(&identity_path(home, cache_dir)?, &bytes)
}

/// Forget the source recorded for `cache_dir`, so no later call can skip a
/// refresh on the strength of it.
pub fn invalidate_identity(home: &Path, cache_dir: &Path) -> Result<()> {
    durable::remove(&identity_path(home, cache_dir)?).map(drop)
}

impl Cargo {
    /// Guarantee that a build against `cache_dir` from `identity` cannot reuse
    /// another source's compiled output.
    ///
    /// When the recorded identity matches, returns [`Freshness::Unchanged`]
    /// without spawning anything. Otherwise forgets the recorded identity,
    /// runs `cargo metadata --no-deps --format-version 1` once per workspace
    /// of `target`, then one `cargo clean --profile <p> -p <pkg>...
    /// --target-dir <cache_dir>` per profile with output in the cache, naming
    /// the workspace's own packages only, and records `identity` once every
    /// clean succeeded. A failed command's error names it and carries its
    /// stderr; the identity then stays unrecorded. So it does when `cancel`
    /// stops: the running command is killed with its whole process group
    /// and the call fails with the token's error (`ABORT_ERR`, `ETIMEDOUT`).
    pub fn ensure_fresh(
        &self,
        home: &Path,
        cache_dir: &Path,
        identity: &Identity,
        target: &Target,
        cancel: &CancelToken,
    ) -> Result<Freshness> {
        if !needs_refresh(home, cache_dir, identity)? {
            return Ok(Freshness::Unchanged);
        }
        invalidate_identity(home, cache_dir)?;
        let cache = dir_id(cache_dir)?;
        let profiles = built_profiles(&cache)?;
        let cleaned = if profiles.is_empty() {
            Vec::new()
        } else {
            self.clean_workspaces(&identity.worktree, target, &cache, &profiles, cancel)?
        };
        record_identity(home, cache_dir, identity)?;
        Ok(Freshness::Refreshed { cleaned })
    }

    /// Clean every workspace of `target` out of `cache` in each of
    /// `profiles`; the names of the packages cleaned.
    fn clean_workspaces(
        &self,
        worktree: &Path,
        target: &Target,
        cache: &Path,
        profiles: &[&str],
        cancel: &CancelToken,
    ) -> Result<Vec<String>> {
        let mut cleaned = Vec::new();
        for workspace in self.workspaces(worktree, target, cancel)? {
            for profile in profiles {
                self.clean(worktree, &workspace, cache, profile, cancel)?;
            }
            cleaned.extend(workspace.packages);
        }
        cleaned.sort();
        cleaned.dedup();
        Ok(cleaned)
    }

    /// The distinct workspaces `target` names, each with its own packages.
    fn workspaces(
        &self,
        worktree: &Path,
        target: &Target,
        cancel: &CancelToken,
    ) -> Result<Vec<Workspace>> {
        let manifests = match target {
            Target::Worktree => vec![None],
            Target::Manifests(manifests) => manifests.iter().map(Some).collect(),
        };
        let mut workspaces: Vec<Workspace> = Vec::new();
        for manifest in manifests {
            let workspace = self.metadata(worktree, manifest.map(PathBuf::as_path), cancel)?;
            if !workspaces.iter().any(|known| known.root == workspace.root) {
                workspaces.push(workspace);
            }
        }
        Ok(workspaces)
    }

    fn metadata(
        &self,
        worktree: &Path,
        manifest: Option<&Path>,
        cancel: &CancelToken,
    ) -> Result<Workspace> {
        let args = ["metadata", "--no-deps", "--format-version", "1"].map(OsString::from);
        let invocation = self.invocation(worktree, manifest, args);
        let stdout = invocation.run(cancel)?;
        let json = String::from_utf8_lossy(&stdout);
        let metadata = Metadata::parse(&json)
            .map_err(|err| Error::invalid(format!("{invocation}: {}", err.message())))?;
        let manifest = manifest.map(Path::to_owned);
        Ok(Workspace {
            root: metadata.workspace_root.clone().or_else(|| manifest.clone()),
            packages: metadata.workspace_package_names()?,
            manifest,
        })
    }

    /// Remove `workspace`'s packages (and nothing else) from `cache`'s
    /// `profile` output. A workspace with no packages is left alone: `cargo
    /// clean` without `-p` would remove everything.
    fn clean(
        &self,
        worktree: &Path,
        workspace: &Workspace,
        cache: &Path,
        profile: &str,
        cancel: &CancelToken,
    ) -> Result<()> {
        if workspace.packages.is_empty() {
            return Ok(());
        }
        let mut args = ["clean", "--profile", profile, "--target-dir"]
            .map(OsString::from)
            .to_vec();
        args.push(cache.into());
        for package in &workspace.packages {
            args.extend(["-p", package].map(OsString::from));
        }
        self.invocation(worktree, workspace.manifest.as_deref(), args)
            .run(cancel)
            .map(drop)
    }

    fn invocation(
        &self,
        worktree: &Path,
        manifest: Option<&Path>,
        args: impl IntoIterator<Item = OsString>,
    ) -> Invocation {
        let mut all: Vec<OsString> = args.into_iter().collect();
        if let Some(manifest) = manifest {
            all.extend([OsString::from("--manifest-path"), manifest.into()]);
        }
        Invocation {
            program: self.program.clone(),
            args: all,
            dir: worktree.to_owned(),
        }
    }
}

/// One workspace to clean: how to name it to cargo, and its packages.
struct Workspace {
    /// The `--manifest-path` that reached it, if any.
    manifest: Option<PathBuf>,
    /// What tells workspaces apart: their root (the manifest, when cargo
    /// does not say).
    root: Option<PathBuf>,
    packages: Vec<String>,
}

/// One cargo command, shown in errors as it would be typed.
struct Invocation {
    program: PathBuf,
    args: Vec<OsString>,
    dir: PathBuf,
}

impl Invocation {
    /// Run to completion; its stdout, or an error naming the command with
    /// its exit status and stderr. The command runs in a process group of
    /// its own: once `cancel` stops, the whole group (cargo and whatever it
    /// started) is killed, and the call fails with the token's error.
    fn run(&self, cancel: &CancelToken) -> Result<Vec<u8>> {
        let mut command = Command::new(&self.program);
        command.args(&self.args).current_dir(&self.dir);
        match command::run(&mut command, b"", cancel).map_err(|err| self.io_error(err))? {
            Ended::Finished(out) if out.status.success() => Ok(out.stdout),
            Ended::Finished(out) => Err(self.failure(out.status, &out.stderr)),
            Ended::Stopped(stopped) => Err(self.stopped(&stopped)),
        }
    }

    fn io_error(&self, err: io::Error) -> Error {
        Error::io(Path::new(&self.to_string()), err)
    }

    fn failure(&self, status: ExitStatus, stderr: &[u8]) -> Error {
        let stderr = String::from_utf8_lossy(stderr);
        Error::new(
            ErrorKind::Io,
            format!("{self} failed ({status}): {}", stderr.trim_end()),
        )
    }

    fn stopped(&self, why: &Error) -> Error {
        Error::new(why.kind(), format!("{self} was stopped: {}", why.message()))
    }
}

impl std::fmt::Display for Invocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let words = std::iter::once(self.program.as_os_str())
            .chain(self.args.iter().map(OsString::as_os_str));
        let line = words
            .map(OsStr::to_string_lossy)
            .collect::<Vec<_>>()
            .join(" ");
        write!(f, "`{line}` in {}", self.dir.display())
    }
}

/// The build-output directory of each profile this module cleans, and the
/// profile's name for `cargo clean --profile`.
const PROFILE_DIRS: [(&str, &str); 2] = [("debug", "dev"), ("release", "release")];

/// The profiles with build output in `cache` (a directory cargo has built a
/// profile into holds `.fingerprint`). A missing cache has none; any other
/// error is returned, since guessing "none" would skip a needed clean.
fn built_profiles(cache: &Path) -> Result<Vec<&'static str>> {
    let mut built = Vec::new();
    for (dir, profile) in PROFILE_DIRS {
        let fingerprints = cache.join(dir).join(".fingerprint");
        if fingerprints
            .try_exists()
            .map_err(|err| Error::io(&fingerprints, err))?
        {
            built.push(profile);
        }
    }
    Ok(built)
}

/// The record of `cache_dir`'s identity, keyed by its canonical id.
fn identity_path(home: &Path, cache_dir: &Path) -> Result<PathBuf> {
    Ok(LeaseFiles::new(home, &dir_id(cache_dir)?).identity)
}

/// The recorded identity, or `None` when there is none or it cannot be read
/// or parsed: an unreadable record vouches for nothing.
fn recorded_identity(home: &Path, cache_dir: &Path) -> Result<Option<Identity>> {
    Ok(read_identity(&identity_path(home, cache_dir)?))
}

/// The identity recorded at `path`, if one can be read and parsed.
pub(crate) fn read_identity(path: &Path) -> Option<Identity> {
    let bytes = durable::read(path).ok()??;
    serde_json::from_slice(&bytes).ok()
}

/// `identity` with its worktree reduced to its canonical id.
fn canonical(identity: &Identity) -> Result<Identity> {
    Ok(Identity {
        worktree: dir_id(&identity.worktree)?,
        head: identity.head.clone(),
    })
}

/// The part of `cargo metadata --format-version 1` that says which packages
/// the workspace defines.
#[derive(Deserialize)]
struct Metadata {
    packages: Vec<PackageEntry>,
    workspace_members: Vec<String>,
    #[serde(default)]
    workspace_root: Option<PathBuf>,
}

#[derive(Deserialize)]
struct PackageEntry {
    id: String,
    name: String,
}

impl Metadata {
    fn parse(json: &str) -> Result<Metadata> {
        serde_json::from_str(json)
            .map_err(|err| Error::invalid(format!("cargo metadata output: {err}")))
    }

    /// The names of the workspace members, in `workspace_members` order.
    /// Ids are matched whole against `packages[].id`, never parsed, because
    /// their format changed between cargo releases. A member with no package
    /// entry is an error: skipping it would skip its clean.
    fn workspace_package_names(&self) -> Result<Vec<String>> {
        let mut names: Vec<String> = Vec::new();
        for member in &self.workspace_members {
            let package = self
                .packages
                .iter()
                .find(|package| &package.id == member)
                .ok_or_else(|| {
                    Error::invalid(format!(
                        "cargo metadata output: workspace member {member} has no package entry"
                    ))
                })?;
            if !names.contains(&package.name) {
                names.push(package.name.clone());
            }
        }
        Ok(names)
    }
}

/// The names of the packages the workspace itself defines, from the JSON of
/// `cargo metadata --format-version 1` (with or without `--no-deps`): never
/// a dependency, so a refresh never discards a dependency's compiled output.
/// In `workspace_members` order, without duplicates. Pure.
pub fn parse_workspace_package_names(json: &str) -> Result<Vec<String>> {
    Metadata::parse(json)?.workspace_package_names()
}

/// Every manifest the given shell `commands` pass with `--manifest-path X`
/// or `--manifest-path=X`, quotes removed, in order of first appearance,
/// without duplicates. Pure.
pub fn extract_manifest_paths(commands: &[&str]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    for command in commands {
        let words = shell_words(command);
        let mut words = words.into_iter();
        while let Some(word) = words.next() {
            let value = match word.strip_prefix("--manifest-path") {
                Some("") => words.next(),
                Some(rest) => rest.strip_prefix('=').map(str::to_owned),
                None => None,
            };
            let Some(path) = value.filter(|path| !path.is_empty()).map(PathBuf::from) else {
                continue;
            };
            if !found.contains(&path) {
                found.push(path);
            }
        }
    }
    found
}

/// Characters that end a word outside quotes: blanks and the shell's
/// operators (`;`, `&&`, `|`, redirections, subshells).
const WORD_BREAKS: &str = ";&|()<>";

/// The words of a POSIX shell command line with quoting removed: enough to
/// read its flags, not a shell (no expansion, no comments).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => word
                .get_or_insert_default()
                .extend(chars.by_ref().take_while(|&c| c != '\'')),
            '"' => double_quoted(&mut chars, word.get_or_insert_default()),
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(escaped) => word.get_or_insert_default().push(escaped),
            },
            c if c.is_whitespace() || WORD_BREAKS.contains(c) => words.extend(word.take()),
            c => word.get_or_insert_default().push(c),
        }
    }
    words.extend(word);
    words
}

/// The rest of a double-quoted string (after its opening quote) onto `word`:
/// a backslash escapes only `"`, `\`, `$`, `` ` `` and a newline.
fn double_quoted(chars: &mut std::str::Chars<'_>, word: &mut String) {
    while let Some(c) = chars.next() {
        match c {
            '"' => return,
            '\\' => match chars.next() {
                Some(escaped @ ('"' | '\\' | '$' | '`')) => word.push(escaped),
                Some('\n') => {}
                Some(other) => word.extend(['\\', other]),
                None => word.push('\\'),
            },
            c => word.push(c),
        }
    }
}

#[cfg(test)]
mod tests;
