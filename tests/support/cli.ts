/** The `natives` CLI as a user runs it: the release binary scripts/setup.sh links at target/natives. */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const CLI = path.join(import.meta.dir, '..', '..', 'target', 'natives');

/** Run `natives ARGS` in `cwd` with its output piped: exit code, stdout, stderr. */
export function natives(args: readonly string[], cwd: string): { code: number; out: string; err: string } {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run scripts/setup.sh`);
  const result = spawnSync(CLI, args, { cwd, encoding: 'utf8', maxBuffer: 256 << 20 });
  if (result.error) throw result.error;
  return { code: result.status ?? -1, out: result.stdout, err: result.stderr };
}
