/**
 * Build-cache leases: who is using a shared `CARGO_TARGET_DIR` right now, and against which source.
 *
 * A borrower holds the lease for a whole build:
 *
 * ```ts
 * await using lease = await acquireBuildCache('/srv/target', { run, node, seat }, { budgetMs: 60_000 });
 * ```
 *
 * The lease is a kernel lock held by this process (the OS frees it if the process dies, however it
 * dies) plus a durable record naming the owner, kept under the natives home (`NATIVES_HOME`, default
 * `~/.natives`; every call also takes `home`). Acquired with an `identity`, the cache is first made
 * fresh for that source: the workspace's own packages are cleaned when the worktree or HEAD differs
 * from the last build, and nothing runs when they match.
 */
import {
  native,
  type BuildCacheLease as NativeLease,
  type KeptReason,
  type LeaseReleased,
  type LeaseStatus,
  type CacheEntryView,
  type CacheStatusView,
  type FreshnessView,
  type IdentityView,
  type KeptView,
  type LeaseRecordView,
  type LeaseOwnerView,
  type PruneReportView,
  type LeaseReleaseView,
} from './native.ts';
import { linkSignal } from './cancel.ts';
import { callNative, codedError, throwIfAborted } from './errors.ts';
import { anchored } from './paths.ts';

const {
  nativeAcquireBuildCache,
  nativeAcquireCleanupLease,
  nativeBuildCacheInventory,
  nativeCargoTargetEnv,
  nativeEnsureFresh,
  nativeExtractManifestPaths,
  nativeHoldReleasable,
  nativeInspectBuildCache,
  nativeMaintenancePrune,
  nativeParseResourceHold,
  nativeParseWorkspacePackageNames,
  nativeReleaseBuildCache,
  nativeResourceHold,
  pidAlive: nativePidAlive,
} = native;

/** Who wants a cache: the job it belongs to, and the source it builds (if known). */
export interface LeaseOwner {
  run: string;
  node: string;
  seat: string;
  worktree?: string;
  head?: string;
}

/** An owner as recorded: the job, plus the process holding the lease. */
export type OwnerRecord = LeaseOwnerView;

/** A lease record. */
export type LeaseRecord = LeaseRecordView;

/** The source a build comes from. */
export type SourceIdentity = IdentityView;

/** What a refresh did: nothing (`refreshed: false`), or which packages it cleaned. */
export type Freshness = FreshnessView;

/** Options of {@link acquireBuildCache}. */
export interface AcquireBuildCacheOptions {
  /** How long to wait while the lease is busy, in ms; `0`: one attempt (`EBUSY` if busy). Default: `0`. */
  budgetMs?: number;
  /** Stop waiting (checked once per poll, 50 ms), or kill a running refresh's cargo, and reject with `ABORT_ERR`. */
  signal?: AbortSignal;
  /** Make the cache fresh for this source once held. Default: the owner's `worktree` + `head` when both are given. */
  identity?: SourceIdentity | null;
  /** Where cargo finds the workspace; default: the identity's worktree. See {@link extractManifestPaths}. */
  manifestPaths?: string[];
  /**
   * Cargo's build directory (`build.build-dir`, `CARGO_BUILD_BUILD_DIR`) when the build keeps its
   * intermediate output apart from `dir`; the refresh cleans it too. Default: as cargo's
   * configuration in the worktree says.
   */
  buildDir?: string;
  /** The natives home. Default: `$NATIVES_HOME`, else `~/.natives`. */
  home?: string;
}

/** A held lease. Release it with `await using`, {@link BuildCacheLease.release} or dispose. */
export interface BuildCacheLease extends AsyncDisposable {
  readonly record: LeaseRecord;
  /** The dead owner's record this acquisition took over, if any. */
  readonly reclaimed: LeaseRecord | null;
  /** What the refresh did, when acquired with an identity. */
  readonly freshness: Freshness | null;
  /** Still held by this object. */
  readonly held: boolean;
  /** Let the lease go (idempotent). */
  release(): Promise<void>;
}

/**
 * Take the lease on `dir`, waiting up to `budgetMs` while a live owner holds it, reclaiming a dead
 * owner's lease. Rejects with `EBUSY` (one attempt, busy) or `ETIMEDOUT` (budget spent), both naming
 * the holder; `ABORT_ERR`; `EINVAL` for bad options; `EIO` if a refresh's cargo command failed and
 * `ENOTSUP` naming a layout of cargo output the refresh does not recognise (the lease is then released).
 */
