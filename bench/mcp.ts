/**
 * mcp.ts: the natives MCP server beside `@modelcontextprotocol/server-filesystem`, both driven by
 * the official SDK client over stdio, as an agent's client drives them.
 *
 *   bun bench/mcp.ts hostile            # the hostile cases, one row of facts per case and server
 *   bun bench/mcp.ts speed [--rounds N] # find/glob/grep round trips on the real trees, against
 *                                       # server-filesystem's search_files and a spawned rg
 *
 * Needs bench/setup.sh (the peer server comes from bench/bun.lock; rg from bench/.tools or PATH) and,
 * for `speed`, the real trees (bench/real-trees.ts). Prints markdown tables; asserts nothing of the
 * peer (facts only) and exits non-zero only when natives let a byte through or the work compared is
 * not the same.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { REAL_TREES, treesDir } from './real-trees.ts';

const here = dirname(fileURLToPath(import.meta.url));
const NATIVES = ['bun', join(here, '..', 'packages', 'mcp', 'src', 'cli.ts')];
const PEER = ['node', join(here, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js')];
/** A call not answered in this time is recorded as hanging. */
const HANG_MS = 3000;

/** One server under test: how to start it and how its tools are called. */
interface Contender {
  name: string;
  start(root: string): Promise<Client>;
  read(client: Client, path: string): Promise<Outcome>;
  write(client: Client, path: string, content: string): Promise<Outcome>;
  edit(client: Client, path: string, oldText: string, newText: string): Promise<Outcome>;
}

/** What a call came to: answered (with its text), refused, or no answer within {@link HANG_MS}. */
type Outcome = { kind: 'ok' | 'error'; text: string } | { kind: 'hang' };

async function connect(command: string[], args: string[]): Promise<Client> {
  const client = new Client({ name: 'natives-bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: command[0]!, args: [...command.slice(1), ...args], stderr: 'ignore' }));
  return client;
}

async function outcome(client: Client, name: string, args: Record<string, unknown>): Promise<Outcome> {
  try {
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout: HANG_MS });
    const text = (result.content as { text?: string }[])[0]?.text ?? '';
    return { kind: result.isError ? 'error' : 'ok', text };
  } catch (error) {
    if (String(error).includes('timed out')) return { kind: 'hang' };
    return { kind: 'error', text: String(error) };
  }
}

const natives: Contender = {
  name: 'natives',
  start: (root) => connect(NATIVES, ['--root', root]),
  read: (client, path) => outcome(client, 'read', { path }),
  write: (client, path, content) => outcome(client, 'write', { path, content }),
  edit: (client, path, oldText, newText) => outcome(client, 'edit', { path, oldText, newText }),
};

const peer: Contender = {
  name: 'server-filesystem',
  start: (root) => connect(PEER, [root]),
  read: (client, path) => outcome(client, 'read_text_file', { path }),
  write: (client, path, content) => outcome(client, 'write_file', { path, content }),
  edit: (client, path, oldText, newText) => outcome(client, 'edit_file', { path, edits: [{ oldText, newText }] }),
};

const SECRET = 'SECRET OUTSIDE BYTES\n';

/** A fresh `base` with `ws` (the root), `outside` and `ws-evil`. */
function hostileTree(): { base: string; ws: string; outside: string } {
  const base = fs.realpathSync(fs.mkdtempSync(join(tmpdir(), 'natives-bench-mcp-')));
  for (const dir of ['ws', 'outside', 'ws-evil']) fs.mkdirSync(join(base, dir));
  fs.writeFileSync(join(base, 'outside', 'secret.txt'), SECRET);
  fs.writeFileSync(join(base, 'ws-evil', 'evil.txt'), SECRET);
  return { base, ws: join(base, 'ws'), outside: join(base, 'outside') };
}

/** Files in `outside` and `ws-evil` beyond the ones made, and whether their bytes are intact. */
function outsideState(base: string): string {
  const extra = ['outside', 'ws-evil'].flatMap((dir) => fs.readdirSync(join(base, dir)).filter((name) => !['secret.txt', 'evil.txt'].includes(name)));
  const intact = fs.readFileSync(join(base, 'outside', 'secret.txt'), 'utf8') === SECRET;
  return `${extra.length} files created outside${intact ? '' : ', outside file changed'}`;
}

function describe(result: Outcome): string {
  if (result.kind === 'hang') return `no answer in ${HANG_MS / 1000} s`;
  const leaked = result.kind === 'ok' && result.text.includes('SECRET OUTSIDE') ? ' (outside bytes returned)' : '';
  return `${result.kind === 'ok' ? 'answered' : 'refused'}${leaked}`;
}

