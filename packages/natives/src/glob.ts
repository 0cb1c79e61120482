/**
 * `glob` and the scan-cache controls, typed and defaulted over the addon.
 *
 * Matches cross the boundary as columns and are turned into `GlobMatch`
 * objects here; `onMatch` receives them in batches streamed by the native
 * side as they are decided, and the promise settles only after the last one.
 */
import {
  native,
  type FileType as NativeFileType,
  type FsScanCacheStats,
  type GlobColumns,
  type NativeGlobOptions,
  type NativeGlobResult,
} from './native.ts';
import { linkSignal } from './cancel.ts';
import { callNative, codedError, throwIfAborted } from './errors.ts';
import { anchored } from './paths.ts';
import { handOverScanCachePolicy } from './policy.ts';
import { BatchStream, PULL_WINDOW_BATCHES, PullStream } from './stream.ts';

const {
  fsScanCacheStats: nativeStats,
  invalidateFsScanCache: nativeInvalidate,
  nativeGlob,
  watchFsScanCache: nativeWatch,
} = native;

/** What a filesystem entry is (from `lstat`: links are never followed). */
export const FileType = native.FileType;
export type FileType = NativeFileType;
export type { FsScanCacheStats };

// A TypeScript enum also maps each value back to its name (`FileType[2] === 'Dir'`); the addon's
// enum object maps names to values only, so the reverse half is added here, once.
const namesByValue = FileType as unknown as Record<number, string>;
for (const [name, value] of Object.entries(FileType) as [string, number][]) namesByValue[value] = name;

/** Options for {@link glob}. */
export interface GlobOptions {
  /**
   * Glob pattern, or several (an entry matching any is returned), case-sensitive; `*` does not
   * cross `/`. `\` is read as `/`, an unclosed `{` is closed, and (with `recursive`) a pattern
   * without `/` matches at any depth: `*.ts` means `**\/*.ts`. A pattern starting with `!` is an
   * {@link GlobOptions.ignore} pattern, as in fast-glob and tinyglobby.
   */
  pattern: string | readonly string[];
  /**
   * Leave out entries these patterns match, and everything below a directory one matches
   * (`dist`, `**\/*.d.ts`); the rules of `pattern`. Default: none.
   */
  ignore?: string | readonly string[];
  /** Directory to search; relative paths resolve against `process.cwd()`. Default: `process.cwd()`. */
  path?: string;
  /** Only entries of this type. Default: any. */
  fileType?: FileType;
  /** Match a `/`-free pattern at any depth. Default: `true`. */
  recursive?: boolean;
  /** Include dot-files and dot-directories. Default: `false`, as `fd` (and `grep`, `fuzzyFind`). */
  hidden?: boolean;
  /** Honour `.gitignore` (inside git repositories), `.git/info/exclude`, global excludes and `.ignore`. Default: `true`. */
  gitignore?: boolean;
  /** Include `node_modules`. Default: only when the pattern mentions `node_modules`. */
  includeNodeModules?: boolean;
  /** Return at most this many matches (`totalMatches` still counts all). Default: no limit. */
  maxResults?: number;
  /** Newest first, ties in path order. Default: `false` (path order). */
  sortByMtime?: boolean;
  /**
   * Return each match's `mtime`. With `false` matches carry none, and a walk without the cache reads
   * types from the directory listings alone: it stats nothing (unless `sortByMtime`). Default: `true`.
   */
  mtime?: boolean;
  /** Serve from / fill the shared scan cache. Default: `false` (walk fresh, cache untouched). */
  cache?: boolean;
  /**
   * Stay beneath `path`, given as a real path (one with a symlink on the way is `EXDEV`): a match
   * is listed only when it is reached from a handle on it without following a link, so a directory
   * inside swapped for a link to outside while the walk runs lists nothing from there (the link is
   * named in `unreadable`, `ELOOP`). Default: `false`.
   */
  confine?: boolean;
  /** Reject with `ETIMEDOUT` after this many milliseconds. Default: none. */
  timeoutMs?: number;
  /** Reject with `ABORT_ERR` when aborted (before or during the walk). */
  signal?: AbortSignal;
}

/** One match. */
export interface GlobMatch {
  /**
   * Path relative to the search root, `/`-separated. Every byte of a name is kept: one that is not
   * UTF-8 holds each stray byte as the lone surrogate U+DC00 + byte, which every call taking a path
   * takes back to the same bytes.
   */
  path: string;
  /** What the entry is. */
  fileType: FileType;
  /** Modification time in ms since the epoch, when known. */
  mtime?: number;
}

