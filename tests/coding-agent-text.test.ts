/**
 * The pure text rules under `edit`: the lossless byte <-> text codec
 * (fixed tricky vectors and thousands of random byte strings that must
 * round-trip exactly) and exact replacement with its line-ending rule.
 */
import { describe, expect, test } from 'bun:test';
import { ReplaceError, replaceText } from '../packages/coding-agent/src/replace.ts';
import { splitLines } from '../packages/coding-agent/src/lines.ts';
import { givenPath, shownPath } from '../packages/coding-agent/src/names.ts';
import { decodeText, displayText, encodeText, findLoneSurrogate, restoreEscapes, splitBom } from '../packages/coding-agent/src/text.ts';

const bytes = (...values: number[]) => Uint8Array.from(values);
const ascii = (text: string) => [...text].map((ch) => ch.charCodeAt(0));
/** The escape of one byte that is not part of valid UTF-8. */
const esc = (byte: number) => String.fromCharCode(0xdc00 + byte);

describe('decodeText / encodeText', () => {
  const vectors: [string, Uint8Array, string][] = [
    ['empty', bytes(), ''],
    ['ASCII', bytes(...ascii('a\r\nb')), 'a\r\nb'],
    ['two-, three- and four-byte sequences', bytes(0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80), '\u00e9\u20ac\u{1f600}'],
    ['a byte order mark is kept', bytes(0xef, 0xbb, 0xbf, 0x61), '\ufeffa'],
    ['a byte order mark after an invalid byte is kept', bytes(0xe9, 0xef, 0xbb, 0xbf), esc(0xe9) + '\ufeff'],
    ['a real U+FFFD stays a character', bytes(0xef, 0xbf, 0xbd), '\ufffd'],
    ['Latin-1 bytes', bytes(0x63, 0x61, 0x66, 0xe9, 0x0a), 'caf' + esc(0xe9) + '\n'],
    ['lone continuation bytes', bytes(0x80, 0xbf), esc(0x80) + esc(0xbf)],
    ['invalid lead bytes C0, C1, F5-FF', bytes(0xc0, 0xc1, 0xf5, 0xff), esc(0xc0) + esc(0xc1) + esc(0xf5) + esc(0xff)],
    ['a truncated sequence before ASCII', bytes(0xe2, 0x82, 0x41), esc(0xe2) + esc(0x82) + 'A'],
    ['a truncated sequence at the end', bytes(0x61, 0xf0, 0x9f, 0x98), 'a' + esc(0xf0) + esc(0x9f) + esc(0x98)],
    ['a truncated sequence before a valid one', bytes(0xc3, 0xc3, 0xa9), esc(0xc3) + '\u00e9'],
    ['overlong forms', bytes(0xc0, 0x80, 0xe0, 0x80, 0xaf, 0xf0, 0x80, 0x80, 0x80), [0xc0, 0x80, 0xe0, 0x80, 0xaf, 0xf0, 0x80, 0x80, 0x80].map(esc).join('')],
    ['encoded surrogates (even one that looks like an escape)', bytes(0xed, 0xa0, 0x80, 0xed, 0xb2, 0x80), [0xed, 0xa0, 0x80, 0xed, 0xb2, 0x80].map(esc).join('')],
    ['above U+10FFFF', bytes(0xf4, 0x90, 0x80, 0x80), [0xf4, 0x90, 0x80, 0x80].map(esc).join('')],
    ['the limits U+D7FF, U+E000 and U+10FFFF are valid', bytes(0xed, 0x9f, 0xbf, 0xee, 0x80, 0x80, 0xf4, 0x8f, 0xbf, 0xbf), '\ud7ff\ue000\u{10ffff}'],
  ];

  test.each(vectors)('%s', (_name, input, text) => {
    expect(decodeText(input)).toBe(text);
    expect(encodeText(text)).toEqual(input);
  });

  test('valid UTF-8 decodes as UTF-8 does', () => {
    const sample = 'h\u00e9llo \u20ac \u{1f600} \u0000 \ufffd';
    expect(decodeText(new TextEncoder().encode(sample))).toBe(sample);
  });

  test('every byte string survives decode then encode (random strings, biased to bytes >= 0x80 and partial sequences)', () => {
    const random = seeded(0x5eed);
    let escaped = 0;
    for (let n = 0; n < 5000; n++) {
      const input = randomBytes(random);
      const text = decodeText(input);
      if (findLoneSurrogate(text) !== -1) escaped++;
      expect(encodeText(text)).toEqual(input);
    }
    // The generator must actually produce invalid UTF-8 most of the time, or this test proves little.
    expect(escaped).toBeGreaterThan(2500);
  });

  test('a lone surrogate that escapes no byte is not encoded', () => {
    for (const text of ['\ud800', 'a\udbff', '\udc00', '\udc7f', '\ud83d x']) expect(() => encodeText(text)).toThrow(RangeError);
  });
});

