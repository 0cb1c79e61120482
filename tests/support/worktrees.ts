/**
 * A repository and a run registry for the handover tests: task `t1`, its earlier attempt `r1`
 * (failed, not driven) whose candidate `A` is a real worktree at `runs/r1/A` on branch `t1/A` with a
 * commit of its own, and its retry `r2` (running), which wants the branch.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { addCandidate, createRun, createTask } from '../../packages/natives/src/index.ts';
import { run } from './fs.ts';

/** The earlier attempt's branch. */
export const BRANCH = 't1/A';

/** Where everything of one scene lives (canonical paths). */
export interface Scene {
  root: string;
  home: string;
  /** The main worktree. */
  repo: string;
  /** Where runs lay their worktree roots. */
  runs: string;
  /** The earlier attempt's candidate worktree. */
  worktree: string;
}

/** git in `cwd` with a fixed identity (no signing); its trimmed output. */
export function git(cwd: string, ...args: string[]): string {
  const identity = ['-c', 'user.name=Test', '-c', 'user.email=test@example.invalid', '-c', 'commit.gpgsign=false'];
  return run('git', [...identity, ...args], { cwd }).trim();
}

/** The scene under `root` (which exists). */
export async function makeScene(root: string): Promise<Scene> {
  const scene: Scene = {
    root,
    home: path.join(root, 'home'),
    repo: path.join(root, 'repo'),
    runs: path.join(root, 'runs'),
    worktree: path.join(root, 'runs', 'r1', 'A'),
  };
  fs.mkdirSync(scene.repo, { recursive: true });
  fs.mkdirSync(path.join(scene.runs, 'r1'), { recursive: true });
  git(scene.repo, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(scene.repo, 'README'), 'natives\n');
  fs.writeFileSync(path.join(scene.repo, '.gitignore'), 'target/\n');
  git(scene.repo, 'add', '-A');
  git(scene.repo, 'commit', '-q', '-m', 'first');
  git(scene.repo, 'worktree', 'add', '-q', '-b', BRANCH, scene.worktree, 'main');
  fs.writeFileSync(path.join(scene.worktree, 'work.txt'), 'the earlier attempt\n');
  git(scene.worktree, 'add', '-A');
  git(scene.worktree, 'commit', '-q', '-m', 'work');
  const home = scene.home;
  await createTask('t1', { home });
  await createRun({ id: 'r1', task: 't1', worktreeRoot: path.join(scene.runs, 'r1'), status: 'failed' }, { home });
  await addCandidate('r1', { name: 'A', branch: BRANCH, path: scene.worktree }, { home });
  await createRun({ id: 'r2', task: 't1', worktreeRoot: path.join(scene.runs, 'r2'), status: 'running' }, { home });
  return scene;
}

/** The commit `refs/heads/BRANCH` points at. */
export function tip(scene: Scene, branch = BRANCH): string {
  return git(scene.repo, 'rev-parse', `refs/heads/${branch}`);
}

/** The paths of every worktree git lists. */
export function worktreePaths(scene: Scene): string[] {
  return git(scene.repo, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((line) => line.startsWith('worktree '))
    .map((line) => line.slice('worktree '.length));
}
