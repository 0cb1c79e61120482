//! The command line, declared once: clap derives the parser, every
//! command's `--help`, the suggestions for misspelled flags and the shell
//! completions from these types, so what help lists is what the parser
//! accepts.
//!
//! grep spells its flags as ripgrep does, so a person's habits carry over;
//! flags that only restate what natives always does (`-H`, `--no-heading`)
//! are accepted for the same reason. Defaults are the library's, except
//! where a help line says the CLI follows ripgrep instead.

use std::{ffi::OsString, path::PathBuf};

use clap::{Args, ColorChoice, Parser, Subcommand, ValueEnum};
use clap_complete::Shell;

/// Fast, fresh file discovery for coding agents.
///
/// Exit status: 0 if something matched, 1 if nothing did, 2 on error
/// (handover: 3 when refused).
#[derive(Debug, Parser)]
#[command(
    name = "natives",
    version,
    propagate_version = true,
    disable_help_subcommand = true
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Find files and directories by glob pattern, one path per line.
    Glob(GlobArgs),
    /// Search file contents with ripgrep's rules, printed as `rg -n --no-heading -H`.
    Grep(GrepArgs),
    /// Rank files and directories against a short fuzzy query, best first.
    Find(FindArgs),
    /// Memory-directory claims in the natives home.
    #[command(subcommand, disable_help_subcommand = true)]
    Claims(ClaimsCommand),
    /// Build-cache leases in the natives home.
    #[command(subcommand, disable_help_subcommand = true)]
    Cache(CacheCommand),
    /// Build-cache pools: K cache directories for one workspace.
    #[command(subcommand, disable_help_subcommand = true)]
    Pool(PoolCommand),
    /// Runs an orchestrator recorded in the natives home, with their
    /// worktrees.
    #[command(subcommand, disable_help_subcommand = true)]
    Runs(RunsCommand),
    /// Hand BRANCH over to run RUN, releasing the worktree that holds it.
    ///
    /// Released only when an earlier attempt at RUN's task (or a run natives
    /// recorded) holds it, nobody drives that run and nothing in it would be
    /// lost; the branch and its commits stay. Prints the decision and every
    /// reason.
    ///
    /// With --restore ID, put back the worktree a handover released, unless
    /// ownership changed since.
    ///
    /// Exit status: 0 released or restored, or nothing to do (with
    /// --dry-run: would release); 3 refused; 2 on error.
    Handover(HandoverArgs),
    /// Checkout evidence: print an archive's patch (validated first),
    /// restore it into a new directory, or capture one.
    SourceEvidence(SourceEvidenceArgs),
    /// One housekeeping pass: archive and remove a few inactive checkouts
    /// (review, judge and advisor seats, empty superseded attempts), naming
    /// every reason each other one stays.
    ///
    /// Runs only when `disk.auto_fold` and a positive
    /// `disk.worktree_reclaim_bytes` are set in the home's `config.json`
    /// (or given here). Exit 0 when the pass ran, 1 when it is not enabled
    /// (the reason on standard error), 2 on errors.
    Housekeeping(HousekeepingArgs),
    /// A run's archived seats: list every archived tip, historical ones
    /// included, or rebuild one in a new directory. Every archive is
    /// validated first; the original repository is not needed; the run is
    /// neither folded nor retired.
    Fold(FoldArgs),
    /// Print the completion script for a shell (bash, zsh, fish, ...).
    Completions {
        /// The shell to complete in.
        shell: Shell,
    },
}

/// How a scan walks, shared by glob, grep and find.
#[derive(Debug, Args)]
pub struct WalkArgs {
    /// Include dot-files and dot-directories (`.git` is never entered).
    #[arg(long)]
    pub hidden: bool,
    /// Do not honour .gitignore, .ignore and git excludes.
    #[arg(long)]
    pub no_ignore: bool,
}

impl WalkArgs {
    /// Change the library's scan policy where a flag asks, and only there:
    /// without flags a command walks as every search does by default.
    pub fn override_policy(&self, include_hidden: &mut bool, use_gitignore: &mut bool) {
        if self.hidden {
            *include_hidden = true;
        }
        if self.no_ignore {
            *use_gitignore = false;
        }
    }
}

