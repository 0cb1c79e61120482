/**
 * `grep`, the in-memory `search` and `hasMatch`: ripgrep's matching over the
 * scan cache, typed and defaulted over the addon.
 */
import { native, type GrepColumns, type GrepMode, type NativeGrepOptions, type NativeGrepResult } from './native.ts';
import { linkSignal } from './cancel.ts';
import { callNative, codedError, throwIfAborted } from './errors.ts';
import { anchored } from './paths.ts';
import { handOverScanCachePolicy } from './policy.ts';
import { BatchStream, PULL_WINDOW_BATCHES, PullStream } from './stream.ts';
import type { UnreadablePath } from './glob.ts';

const { nativeGrep, nativeGrepAtOnce, nativeHasMatch, nativeSearch } = native;

export type { GrepMode };

/** Options shared by {@link grep} and {@link search}: how to match and what to return. */
export interface MatchOptions {
  /** Regular expression (ripgrep syntax); `{`/`}` that cannot be a repetition are literal (`${x}`). */
  pattern: string;
  /** Case-insensitive. Default: `false`. */
  ignoreCase?: boolean;
  /** Case-insensitive unless the pattern has an uppercase letter (rg `-S`). Default: `false`. */
  smartCase?: boolean;
  /** `pattern` is literal text (rg `-F`). Default: `false`. */
  literal?: boolean;
  /** Matches may span lines (rg `-U`). Default: `false`. */
  multiline?: boolean;
  /** Only matches surrounded by word boundaries (rg `-w`). Default: `false`. */
  wordRegexp?: boolean;
  /**
   * Return the lines that do not match (rg `-v`): context lines are then the matching ones, and the
   * counts count the returned lines. Default: `false`.
   */
  invertMatch?: boolean;
  /**
   * One result per match (rg `-o`): `line` is the matched text, on the line where the match starts;
   * `totalMatches` and `count` mode count matches (as `rg -c -o`). Lines returned by `invertMatch` hold
   * no match and come whole. Default: `false`.
   */
  onlyMatching?: boolean;
  /** Lines of context before and after each match. Default: 0. */
  context?: number;
  /** Lines of context before each match (overrides `context`). */
  contextBefore?: number;
  /** Lines of context after each match (overrides `context`). */
  contextAfter?: number;
  /** Return at most this many results (`totalMatches` still counts them all). Default: no limit. */
  maxCount?: number;
  /** Skip this many results first, in result order. Default: 0. */
  offset?: number;
  /** Cut lines (on a character boundary) at this many characters and mark them `truncated`. */
  maxColumns?: number;
  /** `content` (a result per matching line), `count` (per file) or `filesWithMatches`. Default: `content`. */
  mode?: GrepMode;
}

