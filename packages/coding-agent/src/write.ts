/**
 * `write`: create or overwrite a file (missing parents are created),
 * atomically, then invalidate the scan cache for it.
 */
import { invalidateFsScanAfterWrite } from './fs-cache-invalidation.ts';
import { type Tool, type ToolContext, type ToolResult, ToolRefusal, atomicWrite, displayPath, guard, resolveWritePath, stringArg } from './tool.ts';

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
  const abs = await resolveWritePath(ctx, path);
  const outcome = await atomicWrite(abs, content);
  invalidateFsScanAfterWrite(abs);
  if (outcome.writtenPath !== abs) invalidateFsScanAfterWrite(outcome.writtenPath);
  const bytes = Buffer.byteLength(content);
  return {
    text: `${outcome.created ? 'Created' : 'Overwrote'} ${displayPath(ctx, abs)} (${bytes} bytes).`,
    details: { path: abs, created: outcome.created, bytes },
  };
}
