// The public API of both packages as a user reaches it: run from a project that installed the packed
// tarballs with npm, under plain Node (no TypeScript, no loader) or Bun. Prints what it checked.
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireBuildCache, FileType, fuzzyFind, glob, grep, inspectBuildCache } from '@natives/natives';
import { findTool, writeTool } from '@natives/coding-agent';

const runtime = process.versions.bun ? `bun ${process.versions.bun}` : `node ${process.version}`;
const root = realpathSync(mkdtempSync(join(tmpdir(), 'natives-installed-use-')));
const checked = [];
try {
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'src', 'server.ts'), 'export function fetchUser() {}\n');
  writeFileSync(join(root, 'README.md'), '# demo\n');

  const globbed = await glob({ pattern: '*.ts', path: root, fileType: FileType.File });
  assert.deepEqual(globbed.matches.map((m) => m.path), ['src/server.ts']);
  checked.push('glob');

  const grepped = await grep({ pattern: 'fetch\\w+', path: root });
  assert.deepEqual(grepped.matches.map((m) => [m.path, m.lineNumber]), [['src/server.ts', 1]]);
  checked.push('grep');

  const found = await fuzzyFind({ query: 'srvr', path: root });
  assert.equal(found.matches[0]?.path, 'src/server.ts');
  checked.push('fuzzyFind');

  checked.push(await leaseRoundTrip(join(root, 'cache'), join(root, 'home')));

  const ctx = { cwd: root };
  const written = await writeTool.execute({ path: 'src/client.ts', content: 'export {};\n' }, ctx);
  assert.equal(written.isError, undefined, written.text);
  const listed = await findTool.execute({ pattern: '*.ts' }, ctx);
  assert.deepEqual(listed.text.split('\n').sort(), ['src/client.ts', 'src/server.ts']);
  checked.push('agent tools (write, then find sees it)');
} finally {
  rmSync(root, { recursive: true, force: true });
}
console.log(`${runtime}: ${checked.join(', ')}: ok`);

/** Acquire a build-cache lease and let it go: with `await using` where the runtime parses it, else `release()`. */
async function leaseRoundTrip(cache, home) {
  mkdirSync(cache);
  const owner = { run: 'run-1', node: 'build', seat: 'candidate' };
  let how = 'await using';
  if (parsesAwaitUsing()) {
    const { holdForABlock } = await import('./lease-await-using.mjs');
    await holdForABlock(cache, owner, home);
  } else {
    how = 'release()';
    const lease = await acquireBuildCache(cache, owner, { home });
    assert.equal(inspectBuildCache(cache, { home }).status, 'active');
    await lease.release();
  }
  assert.equal(inspectBuildCache(cache, { home }).status, 'free');
  return `lease acquire/release (${how})`;
}

function parsesAwaitUsing() {
  const AsyncFunction = (async () => {}).constructor;
  try {
    new AsyncFunction('await using held = null;');
    return true;
  } catch {
    return false;
  }
}