describe('displayText and findLoneSurrogate', () => {
  const cases: [string, string, number][] = [
    ['plain', 'plain', -1],
    ['pair \u{1f600}', 'pair \u{1f600}', -1],
    ['caf' + esc(0xe9), 'caf\ufffd', 3],
    ['\ud83d alone', '\ufffd alone', 0],
    ['x\udc00', 'x\ufffd', 1],
  ];
  test.each(cases)('%j', (text, shown, at) => {
    expect(displayText(text)).toBe(shown);
    expect(findLoneSurrogate(text)).toBe(at);
  });
});

describe('replaceText', () => {
  const cases: [string, string, string, string, boolean, string, number[]][] = [
    ['LF file', 'a\nb\nc\n', 'b', 'x\ny', false, 'a\nx\ny\nc\n', [2]],
    ['LF file, newText with CRLF', 'a\nb\nc\n', 'b', 'x\r\ny', false, 'a\nx\ny\nc\n', [2]],
    ['LF file, oldText with CRLF', 'a\nb\nc\n', 'a\r\nb', 'x', false, 'x\nc\n', [1]],
    ['CRLF file, one-line oldText and newText', 'a\r\nb\r\nc\r\n', 'b', 'x', false, 'a\r\nx\r\nc\r\n', [2]],
    ['CRLF file, one-line oldText, multi-line newText', 'a\r\nb\r\nc\r\n', 'b', 'x\ny', false, 'a\r\nx\r\ny\r\nc\r\n', [2]],
    ['CRLF file, multi-line oldText with LF', 'a\r\nb\r\nc\r\n', 'a\nb', 'x\ny\nz', false, 'x\r\ny\r\nz\r\nc\r\n', [1]],
    ['CRLF file, multi-line oldText with CRLF', 'a\r\nb\r\nc\r\n', 'a\r\nb', 'x\ny', false, 'x\r\ny\r\nc\r\n', [1]],
    ['CRLF file, newText already with CRLF', 'a\r\nb\r\n', 'b', 'x\r\ny', false, 'a\r\nx\r\ny\r\n', [2]],
    ['CRLF file, newText mixing both', 'a\r\nb\r\n', 'b', 'x\r\ny\nz', false, 'a\r\nx\r\ny\r\nz\r\n', [2]],
    ['CRLF file, match on the last line without terminator', 'a\r\nb\r\nc', 'c', 'x\ny', false, 'a\r\nb\r\nx\r\ny', [3]],
    ['mixed file, match on an LF line', 'a\r\nb\nc\r\n', 'b', 'x\ny', false, 'a\r\nx\ny\nc\r\n', [2]],
    ['mixed file, match on a CRLF line', 'a\r\nb\nc\r\n', 'a', 'x\ny', false, 'x\r\ny\r\nb\nc\r\n', [1]],
    ['mixed file, replaceAll follows each line', 'k\r\nk\nk', 'k', 'x\ny', true, 'x\r\ny\r\nx\ny\nx\ny', [1, 2, 3]],
    ['replaceAll in an LF file', 'a = 1;\nb = 2;\nc = 1;\n', ' = 1;', ' = 9;', true, 'a = 9;\nb = 2;\nc = 9;\n', [1, 3]],
    ['escaped bytes around the match stay', 'caf' + esc(0xe9) + '\nplain\n' + esc(0xff), 'plain', 'p\nq', false, 'caf' + esc(0xe9) + '\np\nq\n' + esc(0xff), [2]],
    ['deleting', 'a\nb\nc\n', 'b\n', '', false, 'a\nc\n', [2]],
  ];
  test.each(cases)('%s', (_name, content, oldText, newText, replaceAll, expected, lines) => {
    expect(replaceText(content, oldText, newText, replaceAll)).toEqual({ content: expected, lines });
  });

  const refusals: [string, string, string, 'NO_MATCH' | 'AMBIGUOUS', number[], string][] = [
    ['missing, near a line', 'x\n  b = 2;\n', 'b = 2;\nc', 'NO_MATCH', [2], 'not found in f.txt. Its first non-blank line appears'],
    ['missing', 'x\n', 'y', 'NO_MATCH', [], 'Read the file again'],
    ['twice', 'a = 1;\nb = 1;\n', ' = 1;', 'AMBIGUOUS', [1, 2], 'occurs 2 times in f.txt (at lines 1, 2)'],
  ];
  test.each(refusals)('refuses: %s', (_name, content, oldText, code, lines, message) => {
    let error: unknown;
    try {
      replaceText(content, oldText, 'new', false, 'f.txt');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ReplaceError);
    expect(error).toMatchObject({ code, lines });
    expect((error as Error).message).toContain(message);
  });
});

