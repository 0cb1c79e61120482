// @natives/natives from CommonJS, where Node cannot require an ES module (Node 20 before 20.19; run
// with --no-experimental-require-module to be sure): the package's `require` entry.
const assert = require('node:assert/strict');
const { mkdtempSync, realpathSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const natives = require('@natives/natives');

(async () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'natives-require-')));
  try {
    writeFileSync(join(root, 'a.ts'), 'needle\n');
    const globbed = await natives.glob(['*.ts', '*.md'], { path: root });
    assert.deepEqual(globbed.matches.map((m) => m.path), ['a.ts']);
    const grepped = [];
    for await (const match of natives.grepIter({ pattern: 'needle', path: root })) grepped.push(match.path);
    assert.deepEqual(grepped, ['a.ts']);
    assert.equal(typeof natives.acquireBuildCache, 'function');
    assert.equal(natives.ERROR_CODES.EINVAL !== undefined, true);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  console.log(`node ${process.version}: require('@natives/natives') (CommonJS entry): glob, grepIter: ok`);
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
