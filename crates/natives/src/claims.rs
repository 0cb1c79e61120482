//! Bindings for memory-directory claims (`natives_ownership::claims`).
//!
//! Store calls that may wait for a zone lock run on a thread of their own
//! (see [`on_own_thread`]), so a busy thread pool cannot hold them past their
//! deadline; listing claims only reads and runs on the pool; the layout
//! helpers only read a few small files and run inline. A deadline arrives as
//! `timeoutMs` and counts from the call: the binding turns it into an instant
//! before the work leaves the JS thread. The verdict
//! calls never reject: a bad option or a panic answers "shared, unproven",
//! like every other failure of the library.

use std::path::{Path, PathBuf};

use napi::{
    Env,
    bindgen_prelude::{AsyncTask, PromiseRaw},
};
use napi_derive::napi;
use natives_ownership::{
    CancelToken as LibraryToken, Error,
    claims::{
        self, Agent, ClaimRequest, Exclusivity, KnownAgent, MemoryRedirects, Releaser,
        claude_layout, redirect,
    },
    view::{ClaimedFolderView, VerdictView},
};
use natives_system::paths;

use crate::{
    cancel::CancelToken,
    errors::{guarded, on_js_thread},
    task::{Work, on_own_thread, task},
};

/// The agent asking for a memory folder.
#[napi(object)]
pub struct NativeClaimAgent {
    /// Stable across the agent's spawns.
    pub uid: String,
    /// Its working directory; blank or absent: the default agents directory
    /// (always shared).
    pub cwd: Option<String>,
    /// The account it runs under (recorded with the claim).
    pub account: String,
}

/// Another agent the caller's channel store knows.
#[napi(object)]
pub struct NativeKnownAgent {
    /// Its stable id.
    pub uid: String,
    /// Its working directory, where known.
    pub cwd: Option<String>,
    /// The memory folder it resolves to, where known.
    pub memory_dir: Option<String>,
}

/// Everything `checkAndClaim` decides from; the TypeScript layer documents it.
#[napi(object)]
pub struct NativeClaimRequest {
    /// The agent asking.
    pub agent: NativeClaimAgent,
    /// The memory folder the agent's spawn uses.
    pub memory_dir: String,
    /// Every other agent the caller's store has (its stale claims are pruned
    /// against this list).
    pub others: Vec<NativeKnownAgent>,
    /// The caller's channel store id; only this store may later prune the
    /// claim.
    pub origin: String,
    /// The agent's user's home directory, a known shared location; the
    /// caller's own home is one whether or not this is given.
    pub user_home: Option<String>,
    /// Settings files that may redirect memory; missing files redirect
    /// nothing.
    pub settings_files: Vec<String>,
    /// The agent's `CLAUDE_COWORK_MEMORY_PATH_OVERRIDE`, if set.
    pub memory_path_override: Option<String>,
    /// The natives home (default `$NATIVES_HOME`, else `~/.natives`).
    pub home: Option<String>,
    /// Checks that cannot finish within this many milliseconds answer
    /// `unproven`.
    pub timeout_ms: f64,
}

/// One agent's claim on a folder, as the read-only calls name it.
#[napi(object)]
pub struct NativeClaimTarget {
    /// The memory folder.
    pub memory_dir: String,
    /// The agent whose claim it is.
    pub uid: String,
    /// Other agents the caller's store has; used by `usedByAnother` only.
    pub others: Option<Vec<NativeKnownAgent>>,
    /// The natives home (default `$NATIVES_HOME`, else `~/.natives`).
    pub home: Option<String>,
    /// The call's deadline, in milliseconds from the call.
    pub timeout_ms: f64,
}

/// Decide whether the memory folder is exclusive to the agent, recording its
/// claim. Never rejects: failures answer shared, `unproven`.
#[napi(
    js_name = "nativeCheckAndClaim",
    ts_return_type = "Promise<VerdictView>"
)]
pub fn native_check_and_claim<'env>(
    env: &'env Env,
    request: NativeClaimRequest,
) -> napi::Result<PromiseRaw<'env, VerdictView>> {
    let deadline = guarded(|| CancelToken::for_call(None, Some(request.timeout_ms)));
    on_own_thread(env, move || {
        let verdict = prepare_claim(request, deadline).map_or_else(
            |err| Exclusivity::unproven(&err),
            |(home, request, deadline)| claims::check_and_claim(&home, &request, &deadline),
        );
        Ok(VerdictView::from(verdict))
    })
}

