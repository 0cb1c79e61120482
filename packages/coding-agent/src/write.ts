/**
 * `write`: create or overwrite a file (missing parents are created),
 * atomically and confined to `cwd` on the file's real location; the old
 * file's metadata is kept, a read-only or hard-linked file is refused, and
 * the scan cache is invalidated (see `files.ts`).
 */
import { type Static, Type } from '@sinclair/typebox';
import { changeFiles, shownAbsolute } from './files.ts';
import { type ToolContext, type ToolResult, defineTool, displayPath, pathArgument, refuseLoneSurrogate } from './tool.ts';

const WriteParameters = Type.Object(
  {
    path: Type.String({ minLength: 1, description: 'File path, relative to the working directory. A name that is not UTF-8 is given as tools show it: C-quoted, e.g. "caf\\351.txt".' }),
    content: Type.String({ description: 'The complete new content of the file.' }),
  },
  { additionalProperties: false },
);

export type WriteArgs = Static<typeof WriteParameters>;

const WriteDetails = Type.Object({
  path: Type.String({ description: 'The file, absolute.' }),
  created: Type.Boolean({ description: 'The file did not exist before.' }),
  bytes: Type.Integer({ description: 'Bytes written.' }),
});

export const writeTool = defineTool({
  name: 'write',
  description:
    'Create a file or replace its whole content (missing parent directories are created). The write is atomic. ' +
    'Prefer `edit` to change part of an existing file.',
  parameters: WriteParameters,
  output: WriteDetails,
  run: write,
});

async function write({ path: given, content }: WriteArgs, ctx: ToolContext): Promise<ToolResult> {
  const path = pathArgument(given);
  refuseLoneSurrogate(content, '`content`');
  const abs = shownAbsolute(ctx, path);
  const applied = await changeFiles(ctx, [{ op: 'write', path, data: content }]);
  const { created } = applied.outcomes[0]!;
  const bytes = Buffer.byteLength(content);
  return {
    text: `${created ? 'Created' : 'Overwrote'} ${displayPath(ctx, abs)} (${bytes} bytes).`,
    details: { path: abs, created, bytes },
  };
}
