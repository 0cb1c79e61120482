//! Bindings for build-cache leases (`natives_ownership::lease` and `fresh`).
//!
//! Acquiring may wait (up to the caller's budget, counted from the call) and
//! refreshing runs cargo, so both run on a thread of their own (see
//! [`on_own_thread`]); a waiting acquisition polls the call's cancellation
//! token once per poll interval, and a cancel kills a running cargo. A held lease is a
//! `BuildCacheLease` object whose `release()` the TypeScript layer calls from
//! `Symbol.asyncDispose`; if it is garbage-collected still held, dropping the
//! guard releases it (a safety net, not the way to release).

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::Mutex,
};

use napi::{
    Env,
    bindgen_prelude::{AsyncTask, Either, Null, PromiseRaw},
};
use napi_derive::napi;
use natives_core::Error;
use natives_ownership::{
    AcquireOutcome, Guard, Leases, Owner,
    fresh::{self, Build, Refresh, Target},
    lease::{self, LeaseRecord},
    view::{
        CacheEntryView, CacheStatusView, FreshnessView, IdentityView, LeaseRecordView,
        LeaseReleaseView, PruneReportView,
    },
};
use natives_system::paths;
use natives_system::process::pid_alive;

use crate::{
    cancel::CancelToken,
    errors::{guarded, on_js_thread},
    task::{Work, on_own_thread, task},
};

/// Who wants the lease: the job it belongs to, and the source it builds.
#[napi(object)]
pub struct NativeLeaseOwner {
    /// The run (a job of the orchestrator) the borrower belongs to.
    pub run: String,
    /// The node (task) within the run.
    pub node: String,
    /// The seat (role) within the node.
    pub seat: String,
    /// The worktree the build's source comes from, if any.
    pub worktree: Option<String>,
    /// The commit the build's source is at, if known.
    pub head: Option<String>,
}

/// Options of the native acquisition.
#[napi(object)]
pub struct NativeAcquireOptions {
    /// The natives home (default `$NATIVES_HOME`, else `~/.natives`).
    pub home: Option<String>,
    /// How long to wait for a busy lease; absent or 0: one attempt.
    pub budget_ms: Option<f64>,
    /// Refresh the cache for this source once held; `null`: no refresh;
    /// absent: the owner's worktree at its head, when the owner names both.
    pub identity: Option<Either<IdentityView, Null>>,
    /// Where cargo finds the workspace (default: the identity's worktree).
    pub manifest_paths: Option<Vec<String>>,
    /// Cargo's build directory (`build.build-dir`, `CARGO_BUILD_BUILD_DIR`)
    /// when the build sets one (default: as cargo's configuration in the
    /// worktree says).
    pub build_dir: Option<String>,
}

/// A held lease. `release()` lets it go; it is idempotent.
#[napi]
pub struct BuildCacheLease {
    guard: Mutex<Option<Guard>>,
    record: LeaseRecord,
    reclaimed: Option<LeaseRecord>,
    freshness: Option<FreshnessView>,
}

#[napi]
impl BuildCacheLease {
    /// This lease's record.
    #[napi(getter)]
    pub fn record(&self, env: Env) -> napi::Result<LeaseRecordView> {
        on_js_thread(&env, || Ok(LeaseRecordView::from(&self.record)))
    }

    /// The dead owner's record this acquisition replaced, if any.
    #[napi(getter)]
    pub fn reclaimed(&self, env: Env) -> napi::Result<Option<LeaseRecordView>> {
        on_js_thread(&env, || {
            Ok(self.reclaimed.as_ref().map(LeaseRecordView::from))
        })
    }

    /// What the refresh did, when acquired with an identity.
    #[napi(getter)]
    pub fn freshness(&self, env: Env) -> napi::Result<Option<FreshnessView>> {
        on_js_thread(&env, || Ok(self.freshness.clone()))
    }

    /// Whether it is still held by this object.
    #[napi(getter)]
    pub fn held(&self, env: Env) -> napi::Result<bool> {
        on_js_thread(&env, || {
            Ok(self.guard.lock().is_ok_and(|guard| guard.is_some()))
        })
    }

    /// Release the lease (deleting only a record that is still its own).
    /// `false` if it was already released.
    #[napi]
    pub fn release(&self, env: Env) -> napi::Result<bool> {
        on_js_thread(&env, || {
            let taken = self.guard.lock().ok().and_then(|mut guard| guard.take());
            match taken {
                Some(guard) => guard.release().map(|()| true),
                None => Ok(false),
            }
        })
    }
}

/// A lease collected while still held is released by its guard's drop,
/// which runs inside the engine's collector: a fault there must not unwind
/// into it.
impl Drop for BuildCacheLease {
    fn drop(&mut self) {
        let held = self.guard.get_mut().ok().and_then(Option::take);
        // Nobody is left to hear of a failed release; the lock goes with the process anyway.
        let _ = guarded(|| {
            drop(held);
            Ok(())
        });
    }
}

