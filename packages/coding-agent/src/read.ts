/**
 * `read`: a file as numbered hashlines (`  12:a3f0| text`, the hash of a
 * line covering it and the lines above it, see hashline.ts), a window of it
 * for big files, and clear answers for binaries, directories, FIFOs,
 * sockets, devices and missing paths.
 *
 * Reading is not confined to `cwd` unless `ctx.confineReads` asks it (see
 * files.ts): a file whose real location is outside is then `OUTSIDE_CWD`,
 * a symlink inside `cwd` that leads out included. Only regular files are
 * opened, and at most {@link MAX_READ_BYTES} of one is read: the window of a
 * bigger file is shown from that head, and the text says so. What is text is
 * decided by natives, by the rule grep searches by: a NUL byte among the
 * bytes read makes the file binary (not shown), and a UTF-16 file (named by
 * its byte order mark) is shown transcoded, as grep searches it. Bytes that
 * are not valid UTF-8 are shown as U+FFFD (see text.ts); `edit` writes them
 * back unchanged, and takes a U+FFFD copied from here as the byte it stands
 * for. A UTF-8 byte order mark is the file's, not line 1's: it is not shown
 * or hashed (`details.bom` says it is there), and edits keep it. A name that
 * is not UTF-8 is shown C-quoted, as git does (names.ts), and `path` takes
 * that form back.
 *
 * A missing path suggests up to 5 existing files: a cached glob over `cwd`
 * (hidden files included, .gitignore honoured; kept beneath `cwd` while it
 * runs when reads are confined) for names containing the missing name's
 * stem case-insensitively, ranked by edit distance between the requested
 * relative path and each candidate, shown as the tools show names.
 */
import * as fs from 'node:fs/promises';
import { type FileContents, FileType, glob, readFile } from '@natives/natives';
import { SEARCH_DOT_FILES, readConfined } from './files.ts';
import { formatHashline, lineHashes } from './hashline.ts';
import { splitLines } from './lines.ts';
import { resolvePath, shownPath } from './names.ts';
import { decodeText, displayText, encodeText, splitBom } from './text.ts';
import { type Static, Type } from '@sinclair/typebox';
import { type ToolContext, type ToolResult, ToolRefusal, defineTool, displayPath, pathArgument, relativeInside, toolError } from './tool.ts';

/** Lines shown when `limit` is not given. */
export const DEFAULT_READ_LIMIT = 2000;
/** Characters of one line shown; the hash is still of the whole line. */
export const MAX_LINE_CHARS = 2000;
/**
 * Bytes of a file `read` looks at: any window of ordinary text lies well
 * inside it, and a multi-gigabyte log costs no more than this to show.
 */
export const MAX_READ_BYTES = 16 * 1024 * 1024;

const ReadParameters = Type.Object(
  {
    path: Type.String({ minLength: 1, description: 'File path, relative to the working directory or absolute. A name that is not UTF-8 is given as tools show it: C-quoted, e.g. "caf\\351.txt".' }),
    offset: Type.Optional(Type.Integer({ minimum: 1, description: 'First line to show (1-based). Default 1.' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, description: `Maximum number of lines to show. Default ${DEFAULT_READ_LIMIT}.` })),
  },
  { additionalProperties: false },
);

export type ReadArgs = Static<typeof ReadParameters>;

const ReadDetails = Type.Object({
  path: Type.String({ description: 'The file, absolute.' }),
  totalLines: Type.Integer({ description: 'Lines in the file (in the part read, when `complete` is false).' }),
  startLine: Type.Integer({ description: 'First line shown (0 for an empty file).' }),
  endLine: Type.Integer({ description: 'Last line shown (0 for an empty file).' }),
  truncated: Type.Boolean({ description: 'Lines exist that were not shown.' }),
  complete: Type.Optional(Type.Boolean({ description: 'The whole file was read (false: only its head).' })),
});

export const readTool = defineTool({
  name: 'read',
  description:
    'Read a text file. Each line is shown as `LINE:HASH| content`; the `LINE:HASH` anchors address lines for `edit` in hashline mode. ' +
    'A line\'s HASH covers its content and every line above it, so any change at or above a line makes its anchor stale. ' +
    `Use offset/limit for big files (default: the first ${DEFAULT_READ_LIMIT} lines).`,
  parameters: ReadParameters,
  output: ReadDetails,
  run: read,
});

async function read({ path: given, offset = 1, limit = DEFAULT_READ_LIMIT }: ReadArgs, ctx: ToolContext): Promise<ToolResult> {
  const path = pathArgument(given);
  const abs = resolvePath(ctx.cwd, path);
  const shown = displayPath(ctx, abs);
  let file: FileContents;
  try {
    file = await readFile(path, { cwd: ctx.cwd, confine: readConfined(ctx), maxBytes: MAX_READ_BYTES, head: true, signal: ctx.signal });
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'EISDIR') return directoryListing(ctx, abs);
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    throw await missingPath(ctx, abs);
  }
  if (file.encoding === 'binary') {
    return toolError('BINARY', `${shown} is a binary file (${file.size} bytes); it is not shown.`, { path: abs, bytes: file.size });
  }
  const { bom, body } = splitBom(fileText(file));
  const lines = splitLines(body);
  const total = lines.text.length;
  const partial = file.complete ? '' : ` (of the first ${MAX_READ_BYTES} bytes of this ${file.size}-byte file; use grep to reach further)`;
  if (total === 0) return { text: `${shown} is empty.`, details: { path: abs, totalLines: 0, startLine: 0, endLine: 0, truncated: false } };
  if (offset > total) {
    return toolError('INVALID_ARGS', `offset ${offset} is past the end of ${shown} (${total} lines${partial}).`, { path: abs, totalLines: total });
  }
  const end = Math.min(total, offset + limit - 1);
  const width = String(end).length;
  const hashes = lineHashes(lines.text, end);
  const out: string[] = [];
  for (let n = offset; n <= end; n++) {
    const line = lines.text[n - 1]!;
    const formatted = formatHashline(n, hashes[n - 1]!, line, width);
    const cut = line.length > MAX_LINE_CHARS;
    const kept = cut ? formatted.slice(0, formatted.length - line.length + MAX_LINE_CHARS) : formatted;
    out.push(displayText(kept) + (cut ? ` [... line cut at ${MAX_LINE_CHARS} of ${line.length} chars]` : ''));
  }
  const truncated = offset > 1 || end < total || !file.complete;
  if (truncated) out.push(`[lines ${offset}-${end} of ${total}${partial}${end < total ? `; continue with offset=${end + 1}` : ''}]`);
  return {
    text: out.join('\n'),
    details: { path: abs, totalLines: total, startLine: offset, endLine: end, truncated, complete: file.complete, ...(bom ? { bom: true } : {}) },
  };
}

