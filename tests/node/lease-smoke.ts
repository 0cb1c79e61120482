// Build-cache leases through the TypeScript API under Node 20 (through tsx): acquire with
// `await using`, a busy second borrower, release on scope exit, the inventory.
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireBuildCache, buildCacheInventory, inspectBuildCache } from '../../packages/natives/src/index.ts';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'natives-node-lease-')));
try {
  const home = join(root, 'home');
  const cache = join(root, 'target');
  mkdirSync(cache);
  const owner = { run: 'run-1', node: 'node-a', seat: 'builder' };
  {
    await using lease = await acquireBuildCache(cache, owner, { home, budgetMs: 1_000 });
    assert.equal(lease.record.owner.pid, process.pid);
    assert.equal(inspectBuildCache(cache, { home }).status, 'active');
    await assert.rejects(acquireBuildCache(cache, { ...owner, seat: 'late' }, { home }), { code: 'EBUSY' });
  }
  assert.equal(inspectBuildCache(cache, { home }).status, 'free');
  assert.deepEqual(
    buildCacheInventory({ home }).map((entry) => [entry.dir, entry.status, entry.owner?.seat]),
    [[cache, 'free', 'builder']],
  );
  console.log('node lease smoke: ok');
} finally {
  rmSync(root, { recursive: true, force: true });
}
