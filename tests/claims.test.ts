/**
 * Memory-directory claims through the TS package on real directories and real `git worktree add`
 * fixtures: every rule, the CLI's memory layout, and the folder-name rule against an independent
 * JavaScript reference.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  buildRepos,
  checkAndClaim,
  claimsOf,
  claudeFolderName,
  claudeMemoryDir,
  dirId,
  hasLinkedWorktrees,
  heldExclusively,
  memoryProjectRoot,
  memoryRedirectsFor,
  pruneStaleClaims,
  referenceFolderName,
  releaseClaim,
  usedByAnother,
  type ClaimRequest,
  type KnownAgent,
} from './support/claims.ts';
import { removeDir, tempDir } from './support/fs.ts';

let root = '';
let cases = 0;
const at = (rel: string) => path.join(root, rel);
const soon = () => Date.now() + 5_000;

beforeAll(() => {
  root = tempDir('claims');
  buildRepos(root);
  fs.mkdirSync(at('config/projects'), { recursive: true });
  fs.symlinkSync(at('config'), at('config-link'));
  fs.writeFileSync(at('settings.json'), JSON.stringify({ autoMemoryDirectory: '/srv/team-memory' }));
});
afterAll(() => removeDir(root));

/** A request from a fresh store, for a fresh memory folder, shaped by `shape`. */
function request(cwd: string | null, shape: (r: ClaimRequest) => void = () => {}): ClaimRequest {
  cases += 1;
  const r: ClaimRequest = {
    agent: { uid: 'a', cwd, account: 'ana@example.com' },
    memoryDir: at(`config/projects/case-${cases}/memory`),
    others: [],
    origin: 'store-a',
    deadline: soon(),
    redirects: { settingsFiles: [], pathOverride: null },
    home: at(`homes/${cases}`),
  };
  shape(r);
  return r;
}

const other = (uid: string, cwd: string | null, memoryDir?: string): KnownAgent => ({ uid, cwd, memoryDir });

describe('check_and_claim, rule by rule', () => {
  const table: Array<[string, () => ClaimRequest, string | null]> = [
    ['no working directory', () => request(null), 'known-shared'],
    ['blank working directory', () => request('   '), 'known-shared'],
    ['$HOME', () => request(at('plain'), (r) => (r.userHome = at('plain'))), 'known-shared'],
    ['$HOME through a symlink', () => request(at('link-plain'), (r) => (r.userHome = at('plain'))), 'known-shared'],
    ['ancestor of another agent', () => request(at('plain'), (r) => (r.others = [other('b', at('link-plain/sub'))])), 'known-shared'],
    ['subdirectory of a repository', () => request(at('solo/src')), 'repository-wide'],
    ['linked worktree', () => request(at('wt')), 'repository-wide'],
    ['linked worktree through a symlink', () => request(at('link-wt')), 'repository-wide'],
    ['main checkout with linked worktrees', () => request(at('main')), 'repository-wide'],
    ['subdirectory of the main checkout, by a symlink', () => request(at('link-deep')), 'repository-wide'],
    ['worktree of a bare repository', () => request(at('bare-wt')), 'repository-wide'],
    ['bare repository with worktrees', () => request(at('bare.git')), 'repository-wide'],
    ['below a bogus .git file', () => request(at('bogus/sub')), 'repository-wide'],
    ['a bogus .git file keeps its own root', () => request(at('bogus')), null],
    ['a repository without worktrees', () => request(at('solo')), null],
    ['no repository', () => request(at('plain/sub')), null],
    ['redirected by settings', () => request(at('solo'), (r) => (r.redirects.settingsFiles = [at('missing.json'), at('settings.json')])), 'redirected'],
    ['redirected by the environment', () => request(at('solo'), (r) => (r.redirects.pathOverride = '/srv/cowork')), 'redirected'],
    [
      "vetoed: another agent's memory folder by another route",
      () => request(at('solo'), (r) => (r.others = [other('b', at('plain'), r.memoryDir.replace(at('config'), at('config-link')))])),
      'vetoed',
    ],
    ['vetoed: another agent in the same directory by a symlink', () => request(at('solo'), (r) => (r.others = [other('b', at('link-solo'))])), 'vetoed'],
    ['other agents elsewhere do not count', () => request(at('solo'), (r) => (r.others = [other('b', at('plain/sub'), at('config/projects/x/memory'))])), null],
  ];
  for (const [name, build, reason] of table) {
    test(name, async () => {
      const r = build();
      const verdict = await checkAndClaim(r);
      if (reason === null) expect(verdict).toEqual({ exclusive: true });
      else {
        expect(verdict.exclusive).toBe(false);
        if (!verdict.exclusive) {
          expect(verdict.reason).toBe(reason as typeof verdict.reason);
          expect(verdict.detail.length).toBeGreaterThan(0);
        }
      }
      // Every spawn records its claim, a shared one too.
      const folders = await claimsOf('a', { home: r.home });
      expect(folders.map((f) => f.dir)).toEqual([dirId(r.memoryDir)]);
    });
  }

  test('redirect sources are the documented user, local and policy settings and the environment', () => {
    const redirects = memoryRedirectsFor({ configDir: '/h/.claude', projectDir: '/p', env: { CLAUDE_COWORK_MEMORY_PATH_OVERRIDE: '/m' } });
    expect(redirects).toEqual({
      settingsFiles: ['/h/.claude/settings.json', '/p/.claude/settings.local.json', '/etc/claude-code/managed-settings.json'],
      pathOverride: '/m',
    });
    expect(memoryRedirectsFor({ configDir: '/h', projectDir: '/p', env: {} }).pathOverride).toBeNull();
  });
});

