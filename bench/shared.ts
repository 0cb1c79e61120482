/**
 * shared.ts: N agent processes on one tree, sharing one index per root
 * (`FS_SCAN_CACHE_SHARED=1`) against each keeping its own watched,
 * persisted cache (`FS_SCAN_CACHE_WATCH=1`, `FS_SCAN_CACHE_PERSIST=1`, one
 * natives home: what an MCP server did before sharing).
 *
 *   bun bench/shared.ts <treeDir> [--agents 8] [--rounds 3] [--queries 9] [--watch-max N] [--no-grep] [--out file.json]
 *
 * `--no-grep` leaves the grep out of the queries (each of the 2 x N
 * processes builds a content index of its own: on the million-file tree
 * 331 MiB each, built by reading every file twice).
 * `--watch-max` sets `FS_SCAN_CACHE_WATCH_MAX` for every agent of both modes
 * (a tree with more directories than the default budget falls back to the
 * TTL otherwise).
 *
 * Each round, alternating which mode goes first, with a fresh natives home:
 *   1. one agent starts and answers its first cached question (a glob of
 *      every entry, first 100: it needs the whole scan): cold, nothing on
 *      disk, it walks;
 *   2. the N - 1 others start at once and answer the same: shared, they
 *      read the live index; separate, each restores the first's record
 *      (or waits for it) and watches the tree itself;
 *   3. every agent times cached queries (a name prefix glob, a fuzzyFind
 *      of a name, a grep of a literal found nowhere; see
 *      lib/shared-child.ts), then reports its resident memory, the inotify
 *      watches it holds (from /proc) and its walks;
 *   4. all are killed, and one new agent answers its first question with
 *      the index on disk only (it restores the record).
 * Equal work: every agent of both modes must list the same paths (a hash of
 * the whole listing) and count the same matches for each query.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import * as readline from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { median, takeOption } from './lib/harness.ts';

const BENCH = dirname(fileURLToPath(import.meta.url));
const CHILD = join(BENCH, 'lib', 'shared-child.ts');
const args = process.argv.slice(2);
const AGENTS = Number(takeOption(args, '--agents') ?? 8);
const ROUNDS = Number(takeOption(args, '--rounds') ?? 3);
const QUERIES = Number(takeOption(args, '--queries') ?? 9);
const OUT = takeOption(args, '--out');
const WATCH_MAX = takeOption(args, '--watch-max');
const NO_GREP = args.includes('--no-grep');
if (NO_GREP) args.splice(args.indexOf('--no-grep'), 1);
const TREE = resolve(args[0] ?? join(BENCH, '.data', 'tree'));
/** Past a record's racy slack (2 s), so the record vouches for the tree. */
const QUIET_MS = 2_500;

type Mode = 'shared' | 'separate';
interface First { ms: number; count: number; hash: string; sample: string }
interface Queried { globMs: number; fuzzyMs: number; grepMs: number; counts: Record<string, number> }
interface State { rssMiB: number; watches: number; walks: number; shared: Record<string, number> }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class Agent {
  private readonly proc: ChildProcessByStdio<Writable, Readable, null>;
  private readonly lines: AsyncIterator<string>;

  constructor(mode: Mode, home: string) {
    const env = {
      ...process.env,
      NATIVES_HOME: home,
      FS_SCAN_CACHE_MAX_BYTES: String(4 * 2 ** 30),
      ...(WATCH_MAX === undefined ? {} : { FS_SCAN_CACHE_WATCH_MAX: WATCH_MAX }),
      ...(mode === 'shared' ? { FS_SCAN_CACHE_SHARED: '1' } : { FS_SCAN_CACHE_WATCH: '1', FS_SCAN_CACHE_PERSIST: '1' }),
    };
    this.proc = spawn(process.execPath, [CHILD, TREE, ...(NO_GREP ? ['--no-grep'] : [])], { env, stdio: ['pipe', 'pipe', 'inherit'] });
    this.lines = readline.createInterface({ input: this.proc.stdout })[Symbol.asyncIterator]();
  }

  async ask<T>(line: string): Promise<T> {
    this.proc.stdin.write(`${line}\n`);
    const answer = await this.lines.next();
    if (answer.done) throw new Error(`an agent exited before answering ${line}`);
    return JSON.parse(answer.value) as T;
  }

  kill(): void {
    this.proc.kill('SIGKILL');
  }
}

interface Round {
  mode: Mode;
  coldMs: number;
  liveMs: number[];
  diskMs: number;
  queried: Queried[];
  states: State[];
  firsts: First[];
}

