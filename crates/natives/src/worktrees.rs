//! Bindings for the run registry and the handover of a branch from an
//! earlier attempt (`natives_worktrees`).
//!
//! Every object handed out is converted from the library's views
//! (`natives_worktrees::view`), the ones the command line's `--json`
//! prints, so both fronts name the same fields and say the same words.
//!
//! Changing the registry may wait for a run's owner lock (a handover holds
//! it while it proves and removes a worktree) and a handover runs git, so
//! those calls run on a thread of their own ([`on_own_thread`]) under the
//! call's cancellation token; reading records runs on the pool. Asking
//! whether a run is driven only probes a lock and runs inline.
//!
//! A handover never rejects for a refusal: the refusal is its answer. A
//! released worktree's `Released` stays inside the [`WorktreeHandover`]
//! object, so a restore undoes exactly the handover that was made and
//! nothing a caller could forge; after the process that asked for it is
//! gone, the handover's id finds the same `Released` in the run's record
//! ([`native_restore_handover`]).

use std::{
    path::{Path, PathBuf},
    sync::Mutex,
};

use napi::{
    Env,
    bindgen_prelude::{AsyncTask, PromiseRaw},
};
use napi_derive::napi;
use natives_core::Error;
use natives_system::paths;
use natives_worktrees::{
    git::Git,
    handover::{Answer, Outcome, Released, Request},
    registry::{self, Candidate, Driver, NewRun, Registry, Seat},
    view::{self, EventView, HandoverView, ReasonView, RestoreView, RunView},
};

use crate::{
    cancel::CancelToken,
    errors::{guarded, on_js_thread},
    task::{Work, on_own_thread, task},
};

/// Where a run stands.
#[napi(string_enum = "lowercase")]
pub enum RunStatus {
    /// Being worked on.
    Running,
    /// Waiting on something outside it.
    Blocked,
    /// Ended without a result.
    Failed,
    /// Not heard from for too long.
    Stale,
    /// Put aside, to be resumed.
    Parked,
    /// A later run took its place.
    Superseded,
    /// Its result is being merged: its worktrees are never released.
    Landing,
    /// Finished.
    Done,
}

impl From<RunStatus> for registry::Status {
    fn from(status: RunStatus) -> registry::Status {
        match status {
            RunStatus::Running => registry::Status::Running,
            RunStatus::Blocked => registry::Status::Blocked,
            RunStatus::Failed => registry::Status::Failed,
            RunStatus::Stale => registry::Status::Stale,
            RunStatus::Parked => registry::Status::Parked,
            RunStatus::Superseded => registry::Status::Superseded,
            RunStatus::Landing => registry::Status::Landing,
            RunStatus::Done => registry::Status::Done,
        }
    }
}

impl From<registry::Status> for RunStatus {
    fn from(status: registry::Status) -> RunStatus {
        match status {
            registry::Status::Running => RunStatus::Running,
            registry::Status::Blocked => RunStatus::Blocked,
            registry::Status::Failed => RunStatus::Failed,
            registry::Status::Stale => RunStatus::Stale,
            registry::Status::Parked => RunStatus::Parked,
            registry::Status::Superseded => RunStatus::Superseded,
            registry::Status::Landing => RunStatus::Landing,
            registry::Status::Done => RunStatus::Done,
        }
    }
}

/// What a seat does.
#[napi(string_enum = "lowercase")]
pub enum SeatKind {
    /// Reviews a candidate.
    Review,
    /// Judges between candidates.
    Judge,
    /// Advises.
    Advisor,
}

impl From<SeatKind> for registry::SeatKind {
    fn from(kind: SeatKind) -> registry::SeatKind {
        match kind {
            SeatKind::Review => registry::SeatKind::Review,
            SeatKind::Judge => registry::SeatKind::Judge,
            SeatKind::Advisor => registry::SeatKind::Advisor,
        }
    }
}

