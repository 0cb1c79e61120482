//! The driver proper: a git program, its version checked once, and how
//! each of its commands runs (the pinned environment and configuration,
//! the timeout and the cancel token, the locks it holds; see the module
//! docs of `git.rs`). The queries and changes the crate puts to git, in
//! git.rs and store.rs, run their commands through it.

use std::{
    ffi::{OsStr, OsString},
    os::fd::BorrowedFd,
    path::{Path, PathBuf},
    process::{Command, Output},
    sync::Mutex,
    time::Duration,
};

use natives_core::{CancelToken, Error, ErrorKind, Result};
use natives_system::command::{self, Ended};

/// The oldest git this driver accepts: `check-attr --source` (2.40) is the
/// newest feature it uses.
pub const MIN_VERSION: Version = Version {
    major: 2,
    minor: 40,
    patch: 0,
};

/// How long one git command may run by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// What git says (under `LC_ALL=C`) when run outside any repository.
const NOT_A_REPOSITORY: &str = "not a git repository";

/// Configuration pinned on every call, because the user's value would
/// change a safety answer: untracked files hidden from status, a file
/// system monitor or untracked cache vouching for files git did not look
/// at, a garbage collection started behind a command.
pub const PINNED_CONFIG: [&str; 5] = [
    "status.showUntrackedFiles=all",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "gc.auto=0",
    "maintenance.auto=false",
];

/// Configuration pinned for the content proof: the bytes on disk are
/// compared with `HEAD`'s blobs byte for byte (no end-of-line conversion),
/// every file is looked at (no assume-unchanged from `core.ignoreStat`),
/// and a changed executable bit counts.
pub const PROOF_CONFIG: [&str; 4] = [
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.ignoreStat=false",
    "core.fileMode=true",
];

/// A git version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    /// The major number.
    pub major: u32,
    /// The minor number.
    pub minor: u32,
    /// The patch number.
    pub patch: u32,
}

