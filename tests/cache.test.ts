/**
 * Scan-cache behaviour end to end: invalidation, `cache: false`, TTL,
 * the empty-result recheck, eviction and the stats. Every scenario runs in a
 * child process with its own `FS_SCAN_*` policy (see fixtures/cache-scenario.ts).
 */
import { afterEach, beforeAll, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BIG_TREE_ENTRIES, BIG_TREE_FILES, ensureBigTree } from './support/big-tree.ts';
import { runJson } from './support/child.ts';
import { removeDir, tempDir, writeTree } from './support/fs.ts';

/** Each test starts a `bun` child and may sleep through a TTL: generous on a busy machine. */
const CHILD_TIMEOUT_MS = 30_000;

/** The watch stats while watching is off (the default). */
const UNWATCHED = {
  enabled: false,
  watchedRoots: 0,
  watches: 0,
  budget: 0,
  eventsApplied: 0,
  rewalks: 0,
  fallbacks: { overflow: 0, watchBudget: 0, watchLimit: 0, watcherError: 0, cookieTimeout: 0, mounts: 0 },
};

/** The persistence stats while it is off (the default). */
const UNPERSISTED = {
  enabled: false,
  saved: 0,
  notSaved: 0,
  restored: 0,
  dirsRelisted: 0,
  missing: 0,
  rebuilt: { version: 0, corrupt: 0, key: 0, owner: 0, rules: 0, root: 0, changes: 0 },
};

/** The sharing counters of a process that does not share. */
const UNSHARED = {
  enabled: false,
  indexing: 0,
  reading: 0,
  served: 0,
  listsReceived: 0,
  unchanged: 0,
  takeovers: 0,
  alone: 0,
};

/** Watches this test process holds while a child finds its default budget (a quarter of the limit at most: a machine may allow 8 192). */
const HELD_WATCHES = 20_000;

/** The inotify watches held by this user's processes, counted from `/proc` as the kernel lists them. */
function heldInotifyWatches(): number {
  const uid = process.getuid?.();
  let held = 0;
  for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (fs.statSync(`/proc/${pid}`).uid !== uid) continue;
      for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
        if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) !== 'anon_inode:inotify') continue;
        const info = fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8');
        held += info.split('\n').filter((line) => line.startsWith('inotify wd:')).length;
      }
    } catch {
      // The process ended, or its descriptors are not ours to read.
    }
  }
  return held;
}

/** A TTL long enough that only invalidation can explain a fresh answer. */
const LONG_TTL = { FS_SCAN_CACHE_TTL_MS: '600000' };

interface Observed {
  paths: string[];
  walks: number;
}

interface Stats {
  scans: number;
  entries: number;
  bytes: number;
  bytesPerEntry: number;
  walks: number;
  refused: number;
  emptyRechecksSkipped: number;
  watch: typeof UNWATCHED;
  content: { roots: number; files: number; trigrams: number; bytes: number; filesSkipped: number; filesVerified: number; filesAnswered: number };
  names: { indexes: number; entries: number; bytes: number };
  persist: typeof UNPERSISTED;
  shared: typeof UNSHARED;
}

/** The shared large tree, for a walk long enough that concurrent calls surely overlap. */
let bigTree = '';
beforeAll(() => {
  bigTree = ensureBigTree().root;
}, 300_000);

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
});

function fixture(files: readonly string[]): string {
  const dir = tempDir('cache');
  dirs.push(dir);
  writeTree(dir, files);
  return dir;
}

function scenario<T>(name: string, dir: string, env: Record<string, string>): Promise<T> {
  return runJson<T>('cache-scenario.ts', [name, dir], { env });
}

