/**
 * What every mutating tool calls after a successful filesystem change: drop
 * the cached scans that could have seen the old state, so the next
 * glob, fuzzyFind or grep walks again.
 *
 * Invalidation must never be the reason a search goes stale: if a targeted
 * invalidation is refused (an empty path, say), the whole cache is dropped
 * instead, and the refusal is not allowed to turn a successful write into a
 * failed tool call.
 */
import { invalidateFsScanCache } from '@natives/natives';

/** After creating or overwriting `path` (parents may have been created too). */
export function invalidateFsScanAfterWrite(path: string): void {
  invalidate(path);
}

/** After deleting `path` (a file or a whole directory); it need not exist any more. */
export function invalidateFsScanAfterDelete(path: string): void {
  invalidate(path);
}

/** After moving `oldPath` to `newPath`: both sides, when they differ. */
export function invalidateFsScanAfterRename(oldPath: string, newPath: string): void {
  invalidate(oldPath);
  if (newPath !== oldPath) invalidate(newPath);
}

function invalidate(path: string): void {
  try {
    invalidateFsScanCache(path);
  } catch {
    invalidateFsScanCache();
  }
}