/// `natives glob`.
#[derive(Debug, Args)]
pub struct GlobArgs {
    /// Glob pattern, case-sensitive; without `/` it matches at any depth.
    pub pattern: String,
    /// Directory to search (the current one when left out); printed paths
    /// start with it as typed.
    pub path: Option<OsString>,
    /// Another pattern: an entry matching any of them is printed. Repeat
    /// for more.
    #[arg(short = 'g', long = "glob", value_name = "PATTERN")]
    pub also: Vec<String>,
    /// Leave out entries matching PATTERN and everything below a directory
    /// matching it (`dist`, `**/*.d.ts`), as fd's `--exclude`. Repeat for
    /// more.
    #[arg(short = 'E', long = "exclude", value_name = "PATTERN")]
    pub exclude: Vec<String>,
    /// Which files the walk sees.
    #[command(flatten)]
    pub walk: WalkArgs,
    /// Only files (f), directories (d) or symlinks (l).
    #[arg(short = 't', long = "type", value_name = "TYPE")]
    pub file_type: Option<TypeArg>,
    /// Print at most N matches.
    #[arg(short = 'm', long, value_name = "N", value_parser = count, allow_negative_numbers = true)]
    pub max: Option<usize>,
    /// `mtime`: newest first; `path`: path order (without --sort).
    #[arg(long, value_name = "ORDER")]
    pub sort: Option<SortArg>,
    /// One JSON object per match, then a summary object.
    #[arg(long)]
    pub json: bool,
}

/// What `glob --type` selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TypeArg {
    /// Regular files.
    #[value(name = "f", alias = "file")]
    File,
    /// Directories.
    #[value(name = "d", aliases = ["dir", "directory"])]
    Dir,
    /// Symbolic links.
    #[value(name = "l", alias = "symlink")]
    Symlink,
}

/// How `glob --sort` orders matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SortArg {
    /// Newest first.
    Mtime,
    /// Path order.
    Path,
}

/// `natives find`.
#[derive(Debug, Args)]
pub struct FindArgs {
    /// What to look for (a leading `@` is dropped; words separated by
    /// spaces must all match).
    pub query: String,
    /// Directory to search (the current one when left out).
    pub path: Option<OsString>,
    /// Which files the walk sees.
    #[command(flatten)]
    pub walk: WalkArgs,
    /// Print at most N matches (the library's default, 100, when left out).
    #[arg(short = 'm', long, value_name = "N", value_parser = count, allow_negative_numbers = true)]
    pub max: Option<usize>,
    /// One JSON object per match, then a summary object.
    #[arg(long)]
    pub json: bool,
}

