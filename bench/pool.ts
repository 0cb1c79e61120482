/**
 * Build-cache strategies for N agents in N worktrees of one workspace, side by side:
 *
 *   lease         one shared target directory through today's lease (acquireBuildCache): safe, serial
 *   shared        plain cargo on one shared target directory: cargo's own lock, no refresh
 *   per-worktree  one target directory per worktree: no sharing at all
 *   pool          acquireFromPool with K = N members
 *
 * The workspace (bench/pool-workspace: two crates of its own over about 120 registry crates, pinned in
 * its Cargo.lock) is fetched once at set-up (`cargo fetch --locked`); every build after runs offline.
 * Each strategy starts from the same state: fresh worktrees, nothing built, then one warm-up build
 * (`cargo check` and `cargo test --no-run`) from agent 0, not timed. Then the N agents run at once,
 * each making a small change of its own (a new stamp, committed), `cargo check`, `cargo test --no-run`,
 * and running the test binary it just built, which prints the stamp it was built from: a binary that
 * prints another agent's stamp is a stale binary.
 *
 * Per strategy: total wall time, time waiting (a lease or pool acquisition, which includes its refresh
 * but not a pool seed's copy; and every span cargo spent "Blocking
 * waiting for file lock"), crates compiled, disk at the end (nothing is
 * removed during a run, but a released pool member shares blocks alike with the others, so the
 * filesystem's growth is also sampled every second for its peak; logical and allocated, the growth,
 * which is what counts where blocks are shared), stale binaries (0 for natives, or the row FAILED).
 *
 *   bun bench/pool.ts --setup               fetch the workspace's crates (network), then nothing else
 *   bun bench/pool.ts [--agents 4] [--root DIR] [--only pool,lease]
 *   bun bench/pool.ts --smoke               a tiny offline workspace, to check the harness itself
 *
 * `--root` puts the worktrees and every target directory on DIR's filesystem (say, a btrfs mount, where
 * pool seeds are reflinks). Results: bench/.data/pool-results-<filesystem>.{json,md}.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { acquireBuildCache, acquireFromPool, poolInventory, type SeedReport } from '../packages/natives/src/index.ts';

const BENCH = path.dirname(fileURLToPath(import.meta.url));
const WORKSPACE = path.join(BENCH, 'pool-workspace');
const STRATEGIES = ['lease', 'shared', 'per-worktree', 'pool'] as const;
type Strategy = (typeof STRATEGIES)[number];

interface Args {
  agents: number;
  root: string;
  only: Strategy[];
  smoke: boolean;
  setup: boolean;
}

function parseArgs(argv: string[]): Args {
  const value = (flag: string) => {
    const at = argv.indexOf(flag);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  const only = (value('--only')?.split(',') ?? [...STRATEGIES]) as Strategy[];
  for (const name of only) if (!STRATEGIES.includes(name)) throw new Error(`--only: unknown strategy ${name}`);
  return {
    agents: Number(value('--agents') ?? 4),
    root: path.resolve(value('--root') ?? path.join(BENCH, '.data', 'pool')),
    only,
    smoke: argv.includes('--smoke'),
    setup: argv.includes('--setup'),
  };
}

/** What one command printed, with each stderr line's time. */
interface Ran {
  status: number | null;
  stdout: string;
  stderr: { at: number; line: string }[];
}

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, CARGO_NET_OFFLINE: 'true', ...env } });
    const out: Ran = { status: null, stdout: '', stderr: [] };
    let partial = '';
    child.stdout.on('data', (chunk) => (out.stdout += chunk));
    child.stderr.on('data', (chunk) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) out.stderr.push({ at: performance.now(), line });
    });
    child.on('error', reject);
    child.on('close', (status) => resolve({ ...out, status }));
  });
}

