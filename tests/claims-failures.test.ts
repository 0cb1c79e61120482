/**
 * Every failure answers "shared" with a reason: a corrupt store record, a passed deadline, a store
 * on a read-only directory, and arguments no caller should send. No call throws or panics, and no
 * record is lost (corrupt bytes stay exactly as they were).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Claimer, checkAndClaim, claimAsAnotherUser, claimsOf, heldExclusively, releaseClaim, usedByAnother, type ClaimRequest } from './support/claims.ts';
import { removeDir, tempDir } from './support/fs.ts';
import { stageForUnprivileged } from './support/unprivileged.ts';

const NOBODY = 65534;
let root = '';
beforeAll(() => {
  root = tempDir('claim-failures');
});
afterAll(() => removeDir(root));

function request(name: string, uid = 'a'): ClaimRequest {
  return {
    agent: { uid, cwd: path.join(root, `work-${name}`), account: 'ana@example.com' },
    memoryDir: path.join(root, `config/projects/${name}/memory`),
    others: [],
    origin: 'store-a',
    deadline: Date.now() + 5_000,
    redirects: { settingsFiles: [], pathOverride: null },
    home: path.join(root, `home-${name}`),
  };
}

/** The one record file in `home`'s store. */
function recordFile(home: string): string {
  const records = fs.readdirSync(path.join(home, 'claims')).filter((f) => f.endsWith('.json'));
  expect(records).toHaveLength(1);
  return path.join(home, 'claims', records[0]!);
}

function expectUnproven(verdict: unknown, detail: RegExp): void {
  expect(verdict).toMatchObject({ exclusive: false, reason: 'unproven' });
  expect((verdict as { detail: string }).detail).toMatch(detail);
}

describe('a corrupt store record', () => {
  test('answers shared (unproven) to every call and is left byte for byte', async () => {
    const r = request('corrupt');
    expect(await checkAndClaim(r)).toEqual({ exclusive: true });
    const file = recordFile(r.home!);
    const corrupt = Buffer.from('{"zone": "memory-dir:", "claims": {"a": {"at_ms": 1, "orig');
    fs.writeFileSync(file, corrupt);
    const target = { memoryDir: r.memoryDir, uid: 'a', home: r.home, deadline: Date.now() + 5_000 };

    expectUnproven(await checkAndClaim(r), /corrupt claims record/);
    expectUnproven(await checkAndClaim({ ...r, agent: { ...r.agent, uid: 'b' } }), /corrupt claims record/);
    expectUnproven(await heldExclusively(target), /corrupt claims record/);
    expect(await usedByAnother({ ...target, others: [] })).toBe(true);
    await expect(releaseClaim(target)).rejects.toMatchObject({ code: 'EIO' });
    expect(await claimsOf('a', { home: r.home })).toEqual([]);
    expect(fs.readFileSync(file)).toEqual(corrupt);
  });
});

describe('a passed deadline', () => {
  test('answers shared (unproven) before touching the store', async () => {
    const r = { ...request('late'), deadline: Date.now() - 1 };
    expectUnproven(await checkAndClaim(r), /ETIMEDOUT/);
    expect(fs.existsSync(path.join(r.home!, 'claims'))).toBe(false);
    expectUnproven(await checkAndClaim({ ...r, deadline: new Date(0) }), /ETIMEDOUT/);
  });

  test('a claim made in time stands when a later re-check is late', async () => {
    const r = request('late-recheck');
    expect(await checkAndClaim(r)).toEqual({ exclusive: true });
    const late = { memoryDir: r.memoryDir, uid: 'a', home: r.home, deadline: Date.now() - 1 };
    expectUnproven(await heldExclusively(late), /ETIMEDOUT/);
    expect(await usedByAnother({ ...late, others: [] })).toBe(true);
    await expect(releaseClaim(late)).rejects.toMatchObject({ code: 'ETIMEDOUT' });
    expect((await claimsOf('a', { home: r.home })).map((f) => f.claims.map((c) => c.uid))).toEqual([['a']]);
  });
});

