// The TypeScript API under Node 20 (through tsx): defaults, streaming, errors and cancellation.
import { strict as assert } from 'node:assert';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileType, fsScanCacheStats, fuzzyFind, glob, grep, hasMatch, invalidateFsScanCache, search } from '../../packages/natives/src/index.ts';

const root = mkdtempSync(join(tmpdir(), 'natives-node-'));
try {
  mkdirSync(join(root, 'src/deep'), { recursive: true });
  for (const rel of ['src/a.ts', 'src/deep/b.ts', 'README.md']) writeFileSync(join(root, rel), rel);

  const result = await glob({ pattern: '*.ts', path: root });
  assert.deepEqual(result.matches.map((m) => m.path), ['src/a.ts', 'src/deep/b.ts']);
  assert.equal(result.matches[0].fileType, FileType.File);
  assert.ok((result.matches[0].mtime ?? 0) > 0);

  const streamed: string[] = [];
  const limited = await glob({ pattern: '*', path: root, maxResults: 2, cache: true }, (m) => streamed.push(m.path));
  assert.deepEqual(streamed, limited.matches.map((m) => m.path));
  assert.equal(limited.limitReached, true);
  assert.ok(fsScanCacheStats().scans >= 1);
  invalidateFsScanCache(root);
  assert.equal(fsScanCacheStats().scans, 0);

  await assert.rejects(glob({ pattern: 'a[', path: root }), { code: 'EINVAL' });
  await assert.rejects(glob({ pattern: '*', path: join(root, 'missing') }), { code: 'ENOENT' });
  await assert.rejects(glob({ pattern: '*', path: root, signal: AbortSignal.abort() }), { code: 'ABORT_ERR' });
  const found = await grep({ pattern: 'src/.*\\.ts', path: root }, () => {});
  assert.deepEqual(found.matches.map((m) => `${m.path}:${m.lineNumber}`), ['src/a.ts:1', 'src/deep/b.ts:1']);
  assert.equal(search('x ${y}\n', { pattern: '${y}' }).totalMatches, 1);
  assert.equal(hasMatch('a\nb', 'a\\nb', { multiline: true }), true);
  await assert.rejects(grep({ pattern: '(', path: root }), { code: 'EINVAL' });
  const fuzzy = await fuzzyFind({ query: 'deep', path: root, maxResults: 1 });
  assert.equal(fuzzy.matches[0]?.path, 'src/deep/');

  console.log('node smoke: glob, grep, search, hasMatch, fuzzyFind, streaming, cache stats, invalidation, errors ok');
} finally {
  rmSync(root, { recursive: true, force: true });
}
