/**
 * `fuzzy_find`: files and directories whose path best matches a short,
 * loosely typed query, with the natives `fuzzyFind` (an exact name beats a
 * name prefix, a substring, a path substring and scattered letters).
 *
 * Dot-files are included and `.gitignore` is honoured; `node_modules` is
 * searched only when the query names it. At most `limit` entries (default
 * {@link DEFAULT_FUZZY_LIMIT}) are listed best first, relative to `cwd`
 * (a name that is not UTF-8 C-quoted, as `read` takes it: names.ts),
 * directories with a trailing `/`, after skipping `offset` of them; a last
 * line says how many matched and which `offset` continues. The scan cache
 * is used only when `ctx.scanCache` asks it; the search is confined to
 * `cwd` only when `ctx.confineReads` asks it (files.ts, `searchPath`;
 * nothing is then listed through a link).
 */
import { type FuzzyFindResult, fuzzyFind } from '@natives/natives';
import { type Static, Type } from '@sinclair/typebox';
import { SEARCH_DOT_FILES, readConfined, searchPath } from './files.ts';
import { resolvePath } from './names.ts';
import { type ToolContext, type ToolResult, ToolRefusal, defineTool, displayPath, pathArgument } from './tool.ts';
import { UnreadableDetailsSchema, unreadableDetails, unreadableNote } from './unreadable.ts';

/** Entries listed when `limit` is not given. */
export const DEFAULT_FUZZY_LIMIT = 50;

const FuzzyFindParameters = Type.Object(
  {
    query: Type.String({ minLength: 1, description: 'What to look for: a name or part of a path, letters in order ("srvts" finds src/server.ts).' }),
    path: Type.Optional(Type.String({ description: 'Directory to search. Default: the working directory. A name that is not UTF-8 is given C-quoted, as tools show it.' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, description: `Maximum number of entries to list. Default ${DEFAULT_FUZZY_LIMIT}.` })),
    offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Skip this many entries first (to continue a cut answer). Default 0.' })),
  },
  { additionalProperties: false },
);

export type FuzzyFindArgs = Static<typeof FuzzyFindParameters>;

const FuzzyFindDetails = Type.Object({
  query: Type.String(),
  path: Type.String({ description: 'The directory searched, absolute.' }),
  entries: Type.Array(Type.String(), { description: 'Best first, relative to the working directory; directories end with `/`.' }),
  totalMatches: Type.Integer({ description: 'Entries matching in all.' }),
  limitReached: Type.Boolean({ description: 'More entries match past the ones listed.' }),
  nextOffset: Type.Optional(Type.Integer({ description: 'The offset that continues a cut answer.' })),
  ...UnreadableDetailsSchema,
});

export const fuzzyFindTool = defineTool({
  name: 'fuzzy_find',
  description:
    'Find files and directories by a short, loose query, best match first: an exact name beats a name prefix, a substring, ' +
    'a path substring and letters in order ("usrctl" finds user_controller.ts). Words separated by spaces must all match; an ' +
    'all-lowercase word ignores case. Dot-files are included and .gitignore is honoured. Directories end with `/`. ' +
    `At most limit entries (default ${DEFAULT_FUZZY_LIMIT}).`,
  parameters: FuzzyFindParameters,
  output: FuzzyFindDetails,
  run: runFuzzyFind,
});

async function runFuzzyFind({ query, path, limit = DEFAULT_FUZZY_LIMIT, offset = 0 }: FuzzyFindArgs, ctx: ToolContext): Promise<ToolResult> {
  const abs = await searchPath(ctx, path && pathArgument(path));
  let result: FuzzyFindResult;
  try {
    const cache = ctx.scanCache ?? false;
    result = await fuzzyFind({ query, path: abs, hidden: SEARCH_DOT_FILES, maxResults: offset + limit, cache, confine: readConfined(ctx), signal: ctx.signal });
  } catch (error) {
    throw refusal(error, ctx, abs);
  }
  const display = (rel: string) => displayPath(ctx, resolvePath(abs, rel));
  const entries = result.matches.slice(offset).map((m) => displayPath(ctx, resolvePath(abs, m.path), m.path.endsWith('/')));
  const limitReached = result.totalMatches > offset + entries.length;
  const lines = entries.length > 0 ? [...entries] : [`No entries match ${JSON.stringify(query)} under ${displayPath(ctx, abs)}${offset > 0 ? ` at offset ${offset}` : ''}.`];
  if (limitReached) {
    lines.push(`[Showing ${offset + 1}-${offset + entries.length} of ${result.totalMatches} matches; continue with offset=${offset + entries.length} or refine the query.]`);
  }
  const note = unreadableNote(result.unreadable, display);
  if (note) lines.push(note);
  return {
    text: lines.join('\n'),
    details: {
      query,
      path: abs,
      entries,
      totalMatches: result.totalMatches,
      limitReached,
      ...(limitReached ? { nextOffset: offset + entries.length } : {}),
      ...unreadableDetails(result.unreadable, display),
    },
  };
}

/** A rejected search: a bad `path` names it; anything else is reported as natives gave it. */
function refusal(error: unknown, ctx: ToolContext, abs: string): unknown {
  const code = (error as { code?: unknown }).code;
  if (code === 'ENOENT') return new ToolRefusal('ENOENT', `${displayPath(ctx, abs)} does not exist; fuzzy_find needs an existing directory as path.`, { path: abs });
  if (code === 'ENOTDIR') return new ToolRefusal('ENOTDIR', `${displayPath(ctx, abs)} is not a directory; fuzzy_find searches under a directory.`, { path: abs });
  return error;
}
