//! `natives source-evidence`: checkout evidence for operators.
//!
//! `ARCHIVE` prints the archive's binary patch (`> saved.patch`), only
//! once the archive validates; `ARCHIVE --restore NEW_DIR` rebuilds the
//! source as a new, independent repository; `capture` archives a checkout
//! under a run's artifacts directory. Every decision is the library's
//! (`natives_worktrees::evidence`); `--json` prints its views.
//!
//! Exit status: 0 when the archive was printed, restored, published or
//! found already published with the same bytes; 1 when a capture was
//! refused (the reason on standard error, or in the JSON); 2 on every
//! error, an archive failing validation (`EBADMSG`) included.

use natives_worktrees::{
    CancelToken,
    evidence::{self, Archive, Bounds, Captured},
    git::Git,
};
use serde_json::json;

use crate::{
    Outcome,
    args::{SourceEvidenceArgs, SourceEvidenceCommand},
    common::Output,
};

pub fn run(args: SourceEvidenceArgs) -> Result<Outcome, String> {
    let git = Git::new().map_err(|err| err.to_string())?;
    let cancel = CancelToken::new();
    if let Some(SourceEvidenceCommand::Capture {
        worktree,
        base,
        out,
        json,
    }) = args.command
    {
        let captured = evidence::capture(&git, &worktree, &base, &out, &Bounds::default(), &cancel)
            .map_err(|err| err.to_string())?;
        return print_capture(&captured, json);
    }
    let dir = args.archive.ok_or("source-evidence: ARCHIVE is required")?;
    let archive = Archive::open(&git, &dir, &cancel).map_err(|err| err.to_string())?;
    let mut out = Output::stdout();
    match (args.restore, args.json) {
        (Some(dest), json) => {
            let restored = archive
                .restore(&git, &dest, &cancel)
                .map_err(|err| err.to_string())?;
            if json {
                let line = json!({"archive": archive.view(), "restored": restored});
                out.write(|w| writeln!(w, "{line}"));
            } else {
                out.write(|w| {
                    writeln!(
                        w,
                        "restored {} into {}: branch source at {} (tree {}), branch base at {}",
                        dir.display(),
                        restored.dir.display(),
                        restored.source_commit,
                        restored.source_tree,
                        restored.base_commit
                    )
                });
            }
        }
        (None, true) => {
            let line = serde_json::to_string(&archive.view()).map_err(|err| err.to_string())?;
            out.write(|w| writeln!(w, "{line}"));
        }
        (None, false) => out.write(|w| w.write_all(archive.patch())),
    }
    out.finish()?;
    Ok(Outcome::Matched)
}

fn print_capture(captured: &Captured, json: bool) -> Result<Outcome, String> {
    let mut out = Output::stdout();
    let view = captured.view();
    if json {
        let line = serde_json::to_string(&view).map_err(|err| err.to_string())?;
        out.write(|w| writeln!(w, "{line}"));
    } else if let Some(archive) = &view.archive {
        out.write(|w| {
            writeln!(w, "{} {}", view.outcome, archive.dir)?;
            writeln!(
                w,
                "  head {}  base {}\n  {} tips, {} objects ({} bytes expanded), {} bytes on disk, patch {} bytes",
                archive.head,
                archive.base,
                archive.tips.len(),
                archive.objects,
                archive.object_bytes,
                archive.bytes,
                archive.patch_bytes
            )
        });
    }
    out.finish()?;
    match captured {
        Captured::Refused(refusal) => {
            if !json {
                eprintln!("natives: source-evidence capture: {refusal}");
            }
            Ok(Outcome::NoMatch)
        }
        _ => Ok(Outcome::Matched),
    }
}