impl From<registry::SeatKind> for SeatKind {
    fn from(kind: registry::SeatKind) -> SeatKind {
        match kind {
            registry::SeatKind::Review => SeatKind::Review,
            registry::SeatKind::Judge => SeatKind::Judge,
            registry::SeatKind::Advisor => SeatKind::Advisor,
        }
    }
}

/// Whether a run's driver is alive.
#[napi(string_enum = "lowercase")]
pub enum DriverState {
    /// Someone drives it.
    Live,
    /// Nobody does.
    Dead,
    /// It cannot be told (treated as alive).
    Unknown,
}

impl From<view::DriverState> for DriverState {
    fn from(state: view::DriverState) -> DriverState {
        match state {
            view::DriverState::Live => DriverState::Live,
            view::DriverState::Dead => DriverState::Dead,
            view::DriverState::Unknown => DriverState::Unknown,
        }
    }
}

/// A task.
#[napi(object)]
pub struct NativeTask {
    /// The task's id.
    pub task: String,
    /// When it was recorded, in milliseconds since the Unix epoch.
    pub created_at_ms: f64,
}

/// A run to record.
#[napi(object)]
pub struct NativeNewRun {
    /// Its id, unique in the registry.
    pub id: String,
    /// The task it attempts (recorded already).
    pub task: String,
    /// The directory its candidate worktrees will be made in, directly.
    pub worktree_root: String,
    /// Where it stands at first.
    pub status: RunStatus,
}

/// A candidate worktree to record.
#[napi(object)]
pub struct NativeNewCandidate {
    /// Its name within the run (`A`, `B`, ...).
    pub name: String,
    /// The branch checked out there (short name).
    pub branch: String,
    /// The worktree.
    pub path: String,
    /// The commit it started from, if known.
    pub base: Option<String>,
}

/// A seat to record.
#[napi(object)]
pub struct NativeNewSeat {
    /// The role.
    pub kind: SeatKind,
    /// Which one of that role (1, 2, ...).
    pub number: f64,
    /// Its worktree.
    pub path: String,
    /// The base commit it looks from, if known.
    pub base_head: Option<String>,
    /// The commit under review, if known.
    pub review_head: Option<String>,
}

/// A candidate worktree of a run.
#[napi(object)]
pub struct NativeCandidate {
    /// Its name within the run.
    pub name: String,
    /// The branch checked out there.
    pub branch: String,
    /// The worktree (canonical).
    pub path: String,
    /// The commit it started from, if recorded.
    pub base: Option<String>,
    /// Its worktree was released to another run.
    pub folded: bool,
    /// The handover that released it, while released.
    pub handover: Option<String>,
}

/// A seat of a run.
#[napi(object)]
pub struct NativeSeat {
    /// The role.
    pub kind: SeatKind,
    /// Which one of that role.
    pub number: u32,
    /// Its worktree (canonical).
    pub path: String,
    /// The base commit it looks from, if recorded.
    pub base_head: Option<String>,
    /// The commit under review, if recorded.
    pub review_head: Option<String>,
}

/// One entry of a run's history.
#[napi(object)]
pub struct NativeRunEvent {
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: f64,
    /// What: `created`, `status`, `candidate`, `seat`, `released`,
    /// `removing`, `undone`, `restored`, `driven` (a newer natives may write
    /// others).
    pub kind: String,
    /// The branch concerned.
    pub branch: Option<String>,
    /// The run a worktree was released to.
    pub to: Option<String>,
    /// The handover concerned.
    pub handover: Option<String>,
    /// The worktree concerned.
    pub path: Option<String>,
    /// The branch's commit at the time.
    pub tip: Option<String>,
    /// The repository's main worktree (a release).
    pub repo: Option<String>,
    /// What went with the worktree: the patterns the new run declared
    /// regenerable (`released`), the caches let go (`removing`).
    pub regenerable: Option<Vec<String>>,
    /// Anything else worth reading.
    pub note: Option<String>,
}

