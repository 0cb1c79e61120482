//! Bindings for the inactive-checkout eviction pass and the archived seats
//! it leaves (`natives_worktrees::eviction`).
//!
//! A pass drives git for seconds and waits on locks, so every call runs on
//! a thread of its own ([`on_own_thread`]) under the call's cancellation
//! token. The report, the seat tips and a restored seat are the library's
//! views, the very objects `natives housekeeping --json` and `natives fold
//! RUN --show-seats --json` print, so the two fronts cannot name a field
//! differently; their TypeScript types are generated from them.

use std::path::Path;

use napi::{Env, bindgen_prelude::PromiseRaw};
use napi_derive::napi;
use natives_core::Error;
use natives_system::paths;
use natives_worktrees::{
    eviction::{self, Options, seats},
    evidence::Restored,
    git::Git,
    registry::Registry,
    view::{EvictionReportView, SeatTipView},
};

use crate::{
    cancel::CancelToken,
    errors::guarded,
    options::{given, milliseconds},
    task::on_own_thread,
};

/// How a pass is asked for; every field left out is the library's default
/// (the home's configuration, then off).
#[napi(object)]
pub struct NativeEvictionOptions {
    /// The natives home. Default: `$NATIVES_HOME`, else `~/.natives`.
    pub home: Option<String>,
    /// Run even if the configuration's `disk.auto_fold` is off.
    pub auto_fold: Option<bool>,
    /// The most source bytes this pass unlinks (`disk.worktree_reclaim_bytes`).
    pub reclaim_bytes: Option<f64>,
    /// Say what would be evicted; touch nothing.
    pub dry_run: Option<bool>,
    /// How long a copy must have been left alone, in milliseconds.
    pub quiet_period_ms: Option<f64>,
}

/// Run one housekeeping pass: the report `natives housekeeping --json`
/// prints. Rejects with `EINVAL` (a bad option, an unreadable
/// configuration), `EBUSY` (another pass is running), `ABORT_ERR`.
#[napi(
    js_name = "nativeEvictionPass",
    ts_return_type = "Promise<EvictionReportView>"
)]
pub fn native_eviction_pass<'env>(
    env: &'env Env,
    options: NativeEvictionOptions,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, EvictionReportView>> {
    let token = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let token = token?;
        let home = paths::home(options.home.as_deref().map(Path::new))?;
        let pass_options = to_options(&options)?;
        let report = eviction::pass(&home, &Git::new()?, &pass_options, &token)?;
        Ok(EvictionReportView::from(&report))
    })
}

/// Every archived tip of `run`'s copies, historical ones included, each
/// archive validated: what `natives fold RUN --show-seats --json` prints.
#[napi(
    js_name = "nativeArchivedSeats",
    ts_return_type = "Promise<SeatTipView[]>"
)]
pub fn native_archived_seats<'env>(
    env: &'env Env,
    home: Option<String>,
    run: String,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, Vec<SeatTipView>>> {
    let token = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let token = token?;
        let tips = seats::show(&open(home.as_deref())?, &Git::new()?, &run, &token)?;
        Ok(tips.iter().map(SeatTipView::from).collect())
    })
}

/// Rebuild the archived tip `head` (a full commit id) of one of `run`'s
/// copies as a new repository at `dest` (which must not exist).
#[napi(js_name = "nativeRestoreSeat", ts_return_type = "Promise<Restored>")]
pub fn native_restore_seat<'env>(
    env: &'env Env,
    home: Option<String>,
    run: String,
    head: String,
    dest: String,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, Restored>> {
    let token = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let token = token?;
        let registry = open(home.as_deref())?;
        let restored = seats::restore(
            &registry,
            &Git::new()?,
            &run,
            &head,
            Path::new(&dest),
            &token,
        )?;
        Ok(restored)
    })
}

/// What a grant sets on a source copy; a field left out keeps its value.
#[napi(object)]
pub struct NativeAuthority {
    /// Its work was made public.
    pub public: Option<bool>,
    /// It was selected as the source to recover the task from.
    pub selected_recovery: Option<bool>,
    /// Its work was approved.
    pub approved: Option<bool>,
    /// Its source is to be kept.
    pub retain: Option<bool>,
}

/// Grant (or take back) authority over `run`'s source copy `source`
/// (`review-1`, `candidate-A`): a copy with any authority is never
/// evicted. `ENOENT` when the run has no such copy.
#[napi(js_name = "nativeGrantAuthority", ts_return_type = "Promise<void>")]
pub fn native_grant_authority<'env>(
    env: &'env Env,
    home: Option<String>,
    run: String,
    source: String,
    authority: NativeAuthority,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, ()>> {
    let token = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let token = token?;
        open(home.as_deref())?.grant(&run, &source, &token, |held| {
            given(&mut held.public, authority.public);
            given(&mut held.selected_recovery, authority.selected_recovery);
            given(&mut held.approved, authority.approved);
            given(&mut held.retain, authority.retain);
        })?;
        Ok(())
    })
}

fn to_options(options: &NativeEvictionOptions) -> Result<Options, Error> {
    let mut pass = Options {
        auto_fold: options.auto_fold,
        ..Options::default()
    };
    if let Some(bytes) = options.reclaim_bytes {
        let whole = bytes.is_finite() && bytes >= 0.0 && bytes.fract() == 0.0;
        if !whole {
            return Err(Error::invalid(format!(
                "reclaimBytes must be a non-negative integer, got {bytes}"
            )));
        }
        pass.reclaim_bytes = Some(bytes as u64);
    }
    given(&mut pass.dry_run, options.dry_run);
    given(
        &mut pass.quiet_period,
        milliseconds("quietPeriodMs", options.quiet_period_ms)?,
    );
    Ok(pass)
}

fn open(home: Option<&str>) -> Result<Registry, Error> {
    Ok(Registry::open(&paths::home(home.map(Path::new))?))
}
