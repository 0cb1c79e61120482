/**
 * The agent tools on a hostile tree: symlink chains that lead out of cwd, a
 * directory swapped for a link while writes run, FIFOs, sockets, devices,
 * huge and non-UTF-8 files, read-only and hard-linked files. Every case
 * answers with a clear tool error in under a second, and a folder outside
 * cwd is enumerated before and after to prove nothing there was created or
 * changed.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { type Tool, type ToolContext, type ToolResult, editTool, findTool, grepTool, readTool, writeTool } from '../packages/coding-agent/src/index.ts';
import { expectError, expectOk } from './support/agent.ts';
import { removeDir, run, tempDir, writeTree } from './support/fs.ts';

let dir = '';
let cwd = '';
let outside = '';
let ctx: ToolContext;

beforeEach(() => {
  dir = tempDir('agent-hostile');
  cwd = path.join(dir, 'cwd');
  outside = path.join(dir, 'outside');
  writeTree(cwd, { 'in.txt': 'inside\n', 'd/e/deep.txt': 'deep\n' });
  writeTree(outside, { 'f': 'outside\n' });
  ctx = { cwd };
});
afterEach(() => removeDir(dir));

/** Every entry under `root` (links not followed) with its type and contents or link target. */
function snapshot(root: string, rel = ''): string[] {
  const out: string[] = [];
  for (const name of fs.readdirSync(path.join(root, rel))) {
    const entry = path.join(rel, name);
    const full = path.join(root, entry);
    const stat = fs.lstatSync(full);
    if (stat.isDirectory()) out.push(...snapshot(root, entry));
    const what = stat.isSymbolicLink() ? `-> ${fs.readlinkSync(full)}` : stat.isFile() ? fs.readFileSync(full, 'latin1') : 'dir';
    out.push(`${entry} ${stat.mode.toString(8)} ${what}`);
  }
  return out.sort();
}

/** Create `links` (name -> target; `@` stands for the outside folder). */
function link(links: Record<string, string>): void {
  for (const [name, target] of Object.entries(links)) {
    const at = path.join(cwd, name);
    fs.mkdirSync(path.dirname(at), { recursive: true });
    fs.symlinkSync(target.replace('@', outside), at);
  }
}

const hashlineAnchors = async (rel: string) =>
  expectOk(await readTool.execute({ path: rel }, ctx))
    .split('\n')
    .map((line) => line.slice(0, line.indexOf('|')).trim());

/** Each way a tool can write a path a model chose. */
const writers: Record<string, (rel: string) => Promise<ToolResult>> = {
  write: (rel) => writeTool.execute({ path: rel, content: 'x\n' }, ctx),
  'edit replace': (rel) => editTool.execute({ path: rel, oldText: 'outside', newText: 'changed' }, ctx),
  'edit hashline': async (rel) => editTool.execute({ mode: 'hashline', path: rel, edits: [{ op: 'replace', anchor: '1:0000', text: 'changed' }] }, ctx),
  'patch create': (rel) => editTool.execute({ patch: `--- /dev/null\n+++ b/${rel}\n@@ -0,0 +1 @@\n+x\n` }, ctx),
  'patch modify': (rel) => editTool.execute({ patch: `--- a/${rel}\n+++ b/${rel}\n@@ -1 +1 @@\n-outside\n+changed\n` }, ctx),
  'patch rename target': (rel) =>
    editTool.execute({ patch: `diff --git a/in.txt b/${rel}\nsimilarity index 100%\nrename from in.txt\nrename to ${rel}\n` }, ctx),
};

/** Paths that lead out of cwd, each with the links that make it do so. */
const escapes: Record<string, { links: Record<string, string>; path: string }> = {
  'direct link out': { links: { out: '@' }, path: 'out/f' },
  'link to link out': { links: { l1: 'l2', l2: '@/f' }, path: 'l1' },
  'dangling link through an in-cwd link': { links: { sub: '@', a: 'sub/new' }, path: 'a' },
  'link whose target uses ..': { links: { 'd/up': '../../outside/f' }, path: 'd/up' },
  '.. after a link is applied to the real directory': { links: { deep: '@/..' }, path: 'deep/outside/f' },
};

