/**
 * run.ts: natives side by side with fd, ripgrep, fzf and the JS glob and fuzzy-match libraries.
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
 *   e. grep: natives `grep` against `rg --json` spawned from this process with
 *      its JSON lines parsed into match objects (what a Node caller of rg does),
 *      for a literal (resolveWorkspaceRoot), a regex (fetchUser[A-Z]\w*) and a
 *      pattern that never matches, each without a limit and with maxCount 100.
 *      rg's `-m` limits per file, so for a global limit rg is killed once 100
 *      matches have been read; natives returns the first 100 in path order,
 *      rg whichever 100 its threads found first. Same files: natives searches
 *      dot-files by default and skips .git, so rg gets `--hidden -g '!.git'`;
 *      both honour .gitignore. natives runs with cache: false and with a warm
 *      cache (cache: true); a WARNING is printed if match counts differ.
 *      Targets: natives/rg <= 1.0 uncached, <= 0.8 cached.
 *   f. fuzzy: cached fuzzyFind top 100 over 20 queries derived from the tree's
 *      file names (lib/queries.ts: exact names, prefixes, abbreviations like
 *      `hdlincreq`, directory + name fragments) against `fzf --filter QUERY`
 *      spawned per query with the same path list on stdin (natives glob '**\/*',
 *      cached: gitignore-honouring, non-hidden files and dirs) and against
 *      fuzzysort.go(query, prepared, { limit: 100 }) (prepare time reported
 *      apart). Every query is a paired sample; target: natives median <= 10 ms.
 *      Top-1 agreement with fzf is reported, with every disagreement listed.
 *
 * All contenders of a section run in the same process and rounds, in an order
 * that alternates every round, so each ratio compares times taken under the same
 * machine conditions. Medians with p10/p90 are printed, ratios are medians of
 * per-round ratios. Results also go to bench/.data/results-<runtime>.json.
 *
 * Environment: NATIVES_BENCH_DIR (scan this directory instead of generating the
 * default tree), BENCH_ROUNDS (default 15), BENCH_SECTIONS (default
 * "cold,cached,all,bytes,grep,fuzzy"; e.g. "grep,fuzzy").
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fg from 'fast-glob';
import { fdir } from 'fdir';
import fuzzysort from 'fuzzysort';
import { glob as tinyGlob, globSync as tinyGlobSync } from 'tinyglobby';
import { DEFAULT_TREE_DIR, ensureTree, MANIFEST_NAME } from './gen-tree.ts';
import { fzfFilter, hasFzf } from './lib/fzf.ts';
import { type Contender, type ItemContender, type PairedResult, paired, pairedItems, pairedRatio, spawnCount, table } from './lib/harness.ts';
import { deriveQueries } from './lib/queries.ts';
import { rgJson } from './lib/rg-json.ts';

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
const SECTIONS = new Set((process.env.BENCH_SECTIONS ?? 'cold,cached,all,bytes,grep,fuzzy').split(','));

enum FileType { File = 1, Dir = 2, Symlink = 3, Other = 4 }
interface GlobResult { matches: { path: string; fileType: FileType }[]; totalMatches: number; limitReached: boolean }
interface GrepResult { matches: { path: string; lineNumber: number; line: string }[]; totalMatches: number; limitReached: boolean }
interface FuzzyResult { matches: { path: string; score: number }[]; totalMatches: number }
interface NativesApi {
  glob(o: { pattern: string; path?: string; fileType?: FileType; hidden?: boolean; gitignore?: boolean; cache?: boolean }): Promise<GlobResult>;
  grep(o: { pattern: string; path?: string; literal?: boolean; maxCount?: number; hidden?: boolean; gitignore?: boolean; cache?: boolean }): Promise<GrepResult>;
  fuzzyFind(o: { query: string; path?: string; maxResults?: number; cache?: boolean }): Promise<FuzzyResult>;
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

  if (SECTIONS.has('grep')) {
    // natives searches dot-files by default (hidden: true) and never .git; rg
    // needs --hidden and a glob to skip .git. Both honour .gitignore and .ignore.
    const rgBase = ['--hidden', '-g', '!.git'];
    const cases = [
      { key: 'literal', pattern: 'resolveWorkspaceRoot', literal: true },
      { key: 'regex', pattern: 'fetchUser[A-Z]\\w*', literal: false },
      { key: 'no match', pattern: 'zqxjkvbw_never_9', literal: false },
    ];
    const grepOut: Record<string, unknown> = {};
    if (n) await n.grep({ pattern: cases[2]!.pattern, path: dir, cache: true }); // fills the cache
    for (const limit of [undefined, 100]) {
      for (const k of cases) {
        const opts = { pattern: k.pattern, literal: k.literal, path: dir, maxCount: limit };
        const rgArgs = [...rgBase, ...(k.literal ? ['-F'] : []), '-e', k.pattern, '--', '.'];
        const c: Contender[] = [];
        if (n) {
          c.push(
            { name: 'natives', note: 'cache: false', run: async () => (await n.grep({ ...opts, cache: false })).matches.length },
            { name: 'natives cached', note: 'cache: true', run: async () => (await n.grep({ ...opts, cache: true })).matches.length },
          );
        }
        c.push({ name: 'rg --json', note: limit ? `spawn, killed at ${limit}` : 'spawn, parsed', run: async () => (await rgJson(rg, rgArgs, dir, limit)).length });
        const title = `grep ${k.literal ? 'literal ' : ''}/${k.pattern}/${limit ? `, maxCount ${limit}` : ''}`;
        const s = await section(title, c, 'rg --json', 'time/rg',
          { 'natives/rg': ['natives', 'rg --json'], 'natives cached/rg': ['natives cached', 'rg --json'] },
          (_r, q) => [
            { what: 'natives/rg', value: q['natives/rg']!, target: '<= 1.0', ok: q['natives/rg']! <= 1 },
            { what: 'natives cached/rg', value: q['natives cached/rg']!, target: '<= 0.8', ok: q['natives cached/rg']! <= 0.8 },
          ]);
        const counts = Object.fromEntries(Object.values(s.result.summaries).map((x) => [x.name, x.count]));
        const agree = new Set(Object.values(counts)).size === 1;
        if (!agree) log(`  WARNING: match counts differ: ${JSON.stringify(counts)}`);
        const marker = manifest?.markers?.[k.pattern];
        grepOut[limit ? `${k.key}, maxCount ${limit}` : k.key] = { pattern: k.pattern, literal: k.literal, maxCount: limit ?? null, rgArgs,
          counts, countsAgree: agree, manifestVisibleHits: marker?.visibleHits ?? null, ...s };
      }
    }
    if (n) {
      const before = n.fsScanCacheStats().walks;
      await n.grep({ pattern: cases[2]!.pattern, path: dir, cache: true });
      const after = n.fsScanCacheStats().walks;
      if (before !== undefined && after !== undefined && after > before) log('  WARNING: the cached grep walked the disk after the grep sections');
    }
    out.grep = grepOut;
  }

  if (SECTIONS.has('fuzzy') && n) {
    // Candidates: the gitignore-honouring, non-hidden files and dirs, the set
    // fuzzyFind ranks by default; fzf and fuzzysort get the same paths.
    const entries = (await n.glob({ pattern: '**/*', path: dir, cache: true })).matches; // fills the cache
    const paths = entries.map((m) => m.path);
    const input = paths.join('\n') + '\n';
    const queries = deriveQueries(entries.filter((m) => m.fileType === FileType.File).map((m) => m.path));
    const fzf = tool('fzf');
    const withFzf = hasFzf(fzf);
    const t0 = performance.now();
    const prepared = paths.map((p) => fuzzysort.prepare(p));
    const prepareMs = performance.now() - t0;
    log(`\n## fuzzy find, top 100 of ${paths.length} paths, ${queries.length} queries (cached)`);
    log(`  fuzzysort.prepare over all paths (once, untimed below): ${prepareMs.toFixed(1)} ms; fzf: ${withFzf ? fzf : 'not found, skipped'}`);
    const c: ItemContender<string>[] = [
      { name: 'natives', note: 'cached', run: async (q) => (await n.fuzzyFind({ query: q, path: dir, maxResults: 100, cache: true })).matches.length },
    ];
    if (withFzf) c.push({ name: 'fzf --filter', note: 'spawn, stdin', run: async (q) => (await fzfFilter(fzf, q, input)).length });
    c.push({ name: 'fuzzysort', note: 'prepared', run: (q) => fuzzysort.go(q, prepared, { limit: 100 }).length });
    const result = await expectNoWalks(n, 'the fuzzy section', () => pairedItems(c, queries.map((q) => q.query), ROUNDS, progress('fuzzy')));
    log('  per query (median of all rounds x queries):');
    log(table(result, 'natives', 'time/natives'));
    const ratios: Record<string, number> = {
      'fzf/natives': pairedRatio(result, 'fzf --filter', 'natives'),
      'fuzzysort/natives': pairedRatio(result, 'fuzzysort', 'natives'),
    };
    for (const [k, v] of Object.entries(ratios)) if (!Number.isNaN(v)) log(`  ${k}: ${v.toFixed(2)}x`);
    const med = result.summaries.natives!.medianMs;
    const targets: Target[] = [{ what: 'natives median ms', value: med, target: '<= 10', ok: med <= 10 }];
    for (const x of targets) log(`  target ${x.what}: ${x.value.toFixed(2)} (want ${x.target}) ${x.ok ? 'OK' : 'MISSED'}`);

    // Top-1 agreement, outside the timed rounds. fzf runs with its default
    // scheme (as timed) and, for reference, with --scheme=path.
    const bare = (p: string | undefined) => (p?.endsWith('/') ? p.slice(0, -1) : p);
    const perQuery = [];
    for (const [i, q] of queries.entries()) {
      const nat = await n.fuzzyFind({ query: q.query, path: dir, maxResults: 100, cache: true });
      const fzfTop = withFzf ? (await fzfFilter(fzf, q.query, input, 1))[0] : undefined;
      const fzfPathTop = withFzf ? (await fzfFilter(fzf, q.query, input, 1, ['--scheme=path']))[0] : undefined;
      const item = (name: string) => result.items[name]?.[i];
      perQuery.push({
        ...q, nativesTotal: nat.totalMatches, nativesTop: nat.matches[0]?.path, fzfTop, fzfPathTop,
        fuzzysortTop: fuzzysort.go(q.query, prepared, { limit: 1 })[0]?.target,
        agree: withFzf ? bare(nat.matches[0]?.path) === bare(fzfTop) : null,
        agreePath: withFzf ? bare(nat.matches[0]?.path) === bare(fzfPathTop) : null,
        nativesMs: item('natives')?.medianMs, fzfMs: item('fzf --filter')?.medianMs ?? null, fuzzysortMs: item('fuzzysort')?.medianMs,
      });
    }
    const ms = (x: number | null | undefined) => (x == null ? '-' : x.toFixed(1));
    const rows = [['kind', 'query', 'natives ms', 'fzf ms', 'fuzzysort ms', 'matches', 'top-1 = fzf']];
    for (const p of perQuery) {
      rows.push([p.kind, p.query, ms(p.nativesMs), ms(p.fzfMs), ms(p.fuzzysortMs), String(p.nativesTotal), p.agree === null ? '-' : p.agree ? 'yes' : 'no']);
    }
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    log(rows.map((r) => '  ' + r.map((x, i) => (i < 2 ? x.padEnd(widths[i]!) : x.padStart(widths[i]!))).join('  ')).join('\n'));
    let agreement: Record<string, number> | undefined;
    if (withFzf) {
      agreement = { fzf: perQuery.filter((p) => p.agree).length, fzfSchemePath: perQuery.filter((p) => p.agreePath).length, of: perQuery.length };
      log(`  top-1 agreement with fzf: ${agreement.fzf}/${agreement.of} (with fzf --scheme=path: ${agreement.fzfSchemePath}/${agreement.of})`);
      for (const p of perQuery.filter((x) => !x.agree)) {
        log(`    ${JSON.stringify(p.query)} (${p.kind}, from ${p.from})\n      natives: ${p.nativesTop ?? '(none)'}\n      fzf:     ${p.fzfTop ?? '(none)'}` +
          (p.fzfPathTop !== p.fzfTop ? `\n      fzf --scheme=path: ${p.fzfPathTop ?? '(none)'}` : ''));
      }
    }
    out.fuzzy = { candidates: paths.length, fuzzysortPrepareMs: prepareMs, fzf: withFzf ? fzf : null, result, ratios, targets, agreement, queries: perQuery };
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
