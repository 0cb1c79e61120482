/**
 * One agent process of bench/shared.ts, kept running. Its environment says
 * whether it shares (`FS_SCAN_CACHE_SHARED=1`) or keeps its own watched,
 * persisted cache. For each line on stdin it answers with one line of JSON:
 *
 *   first            the first cached answer: the first 100 of a glob of
 *                    every entry (needs the whole scan); `{ms, count, hash}`,
 *                    the hash over the whole listing (node_modules in),
 *                    taken untimed after it, and `sample`, a file name
 *                    from the middle of the listing;
 *   query <n> <name> n rounds of a cached glob of the name's first six
 *                    characters (`**\/abcdef*`), a cached fuzzyFind of the
 *                    name and a cached grep of a literal found nowhere;
 *                    the median ms of each, with its count;
 *   state            resident MiB, inotify watches held (from /proc), the
 *                    cache's walks and sharing counters.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as readline from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface Api {
  glob(o: { pattern: string; path: string; cache?: boolean; mtime?: boolean; maxResults?: number; includeNodeModules?: boolean }):
    Promise<{ matches: { path: string }[]; totalMatches: number }>;
  fuzzyFind(o: { query: string; path: string; cache?: boolean; maxResults?: number }): Promise<{ matches: { path: string }[]; totalMatches: number }>;
  grep(o: { pattern: string; path: string; cache?: boolean; literal?: boolean }): Promise<{ totalMatches: number }>;
  fsScanCacheStats(): { walks: number; shared: Record<string, unknown>; persist: Record<string, unknown> };
}

const here = fileURLToPath(new URL('.', import.meta.url));
const n = (await import(pathToFileURL(join(here, '..', '..', 'packages', 'natives', 'src', 'index.ts')).href)) as Api;
const [tree, grepFlag] = process.argv.slice(2);
/** `--no-grep`: leave the grep out (a tree whose content does not fit the index reads every file each time). */
const GREP = grepFlag !== '--no-grep';
if (!tree) throw new Error('usage: shared-child.ts <tree>');

/** A literal no file of any bench tree holds. */
const NEVER = 'zqxjkvbw_never_9';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

async function timed<T>(call: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const out = await call();
  return [performance.now() - t0, out];
}

async function first(): Promise<object> {
  const [ms] = await timed(() => n.glob({ pattern: '**/*', path: tree!, cache: true, mtime: false, maxResults: 100 }));
  const all = await n.glob({ pattern: '**/*', path: tree!, cache: true, mtime: false, includeNodeModules: true });
  const hash = createHash('sha256');
  for (const m of all.matches) hash.update(m.path).update('\0');
  // A name to query: the middle file's outside node_modules (which the
  // queries leave out), the same in every process.
  const files = all.matches.filter((m) => /\.[a-z]+$/.test(m.path) && !/(^|\/)node_modules\//.test(m.path));
  const sample = files[files.length >> 1]?.path.split('/').at(-1) ?? '';
  return { ms, count: all.totalMatches, hash: hash.digest('hex'), sample };
}

async function query(rounds: number, name: string): Promise<object> {
  const times = { glob: [] as number[], fuzzy: [] as number[], grep: [] as number[] };
  const counts = { glob: 0, fuzzy: 0, grep: 0 };
  for (let round = 0; round < rounds; round++) {
    const [g, globbed] = await timed(() => n.glob({ pattern: `**/${name.slice(0, 6)}*`, path: tree!, cache: true, mtime: false }));
    const [f, found] = await timed(() => n.fuzzyFind({ query: name, path: tree!, cache: true, maxResults: 100 }));
    const [r, grepped] = GREP
      ? await timed(() => n.grep({ pattern: NEVER, path: tree!, cache: true, literal: true }))
      : [NaN, { totalMatches: NaN }];
    times.glob.push(g);
    times.fuzzy.push(f);
    times.grep.push(r);
    Object.assign(counts, { glob: globbed.totalMatches, fuzzy: found.totalMatches, grep: grepped.totalMatches });
  }
  return { globMs: median(times.glob), fuzzyMs: median(times.fuzzy), grepMs: median(times.grep), counts };
}

function inotifyWatches(): number {
  let watches = 0;
  for (const fd of readdirSync('/proc/self/fdinfo')) {
    try {
      watches += readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8').split('\n').filter((line) => line.startsWith('inotify wd:')).length;
    } catch {
      // Closed meanwhile.
    }
  }
  return watches;
}

function state(): object {
  const stats = n.fsScanCacheStats();
  return { rssMiB: process.memoryUsage().rss / 2 ** 20, watches: inotifyWatches(), walks: stats.walks, shared: stats.shared, persist: stats.persist };
}

const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  const [command = '', ...rest] = line.trim().split(' ');
  const answer = command === 'first' ? await first() : command === 'query' ? await query(Number(rest[0]), rest[1]!) : state();
  console.log(JSON.stringify(answer));
}
