//! The shapes the fronts hand out: one serde view per task, run, handover,
//! restore and eviction pass (`view/eviction.rs`), with the field names of
//! the TypeScript API's objects.
//!
//! Why here: the command line's `--json` and the addon's objects describe
//! the same runs and the same decisions, and two hand-written shapes drift
//! apart (a reason missing its code, a status spelled differently, a
//! refusal's text worded twice). Every front builds these views instead,
//! and every word a person reads about a handover (its `message`, each
//! reason's `message`) is written here once. Fields are spelled here rather
//! than derived from the records, so the registry's on-disk format can
//! change without changing what scripts read. A field is left out, not
//! written as `null`, exactly where the TypeScript type marks it optional.
//!
//! One definition, three readers: serde writes the command line's `--json`;
//! with the crate's `napi` feature each view is also an N-API object
//! (`#[napi(object)]`), which the addon returns as it is, and napi writes
//! its TypeScript declaration from these fields and docs. That keeps the
//! declarations documented and the conversion a direct object build (no
//! JSON in between); serde to JS values would need TypeScript types written
//! or generated a second way. napi's rules shape the fields: numbers are
//! `i64` (napi makes a `u64` a `BigInt`; see [`natives_core::view`]), an
//! `Option` left out of an object when `None` (as serde's
//! `skip_serializing_if`), and a list that may be absent an `Option<Vec>`.

use natives_core::view::number;
use serde::Serialize;

use self::path::lossy;
use crate::{
    handover::{
        Answer, Content, Holder, Outcome, Owner, Paths, Plan, Reason, Refused, Released, Request,
        Restore, RestoreRefusal,
    },
    registry::{
        Candidate, Event, EventKind, Liveness, Registry, RunRecord, Seat, SeatKind, Status,
        TaskRecord,
    },
};

mod eviction;
mod path;

pub use eviction::{
    EvictedCopyView, EvictionBlockerView, EvictionPhase, EvictionReportView, EvictionRetentionView,
    EvictionSettingsView, RetainedCopyView, SeatTipView,
};

/// Whether a run's driver is alive, as a word.
#[cfg_attr(feature = "napi", napi_derive::napi(string_enum = "lowercase"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DriverState {
    /// Someone drives it.
    Live,
    /// Nobody does.
    Dead,
    /// It cannot be told (treated as alive).
    Unknown,
}

impl DriverState {
    /// The state of `liveness`, and why it is unknown when it is.
    pub fn of(liveness: &Liveness) -> (DriverState, Option<String>) {
        match liveness {
            Liveness::Live => (DriverState::Live, None),
            Liveness::Dead => (DriverState::Dead, None),
            Liveness::Unknown(why) => (DriverState::Unknown, Some(why.clone())),
        }
    }

    /// The state as the views spell it (`live`, `dead`, `unknown`).
    pub fn name(self) -> &'static str {
        match self {
            DriverState::Live => "live",
            DriverState::Dead => "dead",
            DriverState::Unknown => "unknown",
        }
    }
}

/// A task (`TaskRecord` in TypeScript).
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskView {
    /// The task's id.
    pub task: String,
    /// When it was recorded, in milliseconds since the Unix epoch.
    pub created_at_ms: i64,
}

impl From<&TaskRecord> for TaskView {
    fn from(record: &TaskRecord) -> TaskView {
        TaskView {
            task: record.task.clone(),
            created_at_ms: number(record.created_at_ms),
        }
    }
}

