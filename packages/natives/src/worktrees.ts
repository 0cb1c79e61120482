/**
 * The run registry and handing a branch over from an earlier attempt.
 *
 * An orchestrator records each task, each run of it (an attempt) with the directory its worktrees
 * are made in, the candidate worktrees and seats a run makes, and where each run stands. It drives a
 * run while it works on it (`using driver = await driveRun(...)`): a kernel lock, so a driver that
 * dies, however it dies, reads as `dead` at once.
 *
 * A retry of a task often needs the branch an earlier attempt still has checked out, and git lets a
 * branch be checked out in one worktree at a time. {@link releaseWorktree} releases that worktree,
 * and only it, when it is provably the earlier attempt's (or, for a review started by hand, a run
 * natives recorded), nobody drives that run and nothing in it would be lost; the branch, its commits
 * and any pull request stay where they are. A refusal is an answer (`kind: 'refused'` with every
 * reason), never a rejection; `dryRun` says what a release would do and writes nothing; a released
 * worktree can be put back with `restore()` if the run that took the branch over never starts, or
 * by its handover id with {@link restoreHandover} once the process that asked for it is gone.
 *
 * Everything is kept under the natives home (`NATIVES_HOME`, default `~/.natives`; every call also
 * takes `home`). The objects are the ones `natives runs show --json` and `natives handover --json`
 * print.
 */
import {
  native,
  type DriverState,
  type HolderView,
  type ReasonView,
  type ReleasedView,
  type CandidateView,
  type RestoreView,
  type RunView,
  type EventView,
  type SeatView,
  type TaskView,
  type RunDriver as NativeRunDriver,
  type Status,
  type SeatKind,
  type WorktreeHandover,
} from './native.ts';
import { linkSignal } from './cancel.ts';
import { callNative, codedError, throwIfAborted } from './errors.ts';
import { anchored } from './paths.ts';

const {
  nativeAddCandidate,
  nativeAddSeat,
  nativeCreateRun,
  nativeCreateTask,
  nativeDriveRun,
  nativeDriverLiveness,
  nativeEarlierAttempts,
  nativeListRuns,
  nativeReleaseWorktree,
  nativeRestoreHandover,
  nativeSetRunStatus,
  nativeShowRun,
} = native;

export type { DriverState, SeatKind };

/** Where a run stands. */
export type RunStatus = Status;

/** Where the registry is, and what may stop a call that waits (for a run's lock) or runs git. */
export interface RegistryOptions {
  /** The natives home. Default: `$NATIVES_HOME`, else `~/.natives`. */
  home?: string;
  /** Stop waiting, or stop git, and reject with `ABORT_ERR`. */
  signal?: AbortSignal;
}

/** A task. */
export type TaskRecord = TaskView;

/** A run to record. */
export interface NewRun {
  /** Unique in the registry. */
  id: string;
  /** The task it attempts (recorded already, see {@link createTask}). */
  task: string;
  /** The directory its candidate worktrees will be made in, directly (a worktree elsewhere is not provably its own). */
  worktreeRoot: string;
  /** Where it stands at first. */
  status: RunStatus;
}

/** A candidate worktree to record. */
export interface NewCandidate {
  /** Its name within the run (`A`, `B`, ...). */
  name: string;
  /** The branch checked out there, as `git branch` shows it. */
  branch: string;
  /** The worktree, directly under the run's worktree root. */
  path: string;
  /** The commit it started from, if known. */
  base?: string;
}

/** A seat to record. */
export interface NewSeat {
  kind: SeatKind;
  /** Which one of that role (1, 2, ...). */
  number: number;
  path: string;
  baseHead?: string;
  reviewHead?: string;
}

/** A candidate worktree of a run. */
export type RunCandidate = CandidateView;

/** A seat of a run. */
export type RunSeat = SeatView;

/** One entry of a run's history (`created`, `status`, `candidate`, `seat`, `released`, `removing`, `undone`, `restored`, `driven`). */
export type RunEvent = EventView;

/** A run, with whether it is driven now. */
export type RunRecord = RunView;