/// A run, with whether it is driven now.
#[napi(object)]
pub struct NativeRun {
    /// The run's id.
    pub id: String,
    /// The task it attempts.
    pub task: String,
    /// Where it stands.
    pub status: RunStatus,
    /// The directory its candidate worktrees are made in (canonical).
    pub worktree_root: String,
    /// When it was recorded, in milliseconds since the Unix epoch.
    pub created_at_ms: f64,
    /// Whether someone drives it right now.
    pub driver: DriverState,
    /// Why that cannot be told (`unknown` only).
    pub driver_reason: Option<String>,
    /// Its candidate worktrees.
    pub candidates: Vec<NativeCandidate>,
    /// Its seats.
    pub seats: Vec<NativeSeat>,
    /// The run its worktree was last released to, while that release holds.
    pub released_to: Option<String>,
    /// The branches whose worktrees were released.
    pub released_branches: Vec<String>,
    /// Its history, oldest first.
    pub events: Vec<NativeRunEvent>,
    /// The schema version of its record.
    pub version: u32,
    /// Where its artifacts are kept (eviction records, checkout evidence):
    /// `<home>/worktrees/artifacts/<SHA-256 of its id>/`.
    pub artifacts: String,
}

/// Record task `task`, or answer it if it is recorded already.
#[napi(js_name = "nativeCreateTask", ts_return_type = "Promise<NativeTask>")]
pub fn native_create_task<'env>(
    env: &'env Env,
    task: String,
    home: Option<String>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, NativeTask>> {
    let cancel = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let record = open(home.as_deref())?.create_task(&task, &cancel?)?;
        Ok(to_js_task(view::TaskView::from(&record)))
    })
}

/// Record a new run of a recorded task: `EEXIST` if its id is taken,
/// `ENOENT` if the task was never recorded.
#[napi(js_name = "nativeCreateRun", ts_return_type = "Promise<NativeRun>")]
pub fn native_create_run<'env>(
    env: &'env Env,
    run: NativeNewRun,
    home: Option<String>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, NativeRun>> {
    let cancel = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let registry = open(home.as_deref())?;
        let new = NewRun {
            id: run.id,
            task: run.task,
            worktree_root: PathBuf::from(run.worktree_root),
            status: run.status.into(),
        };
        let record = registry.create_run(&new, &cancel?)?;
        Ok(to_js_run(RunView::probed(&registry, &record)))
    })
}

/// Add a candidate worktree to run `run`: `EEXIST` if the run has one of
/// that name.
#[napi(js_name = "nativeAddCandidate", ts_return_type = "Promise<NativeRun>")]
pub fn native_add_candidate<'env>(
    env: &'env Env,
    run: String,
    candidate: NativeNewCandidate,
    home: Option<String>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, NativeRun>> {
    let cancel = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let registry = open(home.as_deref())?;
        let mut added = Candidate::new(
            &candidate.name,
            &candidate.branch,
            Path::new(&candidate.path),
        );
        added.base = candidate.base;
        let record = registry.add_candidate(&run, &added, &cancel?)?;
        Ok(to_js_run(RunView::probed(&registry, &record)))
    })
}

/// Add a seat to run `run`: `EEXIST` if the run has that seat, `EINVAL` for
/// a number that is not a whole number from 0 to 2^32-1.
#[napi(js_name = "nativeAddSeat", ts_return_type = "Promise<NativeRun>")]
pub fn native_add_seat<'env>(
    env: &'env Env,
    run: String,
    seat: NativeNewSeat,
    home: Option<String>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, NativeRun>> {
    let prepared = guarded(|| {
        let number = crate::options::count("number", Some(seat.number))?.unwrap_or_default();
        let number = u32::try_from(number).map_err(|_| {
            Error::invalid(format!(
                "number must be at most {}, got {}",
                u32::MAX,
                seat.number
            ))
        })?;
        let mut added = Seat::new(seat.kind.into(), number, Path::new(&seat.path));
        added.base_head = seat.base_head;
        added.review_head = seat.review_head;
        Ok((added, CancelToken::for_call(token, None)?))
    });
    on_own_thread(env, move || {
        let (seat, cancel) = prepared?;
        let registry = open(home.as_deref())?;
        let record = registry.add_seat(&run, &seat, &cancel)?;
        Ok(to_js_run(RunView::probed(&registry, &record)))
    })
}

