/**
 * `grep` semantics end to end, beyond the rg comparison: the `onMatch`
 * stream and result order, `offset`/`maxCount` slicing one sequence,
 * honest limits (binary files, `maxFileSize`, `maxColumns`, FIFOs, large
 * files searched whole), literal braces, errors, and how `cache` is used.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { rejection, thrown } from './support/errors.ts';
import { native } from '../packages/natives/src/native.ts';
import { runJson } from './support/child.ts';
import { removeDir, run, tempDir } from './support/fs.ts';
import {
  fsScanCacheStats,
  grep,
  hasMatch,
  search,
  type GrepMatch,
  type GrepOptions,
} from './support/grep.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
});

function fixture(label: string, files: Record<string, string | Buffer> = {}): string {
  const dir = tempDir(label);
  dirs.push(dir);
  for (const [rel, contents] of Object.entries(files)) {
    const target = path.join(dir, rel);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, contents);
  }
  return dir;
}

/** Settle `body` or fail after `ms`: a grep that blocks must fail the test, not hang it. */
async function within<T>(ms: number, body: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([body, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** Compare paths as grep orders them: component by component, bytes within a component. */
function comparePaths(a: string, b: string): number {
  const as = a.split('/');
  const bs = b.split('/');
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    const x = Buffer.from(as[i]!);
    const y = Buffer.from(bs[i]!);
    const order = Buffer.compare(x, y);
    if (order !== 0) return order;
  }
  return as.length - bs.length;
}

/**
 * A tree with many files and many matches per file in several directories
 * (names chosen so byte order and component order differ: `d-x` vs `d/`),
 * so results come from many files searched in parallel and arrive in many
 * batches.
 */
function manyMatchesTree(): string {
  const files: Record<string, string> = {};
  const dirNames = ['d', 'd-x', 'd.y', 'e', 'd/sub'];
  let n = 0;
  for (const dir of dirNames) {
    for (let f = 0; f < 40; f++) {
      n++;
      const lines: string[] = [];
      const hits = 1 + (n % 7);
      for (let l = 0; l < 30; l++) lines.push(l % Math.ceil(30 / hits) === 0 ? `hit ${n}:${l}` : `miss ${n}:${l}`);
      files[`${dir}/f${String(f).padStart(2, '0')}.txt`] = `${lines.join('\n')}\n`;
    }
  }
  // Files without a match between ones with matches.
  files['d/zz-none.txt'] = 'nothing here\n';
  files['c/none.txt'] = 'nothing here\n';
  return fixture('grep-stream', files);
}

describe('streaming and order', () => {
  let root = '';
  beforeAll(() => {
    root = manyMatchesTree();
  }, 60_000);

  const MODES: Array<Partial<GrepOptions>> = [
    {},
    { context: 1 },
    { mode: 'count' },
    { mode: 'filesWithMatches' },
  ];

  for (const extra of MODES) {
    test(`onMatch sees every result once, in result order, before the promise resolves: ${JSON.stringify(extra)}`, async () => {
      const options: GrepOptions = { pattern: 'hit', path: root, ...extra };
      const plain = await grep(options);
      const streamed: GrepMatch[] = [];
      let resolved = false;
      let lateCalls = 0;
      const promise = grep(options, (match) => {
        if (resolved) lateCalls++;
        streamed.push(match);
      });
      const result = await promise;
      resolved = true;
      await Bun.sleep(20);
      expect(lateCalls).toBe(0);
      expect(streamed).toEqual(result.matches);
      expect(result).toEqual(plain);
      expect(result.matches.length).toBeGreaterThanOrEqual(200);
      // Path order (component by component), then line order.
      for (let i = 1; i < result.matches.length; i++) {
        const [a, b] = [result.matches[i - 1]!, result.matches[i]!];
        const order = comparePaths(a.path, b.path);
        expect(order < 0 || (order === 0 && a.lineNumber < b.lineNumber)).toBe(true);
      }
    });
  }

  test('the answer is the same on every run', async () => {
    const first = await grep({ pattern: 'hit', path: root, context: 2 });
    for (let i = 0; i < 5; i++) expect(await grep({ pattern: 'hit', path: root, context: 2 })).toEqual(first);
  });

  for (const mode of ['content', 'count', 'filesWithMatches'] as const) {
    test(`offset and maxCount slice one ordered sequence, limitReached is exact: ${mode}`, async () => {
      const full = await grep({ pattern: 'hit', path: root, mode });
      const total = full.matches.length;
      expect(full.limitReached).toBe(false);
      expect(full.totalMatches).toBeGreaterThanOrEqual(total);
      const slices: Array<[number, number | undefined]> = [
        [0, 1],
        [0, 10],
        [5, 10],
        [37, 1],
        [0, total - 1],
        [0, total],
        [0, total + 5],
        [1, total - 1],
        [total - 1, 1],
        [total - 1, 2],
        [total, 3],
        [total + 10, 3],
        [0, 0],
        [3, 0],
        [7, undefined],
        [total, undefined],
      ];
      for (const [offset, maxCount] of slices) {
        const label = `offset ${offset} maxCount ${maxCount}`;
        const streamed: GrepMatch[] = [];
        const options: GrepOptions = { pattern: 'hit', path: root, mode, offset };
        if (maxCount !== undefined) options.maxCount = maxCount;
        const result = await grep(options, (m) => streamed.push(m));
        const end = maxCount === undefined ? undefined : offset + maxCount;
        expect({ label, matches: result.matches }).toEqual({ label, matches: full.matches.slice(offset, end) });
        expect({ label, streamed }).toEqual({ label, streamed: result.matches });
        const more = end !== undefined && end < total;
        expect({ label, limitReached: result.limitReached }).toEqual({ label, limitReached: more });
        if (more) {
          // A lower bound that proves the limit, never more than the truth.
          expect(result.totalMatches).toBeLessThanOrEqual(full.totalMatches);
          expect(result.totalMatches).toBeGreaterThan(mode === 'count' ? 0 : end);
          expect(result.filesSearched).toBeLessThanOrEqual(full.filesSearched);
        } else {
          expect({ label, total: result.totalMatches }).toEqual({ label, total: full.totalMatches });
          expect(result.filesWithMatches).toBe(full.filesWithMatches);
          expect(result.filesSearched).toBe(full.filesSearched);
        }
      }
    });
  }

  test('retainMatches: false streams every result to onMatch and keeps none in the answer', async () => {
    const options: GrepOptions = { pattern: 'hit', path: root };
    const plain = await grep(options);
    const streamed: GrepMatch[] = [];
    const result = await grep({ ...options, retainMatches: false }, (match) => streamed.push(match));
    expect(streamed).toEqual(plain.matches);
    expect(result.matches).toEqual([]);
    expect({ ...result, matches: plain.matches }).toEqual(plain);
  });

  test('retainMatches: false without onMatch answers the counts alone', async () => {
    const options: GrepOptions = { pattern: 'hit', path: root, context: 1 };
    const plain = await grep(options);
    expect(plain.matches.length).toBeGreaterThan(0);
    const counted = await grep({ ...options, retainMatches: false });
    expect(counted).toEqual({ ...plain, matches: [] });
  });

  test('an onMatch that throws rejects the call with that error, and is not called again', async () => {
    const failure = new Error('stop here');
    let calls = 0;
    const error = await rejection(
      grep({ pattern: 'hit', path: root }, () => {
        calls++;
        throw failure;
      }),
    );
    expect(error as unknown).toBe(failure);
    await Bun.sleep(20);
    expect(calls).toBe(1);
    // Throwing on a later result works the same way.
    let seen = 0;
    const later = await rejection(
      grep({ pattern: 'hit', path: root }, () => {
        if (++seen === 50) throw new RangeError('fifty');
      }),
    );
    expect(later).toBeInstanceOf(RangeError);
    expect(seen).toBe(50);
    // The next call is unaffected.
    expect((await grep({ pattern: 'hit', path: root })).matches.length).toBeGreaterThan(200);
  });
});

describe('results cross the boundary as columns', () => {
  /** What grep must return for `needle` in `files` (content mode, context 1), worked out here line by line. */
  function expected(files: Record<string, string>): GrepMatch[] {
    const found: GrepMatch[] = [];
    for (const [rel, text] of Object.entries(files).sort(([a], [b]) => (a < b ? -1 : 1))) {
      const lines = text.split('\n').slice(0, -1);
      const hit = lines.map((line) => line.includes('needle'));
      let lastShown = -1;
      lines.forEach((line, i) => {
        if (!hit[i]) return;
        const match: GrepMatch = { path: rel, lineNumber: i + 1, line };
        if (i > 0 && !hit[i - 1] && i - 1 > lastShown) match.contextBefore = [{ lineNumber: i, line: lines[i - 1] }];
        if (i + 1 < lines.length && !hit[i + 1]) match.contextAfter = [{ lineNumber: i + 2, line: lines[i + 1] }];
        lastShown = i + (match.contextAfter ? 1 : 0);
        found.push(match);
      });
    }
    return found;
  }

  test('every line and context line comes back exact: non-ASCII, surrogate pairs, empty, longer than a chunk', async () => {
    const many = Array.from({ length: 6_000 }, (_, i) => (i % 3 ? `filler ${i} ünïcödé 😀` : `needle ${i} 𝒳 ${'é'.repeat(i % 7)}`));
    const files: Record<string, string> = {
      'a/ascii.txt': 'needle one\n\nneedle two\nafter\n',
      'a/wide.txt': `${many.join('\n')}\n`,
      'b/long.txt': `before\nneedle ${'ß'.repeat(100_000)}\n${'x'.repeat(70_000)}\nneedle end\n${'😀'.repeat(20_000)}\nneedle 😀\n`,
      'c/empty-context.txt': '\nneedle\n\n',
    };
    const dir = fixture('grep-columns', files);
    const options = { path: dir, pattern: 'needle', context: 1 };
    const { matches } = await grep(options);
    expect(matches).toStrictEqual(expected(files));
    const streamed: GrepMatch[] = [];
    const answer = await grep({ ...options, retainMatches: false }, (match) => streamed.push(match));
    expect(answer.matches).toEqual([]);
    expect(streamed).toStrictEqual(expected(files));
  });

  test('an answer past a megabyte of text hands its chunks to JS while the search runs, and comes back exact', async () => {
    const lines = (tag: string, n: number) =>
      Array.from({ length: n }, (_, i) => (i % 4 ? `filler ${tag} ${i}` : `needle ${tag} ${i} ${'ü😀x'.repeat(i % 50)}`)).join('\n') + '\n';
    const files: Record<string, string> = {
      'a/many.txt': lines('a', 40_000),
      'b/minified.js': `needle ${'é'.repeat(300_000)}\nafter\n`,
      'c/more.txt': lines('c', 40_000),
    };
    const dir = fixture('grep-columns-handed', files);
    const options = { path: dir, pattern: 'needle', context: 1 };
    const groups: string[][] = [];
    const raw = await native.nativeGrep(options, undefined, undefined, undefined, (group) => groups.push(group));
    while (groups.length < raw.textBatches) await Bun.sleep(1);
    expect(raw.textBatches).toBeGreaterThan(1);
    expect(groups.length).toBe(raw.textBatches);
    expect((await grep(options)).matches).toStrictEqual(expected(files));
  });

  test('lines too long to share a chunk (lent to the engine, not copied) stay exact after their strings are collected', async () => {
    const files: Record<string, string> = {
      'ascii.txt': `needle ${'x'.repeat(300_000)}\n`,
      'latin1.txt': `needle ${'\u00e9'.repeat(200_000)}\n`,
      'wide.txt': `needle ${'\u0100'.repeat(100_000)}\n`,
      'astral.txt': `needle ${'\u{1f600}'.repeat(40_000)}\n`,
    };
    const dir = fixture('grep-lent', files);
    const lines = Object.keys(files).sort().map((name) => files[name]!.slice(0, -1));
    for (let round = 0; round < 3; round++) {
      const { matches } = await grep({ path: dir, pattern: 'needle' });
      expect(matches.map((m) => m.line)).toEqual(lines);
      // A slice outlives the answer it came from.
      const kept = matches.map((m) => m.line.slice(1, 9));
      Bun.gc(true);
      expect(kept).toEqual(lines.map((line) => line.slice(1, 9)));
    }
  });

  test('count and files-with-matches results carry their counts; in-memory results have an empty path', async () => {
    const dir = fixture('grep-columns-modes', { 'x.txt': 'needle\nneedle\n', 'y/z.txt': 'needle\n' });
    expect((await grep({ path: dir, pattern: 'needle', mode: 'count' })).matches).toStrictEqual([
      { path: 'x.txt', lineNumber: 0, line: '', matchCount: 2 },
      { path: 'y/z.txt', lineNumber: 0, line: '', matchCount: 1 },
    ]);
    expect((await grep({ path: dir, pattern: 'needle', mode: 'filesWithMatches' })).matches).toStrictEqual([
      { path: 'x.txt', lineNumber: 0, line: '' },
      { path: 'y/z.txt', lineNumber: 0, line: '' },
    ]);
    expect(search('a\0b needle\n', { pattern: 'needle' }).matches).toStrictEqual([{ path: '', lineNumber: 1, line: 'a\0b needle' }]);
  });
});

describe('honest limits', () => {
  test('binary files are counted; a match before a late NUL is kept', async () => {
    const root = fixture('grep-binary', {
      'early.bin': Buffer.from('needle\0binary\nneedle again\n'),
      'late.bin': Buffer.concat([
        Buffer.from('needle first\n'),
        Buffer.from('filler without it\n'.repeat(10_000)),
        Buffer.from('needle\0late\n'),
      ]),
      'text.txt': 'needle text\n',
    });
    const result = await grep({ pattern: 'needle', path: root });
    expect(result.matches.map((m) => [m.path, m.lineNumber, m.line])).toEqual([
      ['late.bin', 1, 'needle first'],
      ['text.txt', 1, 'needle text'],
    ]);
    expect(result.binaryFilesSkipped).toBe(2);
    expect(result.filesSearched).toBe(3);
    // As `rg --count`, a file whose search stopped at a NUL has no count.
    const counts = await grep({ pattern: 'needle', path: root, mode: 'count' });
    expect(counts.matches.map((m) => [m.path, m.matchCount])).toEqual([['text.txt', 1]]);
    expect(counts.binaryFilesSkipped).toBe(2);
    // In memory, content is searched whole, NUL bytes and all.
    const inMemory = search(fs.readFileSync(path.join(root, 'early.bin')), { pattern: 'needle' });
    expect(inMemory.matches.map((m) => m.lineNumber)).toEqual([1, 2]);
  });

  test('maxFileSize skips larger files and counts them; a file of exactly that size is searched', async () => {
    const exact = 'needle'.padEnd(99, '.') + '\n';
    expect(exact.length).toBe(100);
    const root = fixture('grep-size', {
      'exact.txt': exact,
      'over.txt': `${exact}x`,
      'large.txt': `needle\n${'x'.repeat(10_000)}\n`,
      'small.txt': 'needle\n',
      'empty.txt': '',
    });
    const result = await grep({ pattern: 'needle', path: root, maxFileSize: 100 });
    expect(result.matches.map((m) => m.path)).toEqual(['exact.txt', 'small.txt']);
    expect(result.filesSkippedTooLarge).toBe(2);
    expect(result.filesSearched).toBe(3);
    const zero = await grep({ pattern: 'needle', path: root, maxFileSize: 0 });
    expect(zero.matches).toEqual([]);
    expect(zero.filesSkippedTooLarge).toBe(4);
    const unlimited = await grep({ pattern: 'needle', path: root });
    expect(unlimited.filesSkippedTooLarge).toBe(0);
    expect(unlimited.matches).toHaveLength(4);
  });

  test('a file far above 4 MiB is searched whole: a match on its last line is found', async () => {
    const line = 'plain text line without the word, repeated many times over\n';
    const lines = Math.ceil((6 << 20) / line.length);
    const root = fixture('grep-large', { 'big.txt': `${line.repeat(lines)}the final needle\n` });
    const result = await grep({ pattern: 'needle', path: root });
    expect(result.matches).toEqual([{ path: 'big.txt', lineNumber: lines + 1, line: 'the final needle' }]);
  });

  test('maxColumns cuts on a character boundary and marks the result truncated', async () => {
    const root = fixture('grep-columns', {
      'cjk.txt': '日本語テキスト needle\n',
      'emoji.txt': '😀😀😀 needle\n',
      'accents.txt': 'héllo wörld needle\n',
      'short.txt': 'needle\n',
      'context.txt': 'a very long line of context before the match\nneedle\nshort\n',
    });
    const result = await grep({ pattern: 'needle', path: root, maxColumns: 4, context: 1 });
    const byPath = Object.fromEntries(result.matches.map((m) => [m.path, m]));
    expect(byPath['cjk.txt']).toMatchObject({ line: '日本語テ', truncated: true });
    expect(byPath['emoji.txt']).toMatchObject({ line: '😀😀😀 ', truncated: true });
    expect(byPath['accents.txt']).toMatchObject({ line: 'héll', truncated: true });
    expect(byPath['short.txt']).toEqual({ path: 'short.txt', lineNumber: 1, line: 'need', truncated: true });
    // A long context line alone marks the result.
    expect(byPath['context.txt']).toMatchObject({
      line: 'need',
      truncated: true,
      contextBefore: [{ lineNumber: 1, line: 'a ve' }],
      contextAfter: [{ lineNumber: 3, line: 'shor' }],
    });
    // A line of exactly maxColumns characters is untouched and not marked.
    const exact = await grep({ pattern: 'needle', path: root, glob: 'short.txt', maxColumns: 6 });
    expect(exact.matches).toEqual([{ path: 'short.txt', lineNumber: 1, line: 'needle' }]);
    const wide = await grep({ pattern: 'needle', path: root, maxColumns: 200, context: 1 });
    for (const match of wide.matches) expect(match.truncated).toBeUndefined();
    expect(wide.matches.find((m) => m.path === 'emoji.txt')!.line).toBe('😀😀😀 needle');
    // Code points, not UTF-16 units: two emoji are two characters.
    const two = await grep({ pattern: 'needle', path: root, glob: 'emoji.txt', maxColumns: 2 });
    expect(two.matches[0]!.line).toBe('😀😀');
    // In memory too.
    expect(search('ßßßß needle\n', { pattern: 'needle', maxColumns: 3 }).matches[0]).toMatchObject({
      line: 'ßßß',
      truncated: true,
    });
  });

  test('a FIFO in the tree never blocks grep', async () => {
    const root = fixture('grep-fifo', { 'a.txt': 'needle a\n', 'z.txt': 'needle z\n' });
    run('mkfifo', [path.join(root, 'pipe.txt')]);
    run('mkfifo', [path.join(root, 'needle')]);
    for (const extra of [{}, { glob: '*.txt' }, { type: 'txt' }, { gitignore: false }, { cache: true }, { mode: 'count' as const }]) {
      const started = performance.now();
      const result = await within(5_000, grep({ pattern: 'needle', path: root, ...extra }));
      const elapsed = performance.now() - started;
      expect(result.matches.map((m) => m.path)).toEqual(['a.txt', 'z.txt']);
      expect(result.filesSearched).toBe(2);
      expect(elapsed).toBeLessThan(2_000);
    }
  });

  test('a path that is a FIFO is EFTYPE, promptly', async () => {
    const root = fixture('grep-fifo-path');
    const fifo = path.join(root, 'pipe');
    run('mkfifo', [fifo]);
    const error = await within(5_000, rejection(grep({ pattern: 'x', path: fifo })));
    expect(error.code).toBe('EFTYPE');
    expect(error.message).toContain(fifo);
  });

  test('the answer says whether the path named one file', async () => {
    const root = fixture('grep-path-kind', { 'a.txt': 'needle\n' });
    const file = await grep({ pattern: 'needle', path: path.join(root, 'a.txt') });
    expect({ pathIsFile: file.pathIsFile, paths: file.matches.map((m) => m.path) }).toEqual({ pathIsFile: true, paths: ['a.txt'] });
    expect((await grep({ pattern: 'needle', path: root })).pathIsFile).toBe(false);
    expect(search('needle\n', { pattern: 'needle' }).pathIsFile).toBe(false);
  });

  test('`{` and `}` that cannot be a repetition are literal', async () => {
    const root = fixture('grep-braces', {
      'tpl.ts': 'const s = `hello ${name}`;\nfunction() {\n  return {};\n}\naa\na{2}\n',
    });
    const lines = async (pattern: string, extra: Partial<GrepOptions> = {}) =>
      (await grep({ pattern, path: root, ...extra })).matches.map((m) => m.lineNumber);
    expect(await lines('${name}')).toEqual([1]);
    expect(await lines('`hello ${name}`')).toEqual([1]);
    expect(await lines(String.raw`function\(\) {`)).toEqual([2]);
    expect(await lines('function() {', { literal: true })).toEqual([2]);
    // As a regex `()` is an empty group; the brace is still no error.
    expect(await lines('function() {')).toEqual([]);
    expect(await lines('{}')).toEqual([3]);
    expect(await lines('^}$')).toEqual([4]);
    expect(await lines(String.raw`\{\}`)).toEqual([3]);
    expect(await lines('[{]')).toEqual([1, 2, 3, 6]);
    // A counted repetition stays one.
    expect(await lines('^a{2}$')).toEqual([5]);
    expect(await lines(String.raw`^a\{2\}$`)).toEqual([6]);
    expect(await lines(String.raw`\p{Ll}{6}`)).toEqual([2, 3]);
    // The same rule in memory.
    expect(search('let s = `${name}`;\n', { pattern: '${name}' }).totalMatches).toBe(1);
    expect(hasMatch('let s = `${name}`;', '${name}')).toBe(true);
    expect(hasMatch('function() {', String.raw`\) {`)).toBe(true);
    expect(hasMatch('x {', 'x {', { ignoreCase: true })).toBe(true);
  });

  test('CRLF lines keep their `\\r`, a multiline match spans lines, line numbers count from 1', async () => {
    const root = fixture('grep-lines', { 'crlf.txt': 'one\r\ntwo needle\r\nthree\r\n', 'multi.txt': 'a\nb\nc\n' });
    const crlf = await grep({ pattern: 'needle', path: root, context: 1 });
    expect(crlf.matches).toEqual([
      {
        path: 'crlf.txt',
        lineNumber: 2,
        line: 'two needle\r',
        contextBefore: [{ lineNumber: 1, line: 'one\r' }],
        contextAfter: [{ lineNumber: 3, line: 'three\r' }],
      },
    ]);
    const multi = await grep({ pattern: String.raw`a\nb`, path: root, multiline: true });
    expect(multi.matches).toEqual([{ path: 'multi.txt', lineNumber: 1, line: 'a\nb' }]);
    expect(multi.totalMatches).toBe(1);
    expect(hasMatch('a\nb', String.raw`a\nb`, { multiline: true })).toBe(true);
  });
});

describe('errors', () => {
  let root = '';
  beforeAll(() => {
    root = fixture('grep-errors', { 'a.txt': 'needle\n' });
  });

  test('a bad regex is EINVAL naming the pattern', async () => {
    for (const pattern of ['(unclosed', '[z-a]', '*a', 'a{2,1}', String.raw`\p{NoSuchClass}`]) {
      const error = await rejection(grep({ pattern, path: root }));
      expect(error).toBeInstanceOf(Error);
      expect(error.code).toBe('EINVAL');
      expect(error.message).toContain(pattern);
      const inMemory = thrown(() => search('x', { pattern }));
      expect(inMemory.code).toBe('EINVAL');
      expect(inMemory.message).toContain(pattern);
      expect(thrown(() => hasMatch('x', pattern)).code).toBe('EINVAL');
    }
    // A line break in a pattern needs multiline, as in rg.
    const newline = await rejection(grep({ pattern: String.raw`a\nb`, path: root }));
    expect(newline.code).toBe('EINVAL');
    expect(newline.message).toContain(String.raw`a\nb`);
  });

  test('an unknown type is EINVAL listing close names', async () => {
    const error = await rejection(grep({ pattern: 'x', path: root, type: 'russt' }));
    expect(error.code).toBe('EINVAL');
    expect(error.message).toContain('russt');
    expect(error.message).toContain('rust');
  });

  test('glob, type and typeNot take lists, as rg repeats -g, -t and -T', async () => {
    const dir = fixture('grep-lists', {
      'src/a.rs': 'needle\n',
      'src/b.ts': 'needle\n',
      'docs/c.md': 'needle\n',
    });
    const paths = async (options: Partial<GrepOptions>) =>
      (await grep({ pattern: 'needle', path: dir, mode: 'filesWithMatches', ...options })).matches.map((m) => m.path);
    expect(await paths({ glob: ['*.md', '*.ts'] })).toEqual(['docs/c.md', 'src/b.ts']);
    expect(await paths({ glob: ['src/**', '!*.ts'] })).toEqual(['src/a.rs']);
    expect(await paths({ glob: '*.rs' })).toEqual(['src/a.rs']);
    expect(await paths({ type: ['rust', 'md'] })).toEqual(['docs/c.md', 'src/a.rs']);
    expect(await paths({ typeNot: 'rust' })).toEqual(['docs/c.md', 'src/b.ts']);
    expect(await paths({ type: ['rust', 'ts'], typeNot: ['ts'] })).toEqual(['src/a.rs']);
    expect((await rejection(grep({ pattern: 'x', path: dir, type: ['rust', 'russt'] }))).code).toBe('EINVAL');
  });

  test('bad modes and option types are EINVAL', async () => {
    const bad: Array<Record<string, unknown>> = [
      { mode: 'lines' },
      { maxCount: '3' },
      { maxCount: -1 },
      { offset: 1.5 },
      { context: -1 },
      { contextAfter: 'two' },
      { ignoreCase: 'yes' },
      { glob: 5 },
      { glob: ['*.ts', 5] },
      { type: 7 },
      { maxFileSize: -1 },
      { maxColumns: 'wide' },
      { timeoutMs: -5 },
      { pattern: 5 },
      { pattern: undefined },
    ];
    for (const options of bad) {
      const error = await rejection(grep({ pattern: 'needle', path: root, ...options } as unknown as GrepOptions));
      expect({ options, code: error.code }).toEqual({ options, code: 'EINVAL' });
    }
    const notObject = await rejection(grep(null as unknown as GrepOptions));
    expect(notObject.code).toBe('EINVAL');
    const mode = await rejection(grep({ pattern: 'x', path: root, mode: 'lines' as GrepOptions['mode'] }));
    expect(mode.message).toContain('lines');
    expect(thrown(() => search('x', { pattern: 'x', mode: 'lines' as GrepOptions['mode'] })).code).toBe('EINVAL');
    expect(thrown(() => search(5 as unknown as string, { pattern: 'x' })).code).toBe('EINVAL');
    expect(thrown(() => hasMatch('x', 5 as unknown as string)).code).toBe('EINVAL');
  });

  test('a missing path is ENOENT; a path through a file is ENOTDIR', async () => {
    const missing = path.join(root, 'no', 'such', 'dir');
    const error = await rejection(grep({ pattern: 'x', path: missing }));
    expect(error.code).toBe('ENOENT');
    expect(error.message).toContain(missing);
    const through = await rejection(grep({ pattern: 'x', path: path.join(root, 'a.txt', 'sub') }));
    expect(through.code).toBe('ENOTDIR');
  });

  test('a pre-aborted signal is ABORT_ERR before any walk', async () => {
    const controller = new AbortController();
    controller.abort(new Error('too late'));
    const before = fsScanCacheStats();
    let calls = 0;
    for (const cache of [false, true]) {
      const error = await rejection(grep({ pattern: 'needle', path: root, cache, signal: controller.signal }, () => calls++));
      expect(error.code).toBe('ABORT_ERR');
      expect(error.name).toBe('AbortError');
      expect((error.cause as Error).message).toBe('too late');
    }
    // Even a call that would fail for its path or pattern reports the abort first.
    expect((await rejection(grep({ pattern: '(', path: '/no/such', signal: controller.signal }))).code).toBe('ABORT_ERR');
    expect(calls).toBe(0);
    expect(fsScanCacheStats()).toEqual(before);
  });

  test('timeoutMs 0 is ETIMEDOUT', async () => {
    const error = await rejection(grep({ pattern: 'needle', path: root, timeoutMs: 0 }));
    expect(error.code).toBe('ETIMEDOUT');
  });
});

describe('cache use (in a child process with a 10-minute TTL)', () => {
  const LONG_TTL = { FS_SCAN_CACHE_TTL_MS: '600000' };

  test('cache: true answers from the cached file list until invalidateFsScanCache', async () => {
    const root = fixture('grep-cache', { 'a.txt': 'needle a\n', 'sub/s.txt': 'needle s\n' });
    type Observed = { paths: string[]; walks: number };
    const out = await runJson<{
      fill: Observed;
      stale: Observed;
      uncached: Observed;
      staleAfterUncached: Observed;
      nonCanonicalRoot: Observed;
      editedContent: Observed;
      afterInvalidate: Observed;
      scans: number;
    }>('grep-cache-scenario.ts', ['stale-until-invalidated', root], { env: LONG_TTL });
    expect(out.fill).toEqual({ paths: ['a.txt', 'sub/s.txt'], walks: 1 });
    // A file added behind the cache's back is not seen, and nothing is walked.
    expect(out.stale).toEqual({ paths: ['a.txt', 'sub/s.txt'], walks: 0 });
    // cache: false walks privately and sees it, leaving the cached list alone.
    expect(out.uncached).toEqual({ paths: ['a.txt', 'b.txt', 'sub/s.txt'], walks: 1 });
    expect(out.staleAfterUncached).toEqual({ paths: ['a.txt', 'sub/s.txt'], walks: 0 });
    // `sub/..` is the same root.
    expect(out.nonCanonicalRoot).toEqual({ paths: ['a.txt', 'sub/s.txt'], walks: 0 });
    // The cache holds the file list, never contents: an edit is seen at once.
    expect(out.editedContent).toEqual({ paths: ['a.txt'], walks: 0 });
    expect(out.afterInvalidate).toEqual({ paths: ['a.txt', 'b.txt', 'sub/s.txt'], walks: 1 });
    expect(out.scans).toBe(1);
  });

  test('the content index skips files that cannot match, never one that changed', async () => {
    const root = fixture('grep-signatures', {
      'a.txt': 'needle a\n',
      'sub/s.txt': 'needle s\n',
      'sub/t.txt': 'other text\n',
      'bin.dat': Buffer.from('zqxjkvbw\0'),
    });
    type Read = { paths: string[]; searched: number; skipped: number };
    const out = await runJson<{
      first: Read;
      second: Read;
      indexed: number;
      ruledOut: Read;
      edited: Read;
      afterInvalidate: number;
    }>('grep-cache-scenario.ts', ['index', root], { env: LONG_TTL });
    const needles = { paths: ['a.txt', 'sub/s.txt'], searched: 4, skipped: 0 };
    expect(out.first).toEqual(needles);
    expect(out.second).toEqual(needles);
    // The three text files, and the binary one (its search stops at once, whatever the pattern).
    expect(out.indexed).toBe(4);
    expect(out.ruledOut).toEqual({ paths: [], searched: 4, skipped: 4 });
    expect(out.edited).toEqual({ paths: ['a.txt'], searched: 4, skipped: 3 });
    expect(out.afterInvalidate).toBe(0);
  });

  test('gitignore: false with cache: true stores nothing', async () => {
    const root = fixture('grep-cache-noignore', { '.gitignore': '*.log\n', 'a.txt': 'needle\n', 'b.log': 'needle\n' });
    fs.mkdirSync(path.join(root, '.git'));
    const out = await runJson<{
      noIgnore: { paths: string[]; walks: number; scans: number; entries: number }[];
      honouring: { paths: string[]; walks: number; scans: number; entries: number };
    }>('grep-cache-scenario.ts', ['gitignore-off', root], { env: LONG_TTL });
    for (const call of out.noIgnore) {
      expect(call).toEqual({ paths: ['a.txt', 'b.log'], walks: 1, scans: 0, entries: 0 });
    }
    expect(out.honouring.paths).toEqual(['a.txt']);
    expect(out.honouring.walks).toBe(1);
    expect(out.honouring.scans).toBe(1);
    expect(out.honouring.entries).toBeGreaterThan(0);
  });
});
