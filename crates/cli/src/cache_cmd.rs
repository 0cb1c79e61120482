//! `natives cache show|prune|release`: the operator's view of build-cache
//! leases, a prune of build output that runs only while holding the cache,
//! and the human "release this cache" action for an owner that is gone.
//!
//! What may be pruned is the library's decision (a registered cargo target
//! directory, never a home, the natives home or a repository), so this
//! front and the addon refuse alike. A person at a terminal is shown what
//! would go and asked first (`--yes` skips that), as `claims release` asks.
//!
//! Measuring and pruning a large cache takes a while: at a terminal a
//! progress line says which is under way (never on a pipe).
//!
//! The store is the one under `$NATIVES_HOME` (else `~/.natives`), or
//! `--home`. Exit status: `show` 0 when any cache is registered, 1 when none
//! is; `prune` 0 when it ran (or `--dry-run` listed), 1 when the cache was
//! busy or the person declined, and nothing was done; `release` 0 when it
//! released a record, 1 when there was none; 2 on every error, including a
//! prune refused because the directory is not a build cache and a release
//! refused because a live owner holds the cache.

use std::{
    io::{self, IsTerminal, Write},
    path::{Path, PathBuf},
};

use natives_ownership::{
    Entry, EntryStatus, Leases, Owner,
    fresh::Identity,
    lease::{Kept, PrunePlan, PruneReport, Released},
    view::CacheEntryView,
};
use natives_system::{paths, process::now_ms};

use crate::{
    Outcome,
    args::CacheCommand,
    common::{Output, age, ask, human_size, write_json, write_table},
    progress::Progress,
};

/// Table headings, in column order.
const HEADINGS: [&str; 6] = [
    "DIRECTORY",
    "STATUS",
    "OWNER",
    "PID@HOST",
    "SINCE",
    "IDENTITY",
];

/// Hex digits of a head commit shown in the table; `--json` has it whole.
const SHORT_HEAD: usize = 12;

pub fn run(command: CacheCommand) -> Result<Outcome, String> {
    match command {
        CacheCommand::Show { json, home } => show(json, home.home),
        CacheCommand::Prune {
            dir,
            limit,
            dry_run,
            yes,
            home,
        } => prune(&dir, limit, Confirm { dry_run, yes }, home.home),
        CacheCommand::Release { dir, home } => release(&dir, home.home),
    }
}

fn show(json: bool, home: Option<PathBuf>) -> Result<Outcome, String> {
    let leases = open(home)?;
    let entries = leases.inventory().map_err(|err| err.to_string())?;
    let mut out = Output::stdout();
    if json {
        for entry in &entries {
            out.write(|w| write_json(w, &CacheEntryView::from(entry)));
        }
    } else if entries.is_empty() {
        let home = leases.home().display();
        out.write(|w| writeln!(w, "no build caches registered under {home}"));
    } else {
        out.write(|w| print_table(w, &entries));
    }
    out.finish()?;
    Ok(Outcome::from_count(entries.len() as u64))
}

/// Aligned columns, one row per cache; an unknown record's reason on the
/// line below its row, and a footnote for the output-lease mark.
fn print_table(out: &mut dyn Write, entries: &[Entry]) -> io::Result<()> {
    let now = now_ms();
    let rows: Vec<[String; 6]> = entries.iter().map(|e| row(e, now)).collect();
    write_table(out, HEADINGS, &rows, &|i, out| match &entries[i].status {
        EntryStatus::Unknown(why) => writeln!(out, "  why: {why}"),
        _ => Ok(()),
    })?;
    if entries.iter().any(|e| e.outputs_held) {
        writeln!(out, "* process cleanup holds the output lease")?;
    }
    Ok(())
}

/// A free cache shows its last owner, and SINCE is when that owner released
/// it; otherwise SINCE is when the current holder acquired it.
fn row(entry: &Entry, now: u64) -> [String; 6] {
    let dir = entry.dir.as_ref().map_or_else(
        || format!("(unnamed) {}", entry.slug),
        |d| d.display().to_string(),
    );
    let mark = if entry.outputs_held { "*" } else { "" };
    let (owner, pid_host) = entry.owner.as_ref().map_or(("-".into(), "-".into()), |o| {
        (
            format!("{}/{}/{}", o.run, o.node, o.seat),
            format!("{}@{}", o.pid, o.host),
        )
    });
    let since = match entry.status {
        EntryStatus::Free => entry.released_at_ms,
        EntryStatus::Active | EntryStatus::Stale => entry.since_ms,
        EntryStatus::Unknown(_) => None,
    };
    let since = since.map_or("-".into(), |at| {
        format!("{} ago", age(now.saturating_sub(at)))
    });
    [
        dir,
        format!("{}{mark}", entry.status.name()),
        owner,
        pid_host,
        since,
        entry.identity.as_ref().map_or("-".into(), short_identity),
    ]
}

