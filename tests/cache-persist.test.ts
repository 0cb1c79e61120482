/**
 * Scans kept across restarts (`FS_SCAN_CACHE_PERSIST=1`), end to end: one
 * process walks a repository and writes its records; the tree changes; a
 * new process (under Bun, then Node 20) answers cached globs, grep and
 * fuzzyFind from the records, proved current, with no walk, exactly as
 * uncached calls answer. Eight processes starting at once list the tree
 * once. A damaged record is rebuilt, counted; records are private to their
 * user.
 */
import { afterEach, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runJson } from './support/child.ts';
import { gitInit, removeDir, tempDir, writeTree } from './support/fs.ts';

interface Outcome {
  mismatches: string[];
  stats: {
    walks: number;
    persist: {
      enabled: boolean; saved: number; restored: number; dirsRelisted: number; missing: number;
      rebuilt: Record<string, number>;
    };
  };
}

/** A record vouches only for directories changed at least this long before its walk. */
const RACY_SLACK_MS = 2_100;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
});

function repository(): { tree: string; home: string } {
  const tree = tempDir('persist-tree');
  const home = tempDir('persist-home');
  dirs.push(tree, home);
  gitInit(tree);
  writeTree(tree, {
    '.gitignore': 'ignored/\n',
    'src/a.ts': 'const needle = 1;\n',
    'src/deep/b.ts': 'needle\n',
    'src/deep/er/c.ts': '',
    '.hidden/d.ts': 'needle\n',
    'ignored/e.ts': 'needle\n',
    'node_modules/pkg/index.js': 'needle\n',
  });
  return { tree, home };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function record(tree: string, home: string): Promise<void> {
  await sleep(RACY_SLACK_MS);
  const first = await runJson<Outcome>('persist-scenario.ts', [tree, home, 'record']);
  expect(first.mismatches).toEqual([]);
  expect(first.stats.persist).toMatchObject({ enabled: true, restored: 0, missing: 3 });
}

function change(tree: string): void {
  fs.writeFileSync(path.join(tree, 'src/deep/new.ts'), 'needle again\n');
  fs.rmSync(path.join(tree, 'src/a.ts'));
  fs.renameSync(path.join(tree, 'src/deep/er'), path.join(tree, 'src/moved'));
  fs.mkdirSync(path.join(tree, 'ignored/more'));
  fs.writeFileSync(path.join(tree, '.hidden/f.ts'), 'needle\n');
}

test('a new process watching the filesystem restores too, and follows the changes made after', async () => {
  const { tree, home } = repository();
  await record(tree, home);
  change(tree);
  const watched = await runJson<Outcome & { stats: { watch: { watchedRoots: number; eventsApplied: number } } }>(
    'persist-scenario.ts',
    [tree, home, 'change-after'],
    { env: { FS_SCAN_CACHE_WATCH: '1' } },
  );
  expect(watched.mismatches).toEqual([]);
  expect(watched.stats.walks).toBe(0);
  expect(watched.stats.persist.restored).toBe(3);
  expect(watched.stats.watch.watchedRoots).toBe(3);
}, 60_000);

for (const runtime of ['bun', 'node'] as const) {
  test(`a new process (${runtime}) answers from the records, proved current after changes, with no walk`, async () => {
    const { tree, home } = repository();
    await record(tree, home);
    change(tree);
    const second = await runJson<Outcome>('persist-scenario.ts', [tree, home], { node: runtime === 'node' });
    expect(second.mismatches).toEqual([]);
    expect(second.stats.walks).toBe(0);
    expect(second.stats.persist.restored).toBe(3);
    expect(second.stats.persist.dirsRelisted).toBeGreaterThan(0);
  }, 60_000);
}

test('a damaged record is rebuilt, counted, never trusted; records are private to their user', async () => {
  const { tree, home } = repository();
  await record(tree, home);
  const scans = path.join(home, 'scans');
  expect(fs.statSync(scans).mode & 0o777).toBe(0o700);
  const records = fs.readdirSync(scans).filter((name) => name.endsWith('.scan'));
  expect(records.length).toBe(3);
  for (const name of records) {
    const file = path.join(scans, name);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const bytes = fs.readFileSync(file);
    bytes[bytes.length >> 1]! ^= 0x10;
    fs.writeFileSync(file, bytes);
  }
  const after = await runJson<Outcome>('persist-scenario.ts', [tree, home]);
  expect(after.mismatches).toEqual([]);
  expect(after.stats.persist.restored).toBe(0);
  expect(after.stats.persist.rebuilt.corrupt).toBe(3);
  expect(after.stats.walks).toBe(3);
}, 60_000);

test('eight processes starting at once on one tree walk it once per partition; the others restore its records', async () => {
  const { tree, home } = repository();
  await sleep(RACY_SLACK_MS);
  const runs = Array.from({ length: 8 }, () => runJson<Outcome>('persist-scenario.ts', [tree, home, 'record']));
  const outcomes = await Promise.all(runs);
  for (const outcome of outcomes) expect(outcome.mismatches).toEqual([]);
  const total = (count: (o: Outcome) => number) => outcomes.reduce((sum, o) => sum + count(o), 0);
  expect(total((o) => o.stats.walks)).toBe(3);
  expect(total((o) => o.stats.persist.restored)).toBe(21);
}, 120_000);
