/**
 * real-trees.ts: real source trees for the bench, made from the registries.
 *
 *   bun bench/real-trees.ts [--only vendor,npm,mixed] [--force] [--print-dir]
 *
 * - `vendor`: `cargo vendor --locked` of the popular crates pinned in
 *   bench/real-trees/vendor (Cargo.toml with `=` requirements, Cargo.lock).
 * - `npm`: `npm ci --ignore-scripts` of the large packages pinned in
 *   bench/real-trees/npm (exact versions, package-lock.json). The directory
 *   has no `.gitignore` and no `.git`, so its `node_modules` is not ignored.
 * - `mixed`: the vendor tree plus the npm tree's `node_modules`, copied
 *   (cloned where the filesystem can): sources beside a node_modules nobody
 *   ignores. Not hard-linked: a file with a second name is one a write
 *   outside the watched tree can change unseen, so natives never trusts its
 *   index entry by events, and `vendor` and `npm` would stop standing for
 *   trees as users have them.
 *
 * Only the pins are committed. The trees go to NATIVES_BENCH_TREES, by default
 * `$XDG_CACHE_HOME/natives-bench/trees` (`~/.cache/...`), not to bench/.data:
 * ripgrep, fd and natives all read the ignore files of the directories above
 * the one searched, so inside this repository its `.gitignore`
 * (`node_modules/`) would hide the very node_modules these trees are about.
 * Every ancestor of the trees directory is checked for `.git` and ignore files.
 *
 * A tree is rebuilt when its pins change (their hash is kept in
 * `<trees>/<name>.json` with the tree's file count, size and build time).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, parse, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REAL_TREES = ['vendor', 'npm', 'mixed'] as const;
export type RealTree = (typeof REAL_TREES)[number];

const PINS = join(dirname(fileURLToPath(import.meta.url)), 'real-trees');
const PIN_FILES: Record<'vendor' | 'npm', string[]> = {
  vendor: ['Cargo.toml', 'Cargo.lock'],
  npm: ['package.json', 'package-lock.json'],
};

/** Files whose presence above a tree would change what gets searched in it. */
const ANCESTOR_MARKERS = ['.git', '.gitignore', '.ignore', '.rgignore', '.fdignore'];

export interface TreeRecord {
  name: RealTree;
  dir: string;
  pins: string;
  files: number;
  dirs: number;
  symlinks: number;
  bytes: number;
  buildSeconds: number;
  builtAt: string;
}

/** Where the real trees live. */
export function treesDir(): string {
  if (process.env.NATIVES_BENCH_TREES) return resolve(process.env.NATIVES_BENCH_TREES);
  const cache = process.env.XDG_CACHE_HOME || join(os.homedir(), '.cache');
  return join(cache, 'natives-bench', 'trees');
}

export const treeDir = (name: RealTree) => join(treesDir(), name);
const recordFile = (name: RealTree) => join(treesDir(), `${name}.json`);

/** Throws when `dir` or a directory above it holds a `.git` or an ignore file. */
export function assertNoAncestorRules(dir: string): void {
  let d = resolve(dir);
  const { root } = parse(d);
  for (;;) {
    for (const m of ANCESTOR_MARKERS) {
      if (existsSync(join(d, m))) {
        throw new Error(`${join(d, m)} exists: the trees would inherit its rules; set NATIVES_BENCH_TREES to a directory outside any repository`);
      }
    }
    if (d === root) return;
    d = dirname(d);
  }
}

function pinsHash(name: RealTree): string {
  const h = createHash('sha256');
  const sources = name === 'mixed' ? [...PIN_FILES.vendor, ...PIN_FILES.npm.map((f) => `../npm/${f}`)] : PIN_FILES[name];
  for (const f of sources) h.update(f).update(readFileSync(join(PINS, name === 'mixed' ? 'vendor' : name, f)));
  // How the tree is made, beside what: a `mixed` of hard links is rebuilt as copies.
  if (name === 'mixed') h.update(MIXED_LAYOUT);
  return h.digest('hex').slice(0, 16);
}

export function readRecord(name: RealTree): TreeRecord | undefined {
  const f = recordFile(name);
  if (!existsSync(f)) return undefined;
  const r = JSON.parse(readFileSync(f, 'utf8')) as TreeRecord;
  return r.pins === pinsHash(name) && existsSync(r.dir) ? r : undefined;
}

