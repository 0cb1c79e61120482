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
//! Scope: every build-output directory cargo laid out in the cache, found by
//! cargo's own marks ([`layouts`]): each host profile directory (`debug`,
//! `release`, a custom profile's), each `<target>/<profile>` of a build with
//! `--target`, and the same directories in cargo's separate build directory
//! (`build.build-dir`, `CARGO_BUILD_BUILD_DIR`) when the build keeps its
//! intermediate output there ([`Build::build_dir`], or cargo's configuration
//! in the worktree, which `cargo metadata` reports). Each is cleaned with its
//! own `cargo clean -p <pkg>... --profile <p> [--target <t>]`, which removes
//! the packages' output from the cache and from the build directory alike.
//! Marked output in a layout this module does not recognise fails the
//! refresh (`ENOTSUP` naming the directory) before anything is cleaned, and
//! the identity stays unrecorded: guessing would be trusting it.
//!
//! A cache holding no layout at all (nor the build directory given) is
//! recorded without running cargo: every build lays its profile directory
//! out in the cache, even one that keeps its intermediate output in a build
//! directory, so such a cache was never built into. (A cache emptied by hand
//! while a build directory set only in cargo's configuration was kept is the
//! one case this misses; giving the build directory closes it.)
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

use crate::layout::LeaseFiles;
use natives_system::{
    command::{self, Ended},
    durable,
    paths::dir_id,
};

pub mod layouts;

pub use layouts::{Layout, output_layouts};

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

/// What the build about to run builds, and where cargo keeps its
/// intermediate output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Build {
    /// The workspaces it builds. Default: the worktree's.
    pub workspaces: Target,
    /// Cargo's build directory (`build.build-dir`, `CARGO_BUILD_BUILD_DIR`)
    /// when the build sets one; a relative path is taken from the worktree,
    /// where cargo runs. Default: none, so cargo's configuration in the
    /// worktree decides (the cache itself unless it sets one).
    pub build_dir: Option<PathBuf>,
}

impl Build {
    /// The build directory, taken from `worktree` when relative. `EINVAL`
    /// for an empty path, which would name the worktree itself.
    fn build_dir_in(&self, worktree: &Path) -> Result<Option<PathBuf>> {
        match &self.build_dir {
            Some(dir) if dir.as_os_str().is_empty() => Err(Error::invalid(
                "the build directory is an empty path, which names no directory",
            )),
            dir => Ok(dir.as_ref().map(|dir| worktree.join(dir))),
        }
    }
}

impl Default for Build {
    fn default() -> Build {
        Build::from(Target::Worktree)
    }
}

impl From<Target> for Build {
    fn from(workspaces: Target) -> Build {
        Build {
            workspaces,
            build_dir: None,
        }
    }
}

/// The environment variable cargo reads its target directory from: every
/// cargo command of a refresh gets the cache there (`cargo metadata` has no
/// `--target-dir`, and it must report the build directory for this cache).
const TARGET_DIR_ENV: &str = "CARGO_TARGET_DIR";

