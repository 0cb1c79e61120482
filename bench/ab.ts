/**
 * ab.ts: natives against natives, a base commit and a head commit, on the
 * search rows of run.ts (cold and cached glob, every entry, grep with and
 * without the cache and a limit, fuzzy find), paired in one process.
 *
 *   bun bench/ab.ts --base <rev> [--head <rev>] [--base-node F] [--head-node F] [--quick]
 *
 * Each side is the commit's tree (`git archive`, so no worktree is added to
 * the repository) in bench/.data/ab/<commit>/src, its addon built there with
 * a target directory of its own (bench/.data/ab/<commit>/target) and kept,
 * so a second run builds nothing. `--base-node`/`--head-node` put a prebuilt
 * addon (`packages/natives/*.node` of a checkout at that commit) in place
 * instead of building. `--head` defaults to HEAD.
 *
 * Both addons are loaded into one process, each through its own commit's
 * TypeScript API, and every row runs base and head in the same rounds, the
 * order alternating each round (lib/harness.ts): a row's ratio is the median
 * of its per-round head/base ratios, so drift on a loaded machine hits both
 * alike. Equal work: a row fails (UNEQUAL, exit status 1) when the two did
 * not return the same work (files listed or searched, matches, the first
 * results of a limited grep, fuzzy's ranked paths). Rows over 1.05x are
 * listed at the end as slower.
 *
 * Environment: BENCH_TREES (default "gen,vendor"), BENCH_ROUNDS (default 15,
 * 5 with --quick), as run.ts; BENCH_ONLY, a regular expression: only the rows
 * whose name it matches (say `BENCH_ONLY='dense|no match'` to time again
 * the rows a first run found slower).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DEFAULT_TREE_DIR, ensureTree } from './gen-tree.ts';
import { type Contender, type ItemContender, type PairedResult, paired, pairedItems, pairedRatio } from './lib/harness.ts';
import { deriveQueries } from './lib/queries.ts';
import { type GrepCase, TREE_SPECS, type TreeName, type TreeSpec } from './lib/trees.ts';
import { ensureRealTrees, type RealTree } from './real-trees.ts';

// The addon reads its cache policy once, at load (see run.ts): a long TTL,
// set before either side is imported; Bun needs a fresh process for it.
const TTL_MS = '7200000';
if (process.env.FS_SCAN_CACHE_TTL_MS !== TTL_MS) {
  const env = { ...process.env, FS_SCAN_CACHE_TTL_MS: TTL_MS };
  process.exit(spawnSync(process.execPath, process.argv.slice(1), { stdio: 'inherit', env }).status ?? 1);
}

const BENCH = dirname(fileURLToPath(import.meta.url));
const REPO = join(BENCH, '..');
const QUICK = process.argv.includes('--quick');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 5 : 15));
const TREES = (process.env.BENCH_TREES ?? 'gen,vendor').split(',') as TreeName[];
const ONLY = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : undefined;
const SLOWER = 1.05;
const LIMIT = 100;
const File = 1;

const arg = (name: string) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};

// The slice of the public API the rows use, as both commits spell it.
interface Api {
  glob(o: object): Promise<{ matches: { path: string; fileType: number }[]; totalMatches: number }>;
  grep(o: object): Promise<{ matches: { path: string; lineNumber: number }[]; filesSearched: number }>;
  fuzzyFind(o: object): Promise<{ matches: { path: string }[] }>;
  invalidateFsScanCache(path?: string): void;
}

interface Side { name: 'base' | 'head'; commit: string; api: Api }

const git = (...args: string[]) => {
  const r = spawnSync('git', args, { cwd: REPO, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

/** The addon built at `commit` (or `prebuilt` put in place), and its API loaded. */
async function side(name: Side['name'], rev: string, prebuilt: string | undefined): Promise<Side> {
  const commit = git('rev-parse', '--verify', `${rev}^{commit}`);
  const dir = join(BENCH, '.data', 'ab', commit);
  const pkg = join(dir, 'src', 'packages', 'natives');
  if (!existsSync(pkg)) {
    mkdirSync(join(dir, 'src'), { recursive: true });
    const tar = spawnSync('sh', ['-c', `git archive ${commit} | tar -x -C "${join(dir, 'src')}"`], { cwd: REPO, stdio: 'inherit' });
    if (tar.status !== 0) throw new Error(`git archive ${commit} failed`);
  }
  if (prebuilt) cpSync(prebuilt, join(pkg, 'natives.linux-x64-gnu.node'));
  if (!readdirSync(pkg).some((f) => f.endsWith('.node'))) build(commit, dir, pkg);
  console.log(`${name}: ${git('log', '-1', '--format=%h %s', commit).slice(0, 100)}`);
  return { name, commit, api: (await import(pathToFileURL(join(pkg, 'src', 'index.ts')).href)) as Api };
}

