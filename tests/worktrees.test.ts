/**
 * The run registry and the handover of a branch through the real addon, against real repositories:
 * recording tasks, runs, candidates, seats and statuses; bad input rejected with codes naming it;
 * driving a run, in this process and in a child SIGKILLed while it drives; a retry taking over the
 * branch of an earlier attempt's clean worktree; a dirty one refused with every byte left (ignored
 * files and commits only the worktree remembers too); what may go (a cache, declared regenerable
 * paths); a run not driven yet; a dry run changing nothing; restore, by the answer and by the id
 * alone; signals aborted before the call.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  addCandidate,
  addSeat,
  createRun,
  createTask,
  driveRun,
  driverLiveness,
  earlierAttempts,
  listRuns,
  releaseWorktree,
  restoreHandover,
  setRunStatus,
  showRun,
  type Handover,
  type ReleasedHandover,
} from '../packages/natives/src/index.ts';
import { FIXTURES } from './support/child.ts';
import { codedRejection, thrown } from './support/errors.ts';
import { removeDir, tempDir } from './support/fs.ts';
import { BRANCH, type Scene, git, makeScene, tip, worktreePaths } from './support/worktrees.ts';

let scene: Scene;
let home: string;

beforeEach(async () => {
  scene = await makeScene(tempDir('worktrees'));
  home = scene.home;
});

afterEach(() => removeDir(scene.root));

/** The retry `r2` of task `t1` asks for the earlier attempt's branch. */
function takeOver(options: { dryRun?: boolean; task?: string | null; signal?: AbortSignal; regenerable?: string[] } = {}): Promise<Handover> {
  const task = options.task === null ? undefined : (options.task ?? 't1');
  const { dryRun, signal, regenerable } = options;
  return releaseWorktree({ repo: scene.repo, branch: BRANCH, toRun: 'r2', task, home, dryRun, signal, regenerable });
}

/** A valid `CACHEDIR.TAG`, as cargo writes in `target/`. */
const CACHE_TAG = 'Signature: 8a477f597d28d172789f06886806bc55\n# a cache directory tag\n';

/** Every entry under `dir` (`.git` file included) with its mode and bytes, and every file of the repository's git directory but its objects: what a refusal must leave as it was. */
function state(dir: string): string[] {
  const entries = (root: string, skip: (entry: string) => boolean) =>
    (fs.existsSync(root) ? (fs.readdirSync(root, { recursive: true }) as string[]) : [])
      .filter((entry) => !skip(entry))
      .map((entry) => {
        const full = path.join(root, entry);
        const stat = fs.lstatSync(full);
        const bytes = stat.isFile() ? fs.readFileSync(full, 'hex') : stat.isSymbolicLink() ? fs.readlinkSync(full) : '';
        return `${root === dir ? 'worktree' : 'git'}:${entry}:${stat.mode.toString(8)}:${bytes}`;
      });
  return [...entries(dir, () => false), ...entries(path.join(scene.repo, '.git'), (entry) => entry === 'objects' || entry.startsWith('objects/'))].sort();
}

/** Write `contents` at `rel` in the earlier attempt's worktree, parents made. */
function write(rel: string, contents: string): void {
  fs.mkdirSync(path.dirname(path.join(scene.worktree, rel)), { recursive: true });
  fs.writeFileSync(path.join(scene.worktree, rel), contents);
}

/** Commit on a detached `HEAD` in the worktree, then check the branch out again: only the worktree's reflog names that commit. */
function detachedCommit(): void {
  git(scene.worktree, 'checkout', '-q', '--detach');
  write('tried.txt', 'an idea\n');
  git(scene.worktree, 'add', '-A');
  git(scene.worktree, 'commit', '-q', '-m', 'tried something');
  git(scene.worktree, 'checkout', '-q', BRANCH);
}

function released(handover: Handover): ReleasedHandover {
  if (handover.kind !== 'released') throw new Error(`not released: ${handover.message}`);
  return handover;
}

