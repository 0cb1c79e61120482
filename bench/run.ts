/**
 * run.ts: natives side by side with fd, ripgrep and fzf, on equal work, over
 * the generated tree and real trees made from the registries.
 *
 *   bun bench/run.ts [--quick]            (or: node --import tsx bench/run.ts)
 *
 * Trees (lib/trees.ts): `gen` (bench/gen-tree.ts), `vendor`, `npm` and `mixed`
 * (bench/real-trees.ts, built on first use). For each tree, sections:
 *   cold    every file, no scan cache: glob `mtime: false` (types from the
 *           directory listings, no stat) against `fd -t f`; glob with mtimes
 *           (the default) and with sortByMtime against `fd --changed-within`
 *           (which stats every file); a walk returning one match; `rg --files`.
 *   cached  `**\/*.<ext>` files from a warm cache against `fd -t f -e <ext>`;
 *           target <= 3 ms.
 *   all     every entry to JS from the cache against `fd`; target <= 20 ms.
 *   bytes   fsScanCacheStats().bytesPerEntry; target <= 150.
 *   grep    literal, regex, never-matching and `-i` patterns, each without and
 *           with maxCount 100, natives `cache: false` and `cache: true` against
 *           `rg --json` spawned and parsed (targets: uncached <= 1.0x, or 1.5x
 *           for rows searching node_modules; cached <= 0.5x). With the limit
 *           the peer is `rg --sort path --json` killed at the limit, which
 *           returns the same first results in the same order (checked, result
 *           by result); plain `rg --json` killed at the limit returns
 *           whichever results its threads find first, less work, shown
 *           beside without a target. On trees with a
 *           node_modules nobody ignores, every row runs without it (natives'
 *           default, rg `-g '!node_modules'`) and with it (includeNodeModules,
 *           rg unrestricted). Rows without a limit also show rg's process
 *           time (`rg -n`, output drained, not parsed). A dense pattern
 *           (>= 200 000 matching lines): cached natives against rg's process
 *           time, target <= 1.0x.
 *   fuzzy   cached fuzzyFind top 100 over 20 derived queries against
 *           `fzf --filter` and fuzzysort on the same candidates; target <= 10 ms.
 *
 * Equal work: every paired row states the files each contender searched or
 * listed (grep: natives' filesSearched and rg's own count of searches; the
 * listings `glob` and `rg --files`/`fd` give with the same options, compared
 * as sets) and, for grep, the matches; a row whose contenders differ is
 * FAILED and the process exits non-zero. Natives is asked to search dot-files
 * in grep (`hidden: true`) and never enters `.git`, so rg gets `--hidden -g '!.git'`; natives skips
 * node_modules unless asked, so rg gets `-g '!node_modules'` and fd
 * `--exclude node_modules` then. Both honour .gitignore only inside a git
 * repository, and `.ignore` everywhere.
 *
 * All contenders of a section run in the same process and rounds, in an order
 * that alternates every round; ratios are medians of per-round ratios. Results
 * go to bench/.data/results-<runtime>.json and, as Markdown tables, .md.
 *
 * Environment: BENCH_TREES (default "gen,vendor,npm,mixed"), BENCH_ROUNDS
 * (default 15, 5 with --quick), BENCH_SECTIONS (default
 * "cold,cached,all,bytes,grep,fuzzy"), BENCH_GREP_KINDS (the grep rows by
 * kind, default all: "literal,regex,no match,-i,dense"), BENCH_JS_PEERS=1 (add tinyglobby, fdir
 * and fast-glob to the listing sections, checked like every peer),
 * NATIVES_BENCH_DIR (run the `gen` rows over this directory instead),
 * NATIVES_BENCH_TREES (where the real trees live, see real-trees.ts).
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
import { compareFileSets, describeComparison, equalWork, firstDifference, type Located, type Work } from './lib/equal-work.ts';
import { fzfFilter, hasFzf } from './lib/fzf.ts';
import { type Contender, type ItemContender, type PairedResult, paired, pairedItems, pairedRatio, spawnCount, spawnLines, table } from './lib/harness.ts';
import { deriveQueries } from './lib/queries.ts';
import { rgJson } from './lib/rg-json.ts';
import { type GrepCase, TREE_NAMES, TREE_SPECS, type TreeName, type TreeSpec } from './lib/trees.ts';
import { ensureRealTrees, type RealTree } from './real-trees.ts';

const runtime = typeof (globalThis as any).Bun !== 'undefined' ? 'bun' : 'node';
const runtimeVersion = runtime === 'bun' ? (globalThis as any).Bun.version : process.versions.node;

// The addon reads its cache policy from the environment once, at load, so the
// TTL must be long (no expiry while a tree's sections run) and set before it
// is imported. Node passes process.env writes on to native code; Bun does not,
// so under Bun the script starts itself again with the variable set.
const TTL_MS = '7200000';
if (process.env.FS_SCAN_CACHE_TTL_MS !== TTL_MS) {
  if (runtime === 'bun') {
    const env = { ...process.env, FS_SCAN_CACHE_TTL_MS: TTL_MS };
    process.exit(spawnSync(process.execPath, process.argv.slice(1), { stdio: 'inherit', env }).status ?? 1);
  }
  process.env.FS_SCAN_CACHE_TTL_MS = TTL_MS;
}

const BENCH = dirname(fileURLToPath(import.meta.url));
const QUICK = process.argv.includes('--quick');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 5 : 15));
const SECTIONS = new Set((process.env.BENCH_SECTIONS ?? 'cold,cached,all,bytes,grep,fuzzy').split(','));
const TREES = (process.env.BENCH_TREES ?? TREE_NAMES.join(',')).split(',') as TreeName[];
const JS_PEERS = process.env.BENCH_JS_PEERS === '1';
/** The grep rows to run, by kind (`literal`, `regex`, `no match`, `-i`, `dense`); all by default. */
const GREP_KINDS = process.env.BENCH_GREP_KINDS?.split(',');
const grepKind = (k: GrepCase): boolean => !GREP_KINDS || GREP_KINDS.includes(k.kind);
const LIMIT = 100;

