// Memory-directory claims through the TypeScript API under Node 20 (through tsx): a claim, a second
// channel's claim making the folder shared, a release, the layout helpers.
import { strict as assert } from 'node:assert';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkAndClaim, claudeFolderName, dirId, heldExclusively, memoryProjectRoot, releaseClaim } from '../../packages/natives/src/index.ts';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'natives-node-claims-')));
try {
  const memoryDir = join(root, 'projects/x/memory');
  const home = join(root, 'home');
  const claim = (uid: string, origin: string) =>
    checkAndClaim({
      agent: { uid, cwd: join(root, uid), account: 'ana' },
      memoryDir,
      others: [],
      origin,
      deadline: Date.now() + 5_000,
      redirects: { settingsFiles: [], pathOverride: null },
      home,
    });
  assert.deepEqual(await claim('a', 'store-a'), { exclusive: true });
  const shared = await claim('b', 'store-b');
  assert.equal(shared.exclusive === false && shared.reason, 'claimed');
  assert.equal(await releaseClaim({ memoryDir, uid: 'b', deadline: Date.now() + 5_000, home }), true);
  assert.deepEqual(await heldExclusively({ memoryDir, uid: 'a', deadline: Date.now() + 5_000, home }), { exclusive: true });
  const late = await heldExclusively({ memoryDir, uid: 'a', deadline: 0, home });
  assert.equal(late.exclusive === false && late.reason, 'unproven');
  assert.equal(claudeFolderName('/a/😀_b'), '-a----b');
  assert.equal(memoryProjectRoot(root), root);
  assert.equal(dirId(join(root, 'missing/../x')), join(root, 'x'));
  console.log('node claims smoke: checkAndClaim, heldExclusively, releaseClaim, layout helpers ok');
} finally {
  rmSync(root, { recursive: true, force: true });
}
