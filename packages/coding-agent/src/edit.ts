/**
 * `edit`: change existing files in one of three modes, each writing
 * atomically and invalidating the scan cache for every path it touched.
 *
 * Every mode changes only the bytes it was asked to change: files are
 * decoded losslessly (text.ts), so bytes that are not valid UTF-8 are
 * written back exactly as they were. Text from the model (`oldText`,
 * `newText`, hashline `text`, `patch`) holding a lone UTF-16 surrogate is
 * refused (`INVALID_ARGS`, naming the argument): only the file may carry
 * such escapes.
 *
 * - `replace`: exact `oldText` → `newText` in one file; refused when the old
 *   text is missing (`NO_MATCH`) or occurs more than once without
 *   `replaceAll` (`AMBIGUOUS`, listing the lines). Text written with `\n`
 *   also matches CRLF lines, and the line breaks of `newText` take the
 *   ending of the line each match starts on (replace.ts).
 * - `patch`: a unified diff over any number of files, which may create,
 *   delete and rename them (patch.ts says what it parses and refuses).
 *   Every file is checked in memory first; nothing is written unless all
 *   of it applies (`PATCH_FAILED`). If a write fails midway, the files
 *   already written are restored. A file the patch creates or renames gets
 *   the executable bit of git's `new file mode`/`new mode`; changing that
 *   bit on a file edited in place is refused (`PATCH_FAILED`).
 * - `hashline`: operations addressed by `line:hash` anchors from `read`;
 *   every anchor is verified before anything changes, and a change at or
 *   above an anchored line (its hash covers the lines above it, see
 *   hashline.ts) refuses the edit (`STALE`), naming the line.
 */
import * as fs from 'node:fs/promises';
import * as nodePath from 'node:path';
import { invalidateFsScanAfterDelete, invalidateFsScanAfterRename, invalidateFsScanAfterWrite } from './fs-cache-invalidation.ts';
import { type HashlineOperation, HashlineError, applyHashlineEdits } from './hashline.ts';
import { type FilePatch, PatchError, applyFilePatch, parsePatch } from './patch.ts';
import { missingPath } from './read.ts';
import { ReplaceError, replaceText } from './replace.ts';
import { decodeText, encodeText, findLoneSurrogate } from './text.ts';
import {
  type Tool,
  type ToolContext,
  type ToolResult,
  ToolRefusal,
  atomicWrite,
  displayPath,
  guard,
  resolveWritePath,
  stringArg,
  syncDir,
} from './tool.ts';

export type EditMode = 'replace' | 'patch' | 'hashline';

export interface EditArgs {
  /** Default: `patch` when `patch` is given, `hashline` when `edits` is, else `replace`. */
  mode?: EditMode;
  /** The file (replace and hashline modes). */
  path?: string;
  oldText?: string;
  newText?: string;
  replaceAll?: boolean;
  /** A unified diff (patch mode). */
  patch?: string;
  /** Hashline operations (hashline mode). */
  edits?: HashlineOperation[];
}

export const editTool: Tool<EditArgs> = {
  name: 'edit',
  description:
    'Change existing files. mode "replace": replace the exact `oldText` with `newText` in `path` (it must occur exactly once unless `replaceAll`). ' +
    'mode "patch": apply the unified diff in `patch` (`--- a/x`/`+++ b/x` headers, `@@` hunks; `/dev/null` creates or deletes, ' +
    'git `rename from`/`rename to` renames; binary diffs, symlinks, submodules and copies are refused); all files change or none does. ' +
    'mode "hashline": apply `edits` addressed by the `LINE:HASH` anchors shown by `read`; refused if any anchored line, or a line above it, changed since.',
  parameters: {
    type: 'object',
    properties: {
      mode: { type: 'string', enum: ['replace', 'patch', 'hashline'], description: 'Default: inferred from the fields given.' },
      path: { type: 'string', description: 'The file to edit (replace and hashline modes).' },
      oldText: { type: 'string', description: 'replace: the exact text to find, with enough context to be unique.' },
      newText: { type: 'string', description: 'replace: the text to put in its place.' },
      replaceAll: { type: 'boolean', description: 'replace: replace every occurrence instead of requiring exactly one.' },
      patch: { type: 'string', description: 'patch: a unified diff; paths are relative to the working directory.' },
      edits: {
        type: 'array',
        description: 'hashline: operations, applied together against the file as it was read.',
        items: {
          type: 'object',
          properties: {
            op: { type: 'string', enum: ['replace', 'delete', 'insert_after', 'insert_before'] },
            anchor: { type: 'string', description: '`LINE:HASH` of the (first) line, as shown by read, e.g. "12:a3f0".' },
            end: { type: 'string', description: 'replace/delete: `LINE:HASH` of the last line of the range. Default: the anchor line.' },
            text: { type: 'string', description: 'replace/insert: the new lines, separated by \\n.' },
          },
          required: ['op', 'anchor'],
          additionalProperties: false,
        },
      },
    },
    additionalProperties: false,
  },
  execute: (args, ctx) => guard(ctx, () => edit(args as unknown as Record<string, unknown>, ctx)),
};

