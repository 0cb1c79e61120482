/**
 * Text as lines, each with its own terminator, and back: what read, replace,
 * hashline and patch share so that every line keeps the ending it had and a
 * new line takes the file's.
 *
 * Lines end at `\n` (a `\r` before it belongs to the terminator). A file
 * with no `\n` at all but a `\r` (classic Mac text) has lines ending at
 * `\r`; anywhere else a lone `\r` is part of its line.
 */

/** A file's text split into lines, each with its own terminator. */
export interface Lines {
  /** Line contents without terminators. */
  text: string[];
  /** Each line's terminator: `'\n'`, `'\r\n'`, `'\r'` (a file with no `\n`), or `''` (the last line, without one). */
  eol: string[];
  /**
   * The terminator new lines get when no neighbour says otherwise: `'\r'`
   * in a file of `\r` lines, `'\r\n'` when most terminated lines use it,
   * else `'\n'`.
   */
  newline: string;
}

/** The character lines of `content` end at: `\r` in text with no `\n` but a `\r`, else `\n`. */
export function lineBreak(content: string): '\r' | '\n' {
  return !content.includes('\n') && content.includes('\r') ? '\r' : '\n';
}

/** Split `content` into lines. An empty file has no lines; a final terminator does not start a new line. */
export function splitLines(content: string): Lines {
  const breaks = lineBreak(content);
  const text: string[] = [];
  const eol: string[] = [];
  let crlf = 0;
  let start = 0;
  while (start < content.length) {
    const at = content.indexOf(breaks, start);
    if (at === -1) {
      text.push(content.slice(start));
      eol.push('');
      break;
    }
    const cr = breaks === '\n' && at > start && content[at - 1] === '\r';
    text.push(content.slice(start, cr ? at - 1 : at));
    eol.push(cr ? '\r\n' : breaks);
    if (cr) crlf++;
    start = at + 1;
  }
  const terminated = eol.length - (eol.at(-1) === '' ? 1 : 0);
  const newline = breaks === '\r' ? '\r' : crlf * 2 > terminated ? '\r\n' : '\n';
  return { text, eol, newline };
}

/**
 * Join lines back into text. A line that is no longer last but has no
 * terminator gets `newline`.
 */
export function joinLines(text: readonly string[], eol: readonly string[], newline: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const end = eol[i] ?? newline;
    out += text[i] + (end === '' && i < text.length - 1 ? newline : end);
  }
  return out;
}
