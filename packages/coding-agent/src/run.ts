/**
 * `run`: a shell command (`bash -c`) in `cwd`, with a timeout, abort and a
 * cap on output. A command can change any file, so when it ends (however it
 * ends) the scan cache is invalidated for `cwd`: no search answers from
 * before the command. Changes a command makes outside `cwd` are not
 * invalidated.
 *
 * A missing working directory is refused (`ENOENT`, naming it) before
 * anything runs, and `timeoutMs` is at most {@link MAX_RUN_TIMEOUT_MS}
 * (`INVALID_ARGS` above it: a longer timer would fire at once).
 *
 * The command runs in its own process group; timeout and abort send SIGTERM
 * to the whole group, then SIGKILL after a grace period. Output is stdout
 * and stderr in the order written (the shell sends stderr into stdout's
 * pipe); past {@link MAX_OUTPUT_BYTES} the head and tail are kept and the
 * cut is marked. Background processes the command leaves running are not
 * waited for (their output after the command exits is dropped).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs/promises';
import { invalidateFsScanAfterWrite } from './fs-cache-invalidation.ts';
import { type Static, Type } from '@sinclair/typebox';
import { type ToolContext, type ToolResult, ToolRefusal, defineTool, toolCodeOf, toolError } from './tool.ts';

/** Default timeout. */
export const DEFAULT_RUN_TIMEOUT_MS = 120_000;
/** Output kept: half from the start, half from the end. */
export const MAX_OUTPUT_BYTES = 50 * 1024;
/** Between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 2000;
/** The longest timeout: the most a timer can wait (2^31 - 1 ms, about 24.8 days); a longer one would fire at once. */
export const MAX_RUN_TIMEOUT_MS = 2 ** 31 - 1;

const RunParameters = Type.Object(
  {
    command: Type.String({ minLength: 1, description: 'The command line, run with `bash -c`.' }),
    timeoutMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_RUN_TIMEOUT_MS,
        description: `Kill the command after this many milliseconds (at most ${MAX_RUN_TIMEOUT_MS}). Default ${DEFAULT_RUN_TIMEOUT_MS}.`,
      }),
    ),
  },
  { additionalProperties: false },
);

export type RunArgs = Static<typeof RunParameters>;

const RunDetails = Type.Object({
  command: Type.String(),
  exitCode: Type.Union([Type.Integer(), Type.Null()], { description: 'The exit status; null when a signal ended the command.' }),
  signal: Type.Union([Type.String(), Type.Null()], { description: 'The signal that ended the command, if one did.' }),
  elapsedMs: Type.Number(),
  outputBytes: Type.Integer({ description: 'Bytes of output the command wrote (shown or not).' }),
  outputCut: Type.Boolean({ description: 'The middle of the output was cut.' }),
});

export const runTool = defineTool({
  name: 'run',
  description:
    'Run a bash command in the working directory and return its combined stdout and stderr ' +
    `(at most ${MAX_OUTPUT_BYTES / 1024} KiB: the start and the end are kept) and exit code. ` +
    `Killed after timeoutMs (default ${DEFAULT_RUN_TIMEOUT_MS / 1000} s). No stdin. Do not start servers or other commands that never end.`,
  parameters: RunParameters,
  output: RunDetails,
  run,
});

/** Keeps the first and last `cap / 2` bytes of a stream and counts the rest. */
class CappedOutput {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  total = 0;

  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const half = this.cap / 2;
    if (this.headBytes < half) {
      const take = chunk.subarray(0, half - this.headBytes);
      this.head.push(take);
      this.headBytes += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length === 0) return;
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    while (this.tailBytes - this.tail[0]!.length >= half) this.tailBytes -= this.tail.shift()!.length;
  }

  get cut(): boolean {
    return this.total > this.cap;
  }

  text(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    let tail = Buffer.concat(this.tail);
    if (!this.cut) return head + tail.toString('utf8');
    tail = tail.subarray(tail.length - this.cap / 2);
    const omitted = this.total - this.headBytes - tail.length;
    return `${head}\n[... ${omitted} bytes of output cut ...]\n${tail.toString('utf8')}`;
  }
}

