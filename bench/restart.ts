/**
 * restart.ts: the first cached answer of a new process, from a persisted scan
 * (`FS_SCAN_CACHE_PERSIST=1`) against the walk a new process pays without one.
 *
 *   bun bench/restart.ts <treeDir> [--rounds N] [--changes 0,100,10000] [--out file.json]
 *
 * For each count of changed files, in order (the changes add up):
 *   1. a new process walks the tree with persistence on and writes its record;
 *   2. that many files change, each in a directory of its own: a third are
 *      made, a third removed, a third renamed within their directory;
 *   3. N rounds, alternating which goes first, of two new processes asking
 *      the same first cached answer, the first 100 of a glob of every entry
 *      (`**\/*`, hidden off, .gitignore on, the defaults), which needs the
 *      whole scan (see lib/restart-child.ts):
 *        walk     persistence off: the walk every new process pays today;
 *        restore  persistence on, with the record of step 1 put back before
 *                 each round (a restore that found changes writes a new one);
 *      both must then list the same paths (a hash of the whole listing is
 *      compared).
 * Times are the glob call inside each child, paired per round; the ratio is
 * restore / walk. The target (issue 31): under 1% changed, at most 0.2x.
 *
 * With `--together N`, then N new processes started at once on the tree with
 * no record yet, persistence on (one lists the tree, the others wait for its
 * record and restore it) against N started at once without persistence
 * (each walks): the wall time until the last answered, the walks, and the
 * slowest process's answer.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, takeOption } from './lib/harness.ts';
import { Rng } from './lib/rng.ts';

const BENCH = dirname(fileURLToPath(import.meta.url));
const CHILD = join(BENCH, 'lib', 'restart-child.ts');
const args = process.argv.slice(2);
const ROUNDS = Number(takeOption(args, '--rounds') ?? 5);
const CHANGES = (takeOption(args, '--changes') ?? '0,100,10000').split(',').map(Number);
const OUT = takeOption(args, '--out');
const TOGETHER = Number(takeOption(args, '--together') ?? 0);
const TREE = resolve(args[0] ?? join(BENCH, '.data', 'tree'));
/** Past the racy slack of a record (2 s): what changed before is old enough to vouch. */
const QUIET_MS = 2_500;

interface ChildAnswer { ms: number; count: number; hash: string; rssMiB: number; stats: { walks: number; persist: Record<string, unknown> & { restored: number; dirsRelisted: number } } }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function childEnv(home: string | null): Record<string, string | undefined> {
  return {
    ...process.env,
    FS_SCAN_CACHE_TTL_MS: '7200000',
    FS_SCAN_CACHE_MAX_BYTES: String(4 * 2 ** 30),
    FS_SCAN_CACHE_PERSIST: home ? '1' : '0',
    NATIVES_HOME: home ?? undefined,
  };
}

