/**
 * The package's entries as Node resolves them through its `exports` map, from the compiled `dist`
 * the build writes: `@natives/natives/search` loads no ownership module (a module hook notes every
 * module evaluated), and `require('@natives/natives')` works where Node cannot require an ES module
 * (Node 20 before 20.19; `--no-experimental-require-module` makes any Node 20 so). The installed
 * packages run the same scripts (tests/installed/run.sh).
 */
import { describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';

const CHECKOUT = path.join(import.meta.dir, '..');
/** A workspace package that depends on @natives/natives, so Node resolves it from here as a user would. */
const DEPENDENT = path.join(CHECKOUT, 'packages', 'coding-agent');
const script = (name: string) => fs.readFileSync(path.join(CHECKOUT, 'tests', 'installed', name), 'utf8');

function node(args: string[]): { exitCode: number; output: string } {
  const child = Bun.spawnSync(['node', ...args], { cwd: DEPENDENT, env: { ...process.env, NODE_OPTIONS: '' } });
  return { exitCode: child.exitCode ?? -1, output: `${child.stdout.toString()}${child.stderr.toString()}` };
}

describe('entries under Node', () => {
  test('@natives/natives/search evaluates no lease, claim or worktree module; the other subpaths resolve', () => {
    const { exitCode, output } = node(['--input-type=module', '-e', script('subpaths.mjs')]);
    expect({ exitCode, output }).toMatchObject({ exitCode: 0 });
    expect(output).toContain('loads no ownership module');
  });

  test("require('@natives/natives') works without require(esm)", () => {
    const { exitCode, output } = node(['--no-experimental-require-module', '-e', script('require.cjs')]);
    expect({ exitCode, output }).toMatchObject({ exitCode: 0 });
    expect(output).toContain('CommonJS entry');
  });
});
