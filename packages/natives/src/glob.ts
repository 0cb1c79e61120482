/**
 * `glob` and the scan-cache controls, typed and defaulted over the addon.
 *
 * Matches cross the boundary as columns and are turned into `GlobMatch`
 * objects here; `onMatch` receives them in batches streamed by the native
 * side as they are decided, and the promise settles only after the last one.
 */
import { native, type FileType as NativeFileType, type FsScanCacheStats, type GlobColumns } from './native.ts';
import { linkSignal } from './cancel.ts';
import { callNative, codedError, throwIfAborted } from './errors.ts';
import { anchored } from './paths.ts';
import { handOverScanCachePolicy } from './policy.ts';
import { BatchStream } from './stream.ts';

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
   * Glob pattern, case-sensitive; `*` does not cross `/`. `\` is read as `/`,
   * an unclosed `{` is closed, and (with `recursive`) a pattern without `/`
   * matches at any depth: `*.ts` means `**\/*.ts`.
   */
  pattern: string;
  /** Directory to search; relative paths resolve against `process.cwd()`. Default: `process.cwd()`. */
  path?: string;
  /** Only entries of this type. Default: any. */
  fileType?: FileType;
  /** Match a `/`-free pattern at any depth. Default: `true`. */
  recursive?: boolean;
  /** Include dot-files and dot-directories. Default: `false`. */
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

/**
 * Find files and directories under `path` matching `pattern`.
 *
 * `onMatch` is called once per returned match, in result order, as matches
 * are decided; the promise resolves after the last call. Rejects with an
 * `Error` whose `code` is `ENOENT`/`ENOTDIR`/`EACCES` (bad `path`), `EINVAL`
 * (bad pattern or option; the message names it), `ABORT_ERR` or `ETIMEDOUT`.
 */
export async function glob(options: GlobOptions, onMatch?: (match: GlobMatch) => void): Promise<GlobResult> {
  if (typeof options !== 'object' || options === null) throw codedError('EINVAL', 'glob: options must be an object');
  if (typeof options.pattern !== 'string') throw codedError('EINVAL', 'glob: pattern must be a string');
  throwIfAborted(options.signal, 'glob');
  handOverScanCachePolicy();
  const { signal, path, ...rest } = options;
  using link = linkSignal(signal, onMatch !== undefined);
  const stream = onMatch ? new BatchStream(decode, onMatch, () => link.token?.cancel()) : undefined;
  const run = async (): Promise<GlobResult> => {
    const raw = await nativeGlob(
      { ...rest, path: anchored(path ?? process.cwd()) },
      link.token,
      stream ? (batch: GlobColumns) => stream.receive(batch) : undefined,
    );
    const matches = stream ? await stream.settle(raw.batches) : decode(raw.matches);
    return { matches, totalMatches: raw.totalMatches, limitReached: raw.limitReached, unreadable: raw.unreadable };
  };
  return await callNative('glob', run, { signal, stream });
}

/**
 * Drop cached scans after a filesystem mutation: with a path (relative to
 * `process.cwd()`; it may no longer exist), every cached scan whose root
 * contains it or lies inside it; without one, all of them.
 */
export function invalidateFsScanCache(path?: string): void {
  if (path !== undefined && typeof path !== 'string') {
    throw codedError('EINVAL', 'invalidateFsScanCache: path must be a string');
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