enum FileType { File = 1, Dir = 2, Symlink = 3, Other = 4 }
interface GlobOpts { pattern: string; path?: string; fileType?: FileType; hidden?: boolean; gitignore?: boolean; includeNodeModules?: boolean;
  maxResults?: number; sortByMtime?: boolean; mtime?: boolean; cache?: boolean }
interface GlobResult { matches: { path: string; fileType: FileType }[]; totalMatches: number; limitReached: boolean }
interface GrepOpts { pattern: string; path?: string; literal?: boolean; ignoreCase?: boolean; maxCount?: number; hidden?: boolean; gitignore?: boolean;
  includeNodeModules?: boolean; cache?: boolean }
interface GrepResult { matches: unknown[]; totalMatches: number; filesSearched: number; limitReached: boolean }
interface FuzzyResult { matches: { path: string; score: number }[]; totalMatches: number }
interface NativesApi {
  glob(o: GlobOpts): Promise<GlobResult>;
  grep(o: GrepOpts): Promise<GrepResult>;
  fuzzyFind(o: { query: string; path?: string; maxResults?: number; includeNodeModules?: boolean; cache?: boolean }): Promise<FuzzyResult>;
  invalidateFsScanCache(path?: string): void;
  fsScanCacheStats(): { scans: number; entries: number; bytes: number; bytesPerEntry: number; walks: number };
}

const log = (s = '') => console.log(s);
const progress = (label: string) => (r: number) => {
  if (process.stderr.isTTY) process.stderr.write(`\r  ${label}: round ${r}/${ROUNDS}${r === ROUNDS ? '\n' : ''}`);
};

function tool(name: string): string {
  const local = join(BENCH, '.tools', 'bin', name);
  return existsSync(local) ? local : name; // falls back to PATH
}
const version = (bin: string) => spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout?.split('\n')[0]?.trim() ?? '?';

async function loadNatives(): Promise<NativesApi> {
  const entry = join(BENCH, '..', 'packages', 'natives', 'src', 'index.ts');
  return (await import(pathToFileURL(entry).href)) as NativesApi;
}

// ---- rows -------------------------------------------------------------------

/** One paired comparison (or one absolute figure) of the report. */
interface Row {
  tree: TreeName;
  section: string;
  what: string;
  natives: string;
  peer: string;
  nativesMs: number;
  peerMs: number;
  /** Median of per-round natives/peer ratios. */
  ratio: number;
  /** The work each contender did: files searched or listed, matches. */
  work: Work[];
  target?: { on: 'ratio' | 'ms' | 'bytes'; max: number };
  /** Equal-work problems: any fails the row. */
  problems: string[];
  note?: string;
}

const rows: Row[] = [];

const targetValue = (r: Row) => (r.target?.on === 'ratio' ? r.ratio : r.nativesMs);
const verdict = (r: Row) => (r.problems.length > 0 ? 'FAILED' : !r.target ? '' : targetValue(r) <= r.target.max ? 'OK' : 'MISSED');
const fmtMs = (ms: number) => (Number.isNaN(ms) ? '-' : ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));
const fmtTarget = (r: Row) => (!r.target ? '' : r.target.on === 'ratio' ? `<= ${r.target.max.toFixed(1)}x` : r.target.on === 'ms' ? `<= ${r.target.max} ms` : `<= ${r.target.max} B`);
const fmtFiles = (r: Row) => {
  const files = [...new Set(r.work.map((w) => w.files))];
  return files.length === 1 ? String(files[0]) : r.work.map((w) => `${w.name} ${w.files}`).join(' / ');
};
const fmtMatches = (r: Row) => {
  const m = r.work.filter((w) => w.matches !== undefined).map((w) => w.matches!);
  if (m.length === 0) return '';
  return new Set(m).size === 1 ? String(m[0]) : r.work.filter((w) => w.matches !== undefined).map((w) => `${w.name} ${w.matches}`).join(' / ');
};

