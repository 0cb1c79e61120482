/**
 * Every mutating agent tool and edit mode leaves the scan cache fresh: with
 * a ten-minute TTL (and no empty-result recheck) only the tools' own
 * invalidation can explain a cached glob, fuzzyFind or grep seeing the
 * change. One scenario makes a change behind the tools' back and shows it
 * stays stale for all three until invalidated, so these tests can fail; one
 * shows `@` mentions (cached, mention profile) find a file just written.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runJson } from './support/child.ts';
import { removeDir, setMtime, tempDir, writeTree } from './support/fs.ts';

const LONG_TTL = { FS_SCAN_CACHE_TTL_MS: '600000', FS_SCAN_EMPTY_RECHECK_MS: '600000' };
/** Every fixture file's mtime, in ms: long ago, so any change shows. */
const OLD_MTIME_MS = 1_000_000_000_000;
let dir = '';

function fixture(): string {
  dir = tempDir('agent-tools-fresh');
  writeTree(dir, { 'a.txt': 'alpha\nbeta\ngamma\n', 'sub/inner.txt': 'inner\n' });
  for (const rel of ['a.txt', 'sub/inner.txt']) setMtime(path.join(dir, rel), OLD_MTIME_MS / 1000);
  return dir;
}

afterEach(() => removeDir(dir));

type Files = Record<string, number>;
interface Snapshot {
  glob: Files;
  fuzzy: string[];
  grep: { lines: string[]; searched: number; unreadable: number };
}
interface Observed {
  before: Snapshot;
  after: Snapshot;
  walksForAfter: { glob: number; fuzzy: number; grep: number };
  code: string | null;
}

const scenario = <T = Observed>(name: string) => runJson<T>('agent-tools-scenario.ts', [name, fixture()], { env: LONG_TTL });
const BEFORE_FILES: Files = { 'a.txt': OLD_MTIME_MS, 'sub/inner.txt': OLD_MTIME_MS };
const A_LINES = ['a.txt:1:alpha', 'a.txt:2:beta', 'a.txt:3:gamma'];
const INNER_LINES = ['sub/inner.txt:1:inner'];
const BEFORE: Snapshot = {
  glob: BEFORE_FILES,
  fuzzy: ['a.txt', 'sub/inner.txt'],
  grep: { lines: [...A_LINES, ...INNER_LINES], searched: 2, unreadable: 0 },
};

/**
 * The step succeeded, every consumer's cache was filled before it, each of
 * glob, fuzzyFind and grep walked again after it (each has its own cache
 * partition, so each was invalidated, not refreshed by another), and all
 * three see exactly `files` (grep: `lines`, no vanished file).
 */
function expectAllSee(r: Observed, files: string[], lines: string[], code: string | null = null): void {
  expect(r.code).toBe(code);
  expect(r.before).toEqual(BEFORE);
  expect(r.walksForAfter).toEqual({ glob: 1, fuzzy: 1, grep: 1 });
  expect(Object.keys(r.after.glob)).toEqual(files);
  expect(r.after.fuzzy).toEqual(files);
  expect(r.after.grep).toEqual({ lines, searched: files.length, unreadable: 0 });
}