/// `natives grep`, with ripgrep's spellings.
#[derive(Debug, Args)]
pub struct GrepArgs {
    /// Regular expression (ripgrep syntax; `{`/`}` that cannot be a
    /// repetition are literal). With --files: the PATH to list.
    #[arg(required_unless_present = "files")]
    pub pattern: Option<String>,
    /// A directory to search recursively, or one file (the current
    /// directory when left out); printed paths start with it as typed.
    pub path: Option<OsString>,
    /// Case-insensitive.
    #[arg(short = 'i', long)]
    pub ignore_case: bool,
    /// Case-insensitive unless PATTERN has an uppercase letter.
    #[arg(short = 'S', long)]
    pub smart_case: bool,
    /// PATTERN is literal text.
    #[arg(short = 'F', long)]
    pub fixed_strings: bool,
    /// Matches may span lines.
    #[arg(short = 'U', long)]
    pub multiline: bool,
    /// Only matches surrounded by word boundaries.
    #[arg(short = 'w', long)]
    pub word_regexp: bool,
    /// Print the lines that do not match.
    #[arg(short = 'v', long)]
    pub invert_match: bool,
    /// Print each match alone, one per line.
    #[arg(short = 'o', long)]
    pub only_matching: bool,
    /// Lines of context around each match.
    #[arg(short = 'C', long, value_name = "NUM", value_parser = count, allow_negative_numbers = true)]
    pub context: Option<usize>,
    /// Lines of context after each match (wins over -C).
    #[arg(short = 'A', long, value_name = "NUM", value_parser = count, allow_negative_numbers = true)]
    pub after_context: Option<usize>,
    /// Lines of context before each match (wins over -C).
    #[arg(short = 'B', long, value_name = "NUM", value_parser = count, allow_negative_numbers = true)]
    pub before_context: Option<usize>,
    /// Only files matching GLOB (`*.ts`, `src/**`; `!GLOB` excludes);
    /// repeatable: any GLOB selects, a later `!GLOB` excludes.
    #[arg(short = 'g', long, value_name = "GLOB")]
    pub glob: Vec<String>,
    /// Only files of ripgrep's type TYPE (rust, ts, py, ...); repeatable:
    /// any of them.
    #[arg(short = 't', long = "type", value_name = "TYPE")]
    pub file_type: Vec<String>,
    /// Never files of ripgrep's type TYPE; repeatable.
    #[arg(short = 'T', long = "type-not", value_name = "TYPE")]
    pub type_not: Vec<String>,
    /// Stop searching each file after NUM matching lines, as ripgrep
    /// (`-m 0` searches nothing).
    #[arg(short = 'm', long, value_name = "NUM", value_parser = count, allow_negative_numbers = true)]
    pub max_count: Option<usize>,
    /// Print at most NUM results in all, across files.
    #[arg(long, value_name = "NUM", value_parser = count, allow_negative_numbers = true)]
    pub max_results: Option<usize>,
    /// Print each file with matches and its count (of matches with -o).
    #[arg(short = 'c', long, overrides_with_all = ["files_with_matches", "json"])]
    pub count: bool,
    /// Print only the paths of files with matches.
    #[arg(short = 'l', long, overrides_with_all = ["count", "json"])]
    pub files_with_matches: bool,
    /// Print the files that would be searched, without searching them.
    #[arg(long)]
    pub files: bool,
    /// Print line numbers (on unless -N).
    #[arg(short = 'n', long, overrides_with = "no_line_number")]
    pub line_number: bool,
    /// Do not print line numbers.
    #[arg(short = 'N', long, overrides_with = "line_number")]
    pub no_line_number: bool,
    /// Print the path with every line (always on).
    #[arg(short = 'H', long)]
    pub with_filename: bool,
    /// Print the path on every line rather than as a heading (always on).
    #[arg(long)]
    pub no_heading: bool,
    /// When to colour paths, line numbers and matches (auto: on a terminal).
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    pub color: ColorChoice,
    /// Which files the walk sees.
    #[command(flatten)]
    pub walk: WalkArgs,
    /// Print ripgrep's JSON Lines (`rg --json`): begin, match, context and
    /// end messages per file, then a summary. The last of --json, -c and -l
    /// wins, as in ripgrep.
    #[arg(long, overrides_with_all = ["count", "files_with_matches"], conflicts_with = "max_results")]
    pub json: bool,
    /// Print the counters and the time taken after the results; on a
    /// terminal, show progress while searching.
    #[arg(long)]
    pub stats: bool,
}

/// `natives claims ...`.
#[derive(Debug, Subcommand)]
pub enum ClaimsCommand {
    /// List every claimed memory folder with its zone and claims.
    List {
        /// Only the folders U holds a claim on.
        #[arg(long, value_name = "U")]
        uid: Option<String>,
        /// One JSON object per folder.
        #[arg(long)]
        json: bool,
        /// The natives home to read.
        #[command(flatten)]
        home: HomeArg,
    },
    /// Remove UID's claim on DIR (a folder, or a `memory-dir:` zone from the
    /// listing), after asking on standard input unless --yes.
    Release {
        /// The agent whose claim goes.
        uid: String,
        /// The memory folder, or its zone.
        dir: String,
        /// Do not ask.
        #[arg(short = 'y', long)]
        yes: bool,
        /// Release a claim another OS user made too.
        #[arg(long)]
        any_user: bool,
        /// The natives home to read.
        #[command(flatten)]
        home: HomeArg,
    },
}

