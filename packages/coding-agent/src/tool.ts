/**
 * What every agent tool shares: the `Tool` shape, the context a call runs in,
 * the result it returns, the error codes it reports, how arguments are
 * checked and how a failure becomes a result. File I/O is in `files.ts`.
 *
 * Each tool's parameters are declared once, as a TypeBox schema: the model
 * is shown that schema (a plain JSON Schema object), the tool's argument
 * type is derived from it, and one compiled checker validates every call
 * before the tool runs, naming the argument at fault (`INVALID_ARGS`).
 * `execute` resolves with text the model can act on plus structured
 * `details`; refusals the model should react to (a missing file, an
 * ambiguous edit, a path outside the working directory) resolve with
 * `isError: true` and a stable `details.code`. `execute` does not reject.
 */
import type { ErrorCode } from '@natives/natives';
import type { Static, TObject } from '@sinclair/typebox';
import { TypeCompiler, type ValueError, ValueErrorType } from '@sinclair/typebox/compiler';
import { givenPath, pathInside, resolvePath, shownPath } from './names.ts';
import { findLoneSurrogate } from './text.ts';

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
  /**
   * Confine reads to `cwd` as writes are: `read` refuses a file, and `grep`
   * and `find` a directory, whose real location is outside it (judged like
   * writes, symlinks resolved on the filesystem). Default `false`: reads go
   * anywhere. Like `allowOutsideCwd`, the caller's decision (an MCP server
   * confining a client to its roots), and lifted by `allowOutsideCwd`.
   */
  confineReads?: boolean;
  /**
   * Serve `grep` and `find` from the shared scan cache instead of walking
   * afresh. Default `false`. Turn it on in a long-lived process that keeps
   * the cache exact (`watchFsScanCache`): writes made through the tools
   * invalidate it either way.
   */
  scanCache?: boolean;
}

/**
 * Stable codes in `details.code` of a result with `isError: true`. This
 * table is the one place they are documented.
 */
export const TOOL_ERROR_CODES = {
  INVALID_ARGS: 'The arguments do not fit the schema or contradict each other.',
  ENOENT: 'The path does not exist (read and edit suggest close matches).',
  EISDIR: 'The path is a directory where a file was expected.',
  ENOTDIR: 'The path is a file (or goes through one) where a directory was expected.',
  EACCES: 'The operating system refused access to the path.',
  NOT_REGULAR: 'The path is a FIFO, socket or device, not a regular file; it is not opened (reading one could block forever).',
  TOO_LARGE: 'The file is larger than the tool reads (the message gives both sizes); use grep or read a window.',
  READ_ONLY: 'The file is read-only (no write permission in its mode, or not writable by this process); it is not changed.',
  HARD_LINKED: 'The file has several hard links; replacing it would leave the other names with the old contents, so it is not changed.',
  BINARY: 'The file is binary (a NUL byte among the bytes read, by the rule grep searches by) and is not shown or edited.',
  ENCODING: 'edit: the file is UTF-16 text (its byte order mark says so); edits write UTF-8 only, so it is not changed.',
  OUTSIDE_CWD: 'The path resolves outside the working directory (through `..` or a symlink, judged on its real location).',
  NAME_TOO_LONG: 'The path (or the real location it reaches) is longer than 4096 bytes (PATH_MAX); it is not walked.',
  LOSSY_NAME:
    'The path names nothing, but copies with U+FFFD a name on disk that is not UTF-8 (taken from a listing that lost its bytes); ' +
    'the message gives the path meant, C-quoted as the tools show it. write does not create a second file beside the real one.',
  NO_MATCH: 'replace: the old text does not occur in the file.',
  AMBIGUOUS: 'replace: the old text occurs more than once; the message lists the lines.',
  STALE: 'The file changed since it was read: a hashline anchor no longer matches (the message names the line), or another writer replaced the file between the edit reading and writing it.',
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
  /** JSON Schema of `args` (a TypeBox schema, which is one). */
  parameters: JsonSchema;
  /** JSON Schema of `details` in a result without `isError` (a TypeBox schema). */
  output: JsonSchema;
  /** Run the tool; arguments that do not fit `parameters` are refused with `INVALID_ARGS`. */
  execute(args: A, ctx: ToolContext): Promise<ToolResult>;
}

/** What {@link defineTool} makes a tool from. */
export interface ToolSpec<P extends TObject> {
  name: string;
  description: string;
  parameters: P;
  /** What `details` holds when the call succeeds. */
  output: TObject;
  /** The tool's work, given arguments already checked against `parameters`. */
  run(args: Static<P>, ctx: ToolContext): Promise<ToolResult>;
}

/**
 * A tool from its spec: every call is guarded ({@link guard}) and its
 * arguments checked against the compiled schema first.
 */
export function defineTool<P extends TObject>(spec: ToolSpec<P>): Tool<Static<P>> {
  const checker = TypeCompiler.Compile(spec.parameters);
  return {
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    output: spec.output,
    execute: (args, ctx) =>
      guard(ctx, () => {
        const error = checker.Errors(args).First();
        if (error?.path === '') throw new ToolRefusal('INVALID_ARGS', `The arguments must be an object (got ${JSON.stringify(args)}).`);
        if (error) throw new ToolRefusal('INVALID_ARGS', `${argumentName(error.path)} ${complaint(error)}.`);
        return spec.run(args, ctx);
      }),
  };
}

