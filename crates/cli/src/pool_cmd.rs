//! `natives pool status|prune|run`: a build-cache pool for scripts and
//! humans. `status` shows the members; `prune` removes idle ones to a disk
//! budget; `run` leases a member, refreshes it for the current worktree's
//! HEAD, runs a command with the member's environment and releases it.
//!
//! Which member, how a new one is filled, what may be removed: all the
//! library's decisions (`natives_ownership::pool`), so this front and the
//! addon agree. What `run` says about the member goes to standard error,
//! so standard output is the command's.
//!
//! Exit status: `status` 0 when the pool has members, 1 when it has none;
//! `prune` 0 when the members fit the budget after it (or `--dry-run`
//! listed), 1 when some stay over it; `run` the command's status (128 + the
//! signal when a signal ended it), 2 on every error.

use std::{
    io::{self, Write},
    os::unix::process::ExitStatusExt,
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use natives_ownership::{
    CancelToken, Leases, Owner,
    fresh::{Freshness, Refresh, Target},
    pool::{PoolInventory, PoolMember, PoolOptions, PoolPruneReport, SeedStrategy},
    view::PoolInventoryView,
};
use natives_system::{paths, process::now_ms};
use natives_worktrees::git::Git;

use crate::{
    Outcome,
    args::PoolCommand,
    common::{Output, age, human_size, write_table},
};

/// Table headings, in column order.
const HEADINGS: [&str; 8] = [
    "MEMBER",
    "STATE",
    "LEASE",
    "HOLDER",
    "LOGICAL",
    "ALLOCATED",
    "LAST USED",
    "IDENTITY",
];

/// Hex digits of a head commit shown in the table; `--json` has it whole.
const SHORT_HEAD: usize = 12;

pub fn run(command: PoolCommand) -> Result<Outcome, String> {
    match command {
        PoolCommand::Status { pool, json, home } => status(&pool, json, home.home),
        PoolCommand::Prune {
            pool,
            budget,
            dry_run,
            home,
        } => prune(&pool, budget, dry_run, home.home),
        PoolCommand::Run {
            pool,
            size,
            budget,
            seed,
            wait,
            worktree,
            manifest_path,
            no_refresh,
            home,
            command,
        } => {
            let options = PoolOptions {
                size,
                budget_bytes: budget,
                seed: SeedStrategy::parse(&seed).map_err(|err| err.to_string())?,
                refresh: Refresh::OwnersSource,
                workspaces: Target::of_manifests(manifest_path),
            };
            let source = (!no_refresh).then_some(worktree);
            let wait = Duration::from_secs(wait);
            run_in_member(&pool, options, wait, source, home.home, &command)
        }
    }
}

fn status(pool: &Path, json: bool, home: Option<PathBuf>) -> Result<Outcome, String> {
    let inventory = open(home)?
        .pool_inventory(pool)
        .map_err(|err| err.to_string())?;
    let mut out = Output::stdout();
    if json {
        // The library's view, so the addon and this front name every field alike.
        let shown = serde_json::to_string(&PoolInventoryView::from(&inventory))
            .map_err(|err| err.to_string())?;
        out.write(|w| writeln!(w, "{shown}"));
    } else if inventory.members.is_empty() {
        let dir = inventory.dir.display();
        out.write(|w| writeln!(w, "no members in the pool {dir}"));
    } else {
        out.write(|w| print_table(w, &inventory));
    }
    out.finish()?;
    Ok(Outcome::from_count(inventory.members.len() as u64))
}

fn print_table(out: &mut dyn Write, inventory: &PoolInventory) -> io::Result<()> {
    let now = now_ms();
    let rows: Vec<[String; 8]> = inventory.members.iter().map(|m| row(m, now)).collect();
    write_table(out, HEADINGS, &rows, &|_, _| Ok(()))?;
    let usage = inventory.usage();
    writeln!(
        out,
        "members: {} of at most {}; {} logical, {} on disk (blocks members share counted once)",
        inventory.members.len(),
        inventory.size.map_or("?".to_owned(), |k| k.to_string()),
        human_size(usage.logical),
        human_size(inventory.physical),
    )
}

fn row(member: &PoolMember, now: u64) -> [String; 8] {
    let holder = member.holder.as_ref().map_or("-".into(), |o| {
        format!("{}/{}/{} ({})", o.run, o.node, o.seat, o.pid)
    });
    let identity = member.identity.as_ref().map_or("-".into(), |i| {
        let head: String = i.head.chars().take(SHORT_HEAD).collect();
        format!("{} @ {head}", i.worktree.display())
    });
    let used = member.last_used_ms.map_or("-".into(), |at| {
        format!("{} ago", age(now.saturating_sub(at)))
    });
    [
        member.name.clone(),
        member.status.name().to_owned(),
        member.lease.name().to_owned(),
        holder,
        human_size(member.usage.logical),
        human_size(member.usage.allocated),
        used,
        identity,
    ]
}

fn prune(
    pool: &Path,
    budget: u64,
    dry_run: bool,
    home: Option<PathBuf>,
) -> Result<Outcome, String> {
    let leases = open(home)?;
    let shown = pool.display();
    if dry_run {
        let planned = leases
            .plan_pool_prune(pool, budget)
            .map_err(|err| err.to_string())?;
        for member in &planned {
            let size = human_size(member.usage.allocated);
            println!("would remove {} ({size})", member.name);
        }
        println!("would remove {} members of {shown}", planned.len());
        return Ok(Outcome::Matched);
    }
    let owner = Owner::current("cli", "pool-prune", "operator");
    let report = leases
        .prune_pool(pool, budget, &owner)
        .map_err(|err| err.to_string())?;
    print_prune(pool, &report);
    Ok(if report.bytes_after <= budget {
        Outcome::Matched
    } else {
        Outcome::NoMatch
    })
}

fn print_prune(pool: &Path, report: &PoolPruneReport) {
    for name in &report.discarded {
        println!("removed {name}: left half-done by a process that died");
    }
    for member in &report.pruned {
        println!(
            "removed {} ({})",
            member.name,
            human_size(member.usage.allocated)
        );
    }
    for kept in &report.kept {
        println!("kept {}: {}", kept.name, kept.why);
    }
    println!(
        "pruned {}: {} -> {} on disk",
        pool.display(),
        human_size(report.bytes_before),
        human_size(report.bytes_after)
    );
}

/// Lease a member, run `command` in it, release it; the command's status.
fn run_in_member(
    pool: &Path,
    options: PoolOptions,
    wait: Duration,
    source: Option<Option<PathBuf>>,
    home: Option<PathBuf>,
    command: &[std::ffi::OsString],
) -> Result<Outcome, String> {
    let leases = open(home)?;
    let mut owner = Owner::current("cli", "pool-run", "operator");
    let mut options = options;
    match source {
        Some(worktree) => {
            let (top, head) = worktree_source(worktree)?;
            owner = owner.building(top, head);
        }
        None => options.refresh = Refresh::Skip,
    }
    let cancel = CancelToken::new();
    let waiting = Leases::budget_wait(&cancel, Some(wait));
    let lease = leases
        .acquire_from_pool(pool, &owner, &options, waiting.as_ref(), &cancel)
        .map_err(|err| err.to_string())?;
    eprintln!("natives: {}", describe(&lease));
    let (program, args) = command.split_first().expect("clap requires a command");
    let status = Command::new(program)
        .args(args)
        .envs(lease.env())
        .status()
        .map_err(|err| format!("{}: {err}", program.to_string_lossy()));
    lease.release().map_err(|err| err.to_string())?;
    let status = status?;
    let code = status
        .code()
        .or_else(|| status.signal().map(|signal| 128 + signal))
        .unwrap_or(1);
    Ok(Outcome::Exited(u8::try_from(code).unwrap_or(1)))
}

/// The top of the worktree `dir` (default: the current directory) is in,
/// and its HEAD.
fn worktree_source(dir: Option<PathBuf>) -> Result<(PathBuf, String), String> {
    let start = match dir {
        Some(dir) => dir,
        None => std::env::current_dir().map_err(|err| err.to_string())?,
    };
    let git = Git::new().map_err(|err| err.to_string())?;
    let cancel = CancelToken::new();
    for candidate in start.ancestors() {
        let dirs = git
            .dirs(candidate, &cancel)
            .map_err(|err| err.to_string())?;
        if let Some(dirs) = dirs {
            let head = git
                .resolve(&dirs.top, "HEAD", &cancel)
                .map_err(|err| err.to_string())?
                .ok_or_else(|| format!("{}: HEAD names no commit yet", dirs.top.display()))?;
            return Ok((dirs.top, head));
        }
    }
    Err(format!(
        "{}: not in a git worktree, so the member cannot be refreshed for its source; \
         pass --no-refresh to build in it as it is",
        start.display()
    ))
}

/// What the member is and how it came to be, in one line.
fn describe(lease: &natives_ownership::pool::PoolLease) -> String {
    let mut line = format!("building in {} ({})", lease.member(), lease.dir().display());
    if let Some(seed) = lease.seed() {
        let from = seed.from.as_deref().unwrap_or("nothing");
        line += &format!(
            "; new: {} from {from} in {} ms ({})",
            seed.strategy.name(),
            seed.took_ms,
            seed.reason
        );
        if seed.left_out > 0 {
            line += &format!(
                "; {} files a cargo was writing left out, to be built here",
                seed.left_out
            );
        }
    }
    match lease.freshness() {
        Some(Freshness::Refreshed { cleaned }) if !cleaned.is_empty() => {
            line += &format!("; refreshed, cleaned {}", cleaned.join(", "));
        }
        _ => {}
    }
    line
}

fn open(home: Option<PathBuf>) -> Result<Leases, String> {
    let home = paths::home(home.as_deref()).map_err(|err| err.to_string())?;
    Leases::open(&home).map_err(|err| err.to_string())
}
