/**
 * Hashlines: every line `read` shows carries a short hash, and `edit` in
 * hashline mode addresses lines by `line:hash` anchors. An anchor whose hash
 * no longer matches means the file changed since it was read, and the edit
 * is refused before anything is written.
 *
 * The hash of line N proves its position as well as its content: it is the
 * 32-bit FNV-1a hash continued across lines 1..N joined by `\n` (line
 * terminators excluded, so `\n` and `\r\n` files hash alike), shown as its
 * high 16 bits in 4 hex digits. A hash of the line alone would let the
 * anchor of a repeated line (`}`, a blank line) pass after lines above it
 * were inserted or removed, and the edit would land on the wrong line. Any
 * change at or above line N now invalidates N's anchor; changes below it
 * do not. Lines are hashed as the file's exact bytes (text.ts), bytes that
 * are not UTF-8 included; a byte order mark is the file's, not line 1's, and
 * is neither hashed nor edited (edit.ts sets it aside). A U+FFFD in a
 * replace's `text` stands for the escaped byte at the same rank in the
 * lines it replaces.
 */
import { encodeText, restoreEscapes } from './text.ts';
import { type Lines, joinLines, splitLines } from './lines.ts';

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const NEWLINE = 0x0a;

/**
 * The 4-hex-digit hashes of the first `count` lines (default: all; lines
 * hold no `\n`), each covering its line and every line above it (see the
 * module comment).
 */
export function lineHashes(lines: readonly string[], count = lines.length): string[] {
  const hashed = lines.slice(0, count);
  if (hashed.length === 0) return [];
  // One pass over the lines joined by `\n`: each `\n` byte ends a line (escaped bytes are never 0x0a).
  const bytes = encodeText(hashed.join('\n'));
  const hashes: string[] = [];
  let hash = FNV_OFFSET;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === NEWLINE) hashes.push(shown(hash));
    hash = Math.imul(hash ^ bytes[i]!, FNV_PRIME) >>> 0;
  }
  hashes.push(shown(hash));
  return hashes;
}

/** The high 16 bits of a 32-bit hash, as 4 hex digits. */
function shown(hash: number): string {
  return (hash >>> 16).toString(16).padStart(4, '0');
}

/** `  12:a3f0| text`, the number padded to `width`; `hash` is the line's from {@link lineHashes}. */
export function formatHashline(lineNumber: number, hash: string, line: string, width: number): string {
  return `${String(lineNumber).padStart(width)}:${hash}| ${line}`;
}

/** One hashline edit operation. */
export interface HashlineOperation {
  /**
   * `replace`: lines `anchor`..`end` become `text`;
   * `delete`: lines `anchor`..`end` are removed;
   * `insert_after` / `insert_before`: `text` goes after / before line `anchor`.
   */
  op: 'replace' | 'delete' | 'insert_after' | 'insert_before';
  /** `line:hash` as shown by `read`, e.g. `12:a3f0`. */
  anchor: string;
  /** Last line of a `replace`/`delete` range (`line:hash`); default: `anchor`'s line. */
  end?: string;
  /** New lines (split on `\n`; one final `\n` is ignored). Required for `replace` and inserts. */
  text?: string;
}

/** Why a hashline edit was refused. */
export class HashlineError extends Error {
  constructor(
    readonly code: 'STALE' | 'INVALID_ARGS',
    message: string,
    readonly line?: number,
  ) {
    super(message);
  }
}

const OPS = new Set(['replace', 'delete', 'insert_after', 'insert_before']);

interface Anchor {
  line: number;
  hash: string;
}

function parseAnchor(raw: unknown, what: string): Anchor {
  const match = typeof raw === 'string' ? /^\s*(\d+)\s*:\s*([0-9a-fA-F]{4})\s*(\|.*)?$/s.exec(raw) : null;
  if (!match) throw new HashlineError('INVALID_ARGS', `${what} ${JSON.stringify(raw)} is not a \`line:hash\` anchor like "12:a3f0".`);
  return { line: Number(match[1]), hash: match[2]!.toLowerCase() };
}

/** Check `anchor` against the current lines and their hashes; a mismatch is `STALE`, naming the line. */
function verify(anchor: Anchor, lines: Lines, hashes: readonly string[]): void {
  const current = lines.text[anchor.line - 1];
  if (anchor.line < 1 || current === undefined) {
    throw new HashlineError(
      'STALE',
      `Line ${anchor.line} does not exist any more (the file has ${lines.text.length} lines): it changed since it was read. Read it again and retry.`,
      anchor.line,
    );
  }
  const now = hashes[anchor.line - 1]!;
  if (now !== anchor.hash) {
    throw new HashlineError(
      'STALE',
      `Line ${anchor.line} or a line above it changed since the file was read (anchor ${anchor.line}:${anchor.hash}, now ${anchor.line}:${now}: ${JSON.stringify(current)}). Read the file again and retry.`,
      anchor.line,
    );
  }
}

