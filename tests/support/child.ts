/**
 * Running a script in a child process. The scan-cache policy is fixed once
 * per process, so tests that need a particular policy run their scenario in
 * a child with that environment and assert on the JSON it prints. A child
 * runs under `bun` or under Node 20 through tsx, as this user or (through
 * `setpriv`) as another.
 */
import * as path from 'node:path';

/** The checkout; children start here, where Node finds tsx. */
const CHECKOUT = path.join(import.meta.dir, '..', '..');

/** Where the child scripts live. */
export const FIXTURES = path.join(CHECKOUT, 'tests', 'fixtures');

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
  /** Run under Node 20 through tsx instead of bun. */
  node?: boolean;
}

/** How to start a fixture script: its command line and working directory. */
function childCommand(script: string, args: readonly string[], options: ChildOptions): { argv: string[]; cwd: string } {
  const runtime = options.node ? ['node', '--import', 'tsx'] : [process.execPath];
  const command = [...runtime, path.join(FIXTURES, script), ...args];
  const argv =
    options.asUser === undefined
      ? command
      : ['setpriv', `--reuid=${options.asUser}`, `--regid=${options.asUser}`, '--clear-groups', ...command];
  return { argv, cwd: CHECKOUT };
}

/** Run a fixture script and collect its output. */
export async function runScript(script: string, args: readonly string[], options: ChildOptions = {}): Promise<ChildOutput> {
  const { argv, cwd } = childCommand(script, args, options);
  const child = Bun.spawn(argv, {
    cwd,
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
  const out = await runScript(script, args, options);
  const last = out.stdout.trim().split('\n').at(-1) ?? '';
  if (out.exitCode !== 0 || last === '') {
    throw new Error(`${script} ${args.join(' ')} exited with ${out.exitCode}\nstdout: ${out.stdout}\nstderr: ${out.stderr}`);
  }
  return JSON.parse(last) as T;
}