function addRow(r: Omit<Row, 'problems'> & { problems?: string[] }): void {
  const row: Row = { ...r, problems: [...equalWork(r.work, r.problems ?? []).problems] };
  rows.push(row);
  const v = verdict(row);
  const ratio = Number.isNaN(row.ratio) ? '' : ` ${row.ratio.toFixed(2)}x`;
  log(`  row [${row.section}] ${row.what}: ${row.natives} ${fmtMs(row.nativesMs)} ms vs ${row.peer} ${fmtMs(row.peerMs)} ms${ratio}; ` +
    `files ${fmtFiles(row)}${fmtMatches(row) ? `, matches ${fmtMatches(row)}` : ''}${row.target ? `; target ${fmtTarget(row)}` : ''} ${v}`);
  for (const p of row.problems) log(`    FAILED: ${p}`);
}

/** A row from a paired result: natives contender `a` against peer `b`. */
function pairRow(tree: TreeName, section: string, what: string, res: PairedResult, a: string, b: string, work: Work[],
  extra: Partial<Pick<Row, 'target' | 'problems' | 'note'>> = {}): void {
  addRow({ tree, section, what, natives: a, peer: b, nativesMs: res.summaries[a]!.medianMs, peerMs: res.summaries[b]?.medianMs ?? NaN,
    ratio: res.summaries[b] ? pairedRatio(res, a, b) : NaN, work, ...extra });
}

async function runSection(title: string, contenders: Contender[], base: string): Promise<PairedResult> {
  log(`\n### ${title}`);
  const result = await paired(contenders, ROUNDS, progress(title.split(' ')[0]!));
  log(table(result, base, `time/${base}`));
  return result;
}

// ---- trees ------------------------------------------------------------------

interface Tree extends TreeSpec { dir: string; census: string }

function resolveTrees(): Tree[] {
  for (const t of TREES) if (!TREE_NAMES.includes(t)) throw new Error(`unknown tree ${t}; known: ${TREE_NAMES.join(', ')}`);
  const real = TREES.filter((t): t is RealTree => t !== 'gen');
  const records = real.length > 0 ? ensureRealTrees(real) : [];
  return TREES.map((name) => {
    const spec = { name, ...TREE_SPECS[name] };
    if (name !== 'gen') {
      const r = records.find((x) => x.name === name)!;
      return { ...spec, dir: r.dir, census: `${r.files} files, ${(r.bytes / 2 ** 20).toFixed(0)} MiB` };
    }
    const given = process.env.NATIVES_BENCH_DIR;
    if (given) {
      const dir = resolve(given);
      const m = join(dir, MANIFEST_NAME);
      const manifest = existsSync(m) ? JSON.parse(readFileSync(m, 'utf8')) : undefined;
      return { ...spec, about: `NATIVES_BENCH_DIR ${dir}`, dir, census: manifest ? `${manifest.files} files` : 'given directory' };
    }
    const manifest = ensureTree(DEFAULT_TREE_DIR);
    return { ...spec, dir: DEFAULT_TREE_DIR, census: `${manifest.files} files (${manifest.expected.visibleFiles} visible)` };
  });
}

/** rg's flags for natives grep's file set: dot-files, never .git, node_modules only when asked. */
const rgScope = (nm: boolean) => ['--hidden', '-g', '!.git', ...(nm ? [] : ['-g', '!node_modules'])];
/** fd's flags for natives glob's file set (no dot-files, which fd also skips). */
const fdScope = (nm: boolean) => (nm ? [] : ['--exclude', 'node_modules']);

async function nativesFiles(n: NativesApi, o: Partial<GlobOpts>): Promise<string[]> {
  return (await n.glob({ pattern: '**/*', fileType: FileType.File, ...o, cache: false })).matches.map((m) => m.path);
}

/** Compares two listings; a difference is an equal-work problem of every row that relies on them. */
function setCheck(nameA: string, a: string[], nameB: string, b: string[]): string[] {
  const c = compareFileSets(a, b);
  log(`  file sets: ${describeComparison(nameA, nameB, c)}`);
  return c.equal ? [] : [describeComparison(nameA, nameB, c)];
}

// ---- sections ---------------------------------------------------------------

