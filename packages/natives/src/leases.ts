/**
 * `@natives/natives/leases`: build-cache leases on a shared `CARGO_TARGET_DIR` and build-cache pools.
 */
export {
  acquireBuildCache,
  acquireCleanupLease,
  buildCacheInventory,
  cargoTargetEnv,
  ensureFresh,
  extractManifestPaths,
  holdReleasable,
  inspectBuildCache,
  maintenancePrune,
  parseResourceHold,
  parseWorkspacePackageNames,
  pidAlive,
  releaseBuildCache,
  resourceHold,
} from './lease.ts';
export type {
  AcquireBuildCacheOptions,
  BuildCacheEntry,
  BuildCacheLease,
  BuildCacheStatus,
  Freshness,
  KeptReason,
  LeaseOwner,
  LeaseRecord,
  OwnerRecord,
  PruneKept,
  PruneReport,
  ReleasedBuildCache,
  SourceIdentity,
} from './lease.ts';
export { acquireFromPool, poolInventory, prunePool } from './pool.ts';
export type { AcquireFromPoolOptions, DiskUsage, PoolInventory, PoolLease, PoolMember, PoolPruneReport, SeedReport, SeedStrategy } from './pool.ts';
export { ERROR_CODES, codedError } from './errors.ts';
export type { CodedError, ErrorCode, ErrorDetails } from './errors.ts';