async function round(mode: Mode): Promise<Round> {
  const home = mkdtempSync(join(tmpdir(), 'natives-shared-bench-'));
  const agents: Agent[] = [];
  try {
    await sleep(QUIET_MS);
    agents.push(new Agent(mode, home));
    const cold = await agents[0]!.ask<First>('first');
    for (let i = 1; i < AGENTS; i++) agents.push(new Agent(mode, home));
    const live = await Promise.all(agents.slice(1).map((agent) => agent.ask<First>('first')));
    const firsts = [cold, ...live];
    const queried: Queried[] = [];
    for (const agent of agents) queried.push(await agent.ask<Queried>(`query ${QUERIES} ${cold.sample}`));
    const states = await Promise.all(agents.map((agent) => agent.ask<State>('state')));
    agents.splice(0).forEach((agent) => agent.kill());
    await sleep(QUIET_MS);
    const late = new Agent(mode, home);
    agents.push(late);
    const disk = await late.ask<First>('first');
    firsts.push(disk);
    return { mode, coldMs: cold.ms, liveMs: live.map((f) => f.ms), diskMs: disk.ms, queried, states, firsts };
  } finally {
    agents.forEach((agent) => agent.kill());
    rmSync(home, { recursive: true, force: true });
  }
}

function checkEqualWork(rounds: Round[]): void {
  const hashes = new Set(rounds.flatMap((r) => r.firsts.map((f) => `${f.count} ${f.hash}`)));
  if (hashes.size !== 1) throw new Error(`agents listed different paths: ${[...hashes].join(', ')}`);
  const counts = new Set(rounds.flatMap((r) => r.queried.map((q) => JSON.stringify(q.counts))));
  if (counts.size !== 1) throw new Error(`agents counted different matches: ${[...counts].join(', ')}`);
}

const f = (x: number) => (Number.isNaN(x) ? '-' : x >= 100 ? x.toFixed(0) : x.toFixed(2));

async function main(): Promise<void> {
  console.log(`# shared-index bench: ${TREE}, ${AGENTS} agents, ${ROUNDS} rounds, ${QUERIES} queries each${WATCH_MAX ? `, watch budget ${WATCH_MAX}` : ''}`);
  const rounds: Round[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    for (const mode of (i % 2 === 0 ? ['shared', 'separate'] : ['separate', 'shared']) as Mode[]) {
      const r = await round(mode);
      rounds.push(r);
      const s = r.states;
      console.log(JSON.stringify({ mode, cold: r.coldMs, live: median(r.liveMs), disk: r.diskMs, walks: s.reduce((n, x) => n + x.walks, 0), watches: s.map((x) => x.watches) }));
    }
  }
  checkEqualWork(rounds);
  const of = (mode: Mode) => rounds.filter((r) => r.mode === mode);
  const med = (mode: Mode, pick: (r: Round) => number) => median(of(mode).map(pick));
  const readers = (r: Round) => r.states.slice(1);
  const rows: [string, (r: Round) => number][] = [
    ['first answer, cold (nothing on disk, the first process walks), ms', (r) => r.coldMs],
    [`first answer of ${AGENTS - 1} new processes while the first runs (median), ms`, (r) => median(r.liveMs)],
    ['first answer of a new process, index on disk only, ms', (r) => r.diskMs],
    ['cached glob of a name prefix, ms (median over processes)', (r) => median(r.queried.map((q) => q.globMs))],
    ['cached fuzzyFind of a name, ms', (r) => median(r.queried.map((q) => q.fuzzyMs))],
    ...(NO_GREP ? [] : [['cached grep of a literal found nowhere, ms', (r: Round) => median(r.queried.map((q) => q.grepMs))] as [string, (r: Round) => number]]),
    ['walks, all processes', (r) => r.states.reduce((n, s) => n + s.walks, 0)],
    ['inotify watches, all processes', (r) => r.states.reduce((n, s) => n + s.watches, 0)],
    ['resident MiB, the first process', (r) => r.states[0]!.rssMiB],
    ['resident MiB per other process (median)', (r) => median(readers(r).map((s) => s.rssMiB))],
    ['resident MiB, all processes', (r) => r.states.reduce((n, s) => n + s.rssMiB, 0)],
  ];
  const first = rounds[0]!.firsts[0]!;
  console.log(`\n${first.count} entries; queries on "${first.sample}"; counts ${JSON.stringify(rounds[0]!.queried[0]!.counts)}`);
  console.log('\n| row | shared | separate | shared / separate |');
  console.log('|---|--:|--:|--:|');
  const table = rows.map(([name, pick]) => {
    const [shared, separate] = [med('shared', pick), med('separate', pick)];
    console.log(`| ${name} | ${f(shared)} | ${f(separate)} | ${separate === 0 ? '-' : `${(shared / separate).toFixed(2)}x`} |`);
    return { name, shared, separate };
  });
  if (OUT) {
    mkdirSync(dirname(resolve(OUT)), { recursive: true });
    writeFileSync(OUT, JSON.stringify({ tree: TREE, agents: AGENTS, rounds, table }, null, 2));
  }
}

await main();