/**
 * A path a search could not enter or read, and why: a directory the walk could not list (no
 * permission, a path longer than the system allows) or a file grep could not open. `rg` names each
 * one and exits 2; an answer here lists them, so a partial answer never passes for a whole one.
 */
export interface UnreadablePath {
  /** Relative to the search root, `/`-separated (empty: the root itself), every byte kept as in {@link GlobMatch}. */
  path: string;
  /** The errno-style code: `EACCES`, `ENAMETOOLONG`, ... */
  code: string;
  /** What the system said: `Permission denied (os error 13)`. */
  message: string;
}

/** The answer of {@link glob}. */
export interface GlobResult {
  /** Matches in path order (or newest first with `sortByMtime`). */
  matches: GlobMatch[];
  /** Matches before `maxResults` was applied. */
  totalMatches: number;
  /** `true` when `maxResults` cut matches off. */
  limitReached: boolean;
  /** What the walk could not enter or read, in path order (none inside a `node_modules` the glob leaves out). */
  unreadable: UnreadablePath[];
}

/** What {@link glob} is called back with, once per returned match. */
export type OnGlobMatch = (match: GlobMatch) => void;

/**
 * Find files and directories under `path` matching `pattern`: `glob({ pattern, ...options })`, or
 * as fast-glob and tinyglobby take it, `glob(pattern, options)`.
 *
 * `onMatch` is called once per returned match, in result order, as matches
 * are decided; the promise resolves after the last call. Rejects with an
 * `Error` whose `code` is `ENOENT`/`ENOTDIR`/`EACCES` (bad `path`), `EINVAL`
 * (bad pattern or option; `error.option` and `error.value` name it), `ABORT_ERR` or `ETIMEDOUT`.
 */
export async function glob(options: GlobOptions, onMatch?: OnGlobMatch): Promise<GlobResult>;
export async function glob(pattern: string | readonly string[], options?: Omit<GlobOptions, 'pattern'>, onMatch?: OnGlobMatch): Promise<GlobResult>;
export async function glob(
  first: GlobOptions | string | readonly string[],
  second?: Omit<GlobOptions, 'pattern'> | OnGlobMatch,
  third?: OnGlobMatch,
): Promise<GlobResult> {
  const { options, onMatch } = globArguments(first, second, third);
  throwIfAborted(options.signal, 'glob');
  handOverScanCachePolicy();
  using link = linkSignal(options.signal, onMatch !== undefined);
  const stream = onMatch ? new BatchStream(decode, onMatch, () => link.token?.cancel()) : undefined;
  const run = async (): Promise<GlobResult> => {
    const raw = await nativeGlob(nativeOptions(options), link.token, stream ? (batch: GlobColumns) => stream.receive(batch) : undefined);
    const matches = stream ? await stream.settle(raw.batches) : decode(raw.matches);
    return { matches, ...summary(raw) };
  };
  return await callNative('glob', run, { signal: options.signal, stream });
}

/** What a pulled glob's `result` settles with: the answer without its matches, which the loop took. */
export type GlobSummary = Omit<GlobResult, 'matches'>;

/** A glob read with `for await`; see {@link globIter}. */
export type GlobStream = PullStream<GlobColumns, GlobMatch, GlobSummary>;

/**
 * {@link glob}'s matches as an async iterable, for `for await (const match of globIter('**\/*.ts'))`:
 * the same options and order, with backpressure (the walk waits while
 * {@link PULL_WINDOW_BATCHES} batches wait for the loop) and `break` cancelling the walk.
 * `result` settles with the counts and `unreadable` once the walk has ended. A failure
 * (`EINVAL`, `ENOENT`, `ABORT_ERR`, ...) rejects the loop's next step.
 */
export function globIter(options: GlobOptions): GlobStream;
export function globIter(pattern: string | readonly string[], options?: Omit<GlobOptions, 'pattern'>): GlobStream;
export function globIter(first: GlobOptions | string | readonly string[], second?: Omit<GlobOptions, 'pattern'>): GlobStream {
  const token = new native.CancelToken();
  const pacer = new native.StreamPacer(PULL_WINDOW_BATCHES);
  return new PullStream(decode, pacer, () => token.cancel(), async (receive) => {
    const { options } = globArguments(first, second);
    throwIfAborted(options.signal, 'glob');
    handOverScanCachePolicy();
    using link = linkSignal(options.signal, true, token);
    const run = () => nativeGlob(nativeOptions(options), link.token, receive, pacer);
    const raw = await callNative('glob', run, { signal: options.signal });
    return { summary: summary(raw), batches: raw.batches };
  });
}