describe('arguments no caller should send', () => {
  test('answer shared (unproven), never throw', async () => {
    const r = request('bad');
    expectUnproven(await checkAndClaim({ ...r, origin: '' }), /origin/);
    expectUnproven(await checkAndClaim({ ...r, agent: { ...r.agent, uid: ' ' } }), /uid/);
    expectUnproven(await checkAndClaim({ ...r, deadline: Number.NaN }), /timeoutMs/);
    expectUnproven(await checkAndClaim({ ...r, others: [{ uid: 7 }] } as unknown as ClaimRequest), /./);
    expectUnproven(await checkAndClaim(null as unknown as ClaimRequest), /./);
    expectUnproven(await heldExclusively({ memoryDir: r.memoryDir, uid: '', deadline: Date.now() + 1_000, home: r.home }), /uid/);
  });
});

describe("another OS user's claim", () => {
  test('releaseClaim refuses it with EPERM naming that user, unless anyUser', async () => {
    const base = path.join(root, 'other-user');
    const home = path.join(base, 'home');
    const memoryDir = path.join(base, 'config/projects/theirs/memory');
    const owner = await claimAsAnotherUser(base, { home, memoryDir, uid: 'a', origin: 'store-a', cwd: path.join(base, 'a') });
    expect(owner).not.toBe(process.getuid?.());
    const target = { memoryDir, uid: 'a', home, deadline: Date.now() + 5_000 };
    const [before] = await claimsOf('a', { home });
    expect(before?.claims).toMatchObject([{ uid: 'a', user: owner }]);

    const refused = await releaseClaim(target).catch((error: Error & { code?: string }) => error);
    expect(refused).toMatchObject({ code: 'EPERM' });
    expect((refused as Error).message).toContain(`OS user ${owner}`);
    expect(await claimsOf('a', { home })).toEqual([before!]);

    expect(await releaseClaim({ ...target, anyUser: true })).toBe(true);
    expect(await claimsOf('a', { home })).toEqual([]);
  }, 30_000);
});

describe('a store on a read-only directory', () => {
  test('answers shared (unproven) and loses no record', async () => {
    const base = path.join(root, 'readonly');
    const home = path.join(base, 'home');
    const memoryDir = path.join(base, 'config/projects/ro/memory');
    fs.mkdirSync(home, { recursive: true });
    const asRoot = process.getuid?.() === 0;
    // Root ignores permission bits: run the claimers as `nobody`, who owns the fixture.
    if (asRoot) {
      fs.chmodSync(root, 0o755);
      execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, base]);
    }
    const nobody = asRoot ? { uid: NOBODY, stage: stageForUnprivileged() } : undefined;
    const claimer = (uid: string) => new Claimer({ home, memoryDir, uid, origin: 'store-a', cwd: path.join(base, uid) }, nobody);

    const first = claimer('a');
    try {
      await first.next();
      expect(await first.send('claim')).toMatchObject({ verdict: { exclusive: true } });
      const file = recordFile(home);
      const [folder] = await claimsOf('a', { home });
      expect(folder?.claims[0]?.user).toBe(asRoot ? NOBODY : process.getuid?.());
      const before = fs.readFileSync(file);
      fs.chmodSync(path.join(home, 'claims'), 0o500);

      const second = claimer('b');
      try {
        await second.next();
        const answer = await second.send<{ verdict: { exclusive: boolean; reason: string; detail: string } }>('claim');
        expectUnproven(answer.verdict, /EACCES|permission denied/i);
        expect(answer.verdict.detail).toContain(path.join(home, 'claims'));
        // The read-only calls still read the store: b holds nothing, and a's claim is another's.
        const held = await second.send<{ verdict: { exclusive: boolean; reason: string; detail: string } }>('held');
        expectUnproven(held.verdict, /b holds no claim/);
        expect(await second.send('used')).toEqual({ op: 'used', used: true });
        expect(await second.send('release')).toEqual({ op: 'release', released: false });
      } finally {
        expect(await second.exit()).toBe(0);
      }
      // The first claim is still there and still read: nothing was lost or torn.
      expect(fs.readFileSync(file)).toEqual(before);
      expect(await first.send('held')).toMatchObject({ verdict: { exclusive: true } });
      expect(await first.send('used')).toEqual({ op: 'used', used: false });
    } finally {
      if (fs.existsSync(path.join(home, 'claims'))) fs.chmodSync(path.join(home, 'claims'), 0o700);
      const exited = await first.exit();
      if (nobody) removeDir(nobody.stage);
      expect(exited).toBe(0);
    }
  }, 30_000);
});
