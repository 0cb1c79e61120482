/**
 * Applying a parsed file patch (patch.ts) to the text a file holds.
 *
 * Placing: a hunk's context and removed lines must match the file line for
 * line (terminators aside; an escaped byte matches the U+FFFD `read`
 * showed). A hunk may sit at a different line than its header says: it is
 * placed at the matching position nearest to the header's line, at or after
 * the end of the previous hunk, in time linear in the file (placement.ts).
 *
 * What a hunk writes: context lines stay exactly as the file has them. An
 * added line takes the terminator of the removed line it replaces (the
 * same rank in its run of changes), else that of the line before it, else
 * of the line after it, else the file's usual one, so a line replaced in a
 * file that mixes CRLF and LF keeps its own ending, and `\ No newline at
 * end of file` after it means none. A U+FFFD in an added line stands for
 * the escaped byte at the same rank in the hunk's removed lines (text.ts).
 *
 * A byte order mark belongs to the file: it is set aside before placing
 * (and dropped from hunk lines that copied it), and put back in front.
 */
import { type Lines, joinLines, splitLines } from './lines.ts';
import { type FilePatch, type Hunk, type HunkLine, PatchError } from './patch.ts';
import { LineIndex } from './placement.ts';
import { displayText, findLoneSurrogate, restoreEscapes, splitBom } from './text.ts';

/**
 * Apply one file's hunks to `content` (`undefined` when the file does not
 * exist: only a creation applies). Returns the new content, or `undefined`
 * for a deletion. Throws a {@link PatchError} saying which hunk failed.
 */
export function applyFilePatch(content: string | undefined, patch: FilePatch, label: string): string | undefined {
  if (patch.oldPath === undefined) return created(content, patch, label);
  if (content === undefined) throw new PatchError(`${label}: the file does not exist`);
  const { bom, body } = splitBom(content);
  const file = splitLines(body);
  const hunks = bom === '' ? patch.hunks : patch.hunks.map(withoutBom);
  const places = placeHunks(file, body, hunks, label);
  const result = rebuild(file, hunks, places, label);
  if (patch.newPath === undefined) {
    // A deletion without hunks deletes whatever the file holds; with hunks, they must remove every line.
    if (hunks.length > 0 && result.text.length > 0) throw new PatchError(`${label}: the diff deletes it, but ${result.text.length} line(s) would remain`);
    return undefined;
  }
  return bom + joinLines(result.text, result.eol, file.newline);
}

/** The text of a file the patch creates: its added lines, nothing else. */
function created(content: string | undefined, patch: FilePatch, label: string): string {
  if (content !== undefined) throw new PatchError(`${label}: the diff creates it, but it already exists`);
  const added = patch.hunks.flatMap((h) => h.lines);
  if (added.some((l) => l.kind !== '+')) throw new PatchError(`${label}: a creation may only add lines`);
  return joinLines(
    added.map((l) => l.text),
    added.map((l, n) => (n === added.length - 1 && l.noEol ? '' : '\n')),
    '\n',
  );
}

/** `hunk` with a leading byte order mark dropped from its lines (copied from a diff of the file's bytes). */
function withoutBom(hunk: Hunk): Hunk {
  return { ...hunk, lines: hunk.lines.map((line) => ({ ...line, text: splitBom(line.text).body })) };
}

/** The hunk's lines as the file has them before it: context and removed. */
function oldLines(hunk: Hunk): HunkLine[] {
  return hunk.lines.filter((l) => l.kind !== '+');
}

/** Where a hunk's old lines start (0-based) by its header. */
function hunkStart(hunk: Hunk): number {
  return oldLines(hunk).length === 0 ? hunk.oldStart : hunk.oldStart - 1;
}

