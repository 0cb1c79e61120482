/**
 * Running a script in a child process. The scan-cache policy is fixed once
 * per process, so tests that need a particular policy run their scenario in
 * a child with that environment and assert on the JSON it prints. A child
 * runs under `bun` or under Node 20 through tsx, as this user, or under `bun`
 * as another (through `setpriv`, from a copy that user can reach: see
 * unprivileged.ts).
 */
import * as path from 'node:path';
import type { Unprivileged } from './unprivileged.ts';

/** The checkout; children start here, where Node finds tsx. */
const CHECKOUT = path.join(import.meta.dir, '..', '..');

/** Where the child scripts live, relative to the checkout (and to the unprivileged stage). */
const FIXTURES_DIR = path.join('tests', 'fixtures');

/** Where the child scripts live. */
export const FIXTURES = path.join(CHECKOUT, FIXTURES_DIR);

/** What a child printed and how it ended. */
export interface ChildOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** The child was killed at its deadline (see {@link ChildOptions.deadlineMs}). */
  killedAtDeadline: boolean;
}

export interface ChildOptions {
  /** Extra environment variables (added to this process's environment). */
  env?: Record<string, string>;
  /** Run as this uid/gid (through `setpriv`, under bun) from its stage; the caller must be root. */
  asUser?: Unprivileged;
  /** Run under Node 20 through tsx instead of bun (as this user only). */
  node?: boolean;
  /**
   * Kill the child (SIGKILL) if it runs longer than this: work that can
   * block its thread is run in a child so that a regression fails the test
   * at the deadline instead of stalling the run.
   */
  deadlineMs?: number;
}

/**
 * How to start a fixture script: its command line and working directory. A
 * child run as another user starts from the unprivileged stage, which that
 * user can reach wherever the checkout lives; it runs under bun (Node would
 * need the checkout's node_modules for tsx).
 */
export function childCommand(script: string, args: readonly string[], options: ChildOptions = {}): { argv: string[]; cwd: string } {
  if (options.asUser !== undefined) {
    if (options.node) throw new Error(`${script}: a child under Node runs as the current user only`);
    const { uid, stage } = options.asUser;
    const user = ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups'];
    return { argv: [...user, process.execPath, path.join(stage, FIXTURES_DIR, script), ...args], cwd: stage };
  }
  const runtime = options.node ? ['node', '--import', 'tsx'] : [process.execPath];
  return { argv: [...runtime, path.join(FIXTURES, script), ...args], cwd: CHECKOUT };
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
  let killedAtDeadline = false;
  const deadline =
    options.deadlineMs === undefined
      ? undefined
      : setTimeout(() => {
          killedAtDeadline = true;
          child.kill('SIGKILL');
        }, options.deadlineMs);
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  clearTimeout(deadline);
  return { exitCode, stdout, stderr, killedAtDeadline };
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
