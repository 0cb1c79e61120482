/**
 * `edit`: change existing files in one of three modes. Every mode reads the
 * file, computes the new text in memory, and writes it back only if the file
 * is still the version it read (`STALE` otherwise), through `files.ts`:
 * confined to `cwd` on the real location, atomic, metadata kept, the scan
 * cache invalidated for every path touched.
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
 *   Every file is checked in memory first; nothing is written unless all of
 *   it applies (`PATCH_FAILED`), and the changes are then made all together
 *   or not at all (a failure midway undoes the ones already made). A
 *   renamed symlink stays a symlink. git's `new file mode`/`new mode` set or
 *   clear the executable bit.
 * - `hashline`: operations addressed by `line:hash` anchors from `read`;
 *   every anchor is verified before anything changes, and a change at or
 *   above an anchored line (its hash covers the lines above it, see
 *   hashline.ts) refuses the edit (`STALE`), naming the line.
 */
import type { FileChange } from '@natives/natives';
import { changeFiles, notEditableText, readForChange } from './files.ts';
import { type HashlineOperation, HashlineError, applyHashlineEdits } from './hashline.ts';
import { applyFilePatch } from './hunks.ts';
import { type FilePatch, PatchError, parsePatch } from './patch.ts';
import { missingPath } from './read.ts';
import { ReplaceError, replaceText } from './replace.ts';
import { resolvePath, shownPath } from './names.ts';
import { decodeText, encodeText, splitBom } from './text.ts';
import { type Static, Type } from '@sinclair/typebox';
import { type ToolContext, type ToolResult, ToolRefusal, defineTool, displayPath, pathArgument, refuseLoneSurrogate, toolCodeOf, toolMessageOf } from './tool.ts';

const HashlineOperationSchema = Type.Object(
  {
    op: Type.Union([Type.Literal('replace'), Type.Literal('delete'), Type.Literal('insert_after'), Type.Literal('insert_before')]),
    anchor: Type.String({ description: '`LINE:HASH` of the (first) line, as shown by read, e.g. "12:a3f0".' }),
    end: Type.Optional(Type.String({ description: 'replace/delete: `LINE:HASH` of the last line of the range. Default: the anchor line.' })),
    text: Type.Optional(Type.String({ description: 'replace/insert: the new lines, separated by \\n.' })),
  },
  { additionalProperties: false },
);

const EditParameters = Type.Object(
  {
    mode: Type.Optional(
      Type.Union([Type.Literal('replace'), Type.Literal('patch'), Type.Literal('hashline')], {
        description: 'Default: inferred from the fields given (`patch` when `patch` is given, `hashline` when `edits` is, else `replace`).',
      }),
    ),
    path: Type.Optional(Type.String({ minLength: 1, description: 'The file to edit (replace and hashline modes). A name that is not UTF-8 is given as tools show it: C-quoted, e.g. "caf\\351.txt".' })),
    oldText: Type.Optional(Type.String({ minLength: 1, description: 'replace: the exact text to find, with enough context to be unique.' })),
    newText: Type.Optional(Type.String({ description: 'replace: the text to put in its place (empty to delete the old text).' })),
    replaceAll: Type.Optional(Type.Boolean({ description: 'replace: replace every occurrence instead of requiring exactly one.' })),
    patch: Type.Optional(Type.String({ minLength: 1, description: 'patch: a unified diff; paths are relative to the working directory.' })),
    edits: Type.Optional(
      Type.Array(HashlineOperationSchema, {
        minItems: 1,
        description: 'hashline: operations, applied together against the file as it was read.',
      }),
    ),
  },
  { additionalProperties: false },
);

export type EditArgs = Static<typeof EditParameters>;

const EditDetails = Type.Object({
  mode: Type.Union([Type.Literal('replace'), Type.Literal('patch'), Type.Literal('hashline')]),
  path: Type.Optional(Type.String({ description: 'replace, hashline: the file, absolute.' })),
  replacements: Type.Optional(Type.Integer({ description: 'replace: occurrences replaced.' })),
  lines: Type.Optional(Type.Array(Type.Integer(), { description: 'replace: the line each replacement starts on.' })),
  changed: Type.Optional(Type.Boolean({ description: 'hashline: the file changed.' })),
  edits: Type.Optional(Type.Integer({ description: 'hashline: operations applied.' })),
  changes: Type.Optional(
    Type.Array(
      Type.Object({
        kind: Type.Union([Type.Literal('create'), Type.Literal('modify'), Type.Literal('delete'), Type.Literal('rename')]),
        oldPath: Type.Optional(Type.String()),
        newPath: Type.Optional(Type.String()),
      }),
      { description: 'patch: what happened to each file, absolute paths.' },
    ),
  ),
});
export type EditMode = NonNullable<EditArgs['mode']>;

