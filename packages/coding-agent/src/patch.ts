/**
 * Unified diffs: parse them and apply them to text held in memory.
 *
 * Parsing takes plain sections (`--- a/x` / `+++ b/x` headers, `/dev/null`
 * for creation and deletion) and git sections, each parsed whole from its
 * `diff --git` line: `rename from`/`rename to` (with or without hunks),
 * `new file mode`, `deleted file mode`, `old mode`/`new mode`, `index`,
 * `similarity index`. Names are read as git writes them: with spaces
 * (`--- a/my file.txt` plus the tab git appends; a header-only section
 * takes its names from `rename from`/`rename to` or from a `diff --git
 * a/X b/X` line whose two names are equal) and C-quoted
 * (`"a/t\303\251st \"q\".txt"`: octal bytes, `\t`, `\n`, `\\`, `\"`...) in
 * every header line; a name whose bytes are not UTF-8 is kept byte for byte
 * (names.ts). The names of a section's header lines
 * must agree.
 *
 * No section is parsed and then skipped: what is not supported refuses the
 * whole patch, naming the file — binary diffs, symbolic links (mode
 * 120000), submodules (160000), copies, a section that changes nothing —
 * and so does a hunk that is cut short by a line that is not part of a
 * diff, or a hunk outside any file section. Text before, between and after
 * sections (a commit message, `diff -r` lines) is otherwise ignored.
 *
 * Applying is hunks.ts's.
 */
import { unquote as unquoteName } from './names.ts';

/** One hunk line. */
export interface HunkLine {
  kind: ' ' | '-' | '+';
  text: string;
  /** Followed by `\ No newline at end of file`. */
  noEol: boolean;
}

/** One `@@` hunk. */
export interface Hunk {
  oldStart: number;
  newStart: number;
  lines: HunkLine[];
}

/** The diff of one file. */
export interface FilePatch {
  /** The old path (`undefined` for a creation). */
  oldPath: string | undefined;
  /** The new path (`undefined` for a deletion). */
  newPath: string | undefined;
  /** The file moves from `oldPath` to `newPath` (git's `rename from`/`rename to`, or two different names in the headers). */
  rename: boolean;
  /** The git mode the file ends up with, when the diff says (`new file mode`, `new mode`): 0o100644 or 0o100755. */
  newMode?: number;
  hunks: Hunk[];
}

/** Why a diff was refused. */
export class PatchError extends Error {}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;
const BINARY_FILES = /^Binary files (.*) and (.*) differ$/;
/** The mode after the hashes of an `index` line: `index 1a2b..3c4d 100644`. */
const INDEX_MODE = / (\S+)$/;

/** The lines of a diff and the index of the next one to read. */
interface Cursor {
  readonly lines: readonly string[];
  at: number;
}

/** Parse a unified diff into per-file patches. */
export function parsePatch(diff: string): FilePatch[] {
  const lines = diff.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  if (lines.at(-1) === '') lines.pop();
  const cursor: Cursor = { lines, at: 0 };
  const files: FilePatch[] = [];
  while (cursor.at < lines.length) {
    const line = lines[cursor.at]!;
    if (line.startsWith('diff --git ')) files.push(gitSection(cursor));
    else if (line.startsWith('--- ')) files.push(plainSection(cursor));
    else {
      refuseStrayLine(line, cursor.at + 1);
      cursor.at++;
    }
  }
  if (files.length === 0) throw new PatchError('no file headers found (expected `--- a/path` and `+++ b/path` lines)');
  return files;
}

/** Text outside the file sections is ignored, unless it is a hunk or a binary diff that would be lost. */
function refuseStrayLine(line: string, number: number): void {
  if (HUNK_HEADER.test(line)) {
    throw new PatchError(`line ${number}: a hunk outside any file section (it needs \`---\`/\`+++\` lines before it, and the hunk before it must not end early)`);
  }
  const binary = BINARY_FILES.exec(line);
  if (binary) throw new PatchError(`binary diffs are not supported (${headerPath(binary[2]!, 'b/') ?? headerPath(binary[1]!, 'a/')})`);
  if (line === 'GIT binary patch') throw new PatchError(`line ${number}: binary diffs are not supported`);
}

/** A section without a `diff --git` line: `---`, `+++`, hunks. */
function plainSection(cursor: Cursor): FilePatch {
  const line = cursor.at + 1;
  const names = fileHeaders(cursor);
  if (names.old === undefined && names.new === undefined) throw new PatchError(`line ${line}: both sides of a file header are /dev/null`);
  const hunks = parseHunks(cursor, (names.new ?? names.old)!);
  return { oldPath: names.old, newPath: names.new, rename: isRename(names.old, names.new), hunks };
}