fn prepare_claim(
    request: NativeClaimRequest,
    deadline: Result<LibraryToken, Error>,
) -> Result<(PathBuf, ClaimRequest, LibraryToken), Error> {
    let deadline = deadline?;
    let home = paths::home(request.home.as_deref().map(Path::new))?;
    let converted = ClaimRequest {
        agent: Agent {
            uid: request.agent.uid,
            cwd: request.agent.cwd.map(PathBuf::from),
            account: request.agent.account,
        },
        memory_dir: PathBuf::from(request.memory_dir),
        others: request.others.into_iter().map(to_known_agent).collect(),
        origin: request.origin,
        user_home: request.user_home.map(PathBuf::from),
        redirects: MemoryRedirects {
            settings_files: request
                .settings_files
                .into_iter()
                .map(PathBuf::from)
                .collect(),
            path_override: request.memory_path_override,
        },
    };
    Ok((home, converted, deadline))
}

/// Whether `uid` still holds the only claim on the folder (read-only). Never
/// rejects: failures answer shared, `unproven`.
#[napi(
    js_name = "nativeHeldExclusively",
    ts_return_type = "Promise<VerdictView>"
)]
pub fn native_held_exclusively<'env>(
    env: &'env Env,
    target: NativeClaimTarget,
) -> napi::Result<PromiseRaw<'env, VerdictView>> {
    let deadline = guarded(|| CancelToken::for_call(None, Some(target.timeout_ms)));
    on_own_thread(env, move || {
        let verdict = prepare_target(&target, deadline).map_or_else(
            |err| Exclusivity::unproven(&err),
            |(home, deadline)| {
                claims::held_exclusively(
                    &home,
                    Path::new(&target.memory_dir),
                    &target.uid,
                    &deadline,
                )
            },
        );
        Ok(VerdictView::from(verdict))
    })
}

/// Whether another agent uses the folder (read-only). Failures answer `true`.
#[napi(js_name = "nativeUsedByAnother", ts_return_type = "Promise<boolean>")]
pub fn native_used_by_another<'env>(
    env: &'env Env,
    target: NativeClaimTarget,
) -> napi::Result<PromiseRaw<'env, bool>> {
    let deadline = guarded(|| CancelToken::for_call(None, Some(target.timeout_ms)));
    on_own_thread(env, move || {
        let Ok((home, deadline)) = prepare_target(&target, deadline) else {
            return Ok(true);
        };
        let others: Vec<KnownAgent> = target
            .others
            .unwrap_or_default()
            .into_iter()
            .map(to_known_agent)
            .collect();
        let dir = Path::new(&target.memory_dir);
        Ok(claims::used_by_another(
            &home,
            dir,
            &target.uid,
            &others,
            &deadline,
        ))
    })
}

/// Remove `uid`'s claim on the folder (named by its path, or by its zone as
/// `natives claims list` shows it); resolves with whether there was one. A
/// claim another OS user made is refused with `EPERM` unless `anyUser`.
#[napi(js_name = "nativeReleaseClaim", ts_return_type = "Promise<boolean>")]
pub fn native_release_claim<'env>(
    env: &'env Env,
    target: NativeClaimTarget,
    any_user: Option<bool>,
) -> napi::Result<PromiseRaw<'env, bool>> {
    let releaser = match any_user {
        Some(true) => Releaser::Operator,
        Some(false) => Releaser::ClaimOwner,
        None => Releaser::default(),
    };
    let deadline = guarded(|| CancelToken::for_call(None, Some(target.timeout_ms)));
    on_own_thread(env, move || {
        let (home, deadline) = prepare_target(&target, deadline)?;
        claims::release_named(&home, &target.memory_dir, &target.uid, &deadline, releaser)
    })
}

fn prepare_target(
    target: &NativeClaimTarget,
    deadline: Result<LibraryToken, Error>,
) -> Result<(PathBuf, LibraryToken), Error> {
    let deadline = deadline?;
    let home = paths::home(target.home.as_deref().map(Path::new))?;
    Ok((home, deadline))
}