/// A run, with whether it is driven now (`RunRecord` in TypeScript).
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunView {
    /// The run's id.
    pub id: String,
    /// The task it attempts.
    pub task: String,
    /// Where it stands.
    pub status: Status,
    /// The directory its candidate worktrees are made in.
    pub worktree_root: String,
    /// When it was recorded, in milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    /// Whether someone drives it right now.
    pub driver: DriverState,
    /// Why that cannot be told (`unknown` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_reason: Option<String>,
    /// Its candidate worktrees.
    pub candidates: Vec<CandidateView>,
    /// Its seats.
    pub seats: Vec<SeatView>,
    /// The run its worktree was last released to, while that release holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub released_to: Option<String>,
    /// The branches whose worktrees were released.
    pub released_branches: Vec<String>,
    /// Its history, oldest first.
    pub events: Vec<EventView>,
    /// The schema version of its record.
    pub version: u32,
    /// Where its artifacts are kept (its eviction records, its checkout
    /// evidence): `<home>/worktrees/artifacts/<run slug>/`, the slug the
    /// SHA-256 of its id.
    pub artifacts: String,
}

impl RunView {
    /// `record`, its driver `liveness`, its artifacts kept in `artifacts`.
    pub fn of(record: &RunRecord, liveness: &Liveness, artifacts: &std::path::Path) -> RunView {
        let (driver, driver_reason) = DriverState::of(liveness);
        RunView {
            id: record.id.clone(),
            task: record.task.clone(),
            status: record.status,
            worktree_root: lossy(&record.worktree_root),
            created_at_ms: number(record.created_at_ms),
            driver,
            driver_reason,
            candidates: record.candidates.iter().map(CandidateView::from).collect(),
            seats: record.seats.iter().map(SeatView::from).collect(),
            released_to: record.released_to.clone(),
            released_branches: record.released_branches.clone(),
            events: record.events.iter().map(EventView::from).collect(),
            version: record.version,
            artifacts: lossy(artifacts),
        }
    }

    /// `record`, its driver asked about now.
    pub fn probed(registry: &Registry, record: &RunRecord) -> RunView {
        let artifacts = registry.artifacts(&record.id);
        RunView::of(record, &registry.driver_liveness(&record.id), &artifacts)
    }
}

/// A candidate worktree (`RunCandidate` in TypeScript).
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CandidateView {
    /// Its name within the run.
    pub name: String,
    /// The branch checked out there.
    pub branch: String,
    /// The worktree.
    pub path: String,
    /// The commit it started from, if recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// Its worktree was released to another run.
    pub folded: bool,
    /// The handover that released it, while released.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handover: Option<String>,
}

impl From<&Candidate> for CandidateView {
    fn from(candidate: &Candidate) -> CandidateView {
        CandidateView {
            name: candidate.name.clone(),
            branch: candidate.branch.clone(),
            path: lossy(&candidate.path),
            base: candidate.base.clone(),
            folded: candidate.folded,
            handover: candidate.handover.clone(),
        }
    }
}

/// A seat (`RunSeat` in TypeScript).
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeatView {
    /// The role.
    pub kind: SeatKind,
    /// Which one of that role.
    pub number: u32,
    /// Its worktree.
    pub path: String,
    /// The base commit it looks from, if recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_head: Option<String>,
    /// The commit under review, if recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review_head: Option<String>,
}

impl From<&Seat> for SeatView {
    fn from(seat: &Seat) -> SeatView {
        SeatView {
            kind: seat.kind,
            number: seat.number,
            path: lossy(&seat.path),
            base_head: seat.base_head.clone(),
            review_head: seat.review_head.clone(),
        }
    }
}

/// One entry of a run's history (`RunEvent` in TypeScript).
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventView {
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: i64,
    /// What (`created`, `status`, `released`, ...; a newer natives may
    /// write others).
    pub kind: String,
    /// The branch concerned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The run a worktree was released to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The handover concerned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handover: Option<String>,
    /// The worktree concerned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The branch's commit at the time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tip: Option<String>,
    /// The repository's main worktree (a release).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// What went with the worktree: the patterns the new run declared
    /// regenerable (`released`), the caches let go (`removing`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regenerable: Option<Vec<String>>,
    /// Anything else worth reading.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl From<&Event> for EventView {
    fn from(event: &Event) -> EventView {
        EventView {
            at_ms: number(event.at_ms),
            kind: event_kind(&event.kind),
            branch: event.branch.clone(),
            to: event.to.clone(),
            handover: event.handover.clone(),
            path: event.path.as_deref().map(lossy),
            tip: event.tip.clone(),
            repo: event.repo.as_deref().map(lossy),
            regenerable: (!event.regenerable.is_empty()).then(|| event.regenerable.clone()),
            note: event.note.clone(),
        }
    }
}