/** A small deterministic generator (mulberry32), so a failure reproduces. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** Up to 24 bytes, mostly >= 0x80: ASCII, continuation and lead bytes, whole and cut-off UTF-8 sequences. */
function randomBytes(random: () => number): Uint8Array {
  const out: number[] = [];
  const length = Math.floor(random() * 25);
  const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
  while (out.length < length) {
    const pick = random();
    if (pick < 0.15) out.push(between(0x00, 0x7f));
    else if (pick < 0.4) out.push(between(0x80, 0xbf));
    else if (pick < 0.6) out.push(between(0xc0, 0xff));
    else {
      const codePoint = random() < 0.5 ? between(0x80, 0xffff) : between(0x10000, 0x10ffff);
      const encoded = [...new TextEncoder().encode(String.fromCodePoint(codePoint))];
      out.push(...(random() < 0.5 ? encoded : encoded.slice(0, between(1, encoded.length - 1))));
    }
  }
  return Uint8Array.from(out);
}

describe('names shown to the model and given back', () => {
  const cases: [string, string, string][] = [
    ['a plain name is as is', 'src/a b.ts', 'src/a b.ts'],
    ['a name that is not UTF-8 is C-quoted, octal for the byte', 'caf' + esc(0xe9) + '.txt', '"caf\\351.txt"'],
    ['valid non-ASCII stays readable inside quotes', 'd\u00e9j\u00e0/' + esc(0xff), '"d\u00e9j\u00e0/\\377"'],
    ['control characters are escaped', 'a\tb\nc', '"a\\tb\\nc"'],
    ['a leading quote is quoted, with the quote and backslashes escaped', '"x\\y"', '"\\"x\\\\y\\""'],
  ];
  test.each(cases)('%s', (_name, path, shown) => {
    expect(shownPath(path)).toBe(shown);
    expect(givenPath(shown)).toBe(path);
  });

  test('every byte string round-trips through what the model sees', () => {
    for (let i = 0; i < 2_000; i++) {
      const raw = Uint8Array.from({ length: 1 + (i % 12) }, () => 1 + Math.floor(Math.random() * 255));
      const name = decodeText(raw);
      expect(encodeText(givenPath(shownPath(name)))).toEqual(raw);
    }
  });

  test('a malformed quoted path is refused', () => {
    expect(() => givenPath('"unterminated')).toThrow(RangeError);
    expect(() => givenPath('"a"b')).toThrow(RangeError);
    expect(() => givenPath('"\\q"')).toThrow(RangeError);
  });
});

describe('U+FFFD from the model stands for the byte it showed', () => {
  test.each([
    ['one escape each', 'caf\ufffd!', 'caf' + esc(0xe9), 'caf' + esc(0xe9) + '!'],
    ['in order', '\ufffd-\ufffd', esc(0x80) + esc(0x81), esc(0x80) + '-' + esc(0x81)],
    ['no escape replaced: the character itself', 'a\ufffd', 'abc', 'a\ufffd'],
    ['a real U+FFFD replaced: the character itself', 'a\ufffd', 'x\ufffd', 'a\ufffd'],
  ])('%s', (_name, written, replaced, restored) => {
    expect(restoreEscapes(written, replaced)).toBe(restored);
  });

  test('a different number of U+FFFD than escaped bytes cannot be told apart', () => {
    expect(restoreEscapes('\ufffd', esc(0x80) + esc(0x81))).toBeUndefined();
  });
});

describe('lines', () => {
  test('a file without LF but with CR has CR lines; elsewhere a lone CR is text', () => {
    expect(splitLines('a\rb\rc')).toEqual({ text: ['a', 'b', 'c'], eol: ['\r', '\r', ''], newline: '\r' });
    expect(splitLines('a\rb\nc\n')).toEqual({ text: ['a\rb', 'c'], eol: ['\n', '\n'], newline: '\n' });
  });

  test('the usual ending is counted over terminated lines only', () => {
    expect(splitLines('a\r\nb').newline).toBe('\r\n');
    expect(splitLines('a\r\nb\nc').newline).toBe('\n');
  });

  test('a byte order mark is split off the text', () => {
    expect(splitBom('\ufeffa\n')).toEqual({ bom: '\ufeff', body: 'a\n' });
    expect(splitBom('a\ufeff')).toEqual({ bom: '', body: 'a\ufeff' });
  });
});
