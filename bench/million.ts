/**
 * million.ts: a never-matching cached grep on a very large tree, where the
 * content index can only answer without a system call per file while the
 * whole tree is watched and indexed.
 *
 *   bun bench/million.ts <treeDir> [--rounds N] [--out file.json]
 *
 * The figures in the README come from `bun bench/gen-tree.ts <dir> --files
 * 1000000`. Two settings, each in a process of its own (natives reads its
 * policy once, from the environment it starts with), both watching
 * (`FS_SCAN_CACHE_WATCH=1`):
 *   raised     every directory may be watched (`FS_SCAN_CACHE_WATCH_MAX`
 *              at the kernel's `max_user_watches`), the index may hold
 *              every file (`FS_SCAN_CACHE_CONTENT_BYTES` 2 GiB), a long
 *              TTL and a scan budget of 4 GiB;
 *   defaults   natives' own budgets and TTL: the watches the user's
 *              processes leave free less a quarter of the kernel's limit,
 *              and a thirty-second of memory for the index.
 * A third setting, the defaults of a process reading the shared index of
 * another (`FS_SCAN_CACHE_SHARED=1`, as MCP servers run): a process
 * indexing the tree is started and filled first.
 * Per setting: the fill (the first search), the search that builds the
 * index (files are indexed the second time a cached grep reads them), then
 * the never-matching search timed N times (default 21): median and p90, with
 * the watch's fallbacks and the index's size. Target (issue): 50 ms.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median, quantile, takeOption } from './lib/harness.ts';

const BENCH = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name: string) => takeOption(args, name);
const ROUNDS = Number(option('--rounds') ?? 21);
const OUT = option('--out');
const role = args[0] === 'child' || args[0] === 'indexer' ? args.shift()! : 'main';
const TREE = resolve(args[0] ?? join(BENCH, '.data', 'tree'));
const NEVER = 'zqxjkvbw_never_9';
const TARGET_MS = 50;

interface Natives {
  grep(o: { pattern: string; path: string; literal?: boolean; cache?: boolean }): Promise<{ matches: unknown[]; source: string }>;
  fsScanCacheStats(): { entries: number; shared: { reading: number }; watch: { watches: number; budget: number; fallbacks: Record<string, number> }; content: { files: number; bytes: number } };
}

interface Measured {
  setting: string;
  fillMs: number;
  indexMs: number;
  medianMs: number;
  p90Ms: number;
  source: string;
  entries: number;
  watches: number;
  budget: number;
  fallbacks: Record<string, number>;
  indexedFiles: number;
  indexMiB: number;
  /** Roots this process read from another's shared index. */
  reading: number;
  /** Resident memory once the searches are done. */
  rssMiB: number;
}

const natives = async () =>
  (await import(pathToFileURL(join(BENCH, '..', 'packages', 'natives', 'src', 'index.ts')).href)) as Natives;

async function child(setting: string): Promise<void> {
  const n = await natives();
  const search = async () => {
    const t0 = performance.now();
    const r = await n.grep({ pattern: NEVER, path: TREE, literal: true, cache: true });
    if (r.matches.length !== 0) throw new Error(`${NEVER} matched ${r.matches.length} lines`);
    return [performance.now() - t0, r.source] as const;
  };
  const [fillMs] = await search();
  const [indexMs] = await search();
  const times: number[] = [];
  let source = '';
  for (let i = 0; i < ROUNDS; i++) {
    const [ms, from] = await search();
    times.push(ms);
    source = from;
  }
  times.sort((a, b) => a - b);
  const stats = n.fsScanCacheStats();
  const measured: Measured = {
    setting, fillMs, indexMs, medianMs: median(times), p90Ms: quantile(times, 0.9), source,
    entries: stats.entries, watches: stats.watch.watches, budget: stats.watch.budget, fallbacks: stats.watch.fallbacks,
    indexedFiles: stats.content.files, indexMiB: stats.content.bytes / 2 ** 20, reading: stats.shared.reading,
    rssMiB: process.memoryUsage().rss / 2 ** 20,
  };
  console.log(JSON.stringify(measured));
}