fn event_kind(kind: &EventKind) -> String {
    let name = match kind {
        EventKind::Created => "created",
        EventKind::Status => "status",
        EventKind::Candidate => "candidate",
        EventKind::Seat => "seat",
        EventKind::Released => "released",
        EventKind::Removing => "removing",
        EventKind::Undone => "undone",
        EventKind::Restored => "restored",
        EventKind::Driven => "driven",
        EventKind::Other(other) => other,
    };
    name.to_owned()
}

/// What a handover did, or (a dry run) would do.
#[cfg_attr(feature = "napi", napi_derive::napi(string_enum = "kebab-case"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HandoverKind {
    /// The worktree was released.
    Released,
    /// A dry run: the worktree would be released.
    WouldRelease,
    /// Nothing was (or would be) released: see the reasons.
    Refused,
    /// No worktree holds the branch: nothing to do.
    NotHeld,
    /// The new run's own worktree holds it: nothing to do.
    HeldByNewRun,
}

impl HandoverKind {
    /// The kind as the views spell it (`released`, `would-release`, ...).
    pub fn name(self) -> &'static str {
        match self {
            HandoverKind::Released => "released",
            HandoverKind::WouldRelease => "would-release",
            HandoverKind::Refused => "refused",
            HandoverKind::NotHeld => "not-held",
            HandoverKind::HeldByNewRun => "held-by-new-run",
        }
    }
}

/// A handover's answer (`Handover` in TypeScript).
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HandoverView {
    /// What it did.
    pub kind: HandoverKind,
    /// Only what a release would do was found; nothing was written.
    pub dry_run: bool,
    /// The branch asked for.
    pub branch: String,
    /// The run taking it over.
    pub to_run: String,
    /// One line for a person: what happened, to which worktree and run, and
    /// for a refusal every reason.
    pub message: String,
    /// The run and worktree holding the branch, as found (`would-release`,
    /// `refused`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holder: Option<HolderView>,
    /// Every reason not to release (`refused` only; never empty there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasons: Option<Vec<ReasonView>>,
    /// What was released, and what restoring it needs (`released`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub released: Option<ReleasedView>,
    /// A dry run found a handover to this run cut short, which a release
    /// would finish (`would-release`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unfinished_handover: Option<String>,
    /// A release that failed half way: whether its record was rolled back
    /// (`refused` with reason `release-failed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undone: Option<bool>,
}

impl HandoverView {
    /// What `request` got: `answer`.
    pub fn of(request: &Request, answer: &Answer) -> HandoverView {
        let mut view = HandoverView {
            kind: HandoverKind::NotHeld,
            dry_run: request.dry_run,
            branch: request.branch.clone(),
            to_run: request.to_run.clone(),
            message: String::new(),
            holder: None,
            reasons: None,
            released: None,
            unfinished_handover: None,
            undone: None,
        };
        match answer {
            Answer::Done(Outcome::NotHeld) | Answer::Planned(Plan::NotHeld) => {
                view.nothing(request, HandoverKind::NotHeld);
            }
            Answer::Done(Outcome::HeldByNewRun) | Answer::Planned(Plan::HeldByNewRun) => {
                view.nothing(request, HandoverKind::HeldByNewRun);
            }
            Answer::Done(Outcome::Released(released)) => view.released(released),
            Answer::Done(Outcome::Refused(refused)) | Answer::Planned(Plan::Refuse(refused)) => {
                view.refused(refused);
            }
            Answer::Planned(Plan::Release(holder)) => {
                view.kind = HandoverKind::WouldRelease;
                view.message = format!("would release: {holder}");
                view.holder = Some(HolderView::from(holder.as_ref()));
            }
            Answer::Planned(Plan::Finish { holder, handover }) => {
                view.kind = HandoverKind::WouldRelease;
                view.message = format!("would finish handover {handover} cut short: {holder}");
                view.holder = Some(HolderView::from(holder.as_ref()));
                view.unfinished_handover = Some(handover.clone());
            }
        }
        view
    }