export const editTool = defineTool({
  name: 'edit',
  description:
    'Change existing files. mode "replace": replace the exact `oldText` with `newText` in `path` (it must occur exactly once unless `replaceAll`). ' +
    'mode "patch": apply the unified diff in `patch` (`--- a/x`/`+++ b/x` headers, `@@` hunks; `/dev/null` creates or deletes, ' +
    'git `rename from`/`rename to` renames; binary diffs, symlinks, submodules and copies are refused); all files change or none does. ' +
    'mode "hashline": apply `edits` addressed by the `LINE:HASH` anchors shown by `read`; refused if any anchored line, or a line above it, changed since.',
  parameters: EditParameters,
  output: EditDetails,
  run: edit,
});

async function edit(args: EditArgs, ctx: ToolContext): Promise<ToolResult> {
  const mode = args.mode ?? (args.patch !== undefined ? 'patch' : args.edits !== undefined ? 'hashline' : 'replace');
  switch (mode) {
    case 'replace':
      return replace(args, ctx);
    case 'patch':
      return patch(required(args, 'patch', mode), ctx);
    case 'hashline':
      return hashline(required(args, 'path', mode), required(args, 'edits', mode), ctx);
  }
}

/** A field the mode needs, or a refusal naming it. */
function required<K extends keyof EditArgs>(args: EditArgs, name: K, mode: EditMode): NonNullable<EditArgs[K]> {
  const value = args[name];
  if (value === undefined) throw new ToolRefusal('INVALID_ARGS', `\`${name}\` is required in ${mode} mode.`);
  return value as NonNullable<EditArgs[K]>;
}

/** A file as read for editing: its text (byte order mark aside) and the version a write must still find. */
interface Target {
  /** The path as natives takes it (see `pathArgument`). */
  path: string;
  abs: string;
  /** The text after the byte order mark, if any: what the modes edit. */
  text: string;
  /** The byte order mark (`''` when none): it belongs to the file and is written back in front. */
  bom: string;
  stamp: string;
}

/** Read the text file to edit, refusing a missing one (with suggestions), a directory or a binary. */
async function readTarget(ctx: ToolContext, given: string): Promise<Target> {
  const path = pathArgument(given);
  const abs = resolvePath(ctx.cwd, path);
  let file;
  try {
    file = await readForChange(ctx, path);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'EISDIR') throw new ToolRefusal('EISDIR', `${displayPath(ctx, abs)} is a directory, not a file.`, { path: abs });
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    throw await missingPath(ctx, abs, ' Use `write` to create it.');
  }
  const refused = notEditableText(file);
  if (refused) {
    throw new ToolRefusal(refused.code, `${displayPath(ctx, abs)} ${refused.why}; it cannot be edited as text.`, { path: abs });
  }
  const { bom, body } = splitBom(decodeText(file.data));
  return { path, abs, text: body, bom, stamp: file.stamp };
}

/** Write the edited text back, unless the file changed since {@link readTarget} (`STALE`). */
async function writeTarget(ctx: ToolContext, target: Target, text: string): Promise<void> {
  await changeFiles(ctx, [{ op: 'write', path: target.path, data: encodeText(target.bom + text), stamp: target.stamp }]);
}

/** 1-based line number of character `index`. */
function lineOf(content: string, index: number): number {
  let line = 1;
  for (let i = content.indexOf('\n'); i !== -1 && i < index; i = content.indexOf('\n', i + 1)) line++;
  return line;
}

function occurrences(content: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = content.indexOf(needle); i !== -1; i = content.indexOf(needle, i + needle.length)) found.push(i);
  return found;
}