/// The environment variable cargo reads its build directory from, which
/// the refresh's cargo commands get when [`Build::build_dir`] names one.
const BUILD_DIR_ENV: &str = "CARGO_BUILD_BUILD_DIR";

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
    build: &Build,
    cancel: &CancelToken,
) -> Result<Freshness> {
    Cargo::default().ensure_fresh(home, cache_dir, identity, build, cancel)
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
    /// removes the workspace packages' output from every layout
    /// ([`Cargo::clean_workspace_output`]) and records `identity` once every
    /// clean succeeded. On any failure the identity stays unrecorded, so the
    /// next build refreshes again; so it does when `cancel` stops: the
    /// running command is killed with its whole process group and the call
    /// fails with the token's error (`ABORT_ERR`, `ETIMEDOUT`).
    pub fn ensure_fresh(
        &self,
        home: &Path,
        cache_dir: &Path,
        identity: &Identity,
        build: &Build,
        cancel: &CancelToken,
    ) -> Result<Freshness> {
        if !needs_refresh(home, cache_dir, identity)? {
            return Ok(Freshness::Unchanged);
        }
        invalidate_identity(home, cache_dir)?;
        let cleaned = self.clean_workspace_output(&identity.worktree, build, cache_dir, cancel)?;
        record_identity(home, cache_dir, identity)?;
        Ok(Freshness::Refreshed { cleaned })
    }

    /// Remove the output of `build`'s workspace packages (never a
    /// dependency's) from every layout cargo laid out in `cache_dir` and in
    /// the build's build directory; the names of the packages cleaned,
    /// sorted, without duplicates.
    ///
    /// Cargo runs in `worktree` with `CARGO_TARGET_DIR` set to the cache
    /// (and `CARGO_BUILD_BUILD_DIR` to the build's build directory, if
    /// given): `cargo metadata --no-deps --format-version 1` once per
    /// workspace (its packages, and its build directory), then one `cargo
    /// clean --profile <p> [--target <t>] -p <pkg>...` per layout. A custom
    /// profile is defined for the command (`--config
    /// profile.<p>.inherits="dev"`), since the worktree need not define it
    /// for its output to be there. When neither the cache nor the given
    /// build directory holds a layout, nothing runs. A failed command's error
    /// names it with its stderr (a clean's, the layout's directory too); an
    /// unrecognised layout is `ENOTSUP` naming its directory, before anything
    /// is cleaned (see [`layouts`]).
    pub fn clean_workspace_output(
        &self,
        worktree: &Path,
        build: &Build,
        cache_dir: &Path,
        cancel: &CancelToken,
    ) -> Result<Vec<String>> {
        let cache = dir_id(cache_dir)?;
        let build_dir = build.build_dir_in(worktree)?;
        let in_cache = output_layouts(&cache)?;
        let in_build_dir = match &build_dir {
            Some(dir) => output_layouts(dir)?,
            None => Vec::new(),
        };
        if in_cache.is_empty() && in_build_dir.is_empty() {
            return Ok(Vec::new());
        }
        let run = Run {
            worktree,
            cache: &cache,
            build_dir: build_dir.as_deref(),
            cancel,
        };
        let mut plan = Vec::new();
        for workspace in self.workspaces(&run, &build.workspaces)? {
            let layouts = workspace.layouts(&cache, &in_cache)?;
            plan.push((workspace, layouts));
        }
        let mut cleaned = Vec::new();
        for (workspace, layouts) in plan {
            self.clean_layouts(&run, &workspace, &layouts)?;
            if !layouts.is_empty() {
                cleaned.extend(workspace.packages);
            }
        }
        cleaned.sort();
        cleaned.dedup();
        Ok(cleaned)
    }

    /// The distinct workspaces `target` names, each with its own packages.
    fn workspaces(&self, run: &Run<'_>, target: &Target) -> Result<Vec<Workspace>> {
        let manifests = match target {
            Target::Worktree => vec![None],
            Target::Manifests(manifests) => manifests.iter().map(Some).collect(),
        };
        let mut workspaces: Vec<Workspace> = Vec::new();
        for manifest in manifests {
            let workspace = self.metadata(run, manifest.map(PathBuf::as_path))?;
            if !workspaces.iter().any(|known| known.root == workspace.root) {
                workspaces.push(workspace);
            }
        }
        Ok(workspaces)
    }

    fn metadata(&self, run: &Run<'_>, manifest: Option<&Path>) -> Result<Workspace> {
        let args = ["metadata", "--no-deps", "--format-version", "1"].map(OsString::from);
        let invocation = self.invocation(run, manifest, args.to_vec());
        let stdout = invocation.run(run.cancel)?;
        let json = String::from_utf8_lossy(&stdout);
        let metadata = Metadata::parse(&json)
            .map_err(|err| Error::invalid(format!("{invocation}: {}", err.message())))?;
        let manifest = manifest.map(Path::to_owned);
        Ok(Workspace {
            root: metadata.workspace_root.clone().or_else(|| manifest.clone()),
            packages: metadata.workspace_package_names()?,
            build_dir: metadata.build_directory,
            manifest,
        })
    }

    /// Remove `workspace`'s packages (and nothing else) from each of
    /// `layouts`. A workspace with no packages is left alone: `cargo clean`
    /// without `-p` would remove everything.
    fn clean_layouts(
        &self,
        run: &Run<'_>,
        workspace: &Workspace,
        layouts: &[Layout],
    ) -> Result<()> {
        if workspace.packages.is_empty() {
            return Ok(());
        }
        for layout in layouts {
            self.clean(run, workspace, layout).map_err(|err| {
                let dir = layout.dir(run.cache);
                Error::new(err.kind(), format!("{}: {}", dir.display(), err.message()))
            })?;
        }
        Ok(())
    }

    fn clean(&self, run: &Run<'_>, workspace: &Workspace, layout: &Layout) -> Result<()> {
        let mut args: Vec<OsString> = vec!["clean".into(), "--profile".into()];
        args.push(layout.profile.clone().into());
        if let Some(target) = &layout.target {
            args.extend(["--target".into(), target.into()]);
        }
        if !matches!(layout.profile.as_str(), "dev" | "release") {
            let defined = format!("profile.{}.inherits=\"dev\"", layout.profile);
            args.extend(["--config".into(), defined.into()]);
        }
        for package in &workspace.packages {
            args.extend(["-p", package].map(OsString::from));
        }
        self.invocation(run, workspace.manifest.as_deref(), args)
            .run(run.cancel)
            .map(drop)
    }

    fn invocation(
        &self,
        run: &Run<'_>,
        manifest: Option<&Path>,
        args: Vec<OsString>,
    ) -> Invocation {
        let mut args = args;
        if let Some(manifest) = manifest {
            args.extend([OsString::from("--manifest-path"), manifest.into()]);
        }
        let mut env = vec![(OsString::from(TARGET_DIR_ENV), run.cache.into())];
        env.extend(
            run.build_dir
                .map(|dir| (OsString::from(BUILD_DIR_ENV), dir.into())),
        );
        Invocation {
            program: self.program.clone(),
            args,
            env,
            dir: run.worktree.to_owned(),
        }
    }
}