async function edit(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const mode = args.mode ?? (args.patch !== undefined ? 'patch' : args.edits !== undefined ? 'hashline' : 'replace');
  switch (mode) {
    case 'replace':
      return replace(args, ctx);
    case 'patch':
      return patch(args, ctx);
    case 'hashline':
      return hashline(args, ctx);
    default:
      throw new ToolRefusal('INVALID_ARGS', '`mode` must be "replace", "patch" or "hashline".');
  }
}

/** Read the text file to edit, refusing a missing one (with suggestions), a directory or a binary. */
async function readTarget(ctx: ToolContext, abs: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await fs.readFile(abs);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EISDIR') throw new ToolRefusal('EISDIR', `${displayPath(ctx, abs)} is a directory, not a file.`, { path: abs });
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    throw await missingPath(ctx, abs, ' Use `write` to create it.');
  }
  if (bytes.subarray(0, 8192).includes(0)) {
    throw new ToolRefusal('BINARY', `${displayPath(ctx, abs)} is a binary file; it cannot be edited as text.`, { path: abs });
  }
  return decodeText(bytes);
}

async function replace(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const path = stringArg(args, 'path');
  const oldText = stringArg(args, 'oldText');
  const newText = args.newText;
  if (typeof newText !== 'string') throw new ToolRefusal('INVALID_ARGS', '`newText` must be a string (empty to delete the old text).');
  if (oldText === newText) throw new ToolRefusal('INVALID_ARGS', '`oldText` and `newText` are identical; nothing to change.');
  refuseLoneSurrogate(oldText, '`oldText`');
  refuseLoneSurrogate(newText, '`newText`');
  const replaceAll = args.replaceAll === true;
  const abs = await resolveWritePath(ctx, path);
  const content = await readTarget(ctx, abs);
  const shown = displayPath(ctx, abs);
  let result;
  try {
    result = replaceText(content, oldText, newText, replaceAll, shown);
  } catch (error) {
    if (!(error instanceof ReplaceError)) throw error;
    const lines = error.code === 'AMBIGUOUS' ? { lines: error.lines } : { nearLines: error.lines };
    throw new ToolRefusal(error.code, error.message, { path: abs, ...lines });
  }
  const { lines } = result;
  await atomicWrite(abs, encodeText(result.content));
  invalidateFsScanAfterWrite(abs);
  return {
    text: `Replaced ${lines.length} occurrence${lines.length > 1 ? 's' : ''} in ${shown} (at line${lines.length > 1 ? 's' : ''} ${lines.join(', ')}).`,
    details: { mode: 'replace', path: abs, replacements: lines.length, lines },
  };
}

/**
 * Refuse model-supplied text holding a lone surrogate: in file text those
 * stand for bytes that are not UTF-8 (see text.ts), and only the file may
 * put them there.
 */
function refuseLoneSurrogate(text: string, what: string): void {
  const at = findLoneSurrogate(text);
  if (at !== -1) {
    const line = text.slice(0, at).split('\n').length;
    throw new ToolRefusal('INVALID_ARGS', `${what} holds a lone UTF-16 surrogate (line ${line}); text must be valid Unicode.`);
  }
}

