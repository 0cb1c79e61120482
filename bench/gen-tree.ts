/**
 * gen-tree.ts: writes a deterministic, realistic monorepo for the benchmarks.
 *
 *   bun bench/gen-tree.ts [outDir] [--files N] [--seed S] [--force]
 *
 * Exactly N regular files (default 70 000, at least 70 000), all drawn from a
 * seeded PRNG so every machine benchmarks the same tree:
 *   - visible sources: packages/<pkg>/src/** nested up to 9 levels, apps, Rust
 *     crates, Go/Python services, docs, with a realistic mix of extensions and
 *     sizes (300 B to 64 KiB) and grep-able marker identifiers;
 *   - ignored output that scanners must skip: dist/, coverage/, *.log, nested
 *     .gitignore files (build/, *.tmp, /generated/, *.bak) and a .ignore file;
 *   - node_modules (root and per package, with nested node_modules and .bin links);
 *   - hidden dirs (.github, .vscode, .config, .cache) and a large .git directory.
 * The tree root holds .bench-manifest.json (counts per kind, expected scan
 * results, marker hit counts); a copy goes next to the tree as
 * <outDir>-manifest.json. If the stamp in the manifest matches, nothing is
 * regenerated. NATIVES_BENCH_DIR makes the benchmarks skip generation entirely.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ContentMaker, type Lang, type Marker, MARKERS, Words } from './lib/content.ts';
import { Rng } from './lib/rng.ts';

const GENERATOR_VERSION = 2;
export const MIN_FILES = 70_000;
export const DEFAULT_SEED = 0x5eed_2024;
export const DEFAULT_TREE_DIR = join(dirname(fileURLToPath(import.meta.url)), '.data', 'tree');
export const MANIFEST_NAME = '.bench-manifest.json';

type Category = 'visible' | 'gitignored' | 'dotignored' | 'hidden' | 'node_modules' | 'git';

const EXT_LANG: Record<string, Lang> = {
  ts: 'ts', tsx: 'tsx', js: 'js', mjs: 'js', cjs: 'js', json: 'json', md: 'md', css: 'css', scss: 'css', snap: 'snap',
  'd.ts': 'ts', 'js.map': 'json', svg: 'svg', yml: 'yml', yaml: 'yml', txt: 'txt', html: 'html', sh: 'sh', py: 'py', rs: 'rs', go: 'go', toml: 'toml',
};
const MIX = {
  package: { ts: 20, tsx: 12, js: 10, mjs: 1, json: 7, md: 6, css: 5, scss: 1, snap: 3, svg: 2, yml: 1, txt: 1, html: 1 },
  app: { tsx: 30, ts: 20, css: 10, scss: 3, svg: 9, json: 6, html: 4, md: 4, js: 6, snap: 3, txt: 2 },
  crate: { rs: 80, toml: 4, md: 8, json: 3, txt: 5 },
  service: { go: 45, py: 33, yml: 8, sh: 4, md: 4, json: 4, txt: 2 },
  docs: { md: 75, svg: 10, txt: 8, html: 4, yml: 3 },
  scripts: { sh: 30, py: 25, js: 20, ts: 25 },
} as const;
const SIZE_SCALE: Record<string, number> = { json: 0.6, svg: 0.5, snap: 0.8, md: 1.2, txt: 0.5, toml: 0.3, yml: 0.5, sh: 0.5 };
const DIR_WORDS = ('components hooks utils lib core services api models store adapters parsers render schema workers ' +
  'internal shared common features views pages routes middleware plugins commands config types errors io net fs ' +
  'auth billing search sync jobs events handlers validators mocks generated legacy v2 experimental providers ' +
  'contexts layouts widgets forms tables charts icons styles theme i18n locales').split(' ');
const PKG_NAMES = ('core cli server ui-kit auth billing search analytics editor router config logger storage ' +
  'scheduler notifications payments i18n testing design-tokens icons forms charts data-grid cache queue mailer ' +
  'webhooks sdk graphql rest-client telemetry feature-flags permissions uploads media realtime workers').split(' ');
const ROOT_GITIGNORE = '# dependencies\nnode_modules/\n\n# build output\ndist/\ncoverage/\n*.tsbuildinfo\n\n' +
  '# logs\n*.log\n!important.log\n\n# local state\n.cache/\n.env.local\n';
const PKG_GITIGNORE = 'build/\n*.tmp\n/generated/\n';

interface MarkerCount { visibleHits: number; visibleFiles: number; allHits: number; allFiles: number }

/** Writes files, creating parent dirs once, and keeps the counts for the manifest. */
class TreeWriter {
  files = 0;
  bytes = 0;
  symlinks = 0;
  private dirs = new Set<string>();
  readonly visibleDirs = new Set<string>();
  readonly byCategory: Record<Category, number> = { visible: 0, gitignored: 0, dotignored: 0, hidden: 0, node_modules: 0, git: 0 };
  readonly byExt: Record<string, number> = {};
  readonly visibleByExt: Record<string, number> = {};
  readonly markers = Object.fromEntries(Object.keys(MARKERS).map((m) => [m, { visibleHits: 0, visibleFiles: 0, allHits: 0, allFiles: 0 }])) as Record<Marker, MarkerCount>;
  private names = new Map<string, Set<string>>();