function child(home: string | null): ChildAnswer {
  const env = childEnv(home);
  const run = spawnSync(process.execPath, [CHILD, TREE], { env, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (run.status !== 0) throw new Error(`child failed (${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as ChildAnswer;
}

/** Every file and directory of the tree by directory, as the defaults list them. */
function filesByDir(): Map<string, string[]> {
  const out = spawnSync(process.execPath, [CHILD, TREE, '--files'], { encoding: 'utf8', maxBuffer: 1 << 30 });
  const byDir = new Map<string, string[]>();
  for (const path of out.stdout.split('\n').filter(Boolean)) {
    const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
    byDir.set(dir, [...(byDir.get(dir) ?? []), path]);
  }
  return byDir;
}

/** Change `count` files, each in a directory of its own (see the header). */
function change(count: number, seed: number): void {
  if (count === 0) return;
  const byDir = [...filesByDir()].filter(([, files]) => files.length > 0);
  const rng = new Rng(seed);
  for (let i = byDir.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [byDir[i], byDir[j]] = [byDir[j]!, byDir[i]!];
  }
  const dirs = byDir.slice(0, count);
  if (dirs.length < count) throw new Error(`only ${dirs.length} directories hold files`);
  dirs.forEach(([dir, files], i) => {
    const victim = join(TREE, files[0]!);
    if (i % 3 === 0) writeFileSync(join(TREE, dir, `restart_new_${seed}_${i}.ts`), 'export {};\n');
    else if (i % 3 === 1) rmSync(victim, { force: true });
    else renameSync(victim, `${victim}.renamed_${seed}`);
  });
}

/** `count` children started at once (persistence on with a fresh home, or off): the wall time until the last answered, and their answers. */
async function together(count: number, persist: boolean): Promise<{ wallMs: number; answers: ChildAnswer[] }> {
  const home = persist ? mkdtempSync(join(tmpdir(), 'natives-together-')) : null;
  const t0 = performance.now();
  const one = () => new Promise<ChildAnswer>((resolve, reject) => {
    const proc = spawn(process.execPath, [CHILD, TREE], { env: childEnv(home), stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk) => (out += chunk));
    proc.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)!) as ChildAnswer) : reject(new Error(`child exited ${code}`))));
  });
  const answers = await Promise.all(Array.from({ length: count }, one));
  const wallMs = performance.now() - t0;
  if (home) rmSync(home, { recursive: true, force: true });
  return { wallMs, answers };
}

async function main(): Promise<void> {
  console.log(`# restart bench: ${TREE}, ${ROUNDS} rounds, changes ${CHANGES.join(', ')}`);
  const rows: Record<string, unknown>[] = [];
  for (const [stage, count] of CHANGES.entries()) {
    await sleep(QUIET_MS);
    const home = mkdtempSync(join(tmpdir(), 'natives-restart-'));
    const first = child(home);
    if (first.stats.walks !== 1) throw new Error(`the recording process did not walk: ${JSON.stringify(first.stats)}`);
    const record = join(home, 'scans');
    const kept = `${home}.kept`;
    cpSync(record, kept, { recursive: true });
    change(count, stage + 1);
    await sleep(QUIET_MS);
    const walks: number[] = [];
    const restores: number[] = [];
    const rss = { walk: [] as number[], restore: [] as number[] };
    const ratios: number[] = [];
    let relisted = 0;
    for (let round = 0; round < ROUNDS; round++) {
      rmSync(record, { recursive: true, force: true });
      cpSync(kept, record, { recursive: true });
      const order = round % 2 === 0 ? ['walk', 'restore'] : ['restore', 'walk'];
      const answers: Record<string, ChildAnswer> = {};
      for (const which of order) answers[which] = child(which === 'restore' ? home : null);
      const [walk, restore] = [answers.walk!, answers.restore!];
      if (restore.stats.persist.restored !== 1 || restore.stats.walks !== 0) {
        throw new Error(`round ${round}: the record was not restored: ${JSON.stringify(restore.stats)}`);
      }
      if (walk.hash !== restore.hash || walk.count !== restore.count) {
        throw new Error(`round ${round}: restored ${restore.count} entries (${restore.hash}), a walk ${walk.count} (${walk.hash})`);
      }
      relisted = restore.stats.persist.dirsRelisted;
      walks.push(walk.ms);
      restores.push(restore.ms);
      rss.walk.push(walk.rssMiB);
      rss.restore.push(restore.rssMiB);
      ratios.push(restore.ms / walk.ms);
    }
    const row = {
      changed: count, entries: first.count, dirsRelisted: relisted,
      walkMs: median(walks), restoreMs: median(restores), ratio: median(ratios),
      walkRssMiB: median(rss.walk), restoreRssMiB: median(rss.restore),
    };
    rows.push(row);
    console.log(JSON.stringify(row));
    rmSync(home, { recursive: true, force: true });
    rmSync(kept, { recursive: true, force: true });
  }
  console.log('\n| files changed | entries | directories listed again | walk ms | restore ms | restore / walk (paired) | resident MiB, walked / restored |');
  console.log('|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of rows) {
    const f = (x: unknown) => (typeof x === 'number' ? (Number.isInteger(x) ? String(x) : x.toFixed(2)) : String(x));
    console.log(`| ${f(r.changed)} | ${f(r.entries)} | ${f(r.dirsRelisted)} | ${f(r.walkMs)} | ${f(r.restoreMs)} | ${f(r.ratio)}x | ${f(r.walkRssMiB)} / ${f(r.restoreRssMiB)} |`);
  }
  const started: Record<string, unknown>[] = [];
  if (TOGETHER > 0) {
    console.log(`\n| ${TOGETHER} processes at once | wall ms until the last answered | walks | slowest first answer ms | resident MiB, median |`);
    console.log('|---|--:|--:|--:|--:|');
    for (let round = 0; round < ROUNDS; round++) {
      for (const persist of round % 2 === 0 ? [true, false] : [false, true]) {
        await sleep(QUIET_MS);
        const { wallMs, answers } = await together(TOGETHER, persist);
        const hashes = new Set(answers.map((a) => a.hash));
        if (hashes.size !== 1) throw new Error(`processes at once disagree: ${[...hashes].join(', ')}`);
        const row = {
          persist, wallMs, walks: answers.reduce((n, a) => n + a.stats.walks, 0),
          slowestMs: Math.max(...answers.map((a) => a.ms)), rssMiB: median(answers.map((a) => a.rssMiB)),
        };
        started.push(row);
        console.log(`| ${persist ? 'persisted (one lists, the others restore)' : 'without persistence (each walks)'} | ${wallMs.toFixed(0)} | ${row.walks} | ${row.slowestMs.toFixed(0)} | ${row.rssMiB.toFixed(0)} |`);
      }
    }
  }
  if (OUT) {
    mkdirSync(dirname(resolve(OUT)), { recursive: true });
    writeFileSync(OUT, JSON.stringify({ tree: TREE, rounds: ROUNDS, rows, together: started }, null, 2));
  }
}

await main();