impl Version {
    /// The version in `git version` output (`git version 2.47.3`, maybe
    /// followed by a vendor suffix such as `.windows.1` or ` (Apple Git-1)`).
    pub fn parse(output: &str) -> Option<Version> {
        let rest = output.trim().strip_prefix("git version ")?;
        let number = rest.split(|c: char| c.is_whitespace()).next()?;
        let mut parts = number.split('.').map(|part| {
            let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u32>().ok()
        });
        Some(Version {
            major: parts.next()??,
            minor: parts.next()??,
            patch: parts.next().flatten().unwrap_or(0),
        })
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The programs whose version was found good, so it is checked once.
static CHECKED: Mutex<Vec<(PathBuf, Version)>> = Mutex::new(Vec::new());

/// A git program and how long each of its commands may run.
#[derive(Clone, Debug)]
pub struct Git {
    program: PathBuf,
    timeout: Duration,
    version: Version,
}

impl Git {
    /// `git` from `PATH`, with [`DEFAULT_TIMEOUT`].
    pub fn new() -> Result<Git> {
        Git::with_program("git")
    }

    /// The git at `program` (a path, or a name looked up in `PATH`), refused
    /// when older than [`MIN_VERSION`] (`ENOTSUP`) or when it cannot be run.
    pub fn with_program(program: impl Into<PathBuf>) -> Result<Git> {
        let program = program.into();
        let mut git = Git {
            program,
            timeout: DEFAULT_TIMEOUT,
            version: MIN_VERSION,
        };
        git.version = git.checked_version()?;
        Ok(git)
    }

    /// The same git, each command stopped after `timeout`.
    pub fn with_timeout(mut self, timeout: Duration) -> Git {
        self.timeout = timeout;
        self
    }

    /// The version found when the program was checked.
    pub fn version(&self) -> Version {
        self.version
    }

    fn checked_version(&self) -> Result<Version> {
        let known = CHECKED
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, version)) = known.iter().find(|(program, _)| *program == self.program) {
            return Ok(*version);
        }
        drop(known);
        let out = self.ok(Path::new("."), &["version"], &CancelToken::new())?;
        let text = String::from_utf8_lossy(&out);
        let version = Version::parse(&text).ok_or_else(|| {
            Error::new(
                ErrorKind::Unsupported,
                format!(
                    "{}: unrecognised `git version` output {text:?}",
                    self.program.display()
                ),
            )
        })?;
        if version < MIN_VERSION {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!(
                    "{} is git {version}; natives needs git {MIN_VERSION} or newer",
                    self.program.display()
                ),
            ));
        }
        let mut known = CHECKED
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        known.push((self.program.clone(), version));
        Ok(version)
    }

    /// Run git in `dir`; its output whatever the exit status. Errors: the
    /// spawn failed, or the token or the timeout stopped it.
    pub(crate) fn output(&self, call: &Call<'_>, cancel: &CancelToken) -> Result<Output> {
        let mut command = self.command(call);
        let token = self.deadline(cancel);
        match command::run_holding(&mut command, &call.input, &call.held, &token) {
            Ok(Ended::Finished(out)) => Ok(out),
            Ok(Ended::Stopped(why)) => Err(Error::new(
                why.kind(),
                format!("{} was stopped: {}", self.describe(call), why.message()),
            )),
            Err(err) => Err(Error::io(Path::new(&self.describe(call)), err)),
        }
    }

    /// Run git in `dir` with `args`; its stdout, or an error naming the
    /// command with its exit status and stderr.
    pub(crate) fn ok(&self, dir: &Path, args: &[&str], cancel: &CancelToken) -> Result<Vec<u8>> {
        self.ok_call(&Call::new(dir, args), cancel)
    }

    pub(crate) fn ok_call(&self, call: &Call<'_>, cancel: &CancelToken) -> Result<Vec<u8>> {
        let out = self.output(call, cancel)?;
        if out.status.success() {
            return Ok(out.stdout);
        }
        Err(self.failed(call, &out))
    }

    /// The error of a command that exited unsuccessfully: `EINVAL` when
    /// `dir` is not in a repository at all (the caller named the wrong
    /// folder), `EIO` otherwise.
    pub(crate) fn failed(&self, call: &Call<'_>, out: &Output) -> Error {
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Stable wording: git runs with `LC_ALL=C`.
        if stderr.contains(NOT_A_REPOSITORY) {
            let dir = call.dir.display();
            return Error::invalid(format!(
                "{dir} is not in a git repository ({})",
                self.describe(call)
            ));
        }
        Error::new(
            ErrorKind::Io,
            format!(
                "{} failed ({}): {}",
                self.describe(call),
                out.status,
                stderr.trim_end()
            ),
        )
    }

    fn deadline(&self, cancel: &CancelToken) -> CancelToken {
        cancel
            .clone()
            .with_timeout(Some(cancel.within(self.timeout)))
    }

    fn command(&self, call: &Call<'_>) -> Command {
        let mut command = Command::new(&self.program);
        for (name, _) in std::env::vars_os() {
            if name.as_encoded_bytes().starts_with(b"GIT_") {
                command.env_remove(name);
            }
        }
        command
            .current_dir(call.dir)
            .env("LC_ALL", "C")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_EDITOR", "true")
            .env("GIT_OPTIONAL_LOCKS", "0");
        if let Some(index) = call.index {
            command.env("GIT_INDEX_FILE", index);
        }
        if let Some(home) = call.home {
            isolate(&mut command, home);
        }
        for (name, value) in &call.env {
            command.env(name, value);
        }
        let proof: &[&str] = if call.proof { &PROOF_CONFIG } else { &[] };
        for setting in PINNED_CONFIG.iter().chain(proof) {
            command.args(["-c", setting]);
        }
        command.args(&call.args);
        command
    }

    fn describe(&self, call: &Call<'_>) -> String {
        let words = std::iter::once(self.program.as_os_str())
            .chain(call.args.iter().map(OsString::as_os_str))
            .map(OsStr::to_string_lossy)
            .collect::<Vec<_>>()
            .join(" ");
        format!("`{words}` in {}", call.dir.display())
    }
}