export async function acquireBuildCache(dir: string, owner: LeaseOwner, options: AcquireBuildCacheOptions = {}): Promise<BuildCacheLease> {
  const native = nativeOwner(owner, 'acquireBuildCache');
  throwIfAborted(options.signal, 'acquireBuildCache');
  const identity = options.identity && { ...options.identity, worktree: anchored(options.identity.worktree) };
  using link = linkSignal(options.signal, false);
  const lease = await callNative(
    'acquireBuildCache',
    () =>
      nativeAcquireBuildCache(
        anchored(dir),
        native,
        {
          home: options.home,
          budgetMs: options.budgetMs,
          identity,
          manifestPaths: options.manifestPaths,
          buildDir: options.buildDir === undefined ? undefined : anchored(options.buildDir),
        },
        link.token,
      ),
    { signal: options.signal },
  );
  return wrap(lease);
}

/**
 * Take the output lease on `dir` for process cleanup, held while a build's tool descendants are
 * terminated: while it is held no build is admitted and no maintenance runs. One attempt; `EBUSY`.
 */
export async function acquireCleanupLease(dir: string, owner: LeaseOwner, options: { home?: string } = {}): Promise<BuildCacheLease> {
  const native = nativeOwner(owner, 'acquireCleanupLease');
  return wrap(await callNative('acquireCleanupLease', () => nativeAcquireCleanupLease(anchored(dir), native, options.home)));
}

/** Where a cache's lease stands. */
export type BuildCacheStatus = CacheStatusView;

/** Classify `dir`'s lease right now. */
export function inspectBuildCache(dir: string, options: { home?: string } = {}): BuildCacheStatus {
  return callNative('inspectBuildCache', () => nativeInspectBuildCache(anchored(dir), options.home));
}

/** One registered cache directory. */
export type BuildCacheEntry = CacheEntryView;

/** Every cache directory ever leased or held by process cleanup under the home, with its holder or last known owner. */
export function buildCacheInventory(options: { home?: string } = {}): BuildCacheEntry[] {
  return callNative('buildCacheInventory', () => nativeBuildCacheInventory(options.home));
}

/**
 * Make `dir` fresh for a build from `identity`; call while holding its lease. Cleans the workspace's
 * own packages (never dependencies) from every layout cargo laid out in `dir` (each profile, each
 * `--target`, and `buildDir`) when the recorded source differs; spawns nothing when it matches.
 * `ENOTSUP` naming a directory of cargo output in a layout it does not recognise (nothing recorded).
 * An abort of `signal` kills the running cargo command and everything it started (its process group)
 * and rejects with `ABORT_ERR`; the next refresh then starts over.
 */
export async function ensureFresh(
  dir: string,
  identity: SourceIdentity,
  options: { manifestPaths?: string[]; buildDir?: string; home?: string; signal?: AbortSignal } = {},
): Promise<Freshness> {
  throwIfAborted(options.signal, 'ensureFresh');
  using link = linkSignal(options.signal, false);
  const refresh = () => {
    const worktree = anchored(identity.worktree);
    const buildDir = options.buildDir === undefined ? undefined : anchored(options.buildDir);
    return nativeEnsureFresh(anchored(dir), { ...identity, worktree }, options.manifestPaths, buildDir, options.home, link.token);
  };
  return await callNative('ensureFresh', refresh, { signal: options.signal });
}

export type { KeptReason };

/** Something a prune kept inside a profile directory whatever its age. */
export type PruneKept = KeptView;

/** What a prune did. */
export type PruneReport = PruneReportView;

/**
 * Prune `dir`'s build output (the files of its cargo profile directories) to `limitBytes`, oldest files
 * first, only while holding it; `null` when it is in use. Refused with `EINVAL` naming why unless `dir` is
 * a build cache registered under the natives home and laid out as a cargo target directory, and never
 * for `/`, a home directory, the natives home, a repository or a folder holding one of them. Files of
 * unknown purpose are never deleted, nor directories that were already empty, nor a git repository
 * found at any depth inside a profile: the report names what was kept.
 */