async function cold(n: NativesApi, t: Tree, fd: string, rg: string): Promise<void> {
  const nm = t.nodeModules;
  const opts: GlobOpts = { pattern: '**/*', path: t.dir, fileType: FileType.File, cache: false, hidden: false, gitignore: true, includeNodeModules: nm };
  const natSet = await nativesFiles(n, opts);
  const fdArgs = ['-t', 'f', ...fdScope(nm)];
  const rgArgs = ['--files', ...(nm ? [] : ['-g', '!node_modules'])];
  const problemsFd = setCheck('natives glob', natSet, 'fd', spawnLines(fd, fdArgs, t.dir));
  const problemsRg = setCheck('natives glob', natSet, 'rg --files', spawnLines(rg, rgArgs, t.dir));
  const c: Contender[] = [
    { name: 'natives', note: 'mtime: false', run: async () => (await n.glob({ ...opts, mtime: false })).matches.length },
    { name: 'natives mtime', note: 'stats every match', run: async () => (await n.glob(opts)).matches.length },
    { name: 'natives sortByMtime', run: async () => (await n.glob({ ...opts, sortByMtime: true })).matches.length },
    { name: 'natives walk', note: 'maxResults 1, totalMatches', run: async () => (await n.glob({ ...opts, maxResults: 1 })).totalMatches },
    { name: 'fd', note: 'spawn', run: () => spawnCount(fd, fdArgs, { cwd: t.dir }) },
    // `--changed-within` makes fd stat every file for its mtime; the period is long
    // because crates keep the mtimes of their sources (some from 2006).
    { name: 'fd --changed-within', note: 'spawn, stats files', run: () => spawnCount(fd, [...fdArgs, '--changed-within', '1000years'], { cwd: t.dir }) },
    { name: 'rg --files', note: 'spawn', run: () => spawnCount(rg, rgArgs, { cwd: t.dir }) },
  ];
  if (JS_PEERS) {
    const ignore = nm ? [] : ['**/node_modules/**'];
    c.push(
      { name: 'tinyglobby', note: 'no .gitignore', run: async () => (await tinyGlob('**/*', { cwd: t.dir, onlyFiles: true, ignore })).length },
      { name: 'fdir', note: 'no .gitignore', run: async () => (await new fdir().withRelativePaths()
        .exclude((d) => d.startsWith('.') || (!nm && d === 'node_modules'))
        .filter((p) => !p.slice(p.lastIndexOf('/') + 1).startsWith('.')).crawl(t.dir).withPromise()).length },
      { name: 'fast-glob', note: 'no .gitignore', run: async () => (await fg('**/*', { cwd: t.dir, onlyFiles: true, ignore })).length },
    );
  }
  const r = await runSection(`cold scan: files, cache: false (${t.name})`, c, 'fd');
  const cnt = (name: string) => r.summaries[name]!.count;
  const w = (...names: string[]) => names.map((name) => ({ name, files: cnt(name) }));
  pairRow(t.name, 'cold', 'files, no mtime asked (mtime: false)', r, 'natives', 'fd', w('natives', 'fd'),
    { target: { on: 'ratio', max: 1 }, problems: problemsFd });
  pairRow(t.name, 'cold', 'files + mtime (the default; fd --changed-within)', r, 'natives mtime', 'fd --changed-within',
    w('natives mtime', 'fd --changed-within'), { target: { on: 'ratio', max: 1 }, problems: problemsFd });
  pairRow(t.name, 'cold', 'files + mtime (sortByMtime; fd --changed-within)', r, 'natives sortByMtime', 'fd --changed-within',
    w('natives sortByMtime', 'fd --changed-within'), { target: { on: 'ratio', max: 1 }, problems: problemsFd });
  pairRow(t.name, 'cold', 'walk only (maxResults 1, counts all)', r, 'natives walk', 'fd', w('natives walk', 'fd'), { problems: problemsFd });
  pairRow(t.name, 'cold', 'files against rg --files', r, 'natives', 'rg --files', w('natives', 'rg --files'), { problems: problemsRg });
  if (JS_PEERS) for (const p of ['tinyglobby', 'fdir', 'fast-glob']) pairRow(t.name, 'cold', `files against ${p}`, r, 'natives', p, w('natives', p));
}

