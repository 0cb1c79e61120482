/**
 * The error model of the TypeScript layer: every failure is an `Error` with
 * a stable `code`. Native errors already carry one; this module adds the few
 * raised before native code runs (a pre-aborted signal, options of the wrong
 * type) and maps napi's argument-conversion failures onto `EINVAL`.
 */

import { ERROR_CODES, type ErrorCode } from './error-codes.ts';

/**
 * The codes the library rejects with are {@link ERROR_CODES}, generated from the Rust library's
 * one table of error kinds (a Rust test fails when the two differ). Where the TypeScript layer
 * adds to them: `ENOTSUP` also at import, when no native binary loads on the platform (and for a
 * record written by a newer natives, left as it is); `EPERM` from `releaseClaim` for another OS
 * user's claim; `EBADMSG` for checkout evidence failing its check; `ENAMETOOLONG` for a path, or
 * the real location it reaches, past 4096 bytes; `EILSEQ` gives the path meant, C-quoted.
 */
export { ERROR_CODES, type ErrorCode };

const LIBRARY_CODES: ReadonlySet<string> = new Set(Object.keys(ERROR_CODES));

/**
 * An `Error` carrying `code`, and what was wrong as data where the library knows it (as Node's
 * own errors carry `path`): read these fields rather than the message.
 */
export interface CodedError extends Error {
  code: ErrorCode;
  /** The path at fault: the one a filesystem call failed on (a name that is not UTF-8 escaped as results give it). */
  path?: string;
  /** The option or argument at fault, as the call spells it: `pattern`, `ignore`, `glob`, `type`, `typeNot`, `path`, `options`. */
  option?: string;
  /** The value that option was given (a list of globs joined with `` `, ` ``). */
  value?: string;
}

/** What a {@link codedError} is about, as data: the fields of {@link CodedError} it sets, and its `cause`. */
export interface ErrorDetails {
  /** The path at fault. */
  path?: string;
  /** The option or argument at fault, as the call spells it (`pattern`, `ignore`, `path`, `options`). */
  option?: string;
  /** What that option was given; kept as text, as the library's errors keep it (`42`, `null`, `["a",1]`). */
  value?: unknown;
  /** The error behind this one. */
  cause?: unknown;
}

/** Build a coded error; `details` become its `path`, `option`, `value` and `cause`, as on the library's errors. */
export function codedError(code: ErrorCode, message: string, details: ErrorDetails = {}): CodedError {
  const { cause, path, option, value } = details;
  const error = new Error(message, cause === undefined ? undefined : { cause }) as CodedError;
  error.code = code;
  if (code === 'ABORT_ERR') error.name = 'AbortError';
  if (path !== undefined) error.path = path;
  if (option !== undefined) error.option = option;
  if ('value' in details) error.value = asText(value);
  return error;
}

/** A value as an error's `value` holds it: a string as it is, anything else as JSON, else as `String` gives it. */
function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Reject before any work when `signal` is already aborted. */
export function throwIfAborted(signal: AbortSignal | undefined, operation: string): void {
  if (signal?.aborted) {
    throw codedError('ABORT_ERR', `${operation} was aborted before it started`, { cause: signal.reason });
  }
}

/** What a native call's failure is read with: the caller's signal, and the stream whose own callback may have failed. */
export interface NativeCallContext {
  /** The caller's signal: an `ABORT_ERR` gains its reason as `cause`. */
  signal?: AbortSignal;
  /** A stream whose callback threw: that error wins over the abort it caused. */
  stream?: { readonly failure: unknown };
}

/**
 * Call the addon for `operation`: whatever the call throws, or its promise rejects with, comes out
 * as the library's coded error ({@link fromNative}). Every native call goes through here.
 */
export function callNative<T>(operation: string, call: () => T, context: NativeCallContext = {}): T {
  const normalise = (error: unknown) => context.stream?.failure ?? fromNative(error, operation, context.signal);
  let result: T;
  try {
    result = call();
  } catch (error) {
    throw normalise(error);
  }
  if (!(result instanceof Promise)) return result;
  return result.catch((error: unknown) => {
    throw normalise(error);
  }) as T;
}

/**
 * Normalise an error thrown by the addon: library errors pass through (an
 * abort gains the signal's reason as `cause`); napi's own conversion errors
 * (an option of the wrong type) become `EINVAL` naming the operation.
 */
function fromNative(error: unknown, operation: string, signal?: AbortSignal): unknown {
  if (!(error instanceof Error)) return error;
  const code = (error as Partial<CodedError>).code;
  if (code !== undefined && LIBRARY_CODES.has(code)) {
    if (code === 'ABORT_ERR') {
      error.name = 'AbortError';
      if (signal?.aborted && error.cause === undefined) error.cause = signal.reason;
    }
    return error;
  }
  return codedError('EINVAL', `${operation}: invalid arguments: ${error.message}`, { cause: error });
}