/** The options as the addon takes them: patterns as lists, `path` anchored. */
function nativeOptions(options: GlobOptions): NativeGlobOptions {
  const { signal: _signal, path, pattern, ignore, ...rest } = options;
  return { ...rest, pattern: listOf(pattern), ignore: ignore === undefined ? undefined : listOf(ignore), path: anchored(path ?? process.cwd()) };
}

function summary(raw: NativeGlobResult): GlobSummary {
  return { totalMatches: raw.totalMatches, limitReached: raw.limitReached, unreadable: raw.unreadable };
}

/** `glob`'s two call shapes as one, checked: `EINVAL` naming the option (`options`, `pattern`, `ignore`) that is not what it must be. */
export function globArguments(
  first: GlobOptions | string | readonly string[],
  second?: Omit<GlobOptions, 'pattern'> | OnGlobMatch,
  third?: OnGlobMatch,
): { options: GlobOptions; onMatch?: OnGlobMatch } {
  const positional = typeof first === 'string' || Array.isArray(first);
  const options = positional ? { ...(typeof second === 'object' ? second : {}), pattern: first as string | string[] } : (first as GlobOptions);
  const onMatch = positional ? (typeof second === 'function' ? second : third) : (second as OnGlobMatch | undefined);
  if (typeof options !== 'object' || options === null) {
    throw codedError('EINVAL', 'glob: options must be an object', { option: 'options', value: options });
  }
  checkPatterns('pattern', options.pattern);
  if (options.ignore !== undefined) checkPatterns('ignore', options.ignore);
  return { options, onMatch };
}

/** `EINVAL` naming `option` unless `value` is a string or an array of strings. */
function checkPatterns(option: 'pattern' | 'ignore', value: unknown): void {
  if (typeof value === 'string') return;
  if (Array.isArray(value) && value.every((p) => typeof p === 'string')) return;
  throw codedError('EINVAL', `glob: ${option} must be a string or an array of strings`, { option, value });
}

/** One pattern or a list of them, as the list the addon takes. */
function listOf(patterns: string | readonly string[]): string[] {
  return typeof patterns === 'string' ? [patterns] : [...patterns];
}

/**
 * Drop cached scans after a filesystem mutation: with a path (relative to
 * `process.cwd()`; it may no longer exist), every cached scan whose root
 * contains it or lies inside it; without one, all of them.
 */
export function invalidateFsScanCache(path?: string): void {
  if (path !== undefined && typeof path !== 'string') {
    throw codedError('EINVAL', 'invalidateFsScanCache: path must be a string', { option: 'path', value: path });
  }
  handOverScanCachePolicy();
  callNative('invalidateFsScanCache', () => nativeInvalidate(path === undefined ? undefined : anchored(path)));
}

/**
 * Keep the scans the cache stores from now on exact by following filesystem
 * events, as `FS_SCAN_CACHE_WATCH=1` does from the start: a cached answer then
 * includes every change the kernel reported before the call, whoever made it,
 * and the TTL only applies to roots that could not be watched (see
 * `fsScanCacheStats().watch`). Throws `EIO` when the system gives no watcher.
 */
export function watchFsScanCache(): void {
  handOverScanCachePolicy();
  callNative('watchFsScanCache', nativeWatch);
}

/** The scan cache's size: cached scans, entries, bytes, bytes per entry, walks run. */
export function fsScanCacheStats(): FsScanCacheStats {
  handOverScanCachePolicy();
  return callNative('fsScanCacheStats', nativeStats);
}

/** Turn native columns into match objects. */
function decode(columns: GlobColumns): GlobMatch[] {
  const { fileTypes, mtimes } = columns;
  const matches = new Array<GlobMatch>(fileTypes.length);
  let i = 0;
  for (const chunk of columns.paths) {
    for (const path of chunk.split('\0')) {
      const mtime = mtimes[i];
      matches[i] = { path, fileType: fileTypes[i], mtime: Number.isNaN(mtime) ? undefined : mtime };
      i++;
    }
  }
  return matches;
}
