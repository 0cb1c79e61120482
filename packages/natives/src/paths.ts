/** Paths as the native side wants them. */
import * as nodePath from 'node:path';

/** `path` against `process.cwd()`; an empty path is left for the native side to refuse (it is not the cwd). */
export function absolute(path: string): string {
  return path === '' ? path : nodePath.resolve(path);
}
