/**
 * `fuzzyFind`: rank files and directories against a short query, typed and
 * defaulted over the addon.
 */
import { native, type FuzzyTier } from './native.ts';
import { linkSignal } from './cancel.ts';
import { callNative, codedError, throwIfAborted } from './errors.ts';
import type { FileType, UnreadablePath } from './glob.ts';
import { anchored } from './paths.ts';
import { handOverScanCachePolicy } from './policy.ts';

const { nativeFuzzyFind } = native;

/** Options for {@link fuzzyFind}. */
export interface FuzzyFindOptions {
  /**
   * What to look for. A leading `@` (mention syntax) is dropped; words
   * separated by spaces must all match; an all-lowercase word ignores case.
   * The empty query lists entries shallowest first.
   */
  query: string;
  /** Directory to search; relative paths resolve against `process.cwd()`. Default: `process.cwd()`. */
  path?: string;
  /** Include dot-files and dot-directories. Default: `false` (as `glob` and `grep`). */
  hidden?: boolean;
  /** Honour `.gitignore` (inside git repositories) and `.ignore`. Default: `true`. */
  gitignore?: boolean;
  /** Include `node_modules`. Default: only when the query mentions `node_modules`. */
  includeNodeModules?: boolean;
  /** Return at most this many matches. Default: 100. */
  maxResults?: number;
  /** Serve from / fill the shared scan cache. Default: `false`. */
  cache?: boolean;
  /** Stay beneath `path`, given as a real path, as `glob`'s `confine` does. Default: `false`. */
  confine?: boolean;
  /** Reject with `ETIMEDOUT` after this many milliseconds. */
  timeoutMs?: number;
  /** Reject with `ABORT_ERR` when aborted. */
  signal?: AbortSignal;
}

export type { FuzzyTier };

/** One match. */
export interface FuzzyMatch {
  /** Relative, `/`-separated; directories end with `/`; every byte of a name kept, as in `GlobMatch`. */
  path: string;
  fileType: FileType;
  /**
   * Higher ranks first. Tiers never overlap: an exact name beats a name
   * prefix beats a name substring beats a path substring beats scattered letters.
   */
  score: number;
  /** Why it matched: the name is the query, starts with it, contains it; the path contains it; the letters appear in order within the name, or across the path. */
  tier: FuzzyTier;
  /** Matched character positions in `path` (code points), ascending, for highlighting. */
  indices: number[];
}

/** The answer of {@link fuzzyFind}. */
export interface FuzzyFindResult {
  /** Best first; ties go to the shallower path, then path order. */
  matches: FuzzyMatch[];
  /** Matches before `maxResults` was applied. */
  totalMatches: number;
  /** What the walk could not enter or read, in path order (none inside a `node_modules` the search leaves out). */
  unreadable: UnreadablePath[];
}

/**
 * Find files and directories whose path matches `query` best. Rejects with
 * an `Error` whose `code` is `ENOENT`/`ENOTDIR`/`EACCES` (bad `path`),
 * `EINVAL` (bad option), `ABORT_ERR` or `ETIMEDOUT`.
 */
export async function fuzzyFind(options: FuzzyFindOptions): Promise<FuzzyFindResult> {
  if (typeof options !== 'object' || options === null) {
    throw codedError('EINVAL', 'fuzzyFind: options must be an object', { option: 'options', value: options });
  }
  if (typeof options.query !== 'string') throw codedError('EINVAL', 'fuzzyFind: query must be a string', { option: 'query', value: options.query });
  throwIfAborted(options.signal, 'fuzzyFind');
  handOverScanCachePolicy();
  const { signal, path, ...rest } = options;
  using link = linkSignal(signal, false);
  const raw = await callNative('fuzzyFind', () => nativeFuzzyFind({ ...rest, path: anchored(path ?? process.cwd()) }, link.token), { signal });
  return raw as FuzzyFindResult;
}
