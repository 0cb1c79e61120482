/**
 * The watched scan cache end to end: with file events on and a TTL of ten
 * minutes, another process changes the tree in batches, and after each batch
 * the cached glob (every partition), grep and fuzzyFind answer exactly what an
 * uncached walk answers. Runs in children (the policy is per process): under
 * Bun with FS_SCAN_CACHE_WATCH=1, under Node 20 through `watchFsScanCache()`.
 */
import { afterEach, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { runJson } from './support/child.ts';
import { removeDir, tempDir } from './support/fs.ts';

const LONG_TTL = { FS_SCAN_CACHE_TTL_MS: '600000' };

interface Outcome {
  mismatches: { batch: number; what: string; script: string }[];
  changes: number;
  stats: { walks: number; watch: { enabled: boolean; watchedRoots: number; eventsApplied: number; rewalks: number; fallbacks: Record<string, number> } };
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
});

function fixture(): string {
  const dir = tempDir('watch');
  dirs.push(dir);
  const made = spawnSync('sh', ['-ec', "git init -q . && mkdir -p src/deep/er .hidden ignored node_modules/pkg lib/x && echo 'ignored/' > .gitignore && echo needle > src/a.ts && touch .hidden/c ignored/d node_modules/pkg/index.js"], { cwd: dir });
  expect(made.status).toBe(0);
  return dir;
}

function expectExact(outcome: Outcome, changes: number): void {
  expect(outcome.mismatches).toEqual([]);
  expect(outcome.changes).toBeGreaterThanOrEqual(changes);
  const { watch } = outcome.stats;
  expect(watch.enabled).toBe(true);
  expect(Object.values(watch.fallbacks).every((n) => n === 0)).toBe(true);
  // Most batches were patched, not walked again (rule edits are 1 change in 50).
  expect(watch.eventsApplied).toBeGreaterThan(changes);
}

test('2,000 changes by another process: cached glob, grep and fuzzyFind equal uncached ones after every batch (Bun, FS_SCAN_CACHE_WATCH=1)', async () => {
  const outcome = await runJson<Outcome>('watch-scenario.ts', [fixture(), 'env', '2000'], {
    env: { ...LONG_TTL, FS_SCAN_CACHE_WATCH: '1' },
  });
  expectExact(outcome, 2000);
}, 240_000);

test('watchFsScanCache() does the same under Node 20', async () => {
  const outcome = await runJson<Outcome>('watch-scenario.ts', [fixture(), 'call', '400'], { env: LONG_TTL, node: true });
  expectExact(outcome, 400);
}, 240_000);

test('a mount made under a watched root after its walk falls back to the TTL, counted (mounting sends no event)', async () => {
  if (process.getuid?.() !== 0) {
    console.log('skipped: mounting needs root');
    return;
  }
  const dir = fixture();
  const source = tempDir('watch-mount-source');
  dirs.push(source);
  spawnSync('sh', ['-ec', 'mkdir mnt'], { cwd: dir });
  spawnSync('sh', ['-ec', 'touch bound.txt'], { cwd: source });
  type Seen = { mounted: boolean; before: string[]; cached: string[]; fresh: string[]; watch: Outcome['stats']['watch'] };
  const seen = await runJson<Seen>('watch-mounts.ts', [dir, source], { env: { ...LONG_TTL, FS_SCAN_CACHE_WATCH: '1' } });
  if (!seen.mounted) {
    console.log('skipped: this system does not let root mount');
    return;
  }
  expect(seen.fresh).toContain('mnt/bound.txt');
  // Within the TTL, as without watching; and the stats say why.
  expect(seen.cached).toEqual(seen.before);
  expect(seen.watch.fallbacks.mounts).toBe(1);
  expect(seen.watch.watchedRoots).toBe(0);
}, 60_000);

test('first pages answered at once count every file written just before the call; bad options still reject', async () => {
  const dir = tempDir('watch-first-pages');
  dirs.push(dir);
  const seen = await runJson<{ missed: unknown[]; codes: string[] }>('grep-first-pages.ts', [dir, '200'], {
    env: { ...LONG_TTL, FS_SCAN_CACHE_WATCH: '1' },
  });
  expect(seen.missed).toEqual([]);
  expect(seen.codes).toEqual(['EINVAL', 'EINVAL', 'ETIMEDOUT']);
}, 60_000);
