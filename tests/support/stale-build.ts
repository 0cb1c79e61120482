/**
 * A shared build cache that really goes stale: two git worktrees of one tiny crate (`probe`, no
 * dependencies, built offline) whose test prints the worktree its library was compiled from.
 * Worktree B's sources are dated 2001, older than any build from A, so `cargo test` in B finds A's
 * output fresh and runs it: the false green a refresh must prevent.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { run } from './fs.ts';

/** A worktree and the commit it has checked out. */
export interface Worktree {
  worktree: string;
  head: string;
}

const MANIFEST = '[package]\nname = "probe"\nversion = "0.1.0"\nedition = "2021"\n\n[workspace]\n';
const PROBE_TEST = '#[test]\nfn reports_its_source() {\n    println!("built_from={}", probe::built_from());\n}\n';
/** Before anything a build could produce (2001-09-09). */
const OLD_SOURCE_SECONDS = 1_000_000_000;

function libSource(name: string): string {
  return `pub fn built_from() -> &'static str {\n    "${name}"\n}\n`;
}

function git(cwd: string, ...args: string[]): string {
  const identity = ['-c', 'user.name=probe', '-c', 'user.email=probe@example.invalid', '-c', 'init.defaultBranch=main', '-c', 'commit.gpgsign=false'];
  return run('git', [...identity, ...args], { cwd }).trim();
}

function write(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

/** Worktree A (`main`, built_from "worktree-a") and its linked worktree B (built_from "worktree-b"), under `root`. */
export function twoWorktrees(root: string): { a: Worktree; b: Worktree } {
  const a = path.join(root, 'a');
  const b = path.join(root, 'b');
  write(path.join(a, 'Cargo.toml'), MANIFEST);
  write(path.join(a, 'src/lib.rs'), libSource('worktree-a'));
  write(path.join(a, 'tests/probe.rs'), PROBE_TEST);
  write(path.join(a, '.gitignore'), 'Cargo.lock\n');
  git(a, 'init', '-q');
  git(a, 'add', '.');
  git(a, 'commit', '-q', '-m', 'probe');
  git(a, 'worktree', 'add', '-q', '-b', 'b', b);
  write(path.join(b, 'src/lib.rs'), libSource('worktree-b'));
  git(b, 'commit', '-q', '-am', 'probe from b');
  for (const file of ['Cargo.toml', 'src/lib.rs', 'tests/probe.rs']) fs.utimesSync(path.join(b, file), OLD_SOURCE_SECONDS, OLD_SOURCE_SECONDS);
  return { a: { worktree: a, head: git(a, 'rev-parse', 'HEAD') }, b: { worktree: b, head: git(b, 'rev-parse', 'HEAD') } };
}

/**
 * `cargo test` in `worktree` against `targetDir`, offline, with `flags` (`--target`, `--release`...) and,
 * when given, `CARGO_BUILD_BUILD_DIR`: the worktree its test binary says it was built from.
 */
export function cargoTest(worktree: string, targetDir: string, flags: string[] = [], buildDir?: string): string {
  const env: Record<string, string | undefined> = { ...process.env, CARGO_TARGET_DIR: targetDir };
  delete env.CARGO_BUILD_BUILD_DIR;
  if (buildDir !== undefined) env.CARGO_BUILD_BUILD_DIR = buildDir;
  const result = spawnSync('cargo', ['test', '--offline', '-q', ...flags, '--', '--nocapture'], {
    cwd: worktree,
    env,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`cargo test in ${worktree} exited with ${result.status}: ${result.stderr}`);
  const line = result.stdout.split('\n').find((l) => l.startsWith('built_from='));
  if (line === undefined) throw new Error(`no report in ${result.stdout}`);
  return line.slice('built_from='.length);
}

/** The host's target triple, as rustc names it. */
export function hostTriple(): string {
  const host = run('rustc', ['-vV'])
    .split('\n')
    .find((line) => line.startsWith('host: '));
  if (host === undefined) throw new Error('rustc -vV named no host');
  return host.slice('host: '.length);
}

/** The files `probe`'s build left in `targetDir`'s dev profile. */
export function probeArtifacts(targetDir: string): string[] {
  const deps = path.join(targetDir, 'debug', 'deps');
  return fs.existsSync(deps) ? fs.readdirSync(deps).filter((name) => /^(lib)?probe-/.test(name)).sort() : [];
}
