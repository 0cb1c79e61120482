/**
 * run.ts: natives side by side with fd, ripgrep and the JS glob libraries.
 *
 *   bun bench/run.ts                  (or: node --import tsx bench/run.ts)
 *
 * Sections
 *   a. cold scan: every file under the tree with no scan cache (cache: false),
 *      against `fd -t f`, `rg --files`, tinyglobby, fdir and fast-glob; natives
 *      also reads every entry's mtime, so `fd --changed-within` (which stats
 *      every file) is shown as the peer doing the same work.
 *      "Cold" means no natives cache; the OS page cache is warm for everyone.
 *   b. cached `**\/*.ts` glob end to end (JS call to JS array) against
 *      tinyglobby's globSync; targets: natives <= 3 ms, tinyglobby/natives >= 50x.
 *   c. every entry (files and dirs) returned to JS from the cache; target <= 20 ms.
 *   d. scan cache memory: fsScanCacheStats().bytesPerEntry; target <= 150.
 *
 * All contenders of a section run in the same process and rounds, in an order
 * that alternates every round, so each ratio compares times taken under the same
 * machine conditions. Medians with p10/p90 are printed, ratios are medians of
 * per-round ratios. Results also go to bench/.data/results-<runtime>.json.
 *
 * Environment: NATIVES_BENCH_DIR (scan this directory instead of generating the
 * default tree), BENCH_ROUNDS (default 15), BENCH_SECTIONS (e.g. "cold,cached").
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fg from 'fast-glob';
import { fdir } from 'fdir';
import { glob as tinyGlob, globSync as tinyGlobSync } from 'tinyglobby';
import { DEFAULT_TREE_DIR, ensureTree, MANIFEST_NAME } from './gen-tree.ts';
import { type Contender, type PairedResult, paired, pairedRatio, spawnCount, table } from './lib/harness.ts';

const runtime = typeof (globalThis as any).Bun !== 'undefined' ? 'bun' : 'node';
const runtimeVersion = runtime === 'bun' ? (globalThis as any).Bun.version : process.versions.node;

// The addon reads its cache policy from the environment once, at load, so the
// TTL must be long (no expiry mid-section) and set before it is imported. Node
// passes process.env writes on to native code; Bun does not, so under Bun the
// script starts itself again with the variable in its environment.
const TTL_MS = '600000';
if (process.env.FS_SCAN_CACHE_TTL_MS !== TTL_MS) {
  if (runtime === 'bun') {
    const env = { ...process.env, FS_SCAN_CACHE_TTL_MS: TTL_MS };
    process.exit(spawnSync(process.execPath, process.argv.slice(1), { stdio: 'inherit', env }).status ?? 1);
  }
  process.env.FS_SCAN_CACHE_TTL_MS = TTL_MS;
}

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const SECTIONS = new Set((process.env.BENCH_SECTIONS ?? 'cold,cached,all,bytes').split(','));

enum FileType { File = 1, Dir = 2, Symlink = 3, Other = 4 }
interface GlobResult { matches: { path: string }[]; totalMatches: number; limitReached: boolean }
interface NativesApi {
  glob(o: { pattern: string; path?: string; fileType?: FileType; hidden?: boolean; gitignore?: boolean; cache?: boolean }): Promise<GlobResult>;
  invalidateFsScanCache(path?: string): void;
  fsScanCacheStats(): { scans: number; entries: number; bytes: number; bytesPerEntry: number; walks?: number };
}

/** Warns when a section meant to be served from the cache walked the disk. */
async function expectNoWalks<T>(n: NativesApi, what: string, body: () => Promise<T>): Promise<T> {
  const before = n.fsScanCacheStats().walks;
  const out = await body();
  const after = n.fsScanCacheStats().walks;
  if (before !== undefined && after !== undefined && after > before) log(`  WARNING: ${after - before} cache misses (walks) during ${what}`);
  return out;
}

async function loadNatives(): Promise<NativesApi | string> {
  const entry = join(BENCH, '..', 'packages', 'natives', 'src', 'index.ts');
  if (!existsSync(entry)) return 'packages/natives/src/index.ts not found';
  try {
    return (await import(pathToFileURL(entry).href)) as NativesApi;
  } catch (e) {
    return `failed to load: ${(e as Error).message.split('\n')[0]}`;
  }
}