/** `a.txt` has a new mtime (glob) and its new `lines` (grep); the other file is untouched. */
function expectATxtChanged(r: Observed, aLines: string[]): void {
  expectAllSee(r, ['a.txt', 'sub/inner.txt'], [...aLines, ...INNER_LINES]);
  expect(r.after.glob['a.txt']).toBeGreaterThan(OLD_MTIME_MS);
  expect(r.after.glob['sub/inner.txt']).toBe(OLD_MTIME_MS);
  expect(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8')).not.toBe('alpha\nbeta\ngamma\n');
}

const A_EDITED = ['a.txt:1:alpha', 'a.txt:2:BETA', 'a.txt:3:gamma'];

describe('a cached glob, fuzzyFind and grep right after each mutating tool see the change (TTL 600000)', () => {
  test('write: new files (and new parents) appear', async () => {
    const r = await scenario('write');
    expectAllSee(r, ['a.txt', 'deep/er/made.txt', 'new.txt', 'sub/inner.txt'], [...A_LINES, 'deep/er/made.txt:1:m', 'new.txt:1:n', ...INNER_LINES]);
  });

  test('write: an overwritten file shows its new mtime and content', async () => {
    expectATxtChanged(await scenario('writeOverwrite'), ['a.txt:1:replaced']);
  });

  test('edit replace: the edited file shows its new mtime and line', async () => {
    expectATxtChanged(await scenario('replace'), A_EDITED);
  });

  test('edit hashline: the edited file shows its new mtime and line', async () => {
    expectATxtChanged(await scenario('hashline'), A_EDITED);
  });

  test('edit patch, create: the new file (in a new directory) appears', async () => {
    const r = await scenario('patchCreate');
    expectAllSee(r, ['a.txt', 'made/by-patch.txt', 'sub/inner.txt'], [...A_LINES, 'made/by-patch.txt:1:hello', ...INNER_LINES]);
  });

  test('edit patch, modify: the patched file shows its new mtime and line', async () => {
    expectATxtChanged(await scenario('patchModify'), A_EDITED);
  });

  test('edit patch, delete: the deleted file is gone (grep does not even try it)', async () => {
    expectAllSee(await scenario('patchDelete'), ['a.txt'], A_LINES);
  });

  test('edit patch, rename: the old path is gone and the new one appears, with its content, under each side\'s own root too', async () => {
    type Sides = { sub: string[]; moved: string[] };
    const r = await scenario<Observed & { sidesBefore: Sides; sidesAfter: Sides }>('patchRename');
    expectAllSee(r, ['a.txt', 'moved/renamed.txt'], [...A_LINES, 'moved/renamed.txt:1:inner']);
    expect(r.sidesBefore).toEqual({ sub: ['inner.txt'], moved: [] });
    expect(r.sidesAfter).toEqual({ sub: [], moved: ['renamed.txt'] });
  });

  test('run touch: the touched (empty) file appears, and grep searches it', async () => {
    expectAllSee(await scenario('runTouch'), ['a.txt', 'sub/inner.txt', 'touched.txt'], [...A_LINES, ...INNER_LINES]);
  });

  test('run rm: the removed file is gone', async () => {
    expectAllSee(await scenario('runRm'), ['sub/inner.txt'], INNER_LINES);
  });

  test('run mv: the moved file is at its new path only', async () => {
    const r = await scenario('runMv');
    expectAllSee(r, ['sub/inner.txt', 'sub/moved.txt'], [...INNER_LINES, 'sub/moved.txt:1:alpha', 'sub/moved.txt:2:beta', 'sub/moved.txt:3:gamma']);
  });

  test('run: a failing command invalidates too', async () => {
    const r = await scenario('runFailing');
    expectAllSee(r, ['a.txt', 'partial.txt', 'sub/inner.txt'], [...A_LINES, ...INNER_LINES], 'EXIT_CODE');
  });
});

test('a change made behind the tools back stays stale for glob, fuzzyFind and grep until invalidated', async () => {
  const r = await scenario<{ before: Snapshot; stale: Snapshot; staleWalks: object; afterInvalidation: Snapshot; freshWalks: object }>(
    'behindTheBack',
  );
  expect(r.before).toEqual(BEFORE);
  // Served from the cache: the new file is missing, the deleted one still listed (grep finds it vanished).
  expect(r.staleWalks).toEqual({ glob: 0, fuzzy: 0, grep: 0 });
  expect(r.stale.glob).toEqual(BEFORE_FILES);
  expect(r.stale.fuzzy).toEqual(['a.txt', 'sub/inner.txt']);
  expect(r.stale.grep.lines).toEqual(INNER_LINES);
  expect(r.stale.grep.unreadable).toBe(1);
  expect(r.freshWalks).toEqual({ glob: 1, fuzzy: 1, grep: 1 });
  expect(Object.keys(r.afterInvalidation.glob)).toEqual(['sneaky.txt', 'sub/inner.txt']);
  expect(r.afterInvalidation.fuzzy).toEqual(['sneaky.txt', 'sub/inner.txt']);
  expect(r.afterInvalidation.grep).toEqual({ lines: ['sneaky.txt:1:s', ...INNER_LINES], searched: 2, unreadable: 0 });
});

test('mentions resolve through the cached mention profile and see a file the write tool just created', async () => {
  type Seen = { mention: string; resolved: string | null; how: string }[];
  const r = await scenario<{ before: Seen; after: Seen; walksForAfter: number; code: string | null }>('mentions');
  expect(r.code).toBeNull();
  expect(r.before).toEqual([
    { mention: 'made.txt', resolved: null, how: 'none' },
    { mention: 'made', resolved: null, how: 'none' },
  ]);
  expect(r.walksForAfter).toBe(1);
  expect(r.after).toEqual([
    { mention: 'made.txt', resolved: 'deep/er/made.txt', how: 'glob' },
    { mention: 'made', resolved: 'deep/er/made.txt', how: 'fuzzy' },
  ]);
});