describe('no tool writes outside cwd through links', () => {
  for (const [writer, write] of Object.entries(writers)) {
    for (const [name, escape] of Object.entries(escapes)) {
      test(`${writer}: ${name}`, async () => {
        link(escape.links);
        const before = snapshot(outside);
        const inside = snapshot(cwd);
        const started = performance.now();
        const result = await write(escape.path);
        expect(performance.now() - started).toBeLessThan(1000);
        expectError(result, 'OUTSIDE_CWD');
        expect(snapshot(outside)).toEqual(before);
        expect(snapshot(cwd)).toEqual(inside);
      });
    }
  }

  test('a link that stays inside is followed (write, edit and patch land on its target)', async () => {
    link({ 'd/e/up': '../../in.txt', dang: 'd/new.txt' });
    expectOk(await editTool.execute({ path: 'd/e/up', oldText: 'inside', newText: 'edited' }, ctx));
    expect(fs.readFileSync(path.join(cwd, 'in.txt'), 'utf8')).toBe('edited\n');
    expectOk(await writeTool.execute({ path: 'dang', content: 'made\n' }, ctx));
    expect(fs.readFileSync(path.join(cwd, 'd/new.txt'), 'utf8')).toBe('made\n');
    expect(fs.lstatSync(path.join(cwd, 'dang')).isSymbolicLink()).toBe(true);
  });

  test('a directory swapped for a link out while writes run: every write lands inside or fails', async () => {
    // Another process swaps the names `d` (a real directory) and `dlink` (a link to the outside folder)
    // as fast as it can, atomically (renameat2 RENAME_EXCHANGE), so `d` is always one or the other.
    fs.symlinkSync(outside, path.join(cwd, 'dlink'));
    const exchange = [
      'import ctypes, time',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'end = time.time() + 4',
      'while time.time() < end: libc.renameat2(-100, b"d", -100, b"dlink", 2)',
    ].join('\n');
    const swapper = Bun.spawn(['python3', '-c', exchange], { cwd, stdout: 'ignore', stderr: 'inherit' });
    const before = snapshot(outside);
    // Start once the swapper is flipping, and write for a fixed time so the two surely overlap.
    while (!fs.lstatSync(path.join(cwd, 'd'), { throwIfNoEntry: false })?.isSymbolicLink()) await Bun.sleep(1);
    const codes = new Map<string, number>();
    for (let i = 0, end = performance.now() + 1500; performance.now() < end; i++) {
      const result = await writeTool.execute({ path: `d/e/w${i}.txt`, content: `${i}\n` }, ctx);
      const code = result.isError ? String(result.details.code) : 'ok';
      codes.set(code, (codes.get(code) ?? 0) + 1);
      if (result.isError) expect(['OUTSIDE_CWD', 'STALE']).toContain(code);
    }
    swapper.kill();
    await swapper.exited;
    expect(snapshot(outside)).toEqual(before);
    // Both sides of the race were hit: writes landed inside, and writes met the link and were refused.
    expect(codes.get('ok') ?? 0).toBeGreaterThan(0);
    expect(codes.get('OUTSIDE_CWD') ?? 0).toBeGreaterThan(0);
  });
});