describe('invalidateFsScanCache', () => {
  test('a file created after a cached glob is unseen until it is invalidated', async () => {
    const dir = fixture(['keep.txt', 'sub/deep.txt']);
    const r = await scenario<{
      fill: Observed;
      stale: Observed;
      afterInvalidate: Stats;
      fresh: Observed;
      staleAgain: Observed;
      freshAgain: Observed;
    }>('invalidate-created', dir, LONG_TTL);
    expect(r.fill).toEqual({ paths: ['keep.txt', 'sub/deep.txt'], walks: 1 });
    expect(r.stale).toEqual({ paths: ['keep.txt', 'sub/deep.txt'], walks: 0 });
    expect(r.afterInvalidate.scans).toBe(0);
    expect(r.fresh).toEqual({ paths: ['keep.txt', 'new.txt', 'sub/deep.txt'], walks: 1 });
    expect(r.staleAgain).toEqual({ paths: ['keep.txt', 'new.txt', 'sub/deep.txt'], walks: 0 });
    expect(r.freshAgain).toEqual({ paths: ['keep.txt', 'new.txt', 'rel.txt', 'sub/deep.txt'], walks: 1 });
  }, CHILD_TIMEOUT_MS);

  test('invalidating a directory drops the cached roots inside it, not its siblings', async () => {
    const dir = fixture(['sub/a.txt', 'sub/inner/b.txt', 'sub2/c.txt', 'other/deep/file.txt']);
    const r = await scenario<Record<string, Observed> & { filled: number; afterSub: number; withTop: number; afterDeep: number }>(
      'invalidate-directory',
      dir,
      LONG_TTL,
    );
    expect(r.filled).toBe(4);
    // sub and sub/inner dropped; sub2 (a name prefix, not a path prefix) and other kept.
    expect(r.afterSub).toBe(2);
    expect(r.sub.walks).toBe(1);
    expect(r.inner.walks).toBe(1);
    expect(r.sub2.walks).toBe(0);
    expect(r.other.walks).toBe(0);
    expect(r.withTop).toBe(5);
    // A deep target drops the roots containing it (top, other) and keeps the rest.
    expect(r.afterDeep).toBe(3);
    expect(r.top.walks).toBe(1);
    expect(r.otherAgain.walks).toBe(1);
    expect(r.subAgain.walks).toBe(0);
  }, CHILD_TIMEOUT_MS);

  test('invalidating a deleted path works (parent fallback, also through a symlink)', async () => {
    const dir = fixture(['real/keep.txt', 'real/gone.txt', 'real/d/e/f.txt', 'real/via-alias.txt']);
    fs.symlinkSync(path.join(dir, 'real'), path.join(dir, 'alias'));
    const r = await scenario<Record<string, Observed>>('invalidate-deleted', dir, LONG_TTL);
    expect(r.fill).toEqual({ paths: ['d/e/f.txt', 'gone.txt', 'keep.txt', 'via-alias.txt'], walks: 1 });
    expect(r.stale).toEqual({ paths: ['d/e/f.txt', 'gone.txt', 'keep.txt', 'via-alias.txt'], walks: 0 });
    expect(r.fresh).toEqual({ paths: ['d/e/f.txt', 'keep.txt', 'via-alias.txt'], walks: 1 });
    expect(r.staleDir).toEqual({ paths: ['d/e/f.txt', 'keep.txt', 'via-alias.txt'], walks: 0 });
    expect(r.freshDir).toEqual({ paths: ['keep.txt', 'via-alias.txt'], walks: 1 });
    expect(r.staleAlias).toEqual({ paths: ['keep.txt', 'via-alias.txt'], walks: 0 });
    expect(r.freshAlias).toEqual({ paths: ['keep.txt'], walks: 1 });
  }, CHILD_TIMEOUT_MS);

  test('invalidating a symlink drops the root holding it and the root it points into', async () => {
    const dir = fixture(['A/keep.txt', 'B/file']);
    fs.symlinkSync('../B/file', path.join(dir, 'A', 'link'));
    const r = await scenario<Record<string, Observed[]> & { stale: Observed }>('invalidate-link', dir, LONG_TTL);
    expect(r.fill).toEqual([
      { paths: ['keep.txt', 'link'], walks: 1 },
      { paths: ['file'], walks: 1 },
    ]);
    expect(r.stale).toEqual({ paths: ['keep.txt', 'link'], walks: 0 });
    // A new link: its own root walks again and lists it; the root it points into walks again too.
    expect(r.created).toEqual([
      { paths: ['keep.txt', 'link', 'made-link'], walks: 1 },
      { paths: ['file'], walks: 1 },
    ]);
    // An existing link: both roots again.
    expect(r.existing.map((o) => o.walks)).toEqual([1, 1]);
  }, CHILD_TIMEOUT_MS);
});

