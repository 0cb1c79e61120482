//! Bindings for checkout evidence (`natives_worktrees::evidence`).
//!
//! Every call drives git and waits on it (a capture may also wait for the
//! run's evidence lock), so each runs on a thread of its own (see
//! [`on_own_thread`]); a cancel kills the running git command. The shapes
//! are the library's views ([`ArchiveView`],
//! [`CaptureView`](natives_worktrees::evidence::CaptureView), [`Restored`])
//! field for field, so the addon and the CLI's `--json` name the same
//! fields.

use std::path::Path;

use napi::{Env, bindgen_prelude::Buffer, bindgen_prelude::PromiseRaw};
use napi_derive::napi;
use natives_worktrees::{
    evidence::{self, Archive, ArchiveView, Bounds, Captured, Restored, Tip},
    git::Git,
};

use crate::{cancel::CancelToken, errors::guarded, task::on_own_thread};

/// One archived commit.
#[napi(object)]
pub struct NativeEvidenceTip {
    /// The commit's id.
    pub commit: String,
    /// Its tree.
    pub tree: String,
    /// Where the checkout showed it: `HEAD`, `base`, `HEAD@{n}`, `ORIG_HEAD`.
    pub seen_as: Vec<String>,
}

/// A validated archive.
#[napi(object)]
pub struct NativeEvidenceArchive {
    /// Its directory.
    pub dir: String,
    /// The source commit (the checkout's `HEAD`).
    pub head: String,
    /// The base commit.
    pub base: String,
    /// The source tree.
    pub source_tree: String,
    /// The base tree.
    pub base_tree: String,
    /// Every archived commit.
    pub tips: Vec<NativeEvidenceTip>,
    /// Objects in its pack.
    pub objects: f64,
    /// Their expanded size in bytes.
    pub object_bytes: f64,
    /// Its size on disk in bytes.
    pub bytes: f64,
    /// The binary patch's size in bytes.
    pub patch_bytes: f64,
}

/// What a capture did.
#[napi(string_enum = "lowercase")]
pub enum EvidenceOutcome {
    /// A new archive was published and validated.
    Published,
    /// An archive of the same bytes existed; it was revalidated.
    Existing,
    /// Nothing was archived (`reason` says why).
    Refused,
}

/// A capture's outcome.
#[napi(object)]
pub struct NativeEvidenceCapture {
    /// What it did.
    pub outcome: EvidenceOutcome,
    /// The archive, unless refused.
    pub archive: Option<NativeEvidenceArchive>,
    /// Why nothing was archived, when refused.
    pub reason: Option<String>,
}

/// A validated archive, and its patch when asked for.
#[napi(object)]
pub struct NativeEvidenceRead {
    /// The archive.
    pub archive: NativeEvidenceArchive,
    /// Its binary patch from the base to the source, as validated.
    pub patch: Option<Buffer>,
}

/// A restored repository.
#[napi(object)]
pub struct NativeEvidenceRestored {
    /// Where it is.
    pub dir: String,
    /// The commit of the base tree (branch `base`).
    pub base_commit: String,
    /// The commit of the source tree over it (branch `source`, checked out).
    pub source_commit: String,
    /// The source tree, as the archive records it.
    pub source_tree: String,
}

/// Archive the checkout at `worktree` over `base` (a revision resolved in
/// the checkout) under the run's artifacts directory `out`, within the
/// library's bounds. Refusals resolve (`outcome: 'refused'`); `EEXIST`
/// when an archive of the same name holds different bytes, `EBADMSG` when
/// an archive fails validation.
#[napi(
    js_name = "nativeCaptureSourceEvidence",
    ts_return_type = "Promise<NativeEvidenceCapture>"
)]
pub fn native_capture_source_evidence<'env>(
    env: &'env Env,
    worktree: String,
    base: String,
    out: String,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, NativeEvidenceCapture>> {
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
        Ok(to_js_capture(&captured))
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
            archive: to_js_archive(archive.view()),
            patch: with_patch.then(|| archive.patch().to_vec().into()),
        })
    })
}

/// Validate the archive at `dir`, then restore it into `dest` (which must
/// not exist) as an independent repository. `EEXIST` when `dest` exists.
#[napi(
    js_name = "nativeRestoreSourceEvidence",
    ts_return_type = "Promise<NativeEvidenceRestored>"
)]
pub fn native_restore_source_evidence<'env>(
    env: &'env Env,
    dir: String,
    dest: String,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'env, NativeEvidenceRestored>> {
    let token = guarded(|| CancelToken::for_call(token, None));
    on_own_thread(env, move || {
        let token = token?;
        let git = Git::new()?;
        let archive = Archive::open(&git, Path::new(&dir), &token)?;
        archive
            .restore(&git, Path::new(&dest), &token)
            .map(to_js_restored)
    })
}

fn to_js_capture(captured: &Captured) -> NativeEvidenceCapture {
    let view = captured.view();
    let outcome = match captured {
        Captured::Published(_) => EvidenceOutcome::Published,
        Captured::Existing(_) => EvidenceOutcome::Existing,
        Captured::Refused(_) => EvidenceOutcome::Refused,
    };
    NativeEvidenceCapture {
        outcome,
        archive: view.archive.map(to_js_archive),
        reason: view.reason,
    }
}

fn to_js_archive(view: ArchiveView) -> NativeEvidenceArchive {
    NativeEvidenceArchive {
        dir: view.dir.to_string_lossy().into_owned(),
        head: view.head,
        base: view.base,
        source_tree: view.source_tree,
        base_tree: view.base_tree,
        tips: view.tips.into_iter().map(to_js_tip).collect(),
        objects: view.objects as f64,
        object_bytes: view.object_bytes as f64,
        bytes: view.bytes as f64,
        patch_bytes: view.patch_bytes as f64,
    }
}

fn to_js_tip(tip: Tip) -> NativeEvidenceTip {
    NativeEvidenceTip {
        commit: tip.commit,
        tree: tip.tree,
        seen_as: tip.seen_as,
    }
}

fn to_js_restored(restored: Restored) -> NativeEvidenceRestored {
    NativeEvidenceRestored {
        dir: restored.dir.to_string_lossy().into_owned(),
        base_commit: restored.base_commit,
        source_commit: restored.source_commit,
        source_tree: restored.source_tree,
    }
}