/// Set run `run`'s status.
#[napi(js_name = "nativeSetRunStatus", ts_return_type = "Promise<NativeRun>")]
pub fn native_set_run_status<'env>(
    env: &'env Env,
    run: String,
    status: RunStatus,
    home: Option<String>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, NativeRun>> {
    let cancel = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let registry = open(home.as_deref())?;
        let record = registry.set_status(&run, status.into(), &cancel?)?;
        Ok(to_js_run(RunView::probed(&registry, &record)))
    })
}

/// Run `run` (`ENOENT` if it was never recorded).
#[napi(js_name = "nativeShowRun", ts_return_type = "Promise<NativeRun>")]
pub fn native_show_run(run: String, home: Option<String>) -> AsyncTask<Work<NativeRun>> {
    task(move || {
        let registry = open(home.as_deref())?;
        let record = registry.show(&run)?;
        Ok(to_js_run(RunView::probed(&registry, &record)))
    })
}

/// Every run recorded, or only `task`'s (`ENOENT` for a task never
/// recorded), oldest first.
#[napi(js_name = "nativeListRuns", ts_return_type = "Promise<NativeRun[]>")]
pub fn native_list_runs(
    task_id: Option<String>,
    home: Option<String>,
) -> AsyncTask<Work<Vec<NativeRun>>> {
    task(move || {
        let registry = open(home.as_deref())?;
        let records = registry.list(task_id.as_deref())?;
        Ok(runs(&registry, &records))
    })
}

/// Every run recorded for `task`, whatever its status, oldest first: the
/// attempts a new run of the task may take a branch over from.
#[napi(
    js_name = "nativeEarlierAttempts",
    ts_return_type = "Promise<NativeRun[]>"
)]
pub fn native_earlier_attempts(
    task_id: String,
    home: Option<String>,
) -> AsyncTask<Work<Vec<NativeRun>>> {
    task(move || {
        let registry = open(home.as_deref())?;
        let records = registry.earlier_attempts(&task_id)?;
        Ok(runs(&registry, &records))
    })
}

/// Holding a run to drive it. `release()` lets it go; it is idempotent.
#[napi]
pub struct RunDriver {
    run: String,
    driver: Mutex<Option<Driver>>,
}

#[napi]
impl RunDriver {
    /// The run driven.
    #[napi(getter)]
    pub fn run(&self, env: Env) -> napi::Result<String> {
        on_js_thread(&env, || Ok(self.run.clone()))
    }

    /// Whether this object still holds the run.
    #[napi(getter)]
    pub fn held(&self, env: Env) -> napi::Result<bool> {
        on_js_thread(&env, || {
            Ok(self.driver.lock().is_ok_and(|driver| driver.is_some()))
        })
    }

    /// Let the run go. `false` if it was let go already.
    #[napi]
    pub fn release(&self, env: Env) -> napi::Result<bool> {
        on_js_thread(&env, || {
            let taken = self.driver.lock().ok().and_then(|mut driver| driver.take());
            Ok(taken.is_some())
        })
    }
}

/// A driver collected while still holding its run lets it go in its drop,
/// which runs inside the engine's collector: a fault there must not unwind
/// into it.
impl Drop for RunDriver {
    fn drop(&mut self) {
        let held = self.driver.get_mut().ok().and_then(Option::take);
        // Nobody is left to hear of a failure; the lock goes with the process anyway.
        let _ = guarded(|| {
            drop(held);
            Ok(())
        });
    }
}

