/**
 * `globIter` and `grepIter`: results read with `for await`, in the order and number the callback
 * forms give, with backpressure (a consumer that stops taking holds the native work at a bounded
 * number of waiting results) and an early `break` cancelling the native work.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { codedRejection } from './support/errors.ts';
import { pathsOf, removeDir, tempDir, writeTree } from './support/fs.ts';
import { PULL_WINDOW_BATCHES, glob, globIter, grep, grepIter, type GrepMatch } from '../packages/natives/src/index.ts';

/** Results the native side puts in one batch at most (`BATCH_MAX_ITEMS` in crates/natives/src/stream.rs). */
const BATCH_MAX_ITEMS = 256;
/** The most results that can wait in JS while the consumer holds one batch: the window, and the batch it took. */
const WAITING_BOUND = (PULL_WINDOW_BATCHES + 1) * BATCH_MAX_ITEMS;

/** More entries than the window holds, so no walk or search can end while its consumer holds back. */
const FILES = 1500;
const LINES_PER_FILE = 16;

let root = '';
beforeAll(() => {
  root = tempDir('iterate');
  const files: Record<string, string> = {};
  const lines = Array.from({ length: LINES_PER_FILE }, (_, i) => `needle ${i}\n`).join('');
  expect(Math.min(FILES, FILES * LINES_PER_FILE)).toBeGreaterThan(WAITING_BOUND);
  for (let i = 0; i < FILES; i++) files[`dir${i % 7}/f${String(i).padStart(3, '0')}.txt`] = lines;
  writeTree(root, files);
});
afterAll(() => removeDir(root));

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const taken: T[] = [];
  for await (const item of items) taken.push(item);
  return taken;
}

/** Wait `ms` in slices, checking `each` after every one (a bound must hold all along). */
async function holdFor(ms: number, each: () => void): Promise<void> {
  for (let waited = 0; waited < ms; waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    each();
  }
}

describe('for await', () => {
  test('grepIter yields what grep returns, in order, and result carries its counts', async () => {
    const options = { pattern: 'needle 1\\d\\b', path: root };
    const expected = await grep(options);
    const stream = grepIter(options);
    const taken: GrepMatch[] = await all(stream);
    expect(taken).toEqual(expected.matches);
    const { matches: _matches, ...counts } = expected;
    expect(await stream.result).toEqual(counts);
  });

  test('globIter yields what glob returns, in both call shapes', async () => {
    const expected = pathsOf((await glob({ pattern: ['dir1/*.txt', 'dir2/*'], path: root, ignore: '*5.txt' })).matches);
    expect(expected.length).toBeGreaterThan(10);
    expect(pathsOf(await all(globIter({ pattern: ['dir1/*.txt', 'dir2/*'], path: root, ignore: '*5.txt' })))).toEqual(expected);
    expect(pathsOf(await all(globIter(['dir1/*.txt', 'dir2/*'], { path: root, ignore: ['*5.txt'] })))).toEqual(expected);
    const stream = globIter('**/*.txt', { path: root });
    expect((await all(stream)).length).toBe(FILES);
    expect(await stream.result).toMatchObject({ totalMatches: FILES, limitReached: false, unreadable: [] });
  });

  test('a consumer that stops taking holds the search: at most the window waits, and the search does not end', async () => {
    const stream = grepIter({ pattern: 'needle', path: root });
    let ended = false;
    stream.result.then(
      () => (ended = true),
      () => (ended = true),
    );
    const first = await stream.next();
    expect(first.done).toBe(false);
    let most = 0;
    await holdFor(400, () => {
      most = Math.max(most, stream.buffered);
      expect(stream.buffered).toBeLessThanOrEqual(WAITING_BOUND);
    });
    expect(most).toBeGreaterThan(0);
    expect(ended).toBe(false);
    const rest = await all(stream);
    expect(1 + rest.length).toBe(FILES * LINES_PER_FILE);
    expect((await stream.result).totalMatches).toBe(FILES * LINES_PER_FILE);
  });

  test('break cancels the native work: result rejects with ABORT_ERR once it has stopped', async () => {
    for (const stream of [grepIter({ pattern: 'needle', path: root }), globIter({ pattern: '**/*', path: root })]) {
      let taken = 0;
      for await (const _ of stream) {
        if (++taken === 3) break;
      }
      expect(taken).toBe(3);
      expect((await codedRejection(stream.result)).code).toBe('ABORT_ERR');
      expect(await stream.next()).toEqual({ value: undefined, done: true });
    }
  });

  test('a bad pattern, a missing path or an aborted signal rejects the first step, with the call\'s error', async () => {
    const bad = await codedRejection(grepIter({ pattern: 'a[', path: root }).next());
    expect([bad.code, bad.option, bad.value]).toEqual(['EINVAL', 'pattern', 'a[']);
    const ignored = await codedRejection(globIter('*', { path: root, ignore: ['b['] }).next());
    expect([ignored.code, ignored.option]).toEqual(['EINVAL', 'ignore']);
    expect((await codedRejection(globIter('*', { path: `${root}/missing` }).next())).code).toBe('ENOENT');
    const signal = AbortSignal.abort();
    expect((await codedRejection(grepIter({ pattern: 'x', path: root, signal }).next())).code).toBe('ABORT_ERR');
  });
});
