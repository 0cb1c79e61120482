/**
 * One rule for paths: the TypeScript layer hands a path to the native side as given (made absolute,
 * `..` kept), and the native side resolves it on the filesystem, as it does for the CLI. Through a
 * symlink `link/..` is the parent of the link's target, not the folder that holds the link, so it
 * names the same search root, lease and claim from TypeScript as from `natives` (target/natives).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { acquireBuildCache, checkAndClaim, claimsOf, glob, grep } from '../packages/natives/src/index.ts';
import { removeDir, tempDir, writeTree } from './support/fs.ts';

const CLI = path.join(import.meta.dir, '..', 'target', 'natives');

let root = '';
let home = '';
/** `root/link/..`: `root/real` on the filesystem, `root` by name. */
let viaLink = '';

beforeAll(() => {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run scripts/setup.sh`);
  root = tempDir('paths');
  home = path.join(root, 'home');
  writeTree(root, { 'real/sub/': '', 'real/inside.txt': 'needle\n', 'outside.txt': 'needle\n' });
  fs.symlinkSync('real/sub', path.join(root, 'link'));
  viaLink = `${root}/link/..`;
});
afterAll(() => removeDir(root));

function natives(args: string[]): { code: number; out: string } {
  const run = Bun.spawnSync([CLI, ...args], { env: { ...process.env, NATIVES_HOME: home } });
  return { code: run.exitCode, out: run.stdout.toString() };
}

/** The file names a CLI listing prints, one path a line. */
function names(out: string): string[] {
  return out
    .trimEnd()
    .split('\n')
    .map((line) => path.basename(line))
    .sort();
}

describe('link/.. names one place from TypeScript and from the CLI', () => {
  test('a search root', async () => {
    const cli = natives(['grep', '-l', 'needle', viaLink]);
    expect(cli.code).toBe(0);
    const found = await grep({ pattern: 'needle', path: viaLink, mode: 'filesWithMatches' });
    expect(found.matches.map((m) => path.basename(m.path)).sort()).toEqual(names(cli.out));
    expect(names(cli.out)).toEqual(['inside.txt']);
    const listed = await glob({ pattern: '*.txt', path: viaLink });
    expect(listed.matches.map((m) => path.basename(m.path)).sort()).toEqual(names(natives(['glob', '*.txt', viaLink]).out));
  });

  test('a lease: the one TypeScript holds is the one the CLI refuses to release', async () => {
    await using lease = await acquireBuildCache(viaLink, { run: 'run-1', node: 'node-a', seat: 'builder' }, { home });
    expect(lease.record.dir).toBe(path.join(root, 'real'));
    expect(natives(['cache', 'release', viaLink, '--home', home]).code).toBe(2);
  });

  test('a claim: the one TypeScript records is the one the CLI releases', async () => {
    const verdict = await checkAndClaim({
      agent: { uid: 'agent-1', cwd: path.join(root, 'agent-1'), account: 'ana@example.com' },
      memoryDir: viaLink,
      others: [],
      origin: 'store-a',
      deadline: Date.now() + 5_000,
      redirects: { settingsFiles: [], pathOverride: null },
      home,
    });
    expect(verdict).toEqual({ exclusive: true });
    expect((await claimsOf('agent-1', { home })).map((folder) => folder.dir)).toEqual([path.join(root, 'real')]);
    expect(natives(['claims', 'release', 'agent-1', viaLink, '--yes', '--home', home]).code).toBe(0);
    expect(await claimsOf('agent-1', { home })).toEqual([]);
  });
});