/// Take run `run` to drive it: `EBUSY` if another holds it, `ENOENT` if it
/// was never recorded. Waits for a handover of the run's worktree in
/// progress to finish first.
#[napi(js_name = "nativeDriveRun", ts_return_type = "Promise<RunDriver>")]
pub fn native_drive_run<'env>(
    env: &'env Env,
    run: String,
    home: Option<String>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, RunDriver>> {
    let cancel = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let driver = open(home.as_deref())?.drive_run(&run, &cancel?)?;
        Ok(RunDriver {
            run,
            driver: Mutex::new(Some(driver)),
        })
    })
}

/// Whether anyone drives run `run` right now (`ENOENT` if it was never
/// recorded). The lock is only probed, never taken.
#[napi(js_name = "nativeDriverLiveness")]
pub fn native_driver_liveness(
    env: Env,
    run: String,
    home: Option<String>,
) -> napi::Result<DriverState> {
    on_js_thread(&env, || {
        let registry = open(home.as_deref())?;
        registry.show(&run)?;
        let (state, _) = view::DriverState::of(&registry.driver_liveness(&run));
        Ok(state.into())
    })
}

/// What a handover is asked to do.
#[napi(object)]
pub struct NativeHandoverRequest {
    /// A worktree of the repository (the main one is found from it).
    pub repo: String,
    /// The branch the new run needs (short name).
    pub branch: String,
    /// The run taking the branch over.
    pub to_run: String,
    /// Its task; absent for a review started by hand.
    pub task: Option<String>,
    /// The natives home (default `$NATIVES_HOME`, else `~/.natives`).
    pub home: Option<String>,
    /// Untracked paths that may go with the worktree (gitignore patterns),
    /// recorded in the release.
    pub regenerable: Option<Vec<String>>,
    /// Only say what a release would do; write nothing.
    pub dry_run: Option<bool>,
}

/// What a handover did, or (a dry run) would do.
#[napi(string_enum = "kebab-case")]
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

impl From<view::HandoverKind> for HandoverKind {
    fn from(kind: view::HandoverKind) -> HandoverKind {
        match kind {
            view::HandoverKind::Released => HandoverKind::Released,
            view::HandoverKind::WouldRelease => HandoverKind::WouldRelease,
            view::HandoverKind::Refused => HandoverKind::Refused,
            view::HandoverKind::NotHeld => HandoverKind::NotHeld,
            view::HandoverKind::HeldByNewRun => HandoverKind::HeldByNewRun,
        }
    }
}

/// Whose worktree holds the branch.
#[napi(string_enum = "kebab-case")]
pub enum HolderOwnerKind {
    /// An earlier attempt at the new run's task.
    EarlierAttempt,
    /// A run natives recorded, of another task.
    OwnRun,
    /// natives cannot prove it made the worktree.
    Foreign,
}

impl From<view::OwnerKind> for HolderOwnerKind {
    fn from(kind: view::OwnerKind) -> HolderOwnerKind {
        match kind {
            view::OwnerKind::EarlierAttempt => HolderOwnerKind::EarlierAttempt,
            view::OwnerKind::OwnRun => HolderOwnerKind::OwnRun,
            view::OwnerKind::Foreign => HolderOwnerKind::Foreign,
        }
    }
}

/// One reason not to release, or not to restore.
#[napi(object)]
pub struct NativeReason {
    /// Stable, for programs: `dirty`, `driver-live`, `not-made-by-us`, ...
    pub code: String,
    /// For a person: what was found.
    pub message: String,
}

/// Whose worktree holds the branch, as far as natives can prove.
#[napi(object)]
pub struct NativeHolderOwner {
    /// Whose.
    pub kind: HolderOwnerKind,
    /// The run (`earlier-attempt`, `own-run`).
    pub run: Option<String>,
    /// Why it is not provably natives' own (`foreign`).
    pub why: Option<String>,
}