/** The release addon of the tree in `dir`, with a target directory of its own. */
function build(commit: string, dir: string, pkg: string): void {
  console.log(`building the addon at ${commit.slice(0, 12)} in ${dir} (minutes)`);
  const napi = join(REPO, 'node_modules', '.bin', 'napi');
  const args = ['build', '--platform', '--release', '--manifest-path', '../../crates/natives/Cargo.toml', '--output-dir', '.',
    '--js', 'index.cjs', '--dts', 'index.d.cts'];
  const env = { ...process.env, CARGO_TARGET_DIR: join(dir, 'target') };
  const r = spawnSync(napi, args, { cwd: pkg, stdio: 'inherit', env });
  if (r.status !== 0) throw new Error(`the addon at ${commit} did not build`);
}

interface Tree extends TreeSpec { dir: string }

function trees(): Tree[] {
  const real = TREES.filter((t): t is RealTree => t !== 'gen');
  const records = real.length > 0 ? ensureRealTrees(real) : [];
  return TREES.map((name) => {
    if (name === 'gen') ensureTree(DEFAULT_TREE_DIR);
    const dir = name === 'gen' ? DEFAULT_TREE_DIR : records.find((r) => r.name === name)!.dir;
    return { name, ...TREE_SPECS[name], dir };
  });
}

// ---- rows -------------------------------------------------------------------

interface Row { tree: string; what: string; baseMs: number; headMs: number; ratio: number; work: string; unequal?: string }
const rows: Row[] = [];

/** What one run did, as a string both sides must agree on. */
type Work = (api: Api) => Promise<string>;

/** One row: `work` on base and head alternately, timed, and its results compared. */
async function row(tree: Tree, what: string, sides: Side[], work: Work, reps = 1): Promise<void> {
  if (ONLY && !ONLY.test(what)) return;
  const seen: Record<string, string> = {};
  const contenders: Contender[] = sides.map((s) => ({
    name: s.name, reps,
    run: async () => {
      seen[s.name] = await work(s.api);
      return seen[s.name]!.length;
    },
  }));
  const r = await paired(contenders, ROUNDS);
  const unequal = seen.base === seen.head ? undefined : `base ${brief(seen.base!)} / head ${brief(seen.head!)}`;
  add(tree, what, r, brief(seen.head!), unequal);
}

function add(tree: Tree, what: string, r: PairedResult, work: string, unequal?: string): void {
  const out: Row = { tree: tree.name, what, baseMs: r.summaries.base!.medianMs, headMs: r.summaries.head!.medianMs,
    ratio: pairedRatio(r, 'head', 'base'), work, unequal };
  rows.push(out);
  const flag = out.unequal ? ` UNEQUAL: ${out.unequal}` : out.ratio > SLOWER ? ' SLOWER' : '';
  console.log(`  ${tree.name} ${what}: base ${ms(out.baseMs)} ms, head ${ms(out.headMs)} ms, ${out.ratio.toFixed(3)}x; ${work}${flag}`);
}

const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const brief = (s: string) => (s.length > 80 ? `${s.slice(0, 60)}... (${s.length} chars)` : s);
const paths = (m: { path: string }[]) => m.map((x) => x.path).join('\n');

async function globRows(t: Tree, sides: Side[]): Promise<void> {
  const base = { path: t.dir, fileType: File, hidden: false, gitignore: true, includeNodeModules: t.nodeModules };
  const cold = { ...base, pattern: '**/*', cache: false };
  const files = async (o: object, api: Api) => `files ${(await api.glob(o)).matches.length}`;
  await row(t, 'cold glob **/* files, mtime: false', sides, (api) => files({ ...cold, mtime: false }, api));
  await row(t, 'cold glob **/* files + mtime', sides, (api) => files(cold, api));
  await row(t, 'cold glob sortByMtime', sides, async (api) => paths((await api.glob({ ...cold, sortByMtime: true, maxResults: LIMIT })).matches));
  await row(t, 'cold walk (maxResults 1)', sides, async (api) => `total ${(await api.glob({ ...cold, maxResults: 1 })).totalMatches}`);
  const cached = { ...base, pattern: `**/*.${t.ext}`, cache: true };
  for (const s of sides) await s.api.glob(cached);
  await row(t, `cached glob **/*.${t.ext}`, sides, (api) => files(cached, api), 5);
  const all = { pattern: '**/*', path: t.dir, hidden: false, includeNodeModules: t.nodeModules, cache: true };
  for (const s of sides) await s.api.glob(all);
  await row(t, 'cached glob, every entry', sides, async (api) => `entries ${(await api.glob(all)).matches.length}`, 3);
}