describe('cache: false', () => {
  test('walks fresh and never touches the cached entry', async () => {
    const dir = fixture(['keep.txt', 'sub/x.md']);
    const r = await scenario<{
      start: Stats;
      fill: Observed;
      filled: Stats;
      uncached: string[];
      afterUncached: Stats;
      cachedAgain: Observed;
      elsewhere: string[];
      afterElsewhere: Stats;
    }>('no-cache-untouched', dir, LONG_TTL);
    expect(r.start.scans).toBe(0);
    expect(r.fill).toEqual({ paths: ['keep.txt'], walks: 1 });
    expect(r.filled.scans).toBe(1);
    // The uncached glob sees the new file...
    expect(r.uncached).toEqual(['keep.txt', 'new.txt']);
    // ...ran its own walk, and left scans/entries/bytes exactly as they were.
    expect(r.afterUncached).toEqual({ ...r.filled, walks: r.filled.walks + 1 });
    // The cached entry still answers, from before the new file.
    expect(r.cachedAgain).toEqual({ paths: ['keep.txt'], walks: 0 });
    expect(r.elsewhere).toEqual(['x.md']);
    expect(r.afterElsewhere).toEqual({ ...r.filled, walks: r.filled.walks + 2 });
  }, CHILD_TIMEOUT_MS);
});

describe('TTL', () => {
  test('TTL 0 bypasses the cache: always fresh, nothing stored', async () => {
    const dir = fixture(['keep.txt']);
    const r = await scenario<{ first: Observed; second: Observed; third: Observed; stats: Stats }>('ttl-zero', dir, {
      FS_SCAN_CACHE_TTL_MS: '0',
    });
    expect(r.first).toEqual({ paths: ['keep.txt'], walks: 1 });
    expect(r.second).toEqual({ paths: ['keep.txt', 'new.txt'], walks: 1 });
    expect(r.third).toEqual({ paths: ['new.txt'], walks: 1 });
    expect(r.stats).toMatchObject({ scans: 0, entries: 0, bytes: 0, bytesPerEntry: 0, walks: 3 });
  }, CHILD_TIMEOUT_MS);

  test('a hit inside the TTL is served as is; after it the scan is redone', async () => {
    const dir = fixture(['keep.txt']);
    const ttl = 1500;
    const r = await scenario<{ fill: Observed; inside: Observed; insideAfterMs: number; expired: Observed }>('ttl-expiry', dir, {
      FS_SCAN_CACHE_TTL_MS: String(ttl),
    });
    // The in-TTL call must really have happened inside the TTL for this to mean anything.
    expect(r.insideAfterMs).toBeLessThan(ttl);
    expect(r.fill).toEqual({ paths: ['keep.txt'], walks: 1 });
    expect(r.inside).toEqual({ paths: ['keep.txt'], walks: 0 });
    expect(r.expired).toEqual({ paths: ['keep.txt', 'new.txt'], walks: 1 });
  }, CHILD_TIMEOUT_MS);
});

