/**
 * Fixture builders: fresh temp directories, trees of small files, git
 * repositories, and the shared large tree used by the cancellation tests.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** A fresh directory under the system temp dir, by its canonical path. */
export function tempDir(label: string): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `natives-e2e-${label}-`)));
}

/**
 * Where a large fixture shared by test runs lives: under the system temp dir, one per user, so a
 * tree another user generated there (which this user may read but not link or rewrite) is never
 * mistaken for this user's.
 */
export function sharedFixturePath(name: string): string {
  return path.join(os.tmpdir(), `natives-e2e-${name}-uid${process.getuid?.() ?? 'unknown'}`);
}

/** Remove a fixture directory (ignoring one that is already gone). */
export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * Create files under `root`: an array of relative paths (each file holds its
 * own path) or a map from relative path to contents. A path ending in `/`
 * creates an empty directory.
 */
export function writeTree(root: string, files: readonly string[] | Record<string, string>): void {
  const pairs = Array.isArray(files) ? files.map((rel) => [rel, rel] as const) : Object.entries(files);
  for (const [rel, contents] of pairs) {
    const target = path.join(root, rel);
    if (rel.endsWith('/')) {
      fs.mkdirSync(target, { recursive: true });
      continue;
    }
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, contents);
  }
}

/** Run a command synchronously; throw with its output when it fails. */
export function run(command: string, args: readonly string[], options: { cwd?: string } = {}): string {
  const result = spawnSync(command, args, { cwd: options.cwd, encoding: 'utf8' });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status}: ${result.stderr}`);
  }
  return result.stdout;
}

/** Make `dir` a git repository (so `.gitignore` files apply). */
export function gitInit(dir: string): void {
  run('git', ['init', '-q', dir]);
}

/** Set a path's mtime (and atime) to `seconds` since the epoch. */
export function setMtime(file: string, seconds: number): void {
  fs.utimesSync(file, seconds, seconds);
}

/** The paths of a match list, in order. */
export function pathsOf(matches: readonly { path: string }[]): string[] {
  return matches.map((m) => m.path);
}