describe('claims across channels', () => {
  test('alone is exclusive; a second claim shares the folder for both until released', async () => {
    const a = request(at('plain/sub'));
    const b = { ...request(at('plain/sub')), memoryDir: a.memoryDir, home: a.home, origin: 'store-b' };
    b.agent = { ...b.agent, uid: 'b' };
    expect(await checkAndClaim(a)).toEqual({ exclusive: true });
    expect(await checkAndClaim(a)).toEqual({ exclusive: true });
    const shared = await checkAndClaim(b);
    expect(shared.exclusive === false && shared.reason).toBe('claimed');
    const target = { memoryDir: a.memoryDir, uid: 'a', home: a.home, deadline: soon() };
    const held = await heldExclusively(target);
    expect(held.exclusive === false && held.reason).toBe('claimed');
    expect(await usedByAnother({ ...target, others: [] })).toBe(true);
    const all = await claimsOf(undefined, { home: a.home });
    expect(all[0]?.claims.map((c) => [c.uid, c.origin])).toEqual([
      ['a', 'store-a'],
      ['b', 'store-b'],
    ]);

    expect(await releaseClaim({ ...target, uid: 'b' })).toBe(true);
    expect(await releaseClaim({ ...target, uid: 'b' })).toBe(false);
    expect(await heldExclusively(target)).toEqual({ exclusive: true });
    expect(await usedByAnother({ ...target, others: [] })).toBe(false);
    expect(await usedByAnother({ ...target, others: [other('c', null, a.memoryDir)] })).toBe(true);
  });

  test('stale claims are pruned only by the store that wrote them', async () => {
    const a = request(at('plain/sub'));
    const gone = { ...a, agent: { ...a.agent, uid: 'gone' } };
    const neighbour = { ...a, agent: { ...a.agent, uid: 'neighbour' }, origin: 'store-b' };
    await checkAndClaim(gone);
    await checkAndClaim(neighbour);
    expect(await pruneStaleClaims({ origin: 'store-b', storeAgents: ['neighbour'], deadline: soon(), home: a.home })).toBe(0);
    expect(await pruneStaleClaims({ origin: 'store-a', storeAgents: ['a'], deadline: soon(), home: a.home })).toBe(1);
    const folders = await claimsOf('neighbour', { home: a.home });
    expect(folders[0]?.claims.map((c) => c.uid)).toEqual(['neighbour']);
  });
});