/// `natives cache ...`.
#[derive(Debug, Subcommand)]
pub enum CacheCommand {
    /// Show every registered build cache: status, owner, since, identity.
    Show {
        /// One JSON object per cache.
        #[arg(long)]
        json: bool,
        /// The natives home to read.
        #[command(flatten)]
        home: HomeArg,
    },
    /// Delete DIR's least recently modified build output until it holds at
    /// most SIZE bytes, only while nobody uses it (exit 1 when busy).
    Prune {
        /// A registered cargo target directory.
        dir: PathBuf,
        /// Bytes, or a whole number with K, M, G or T (1024-based; KiB,
        /// MiB, GiB, TiB too).
        #[arg(long, value_name = "SIZE", value_parser = size)]
        limit: u64,
        /// List what would go; delete nothing.
        #[arg(long)]
        dry_run: bool,
        /// Do not ask, even at a terminal.
        #[arg(short = 'y', long)]
        yes: bool,
        /// The natives home to read.
        #[command(flatten)]
        home: HomeArg,
    },
    /// Clear the lease of an owner that is gone (a live one is refused).
    Release {
        /// The build cache directory.
        dir: PathBuf,
        /// The natives home to read.
        #[command(flatten)]
        home: HomeArg,
    },
}

/// `natives pool ...`.
#[derive(Debug, Subcommand)]
pub enum PoolCommand {
    /// Show POOL's members: state, lease, holder, identity, sizes, last
    /// use, how each was seeded (exit 1 when it has none).
    Status {
        /// The pool directory.
        pool: PathBuf,
        /// The pool as one JSON object.
        #[arg(long)]
        json: bool,
        /// The natives home to read.
        #[command(flatten)]
        home: HomeArg,
    },
    /// Remove idle members, least recently used first, until POOL's
    /// members take at most SIZE bytes; never a leased one (exit 1 when
    /// some stay over it).
    Prune {
        /// The pool directory.
        pool: PathBuf,
        /// Bytes, or a whole number with K, M, G or T (1024-based; KiB,
        /// MiB, GiB, TiB too).
        #[arg(long, value_name = "SIZE", value_parser = size)]
        budget: u64,
        /// List the members that would go; remove nothing.
        #[arg(long)]
        dry_run: bool,
        /// The natives home to read.
        #[command(flatten)]
        home: HomeArg,
    },
    /// Lease a member of POOL, refresh it for this worktree's HEAD, run
    /// COMMAND with CARGO_TARGET_DIR (and cargo's build directory) set to
    /// it, and release it. Exit status: COMMAND's; 2 when no member could
    /// be had.
    Run {
        /// The pool directory.
        pool: PathBuf,
        /// At most K members.
        #[arg(long, value_name = "K", default_value_t = 4, value_parser = count)]
        size: usize,
        /// Prune idle members beyond SIZE bytes once a member is held.
        #[arg(long, value_name = "SIZE", value_parser = size)]
        budget: Option<u64>,
        /// How a new member is filled: auto, reflink, copy or cold.
        #[arg(long, value_name = "HOW", default_value = "auto")]
        seed: String,
        /// Seconds to wait while every member is busy (0: fail at once).
        #[arg(long, value_name = "SECONDS", default_value_t = 600)]
        wait: u64,
        /// The worktree the build comes from (default: the one the current
        /// directory is in).
        #[arg(long, value_name = "DIR")]
        worktree: Option<PathBuf>,
        /// Where cargo finds the workspace, when not at the worktree's top
        /// (repeatable).
        #[arg(long, value_name = "PATH")]
        manifest_path: Vec<PathBuf>,
        /// Build in the member as it is, without refreshing it for this
        /// source (outside a git worktree, say).
        #[arg(long)]
        no_refresh: bool,
        /// The natives home to read.
        #[command(flatten)]
        home: HomeArg,
        /// The command and its arguments.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<OsString>,
    },
}

