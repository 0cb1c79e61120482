/**
 * File names as the model sees them and gives them back, losslessly.
 *
 * A Unix name is bytes, and not always UTF-8 (`caf\xe9.txt` from a Latin-1
 * system). natives hands every path over with each such byte escaped as the
 * lone surrogate U+DC00 + byte (the scheme text.ts uses for file contents),
 * so no byte is lost on the way; but a model cannot read or type a lone
 * surrogate. So a path is shown to the model as git shows one: as is,
 * unless it needs quoting, and then in double quotes with C escapes
 * (`"caf\351.txt"`: octal for each byte that is not UTF-8, `\t`, `\n`,
 * `\"`, `\\`...). A path the model gives in that quoted form is read back
 * to the same bytes, so a name a tool listed is a name a tool can open.
 *
 * A path needs quoting when it holds a byte that is not UTF-8, a control
 * character, or starts with `"` (so that a real name starting with a quote
 * is never read as a quoted one). Every tool shows paths through
 * {@link shownPath} and reads `path` arguments through {@link givenPath};
 * patch headers use {@link unquote}, git's own quoting.
 */
import { decodeText, encodeText } from './text.ts';

/** Git's C-style escapes other than octal bytes, by letter. */
const ESCAPES: Readonly<Record<string, number>> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };
/** The letter of each escapable byte. */
const LETTERS: ReadonlyMap<number, string> = new Map(Object.entries(ESCAPES).map(([letter, byte]) => [byte, letter]));
/** What makes a path need quoting: an escaped byte, a control character, or a leading quote. */
const NEEDS_QUOTING = /[\udc80-\udcff\u0000-\u001f\u007f]|^"/u;

/** `path` (natives' escaped form) as the model sees it: as is, or C-quoted when it needs to be. */
export function shownPath(path: string): string {
  if (!NEEDS_QUOTING.test(path)) return path;
  let out = '"';
  for (const char of path) {
    const unit = char.charCodeAt(0);
    if (unit >= 0xdc80 && unit <= 0xdcff) out += octal(unit - 0xdc00);
    else if (LETTERS.has(unit)) out += `\\${LETTERS.get(unit)}`;
    else if (unit < 0x20 || unit === 0x7f) out += octal(unit);
    else out += char;
  }
  return `${out}"`;
}

function octal(byte: number): string {
  return `\\${byte.toString(8).padStart(3, '0')}`;
}

/** A path as the model gave it, in natives' escaped form: a C-quoted one (starting with `"`) is unquoted; any other is as is. */
export function givenPath(path: string): string {
  if (!path.startsWith('"')) return path;
  const { name, end } = unquote(path, 0);
  if (end !== path.length) throw new RangeError(`unexpected text after the quoted path ${path.slice(0, end)}`);
  return name;
}

/**
 * The C-quoted name starting at `raw[start]` (a `"`), in natives' escaped
 * form, and the index after its closing quote. Throws a `RangeError` for
 * an unknown escape or a missing closing quote.
 */
export function unquote(raw: string, start: number): { name: string; end: number } {
  const bytes: number[] = [];
  let i = start + 1;
  while (i < raw.length && raw[i] !== '"') {
    if (raw[i] !== '\\') {
      const char = String.fromCodePoint(raw.codePointAt(i)!);
      bytes.push(...encodeText(char));
      i += char.length;
      continue;
    }
    const digits = /^[0-3][0-7]{2}/.exec(raw.slice(i + 1, i + 4))?.[0];
    const escape = raw[i + 1] ?? '';
    if (digits !== undefined) bytes.push(parseInt(digits, 8));
    else if (escape in ESCAPES) bytes.push(ESCAPES[escape]!);
    else throw new RangeError(`unknown escape \\${escape} in the quoted name ${raw.slice(start)}`);
    i += digits !== undefined ? 4 : 2;
  }
  if (i >= raw.length) throw new RangeError(`unterminated quoted name ${raw.slice(start)}`);
  return { name: decodeText(Uint8Array.from(bytes)), end: i + 1 };
}

/**
 * `path` made absolute against `cwd` (itself made absolute against the
 * process's working directory) with `.` and `..` folded by the text, as
 * `path.resolve` does: for naming a path back, never for deciding where it
 * lands (the filesystem does that).
 */
export function resolvePath(cwd: string, path: string): string {
  const joined = path.startsWith('/') ? path : `${cwd.startsWith('/') ? cwd : `${process.cwd()}/${cwd}`}/${path}`;
  const parts: string[] = [];
  for (const part of joined.split('/')) {
    if (part === '..') parts.pop();
    else if (part !== '' && part !== '.') parts.push(part);
  }
  return `/${parts.join('/')}`;
}

/** `abs` relative to `base` (both absolute) when it lies inside it (`''` for `base` itself); else `undefined`. */
export function pathInside(base: string, abs: string): string | undefined {
  const root = resolvePath('/', base);
  const target = resolvePath('/', abs);
  if (target === root) return '';
  const prefix = root === '/' ? '/' : `${root}/`;
  return target.startsWith(prefix) ? target.slice(prefix.length) : undefined;
}
