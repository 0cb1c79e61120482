//! `natives runs list|show`: the operator's view of the run registry, the
//! tasks and runs an orchestrator recorded, with their worktrees and
//! whether anyone drives them now.
//!
//! `--json` prints the library's views (`natives_worktrees::view`), the
//! objects the addon hands out, so scripts and the TypeScript API read the
//! same fields. The registry is the one under `$NATIVES_HOME` (else
//! `~/.natives`), or `--home`. Exit status: `list` 0 when any run is
//! recorded, 1 when none is; `show` 0; 2 on every error (a run or task never
//! recorded included).

use std::{
    io::{self, Write},
    path::PathBuf,
};

use natives_system::{paths, process::now_ms};
use natives_worktrees::{
    registry::Registry,
    view::{CandidateView, EventView, RunView, SeatView},
};

use crate::{
    Outcome,
    args::RunsCommand,
    common::{Output, age, write_json, write_table},
};

/// Table headings, in column order.
const HEADINGS: [&str; 6] = ["RUN", "TASK", "STATUS", "DRIVER", "CREATED", "CANDIDATES"];

/// Hex digits of a commit shown to a person; `--json` has it whole.
const SHORT: usize = 12;

pub fn run(command: RunsCommand) -> Result<Outcome, String> {
    match command {
        RunsCommand::List { task, json, home } => list(task.as_deref(), json, home.home),
        RunsCommand::Show { run, json, home } => show(&run, json, home.home),
    }
}

fn list(task: Option<&str>, json: bool, home: Option<PathBuf>) -> Result<Outcome, String> {
    let registry = open(home)?;
    let records = registry.list(task).map_err(|err| err.to_string())?;
    let views: Vec<RunView> = records
        .iter()
        .map(|record| RunView::probed(&registry, record))
        .collect();
    let mut out = Output::stdout();
    if json {
        for view in &views {
            out.write(|w| write_json(w, view));
        }
    } else if views.is_empty() {
        let root = registry.root().display();
        out.write(|w| writeln!(w, "no runs recorded in {root}"));
    } else {
        out.write(|w| print_table(w, &views));
    }
    out.finish()?;
    Ok(Outcome::from_count(views.len() as u64))
}

/// Aligned columns, one row per run.
fn print_table(out: &mut dyn Write, views: &[RunView]) -> io::Result<()> {
    let now = now_ms();
    let rows: Vec<[String; 6]> = views.iter().map(|view| row(view, now)).collect();
    write_table(out, HEADINGS, &rows, &|_, _| Ok(()))
}

fn row(view: &RunView, now: u64) -> [String; 6] {
    let candidates: Vec<String> = view
        .candidates
        .iter()
        .map(|c| {
            let released = if c.folded { ", released" } else { "" };
            format!("{} ({}{released})", c.name, c.branch)
        })
        .collect();
    [
        view.id.clone(),
        view.task.clone(),
        view.status.name().to_owned(),
        view.driver.name().to_owned(),
        format!(
            "{} ago",
            age(now.saturating_sub(view.created_at_ms.unsigned_abs()))
        ),
        if candidates.is_empty() {
            "-".to_owned()
        } else {
            candidates.join(", ")
        },
    ]
}

fn show(run: &str, json: bool, home: Option<PathBuf>) -> Result<Outcome, String> {
    let registry = open(home)?;
    let record = registry.show(run).map_err(|err| err.to_string())?;
    let view = RunView::probed(&registry, &record);
    let mut out = Output::stdout();
    if json {
        out.write(|w| write_json(w, &view));
    } else {
        out.write(|w| print_run(w, &view, now_ms()));
    }
    out.finish()?;
    Ok(Outcome::Matched)
}

/// A run for a person: its facts, then its worktrees, then its history.
fn print_run(out: &mut dyn Write, view: &RunView, now: u64) -> io::Result<()> {
    writeln!(out, "run {}", view.id)?;
    for (name, value) in facts(view, now) {
        writeln!(out, "  {name:<13}{value}")?;
    }
    let candidates: Vec<String> = view.candidates.iter().map(candidate_line).collect();
    print_section(out, "candidates", &candidates)?;
    let seats: Vec<String> = view.seats.iter().map(seat_line).collect();
    print_section(out, "seats", &seats)?;
    writeln!(out, "history")?;
    for event in &view.events {
        writeln!(out, "{}", event_line(event, now))?;
    }
    Ok(())
}

/// A heading and its lines, or `-` under it when there are none.
fn print_section(out: &mut dyn Write, heading: &str, lines: &[String]) -> io::Result<()> {
    writeln!(out, "{heading}")?;
    if lines.is_empty() {
        writeln!(out, "  -")?;
    }
    for line in lines {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The run's facts, named, in the order they are printed.
fn facts(view: &RunView, now: u64) -> Vec<(&'static str, String)> {
    let driver = match &view.driver_reason {
        Some(why) => format!("{} ({why})", view.driver.name()),
        None => view.driver.name().to_owned(),
    };
    let mut facts = vec![
        ("task", view.task.clone()),
        ("status", view.status.name().to_owned()),
        ("driver", driver),
        ("worktrees in", view.worktree_root.clone()),
        ("artifacts in", view.artifacts.clone()),
        (
            "created",
            format!(
                "{} ago",
                age(now.saturating_sub(view.created_at_ms.unsigned_abs()))
            ),
        ),
    ];
    if let Some(to) = &view.released_to {
        facts.push(("released to", to.clone()));
    }
    facts
}

fn candidate_line(candidate: &CandidateView) -> String {
    let mut line = format!(
        "  {}  {}  {}",
        candidate.name, candidate.branch, candidate.path
    );
    if let Some(base) = &candidate.base {
        line.push_str(&format!("  from {}", short(base)));
    }
    if let Some(handover) = candidate.handover.as_ref().filter(|_| candidate.folded) {
        line.push_str(&format!("  released (handover {handover})"));
    }
    line
}

fn seat_line(seat: &SeatView) -> String {
    let mut line = format!("  {} {}  {}", seat.kind.name(), seat.number, seat.path);
    if let Some(base) = &seat.base_head {
        line.push_str(&format!("  base {}", short(base)));
    }
    if let Some(head) = &seat.review_head {
        line.push_str(&format!("  reviewing {}", short(head)));
    }
    line
}

fn event_line(event: &EventView, now: u64) -> String {
    let mut line = format!(
        "  {} ago  {}",
        age(now.saturating_sub(event.at_ms.unsigned_abs())),
        event.kind
    );
    let said = [
        event.branch.as_ref().map(|b| format!("branch {b}")),
        event.to.as_ref().map(|to| format!("to {to}")),
        event.path.as_ref().map(|p| format!("at {p}")),
        event
            .tip
            .as_deref()
            .map(|tip| format!("tip {}", short(tip))),
        event.repo.as_ref().map(|repo| format!("repo {repo}")),
        event
            .regenerable
            .as_ref()
            .map(|patterns| format!("regenerable {}", patterns.join(" "))),
        event.note.clone(),
    ];
    for word in said.into_iter().flatten() {
        line.push_str("  ");
        line.push_str(&word);
    }
    line
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(SHORT)]
}

fn open(home: Option<PathBuf>) -> Result<Registry, String> {
    let home = paths::home(home.as_deref()).map_err(|err| err.to_string())?;
    Ok(Registry::open(&home))
}
