/**
 * Paths as the native side wants them: the one rule for every call that takes a path.
 *
 * A path is made absolute against `process.cwd()` and otherwise handed over as given: `.` and `..`
 * are left for the native side, which resolves them on the filesystem. Across a symlink, `link/..`
 * is the parent of the link's target, which only the filesystem knows; folding it by name would
 * name the folder holding the link instead, a different search root, lease or claim than the CLI
 * (which hands its arguments over as given) names with the same words.
 */
import * as nodePath from 'node:path';

/** `path` made absolute against `process.cwd()`, `.` and `..` kept; an empty path is left for the native side to refuse (it is not the cwd). */
export function anchored(path: string): string {
  return path === '' || nodePath.isAbsolute(path) ? path : `${process.cwd()}${nodePath.sep}${path}`;
}