/** The two sides of a file; `undefined` is /dev/null. */
interface Sides {
  old: string | undefined;
  new: string | undefined;
}

function isRename(oldPath: string | undefined, newPath: string | undefined): boolean {
  return oldPath !== undefined && newPath !== undefined && oldPath !== newPath;
}

/** The `---` and `+++` lines at the cursor. */
function fileHeaders(cursor: Cursor): Sides {
  const minus = cursor.lines[cursor.at]!;
  const plus = cursor.lines[cursor.at + 1];
  if (!plus?.startsWith('+++ ')) throw new PatchError(`line ${cursor.at + 1}: \`---\` header without a \`+++\` line after it`);
  cursor.at += 2;
  return { old: headerPath(minus.slice(4), 'a/'), new: headerPath(plus.slice(4), 'b/') };
}

/** What the lines of a git section's header say. */
interface GitHeader {
  /** 1-based line of `diff --git`. */
  line: number;
  /** The text after `diff --git `. */
  raw: string;
  /** The names of the `diff --git` line, when it tells them apart. */
  names: Sides | undefined;
  renameFrom?: string;
  renameTo?: string;
  copyFrom?: string;
  copyTo?: string;
  newFileMode?: number;
  deletedFileMode?: number;
  oldMode?: number;
  newMode?: number;
  indexMode?: number;
  binary: boolean;
}

/** Git's extended header lines, by prefix, and what each records. */
const GIT_HEADER_LINES: [string, (header: GitHeader, value: string) => void][] = [
  ['old mode ', (h, v) => (h.oldMode = parseMode(v))],
  ['new mode ', (h, v) => (h.newMode = parseMode(v))],
  ['deleted file mode ', (h, v) => (h.deletedFileMode = parseMode(v))],
  ['new file mode ', (h, v) => (h.newFileMode = parseMode(v))],
  ['rename from ', (h, v) => (h.renameFrom = headerName(v))],
  ['rename to ', (h, v) => (h.renameTo = headerName(v))],
  ['copy from ', (h, v) => (h.copyFrom = headerName(v))],
  ['copy to ', (h, v) => (h.copyTo = headerName(v))],
  ['similarity index ', () => {}],
  ['dissimilarity index ', () => {}],
  [
    'index ',
    (h, v) => {
      const mode = INDEX_MODE.exec(v)?.[1];
      if (mode !== undefined) h.indexMode = parseMode(mode);
    },
  ],
  ['GIT binary patch', (h) => (h.binary = true)],
  ['Binary files ', (h) => (h.binary = true)],
];

/** A section from its `diff --git` line: the extended header, then `---`/`+++` and hunks when it has them. */
function gitSection(cursor: Cursor): FilePatch {
  const header = gitHeader(cursor);
  const next = cursor.lines[cursor.at];
  const files = next?.startsWith('--- ') ? fileHeaders(cursor) : undefined;
  if (!files && next !== undefined) refuseStrayLine(next, cursor.at + 1);
  const file = gitFile(header, files);
  if (files) file.hunks = parseHunks(cursor, (file.newPath ?? file.oldPath)!);
  return file;
}

/** Read the `diff --git` line and the extended header lines after it. */
function gitHeader(cursor: Cursor): GitHeader {
  const raw = cursor.lines[cursor.at]!.slice('diff --git '.length);
  const header: GitHeader = { line: cursor.at + 1, raw, names: gitLineNames(raw), binary: false };
  for (cursor.at++; cursor.at < cursor.lines.length; cursor.at++) {
    const line = cursor.lines[cursor.at]!;
    const known = GIT_HEADER_LINES.find(([prefix]) => line.startsWith(prefix));
    if (!known) break;
    known[1](header, line.slice(known[0].length));
  }
  return header;
}

/** The file a git section changes, refusing what is not supported and header lines that disagree. */
function gitFile(header: GitHeader, files: Sides | undefined): FilePatch {
  const label = header.renameTo ?? header.names?.new ?? files?.new ?? files?.old ?? header.renameFrom ?? header.raw;
  refuseUnsupported(header, label);
  refuseContradictions(header, files, label);
  const { old: oldPath, new: newPath } = gitPaths(header, files);
  const newMode = header.newFileMode ?? header.newMode;
  const rename = isRename(oldPath, newPath);
  if (!files && !rename && oldPath !== undefined && newPath !== undefined && newMode === undefined) {
    throw new PatchError(`line ${header.line}: the \`diff --git\` section changes nothing (${label}): it has no hunks, rename, mode, creation or deletion`);
  }
  const file: FilePatch = { oldPath, newPath, rename, hunks: [] };
  if (newMode !== undefined) file.newMode = newMode;
  return file;
}