async function cached(n: NativesApi, t: Tree, fd: string): Promise<void> {
  const nm = t.nodeModules;
  const opts: GlobOpts = { pattern: `**/*.${t.ext}`, path: t.dir, fileType: FileType.File, includeNodeModules: nm };
  const fdArgs = ['-t', 'f', '-e', t.ext, ...fdScope(nm)];
  const problems = setCheck('natives glob', await nativesFiles(n, opts), 'fd', spawnLines(fd, fdArgs, t.dir));
  await n.glob({ ...opts, cache: true }); // fills the cache
  const walks = n.fsScanCacheStats().walks;
  const c: Contender[] = [
    { name: 'natives', note: 'cached', reps: 5, run: async () => (await n.glob({ ...opts, cache: true })).matches.length },
    { name: 'fd', note: 'spawn', run: () => spawnCount(fd, fdArgs, { cwd: t.dir }) },
  ];
  if (JS_PEERS) c.push({ name: 'tinyglobby', note: 'globSync, no .gitignore', run: () => tinyGlobSync(`**/*.${t.ext}`, { cwd: t.dir, ignore: nm ? [] : ['**/node_modules/**'] }).length });
  const r = await runSection(`cached glob **/*.${t.ext} (${t.name})`, c, 'natives');
  if (n.fsScanCacheStats().walks !== walks) problems.push('the cached glob walked the disk');
  const w = (...names: string[]) => names.map((name) => ({ name, files: r.summaries[name]!.count }));
  pairRow(t.name, 'cached', `glob **/*.${t.ext}, files`, r, 'natives', 'fd', w('natives', 'fd'), { target: { on: 'ms', max: 3 }, problems });
  if (JS_PEERS) pairRow(t.name, 'cached', `glob **/*.${t.ext} against tinyglobby`, r, 'natives', 'tinyglobby', w('natives', 'tinyglobby'));
}

async function allEntries(n: NativesApi, t: Tree, fd: string): Promise<void> {
  const nm = t.nodeModules;
  const opts: GlobOpts = { pattern: '**/*', path: t.dir, includeNodeModules: nm, cache: true };
  const fdArgs = fdScope(nm);
  const natAll = (await n.glob(opts)).matches.map((m) => m.path); // fills the cache
  const problems = setCheck('natives glob', natAll, 'fd', spawnLines(fd, fdArgs, t.dir));
  const walks = n.fsScanCacheStats().walks;
  const r = await runSection(`every entry to JS, cached (${t.name})`, [
    { name: 'natives', note: 'cached', reps: 3, run: async () => (await n.glob(opts)).matches.length },
    { name: 'fd', note: 'spawn, files+dirs', run: () => spawnCount(fd, fdArgs, { cwd: t.dir }) },
  ], 'natives');
  if (n.fsScanCacheStats().walks !== walks) problems.push('the cached glob walked the disk');
  pairRow(t.name, 'all', 'every entry (files, dirs, links)', r, 'natives', 'fd',
    ['natives', 'fd'].map((name) => ({ name, files: r.summaries[name]!.count })), { target: { on: 'ms', max: 20 }, problems });
}

function bytes(n: NativesApi, t: Tree): void {
  const s = n.fsScanCacheStats();
  log(`\n### scan cache memory (${t.name})\n  ${JSON.stringify(s)}`);
  addRow({ tree: t.name, section: 'bytes', what: `bytes per cached entry (${s.entries} entries, ${s.scans} scans)`, natives: 'natives', peer: '-',
    nativesMs: s.bytesPerEntry, peerMs: NaN, ratio: NaN, work: [], target: { on: 'bytes', max: 150 } });
}

interface Scope { nm: boolean; files: number; rgFiles: number; problems: string[] }

async function grepScope(n: NativesApi, t: Tree, rg: string, nm: boolean): Promise<Scope> {
  log(`\n  grep file set, node_modules ${nm ? 'included' : 'skipped'}:`);
  const nat = await nativesFiles(n, { path: t.dir, hidden: true, gitignore: true, includeNodeModules: nm });
  const rgList = spawnLines(rg, ['--files', ...rgScope(nm)], t.dir);
  return { nm, files: nat.length, rgFiles: rgList.length, problems: setCheck('natives glob (hidden)', nat, 'rg --files', rgList) };
}

