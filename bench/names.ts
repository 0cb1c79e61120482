/**
 * names.ts: cached glob and fuzzy find on a large tree, where the name index
 * answers what a pass over every path answered before.
 *
 *   bun bench/names.ts <treeDir> [--rounds N] [--out file.json] [--base other.node]
 *
 * The tree is any directory; the figures in the README come from
 * `bun bench/gen-tree.ts <dir> --files 1000000`. Rows, all from a warm cache
 * (hidden off, .gitignore on, node_modules out: the defaults):
 *   fill       the walk that fills the cache, then the first query by name
 *              (the index is built then, on first use), then the same query
 *              again;
 *   glob       `**\/<prefix>*.ts` (a prefix chosen from the tree so that it
 *              has about 100 files), an exact name and a suffix under a
 *              directory, each paired with the same pattern wrapped in braces
 *              (`**\/{<prefix>*.ts}`: the same matches, but no literal the
 *              index can read, so every path is checked): equal hit counts
 *              are checked;
 *   listing    every entry to JS (`**\/*`), which no index narrows;
 *   fuzzy      fuzzyFind top 100 over the queries bench/lib/queries.ts
 *              derives from the tree, the median of the per-query medians.
 * Memory: fsScanCacheStats() before and after the index.
 *
 * `--base other.node` loads a second build of the addon (one without the
 * index) into the same process, with its own cache of the same tree, and
 * pairs it with this build in the same rounds: the raw native glob of each
 * glob row, and every fuzzy query (the same totals are checked).
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type Contender, type ItemContender, median, paired, pairedItems, pairedRatio, table, takeOption } from './lib/harness.ts';
import { deriveQueries } from './lib/queries.ts';

// A long TTL and a budget that holds a million entries, set before the addon
// loads (Bun does not pass process.env writes on to native code: restart).
const ENV = { FS_SCAN_CACHE_TTL_MS: '7200000', FS_SCAN_CACHE_MAX_BYTES: String(4 * 2 ** 30) };
if (Object.entries(ENV).some(([k, v]) => process.env[k] !== v)) {
  const env = { ...process.env, ...ENV };
  process.exit(spawnSync(process.execPath, process.argv.slice(1), { stdio: 'inherit', env }).status ?? 1);
}

const BENCH = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name: string) => takeOption(args, name);
const ROUNDS = Number(option('--rounds') ?? 11);
const OUT = option('--out');
const BASE = option('--base');
const TREE = resolve(args[0] ?? join(BENCH, '.data', 'tree'));

enum FileType { File = 1, Dir = 2 }
interface Api {
  glob(o: { pattern: string; path: string; fileType?: FileType; cache?: boolean; mtime?: boolean; maxResults?: number }):
    Promise<{ matches: { path: string; fileType: number }[]; totalMatches: number }>;
  fuzzyFind(o: { query: string; path: string; maxResults?: number; cache?: boolean }): Promise<{ matches: unknown[]; totalMatches: number }>;
  fsScanCacheStats(): Record<string, unknown> & { entries: number; bytes: number; walks: number };
}

const n = (await import(pathToFileURL(join(BENCH, '..', 'packages', 'natives', 'src', 'index.ts')).href)) as Api;

/** The raw native calls both builds share. */
interface Raw {
  nativeGlob(o: { pattern: string; path: string; fileType?: FileType; cache?: boolean; mtime?: boolean }, token?: null, onBatch?: null):
    Promise<{ totalMatches: number }>;
  nativeFuzzyFind(o: { query: string; path: string; maxResults?: number; cache?: boolean }): Promise<{ totalMatches: number }>;
}
const require = createRequire(import.meta.url);
const raw: Record<string, Raw> = { 'this build': require(join(BENCH, '..', 'packages', 'natives', 'index.cjs')) as Raw };
if (BASE) raw.base = require(resolve(BASE)) as Raw;
const log = (s = '') => console.log(s);
const timed = async <T>(run: () => Promise<T>): Promise<[T, number]> => {
  const t0 = performance.now();
  const out = await run();
  return [out, performance.now() - t0];
};

/** The prefix of a `.ts` file stem that names closest to 100 files. */
function prefixOfAbout100(files: string[]): string {
  const counts = new Map<string, number>();
  for (const path of files) {
    const name = path.slice(path.lastIndexOf('/') + 1);
    if (!name.endsWith('.ts')) continue;
    for (let len = 4; len <= Math.min(10, name.length - 3); len++) {
      const prefix = name.slice(0, len);
      counts.set(prefix, (counts.get(prefix) ?? 0) + 1);
    }
  }
  let best = '';
  for (const [prefix, count] of [...counts].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (Math.abs(count - 100) < Math.abs((counts.get(best) ?? 0) - 100)) best = prefix;
  }
  return best;
}

const rows: Record<string, unknown>[] = [];

