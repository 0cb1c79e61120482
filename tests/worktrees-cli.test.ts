/**
 * `natives runs` and `natives handover`, the operator's front over the same registry, and the
 * package's objects are one shape: for the same run and the same handover, the CLI's `--json` has
 * the field names, value types and values of what `showRun`, `listRuns` and `releaseWorktree`
 * resolve with. And the CLI's exit codes: 0 released, 3 refused, 2 error.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { addSeat, driveRun, listRuns, releaseWorktree, showRun } from '../packages/natives/src/index.ts';
import { natives } from './support/cli.ts';
import { removeDir, tempDir } from './support/fs.ts';
import { BRANCH, type Scene, makeScene, worktreePaths } from './support/worktrees.ts';

let scene: Scene;

beforeEach(async () => {
  scene = await makeScene(tempDir('worktrees-cli'));
});

afterEach(() => removeDir(scene.root));

/** The names and types of a JSON value's fields, all the way down (absent = undefined). */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (value !== null && typeof value === 'object') {
    const fields = Object.entries(value).filter(([, v]) => v !== undefined && typeof v !== 'function');
    return Object.fromEntries(fields.sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, shape(v)]));
  }
  return value === null ? 'null' : typeof value;
}

/** `natives ARGS --home HOME` in the repository, each stdout line parsed. */
function cliJson(args: string[], expectedCode = 0): unknown[] {
  const { code, out, err } = natives([...args, '--home', scene.home], scene.repo);
  expect([code, err]).toEqual([expectedCode, '']);
  return out
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line));
}

function expectSame(cli: unknown, addon: unknown): void {
  expect(shape(cli)).toEqual(shape(addon));
  // The data alone (a released handover's restore() is the addon's own).
  expect(cli).toEqual(JSON.parse(JSON.stringify(addon)));
}

describe('the CLI --json has the shape of the addon objects', () => {
  test('runs show and runs list', async () => {
    await addSeat('r2', { kind: 'judge', number: 2, path: path.join(scene.runs, 'r2', 'judge-2'), baseHead: 'abc' }, { home: scene.home });
    using _driving = await driveRun('r1', { home: scene.home });
    const [r1] = cliJson(['runs', 'show', 'r1', '--json']);
    expectSame(r1, await showRun('r1', { home: scene.home }));
    const listed = cliJson(['runs', 'list', '--json']);
    const runs = await listRuns({ home: scene.home });
    expect(runs.map((r) => r.driver)).toEqual(['live', 'dead']);
    expectSame(listed, runs);
  });

  test('handover: would release, refused, released, nothing to do', async () => {
    const ask = { repo: scene.repo, branch: BRANCH, toRun: 'r2', task: 't1', home: scene.home };
    const flags = ['handover', BRANCH, '--to', 'r2', '--task', 't1', '--json'];
    expectSame(cliJson([...flags, '--dry-run'])[0], await releaseWorktree({ ...ask, dryRun: true }));

    fs.writeFileSync(path.join(scene.worktree, 'notes.txt'), 'mine\n');
    const refused = cliJson(flags, 3)[0];
    expectSame(refused, await releaseWorktree(ask));
    expect((refused as { kind: string }).kind).toBe('refused');
    fs.rmSync(path.join(scene.worktree, 'notes.txt'));

    const [released] = cliJson(flags);
    expect(worktreePaths(scene)).not.toContain(scene.worktree);
    expect((released as { kind: string }).kind).toBe('released');
    const again = await releaseWorktree(ask);
    expectSame(cliJson(flags)[0], again);
    expect(again.kind).toBe('not-held');
  });

  test('a released worktree from the CLI and from the addon carry the same fields', async () => {
    const addon = await releaseWorktree({ repo: scene.repo, branch: BRANCH, toRun: 'r2', task: 't1', home: scene.home });
    if (addon.kind !== 'released') throw new Error(addon.message);
    expect((await addon.restore()).kind).toBe('restored');
    const [cli] = cliJson(['handover', BRANCH, '--to', 'r2', '--task', 't1', '--json']) as { released: { handover: string } }[];
    expect(shape(cli)).toEqual(shape(addon));
    expect(cli.released.handover).not.toBe(addon.released.handover);
  });
});
