/**
 * The ownership half under hostile input, through the real addon and the real CLI binary:
 * - a prune never deletes a git repository inside a registered target directory (a clone a build
 *   script made, with a commit pushed nowhere), nor what cargo does not make; it names what it kept;
 * - a FIFO or a symlink to `/dev/zero` where a record should be (lease record, catalog entry, claims
 *   record, `CACHEDIR.TAG`) and a project whose `.git` is a FIFO: every command and call answers at
 *   once with `EFTYPE` naming it, or within its deadline;
 * - the caller's home is always a known shared location for claims, and a prune refuses it;
 * - bad claim arguments are named with their code.
 *
 * Every CLI run and every addon call that could hang runs in a child process killed past a bound,
 * so a regression fails here rather than hanging the suite.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { acquireBuildCache, checkAndClaim, dirId, type ClaimRequest } from '../packages/natives/src/index.ts';
import { CLI } from './support/cli.ts';
import { childCommand } from './support/child.ts';
import { removeDir, tempDir } from './support/fs.ts';
import { git } from './support/claims.ts';

/** Far longer than any of these takes when it does not hang. */
const BOUND_MS = 20_000;
const OWNER = { run: 'run-1', node: 'node-a', seat: 'builder' };
const SIGNATURE = 'Signature: 8a477f597d28d172789f06886806bc55\n';

let root: string;
let home: string;
let cache: string;

beforeEach(async () => {
  root = tempDir('hostile-records');
  home = path.join(root, 'home');
  cache = path.join(root, 'target');
  markAsCargoTarget(cache);
  await (await acquireBuildCache(cache, OWNER, { home })).release();
});
afterEach(() => removeDir(root));

function markAsCargoTarget(dir: string): void {
  fs.mkdirSync(path.join(dir, 'debug', '.fingerprint'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'CACHEDIR.TAG'), SIGNATURE);
}