async function grepRow(n: NativesApi, t: Tree, rg: string, scope: Scope, k: GrepCase, limit: number | undefined): Promise<void> {
  const dense = k.kind === 'dense';
  const opts: GrepOpts = { pattern: k.pattern, literal: k.literal, ignoreCase: k.ignoreCase, path: t.dir, maxCount: limit, hidden: true, includeNodeModules: scope.nm };
  const rgArgs = [...rgScope(scope.nm), ...(k.literal ? ['-F'] : []), ...(k.ignoreCase ? ['-i'] : []), '-e', k.pattern, '--', '.'];
  // What the latest run of each contender did (the counts are checked stable over rounds).
  const last: Record<string, { files?: number; matches: number; results?: Located[] }> = {};
  let cachedWalks = 0;
  const c: Contender[] = [
    { name: 'natives', note: 'cache: false', run: async () => {
      const r = await n.grep({ ...opts, cache: false });
      last.natives = { files: r.filesSearched, matches: r.matches.length, results: limit ? located(r.matches) : undefined };
      return r.matches.length;
    } },
    { name: 'natives cached', note: 'cache: true', run: async () => {
      const w0 = n.fsScanCacheStats().walks;
      const r = await n.grep({ ...opts, cache: true });
      if (n.fsScanCacheStats().walks !== w0) cachedWalks++;
      last['natives cached'] = { files: r.filesSearched, matches: r.matches.length, results: limit ? located(r.matches) : undefined };
      return r.matches.length;
    } },
    { name: 'rg --json', note: limit ? `spawn, killed at ${limit}` : 'spawn, parsed', run: async () => {
      const r = await rgJson(rg, rgArgs, t.dir, limit);
      last['rg --json'] = { files: r.searches, matches: r.matches.length };
      return r.matches.length;
    } },
  ];
  if (limit) {
    // The same first results in the same order: rg sorting by path (which
    // makes it search on one thread), killed at the limit.
    c.push({ name: ORDERED_RG, note: `spawn, --sort path, killed at ${limit}`, run: async () => {
      const r = await rgJson(rg, ['--sort', 'path', ...rgArgs], t.dir, limit);
      last[ORDERED_RG] = { matches: r.matches.length, results: r.matches };
      return r.matches.length;
    } });
  } else {
    // rg's process time: its plain output drained, not parsed (rg has no global limit to time).
    c.push({ name: 'rg', note: 'spawn, -n, output drained', run: () => spawnCount(rg, ['-n', '--no-heading', ...rgArgs], { cwd: t.dir, quiet: true, okCodes: [0, 1] }) });
  }
  const nmNote = scope.nm ? ', node_modules' : '';
  const what = `${k.kind} /${k.pattern}/${limit ? `, maxCount ${limit}` : ''}${nmNote}`;
  const r = await runSection(`grep ${what} (${t.name})`, c, limit ? ORDERED_RG : 'rg --json');
  const problems = [...scope.problems];
  if (limit) {
    for (const name of ['natives', 'natives cached']) {
      const differs = firstDifference(name, last[name]!.results!, ORDERED_RG, last[ORDERED_RG]!.results!);
      if (differs) problems.push(differs);
    }
  }
  if (cachedWalks > 0) problems.push(`the cached grep walked the disk in ${cachedWalks} runs`);
  // Files: without a limit, what each searched (natives' filesSearched, rg's
  // summary) besides the listings; with one, natives stops early and rg is
  // killed, so the listings of the same options are the file set of both.
  const listings: Work[] = [{ name: 'glob listing', files: scope.files }, { name: 'rg --files listing', files: scope.rgFiles }];
  const work = (name: string): Work => ({ name, files: limit ? scope.files : last[name]?.files ?? NaN, matches: last[name]!.matches });
  const rgWork: Work = { name: 'rg --json', files: limit ? scope.rgFiles : last['rg --json']?.files ?? NaN, matches: last['rg --json']!.matches };
  const uncachedTarget = { on: 'ratio' as const, max: scope.nm ? 1.5 : 1 };
  const rgPlain: Work | undefined = limit ? undefined : { name: 'rg', files: scope.rgFiles, matches: r.summaries.rg!.count };
  if (limit) {
    // Equal work: the same first results in path order. rg's default
    // (whichever results its threads find first) is less work, shown beside.
    const ordered: Work = { name: ORDERED_RG, files: scope.rgFiles, matches: last[ORDERED_RG]!.matches };
    pairRow(t.name, 'grep', `${what}, uncached`, r, 'natives', ORDERED_RG, [work('natives'), ordered, ...listings], { target: uncachedTarget, problems });
    pairRow(t.name, 'grep', `${what}, cached`, r, 'natives cached', ORDERED_RG, [work('natives cached'), ordered, ...listings],
      { target: { on: 'ratio', max: 0.5 }, problems });
    pairRow(t.name, 'grep', `${what}, uncached against rg's first results in any order`, r, 'natives', 'rg --json',
      [work('natives'), rgWork, ...listings], { problems });
  } else if (!dense) {
    pairRow(t.name, 'grep', `${what}, uncached`, r, 'natives', 'rg --json', [work('natives'), rgWork, ...listings], { target: uncachedTarget, problems });
    if (rgPlain) pairRow(t.name, 'grep', `${what}, uncached against rg's process time`, r, 'natives', 'rg', [work('natives'), rgPlain, ...listings], { problems });
    pairRow(t.name, 'grep', `${what}, cached`, r, 'natives cached', 'rg --json', [work('natives cached'), rgWork, ...listings],
      { target: { on: 'ratio', max: 0.5 }, problems });
  } else {
    if (last['rg --json']!.matches < 200_000) problems.push(`dense pattern has ${last['rg --json']!.matches} matches, fewer than 200000`);
    pairRow(t.name, 'grep', `${what}, uncached`, r, 'natives', 'rg --json', [work('natives'), rgWork, ...listings], { problems });
    pairRow(t.name, 'grep', `${what}, cached against rg's process time`, r, 'natives cached', 'rg',
      [work('natives cached'), rgWork, rgPlain!, ...listings], { target: { on: 'ratio', max: 1 }, problems });
  }
}