function git(cwd: string, ...args: string[]): string {
  const identity = ['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', '-c', 'commit.gpgsign=false', '-c', 'init.defaultBranch=main'];
  const result = spawnSync('git', [...identity, ...args], { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout.trim();
}

/** The workspace to build: the pinned one, or (smoke) one crate over a path dependency, offline. */
function workspaceFiles(smoke: boolean): Map<string, string> {
  const files = new Map<string, string>();
  if (!smoke) {
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.name === 'target') continue;
        if (entry.isDirectory()) walk(full);
        else files.set(path.relative(WORKSPACE, full), fs.readFileSync(full, 'utf8'));
      }
    };
    walk(WORKSPACE);
    return files;
  }
  files.set('Cargo.toml', '[workspace]\nresolver = "3"\nmembers = ["crates/app", "crates/util"]\n');
  files.set('crates/util/Cargo.toml', '[package]\nname = "pool-bench-util"\nversion = "0.1.0"\nedition = "2024"\n');
  files.set('crates/util/src/lib.rs', 'pub fn digest(text: &str) -> String {\n    text.trim().to_owned()\n}\n');
  files.set(
    'crates/app/Cargo.toml',
    '[package]\nname = "pool-bench-app"\nversion = "0.1.0"\nedition = "2024"\n\n[dependencies]\npool-bench-util = { path = "../util" }\n',
  );
  files.set('crates/app/src/lib.rs', 'mod stamp;\n\npub fn stamp() -> &\'static str {\n    stamp::STAMP\n}\n');
  files.set('crates/app/src/stamp.rs', 'pub const STAMP: &str = "initial";\n');
  files.set('crates/app/tests/stamp.rs', '#[test]\nfn prints_its_stamp() {\n    println!("stamp={}", pool_bench_app::stamp());\n}\n');
  return files;
}

/** A fresh repository with one worktree per agent under `dir`. */
function makeWorktrees(dir: string, agents: number, smoke: boolean): string[] {
  fs.rmSync(dir, { recursive: true, force: true });
  const main = path.join(dir, 'repo');
  for (const [rel, text] of workspaceFiles(smoke)) {
    fs.mkdirSync(path.dirname(path.join(main, rel)), { recursive: true });
    fs.writeFileSync(path.join(main, rel), text);
  }
  fs.writeFileSync(path.join(main, '.gitignore'), 'target/\n');
  git(main, 'init', '-q');
  git(main, 'add', '.');
  git(main, 'commit', '-q', '-m', 'workspace');
  return Array.from({ length: agents }, (_, i) => {
    const worktree = path.join(dir, `agent-${i}`);
    git(main, 'worktree', 'add', '-q', '-b', `agent-${i}`, worktree);
    return worktree;
  });
}

/** What one agent saw. */
interface AgentResult {
  agent: number;
  wallMs: number;
  waitMs: number;
  compiled: number;
  stale: boolean;
  said: string;
  member?: string;
  seed?: string;
  /** Where the time went: the acquisition (a seed's copy inside it), cargo blocked on a lock. */
  phases: Phases;
}

/** One agent's time by phase, in ms. */
interface Phases {
  acquireMs: number;
  seedCopyMs: number;
  /** Files of the seed's source left out because its cargo was writing them. */
  seedLeftOut: number;
  blockedMs: number;
  /** `blockedMs` by what cargo waited for. */
  blockedOn: Record<string, number>;
  seedReason?: string;
  /** A pool member's release, which shares its blocks alike with the other members' first. */
  releaseMs?: number;
}

/**
 * Time cargo spent blocked on a lock, by what it waited for (`build directory`, `package cache`...):
 * each "Blocking waiting for file lock on X" line to the line after it. The package cache lives in
 * `CARGO_HOME`, shared with every cargo on the machine, not only the agents'.
 */
function blockedOn(ran: Ran, into: Record<string, number> = {}): Record<string, number> {
  ran.stderr.forEach((entry, i) => {
    const next = ran.stderr[i + 1];
    const what = /Blocking waiting for file lock on (.+)$/.exec(entry.line)?.[1]?.trim();
    if (what && next) into[what] = (into[what] ?? 0) + next.at - entry.at;
  });
  return into;
}

const sum = (times: Record<string, number>) => Object.values(times).reduce((total, ms) => total + ms, 0);

