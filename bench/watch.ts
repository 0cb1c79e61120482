/**
 * The watched scan cache (`FS_SCAN_CACHE_WATCH=1`) on the generated tree:
 * how soon another process's write is visible to a cached glob, what patching
 * a cached scan costs against walking it again (1, 100 and 10 000 changes),
 * what filling the cache costs with watches, and what watching costs at rest
 * (CPU while idle, memory per watched directory).
 *
 *   bun bench/watch.ts              (or: node --import tsx bench/watch.ts)
 *
 * Environment: BENCH_ROUNDS (default 9), NATIVES_BENCH_DIR (a tree other
 * than bench/.data/tree). Prints Markdown rows and writes
 * bench/.data/watch-<runtime>.json. Every paired row runs both contenders in
 * alternating order within one round and checks they list the same entries.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DEFAULT_TREE_DIR, ensureTree } from './gen-tree.ts';
import { median, quantile } from './lib/harness.ts';

const BENCH = dirname(fileURLToPath(import.meta.url));
const runtime = typeof (globalThis as any).Bun !== 'undefined' ? 'bun' : 'node';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const LATENCY_WRITES = 200;
const IDLE_MS = 10_000;
const TTL_MS = '7200000';

// The policy is read once per process, from the environment it starts with
// under Bun: start again with the variables set (see run.ts).
const mode = process.argv[2] ?? 'main';
const wantWatch = !mode.endsWith('plain');
const env = { FS_SCAN_CACHE_TTL_MS: TTL_MS, FS_SCAN_CACHE_WATCH: wantWatch ? '1' : '0' };
if (Object.entries(env).some(([k, v]) => process.env[k] !== v)) {
  const argv = runtime === 'bun' ? [process.execPath, ...process.argv.slice(1)] : [process.execPath, '--import', 'tsx', ...process.argv.slice(1)];
  const run = spawnSync(argv[0]!, argv.slice(1), { stdio: 'inherit', env: { ...process.env, ...env } });
  process.exit(run.status ?? 1);
}

interface GlobMatch { path: string }
interface Natives {
  glob(o: { pattern: string; path: string; hidden?: boolean; includeNodeModules?: boolean; cache?: boolean }): Promise<{ matches: GlobMatch[] }>;
  invalidateFsScanCache(path?: string): void;
  fsScanCacheStats(): { walks: number; entries: number; watch: { watchedRoots: number; watches: number; eventsApplied: number; rewalks: number; fallbacks: Record<string, number> } };
}
const n = (await import(pathToFileURL(join(BENCH, '..', 'packages', 'natives', 'src', 'index.ts')).href)) as Natives;
const tree = process.env.NATIVES_BENCH_DIR ?? (ensureTree(DEFAULT_TREE_DIR, { quiet: true }), DEFAULT_TREE_DIR);
const ALL = { pattern: '**/*', path: tree, hidden: true, includeNodeModules: true };
const listing = async (cache: boolean) => (await n.glob({ ...ALL, cache })).matches.map((m) => m.path);
const now = () => performance.timeOrigin + performance.now();
const ms = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(1));

async function timed<T>(work: () => Promise<T>): Promise<[number, T]> {
  const start = performance.now();
  const out = await work();
  return [performance.now() - start, out];
}

/** Resident memory after filling the cache (a child's answer in `rss-*` modes). */
async function rssAfterFill(): Promise<number> {
  await listing(true);
  (globalThis as any).Bun?.gc?.(true);
  (globalThis as any).gc?.();
  await new Promise((resolve) => setTimeout(resolve, 500));
  return process.memoryUsage().rss;
}

if (mode.startsWith('rss-')) {
  console.log(JSON.stringify({ rss: await rssAfterFill(), watches: n.fsScanCacheStats().watch.watches }));
  process.exit(0);
}

interface Row { what: string; natives: string; peer: string; nativesMs: number; peerMs: number; ratio: number; note: string }
const rows: Row[] = [];
const report = (row: Row) => {
  rows.push(row);
  console.log(`| ${row.what} | ${row.natives} | ${row.peer} | ${ms(row.nativesMs)} | ${Number.isNaN(row.peerMs) ? '-' : ms(row.peerMs)} | ${Number.isNaN(row.ratio) ? '-' : `${row.ratio.toFixed(2)}x`} | ${row.note} |`);
};

/** Run this script in `childMode` and parse the JSON line it prints last. */
function childJson<T>(childMode: string): T {
  const args = [...(runtime === 'node' ? ['--import', 'tsx'] : []), fileURLToPath(import.meta.url), childMode];
  const out = spawnSync(process.execPath, args, { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`${childMode}: ${out.stderr}`);
  return JSON.parse(out.stdout.trim().split('\n').at(-1)!) as T;
}

/** Filling the cache with watches against filling it with none (in a child). */
async function fill(): Promise<void> {
  const watched: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    n.invalidateFsScanCache(tree);
    watched.push((await timed(() => listing(true)))[0]);
  }
  const plainMs = childJson<{ medianMs: number }>('fill-plain').medianMs;
  const stats = n.fsScanCacheStats().watch;
  report({ what: `fill the cache (walk ${stats.watches} directories)`, natives: 'watching', peer: 'not watching (child process)', nativesMs: median(watched),
    peerMs: plainMs, ratio: median(watched) / plainMs, note: `${n.fsScanCacheStats().entries} entries` });
}

