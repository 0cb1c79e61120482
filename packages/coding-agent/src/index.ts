/**
 * Tools a coding agent uses to change and discover files, each wired to the
 * natives scan cache.
 */
export {
  invalidateFsScanAfterDelete,
  invalidateFsScanAfterRename,
  invalidateFsScanAfterWrite,
} from './fs-cache-invalidation.ts';
