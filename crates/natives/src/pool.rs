//! Bindings for build-cache pools (`natives_ownership::pool`).
//!
//! Acquiring may wait (up to the caller's budget, counted from the call),
//! copy a member and run cargo, so it runs on a thread of its own (see
//! [`on_own_thread`]) under the call's cancellation token; inventory and
//! prune walk the members, so they run off the JS thread too. A held member
//! is a `BuildCachePoolLease` whose `release()` the TypeScript layer calls
//! from `Symbol.asyncDispose`; one garbage-collected still held is released
//! by its drop (a safety net, not the way to release). Reports (the seed,
//! the inventory, a prune) are the library's views, the very objects
//! `natives pool status --json` prints.

use std::{collections::HashMap, path::Path, sync::Mutex};

use napi::{
    Env,
    bindgen_prelude::{AsyncTask, Either, Null, PromiseRaw},
};
use napi_derive::napi;
use natives_ownership::{
    Leases,
    fresh::Target,
    lease::LeaseRecord,
    pool::{PoolLease, PoolOptions, SeedStrategy},
    view::{
        FreshnessView, IdentityView, LeaseRecordView, PoolInventoryView, PoolPruneReportView,
        SeedReportView,
    },
};

use crate::{
    cancel::CancelToken,
    errors::{guarded, on_js_thread},
    lease::{NativeLeaseOwner, display, open, to_owner, to_refresh},
    task::{Work, on_own_thread, task},
};

/// Options of the native acquisition from a pool.
#[napi(object)]
pub struct NativePoolOptions {
    /// The natives home (default `$NATIVES_HOME`, else `~/.natives`).
    pub home: Option<String>,
    /// How long to wait while every member is busy; absent or 0: one attempt.
    pub budget_ms: Option<f64>,
    /// At most this many members (default 4).
    pub size: Option<f64>,
    /// Prune idle members beyond this many bytes once a member is held.
    pub budget_bytes: Option<f64>,
    /// How a new member is filled: `auto` (default), `reflink`, `copy`, `cold`.
    pub seed: Option<String>,
    /// Refresh the member for this source; `null`: no refresh; absent: the
    /// owner's worktree at its head, when the owner names both.
    pub identity: Option<Either<IdentityView, Null>>,
    /// Where cargo finds the workspace (default: the identity's worktree).
    pub manifest_paths: Option<Vec<String>>,
}

/// A member held from a pool. `release()` lets it go; it is idempotent.
#[napi]
pub struct BuildCachePoolLease {
    lease: Mutex<Option<PoolLease>>,
    member: String,
    dir: String,
    env: HashMap<String, String>,
    record: Option<LeaseRecord>,
    reclaimed: Option<LeaseRecord>,
    freshness: Option<FreshnessView>,
    seed: Option<SeedReportView>,
    pruned: Option<PoolPruneReportView>,
}

#[napi]
impl BuildCachePoolLease {
    /// The member's name (`member-<n>`).
    #[napi(getter)]
    pub fn member(&self) -> String {
        self.member.clone()
    }

    /// The member's directory, canonical.
    #[napi(getter)]
    pub fn dir(&self) -> String {
        self.dir.clone()
    }

    /// The environment to build with (`CARGO_TARGET_DIR`, `CARGO_BUILD_BUILD_DIR`).
    #[napi(getter)]
    pub fn env(&self) -> HashMap<String, String> {
        self.env.clone()
    }

    /// The member's lease record.
    #[napi(getter)]
    pub fn record(&self, env: Env) -> napi::Result<Option<LeaseRecordView>> {
        on_js_thread(&env, || Ok(self.record.as_ref().map(LeaseRecordView::from)))
    }

    /// The dead owner's record this acquisition replaced, if any.
    #[napi(getter)]
    pub fn reclaimed(&self, env: Env) -> napi::Result<Option<LeaseRecordView>> {
        on_js_thread(&env, || {
            Ok(self.reclaimed.as_ref().map(LeaseRecordView::from))
        })
    }

    /// What the refresh did, when one was asked for.
    #[napi(getter)]
    pub fn freshness(&self) -> Option<FreshnessView> {
        self.freshness.clone()
    }

    /// How the member was filled, when this acquisition created it.
    #[napi(getter)]
    pub fn seed(&self) -> Option<SeedReportView> {
        self.seed.clone()
    }

    /// What the prune to the disk budget did, when one was given.
    #[napi(getter)]
    pub fn pruned(&self) -> Option<PoolPruneReportView> {
        self.pruned.clone()
    }

    /// Whether it is still held by this object.
    #[napi(getter)]
    pub fn held(&self, env: Env) -> napi::Result<bool> {
        on_js_thread(&env, || {
            Ok(self.lease.lock().is_ok_and(|lease| lease.is_some()))
        })
    }

    /// Release the member, recording its last use, after sharing the
    /// blocks its files hold alike with the other members' (off the JS
    /// thread: it reads them). `false` if it was already released.
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn release(&self, env: Env) -> napi::Result<AsyncTask<Work<bool>>> {
        on_js_thread(&env, || {
            let taken = self.lease.lock().ok().and_then(|mut lease| lease.take());
            Ok(task(move || match taken {
                Some(lease) => lease.release().map(|()| true),
                None => Ok(false),
            }))
        })
    }
}