async function grepRows(t: Tree, sides: Side[]): Promise<void> {
  const scopes = t.nodeModules ? [false, true] : [false];
  for (const s of sides) await s.api.grep({ pattern: 'zqxjkvbw_never_9', path: t.dir, hidden: true, includeNodeModules: true, cache: true });
  const cases: [GrepCase, boolean][] = scopes.flatMap((nm) => t.cases.map((k): [GrepCase, boolean] => [k, nm]));
  cases.push([t.dense, t.nodeModules]);
  for (const [k, nm] of cases) {
    for (const limit of k.kind === 'dense' ? [undefined] : [undefined, LIMIT]) {
      for (const cache of [false, true]) {
        const o = { pattern: k.pattern, literal: k.literal, ignoreCase: k.ignoreCase, path: t.dir, hidden: true, maxCount: limit,
          includeNodeModules: nm, cache };
        const what = `grep ${k.kind} /${k.pattern}/${limit ? `, maxCount ${limit}` : ''}${nm ? ', node_modules' : ''}, ${cache ? 'cached' : 'uncached'}`;
        await row(t, what, sides, async (api) => {
          const r = await api.grep(o);
          const first = limit ? ` ${r.matches.map((m) => `${m.path}:${m.lineNumber}`).join(',')}` : '';
          return `files ${limit ? '-' : r.filesSearched}, matches ${r.matches.length}${first}`;
        });
      }
    }
  }
}

async function fuzzyRow(t: Tree, sides: Side[]): Promise<void> {
  if (ONLY && !ONLY.test('fuzzyFind')) return;
  const entries = (await sides[0]!.api.glob({ pattern: '**/*', path: t.dir, includeNodeModules: t.nodeModules, cache: true })).matches;
  const queries = deriveQueries(entries.filter((m) => m.fileType === File).map((m) => m.path)).map((q) => q.query);
  const seen: Record<string, string[]> = { base: [], head: [] };
  const contenders: ItemContender<string>[] = sides.map((s) => ({
    name: s.name,
    run: async (query) => {
      const r = await s.api.fuzzyFind({ query, path: t.dir, maxResults: LIMIT, includeNodeModules: t.nodeModules, cache: true });
      seen[s.name]![queries.indexOf(query)] = paths(r.matches);
      return r.matches.length;
    },
  }));
  const r = await pairedItems(contenders, queries, ROUNDS);
  const differ = queries.filter((_, i) => seen.base![i] !== seen.head![i]);
  add(t, `fuzzyFind top ${LIMIT}, ${queries.length} queries`, r, `${queries.length} queries`,
    differ.length > 0 ? `ranked paths differ for ${differ.map((q) => JSON.stringify(q)).join(', ')}` : undefined);
}

async function main(): Promise<void> {
  const baseRev = arg('--base');
  if (!baseRev) throw new Error('usage: bun bench/ab.ts --base <rev> [--head <rev>] [--base-node F] [--head-node F] [--quick]');
  const sides = [await side('base', baseRev, arg('--base-node')), await side('head', arg('--head') ?? 'HEAD', arg('--head-node'))];
  console.log(`${ROUNDS} rounds; ratio = median of per-round head/base; trees ${TREES.join(', ')}`);
  for (const t of trees()) {
    console.log(`\n## ${t.name}: ${t.dir}`);
    for (const s of sides) s.api.invalidateFsScanCache();
    await globRows(t, sides);
    await grepRows(t, sides);
    await fuzzyRow(t, sides);
  }
  const slower = rows.filter((r) => r.ratio > SLOWER);
  const unequal = rows.filter((r) => r.unequal);
  console.log(`\n${rows.length} rows; ${slower.length} over ${SLOWER}x; ${unequal.length} unequal`);
  for (const r of slower) console.log(`  slower: ${r.tree} ${r.what}: ${r.ratio.toFixed(3)}x (base ${ms(r.baseMs)} ms, head ${ms(r.headMs)} ms)`);
  for (const r of unequal) console.log(`  UNEQUAL: ${r.tree} ${r.what}: ${r.unequal}`);
  if (unequal.length > 0) process.exitCode = 1;
}

await main();
