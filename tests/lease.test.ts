/**
 * Build-cache leases through the real addon: who holds a cache, waiting within a budget, takeover of
 * a SIGKILLed holder's lease, unreadable records left alone, and the pure helpers.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  acquireBuildCache,
  acquireCleanupLease,
  buildCacheInventory,
  cargoTargetEnv,
  extractManifestPaths,
  holdReleasable,
  inspectBuildCache,
  maintenancePrune,
  parseResourceHold,
  parseWorkspacePackageNames,
  pidAlive,
  releaseBuildCache,
  resourceHold,
} from '../packages/natives/src/index.ts';
import { natives } from './support/cli.ts';
import { rejection } from './support/errors.ts';
import { FIXTURES, runJson } from './support/child.ts';
import { cargoTest, hostTriple, probeArtifacts, twoWorktrees } from './support/stale-build.ts';

const OWNER = { run: 'run-1', node: 'node-a', seat: 'builder' };
/** The native wait polls this often. */
const POLL_MS = 50;

let root: string;
let home: string;
let cache: string;

beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'natives-lease-')));
  home = path.join(root, 'home');
  cache = path.join(root, 'target');
  fs.mkdirSync(cache);
});

afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

/** Whether process `pid` runs (a zombie waiting to be reaped does not). */
function running(pid: number): boolean {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(') ') + 2, stat.lastIndexOf(') ') + 3);
  return state !== 'Z' && state !== 'X';
}

/** Lay `dir` out as cargo lays out a target directory: its cache tag and a `debug` profile. */
function markAsCargoTarget(dir: string): void {
  fs.mkdirSync(path.join(dir, 'debug', '.fingerprint'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'CACHEDIR.TAG'), 'Signature: 8a477f597d28d172789f06886806bc55\n# created by cargo\n');
}

/** Every entry under `dir` with its size, sorted: what a refused prune must leave as it was. */
function listing(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .map((entry) => `${entry} ${fs.lstatSync(path.join(dir, entry)).size}`)
    .sort();
}

/** A real process holding the lease; resolves once it holds it. */
async function spawnHolder(): Promise<Bun.Subprocess<'ignore', 'pipe', 'inherit'>> {
  const child = Bun.spawn([process.execPath, path.join(FIXTURES, 'lease-holder.ts'), home, cache], { stdout: 'pipe', stderr: 'inherit' });
  const reader = child.stdout.getReader();
  const { value } = await reader.read();
  reader.releaseLock();
  expect(new TextDecoder().decode(value)).toStartWith('held');
  return child;
}