  constructor(readonly root: string) {}

  /** A name not yet used in `dir` (appends a counter on collision). */
  unique(dir: string, stem: string, ext: string): string {
    let used = this.names.get(dir);
    if (!used) this.names.set(dir, (used = new Set()));
    let name = ext ? `${stem}.${ext}` : stem;
    for (let i = 2; used.has(name); i++) name = ext ? `${stem}-${i}.${ext}` : `${stem}-${i}`;
    used.add(name);
    return `${dir}/${name}`;
  }

  /** `cut` is the first path component that hides or ignores the file (defaults by category). */
  write(rel: string, data: string | Uint8Array, cat: Category, hits: Partial<Record<Marker, number>> = {}, cut?: string): void {
    const dir = dirname(rel);
    if (!this.dirs.has(dir)) {
      mkdirSync(join(this.root, dir), { recursive: true });
      for (let d = dir; d !== '.' && !this.dirs.has(d); d = dirname(d)) this.dirs.add(d);
    }
    writeFileSync(join(this.root, rel), data);
    this.files++;
    this.bytes += typeof data === 'string' ? Buffer.byteLength(data) : data.length;
    this.byCategory[cat]++;
    const ext = extOf(rel);
    this.byExt[ext] = (this.byExt[ext] ?? 0) + 1;
    if (cat === 'visible') this.visibleByExt[ext] = (this.visibleByExt[ext] ?? 0) + 1;
    for (const [m, n] of Object.entries(hits) as [Marker, number][]) {
      const c = this.markers[m];
      c.allHits += n;
      c.allFiles++;
      if (cat === 'visible') { c.visibleHits += n; c.visibleFiles++; }
    }
    // Directories above the hiding/ignoring component are listed by scanners.
    const stop = cut ?? (cat === 'visible' ? rel : firstHidden(rel, cat));
    for (let d = dirname(stop); d !== '.' && !this.visibleDirs.has(d); d = dirname(d)) this.visibleDirs.add(d);
  }

  link(rel: string, target: string): void {
    mkdirSync(join(this.root, dirname(rel)), { recursive: true });
    symlinkSync(target, join(this.root, rel));
    this.symlinks++;
  }
}

function extOf(rel: string): string {
  const b = basename(rel);
  const i = b.lastIndexOf('.');
  return i <= 0 ? '(none)' : b.slice(i + 1);
}

function firstHidden(rel: string, cat: Category): string {
  const parts = rel.split('/');
  const i = parts.findIndex((p) => (cat === 'node_modules' ? p === 'node_modules' : p.startsWith('.')));
  return parts.slice(0, i + 1).join('/');
}

/** Log-skewed size: most files are a few KiB, a few reach tens of KiB. */
function sizeFor(rng: Rng, ext: string): number {
  const base = 300 * Math.pow(160, Math.pow(rng.float(), 1.7));
  return Math.min(64 * 1024, Math.max(200, Math.round(base * (SIZE_SCALE[ext] ?? 1))));
}

