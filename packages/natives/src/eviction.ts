/**
 * The inactive-checkout eviction pass: housekeeping archives and removes a few source copies
 * nobody will resume, and names every reason each other one stays.
 *
 * ```ts
 * const report = await evictionPass({ dryRun: true });   // what would go, and why the rest stays
 * for (const kept of report.retained) console.log(kept.seat, kept.blockers.map((b) => b.kind));
 * await evictionPass();                                   // archive, then remove
 * const tips = await archivedSeats('r1');                 // every archived tip, historical ones too
 * await restoreSeat('r1', tips[0].head, '/tmp/inspect-r1');
 * ```
 *
 * A pass runs only when the home's `config.json` sets `disk.auto_fold` and a positive
 * `disk.worktree_reclaim_bytes` (or the options do): otherwise `disabled` says why and nothing is touched.
 * It considers review, judge and advisor seats (detached at their recorded review head) and empty
 * superseded attempts; a copy goes only after evidence that rebuilds it without its repository is
 * published and validated, and only when nothing at all says it may still be wanted. Every call drives
 * git off the JS thread; aborting the signal stops it (`ABORT_ERR`). The objects are the ones
 * `natives housekeeping --json` and `natives fold RUN --show-seats --json` print.
 */
import {
  native,
  type BlockerKind,
  type EvictedCopyView,
  type EvictionBlockerView,
  type EvictionReportView,
  type EvictionRetentionView,
  type Restored,
  type RetainedCopyView,
  type SeatTipView,
} from './native.ts';
import { codedError } from './errors.ts';
import { pathOf, type RegistryOptions, registryCall } from './worktrees.ts';

const { nativeArchivedSeats, nativeEvictionPass, nativeGrantAuthority, nativeRestoreSeat } = native;

/** Why a copy stays; `detail` says what was seen. */
export type EvictionBlockerKind = BlockerKind;

/** One reason a copy stays. */
export type EvictionBlocker = EvictionBlockerView;

/** A copy the pass evicted (in a dry run: would evict). */
export type EvictedCopy = EvictedCopyView;

/** A copy the pass left, with every reason. */
export type RetainedCopy = RetainedCopyView;

/** What `retention.json` records of a pass: estimates, never claims of freed space. */
export type EvictionRetention = EvictionRetentionView;

/** One pass's report. */
export type EvictionReport = EvictionReportView;

/** How a pass is asked for; unset fields come from the home's configuration. */
export interface EvictionOptions extends RegistryOptions {
  /** Run even if `disk.auto_fold` is off. */
  autoFold?: boolean;
  /** The most source bytes this pass unlinks (`disk.worktree_reclaim_bytes`). */
  reclaimBytes?: number;
  /** Say what would be evicted; touch nothing. */
  dryRun?: boolean;
  /** How long a copy must have been left alone, in milliseconds. Default: a day. */
  quietPeriodMs?: number;
}

/** One archived tip of a run's copy. */
export type ArchivedSeatTip = SeatTipView;

/** A rebuilt seat: an independent repository, the tip's tree committed over the base. */
export type RestoredSeat = Restored;

/** Run one housekeeping pass. Rejects with `EINVAL` (a bad option or configuration), `EBUSY` (another pass runs), `ABORT_ERR`. */
export async function evictionPass(options: EvictionOptions = {}): Promise<EvictionReport> {
  return registryCall('evictionPass', options, (home, token) =>
    nativeEvictionPass(
      {
        home,
        autoFold: options.autoFold,
        reclaimBytes: options.reclaimBytes,
        dryRun: options.dryRun,
        quietPeriodMs: options.quietPeriodMs,
      },
      token,
    ),
  );
}

/** Every archived tip of `run`'s copies, each archive validated first (`EBADMSG` when one fails); works without the original repository. */
export async function archivedSeats(run: string, options: RegistryOptions = {}): Promise<ArchivedSeatTip[]> {
  return registryCall('archivedSeats', options, (home, token) => nativeArchivedSeats(home, run, token));
}

/** Rebuild the archived tip `head` (a full commit id) of one of `run`'s copies as a new repository at `dest`, which must not exist (`EEXIST`). */
export async function restoreSeat(run: string, head: string, dest: string, options: RegistryOptions = {}): Promise<RestoredSeat> {
  const target = pathOf('restoreSeat', 'dest', dest);
  return registryCall('restoreSeat', options, (home, token) => nativeRestoreSeat(home, run, head, target, token));
}

/** What an orchestrator grants a source copy; any of it keeps the copy on disk. A field left out keeps its value. */
export interface SourceAuthority {
  /** Its work was made public (pushed, published, proposed). */
  public?: boolean;
  /** It was selected as the source to recover the task from. */
  selectedRecovery?: boolean;
  /** Its work was approved. */
  approved?: boolean;
  /** Someone asked for its source to be kept. */
  retain?: boolean;
}

/**
 * Grant (or take back, with `false`) authority over `run`'s source copy `source`, named as the pass names it
 * (`review-1`, `judge-2`, `candidate-A`). Rejects with `ENOENT` when the run has no such copy.
 */
export async function grantAuthority(run: string, source: string, authority: SourceAuthority, options: RegistryOptions = {}): Promise<void> {
  if (typeof authority !== 'object' || authority === null) {
    throw codedError('EINVAL', `grantAuthority: authority must be an object, got ${authority === null ? 'null' : typeof authority}`, {
      option: 'authority',
      value: authority,
    });
  }
  await registryCall('grantAuthority', options, (home, token) => nativeGrantAuthority(home, run, source, authority, token));
}
