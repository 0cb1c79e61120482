//! Whether a holder's worktree may go: [`decide`] judges a [`Holder`],
//! purely, and names every reason to refuse at once; a refusal carries
//! them with what was found. Planning (`plan.rs`) and releasing
//! (`release.rs`) both decide, so the verdict lives below them.

use std::fmt;

use natives_core::Error;

use super::holder::{Foreign, Holder, Owner, Paths};
use crate::registry::{Liveness, Status};

/// One reason not to release a worktree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Someone drives the run.
    DriverLive,
    /// Whether someone drives the run cannot be told (why).
    LivenessUnknown(String),
    /// The run is recorded as running and no driver took it since: its
    /// driver may be starting.
    DriverNotStarted,
    /// The run is landing.
    Landing,
    /// Uncommitted work on disk.
    Dirty(Paths),
    /// The worktree's `HEAD` is not the branch tip.
    HeadNotAtTip,
    /// natives did not make this worktree.
    NotMadeByUs(Foreign),
    /// Changes staged in the real index only.
    StagedOnly(Paths),
    /// History the worktree's administration alone remembers.
    OnlyHere(Paths),
    /// An operation stopped half way.
    OperationInProgress(Vec<String>),
    /// The worktree is locked (the reason given).
    Locked(String),
    /// Content the proof cannot vouch for.
    Unsupported(Vec<String>),
    /// The worktree cannot be inspected.
    NotInspectable,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::DriverLive => f.write_str("the run is being driven"),
            Reason::LivenessUnknown(why) => {
                write!(f, "whether the run is being driven cannot be told ({why})")
            }
            Reason::Landing => f.write_str("the run is landing"),
            Reason::Dirty(paths) => write!(f, "uncommitted changes: {paths}"),
            Reason::HeadNotAtTip => f.write_str("HEAD is not at the branch tip"),
            Reason::NotMadeByUs(why) => write!(f, "natives did not make this worktree: {why}"),
            Reason::DriverNotStarted => f.write_str(
                "the run is recorded as running and no driver has taken it since: its driver may be starting",
            ),
            Reason::StagedOnly(paths) => write!(f, "changes staged, not committed: {paths}"),
            Reason::OnlyHere(what) => write!(
                f,
                "history only this worktree's administration keeps (it would be lost): {what}"
            ),
            Reason::OperationInProgress(markers) => {
                write!(f, "an operation is in progress ({})", markers.join(", "))
            }
            Reason::Locked(why) if why.is_empty() => f.write_str("the worktree is locked"),
            Reason::Locked(why) => write!(f, "the worktree is locked ({why})"),
            Reason::Unsupported(what) => {
                write!(f, "content the proof cannot vouch for: {}", what.join(", "))
            }
            Reason::NotInspectable => f.write_str(
                "the worktree cannot be inspected (its directory or its .git file is missing)",
            ),
        }
    }
}

/// The verdict of [`decide`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The worktree may be released.
    Release,
    /// It may not, for every one of these reasons.
    Refuse(Vec<Reason>),
}

/// Whether `holder`'s worktree may be released to a new run: every reason
/// not to, at once, or none. Pure.
pub fn decide(holder: &Holder) -> Decision {
    let mut reasons = driver_reasons(holder);
    if holder
        .run
        .as_ref()
        .is_some_and(|run| run.status == Status::Landing)
    {
        reasons.push(Reason::Landing);
    }
    let content = &holder.content;
    if !content.dirty.is_empty() {
        reasons.push(Reason::Dirty(content.dirty.clone()));
    }
    if holder.head.is_none() || holder.head != holder.tip {
        reasons.push(Reason::HeadNotAtTip);
    }
    if let Owner::Foreign(why) = &holder.owner {
        reasons.push(Reason::NotMadeByUs(why.clone()));
    }
    if !content.staged.is_empty() {
        reasons.push(Reason::StagedOnly(content.staged.clone()));
    }
    if !holder.only_here.is_empty() {
        reasons.push(Reason::OnlyHere(holder.only_here.clone()));
    }
    if !content.operations.is_empty() {
        reasons.push(Reason::OperationInProgress(content.operations.clone()));
    }
    if let Some(why) = &holder.locked {
        reasons.push(Reason::Locked(why.clone()));
    }
    if !content.unsupported.is_empty() {
        reasons.push(Reason::Unsupported(content.unsupported.clone()));
    }
    if !content.inspectable {
        reasons.push(Reason::NotInspectable);
    }
    if reasons.is_empty() {
        Decision::Release
    } else {
        Decision::Refuse(reasons)
    }
}

/// Whether someone drives the run, or may be about to (see the module
/// docs): a live or unknown driver, or a `running` run no driver took yet.
fn driver_reasons(holder: &Holder) -> Vec<Reason> {
    let awaiting = holder.run.as_ref().is_some_and(|run| run.awaiting_driver);
    match &holder.driver {
        Some(Liveness::Live) => vec![Reason::DriverLive],
        Some(Liveness::Unknown(why)) => vec![Reason::LivenessUnknown(why.clone())],
        Some(Liveness::Dead) if awaiting => vec![Reason::DriverNotStarted],
        Some(Liveness::Dead) | None => Vec::new(),
    }
}

/// The operator has to decide: the takeover was refused, and the text says
/// why.
#[derive(Debug)]
pub enum Refused {
    /// natives cannot prove the worktree is its own.
    Foreign {
        /// What was found.
        holder: Box<Holder>,
        /// Every reason.
        reasons: Vec<Reason>,
    },
    /// The worktree is natives' own, but releasing it now could lose work.
    Unsafe {
        /// What was found.
        holder: Box<Holder>,
        /// Every reason.
        reasons: Vec<Reason>,
    },
    /// The release was attempted and failed; the record was rolled back
    /// when the worktree was found whole (`undone`), and otherwise left
    /// released, for a second call to finish the removal.
    ReleaseFailed {
        /// What was found.
        holder: Box<Holder>,
        /// What failed.
        error: Error,
        /// The record was rolled back.
        undone: bool,
    },
}

impl Refused {
    /// The refusal of `holder` for `reasons`: foreign or unsafe, as its
    /// owner says.
    pub(super) fn from_decision(holder: Holder, reasons: Vec<Reason>) -> Refused {
        let holder = Box::new(holder);
        if matches!(holder.owner, Owner::Foreign(_)) {
            Refused::Foreign { holder, reasons }
        } else {
            Refused::Unsafe { holder, reasons }
        }
    }

    /// What was found about the worktree.
    pub fn holder(&self) -> &Holder {
        match self {
            Refused::Foreign { holder, .. }
            | Refused::Unsafe { holder, .. }
            | Refused::ReleaseFailed { holder, .. } => holder,
        }
    }

    /// Every reason for the refusal (none for a failed release: see its
    /// error).
    pub fn reasons(&self) -> &[Reason] {
        match self {
            Refused::Foreign { reasons, .. } | Refused::Unsafe { reasons, .. } => reasons,
            Refused::ReleaseFailed { .. } => &[],
        }
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let holder = self.holder();
        write!(f, "{holder}: ")?;
        match self {
            Refused::Foreign { reasons, .. } | Refused::Unsafe { reasons, .. } => {
                let reasons: Vec<String> = reasons.iter().map(Reason::to_string).collect();
                write!(f, "refused: {}", reasons.join("; "))
            }
            Refused::ReleaseFailed { error, undone, .. } => {
                let record = if *undone {
                    "the record was rolled back"
                } else {
                    "the record stays released; run the handover again to finish"
                };
                write!(f, "the release failed ({record}): {error}")
            }
        }
    }
}
