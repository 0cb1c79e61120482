/**
 * Running a script in a child `bun` process. The scan-cache policy is read
 * from the environment once per process, so tests that need a particular
 * policy run their scenario in a child with that environment and assert on
 * the JSON it prints.
 */
import * as path from 'node:path';

/** Where the child scripts live. */
export const FIXTURES = path.join(import.meta.dir, '..', 'fixtures');

/** What a child printed and how it ended. */
export interface ChildOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface ChildOptions {
  /** Extra environment variables (added to this process's environment). */
  env?: Record<string, string>;
  /** Run as this uid/gid (through `setpriv`); the caller must be root. */
  asUser?: number;
}

/** Run `bun <fixture script> ...args` and collect its output. */
export async function runBunScript(script: string, args: readonly string[], options: ChildOptions = {}): Promise<ChildOutput> {
  const command = [process.execPath, path.join(FIXTURES, script), ...args];
  const argv =
    options.asUser === undefined
      ? command
      : ['setpriv', `--reuid=${options.asUser}`, `--regid=${options.asUser}`, '--clear-groups', ...command];
  const child = Bun.spawn(argv, {
    env: { ...process.env, ...options.env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { exitCode, stdout, stderr };
}

/** Run a child script and parse the JSON on the last line of its stdout. */
export async function runJson<T>(script: string, args: readonly string[], options: ChildOptions = {}): Promise<T> {
  const out = await runBunScript(script, args, options);
  const last = out.stdout.trim().split('\n').at(-1) ?? '';
  if (out.exitCode !== 0 || last === '') {
    throw new Error(`${script} ${args.join(' ')} exited with ${out.exitCode}\nstdout: ${out.stdout}\nstderr: ${out.stderr}`);
  }
  return JSON.parse(last) as T;
}