async function replace(args: EditArgs, ctx: ToolContext): Promise<ToolResult> {
  const path = required(args, 'path', 'replace');
  const oldText = required(args, 'oldText', 'replace');
  const newText = required(args, 'newText', 'replace');
  if (oldText === newText) throw new ToolRefusal('INVALID_ARGS', '`oldText` and `newText` are identical; nothing to change.');
  refuseLoneSurrogate(oldText, '`oldText`');
  refuseLoneSurrogate(newText, '`newText`');
  const replaceAll = args.replaceAll ?? false;
  const target = await readTarget(ctx, path);
  const { abs, text: content } = target;
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
  await writeTarget(ctx, target, result.content);
  return {
    text: `Replaced ${lines.length} occurrence${lines.length > 1 ? 's' : ''} in ${shown} (at line${lines.length > 1 ? 's' : ''} ${lines.join(', ')}).`,
    details: { mode: 'replace', path: abs, replacements: lines.length, lines },
  };
}


async function hashline(path: string, edits: HashlineOperation[], ctx: ToolContext): Promise<ToolResult> {
  edits.forEach((op, index) => {
    if (op.text !== undefined) refuseLoneSurrogate(op.text, `\`edits[${index}].text\``);
  });
  const target = await readTarget(ctx, path);
  const { abs, text: content } = target;
  let result;
  try {
    result = applyHashlineEdits(content, edits);
  } catch (error) {
    if (error instanceof HashlineError) throw new ToolRefusal(error.code, `${displayPath(ctx, abs)}: ${error.message}`, { path: abs, line: error.line });
    throw error;
  }
  if (result.content === content) return { text: `${displayPath(ctx, abs)} is unchanged.`, details: { mode: 'hashline', path: abs, changed: false } };
  await writeTarget(ctx, target, result.content);
  const count = edits.length;
  return {
    text: `Applied ${count} edit${count > 1 ? 's' : ''} to ${displayPath(ctx, abs)}. The anchors of the edited lines and of every line below them have changed: read the file again before further hashline edits.`,
    details: { mode: 'hashline', path: abs, changed: true, edits: count },
  };
}

/** What one file in a patch does. */
interface Change {
  kind: 'create' | 'modify' | 'delete' | 'rename';
  oldPath?: string;
  newPath?: string;
}

async function patch(diff: string, ctx: ToolContext): Promise<ToolResult> {
  refuseLoneSurrogate(diff, '`patch`');
  const plan = new PatchPlan(ctx);
  let files: FilePatch[];
  try {
    files = parsePatch(diff);
  } catch (error) {
    if (error instanceof PatchError) throw new ToolRefusal('PATCH_FAILED', `The patch could not be parsed: ${error.message}. No file was changed.`);
    throw error;
  }
  try {
    for (const file of files) await plan.add(file);
  } catch (error) {
    if (error instanceof PatchError) throw new ToolRefusal('PATCH_FAILED', `The patch does not apply: ${error.message}. No file was changed.`);
    throw error;
  }
  try {
    await changeFiles(ctx, plan.fileChanges);
  } catch (error) {
    const code = toolCodeOf(error);
    const refusal = code === 'IO' || code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR' ? 'PATCH_FAILED' : code;
    throw new ToolRefusal(refusal, `The patch was not applied (${toolMessageOf(error)}). No file was changed.`);
  }
  const { changes } = plan;
  const summary = changes.map((c) =>
    c.kind === 'rename' ? `renamed ${labelOf(ctx, c.oldPath!)} -> ${labelOf(ctx, c.newPath!)}` : `${c.kind === 'modify' ? 'modified' : c.kind + 'd'} ${labelOf(ctx, (c.newPath ?? c.oldPath)!)}`,
  );
  return {
    text: `Applied the patch to ${changes.length} file${changes.length > 1 ? 's' : ''}:\n${summary.map((s) => `  ${s}`).join('\n')}`,
    details: { mode: 'patch', changes },
  };
}

/**
 * A patch checked in memory: each file section is applied to the text the
 * file holds (or will hold after the sections before it), and turned into
 * the file changes that make it so. The first change to a file expects the
 * version read, so a file changed behind the patch's back is `STALE`.
 */
class PatchPlan {
  readonly changes: Change[] = [];
  readonly fileChanges: FileChange[] = [];
  /** Text each touched path will hold (`undefined`: absent), by absolute path. */
  private readonly planned = new Map<string, string | undefined>();
  /** The version read of each existing file not yet changed by an earlier section. */
  private readonly stamps = new Map<string, string>();