function newLines(text: string | undefined, op: string): string[] {
  if (typeof text !== 'string') throw new HashlineError('INVALID_ARGS', `\`${op}\` needs \`text\`.`);
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  return body.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

/** The operations of one call, verified and grouped by the original line they touch. */
interface Plan {
  /** Replaced or deleted ranges of original lines, sorted, not overlapping. */
  ranges: { start: number; end: number; lines: string[] | undefined }[];
  /** Lines inserted before / after original line N. */
  before: Map<number, string[]>;
  after: Map<number, string[]>;
}

/**
 * Apply `ops` to `content`. Every anchor is verified before anything
 * changes (the first stale one, in operation order, is named); ranges may
 * not overlap. Returns the new content.
 */
export function applyHashlineEdits(content: string, ops: readonly HashlineOperation[]): { content: string; changedLines: number } {
  if (!Array.isArray(ops) || ops.length === 0) throw new HashlineError('INVALID_ARGS', '`edits` must be a non-empty array of operations.');
  const lines = splitLines(content);
  const plan = planEdits(lines, ops);
  return rebuild(lines, plan);
}

/** Verify every operation's anchors and group the operations by line. */
function planEdits(lines: Lines, ops: readonly HashlineOperation[]): Plan {
  const hashes = lineHashes(lines.text);
  const plan: Plan = { ranges: [], before: new Map(), after: new Map() };
  ops.forEach((op, index) => {
    const where = `edits[${index}]`;
    if (typeof op !== 'object' || op === null || !OPS.has(op.op)) {
      throw new HashlineError('INVALID_ARGS', `${where}.op must be one of replace, delete, insert_after, insert_before.`);
    }
    const start = parseAnchor(op.anchor, `${where}.anchor`);
    verify(start, lines, hashes);
    if (op.op === 'insert_after' || op.op === 'insert_before') {
      const into = op.op === 'insert_after' ? plan.after : plan.before;
      into.set(start.line, [...(into.get(start.line) ?? []), ...newLines(op.text, op.op)]);
      return;
    }
    const end = rangeEnd(op, start, where, lines, hashes);
    plan.ranges.push({ start: start.line, end, lines: op.op === 'replace' ? replacing(lines, start.line, end, op.text, where) : undefined });
  });
  plan.ranges.sort((a, b) => a.start - b.start);
  refuseOverlaps(plan.ranges);
  return plan;
}

/**
 * The new lines of a replace of lines `start`..`end`, each U+FFFD standing
 * for the escaped byte at the same rank in those lines (text.ts).
 */
function replacing(lines: Lines, start: number, end: number, text: string | undefined, where: string): string[] {
  const written = newLines(text, 'replace');
  const restored = restoreEscapes(written.join('\n'), lines.text.slice(start - 1, end).join('\n'));
  if (restored === undefined) {
    throw new HashlineError(
      'INVALID_ARGS',
      `${where}: lines ${start}-${end} hold bytes that are not UTF-8 (shown as \u{fffd}), and \`text\` holds a different number of \u{fffd}: keep one \u{fffd} for each such byte, in order.`,
      start,
    );
  }
  return restored.split('\n');
}

/** The last line of a replace/delete range: its verified `end` anchor, or the anchor's own line. */
function rangeEnd(op: HashlineOperation, start: Anchor, where: string, lines: Lines, hashes: readonly string[]): number {
  if (op.end === undefined || op.end === null) return start.line;
  const end = parseAnchor(op.end, `${where}.end`);
  verify(end, lines, hashes);
  if (end.line < start.line) throw new HashlineError('INVALID_ARGS', `${where}: end line ${end.line} is before anchor line ${start.line}.`);
  return end.line;
}

function refuseOverlaps(ranges: Plan['ranges']): void {
  for (let i = 1; i < ranges.length; i++) {
    const [a, b] = [ranges[i - 1]!, ranges[i]!];
    if (b.start <= a.end) {
      throw new HashlineError('INVALID_ARGS', `Edits overlap: lines ${a.start}-${a.end} and ${b.start}-${b.end}; merge them into one operation.`);
    }
  }
}

/**
 * One pass over the original lines, so no operation shifts another's line
 * numbers. New lines get the file's line ending; a replaced range's last
 * terminator carries over, and a new last line keeps the file's "no
 * newline at end of file" state.
 */
function rebuild(lines: Lines, plan: Plan): { content: string; changedLines: number } {
  const outText: string[] = [];
  const outEol: (string | undefined)[] = [];
  let changed = 0;
  const emitNew = (added: readonly string[] | undefined) => {
    for (const line of added ?? []) {
      outText.push(line);
      outEol.push(undefined);
    }
    changed += added?.length ?? 0;
  };
  let r = 0;
  for (let n = 1; n <= lines.text.length; n++) {
    emitNew(plan.before.get(n));
    const range = plan.ranges[r];
    if (range && n >= range.start && n <= range.end) {
      if (n === range.start) {
        emitNew(range.lines);
        changed += Math.max(range.end - range.start + 1, range.lines?.length ?? 0) - (range.lines?.length ?? 0);
      }
      if (n === range.end) {
        if (outText.length > 0 && outEol[outEol.length - 1] === undefined && range.lines?.length) outEol[outEol.length - 1] = lines.eol[n - 1];
        r++;
      }
    } else {
      outText.push(lines.text[n - 1]!);
      outEol.push(lines.eol[n - 1]);
    }
    emitNew(plan.after.get(n));
  }
  if (outText.length > 0 && outEol[outEol.length - 1] === undefined) {
    outEol[outEol.length - 1] = lines.eol[lines.eol.length - 1] === '' ? '' : lines.newline;
  }
  const eol = outEol.map((e) => e ?? lines.newline);
  return { content: joinLines(outText, eol, lines.newline), changedLines: changed };
}