/** Record `task`, or answer it if it is recorded already. */
export async function createTask(task: string, options: RegistryOptions = {}): Promise<TaskRecord> {
  return await registryCall('createTask', options, (home, token) => nativeCreateTask(task, home, token));
}

/** Record a run of a recorded task: `EEXIST` if its id is taken, `ENOENT` if the task was never recorded. */
export async function createRun(run: NewRun, options: RegistryOptions = {}): Promise<RunRecord> {
  objectOf('createRun', 'run', run);
  return await registryCall('createRun', options, (home, token) =>
    nativeCreateRun({ id: run.id, task: run.task, worktreeRoot: pathOf('createRun', 'worktreeRoot', run.worktreeRoot), status: run.status }, home, token),
  );
}

/** Add a candidate worktree to `run`: `EEXIST` if it has one of that name. */
export async function addCandidate(run: string, candidate: NewCandidate, options: RegistryOptions = {}): Promise<RunRecord> {
  return await registryCall('addCandidate', options, (home, token) =>
    nativeAddCandidate(run, { ...candidate, path: pathOf('addCandidate', 'path', objectOf('addCandidate', 'candidate', candidate).path) }, home, token),
  );
}

/** Add a seat to `run`: `EEXIST` if it has that seat; `EINVAL` unless `number` is a whole number from 0 to 2^32-1. */
export async function addSeat(run: string, seat: NewSeat, options: RegistryOptions = {}): Promise<RunRecord> {
  return await registryCall('addSeat', options, (home, token) => nativeAddSeat(run, { ...seat, path: pathOf('addSeat', 'path', objectOf('addSeat', 'seat', seat).path) }, home, token));
}

/** Set `run`'s status (a history entry records it). */
export async function setRunStatus(run: string, status: RunStatus, options: RegistryOptions = {}): Promise<RunRecord> {
  return await registryCall('setRunStatus', options, (home, token) => nativeSetRunStatus(run, status, home, token));
}

/** Run `run`: `ENOENT` if it was never recorded. */
export async function showRun(run: string, options: { home?: string } = {}): Promise<RunRecord> {
  return await callNative('showRun', () => nativeShowRun(run, homeOf(options)));
}

/** Every run recorded, or only `task`'s (`ENOENT` for a task never recorded), oldest first. */
export async function listRuns(options: { task?: string; home?: string } = {}): Promise<RunRecord[]> {
  return await callNative('listRuns', () => nativeListRuns(options.task, homeOf(options)));
}

/** Every run recorded for `task`, whatever its status, oldest first: the attempts a new run of it may take a branch over from. */
export async function earlierAttempts(task: string, options: { home?: string } = {}): Promise<RunRecord[]> {
  return await callNative('earlierAttempts', () => nativeEarlierAttempts(task, homeOf(options)));
}

/** Holding a run to drive it. Let it go with `using`, {@link RunDriver.release} or dispose. */
export interface RunDriver extends Disposable {
  readonly run: string;
  /** Still held by this object. */
  readonly held: boolean;
  /** Let the run go (idempotent): `false` if it was let go already. */
  release(): boolean;
}

/**
 * Take `run` to drive it: `EBUSY` if another process (or another driver here) holds it, `ENOENT` if
 * it was never recorded. Waits for a handover of the run's worktree in progress to finish first, so
 * the record read afterwards says what became of it, and records a `driven` event: a run recorded
 * as `running` counts as being started (its worktree is not released) until a driver has taken it.
 * The OS lets the run go if this process dies.
 */
export async function driveRun(run: string, options: RegistryOptions = {}): Promise<RunDriver> {
  const native = await registryCall('driveRun', options, (home, token) => nativeDriveRun(run, home, token));
  return wrapDriver(native);
}

/** Whether anyone drives `run` right now (`ENOENT` if it was never recorded). The lock is only probed, never taken. */
export function driverLiveness(run: string, options: { home?: string } = {}): DriverState {
  return callNative('driverLiveness', () => nativeDriverLiveness(run, homeOf(options)));
}