/**
 * The text read: UTF-8 decoded losslessly (see text.ts), UTF-16 transcoded (its byte order mark
 * dropped); of a head, all but its last, possibly cut, line.
 */
function fileText(file: FileContents): string {
  if (file.encoding !== 'utf-16le' && file.encoding !== 'utf-16be') {
    return decodeText(file.complete ? file.data : cutAtLastLine(file.data));
  }
  const text = new TextDecoder(file.encoding).decode(file.data);
  const lastNewline = text.lastIndexOf('\n');
  return file.complete || lastNewline === -1 ? text : text.slice(0, lastNewline + 1);
}

/** The head of a file without its last, possibly cut, line. */
function cutAtLastLine(head: Buffer): Buffer {
  const lastNewline = head.lastIndexOf(0x0a);
  return lastNewline === -1 ? head : head.subarray(0, lastNewline + 1);
}

/** The refusal for a directory: what it holds, so the model can pick a file. */
async function directoryListing(ctx: ToolContext, abs: string): Promise<ToolResult> {
  // Names read as bytes, so one that is not UTF-8 is shown as a name the tools can take back.
  const dir = Buffer.from(encodeText(abs));
  const names = (await fs.readdir(dir, { encoding: 'buffer' })).map((name) => decodeText(name)).sort();
  const shown = await Promise.all(names.slice(0, 20).map(async (name) => shownPath(name + ((await isDirectory(dir, name)) ? '/' : ''))));
  const more = names.length > 20 ? `\n... and ${names.length - 20} more` : '';
  return toolError(
    'EISDIR',
    `${displayPath(ctx, abs)} is a directory, not a file (use find or grep to search it). It holds ${names.length} entries:\n${shown.join('\n')}${more}`,
    { path: abs, entries: shown, totalEntries: names.length },
  );
}

async function isDirectory(dir: Buffer, name: string): Promise<boolean> {
  try {
    return (await fs.stat(Buffer.concat([dir, Buffer.from('/'), Buffer.from(encodeText(name))]))).isDirectory();
  } catch {
    return false;
  }
}

/** The refusal for a missing `abs`: up to 5 close existing files, else `fallback` advice. */
export async function missingPath(ctx: ToolContext, abs: string, fallback = ''): Promise<ToolRefusal> {
  const suggestions = await suggestPaths(ctx, abs);
  const hint = suggestions.length > 0 ? ` Did you mean:\n${suggestions.map((s) => `  ${s}`).join('\n')}` : fallback;
  return new ToolRefusal('ENOENT', `${displayPath(ctx, abs)} does not exist.${hint}`, { path: abs, suggestions });
}

/** Up to 5 existing files whose names look like the missing `abs` (see the module comment). */
export async function suggestPaths(ctx: ToolContext, abs: string): Promise<string[]> {
  // By the text: node:path would turn the escapes of a name that is not UTF-8 into U+FFFD.
  const base = abs.slice(abs.lastIndexOf('/') + 1);
  const stem = base.lastIndexOf('.') > 0 ? base.slice(0, base.lastIndexOf('.')) : base;
  const pattern = '*' + [...stem].map(caseless).join('') + '*';
  let candidates: string[];
  try {
    const confine = readConfined(ctx);
    const found = await glob({ pattern, path: ctx.cwd, cache: true, hidden: SEARCH_DOT_FILES, fileType: FileType.File, maxResults: 500, confine, signal: ctx.signal });
    candidates = found.matches.map((m) => m.path);
  } catch {
    return [];
  }
  const wanted = (relativeInside(ctx.cwd, abs) ?? abs).toLowerCase();
  return candidates
    .map((path) => ({ path, score: distance(wanted, path.toLowerCase()) }))
    .sort((a, b) => a.score - b.score || (a.path < b.path ? -1 : 1))
    .slice(0, 5)
    .map((c) => shownPath(c.path));
}

/** One character as a case-insensitive glob piece; glob syntax, and the escape of a byte that is not UTF-8, become `?`. */
function caseless(ch: string): string {
  const lower = ch.toLowerCase();
  const upper = ch.toUpperCase();
  if (lower !== upper) return `[${lower}${upper}]`;
  return /[A-Za-z0-9._\- ]/.test(ch) || (ch.charCodeAt(0) > 127 && !/[\ud800-\udfff]/.test(ch)) ? ch : '?';
}

/** Levenshtein distance. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}