describe('policy set in process.env at run time', () => {
  for (const [node, first] of [[false, 'search-first'], [true, 'search-first'], [false, 'change-first'], [true, 'change-first']] as const) {
    test(`counts before the first call, and only then, under ${node ? 'Node' : 'bun'} (${first})`, async () => {
      const dir = fixture(['keep.txt']);
      const r = await runJson<{ runtime: string; startedWith: string | null; bypassed: number[]; afterLaterChange: number[]; scans: number }>(
        'policy-set-at-run-time.ts',
        [dir, first],
        { node },
      );
      expect(r.runtime).toMatch(node ? /^node v20\./ : /^bun$/);
      expect(r.startedWith).toBeNull();
      // TTL 0, set at run time: every cached glob walks and nothing is stored...
      expect(r.bypassed).toEqual([1, 1]);
      // ...and setting it again later changes nothing.
      expect(r.afterLaterChange).toEqual([1, 1]);
      expect(r.scans).toBe(0);
    }, CHILD_TIMEOUT_MS);
  }
});

describe('empty-result recheck', () => {
  test('an old empty answer is re-checked; a young one, or a non-empty one, is not', async () => {
    const dir = fixture(['keep.txt']);
    const threshold = 1000;
    const r = await scenario<{
      fill: Observed;
      young: Observed;
      youngAfterMs: number;
      oldNonEmpty: Observed;
      oldEmpty: Observed;
      afterRecheck: Observed;
    }>('empty-recheck', dir, { ...LONG_TTL, FS_SCAN_EMPTY_RECHECK_MS: String(threshold) });
    expect(r.youngAfterMs).toBeLessThan(threshold);
    expect(r.fill).toEqual({ paths: ['keep.txt'], walks: 1 });
    // Younger than the threshold: the empty answer is served from the cache, stale.
    expect(r.young).toEqual({ paths: [], walks: 0 });
    // Older, but not empty: a normal hit, still stale (b.txt unseen).
    expect(r.oldNonEmpty).toEqual({ paths: ['keep.txt'], walks: 0 });
    // Older and empty: one fresh walk finds the new file.
    expect(r.oldEmpty).toEqual({ paths: ['a.new'], walks: 1 });
    // The fresh walk replaced the cached entry.
    expect(r.afterRecheck).toEqual({ paths: ['b.txt', 'keep.txt'], walks: 0 });
  }, CHILD_TIMEOUT_MS);

  test('an empty answer walks nothing again while its scan follows file events, and each skipped recheck is counted', async () => {
    type Answers = { empty: number[]; walks: number; skipped: number; written: Observed };
    const noDelay = { ...LONG_TTL, FS_SCAN_EMPTY_RECHECK_MS: '0' };
    const watched = await scenario<Answers>('empty-answers', fixture(['keep.txt']), { ...noDelay, FS_SCAN_CACHE_WATCH: '1' });
    // glob, fuzzyFind, grep: nothing, no walk, three rechecks skipped; the events still show a new file.
    expect(watched).toEqual({ empty: [0, 0, 0], walks: 0, skipped: 3, written: { paths: ['a.new'], walks: 0 } });
    // Unwatched, seed 001's rule: each empty answer walks again (the new file waits for the next one).
    const unwatched = await scenario<Answers>('empty-answers', fixture(['keep.txt']), noDelay);
    expect(unwatched).toEqual({ empty: [0, 0, 0], walks: 3, skipped: 0, written: { paths: ['a.new'], walks: 1 } });
  }, CHILD_TIMEOUT_MS);
});

