/**
 * Unified diffs: parse them (`--- a/x` / `+++ b/x` headers, `@@ -l,s +l,s @@`
 * hunks, `/dev/null` for creation and deletion, git's `rename from` /
 * `rename to`) and apply them to text held in memory.
 *
 * Applying is exact: a hunk's context and removed lines must match the file
 * line for line (terminators aside). A hunk may sit at a different line
 * than its header says: it is placed at the matching position nearest to the
 * header's line (plus the shift of earlier hunks), searching the whole file
 * after the previous hunk. Header line counts are trusted when they agree
 * with the hunk body; when a hunk runs past them, the extra `+`/`-`/` `
 * lines still belong to it.
 */
import { joinLines, splitLines } from './hashline.ts';

/** One hunk line. */
interface HunkLine {
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
  hunks: Hunk[];
}

/** Why a diff was refused. */
export class PatchError extends Error {}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** A path from a `---`/`+++`/`rename` line: `/dev/null` is `undefined`; `a/` and `b/` prefixes are dropped. */
function headerPath(raw: string, prefix: 'a/' | 'b/' | ''): string | undefined {
  let path = raw.replace(/\t.*$/, '').trim();
  if (path.startsWith('"') && path.endsWith('"') && path.length >= 2) path = JSON.parse(path) as string;
  if (path === '/dev/null') return undefined;
  if (prefix !== '' && path.startsWith(prefix)) path = path.slice(2);
  if (path === '') throw new PatchError(`empty path in header ${JSON.stringify(raw)}`);
  return path;
}

/** Parse a unified diff into per-file patches. */
export function parsePatch(diff: string): FilePatch[] {
  const lines = diff.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  if (lines.at(-1) === '') lines.pop();
  const files: FilePatch[] = [];
  let i = 0;
  while (i < lines.length) {
    let renameFrom: string | undefined;
    let renameTo: string | undefined;
    let gitOld: string | undefined;
    let gitNew: string | undefined;
    let sawGit = false;
    // Git extended headers, when present.
    const git = /^diff --git (\S+) (\S+)$/.exec(lines[i]!);
    if (git) {
      sawGit = true;
      gitOld = headerPath(git[1]!, 'a/');
      gitNew = headerPath(git[2]!, 'b/');
      i++;
      while (i < lines.length && !lines[i]!.startsWith('--- ') && !lines[i]!.startsWith('diff --git ')) {
        const line = lines[i]!;
        if (line.startsWith('rename from ')) renameFrom = headerPath(line.slice(12), '');
        else if (line.startsWith('rename to ')) renameTo = headerPath(line.slice(10), '');
        else if (line.startsWith('new file mode')) gitOld = undefined;
        else if (line.startsWith('deleted file mode')) gitNew = undefined;
        else if (line.startsWith('GIT binary patch') || line.startsWith('Binary files ')) {
          throw new PatchError(`binary diffs are not supported (${gitNew ?? gitOld})`);
        }
        i++;
      }
    } else if (!lines[i]!.startsWith('--- ')) {
      // Text between file sections (a commit message, `index` lines) is ignored.
      i++;
      continue;
    }
    let oldPath = renameFrom ?? gitOld;
    let newPath = renameTo ?? gitNew;
    if (i < lines.length && lines[i]!.startsWith('--- ')) {
      if (!lines[i + 1]?.startsWith('+++ ')) throw new PatchError(`line ${i + 1}: \`---\` header without a \`+++\` line after it`);
      oldPath = headerPath(lines[i]!.slice(4), 'a/');
      newPath = headerPath(lines[i + 1]!.slice(4), 'b/');
      if (renameFrom !== undefined && oldPath !== undefined) oldPath = renameFrom;
      if (renameTo !== undefined && newPath !== undefined) newPath = renameTo;
      i += 2;
    } else if (sawGit && renameFrom === undefined && gitOld !== undefined && gitNew !== undefined) {
      // A git section without hunks that neither renames, creates nor deletes (a mode change): nothing to do.
      continue;
    }
    if (oldPath === undefined && newPath === undefined) throw new PatchError(`line ${i}: both sides of a file header are /dev/null`);
    const hunks: Hunk[] = [];
    while (i < lines.length && HUNK_HEADER.test(lines[i]!)) {
      const header = HUNK_HEADER.exec(lines[i]!)!;
      let oldLeft = header[2] === undefined ? 1 : Number(header[2]);
      let newLeft = header[4] === undefined ? 1 : Number(header[4]);
      const hunk: Hunk = { oldStart: Number(header[1]), newStart: Number(header[3]), lines: [] };
      i++;
      while (i < lines.length) {
        const line = lines[i]!;
        if (line.startsWith('\\')) {
          const last = hunk.lines.at(-1);
          if (last) last.noEol = true;
          i++;
          continue;
        }
        if (line.startsWith('@@') || line.startsWith('diff --git ')) break;
        if (line.startsWith('--- ') && lines[i + 1]?.startsWith('+++ ') && (lines[i + 2]?.startsWith('@@') || (oldLeft <= 0 && newLeft <= 0))) break;
        const counted = oldLeft > 0 || newLeft > 0;
        let kind: HunkLine['kind'];
        if (line === '') {
          // An empty line is context (editors strip the lone space), but not past the counts: there it ends the hunk.
          if (!counted) break;
          kind = ' ';
        } else if (line[0] === ' ' || line[0] === '-' || line[0] === '+') kind = line[0];
        else break;
        hunk.lines.push({ kind, text: line === '' ? '' : line.slice(1), noEol: false });
        if (kind !== '+') oldLeft--;
        if (kind !== '-') newLeft--;
        i++;
      }
      if (hunk.lines.length === 0) throw new PatchError(`hunk ${header[0]} is empty`);
      hunks.push(hunk);
    }
    files.push({ oldPath, newPath, hunks });
  }
  if (files.length === 0) throw new PatchError('no file headers found (expected `--- a/path` and `+++ b/path` lines)');
  return files;
}

