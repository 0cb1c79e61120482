// What each subpath of @natives/natives loads, under plain Node: a module hook notes every module
// evaluated, and `@natives/natives/search` must bring in no ownership module (leases, pools, claims,
// the run registry, evidence, eviction), while the whole package still brings in every one.
// Resolved from the current directory: run it where @natives/natives is installed.
import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { register } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const OWNERSHIP = /\/dist\/(lease|pool|claims|worktrees|runs|evidence|eviction|leases)\.js$/;
const dir = mkdtempSync(join(tmpdir(), 'natives-subpaths-'));
const log = join(dir, 'loaded.txt');
try {
  const hook = `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(log)}, url + '\\n');
  return next(url, context);
}`;
  register(`data:text/javascript,${encodeURIComponent(hook)}`, pathToFileURL(`${process.cwd()}/`));
  const loaded = async (specifier) => {
    rmSync(log, { force: true });
    const exports = await import(specifier);
    return { exports, urls: readFileSync(log, 'utf8').trim().split('\n') };
  };
  const search = await loaded('@natives/natives/search');
  assert.equal(typeof search.exports.grepIter, 'function');
  assert.ok(search.urls.some((url) => url.endsWith('/dist/glob.js')), search.urls.join('\n'));
  assert.deepEqual(search.urls.filter((url) => OWNERSHIP.test(url)), [], 'the search entry loaded ownership modules');
  const whole = await loaded('@natives/natives');
  assert.ok(whole.urls.some((url) => url.endsWith('/dist/worktrees.js')), 'the probe sees what the whole package loads');
  for (const [subpath, name] of [['leases', 'acquireBuildCache'], ['claims', 'checkAndClaim'], ['worktrees', 'createRun']]) {
    assert.equal(typeof (await import(`@natives/natives/${subpath}`))[name], 'function', subpath);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`node ${process.version}: @natives/natives/search loads no ownership module; /leases, /claims, /worktrees resolve: ok`);