async function pair(what: string, pattern: string, braced: string): Promise<void> {
  const glob = (p: string) => async () => (await n.glob({ pattern: p, path: TREE, fileType: FileType.File, cache: true, mtime: false })).totalMatches;
  const rawGlob = (build: string) => async () =>
    (await raw[build]!.nativeGlob({ pattern, path: TREE, fileType: FileType.File, cache: true, mtime: false }, null, null)).totalMatches;
  const walks = n.fsScanCacheStats().walks;
  const builds: Contender[] = BASE ? Object.keys(raw).map((build) => ({ name: `${build}, raw`, note: pattern, run: rawGlob(build) })) : [];
  const r = await paired([
    { name: 'indexed', note: pattern, run: glob(pattern) },
    { name: 'every path', note: braced, run: glob(braced) },
    ...builds,
  ] satisfies Contender[], ROUNDS);
  if (BASE && r.summaries['base, raw']!.count !== r.summaries['this build, raw']!.count) throw new Error(`${what}: the builds differ`);
  log(`\n### glob ${what}\n${table(r, 'indexed', 'time/indexed')}`);
  const [a, b] = [r.summaries.indexed!, r.summaries['every path']!];
  if (a.count !== b.count) throw new Error(`${what}: ${a.count} matches indexed, ${b.count} over every path`);
  if (n.fsScanCacheStats().walks !== walks) throw new Error(`${what}: a cached glob walked`);
  const base = BASE ? { rawMs: r.summaries['this build, raw']!.medianMs, baseRawMs: r.summaries['base, raw']!.medianMs, rawRatio: pairedRatio(r, 'this build, raw', 'base, raw') } : {};
  rows.push({ row: `glob ${what}`, pattern, matches: a.count, indexedMs: a.medianMs, everyPathMs: b.medianMs, ratio: pairedRatio(r, 'indexed', 'every path'), ...base });
}

async function main(): Promise<void> {
  log(`# names bench: ${TREE}, ${ROUNDS} rounds, addon ${process.env.NAPI_RS_NATIVE_LIBRARY_PATH ?? 'this build'}`);
  const [filled, fillMs] = await timed(() => n.glob({ pattern: '**/*', path: TREE, cache: true, mtime: false }));
  const before = n.fsScanCacheStats();
  const files = filled.matches.filter((m) => m.fileType === FileType.File).map((m) => m.path);
  const prefix = prefixOfAbout100(files);
  const pattern = `**/${prefix}*.ts`;
  const query = () => n.glob({ pattern, path: TREE, fileType: FileType.File, cache: true, mtime: false });
  const [first, firstMs] = await timed(query);
  const [, againMs] = await timed(query);
  const after = n.fsScanCacheStats();
  log(`fill: ${filled.matches.length} entries in ${fillMs.toFixed(0)} ms; first ${pattern} (${first.totalMatches} files, index built): ` +
    `${firstMs.toFixed(1)} ms; again ${againMs.toFixed(1)} ms`);
  log(`stats before the index: ${JSON.stringify(before)}\nstats after: ${JSON.stringify(after)}`);
  rows.push({ row: 'fill', entries: filled.matches.length, fillMs, firstQueryMs: firstMs, againMs, before, after });

  await pair(`literal prefix ${pattern}`, pattern, `**/{${prefix}*.ts}`);
  await pair('exact name **/package.json', '**/package.json', '**/{package.json}');
  await pair('suffix packages/*/src/**/*Button.tsx', 'packages/*/src/**/*Button.tsx', 'packages/*/src/**/{*Button.tsx}');

  const listing = (build: string) => async () =>
    (await raw[build]!.nativeGlob({ pattern: '**/*', path: TREE, cache: true }, null, null)).totalMatches;
  const all = await paired([
    { name: 'listing', note: '**/* to JS objects', run: async () => (await n.glob({ pattern: '**/*', path: TREE, cache: true })).matches.length },
    ...Object.keys(raw).map((build) => ({ name: `${build}, raw`, note: '**/* columns', run: listing(build) })),
  ], ROUNDS);
  log(`\n### every entry to JS\n${table(all, 'listing', 'time/listing')}`);
  const listedBase = BASE ? { rawMs: all.summaries['this build, raw']!.medianMs, baseRawMs: all.summaries['base, raw']!.medianMs, rawRatio: pairedRatio(all, 'this build, raw', 'base, raw') } : {};
  rows.push({ row: 'every entry to JS', matches: all.summaries.listing!.count, ms: all.summaries.listing!.medianMs, ...listedBase });

  const queries = deriveQueries(files).map((q) => q.query);
  const finders: ItemContender<string>[] = Object.keys(raw).map((build) => ({
    name: build,
    run: async (q: string) => (await raw[build]!.nativeFuzzyFind({ query: q, path: TREE, maxResults: 100, cache: true })).totalMatches,
  }));
  const fz = await pairedItems(finders, queries, ROUNDS);
  log(`\n### fuzzyFind top 100, cached, ${queries.length} queries x ${ROUNDS} rounds\n${table(fz, 'this build', 'time/this build')}`);
  const perQuery = queries.map((query, i): Record<string, string | number> => ({
    query,
    ...Object.fromEntries(Object.keys(raw).flatMap((b) => [[`${b} matches`, fz.items[b]![i]!.count], [`${b} ms`, fz.items[b]![i]!.medianMs]])),
  }));
  for (const p of perQuery) log(`  ${JSON.stringify(p)}`);
  if (BASE && perQuery.some((p) => p['this build matches'] !== p['base matches'])) throw new Error('fuzzy: the builds found different totals');
  const fuzzyMs = median(queries.map((_, i) => fz.items['this build']![i]!.medianMs));
  const fuzzyBase = BASE ? { baseMedianMs: median(queries.map((_, i) => fz.items.base![i]!.medianMs)), ratio: pairedRatio(fz, 'this build', 'base') } : {};
  log(`  median of the per-query medians: ${fuzzyMs.toFixed(1)} ms ${JSON.stringify(fuzzyBase)}`);
  rows.push({ row: 'fuzzy', medianMs: fuzzyMs, ...fuzzyBase, perQuery });
  if (OUT) writeFileSync(OUT, JSON.stringify({ tree: TREE, rounds: ROUNDS, addon: process.env.NAPI_RS_NATIVE_LIBRARY_PATH ?? null, rows }, null, 2) + '\n');
}

await main();