describe('bad input answers with a clear tool error in under a second', () => {
  let server: net.Server | undefined;
  beforeEach(async () => {
    run('mkfifo', [path.join(cwd, 'pipe')]);
    server = net.createServer();
    await new Promise<void>((resolve) => server!.listen(path.join(cwd, 'sock'), resolve));
    fs.mkdirSync(path.join(cwd, 'dir'));
    fs.symlinkSync('nowhere', path.join(cwd, 'dangling'));
    fs.closeSync(fs.openSync(path.join(cwd, 'big'), 'w'));
    fs.truncateSync(path.join(cwd, 'big'), 2 ** 31);
    fs.writeFileSync(path.join(cwd, 'latin1.txt'), Buffer.from('caf\xe9 cr\xe8me\n', 'latin1'));
    fs.writeFileSync(Buffer.from(path.join(cwd, 'na\xefve.txt'), 'latin1'), 'content\n');
  });
  afterEach(() => server?.close());

  const table: [string, Tool<any>, Record<string, unknown>, string][] = [
    ['read FIFO', readTool, { path: 'pipe' }, 'NOT_REGULAR'],
    ['read socket', readTool, { path: 'sock' }, 'NOT_REGULAR'],
    ['read /dev/zero', readTool, { path: '/dev/zero' }, 'NOT_REGULAR'],
    ['read directory', readTool, { path: 'dir' }, 'EISDIR'],
    ['read dangling link', readTool, { path: 'dangling' }, 'ENOENT'],
    ['read 2 GiB file', readTool, { path: 'big' }, 'BINARY'],
    ['read a lossy copy of a non-UTF-8 name', readTool, { path: 'na\ufffdve.txt' }, 'LOSSY_NAME'],
    ['write a lossy copy of a non-UTF-8 name', writeTool, { path: 'na\ufffdve.txt', content: 'x' }, 'LOSSY_NAME'],
    ['edit FIFO', editTool, { path: 'pipe', oldText: 'a', newText: 'b' }, 'NOT_REGULAR'],
    ['edit socket', editTool, { path: 'sock', oldText: 'a', newText: 'b' }, 'NOT_REGULAR'],
    ['edit /dev/zero', editTool, { path: '/dev/zero', oldText: 'a', newText: 'b' }, 'OUTSIDE_CWD'],
    ['edit directory', editTool, { path: 'dir', oldText: 'a', newText: 'b' }, 'EISDIR'],
    ['edit dangling link', editTool, { path: 'dangling', oldText: 'a', newText: 'b' }, 'ENOENT'],
    ['edit 2 GiB file', editTool, { path: 'big', oldText: 'a', newText: 'b' }, 'TOO_LARGE'],
    ['patch FIFO', editTool, { patch: '--- a/pipe\n+++ b/pipe\n@@ -1 +1 @@\n-a\n+b\n' }, 'NOT_REGULAR'],
    ['write FIFO', writeTool, { path: 'pipe', content: 'x' }, 'NOT_REGULAR'],
    ['write socket', writeTool, { path: 'sock', content: 'x' }, 'NOT_REGULAR'],
    ['write directory', writeTool, { path: 'dir', content: 'x' }, 'EISDIR'],
    ['grep FIFO', grepTool, { pattern: 'x', path: 'pipe' }, 'NOT_REGULAR'],
    ['grep socket', grepTool, { pattern: 'x', path: 'sock' }, 'NOT_REGULAR'],
    ['grep /dev/zero', grepTool, { pattern: 'x', path: '/dev/zero' }, 'NOT_REGULAR'],
    ['grep dangling link', grepTool, { pattern: 'x', path: 'dangling' }, 'ENOENT'],
    ['find FIFO', findTool, { pattern: '*', path: 'pipe' }, 'ENOTDIR'],
    ['find /dev/zero', findTool, { pattern: '*', path: '/dev/zero' }, 'ENOTDIR'],
    ['find dangling link', findTool, { pattern: '*', path: 'dangling' }, 'ENOENT'],
  ];
  for (const [name, tool, args, code] of table) {
    test(name, async () => {
      const before = snapshot(outside);
      const started = performance.now();
      const result = await tool.execute(args as never, ctx);
      expect(performance.now() - started).toBeLessThan(1000);
      const text = expectError(result, code as never);
      expect(text.length).toBeGreaterThan(10);
      expect(snapshot(outside)).toEqual(before);
    });
  }

  test('the FIFO, socket and device errors name the file type', async () => {
    expect(expectError(await readTool.execute({ path: 'pipe' }, ctx), 'NOT_REGULAR')).toContain('a FIFO');
    expect(expectError(await readTool.execute({ path: 'sock' }, ctx), 'NOT_REGULAR')).toContain('a socket');
    expect(expectError(await readTool.execute({ path: '/dev/zero' }, ctx), 'NOT_REGULAR')).toContain('a character device');
  });

  test('a 2 GiB file is refused by edit naming its size and the limit', async () => {
    expect(expectError(await editTool.execute({ path: 'big', oldText: 'a', newText: 'b' }, ctx), 'TOO_LARGE')).toContain('2147483648 bytes');
  });

  test('grep and find over a tree holding all of it answer without blocking', async () => {
    const started = performance.now();
    expectOk(await grepTool.execute({ pattern: 'content' }, ctx));
    expectOk(await findTool.execute({ pattern: '*' }, ctx));
    expect(performance.now() - started).toBeLessThan(1000);
  });

  test('eight reads of FIFOs at once leave the native worker pool free', async () => {
    for (let i = 0; i < 8; i++) run('mkfifo', [path.join(cwd, `p${i}`)]);
    const started = performance.now();
    const results = await Promise.all([
      ...Array.from({ length: 8 }, (_, i) => readTool.execute({ path: `p${i}` }, ctx)),
      grepTool.execute({ pattern: 'inside' }, ctx),
    ]);
    expect(performance.now() - started).toBeLessThan(1000);
    for (const result of results.slice(0, 8)) expectError(result, 'NOT_REGULAR');
    expect(expectOk(results[8]!)).toContain('in.txt:1:inside');
  });
});