function compiled(ran: Ran): number {
  return ran.stderr.filter((e) => /^\s+(Compiling|Checking) /.test(e.line)).length;
}

/** `cargo check`, `cargo test --no-run` and the test binary, in `worktree` with `env`. */
async function build(
  worktree: string,
  env: Record<string, string>,
): Promise<{ waitMs: number; blocked: Record<string, number>; compiled: number; said: string }> {
  const check = await run('cargo', ['check', '--offline', '--workspace', '--all-targets'], worktree, env);
  if (check.status !== 0) throw new Error(`cargo check in ${worktree}: ${check.stderr.map((e) => e.line).join('\n')}`);
  const args = ['test', '--offline', '--workspace', '--no-run', '--message-format', 'json-render-diagnostics'];
  const test = await run('cargo', args, worktree, env);
  if (test.status !== 0) throw new Error(`cargo test --no-run in ${worktree}: ${test.stderr.map((e) => e.line).join('\n')}`);
  const executable = test.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { reason?: string; target?: { name?: string }; executable?: string | null })
    .find((m) => m.reason === 'compiler-artifact' && m.target?.name === 'stamp' && m.executable)?.executable;
  if (!executable) throw new Error(`no stamp test binary built in ${worktree}`);
  const ran = spawnSync(executable, ['--nocapture'], { encoding: 'utf8' });
  const said = /stamp=(\S+)/.exec(ran.stdout)?.[1] ?? `(nothing: ${ran.stderr.trim()})`;
  const blocked = blockedOn(test, blockedOn(check));
  return { waitMs: sum(blocked), blocked, compiled: compiled(check) + compiled(test), said };
}

/** A small change of the agent's own, committed: a new stamp. */
function change(worktree: string, agent: number): { stamp: string; head: string } {
  const stamp = `agent-${agent}-${Date.now().toString(36)}`;
  fs.writeFileSync(path.join(worktree, 'crates/app/src/stamp.rs'), `pub const STAMP: &str = "${stamp}";\n`);
  git(worktree, 'commit', '-q', '-am', stamp);
  return { stamp, head: git(worktree, 'rev-parse', 'HEAD') };
}

/** Where each strategy builds, and how an agent gets there. */
function targets(strategy: Strategy, dir: string, agents: number) {
  const shared = path.join(dir, 'target');
  const pool = path.join(dir, 'pool');
  const home = path.join(dir, 'home');
  const owner = (agent: number, worktree: string, head: string) => ({ run: 'bench', node: `agent-${agent}`, seat: 'build', worktree, head });
  const wait = { budgetMs: 3_600_000, home };
  return {
    dirs: strategy === 'pool' ? [pool] : strategy === 'per-worktree' ? [] : [shared],
    /** Build as agent `agent`: the lock wait outside cargo, and what the build saw. */
    async agentBuild(agent: number, worktree: string, head: string) {
      const started = performance.now();
      if (strategy === 'lease') {
        await using lease = await acquireBuildCache(shared, owner(agent, worktree, head), wait);
        const waited = performance.now() - started;
        const built = await build(worktree, { CARGO_TARGET_DIR: lease.record.dir });
        return { outsideWaitMs: waited, built, phases: phases(waited, null, built.blocked) };
      }
      if (strategy === 'pool') {
        const lease = await acquireFromPool(pool, owner(agent, worktree, head), { ...wait, size: agents });
        const acquireMs = performance.now() - started;
        const copying = lease.seed?.tookMs ?? 0;
        const built = await build(worktree, lease.env).catch(async (err) => {
          await lease.release();
          throw err;
        });
        const releasing = performance.now();
        await lease.release();
        const releaseMs = performance.now() - releasing;
        const seed = lease.seed?.strategy;
        const spent = { ...phases(acquireMs, lease.seed, built.blocked), releaseMs };
        return { outsideWaitMs: acquireMs - copying, built, member: lease.member, seed, phases: spent };
      }
      const target = strategy === 'shared' ? shared : path.join(worktree, 'target');
      const built = await build(worktree, { CARGO_TARGET_DIR: target });
      return { outsideWaitMs: 0, built, phases: phases(0, null, built.blocked) };
    },
  };
}