    /// Nothing to do: no worktree holds the branch, or the new run's own does.
    fn nothing(&mut self, request: &Request, kind: HandoverKind) {
        self.kind = kind;
        self.message = match kind {
            HandoverKind::NotHeld => {
                format!("no worktree holds branch {}: nothing to do", request.branch)
            }
            _ => format!(
                "run {}'s own worktree holds branch {}: nothing to do",
                request.to_run, request.branch
            ),
        };
    }

    /// The worktree was released.
    fn released(&mut self, released: &Released) {
        self.kind = HandoverKind::Released;
        self.message = format!(
            "released the worktree of run {} (candidate {}) at {}: branch {} at {} is free for run {}",
            released.run,
            released.candidate,
            released.path.display(),
            released.branch,
            short(&released.tip),
            released.released_to
        );
        self.released = Some(ReleasedView::from(released));
    }

    /// The handover was refused (or would be).
    fn refused(&mut self, refused: &Refused) {
        self.kind = HandoverKind::Refused;
        self.message = refused.to_string();
        self.holder = Some(HolderView::from(refused.holder()));
        self.reasons = Some(refusal_reasons(refused));
        if let Refused::ReleaseFailed { undone, .. } = refused {
            self.undone = Some(*undone);
        }
    }
}

/// Every reason of a refusal; a failed release has its error as one.
fn refusal_reasons(refused: &Refused) -> Vec<ReasonView> {
    match refused {
        Refused::ReleaseFailed { error, undone, .. } => {
            let record = if *undone {
                "the record was rolled back"
            } else {
                "the record stays released; run the handover again to finish"
            };
            vec![ReasonView {
                code: "release-failed".to_owned(),
                message: format!("the release failed ({record}): {error}"),
            }]
        }
        _ => refused.reasons().iter().map(ReasonView::from).collect(),
    }
}

/// One reason not to release, or not to restore (`HandoverReason` in
/// TypeScript).
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasonView {
    /// Stable, for programs: `dirty`, `driver-live`, ... (see
    /// [`Reason::code`] and [`RestoreRefusal::code`]; `release-failed` for
    /// a release that failed half way).
    pub code: String,
    /// For a person: what was found (the paths, the driver, the lock's
    /// reason).
    pub message: String,
}

impl From<&Reason> for ReasonView {
    fn from(reason: &Reason) -> ReasonView {
        ReasonView {
            code: reason.code().to_owned(),
            message: reason.to_string(),
        }
    }
}

impl From<&RestoreRefusal> for ReasonView {
    fn from(refusal: &RestoreRefusal) -> ReasonView {
        ReasonView {
            code: refusal.code().to_owned(),
            message: refusal.to_string(),
        }
    }
}

impl Reason {
    /// The reason's stable code (`driver-live`, `dirty`, ...).
    pub fn code(&self) -> &'static str {
        match self {
            Reason::DriverLive => "driver-live",
            Reason::LivenessUnknown(_) => "liveness-unknown",
            Reason::DriverNotStarted => "driver-not-started",
            Reason::Landing => "landing",
            Reason::Dirty(_) => "dirty",
            Reason::HeadNotAtTip => "head-not-at-tip",
            Reason::NotMadeByUs(_) => "not-made-by-us",
            Reason::StagedOnly(_) => "staged-only",
            Reason::OnlyHere(_) => "only-here",
            Reason::OperationInProgress(_) => "operation-in-progress",
            Reason::Locked(_) => "locked",
            Reason::Unsupported(_) => "unsupported",
            Reason::NotInspectable => "not-inspectable",
        }
    }
}