/// The run whose record names a worktree.
#[napi(object)]
pub struct NativeRunSummary {
    /// Its id.
    pub id: String,
    /// Its task.
    pub task: String,
    /// Its status.
    pub status: RunStatus,
}

/// Some paths, the first few named, all counted.
#[napi(object)]
pub struct NativePaths {
    /// The first few.
    pub named: Vec<String>,
    /// How many there are.
    pub total: f64,
}

/// What git says about a worktree's content.
#[napi(object)]
pub struct NativeContent {
    /// git can inspect it (its directory and `.git` file are there).
    pub inspectable: bool,
    /// Inspectable, and nothing in it that `HEAD` does not hold.
    pub clean: bool,
    /// Files differing from `HEAD`, and every entry `HEAD` does not hold
    /// (ignored or not; a directory's name ends in `/`) but what may go.
    pub dirty: NativePaths,
    /// Untracked entries that may go with the worktree: caches
    /// (`CACHEDIR.TAG`) and what the new run declared regenerable.
    pub let_go: NativePaths,
    /// Paths staged in the real index only.
    pub staged: NativePaths,
    /// Operations stopped half way (`rebase-merge`, `MERGE_HEAD`, ...).
    pub operations: Vec<String>,
    /// What the content proof cannot vouch for (submodules, filters).
    pub unsupported: Vec<String>,
}

/// The run and worktree holding a branch.
#[napi(object)]
pub struct NativeHolder {
    /// The branch.
    pub branch: String,
    /// The worktree holding it (canonical).
    pub path: String,
    /// Whose it is.
    pub owner: NativeHolderOwner,
    /// The run whose record names the worktree, if one does.
    pub run: Option<NativeRunSummary>,
    /// Whether that run is driven.
    pub driver: Option<DriverState>,
    /// Why that cannot be told (`unknown` only).
    pub driver_reason: Option<String>,
    /// The commit the worktree has checked out.
    pub head: Option<String>,
    /// The commit the branch points at.
    pub tip: Option<String>,
    /// `git worktree lock`'s reason, when locked.
    pub locked: Option<String>,
    /// Its content.
    pub content: NativeContent,
    /// What its git administration alone remembers and would lose with it:
    /// refs of its own, commits nothing that stays names.
    pub only_here: NativePaths,
}

/// A released worktree.
#[napi(object)]
pub struct NativeReleasedWorktree {
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

/// A handover's answer.
#[napi(object)]
pub struct NativeHandover {
    /// What it did.
    pub kind: HandoverKind,
    /// Only what a release would do was found; nothing was written.
    pub dry_run: bool,
    /// The branch asked for.
    pub branch: String,
    /// The run taking it over.
    pub to_run: String,
    /// One line for a person: what happened, and for a refusal every reason.
    pub message: String,
    /// The run and worktree holding the branch (`would-release`, `refused`).
    pub holder: Option<NativeHolder>,
    /// Every reason not to release (`refused`).
    pub reasons: Option<Vec<NativeReason>>,
    /// What was released (`released`).
    pub released: Option<NativeReleasedWorktree>,
    /// A handover to this run cut short, which a release would finish
    /// (`would-release`).
    pub unfinished_handover: Option<String>,
    /// A release that failed half way: whether its record was rolled back.
    pub undone: Option<bool>,
}

/// What a restore did.
#[napi(string_enum = "kebab-case")]
pub enum RestoreKind {
    /// The worktree is back.
    Restored,
    /// Nothing was changed: see the reasons.
    Refused,
}

/// A restore's answer.
#[napi(object)]
pub struct NativeRestore {
    /// What it did.
    pub kind: RestoreKind,
    /// One line for a person.
    pub message: String,
    /// Every reason not to restore (`refused`).
    pub reasons: Option<Vec<NativeReason>>,
}

/// A handover's answer, holding what restoring a released worktree needs.
#[napi]
pub struct WorktreeHandover {
    view: HandoverView,
    released: Option<Released>,
    registry: Registry,
}

#[napi]
impl WorktreeHandover {
    /// What the handover did.
    #[napi(getter)]
    pub fn view(&self, env: Env) -> napi::Result<NativeHandover> {
        on_js_thread(&env, || Ok(to_js_handover(self.view.clone())))
    }