function fileStem(w: Words, ext: string): string {
  const r = w.rng;
  if (ext === 'tsx') return w.pascal() + (r.chance(0.1) ? '.test' : r.chance(0.05) ? '.stories' : '');
  if (ext === 'ts') return r.chance(0.08) ? 'index' : w.camel() + (r.chance(0.15) ? '.test' : r.chance(0.04) ? '.d' : '');
  if (ext === 'rs') return r.chance(0.1) ? 'mod' : w.camel().replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
  if (ext === 'py' || ext === 'go') return w.camel().replace(/[A-Z]/g, (c) => '_' + c.toLowerCase()) + (ext === 'go' && r.chance(0.2) ? '_test' : '');
  if (ext === 'md' && r.chance(0.1)) return 'README';
  if (ext === 'snap') return w.pascal() + '.test.tsx';
  return r.chance(0.5) ? w.kebab() : w.camel();
}

class Generator {
  readonly w: Words;
  readonly content: ContentMaker;
  constructor(readonly tw: TreeWriter, readonly rng: Rng) {
    this.w = new Words(rng.fork(1));
    this.content = new ContentMaker(rng.fork(2));
  }

  /** A source-like file of the given extension in `dir`. */
  source(dir: string, ext: string, cat: Category, cut?: string, stem?: string): void {
    const rel = this.tw.unique(dir, stem ?? fileStem(this.w, ext), ext);
    const { text, hits } = this.content.make(this.w, EXT_LANG[ext] ?? 'txt', sizeFor(this.rng, ext), true);
    this.tw.write(rel, text, cat, hits, cut);
  }

  /** Random nested dirs under `root` (up to maxDepth below it), biased to deep chains. */
  dirTree(root: string, count: number, maxDepth: number): string[] {
    const dirs = [{ path: root, depth: 0 }];
    for (let i = 0; i < count; i++) {
      const recent = this.rng.chance(0.6);
      let parent = dirs[recent ? Math.max(0, dirs.length - 1 - this.rng.int(0, 7)) : this.rng.int(0, dirs.length - 1)]!;
      if (parent.depth >= maxDepth) parent = dirs[0]!;
      dirs.push({ path: this.tw.unique(parent.path, this.rng.pick(DIR_WORDS), ''), depth: parent.depth + 1 });
    }
    return dirs.map((d) => d.path);
  }

  /** A unit (package, app, crate...): `count` visible files spread over a nested tree. */
  unit(root: string, count: number, mix: Readonly<Record<string, number>>, maxDepth: number): string[] {
    const dirs = this.dirTree(root, Math.max(1, Math.round(count / 7)), maxDepth);
    for (let i = 0; i < count; i++) this.source(this.rng.pick(dirs), this.rng.weighted(mix), 'visible');
    return dirs;
  }

  json(rel: string, value: unknown, cat: Category, cut?: string): void {
    this.tw.write(rel, JSON.stringify(value, null, 2) + '\n', cat, {}, cut);
  }
}

interface Pkg { name: string; dir: string; gitignore: boolean; srcDirs: string[] }

// ---- sections -------------------------------------------------------------

function writeHidden(g: Generator): void {
  const { tw, w, rng } = g;
  tw.write('.gitignore', ROOT_GITIGNORE, 'hidden');
  for (const f of ['.editorconfig', '.prettierrc', '.npmrc', '.nvmrc', '.eslintrc.json', '.env.local']) tw.write(f, `# ${w.sentence()}\n`, 'hidden');
  for (let i = 0; i < 8; i++) g.source('.github/workflows', 'yml', 'hidden');
  for (let i = 0; i < 3; i++) g.source('.github/ISSUE_TEMPLATE', 'md', 'hidden');
  tw.write('.github/CODEOWNERS', '* @acme/maintainers\n', 'hidden');
  for (const f of ['settings', 'extensions', 'launch', 'tasks']) g.json(`.vscode/${f}.json`, { [w.varName()]: w.sentence() }, 'hidden');
  for (let i = 0; i < 6; i++) g.source('.config', rng.pick(['toml', 'json', 'yml']), 'hidden');
  for (let i = 0; i < 24; i++) g.source('.changeset', 'md', 'hidden');
  tw.write('.husky/pre-commit', 'bun run lint-staged\n', 'hidden');
  for (let i = 0; i < 60; i++) tw.write(`.cache/${rng.hex(2)}/${rng.hex(16)}`, rng.bytes(rng.int(100, 4000)), 'hidden');
}