describe("the CLI's memory layout", () => {
  test('memoryProjectRoot and hasLinkedWorktrees on real repositories', () => {
    const table: Array<[string, string, boolean]> = [
      ['plain/sub', 'plain/sub', false],
      ['solo/src', 'solo', false],
      ['main/src/deep', 'main', true],
      ['wt', 'main', true],
      ['link-wt', 'main', true],
      ['link-deep', 'main', true],
      ['bare-wt', 'bare.git', true],
      ['bogus/sub', 'bogus', false],
    ];
    for (const [cwd, expectedRoot, worktrees] of table) {
      const found = memoryProjectRoot(at(cwd));
      expect([cwd, found]).toEqual([cwd, at(expectedRoot)]);
      expect([cwd, hasLinkedWorktrees(found)]).toEqual([cwd, worktrees]);
    }
  });

  test('a passed deadline stops the git probe with ETIMEDOUT', () => {
    expect(() => memoryProjectRoot(at('wt'), { timeoutMs: 0 })).toThrow(expect.objectContaining({ code: 'ETIMEDOUT' }));
  });

  test('every route to a worktree names one memory folder, named by the main checkout', () => {
    const expected = path.join('/h/.claude/projects', referenceFolderName(at('main')), 'memory');
    for (const cwd of ['main', 'wt', 'link-wt', 'link-deep', 'wt/../main/src']) {
      expect([cwd, claudeMemoryDir('/h/.claude', at(cwd))]).toEqual([cwd, expected]);
    }
  });

  test('dirId resolves symlinks in the existing prefix and keeps the rest', () => {
    expect(dirId(at('link-wt/not/yet'))).toBe(at('wt/not/yet'));
    // Joined by hand: path.join would fold `link-deep/..` by name, which the kernel does not.
    expect(dirId(`${root}/link-deep/../deep/x`)).toBe(at('main/src/deep/x'));
    expect(dirId(`${root}/link-deep/../../src/./deep`)).toBe(at('main/src/deep'));
  });
});

describe('folder names match the CLI rule (reference computed here in JS string semantics)', () => {
  test('a table of paths: non-ASCII, astral, long and boundary lengths', () => {
    const table = [
      '/home/ana/proj',
      '/srv/ação 😀/x_y.z',
      'C:\\Users\\bo\\文档\\some project',
      '/tmp/e\u0301/combining',
      '',
      `/${'a'.repeat(199)}`,
      `/${'a'.repeat(200)}`,
      `/tmp/${'é'.repeat(250)}`,
      `/srv/${'😀'.repeat(120)}`,
      `/srv/repos/${'deep-folder-'.repeat(20)}10`,
    ];
    for (const name of table) expect([name, claudeFolderName(name)]).toEqual([name, referenceFolderName(name)]);
    expect(claudeFolderName('/a/😀')).toBe('-a---');
    expect(claudeFolderName(`/srv/${'😀'.repeat(120)}`)).toMatch(/^-srv-{196}-[0-9a-z]+$/);
  });

  test('random paths from a mixed alphabet agree with the reference', () => {
    const alphabet = ['a', 'Z', '0', '/', '-', '_', '.', ' ', 'é', 'ß', '文', '😀', '\u0301', '~'];
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 500; i++) {
      const length = Math.floor(random() * 320);
      const name = Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      expect(claudeFolderName(name)).toBe(referenceFolderName(name));
    }
  });

  test('symlinked routes name the folder of the canonical path', () => {
    const viaLink = claudeMemoryDir('/h', at('link-solo'));
    expect(viaLink).toBe(path.join('/h/projects', referenceFolderName(fs.realpathSync(at('solo'))), 'memory'));
  });
});
