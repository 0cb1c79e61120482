/**
 * Exact text replacement (`edit` in replace mode), kept apart from the file
 * I/O so its rules can be tested on their own.
 *
 * Matching: `oldText` must occur in the content as written. When it does
 * not and it spans lines, it is tried again with its line breaks written
 * as `\r\n`, then as `\n`, so text copied from a CRLF file with `\n`
 * still matches (and the other way round).
 *
 * Line endings: every line break in `newText` (`\n` or `\r\n`) becomes the
 * line ending of the line the match starts on, so inserted lines follow the
 * lines they replace, one match at a time in a file that mixes endings. A
 * match on a last line without a terminator uses the file's usual ending
 * (CRLF when most lines end so, else LF). Everything outside the matches
 * is left as it was.
 */
import { splitLines } from './lines.ts';

/** Why a replacement was refused. */
export class ReplaceError extends Error {
  constructor(
    readonly code: 'NO_MATCH' | 'AMBIGUOUS',
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
  const { needle, found } = locate(content, oldText);
  if (found.length === 0) throw noMatch(content, oldText, label);
  const lines = found.map((index) => lineOf(content, index));
  if (found.length > 1 && !replaceAll) {
    throw new ReplaceError(
      'AMBIGUOUS',
      `The old text occurs ${found.length} times in ${label} (at lines ${lines.join(', ')}). Include more surrounding lines to make it unique, or set replaceAll.`,
      lines,
    );
  }
  const usual = splitLines(content).newline;
  let out = '';
  let kept = 0;
  for (const index of found) {
    out += content.slice(kept, index) + withLineBreaks(newText, lineEndingAt(content, index, usual));
    kept = index + needle.length;
  }
  return { content: out + content.slice(kept), lines };
}

/** The first spelling of `oldText` (as given, with CRLF, with LF) that occurs, and where. */
function locate(content: string, oldText: string): { needle: string; found: number[] } {
  const spellings = new Set([oldText, withLineBreaks(oldText, '\r\n'), withLineBreaks(oldText, '\n')]);
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

/** `text` with every line break (`\r\n` or `\n`) written as `eol`. */
function withLineBreaks(text: string, eol: string): string {
  return text.replace(/\r?\n/g, eol);
}

/** The terminator of the line holding character `index`; `usual` on a last line without one. */
function lineEndingAt(content: string, index: number, usual: string): string {
  const nl = content.indexOf('\n', index);
  if (nl === -1) return usual;
  return nl > 0 && content[nl - 1] === '\r' ? '\r\n' : '\n';
}

/** 1-based line number of character `index`. */
function lineOf(content: string, index: number): number {
  let line = 1;
  for (let i = content.indexOf('\n'); i !== -1 && i < index; i = content.indexOf('\n', i + 1)) line++;
  return line;
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
