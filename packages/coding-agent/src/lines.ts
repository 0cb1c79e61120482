/**
 * Text as lines, each with its own terminator, and back: what read, replace,
 * hashline and patch share so that every line keeps the ending it had and a
 * new line takes the file's.
 */

/** A file's text split into lines, each with its own terminator. */
export interface Lines {
  /** Line contents without terminators. */
  text: string[];
  /** Each line's terminator: `'\n'`, `'\r\n'`, or `''` (the last line, without one). */
  eol: string[];
  /** The terminator new lines get: `'\r\n'` when most lines use it, else `'\n'`. */
  newline: string;
}

/** Split `content` into lines. An empty file has no lines; a final terminator does not start a new line. */
export function splitLines(content: string): Lines {
  const text: string[] = [];
  const eol: string[] = [];
  let crlf = 0;
  let start = 0;
  while (start < content.length) {
    const nl = content.indexOf('\n', start);
    if (nl === -1) {
      text.push(content.slice(start));
      eol.push('');
      break;
    }
    const cr = nl > start && content[nl - 1] === '\r';
    text.push(content.slice(start, cr ? nl - 1 : nl));
    eol.push(cr ? '\r\n' : '\n');
    if (cr) crlf++;
    start = nl + 1;
  }
  return { text, eol, newline: crlf * 2 > eol.length ? '\r\n' : '\n' };
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
