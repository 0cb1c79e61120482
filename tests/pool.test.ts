/**
 * Build-cache pools through the real addon: a second agent gets a member of its own seeded from the
 * first one's while the first still holds it, each `cargo test` runs what its own worktree's source
 * built (the stale control of a shared cache, per member), a full pool is refused or waited for, and
 * the inventory and a prune see holders, identities and sizes.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { acquireFromPool, buildCacheInventory, poolInventory, prunePool } from '../packages/natives/src/index.ts';
import { rejection } from './support/errors.ts';
import { cargoTest, twoWorktrees } from './support/stale-build.ts';

const OWNER = { run: 'run-1', node: 'node-a', seat: 'builder' };
/** A guard against a hang for the tests that run cargo, never a timing check: a loaded machine builds slowly. */
const CARGO_BUDGET_MS = 600_000;

let root: string;
let home: string;
let pool: string;

beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'natives-pool-')));
  home = path.join(root, 'home');
  pool = path.join(root, 'pool');
});

afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('acquireFromPool', () => {
  test('a second agent builds at once in a member seeded from the first, each from its own source', async () => {
    const { a, b } = twoWorktrees(root);
    const first = await acquireFromPool(pool, { ...OWNER, ...a }, { home, size: 2 });
    expect(first.member).toBe('member-0');
    expect(first.seed?.strategy).toBe('cold');
    expect(first.env).toEqual({ CARGO_TARGET_DIR: first.dir, CARGO_BUILD_BUILD_DIR: first.dir });
    expect(cargoTest(a.worktree, first.env.CARGO_TARGET_DIR as string)).toBe('worktree-a');
    // B's sources predate A's build: only the refresh keeps B from running A's output.
    const second = await acquireFromPool(pool, { ...OWNER, seat: 'second', ...b }, { home, size: 2 });
    expect(second.member).toBe('member-1');
    expect(second.seed?.from).toBe('member-0');
    expect(['copy', 'reflink']).toContain(second.seed?.strategy as string);
    expect(second.freshness).toEqual({ refreshed: true, cleaned: ['probe'] });
    expect(cargoTest(b.worktree, second.env.CARGO_TARGET_DIR as string)).toBe('worktree-b');
    await second.release();
    await first.release();
    expect(first.held).toBe(false);
    await using again = await acquireFromPool(pool, { ...OWNER, ...a }, { home, size: 2 });
    expect(again.member).toBe('member-0');
    expect(again.seed).toBeNull();
    expect(again.freshness).toEqual({ refreshed: false, cleaned: [] });
  }, CARGO_BUDGET_MS);

  test('a full pool is refused at once, or waited for within the budget, naming the holder', async () => {
    await using held = await acquireFromPool(pool, OWNER, { home, size: 1 });
    const busy = await rejection(acquireFromPool(pool, { ...OWNER, seat: 'late' }, { home, size: 1 }));
    expect(busy.code).toBe('EBUSY');
    expect(busy.message).toContain('run-1/node-a/builder');
    const started = Date.now();
    const late = await rejection(acquireFromPool(pool, { ...OWNER, seat: 'late' }, { home, size: 1, budgetMs: 200 }));
    expect(late.code).toBe('ETIMEDOUT');
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    const aborted = await rejection(acquireFromPool(pool, OWNER, { home, signal: AbortSignal.abort() }));
    expect(aborted.code).toBe('ABORT_ERR');
    expect(held.held).toBe(true);
  });

  test('bad options and owners are refused with EINVAL naming them', async () => {
    const table: [object, object, string][] = [
      [OWNER, { size: -1 }, 'size'],
      [OWNER, { size: 0 }, 'size'],
      [OWNER, { seed: 'hardlink' }, 'hardlink'],
      [OWNER, { budgetBytes: 1.5 }, 'budgetBytes'],
      [{ ...OWNER, run: '' }, {}, 'owner.run'],
    ];
    for (const [owner, options, named] of table) {
      const error = await rejection(acquireFromPool(pool, owner as typeof OWNER, { home, ...options }));
      expect(error.code).toBe('EINVAL');
      expect(error.message).toContain(named);
    }
  });
});

describe('poolInventory and prunePool', () => {
  test('show holders, identities, sizes and last use, and prune only idle members, which leave the lease inventory', async () => {
    const { a } = twoWorktrees(root);
    const idle = await acquireFromPool(pool, { ...OWNER, ...a }, { home, size: 2 });
    cargoTest(a.worktree, idle.dir);
    await using held = await acquireFromPool(pool, { ...OWNER, seat: 'holder' }, { home, size: 2, identity: null });
    await idle.release();
    const inventory = await poolInventory(pool, { home });
    expect(inventory.size).toBe(2);
    const [zero, one] = inventory.members;
    expect([zero?.name, zero?.state, zero?.lease]).toEqual(['member-0', 'ready', 'free']);
    expect(zero?.identity).toEqual({ worktree: a.worktree, head: a.head });
    expect(zero?.usage.logical).toBeGreaterThan(0);
    expect(zero?.usage.allocated).toBeGreaterThan(0);
    expect(zero?.lastUsedMs).toBeGreaterThan(0);
    expect(inventory.physical).toBeGreaterThan(0);
    expect(typeof zero?.usage.shared).toBe('number');
    expect([one?.name, one?.lease, one?.holder?.seat]).toEqual([held.member, 'active', 'holder']);
    const report = await prunePool(pool, 0, { ...OWNER, seat: 'janitor' }, { home });
    expect(report.pruned.map((m) => m.name)).toEqual(['member-0']);
    expect(report.kept).toHaveLength(1);
    expect(report.kept[0]?.why).toContain('run-1/node-a/holder');
    expect(fs.existsSync(path.join(pool, 'member-0'))).toBe(false);
    expect(fs.existsSync(held.dir)).toBe(true);
    expect(buildCacheInventory({ home }).map((entry) => entry.dir)).toEqual([held.dir]);
  }, CARGO_BUDGET_MS);
});
