/**
 * packages/coding-agent's invalidation functions: with a ten-minute TTL only
 * invalidation can explain a fresh answer, and each scenario first shows the
 * change is invisible behind the cache's back (so these tests can fail).
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { runJson } from './support/child.ts';
import { removeDir, tempDir } from './support/fs.ts';
import * as fs from 'node:fs';
import * as path from 'node:path';

const LONG_TTL = { FS_SCAN_CACHE_TTL_MS: '600000', FS_SCAN_EMPTY_RECHECK_MS: '600000' };
let dir = '';

function fixture(): string {
  dir = tempDir('agent-invalidation');
  fs.mkdirSync(path.join(dir, 'sub'));
  fs.writeFileSync(path.join(dir, 'a.txt'), 'a');
  fs.writeFileSync(path.join(dir, 'sub', 'inner.txt'), 'i');
  return dir;
}

afterEach(() => removeDir(dir));

const scenario = <T>(name: string) => runJson<T>('invalidation-scenario.ts', [name, fixture()], { env: LONG_TTL });

describe('invalidateFsScanAfter*', () => {
  test('write: a created file (and its new parents) is seen once invalidated', async () => {
    const r = await scenario<Record<string, string[]>>('write');
    expect(r.before).toEqual(['a.txt', 'sub/inner.txt']);
    expect(r.behindTheBack).toEqual(r.before);
    expect(r.after).toEqual(['a.txt', 'deep/er/made.txt', 'new.txt', 'sub/inner.txt']);
  });

  test('delete: a deleted file and a deleted directory (with a cached root inside) are gone', async () => {
    const r = await scenario<{ before: string[]; behindTheBack: string[]; after: string[]; scansBefore: number; scansAfter: number }>('delete');
    expect(r.behindTheBack).toEqual(r.before);
    expect(r.after).toEqual([]);
    expect(r.scansBefore).toBe(2);
    expect(r.scansAfter).toBe(0);
  });

  test('rename: both sides are invalidated, each under its own cached root, for a file and a directory', async () => {
    const r = await scenario<Record<string, { from: string[]; to: string[] }>>('rename');
    expect(r.before).toEqual({ from: ['a.txt', 'sub/inner.txt'], to: [] });
    expect(r.fileBehindTheBack).toEqual(r.before);
    expect(r.afterFile).toEqual({ from: ['sub/inner.txt'], to: ['b.txt'] });
    expect(r.dirBehindTheBack).toEqual(r.afterFile);
    expect(r.afterDir).toEqual({ from: [], to: ['b.txt', 'sub-renamed/inner.txt'] });
  });

  test('a refused target clears the whole cache instead of throwing', async () => {
    expect(await scenario<{ scans: number }>('refused')).toEqual({ scans: 0 });
  });
});