/** The equal-work peer of a limited grep: rg's first results in path order. */
const ORDERED_RG = 'rg --sort path';

/** The results a limited grep returned, for the equal-results check. */
function located(matches: unknown[]): Located[] {
  return (matches as Located[]).map(({ path, lineNumber }) => ({ path, lineNumber }));
}

async function grepSection(n: NativesApi, t: Tree, rg: string): Promise<void> {
  await n.grep({ pattern: 'zqxjkvbw_never_9', path: t.dir, cache: true, hidden: true, includeNodeModules: true }); // fills the cache
  const scopes = [await grepScope(n, t, rg, false)];
  if (t.nodeModules) scopes.push(await grepScope(n, t, rg, true));
  for (const scope of scopes) {
    for (const k of t.cases.filter(grepKind)) {
      for (const limit of [undefined, LIMIT]) await grepRow(n, t, rg, scope, k, limit);
    }
  }
  if (grepKind(t.dense)) await grepRow(n, t, rg, scopes[scopes.length - 1]!, t.dense, undefined);
}

async function fuzzy(n: NativesApi, t: Tree): Promise<unknown> {
  const nm = t.nodeModules;
  // Candidates: what fuzzyFind ranks by default (gitignore-honouring, non-hidden
  // files and dirs); fzf and fuzzysort get the same paths.
  const entries = (await n.glob({ pattern: '**/*', path: t.dir, includeNodeModules: nm, cache: true })).matches;
  const paths = entries.map((m) => m.path);
  const input = paths.join('\n') + '\n';
  const queries = deriveQueries(entries.filter((m) => m.fileType === FileType.File).map((m) => m.path));
  const fzf = tool('fzf');
  const withFzf = hasFzf(fzf);
  const t0 = performance.now();
  const prepared = paths.map((p) => fuzzysort.prepare(p));
  const prepareMs = performance.now() - t0;
  log(`\n### fuzzy find, top 100 of ${paths.length} paths, ${queries.length} queries, cached (${t.name})`);
  log(`  fuzzysort.prepare over all paths (once, untimed below): ${prepareMs.toFixed(1)} ms; fzf: ${withFzf ? fzf : 'not found, skipped'}`);
  const c: ItemContender<string>[] = [
    { name: 'natives', note: 'cached', run: async (q) => (await n.fuzzyFind({ query: q, path: t.dir, maxResults: 100, includeNodeModules: nm, cache: true })).matches.length },
  ];
  if (withFzf) c.push({ name: 'fzf --filter', note: 'spawn, stdin', run: async (q) => (await fzfFilter(fzf, q, input)).length });
  c.push({ name: 'fuzzysort', note: 'prepared', run: (q) => fuzzysort.go(q, prepared, { limit: 100 }).length });
  const walks = n.fsScanCacheStats().walks;
  const result = await pairedItems(c, queries.map((q) => q.query), ROUNDS, progress('fuzzy'));
  const problems = n.fsScanCacheStats().walks !== walks ? ['fuzzyFind walked the disk'] : [];
  log(table(result, 'natives', 'time/natives'));
  const cand = (name: string) => ({ name, files: paths.length });
  const peer = withFzf ? 'fzf --filter' : 'fuzzysort';
  pairRow(t.name, 'fuzzy', `fuzzyFind top 100, median of ${queries.length} queries x rounds (candidates)`, result, 'natives', peer,
    [cand('natives'), cand(peer)], { target: { on: 'ms', max: 10 }, problems });

  // Top-1 agreement, outside the timed rounds. fzf runs with its default
  // scheme (as timed) and, for reference, with --scheme=path.
  const bare = (p: string | undefined) => (p?.endsWith('/') ? p.slice(0, -1) : p);
  const perQuery = [];
  for (const [i, q] of queries.entries()) {
    const nat = await n.fuzzyFind({ query: q.query, path: t.dir, maxResults: 100, includeNodeModules: nm, cache: true });
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
  const lines = [['kind', 'query', 'natives ms', 'fzf ms', 'fuzzysort ms', 'matches', 'top-1 = fzf']];
  for (const p of perQuery) {
    lines.push([p.kind, p.query, ms(p.nativesMs), ms(p.fzfMs), ms(p.fuzzysortMs), String(p.nativesTotal), p.agree === null ? '-' : p.agree ? 'yes' : 'no']);
  }
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((r) => r[i]!.length)));
  log(lines.map((r) => '  ' + r.map((x, i) => (i < 2 ? x.padEnd(widths[i]!) : x.padStart(widths[i]!))).join('  ')).join('\n'));
  let agreement: Record<string, number> | undefined;
  if (withFzf) {
    agreement = { fzf: perQuery.filter((p) => p.agree).length, fzfSchemePath: perQuery.filter((p) => p.agreePath).length, of: perQuery.length };
    log(`  top-1 agreement with fzf: ${agreement.fzf}/${agreement.of} (with fzf --scheme=path: ${agreement.fzfSchemePath}/${agreement.of})`);
    for (const p of perQuery.filter((x) => !x.agree)) {
      log(`    ${JSON.stringify(p.query)} (${p.kind}, from ${p.from})\n      natives: ${p.nativesTop ?? '(none)'}\n      fzf:     ${p.fzfTop ?? '(none)'}` +
        (p.fzfPathTop !== p.fzfTop ? `\n      fzf --scheme=path: ${p.fzfPathTop ?? '(none)'}` : ''));
    }
  }
  return { candidates: paths.length, fuzzysortPrepareMs: prepareMs, agreement, queries: perQuery };
}