describe('a replace keeps what the file carried, and refuses what it must not replace', () => {
  test('a read-only file is READ_ONLY for write and edit, unchanged', async () => {
    const file = path.join(cwd, 'in.txt');
    fs.chmodSync(file, 0o444);
    expect(expectError(await writeTool.execute({ path: 'in.txt', content: 'x' }, ctx), 'READ_ONLY')).toContain('mode 0444');
    expectError(await editTool.execute({ path: 'in.txt', oldText: 'inside', newText: 'x' }, ctx), 'READ_ONLY');
    expect(fs.readFileSync(file, 'utf8')).toBe('inside\n');
  });

  test('a hard-linked file is HARD_LINKED, and both names keep their contents', async () => {
    fs.linkSync(path.join(cwd, 'in.txt'), path.join(outside, 'same-inode'));
    const before = snapshot(outside);
    expect(expectError(await writeTool.execute({ path: 'in.txt', content: 'x' }, ctx), 'HARD_LINKED')).toContain('2 hard links');
    expectError(await editTool.execute({ path: 'in.txt', oldText: 'inside', newText: 'x' }, ctx), 'HARD_LINKED');
    expect(snapshot(outside)).toEqual(before);
    expect(fs.statSync(path.join(cwd, 'in.txt')).nlink).toBe(2);
  });

  test('edit and write keep mode, owner and group', async () => {
    const file = path.join(cwd, 'in.txt');
    fs.chmodSync(file, 0o640);
    const root = process.getuid?.() === 0;
    if (root) fs.chownSync(file, 1234, 5678);
    expectOk(await editTool.execute({ path: 'in.txt', oldText: 'inside', newText: 'edited' }, ctx));
    expectOk(await writeTool.execute({ path: 'in.txt', content: 'written\n' }, ctx));
    const stat = fs.statSync(file);
    expect(stat.mode & 0o7777).toBe(0o640);
    if (root) expect([stat.uid, stat.gid]).toEqual([1234, 5678]);
    expect(fs.readFileSync(file, 'utf8')).toBe('written\n');
  });
});