/** Options for {@link grep}. */
export interface GrepOptions extends MatchOptions {
  /** A directory (searched recursively) or one file; relative to `process.cwd()`. Default: `process.cwd()`. */
  path?: string;
  /**
   * Only files these globs select, as `rg -g` (`*.ts`, `src/**`, `!*.min.js`); several are one set, as
   * repeated `-g`: any glob without `!` selects, a later `!` glob excludes.
   */
  glob?: string | string[];
  /** Only files of these types (any of them), from ripgrep's list (`rust`, `ts`, `py`, ...); unknown names are `EINVAL`. */
  type?: string | string[];
  /** Never files of these types, as `rg -T`. */
  typeNot?: string | string[];
  /** Search dot-files and dot-directories (`.git` is never entered). Default: `false`, as `rg` (and `glob`, `fuzzyFind`). */
  hidden?: boolean;
  /** Honour `.gitignore` (inside git repositories) and `.ignore`. Default: `true`. */
  gitignore?: boolean;
  /** Search `node_modules`. Default: only when `glob` mentions `node_modules`. */
  includeNodeModules?: boolean;
  /**
   * Take the file list from the shared scan cache (the gitignore-honouring partition). `'watched'`: only while
   * the cached list follows filesystem events without fallback (then it is current to the call and its content
   * index is trusted by events), else search while walking fresh, as with `false`. Default: `false`.
   */
  cache?: boolean | 'watched';
  /**
   * Stay beneath `path`, given as a real path (see {@link realPath}; one with a symlink on the way
   * is `EXDEV`): every file searched and every path named is reached from a handle on it without
   * following a link, at the moment it is opened, so a directory inside swapped for a link to
   * outside while the search runs leads nowhere (the link is named in `unreadable`, `ELOOP`).
   * Default: `false`.
   */
  confine?: boolean;
  /** Skip (and count in `filesSkippedTooLarge`) files above this many bytes. Default: search every file whole. */
  maxFileSize?: number;
  /**
   * Keep the results in `matches` as well as passing them to `onMatch`. Set it to `false` when
   * `onMatch` consumes them, so a search with millions of results holds none (`matches` is then
   * empty; the counts are unchanged). Default: `true`.
   */
  retainMatches?: boolean;
  /** Reject with `ETIMEDOUT` after this many milliseconds (checked inside files too). */
  timeoutMs?: number;
  /** Reject with `ABORT_ERR` when aborted, before or during the search. */
  signal?: AbortSignal;
}

/** A line of context. */
export interface ContextLine {
  lineNumber: number;
  line: string;
}

/** One result. */
export interface GrepMatch {
  /** Relative to the search root, `/`-separated (for a single-file search, its name); every byte of a name kept, as in `GlobMatch`. */
  path: string;
  /** 1-based line of the match; 0 in `count` and `filesWithMatches` modes. */
  lineNumber: number;
  /** The matching line without its `\n` (a CRLF file's `\r` is kept, as rg reports it); with `onlyMatching`, the match. */
  line: string;
  contextBefore?: ContextLine[];
  contextAfter?: ContextLine[];
  /** `true` when `maxColumns` cut the line or its context. */
  truncated?: boolean;
  /** `count` mode: the file's matching lines. */
  matchCount?: number;
}

/** The answer of {@link grep} and {@link search}. */
export interface GrepResult {
  /** In path order, then line order. */
  matches: GrepMatch[];
  /** Results before `offset`/`maxCount`. */
  totalMatches: number;
  filesWithMatches: number;
  filesSearched: number;
  /** Files skipped as binary (a NUL byte), as ripgrep skips them. */
  binaryFilesSkipped: number;
  /** Files skipped for being larger than `maxFileSize`. */
  filesSkippedTooLarge: number;
  /** Files that vanished or became unreadable between listing and searching. */
  filesUnreadable: number;
  /**
   * What the search could not enter or read, in path order: directories the walk could not list and
   * the files counted in `filesUnreadable`, each with why (once `limitReached` stops a search, those
   * met before it stopped).
   */
  unreadable: UnreadablePath[];
  /** `true` when `maxCount` cut results off. */
  limitReached: boolean;
  /** `path` named one file (result paths are its name) rather than a directory; `false` for {@link search}. */
  pathIsFile: boolean;
  /**
   * Where the file list came from: `walked` (a walk made for this search), `cached` (a cached list younger than
   * the TTL) or `watched` (a cached list that follows filesystem events, its content index trusted by events).
   */
  source: ListSource;
}

/** See {@link GrepResult.source}. */
export type ListSource = 'walked' | 'cached' | 'watched';

/**
 * Search file contents with ripgrep's rules. `onMatch` is called once per
 * returned result, in result order, as results are decided; the promise
 * resolves after the last call. Rejects with an `Error` whose `code` is
 * `ENOENT`/`ENOTDIR`/`EACCES` (bad `path`), `EINVAL` (bad regex, type or
 * option; the message names it), `ABORT_ERR` or `ETIMEDOUT`.
 */