function tool(name: string): string {
  const local = join(BENCH, '.tools', 'bin', name);
  return existsSync(local) ? local : name; // falls back to PATH
}

function treeDir(): { dir: string; manifest?: any } {
  const given = process.env.NATIVES_BENCH_DIR;
  if (!given) return { dir: DEFAULT_TREE_DIR, manifest: ensureTree(DEFAULT_TREE_DIR) };
  const dir = resolve(given);
  const m = join(dir, MANIFEST_NAME);
  return { dir, manifest: existsSync(m) ? JSON.parse(readFileSync(m, 'utf8')) : undefined };
}

const log = (s = '') => console.log(s);
const progress = (label: string) => (r: number) => {
  if (process.stderr.isTTY) process.stderr.write(`\r  ${label}: round ${r}/${ROUNDS}${r === ROUNDS ? '\n' : ''}`);
};

interface Target { what: string; value: number; target: string; ok: boolean }
interface SectionOut { result: PairedResult; ratios: Record<string, number>; targets: Target[] }

async function section(title: string, contenders: Contender[], base: string | undefined, ratioLabel: string,
  ratios: Record<string, [string, string]>, targets: (r: PairedResult, ratio: Record<string, number>) => Target[]): Promise<SectionOut> {
  log(`\n## ${title}`);
  const result = await paired(contenders, ROUNDS, progress(title.split(' ')[0]!));
  log(table(result, base, ratioLabel));
  const rv = Object.fromEntries(Object.entries(ratios).map(([k, [a, b]]) => [k, pairedRatio(result, a, b)]));
  for (const [k, v] of Object.entries(rv)) if (!Number.isNaN(v)) log(`  ${k}: ${v.toFixed(2)}x`);
  const t = targets(result, rv).filter((x) => !Number.isNaN(x.value));
  for (const x of t) log(`  target ${x.what}: ${x.value.toFixed(2)} (want ${x.target}) ${x.ok ? 'OK' : 'MISSED'}`);
  return { result, ratios: rv, targets: t };
}