// ---- report -----------------------------------------------------------------

function markdown(trees: Tree[], header: string): string {
  const out = [header, ''];
  for (const t of trees) {
    const rs = rows.filter((r) => r.tree === t.name);
    if (rs.length === 0) continue;
    out.push(`#### ${t.name}: ${t.census}`, '', t.about, '',
      '| section | row | natives | peer | files | matches | natives ms | peer ms | natives/peer | target | result |',
      '|---|---|---|---|--:|--:|--:|--:|--:|---|---|');
    for (const r of rs) {
      const v = r.target?.on === 'bytes' ? r.nativesMs.toFixed(1) : fmtMs(r.nativesMs);
      out.push(`| ${r.section} | ${r.what.replace(/\|/g, '\\|')} | ${r.natives} | ${r.peer} | ${fmtFiles(r)} | ${fmtMatches(r)} | ${v} | ${fmtMs(r.peerMs)} | ` +
        `${Number.isNaN(r.ratio) ? '' : r.ratio.toFixed(2) + 'x'} | ${fmtTarget(r)} | ${verdict(r)} |`);
    }
    out.push('');
  }
  const failed = rows.filter((r) => r.problems.length > 0);
  if (failed.length > 0) {
    out.push('FAILED rows (unequal work):', '');
    for (const r of failed) out.push(`- ${r.tree} ${r.section} ${r.what}: ${r.problems.join('; ')}`);
    out.push('');
  }
  return out.join('\n');
}

async function main(): Promise<void> {
  const n = await loadNatives();
  const fd = tool('fd'), rg = tool('rg');
  const trees = resolveTrees();
  const versions = { fd: version(fd), rg: version(rg), fzf: hasFzf(tool('fzf')) ? version(tool('fzf')) : null };
  const machine = `${os.platform()} ${os.arch()}, ${os.cpus().length} cpus (${os.cpus()[0]?.model ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB`;
  log(`# natives bench: ${runtime} ${runtimeVersion}, ${machine}, ${ROUNDS} rounds${QUICK ? ' (--quick)' : ''}`);
  log(`${versions.rg}; ${versions.fd}; fzf ${versions.fzf ?? 'missing'}`);
  const extras: Record<string, unknown> = {};
  for (const t of trees) {
    log(`\n## tree ${t.name}: ${t.dir} (${t.census})`);
    n.invalidateFsScanCache(); // each tree's cache figures are its own
    if (SECTIONS.has('cold')) await cold(n, t, fd, rg);
    if (SECTIONS.has('cached')) await cached(n, t, fd);
    if (SECTIONS.has('all')) await allEntries(n, t, fd);
    if (SECTIONS.has('bytes')) bytes(n, t);
    if (SECTIONS.has('grep')) await grepSection(n, t, rg);
    if (SECTIONS.has('fuzzy')) extras[`fuzzy ${t.name}`] = await fuzzy(n, t);
  }

  const date = new Date().toISOString();
  const header = `${date.slice(0, 10)}, ${runtime} ${runtimeVersion}, ${machine}, ${ROUNDS} rounds; ${versions.rg}, ${versions.fd}`;
  const md = markdown(trees, header);
  log(`\n## summary\n\n${md}`);
  mkdirSync(join(BENCH, '.data'), { recursive: true });
  const file = join(BENCH, '.data', `results-${runtime}.json`);
  const report = { runtime, runtimeVersion, machine, versions, rounds: ROUNDS, date, trees: trees.map(({ name, dir, census }) => ({ name, dir, census })),
    rows: rows.map((r) => ({ ...r, verdict: verdict(r) })), extras };
  writeFileSync(file, JSON.stringify(report, (_k, v) => (typeof v === 'number' && Number.isNaN(v) ? null : v), 2) + '\n');
  writeFileSync(file.replace(/\.json$/, '.md'), md + '\n');
  log(`results: ${file} (and .md)`);
  const failed = rows.filter((r) => r.problems.length > 0).length;
  if (failed > 0) {
    log(`${failed} rows FAILED: their contenders did not do equal work`);
    process.exitCode = 1;
  }
}

await main();