function writeTopLevel(g: Generator, pkgs: Pkg[]): void {
  const { tw, w, rng } = g;
  g.json('package.json', { name: 'acme', private: true, workspaces: ['packages/*', 'apps/*'], scripts: { build: 'turbo build', test: 'turbo test' } }, 'visible');
  for (const f of ['README', 'CONTRIBUTING', 'SECURITY']) g.source('.', 'md', 'visible', undefined, f);
  tw.write('LICENSE', `MIT License\n\n${w.sentence(20, 40)}\n`, 'visible');
  g.json('tsconfig.base.json', { compilerOptions: { strict: true, target: 'ES2022', module: 'ESNext' } }, 'visible');
  g.json('turbo.json', { pipeline: { build: { outputs: ['dist/**'] } } }, 'visible');
  // A big lockfile, as real monorepos have.
  const lock: Record<string, unknown> = {};
  for (let i = 0; i < 2500; i++) lock[`node_modules/${w.kebab()}-${i}`] = { version: `${rng.int(0, 9)}.${rng.int(0, 30)}.${rng.int(0, 20)}`, resolved: `https://registry.example/${w.kebab()}.tgz`, integrity: `sha512-${rng.hex(64)}` };
  g.json('package-lock.json', { lockfileVersion: 3, packages: lock }, 'visible');
  for (const p of pkgs) {
    g.json(`${p.dir}/package.json`, { name: `@acme/${p.name}`, version: `0.${rng.int(1, 40)}.${rng.int(0, 9)}`, main: 'dist/index.js', scripts: { build: 'tsc -b' } }, 'visible');
    g.json(`${p.dir}/tsconfig.json`, { extends: '../../tsconfig.base.json', compilerOptions: { outDir: 'dist' } }, 'visible');
    g.source(p.dir, 'md', 'visible', undefined, 'README');
    if (rng.chance(0.6)) g.source(p.dir, 'md', 'visible', undefined, 'CHANGELOG');
    tw.write(`${p.dir}/.eslintrc.json`, '{ "extends": "../../.eslintrc.json" }\n', 'hidden');
    if (p.gitignore) tw.write(`${p.dir}/.gitignore`, PKG_GITIGNORE, 'hidden');
  }
}

function writeGit(g: Generator, budget: number): void {
  const { tw, rng } = g;
  const start = tw.files;
  const put = (rel: string, data: string | Uint8Array) => tw.write(`.git/${rel}`, data, 'git');
  put('HEAD', 'ref: refs/heads/main\n');
  put('config', '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n[remote "origin"]\n\turl = https://git.example/acme/monorepo.git\n');
  put('description', 'Unnamed repository; edit this file to name it.\n');
  put('info/exclude', '# git ls-files --others --exclude-from=.git/info/exclude\n');
  for (const h of ['pre-commit', 'pre-push', 'commit-msg', 'post-update', 'pre-rebase', 'prepare-commit-msg', 'update', 'fsmonitor-watchman']) put(`hooks/${h}.sample`, `#!/bin/sh\n# sample ${h} hook\nexit 0\n`);
  put('index', rng.bytes(600_000));
  put('COMMIT_EDITMSG', 'fix: handle empty input\n');
  put('logs/HEAD', Array.from({ length: 400 }, () => `${rng.hex(40)} ${rng.hex(40)} Dev <dev@example.com> ${1.7e9 + rng.int(0, 3e7)} +0000\tcommit: update\n`).join(''));
  for (const b of ['main', 'develop', 'feature/search', 'feature/cache', 'fix/windows-paths']) {
    put(`refs/heads/${b}`, rng.hex(40) + '\n');
    put(`refs/remotes/origin/${b}`, rng.hex(40) + '\n');
  }
  for (let i = 0; i < 150; i++) put(`refs/tags/v0.${Math.floor(i / 10)}.${i % 10}`, rng.hex(40) + '\n');
  for (let i = 0; i < 2; i++) {
    const id = rng.hex(40);
    put(`objects/pack/pack-${id}.pack`, rng.bytes(2_000_000));
    put(`objects/pack/pack-${id}.idx`, rng.bytes(60_000));
  }
  while (tw.files - start < budget) {
    const id = rng.hex(40);
    put(`objects/${id.slice(0, 2)}/${id.slice(2)}`, rng.bytes(rng.int(60, 3000)));
  }
}