export async function grep(options: GrepOptions, onMatch?: (match: GrepMatch) => void): Promise<GrepResult> {
  checkShape(options, 'grep');
  throwIfAborted(options.signal, 'grep');
  handOverScanCachePolicy();
  const now = onMatch ? null : answeredAtOnce(options);
  if (now) return toResult(now, toMatches(now.matches));
  using link = linkSignal(options.signal, onMatch !== undefined);
  const stream = onMatch ? new BatchStream(toMatches, onMatch, () => link.token?.cancel(), options.retainMatches ?? true) : undefined;
  // Without a stream, the answer's text chunks cross as they fill, so their strings are made while the search goes on.
  const texts = stream ? undefined : new BatchStream((group: string[]) => group, () => {}, () => {});
  const run = async (): Promise<GrepResult> => {
    const raw = await nativeGrep(
      nativeOptions(options),
      link.token,
      stream ? (batch: GrepColumns) => stream.receive(batch) : undefined,
      undefined,
      texts ? (group: string[]) => texts.receive(group) : undefined,
    );
    if (texts && raw.textBatches > 0) raw.matches.text = [...(await texts.settle(raw.textBatches)), ...raw.matches.text];
    return toResult(raw, stream ? await stream.settle(raw.batches) : toMatches(raw.matches));
  };
  return await callNative('grep', run, { signal: options.signal, stream });
}

/**
 * The answer when the addon can give it on this thread at once (a first page from a watched cache;
 * the addon decides), else `null`: then `nativeGrep` searches, and reports any bad option.
 */
function answeredAtOnce(options: GrepOptions): NativeGrepResult | null {
  try {
    return nativeGrepAtOnce(nativeOptions(options));
  } catch {
    return null;
  }
}

/** What a pulled grep's `result` settles with: the answer without its matches, which the loop took. */
export type GrepSummary = Omit<GrepResult, 'matches'>;

/** A grep read with `for await`; see {@link grepIter}. */
export type GrepStream = PullStream<GrepColumns, GrepMatch, GrepSummary>;

/**
 * {@link grep}'s results as an async iterable, for `for await (const m of grepIter({ pattern }))`:
 * the same options and order, with backpressure (the search waits while
 * {@link PULL_WINDOW_BATCHES} batches wait for the loop; results are never also kept, whatever
 * `retainMatches` says) and `break` cancelling the search. `result` settles with the counts and
 * `unreadable` once the search has ended. A failure (`EINVAL`, `ENOENT`, `ABORT_ERR`, ...) rejects
 * the loop's next step.
 */
export function grepIter(options: GrepOptions): GrepStream {
  const token = new native.CancelToken();
  const pacer = new native.StreamPacer(PULL_WINDOW_BATCHES);
  return new PullStream(toMatches, pacer, () => token.cancel(), async (receive) => {
    checkShape(options, 'grep');
    throwIfAborted(options.signal, 'grep');
    handOverScanCachePolicy();
    using link = linkSignal(options.signal, true, token);
    const run = () => nativeGrep({ ...nativeOptions(options), retainMatches: false }, link.token, receive, pacer);
    const raw = await callNative('grep', run, { signal: options.signal });
    const { matches: _none, ...summary } = toResult(raw, []);
    return { summary, batches: raw.batches };
  });
}

/** The options as the addon takes them: `cache` split into its two switches, `path` anchored. */
function nativeOptions(options: GrepOptions): NativeGrepOptions {
  const { signal: _signal, path, cache, ...rest } = options;
  return { ...rest, cache: cache !== undefined && cache !== false, watchedOnly: cache === 'watched', path: anchored(path ?? process.cwd()) };
}

/** Search `content` in memory as one file, synchronously. Throws `EINVAL` for a bad regex or option. */
export function search(content: string | Uint8Array, options: MatchOptions): GrepResult {
  checkShape(options, 'search');
  return callNative('search', () => {
    const raw = nativeSearch(asNativeContent(content), options as NativeGrepOptions);
    return toResult(raw, toMatches(raw.matches));
  });
}

