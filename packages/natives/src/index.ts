/**
 * natives: fast, fresh file discovery for coding agents.
 *
 * A shared in-memory scan cache feeds `glob`, `fuzzyFind` and `grep`; mutating tools call
 * `invalidateFsScanCache` so no search answers from before a change; `readFile` and `applyFileChanges` give
 * them regular-file reads and confined, all-or-nothing changes that invalidate by themselves. Memory-directory claims
 * tell an orchestrator whether a Claude memory folder is one agent's alone; build-cache leases
 * say who is using a shared `CARGO_TARGET_DIR` and keep it fresh for the source being built, and
 * build-cache pools give N agents K such directories so none waits or builds cold. The run registry
 * records an orchestrator's tasks, runs and worktrees, and hands a branch an earlier attempt still
 * has checked out over to its retry without losing a byte.
 */
export { FileType, fsScanCacheStats, glob, invalidateFsScanCache, watchFsScanCache } from './glob.ts';
export type { FsScanCacheStats, GlobMatch, GlobOptions, GlobResult, OnGlobMatch, UnreadablePath } from './glob.ts';
export { fuzzyFind } from './fuzzy.ts';
export type { FuzzyFindOptions, FuzzyFindResult, FuzzyMatch, FuzzyTier } from './fuzzy.ts';
export { grep, hasMatch, search } from './grep.ts';
export type { ContextLine, GrepMatch, GrepMode, GrepOptions, GrepResult, ListSource, MatchOptions } from './grep.ts';
export { applyFileChanges, readFile, realPath } from './files.ts';
export type { AppliedFileChanges, ApplyFileChangesOptions, FileChange, FileContents, ReadFileOptions, RealPathOptions } from './files.ts';
export { ERROR_CODES, codedError } from './errors.ts';
export type { CodedError, ErrorCode } from './errors.ts';
export {
  checkAndClaim,
  claimsOf,
  claudeFolderName,
  claudeMemoryDir,
  dirId,
  hasLinkedWorktrees,
  heldExclusively,
  memoryProjectRoot,
  memoryRedirectsFor,
  pruneStaleClaims,
  releaseClaim,
  usedByAnother,
} from './claims.ts';
export type {
  ClaimAgent,
  ClaimedFolder,
  ClaimRequest,
  ClaimTarget,
  ClaimVerdict,
  Deadline,
  FolderClaim,
  KnownAgent,
  MemoryRedirects,
  SharedReason,
} from './claims.ts';
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
export {
  addCandidate,
  addSeat,
  createRun,
  createTask,
  driveRun,
  driverLiveness,
  earlierAttempts,
  listRuns,
  releaseWorktree,
  restoreHandover,
  setRunStatus,
  showRun,
} from './worktrees.ts';
export type {
  DriverState,
  Handover,
  HandoverHolder,
  HandoverReason,
  NewCandidate,
  NewRun,
  NewSeat,
  NothingToDoHandover,
  RefusedHandover,
  RegistryOptions,
  ReleasedHandover,
  ReleasedWorktree,
  ReleaseWorktreeOptions,
  RestoreResult,
  RunCandidate,
  RunDriver,
  RunEvent,
  RunRecord,
  RunSeat,
  RunStatus,
  SeatKind,
  TaskRecord,
  WouldReleaseHandover,
} from './worktrees.ts';
export { captureSourceEvidence, restoreSourceEvidence, sourceEvidencePatch, validateSourceEvidence } from './evidence.ts';
export { archivedSeats, evictionPass, grantAuthority, restoreSeat } from './eviction.ts';
export type {
  ArchivedSeatTip,
  EvictedCopy,
  EvictionBlocker,
  EvictionBlockerKind,
  EvictionOptions,
  EvictionReport,
  EvictionRetention,
  RestoredSeat,
  RetainedCopy,
  SourceAuthority,
} from './eviction.ts';
export type {
  RestoredSourceEvidence,
  SourceEvidenceArchive,
  SourceEvidenceCapture,
  SourceEvidenceOptions,
  SourceEvidenceTip,
} from './evidence.ts';