function phases(acquireMs: number, seed: SeedReport | null, blockedOn: Record<string, number>): Phases {
  const seedCopyMs = seed?.tookMs ?? 0;
  const seedLeftOut = seed?.leftOut ?? 0;
  return { acquireMs, seedCopyMs, seedLeftOut, blockedMs: sum(blockedOn), blockedOn, seedReason: seed?.reason };
}

/** `du` of `dirs`: bytes held and bytes allocated (shared blocks counted per file). */
function diskUse(dirs: string[]): { logical: number; allocated: number } {
  const present = dirs.filter((d) => fs.existsSync(d));
  if (present.length === 0) return { logical: 0, allocated: 0 };
  const du = (flag: string) => Number(spawnSync('du', ['-sc', flag, ...present], { encoding: 'utf8' }).stdout.trim().split('\n').at(-1)?.split('\t')[0]);
  return { logical: du('-b'), allocated: du('-B1') };
}

/** The pool's members on disk (extent maps, shared blocks once) against its first member alone. */
async function poolDisk(pool: string): Promise<{ physical: number; oneMember: number }> {
  const inventory = await poolInventory(pool);
  return { physical: inventory.physical, oneMember: inventory.members[0]?.usage.allocated ?? 0 };
}

/** Bytes in use on the filesystem holding `dir`. */
function fsUsed(dir: string): number {
  spawnSync('sync', ['-f', dir]);
  const out = spawnSync('df', ['-B1', '--output=used', dir], { encoding: 'utf8' }).stdout.trim().split('\n').at(-1);
  return Number(out);
}

async function runStrategy(strategy: Strategy, args: Args) {
  const dir = path.join(args.root, strategy);
  const worktrees = makeWorktrees(dir, args.agents, args.smoke);
  const where = targets(strategy, dir, args.agents);
  const usedBefore = fsUsed(args.root);
  const warmHead = git(worktrees[0] as string, 'rev-parse', 'HEAD');
  const warmStarted = performance.now();
  await where.agentBuild(0, worktrees[0] as string, warmHead);
  const warmMs = performance.now() - warmStarted;
  const started = performance.now();
  let fsPeak = 0;
  const sampler = setInterval(() => {
    fsPeak = Math.max(fsPeak, fsUsed(args.root) - usedBefore);
  }, 1000);
  const agents: AgentResult[] = await Promise.all(
    worktrees.map(async (worktree, agent) => {
      const { stamp, head } = change(worktree, agent);
      const t0 = performance.now();
      const { outsideWaitMs, built, member, seed, phases } = await where.agentBuild(agent, worktree, head);
      return {
        agent,
        wallMs: performance.now() - t0,
        waitMs: outsideWaitMs + built.waitMs,
        compiled: built.compiled,
        stale: built.said !== stamp,
        said: built.said,
        member,
        seed,
        phases,
      };
    }),
  );
  const wallMs = performance.now() - started;
  clearInterval(sampler);
  const fsGrowth = fsUsed(args.root) - usedBefore;
  const dirs = strategy === 'per-worktree' ? worktrees.map((w) => path.join(w, 'target')) : where.dirs;
  const disk = diskUse(dirs);
  return {
    strategy,
    warmMs,
    wallMs,
    waitMs: agents.reduce((sum, a) => sum + a.waitMs, 0),
    compiled: agents.reduce((sum, a) => sum + a.compiled, 0),
    stale: agents.filter((a) => a.stale).length,
    disk,
    fsGrowth,
    fsPeak: Math.max(fsPeak, fsGrowth),
    pool: strategy === 'pool' ? await poolDisk(where.dirs[0] as string) : null,
    agents,
  };
}

