/**
 * `grep`: search file contents with the natives `grep` (ripgrep's regex
 * syntax and file rules) and answer with text a model can act on.
 *
 * - Results are `path:line:text` (context lines `path-line-text`, groups
 *   apart separated by `--`), one file after another in path order; paths are
 *   relative to `cwd`, so they can be passed to `read` as they are (a name
 *   that is not UTF-8 C-quoted, as `read` shows it and takes it: names.ts).
 * - At most `maxCount` results (default {@link DEFAULT_GREP_LIMIT}) are shown;
 *   a last line says when results were cut and which `offset` continues.
 * - The answer's text is bounded whatever `context` and the lines hold: at
 *   most {@link GREP_MAX_OUTPUT_BYTES} of result lines (whole lines), then a
 *   line saying where it was cut and which `offset` continues; `context` is
 *   at most {@link GREP_MAX_CONTEXT} lines.
 * - Binary files (a NUL byte) and files over {@link GREP_MAX_FILE_BYTES} are
 *   not searched; the text counts them. What could not be entered or read (a
 *   directory without permission, a path too long, a file that vanished
 *   mid-search) is named with why (see unreadable.ts).
 * - A pattern that is not a valid regular expression is `INVALID_PATTERN`,
 *   naming the pattern and suggesting `literal: true`. Which argument was
 *   at fault natives says itself: its `EINVAL` names the option
 *   (`error.option`: `pattern`, `glob`, `type`).
 *
 * Dot-files are searched (`SEARCH_DOT_FILES`, the choice of every tool)
 * and `.gitignore` is honoured. Freshness: with the scan cache watching the filesystem
 * (`watchFsScanCache()` or `FS_SCAN_CACHE_WATCH=1`), a search uses the cached
 * list and its content index only while natives proves them current (the
 * scan follows events without fallback, `cache: 'watched'`), and walks fresh
 * otherwise. Without watching it walks fresh unless `ctx.scanCache` asks
 * for the cache (its TTL then bounds what a change by another process may
 * miss). `details.source` says which (`watched`, `cached` or `walked`). The
 * search is not confined to `cwd` unless `ctx.confineReads` asks it: `path`
 * must then really lie inside (files.ts, `searchPath`), and nothing below it
 * is read or named through a link (natives' `confine`), however the tree
 * changes meanwhile.
 */
import { type CodedError, type GrepMatch, type GrepMode, type GrepResult, fsScanCacheStats, grep } from '@natives/natives';
import { SEARCH_DOT_FILES, readConfined, searchPath } from './files.ts';
import { resolvePath } from './names.ts';
import { missingPath } from './read.ts';
import { UnreadableDetailsSchema, unreadableDetails, unreadableNote } from './unreadable.ts';
import { type Static, Type } from '@sinclair/typebox';
import { type ToolContext, type ToolResult, defineTool, displayPath, pathArgument, toolError } from './tool.ts';

/** Results shown when `maxCount` is not given. */
export const DEFAULT_GREP_LIMIT = 100;
/** Characters of a result or context line shown. */
export const GREP_MAX_LINE_CHARS = 500;
/** Files larger than this are skipped (and counted). */
export const GREP_MAX_FILE_BYTES = 4 * 1024 * 1024;
/** Bytes of result lines an answer carries; the rest is cut, and the answer says where. */
export const GREP_MAX_OUTPUT_BYTES = 50 * 1024;
/** The most lines of context asked for on each side of a match. */
export const GREP_MAX_CONTEXT = 1000;