function writeNodeModules(g: Generator, pkgs: Pkg[], budget: number): void {
  const { tw, w, rng } = g;
  const end = tw.files + budget;
  const left = () => end - tw.files;
  const onePackage = (base: string, depth: number): void => {
    const name = rng.chance(0.25) ? `@${w.noun()}/${w.kebab()}` : w.kebab();
    const dir = tw.unique(base, name, '');
    const nm = (rel: string, lang: Lang | null, text = '') => {
      if (left() <= 0) return;
      const made = lang ? g.content.make(w, lang, sizeFor(rng, lang), true) : { text, hits: {} };
      tw.write(`${dir}/${rel}`, made.text, 'node_modules', made.hits);
    };
    nm('package.json', null, JSON.stringify({ name, version: `${rng.int(0, 12)}.${rng.int(0, 40)}.${rng.int(0, 20)}`, main: 'index.js' }, null, 2));
    nm('LICENSE', null, 'MIT\n');
    if (rng.chance(0.8)) nm('README.md', 'md');
    nm('index.js', 'js');
    if (rng.chance(0.5)) nm('index.d.ts', 'ts');
    const libs = Math.round(Math.pow(50, rng.float()));
    for (let i = 0; i < libs && left() > 0; i++) g.source(rng.chance(0.3) ? `${dir}/lib/${w.noun()}` : `${dir}/lib`, rng.chance(0.8) ? 'js' : 'ts', 'node_modules');
    if (rng.chance(0.2) && left() > 0) {
      g.source(`${dir}/bin`, 'js', 'node_modules', undefined, 'cli');
      if (depth === 0 && base === 'node_modules') tw.link(tw.unique('node_modules/.bin', basename(name), ''), `../${dir.slice('node_modules/'.length)}/bin/cli.js`);
    }
    if (depth < 2 && rng.chance(0.15)) for (let i = rng.int(1, 3); i > 0 && left() > 0; i--) onePackage(`${dir}/node_modules`, depth + 1);
  };
  tw.write('node_modules/.package-lock.json', '{}\n', 'node_modules');
  const rootShare = end - Math.round(budget * 0.15);
  while (tw.files < rootShare) onePackage('node_modules', 0);
  while (left() > 0) onePackage(`${rng.pick(pkgs).dir}/node_modules`, 0);
}