/** What {@link releaseWorktree} is asked. */
export interface ReleaseWorktreeOptions {
  /** A worktree of the repository (the main one is found from it). */
  repo: string;
  /** The branch the new run needs, as `git branch` shows it. */
  branch: string;
  /** The run taking the branch over. */
  toRun: string;
  /** Its task: its other runs are its earlier attempts. Leave out for a review started by hand, which can only take a branch from a run natives recorded. */
  task?: string;
  /**
   * Untracked paths that may go with the worktree, as gitignore patterns (`['node_modules/', 'dist/']`),
   * recorded in the release. Default: none. Caches (a directory with a `CACHEDIR.TAG`, as cargo's
   * `target/`) may go without it; every other file or directory the branch's `HEAD` does not hold,
   * ignored or not, keeps the worktree.
   */
  regenerable?: string[];
  /** Only say what a release would do (`would-release` or `refused`); write nothing. */
  dryRun?: boolean;
  /** The natives home. Default: `$NATIVES_HOME`, else `~/.natives`. */
  home?: string;
  /** Stop git (and the wait for the run's lock) and reject with `ABORT_ERR`; a release cut short is finished by the next call. */
  signal?: AbortSignal;
}

/** One reason not to release or not to restore: a stable `code` (`dirty`, `driver-live`, `not-made-by-us`, `release-failed`, `path-taken`, ...) and what was found. */
export type HandoverReason = ReasonView;

/** The run and worktree holding a branch, as found. */
export type HandoverHolder = HolderView;

/** A released worktree: whose it was, where, and the tip its branch was at. */
export type ReleasedWorktree = ReleasedView;

/** What every handover answer says. */
interface HandoverAnswer {
  /** Only what a release would do was found; nothing was written. */
  dryRun: boolean;
  branch: string;
  toRun: string;
  /** One line for a person: what happened, and for a refusal every reason. */
  message: string;
}

/** The worktree was released: the branch is free for the new run. */
export interface ReleasedHandover extends HandoverAnswer {
  kind: 'released';
  released: ReleasedWorktree;
  /**
   * Put the worktree back at the recorded tip (the run that took the branch over never started).
   * Refused (`kind: 'refused'`, every reason) when ownership changed since: a later handover, the run
   * superseded or driven, the branch or the path taken.
   */
  restore(options?: { signal?: AbortSignal }): Promise<RestoreResult>;
}

/** A dry run: the worktree would be released. */
export interface WouldReleaseHandover extends HandoverAnswer {
  kind: 'would-release';
  holder: HandoverHolder;
  /** A handover to this run cut short, which a release would finish. */
  unfinishedHandover?: string;
}

/** Nothing was (or, in a dry run, would be) released. */
export interface RefusedHandover extends HandoverAnswer {
  kind: 'refused';
  holder: HandoverHolder;
  /** Every reason, never empty. */
  reasons: HandoverReason[];
  /** A release that failed half way (reason `release-failed`): whether its record was rolled back. */
  undone?: boolean;
}

/** Nothing to do: no worktree holds the branch, or the new run's own does. */
export interface NothingToDoHandover extends HandoverAnswer {
  kind: 'not-held' | 'held-by-new-run';
}

/** What {@link releaseWorktree} did (or, in a dry run, would do). */
export type Handover = ReleasedHandover | WouldReleaseHandover | RefusedHandover | NothingToDoHandover;

/** What a restore did. */
export type RestoreResult = { kind: 'restored'; message: string } | { kind: 'refused'; message: string; reasons: HandoverReason[] };

/**
 * Release the worktree holding `branch` to `toRun`, when an earlier attempt at `task` (or, without a
 * task, a run natives recorded) holds it, nobody drives that run, and nothing in it would be lost.
 * Resolves with the answer whatever it is; rejects only on errors: bad input (`EINVAL` naming it, a
 * `toRun` of another task, a `regenerable` pattern that is not one), a task or `toRun` never
 * recorded (`ENOENT`), git missing, too old (`ENOTSUP`) or failing, `ABORT_ERR`.
 */
