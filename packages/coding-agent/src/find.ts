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
 * relative to `cwd`; a last line says how many matched in all. The scan
 * cache is not used (`cache: false`): a tool-level search always walks
 * fresh. Reading is not confined to `cwd`.
 */
import * as nodePath from 'node:path';
import { FileType, type GlobResult, glob } from '@natives/natives';
import { type Static, Type } from '@sinclair/typebox';
import { type ToolContext, type ToolResult, displayPath, toolError, defineTool } from './tool.ts';

/** Files listed when `limit` is not given. */
export const DEFAULT_FIND_LIMIT = 100;

const FindParameters = Type.Object(
  {
    pattern: Type.String({ minLength: 1, description: 'Glob pattern, matched against paths relative to `path`.' }),
    path: Type.Optional(Type.String({ description: 'Directory to search. Default: the working directory.' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, description: `Maximum number of files to list. Default ${DEFAULT_FIND_LIMIT}.` })),
  },
  { additionalProperties: false },
);

export type FindArgs = Static<typeof FindParameters>;

export const findTool = defineTool({
  name: 'find',
  description:
    'Find files by glob pattern, newest first. `*` stays within a directory, `**` crosses directories, and a pattern without `/` ' +
    'matches file names at any depth ("*.ts", "src/**/*.test.ts", "package.json"). Dot-files are included and .gitignore is honoured; ' +
    `if nothing matches, ignored files are searched too (the answer says so). At most limit files (default ${DEFAULT_FIND_LIMIT}).`,
  parameters: FindParameters,
  run: runFind,
});

async function runFind({ pattern, path, limit = DEFAULT_FIND_LIMIT }: FindArgs, ctx: ToolContext): Promise<ToolResult> {
  // An empty path counts as none.
  const abs = nodePath.resolve(ctx.cwd, path || '.');
  const shown = displayPath(ctx, abs);

  const search = (gitignore: boolean): Promise<GlobResult> =>
    glob({
      pattern,
      path: abs,
      fileType: FileType.File,
      sortByMtime: true,
      maxResults: limit,
      hidden: true,
      gitignore,
      cache: false,
      signal: ctx.signal,
    });

  let result: GlobResult;
  let ignoredIncluded = false;
  try {
    result = await search(true);
    if (result.totalMatches === 0) {
      result = await search(false);
      ignoredIncluded = true;
    }
  } catch (error) {
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

  const files = result.matches.map((m) => displayPath(ctx, nodePath.join(abs, m.path)));
  const lines: string[] = [];
  if (files.length === 0) {
    lines.push(
      `No files match ${JSON.stringify(pattern)} under ${shown}, ignored files included. ` +
        'A pattern without `/` matches file names at any depth; use `**` to cross directories.',
    );
  } else {
    if (ignoredIncluded) {
      lines.push(`[No match among files not ignored; searched again including files ignored by .gitignore/.ignore:]`);
    }
    lines.push(...files);
    if (result.limitReached) {
      lines.push(`[Showing the ${files.length} newest of ${result.totalMatches} matching files; raise limit or narrow the pattern.]`);
    }
  }
  return {
    text: lines.join('\n'),
    details: {
      pattern,
      path: abs,
      files,
      totalMatches: result.totalMatches,
      limitReached: result.limitReached,
      ignoredIncluded,
    },
  };
}