function writeIgnored(g: Generator, pkgs: Pkg[], budget: number): void {
  const { tw, rng, w } = g;
  const withIgnore = pkgs.filter((p) => p.gitignore);
  const start = tw.files;
  const fill = (share: number, one: () => void) => { const stop = tw.files + Math.round(budget * share); while (tw.files < stop) one(); };
  const out = ['js', 'js', 'd.ts', 'js.map'];
  fill(0.12, () => { const p = rng.pick(pkgs); g.source(`dist/${p.name}/${rng.pick(DIR_WORDS)}`, rng.pick(out), 'gitignored', 'dist'); });
  fill(0.3, () => { const p = rng.pick(pkgs); g.source(`${p.dir}/dist/${rng.pick(DIR_WORDS)}`, rng.pick(out), 'gitignored', `${p.dir}/dist`); });
  fill(0.18, () => { const p = rng.pick(withIgnore); g.source(`${p.dir}/build/${rng.pick(DIR_WORDS)}`, rng.pick(['js', 'css', 'html', 'json']), 'gitignored', `${p.dir}/build`); });
  fill(0.06, () => { const p = rng.pick(withIgnore); g.source(`${p.dir}/generated/${rng.pick(DIR_WORDS)}`, 'ts', 'gitignored', `${p.dir}/generated`); });
  fill(0.12, () => g.source(`coverage/lcov-report/${rng.pick(pkgs).name}/${rng.pick(DIR_WORDS)}`, 'html', 'gitignored', 'coverage'));
  fill(0.08, () => g.source(`apps/web/public/vendor/${w.kebab()}`, rng.pick(['js', 'css', 'svg']), 'dotignored', 'apps/web/public/vendor'));
  tw.write('apps/web/.ignore', 'public/vendor/\n', 'hidden');
  // File-pattern ignores: the containing dirs stay visible.
  const byName = (dir: string, ext: string) => { const rel = tw.unique(dir, w.kebab(), ext); tw.write(rel, `${w.sentence()}\n`.repeat(rng.int(1, 40)), 'gitignored', {}, rel); };
  fill(0.03, () => byName(rng.chance(0.5) ? 'logs' : rng.pick(pkgs).dir, 'log'));
  fill(0.03, () => { const p = rng.pick(withIgnore); byName(rng.pick(p.srcDirs), 'tmp'); });
  for (const p of pkgs) byName(p.dir, 'tsbuildinfo');
  const fixtures = `${pkgs[0]!.dir}/src/fixtures`;
  tw.write(`${fixtures}/.gitignore`, '*.bak\n', 'hidden');
  for (let i = 0; i < 40; i++) g.source(fixtures, 'json', 'visible');
  while (tw.files - start < budget) byName(fixtures, 'bak');
  // Re-included by `!important.log`: visible despite `*.log`.
  for (const d of ['logs', 'docs', pkgs[1]!.dir]) g.source(d, 'log', 'visible', undefined, 'important');
}

function writeSources(g: Generator, pkgs: Pkg[], budget: number): void {
  const { tw, rng } = g;
  const end = tw.files + budget;
  const share = (f: number) => Math.round(budget * f);
  const spread = (units: string[], total: number, mix: Readonly<Record<string, number>>, depth: number) => {
    const weights = units.map(() => Math.pow(4, rng.float()));
    const sum = weights.reduce((a, b) => a + b, 0);
    return units.map((u, i) => g.unit(u, Math.round((total * weights[i]!) / sum), mix, depth));
  };
  spread(['apps/web/src', 'apps/admin/src', 'apps/docs/src', 'apps/mobile/src'], share(0.12), MIX.app, 6);
  spread(['crates/scan', 'crates/index', 'crates/protocol', 'crates/cli', 'crates/bench-utils'].map((c) => `${c}/src`), share(0.08), MIX.crate, 5);
  spread(['services/gateway', 'services/ingest', 'services/ml-ranker', 'services/notifier'], share(0.06), MIX.service, 5);
  spread(['docs'], share(0.03), MIX.docs, 4);
  spread(['scripts', 'tools'], share(0.01), MIX.scripts, 2);
  // Packages take the rest; the first ones get their src trees (and test dirs) here.
  const remaining = end - tw.files;
  const srcs = spread(pkgs.map((p) => `${p.dir}/src`), Math.round(remaining * 0.85), MIX.package, 6);
  pkgs.forEach((p, i) => p.srcDirs.push(...srcs[i]!));
  while (tw.files < end) g.source(`${rng.pick(pkgs).dir}/test/${rng.pick(DIR_WORDS)}`, rng.chance(0.7) ? 'ts' : 'tsx', 'visible', undefined, `${g.w.camel()}.test`);
}

// ---- driver ----------------------------------------------------------------

export interface TreeOptions { files?: number; seed?: number; force?: boolean; quiet?: boolean }

