//! Bindings for the run registry and the handover of a branch from an
//! earlier attempt (`natives_worktrees`).
//!
//! Every object handed out is one of the library's views
//! (`natives_worktrees::view`) itself, an N-API object through the library's
//! `napi` feature: the command line's `--json` prints the same values, and
//! the TypeScript declarations napi writes come from the views' own fields
//! and docs, so no shape is declared twice.
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
    registry::{self, Candidate, Driver, NewRun, Registry, Seat, SeatKind, Status},
    view::{DriverState, HandoverView, RestoreView, RunView, TaskView},
};

use crate::{
    cancel::CancelToken,
    errors::{guarded, on_js_thread},
    task::{Work, on_own_thread, task},
};

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
    pub status: Status,
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

/// Record task `task`, or answer it if it is recorded already.
#[napi(js_name = "nativeCreateTask", ts_return_type = "Promise<TaskView>")]
pub fn native_create_task<'env>(
    env: &'env Env,
    task: String,
    home: Option<String>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, TaskView>> {
    let cancel = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let record = open(home.as_deref())?.create_task(&task, &cancel?)?;
        Ok(TaskView::from(&record))
    })
}

/// Record a new run of a recorded task: `EEXIST` if its id is taken,
/// `ENOENT` if the task was never recorded.
#[napi(js_name = "nativeCreateRun", ts_return_type = "Promise<RunView>")]
pub fn native_create_run<'env>(
    env: &'env Env,
    run: NativeNewRun,
    home: Option<String>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, RunView>> {
    let cancel = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let registry = open(home.as_deref())?;
        let new = NewRun {
            id: run.id,
            task: run.task,
            worktree_root: PathBuf::from(run.worktree_root),
            status: run.status,
        };
        let record = registry.create_run(&new, &cancel?)?;
        Ok(RunView::probed(&registry, &record))
    })
}

/// Add a candidate worktree to run `run`: `EEXIST` if the run has one of
/// that name.
#[napi(js_name = "nativeAddCandidate", ts_return_type = "Promise<RunView>")]
pub fn native_add_candidate<'env>(
    env: &'env Env,
    run: String,
    candidate: NativeNewCandidate,
    home: Option<String>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, RunView>> {
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
        Ok(RunView::probed(&registry, &record))
    })
}

/// Add a seat to run `run`: `EEXIST` if the run has that seat, `EINVAL` for
/// a number that is not a whole number from 0 to 2^32-1.
#[napi(js_name = "nativeAddSeat", ts_return_type = "Promise<RunView>")]
pub fn native_add_seat<'env>(
    env: &'env Env,
    run: String,
    seat: NativeNewSeat,
    home: Option<String>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, RunView>> {
    let prepared = guarded(|| {
        let number = crate::options::count("number", Some(seat.number))?.unwrap_or_default();
        let number = u32::try_from(number).map_err(|_| {
            Error::invalid(format!(
                "number must be at most {}, got {}",
                u32::MAX,
                seat.number
            ))
        })?;
        let mut added = Seat::new(seat.kind, number, Path::new(&seat.path));
        added.base_head = seat.base_head;
        added.review_head = seat.review_head;
        Ok((added, CancelToken::for_call(token, None)?))
    });
    on_own_thread(env, move || {
        let (seat, cancel) = prepared?;
        let registry = open(home.as_deref())?;
        let record = registry.add_seat(&run, &seat, &cancel)?;
        Ok(RunView::probed(&registry, &record))
    })
}

/// Set run `run`'s status.
#[napi(js_name = "nativeSetRunStatus", ts_return_type = "Promise<RunView>")]
pub fn native_set_run_status<'env>(
    env: &'env Env,
    run: String,
    status: Status,
    home: Option<String>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, RunView>> {
    let cancel = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let registry = open(home.as_deref())?;
        let record = registry.set_status(&run, status, &cancel?)?;
        Ok(RunView::probed(&registry, &record))
    })
}

/// Run `run` (`ENOENT` if it was never recorded).
#[napi(js_name = "nativeShowRun", ts_return_type = "Promise<RunView>")]
pub fn native_show_run(run: String, home: Option<String>) -> AsyncTask<Work<RunView>> {
    task(move || {
        let registry = open(home.as_deref())?;
        let record = registry.show(&run)?;
        Ok(RunView::probed(&registry, &record))
    })
}

/// Every run recorded, or only `task`'s (`ENOENT` for a task never
/// recorded), oldest first.
#[napi(js_name = "nativeListRuns", ts_return_type = "Promise<RunView[]>")]
pub fn native_list_runs(
    task_id: Option<String>,
    home: Option<String>,
) -> AsyncTask<Work<Vec<RunView>>> {
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
    ts_return_type = "Promise<RunView[]>"
)]
pub fn native_earlier_attempts(
    task_id: String,
    home: Option<String>,
) -> AsyncTask<Work<Vec<RunView>>> {
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
        let (state, _) = DriverState::of(&registry.driver_liveness(&run));
        Ok(state)
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
    pub fn view(&self, env: Env) -> napi::Result<HandoverView> {
        on_js_thread(&env, || Ok(self.view.clone()))
    }

    /// Put the released worktree back at the tip recorded when it was
    /// released, unless ownership changed since (a refusal, never a
    /// rejection). `EINVAL` when nothing was released.
    #[napi(ts_return_type = "Promise<RestoreView>")]
    pub fn restore<'env>(
        &self,
        env: &'env Env,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'env, RestoreView>> {
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
            Ok(RestoreView::of(&released, &restore))
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
    ts_return_type = "Promise<RestoreView>"
)]
pub fn native_restore_handover<'env>(
    env: &'env Env,
    handover: String,
    home: Option<String>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, RestoreView>> {
    let cancel = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let cancel = cancel?;
        let registry = open(home.as_deref())?;
        let released = Released::find(&registry, &handover)?;
        let restore = released.restore(&registry, &Git::new()?, &cancel)?;
        Ok(RestoreView::of(&released, &restore))
    })
}

fn open(home: Option<&str>) -> Result<Registry, Error> {
    Ok(Registry::open(&paths::home(home.map(Path::new))?))
}

fn runs(registry: &Registry, records: &[registry::RunRecord]) -> Vec<RunView> {
    records
        .iter()
        .map(|record| RunView::probed(registry, record))
        .collect()
}
