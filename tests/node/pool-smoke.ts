// Build-cache pools through the TypeScript API under Node 20 (through tsx): a member held with
// `await using`, a full pool refused, the member free again on scope exit, the inventory and a prune.
import { strict as assert } from 'node:assert';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireFromPool, poolInventory, prunePool } from '../../packages/natives/src/index.ts';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'natives-node-pool-')));
try {
  const home = join(root, 'home');
  const pool = join(root, 'pool');
  const owner = { run: 'run-1', node: 'node-a', seat: 'builder' };
  {
    await using lease = await acquireFromPool(pool, owner, { home, size: 1, budgetMs: 1_000 });
    assert.equal(lease.member, 'member-0');
    assert.equal(lease.env.CARGO_TARGET_DIR, join(pool, 'member-0'));
    assert.equal(lease.seed?.strategy, 'cold');
    await assert.rejects(acquireFromPool(pool, { ...owner, seat: 'late' }, { home, size: 1 }), { code: 'EBUSY' });
    writeFileSync(join(lease.dir, 'output'), 'built');
  }
  const inventory = await poolInventory(pool, { home });
  assert.deepEqual(
    inventory.members.map((member) => [member.name, member.state, member.lease]),
    [['member-0', 'ready', 'free']],
  );
  const pruned = await prunePool(pool, 0, { ...owner, seat: 'janitor' }, { home });
  assert.deepEqual(pruned.pruned.map((member) => member.name), ['member-0']);
  console.log('node pool smoke: ok');
} finally {
  rmSync(root, { recursive: true, force: true });
}
