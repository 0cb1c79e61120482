//! `natives handover BRANCH --to RUN`: release the worktree that holds a
//! branch a new run needs, as an orchestrator's retry does, or (`--dry-run`)
//! say what a release would do.
//!
//! The library decides everything (whose worktree it is, whether anything
//! would be lost) and words it; this command prints its answer: the one-line
//! message, then for a refusal every reason with its code, for a release
//! what restoring it would need. `--json` prints the library's view, the
//! object the addon's `releaseWorktree` resolves with. Exit status: 0
//! released, would release, or nothing to do; 3 refused; 2 on error.

use std::{io::Write, path::PathBuf};

use natives_core::CancelToken;
use natives_ownership::paths;
use natives_worktrees::{
    git::Git,
    handover::Request,
    registry::Registry,
    view::{HandoverKind, HandoverView},
};

use crate::{
    Outcome,
    args::HandoverArgs,
    common::{Output, write_json},
};

pub fn run(args: HandoverArgs) -> Result<Outcome, String> {
    let home = paths::home(args.home.home.as_deref()).map_err(|err| err.to_string())?;
    let registry = Registry::open(&home);
    let request = Request {
        repo: args.repo.unwrap_or_else(|| PathBuf::from(".")),
        branch: args.branch,
        to_run: args.to,
        task: args.task,
        dry_run: args.dry_run,
    };
    let git = Git::new().map_err(|err| err.to_string())?;
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

/// The answer for a person: the message, then every reason (a refusal) or
/// the handover to restore from (a release).
fn print(out: &mut dyn Write, view: &HandoverView) -> std::io::Result<()> {
    writeln!(out, "{}", view.message)?;
    for reason in &view.reasons {
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