/// Remove the claims `origin` wrote for agents it no longer has.
#[napi(js_name = "nativePruneStaleClaims", ts_return_type = "Promise<number>")]
pub fn native_prune_stale_claims<'env>(
    env: &'env Env,
    origin: String,
    store_agents: Vec<String>,
    home: Option<String>,
    timeout_ms: f64,
) -> napi::Result<PromiseRaw<'env, u32>> {
    let deadline = guarded(|| CancelToken::for_call(None, Some(timeout_ms)));
    on_own_thread(env, move || {
        let deadline = deadline?;
        let home = paths::home(home.as_deref().map(Path::new))?;
        let pruned = claims::prune_stale(&home, &origin, &store_agents, &deadline)?;
        Ok(u32::try_from(pruned).unwrap_or(u32::MAX))
    })
}

/// Every claimed folder, or those `uid` holds a claim on.
#[napi(
    js_name = "nativeClaimsOf",
    ts_return_type = "Promise<ClaimedFolderView[]>"
)]
pub fn native_claims_of(
    uid: Option<String>,
    home: Option<String>,
) -> AsyncTask<Work<Vec<ClaimedFolderView>>> {
    task(move || {
        let home = paths::home(home.as_deref().map(Path::new))?;
        let folders = match uid {
            Some(uid) => claims::claims_of(&home, &uid)?,
            None => claims::list(&home)?.folders,
        };
        Ok(folders.iter().map(ClaimedFolderView::from).collect())
    })
}

/// A directory's canonical id: the longest existing prefix with symlinks
/// resolved, the rest kept as given.
#[napi(js_name = "dirId")]
pub fn dir_id(env: Env, path: String) -> napi::Result<String> {
    on_js_thread(&env, || paths::dir_id(Path::new(&path)).map(lossy))
}

/// The directory the CLI keys `cwd`'s memory by (the repository root).
#[napi(js_name = "memoryProjectRoot")]
pub fn memory_project_root(env: Env, cwd: String, timeout_ms: Option<f64>) -> napi::Result<String> {
    on_js_thread(&env, || {
        let deadline = CancelToken::for_call(None, timeout_ms)?;
        claude_layout::memory_project_root(Path::new(&cwd), &deadline).map(lossy)
    })
}

/// Whether the repository rooted at `root` has linked worktrees.
#[napi(js_name = "hasLinkedWorktrees")]
pub fn has_linked_worktrees(env: Env, root: String, timeout_ms: Option<f64>) -> napi::Result<bool> {
    on_js_thread(&env, || {
        let deadline = CancelToken::for_call(None, timeout_ms)?;
        claude_layout::has_linked_worktrees(Path::new(&root), &deadline)
    })
}

/// The CLI's folder name for a path.
#[napi(js_name = "claudeFolderName")]
pub fn claude_folder_name(env: Env, path: String) -> napi::Result<String> {
    on_js_thread(&env, || Ok(claude_layout::folder_name(&path)))
}

/// The memory folder the CLI with configuration directory `configDir` uses
/// for an agent working in `cwd`.
#[napi(js_name = "claudeMemoryDir")]
pub fn claude_memory_dir(
    env: Env,
    config_dir: String,
    cwd: String,
    timeout_ms: Option<f64>,
) -> napi::Result<String> {
    on_js_thread(&env, || {
        let deadline = CancelToken::for_call(None, timeout_ms)?;
        claude_layout::memory_dir(Path::new(&config_dir), Path::new(&cwd), &deadline).map(lossy)
    })
}

/// The settings files that may redirect memory: user, local and policy.
#[napi(js_name = "memorySettingsFiles")]
pub fn memory_settings_files(
    env: Env,
    config_dir: String,
    project_dir: String,
) -> napi::Result<Vec<String>> {
    on_js_thread(&env, || {
        let files =
            redirect::documented_settings_files(Path::new(&config_dir), Path::new(&project_dir));
        Ok(files.into_iter().map(lossy).collect())
    })
}

fn lossy(path: PathBuf) -> String {
    path.to_string_lossy().into_owned()
}

fn to_known_agent(agent: NativeKnownAgent) -> KnownAgent {
    KnownAgent {
        uid: agent.uid,
        cwd: agent.cwd.map(PathBuf::from),
        memory_dir: agent.memory_dir.map(PathBuf::from),
    }
}
