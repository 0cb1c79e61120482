/**
 * What every agent tool shares: the `Tool` shape, the context a call runs in,
 * the result it returns, the error codes it reports, the one check that a
 * path stays inside the working directory, and the one atomic file write.
 *
 * Tools are framework-neutral: `parameters` is a plain JSON Schema and
 * `execute` resolves with text the model can act on plus structured
 * `details`. Refusals the model should react to (a missing file, an
 * ambiguous edit, a path outside the working directory) resolve with
 * `isError: true` and a stable `details.code`; `execute` does not reject.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as nodePath from 'node:path';

/** Where and under what limits a tool call runs. */
export interface ToolContext {
  /** The working directory: relative paths resolve against it, and writes must stay inside it. */
  cwd: string;
  /** Aborts the call (a running command is killed). */
  signal?: AbortSignal;
  /**
   * Let writes land outside `cwd`. Default `false`. This is the caller's
   * decision, not the model's: no tool exposes it as a parameter.
   */
  allowOutsideCwd?: boolean;
}

/**
 * Stable codes in `details.code` of a result with `isError: true`. This
 * table is the one place they are documented.
 */
export const TOOL_ERROR_CODES = {
  INVALID_ARGS: 'The arguments do not fit the schema or contradict each other.',
  ENOENT: 'The path does not exist (read and edit suggest close matches).',
  EISDIR: 'The path is a directory where a file was expected.',
  ENOTDIR: 'find: the path is a file (or goes through one) where a directory was expected.',
  EACCES: 'The operating system refused access to the path.',
  BINARY: 'The file looks binary (a NUL byte in its first 8 KiB) and is not shown.',
  OUTSIDE_CWD: 'The path resolves outside the working directory (through `..` or a symlink).',
  NO_MATCH: 'replace: the old text does not occur in the file.',
  AMBIGUOUS: 'replace: the old text occurs more than once; the message lists the lines.',
  STALE: 'hashline: an anchor no longer matches the file (it changed since it was read); the message names the line.',
  PATCH_FAILED: 'patch: the diff could not be parsed or does not apply; no file was changed.',
  INVALID_PATTERN: 'grep: the pattern is not a valid regular expression (the message suggests `literal: true`); find: the glob pattern is malformed.',
  ABORTED: 'The call was aborted through its signal.',
  TIMEOUT: 'run: the command exceeded its timeout and was killed; grep and find: the search exceeded its time limit.',
  EXIT_CODE: 'run: the command exited with a non-zero status or was killed by a signal.',
  IO: 'Any other filesystem failure; the message carries the system error.',
} as const;

/** A code from {@link TOOL_ERROR_CODES}. */
export type ToolErrorCode = keyof typeof TOOL_ERROR_CODES;

/** Structured details of a result; `code` is set on errors. */
export interface ToolDetails {
  code?: ToolErrorCode;
  [key: string]: unknown;
}

/** What a call resolves with. */
export interface ToolResult<D extends ToolDetails = ToolDetails> {
  /** Text for the model. */
  text: string;
  /** `true` when the call was refused or failed; `details.code` says why. */
  isError?: boolean;
  /** Structured facts for the host (paths, counts, exit codes...). */
  details: D;
}

/** A JSON Schema object (kept loose: any JSON Schema the host forwards as-is). */
export type JsonSchema = { [key: string]: unknown };

/** One tool. */
export interface Tool<A = Record<string, unknown>> {
  name: string;
  description: string;
  /** JSON Schema of `args`. */
  parameters: JsonSchema;
  execute(args: A, ctx: ToolContext): Promise<ToolResult>;
}

/** A refusal result. */
export function toolError(code: ToolErrorCode, text: string, details: Record<string, unknown> = {}): ToolResult {
  return { isError: true, text, details: { ...details, code } };
}

