/**
 * Build-cache pools: K cache directories for one workspace, so N agents build at once, none waits
 * while the pool has room, none builds from nothing once a member is warm, none runs a stale binary.
 *
 * ```ts
 * await using lease = await acquireFromPool('/srv/pool', { run, node, seat, worktree, head }, { size: 4 });
 * spawnSync('cargo', ['test'], { cwd: worktree, env: { ...process.env, ...lease.env } });
 * ```
 *
 * Each member is a cache directory leased as {@link acquireBuildCache} leases one (a kernel lock the OS
 * frees however the holder dies, and a durable record under the natives home). A free member closest to
 * the owner's source is leased at once; when none is free and the pool has room, a new member is filled
 * from the warmest member no cargo is writing (reflinks where the filesystem clones files, else a copy
 * measured against a build from nothing, else cold) and marked ready only once it is on disk; the member
 * is then refreshed for the owner's worktree and head. Every decision is the native library's.
 */
import {
  native,
  type BuildCachePoolLease as NativePoolLease,
  type DiskUsageView,
  type PoolInventoryView,
  type PoolMemberView,
  type PoolPruneReportView,
  type SeedReportView,
  type SeedStrategy,
} from './native.ts';
import { linkSignal } from './cancel.ts';
import { callNative, throwIfAborted } from './errors.ts';
import { anchored } from './paths.ts';
import { nativeOwner, type Freshness, type LeaseOwner, type LeaseRecord, type SourceIdentity } from './lease.ts';

const { nativeAcquireFromPool, nativePoolInventory, nativePrunePool } = native;

/** How a new member is filled: `auto` decides per call (reflink, else a copy measured against a cold build, else cold). */
export type { SeedStrategy };

/** How a member was filled, and why that way. */
export type SeedReport = SeedReportView;

/** Disk use: bytes held, bytes allocated (blocks shared with other members counted here too), bytes in shared extents, files. */
export type DiskUsage = DiskUsageView;

/** One member of a pool; `ready` members are leased, `unregistered` is a directory with a member's name the pool did not make. */
export type PoolMember = PoolMemberView;

/** A pool's members, and its settings as last given. */
export type PoolInventory = PoolInventoryView;

/** What a prune of a pool did. */
export type PoolPruneReport = PoolPruneReportView;

/** Options of {@link acquireFromPool}. */
export interface AcquireFromPoolOptions {
  /** At most this many members. Default: `4`. */
  size?: number;
  /** Prune idle members beyond this many bytes once a member is held. Default: no budget. */
  budgetBytes?: number;
  /** How a new member is filled. Default: `'auto'`. */
  seed?: SeedStrategy;
  /** How long to wait while every member is busy, in ms; `0`: one attempt (`EBUSY`). Default: `0`. */
  budgetMs?: number;
  /** Stop waiting (checked once per poll, 50 ms), a seed or a refresh's cargo, and reject with `ABORT_ERR`. */
  signal?: AbortSignal;
  /** Refresh the member for this source. Default: the owner's `worktree` + `head` when both are given; `null`: none. */
  identity?: SourceIdentity | null;
  /** Where cargo finds the workspace; default: the identity's worktree. */
  manifestPaths?: string[];
  /** The natives home. Default: `$NATIVES_HOME`, else `~/.natives`. */
  home?: string;
}

/** A member held from a pool. Release it with `await using`, {@link PoolLease.release} or dispose. */
export interface PoolLease extends AsyncDisposable {
  /** `member-<n>`. */
  readonly member: string;
  readonly dir: string;
  /** The environment to build with: `CARGO_TARGET_DIR` and `CARGO_BUILD_BUILD_DIR`, both the member. */
  readonly env: Record<string, string>;
  readonly record: LeaseRecord | null;
  /** The dead owner's record this acquisition took over, if any. */
  readonly reclaimed: LeaseRecord | null;
  /** What the refresh did, when one was asked for. */
  readonly freshness: Freshness | null;
  /** How the member was filled, when this acquisition created it. */
  readonly seed: SeedReport | null;
  /** What the prune to `budgetBytes` did, when one was given. */
  readonly pruned: PoolPruneReport | null;
  readonly held: boolean;
  /**
   * Let the member go, recording its last use (idempotent), after sharing the blocks its files hold alike
   * with the other members' where the filesystem can (btrfs, XFS).
   */
  release(): Promise<void>;
}

/**
 * Lease a member of the pool at `pool` (created if missing) for `owner`, and refresh it for the owner's
 * source. Rejects with `EBUSY` (full, one attempt) or `ETIMEDOUT` (budget spent) naming the holders,
 * `ABORT_ERR`, `EINVAL` for bad options, `ENOTSUP` for `seed: 'reflink'` where the filesystem cannot clone,
 * `EIO` when a refresh's cargo failed (the member is then released).
 */
export async function acquireFromPool(pool: string, owner: LeaseOwner, options: AcquireFromPoolOptions = {}): Promise<PoolLease> {
  const native = nativeOwner(owner, 'acquireFromPool');
  throwIfAborted(options.signal, 'acquireFromPool');
  const identity = options.identity && { ...options.identity, worktree: anchored(options.identity.worktree) };
  using link = linkSignal(options.signal, false);
  const lease = await callNative(
    'acquireFromPool',
    () =>
      nativeAcquireFromPool(
        anchored(pool),
        native,
        {
          home: options.home,
          budgetMs: options.budgetMs,
          size: options.size,
          budgetBytes: options.budgetBytes,
          seed: options.seed,
          identity,
          manifestPaths: options.manifestPaths,
        },
        link.token,
      ),
    { signal: options.signal },
  );
  return wrap(lease);
}

/** Every member of the pool at `pool`: state, lease, holder, identity, sizes, last use, how it was filled. */
export async function poolInventory(pool: string, options: { home?: string } = {}): Promise<PoolInventory> {
  return callNative('poolInventory', () => nativePoolInventory(anchored(pool), options.home));
}

/**
 * Prune the pool at `pool` to `budgetBytes`: members a dead process left half-done go whole, then idle
 * members least recently used first, each under its maintenance lease and the prune guard; never a
 * leased member, nor one a cargo is writing or a seed is copying.
 */
export async function prunePool(pool: string, budgetBytes: number, owner: LeaseOwner, options: { home?: string } = {}): Promise<PoolPruneReport> {
  const native = nativeOwner(owner, 'prunePool');
  return callNative('prunePool', () => nativePrunePool(anchored(pool), budgetBytes, native, options.home));
}

/** Safety net only: a member garbage-collected while held is released by the native side's drop. */
function wrap(native: NativePoolLease): PoolLease {
  const release = async () => {
    await callNative('release', () => native.release());
  };
  return {
    member: native.member,
    dir: native.dir,
    env: native.env,
    record: native.record ?? null,
    reclaimed: native.reclaimed ?? null,
    freshness: native.freshness ?? null,
    seed: native.seed ?? null,
    pruned: native.pruned ?? null,
    get held() {
      return native.held;
    },
    release,
    [Symbol.asyncDispose]: release,
  };
}