/** Refuse header lines that contradict each other (apart from names, see {@link gitPaths}). */
function refuseContradictions(header: GitHeader, files: Sides | undefined, label: string): void {
  if (header.renameFrom !== undefined && header.renameTo === undefined) throw new PatchError(`\`rename from\` without \`rename to\` (${header.renameFrom})`);
  if (header.renameTo !== undefined && header.renameFrom === undefined) throw new PatchError(`\`rename to\` without \`rename from\` (${header.renameTo})`);
  if (header.newFileMode !== undefined && files?.old !== undefined) throw new PatchError(`line ${header.line}: the section creates ${label}, but its \`---\` line is not /dev/null`);
  if (header.deletedFileMode !== undefined && files?.new !== undefined) throw new PatchError(`line ${header.line}: the section deletes ${label}, but its \`+++\` line is not /dev/null`);
}

/**
 * The old and new paths of a git section (`undefined` for a creation's old
 * side and a deletion's new side): every header line naming a side must
 * agree, and at least one must name it.
 */
function gitPaths(header: GitHeader, files: Sides | undefined): Sides {
  const created = header.newFileMode !== undefined || (files !== undefined && files.old === undefined);
  const deleted = header.deletedFileMode !== undefined || (files !== undefined && files.new === undefined);
  if (created && deleted) throw new PatchError(`line ${header.line}: both sides of a file header are /dev/null`);
  const oldPath = created ? undefined : agreedName(header.line, [['`diff --git` line', header.names?.old], ['`rename from` line', header.renameFrom], ['`---` line', files?.old]]);
  const newPath = deleted ? undefined : agreedName(header.line, [['`diff --git` line', header.names?.new], ['`rename to` line', header.renameTo], ['`+++` line', files?.new]]);
  if ((!created && oldPath === undefined) || (!deleted && newPath === undefined)) {
    throw new PatchError(`line ${header.line}: cannot tell the file names apart in \`diff --git ${header.raw}\`; give them in \`---\`/\`+++\` or \`rename from\`/\`rename to\` lines`);
  }
  return { old: oldPath, new: newPath };
}

/** Refuse binary diffs, copies, and modes other than a regular file's, naming the file. */
function refuseUnsupported(header: GitHeader, label: string): void {
  if (header.binary) throw new PatchError(`binary diffs are not supported (${label})`);
  if (header.copyFrom !== undefined || header.copyTo !== undefined) throw new PatchError(`copies are not supported (${header.copyFrom} -> ${header.copyTo})`);
  for (const mode of [header.oldMode, header.newMode, header.newFileMode, header.deletedFileMode, header.indexMode]) {
    if (mode === undefined || (mode & 0o170000) === 0o100000) continue;
    if (mode === 0o120000) throw new PatchError(`symbolic links are not supported (${label})`);
    if (mode === 0o160000) throw new PatchError(`submodules are not supported (${label})`);
    throw new PatchError(`unsupported file mode ${mode.toString(8).padStart(6, '0')} (${label})`);
  }
}

/** A git mode: six octal digits. */
function parseMode(raw: string): number {
  if (!/^[0-7]{6}$/.test(raw)) throw new PatchError(`malformed mode ${JSON.stringify(raw)}`);
  return parseInt(raw, 8);
}

/** The one name the header lines that give a side agree on (`undefined` when none does). */
function agreedName(line: number, claims: [string, string | undefined][]): string | undefined {
  const given = claims.filter((claim): claim is [string, string] => claim[1] !== undefined);
  const [first] = given;
  for (const [what, name] of given.slice(1)) {
    if (name !== first![1]) throw new PatchError(`line ${line}: the ${what} names ${name}, but the ${first![0]} names ${first![1]}`);
  }
  return first?.[1];
}

/**
 * The names of a `diff --git` line without their `a/` and `b/` prefixes,
 * when it tells them apart: either is C-quoted, or both are unquoted and
 * equal (names may hold spaces, so only equal names split unambiguously).
 */
