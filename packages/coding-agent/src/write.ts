/**
 * `write`: create or overwrite a file (missing parents are created),
 * atomically and confined to `cwd` on the file's real location; the old
 * file's metadata is kept, a read-only or hard-linked file is refused, and
 * the scan cache is invalidated (see `files.ts`).
 */
import { changeFiles, shownAbsolute } from './files.ts';
import { type Tool, type ToolContext, type ToolResult, ToolRefusal, displayPath, guard, refuseLoneSurrogate, stringArg } from './tool.ts';

export interface WriteArgs {
  path: string;
  content: string;
}

export const writeTool: Tool<WriteArgs> = {
  name: 'write',
  description:
    'Create a file or replace its whole content (missing parent directories are created). The write is atomic. ' +
    'Prefer `edit` to change part of an existing file.',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'File path, relative to the working directory.' },
      content: { type: 'string', description: 'The complete new content of the file.' },
    },
    required: ['path', 'content'],
    additionalProperties: false,
  },
  execute: (args, ctx) => guard(ctx, () => write(args as unknown as Record<string, unknown>, ctx)),
};

async function write(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const path = stringArg(args, 'path');
  const content = args.content;
  if (typeof content !== 'string') throw new ToolRefusal('INVALID_ARGS', '`content` must be a string.');
  refuseLoneSurrogate(path, '`path`');
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