function run(cmd: string, args: string[], cwd: string): void {
  const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status} (in ${cwd})`);
}

/** Counts what is under `dir`, links not followed. */
function census(dir: string): Pick<TreeRecord, 'files' | 'dirs' | 'symlinks' | 'bytes'> {
  const out = { files: 0, dirs: 0, symlinks: 0, bytes: 0 };
  const stack = [dir];
  while (stack.length > 0) {
    const d = stack.pop()!;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        out.dirs++;
        stack.push(p);
      } else if (e.isSymbolicLink()) out.symlinks++;
      else if (e.isFile()) {
        out.files++;
        out.bytes += lstatSync(p).size;
      }
    }
  }
  return out;
}

/** How `mixed` is made (part of its pins' hash, so a change rebuilds it). */
const MIXED_LAYOUT = 'copies';

/** Copies `from` to `to`, cloning files where the filesystem can (GNU `cp --reflink=auto`). */
function copyTree(from: string, to: string): void {
  run('cp', ['-a', '--reflink=auto', from, to], dirname(to));
}

function build(name: RealTree, log: (s: string) => void): void {
  const final = treeDir(name);
  const tmp = `${final}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  if (name === 'vendor') {
    for (const f of PIN_FILES.vendor) copyFileSync(join(PINS, 'vendor', f), join(tmp, f));
    mkdirSync(join(tmp, 'src'));
    writeFileSync(join(tmp, 'src', 'lib.rs'), '');
    log('cargo vendor --locked');
    run('cargo', ['vendor', '--locked', '--quiet', 'vendor'], tmp);
  } else if (name === 'npm') {
    for (const f of PIN_FILES.npm) copyFileSync(join(PINS, 'npm', f), join(tmp, f));
    log('npm ci --ignore-scripts');
    run('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], tmp);
  } else {
    rmSync(tmp, { recursive: true, force: true });
    log('copies of vendor and npm/node_modules');
    copyTree(treeDir('vendor'), tmp);
    copyTree(join(treeDir('npm'), 'node_modules'), join(tmp, 'node_modules'));
  }
  rmSync(final, { recursive: true, force: true });
  renameSync(tmp, final);
}

/**
 * Builds the named trees that are missing or whose pins changed (all of them
 * with `force`); returns their records. `mixed` builds `vendor` and `npm` first.
 */
export function ensureRealTrees(names: readonly RealTree[], opts: { force?: boolean; quiet?: boolean } = {}): TreeRecord[] {
  const log = (s: string) => opts.quiet || console.error(`real-trees: ${s}`);
  const root = treesDir();
  mkdirSync(root, { recursive: true });
  assertNoAncestorRules(root);
  const wanted = new Set<RealTree>(names);
  if (wanted.has('mixed')) wanted.add('vendor').add('npm');
  const records: TreeRecord[] = [];
  for (const name of REAL_TREES.filter((t) => wanted.has(t))) {
    // `mixed` is rebuilt whenever a part of it was.
    const partRebuilt = name === 'mixed' && records.some((r) => r.builtAt > (readRecord('mixed')?.builtAt ?? ''));
    const have = opts.force || partRebuilt ? undefined : readRecord(name);
    if (have) {
      log(`${name}: up to date (${have.files} files, ${(have.bytes / 2 ** 20).toFixed(0)} MiB) in ${have.dir}`);
      records.push(have);
      continue;
    }
    log(`${name}: building in ${treeDir(name)}`);
    const t0 = performance.now();
    build(name, (s) => log(`${name}: ${s}`));
    const buildSeconds = (performance.now() - t0) / 1000;
    const rec: TreeRecord = { name, dir: treeDir(name), pins: pinsHash(name), ...census(treeDir(name)), buildSeconds, builtAt: new Date().toISOString() };
    writeFileSync(recordFile(name), JSON.stringify(rec, null, 2) + '\n');
    log(`${name}: ${rec.files} files, ${(rec.bytes / 2 ** 20).toFixed(0)} MiB in ${buildSeconds.toFixed(1)} s`);
    records.push(rec);
  }
  return records.filter((r) => names.includes(r.name));
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('real-trees.ts')) {
  const args = process.argv.slice(2);
  if (args.includes('--print-dir')) {
    console.log(treesDir());
  } else {
    const at = args.indexOf('--only');
    const names = (at >= 0 ? args[at + 1]!.split(',') : [...REAL_TREES]) as RealTree[];
    for (const n of names) if (!REAL_TREES.includes(n)) throw new Error(`unknown tree ${n}; known: ${REAL_TREES.join(', ')}`);
    const recs = ensureRealTrees(names, { force: args.includes('--force') });
    for (const r of recs) console.log(`${r.name}\t${r.files} files\t${(r.bytes / 2 ** 20).toFixed(0)} MiB\t${r.buildSeconds.toFixed(1)} s\t${r.dir}`);
  }
}