export async function releaseWorktree(options: ReleaseWorktreeOptions): Promise<Handover> {
  objectOf('releaseWorktree', 'options', options);
  const regenerable = patternsOf(options.regenerable);
  throwIfAborted(options.signal, 'releaseWorktree');
  using link = linkSignal(options.signal, false);
  const native = await callNative(
    'releaseWorktree',
    () =>
      nativeReleaseWorktree(
        {
          repo: pathOf('releaseWorktree', 'repo', options.repo),
          branch: options.branch,
          toRun: options.toRun,
          task: options.task,
          home: homeOf(options),
          regenerable,
          dryRun: options.dryRun,
        },
        link.token,
      ),
    { signal: options.signal },
  );
  return toHandover(native);
}

function toHandover(native: WorktreeHandover): Handover {
  const view = native.view;
  if (view.kind !== 'released') return view as Handover;
  const restore = async (options: { signal?: AbortSignal } = {}): Promise<RestoreResult> => {
    throwIfAborted(options.signal, 'restore');
    using link = linkSignal(options.signal, false);
    return (await callNative('restore', () => native.restore(link.token), { signal: options.signal })) as RestoreResult;
  };
  return { ...(view as Omit<ReleasedHandover, 'restore'>), restore };
}

/**
 * Put back the worktree handover `handover` (the `released.handover` of a release's answer, or a
 * `handover` of `showRun`'s candidates and history) released, found by its id alone: for an
 * orchestrator that died after the release. As `restore()`: refused (`kind: 'refused'`, every reason)
 * once ownership changed; restoring twice is a no-op. `ENOENT` when no run records that handover.
 */
export async function restoreHandover(handover: string, options: RegistryOptions = {}): Promise<RestoreResult> {
  if (typeof handover !== 'string') {
    throw codedError('EINVAL', `restoreHandover: handover must be a string, got ${typeof handover}`, { option: 'handover', value: handover });
  }
  return (await registryCall('restoreHandover', options, (home, token) => nativeRestoreHandover(handover, home, token))) as RestoreResult;
}

/** `regenerable` as the addon takes it; `EINVAL` unless it is absent or an array of strings. */
function patternsOf(regenerable: unknown): string[] | undefined {
  if (regenerable === undefined) return undefined;
  if (!Array.isArray(regenerable) || regenerable.some((p) => typeof p !== 'string')) {
    throw codedError('EINVAL', 'releaseWorktree: regenerable must be an array of gitignore patterns (strings)', {
      option: 'regenerable',
      value: regenerable,
    });
  }
  return regenerable;
}

/** A call that may wait on another process: pre-aborted signals reject at once, and the signal reaches the wait. */
export async function registryCall<T>(
  operation: string,
  options: RegistryOptions,
  call: (home: string | undefined, token: ReturnType<typeof linkSignal>['token']) => Promise<T>,
): Promise<T> {
  objectOf(operation, 'options', options);
  throwIfAborted(options.signal, operation);
  using link = linkSignal(options.signal, false);
  return await callNative(operation, () => call(homeOf(options), link.token), { signal: options.signal });
}

/** `value` itself when it is an object to read fields from; `EINVAL` naming the argument otherwise. */
function objectOf<T>(operation: string, argument: string, value: T): T {
  if (typeof value !== 'object' || value === null) {
    throw codedError('EINVAL', `${operation}: ${argument} must be an object, got ${value === null ? 'null' : typeof value}`, { option: argument, value });
  }
  return value;
}

/** `value` anchored, when it is a path at all; `EINVAL` naming the field otherwise. */
export function pathOf(operation: string, field: string, value: unknown): string {
  if (typeof value !== 'string') {
    throw codedError('EINVAL', `${operation}: ${field} must be a path, got ${value === null ? 'null' : typeof value}`, { option: field, value });
  }
  return anchored(value);
}

function homeOf(options: { home?: string }): string | undefined {
  return options.home === undefined ? undefined : anchored(options.home);
}

function wrapDriver(native: NativeRunDriver): RunDriver {
  const release = () => callNative('release', () => native.release());
  return {
    get run() {
      return native.run;
    },
    get held() {
      return native.held;
    },
    release,
    [Symbol.dispose]() {
      release();
    },
  };
}
