//! Bindings for checkout evidence (`natives_worktrees::evidence`).
//!
//! Every call drives git and waits on it (a capture may also wait for the
//! run's evidence lock), so each runs on a thread of its own (see
//! [`on_own_thread`]); a cancel kills the running git command. The objects
//! handed out are the library's views themselves ([`ArchiveView`],
//! [`CaptureView`], [`Restored`], N-API objects through the library's `napi`
//! feature), the very values the CLI's `--json` prints.

use std::path::Path;

use napi::{Env, bindgen_prelude::Buffer, bindgen_prelude::PromiseRaw};
use napi_derive::napi;
use natives_worktrees::{
    evidence::{self, Archive, ArchiveView, Bounds, CaptureView, Restored},
    git::Git,
};

use crate::{cancel::CancelToken, errors::guarded, task::on_own_thread};

/// A validated archive, and its patch when asked for.
#[napi(object, object_from_js = false)]
pub struct NativeEvidenceRead {
    /// The archive.
    pub archive: ArchiveView,
    /// Its binary patch from the base to the source, as validated.
    pub patch: Option<Buffer>,
}

/// Archive the checkout at `worktree` over `base` (a revision resolved in
/// the checkout) under the run's artifacts directory `out`, within the
/// library's bounds. Refusals resolve (`outcome: 'refused'`); `EEXIST`
/// when an archive of the same name holds different bytes, `EBADMSG` when
/// an archive fails validation.
#[napi(
    js_name = "nativeCaptureSourceEvidence",
    ts_return_type = "Promise<CaptureView>"
)]
pub fn native_capture_source_evidence<'env>(
    env: &'env Env,
    worktree: String,
    base: String,
    out: String,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, CaptureView>> {
    let token = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let token = token?;
        let git = Git::new()?;
        let captured = evidence::capture(
            &git,
            Path::new(&worktree),
            &base,
            Path::new(&out),
            &Bounds::default(),
            &token,
        )?;
        Ok(captured.view())
    })
}

/// Validate the archive at `dir` (every check, in a fresh repository);
/// with `withPatch`, its binary patch too. `EBADMSG` naming the failed
/// check.
#[napi(
    js_name = "nativeReadSourceEvidence",
    ts_return_type = "Promise<NativeEvidenceRead>"
)]
pub fn native_read_source_evidence<'env>(
    env: &'env Env,
    dir: String,
    with_patch: bool,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, NativeEvidenceRead>> {
    let token = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let token = token?;
        let archive = Archive::open(&Git::new()?, Path::new(&dir), &token)?;
        Ok(NativeEvidenceRead {
            archive: archive.view(),
            patch: with_patch.then(|| archive.patch().to_vec().into()),
        })
    })
}

/// Validate the archive at `dir`, then restore it into `dest` (which must
/// not exist) as an independent repository. `EEXIST` when `dest` exists.
#[napi(
    js_name = "nativeRestoreSourceEvidence",
    ts_return_type = "Promise<Restored>"
)]
pub fn native_restore_source_evidence<'env>(
    env: &'env Env,
    dir: String,
    dest: String,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, Restored>> {
    let token = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let token = token?;
        let git = Git::new()?;
        let archive = Archive::open(&git, Path::new(&dir), &token)?;
        archive.restore(&git, Path::new(&dest), &token)
    })
}