/// `natives runs ...`.
#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// List every recorded run, oldest first: task, status, whether it is
    /// driven, its candidate worktrees (exit 1 when there is none).
    List {
        /// Only the runs of task T.
        #[arg(long, value_name = "T")]
        task: Option<String>,
        /// One JSON object per run.
        #[arg(long)]
        json: bool,
        /// The natives home to read.
        #[command(flatten)]
        home: HomeArg,
    },
    /// Show run RUN: its task, status, driver, candidates, seats and history.
    Show {
        /// The run's id.
        run: String,
        /// The run as one JSON object.
        #[arg(long)]
        json: bool,
        /// The natives home to read.
        #[command(flatten)]
        home: HomeArg,
    },
}

/// `natives handover`.
#[derive(Debug, Args)]
pub struct HandoverArgs {
    /// The branch the new run needs, as `git branch` shows it.
    #[arg(required_unless_present = "restore")]
    pub branch: Option<String>,
    /// The run taking the branch over (recorded already).
    #[arg(long, value_name = "RUN", required_unless_present = "restore")]
    pub to: Option<String>,
    /// A worktree of the repository (the current directory when left out).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// RUN's task: its other runs are its earlier attempts (leave out for a
    /// review started by hand, which takes over only from a run natives
    /// recorded).
    #[arg(long, value_name = "T")]
    pub task: Option<String>,
    /// Untracked paths that may go with the worktree, as a gitignore
    /// pattern (`node_modules/`, `dist/`); repeat for more. Recorded in the
    /// release. Caches (a `CACHEDIR.TAG`) may go without it; nothing else
    /// the branch's HEAD does not hold may.
    #[arg(long, value_name = "PATTERN")]
    pub regenerable: Vec<String>,
    /// Only say what a release would do; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Put back the worktree handover ID released (the id a release
    /// printed, or `runs show` lists), instead of handing a branch over.
    #[arg(
        long,
        value_name = "ID",
        conflicts_with_all = ["branch", "to", "task", "regenerable", "dry_run", "repo"]
    )]
    pub restore: Option<String>,
    /// The answer as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// The natives home to read.
    #[command(flatten)]
    pub home: HomeArg,
}

/// `natives source-evidence ARCHIVE [--restore NEW_DIR]` and
/// `natives source-evidence capture ...`.
#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    disable_help_subcommand = true
)]
pub struct SourceEvidenceArgs {
    /// Capture an archive.
    #[command(subcommand)]
    pub command: Option<SourceEvidenceCommand>,
    /// An archive directory (`<run>/artifacts/source-evidence/<head>-<base>`);
    /// its binary patch is printed once it validates.
    #[arg(required = true, value_name = "ARCHIVE")]
    pub archive: Option<PathBuf>,
    /// Restore the archive into NEW_DIR (which must not exist) as an
    /// independent repository, instead of printing its patch.
    #[arg(long, value_name = "NEW_DIR")]
    pub restore: Option<PathBuf>,
    /// Print what the archive holds (and what was restored) as one JSON
    /// object instead of the patch.
    #[arg(long)]
    pub json: bool,
}

/// `natives source-evidence capture`.
#[derive(Debug, Subcommand)]
pub enum SourceEvidenceCommand {
    /// Archive the checkout at --worktree over --base under --out
    /// (`OUT/source-evidence/<head>-<base>`); exit 1 when not archived.
    Capture {
        /// The top of the checkout (a git worktree).
        #[arg(long, value_name = "DIR")]
        worktree: PathBuf,
        /// The commit the change is measured from (a revision, resolved in
        /// the checkout).
        #[arg(long, value_name = "REV")]
        base: String,
        /// The run's artifacts directory.
        #[arg(long, value_name = "ARTIFACTS_DIR")]
        out: PathBuf,
        /// Print the outcome as one JSON object.
        #[arg(long)]
        json: bool,
    },
}