describe('acquireBuildCache', () => {
  test('a held lease is active, busy for others, and free after await using', async () => {
    {
      await using lease = await acquireBuildCache(cache, OWNER, { home });
      expect(lease.record.dir).toBe(cache);
      expect(lease.record.owner).toMatchObject({ ...OWNER, pid: process.pid });
      expect(lease.reclaimed).toBeNull();
      const status = inspectBuildCache(cache, { home });
      expect(status).toMatchObject({ status: 'active', inUse: true });
      expect(status.record?.owner.nonce).toBe(lease.record.owner.nonce);
      const busy = await rejection(acquireBuildCache(cache, { ...OWNER, seat: 'late' }, { home }));
      expect(busy.code).toBe('EBUSY');
      expect(busy.message).toContain('run-1/node-a/builder');
    }
    expect(inspectBuildCache(cache, { home })).toEqual({ status: 'free', inUse: false });
  });

  test('a wait is bounded by the budget and names the holder', async () => {
    await using _held = await acquireBuildCache(cache, OWNER, { home });
    const started = performance.now();
    const error = await rejection(acquireBuildCache(cache, { ...OWNER, seat: 'waiter' }, { home, budgetMs: 300 }));
    const took = performance.now() - started;
    expect(error.code).toBe('ETIMEDOUT');
    expect(error.message).toContain('run-1/node-a/builder');
    expect(took).toBeGreaterThanOrEqual(295);
    expect(took).toBeLessThan(300 + POLL_MS + 100);
  });

  test('abort: a pre-aborted signal rejects at once, an abort mid-wait within a poll', async () => {
    expect((await rejection(acquireBuildCache(cache, OWNER, { home, signal: AbortSignal.abort() }))).code).toBe('ABORT_ERR');
    await using _held = await acquireBuildCache(cache, OWNER, { home });
    const controller = new AbortController();
    const waiting = rejection(acquireBuildCache(cache, { ...OWNER, seat: 'waiter' }, { home, budgetMs: 60_000, signal: controller.signal }));
    await Bun.sleep(120);
    const abortedAt = performance.now();
    controller.abort();
    const error = await waiting;
    expect(error.code).toBe('ABORT_ERR');
    expect(performance.now() - abortedAt).toBeLessThan(POLL_MS + 100);
  });

  test("a SIGKILLed holder's lease is taken over by a waiter", async () => {
    const holder = await spawnHolder();
    const busy = await rejection(acquireBuildCache(cache, OWNER, { home }));
    expect(busy.code).toBe('EBUSY');
    expect(busy.message).toContain('run-7/build/holder');
    const waiting = acquireBuildCache(cache, OWNER, { home, budgetMs: 10_000 });
    await Bun.sleep(100);
    holder.kill('SIGKILL');
    await holder.exited;
    const killedAt = performance.now();
    await using lease = await waiting;
    expect(performance.now() - killedAt).toBeLessThan(POLL_MS + 100);
    expect(lease.reclaimed?.owner.pid).toBe(holder.pid);
  });

  test('an unreadable record is unknown: never reclaimed, bytes untouched, released aside by hand', async () => {
    await (await acquireBuildCache(cache, OWNER, { home })).release();
    // Records are named by the SHA-256 of the cache's canonical path.
    const slug = createHash('sha256').update(cache).digest('hex');
    const recordPath = path.join(home, 'cache-leases', `${slug}.json`);
    fs.writeFileSync(recordPath, '{"version":1,"dir":');
    expect(inspectBuildCache(cache, { home })).toMatchObject({ status: 'unknown', inUse: true });
    const error = await rejection(acquireBuildCache(cache, OWNER, { home, budgetMs: 100 }));
    expect(error.code).toBe('ETIMEDOUT');
    expect(error.message).toContain('unknown state');
    expect(fs.readFileSync(recordPath, 'utf8')).toBe('{"version":1,"dir":');
    const released = releaseBuildCache(cache, { home });
    expect(released.released).toBe('moved-aside');
    expect(fs.readFileSync(released.movedTo ?? '', 'utf8')).toBe('{"version":1,"dir":');
    expect(inspectBuildCache(cache, { home }).status).toBe('free');
  });

  test('cleanup holds outputs: no admission, no prune, until it lets go', async () => {
    await (await acquireBuildCache(cache, OWNER, { home })).release();
    markAsCargoTarget(cache);
    const cleanup = await acquireCleanupLease(cache, { ...OWNER, seat: 'cleanup' }, { home });
    const error = await rejection(acquireBuildCache(cache, OWNER, { home }));
    expect(error.code).toBe('EBUSY');
    expect(error.message).toContain('process cleanup');
    expect(await maintenancePrune(cache, 0, OWNER, { home })).toBeNull();
    await cleanup.release();
    expect(cleanup.held).toBe(false);
    fs.mkdirSync(path.join(cache, 'debug', 'deps'));
    fs.writeFileSync(path.join(cache, 'debug', 'deps', 'old.bin'), Buffer.alloc(4096));
    fs.writeFileSync(path.join(cache, 'notes.txt'), 'not build output');
    expect(await maintenancePrune(cache, 0, OWNER, { home })).toEqual({ bytesBefore: 4096, bytesAfter: 0, filesRemoved: 1, kept: [] });
    expect(fs.readFileSync(path.join(cache, 'notes.txt'), 'utf8')).toBe('not build output');
  });

  test('prune refuses what is not a build cache (EINVAL naming why) and deletes nothing', async () => {
    const documents = path.join(root, 'documents');
    fs.mkdirSync(path.join(documents, 'taxes'), { recursive: true });
    fs.writeFileSync(path.join(documents, 'letter.txt'), 'dear');
    fs.writeFileSync(path.join(documents, 'taxes', '2024.pdf'), Buffer.alloc(2048));
    markAsCargoTarget(home);
    for (const dir of [documents, home]) await (await acquireBuildCache(dir, OWNER, { home })).release();
    const cases: [string, string][] = [
      [documents, 'does not look like a cargo target directory'],
      [home, `contains the natives home ${home}`],
      [path.join(root, 'missing'), 'ENOENT'],
    ];
    for (const [dir, why] of cases) {
      const before = listing(root);
      const error = await rejection(maintenancePrune(dir, 0, OWNER, { home }));
      expect(error.code).toBe(why === 'ENOENT' ? 'ENOENT' : 'EINVAL');
      expect(error.message).toContain(dir);
      if (why !== 'ENOENT') expect(error.message).toContain(why);
      expect(listing(root)).toEqual(before);
    }
  });

  test('with an identity, the cache is refreshed once and then left alone', async () => {
    const worktree = path.join(root, 'worktree');
    fs.mkdirSync(worktree);
    const owner = { ...OWNER, worktree, head: 'a'.repeat(40) };
    const first = await acquireBuildCache(cache, owner, { home });
    expect(first.freshness?.refreshed).toBe(true);
    await first.release();
    await using second = await acquireBuildCache(cache, owner, { home });
    expect(second.freshness).toEqual({ refreshed: false, cleaned: [] });
    const entry = buildCacheInventory({ home }).find((e) => e.dir === cache);
    expect(entry).toMatchObject({ status: 'active', identity: { worktree, head: 'a'.repeat(40) }, outputsHeld: false });
    // `natives cache show --json` prints the library's one view of an entry: the addon's object, field for field.
    const shown = natives(['cache', 'show', '--json', '--home', home], root);
    expect(shown.code).toBe(0);
    const printed = shown.out.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(printed).toEqual(JSON.parse(JSON.stringify(buildCacheInventory({ home }))));
  });

  test('identity null takes the cache as it is; a relative worktree is recorded anchored', async () => {
    const worktree = path.join(root, 'worktree');
    fs.mkdirSync(worktree);
    const owner = { ...OWNER, worktree: path.relative(process.cwd(), worktree), head: 'b'.repeat(40) };
    const skipped = await acquireBuildCache(cache, owner, { home, identity: null });
    expect(skipped.freshness).toBeNull();
    expect(fs.realpathSync(skipped.record.owner.worktree ?? '')).toBe(fs.realpathSync(worktree));
    expect(path.isAbsolute(skipped.record.owner.worktree ?? '')).toBe(true);
    await skipped.release();
    expect(buildCacheInventory({ home }).find((e) => e.dir === cache)?.identity).toBeUndefined();
    await using owners = await acquireBuildCache(cache, owner, { home });
    expect(owners.freshness?.refreshed).toBe(true);
    expect(buildCacheInventory({ home }).find((e) => e.dir === cache)?.identity).toEqual({ worktree, head: 'b'.repeat(40) });
  });

  test("an abort during the refresh kills cargo and everything it started, at once", async () => {
    const worktree = path.join(root, 'worktree');
    const pids = path.join(root, 'pids');
    fs.mkdirSync(worktree);
    fs.mkdirSync(pids);
    fs.mkdirSync(path.join(cache, 'debug', '.fingerprint'), { recursive: true });
    const cargo = path.join(root, 'slow-cargo');
    fs.writeFileSync(
      cargo,
      [
        '#!/bin/sh',
        `echo $$ > '${pids}/cargo.tmp' && mv '${pids}/cargo.tmp' '${pids}/cargo'`,
        'sleep 600 &',
        `echo $! > '${pids}/child.tmp' && mv '${pids}/child.tmp' '${pids}/child'`,
        'wait',
      ].join('\n'),
      { mode: 0o755 },
    );
    const outcome = await runJson<{ code: string; message: string; afterAbortMs: number }>(
      'refresh-abort.ts',
      [home, cache, worktree, pids],
      { env: { CARGO: cargo } },
    );
    const started = ['cargo', 'child'].map((name) => Number(fs.readFileSync(path.join(pids, name), 'utf8')));
    const stillRunning = started.filter(running);
    for (const pid of stillRunning) process.kill(pid, 'SIGKILL');
    expect(outcome.code).toBe('ABORT_ERR');
    expect(outcome.message).toContain('metadata');
    expect(stillRunning).toEqual([]);
    expect(outcome.afterAbortMs).toBeLessThan(1_000);
    expect(inspectBuildCache(cache, { home }).status).toBe('free');
  }, 30_000);

  test("with another worktree's identity, a real cargo clean -p removes its stale output", async () => {
    const { a, b } = twoWorktrees(root);
    const buildFromA = await acquireBuildCache(cache, { ...OWNER, ...a }, { home });
    expect(buildFromA.freshness).toEqual({ refreshed: true, cleaned: [] }); // nothing built yet
    expect(cargoTest(a.worktree, cache)).toBe('worktree-a');
    await buildFromA.release();
    // Without a lease, B's build finds A's output fresh and runs it.
    expect(cargoTest(b.worktree, cache)).toBe('worktree-a');
    expect(probeArtifacts(cache).length).toBeGreaterThan(0);

    const lease = await acquireBuildCache(cache, { ...OWNER, ...b }, { home });
    expect(lease.freshness).toEqual({ refreshed: true, cleaned: ['probe'] });
    expect(probeArtifacts(cache)).toEqual([]);
    expect(cargoTest(b.worktree, cache)).toBe('worktree-b');
    await lease.release();
    await using again = await acquireBuildCache(cache, { ...OWNER, ...b }, { home });
    expect(again.freshness).toEqual({ refreshed: false, cleaned: [] });
  }, 120_000);

  test('built with --target <host>, builds alternate A, B, A, B from their own source', async () => {
    const { a, b } = twoWorktrees(root);
    const flags = ['--target', hostTriple()];
    expect(cargoTest(a.worktree, cache, flags)).toBe('worktree-a');
    // The control: without a refresh, B's build for the target finds A's output fresh and runs it.
    expect(cargoTest(b.worktree, cache, flags)).toBe('worktree-a');
    for (const [who, source] of [[b, 'worktree-b'], [a, 'worktree-a'], [b, 'worktree-b']] as const) {
      await using lease = await acquireBuildCache(cache, { ...OWNER, ...who }, { home });
      expect(cargoTest(who.worktree, cache, flags)).toBe(source);
      expect(lease.freshness).toEqual({ refreshed: true, cleaned: ['probe'] });
    }
  }, 240_000);

  test('a build directory given as buildDir is cleaned too', async () => {
    const { a, b } = twoWorktrees(root);
    const buildDir = path.join(root, 'build-dir');
    expect(cargoTest(a.worktree, cache, [], buildDir)).toBe('worktree-a');
    expect(cargoTest(b.worktree, cache, [], buildDir)).toBe('worktree-a'); // the control
    await using lease = await acquireBuildCache(cache, { ...OWNER, ...b }, { home, buildDir: path.relative(process.cwd(), buildDir) });
    expect(cargoTest(b.worktree, cache, [], buildDir)).toBe('worktree-b');
    expect(lease.freshness).toEqual({ refreshed: true, cleaned: ['probe'] });
  }, 120_000);

  test('cargo output in a layout the refresh does not recognise is ENOTSUP naming it; nothing recorded', async () => {
    const worktree = path.join(root, 'worktree');
    fs.mkdirSync(worktree);
    fs.mkdirSync(path.join(cache, 'bench', '.fingerprint'), { recursive: true });
    const owner = { ...OWNER, worktree, head: 'c'.repeat(40) };
    const refused = await rejection(acquireBuildCache(cache, owner, { home }));
    expect(refused.code).toBe('ENOTSUP');
    expect(refused.message).toStartWith(`${path.join(cache, 'bench')}: `);
    expect(inspectBuildCache(cache, { home }).status).toBe('free');
    expect(buildCacheInventory({ home }).find((e) => e.dir === cache)?.identity).toBeUndefined();
    const empty = await rejection(acquireBuildCache(cache, owner, { home, buildDir: '' }));
    expect(empty.code).toBe('EINVAL');
  });

  test('bad owners and budgets are EINVAL naming the input', async () => {
    const noSeat = await rejection(acquireBuildCache(cache, { run: 'r', node: 'n', seat: '' }, { home }));
    expect(noSeat.code).toBe('EINVAL');
    expect(noSeat.message).toContain('owner.seat');
    const budget = await rejection(acquireBuildCache(cache, OWNER, { home, budgetMs: -1 }));
    expect(budget.code).toBe('EINVAL');
    expect(budget.message).toContain('budgetMs');
    const empty = await rejection(acquireBuildCache('', OWNER, { home }));
    expect(empty.code).toBe('EINVAL');
    expect(empty.message).toContain('empty path');
  });
});

