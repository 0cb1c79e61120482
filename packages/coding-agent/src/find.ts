/**
 * `find`: files whose path matches a glob, newest first, with the natives
 * `glob` (files only, `sortByMtime`).
 *
 * Patterns are as natives `glob` takes them: matched against the path
 * relative to `path`, case-sensitive, `*` stays within one directory, `**`
 * crosses directories, and a pattern without `/` matches names at any depth
 * (`*.ts` means `**\/*.ts`). Dot-files are listed and `.gitignore` is
 * honoured; when nothing matches, the search is retried once with
 * `.gitignore` not honoured, and the text says so. `node_modules` is
 * searched only when the pattern names it.
 *
 * At most `limit` files (default {@link DEFAULT_FIND_LIMIT}) are listed,
 * relative to `cwd` (a name that is not UTF-8 C-quoted, as `read` takes
 * it: names.ts), after skipping `offset` of them; a last line says how
 * many matched in all and which `offset` continues, and another names what
 * the walk could not enter (see unreadable.ts). The scan cache is used only
 * when `ctx.scanCache` asks it; otherwise a tool-level search walks fresh.
 * The search is not confined to `cwd` unless `ctx.confineReads` asks it
 * (files.ts, `searchPath`; nothing is then listed through a link).
 */
import { FileType, type GlobResult, glob } from '@natives/natives';
import { type Static, Type } from '@sinclair/typebox';
import { SEARCH_DOT_FILES, readConfined, searchPath } from './files.ts';
import { resolvePath } from './names.ts';
import { type ToolContext, type ToolResult, displayPath, pathArgument, toolError, defineTool } from './tool.ts';
import { UnreadableDetailsSchema, unreadableDetails, unreadableNote } from './unreadable.ts';

/** Files listed when `limit` is not given. */
export const DEFAULT_FIND_LIMIT = 100;

const FindParameters = Type.Object(
  {
    pattern: Type.String({ minLength: 1, description: 'Glob pattern, matched against paths relative to `path`.' }),
    path: Type.Optional(Type.String({ description: 'Directory to search. Default: the working directory. A name that is not UTF-8 is given C-quoted, as tools show it.' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, description: `Maximum number of files to list. Default ${DEFAULT_FIND_LIMIT}.` })),
    offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Skip this many files first (to continue a cut answer). Default 0.' })),
  },
  { additionalProperties: false },
);

export type FindArgs = Static<typeof FindParameters>;

const FindDetails = Type.Object({
  pattern: Type.String(),
  path: Type.String({ description: 'The directory searched, absolute.' }),
  files: Type.Array(Type.String(), { description: 'The files listed, newest first, relative to the working directory.' }),
  totalMatches: Type.Integer({ description: 'Files matching in all.' }),
  limitReached: Type.Boolean({ description: 'More files match past the ones listed.' }),
  ignoredIncluded: Type.Boolean({ description: 'Nothing matched among files not ignored, so ignored files were searched.' }),
  nextOffset: Type.Optional(Type.Integer({ description: 'The offset that continues a cut answer.' })),
  ...UnreadableDetailsSchema,
});

export const findTool = defineTool({
  name: 'find',
  description:
    'Find files by glob pattern, newest first. `*` stays within a directory, `**` crosses directories, and a pattern without `/` ' +
    'matches file names at any depth ("*.ts", "src/**/*.test.ts", "package.json"). Dot-files are included and .gitignore is honoured; ' +
    `if nothing matches, ignored files are searched too (the answer says so). At most limit files (default ${DEFAULT_FIND_LIMIT}).`,
  parameters: FindParameters,
  output: FindDetails,
  run: runFind,
});

async function runFind({ pattern, path, limit = DEFAULT_FIND_LIMIT, offset = 0 }: FindArgs, ctx: ToolContext): Promise<ToolResult> {
  // An empty path counts as none.
  const abs = await searchPath(ctx, path && pathArgument(path));
  let found: { result: GlobResult; ignoredIncluded: boolean };
  try {
    found = await findFiles(pattern, abs, offset + limit, ctx);
  } catch (error) {
    return refusal(error, pattern, abs, displayPath(ctx, abs));
  }
  const { result, ignoredIncluded } = found;
  const display = (rel: string) => displayPath(ctx, resolvePath(abs, rel));
  const files = result.matches.slice(offset).map((m) => display(m.path));
  const more = result.limitReached ? { nextOffset: offset + files.length } : {};
  const note = unreadableNote(result.unreadable, display);
  return {
    text: [...describe(files, found, pattern, displayPath(ctx, abs), offset), ...(note ? [note] : [])].join('\n'),
    details: {
      pattern,
      path: abs,
      files,
      totalMatches: result.totalMatches,
      limitReached: result.limitReached,
      ignoredIncluded,
      ...more,
      ...unreadableDetails(result.unreadable, display),
    },
  };
}

/** The newest `count` matching files; when none is found among the files not ignored, the ignored ones are searched too. */
async function findFiles(pattern: string, abs: string, count: number, ctx: ToolContext) {
  const cache = ctx.scanCache ?? false;
  const search = (gitignore: boolean): Promise<GlobResult> =>
    glob({ pattern, path: abs, fileType: FileType.File, sortByMtime: true, maxResults: count, hidden: SEARCH_DOT_FILES, gitignore, cache, confine: readConfined(ctx), signal: ctx.signal });
  const result = await search(true);
  if (result.totalMatches > 0) return { result, ignoredIncluded: false };
  return { result: await search(false), ignoredIncluded: true };
}

/** A rejected search as a result: a bad `path` is `ENOENT`/`ENOTDIR`, a malformed pattern `INVALID_PATTERN`. */
function refusal(error: unknown, pattern: string, abs: string, shown: string): ToolResult {
  const code = (error as { code?: unknown }).code;
  const details = { pattern, path: abs };
  if (code === 'ENOENT') return toolError('ENOENT', `${shown} does not exist; find needs an existing directory as path.`, details);
  if (code === 'ENOTDIR') return toolError('ENOTDIR', `${shown} is not a directory; find searches under a directory.`, details);
  if (code === 'EINVAL') {
    const message = error instanceof Error ? error.message : String(error);
    return toolError('INVALID_PATTERN', `The glob pattern ${JSON.stringify(pattern)} is malformed (${message}).`, details);
  }
  throw error;
}

function describe(files: string[], found: { result: GlobResult; ignoredIncluded: boolean }, pattern: string, shown: string, offset: number): string[] {
  const total = found.result.totalMatches;
  if (files.length === 0 && total > 0) return [`No files at offset ${offset}: ${total} files match ${JSON.stringify(pattern)}.`];
  if (files.length === 0) {
    return [
      `No files match ${JSON.stringify(pattern)} under ${shown}, ignored files included. ` +
        'A pattern without `/` matches file names at any depth; use `**` to cross directories.',
    ];
  }
  const lines: string[] = [];
  if (found.ignoredIncluded) lines.push(`[No match among files not ignored; searched again including files ignored by .gitignore/.ignore:]`);
  lines.push(...files);
  const range = offset === 0 ? `the ${files.length} newest` : `files ${offset + 1}-${offset + files.length}`;
  if (found.result.limitReached) {
    lines.push(`[Showing ${range} of ${total} matching files; continue with offset=${offset + files.length}, raise limit or narrow the pattern.]`);
  } else if (offset > 0) {
    lines.push(`[Showing ${range} of ${total} matching files.]`);
  }
  return lines;
}