function run(setting: string, env: Record<string, string>): Measured {
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), 'child', TREE, '--rounds', String(ROUNDS), setting], {
    encoding: 'utf8', env: { ...process.env, FS_SCAN_CACHE_WATCH: '1', ...env },
    maxBuffer: 1 << 26,
  });
  const last = r.stdout.trim().split('\n').at(-1) ?? '';
  if (r.status !== 0 || !last.startsWith('{')) throw new Error(`${setting}: ${r.stderr}`);
  return JSON.parse(last) as Measured;
}

/** A process indexing TREE for the others (`FS_SCAN_CACHE_SHARED=1`): fills its scan, says so, holds it until stdin ends. */
async function indexer(): Promise<void> {
  const n = await natives();
  await n.grep({ pattern: NEVER, path: TREE, literal: true, cache: true });
  console.log('ready');
  for await (const _ of process.stdin);
}

/** The defaults of a process reading the shared index of another, which indexes TREE (as MCP servers do). */
async function runReader(): Promise<Measured> {
  const home = mkdtempSync(join(tmpdir(), 'natives-million-'));
  const shared = { FS_SCAN_CACHE_SHARED: '1', NATIVES_HOME: home };
  const held = spawn(process.execPath, [fileURLToPath(import.meta.url), 'indexer', TREE], {
    env: { ...process.env, ...shared }, stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => held.once('exit', resolve));
  try {
    await new Promise<void>((resolve, reject) => {
      held.stdout.on('data', (chunk: Buffer) => { if (chunk.toString().includes('ready')) resolve(); });
      held.once('exit', (code) => reject(new Error(`the indexer exited with ${code} before it was ready`)));
    });
    const measured = run('defaults, reading the shared index of another process', shared);
    if (measured.reading !== 1) throw new Error(`the reader read ${measured.reading} roots from the indexer, not 1`);
    return measured;
  } finally {
    held.stdin.end();
    await exited;
    rmSync(home, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const kernel = Number(readFileSync('/proc/sys/fs/inotify/max_user_watches', 'utf8'));
  const results = [
    run('raised', {
      FS_SCAN_CACHE_WATCH_MAX: String(kernel), FS_SCAN_CACHE_CONTENT_BYTES: String(2 * 2 ** 30),
      FS_SCAN_CACHE_TTL_MS: '7200000', FS_SCAN_CACHE_MAX_BYTES: String(4 * 2 ** 30),
    }),
    run('defaults', {}),
    await runReader(),
  ];
  console.log(`# never-matching cached grep: ${TREE}, ${ROUNDS} rounds, max_user_watches ${kernel}`);
  console.log('| setting | entries | watches | watch budget | fallbacks | files indexed | index MiB | resident MiB | fill ms | index build ms | median ms | p90 ms | list | target | result |');
  console.log('|---|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|---|---|---|');
  for (const m of results) {
    const fell = Object.entries(m.fallbacks).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';
    const verdict = m.medianMs <= TARGET_MS ? 'met' : 'missed';
    console.log(`| ${m.setting} | ${m.entries} | ${m.watches} | ${m.budget} | ${fell} | ${m.indexedFiles} | ${m.indexMiB.toFixed(1)} | ${m.rssMiB.toFixed(0)} | ${m.fillMs.toFixed(0)} | ` +
      `${m.indexMs.toFixed(0)} | ${m.medianMs.toFixed(2)} | ${m.p90Ms.toFixed(2)} | ${m.source} | <= ${TARGET_MS} ms | ${verdict} |`);
  }
  if (OUT) writeFileSync(OUT, JSON.stringify({ tree: TREE, rounds: ROUNDS, maxUserWatches: kernel, results }, null, 2) + '\n');
}

if (role === 'child') await child(args[1]!);
else if (role === 'indexer') await indexer();
else await main();