/// What every cargo command of one refresh shares.
struct Run<'a> {
    /// Where cargo runs.
    worktree: &'a Path,
    /// The cache, canonical: cargo's target directory.
    cache: &'a Path,
    /// The build directory the caller named, absolute.
    build_dir: Option<&'a Path>,
    cancel: &'a CancelToken,
}

/// One workspace to clean: how to name it to cargo, and its packages.
struct Workspace {
    /// The `--manifest-path` that reached it, if any.
    manifest: Option<PathBuf>,
    /// What tells workspaces apart: their root (the manifest, when cargo
    /// does not say).
    root: Option<PathBuf>,
    packages: Vec<String>,
    /// Where cargo keeps its intermediate output for it, as cargo reports.
    build_dir: Option<PathBuf>,
}

impl Workspace {
    /// The layouts a build of this workspace into `cache` may reuse: those
    /// `in_cache` and those in its build directory, sorted, once each.
    fn layouts(&self, cache: &Path, in_cache: &[Layout]) -> Result<Vec<Layout>> {
        let mut layouts = in_cache.to_vec();
        if let Some(dir) = self.build_dir.as_deref().filter(|dir| *dir != cache) {
            layouts.extend(output_layouts(dir)?);
        }
        layouts.sort();
        layouts.dedup();
        Ok(layouts)
    }
}

/// One cargo command, shown in errors as it would be typed.
struct Invocation {
    program: PathBuf,
    args: Vec<OsString>,
    /// The environment variables set for it.
    env: Vec<(OsString, OsString)>,
    dir: PathBuf,
}

impl Invocation {
    /// Run to completion; its stdout, or an error naming the command with
    /// its exit status and stderr. The command runs in a process group of
    /// its own: once `cancel` stops, the whole group (cargo and whatever it
    /// started) is killed, and the call fails with the token's error.
    fn run(&self, cancel: &CancelToken) -> Result<Vec<u8>> {
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .envs(self.env.clone())
            .current_dir(&self.dir);
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
        let setting = self
            .env
            .iter()
            .map(|(name, value)| format!("{}={} ", name.display(), value.display()));
        let words = std::iter::once(self.program.as_os_str())
            .chain(self.args.iter().map(OsString::as_os_str))
            .map(OsStr::to_string_lossy);
        let line = setting.collect::<String>() + &words.collect::<Vec<_>>().join(" ");
        write!(f, "`{line}` in {}", self.dir.display())
    }
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
    /// Cargo's build directory (cargo 1.91 and later).
    #[serde(default)]
    build_directory: Option<PathBuf>,
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
