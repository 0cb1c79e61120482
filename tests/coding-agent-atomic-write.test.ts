/**
 * The exported `atomicWrite` keeps the scan cache fresh: with a ten-minute
 * TTL, only its invalidation can explain a fresh answer, and a file written
 * behind the cache's back shows the cache would otherwise stay stale.
 */
import { afterEach, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runJson } from './support/child.ts';
import { removeDir, tempDir } from './support/fs.ts';

let dir = '';
afterEach(() => removeDir(dir));

test('atomicWrite invalidates the cached scans that saw its path', async () => {
  dir = tempDir('atomic-write');
  fs.writeFileSync(path.join(dir, 'a.txt'), 'a');
  const env = { FS_SCAN_CACHE_TTL_MS: '600000', FS_SCAN_EMPTY_RECHECK_MS: '600000' };
  const seen = await runJson<{ before: string[]; behindTheBack: string[]; after: string[]; created: boolean }>('atomic-write-scenario.ts', [dir], { env });
  expect(seen.before).toEqual(['a.txt']);
  expect(seen.behindTheBack).toEqual(['a.txt']);
  expect(seen.after).toEqual(['a.txt', 'behind.txt', 'deep/written.txt']);
  expect(seen.created).toBe(true);
});
