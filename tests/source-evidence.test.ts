/**
 * Checkout evidence through the real addon and the CLI: capture a checkout, validate, read the patch,
 * restore; refusals resolve with their reason; corruption and a taken destination reject with their
 * codes; the addon and `natives source-evidence --json` name the same fields.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  captureSourceEvidence,
  restoreSourceEvidence,
  sourceEvidencePatch,
  validateSourceEvidence,
} from '../packages/natives/src/index.ts';
import { natives } from './support/cli.ts';
import { rejection } from './support/errors.ts';
import { removeDir, tempDir } from './support/fs.ts';

const BINARY = Buffer.from([0, 1, 2, 0xff, 0xfe, 0, 10, 0x80]);

let root: string;
let repo: string;
let worktree: string;
let artifacts: string;

/** Run git in `cwd` with no user or system configuration; its trimmed stdout. */
function git(cwd: string, args: string[]): string {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith('GIT_')) delete env[name];
  Object.assign(env, { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' });
  const identity = ['-c', 'user.name=Test', '-c', 'user.email=test@example.invalid'];
  const result = spawnSync('git', [...identity, ...args], { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout.trimEnd();
}

function commitAll(cwd: string, message: string): string {
  git(cwd, ['add', '-A']);
  git(cwd, ['commit', '-q', '-m', message]);
  return git(cwd, ['rev-parse', 'HEAD']);
}

beforeEach(() => {
  root = tempDir('source-evidence');
  repo = path.join(root, 'repo');
  worktree = path.join(root, 'runs', 'r1', 'A');
  artifacts = path.join(root, 'runs', 'r1', 'artifacts');
  fs.mkdirSync(repo);
  git(repo, ['init', '-q', '-b', 'main']);
  fs.writeFileSync(path.join(repo, 'README'), 'natives\n');
  fs.writeFileSync(path.join(repo, 'data.bin'), BINARY);
  fs.writeFileSync(path.join(repo, 'tool.sh'), '#!/bin/sh\n');
  fs.writeFileSync(path.join(repo, 'gone.txt'), 'to be deleted\n');
  commitAll(repo, 'base');
  fs.mkdirSync(path.dirname(worktree), { recursive: true });
  git(repo, ['worktree', 'add', '-q', '-b', 't1/A', worktree, 'main']);
  fs.writeFileSync(path.join(worktree, 'data.bin'), Buffer.concat([BINARY, BINARY]));
  fs.chmodSync(path.join(worktree, 'tool.sh'), 0o755);
  fs.rmSync(path.join(worktree, 'gone.txt'));
  fs.writeFileSync(path.join(worktree, 'README'), 'natives, changed\n');
  commitAll(worktree, 'work');
});

afterEach(() => removeDir(root));

test('a capture publishes an archive that validates, reads and restores', async () => {
  // Permission bits no single umask makes together; git keeps none of them.
  const modes: [string, number][] = [['README', 0o600], ['data.bin', 0o644], ['.', 0o700]];
  for (const [name, mode] of modes) fs.chmodSync(path.join(worktree, name), mode);
  const captured = await captureSourceEvidence(worktree, 'main', artifacts);
  expect(captured.outcome).toBe('published');
  expect(captured.reason).toBeUndefined();
  const archive = captured.archive!;
  const head = git(worktree, ['rev-parse', 'HEAD']);
  const base = git(worktree, ['rev-parse', 'main']);
  expect(archive.dir).toBe(path.join(artifacts, 'source-evidence', `${head}-${base}`));
  expect(archive.sourceTree).toBe(git(worktree, ['rev-parse', 'HEAD^{tree}']));
  expect(archive.tips.map((tip) => tip.commit).sort()).toEqual([head, base].sort());
  expect(archive.tips.find((tip) => tip.commit === head)!.seenAs).toContain('HEAD');

  expect(await validateSourceEvidence(archive.dir)).toEqual(archive);
  const again = await captureSourceEvidence(worktree, 'main', artifacts);
  expect(again).toEqual({ ...captured, outcome: 'existing' });

  const patch = await sourceEvidencePatch(archive.dir);
  const expected = git(worktree, ['diff', '--binary', '--full-index', '--no-renames', base, head]);
  expect(patch.toString('latin1').trimEnd()).toBe(expected);
  expect(patch.length).toBe(archive.patchBytes);

  const dest = path.join(root, 'restored');
  const restored = await restoreSourceEvidence(archive.dir, dest);
  expect(restored.dir).toBe(dest);
  expect(restored.sourceTree).toBe(archive.sourceTree);
  expect(fs.readFileSync(path.join(dest, 'data.bin'))).toEqual(Buffer.concat([BINARY, BINARY]));
  expect(fs.statSync(path.join(dest, 'tool.sh')).mode & 0o111).not.toBe(0);
  expect(fs.existsSync(path.join(dest, 'gone.txt'))).toBe(false);
  expect(git(dest, ['rev-parse', 'HEAD'])).toBe(restored.sourceCommit);
  for (const [name, mode] of modes) expect([name, fs.statSync(path.join(dest, name)).mode & 0o7777]).toEqual([name, mode]);
  const taken = await rejection(restoreSourceEvidence(archive.dir, dest));
  expect(taken.code).toBe('EEXIST');
});

test('a checkout an archive would not rebuild is refused, with its reason, and nothing is written', async () => {
  fs.writeFileSync(path.join(worktree, 'draft.md'), 'unsaved\n');
  const captured = await captureSourceEvidence(worktree, 'main', artifacts);
  expect(captured.outcome).toBe('refused');
  expect(captured.archive).toBeUndefined();
  expect(captured.reason).toContain('draft.md');
  expect(fs.existsSync(path.join(artifacts, 'source-evidence'))).toBe(false);
});

test('a FIFO or a directory git does not track is refused, named, and nothing is written', async () => {
  const cases: [string, () => void][] = [
    ['pipe', () => expect(spawnSync('mkfifo', [path.join(worktree, 'pipe')]).status).toBe(0)],
    ['later/', () => fs.mkdirSync(path.join(worktree, 'later'))],
  ];
  for (const [named, make] of cases) {
    make();
    const captured = await captureSourceEvidence(worktree, 'main', artifacts);
    expect([named, captured.outcome]).toEqual([named, 'refused']);
    expect(captured.reason).toContain(named);
    expect(fs.existsSync(path.join(artifacts, 'source-evidence'))).toBe(false);
    fs.rmSync(path.join(worktree, named), { recursive: true });
  }
});

test('a corrupt archive rejects with EBADMSG naming the check; an aborted call with ABORT_ERR', async () => {
  const { archive } = await captureSourceEvidence(worktree, 'main', artifacts);
  const file = path.join(archive!.dir, 'source.index');
  fs.chmodSync(file, 0o600);
  const bytes = fs.readFileSync(file);
  bytes[bytes.length >> 1] ^= 1;
  fs.writeFileSync(file, bytes);
  for (const read of [validateSourceEvidence, sourceEvidencePatch]) {
    const error = await rejection(read(archive!.dir));
    expect(error.code).toBe('EBADMSG');
    expect(error.message).toContain('check `checksums` failed: source.index');
  }
  const dest = path.join(root, 'never');
  expect((await rejection(restoreSourceEvidence(archive!.dir, dest))).code).toBe('EBADMSG');
  expect(fs.existsSync(dest)).toBe(false);
  const aborted = await rejection(validateSourceEvidence(archive!.dir, { signal: AbortSignal.abort() }));
  expect(aborted.code).toBe('ABORT_ERR');
});

test('the CLI prints the same archive and patch the addon reads', async () => {
  const { archive } = await captureSourceEvidence(worktree, 'main', artifacts);
  const described = natives(['source-evidence', archive!.dir, '--json'], root);
  expect(described.code).toBe(0);
  expect(JSON.parse(described.out)).toEqual(JSON.parse(JSON.stringify(archive)));
  const printed = spawnSync(path.join(import.meta.dir, '..', 'target', 'natives'), ['source-evidence', archive!.dir]);
  expect(printed.status).toBe(0);
  expect(Buffer.compare(printed.stdout, await sourceEvidencePatch(archive!.dir))).toBe(0);
  const captured = natives(['source-evidence', 'capture', '--worktree', worktree, '--base', 'main', '--out', artifacts, '--json'], root);
  expect(captured.code).toBe(0);
  expect(JSON.parse(captured.out)).toEqual({ outcome: 'existing', archive: JSON.parse(JSON.stringify(archive)) });
});