/** Every file under `dir` (not `.git`) with its bytes, sorted. */
function snapshot(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((entry) => !entry.startsWith('.git') && fs.statSync(path.join(dir, entry)).isFile())
    .map((entry) => `${entry}=${fs.readFileSync(path.join(dir, entry), 'hex')}`)
    .sort();
}

describe('the registry', () => {
  test('records tasks, runs, candidates, seats and statuses', async () => {
    expect(await createTask('t1', { home })).toEqual({ task: 't1', createdAtMs: expect.any(Number) });
    const r1 = await showRun('r1', { home });
    expect(r1).toMatchObject({ id: 'r1', task: 't1', status: 'failed', worktreeRoot: path.join(scene.runs, 'r1'), driver: 'dead', version: 2 });
    expect(r1.candidates).toEqual([{ name: 'A', branch: BRANCH, path: scene.worktree, folded: false }]);
    expect(r1.releasedTo).toBeUndefined();

    const seat = path.join(scene.runs, 'r2', 'review-1');
    const withSeat = await addSeat('r2', { kind: 'review', number: 1, path: seat, reviewHead: tip(scene) }, { home });
    expect(withSeat.seats).toEqual([{ kind: 'review', number: 1, path: seat, reviewHead: tip(scene) }]);
    const base = git(scene.repo, 'rev-parse', 'main');
    const withCandidate = await addCandidate('r2', { name: 'B', branch: 't1/B', path: path.join(scene.runs, 'r2', 'B'), base }, { home });
    expect(withCandidate.candidates).toEqual([{ name: 'B', branch: 't1/B', path: path.join(scene.runs, 'r2', 'B'), base, folded: false }]);
    const parked = await setRunStatus('r2', 'parked', { home });
    expect(parked.status).toBe('parked');
    expect(parked.events.map((e) => [e.kind, e.note])).toEqual([
      ['created', 'running'],
      ['seat', 'review 1'],
      ['candidate', 'B'],
      ['status', 'parked'],
    ]);

    await createTask('t2', { home });
    await createRun({ id: 'other', task: 't2', worktreeRoot: 'relative/root', status: 'blocked' }, { home });
    expect((await listRuns({ home })).map((r) => r.id)).toEqual(['r1', 'r2', 'other']);
    expect((await listRuns({ task: 't2', home })).map((r) => [r.id, r.worktreeRoot])).toEqual([['other', path.join(process.cwd(), 'relative/root')]]);
    expect((await earlierAttempts('t1', { home })).map((r) => [r.id, r.status])).toEqual([
      ['r1', 'failed'],
      ['r2', 'parked'],
    ]);
  });

  test('bad input is rejected with a code and a message naming it', async () => {
    const cases: [string, () => Promise<unknown>, string, string][] = [
      ['blank task', () => createTask(' ', { home }), 'EINVAL', '" "'],
      ['unknown task', () => createRun({ id: 'r3', task: 'nope', worktreeRoot: scene.runs, status: 'running' }, { home }), 'ENOENT', 'nope'],
      ['taken id', () => createRun({ id: 'r1', task: 't1', worktreeRoot: scene.runs, status: 'running' }, { home }), 'EEXIST', 'r1'],
      ['bad status', () => setRunStatus('r1', 'finished' as never, { home }), 'EINVAL', 'finished'],
      ['bad status of a new run', () => createRun({ id: 'r3', task: 't1', worktreeRoot: scene.runs, status: 'later' as never }, { home }), 'EINVAL', 'later'],
      ['negative seat', () => addSeat('r1', { kind: 'judge', number: -1, path: scene.runs }, { home }), 'EINVAL', 'number'],
      ['fractional seat', () => addSeat('r1', { kind: 'judge', number: 1.5, path: scene.runs }, { home }), 'EINVAL', '1.5'],
      ['bad seat kind', () => addSeat('r1', { kind: 'owner' as never, number: 1, path: scene.runs }, { home }), 'EINVAL', 'owner'],
      ['taken candidate', () => addCandidate('r1', { name: 'A', branch: 'x', path: scene.runs }, { home }), 'EEXIST', 'A'],
      ['missing worktree root', () => createRun({ id: 'r3', task: 't1', status: 'running' } as never, { home }), 'EINVAL', 'createRun: worktreeRoot must be a path'],
      ['no repository given', () => releaseWorktree({ branch: BRANCH, toRun: 'r2', home } as never), 'EINVAL', 'releaseWorktree: repo must be a path'],
      ['unknown run', () => showRun('nope', { home }), 'ENOENT', 'nope'],
      ['unknown task listed', () => listRuns({ task: 'nope', home }), 'ENOENT', 'nope'],
      ['unknown run driven', () => driveRun('nope', { home }), 'ENOENT', 'nope'],
      ['a flag for a branch', () => releaseWorktree({ repo: scene.repo, branch: '-f', toRun: 'r2', home }), 'EINVAL', '"-f"'],
      ['a full reference', () => releaseWorktree({ repo: scene.repo, branch: 'refs/heads/t1/A', toRun: 'r2', home }), 'EINVAL', 'refs/heads/t1/A'],
      ['no new run', () => releaseWorktree({ repo: scene.repo, branch: BRANCH, toRun: '', home }), 'EINVAL', 'run id'],
      ['unknown task taking over', () => releaseWorktree({ repo: scene.repo, branch: BRANCH, toRun: 'r2', task: 'nope', home }), 'ENOENT', 'nope'],
      ['no repository', () => releaseWorktree({ repo: path.join(scene.root, 'missing'), branch: BRANCH, toRun: 'r2', home }), 'ENOENT', 'missing'],
      ['a folder outside any repository', () => releaseWorktree({ repo: scene.runs, branch: BRANCH, toRun: 'r2', home }), 'EINVAL', 'not in a git repository'],
      ['no options', () => releaseWorktree(null as never), 'EINVAL', 'releaseWorktree: options must be an object'],
      ['no run', () => createRun(undefined as never, { home }), 'EINVAL', 'createRun: run must be an object'],
      ['no candidate', () => addCandidate('r1', null as never, { home }), 'EINVAL', 'addCandidate: candidate must be an object'],
      ['no seat', () => addSeat('r1', 'seat' as never, { home }), 'EINVAL', 'addSeat: seat must be an object'],
      ['null registry options', () => createTask('t9', null as never), 'EINVAL', 'createTask: options must be an object'],
    ];
    for (const [what, call, code, named] of cases) {
      const error = await codedRejection(call());
      expect([what, error.code]).toEqual([what, code]);
      expect(error.message).toContain(named);
    }
    const unknown = thrown(() => driverLiveness('nope', { home }));
    expect([unknown.code, unknown.message]).toEqual(['ENOENT', 'no run "nope" is recorded']);
  });

  test('a record written by a newer natives is never rewritten (ENOTSUP)', async () => {
    const slug = (id: string) => createHash('sha256').update(id).digest('hex');
    const file = path.join(home, 'worktrees', 'tasks', slug('t1'), 'runs', `${slug('r1')}.json`);
    const record = JSON.parse(fs.readFileSync(file, 'utf8'));
    fs.writeFileSync(file, JSON.stringify({ ...record, version: 99 }));
    const before = fs.readFileSync(file);
    const error = await codedRejection(setRunStatus('r1', 'parked', { home }));
    expect(error.code).toBe('ENOTSUP');
    expect(error.message).toContain('newer natives');
    expect(fs.readFileSync(file)).toEqual(before);
  });
});