const GrepParameters = Type.Object(
  {
    pattern: Type.String({ minLength: 1, description: 'Regular expression (ripgrep syntax), or plain text with literal: true.' }),
    path: Type.Optional(
      Type.String({
        description: 'Directory (searched recursively) or file to search. Default: the working directory. A name that is not UTF-8 is given as tools show it: C-quoted.',
      }),
    ),
    glob: Type.Optional(Type.String({ description: 'Only files whose path matches this glob, e.g. "*.ts", "src/**", "!*.min.js".' })),
    type: Type.Optional(Type.String({ description: 'Only files of this type, e.g. "ts", "rust", "py" (ripgrep type names).' })),
    ignoreCase: Type.Optional(Type.Boolean({ description: 'Case-insensitive search. Default false.' })),
    literal: Type.Optional(Type.Boolean({ description: 'Treat pattern as plain text, not a regex. Default false.' })),
    multiline: Type.Optional(Type.Boolean({ description: 'Let matches span lines (use \\n in the pattern). Default false.' })),
    context: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: GREP_MAX_CONTEXT,
        description: `Lines of context before and after each match (content mode), at most ${GREP_MAX_CONTEXT}. Default 0.`,
      }),
    ),
    maxCount: Type.Optional(Type.Integer({ minimum: 1, description: `Maximum results to show. Default ${DEFAULT_GREP_LIMIT}.` })),
    offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Skip this many results first (to continue a cut answer). Default 0.' })),
    mode: Type.Optional(
      Type.Union([Type.Literal('content'), Type.Literal('filesWithMatches'), Type.Literal('count')], {
        description: 'content (default), filesWithMatches or count.',
      }),
    ),
  },
  { additionalProperties: false },
);

export type GrepArgs = Static<typeof GrepParameters>;

const GrepDetails = Type.Object({
  pattern: Type.String(),
  path: Type.String({ description: 'The directory or file searched, absolute.' }),
  mode: Type.Union([Type.Literal('content'), Type.Literal('filesWithMatches'), Type.Literal('count')]),
  results: Type.Integer({ description: 'Results shown.' }),
  totalMatches: Type.Integer({ description: 'Matching lines in all (count mode: summed over files).' }),
  filesWithMatches: Type.Integer(),
  filesSearched: Type.Integer(),
  binaryFilesSkipped: Type.Integer(),
  filesSkippedTooLarge: Type.Integer(),
  filesUnreadable: Type.Integer(),
  limitReached: Type.Boolean({ description: 'More results exist past the ones shown.' }),
  nextOffset: Type.Optional(Type.Integer({ description: 'The offset that continues a cut answer.' })),
  outputCut: Type.Optional(Type.Boolean({ description: 'The text was cut at its byte bound before the results ran out.' })),
  source: Type.Union([Type.Literal('walked'), Type.Literal('cached'), Type.Literal('watched')], {
    description: 'Where the list of files came from: a fresh walk, the cache within its TTL, or the cache kept current by file events.',
  }),
  ...UnreadableDetailsSchema,
});

export const grepTool = defineTool({
  name: 'grep',
  description:
    'Search file contents with a regular expression (ripgrep syntax). Returns `path:line:text` lines (paths relative to the working directory), ' +
    'or the matching files (mode "filesWithMatches") or per-file counts (mode "count"). Dot-files are searched; .gitignore is honoured. ' +
    `At most maxCount results (default ${DEFAULT_GREP_LIMIT}); when results are cut, the last line gives the offset to continue from. ` +
    'Use literal: true to search for text containing regex characters such as ( [ . *.',
  parameters: GrepParameters,
  output: GrepDetails,
  run: runGrep,
});

async function runGrep(args: GrepArgs, ctx: ToolContext): Promise<ToolResult> {
  // Empty strings count as not given.
  const abs = await searchPath(ctx, args.path && pathArgument(args.path));
  let result: GrepResult;
  try {
    result = await search(args, abs, ctx);
  } catch (error) {
    return refusal(ctx, args, abs, error);
  }
  const display = (rel: string) => displayPath(ctx, result.pathIsFile ? abs : resolvePath(abs, rel));
  const mode = args.mode ?? 'content';
  const lines = mode === 'content' ? formatContent(result.matches, display) : formatFiles(result.matches, mode, display);
  const body = capped(lines, GREP_MAX_OUTPUT_BYTES);
  const text = [
    body.text,
    ...(body.cut ? [cutNote(args, body)] : notes(args, result, displayPath(ctx, abs))),
    unreadableNote(result.unreadable, display),
  ]
    .filter((s) => s !== '')
    .join('\n');
  const cut = body.cut ? { outputCut: true, results: body.results, nextOffset: (args.offset ?? 0) + body.results } : {};
  return { text, details: { ...details(args, abs, result), ...cut, ...unreadableDetails(result.unreadable, display) } };
}

