/**
 * One index per root for every process (`FS_SCAN_CACHE_SHARED=1`), end to
 * end: eight agent processes (Bun and Node 20) on one tree. One of them
 * walks and watches it; the others read its list. After every batch of
 * changes made from outside (no invalidation), each answers a cached glob,
 * grep and fuzzyFind exactly as uncached calls do. The indexer SIGKILLed
 * while a batch is being answered: another process takes over within its
 * call, and no answer is stale or late.
 */
import { afterEach, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { childCommand } from './support/child.ts';
import { gitInit, removeDir, tempDir, writeTree } from './support/fs.ts';

interface Answer {
  mismatches: string[];
  walks: number;
  stats: {
    watch: { watches: number };
    shared: { enabled: boolean; indexing: number; reading: number; listsReceived: number; unchanged: number; takeovers: number; alone: number };
  };
}

/** A batch answered later than this is a hang. */
const BATCH_DEADLINE_MS = 30_000;

const dirs: string[] = [];
const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) removeDir(dir);
});

/** A running agent process, answering a line of JSON per request. */
class Agent {
  readonly child: ReturnType<typeof Bun.spawn<'pipe', 'pipe', 'inherit'>>;
  private readonly lines: AsyncIterator<string>;

  constructor(tree: string, home: string, node: boolean) {
    const { argv, cwd } = childCommand('shared-agent.ts', [tree, home], { node });
    this.child = Bun.spawn(argv, { cwd, env: process.env, stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' });
    this.lines = readLines(this.child.stdout);
  }

  async answer(): Promise<Answer> {
    this.child.stdin.write('answer\n');
    this.child.stdin.flush();
    const line = await this.lines.next();
    if (line.done) throw new Error('the agent exited');
    return JSON.parse(line.value) as Answer;
  }
}

async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending = '';
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    pending += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = pending.indexOf('\n')) >= 0) {
      yield pending.slice(0, end);
      pending = pending.slice(end + 1);
    }
  }
}

async function batch(of: readonly Agent[]): Promise<Answer[]> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`a batch took over ${BATCH_DEADLINE_MS} ms`)), BATCH_DEADLINE_MS);
  });
  try {
    return await Promise.race([Promise.all(of.map((agent) => agent.answer())), late]);
  } finally {
    clearTimeout(timer);
  }
}

const sum = (answers: readonly Answer[], count: (a: Answer) => number) => answers.reduce((total, a) => total + count(a), 0);

test('eight processes on one tree: one walks and watches, all answer every change exactly, and a SIGKILLed indexer is taken over', async () => {
  const tree = tempDir('shared-tree');
  const home = tempDir('shared-home');
  dirs.push(tree, home);
  gitInit(tree);
  writeTree(tree, {
    '.gitignore': 'ignored/\n',
    'src/a.ts': 'const needle = 1;\n',
    'src/deep/b.ts': 'needle\n',
    'ignored/e.ts': 'needle\n',
    'node_modules/pkg/index.js': 'needle\n',
  });
  for (let i = 0; i < 8; i++) agents.push(new Agent(tree, home, i === 7));

  // The first agent indexes; the seven others start at once and read.
  const first = await batch(agents.slice(0, 1));
  const rest = await batch(agents.slice(1));
  const opening = [...first, ...rest];
  for (const answer of opening) expect(answer.mismatches).toEqual([]);
  expect(first[0]!.stats.shared).toMatchObject({ enabled: true, indexing: 1, reading: 0 });
  expect(first[0]!.walks).toBe(1);
  expect(sum(rest, (a) => a.walks)).toBe(0);
  expect(rest.every((a) => a.stats.shared.reading === 1 && a.stats.shared.indexing === 0)).toBe(true);
  // One set of watches on the machine: the indexer's.
  expect(first[0]!.stats.watch.watches).toBeGreaterThan(0);
  expect(sum(rest, (a) => a.stats.watch.watches)).toBe(0);

  const changes: (() => void)[] = [
    () => fs.writeFileSync(path.join(tree, 'src/deep/new.ts'), 'needle again\n'),
    () => fs.rmSync(path.join(tree, 'src/a.ts')),
    () => fs.renameSync(path.join(tree, 'src/deep'), path.join(tree, 'src/moved')),
    () => fs.writeFileSync(path.join(tree, '.gitignore'), 'ignored/\nsrc/moved/new.ts\n'),
  ];
  for (const change of changes) {
    change();
    const answers = await batch(agents);
    for (const answer of answers) expect(answer.mismatches).toEqual([]);
    expect(sum(answers, (a) => a.stats.shared.indexing)).toBe(1);
  }

  // Kill the indexer while the seven others are answering a change.
  const [indexer, ...readers] = agents;
  fs.writeFileSync(path.join(tree, 'src/while-killed.ts'), 'needle\n');
  const answering = batch(readers);
  indexer!.child.kill('SIGKILL');
  const afterKill = await answering;
  for (const answer of afterKill) expect(answer.mismatches).toEqual([]);
  expect(sum(afterKill, (a) => a.stats.shared.indexing)).toBe(1);
  expect(sum(afterKill, (a) => a.stats.shared.takeovers)).toBe(1);

  fs.mkdirSync(path.join(tree, 'src/later'));
  fs.writeFileSync(path.join(tree, 'src/later/c.ts'), 'needle\n');
  const last = await batch(readers);
  for (const answer of last) expect(answer.mismatches).toEqual([]);
  expect(sum(last, (a) => a.stats.shared.indexing)).toBe(1);
  expect(sum(last, (a) => a.stats.shared.alone)).toBe(0);
  const index = fs.statSync(path.join(home, 'index'));
  expect(index.mode & 0o777).toBe(0o700);
}, 180_000);