async function main(): Promise<void> {
  const { dir, manifest } = treeDir();
  const natives = await loadNatives();
  const n = typeof natives === 'string' ? undefined : natives;
  const fd = tool('fd'), rg = tool('rg');
  log(`# natives bench: ${runtime} ${runtimeVersion}, ${os.cpus().length} cpus, ${ROUNDS} rounds`);
  log(`tree: ${dir}` + (manifest ? ` (${manifest.expected.visibleFiles} visible files, ${manifest.files} in all)` : ''));
  log(`fd: ${fd}  rg: ${rg}  natives: ${n ? 'loaded' : natives}`);
  const out: Record<string, unknown> = {};
  const median = (r: PairedResult, name: string) => r.summaries[name]?.medianMs ?? NaN;

  if (SECTIONS.has('cold')) {
    const c: Contender[] = [];
    if (n) c.push({ name: 'natives', run: async () => (await n.glob({ pattern: '**/*', path: dir, fileType: FileType.File, cache: false, hidden: false, gitignore: true })).matches.length });
    c.push(
      { name: 'fd', note: 'spawn', run: () => spawnCount(fd, ['-t', 'f', '.', dir]) },
      // The same work natives does: `--changed-within` makes fd stat every file for its mtime.
      { name: 'fd +mtime', note: 'spawn, stats files', run: () => spawnCount(fd, ['-t', 'f', '--changed-within', '1000weeks', '.', dir]) },
      { name: 'rg --files', note: 'spawn', run: () => spawnCount(rg, ['--files', dir]) },
      { name: 'tinyglobby', note: 'no gitignore', run: async () => (await tinyGlob('**/*', { cwd: dir, onlyFiles: true })).length },
      { name: 'fdir', note: 'no gitignore', run: async () => (await new fdir().withRelativePaths().exclude((d) => d.startsWith('.'))
        .filter((p) => !p.slice(p.lastIndexOf('/') + 1).startsWith('.')).crawl(dir).withPromise()).length },
      { name: 'fast-glob', note: 'no gitignore', run: async () => (await fg('**/*', { cwd: dir, onlyFiles: true })).length },
    );
    out.cold = await section('cold scan (**/*, files, cache: false)', c, 'fd', 'time/fd',
      { 'natives/fd': ['natives', 'fd'], 'natives/fd +mtime': ['natives', 'fd +mtime'] },
      (_r, q) => [{ what: 'natives/fd', value: q['natives/fd']!, target: '<= 1.0', ok: q['natives/fd']! <= 1 }]);
    const s = (out.cold as SectionOut).result.summaries;
    if (s.natives && s.natives.count !== s.fd!.count) log(`  WARNING: natives found ${s.natives.count} files, fd ${s.fd!.count}`);
  }

  if (SECTIONS.has('cached')) {
    const c: Contender[] = [];
    if (n) {
      n.invalidateFsScanCache(dir);
      await n.glob({ pattern: '**/*.ts', path: dir, cache: true }); // fills the cache
      c.push({ name: 'natives', note: 'cached', reps: 5, run: async () => (await n.glob({ pattern: '**/*.ts', path: dir, cache: true })).matches.length });
    }
    c.push(
      { name: 'tinyglobby', note: 'globSync', run: () => tinyGlobSync('**/*.ts', { cwd: dir }).length },
      { name: 'fd -e ts', note: 'spawn', run: () => spawnCount(fd, ['-t', 'f', '-e', 'ts', '.', dir]) },
    );
    const run = () => section('cached glob **/*.ts', c, n ? 'natives' : undefined, 'time/natives',
      { 'tinyglobby/natives': ['tinyglobby', 'natives'], 'fd/natives': ['fd -e ts', 'natives'] },
      (r, q) => [
        { what: 'natives median ms', value: median(r, 'natives'), target: '<= 3', ok: median(r, 'natives') <= 3 },
        { what: 'tinyglobby/natives', value: q['tinyglobby/natives']!, target: '>= 50', ok: q['tinyglobby/natives']! >= 50 },
      ]);
    out.cached = n ? await expectNoWalks(n, 'the cached section', run) : await run();
  }

  if (SECTIONS.has('all') && n) {
    await n.glob({ pattern: '**/*', path: dir, cache: true });
    out.all = await expectNoWalks(n, 'the every-entry section', () => section('every entry to JS (**/*, cached)', [
      { name: 'natives', note: 'cached', reps: 3, run: async () => (await n.glob({ pattern: '**/*', path: dir, cache: true })).matches.length },
      { name: 'fd', note: 'spawn, files+dirs', run: () => spawnCount(fd, ['.', dir]) },
    ], 'natives', 'time/natives', { 'fd/natives': ['fd', 'natives'] },
    (r) => [{ what: 'natives median ms', value: median(r, 'natives'), target: '<= 20', ok: median(r, 'natives') <= 20 }]));
  }

  if (SECTIONS.has('bytes') && n) {
    const stats = n.fsScanCacheStats();
    log(`\n## scan cache memory\n  ${JSON.stringify(stats)}`);
    log(`  target bytesPerEntry: ${stats.bytesPerEntry.toFixed(1)} (want <= 150) ${stats.bytesPerEntry <= 150 ? 'OK' : 'MISSED'}`);
    out.bytes = { stats, target: { what: 'bytesPerEntry', value: stats.bytesPerEntry, target: '<= 150', ok: stats.bytesPerEntry <= 150 } };
  }

  mkdirSync(join(BENCH, '.data'), { recursive: true });
  const file = join(BENCH, '.data', `results-${runtime}.json`);
  const report = {
    runtime, runtimeVersion, platform: `${os.platform()} ${os.arch()}`, cpus: os.cpus().length, rounds: ROUNDS, date: new Date().toISOString(),
    dir, expected: manifest?.expected, natives: n ? 'loaded' : natives, sections: out,
  };
  writeFileSync(file, JSON.stringify(report, (_k, v) => (Number.isNaN(v) ? null : v), 2) + '\n');
  log(`\nresults: ${file}`);
}

await main();