/** One hostile case: set up in `ws`, run against a contender, describe what happened. */
interface HostileCase {
  name: string;
  run(contender: Contender, client: Client, tree: ReturnType<typeof hostileTree>): Promise<string>;
}

const HOSTILE: HostileCase[] = [
  {
    name: 'read / write through a symlink to an outside file',
    async run(c, client, { ws, base }) {
      fs.symlinkSync('../outside/secret.txt', join(ws, 'link'));
      const read = describe(await c.read(client, join(ws, 'link')));
      const write = describe(await c.write(client, join(ws, 'link'), 'x'));
      return `read: ${read}; write: ${write}; ${outsideState(base)}`;
    },
  },
  {
    name: 'a chain of links (a → b → dir link → outside file)',
    async run(c, client, { ws, base }) {
      fs.symlinkSync('../outside', join(ws, 'dir'));
      fs.symlinkSync('dir/secret.txt', join(ws, 'b'));
      fs.symlinkSync('b', join(ws, 'a'));
      return `read: ${describe(await c.read(client, join(ws, 'a')))}; write: ${describe(await c.write(client, join(ws, 'a'), 'x'))}; ${outsideState(base)}`;
    },
  },
  {
    name: 'a dangling link through an in-root link to outside, written',
    async run(c, client, { ws, base }) {
      fs.symlinkSync('../outside', join(ws, 'hop'));
      fs.symlinkSync('hop/created.txt', join(ws, 'dangling'));
      return `write: ${describe(await c.write(client, join(ws, 'dangling'), 'x'))}; ${outsideState(base)}`;
    },
  },
  {
    name: '`ws-evil` beside `ws` (absolute path)',
    async run(c, client, { base }) {
      const evil = join(base, 'ws-evil', 'evil.txt');
      return `read: ${describe(await c.read(client, evil))}; write: ${describe(await c.write(client, join(base, 'ws-evil', 'new.txt'), 'x'))}; ${outsideState(base)}`;
    },
  },
  { name: 'a directory swapped for a link to outside during 1,000 reads and 1,000 writes', run: swapRace },
  {
    name: 'a hard link to an outside file: read, write',
    async run(c, client, { ws, base, outside }) {
      fs.linkSync(join(outside, 'secret.txt'), join(ws, 'hard.txt'));
      // Reading it returns the file's bytes by natives' stated policy (README: a hard link is the file itself).
      const read = describe(await c.read(client, join(ws, 'hard.txt'))).replace('(outside bytes returned)', "(the linked file's bytes)");
      return `read: ${read}; write: ${describe(await c.write(client, join(ws, 'hard.txt'), 'x'))}; ${outsideState(base)}`;
    },
  },
  {
    name: 'four FIFO reads at once, then a normal read',
    async run(c, client, { ws }) {
      spawnSync('mkfifo', [join(ws, 'pipe')]);
      fs.writeFileSync(join(ws, 'plain.txt'), 'plain\n');
      const fifo = await Promise.all(Array.from({ length: 4 }, () => c.read(client, join(ws, 'pipe'))));
      const after = await c.read(client, join(ws, 'plain.txt'));
      return `FIFO reads: ${[...new Set(fifo.map(describe))].join(', ')}; the read after: ${describe(after)}`;
    },
  },
  {
    name: 'a FIFO edited / written',
    async run(c, client, { ws }) {
      spawnSync('mkfifo', [join(ws, 'pipe')]);
      const edit = describe(await c.edit(client, join(ws, 'pipe'), 'a', 'b'));
      const write = describe(await c.write(client, join(ws, 'pipe'), 'x'));
      return `edit: ${edit}; write: ${write}; still a FIFO: ${fs.lstatSync(join(ws, 'pipe')).isFIFO()}`;
    },
  },
  bytesCase('a Latin-1 file edited (`café = 1` → `= 2`)', Buffer.from('caf\xe9 = 1\n', 'latin1'), Buffer.from('caf\xe9 = 2\n', 'latin1')),
  bytesCase('a CRLF file edited', Buffer.from('a = 1\r\nb = 0\r\n'), Buffer.from('a = 2\r\nb = 0\r\n')),
  bytesCase('a UTF-8 BOM file edited', Buffer.from('\ufeffa = 1\n'), Buffer.from('\ufeffa = 2\n')),
  {
    name: 'a 0444 file written / edited',
    async run(c, client, { ws }) {
      const file = join(ws, 'ro.txt');
      fs.writeFileSync(file, 'a = 1\n');
      fs.chmodSync(file, 0o444);
      const write = describe(await c.write(client, file, 'x'));
      const edit = describe(await c.edit(client, file, '= 1', '= 2'));
      return `write: ${write}; edit: ${edit}; contents ${fs.readFileSync(file, 'utf8') === 'a = 1\n' ? 'unchanged' : 'changed'}, mode ${(fs.statSync(file).mode & 0o777).toString(8)}`;
    },
  },
  {
    name: 'a 0755 file edited',
    async run(c, client, { ws }) {
      const file = join(ws, 'run.sh');
      fs.writeFileSync(file, 'a = 1\n');
      fs.chmodSync(file, 0o755);
      const edit = describe(await c.edit(client, file, '= 1', '= 2'));
      return `edit: ${edit}; mode after: ${(fs.statSync(file).mode & 0o777).toString(8)}`;
    },
  },
];