export async function maintenancePrune(dir: string, limitBytes: number, owner: LeaseOwner, options: { home?: string } = {}): Promise<PruneReport | null> {
  const native = nativeOwner(owner, 'maintenancePrune');
  return await callNative('maintenancePrune', () => nativeMaintenancePrune(anchored(dir), limitBytes, native, options.home));
}

/** What {@link releaseBuildCache} did. */
export type ReleasedBuildCache = LeaseReleaseView;

/** Release `dir`'s lease for an owner that is gone (an operator action); `EBUSY` naming a live holder. */
export function releaseBuildCache(dir: string, options: { home?: string } = {}): ReleasedBuildCache {
  return callNative('releaseBuildCache', () => nativeReleaseBuildCache(anchored(dir), options.home));
}

/** Whether a process may be alive: `false` only when its death is certain (gone, zombie, pid reused, other boot). */
export function pidAlive(pid: number, startTime?: number, bootId?: string): boolean {
  if (!Number.isInteger(pid) || pid < 0 || pid > 0xffff_ffff) {
    throw codedError('EINVAL', `pidAlive: pid must be a non-negative integer, got ${pid}`, { option: 'pid', value: pid });
  }
  return callNative('pidAlive', () => nativePidAlive(pid, startTime, bootId));
}

/** The workspace's own package names in `cargo metadata --no-deps --format-version 1` output. */
export function parseWorkspacePackageNames(json: string): string[] {
  return callNative('parseWorkspacePackageNames', () => nativeParseWorkspacePackageNames(json));
}

/** Every `--manifest-path` the commands pass (`X`, `=X`, quoted), in order of first appearance, once each. */
export function extractManifestPaths(commands: readonly string[]): string[] {
  if (!Array.isArray(commands) || !commands.every((command) => typeof command === 'string')) {
    throw codedError('EINVAL', 'extractManifestPaths: commands must be an array of strings', { option: 'commands', value: commands });
  }
  return callNative('extractManifestPaths', () => nativeExtractManifestPaths([...commands]));
}

/**
 * The environment to hand a child so it builds into `dir`: `{CARGO_TARGET_DIR}` only when the
 * child's sandbox may write there (`dir` lies within one of `writableRoots`), `{}` otherwise.
 */
export function cargoTargetEnv(dir: string, writableRoots: readonly string[]): Record<string, string> {
  if (!Array.isArray(writableRoots)) {
    throw codedError('EINVAL', 'cargoTargetEnv: writableRoots must be an array of paths', { option: 'writableRoots', value: writableRoots });
  }
  return callNative('cargoTargetEnv', () => nativeCargoTargetEnv(anchored(dir), writableRoots.map(anchored)));
}

/** The hold a task gets while waiting on `dir`'s lease (prefix `resource:build-cache:`). */
export function resourceHold(dir: string): string {
  return callNative('resourceHold', () => nativeResourceHold(anchored(dir)));
}

/** The cache directory a {@link resourceHold} waits on; `null` for any other hold. */
export function parseResourceHold(hold: string): string | null {
  return callNative('parseResourceHold', () => nativeParseResourceHold(hold)) ?? null;
}

/** Whether a task held by `hold` can be released now: its cache's lease is no longer in use. */
export function holdReleasable(hold: string, options: { home?: string } = {}): boolean {
  return callNative('holdReleasable', () => nativeHoldReleasable(hold, options.home));
}

/**
 * The owner as the native side takes it, its worktree anchored like every path. It must be an object
 * to be read here; what it must say (a run, node and seat) the library checks.
 */
export function nativeOwner(owner: LeaseOwner, operation: string): LeaseOwner {
  if (typeof owner !== 'object' || owner === null) throw codedError('EINVAL', `${operation}: owner must be an object`, { option: 'owner', value: owner });
  return owner.worktree === undefined ? owner : { ...owner, worktree: anchored(owner.worktree) };
}

/** Safety net only: a lease garbage-collected while held is released by the native side's drop. */
function wrap(native: NativeLease): BuildCacheLease {
  const release = async () => {
    callNative('release', () => native.release());
  };
  return {
    record: native.record,
    reclaimed: native.reclaimed ?? null,
    freshness: native.freshness ?? null,
    get held() {
      return native.held;
    },
    release,
    [Symbol.asyncDispose]: release,
  };
}