describe('driving a run', () => {
  test('a driver holds the run until released or disposed; others are refused', async () => {
    expect(driverLiveness('r1', { home })).toBe('dead');
    {
      using driver = await driveRun('r1', { home });
      expect([driver.run, driver.held]).toEqual(['r1', true]);
      expect(driverLiveness('r1', { home })).toBe('live');
      expect((await showRun('r1', { home })).driver).toBe('live');
      const busy = await codedRejection(driveRun('r1', { home }));
      expect(busy.code).toBe('EBUSY');
      expect(busy.message).toContain('r1');
    }
    expect(driverLiveness('r1', { home })).toBe('dead');
    const driver = await driveRun('r1', { home });
    expect(driver.release()).toBe(true);
    expect(driver.release()).toBe(false);
    expect(driver.held).toBe(false);
    expect(driverLiveness('r1', { home })).toBe('dead');
  });

  test('a driver in another process is live until SIGKILLed, then dead at once', async () => {
    const child = Bun.spawn([process.execPath, path.join(FIXTURES, 'run-driver.ts'), home, 'r1'], { stdout: 'pipe', stderr: 'inherit' });
    try {
      const reader = child.stdout.getReader();
      const { value } = await reader.read();
      reader.releaseLock();
      expect(new TextDecoder().decode(value)).toStartWith('driving');
      expect(driverLiveness('r1', { home })).toBe('live');
      expect((await codedRejection(driveRun('r1', { home }))).code).toBe('EBUSY');
      const refused = await takeOver();
      expect(refused.kind === 'refused' && refused.reasons.map((r) => r.code)).toEqual(['driver-live']);
    } finally {
      child.kill('SIGKILL');
      await child.exited;
    }
    expect(driverLiveness('r1', { home })).toBe('dead');
    using driver = await driveRun('r1', { home });
    expect(driver.held).toBe(true);
  });
});