/// `natives housekeeping`.
#[derive(Debug, Args)]
pub struct HousekeepingArgs {
    /// Say what would be evicted and why every other copy stays; touch
    /// nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Turn the pass on for this run (`disk.auto_fold`).
    #[arg(long)]
    pub auto_fold: bool,
    /// The most source bytes this pass unlinks
    /// (`disk.worktree_reclaim_bytes`).
    #[arg(long, value_name = "BYTES")]
    pub reclaim_bytes: Option<u64>,
    /// How long a copy must have been left alone to be evicted.
    #[arg(long, value_name = "SECONDS", default_value_t = natives_worktrees::eviction::QUIET_PERIOD.as_secs())]
    pub quiet_seconds: u64,
    /// The report as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// The natives home to read.
    #[command(flatten)]
    pub home: HomeArg,
}

/// `natives fold RUN --show-seats` and `natives fold RUN --restore-seat
/// HEAD --dest NEW_DIR`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("action").required(true).args(["show_seats", "restore_seat"]))]
pub struct FoldArgs {
    /// The run's id.
    pub run: String,
    /// List every archived tip of the run's copies: seat, head, tree,
    /// patch bytes, eviction phase (exit 1 when there is none).
    #[arg(long)]
    pub show_seats: bool,
    /// Rebuild the archived tip HEAD (a full commit id) as a new
    /// repository at --dest.
    #[arg(long, value_name = "HEAD", requires = "dest")]
    pub restore_seat: Option<String>,
    /// Where --restore-seat rebuilds (must not exist).
    #[arg(long, value_name = "NEW_DIR", requires = "restore_seat")]
    pub dest: Option<PathBuf>,
    /// One JSON object per tip (or for the restore).
    #[arg(long)]
    pub json: bool,
    /// The natives home to read.
    #[command(flatten)]
    pub home: HomeArg,
}

/// Where the claims, leases and runs are kept.
#[derive(Debug, Args)]
pub struct HomeArg {
    /// The natives home (else $NATIVES_HOME, else ~/.natives).
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
}

/// A count flag's value; the message completes "`--flag` ...".
fn count(text: &str) -> Result<usize, String> {
    text.parse()
        .map_err(|_| format!("takes a non-negative integer, got `{text}`"))
}

/// `--limit`'s value; the message completes "`--limit` ...".
fn size(text: &str) -> Result<u64, String> {
    parse_size(text).ok_or_else(|| {
        format!(
            "takes bytes, or a whole number with K, M, G or T \
             (1024-based; KiB, MiB, GiB, TiB too), got `{text}`"
        )
    })
}

/// A byte count: digits, then optionally a 1024-based unit in any case (`K`
/// or `KiB`, `M`/`MiB`, `G`/`GiB`, `T`/`TiB`). Decimal units (`KB`) and
/// fractions are refused rather than guessed at; `None` also on overflow.
fn parse_size(text: &str) -> Option<u64> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        "t" | "tib" => 40,
        _ => return None,
    };
    digits.parse::<u64>().ok()?.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn sizes_are_bytes_or_binary_units() {
        let table: &[(&str, Option<u64>)] = &[
            ("0", Some(0)),
            ("1536", Some(1536)),
            ("1K", Some(1024)),
            ("1k", Some(1024)),
            ("2KiB", Some(2048)),
            ("3M", Some(3 << 20)),
            ("3mib", Some(3 << 20)),
            ("5G", Some(5 << 30)),
            ("5GiB", Some(5 << 30)),
            ("2T", Some(2 << 40)),
            ("2TiB", Some(2 << 40)),
            ("18446744073709551615", Some(u64::MAX)),
            ("16777216T", None),
            ("18446744073709551616", None),
            ("", None),
            ("G", None),
            ("1.5G", None),
            ("1 G", None),
            ("-1", None),
            ("+1", None),
            ("1KB", None),
            ("1GB", None),
            ("10X", None),
        ];
        for &(text, expected) in table {
            assert_eq!(parse_size(text), expected, "{text:?}");
        }
    }
}