async function hashline(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const path = stringArg(args, 'path');
  if (Array.isArray(args.edits)) {
    args.edits.forEach((op: Partial<HashlineOperation> | null, index) => {
      if (typeof op?.text === 'string') refuseLoneSurrogate(op.text, `\`edits[${index}].text\``);
    });
  }
  const abs = await resolveWritePath(ctx, path);
  const content = await readTarget(ctx, abs);
  let result;
  try {
    result = applyHashlineEdits(content, args.edits as HashlineOperation[]);
  } catch (error) {
    if (error instanceof HashlineError) throw new ToolRefusal(error.code, `${displayPath(ctx, abs)}: ${error.message}`, { path: abs, line: error.line });
    throw error;
  }
  if (result.content === content) return { text: `${displayPath(ctx, abs)} is unchanged.`, details: { mode: 'hashline', path: abs, changed: false } };
  await atomicWrite(abs, encodeText(result.content));
  invalidateFsScanAfterWrite(abs);
  const count = (args.edits as unknown[]).length;
  return {
    text: `Applied ${count} edit${count > 1 ? 's' : ''} to ${displayPath(ctx, abs)}. The anchors of the edited lines and of every line below them have changed: read the file again before further hashline edits.`,
    details: { mode: 'hashline', path: abs, changed: true, edits: count },
  };
}

/**
 * The permission bits of a file the patch writes anew (a creation, a
 * rename's target): `mode` (the renamed file's, if any) unless git's
 * `newMode` gives another executable bit, then 0o777 or 0o666 (narrowed by
 * the umask, as git checks files out).
 */
function permissionsFor(newMode: number | undefined, mode: number | undefined): number | undefined {
  if (newMode === undefined) return mode;
  const executable = (newMode & 0o100) !== 0;
  if (mode !== undefined && ((mode & 0o100) !== 0) === executable) return mode;
  return executable ? 0o777 : 0o666;
}

/** Writing in place keeps a file's mode, so a patch that changes its executable bit is refused rather than half applied. */
function refuseModeChange(file: FilePatch, mode: number | undefined, label: string): void {
  if (file.newMode === undefined || mode === undefined || permissionsFor(file.newMode, mode) === mode) return;
  throw new PatchError(`${label}: changing the mode of an existing file (to ${file.newMode.toString(8)}) is not supported`);
}

/** What one file in a patch does. */
interface Change {
  kind: 'create' | 'modify' | 'delete' | 'rename';
  oldPath?: string;
  newPath?: string;
}

/** A file's state on disk before the patch. */
interface Original {
  content: Buffer | undefined;
  mode: number | undefined;
}

