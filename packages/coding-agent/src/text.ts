/**
 * File bytes as text and back, losslessly, so that an edit rewrites only
 * the bytes it was asked to change.
 *
 * Files are not always valid UTF-8 (Latin-1 sources, a stray byte in a
 * log). A plain UTF-8 decode would replace each such byte with U+FFFD and
 * the edit would write those replacements back. Instead, {@link decodeText}
 * decodes valid UTF-8 as usual and maps every byte that is not part of a
 * valid sequence (an invalid lead byte, a truncated sequence, an overlong
 * form, an encoded surrogate, a code point above U+10FFFF) to the lone
 * surrogate U+DC00 + byte; such bytes are always >= 0x80, so the escapes
 * are U+DC80..U+DCFF. {@link encodeText} is the exact inverse: for every
 * byte string `b`, `encodeText(decodeText(b))` equals `b` (a byte order
 * mark included).
 *
 * Valid text never holds a lone surrogate, so the escapes cannot be
 * confused with characters. They must only ever come from the file itself:
 * text supplied by the model is refused when it holds one
 * ({@link findLoneSurrogate}), and {@link displayText} shows each escape
 * as U+FFFD.
 */

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lenientUtf8 = new TextDecoder('utf-8', { ignoreBOM: true });
const utf8 = new TextEncoder();

/** First code point of a lone-surrogate escape: U+DC00 + byte. */
const ESCAPE_BASE = 0xdc00;
/** A surrogate that is not half of a pair (the `u` flag matches pairs as one code point). */
const LONE_SURROGATE = /[\ud800-\udfff]/u;
const LONE_SURROGATES = /[\ud800-\udfff]/gu;

/** Decode `bytes` as UTF-8, escaping every byte that is not part of a valid sequence. */
export function decodeText(bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return decodeEscaping(bytes);
  }
}

/** The slow path of {@link decodeText}: valid runs decode as usual, each invalid byte becomes its escape. */
function decodeEscaping(bytes: Uint8Array): string {
  const parts: string[] = [];
  let run = 0;
  let i = 0;
  while (i < bytes.length) {
    const length = validSequenceLength(bytes, i);
    if (length > 0) {
      i += length;
      continue;
    }
    parts.push(lenientUtf8.decode(bytes.subarray(run, i)), String.fromCharCode(ESCAPE_BASE + bytes[i]!));
    i++;
    run = i;
  }
  parts.push(lenientUtf8.decode(bytes.subarray(run)));
  return parts.join('');
}

/**
 * The length of the well-formed UTF-8 sequence starting at `i`, or 0 when
 * there is none (the ranges of the Unicode standard's table 3-7: the second
 * byte's range depends on the lead, the others are 80..BF).
 */
function validSequenceLength(bytes: Uint8Array, i: number): number {
  const lead = bytes[i]!;
  if (lead < 0x80) return 1;
  let length: number;
  let low = 0x80;
  let high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2;
  else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead === 0xe0) low = 0xa0;
    if (lead === 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead === 0xf0) low = 0x90;
    if (lead === 0xf4) high = 0x8f;
  } else return 0;
  if (i + length > bytes.length) return 0;
  const second = bytes[i + 1]!;
  if (second < low || second > high) return 0;
  for (let k = 2; k < length; k++) {
    const next = bytes[i + k]!;
    if (next < 0x80 || next > 0xbf) return 0;
  }
  return length;
}

/**
 * Encode `text` as UTF-8, turning each escape (U+DC80..U+DCFF) back into
 * its byte. Any other lone surrogate is not the image of a byte and throws
 * a `RangeError` rather than being written as U+FFFD.
 */
export function encodeText(text: string): Uint8Array {
  if (!LONE_SURROGATE.test(text)) return utf8.encode(text);
  // Three bytes per UTF-16 unit is the most UTF-8 needs (a pair: four for two).
  const out = new Uint8Array(text.length * 3);
  let written = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    if (unit < 0xdc00 && isLowSurrogate(text.charCodeAt(i + 1))) {
      i++;
      continue;
    }
    if (unit < ESCAPE_BASE + 0x80 || unit > ESCAPE_BASE + 0xff) {
      throw new RangeError(`U+${unit.toString(16).toUpperCase()} at index ${i} is a lone surrogate that escapes no byte`);
    }
    written += utf8.encodeInto(text.slice(run, i), out.subarray(written)).written;
    out[written++] = unit - ESCAPE_BASE;
    run = i + 1;
  }
  written += utf8.encodeInto(text.slice(run), out.subarray(written)).written;
  return out.slice(0, written);
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** `text` as shown to the model: every lone surrogate (an escaped byte) becomes U+FFFD. */
export function displayText(text: string): string {
  return text.replace(LONE_SURROGATES, '\ufffd');
}

/** The index of the first lone surrogate in `text`, or -1 when it is well-formed. */
export function findLoneSurrogate(text: string): number {
  return text.search(LONE_SURROGATE);
}

/** The UTF-8 byte order mark, decoded. */
const BOM = '\ufeff';

/**
 * A file's text split into its byte order mark (`''` when it has none) and
 * the rest: the mark belongs to the file, not to its first line, so it is
 * neither shown, hashed nor matched as part of line 1, and every edit puts
 * it back in front.
 */
export function splitBom(text: string): { bom: string; body: string } {
  return text.startsWith(BOM) ? { bom: BOM, body: text.slice(BOM.length) } : { bom: '', body: text };
}

/** U+FFFD, how an escaped byte is shown (and what a model types back for it). */
const SHOWN_ESCAPE = '\ufffd';

/**
 * Text a model wrote in place of `replaced` (file text, escapes included),
 * with each U+FFFD it holds standing for the character `replaced` shows as
 * U+FFFD at the same rank: a model copies an escaped byte as the U+FFFD
 * `read` showed, and it must go back as that byte. `undefined` when that
 * cannot be told: `replaced` holds escaped bytes but `written` holds a
 * different number of U+FFFD. Where `replaced` holds no escaped byte, a
 * U+FFFD in `written` is the character itself.
 */
export function restoreEscapes(written: string, replaced: string): string | undefined {
  if (!written.includes(SHOWN_ESCAPE)) return written;
  const originals = [...replaced.matchAll(/[\ufffd\udc80-\udcff]/gu)].map((m) => m[0]);
  if (!originals.some((ch) => ch !== SHOWN_ESCAPE)) return written;
  const wanted = written.split(SHOWN_ESCAPE);
  if (wanted.length - 1 !== originals.length) return undefined;
  return wanted.reduce((out, part, i) => out + originals[i - 1]! + part);
}