/// Take the build-cache lease on `dir`, waiting up to `budgetMs` (counted
/// from this call) while it is busy, then (with an identity) make the cache
/// fresh for that source. Rejects with `EBUSY` (one attempt, busy) or
/// `ETIMEDOUT` (budget spent), both naming the holder, or `ABORT_ERR`.
#[napi(
    js_name = "nativeAcquireBuildCache",
    ts_return_type = "Promise<BuildCacheLease>"
)]
pub fn native_acquire_build_cache<'env>(
    env: &'env Env,
    dir: String,
    owner: NativeLeaseOwner,
    options: NativeAcquireOptions,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, BuildCacheLease>> {
    let tokens = guarded(|| {
        let cancel = CancelToken::for_call(token, None)?;
        let budget = crate::options::milliseconds("budgetMs", options.budget_ms)?;
        let wait = Leases::budget_wait(&cancel, budget);
        Ok((cancel, wait))
    });
    on_own_thread(env, move || {
        let (cancel, wait) = tokens?;
        let leases = open(options.home.as_deref())?;
        let build = to_build(options.manifest_paths, options.build_dir);
        let (guard, freshness) = leases.acquire_for_build(
            Path::new(&dir),
            &to_owner(owner),
            to_refresh(options.identity),
            &build,
            wait.as_ref(),
            &cancel,
        )?;
        Ok(BuildCacheLease {
            record: guard.record().clone(),
            reclaimed: guard.reclaimed().cloned(),
            freshness: freshness.as_ref().map(FreshnessView::from),
            guard: Mutex::new(Some(guard)),
        })
    })
}

/// Take the output lease on `dir` for process cleanup: one attempt;
/// `EBUSY` naming the holder when someone else cleans up.
#[napi(
    js_name = "nativeAcquireCleanupLease",
    ts_return_type = "Promise<BuildCacheLease>"
)]
pub fn native_acquire_cleanup_lease(
    dir: String,
    owner: NativeLeaseOwner,
    home: Option<String>,
) -> AsyncTask<Work<BuildCacheLease>> {
    task(move || {
        let leases = open(home.as_deref())?;
        let dir = PathBuf::from(dir);
        let guard = match leases.try_acquire_output(&dir, &to_owner(owner))? {
            AcquireOutcome::Acquired(guard) => guard,
            AcquireOutcome::Busy(busy) => return Err(busy.to_error(&dir)),
        };
        Ok(BuildCacheLease {
            record: guard.record().clone(),
            reclaimed: guard.reclaimed().cloned(),
            freshness: None,
            guard: Mutex::new(Some(guard)),
        })
    })
}

/// Classify `dir`'s lease right now.
#[napi(js_name = "nativeInspectBuildCache")]
pub fn native_inspect_build_cache(
    env: Env,
    dir: String,
    home: Option<String>,
) -> napi::Result<CacheStatusView> {
    on_js_thread(&env, || {
        let inspection = open(home.as_deref())?.inspect(Path::new(&dir))?;
        Ok(CacheStatusView::of(&inspection.status, inspection.in_use))
    })
}

/// Every cache directory registered under the home.
#[napi(js_name = "nativeBuildCacheInventory")]
pub fn native_build_cache_inventory(
    env: Env,
    home: Option<String>,
) -> napi::Result<Vec<CacheEntryView>> {
    on_js_thread(&env, || {
        Ok(open(home.as_deref())?
            .inventory()?
            .iter()
            .map(CacheEntryView::from)
            .collect())
    })
}

/// Make `dir` fresh for a build from `identity` (call while holding its
/// lease): cleans the workspace's own packages from every layout cargo laid
/// out there (and in `buildDir`) when the source changed; spawns nothing
/// when it did not. `ENOTSUP` naming a layout it does not recognise.
/// Cancelling the token kills the running cargo command and its process
/// group (`ABORT_ERR`).
#[napi(
    js_name = "nativeEnsureFresh",
    ts_return_type = "Promise<FreshnessView>"
)]
pub fn native_ensure_fresh<'env>(
    env: &'env Env,
    dir: String,
    identity: IdentityView,
    manifest_paths: Option<Vec<String>>,
    build_dir: Option<String>,
    home: Option<String>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, FreshnessView>> {
    let token = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let token = token?;
        let home = paths::home(home.as_deref().map(Path::new))?;
        let build = to_build(manifest_paths, build_dir);
        fresh::ensure_fresh(&home, Path::new(&dir), &identity.into(), &build, &token)
            .map(|f| FreshnessView::from(&f))
    })
}

/// Prune `dir`'s build output to `limitBytes`, oldest files first, only
/// while holding its maintenance lease; `null` when the cache is in use.
/// `EINVAL` naming why when `dir` is not a registered cargo target directory
/// (or is a home, the natives home or a repository).
#[napi(
    js_name = "nativeMaintenancePrune",
    ts_return_type = "Promise<PruneReportView | null>"
)]
pub fn native_maintenance_prune(
    dir: String,
    limit_bytes: f64,
    owner: NativeLeaseOwner,
    home: Option<String>,
) -> AsyncTask<Work<Option<PruneReportView>>> {
    task(move || {
        let limit =
            crate::options::count("limitBytes", Some(limit_bytes))?.unwrap_or_default() as u64;
        let leases = open(home.as_deref())?;
        let report = leases.maintenance_prune(Path::new(&dir), limit, &to_owner(owner))?;
        Ok(report.as_ref().map(PruneReportView::from))
    })
}

