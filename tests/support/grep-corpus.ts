/**
 * A text corpus too big to search quickly, for the grep cancellation tests:
 * one file of ordinary text lines (no NUL byte, so nothing stops early as
 * binary) and several hard links to it, so the bytes searched multiply
 * without the disk cost. Generated once into the temp dir and reused while
 * its stamp file says it is complete.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { sharedFixturePath } from './fs.ts';

/** Bytes in the one real file. */
export const CORPUS_FILE_BYTES = 160 << 20;
/**
 * The fewest names for that file (the original and its hard links), all
 * searched: twelve per core (at least 24), since grep searches files in
 * parallel at roughly 300 MiB/s per core on a quiet 2-core machine. A faster
 * machine needs more for a search to take as long: see {@link linksFor}.
 */
export const CORPUS_LINKS = Math.max(24, 12 * os.availableParallelism());

/**
 * How many names a search of the corpus needs to take at least `minMs` on
 * this machine's cores, given that one name takes `oneMs` (never fewer than
 * {@link CORPUS_LINKS}).
 */
export function linksFor(oneMs: number, minMs: number): number {
  const cores = os.availableParallelism();
  return Math.max(CORPUS_LINKS, Math.ceil((minMs * cores) / Math.max(oneMs, 1)));
}

/**
 * A pattern with no literal for a prefilter to skip ahead on and no match
 * in the corpus: the regex engine runs over every byte.
 */
export const SLOW_PATTERN = String.raw`\w{50}`;

const WORDS = (
  'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore ' +
  'et dolore magna aliqua quis nostrud exercitation ullamco laboris nisi aliquip commodo consequat'
).split(' ');

/** About a megabyte of varied text lines (words and a number), deterministic. */
function block(): Buffer {
  let seed = 1;
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) & 0x7fff_ffff;
    return seed;
  };
  const lines: string[] = [];
  for (let i = 0; i < 20_000; i++) {
    const words = Array.from({ length: 6 + (next() % 10) }, () => WORDS[next() % WORDS.length]!);
    lines.push(`${words.join(' ')} ${next() % 100_000}`);
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

/**
 * The corpus directory (a per-user folder under the system temp dir) holding
 * exactly `links` names for the one file, generated if needed; names are
 * added or removed as hard links, so resizing it costs no disk.
 */
export function ensureGrepCorpus(links = CORPUS_LINKS): string {
  const root = sharedFixturePath('grep-corpus');
  const stamp = `${root}.complete`;
  // The stamp names the fewest names, as it always has, so a checkout whose tests size the
  // corpus differently does not take it for another and write the file again.
  const description = `${CORPUS_FILE_BYTES} bytes x ${CORPUS_LINKS} names, v1`;
  const first = path.join(root, 'text-0.txt');
  if (!fs.existsSync(stamp) || fs.readFileSync(stamp, 'utf8') !== description) {
    fs.rmSync(stamp, { force: true });
    fs.rmSync(root, { recursive: true, force: true });
    fs.mkdirSync(root, { recursive: true });
    writeCorpusFile(first);
    fs.writeFileSync(stamp, description);
  }
  for (const name of fs.readdirSync(root)) {
    const index = Number(/^text-(\d+)\.txt$/.exec(name)?.[1] ?? Number.NaN);
    if (!(index < links)) fs.rmSync(path.join(root, name), { force: true });
  }
  for (let i = 1; i < links; i++) {
    const name = path.join(root, `text-${i}.txt`);
    if (!fs.existsSync(name)) fs.linkSync(first, name);
  }
  return root;
}

/** Write the corpus's one real file at `file`. */
function writeCorpusFile(file: string): void {
  const chunk = block();
  const fd = fs.openSync(file, 'w');
  try {
    for (let written = 0; written < CORPUS_FILE_BYTES; written += chunk.length) fs.writeSync(fd, chunk);
  } finally {
    fs.closeSync(fd);
  }
}