    /// Put the released worktree back at the tip recorded when it was
    /// released, unless ownership changed since (a refusal, never a
    /// rejection). `EINVAL` when nothing was released.
    #[napi(ts_return_type = "Promise<NativeRestore>")]
    pub fn restore<'env>(
        &self,
        env: &'env Env,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'env, NativeRestore>> {
        let prepared = guarded(|| {
            let released = self.released.clone().ok_or_else(|| {
                Error::invalid(format!(
                    "restore: only a released worktree can be restored; this handover of branch {} was {}",
                    self.view.branch,
                    self.view.kind.name()
                ))
            })?;
            Ok((released, CancelToken::for_call(token, None)?))
        });
        let registry = self.registry.clone();
        on_own_thread(env, move || {
            let (released, cancel) = prepared?;
            let restore = released.restore(&registry, &Git::new()?, &cancel)?;
            Ok(to_js_restore(RestoreView::of(&released, &restore)))
        })
    }
}

/// Release the worktree holding `branch` to `toRun` when an earlier attempt
/// at its task (or, without a task, a run natives recorded) holds it and
/// nothing would be lost; with `dryRun`, only say what a release would do.
/// A refusal is an answer, not a rejection; errors (bad input, git missing
/// or failing, an unreadable record, `ABORT_ERR`) reject.
#[napi(
    js_name = "nativeReleaseWorktree",
    ts_return_type = "Promise<WorktreeHandover>"
)]
pub fn native_release_worktree<'env>(
    env: &'env Env,
    request: NativeHandoverRequest,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, WorktreeHandover>> {
    let cancel = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let cancel = cancel?;
        let registry = open(request.home.as_deref())?;
        let asked = Request {
            repo: PathBuf::from(request.repo),
            branch: request.branch,
            to_run: request.to_run,
            task: request.task,
            regenerable: request.regenerable.unwrap_or_default(),
            dry_run: request.dry_run.unwrap_or_default(),
        };
        let answer = asked.run(&registry, &Git::new()?, &cancel)?;
        let view = HandoverView::of(&asked, &answer);
        let released = match answer {
            Answer::Done(Outcome::Released(released)) => Some(released),
            _ => None,
        };
        Ok(WorktreeHandover {
            view,
            released,
            registry,
        })
    })
}

/// Put back the worktree handover `handover` released, found by its id
/// alone (the process that asked for the release may be gone): as a
/// released handover's `restore()`. `ENOENT` when no run records it.
#[napi(
    js_name = "nativeRestoreHandover",
    ts_return_type = "Promise<NativeRestore>"
)]
pub fn native_restore_handover<'env>(
    env: &'env Env,
    handover: String,
    home: Option<String>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, NativeRestore>> {
    let cancel = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let cancel = cancel?;
        let registry = open(home.as_deref())?;
        let released = Released::find(&registry, &handover)?;
        let restore = released.restore(&registry, &Git::new()?, &cancel)?;
        Ok(to_js_restore(RestoreView::of(&released, &restore)))
    })
}

fn open(home: Option<&str>) -> Result<Registry, Error> {
    Ok(Registry::open(&paths::home(home.map(Path::new))?))
}

fn runs(registry: &Registry, records: &[registry::RunRecord]) -> Vec<NativeRun> {
    records
        .iter()
        .map(|record| to_js_run(RunView::probed(registry, record)))
        .collect()
}

fn to_js_task(view: view::TaskView) -> NativeTask {
    NativeTask {
        task: view.task,
        created_at_ms: view.created_at_ms as f64,
    }
}