describe('fsScanCacheStats', () => {
  test('reports scans, entries, bytes and bytesPerEntry consistently', async () => {
    const dir = fixture([
      'a.ts',
      'src/b.ts',
      'src/lib/c.ts',
      '.hidden/d.ts',
      '.env',
      'skipped/e.ts',
      'node_modules/pkg/index.js',
    ]);
    fs.writeFileSync(path.join(dir, '.ignore'), 'skipped/\n');
    type Count = { hidden: boolean; gitignore: boolean; total: number; pathBytes: number; afterFill: Stats };
    const r = await scenario<{
      start: Stats;
      counts: Count[];
      filled: Stats;
      withoutNodeModules: Observed;
      afterFilterVariants: Stats;
      cleared: Stats;
    }>('stats', dir, LONG_TTL);
    expect(r.start).toEqual({
      scans: 0,
      entries: 0,
      bytes: 0,
      bytesPerEntry: 0,
      walks: 0,
      refused: 0,
      emptyRechecksSkipped: 0,
      watch: UNWATCHED,
      content: { roots: 0, files: 0, trigrams: 0, bytes: 0, filesSkipped: 0, filesVerified: 0, filesAnswered: 0 },
      names: { indexes: 0, entries: 0, bytes: 0 },
      persist: UNPERSISTED,
      shared: UNSHARED,
    });
    // Visible entries per partition (dirs and files, node_modules included).
    const totals = r.counts.map((c) => c.total);
    // hidden off, ignore on: a.ts src src/b.ts src/lib src/lib/c.ts node_modules{,/pkg,/pkg/index.js}
    // hidden on adds .hidden .hidden/d.ts .env .ignore; ignore off adds skipped skipped/e.ts.
    expect(totals).toEqual([8, 12, 14]);
    let entries = 0;
    let minBytes = 0;
    for (const [i, count] of r.counts.entries()) {
      entries += count.total;
      // Each entry holds at least its path bytes, an end offset, a type byte and an mtime.
      minBytes += count.pathBytes + count.total * (8 + 1 + 8);
      expect(count.afterFill.scans).toBe(i + 1);
      expect(count.afterFill.entries).toBe(entries);
      expect(count.afterFill.bytes).toBeGreaterThanOrEqual(minBytes);
      expect(count.afterFill.bytesPerEntry).toBeCloseTo(count.afterFill.bytes / count.afterFill.entries, 9);
      expect(count.afterFill.walks).toBe(i + 1);
    }
    expect(r.filled).toEqual(r.counts[2].afterFill);
    // Filtering node_modules out is not a new partition: no walk, no entry.
    expect(r.withoutNodeModules.walks).toBe(0);
    expect(r.withoutNodeModules.paths).not.toContain('node_modules');
    expect(r.withoutNodeModules.paths).toContain('skipped/e.ts');
    expect(r.afterFilterVariants).toEqual(r.filled);
    expect(r.cleared).toEqual({
      scans: 0,
      entries: 0,
      bytes: 0,
      bytesPerEntry: 0,
      walks: r.filled.walks,
      refused: 0,
      emptyRechecksSkipped: 0,
      watch: UNWATCHED,
      content: { roots: 0, files: 0, trigrams: 0, bytes: 0, filesSkipped: 0, filesVerified: 0, filesAnswered: 0 },
      names: { indexes: 0, entries: 0, bytes: 0 },
      persist: UNPERSISTED,
      shared: UNSHARED,
    });
  }, CHILD_TIMEOUT_MS);

  test("the default watch budget is what the user's processes leave free, less a quarter of the limit; FS_SCAN_CACHE_WATCH_MAX decides when given", async () => {
    const dir = fixture(['a.ts', 'src/b.ts']);
    const watched = { ...LONG_TTL, FS_SCAN_CACHE_WATCH: '1' };
    const given = await scenario<{ budget: number; watches: number }>('watch-budget', dir, { ...watched, FS_SCAN_CACHE_WATCH_MAX: '777' });
    expect(given.budget).toBe(777);
    expect(given.watches).toBeGreaterThan(0);
    // This process holds 20 000 watches (fewer under a low limit) while the child starts watching.
    const limit = Number(fs.readFileSync('/proc/sys/fs/inotify/max_user_watches', 'utf8'));
    const holds = Math.min(HELD_WATCHES, Math.floor(limit / 4));
    const held = heldInotifyWatches();
    const dirs = tempDir('watch-budget-held');
    const watchers: fs.FSWatcher[] = [];
    try {
      for (let i = 0; i < holds; i++) {
        const sub = path.join(dirs, String(i));
        fs.mkdirSync(sub);
        watchers.push(fs.watch(sub));
      }
      const holding = heldInotifyWatches();
      expect(holding - held).toBeGreaterThanOrEqual(holds);
      const expected = Math.min(131_072, Math.max(1, limit - holding - Math.floor(limit / 4)));
      const found = await scenario<{ budget: number }>('watch-budget', dir, watched);
      // Other processes of the user may take or give back a few meanwhile.
      expect(Math.abs(found.budget - expected)).toBeLessThanOrEqual(2_000);
    } finally {
      for (const watcher of watchers) watcher.close();
      removeDir(dirs);
    }
  }, CHILD_TIMEOUT_MS);

  test('concurrent cached globs of one key share a single walk', async () => {
    type Call = { start: number; end: number; matches: number };
    const r = await scenario<{ walkMs: number; walks: number; a: Call; b: Call; stats: Stats }>('single-flight', bigTree, {
      ...LONG_TTL,
      FS_SCAN_EMPTY_RECHECK_MS: '1',
    });
    console.log(
      `single flight over ${BIG_TREE_FILES} files: an uncached walk ${r.walkMs.toFixed(0)} ms; the calls ran ` +
        `${r.a.start.toFixed(0)}..${r.a.end.toFixed(0)} and ${r.b.start.toFixed(0)}..${r.b.end.toFixed(0)} ms`,
    );
    // The second call began while the first was in flight...
    expect(r.b.start).toBeGreaterThan(r.a.start);
    expect(r.b.start).toBeLessThan(r.a.end);
    // ...and one walk served both: the second joined it (a hit on the stored scan would have
    // re-checked its empty answer with a walk of its own).
    expect(r.walks).toBe(1);
    expect(r.a.matches).toBe(100);
    expect(r.b.matches).toBe(0);
    expect(r.stats).toMatchObject({ scans: 1, entries: BIG_TREE_ENTRIES });
  }, CHILD_TIMEOUT_MS);

  test('a scan larger than FS_SCAN_CACHE_MAX_BYTES is refused once, remembered and reported', async () => {
    const dir = fixture(['a.txt', 'b.txt']);
    const r = await scenario<{
      first: Observed;
      afterFirst: Stats;
      second: Observed;
      grepped: string[];
      greppedWalks: number;
      afterCalls: Stats;
      afterInvalidation: Stats;
    }>('too-large', dir, { ...LONG_TTL, FS_SCAN_CACHE_MAX_BYTES: '1' });
    expect(r.first).toEqual({ paths: ['a.txt', 'b.txt'], walks: 1 });
    expect(r.afterFirst).toMatchObject({ scans: 0, refused: 1 });
    expect(r.second).toEqual({ paths: ['a.txt', 'b.txt'], walks: 1 });
    expect(r.grepped).toEqual(['a.txt', 'b.txt']);
    expect(r.greppedWalks).toBe(1);
    expect(r.afterCalls).toMatchObject({ scans: 0, refused: 1 });
    expect(r.afterInvalidation).toMatchObject({ scans: 0, refused: 0 });
  }, CHILD_TIMEOUT_MS);

  test('FS_SCAN_CACHE_MAX_ENTRIES evicts the oldest scan first', async () => {
    const dir = fixture(['a/1', 'b/2', 'c/3']);
    const r = await scenario<{ filled: number; a: Observed; b: Observed; c: Observed }>('max-entries', dir, {
      ...LONG_TTL,
      FS_SCAN_CACHE_MAX_ENTRIES: '2',
    });
    expect(r.filled).toBe(2);
    expect(r.c).toEqual({ paths: ['3'], walks: 0 });
    expect(r.b).toEqual({ paths: ['2'], walks: 0 });
    expect(r.a).toEqual({ paths: ['1'], walks: 1 });
  }, CHILD_TIMEOUT_MS);
});