function gitLineNames(raw: string): Sides | undefined {
  if (raw.startsWith('"')) {
    const first = unquote(raw, 0);
    if (raw[first.end] !== ' ') throw new PatchError(`expected a space after the quoted name in \`diff --git ${raw}\``);
    return { old: stripPrefix(first.name, 'a/'), new: stripPrefix(headerName(raw.slice(first.end + 1)), 'b/') };
  }
  // An unquoted name never holds a double quote (git quotes such names).
  const quoted = raw.indexOf(' "');
  if (quoted !== -1) return { old: stripPrefix(raw.slice(0, quoted), 'a/'), new: stripPrefix(headerName(raw.slice(quoted + 1)), 'b/') };
  for (let space = raw.indexOf(' '); space !== -1; space = raw.indexOf(' ', space + 1)) {
    const old = stripPrefix(raw.slice(0, space), 'a/');
    if (old === stripPrefix(raw.slice(space + 1), 'b/')) return { old, new: old };
  }
  return undefined;
}

/** A path from a `---`/`+++` line (or a `Binary files` line): `/dev/null` is `undefined`; the `a/` or `b/` prefix is dropped. */
function headerPath(raw: string, prefix: 'a/' | 'b/'): string | undefined {
  const name = headerName(raw);
  return name === '/dev/null' ? undefined : stripPrefix(name, prefix);
}

/**
 * The name a header line gives: C-quoted (only blanks, or a tab and a
 * timestamp, may follow) or plain (up to a tab, trimmed).
 */
function headerName(raw: string): string {
  if (!raw.startsWith('"')) return nonEmpty(raw.replace(/\t.*$/, '').trim(), raw);
  const { name, end } = unquote(raw, 0);
  const rest = raw.slice(end);
  if (rest.trim() !== '' && !rest.startsWith('\t')) throw new PatchError(`unexpected text after the quoted name in ${JSON.stringify(raw)}`);
  return nonEmpty(name, raw);
}

function stripPrefix(name: string, prefix: 'a/' | 'b/'): string {
  return nonEmpty(name.startsWith(prefix) ? name.slice(prefix.length) : name, name);
}

function nonEmpty(name: string, raw: string): string {
  if (name === '') throw new PatchError(`empty path in header ${JSON.stringify(raw)}`);
  return name;
}

/** The C-quoted name starting at `raw[start]` (see names.ts: bytes that are not UTF-8 are kept, escaped). */
function unquote(raw: string, start: number): { name: string; end: number } {
  try {
    return unquoteName(raw, start);
  } catch (error) {
    if (error instanceof RangeError) throw new PatchError(error.message);
    throw error;
  }
}

/**
 * The hunks at the cursor. A hunk ends at the next hunk or file section,
 * or (once its header's counts are used up) at any line that is not part
 * of it; a line that is not a hunk line before the counts are used up
 * refuses the patch, so no part of a hunk is ever dropped.
 */
function parseHunks(cursor: Cursor, label: string): Hunk[] {
  const { lines } = cursor;
  const hunks: Hunk[] = [];
  while (cursor.at < lines.length && HUNK_HEADER.test(lines[cursor.at]!)) {
    const header = HUNK_HEADER.exec(lines[cursor.at]!)!;
    let oldLeft = header[2] === undefined ? 1 : Number(header[2]);
    let newLeft = header[4] === undefined ? 1 : Number(header[4]);
    const hunk: Hunk = { oldStart: Number(header[1]), newStart: Number(header[3]), lines: [] };
    for (cursor.at++; cursor.at < lines.length; cursor.at++) {
      const line = lines[cursor.at]!;
      if (line.startsWith('\\')) {
        const last = hunk.lines.at(-1);
        if (last) last.noEol = true;
        continue;
      }
      if (line.startsWith('@@') || line.startsWith('diff --git ')) break;
      if (line.startsWith('--- ') && lines[cursor.at + 1]?.startsWith('+++ ') && (lines[cursor.at + 2]?.startsWith('@@') || (oldLeft <= 0 && newLeft <= 0))) break;
      const counted = oldLeft > 0 || newLeft > 0;
      let kind: HunkLine['kind'];
      if (line === '') {
        // An empty line is context (editors strip the lone space), but not past the counts: there it ends the hunk.
        if (!counted) break;
        kind = ' ';
      } else if (line[0] === ' ' || line[0] === '-' || line[0] === '+') kind = line[0];
      else if (!counted) break;
      else {
        throw new PatchError(
          `line ${cursor.at + 1}: hunk ${hunks.length + 1} of ${label} ends before its header's line counts, at a line that is not context (' '), removed ('-') or added ('+')`,
        );
      }
      hunk.lines.push({ kind, text: line === '' ? '' : line.slice(1), noEol: false });
      if (kind !== '+') oldLeft--;
      if (kind !== '-') newLeft--;
    }
    if (hunk.lines.length === 0) throw new PatchError(`hunk ${header[0]} is empty`);
    hunks.push(hunk);
  }
  return hunks;
}
