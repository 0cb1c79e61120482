// A lease held with `await using`: active inside the block, let go as the block ends. Imported only
// where the runtime parses the syntax (Bun; Node from 24), so plain Node 20 never reads this file.
import { strict as assert } from 'node:assert';
import { acquireBuildCache, inspectBuildCache } from '@natives/natives';

export async function holdForABlock(cache, owner, home) {
  await using lease = await acquireBuildCache(cache, owner, { home });
  assert.equal(lease.held, true);
  assert.equal(inspectBuildCache(cache, { home }).status, 'active');
}
