/**
 * One new process of bench/restart.ts: times its first cached answer, the
 * first 100 entries of a glob of every entry (the defaults: hidden off,
 * .gitignore on, node_modules out), which needs the whole scan; then takes
 * the whole listing, node_modules in, from the cache, untimed, to hash it;
 * prints `{ms, count, hash, rssMiB, stats}` as JSON (`rssMiB`: resident
 * memory once the listing is hashed), after waiting for a record it writes.
 * With `--files`, prints every file's path instead, one per line.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface Api {
  glob(o: { pattern: string; path: string; fileType?: number; cache?: boolean; mtime?: boolean; maxResults?: number; includeNodeModules?: boolean }):
    Promise<{ matches: { path: string }[]; totalMatches: number }>;
  fsScanCacheStats(): { walks: number; persist: { saved: number; notSaved: number; restored: number; dirsRelisted: number } };
}

const here = fileURLToPath(new URL('.', import.meta.url));
const n = (await import(pathToFileURL(join(here, '..', '..', 'packages', 'natives', 'src', 'index.ts')).href)) as Api;
const [tree, mode] = process.argv.slice(2);
if (!tree) throw new Error('usage: restart-child.ts <tree> [--files]');

if (mode === '--files') {
  const files = await n.glob({ pattern: '**/*', path: tree, fileType: 1, mtime: false, includeNodeModules: true });
  process.stdout.write(files.matches.map((m) => m.path).join('\n') + '\n');
} else {
  const t0 = performance.now();
  await n.glob({ pattern: '**/*', path: tree, cache: true, mtime: false, maxResults: 100 });
  const ms = performance.now() - t0;
  const all = await n.glob({ pattern: '**/*', path: tree, cache: true, mtime: false, includeNodeModules: true });
  const hash = createHash('sha256');
  for (const m of all.matches) hash.update(m.path).update('\0');
  // A walk, or a restore that found changes, writes a record: wait for it,
  // so the next process finds it (and this one does not exit mid-write).
  const stats = () => n.fsScanCacheStats();
  const writes = stats().walks > 0 || stats().persist.dirsRelisted > 0;
  const deadline = Date.now() + 120_000;
  while (writes && process.env.FS_SCAN_CACHE_PERSIST === '1' && stats().persist.saved + stats().persist.notSaved === 0) {
    if (Date.now() > deadline) throw new Error('the record was not written within 120 s');
    await new Promise((r) => setTimeout(r, 20));
  }
  const rssMiB = process.memoryUsage().rss / 2 ** 20;
  console.log(JSON.stringify({ ms, count: all.totalMatches, hash: hash.digest('hex'), rssMiB, stats: stats() }));
}