/** Whether `content` has a match of the regex `pattern`. Throws `EINVAL` for a bad regex. */
export function hasMatch(
  content: string | Uint8Array,
  pattern: string,
  options: { ignoreCase?: boolean; multiline?: boolean } = {},
): boolean {
  if (typeof pattern !== 'string') throw codedError('EINVAL', 'hasMatch: pattern must be a string', { option: 'pattern', value: pattern });
  return callNative('hasMatch', () => nativeHasMatch(asNativeContent(content), pattern, options));
}

function checkShape(options: MatchOptions, operation: string): void {
  if (typeof options !== 'object' || options === null) {
    throw codedError('EINVAL', `${operation}: options must be an object`, { option: 'options', value: options });
  }
  if (typeof options.pattern !== 'string') {
    throw codedError('EINVAL', `${operation}: pattern must be a string`, { option: 'pattern', value: options.pattern });
  }
}

/** The addon takes a string or a Node `Buffer`; a plain `Uint8Array` is viewed as one, not copied. */
function asNativeContent(content: string | Uint8Array): string | Buffer {
  if (typeof content === 'string' || Buffer.isBuffer(content)) return content;
  if (content instanceof Uint8Array) return Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  throw codedError('EINVAL', 'content must be a string or a Uint8Array', { option: 'content' });
}

/**
 * Turn native columns into result objects: each result's text pieces are its context before, its line, its context after.
 * Throws the `EFBIG` error the addon put in place of a text chunk the engine could not make a string of.
 */
function toMatches(columns: GrepColumns): GrepMatch[] {
  const refused: unknown = columns.text.find((chunk: unknown) => typeof chunk !== 'string');
  if (refused !== undefined) throw refused;
  const paths = columns.paths.flatMap((chunk) => chunk.split('\0'));
  const lines = textPieces(columns);
  const { pathIndices, lineNumbers, contextBefore, contextAfter, contextLineNumbers, truncated, matchCounts } = columns;
  const matches = new Array<GrepMatch>(lineNumbers.length);
  let contextIndex = 0;
  const context = (count: number): ContextLine[] => {
    const found = new Array<ContextLine>(count);
    for (let k = 0; k < count; k++) found[k] = { lineNumber: contextLineNumbers[contextIndex++], line: lines.next() };
    return found;
  };
  for (let i = 0; i < matches.length; i++) {
    const before = contextBefore[i] > 0 ? context(contextBefore[i]) : undefined;
    const match: GrepMatch = { path: paths[pathIndices[i]], lineNumber: lineNumbers[i], line: lines.next() };
    if (before) match.contextBefore = before;
    if (contextAfter[i] > 0) match.contextAfter = context(contextAfter[i]);
    if (truncated[i]) match.truncated = true;
    if (matchCounts[i] > 0) match.matchCount = matchCounts[i];
    matches[i] = match;
  }
  return matches;
}

/** The pieces of `columns.text`, in order, one per `next()`. */
function textPieces(columns: GrepColumns): { next(): string } {
  const { text, textPieces: perChunk, textLengths } = columns;
  let chunk = 0;
  let left = perChunk[0] ?? 0;
  let at = 0;
  let piece = 0;
  return {
    next(): string {
      while (left === 0) {
        chunk++;
        left = perChunk[chunk];
        at = 0;
      }
      left--;
      // A piece alone in its chunk is the chunk (its length is not counted).
      const end = perChunk[chunk] === 1 ? text[chunk].length : at + textLengths[piece];
      piece++;
      const line = text[chunk].slice(at, end);
      at = end;
      return line;
    },
  };
}

function toResult(raw: NativeGrepResult, matches: GrepMatch[]): GrepResult {
  const { batches: _batches, textBatches: _textBatches, matches: _raw, source, ...counts } = raw;
  return { ...counts, source: source as ListSource, matches };
}