function blockedText(on: Record<string, number>): string {
  const parts = Object.entries(on).map(([what, ms]) => `${seconds(ms)} on ${what}`);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

/** The 1-minute load average while a strategy ran: lowest, mean and highest of its samples. */
function loadRange(samples: number[]): { min: number; mean: number; max: number } {
  const mean = samples.reduce((sum, x) => sum + x, 0) / samples.length;
  return { min: Math.min(...samples), mean, max: Math.max(...samples) };
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}`;

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.setup) {
    const fetched = spawnSync('cargo', ['fetch', '--locked'], { cwd: WORKSPACE, stdio: 'inherit' });
    process.exit(fetched.status ?? 1);
  }
  fs.mkdirSync(args.root, { recursive: true });
  const fsType = spawnSync('findmnt', ['-n', '-o', 'FSTYPE', '--target', args.root], { encoding: 'utf8' }).stdout.trim() || 'unknown';
  const results = [];
  for (const strategy of args.only) {
    const samples = [os.loadavg()[0]];
    const sampler = setInterval(() => samples.push(os.loadavg()[0]), 5000);
    const result = { ...(await runStrategy(strategy, args).finally(() => clearInterval(sampler))), load: loadRange(samples) };
    results.push(result);
    for (const a of result.agents) {
      const p = a.phases;
      console.log(
        `  agent ${a.agent}: wall ${seconds(a.wallMs)} s, acquire ${seconds(p.acquireMs)} s (seed copy ${seconds(p.seedCopyMs)} s, ` +
          `${p.seedLeftOut} files left out), cargo blocked ${seconds(p.blockedMs)} s${blockedText(p.blockedOn)}, ${a.compiled} compiled` +
          (p.releaseMs === undefined ? '' : `, release ${seconds(p.releaseMs)} s`) +
          (a.member ? `, ${a.member}` : '') +
          (p.seedReason ? ` (${a.seed}: ${p.seedReason})` : ''),
      );
    }
    console.log(
      `${strategy}: ${seconds(result.wallMs)} s for ${args.agents} agents (warm-up ${seconds(result.warmMs)} s), lock wait ` +
        `${seconds(result.waitMs)} s, ${result.compiled} crates compiled, ${mib(result.disk.logical)} logical / ` +
        `${mib(result.disk.allocated)} allocated (filesystem grew ${mib(result.fsGrowth)}, at most ${mib(result.fsPeak)}), stale binaries: ${result.stale}` +
        (result.pool
          ? `; pool on disk ${mib(result.pool.physical)}, ${(result.pool.physical / result.pool.oneMember).toFixed(2)}x its first member (${mib(result.pool.oneMember)})`
          : '') +
        (strategy === 'pool' ? `; members: ${result.agents.map((a) => `${a.member}${a.seed ? `(${a.seed})` : ''}`).join(' ')}` : ''),
    );
  }
  const rows = results.map(
    (r) =>
      `| ${r.strategy} | ${seconds(r.wallMs)} | ${seconds(r.waitMs)} | ${r.compiled} | ${mib(r.disk.logical)} | ${mib(r.disk.allocated)} | ${mib(r.fsGrowth)} | ${mib(r.fsPeak)} | ${r.stale} | ${r.load.mean.toFixed(1)} (${r.load.min.toFixed(1)}-${r.load.max.toFixed(1)}) |`,
  );
  const table = [
    `${args.agents} agents, ${args.smoke ? 'smoke workspace' : 'bench/pool-workspace'}, root ${args.root} (${fsType}), ${os.cpus().length} cpus`,
    '',
    '| strategy | wall (s) | waiting: acquire + cargo lock (s) | crates compiled | disk logical | disk allocated | fs growth | fs growth at peak | stale binaries | load average: mean (range) |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
  console.log(`\n${table}`);
  const out = path.join(BENCH, '.data');
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, `pool-results-${fsType}.json`), JSON.stringify(results, null, 2));
  fs.writeFileSync(path.join(out, `pool-results-${fsType}.md`), `${table}\n`);
  const failed = results.filter((r) => (r.strategy === 'pool' || r.strategy === 'lease') && r.stale > 0);
  for (const r of failed) console.log(`FAILED: ${r.strategy} ran ${r.stale} stale binaries`);
  process.exit(failed.length > 0 ? 1 : 0);
}

await main();