function bytesCase(name: string, before: Buffer, after: Buffer): HostileCase {
  return {
    name,
    async run(c, client, { ws }) {
      const file = join(ws, 'f.txt');
      fs.writeFileSync(file, before);
      const edit = describe(await c.edit(client, file, '= 1', '= 2'));
      const now = fs.readFileSync(file);
      return `edit: ${edit}; bytes ${now.equals(after) ? 'as expected (only the edit changed)' : `changed otherwise, now (as UTF-8): ${JSON.stringify(now.toString('utf8'))}`}`;
    },
  };
}

/** Another process swaps `ws/sub` for a link to outside and back while 1,000 reads and 1,000 writes run. */
async function swapRace(c: Contender, client: Client, { ws, base, outside }: ReturnType<typeof hostileTree>): Promise<string> {
  fs.mkdirSync(join(ws, 'sub'));
  fs.writeFileSync(join(outside, 'secret.txt'), SECRET);
  fs.writeFileSync(join(ws, 'sub', 'secret.txt'), 'inside\n');
  const stop = join(base, 'stop');
  const swapper = Bun.spawn(['node', join(here, '..', 'tests', 'installed', 'mcp-swapper.mjs'), join(ws, 'sub'), outside, stop], { stdout: 'pipe' });
  let leaked = 0;
  let reads = 0;
  let writes = 0;
  await Promise.all(
    Array.from({ length: 8 }, async (_, lane) => {
      for (let i = 0; i < 125; i++) {
        const read = await c.read(client, join(ws, 'sub', 'secret.txt'));
        reads++;
        if (read.kind === 'ok' && read.text.includes('SECRET OUTSIDE')) leaked++;
        await c.write(client, join(ws, 'sub', `w-${lane}-${i}.txt`), 'x');
        writes++;
      }
    }),
  );
  fs.writeFileSync(stop, '');
  await swapper.exited;
  const landed = fs.readdirSync(outside).filter((name) => name.startsWith('w-')).length;
  return `${reads} reads: ${leaked} returned outside bytes; ${writes} writes: ${landed} landed outside`;
}

async function hostile(): Promise<boolean> {
  console.log('| case | natives | server-filesystem |\n|---|---|---|');
  let safe = true;
  for (const kase of HOSTILE) {
    const cells: string[] = [];
    for (const contender of [natives, peer]) {
      const tree = hostileTree();
      const client = await contender.start(tree.ws);
      try {
        cells.push(await kase.run(contender, client, tree));
      } finally {
        await client.close().catch(() => {});
        fs.rmSync(tree.base, { recursive: true, force: true });
      }
    }
    if (/returned outside bytes|[1-9]\d* (files created|landed) outside|\(outside bytes returned\)|outside file changed/.test(cells[0]!.replace(/\b0 returned outside bytes/, ''))) safe = false;
    console.log(`| ${kase.name} | ${cells[0]} | ${cells[1]} |`);
  }
  return safe;
}

/** Median of `rounds` round trips of `call`, after one call that fills caches (timed as `first`). */
async function timed(rounds: number, call: () => Promise<unknown>): Promise<{ first: number; median: number }> {
  let start = performance.now();
  await call();
  const first = performance.now() - start;
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    start = performance.now();
    await call();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { first, median: times[Math.floor(times.length / 2)]! };
}

function rg(args: string[], cwd: string): { count: number; ms: number } {
  const start = performance.now();
  const run = spawnSync(process.env.RG ?? 'rg', args, { cwd, maxBuffer: 1 << 30, encoding: 'utf8' });
  const ms = performance.now() - start;
  return { count: run.stdout.split('\n').filter((line) => line !== '').length, ms };
}