/** `natives ARGS`, killed past the bound: its exit code (null if killed) and output. */
function natives(args: readonly string[], env: Record<string, string> = {}): { code: number | null; out: string; err: string } {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run scripts/setup.sh`);
  const result = spawnSync(CLI, args, { encoding: 'utf8', timeout: BOUND_MS, killSignal: 'SIGKILL', env: { ...process.env, ...env } });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

type Answer = { ok?: unknown; error?: { code?: string; message?: string } };

/** One addon call in a child process (tests/fixtures/hostile-call.ts), killed past the bound. */
async function call(op: Record<string, unknown>, env: Record<string, string> = {}): Promise<Answer> {
  const { argv, cwd } = childCommand('hostile-call.ts', [JSON.stringify(op)]);
  const child = Bun.spawn(argv, { cwd, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' });
  const killer = setTimeout(() => child.kill('SIGKILL'), BOUND_MS);
  const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  clearTimeout(killer);
  if (child.signalCode === 'SIGKILL') throw new Error(`${JSON.stringify(op)}: still running after ${BOUND_MS} ms (it hangs)`);
  const last = out.trim().split('\n').at(-1) ?? '';
  if (last === '') throw new Error(`${JSON.stringify(op)}: no answer\n${err}`);
  return JSON.parse(last) as Answer;
}

/** The files of one cache's lease under `home`. */
function leaseFiles(dir: string): { record: string; catalog: string } {
  const slug = new Bun.CryptoHasher('sha256').update(dirId(dir)).digest('hex');
  const leases = path.join(home, 'cache-leases');
  return { record: path.join(leases, `${slug}.json`), catalog: path.join(leases, 'catalog', `${slug}.json`) };
}

const HOSTILE: [string, (at: string) => void][] = [
  ['a FIFO', (at) => spawnSync('mkfifo', [at])],
  ['a symlink to /dev/zero', (at) => fs.symlinkSync('/dev/zero', at)],
];

function replaceWith(at: string, put: (at: string) => void): void {
  fs.rmSync(at, { force: true });
  fs.mkdirSync(path.dirname(at), { recursive: true });
  put(at);
}

/** Every file under `dir` with its bytes (directories and links by kind), sorted. */
function snapshot(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .map((rel) => {
      const full = path.join(dir, rel);
      const stat = fs.lstatSync(full);
      return stat.isFile() ? `${rel} ${fs.readFileSync(full).toString('base64')}` : `${rel} ${stat.isDirectory() ? 'dir' : 'other'}`;
    })
    .sort();
}

describe('a prune inside a registered target directory', () => {
  test('keeps a git repository with an unpushed commit whole, and names it', async () => {
    const checkout = path.join(cache, 'debug/build/x-1/out/checkout');
    fs.mkdirSync(checkout, { recursive: true });
    git(checkout, 'init', '-q');
    fs.writeFileSync(path.join(checkout, 'work.txt'), 'work nobody pushed\n');
    git(checkout, 'add', '.');
    git(checkout, 'commit', '-qm', 'unpushed');
    fs.writeFileSync(path.join(cache, 'debug/NOTES.md'), 'my notes\n');
    fs.writeFileSync(path.join(cache, 'debug/build/x-1/out/generated.rs'), 'fn f() {}\n');
    const before = snapshot(checkout);

    const dry = natives(['cache', 'prune', cache, '--limit', '0', '--dry-run', '--home', home]);
    expect(dry.code).toBe(0);
    expect(dry.out).toContain(`would keep ${checkout} (repository)`);
    const pruned = natives(['cache', 'prune', cache, '--limit', '0', '-y', '--home', home]);
    expect([pruned.code, pruned.err]).toEqual([0, '']);
    expect(pruned.out).toContain(`kept ${checkout} (repository): a git repository, kept whole\n`);
    expect(pruned.out).toContain(`kept ${path.join(cache, 'debug/NOTES.md')} (unknown-purpose)`);
    expect(snapshot(checkout)).toEqual(before);
    expect(fs.readFileSync(path.join(cache, 'debug/NOTES.md'), 'utf8')).toBe('my notes\n');
    expect(fs.existsSync(path.join(cache, 'debug/build/x-1/out/generated.rs'))).toBe(false);

    fs.writeFileSync(path.join(cache, 'debug/build/x-1/out/generated.rs'), 'fn f() {}\n');
    const answer = await call({ op: 'prune', dir: cache, home });
    expect(answer.ok).toMatchObject({
      filesRemoved: 1,
      kept: [
        { path: path.join(cache, 'debug/NOTES.md'), reason: 'unknown-purpose' },
        { path: checkout, reason: 'repository' },
      ],
    });
    expect(snapshot(checkout)).toEqual(before);
  }, 60_000);
});

describe('a record that is not a regular file', () => {
  for (const [kind, put] of HOSTILE) {
    test(`${kind} as a lease record fails every reader at once (EFTYPE)`, async () => {
      const { record } = leaseFiles(cache);
      replaceWith(record, put);
      for (const args of [
        ['cache', 'show'],
        ['cache', 'release', cache],
        ['cache', 'prune', cache, '--limit', '0', '-y'],
      ]) {
        const { code, err } = natives([...args, '--home', home]);
        expect([args, code]).toEqual([args, 2]);
        expect(err).toContain('EFTYPE');
        expect(err).toContain(record);
      }
      for (const op of ['acquire', 'inspect', 'inventory', 'release', 'prune']) {
        const answer = await call({ op, dir: cache, home });
        expect([op, answer.error?.code]).toEqual([op, 'EFTYPE']);
        expect(answer.error?.message).toContain(record);
      }
    }, 120_000);

    test(`${kind} as a catalog entry is read as absent at once`, async () => {
      replaceWith(leaseFiles(cache).catalog, put);
      expect(natives(['cache', 'show', '--home', home]).code).toBe(0);
      const answer = await call({ op: 'inventory', home });
      expect(answer.ok).toMatchObject([{ status: 'free' }]);
    }, 60_000);

    test(`${kind} as CACHEDIR.TAG refuses the prune at once (EFTYPE)`, async () => {
      const tag = path.join(cache, 'CACHEDIR.TAG');
      replaceWith(tag, put);
      const { code, err } = natives(['cache', 'prune', cache, '--limit', '0', '-y', '--home', home]);
      expect(code).toBe(2);
      expect(err).toContain(`EFTYPE: ${tag}`);
      expect((await call({ op: 'prune', dir: cache, home })).error?.code).toBe('EFTYPE');
    }, 60_000);

    test(`${kind} as a claims record fails the claims commands and answers unproven in time`, async () => {
      const memoryDir = path.join(root, 'config/projects/p/memory');
      const request = claimRequest(memoryDir, path.join(root, 'work'));
      expect(await checkAndClaim({ ...request, deadline: Date.now() + 5_000 })).toEqual({ exclusive: true });
      const store = path.join(home, 'claims');
      const [name] = fs.readdirSync(store).filter((file) => file.endsWith('.json'));
      const record = path.join(store, name!);
      replaceWith(record, put);
      for (const args of [
        ['claims', 'list'],
        ['claims', 'release', 'agent-1', memoryDir, '-y'],
      ]) {
        const { code, err } = natives([...args, '--home', home]);
        expect([args, code]).toEqual([args, 2]);
        expect(err).toContain(record);
        expect(err).toContain('EFTYPE');
      }
      const answer = await call({ op: 'checkAndClaim', request, deadlineMs: 1_000 });
      expect(answer.ok).toMatchObject({ exclusive: false, reason: 'unproven' });
      expect((answer.ok as { detail: string }).detail).toStartWith(`EFTYPE: ${record}`);
    }, 120_000);
  }
});

function claimRequest(memoryDir: string, cwd: string): Omit<ClaimRequest, 'deadline'> {
  fs.mkdirSync(cwd, { recursive: true });
  return {
    agent: { uid: 'agent-1', cwd, account: 'ana@example.com' },
    memoryDir,
    others: [],
    origin: 'store-a',
    redirects: { settingsFiles: [], pathOverride: null },
    home,
  };
}

describe('a project whose .git is a FIFO', () => {
  test('the layout calls throw EFTYPE at once and checkAndClaim answers unproven within its deadline', async () => {
    const project = path.join(root, 'project');
    fs.mkdirSync(path.join(project, 'src'), { recursive: true });
    spawnSync('mkfifo', [path.join(project, '.git')]);
    const cwd = path.join(project, 'src');
    for (const op of [
      { op: 'memoryProjectRoot', cwd },
      { op: 'claudeMemoryDir', configDir: path.join(root, 'config'), cwd },
    ]) {
      const answer = await call(op);
      expect([op.op, answer.error?.code]).toEqual([op.op, 'EFTYPE']);
      expect(answer.error?.message).toContain(path.join(project, '.git'));
    }
    const request = claimRequest(path.join(root, 'config/projects/q/memory'), cwd);
    const answer = await call({ op: 'checkAndClaim', request, deadlineMs: 500 });
    expect(answer.ok).toMatchObject({ exclusive: false, reason: 'unproven' });
    expect((answer.ok as { detail: string }).detail).toContain('EFTYPE');
  }, 60_000);
});

describe("the user's home", () => {
  test('is a known shared location with no userHome given, or null (the caller home, $HOME)', async () => {
    const fakeHome = path.join(root, 'ana');
    const request = claimRequest(path.join(root, 'config/projects/h/memory'), fakeHome);
    for (const userHome of [undefined, null]) {
      const answer = await call({ op: 'checkAndClaim', request: { ...request, userHome }, deadlineMs: 5_000 }, { HOME: fakeHome });
      expect(answer.ok).toMatchObject({ exclusive: false, reason: 'known-shared' });
      expect((answer.ok as { detail: string }).detail).toContain(`${fakeHome} is $HOME`);
    }
  }, 60_000);

  test('and any folder holding it are refused by a prune even as registered cargo target directories', async () => {
    const above = path.join(root, 'users');
    const fakeHome = path.join(above, 'ana');
    for (const dir of [above, fakeHome]) {
      markAsCargoTarget(dir);
      fs.mkdirSync(path.join(dir, 'debug/deps'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'debug/deps/precious-1'), 'x');
      await (await acquireBuildCache(dir, OWNER, { home })).release();
    }
    const before = snapshot(above);
    for (const [dir, why] of [
      [fakeHome, `is the home directory ${fakeHome}`],
      [above, `contains the home directory ${fakeHome}`],
    ] as const) {
      const { code, err } = natives(['cache', 'prune', dir, '--limit', '0', '-y', '--home', home], { HOME: fakeHome });
      expect([dir, code]).toEqual([dir, 2]);
      expect(err).toContain(why);
    }
    expect(snapshot(above)).toEqual(before);
  }, 60_000);
});

describe('bad claim arguments', () => {
  test('are named with their code in the unproven detail, never a raw TypeError', async () => {
    const request = { ...claimRequest(path.join(root, 'config/projects/b/memory'), path.join(root, 'b')), deadline: Date.now() + 5_000 };
    const cases: [string, unknown, RegExp][] = [
      ['no redirects', { ...request, redirects: undefined }, /^EINVAL: checkAndClaim: redirects must be/],
      ['redirects without settingsFiles', { ...request, redirects: {} }, /^EINVAL: checkAndClaim: redirects must be/],
      ['no others', { ...request, others: undefined }, /^EINVAL: checkAndClaim: others must be/],
      ['no agent', { ...request, agent: null }, /^EINVAL: checkAndClaim: agent must be/],
      ['no request', undefined, /^EINVAL: checkAndClaim: the request must be/],
      ['a uid that is not a string', { ...request, agent: { ...request.agent, uid: 7 } }, /^EINVAL: checkAndClaim: invalid arguments/],
    ];
    for (const [what, bad, detail] of cases) {
      const verdict = await checkAndClaim(bad as ClaimRequest);
      expect([what, verdict.exclusive]).toEqual([what, false]);
      expect([what, (verdict as { detail: string }).detail]).toEqual([what, expect.stringMatching(detail)]);
    }
  });
});
