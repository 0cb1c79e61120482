/**
 * `natives claims list|release`, the operator's front over the same store, run as a user would
 * (the release CLI that scripts/setup.sh links at target/natives).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkAndClaim, claimAsAnotherUser, claimsOf, type ClaimRequest } from './support/claims.ts';
import { removeDir, tempDir } from './support/fs.ts';

const CLI = path.join(import.meta.dir, '..', 'target', 'natives');
let root = '';
let home = '';
let memoryDir = '';

beforeAll(async () => {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run scripts/setup.sh`);
  root = tempDir('claims-cli');
  home = path.join(root, 'home');
  memoryDir = path.join(root, 'config/projects/x/memory');
  for (const [uid, origin] of [
    ['agent-1', 'store-a'],
    ['agent-2', 'store-b'],
  ] as const) {
    const request: ClaimRequest = {
      agent: { uid, cwd: path.join(root, uid), account: 'ana@example.com' },
      memoryDir,
      others: [],
      origin,
      deadline: Date.now() + 5_000,
      redirects: { settingsFiles: [], pathOverride: null },
      home,
    };
    await checkAndClaim(request);
  }
});
afterAll(() => removeDir(root));

async function natives(args: string[], stdin = ''): Promise<{ code: number; out: string; err: string }> {
  const child = Bun.spawn([CLI, ...args], {
    env: { ...process.env, NATIVES_HOME: home },
    stdin: new TextEncoder().encode(stdin),
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, out, err };
}

describe('natives claims', () => {
  test('list shows every claimed folder with each claim', async () => {
    const { code, out } = await natives(['claims', 'list']);
    expect(code).toBe(0);
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^${memoryDir} {2}\\(memory-dir:[0-9a-f]{32}\\)$`));
    expect(lines.slice(1).map((l) => l.trim().split(/\s+/).slice(0, 3))).toEqual([
      ['agent-1', 'origin=store-a', 'account=ana@example.com'],
      ['agent-2', 'origin=store-b', 'account=ana@example.com'],
    ]);
  });

  test('list --uid --json prints one object per folder; an unknown uid lists nothing and exits 1', async () => {
    const { code, out } = await natives(['claims', 'list', '--uid', 'agent-2', '--json']);
    expect(code).toBe(0);
    const folder = JSON.parse(out.trim());
    expect(folder).toMatchObject({ type: 'folder', dir: memoryDir });
    expect(folder.claims.map((c: { uid: string }) => c.uid)).toEqual(['agent-1', 'agent-2']);
    // The library's one view of a folder: the addon's object, field for field.
    const { type: _type, ...view } = folder;
    expect([view]).toEqual(JSON.parse(JSON.stringify(await claimsOf('agent-2', { home }))));
    expect(await natives(['claims', 'list', '--uid', 'nobody'])).toMatchObject({ code: 1, out: '' });
  });

  test('release asks first: anything but yes keeps the claim', async () => {
    for (const answer of ['', 'n\n', 'no\n']) {
      const { code, err } = await natives(['claims', 'release', 'agent-1', memoryDir], answer);
      expect([answer, code]).toEqual([answer, 1]);
      expect(err).toContain(`release agent-1's claim on ${memoryDir}? [y/N]`);
      expect(err).toContain('not released');
    }
    expect((await claimsOf('agent-1', { home })).length).toBe(1);
  });

  test('release with yes or --yes removes the claim once', async () => {
    expect(await natives(['claims', 'release', 'agent-1', memoryDir], 'y\n')).toMatchObject({
      code: 0,
      out: `released agent-1's claim on ${memoryDir}\n`,
    });
    const again = await natives(['claims', 'release', 'agent-1', memoryDir, '--yes']);
    expect(again.code).toBe(1);
    expect(again.err).toContain('agent-1 holds no claim');
    expect((await claimsOf('agent-1', { home })).length).toBe(0);
  });

  test('release by zone name, for a folder whose path no longer resolves', async () => {
    const [folder] = await claimsOf('agent-2', { home });
    const { code } = await natives(['claims', 'release', 'agent-2', folder!.zone, '--yes']);
    expect(code).toBe(0);
    expect(await claimsOf(undefined, { home })).toEqual([]);
  });

  test("another OS user's claim is refused (EPERM, exit 2) unless --any-user", async () => {
    const base = path.join(root, 'other-user');
    const otherHome = path.join(base, 'home');
    const theirs = path.join(base, 'config/projects/theirs/memory');
    const owner = await claimAsAnotherUser(base, { home: otherHome, memoryDir: theirs, uid: 'agent-9', origin: 'store-c', cwd: path.join(base, 'agent-9') });
    const release = ['claims', 'release', 'agent-9', theirs, '--yes', '--home', otherHome];
    const refused = await natives(release);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('EPERM');
    expect(refused.err).toContain(`OS user ${owner}`);
    expect((await claimsOf('agent-9', { home: otherHome })).length).toBe(1);
    expect(await natives([...release, '--any-user'])).toMatchObject({ code: 0, out: `released agent-9's claim on ${theirs}\n` });
    expect(await claimsOf('agent-9', { home: otherHome })).toEqual([]);
  }, 30_000);

  test('usage errors exit 2', async () => {
    expect((await natives(['claims'])).code).toBe(2);
    expect((await natives(['claims', 'bogus'])).code).toBe(2);
    expect((await natives(['claims', 'release', 'only-uid'])).code).toBe(2);
    expect((await natives(['claims', 'list', '--frobnicate'])).code).toBe(2);
  });
});
