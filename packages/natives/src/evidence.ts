/**
 * Checkout evidence: an archive that proves a checkout can be rebuilt without the repository
 * it came from, published before anything is removed.
 *
 * ```ts
 * const captured = await captureSourceEvidence('/runs/r1/A', 'main', '/runs/r1/artifacts');
 * if (captured.outcome === 'refused') console.log(captured.reason);
 * const patch = await sourceEvidencePatch(captured.archive!.dir); // validated first
 * await restoreSourceEvidence(captured.archive!.dir, '/tmp/inspect-r1-A');
 * ```
 *
 * An archive (`<artifacts>/source-evidence/<head>-<base>/`) holds the complete base and source trees in a
 * non-thin pack, every commit of the checkout's `HEAD` reflog and `ORIG_HEAD`, the original commit objects,
 * the binary patch from base to source, both trees' raw indexes, a manifest and SHA-256 sums. It is
 * published whole or not at all, never replaced, and validated on every read in a fresh repository with no
 * alternates, isolated from the caller's git configuration: a failed check rejects with `EBADMSG` naming it.
 * Every call drives git off the JS thread; aborting the signal kills the running git (`ABORT_ERR`).
 */
import {
  native,
  type ArchiveView,
  type CaptureView,
  type Restored,
  type Tip,
} from './native.ts';
import { linkSignal } from './cancel.ts';
import { callNative, throwIfAborted } from './errors.ts';
import { anchored } from './paths.ts';

const { nativeCaptureSourceEvidence, nativeReadSourceEvidence, nativeRestoreSourceEvidence } = native;

/** One archived commit. */
export type SourceEvidenceTip = Tip;

/** A validated archive: the library's view, as the CLI's `--json` prints it. */
export type SourceEvidenceArchive = ArchiveView;

/** What a capture did: `published`, `existing` (the same bytes were there; revalidated) or `refused` (`reason` says why; nothing was written). */
export type SourceEvidenceCapture = CaptureView;

/** A restored, independent repository: branch `source` checked out over branch `base`. */
export type RestoredSourceEvidence = Restored;

/** Options every evidence call takes. */
export interface SourceEvidenceOptions {
  /** Abort the call: the running git is killed and the call rejects with `ABORT_ERR`. */
  signal?: AbortSignal;
}

/**
 * Archive the checkout at `worktree` over `base` (a revision, resolved in the checkout) under the run's
 * artifacts directory `artifactsDir`. A checkout holding anything its `HEAD` does not, history that is
 * gone, or an archive over the library's bounds resolves `refused` with the reason. Rejects with `EEXIST`
 * when an archive of the same name holds different bytes (it is left unchanged), `EBADMSG` when an archive
 * fails validation.
 */
export async function captureSourceEvidence(
  worktree: string,
  base: string,
  artifactsDir: string,
  options: SourceEvidenceOptions = {},
): Promise<SourceEvidenceCapture> {
  throwIfAborted(options.signal, 'captureSourceEvidence');
  using link = linkSignal(options.signal, false);
  const capture = () => nativeCaptureSourceEvidence(anchored(worktree), base, anchored(artifactsDir), link.token);
  const captured = await callNative('captureSourceEvidence', capture, { signal: options.signal });
  return { outcome: captured.outcome, archive: captured.archive ?? undefined, reason: captured.reason ?? undefined };
}

/** Validate the archive at `dir`: every check, in a fresh repository. Rejects with `EBADMSG` naming the failed check. */
export async function validateSourceEvidence(dir: string, options: SourceEvidenceOptions = {}): Promise<SourceEvidenceArchive> {
  throwIfAborted(options.signal, 'validateSourceEvidence');
  using link = linkSignal(options.signal, false);
  const read = () => nativeReadSourceEvidence(anchored(dir), false, link.token);
  return (await callNative('validateSourceEvidence', read, { signal: options.signal })).archive;
}

/** The binary patch from the archive's base to its source, once the archive validates (`git apply`-able, as `natives source-evidence DIR` prints it). */
export async function sourceEvidencePatch(dir: string, options: SourceEvidenceOptions = {}): Promise<Buffer> {
  throwIfAborted(options.signal, 'sourceEvidencePatch');
  using link = linkSignal(options.signal, false);
  const read = () => nativeReadSourceEvidence(anchored(dir), true, link.token);
  const { patch } = await callNative('sourceEvidencePatch', read, { signal: options.signal });
  return patch ?? Buffer.alloc(0);
}

/**
 * Validate the archive at `dir`, then restore it into `dest`, which must not exist (`EEXIST`): an
 * independent repository with the source's index and files, `fsck --strict` clean, whose diff from branch
 * `base` is the archived patch. It resumes nothing and changes no branch anywhere else.
 */
export async function restoreSourceEvidence(dir: string, dest: string, options: SourceEvidenceOptions = {}): Promise<RestoredSourceEvidence> {
  throwIfAborted(options.signal, 'restoreSourceEvidence');
  using link = linkSignal(options.signal, false);
  const restore = () => nativeRestoreSourceEvidence(anchored(dir), anchored(dest), link.token);
  return await callNative('restoreSourceEvidence', restore, { signal: options.signal });
}