/** What is wrong with an argument, in words a model acts on. */
function complaint(error: ValueError): string {
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return 'is required';
    case ValueErrorType.ObjectAdditionalProperties:
      return 'is not an argument of this tool';
    case ValueErrorType.Union: {
      const choices = (error.schema.anyOf as { const?: unknown }[] | undefined)?.map((choice) => choice.const);
      if (choices?.every((choice) => typeof choice === 'string')) {
        return `must be one of ${choices.map((choice) => JSON.stringify(choice)).join(', ')} (got ${JSON.stringify(error.value)})`;
      }
      return `does not fit: ${error.message.toLowerCase()}`;
    }
    default:
      return `does not fit: ${error.message.toLowerCase()} (got ${JSON.stringify(error.value) ?? String(error.value)})`;
  }
}

/** A checker path (`/edits/0/anchor`) as the argument it names (`` `edits[0].anchor` ``). */
function argumentName(path: string): string {
  const name = path
    .split('/')
    .filter((part) => part !== '')
    .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join('');
  return `\`${name}\``;
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
 * The tool code for each code natives rejects with, every one of them (the type checker refuses
 * a code missing or unknown); a system error with another code is `IO`.
 */
const TOOL_CODE_OF: Readonly<Record<ErrorCode, ToolErrorCode>> = {
  ENOENT: 'ENOENT',
  EISDIR: 'EISDIR',
  ENOTDIR: 'ENOTDIR',
  EACCES: 'EACCES',
  EXDEV: 'OUTSIDE_CWD',
  EFTYPE: 'NOT_REGULAR',
  EFBIG: 'TOO_LARGE',
  EPERM: 'READ_ONLY',
  EMLINK: 'HARD_LINKED',
  ESTALE: 'STALE',
  ENAMETOOLONG: 'NAME_TOO_LONG',
  EILSEQ: 'LOSSY_NAME',
  ABORT_ERR: 'ABORTED',
  ETIMEDOUT: 'TIMEOUT',
  // The tools check their own arguments first and claim nothing: what is left is a failure.
  EINVAL: 'IO',
  EBUSY: 'IO',
  EEXIST: 'IO',
  ENOTSUP: 'IO',
  EBADMSG: 'IO',
  EIO: 'IO',
};

/** The tool code for an error thrown by natives or the system. */
export function toolCodeOf(error: unknown): ToolErrorCode {
  const code = (error as { code?: unknown } | undefined)?.code;
  return (typeof code === 'string' && Object.hasOwn(TOOL_CODE_OF, code) && TOOL_CODE_OF[code as ErrorCode]) || 'IO';
}

/** The message a model sees for a natives or system error. */
export function toolMessageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return toolCodeOf(error) === 'OUTSIDE_CWD' ? `Refused: ${message} (outside the working directory).` : message;
}

/**
 * Run a tool body: an aborted signal refuses before any work, a
 * {@link ToolRefusal} becomes its error result, and a natives or system
 * error becomes the tool code of its `code` ({@link toolCodeOf}) instead of
 * a rejection.
 */
export async function guard(ctx: ToolContext, body: () => Promise<ToolResult>): Promise<ToolResult> {
  if (ctx.signal?.aborted) return toolError('ABORTED', 'The call was aborted before it started.');
  try {
    return await body();
  } catch (error) {
    if (error instanceof ToolRefusal) return toolError(error.code, error.message, error.details);
    return toolError(toolCodeOf(error), toolMessageOf(error));
  }
}

/**
 * Refuse model-supplied text holding a lone surrogate: in file text those
 * stand for bytes that are not UTF-8 (see text.ts), and only the file may
 * put them there.
 */
export function refuseLoneSurrogate(text: string, what: string): void {
  const at = findLoneSurrogate(text);
  if (at !== -1) {
    const line = text.slice(0, at).split('\n').length;
    throw new ToolRefusal('INVALID_ARGS', `${what} holds a lone UTF-16 surrogate (line ${line}); text must be valid Unicode.`);
  }
}

/** `abs` relative to `cwd`, `/`-separated, when it lies inside it (`''` for `cwd` itself); else `undefined`. */
export function relativeInside(cwd: string, abs: string): string | undefined {
  return pathInside(resolvePath(cwd, '.'), abs);
}

/**
 * `abs` as the model should see it: relative to `cwd` when inside it (`.`
 * for `cwd`), else absolute; with a trailing `/` for a `directory`;
 * C-quoted when a name in it is not UTF-8 (names.ts), so the model can give
 * it back.
 */
export function displayPath(ctx: ToolContext, abs: string, directory = false): string {
  const rel = relativeInside(ctx.cwd, abs);
  const shown = rel === undefined ? abs : rel === '' ? '.' : rel;
  return shownPath(directory && !shown.endsWith('/') ? `${shown}/` : shown);
}

/**
 * A path argument as natives takes it: refused when it holds a lone
 * surrogate (`INVALID_ARGS`), unquoted when the model gave it C-quoted as
 * {@link displayPath} shows names that are not UTF-8.
 */
export function pathArgument(path: string, what = '`path`'): string {
  refuseLoneSurrogate(path, what);
  try {
    return givenPath(path);
  } catch (error) {
    if (error instanceof RangeError) throw new ToolRefusal('INVALID_ARGS', `${what}: ${error.message}.`);
    throw error;
  }
}
