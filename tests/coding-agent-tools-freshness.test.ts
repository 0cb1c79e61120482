/**
 * Every mutating agent tool and edit mode leaves the scan cache fresh: with
 * a ten-minute TTL (and no empty-result recheck) only the tools' own
 * invalidation can explain a cached glob seeing the change. One scenario
 * makes a change behind the tools' back and shows it stays stale until
 * invalidated, so these tests can fail.
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
interface Observed {
  before: Files;
  after: Files;
  walksForAfter: number;
  code: string | null;
}

const scenario = <T = Observed>(name: string) => runJson<T>('agent-tools-scenario.ts', [name, fixture()], { env: LONG_TTL });
const BEFORE: Files = { 'a.txt': OLD_MTIME_MS, 'sub/inner.txt': OLD_MTIME_MS };

/** The step succeeded, the cache was filled before it, and the glob after it walked again. */
function expectFreshAfterSuccess(r: Observed): void {
  expect(r.code).toBeNull();
  expect(r.before).toEqual(BEFORE);
  expect(r.walksForAfter).toBe(1);
}

/** `a.txt` is still the only other file, with a new mtime. */
function expectATxtChanged(r: Observed): void {
  expect(Object.keys(r.after)).toEqual(['a.txt', 'sub/inner.txt']);
  expect(r.after['a.txt']).toBeGreaterThan(OLD_MTIME_MS);
  expect(r.after['sub/inner.txt']).toBe(OLD_MTIME_MS);
  expect(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8')).not.toBe('alpha\nbeta\ngamma\n');
}

describe('a cached glob right after each mutating tool sees the change (TTL 600000)', () => {
  test('write: new files (and new parents) appear', async () => {
    const r = await scenario('write');
    expectFreshAfterSuccess(r);
    expect(Object.keys(r.after)).toEqual(['a.txt', 'deep/er/made.txt', 'new.txt', 'sub/inner.txt']);
  });

  test('write: an overwritten file shows its new mtime', async () => {
    const r = await scenario('writeOverwrite');
    expectFreshAfterSuccess(r);
    expectATxtChanged(r);
  });

  test('edit replace: the edited file shows its new mtime', async () => {
    const r = await scenario('replace');
    expectFreshAfterSuccess(r);
    expectATxtChanged(r);
  });

  test('edit hashline: the edited file shows its new mtime', async () => {
    const r = await scenario('hashline');
    expectFreshAfterSuccess(r);
    expectATxtChanged(r);
  });

  test('edit patch, create: the new file (in a new directory) appears', async () => {
    const r = await scenario('patchCreate');
    expectFreshAfterSuccess(r);
    expect(Object.keys(r.after)).toEqual(['a.txt', 'made/by-patch.txt', 'sub/inner.txt']);
  });

  test('edit patch, modify: the patched file shows its new mtime', async () => {
    const r = await scenario('patchModify');
    expectFreshAfterSuccess(r);
    expectATxtChanged(r);
  });

  test('edit patch, delete: the deleted file is gone', async () => {
    const r = await scenario('patchDelete');
    expectFreshAfterSuccess(r);
    expect(Object.keys(r.after)).toEqual(['a.txt']);
  });

  test('edit patch, rename: the old path is gone and the new one appears', async () => {
    const r = await scenario('patchRename');
    expectFreshAfterSuccess(r);
    expect(Object.keys(r.after)).toEqual(['a.txt', 'moved/renamed.txt']);
  });

  test('run touch: the touched file appears', async () => {
    const r = await scenario('runTouch');
    expectFreshAfterSuccess(r);
    expect(Object.keys(r.after)).toEqual(['a.txt', 'sub/inner.txt', 'touched.txt']);
  });

  test('run rm: the removed file is gone', async () => {
    const r = await scenario('runRm');
    expectFreshAfterSuccess(r);
    expect(Object.keys(r.after)).toEqual(['sub/inner.txt']);
  });

  test('run mv: the moved file is at its new path only', async () => {
    const r = await scenario('runMv');
    expectFreshAfterSuccess(r);
    expect(Object.keys(r.after)).toEqual(['sub/inner.txt', 'sub/moved.txt']);
  });

  test('run: a failing command invalidates too', async () => {
    const r = await scenario('runFailing');
    expect(r.code).toBe('EXIT_CODE');
    expect(r.walksForAfter).toBe(1);
    expect(Object.keys(r.after)).toEqual(['a.txt', 'partial.txt', 'sub/inner.txt']);
  });
});

test('a change made behind the tools back stays stale until invalidated', async () => {
  const r = await scenario<{ before: Files; stale: Files; afterInvalidation: Files }>('behindTheBack');
  expect(r.before).toEqual(BEFORE);
  expect(r.stale).toEqual(BEFORE);
  expect(Object.keys(r.afterInvalidation)).toEqual(['sneaky.txt', 'sub/inner.txt']);
});