/** The natives search the arguments ask for, with the tool's limits. */
function search(args: GrepArgs, abs: string, ctx: ToolContext): Promise<GrepResult> {
  const mode = args.mode ?? 'content';
  return grep({
    pattern: args.pattern,
    path: abs,
    glob: args.glob || undefined,
    type: args.type || undefined,
    ignoreCase: args.ignoreCase ?? false,
    literal: args.literal ?? false,
    multiline: args.multiline ?? false,
    context: mode === 'content' ? (args.context ?? 0) : 0,
    maxCount: args.maxCount ?? DEFAULT_GREP_LIMIT,
    offset: args.offset ?? 0,
    mode,
    maxColumns: GREP_MAX_LINE_CHARS,
    maxFileSize: GREP_MAX_FILE_BYTES,
    hidden: SEARCH_DOT_FILES,
    cache: fsScanCacheStats().watch.enabled ? 'watched' : (ctx.scanCache ?? false),
    confine: readConfined(ctx),
    signal: ctx.signal,
  });
}

/**
 * A rejected search as a result: a missing path is `ENOENT` with close
 * matches, a bad regex `INVALID_PATTERN`, another bad argument
 * `INVALID_ARGS`.
 */
async function refusal(ctx: ToolContext, args: GrepArgs, abs: string, error: unknown): Promise<ToolResult> {
  const { code, option } = error as Partial<CodedError>;
  if (code === 'ENOENT' || code === 'ENOTDIR') throw await missingPath(ctx, abs);
  if (code !== 'EINVAL') throw error;
  const { pattern, literal = false } = args;
  const message = error instanceof Error ? error.message : String(error);
  if (!literal && option === 'pattern') {
    return toolError(
      'INVALID_PATTERN',
      `The pattern ${JSON.stringify(pattern)} is not a valid regular expression (${message}). ` +
        'To search for this text as written, call grep again with literal: true (or escape the regex characters with \\).',
      { pattern },
    );
  }
  return toolError('INVALID_ARGS', message, { pattern, glob: args.glob, type: args.type });
}

/** The lines after the results: nothing found, results cut (and how to continue), files not searched. */
function notes(args: GrepArgs, result: GrepResult, shown: string): string[] {
  const { mode = 'content', offset = 0 } = args;
  const n = result.matches.length;
  const unit = mode === 'content' ? 'matching lines' : 'files';
  // Results are lines in content mode and files otherwise (count mode's totalMatches sums the lines).
  const totalResults = mode === 'count' ? result.filesWithMatches : result.totalMatches;
  const out: string[] = [];
  if (n === 0) {
    out.push(
      totalResults > 0 && offset > 0
        ? `No results at offset ${offset}: there are ${totalResults} ${unit}.`
        : `No matches for ${JSON.stringify(args.pattern)} in ${shown} (${result.filesSearched} files searched).`,
    );
  }
  if (result.limitReached) {
    out.push(
      `[Showing ${unit} ${offset + 1}-${offset + n}; more exist. Continue with offset=${offset + n}, or narrow the search with path, glob or type.]`,
    );
  } else if (offset > 0 && n > 0) {
    out.push(`[Showing ${unit} ${offset + 1}-${offset + n} of ${totalResults}.]`);
  }
  const large = `over ${GREP_MAX_FILE_BYTES / (1024 * 1024)} MiB`;
  const skipped = [
    count(result.binaryFilesSkipped, 'binary file', 'binary files'),
    count(result.filesSkippedTooLarge, `file ${large}`, `files ${large}`),
  ].filter((s) => s !== '');
  if (skipped.length > 0) out.push(`[Not searched: ${skipped.join(', ')}.]`);
  return out;
}

function details(args: GrepArgs, abs: string, result: GrepResult): Record<string, unknown> {
  const n = result.matches.length;
  return {
    pattern: args.pattern,
    path: abs,
    mode: args.mode ?? 'content',
    results: n,
    totalMatches: result.totalMatches,
    filesWithMatches: result.filesWithMatches,
    filesSearched: result.filesSearched,
    binaryFilesSkipped: result.binaryFilesSkipped,
    filesSkippedTooLarge: result.filesSkippedTooLarge,
    filesUnreadable: result.filesUnreadable,
    limitReached: result.limitReached,
    source: result.source,
    ...(result.limitReached ? { nextOffset: (args.offset ?? 0) + n } : {}),
  };
}

