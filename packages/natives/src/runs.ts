/**
 * `@natives/natives/worktrees`: the run registry (tasks, runs, seats, branch handover), checkout
 * evidence and the eviction of inactive checkouts.
 */
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
export { ERROR_CODES, codedError } from './errors.ts';
export type { CodedError, ErrorCode, ErrorDetails } from './errors.ts';