describe('inventory and operator release', () => {
  test('inventory lists holders and last owners; release refuses a live owner', async () => {
    const other = path.join(root, 'other-target');
    await (await acquireBuildCache(other, { ...OWNER, seat: "reviewer" }, { home })).release();
    await using _held = await acquireBuildCache(cache, OWNER, { home });
    const entries = buildCacheInventory({ home });
    expect(entries.map((e) => [e.dir, e.status, e.owner?.seat]).sort()).toEqual([
      [other, 'free', 'reviewer'],
      [cache, 'active', 'builder'],
    ].sort());
    expect(entries.find((e) => e.dir === other)?.releasedAtMs).toBeNumber();
    let refused: (Error & { code?: string }) | undefined;
    try {
      releaseBuildCache(cache, { home });
    } catch (error) {
      refused = error as Error & { code?: string };
    }
    expect(refused?.code).toBe('EBUSY');
    expect(refused?.message).toContain('run-1/node-a/builder');
    expect(releaseBuildCache(other, { home })).toEqual({ released: 'nothing' });
  });
});

describe('pure helpers', () => {
  test('manifest paths and workspace packages', () => {
    expect(extractManifestPaths(['cargo test --manifest-path a/Cargo.toml', "cargo build --manifest-path='b c/Cargo.toml' --manifest-path=a/Cargo.toml"])).toEqual([
      'a/Cargo.toml',
      'b c/Cargo.toml',
    ]);
    const metadata = JSON.stringify({
      packages: [
        { name: 'app', id: 'path+file:///w/app#0.1.0' },
        { name: 'serde', id: 'registry+https://github.com/rust-lang/crates.io-index#serde@1.0.0' },
      ],
      workspace_members: ['path+file:///w/app#0.1.0'],
    });
    expect(parseWorkspacePackageNames(metadata)).toEqual(['app']);
    expect(() => extractManifestPaths('cargo test' as unknown as string[])).toThrow('array of strings');
    let error: (Error & { code?: string }) | undefined;
    try {
      parseWorkspacePackageNames('not json');
    } catch (caught) {
      error = caught as Error & { code?: string };
    }
    expect(error?.code).toBe('EINVAL');
  });

  test('CARGO_TARGET_DIR only for a seat that may write the cache', () => {
    expect(cargoTargetEnv(cache, [])).toEqual({});
    expect(cargoTargetEnv(cache, [path.join(root, 'elsewhere')])).toEqual({});
    expect(cargoTargetEnv(cache, [root])).toEqual({ CARGO_TARGET_DIR: cache });
  });

  test('resource holds round-trip and are releasable once the lease is free', async () => {
    const hold = resourceHold(cache);
    expect(hold).toStartWith('resource:build-cache:');
    expect(parseResourceHold(hold)).toBe(cache);
    expect(parseResourceHold('resource:gpu:/x')).toBeNull();
    const lease = await acquireBuildCache(cache, OWNER, { home });
    expect(holdReleasable(hold, { home })).toBe(false);
    await lease.release();
    expect(holdReleasable(hold, { home })).toBe(true);
  });

  test('pidAlive: this process is, an exited child is not, a bad pid is EINVAL', async () => {
    expect(pidAlive(process.pid)).toBe(true);
    const child = Bun.spawn(['true']);
    await child.exited;
    expect(pidAlive(child.pid)).toBe(false);
    expect(() => pidAlive(-1)).toThrow('pid must be');
  });
});