/** Thrown inside a tool to return {@link toolError}; {@link guard} turns it into a result. */
export class ToolRefusal extends Error {
  constructor(
    readonly code: ToolErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/**
 * Run a tool body: an aborted signal refuses before any work, a
 * {@link ToolRefusal} becomes its error result, and a system or natives
 * error becomes `ENOENT`/`EISDIR`/`ENOTDIR`/`EACCES`/`ABORTED`/`TIMEOUT`/`IO`
 * (by its `code`) instead of a rejection.
 */
export async function guard(ctx: ToolContext, body: () => Promise<ToolResult>): Promise<ToolResult> {
  if (ctx.signal?.aborted) return toolError('ABORTED', 'The call was aborted before it started.');
  try {
    return await body();
  } catch (error) {
    if (error instanceof ToolRefusal) return toolError(error.code, error.message, error.details);
    const sys = (error as NodeJS.ErrnoException | undefined)?.code;
    const code: ToolErrorCode =
      sys === 'ENOENT' || sys === 'EISDIR' || sys === 'ENOTDIR' || sys === 'EACCES'
        ? sys
        : sys === 'EPERM'
          ? 'EACCES'
          : sys === 'ABORT_ERR'
            ? 'ABORTED'
            : sys === 'ETIMEDOUT'
              ? 'TIMEOUT'
              : 'IO';
    return toolError(code, error instanceof Error ? error.message : String(error));
  }
}

/** A required non-empty string argument, or a refusal naming it. */
export function stringArg(args: Record<string, unknown>, name: string): string {
  const value = args[name];
  if (typeof value !== 'string' || value === '') throw new ToolRefusal('INVALID_ARGS', `\`${name}\` must be a non-empty string.`);
  return value;
}

/** An optional positive integer argument. */
export function optionalIntArg(args: Record<string, unknown>, name: string, min: number): number | undefined {
  const value = args[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new ToolRefusal('INVALID_ARGS', `\`${name}\` must be an integer >= ${min}.`);
  }
  return value;
}

/** An optional string argument (empty counts as absent). */
export function optionalStringArg(args: Record<string, unknown>, name: string): string | undefined {
  const value = args[name];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new ToolRefusal('INVALID_ARGS', `\`${name}\` must be a string.`);
  return value;
}

/** An optional boolean argument. */
export function optionalBoolArg(args: Record<string, unknown>, name: string): boolean | undefined {
  const value = args[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new ToolRefusal('INVALID_ARGS', `\`${name}\` must be true or false.`);
  return value;
}

/** `path` as the model should see it: relative to `cwd` when inside it. */
export function displayPath(ctx: ToolContext, abs: string): string {
  const rel = nodePath.relative(nodePath.resolve(ctx.cwd), abs);
  return rel === '' ? '.' : rel.startsWith('..') || nodePath.isAbsolute(rel) ? abs : rel;
}

/**
 * Resolve `path` against `ctx.cwd` for writing, refusing (`OUTSIDE_CWD`) a
 * path that leaves the working directory, lexically (`..`, an absolute path
 * elsewhere) or through a symlink: the real path of the nearest existing
 * ancestor (the path itself when it exists) must lie inside the real `cwd`.
 * `ctx.allowOutsideCwd` skips both checks. Returns the absolute path.
 */
export async function resolveWritePath(ctx: ToolContext, path: string): Promise<string> {
  const cwd = nodePath.resolve(ctx.cwd);
  const abs = nodePath.resolve(cwd, path);
  if (ctx.allowOutsideCwd) return abs;
  const refuse = (how: string) =>
    new ToolRefusal('OUTSIDE_CWD', `Refusing to write ${path}: it ${how} outside the working directory ${cwd}.`, { path: abs });
  if (!isInside(cwd, abs)) throw refuse('resolves to ' + abs + ',');
  const realCwd = await fs.realpath(cwd);
  let existing = abs;
  for (;;) {
    try {
      const real = await fs.realpath(existing);
      if (!isInside(realCwd, real)) throw refuse(`goes through a symlink (${displayPath(ctx, existing)} -> ${real})`);
      return abs;
    } catch (error) {
      if (error instanceof ToolRefusal) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
      // A dangling symlink counts as existing: where it points is what a write would follow.
      const link = await fs.readlink(existing).catch(() => undefined);
      if (link !== undefined) {
        const target = nodePath.resolve(nodePath.dirname(existing), link);
        if (!isInside(realCwd, target) && !isInside(cwd, target)) throw refuse(`goes through a symlink (${displayPath(ctx, existing)} -> ${target})`);
      }
      const parent = nodePath.dirname(existing);
      if (parent === existing) return abs;
      existing = parent;
    }
  }
}

/** `child` is `root` or lies under it (both absolute and normalised). */
function isInside(root: string, child: string): boolean {
  const rel = nodePath.relative(root, child);
  return rel === '' || (!rel.startsWith('..' + nodePath.sep) && rel !== '..' && !nodePath.isAbsolute(rel));
}

/** What {@link atomicWrite} did. */
export interface AtomicWriteOutcome {
  /** The file did not exist before. */
  created: boolean;
  /** The path actually written (the target of a symlink at `path`). */
  writtenPath: string;
}

/**
 * Replace `path`'s contents atomically: write a temp file in the same
 * directory, fsync it, rename it over `path`, fsync the directory. Missing
 * parents are created. An existing file keeps its mode (a new one gets
 * `mode`, default 0o666 less the umask); a symlink at `path` is followed, so
 * the link survives and its target is replaced.
 */
export async function atomicWrite(path: string, data: string | Uint8Array, mode?: number): Promise<AtomicWriteOutcome> {
  let target = path;
  let existingMode: number | undefined;
  try {
    target = await fs.realpath(path);
    const stat = await fs.stat(target);
    if (stat.isDirectory()) throw Object.assign(new Error(`EISDIR: ${path} is a directory`), { code: 'EISDIR' });
    existingMode = stat.mode & 0o7777;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') throw error;
    // A dangling symlink: write where it points.
    const link = await fs.readlink(path).catch(() => undefined);
    if (link !== undefined) target = nodePath.resolve(nodePath.dirname(path), link);
  }
  const dir = nodePath.dirname(target);
  await fs.mkdir(dir, { recursive: true });
  const temp = nodePath.join(dir, `.${nodePath.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await fs.open(temp, 'wx', existingMode ?? mode ?? 0o666);
  try {
    try {
      await handle.writeFile(data);
      if (existingMode !== undefined) await handle.chmod(existingMode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temp, target);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
  await syncDir(dir);
  return { created: existingMode === undefined, writtenPath: target };
}

/** fsync a directory so a rename or unlink in it is durable (best effort). */
export async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await fs.open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some filesystems refuse fsync on a directory; the rename itself has happened.
  }
}