impl RestoreRefusal {
    /// The refusal's stable code (`not-in-force`, `branch-held`, ...).
    pub fn code(&self) -> &'static str {
        match self {
            RestoreRefusal::NotInForce => "not-in-force",
            RestoreRefusal::ReleasedElsewhere(_) => "released-elsewhere",
            RestoreRefusal::Superseded => "superseded",
            RestoreRefusal::DriverNotDead(_) => "driver-not-dead",
            RestoreRefusal::BranchHeld(_) => "branch-held",
            RestoreRefusal::PathTaken(_) => "path-taken",
        }
    }
}

/// Whose worktree holds the branch.
#[cfg_attr(feature = "napi", napi_derive::napi(string_enum = "kebab-case"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OwnerKind {
    /// An earlier attempt at the new run's task.
    EarlierAttempt,
    /// A run natives recorded, of another task.
    OwnRun,
    /// natives cannot prove it made the worktree.
    Foreign,
}

/// Whose worktree holds the branch, as far as natives can prove.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerView {
    /// Whose.
    pub kind: OwnerKind,
    /// The run (`earlier-attempt`, `own-run`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// Why it is not provably natives' own (`foreign`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

impl From<&Owner> for OwnerView {
    fn from(owner: &Owner) -> OwnerView {
        let (kind, run, why) = match owner {
            Owner::EarlierAttempt { run } => (OwnerKind::EarlierAttempt, Some(run.clone()), None),
            Owner::OwnRun { run } => (OwnerKind::OwnRun, Some(run.clone()), None),
            Owner::Foreign(why) => (OwnerKind::Foreign, None, Some(why.to_string())),
        };
        OwnerView { kind, run, why }
    }
}

/// The run whose record names a worktree.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummaryView {
    /// Its id.
    pub id: String,
    /// Its task.
    pub task: String,
    /// Its status.
    pub status: Status,
}

/// Some paths, the first few named, all counted.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PathsView {
    /// The first few (up to [`crate::handover::PATHS_NAMED`]).
    pub named: Vec<String>,
    /// How many there are.
    pub total: i64,
}

impl From<&Paths> for PathsView {
    fn from(paths: &Paths) -> PathsView {
        PathsView {
            named: paths.named.clone(),
            total: number(paths.total as u64),
        }
    }
}

/// What git says about a worktree's content.
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContentView {
    /// git can inspect it (its directory and `.git` file are there).
    pub inspectable: bool,
    /// Inspectable, and nothing in it that `HEAD` does not hold.
    pub clean: bool,
    /// Files differing from `HEAD`, and every entry `HEAD` does not hold
    /// (ignored or not; a directory's name ends in `/`) but what may go.
    pub dirty: PathsView,
    /// Untracked entries that may go with the worktree: caches
    /// (`CACHEDIR.TAG`) and what the new run declared regenerable.
    pub let_go: PathsView,
    /// Paths staged in the real index only.
    pub staged: PathsView,
    /// Operations stopped half way (`rebase-merge`, `MERGE_HEAD`, ...).
    pub operations: Vec<String>,
    /// What the content proof cannot vouch for (submodules, filters).
    pub unsupported: Vec<String>,
}

impl From<&Content> for ContentView {
    fn from(content: &Content) -> ContentView {
        ContentView {
            inspectable: content.inspectable,
            clean: content.is_clean(),
            dirty: PathsView::from(&content.dirty),
            let_go: PathsView::from(&content.let_go),
            staged: PathsView::from(&content.staged),
            operations: content.operations.clone(),
            unsupported: content.unsupported.clone(),
        }
    }
}