/** Generates the tree unless an identical one is already there; returns its manifest. */
export function ensureTree(outDir = DEFAULT_TREE_DIR, opts: TreeOptions = {}): Record<string, any> {
  const files = opts.files ?? MIN_FILES;
  const seed = opts.seed ?? DEFAULT_SEED;
  if (files < MIN_FILES) throw new Error(`--files must be at least ${MIN_FILES}`);
  const stamp = { generator: GENERATOR_VERSION, seed, files };
  const log = (s: string) => opts.quiet || console.error(s);
  const manifestPath = join(outDir, MANIFEST_NAME);
  if (existsSync(manifestPath)) {
    const old = JSON.parse(readFileSync(manifestPath, 'utf8'));
    if (JSON.stringify(old.stamp) === JSON.stringify(stamp) && !opts.force) {
      log(`gen-tree: ${outDir} is up to date (${files} files, seed ${seed})`);
      return old;
    }
    rmSync(outDir, { recursive: true, force: true });
  } else if (existsSync(outDir) && readdirSync(outDir).length > 0) {
    throw new Error(`${outDir} exists, is not empty and has no ${MANIFEST_NAME}; refusing to overwrite it`);
  }

  const t0 = performance.now();
  const rng = new Rng(seed);
  const tw = new TreeWriter(outDir);
  mkdirSync(outDir, { recursive: true });
  const g = new Generator(tw, rng);
  const nPkgs = Math.max(24, Math.round((files * 0.55) / 1100));
  const pkgs: Pkg[] = Array.from({ length: nPkgs }, (_, i) => {
    const name = PKG_NAMES[i % PKG_NAMES.length]! + (i >= PKG_NAMES.length ? `-${Math.floor(i / PKG_NAMES.length) + 1}` : '');
    return { name, dir: `packages/${name}`, gitignore: i % 3 === 0, srcDirs: [] };
  });
  const gitBudget = Math.max(20_000, Math.round(files * 0.3));
  writeHidden(g);
  writeTopLevel(g, pkgs);
  writeGit(g, gitBudget);
  writeNodeModules(g, pkgs, Math.round(files * 0.09));
  // Sources first (ignored *.tmp files go into existing src dirs), ignored output after.
  const ignoredBudget = Math.round(files * 0.05);
  writeSources(g, pkgs, files - tw.files - ignoredBudget - 3);
  writeIgnored(g, pkgs, ignoredBudget);
  if (tw.files !== files) throw new Error(`internal: wrote ${tw.files} files, wanted ${files}`);

  const visibleDirs = tw.visibleDirs.size;
  const manifest = {
    stamp,
    seconds: Math.round(performance.now() - t0) / 1000,
    files: tw.files,
    bytes: tw.bytes,
    symlinks: tw.symlinks,
    byCategory: tw.byCategory,
    // What a scan honouring .gitignore and .ignore, skipping hidden entries, should return.
    expected: {
      visibleFiles: tw.byCategory.visible,
      visibleDirs,
      visibleEntries: tw.byCategory.visible + visibleDirs,
      visibleTs: tw.visibleByExt.ts ?? 0,
      dotignoredFiles: tw.byCategory.dotignored,
    },
    visibleByExt: sortDesc(tw.visibleByExt),
    byExt: sortDesc(tw.byExt),
    markers: tw.markers,
  };
  const text = JSON.stringify(manifest, null, 2) + '\n';
  writeFileSync(manifestPath, text);
  writeFileSync(join(dirname(outDir), `${basename(outDir)}-manifest.json`), text);
  log(`gen-tree: wrote ${tw.files} files (${(tw.bytes / 2 ** 20).toFixed(1)} MiB) to ${outDir} in ${manifest.seconds}s`);
  return manifest;
}

function sortDesc(o: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(o).sort((a, b) => b[1] - a[1]));
}

function main(argv: string[]): void {
  let outDir = DEFAULT_TREE_DIR;
  const opts: TreeOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--files') opts.files = Number(argv[++i]);
    else if (a === '--seed') opts.seed = Number(argv[++i]);
    else if (a === '--force') opts.force = true;
    else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else outDir = resolve(a);
  }
  const m = ensureTree(outDir, opts);
  const { byCategory, expected } = m;
  console.log(JSON.stringify({ dir: outDir, files: m.files, seconds: m.seconds, byCategory, expected }, null, 2));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2));
  } catch (e) {
    console.error(`gen-tree: ${(e as Error).message}`);
    process.exit(1);
  }
}