/// Release `dir`'s lease for an owner that is gone; `EBUSY` while a live
/// owner holds it. An unreadable record is renamed aside, never deleted.
#[napi(js_name = "nativeReleaseBuildCache")]
pub fn native_release_build_cache(
    env: Env,
    dir: String,
    home: Option<String>,
) -> napi::Result<LeaseReleaseView> {
    on_js_thread(&env, || {
        let released = open(home.as_deref())?.release_unowned(Path::new(&dir))?;
        Ok(LeaseReleaseView::from(&released))
    })
}

/// Whether process `pid` (started at `startTime` clock ticks during boot
/// `bootId`, when known) may be alive: `false` only when its death is certain.
#[napi(js_name = "pidAlive")]
pub fn pid_alive_js(
    env: Env,
    pid: u32,
    start_time: Option<f64>,
    boot_id: Option<String>,
) -> napi::Result<bool> {
    on_js_thread(&env, || {
        Ok(pid_alive(
            pid,
            start_time.map(|t| t as u64),
            boot_id.as_deref(),
        ))
    })
}

/// The workspace's own package names in `cargo metadata --no-deps` JSON.
#[napi(js_name = "nativeParseWorkspacePackageNames")]
pub fn native_parse_workspace_package_names(env: Env, json: String) -> napi::Result<Vec<String>> {
    on_js_thread(&env, || fresh::parse_workspace_package_names(&json))
}

/// Every `--manifest-path` the commands pass, in order of first appearance.
#[napi(js_name = "nativeExtractManifestPaths")]
pub fn native_extract_manifest_paths(env: Env, commands: Vec<String>) -> napi::Result<Vec<String>> {
    on_js_thread(&env, || {
        let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
        Ok(fresh::extract_manifest_paths(&commands)
            .into_iter()
            .map(display)
            .collect())
    })
}

/// `{CARGO_TARGET_DIR}` for a child whose sandbox may write `dir` (it lies
/// within one of `writableRoots`), `{}` otherwise.
#[napi(js_name = "nativeCargoTargetEnv")]
pub fn native_cargo_target_env(
    env: Env,
    dir: String,
    writable_roots: Vec<String>,
) -> napi::Result<HashMap<String, String>> {
    on_js_thread(&env, || {
        let roots: Vec<PathBuf> = writable_roots.into_iter().map(PathBuf::from).collect();
        let vars = lease::cargo_target_env(Path::new(&dir), &roots)?;
        Ok(vars
            .into_iter()
            .map(|(name, value)| (name, display(value)))
            .collect())
    })
}

/// The hold a task gets while it waits on `dir`'s lease.
#[napi(js_name = "nativeResourceHold")]
pub fn native_resource_hold(env: Env, dir: String) -> napi::Result<String> {
    on_js_thread(&env, || lease::resource_hold(Path::new(&dir)))
}

/// The cache directory a resource hold waits on; `null` for another hold.
#[napi(js_name = "nativeParseResourceHold")]
pub fn native_parse_resource_hold(env: Env, hold: String) -> napi::Result<Option<String>> {
    on_js_thread(&env, || Ok(lease::parse_resource_hold(&hold).map(display)))
}

/// Whether a task held by `hold` can be released now: the lease it waits on
/// is no longer in use. `EINVAL` for another kind of hold.
#[napi(js_name = "nativeHoldReleasable")]
pub fn native_hold_releasable(env: Env, hold: String, home: Option<String>) -> napi::Result<bool> {
    on_js_thread(&env, || open(home.as_deref())?.hold_releasable(&hold))
}

pub(crate) fn open(home: Option<&str>) -> Result<Leases, Error> {
    Leases::open(&paths::home(home.map(Path::new))?)
}

pub(crate) fn to_owner(owner: NativeLeaseOwner) -> Owner {
    let mut converted = Owner::current(&owner.run, &owner.node, &owner.seat);
    converted.worktree = owner.worktree.map(PathBuf::from);
    converted.head = owner.head;
    converted
}

pub(crate) fn to_refresh(identity: Option<Either<IdentityView, Null>>) -> Refresh {
    match identity {
        None => Refresh::OwnersSource,
        Some(Either::B(Null)) => Refresh::Skip,
        Some(Either::A(identity)) => Refresh::For(identity.into()),
    }
}

fn to_build(manifest_paths: Option<Vec<String>>, build_dir: Option<String>) -> Build {
    let manifests = manifest_paths.unwrap_or_default();
    Build {
        workspaces: Target::of_manifests(manifests.into_iter().map(PathBuf::from).collect()),
        build_dir: build_dir.map(PathBuf::from),
    }
}

pub(crate) fn display(path: PathBuf) -> String {
    path.to_string_lossy().into_owned()
}