fn short_identity(identity: &Identity) -> String {
    let head: String = identity.head.chars().take(SHORT_HEAD).collect();
    format!("{} @ {head}", identity.worktree.display())
}

/// How a prune is confirmed: listed only, or done without asking.
struct Confirm {
    dry_run: bool,
    yes: bool,
}

fn prune(
    dir: &Path,
    limit: u64,
    confirm: Confirm,
    home: Option<PathBuf>,
) -> Result<Outcome, String> {
    let leases = open(home)?;
    let owner = Owner::current("cli", "prune", "operator");
    // A person at a terminal sees what would go and agrees first.
    let asking = !confirm.yes && io::stdin().is_terminal();
    let shown = dir.display();
    let pruned = if confirm.dry_run || asking {
        let plan = Progress::around(format!("measuring {shown}"), || {
            leases.plan_prune(dir, limit)
        })
        .map_err(|err| err.to_string())?;
        if confirm.dry_run {
            print_plan(dir, &plan);
            return Ok(Outcome::Matched);
        }
        if !ask(&question(dir, &plan))? {
            eprintln!("natives: not pruned");
            return Ok(Outcome::NoMatch);
        }
        Progress::around(format!("pruning {shown}"), || {
            leases.prune_planned(&plan, &owner)
        })
    } else {
        Progress::around(format!("pruning {shown}"), || {
            leases.maintenance_prune_or_busy(dir, limit, &owner)
        })
    };
    match pruned.map_err(|err| err.to_string())? {
        Ok(report) => {
            print_report(dir, &report);
            Ok(Outcome::Matched)
        }
        Err(busy) => {
            eprintln!("natives: {}; nothing pruned", busy.to_error(dir).message());
            Ok(Outcome::NoMatch)
        }
    }
}

/// The dry run: each file that would be removed, then the totals.
fn print_plan(dir: &Path, plan: &PrunePlan) {
    let mut out = Output::stdout();
    for file in &plan.files {
        out.write(|w| writeln!(w, "would remove {} ({} B)", file.path.display(), file.bytes));
    }
    out.write(|w| print_kept(w, "would keep", &plan.kept));
    out.write(|w| {
        writeln!(
            w,
            "would prune {}: {} -> {} bytes ({} -> {}); files to remove: {}",
            dir.display(),
            plan.bytes_before,
            plan.bytes_after,
            human_size(plan.bytes_before),
            human_size(plan.bytes_after),
            plan.files.len()
        )
    });
    let _ = out.finish();
}

/// What a person is asked before a prune.
fn question(dir: &Path, plan: &PrunePlan) -> String {
    let kept = match plan.kept.len() {
        0 => String::new(),
        n => format!(" ({n} kept: a repository or of unknown purpose)"),
    };
    format!(
        "prune {}: remove {} files of build output, {} -> {}{kept}?",
        dir.display(),
        plan.files.len(),
        human_size(plan.bytes_before),
        human_size(plan.bytes_after)
    )
}

fn print_report(dir: &Path, report: &PruneReport) {
    let mut out = Output::stdout();
    out.write(|w| print_kept(w, "kept", &report.kept));
    out.write(|w| {
        writeln!(
            w,
            "pruned {}: {} -> {} bytes ({} -> {}); files removed: {}",
            dir.display(),
            report.bytes_before,
            report.bytes_after,
            human_size(report.bytes_before),
            human_size(report.bytes_after),
            report.files_removed
        )
    });
    let _ = out.finish();
}

/// One line per file or directory a prune keeps inside the profiles, with
/// why (`kept PATH (repository): a git repository, kept whole`).
fn print_kept(out: &mut dyn Write, verb: &str, kept: &[Kept]) -> io::Result<()> {
    for kept in kept {
        let why = kept.why;
        writeln!(
            out,
            "{verb} {} ({}): {why}",
            kept.path.display(),
            why.name()
        )?;
    }
    Ok(())
}

fn release(dir: &Path, home: Option<PathBuf>) -> Result<Outcome, String> {
    let leases = open(home)?;
    let shown = dir.display();
    match leases.release_unowned(dir).map_err(|err| err.to_string())? {
        Released::Nothing => {
            eprintln!("natives: {shown}: no lease record; nothing released");
            return Ok(Outcome::NoMatch);
        }
        Released::Dead(record) => println!(
            "released {shown}: removed the record of {}, which is gone",
            record.owner.describe()
        ),
        Released::MovedAside { to, why } => println!(
            "released {shown}: moved its unreadable record ({why}) aside to {}",
            to.display()
        ),
    }
    Ok(Outcome::Matched)
}

fn open(home: Option<PathBuf>) -> Result<Leases, String> {
    let home = paths::home(home.as_deref()).map_err(|err| err.to_string())?;
    Leases::open(&home).map_err(|err| err.to_string())
}