/** Another process writes a file; how long until a cached glob lists it. */
async function latency(): Promise<void> {
  const dir = join(tree, 'watch-latency');
  mkdirSync(dir, { recursive: true });
  await listing(true);
  const writerCode = `const fs=require('fs');const rl=require('readline').createInterface({input:process.stdin});
rl.on('line',(i)=>{fs.writeFileSync(${JSON.stringify(dir)}+'/f'+i,'x');console.log(performance.timeOrigin+performance.now());});`;
  const writer = spawn('node', ['-e', writerCode], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: writer.stdout! })[Symbol.asyncIterator]();
  const seen: number[] = [];
  let polls = 0;
  for (let i = 0; i < LATENCY_WRITES; i++) {
    writer.stdin!.write(`${i}\n`);
    const written = Number((await lines.next()).value);
    const name = `watch-latency/f${i}`;
    for (;;) {
      polls++;
      const found = (await n.glob({ pattern: 'watch-latency/*', path: tree, hidden: true, cache: true })).matches.some((m) => m.path === name);
      if (found) break;
    }
    seen.push(now() - written);
  }
  writer.stdin!.end();
  rmSync(dir, { recursive: true, force: true });
  const sorted = [...seen].sort((a, b) => a - b);
  report({ what: `external write -> cached glob lists it (${LATENCY_WRITES} writes)`, natives: 'median', peer: 'p99', nativesMs: quantile(sorted, 0.5),
    peerMs: quantile(sorted, 0.99), ratio: NaN, note: `target p99 <= 50 ms; ${polls} globs for ${LATENCY_WRITES} writes` });
}

/** Patching the cached scan after `count` changes against walking it again. */
async function patchVsRewalk(count: number): Promise<void> {
  const dir = join(tree, 'watch-patch');
  const patch: number[] = [];
  const rewalk: number[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    mkdirSync(dir, { recursive: true });
    await listing(true);
    for (let i = 0; i < count; i++) writeFileSync(join(dir, `f${r}-${i}`), '');
    const [patched, afterPatch] = await timed(() => listing(true));
    n.invalidateFsScanCache(tree);
    const [walked, afterWalk] = await timed(() => listing(true));
    if (afterPatch.join('\n') !== afterWalk.join('\n')) throw new Error(`patched and walked listings differ after ${count} changes`);
    patch.push(patched);
    rewalk.push(walked);
    ratios.push(patched / walked);
    rmSync(dir, { recursive: true, force: true });
  }
  report({ what: `${count} new files, then a cached glob of everything`, natives: 'patched', peer: 'walked again', nativesMs: median(patch),
    peerMs: median(rewalk), ratio: median(ratios), note: 'same entries checked' });
}

/** Process CPU over `IDLE_MS` of doing nothing, the cache filled. */
async function idleCpuMs(): Promise<number> {
  await listing(true);
  const before = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** CPU while watching the tree and doing nothing, against a process that does not watch. */
async function idle(): Promise<void> {
  const watchedMs = await idleCpuMs();
  const plainMs = childJson<{ cpuMs: number }>('idle-plain').cpuMs;
  report({ what: `idle ${IDLE_MS / 1000} s, the cache filled (${n.fsScanCacheStats().watch.watches} directories watched)`, natives: 'watching: process CPU ms',
    peer: 'not watching (child process)', nativesMs: watchedMs, peerMs: plainMs, ratio: NaN,
    note: `${((watchedMs / IDLE_MS) * 100).toFixed(2)} % of a core watching, ${((plainMs / IDLE_MS) * 100).toFixed(2)} % not` });
}

/** Resident memory of a process that filled the cache, watching against not. */
async function memory(): Promise<void> {
  const child = (m: string) => childJson<{ rss: number; watches: number }>(m);
  const watched: number[] = [];
  const plain: number[] = [];
  let watches = 0;
  for (let r = 0; r < 3; r++) {
    const w = child('rss-watch');
    watches = w.watches;
    watched.push(w.rss);
    plain.push(child('rss-plain').rss);
  }
  const extra = median(watched) - median(plain);
  report({ what: `resident memory after filling the cache (${watches} directories watched)`, natives: 'watching MiB', peer: 'not watching MiB',
    nativesMs: median(watched) / 2 ** 20, peerMs: median(plain) / 2 ** 20, ratio: NaN, note: `${Math.round(extra / Math.max(watches, 1))} B per watched directory in the process (the kernel's own inotify memory comes on top)` });
}

if (mode === 'idle-plain') {
  console.log(JSON.stringify({ cpuMs: await idleCpuMs() }));
  process.exit(0);
}

if (mode === 'fill-plain') {
  const times: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    n.invalidateFsScanCache(tree);
    times.push((await timed(() => listing(true)))[0]);
  }
  console.log(JSON.stringify({ medianMs: median(times) }));
  process.exit(0);
}

console.log(`watched scan cache, ${runtime} ${runtime === 'bun' ? (globalThis as any).Bun.version : process.versions.node}, ${ROUNDS} rounds, tree ${tree}\n`);
console.log('| row | natives | peer | natives ms | peer ms | natives/peer | note |\n|---|---|---|--:|--:|--:|---|');
await fill();
await latency();
for (const count of [1, 100, 10_000]) await patchVsRewalk(count);
await idle();
await memory();
const stats = n.fsScanCacheStats().watch;
console.log(`\nwatch stats: ${JSON.stringify(stats)}`);
const fellBack = Object.entries(stats.fallbacks).filter(([, count]) => count > 0);
mkdirSync(join(BENCH, '.data'), { recursive: true });
writeFileSync(join(BENCH, '.data', `watch-${runtime}.json`), JSON.stringify({ rows, stats }, null, 2));
if (fellBack.length > 0) {
  console.error(`watching fell back during the bench: ${JSON.stringify(fellBack)}`);
  process.exit(1);
}