/// Shut git off from every configuration and attribute file but the
/// repository's own, for commands on a repository natives made for itself:
/// the caller's `~/.gitconfig`, XDG and system files could change a diff's
/// bytes (`diff.noprefix`, `diff.orderFile`, a `-diff` attribute), what a
/// patch applies to (`apply.whitespace=fix`), a commit (`commit.gpgSign`),
/// or silence a check (`fsck.*`). `home` is an empty directory standing in
/// for the user's.
fn isolate(command: &mut Command, home: &Path) {
    command
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_ATTR_NOSYSTEM", "1");
}

/// One git command: where it runs, its arguments, its input, whether it
/// uses a private index and the content proof's configuration, whether it
/// is isolated from the user's configuration, and the few variables a
/// command sets for itself.
pub(crate) struct Call<'a> {
    dir: &'a Path,
    args: Vec<OsString>,
    input: Vec<u8>,
    index: Option<&'a Path>,
    proof: bool,
    home: Option<&'a Path>,
    env: Vec<(&'static str, String)>,
    held: Vec<BorrowedFd<'a>>,
}

impl<'a> Call<'a> {
    pub(crate) fn new(dir: &'a Path, args: &[&str]) -> Call<'a> {
        Call {
            dir,
            args: args.iter().map(OsString::from).collect(),
            input: Vec::new(),
            index: None,
            proof: false,
            home: None,
            env: Vec::new(),
            held: Vec::new(),
        }
    }

    /// One more argument (a path, which may not be UTF-8).
    pub(crate) fn arg(mut self, arg: impl AsRef<OsStr>) -> Call<'a> {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// More arguments, after those given so far.
    pub(crate) fn args(mut self, args: &[&str]) -> Call<'a> {
        self.args.extend(args.iter().map(OsString::from));
        self
    }

    pub(crate) fn input(mut self, input: Vec<u8>) -> Call<'a> {
        self.input = input;
        self
    }

    pub(crate) fn private_index(mut self, index: &'a Path) -> Call<'a> {
        self.index = Some(index);
        self
    }

    pub(crate) fn proof(mut self) -> Call<'a> {
        self.proof = true;
        self
    }

    /// No configuration or attributes but the repository's ([`isolate`]),
    /// with `home` (an empty directory) as the user's home.
    pub(crate) fn isolated(mut self, home: &'a Path) -> Call<'a> {
        self.home = Some(home);
        self
    }

    /// Git holds `lock` (a held lock's file) until it exits: a process
    /// that takes the lock next knows this git is gone, even when the
    /// caller died first and git was still being killed.
    pub(crate) fn holding(mut self, lock: BorrowedFd<'a>) -> Call<'a> {
        self.held.push(lock);
        self
    }

    /// Set `name` (a `GIT_*` variable the command needs, such as a
    /// commit's date) to `value`.
    pub(crate) fn env(mut self, name: &'static str, value: impl Into<String>) -> Call<'a> {
        self.env.push((name, value.into()));
        self
    }
}

/// A git command on the worktree `dirs` describes, its directories given
/// explicitly so nothing is discovered.
pub(super) fn in_worktree<'a>(dirs: &'a Dirs, args: &[&str]) -> Call<'a> {
    let mut git_dir = OsString::from("--git-dir=");
    git_dir.push(&dirs.git_dir);
    let mut work_tree = OsString::from("--work-tree=");
    work_tree.push(&dirs.top);
    Call::new(&dirs.top, &[])
        .arg(git_dir)
        .arg(work_tree)
        .args(args)
}

/// A worktree's own git directory, the repository's common one, and the
/// top of the worktree, as git resolves them from inside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dirs {
    /// The worktree's git directory (`.git/worktrees/<name>` when linked).
    pub git_dir: PathBuf,
    /// The repository's common git directory.
    pub common_dir: PathBuf,
    /// The top of the worktree.
    pub top: PathBuf,
}