fn to_js_run(view: RunView) -> NativeRun {
    NativeRun {
        id: view.id,
        task: view.task,
        status: view.status.into(),
        worktree_root: view.worktree_root,
        created_at_ms: view.created_at_ms as f64,
        driver: view.driver.into(),
        driver_reason: view.driver_reason,
        candidates: view
            .candidates
            .into_iter()
            .map(|c| NativeCandidate {
                name: c.name,
                branch: c.branch,
                path: c.path,
                base: c.base,
                folded: c.folded,
                handover: c.handover,
            })
            .collect(),
        seats: view
            .seats
            .into_iter()
            .map(|s| NativeSeat {
                kind: s.kind.into(),
                number: s.number,
                path: s.path,
                base_head: s.base_head,
                review_head: s.review_head,
            })
            .collect(),
        released_to: view.released_to,
        released_branches: view.released_branches,
        events: view.events.into_iter().map(to_js_event).collect(),
        version: view.version,
        artifacts: view.artifacts,
    }
}

fn to_js_event(e: EventView) -> NativeRunEvent {
    NativeRunEvent {
        at_ms: e.at_ms as f64,
        kind: e.kind,
        branch: e.branch,
        to: e.to,
        handover: e.handover,
        path: e.path,
        tip: e.tip,
        repo: e.repo,
        regenerable: (!e.regenerable.is_empty()).then_some(e.regenerable),
        note: e.note,
    }
}

fn to_js_reasons(reasons: Vec<ReasonView>) -> Option<Vec<NativeReason>> {
    (!reasons.is_empty()).then(|| {
        reasons
            .into_iter()
            .map(|r| NativeReason {
                code: r.code.to_owned(),
                message: r.message,
            })
            .collect()
    })
}

fn to_js_paths(paths: view::PathsView) -> NativePaths {
    NativePaths {
        named: paths.named,
        total: paths.total as f64,
    }
}

fn to_js_holder(holder: view::HolderView) -> NativeHolder {
    NativeHolder {
        branch: holder.branch,
        path: holder.path,
        owner: NativeHolderOwner {
            kind: holder.owner.kind.into(),
            run: holder.owner.run,
            why: holder.owner.why,
        },
        run: holder.run.map(|run| NativeRunSummary {
            id: run.id,
            task: run.task,
            status: run.status.into(),
        }),
        driver: holder.driver.map(Into::into),
        driver_reason: holder.driver_reason,
        head: holder.head,
        tip: holder.tip,
        locked: holder.locked,
        content: NativeContent {
            inspectable: holder.content.inspectable,
            clean: holder.content.clean,
            dirty: to_js_paths(holder.content.dirty),
            let_go: to_js_paths(holder.content.let_go),
            staged: to_js_paths(holder.content.staged),
            operations: holder.content.operations,
            unsupported: holder.content.unsupported,
        },
        only_here: to_js_paths(holder.only_here),
    }
}

fn to_js_handover(view: HandoverView) -> NativeHandover {
    NativeHandover {
        kind: view.kind.into(),
        dry_run: view.dry_run,
        branch: view.branch,
        to_run: view.to_run,
        message: view.message,
        holder: view.holder.map(to_js_holder),
        reasons: to_js_reasons(view.reasons),
        released: view.released.map(|r| NativeReleasedWorktree {
            run: r.run,
            task: r.task,
            candidate: r.candidate,
            branch: r.branch,
            path: r.path,
            tip: r.tip,
            repo: r.repo,
            released_to: r.released_to,
            handover: r.handover,
        }),
        unfinished_handover: view.unfinished_handover,
        undone: view.undone,
    }
}

fn to_js_restore(view: RestoreView) -> NativeRestore {
    NativeRestore {
        kind: match view.kind {
            view::RestoreKind::Restored => RestoreKind::Restored,
            view::RestoreKind::Refused => RestoreKind::Refused,
        },
        message: view.message,
        reasons: to_js_reasons(view.reasons),
    }
}