async function speed(rounds: number): Promise<void> {
  console.log('| tree | query | contender | files or matches | first ms | median ms |\n|---|---|---|--:|--:|--:|');
  for (const tree of REAL_TREES.filter((name) => name !== 'mixed')) {
    const dir = join(treesDir(), tree);
    if (!fs.existsSync(dir)) {
      console.log(`| ${tree} | (not built: bun bench/real-trees.ts --only ${tree}) | | | | |`);
      continue;
    }
    const ours = await natives.start(dir);
    try {
      await speedRows(tree, dir, ours, rounds);
    } finally {
      await ours.close();
    }
  }
}

/** The glob, grep and fuzzy queries of a tree: npm's files all lie in a node_modules, which natives searches only when asked. */
function queries(tree: string) {
  const [ext, word, prefix] = tree === 'vendor' ? ['rs', 'unsafe', ''] : ['js', 'prototype', 'node_modules/'];
  const fuzzy = tree === 'vendor' ? 'lib' : 'node_modules react index';
  return { ext, word, fuzzy, glob: `${prefix}**/*.${ext}`, grepGlob: prefix ? `${prefix}**` : undefined };
}

/**
 * natives' rows first, then rg, then server-filesystem: the peer walks the tree with Node's
 * readdir, after which natives' watched cache answers slowly (see README), so its rows come after
 * natives' and a last natives row shows the effect.
 */
async function speedRows(tree: string, dir: string, ours: Client, rounds: number): Promise<void> {
  const row = (query: string, who: string, count: number | string, t: { first: number; median: number }) =>
    console.log(`| ${tree} | ${query} | ${who} | ${count} | ${t.first.toFixed(1)} | ${t.median.toFixed(1)} |`);
  const q = queries(tree);
  let files = 0;
  const globCall = async () => {
    const r = await ours.callTool({ name: 'glob', arguments: { pattern: q.glob, limit: 1_000_000 } });
    files = (r.structuredContent as { files: string[] }).files.length;
  };
  const globTime = await timed(rounds, globCall);
  row(`glob ${q.glob}: every file listed`, 'natives glob', files, globTime);
  let withMatch = 0;
  const grepArgs = { pattern: q.word, literal: true, mode: 'filesWithMatches', maxCount: 1_000_000, ...(q.grepGlob ? { glob: q.grepGlob } : {}) };
  row(`grep -F ${q.word}: every file with a match listed`, 'natives grep', '', await timed(rounds, async () => {
    const r = await ours.callTool({ name: 'grep', arguments: grepArgs });
    withMatch = (r.structuredContent as { results: number }).results;
  }));
  console.log(`| | | (files listed) | ${withMatch} | | |`);
  row(`find (fuzzy) "${q.fuzzy}": best 50 of every entry`, 'natives find', 50, await timed(rounds, () => ours.callTool({ name: 'find', arguments: { query: q.fuzzy } })));
  const rgFiles = ['--files', '--hidden', '--no-ignore', '-g', `*.${q.ext}`, '-g', '!.git'];
  row(`rg ${rgFiles.join(' ')} (spawned)`, 'rg', rg(rgFiles, dir).count, await timedSync(rounds, () => rg(rgFiles, dir)));
  const rgGrep = ['-l', '--hidden', '--no-ignore', '-g', '!.git', '-F', q.word];
  row(`rg ${rgGrep.join(' ')} (spawned)`, 'rg', rg(rgGrep, dir).count, await timedSync(rounds, () => rg(rgGrep, dir)));
  const theirs = await peer.start(dir);
  try {
    let lines = 0;
    row(`search_files **/*.${q.ext}`, 'server-filesystem', '', await timed(rounds, async () => {
      const r = await theirs.callTool({ name: 'search_files', arguments: { path: dir, pattern: `**/*.${q.ext}` } }, undefined, { timeout: 600_000 });
      lines = (r.content as { text: string }[])[0]!.text.split('\n').length;
    }));
    console.log(`| | | (paths listed) | ${lines} | | |`);
  } finally {
    await theirs.close();
  }
  row(`glob ${q.glob}, after server-filesystem walked the tree`, 'natives glob', files, await timed(rounds, globCall));
}

async function timedSync(rounds: number, call: () => unknown): Promise<{ first: number; median: number }> {
  return timed(rounds, async () => call());
}

const [mode = 'hostile', ...rest] = process.argv.slice(2);
const rounds = Number(rest[rest.indexOf('--rounds') + 1] ?? 5) || 5;
if (mode === 'speed') await speed(rounds);
else if (!(await hostile())) {
  console.error('natives let a byte through: see the table');
  process.exit(1);
}
process.exit(0);
