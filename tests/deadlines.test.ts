/**
 * Deadlines count from the call, and a call that waits on another process settles at its deadline
 * however busy the thread pool is: `budgetMs` of a lease wait and a claim's `deadline` while every
 * pool thread is taken (under Node with a one-thread pool blocked by a FIFO `open`, and under Bun by
 * more long waits than its pool has threads). A glob's `timeoutMs`, work that stays on the pool,
 * also counts from the call: it fails as soon as it runs, after the pool frees. A deadline too far off
 * to ever come (`1e300` ms) is no deadline, never a fault of the addon.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { acquireBuildCache, checkAndClaim, glob, memoryProjectRoot, pruneStaleClaims } from '../packages/natives/src/index.ts';
import { runJson } from './support/child.ts';
import { removeDir, tempDir } from './support/fs.ts';

/** The deadline of every call under test, in ms from the call. */
const DEADLINE_MS = 300;
/** How late a settle may come on a loaded machine and still be "at the deadline". */
const SLACK_MS = 700;

let root = '';
beforeEach(() => {
  root = tempDir('deadlines');
});
afterEach(() => removeDir(root));

interface Settled {
  ms: number;
  code?: string;
  value?: { exclusive: boolean; reason?: string; detail?: string };
}

describe('with every pool thread taken', () => {
  test('under Node (one thread, blocked): waits settle at their deadline, a glob as soon as it runs', async () => {
    const unblockMs = 3_000;
    const out = await runJson<{ lease: Settled; claim: Settled; glob: Settled }>('busy-pool.ts', [root, String(unblockMs)], {
      node: true,
      env: { UV_THREADPOOL_SIZE: '1' },
    });
    expect(out.lease.code).toBe('ETIMEDOUT');
    expect(out.lease.ms).toBeGreaterThanOrEqual(DEADLINE_MS - 5);
    expect(out.lease.ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
    expect(out.claim.value).toMatchObject({ exclusive: false, reason: 'unproven' });
    expect(out.claim.value?.detail).toContain('ETIMEDOUT');
    expect(out.claim.ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
    expect(out.glob.code).toBe('ETIMEDOUT');
    expect(out.glob.ms).toBeGreaterThanOrEqual(unblockMs - 5);
    expect(out.glob.ms).toBeLessThan(unblockMs + SLACK_MS);
  }, 30_000);

  test('under Bun (more long waits than pool threads): a lease wait and a claim settle by their deadline', async () => {
    const home = path.join(root, 'home');
    const cache = path.join(root, 'target');
    fs.mkdirSync(cache);
    await using _held = await acquireBuildCache(cache, { run: 'run-1', node: 'build', seat: 'holder' }, { home });
    const longWaitMs = 2_000;
    // The claim's own work (records written and synced) may outlast 300 ms on a loaded machine;
    // its deadline stays short of the waits, so a claim stuck behind them still fails.
    const claimDeadlineMs = (longWaitMs * 3) / 4;
    const waiters = Array.from({ length: 8 }, (_, i) =>
      acquireBuildCache(cache, { run: 'run-1', node: 'build', seat: `waiter-${i}` }, { home, budgetMs: longWaitMs }).catch((e) => e),
    );
    await Bun.sleep(50);

    let started = performance.now();
    const lease = await acquireBuildCache(cache, { run: 'run-2', node: 'build', seat: 'late' }, { home, budgetMs: DEADLINE_MS }).catch((e) => e);
    const leaseMs = performance.now() - started;
    started = performance.now();
    const verdict = await checkAndClaim({
      agent: { uid: 'a', cwd: path.join(root, 'a'), account: 'ana@example.com' },
      memoryDir: path.join(root, 'config/projects/x/memory'),
      others: [],
      origin: 'store-a',
      deadline: Date.now() + claimDeadlineMs,
      redirects: { settingsFiles: [], pathOverride: null },
      home,
    });
    const claimMs = performance.now() - started;

    expect(lease.code).toBe('ETIMEDOUT');
    expect(leaseMs).toBeLessThan(DEADLINE_MS + SLACK_MS);
    expect(verdict).toEqual({ exclusive: true });
    expect(claimMs).toBeLessThan(claimDeadlineMs + SLACK_MS);
    expect((await Promise.all(waiters)).map((e) => e.code)).toEqual(Array(8).fill('ETIMEDOUT'));
  }, 60_000);
});

describe('a deadline too far off to ever come', () => {
  test('is no deadline, for calls on the pool, on a thread of their own and on the JS thread alike', async () => {
    const home = path.join(root, 'home');
    const searched = path.join(root, 'searched');
    fs.mkdirSync(searched);
    fs.writeFileSync(path.join(searched, 'a.txt'), 'a\n');
    for (const timeoutMs of [1e22, 1e300, Number.MAX_VALUE]) {
      const found = await glob({ pattern: '*', path: searched, timeoutMs });
      expect({ timeoutMs, paths: found.matches.map((m) => m.path) }).toEqual({ timeoutMs, paths: ['a.txt'] });
      await using lease = await acquireBuildCache(searched, { run: 'run-1', node: 'build', seat: 'far' }, { home, budgetMs: timeoutMs });
      expect(lease.held).toBe(true);
      expect(await pruneStaleClaims({ origin: 'store-a', storeAgents: [], deadline: Date.now() + timeoutMs, home })).toBe(0);
      expect(memoryProjectRoot(root, { timeoutMs })).toBe(fs.realpathSync(root));
    }
  });
});