/** Each hunk's position in the original lines, in order and not overlapping. */
function placeHunks(file: Lines, body: string, hunks: readonly Hunk[], label: string): number[] {
  const shown = findLoneSurrogate(body) === -1 ? file.text : splitLines(displayText(body)).text;
  const index = new LineIndex(shown);
  const places: number[] = [];
  let floor = 0;
  hunks.forEach((hunk, n) => {
    const old = oldLines(hunk);
    const at = index.find(
      old.map((l) => l.text),
      Math.max(0, hunkStart(hunk)),
      floor,
    );
    if (at === 'budget') {
      throw new PatchError(
        `${label}: hunk ${n + 1} (@@ -${hunk.oldStart} @@) was searched for too long: the hunks' @@ line numbers are far from where their lines are; give the right line numbers`,
      );
    }
    if (at === 'missing') throw hunkMismatch(hunk, n, label);
    places.push(at);
    floor = at + old.length;
  });
  return places;
}

function hunkMismatch(hunk: Hunk, index: number, label: string): PatchError {
  const old = oldLines(hunk);
  const first = old[0];
  return new PatchError(
    `${label}: hunk ${index + 1} (@@ -${hunk.oldStart} @@) does not apply: its ${old.length} context/removed lines` +
      (first ? ` (starting ${JSON.stringify(first.text)})` : '') +
      ` were not found in the file${index > 0 ? ' after the previous hunk' : ''}`,
  );
}

/** The file's lines with every placed hunk applied. */
function rebuild(file: Lines, hunks: readonly Hunk[], places: readonly number[], label: string): { text: string[]; eol: string[] } {
  const out = { text: [] as string[], eol: [] as string[] };
  let kept = 0;
  hunks.forEach((hunk, n) => {
    const at = places[n]!;
    for (; kept < at; kept++) emit(out, file.text[kept]!, file.eol[kept]!);
    kept = applyHunk(out, file, hunk, at, label, n);
  });
  for (; kept < file.text.length; kept++) emit(out, file.text[kept]!, file.eol[kept]!);
  return out;
}

function emit(out: { text: string[]; eol: string[] }, text: string, eol: string): void {
  out.text.push(text);
  out.eol.push(eol);
}

/** Append what `hunk` makes of the file's lines from `at`; returns the index of the first line after them. */
function applyHunk(out: { text: string[]; eol: string[] }, file: Lines, hunk: Hunk, at: number, label: string, n: number): number {
  const added = addedTexts(file, hunk, at, label, n);
  let next = 0;
  let o = at;
  // The terminators of the run of removed lines the next added lines replace, and how many are used.
  let replaced: string[] = [];
  let rank = 0;
  for (const line of hunk.lines) {
    if (line.kind === ' ') {
      emit(out, file.text[o]!, file.eol[o]!);
      o++;
      replaced = [];
      rank = 0;
    } else if (line.kind === '-') {
      replaced.push(file.eol[o]!);
      o++;
    } else {
      emit(out, added[next++]!, line.noEol ? '' : (replaced[rank++] ?? neighbourEol(out, file, o)));
    }
  }
  return o;
}

/** The terminator of the nearest terminated line before (in what is written so far) or after (in the file), else the file's usual one. */
function neighbourEol(out: { eol: string[] }, file: Lines, after: number): string {
  const before = out.eol.findLast((eol) => eol !== '');
  if (before !== undefined) return before;
  const next = file.eol[after];
  return next !== undefined && next !== '' ? next : file.newline;
}

/** The hunk's added lines, each U+FFFD back to the escaped byte it stands for in the removed lines. */
function addedTexts(file: Lines, hunk: Hunk, at: number, label: string, n: number): string[] {
  const added = hunk.lines.filter((l) => l.kind === '+').map((l) => l.text);
  let o = at;
  const removed: string[] = [];
  for (const line of hunk.lines) {
    if (line.kind === '-') removed.push(file.text[o]!);
    if (line.kind !== '+') o++;
  }
  const restored = restoreEscapes(added.join('\n'), removed.join('\n'));
  if (restored === undefined) {
    throw new PatchError(
      `${label}: hunk ${n + 1} (@@ -${hunk.oldStart} @@) adds lines holding \u{fffd} where the lines it removes hold bytes that are not UTF-8 (shown as \u{fffd}) in another number; keep one \u{fffd} for each, in order, or use hashline mode`,
    );
  }
  return restored.split('\n');
}
