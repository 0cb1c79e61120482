/**
 * Exact text replacement (`edit` in replace mode), kept apart from the file
 * I/O so its rules can be tested on their own.
 *
 * Matching: `oldText` must occur in the content as the model sees it (an
 * escaped byte as the U+FFFD `read` showed, text.ts). When it does not and
 * it spans lines, it is tried again with its line breaks written as `\r\n`,
 * then as `\n`, then as `\r`, so text copied from a CRLF (or CR) file with
 * `\n` still matches (and the other way round). A U+FFFD in `newText`
 * stands for the escaped byte at the same rank in the text it replaces.
 *
 * Line endings: every line break in `newText` (`\n` or `\r\n`) becomes the
 * line ending of the line the match starts on, so inserted lines follow the
 * lines they replace, one match at a time in a file that mixes endings. A
 * match on a last line without a terminator uses the file's usual ending
 * (CRLF when most lines end so, else LF). Everything outside the matches
 * is left as it was.
 */
import { lineBreak, splitLines } from './lines.ts';
import { displayText, restoreEscapes } from './text.ts';

/** Why a replacement was refused. */
export class ReplaceError extends Error {
  constructor(
    readonly code: 'NO_MATCH' | 'AMBIGUOUS' | 'INVALID_ARGS',
    message: string,
    /** AMBIGUOUS: the lines of every occurrence; NO_MATCH: lines holding the old text's first non-blank line, trimmed. */
    readonly lines: number[],
  ) {
    super(message);
  }
}

/** The result of {@link replaceText}. */
export interface Replacement {
  content: string;
  /** The 1-based line (in the original content) of each replaced occurrence. */
  lines: number[];
}

/**
 * Replace `oldText` with `newText` in `content`: the only occurrence, or
 * every one with `replaceAll`. Throws a {@link ReplaceError}: `NO_MATCH`
 * when there is none, `AMBIGUOUS` when there are several without
 * `replaceAll`; its message names the content as `label`.
 */
export function replaceText(content: string, oldText: string, newText: string, replaceAll: boolean, label = 'the file'): Replacement {
  const { needle, found } = locate(displayText(content), oldText);
  if (found.length === 0) throw noMatch(content, oldText, label);
  const lines = linesOf(content, found);
  if (found.length > 1 && !replaceAll) {
    throw new ReplaceError(
      'AMBIGUOUS',
      `The old text occurs ${found.length} times in ${label} (at lines ${lines.join(', ')}). Include more surrounding lines to make it unique, or set replaceAll.`,
      lines,
    );
  }
  const usual = splitLines(content).newline;
  const out: string[] = [];
  let kept = 0;
  for (const index of found) {
    const replaced = content.slice(index, index + needle.length);
    const written = restoreEscapes(newText, replaced);
    if (written === undefined) throw escapeMismatch(label, lineOf(content, index));
    out.push(content.slice(kept, index), withLineBreaks(written, lineEndingAt(content, index, usual)));
    kept = index + needle.length;
  }
  out.push(content.slice(kept));
  return { content: out.join(''), lines };
}

function escapeMismatch(label: string, line: number): ReplaceError {
  return new ReplaceError(
    'INVALID_ARGS',
    `The old text at line ${line} of ${label} holds bytes that are not UTF-8 (shown as \u{fffd}), and newText holds a different number of \u{fffd}: keep one \u{fffd} for each such byte, in order (or edit the lines in hashline mode).`,
    [line],
  );
}

/** The first spelling of `oldText` (as given, with CRLF, with LF) that occurs, and where. */
function locate(content: string, oldText: string): { needle: string; found: number[] } {
  const spellings = new Set([oldText, withLineBreaks(oldText, '\r\n'), withLineBreaks(oldText, '\n'), withLineBreaks(oldText, '\r')]);
  for (const needle of spellings) {
    const found = occurrences(content, needle);
    if (found.length > 0) return { needle, found };
  }
  return { needle: oldText, found: [] };
}

/** Start indexes of the non-overlapping occurrences of `needle`, left to right. */
function occurrences(content: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = content.indexOf(needle); i !== -1; i = content.indexOf(needle, i + needle.length)) found.push(i);
  return found;
}

/** `text` with every line break (`\r\n`, `\n` or a lone `\r`) written as `eol`. */
function withLineBreaks(text: string, eol: string): string {
  return text.replace(/\r\n|\n|\r/g, eol);
}

/** The terminator of the line holding character `index`; `usual` on a last line without one (and in a file of `\r` lines). */
function lineEndingAt(content: string, index: number, usual: string): string {
  const nl = content.indexOf('\n', index);
  if (nl === -1) return usual;
  return nl > 0 && content[nl - 1] === '\r' ? '\r\n' : '\n';
}

/** 1-based line number of character `index`. */
function lineOf(content: string, index: number): number {
  return linesOf(content, [index])[0]!;
}

/** 1-based line numbers of ascending character indexes, in one pass. */
function linesOf(content: string, indexes: readonly number[]): number[] {
  const breaks = lineBreak(content);
  const lines: number[] = [];
  let line = 1;
  let at = content.indexOf(breaks);
  for (const index of indexes) {
    for (; at !== -1 && at < index; at = content.indexOf(breaks, at + 1)) line++;
    lines.push(line);
  }
  return lines;
}

/** The NO_MATCH refusal, pointing at lines that hold the old text's first non-blank line (ignoring indentation). */
function noMatch(content: string, oldText: string, label: string): ReplaceError {
  const firstLine = oldText.split('\n').find((l) => l.trim() !== '')?.trim();
  const near = firstLine ? content.split('\n').flatMap((l, n) => (l.trim() === firstLine ? [n + 1] : [])) : [];
  const hint =
    near.length > 0
      ? ` Its first non-blank line appears (ignoring indentation) at line${near.length > 1 ? 's' : ''} ${near.slice(0, 10).join(', ')}: check whitespace and the following lines.`
      : ' Read the file again and copy the text exactly.';
  return new ReplaceError('NO_MATCH', `The old text was not found in ${label}.${hint}`, near);
}