/// The run and worktree holding a branch (`HandoverHolder` in TypeScript).
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HolderView {
    /// The branch.
    pub branch: String,
    /// The worktree holding it.
    pub path: String,
    /// Whose it is.
    pub owner: OwnerView,
    /// The run whose record names the worktree, if one does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<RunSummaryView>,
    /// Whether that run is driven.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<DriverState>,
    /// Why that cannot be told (`unknown` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_reason: Option<String>,
    /// The commit the worktree has checked out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    /// The commit the branch points at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tip: Option<String>,
    /// `git worktree lock`'s reason, when locked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locked: Option<String>,
    /// Its content.
    pub content: ContentView,
    /// What its git administration alone remembers and would lose with it:
    /// refs of its own, commits nothing that stays names.
    pub only_here: PathsView,
}

impl From<&Holder> for HolderView {
    fn from(holder: &Holder) -> HolderView {
        let (driver, driver_reason) = match holder.driver.as_ref().map(DriverState::of) {
            Some((state, why)) => (Some(state), why),
            None => (None, None),
        };
        HolderView {
            branch: holder.branch.clone(),
            path: lossy(&holder.path),
            owner: OwnerView::from(&holder.owner),
            run: holder.run.as_ref().map(|run| RunSummaryView {
                id: run.id.clone(),
                task: run.task.clone(),
                status: run.status,
            }),
            driver,
            driver_reason,
            head: holder.head.clone(),
            tip: holder.tip.clone(),
            locked: holder.locked.clone(),
            content: ContentView::from(&holder.content),
            only_here: PathsView::from(&holder.only_here),
        }
    }
}

/// A released worktree (`ReleasedWorktree` in TypeScript).
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReleasedView {
    /// The run whose worktree it was.
    pub run: String,
    /// That run's task.
    pub task: String,
    /// Its candidate.
    pub candidate: String,
    /// The branch handed over.
    pub branch: String,
    /// Where the worktree was.
    pub path: String,
    /// The commit the branch pointed at when it was released.
    pub tip: String,
    /// The repository's main worktree.
    pub repo: String,
    /// The run it was released to.
    pub released_to: String,
    /// This handover's id.
    pub handover: String,
}

impl From<&Released> for ReleasedView {
    fn from(released: &Released) -> ReleasedView {
        ReleasedView {
            run: released.run.clone(),
            task: released.task.clone(),
            candidate: released.candidate.clone(),
            branch: released.branch.clone(),
            path: lossy(&released.path),
            tip: released.tip.clone(),
            repo: lossy(&released.repo),
            released_to: released.released_to.clone(),
            handover: released.handover.clone(),
        }
    }
}

/// What a restore did.
#[cfg_attr(feature = "napi", napi_derive::napi(string_enum = "kebab-case"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RestoreKind {
    /// The worktree is back.
    Restored,
    /// Nothing was changed: see the reasons.
    Refused,
}

/// A restore's answer (`RestoreResult` in TypeScript).
#[cfg_attr(feature = "napi", napi_derive::napi(object, object_from_js = false))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RestoreView {
    /// What it did.
    pub kind: RestoreKind,
    /// One line for a person.
    pub message: String,
    /// Every reason not to restore (`refused` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasons: Option<Vec<ReasonView>>,
}

impl RestoreView {
    /// What restoring `released` did: `restore`.
    pub fn of(released: &Released, restore: &Restore) -> RestoreView {
        let worktree = format!(
            "the worktree of run {} at {} (branch {} at {})",
            released.run,
            released.path.display(),
            released.branch,
            short(&released.tip)
        );
        match restore {
            Restore::Restored => RestoreView {
                kind: RestoreKind::Restored,
                message: format!("restored {worktree}"),
                reasons: None,
            },
            Restore::Refused(refusals) => {
                let reasons: Vec<ReasonView> = refusals.iter().map(ReasonView::from).collect();
                let why: Vec<&str> = reasons.iter().map(|r| r.message.as_str()).collect();
                RestoreView {
                    kind: RestoreKind::Refused,
                    message: format!("{worktree} was not restored: {}", why.join("; ")),
                    reasons: Some(reasons),
                }
            }
        }
    }
}

/// A commit's first 12 hex digits.
fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

#[cfg(test)]
mod tests;
