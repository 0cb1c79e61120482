/**
 * The eviction pass through the real addon and the CLI: off until asked, a dry run that touches nothing,
 * a real pass that archives and removes a done run's review seat, the archived seat listed and rebuilt
 * after the repository is gone, bad options and a busy or aborted call rejected with their codes, and the
 * addon and `natives housekeeping --json` / `natives fold --show-seats --json` naming the same fields.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  addSeat,
  archivedSeats,
  createRun,
  createTask,
  evictionPass,
  grantAuthority,
  restoreSeat,
} from '../packages/natives/src/index.ts';
import { natives } from './support/cli.ts';
import { rejection } from './support/errors.ts';
import { removeDir, tempDir } from './support/fs.ts';

let root: string;
let home: string;
let repo: string;
let seat: string;
let head: string;

function git(cwd: string, args: string[]): string {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith('GIT_')) delete env[name];
  Object.assign(env, { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' });
  const identity = ['-c', 'user.name=Test', '-c', 'user.email=test@example.invalid'];
  const result = spawnSync('git', [...identity, ...args], { cwd, env, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout.trimEnd();
}

beforeEach(async () => {
  root = fs.realpathSync(tempDir('eviction'));
  home = path.join(root, 'home');
  repo = path.join(root, 'repo');
  seat = path.join(root, 'runs', 'r1', 'review-1');
  fs.mkdirSync(repo);
  git(repo, ['init', '-q', '-b', 'main']);
  fs.writeFileSync(path.join(repo, 'README'), 'natives\n');
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'base']);
  const base = git(repo, ['rev-parse', 'HEAD']);
  fs.writeFileSync(path.join(repo, 'README'), 'natives, reviewed\n');
  git(repo, ['commit', '-q', '-am', 'under review']);
  head = git(repo, ['rev-parse', 'HEAD']);
  fs.mkdirSync(path.dirname(seat), { recursive: true });
  git(repo, ['worktree', 'add', '-q', '--detach', seat, head]);
  await createTask('t1', { home });
  await createRun({ id: 'r1', task: 't1', worktreeRoot: path.dirname(seat), status: 'done' }, { home });
  await addSeat('r1', { kind: 'review', number: 1, path: seat, baseHead: base, reviewHead: head }, { home });
});

afterEach(() => removeDir(root));

test('the pass is off until asked, and a dry run touches nothing', async () => {
  const off = await evictionPass({ home });
  expect(off.disabled).toBe('disk.auto_fold is off');
  expect(off.evicted).toEqual([]);
  const dry = await evictionPass({ home, autoFold: true, reclaimBytes: 1 << 30, dryRun: true, quietPeriodMs: 0 });
  expect(dry.disabled).toBeNull();
  expect(dry.evicted.map((e) => [e.seat, e.archive])).toEqual([['review-1', null]]);
  expect(dry.retention).toBeNull();
  expect(fs.existsSync(seat)).toBe(true);
  const recent = await evictionPass({ home, autoFold: true, reclaimBytes: 1 << 30, dryRun: true });
  expect(recent.retained[0].blockers.map((b) => b.kind)).toContain('recent-activity');
});

test('a pass archives and removes the seat; it is listed and rebuilt without the repository', async () => {
  fs.writeFileSync(path.join(home, 'config.json'), JSON.stringify({ disk: { auto_fold: true, worktree_reclaim_bytes: 1 << 30 } }));
  const report = await evictionPass({ home, quietPeriodMs: 0 });
  expect(report.evicted).toHaveLength(1);
  expect(report.evicted[0].archive).toStartWith(home);
  expect(report.retention?.copiesEvicted).toBe(1);
  expect(fs.existsSync(seat)).toBe(false);
  fs.rmSync(repo, { recursive: true });
  const tips = await archivedSeats('r1', { home });
  const current = tips.find((tip) => tip.current)!;
  expect(current).toMatchObject({ seat: 'review-1', head, phase: 'evicted', source: seat });
  const dest = path.join(root, 'inspect');
  const restored = await restoreSeat('r1', head, dest, { home });
  expect(restored.dir).toBe(dest);
  expect(fs.readFileSync(path.join(dest, 'README'), 'utf8')).toBe('natives, reviewed\n');
  expect((await rejection(restoreSeat('r1', head, dest, { home }))).code).toBe('EEXIST');
  expect((await rejection(restoreSeat('r1', head.slice(0, 8), path.join(root, 'x'), { home }))).code).toBe('EINVAL');
  expect((await rejection(archivedSeats('nope', { home }))).code).toBe('ENOENT');

  const cli = natives(['fold', 'r1', '--show-seats', '--json', '--home', home], root);
  expect(cli.code).toBe(0);
  const fromCli = cli.out.trim().split('\n').map((line) => JSON.parse(line));
  expect(fromCli).toEqual(tips);
});

test('the CLI report and the addon report name the same fields', async () => {
  const cli = natives(['housekeeping', '--dry-run', '--json', '--auto-fold', '--reclaim-bytes', '1000', '--quiet-seconds', '0', '--home', home], root);
  expect(cli.code).toBe(0);
  const fromCli = JSON.parse(cli.out);
  const fromAddon = await evictionPass({ home, autoFold: true, reclaimBytes: 1000, dryRun: true, quietPeriodMs: 0 });
  expect(fromCli).toEqual(fromAddon);
  expect(Object.keys(fromAddon).sort()).toEqual(
    ['blockers', 'continueAfter', 'disabled', 'dryRun', 'emptyRoots', 'evicted', 'retained', 'retention', 'settings', 'visited'],
  );
});

test('bad input and an aborted call reject with their codes', async () => {
  for (const reclaimBytes of [-1, 1.5, Number.NaN]) {
    const err = await rejection(evictionPass({ home, autoFold: true, reclaimBytes }));
    expect(err.code).toBe('EINVAL');
    expect(err.message).toContain('reclaimBytes');
  }
  expect((await rejection(evictionPass({ home, autoFold: true, reclaimBytes: 1, quietPeriodMs: -5 }))).code).toBe('EINVAL');
  expect((await rejection(evictionPass(null as never))).code).toBe('EINVAL');
  fs.writeFileSync(path.join(home, 'config.json'), '{"disk": {"auto_fold": 1}}');
  const config = await rejection(evictionPass({ home }));
  expect(config.code).toBe('EINVAL');
  expect(config.message).toContain('config.json');
  const controller = new AbortController();
  controller.abort();
  expect((await rejection(evictionPass({ home, signal: controller.signal }))).code).toBe('ABORT_ERR');
});

test('authority granted to a seat by name keeps it; taken back, the seat can go', async () => {
  const ask = { home, autoFold: true, reclaimBytes: 1 << 30, dryRun: true, quietPeriodMs: 0 };
  await grantAuthority('r1', 'review-1', { retain: true, public: true }, { home });
  const kept = await evictionPass(ask);
  expect(kept.retained[0].blockers.map((b) => b.kind)).toEqual(['public-authority', 'retention-authority']);
  await grantAuthority('r1', 'review-1', { retain: false, public: false }, { home });
  expect((await evictionPass(ask)).evicted.map((e) => e.seat)).toEqual(['review-1']);
  expect((await rejection(grantAuthority('r1', 'judge-9', { approved: true }, { home }))).code).toBe('ENOENT');
  expect((await rejection(grantAuthority('r1', 'review-1', null as never, { home }))).code).toBe('EINVAL');
});