async function run({ command, timeoutMs = DEFAULT_RUN_TIMEOUT_MS }: RunArgs, ctx: ToolContext): Promise<ToolResult> {
  await requireDirectory(ctx.cwd);
  const output = new CappedOutput(MAX_OUTPUT_BYTES);
  const started = Date.now();
  let ended: Ended;
  try {
    ended = await runCommand(command, ctx, timeoutMs, output);
  } finally {
    // The command may have changed any file under the working directory.
    invalidateFsScanAfterWrite(ctx.cwd);
  }
  const { stopped, code, signal } = ended;
  const text = output.text();
  const details = { command, exitCode: code, signal, elapsedMs: Date.now() - started, outputBytes: output.total, outputCut: output.cut };
  const body = text === '' ? '(no output)' : text.replace(/\n$/, '');
  if (stopped === 'TIMEOUT') return toolError('TIMEOUT', `${body}\n[killed after ${timeoutMs} ms: timeout]`, { ...details, timeoutMs });
  if (stopped === 'ABORTED') return toolError('ABORTED', `${body}\n[killed: the call was aborted]`, details);
  if (code !== 0) return toolError('EXIT_CODE', `${body}\n[${code === null ? `killed by ${signal}` : `exit code ${code}`}]`, details);
  return { text: `${body}\n[exit code 0]`, details };
}

/** Refuse a working directory that is missing or not a directory, naming it (spawning there would only say `posix_spawn 'bash'`). */
async function requireDirectory(cwd: string): Promise<void> {
  let stat;
  try {
    stat = await fs.stat(cwd);
  } catch (error) {
    const code = toolCodeOf(error);
    throw new ToolRefusal(code, `The working directory ${cwd} cannot be used: ${(error as Error).message}. The command was not run.`, { cwd });
  }
  if (!stat.isDirectory()) throw new ToolRefusal('ENOTDIR', `The working directory ${cwd} is not a directory. The command was not run.`, { cwd });
}

/** How a command ended: its exit, and whether the tool stopped it. */
interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stopped?: 'TIMEOUT' | 'ABORTED';
}

/**
 * Run `command` in its own process group, its stderr joined to stdout in one
 * pipe (so the output keeps the order it was written in), stopping the whole
 * group on timeout or abort: SIGTERM, then SIGKILL after {@link KILL_GRACE_MS}.
 */
function runCommand(command: string, ctx: ToolContext, timeoutMs: number, output: CappedOutput): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `exec 2>&1\n${command}`], { cwd: ctx.cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stopped: Ended['stopped'];
    let killTimer: ReturnType<typeof setTimeout> | undefined;
    const stop = (why: 'TIMEOUT' | 'ABORTED') => {
      if (stopped || child.pid === undefined) return;
      stopped = why;
      killGroup(child.pid, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(child.pid!, 'SIGKILL'), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => stop('TIMEOUT'), timeoutMs);
    const onAbort = () => stop('ABORTED');
    ctx.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    const finish = () => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      // A stopped command leaves nothing of its group behind.
      if (stopped) killGroup(child.pid!, 'SIGKILL');
      ctx.signal?.removeEventListener('abort', onAbort);
    };
    child.on('error', (error) => {
      finish();
      reject(error);
    });
    child.on('exit', (code, signal) => {
      // Wait for the pipes to drain, but not for background processes that still hold them.
      let settled = false;
      const settle = () => {
        if (settled) return;
        settled = true;
        finish();
        child.stdout.destroy();
        child.stderr.destroy();
        resolve({ code, signal, stopped });
      };
      child.on('close', settle);
      setTimeout(settle, 200).unref?.();
    });
  });
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}