/// A member collected while still held is released by its drop, which runs
/// inside the engine's collector: a fault there must not unwind into it.
impl Drop for BuildCachePoolLease {
    fn drop(&mut self) {
        let held = self.lease.get_mut().ok().and_then(Option::take);
        let _ = guarded(|| {
            drop(held);
            Ok(())
        });
    }
}

/// Lease a member of the pool at `pool` for `owner`: a free one at once,
/// else a new one (while fewer than `size`) seeded from the warmest member,
/// else wait up to `budgetMs`; then refresh it for the owner's source.
/// Rejects with `EBUSY` (one attempt, full) or `ETIMEDOUT` naming the
/// holders, `ABORT_ERR`, `EINVAL` for bad options, `ENOTSUP` for a reflink
/// asked for where the filesystem cannot clone.
#[napi(
    js_name = "nativeAcquireFromPool",
    ts_return_type = "Promise<BuildCachePoolLease>"
)]
pub fn native_acquire_from_pool<'env>(
    env: &'env Env,
    pool: String,
    owner: NativeLeaseOwner,
    options: NativePoolOptions,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, BuildCachePoolLease>> {
    let prepared = guarded(|| {
        let cancel = CancelToken::for_call(token, None)?;
        let budget = crate::options::milliseconds("budgetMs", options.budget_ms)?;
        let wait = Leases::budget_wait(&cancel, budget);
        Ok((cancel, wait, to_options(&options)?))
    });
    on_own_thread(env, move || {
        let (cancel, wait, pool_options) = prepared?;
        let leases = open(options.home.as_deref())?;
        let lease = leases.acquire_from_pool(
            Path::new(&pool),
            &to_owner(owner),
            &PoolOptions {
                refresh: to_refresh(options.identity),
                ..pool_options
            },
            wait.as_ref(),
            &cancel,
        )?;
        Ok(to_js_lease(lease))
    })
}

/// Every member of the pool at `pool`: state, lease, holder, identity,
/// sizes, last use, seed.
#[napi(
    js_name = "nativePoolInventory",
    ts_return_type = "Promise<PoolInventoryView>"
)]
pub fn native_pool_inventory<'env>(
    env: &'env Env,
    pool: String,
    home: Option<String>,
) -> napi::Result<PromiseRaw<'env, PoolInventoryView>> {
    on_own_thread(env, move || {
        let inventory = open(home.as_deref())?.pool_inventory(Path::new(&pool))?;
        Ok(PoolInventoryView::from(&inventory))
    })
}

/// Prune the pool at `pool` to `budgetBytes`: leftovers of dead processes
/// removed whole, then idle members least recently used first; never a
/// leased one.
#[napi(
    js_name = "nativePrunePool",
    ts_return_type = "Promise<PoolPruneReportView>"
)]
pub fn native_prune_pool<'env>(
    env: &'env Env,
    pool: String,
    budget_bytes: f64,
    owner: NativeLeaseOwner,
    home: Option<String>,
) -> napi::Result<PromiseRaw<'env, PoolPruneReportView>> {
    on_own_thread(env, move || {
        let budget =
            crate::options::count("budgetBytes", Some(budget_bytes))?.unwrap_or_default() as u64;
        let report =
            open(home.as_deref())?.prune_pool(Path::new(&pool), budget, &to_owner(owner))?;
        Ok(PoolPruneReportView::from(&report))
    })
}

/// The library's options from the native ones (the refresh set apart).
fn to_options(options: &NativePoolOptions) -> Result<PoolOptions, natives_core::Error> {
    let size = crate::options::count("size", options.size)?;
    let budget = crate::options::count("budgetBytes", options.budget_bytes)?;
    let seed = options
        .seed
        .as_deref()
        .map(SeedStrategy::parse)
        .transpose()?;
    let manifests = options.manifest_paths.clone().unwrap_or_default();
    let defaults = PoolOptions::default();
    Ok(PoolOptions {
        size: size.unwrap_or(defaults.size),
        budget_bytes: budget.map(|bytes| bytes as u64),
        seed: seed.unwrap_or(defaults.seed),
        workspaces: Target::of_manifests(manifests.into_iter().map(Into::into).collect()),
        ..defaults
    })
}

fn to_js_lease(lease: PoolLease) -> BuildCachePoolLease {
    BuildCachePoolLease {
        member: lease.member().to_owned(),
        dir: display(lease.dir().to_owned()),
        env: lease
            .env()
            .into_iter()
            .map(|(name, value)| (name, display(value)))
            .collect(),
        record: lease.record().cloned(),
        reclaimed: lease.reclaimed().cloned(),
        freshness: lease.freshness().map(FreshnessView::from),
        seed: lease.seed().map(SeedReportView::from),
        pruned: lease.pruned().map(PoolPruneReportView::from),
        lease: Mutex::new(Some(lease)),
    }
}
