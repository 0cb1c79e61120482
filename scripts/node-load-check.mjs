// Node must load the very addon Bun tests: require the generated loader and call into it once.
import { createRequire } from 'node:module';
import { strict as assert } from 'node:assert';

const require = createRequire(import.meta.url);
const addon = require('../packages/natives/index.cjs');
for (const name of ['nativeGlob', 'nativeGrep', 'nativeSearch', 'nativeHasMatch', 'nativeFuzzyFind', 'invalidateFsScanCache', 'fsScanCacheStats', 'CancelToken', 'nativeCheckAndClaim', 'claudeFolderName', 'nativeCreateRun', 'nativeDriveRun', 'nativeDriverLiveness', 'nativeReleaseWorktree', 'RunDriver', 'WorktreeHandover']) {
  assert.equal(typeof addon[name], 'function', `addon export ${name}`);
}
const result = await addon.nativeGlob({ pattern: 'Cargo.toml', path: process.cwd(), recursive: false });
assert.equal(result.totalMatches, 1);
console.log(`node ${process.version}: addon loaded (${addon.__napiBindingTarget}), nativeGlob ok`);
