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
import { native } from './native.ts';
import { codedError } from './errors.ts';
import { pathOf, type RegistryOptions, registryCall } from './worktrees.ts';

const { nativeArchivedSeats, nativeEvictionPass, nativeGrantAuthority, nativeRestoreSeat } = native;

/** Why a copy stays; `detail` says what was seen. */
export type EvictionBlockerKind =
  | 'resumable-run'
  | 'changed-candidate'
  | 'unrecorded-heads'
  | 'head-moved'
  | 'public-authority'
  | 'recovery-authority'
  | 'approval-authority'
  | 'retention-authority'
  | 'recovery-selection'
  | 'task-pin'
  | 'task-replacement'
  | 'path-reference'
  | 'unknown-record'
  | 'unknown-field'
  | 'ownership-bound'
  | 'live-driver'
  | 'live-owner'
  | 'output-lease'
  | 'unreadable-ownership'
  | 'recent-activity'
  | 'operation-in-progress'
  | 'local-refs'
  | 'locked'
  | 'unknown-administration'
  | 'unarchivable'
  | 'dirty'
  | 'staged'
  | 'index-hidden'
  | 'unsupported-content'
  | 'untracked'
  | 'ignored'
  | 'build-output'
  | 'symlink'
  | 'special-file'
  | 'unknown-directory'
  | 'not-a-worktree'
  | 'evidence-bound'
  | 'corrupt-evidence'
  | 'changed-since-record'
  | 'unreadable-eviction-record'
  | 'step-failed'
  | 'pass-copies'
  | 'reclaim-budget';

/** One reason a copy stays. */
export interface EvictionBlocker {
  kind: EvictionBlockerKind;
  detail: string;
}

/** A copy the pass evicted (in a dry run: would evict). */
export interface EvictedCopy {
  run: string;
  /** `review-1`, `judge-2`, `candidate-A`. */
  seat: string;
  path: string;
  /** The archive that rebuilds it; `null` in a dry run. */
  archive: string | null;
  /** Its regular files' bytes, and their allocated blocks (hard links kept elsewhere discounted). */
  logicalBytes: number;
  allocatedBytes: number;
  /** Whether an earlier, interrupted pass had begun it. */
  resumed: boolean;
}

/** A copy the pass left, with every reason. */
export interface RetainedCopy {
  run: string;
  seat: string;
  path: string;
  blockers: EvictionBlocker[];
}

/** What `retention.json` records of a pass: estimates, never claims of freed space. */
export interface EvictionRetention {
  atMs: number;
  runsVisited: number;
  sourceLogicalBytes: number;
  sourceAllocatedBytes: number;
  evidenceLogicalBytes: number;
  evidenceAllocatedBytes: number;
  copiesEvicted: number;
  emptyRootsRemoved: number;
  /** Retained copies by each reason given. */
  blockers: Record<string, number>;
  /** The home volume's available bytes before and after, as observed (not attributed to the pass). */
  observedFreeBytesBefore: number | null;
  observedFreeBytesAfter: number | null;
}

/** One pass's report. */
export interface EvictionReport {
  settings: { autoFold: boolean; reclaimBytes: number };
  dryRun: boolean;
  /** Why the pass did nothing, when it is not enabled. */
  disabled: string | null;
  /** The runs visited, oldest first from where the last pass stopped. */
  visited: string[];
  continueAfter: string | null;
  evicted: EvictedCopy[];
  retained: RetainedCopy[];
  emptyRoots: string[];
  /** Reasons that hold for the whole pass (also given with each copy). */
  blockers: EvictionBlocker[];
  /** `null` in a dry run. */
  retention: EvictionRetention | null;
}

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
export interface ArchivedSeatTip {
  seat: string;
  /** Where the copy was. */
  source: string;
  head: string;
  tree: string;
  /** Where the copy showed it: `HEAD`, `HEAD@{n}`, `ORIG_HEAD`, `base`. */
  seenAs: string[];
  /** Whether it was the copy's `HEAD` when archived (else historical). */
  current: boolean;
  /** The archived patch's bytes, for the current tip. */
  patchBytes: number | null;
  phase: 'pending' | 'evicted';
  archive: string;
}

/** A rebuilt seat: an independent repository, the tip's tree committed over the base. */
export interface RestoredSeat {
  dir: string;
  baseCommit: string;
  sourceCommit: string;
  sourceTree: string;
}

/** Run one housekeeping pass. Rejects with `EINVAL` (a bad option or configuration), `EBUSY` (another pass runs), `ABORT_ERR`. */
export async function evictionPass(options: EvictionOptions = {}): Promise<EvictionReport> {
  return (await registryCall('evictionPass', options, (home, token) =>
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
  )) as EvictionReport;
}

/** Every archived tip of `run`'s copies, each archive validated first (`EBADMSG` when one fails); works without the original repository. */
export async function archivedSeats(run: string, options: RegistryOptions = {}): Promise<ArchivedSeatTip[]> {
  return (await registryCall('archivedSeats', options, (home, token) => nativeArchivedSeats(home, run, token))) as ArchivedSeatTip[];
}

/** Rebuild the archived tip `head` (a full commit id) of one of `run`'s copies as a new repository at `dest`, which must not exist (`EEXIST`). */
export async function restoreSeat(run: string, head: string, dest: string, options: RegistryOptions = {}): Promise<RestoredSeat> {
  const target = pathOf('restoreSeat', 'dest', dest);
  return (await registryCall('restoreSeat', options, (home, token) => nativeRestoreSeat(home, run, head, target, token))) as RestoredSeat;
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