/**
 * Apply one file's hunks to `content` (`undefined` when the file does not
 * exist: only a creation applies). Returns the new content, or `undefined`
 * for a deletion. Throws a {@link PatchError} saying which hunk failed.
 */
export function applyFilePatch(content: string | undefined, patch: FilePatch, label: string): string | undefined {
  if (patch.oldPath === undefined) {
    if (content !== undefined) throw new PatchError(`${label}: the diff creates it, but it already exists`);
    const added = patch.hunks.flatMap((h) => h.lines);
    if (added.some((l) => l.kind !== '+')) throw new PatchError(`${label}: a creation may only add lines`);
    return joinLines(
      added.map((l) => l.text),
      added.map((l, n) => (n === added.length - 1 && l.noEol ? '' : '\n')),
      '\n',
    );
  }
  if (content === undefined) throw new PatchError(`${label}: the file does not exist`);
  const lines = splitLines(content);
  const text = [...lines.text];
  const eol = [...lines.eol];
  let shift = 0;
  let floor = 0;
  patch.hunks.forEach((hunk, index) => {
    const old = hunk.lines.filter((l) => l.kind !== '+');
    const expected = Math.max(0, (old.length === 0 ? hunk.oldStart : hunk.oldStart - 1) + shift);
    const at = findBlock(text, old, expected, floor);
    if (at === undefined) {
      const first = old[0];
      throw new PatchError(
        `${label}: hunk ${index + 1} (@@ -${hunk.oldStart} @@) does not apply: its ${old.length} context/removed lines` +
          (first ? ` (starting ${JSON.stringify(first.text)})` : '') +
          ` were not found in the file${index > 0 ? ' after the previous hunk' : ''}`,
      );
    }
    const newText: string[] = [];
    const newEol: string[] = [];
    let o = at;
    for (const line of hunk.lines) {
      if (line.kind === '-') {
        o++;
        continue;
      }
      newText.push(line.text);
      if (line.kind === ' ') newEol.push(line.noEol ? '' : eol[o]!);
      else newEol.push(line.noEol ? '' : lines.newline);
      if (line.kind === ' ') o++;
    }
    text.splice(at, old.length, ...newText);
    eol.splice(at, old.length, ...newEol);
    shift += newText.length - old.length;
    floor = at + newText.length;
  });
  if (patch.newPath === undefined) {
    // A deletion without hunks deletes whatever the file holds; with hunks, they must remove every line.
    if (patch.hunks.length > 0 && text.length > 0) throw new PatchError(`${label}: the diff deletes it, but ${text.length} line(s) would remain`);
    return undefined;
  }
  return joinLines(text, eol, lines.newline);
}

/** The index of `block` in `text` at or after `floor`, nearest to `expected`. */
function findBlock(text: readonly string[], block: readonly HunkLine[], expected: number, floor: number): number | undefined {
  const last = text.length - block.length;
  const matches = (at: number) => block.every((line, k) => text[at + k] === line.text);
  for (let distance = 0; ; distance++) {
    const down = expected + distance;
    const up = expected - distance;
    if (down > last && up < floor) return undefined;
    if (up >= floor && up <= last && matches(up)) return up;
    if (down !== up && down >= floor && down <= last && matches(down)) return down;
  }
}
