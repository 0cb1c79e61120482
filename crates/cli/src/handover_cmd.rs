//! `natives handover BRANCH --to RUN`: release the worktree that holds a
//! branch a new run needs, as an orchestrator's retry does, or (`--dry-run`)
//! say what a release would do; `natives handover --restore ID`: put back
//! what a handover released, found by its id (the orchestrator that asked
//! for it may be gone).
//!
//! The library decides everything (whose worktree it is, whether anything
//! would be lost) and words it; this command prints its answer: the one-line
//! message, then for a refusal every reason with its code, for a release
//! what restoring it would need. `--json` prints the library's view, the
//! object the addon's `releaseWorktree` (or `restoreHandover`) resolves
//! with. Exit status: 0 released, restored, would release, or nothing to
//! do; 3 refused; 2 on error.

use std::{io::Write, path::PathBuf};

use natives_core::CancelToken;
use natives_system::paths;
use natives_worktrees::{
    git::Git,
    handover::{Released, Request},
    registry::Registry,
    view::{HandoverKind, HandoverView, RestoreKind, RestoreView},
};

use crate::{
    Outcome,
    args::HandoverArgs,
    common::{Output, write_json},
};

pub fn run(args: HandoverArgs) -> Result<Outcome, String> {
    let home = paths::home(args.home.home.as_deref()).map_err(|err| err.to_string())?;
    let registry = Registry::open(&home);
    let git = Git::new().map_err(|err| err.to_string())?;
    if let Some(handover) = &args.restore {
        return restore(&registry, &git, handover, args.json);
    }
    let (Some(branch), Some(to_run)) = (args.branch, args.to) else {
        unreachable!("clap requires BRANCH and --to without --restore");
    };
    let request = Request {
        repo: args.repo.unwrap_or_else(|| PathBuf::from(".")),
        branch,
        to_run,
        task: args.task,
        regenerable: args.regenerable,
        dry_run: args.dry_run,
    };
    let answer = request
        .run(&registry, &git, &CancelToken::new())
        .map_err(|err| err.to_string())?;
    let view = HandoverView::of(&request, &answer);
    let mut out = Output::stdout();
    if args.json {
        out.write(|w| write_json(w, &view));
    } else {
        out.write(|w| print(w, &view));
    }
    out.finish()?;
    Ok(match view.kind {
        HandoverKind::Refused => Outcome::Refused,
        _ => Outcome::Matched,
    })
}

/// `--restore ID`: the handover found by its id in the runs' records, and
/// restored (the object `restoreHandover` resolves with, for `--json`).
fn restore(registry: &Registry, git: &Git, handover: &str, json: bool) -> Result<Outcome, String> {
    let released = Released::find(registry, handover).map_err(|err| err.to_string())?;
    let restore = released
        .restore(registry, git, &CancelToken::new())
        .map_err(|err| err.to_string())?;
    let view = RestoreView::of(&released, &restore);
    let mut out = Output::stdout();
    if json {
        out.write(|w| write_json(w, &view));
    } else {
        out.write(|w| {
            writeln!(w, "{}", view.message)?;
            for reason in view.reasons.iter().flatten() {
                writeln!(w, "  {}: {}", reason.code, reason.message)?;
            }
            Ok(())
        });
    }
    out.finish()?;
    Ok(match view.kind {
        RestoreKind::Refused => Outcome::Refused,
        RestoreKind::Restored => Outcome::Matched,
    })
}

/// The answer for a person: the message, then every reason (a refusal) or
/// the handover to restore from (a release).
fn print(out: &mut dyn Write, view: &HandoverView) -> std::io::Result<()> {
    writeln!(out, "{}", view.message)?;
    for reason in view.reasons.iter().flatten() {
        writeln!(out, "  {}: {}", reason.code, reason.message)?;
    }
    if let Some(released) = &view.released {
        writeln!(
            out,
            "  handover {} (run {}, candidate {}, tip {})",
            released.handover, released.run, released.candidate, released.tip
        )?;
    }
    Ok(())
}