/** A line of the answer; a result's (first) matching line carries the result's index. */
interface OutputLine {
  text: string;
  result?: number;
}

/** `path:line:text` for matches, `path-line-text` for context, `--` between groups that are not adjacent. */
function formatContent(matches: readonly GrepMatch[], display: (rel: string) => string): OutputLine[] {
  const out: OutputLine[] = [];
  let i = 0;
  let lastGroupEnd: { file: string; line: number } | undefined;
  const withContext = matches.some((m) => m.contextBefore?.length || m.contextAfter?.length);
  while (i < matches.length) {
    const rel = matches[i]!.path;
    // Every line of this file's results, matches winning over context.
    const lines = new Map<number, { text: string; match: boolean; result?: number }>();
    for (; i < matches.length && matches[i]!.path === rel; i++) {
      const m = matches[i]!;
      for (const c of m.contextBefore ?? []) if (!lines.has(c.lineNumber)) lines.set(c.lineNumber, { text: c.line, match: false });
      m.line.split('\n').forEach((text, k) => lines.set(m.lineNumber + k, { text, match: true, ...(k === 0 ? { result: i } : {}) }));
      for (const c of m.contextAfter ?? []) if (!lines.has(c.lineNumber)) lines.set(c.lineNumber, { text: c.line, match: false });
    }
    const file = display(rel);
    for (const n of [...lines.keys()].sort((a, b) => a - b)) {
      const { text, match, result } = lines.get(n)!;
      if (withContext && lastGroupEnd && (lastGroupEnd.file !== file || n > lastGroupEnd.line + 1)) out.push({ text: '--' });
      out.push({ text: `${file}${match ? ':' : '-'}${n}${match ? ':' : '-'}${cut(text)}`, result });
      lastGroupEnd = { file, line: n };
    }
  }
  return out;
}

function formatFiles(matches: readonly GrepMatch[], mode: GrepMode, display: (rel: string) => string): OutputLine[] {
  return matches.map((m, i) => ({ text: mode === 'count' ? `${display(m.path)}:${m.matchCount ?? 0}` : display(m.path), result: i }));
}

/**
 * The lines that fit in `budget` bytes of UTF-8 (whole lines); whether any were cut, and how many
 * results the kept lines show (a result counts once its matching line is shown, so continuing
 * after them repeats none and skips none).
 */
function capped(lines: readonly OutputLine[], budget: number): { text: string; cut: boolean; results: number; shownLines: number } {
  let bytes = 0;
  let kept = 0;
  let results = 0;
  for (; kept < lines.length; kept++) {
    bytes += Buffer.byteLength(lines[kept]!.text) + 1;
    if (bytes > budget) break;
    const result = lines[kept]!.result;
    if (result !== undefined) results = result + 1;
  }
  return { text: lines.slice(0, kept).map((l) => l.text).join('\n'), cut: kept < lines.length, results, shownLines: kept };
}

/** The line that says where the answer was cut and how to go on. */
function cutNote(args: GrepArgs, body: { results: number; shownLines: number }): string {
  const offset = args.offset ?? 0;
  const context = (args.context ?? 0) > 0 ? ', lower context' : '';
  return (
    `[Output cut at ${GREP_MAX_OUTPUT_BYTES / 1024} KiB after ${body.shownLines} lines (${body.results} results shown). ` +
    `Continue with offset=${offset + body.results}, or narrow the search with path, glob or type${context}.]`
  );
}

/** A line without its `\r`, marked when natives cut it at {@link GREP_MAX_LINE_CHARS}. */
function cut(line: string): string {
  const text = line.endsWith('\r') ? line.slice(0, -1) : line;
  return [...text].length >= GREP_MAX_LINE_CHARS ? `${text} [... line cut at ${GREP_MAX_LINE_CHARS} chars]` : text;
}

function count(n: number, one: string, many: string): string {
  return n === 0 ? '' : `${n} ${n === 1 ? one : many}`;
}