async function patch(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const diff = stringArg(args, 'patch');
  refuseLoneSurrogate(diff, '`patch`');
  let files: FilePatch[];
  try {
    files = parsePatch(diff);
  } catch (error) {
    if (error instanceof PatchError) throw new ToolRefusal('PATCH_FAILED', `The patch could not be parsed: ${error.message}. No file was changed.`);
    throw error;
  }
  // Check everything in memory first.
  const originals = new Map<string, Original>();
  const planned = new Map<string, string | undefined>();
  const current = async (abs: string): Promise<string | undefined> => {
    if (planned.has(abs)) return planned.get(abs);
    if (!originals.has(abs)) {
      try {
        const stat = await fs.stat(abs);
        if (stat.isDirectory()) throw new PatchError(`${displayPath(ctx, abs)} is a directory`);
        const bytes = await fs.readFile(abs);
        if (bytes.subarray(0, 8192).includes(0)) throw new PatchError(`${displayPath(ctx, abs)} is a binary file`);
        originals.set(abs, { content: bytes, mode: stat.mode & 0o7777 });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
        originals.set(abs, { content: undefined, mode: undefined });
      }
    }
    const bytes = originals.get(abs)!.content;
    return bytes === undefined ? undefined : decodeText(bytes);
  };
  const changes: Change[] = [];
  const modes = new Map<string, number | undefined>();
  try {
    for (const file of files) {
      const oldAbs = file.oldPath === undefined ? undefined : await resolveWritePath(ctx, file.oldPath);
      const newAbs = file.newPath === undefined ? undefined : await resolveWritePath(ctx, file.newPath);
      const label = displayPath(ctx, (oldAbs ?? newAbs)!);
      if (oldAbs !== undefined && newAbs !== undefined && oldAbs !== newAbs) {
        if ((await current(newAbs)) !== undefined) throw new PatchError(`cannot rename ${label} to ${displayPath(ctx, newAbs)}: the target exists`);
        const result = applyFilePatch(await current(oldAbs), file, label);
        planned.set(oldAbs, undefined);
        planned.set(newAbs, result);
        modes.set(newAbs, permissionsFor(file.newMode, modes.get(oldAbs) ?? originals.get(oldAbs)?.mode));
        changes.push({ kind: 'rename', oldPath: oldAbs, newPath: newAbs });
      } else {
        const abs = (newAbs ?? oldAbs)!;
        planned.set(abs, applyFilePatch(await current(abs), file, label));
        if (oldAbs === undefined) modes.set(abs, permissionsFor(file.newMode, undefined));
        else refuseModeChange(file, modes.get(abs) ?? originals.get(abs)?.mode, label);
        changes.push({ kind: oldAbs === undefined ? 'create' : newAbs === undefined ? 'delete' : 'modify', oldPath: oldAbs, newPath: newAbs });
      }
    }
  } catch (error) {
    if (error instanceof PatchError) throw new ToolRefusal('PATCH_FAILED', `The patch does not apply: ${error.message}. No file was changed.`);
    throw error;
  }
  // Then write, restoring what was already written if a write fails.
  const done: string[] = [];
  try {
    for (const [abs, content] of planned) {
      if (content === undefined) {
        if (originals.get(abs)?.content === undefined) continue;
        await fs.unlink(abs);
        await syncDir(nodePath.dirname(abs));
      } else {
        await atomicWrite(abs, encodeText(content), modes.get(abs));
      }
      done.push(abs);
    }
  } catch (error) {
    const failed = [...planned.keys()][done.length];
    const restoreErrors: string[] = [];
    for (const abs of done.reverse()) {
      const original = originals.get(abs)!;
      try {
        if (original.content === undefined) await fs.rm(abs, { force: true });
        else await atomicWrite(abs, original.content, original.mode);
      } catch (restoreError) {
        restoreErrors.push(`${displayPath(ctx, abs)}: ${(restoreError as Error).message}`);
      }
    }
    // Whatever happened on disk, cached scans of these paths may be wrong now.
    for (const abs of planned.keys()) invalidateFsScanAfterWrite(abs);
    const restored =
      restoreErrors.length === 0
        ? 'the files already written were restored, so no file was changed'
        : `restoring the files already written failed for ${restoreErrors.join('; ')}`;
    throw new ToolRefusal(
      'PATCH_FAILED',
      `Writing ${failed ? displayPath(ctx, failed) : 'a file'} failed (${(error as Error).message}); ${restored}.`,
      { restoreErrors },
    );
  }
  for (const change of changes) {
    if (change.kind === 'rename') invalidateFsScanAfterRename(change.oldPath!, change.newPath!);
    else if (change.kind === 'delete') invalidateFsScanAfterDelete(change.oldPath!);
    else invalidateFsScanAfterWrite(change.newPath!);
  }
  const summary = changes.map((c) =>
    c.kind === 'rename' ? `renamed ${displayPath(ctx, c.oldPath!)} -> ${displayPath(ctx, c.newPath!)}` : `${c.kind === 'modify' ? 'modified' : c.kind + 'd'} ${displayPath(ctx, (c.newPath ?? c.oldPath)!)}`,
  );
  return {
    text: `Applied the patch to ${changes.length} file${changes.length > 1 ? 's' : ''}:\n${summary.map((s) => `  ${s}`).join('\n')}`,
    details: { mode: 'patch', changes },
  };
}