  constructor(private readonly ctx: ToolContext) {}

  async add(file: FilePatch): Promise<void> {
    const { oldPath, newPath } = file;
    if (oldPath !== undefined && newPath !== undefined && this.key(oldPath) !== this.key(newPath)) return this.rename(file, oldPath, newPath);
    const path = (newPath ?? oldPath)!;
    const result = applyFilePatch(await this.current(path), file, this.label(path));
    const stamp = this.takeStamp(path);
    this.planned.set(this.key(path), result);
    const executable = executableBit(file);
    if (oldPath === undefined) {
      this.fileChanges.push({ op: 'write', path, data: encodeText(result!), create: true, executable });
      this.changes.push({ kind: 'create', newPath: this.key(path) });
    } else if (newPath === undefined) {
      this.fileChanges.push({ op: 'delete', path, stamp });
      this.changes.push({ kind: 'delete', oldPath: this.key(path) });
    } else {
      this.fileChanges.push({ op: 'write', path, data: encodeText(result!), stamp, executable });
      this.changes.push({ kind: 'modify', oldPath: this.key(path), newPath: this.key(path) });
    }
  }

  private async rename(file: FilePatch, oldPath: string, newPath: string): Promise<void> {
    if ((await this.current(newPath)) !== undefined) {
      throw new PatchError(`cannot rename ${this.label(oldPath)} to ${this.label(newPath)}: the target exists`);
    }
    const before = await this.current(oldPath);
    const after = applyFilePatch(before, file, this.label(oldPath));
    this.fileChanges.push({ op: 'rename', path: oldPath, to: newPath, stamp: this.takeStamp(oldPath) });
    const executable = executableBit(file);
    if (after !== before || executable !== undefined) this.fileChanges.push({ op: 'write', path: newPath, data: encodeText(after!), executable });
    this.planned.set(this.key(oldPath), undefined);
    this.planned.set(this.key(newPath), after);
    this.changes.push({ kind: 'rename', oldPath: this.key(oldPath), newPath: this.key(newPath) });
  }

  /** The text `path` holds at this point of the patch; `undefined` when it does not exist. */
  private async current(path: string): Promise<string | undefined> {
    const key = this.key(path);
    if (this.planned.has(key)) return this.planned.get(key);
    let file;
    try {
      file = await readForChange(this.ctx, path);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      if (code === 'EISDIR') throw new PatchError(`${this.label(path)} is a directory`);
      throw error;
    }
    const refused = notEditableText(file);
    if (refused) throw new PatchError(`${this.label(path)} ${refused.why}`);
    this.planned.set(key, decodeText(file.data));
    this.stamps.set(key, file.stamp);
    return this.planned.get(key);
  }

  /** The version read of `path`, once: later changes to it in this patch follow this batch's own. */
  private takeStamp(path: string): string | undefined {
    const key = this.key(path);
    const stamp = this.stamps.get(key);
    this.stamps.delete(key);
    return stamp;
  }

  /**
   * `path` made absolute by its text, `.` and repeated `/` dropped but `..`
   * kept: `dir/../a` is not `a` when `dir` is a link, and only the
   * filesystem can tell (natives refuses a batch that reaches one file by
   * two different paths, so one text is one file here).
   */
  private key(path: string): string {
    const abs = path.startsWith('/') ? path : `${resolvePath(this.ctx.cwd, '.')}/${path}`;
    return `/${abs.split('/').filter((part) => part !== '' && part !== '.').join('/')}`;
  }

  private label(path: string): string {
    return labelOf(this.ctx, this.key(path));
  }
}

/** A plan key as the model should see it: relative to `cwd` when below it by its text (never folding `..`). */
function labelOf(ctx: ToolContext, key: string): string {
  const base = resolvePath(ctx.cwd, '.');
  const prefix = base === '/' ? '/' : `${base}/`;
  return shownPath(key.startsWith(prefix) ? key.slice(prefix.length) : key);
}

/** What git's `new file mode`/`new mode` says of the executable bit; `undefined` when the patch says nothing. */
function executableBit(file: FilePatch): boolean | undefined {
  return file.newMode === undefined ? undefined : (file.newMode & 0o100) !== 0;
}