describe('releaseWorktree', () => {
  test("a retry takes over the earlier attempt's clean worktree; the branch stays and can be checked out", async () => {
    fs.mkdirSync(path.join(scene.worktree, 'target'));
    fs.writeFileSync(path.join(scene.worktree, 'target', 'CACHEDIR.TAG'), CACHE_TAG);
    fs.writeFileSync(path.join(scene.worktree, 'target', 'app'), 'build output');
    const before = tip(scene);
    const handover = released(await takeOver());
    expect(handover).toMatchObject({ kind: 'released', dryRun: false, branch: BRANCH, toRun: 'r2' });
    expect(handover.released).toEqual({
      run: 'r1',
      task: 't1',
      candidate: 'A',
      branch: BRANCH,
      path: scene.worktree,
      tip: before,
      repo: scene.repo,
      releasedTo: 'r2',
      handover: expect.any(String),
    });
    expect(handover.message).toBe(
      `released the worktree of run r1 (candidate A) at ${scene.worktree}: branch ${BRANCH} at ${before.slice(0, 12)} is free for run r2`,
    );
    expect(fs.existsSync(scene.worktree)).toBe(false);
    expect(worktreePaths(scene)).not.toContain(scene.worktree);
    expect(tip(scene)).toBe(before);
    const r1 = await showRun('r1', { home });
    expect(r1.candidates[0]).toMatchObject({ folded: true, handover: handover.released.handover });
    expect([r1.releasedTo, r1.releasedBranches]).toEqual(['r2', [BRANCH]]);
    expect(r1.events.slice(-2).map((e) => e.kind)).toEqual(['released', 'removing']);
    expect(r1.events.at(-2)).toMatchObject({ repo: scene.repo, tip: before });
    expect(r1.events.at(-1)).toMatchObject({ note: 'let go with it: target/', regenerable: ['/target/'] });

    const review = path.join(scene.runs, 'r2', 'review');
    git(scene.repo, 'worktree', 'add', '-q', review, BRANCH);
    expect(git(review, 'rev-parse', 'HEAD')).toBe(before);
    await addCandidate('r2', { name: 'review', branch: BRANCH, path: review }, { home });
    expect((await takeOver()).kind).toBe('held-by-new-run');
  });

  test('a dirty worktree is refused with every reason, its bytes left, and the promise resolved', async () => {
    fs.writeFileSync(path.join(scene.worktree, 'notes.txt'), 'mine, not committed\n');
    fs.writeFileSync(path.join(scene.worktree, 'README'), 'edited\n');
    git(scene.repo, 'worktree', 'lock', '--reason', 'on a usb disk', scene.worktree);
    const bytes = snapshot(scene.worktree);
    const record = await showRun('r1', { home });
    const handover = await takeOver();
    if (handover.kind !== 'refused') throw new Error(`not refused: ${handover.message}`);
    expect(handover.reasons.map((r) => r.code)).toEqual(['dirty', 'locked']);
    expect(handover.reasons[0].message).toBe('uncommitted changes: README, notes.txt');
    expect(handover.reasons[1].message).toBe('the worktree is locked (on a usb disk)');
    expect(handover.holder).toMatchObject({
      branch: BRANCH,
      path: scene.worktree,
      owner: { kind: 'earlier-attempt', run: 'r1' },
      run: { id: 'r1', task: 't1', status: 'failed' },
      driver: 'dead',
      head: tip(scene),
      tip: tip(scene),
      locked: 'on a usb disk',
      content: { inspectable: true, clean: false, dirty: { named: ['README', 'notes.txt'], total: 2 } },
    });
    expect(handover.message).toContain(`branch ${BRANCH} is checked out at ${scene.worktree} by run r1 (failed, an earlier attempt at this task), dirty`);
    expect(handover.message).toContain('refused: uncommitted changes: README, notes.txt; the worktree is locked (on a usb disk)');
    expect(snapshot(scene.worktree)).toEqual(bytes);
    expect(worktreePaths(scene)).toContain(scene.worktree);
    expect(await showRun('r1', { home })).toEqual(record);
  });

  test('ignored files, an uncommitted .gitignore, an empty directory and a commit only the worktree remembers keep it', async () => {
    const cases: [string, () => void, string, string[]][] = [
      ['build output no cache tag vouches for (target/ is ignored)', () => write('target/app', 'binary'), 'dirty', ['target/app']],
      ['a folder an uncommitted .gitignore hides', () => (write('notes/.gitignore', '*\n'), write('notes/design.md', 'the design\n')), 'dirty', ['notes/.gitignore', 'notes/design.md']],
      ['an empty new directory', () => fs.mkdirSync(path.join(scene.worktree, 'later')), 'dirty', ['later/']],
      ['a commit made on a detached HEAD, then left', detachedCommit, 'only-here', ['HEAD@{1}']],
    ];
    for (const [name, prepare, code, named] of cases) {
      prepare();
      const before = state(scene.worktree);
      const record = await showRun('r1', { home });
      const handover = await takeOver();
      if (handover.kind !== 'refused') throw new Error(`${name}: not refused: ${handover.message}`);
      expect([name, handover.reasons.map((r) => r.code)]).toEqual([name, [code]]);
      const shown = code === 'dirty' ? handover.holder.content.dirty.named : handover.holder.onlyHere.named;
      expect([name, shown.map((p) => p.replace(/^[0-9a-f]{12} \((.*)\)$/, '$1'))]).toEqual([name, named]);
      expect(state(scene.worktree)).toEqual(before);
      expect(await showRun('r1', { home })).toEqual(record);
      removeDir(scene.root);
      scene = await makeScene(tempDir('worktrees'));
      home = scene.home;
    }
  });

  test('what the new run declares regenerable goes with the worktree, and the release records it', async () => {
    write('node_modules/m/index.js', 'module\n');
    write('dist/app.js', 'built\n');
    const refused = await takeOver({ dryRun: true, regenerable: ['dist/'] });
    expect(refused.kind === 'refused' && refused.holder.content).toMatchObject({ dirty: { named: ['node_modules/m/index.js'], total: 1 }, letGo: { named: ['dist/'], total: 1 } });
    const handover = released(await takeOver({ regenerable: ['node_modules/', 'dist/'] }));
    expect(fs.existsSync(scene.worktree)).toBe(false);
    const r1 = await showRun('r1', { home });
    expect(r1.events.at(-2)).toMatchObject({ kind: 'released', handover: handover.released.handover, regenerable: ['node_modules/', 'dist/'] });
    expect(r1.events.at(-1)).toMatchObject({ kind: 'removing', note: 'let go with it: dist/, node_modules/' });
    const error = await codedRejection(takeOver({ regenerable: 'dist/' as never }));
    expect([error.code, error.message]).toEqual(['EINVAL', 'releaseWorktree: regenerable must be an array of gitignore patterns (strings)']);
  });

  test('a run recorded as running is not released before a driver has taken it', async () => {
    await setRunStatus('r1', 'running', { home });
    const waiting = await takeOver();
    expect(waiting.kind === 'refused' && waiting.reasons.map((r) => r.code)).toEqual(['driver-not-started']);
    {
      using _driver = await driveRun('r1', { home });
      const driven = await takeOver();
      expect(driven.kind === 'refused' && driven.reasons.map((r) => r.code)).toEqual(['driver-live']);
    }
    expect((await showRun('r1', { home })).events.at(-1)?.kind).toBe('driven');
    released(await takeOver());
  });

  test('a worktree is never handed to a run nobody recorded', async () => {
    const before = state(scene.worktree);
    const error = await codedRejection(releaseWorktree({ repo: scene.repo, branch: BRANCH, toRun: 'r2-typo', task: 't1', home }));
    expect(error.code).toBe('ENOENT');
    expect(error.message).toContain('r2-typo');
    expect(state(scene.worktree)).toEqual(before);
  });

  test('a handover is restored by its id alone, after the answer that held it is gone', async () => {
    const before = tip(scene);
    const id = released(await takeOver()).released.handover;
    const restored = await restoreHandover(id, { home });
    expect(restored).toEqual({ kind: 'restored', message: `restored the worktree of run r1 at ${scene.worktree} (branch ${BRANCH} at ${before.slice(0, 12)})` });
    expect(worktreePaths(scene)).toContain(scene.worktree);
    expect(fs.readFileSync(path.join(scene.worktree, 'work.txt'), 'utf8')).toBe('the earlier attempt\n');
    expect((await restoreHandover(id, { home })).kind).toBe('restored');
    released(await takeOver());
    const stale = await restoreHandover(id, { home });
    expect(stale.kind === 'refused' && stale.reasons.map((r) => r.code)).toEqual(['not-in-force']);
    expect((await codedRejection(restoreHandover('no-such-handover', { home }))).code).toBe('ENOENT');
    expect((await codedRejection(restoreHandover(id, { home, signal: AbortSignal.abort() }))).code).toBe('ABORT_ERR');
  });

  test('a worktree no run recorded is not ours: refused, whoever asks', async () => {
    const stranger = path.join(scene.root, 'elsewhere');
    git(scene.repo, 'worktree', 'add', '-q', '-b', 'loose', stranger, 'main');
    const handover = await releaseWorktree({ repo: scene.repo, branch: 'loose', toRun: 'r2', task: 't1', home });
    if (handover.kind !== 'refused') throw new Error(`not refused: ${handover.message}`);
    expect(handover.reasons.map((r) => r.code)).toEqual(['not-made-by-us']);
    expect(handover.holder.owner).toEqual({ kind: 'foreign', why: 'no run records it as a candidate worktree' });
    expect(handover.holder.run).toBeUndefined();
    expect(fs.existsSync(stranger)).toBe(true);
  });

  test('a dry run says what a release would do and changes nothing', async () => {
    const bytes = snapshot(scene.worktree);
    const record = await showRun('r1', { home });
    const plan = await takeOver({ dryRun: true });
    if (plan.kind !== 'would-release') throw new Error(`not would-release: ${plan.message}`);
    expect(plan.dryRun).toBe(true);
    expect(plan.holder.owner).toEqual({ kind: 'earlier-attempt', run: 'r1' });
    expect(plan.holder.content.clean).toBe(true);
    expect(plan.message).toStartWith(`would release: branch ${BRANCH} is checked out at ${scene.worktree} by run r1`);
    expect(snapshot(scene.worktree)).toEqual(bytes);
    expect(worktreePaths(scene)).toContain(scene.worktree);
    expect(await showRun('r1', { home })).toEqual(record);

    fs.writeFileSync(path.join(scene.worktree, 'notes.txt'), 'mine\n');
    const refused = await takeOver({ dryRun: true });
    expect(refused.kind === 'refused' && [refused.dryRun, refused.reasons.map((r) => r.code)]).toEqual([true, ['dirty']]);
    const free = await releaseWorktree({ repo: scene.repo, branch: 'no-such-branch', toRun: 'r2', home, dryRun: true });
    expect([free.kind, free.message]).toEqual(['not-held', 'no worktree holds branch no-such-branch: nothing to do']);
  });

  test('a review started by hand (no task) takes over only as a run natives recorded', async () => {
    const plan = await takeOver({ task: null, dryRun: true });
    expect(plan.kind === 'would-release' && plan.holder.owner).toEqual({ kind: 'own-run', run: 'r1' });
    await setRunStatus('r1', 'landing', { home });
    const refused = await takeOver({ task: null });
    expect(refused.kind === 'refused' && refused.reasons.map((r) => r.code)).toEqual(['landing']);
    expect(fs.existsSync(scene.worktree)).toBe(true);
  });

  test('restore puts the worktree back when the review never started, and refuses once its path is taken', async () => {
    const before = tip(scene);
    const handover = released(await takeOver());
    expect(await handover.restore()).toEqual({
      kind: 'restored',
      message: `restored the worktree of run r1 at ${scene.worktree} (branch ${BRANCH} at ${before.slice(0, 12)})`,
    });
    expect(worktreePaths(scene)).toContain(scene.worktree);
    expect(git(scene.worktree, 'rev-parse', 'HEAD')).toBe(before);
    expect(fs.readFileSync(path.join(scene.worktree, 'work.txt'), 'utf8')).toBe('the earlier attempt\n');
    const r1 = await showRun('r1', { home });
    expect(r1.candidates[0]).toEqual({ name: 'A', branch: BRANCH, path: scene.worktree, folded: false });
    expect(r1.releasedTo).toBeUndefined();
    expect((await handover.restore()).kind).toBe('restored');

    const again = released(await takeOver());
    fs.mkdirSync(scene.worktree);
    fs.writeFileSync(path.join(scene.worktree, 'someone.txt'), 'else\n');
    const refused = await again.restore();
    if (refused.kind !== 'refused') throw new Error('restored over a taken path');
    expect(refused.reasons.map((r) => r.code)).toEqual(['path-taken']);
    expect(refused.message).toContain(`${scene.worktree} exists`);
    expect(fs.readFileSync(path.join(scene.worktree, 'someone.txt'), 'utf8')).toBe('else\n');
    // The earlier handover was replaced by this one: restoring it now is refused, not done twice.
    const stale = await handover.restore();
    expect(stale.kind === 'refused' && stale.reasons.map((r) => r.code)).toEqual(['not-in-force']);
  });

  test('a signal aborted before the call rejects with ABORT_ERR and does nothing', async () => {
    const signal = AbortSignal.abort();
    for (const call of [
      () => takeOver({ signal }),
      () => takeOver({ signal, dryRun: true }),
      () => driveRun('r1', { home, signal }),
      () => createTask('t9', { home, signal }),
      () => setRunStatus('r1', 'done', { home, signal }),
    ]) {
      const error = await codedRejection(call());
      expect(error.code).toBe('ABORT_ERR');
      expect(error.name).toBe('AbortError');
    }
    expect(fs.existsSync(scene.worktree)).toBe(true);
    expect((await showRun('r1', { home })).status).toBe('failed');
    expect(driverLiveness('r1', { home })).toBe('dead');
    const handover = released(await takeOver());
    expect((await codedRejection(handover.restore({ signal }))).code).toBe('ABORT_ERR');
    expect(fs.existsSync(scene.worktree)).toBe(false);
  });
});
