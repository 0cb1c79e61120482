//! `natives housekeeping` (one eviction pass) and `natives fold RUN
//! --show-seats | --restore-seat HEAD --dest NEW_DIR` (the archived seats
//! a pass leaves). Every decision is the library's
//! (`natives_worktrees::eviction`); `--json` prints its report and views.
//!
//! Exit status: `housekeeping` 0 when the pass ran (dry or not), 1 when it
//! is not enabled; `fold --show-seats` 0 when any tip is archived, 1 when
//! none is; `fold --restore-seat` 0 once restored; 2 on every error (an
//! archive or record failing validation is `EBADMSG`).

use std::{io::Write, path::Path};

use natives_system::paths;
use natives_worktrees::{
    CancelToken,
    eviction::{self, Options, Report, seats},
    git::Git,
    registry::Registry,
    view::{EvictionReportView, SeatTipView},
};
use serde_json::json;

use crate::{
    Outcome,
    args::{FoldArgs, HousekeepingArgs},
    common::Output,
};

pub fn housekeeping(args: HousekeepingArgs) -> Result<Outcome, String> {
    let home = paths::home(args.home.home.as_deref()).map_err(|err| err.to_string())?;
    let git = Git::new().map_err(|err| err.to_string())?;
    let options = Options {
        auto_fold: args.auto_fold.then_some(true),
        reclaim_bytes: args.reclaim_bytes,
        dry_run: args.dry_run,
        quiet_period: std::time::Duration::from_secs(args.quiet_seconds),
        ..Options::default()
    };
    let report = eviction::pass(&home, &git, &options, &CancelToken::new())
        .map_err(|err| err.to_string())?;
    let mut out = Output::stdout();
    if args.json {
        let line = serde_json::to_string(&EvictionReportView::from(&report))
            .map_err(|err| err.to_string())?;
        out.write(|w| writeln!(w, "{line}"));
    } else {
        out.write(|w| print_report(w, &report));
    }
    out.finish()?;
    match &report.disabled {
        Some(why) => {
            if !args.json {
                eprintln!("natives: housekeeping is not enabled: {why}");
            }
            Ok(Outcome::NoMatch)
        }
        None => Ok(Outcome::Matched),
    }
}

fn print_report(w: &mut dyn Write, report: &Report) -> std::io::Result<()> {
    if report.disabled.is_some() {
        return Ok(());
    }
    print_evicted(w, report)?;
    for retained in &report.retained {
        writeln!(
            w,
            "kept {} of run {} ({}):",
            retained.seat,
            retained.run,
            retained.path.display()
        )?;
        for blocker in &retained.blockers {
            writeln!(w, "  {blocker}")?;
        }
    }
    if let Some(retention) = &report.retention {
        writeln!(
            w,
            "visited {} runs; unlinked {} bytes ({} allocated, estimated); evidence grew {} bytes; {} copies evicted, {} empty roots removed",
            retention.runs_visited,
            retention.source_logical_bytes,
            retention.source_allocated_bytes,
            retention.evidence_logical_bytes,
            retention.copies_evicted,
            retention.empty_roots_removed
        )?;
    }
    Ok(())
}

/// The copies evicted and the empty roots removed (or that would be, in a
/// dry run).
fn print_evicted(w: &mut dyn Write, report: &Report) -> std::io::Result<()> {
    let (would, removed) = match report.dry_run {
        true => ("would evict", "would remove"),
        false => ("evicted", "removed"),
    };
    for evicted in &report.evicted {
        let archive = evicted
            .archive
            .as_ref()
            .map(|a| format!(", evidence {}", a.display()));
        writeln!(
            w,
            "{would} {} of run {} ({}): {} bytes{}",
            evicted.seat,
            evicted.run,
            evicted.path.display(),
            evicted.logical_bytes,
            archive.unwrap_or_default()
        )?;
    }
    for root in &report.empty_roots {
        writeln!(w, "{removed} empty root {}", root.display())?;
    }
    Ok(())
}

pub fn fold(args: FoldArgs) -> Result<Outcome, String> {
    let home = paths::home(args.home.home.as_deref()).map_err(|err| err.to_string())?;
    let registry = Registry::open(&home);
    let git = Git::new().map_err(|err| err.to_string())?;
    let cancel = CancelToken::new();
    if let (Some(head), Some(dest)) = (&args.restore_seat, &args.dest) {
        return restore_seat(&args, &registry, &git, head, dest, &cancel);
    }
    let mut out = Output::stdout();
    let tips = seats::show(&registry, &git, &args.run, &cancel).map_err(|err| err.to_string())?;
    for tip in &tips {
        let line = match args.json {
            true => {
                serde_json::to_string(&SeatTipView::from(tip)).map_err(|err| err.to_string())?
            }
            false => tip_line(tip),
        };
        out.write(|w| writeln!(w, "{line}"));
    }
    out.finish()?;
    Ok(Outcome::from_count(tips.len() as u64))
}

/// Restore the seat archived at `head` into `dest`, and say so.
fn restore_seat(
    args: &FoldArgs,
    registry: &Registry,
    git: &Git,
    head: &str,
    dest: &Path,
    cancel: &CancelToken,
) -> Result<Outcome, String> {
    let mut out = Output::stdout();
    let restored = seats::restore(registry, git, &args.run, head, dest, cancel)
        .map_err(|err| err.to_string())?;
    if args.json {
        let line = json!({"run": args.run, "head": head, "restored": restored});
        out.write(|w| writeln!(w, "{line}"));
    } else {
        out.write(|w| {
            writeln!(
                w,
                "restored {head} of run {} into {} (tree {})",
                args.run,
                restored.dir.display(),
                restored.source_tree
            )
        });
    }
    out.finish()?;
    Ok(Outcome::Matched)
}

/// An archived seat's tip as a tab-separated line.
fn tip_line(tip: &seats::SeatTip) -> String {
    let patch = tip
        .patch_bytes
        .map_or("-".to_owned(), |bytes| bytes.to_string());
    let phase = serde_json::to_value(tip.phase).ok();
    let phase = phase.as_ref().and_then(|p| p.as_str()).unwrap_or("?");
    format!(
        "{}\t{}\ttree {}\tpatch {patch}\t{phase}\t{}",
        tip.seat,
        tip.head,
        tip.tree,
        tip.seen_as.join(",")
    )
}
