// The run registry and a handover through the TypeScript API under Node 20 (through tsx): record a
// run and its candidate worktree, drive it with `using`, then a retry takes the branch over (a dry
// run first) and the worktree is restored, then released again and restored by its handover id
// alone; a dry eviction pass reads the same registry.
import { strict as assert } from 'node:assert';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { driverLiveness, driveRun, evictionPass, releaseWorktree, restoreHandover, setRunStatus, showRun } from '../../packages/natives/src/index.ts';
import { BRANCH, makeScene, worktreePaths } from '../support/worktrees.ts';

const scene = await makeScene(realpathSync(mkdtempSync(join(tmpdir(), 'natives-node-worktrees-'))));
try {
  const { home, repo } = scene;
  {
    using driver = await driveRun('r1', { home });
    assert.equal(driver.held, true);
    assert.equal(driverLiveness('r1', { home }), 'live');
  }
  assert.equal(driverLiveness('r1', { home }), 'dead');
  await setRunStatus('r1', 'stale', { home });
  const ask = { repo, branch: BRANCH, toRun: 'r2', task: 't1', home };
  assert.equal((await releaseWorktree({ ...ask, dryRun: true })).kind, 'would-release');
  const handover = await releaseWorktree(ask);
  assert.equal(handover.kind, 'released');
  assert.ok(!worktreePaths(scene).includes(scene.worktree));
  assert.equal((await showRun('r1', { home })).candidates[0].folded, true);
  assert.equal(handover.kind === 'released' && (await handover.restore()).kind, 'restored');
  assert.ok(worktreePaths(scene).includes(scene.worktree));
  const again = await releaseWorktree(ask);
  assert.equal(again.kind, 'released');
  assert.equal(again.kind === 'released' && (await restoreHandover(again.released.handover, { home })).kind, 'restored');
  assert.ok(worktreePaths(scene).includes(scene.worktree));
  const pass = await evictionPass({ home, autoFold: true, reclaimBytes: 1 << 20, dryRun: true });
  assert.equal(pass.disabled, null);
  assert.ok(pass.visited.includes('r1'));
  console.log('node worktrees smoke: driveRun, driverLiveness, releaseWorktree (dry run, release, restore), restoreHandover, evictionPass ok');
} finally {
  rmSync(scene.root, { recursive: true, force: true });
}
