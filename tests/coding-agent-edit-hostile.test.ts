/**
 * The editing side on hostile and careless input: patches whose sections
 * reach one file by two names, a file rewritten behind the tools' back with
 * its mtime put back, paths past PATH_MAX, a patch against millions of
 * identical lines, byte order marks, CRLF/LF/CR line endings (git apply is
 * the oracle), bytes and names that are not UTF-8, a write to `dir/`, a
 * run in a missing directory, and batches killed midway. Work that could
 * block the thread runs in a child with a deadline, so a regression fails
 * instead of stalling the run.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type ToolContext, type ToolResult, editTool, readTool, runTool, writeTool } from '../packages/coding-agent/src/index.ts';
import { type FileChange, applyFileChanges, readFile } from '../packages/natives/src/index.ts';
import { expectError, expectOk } from './support/agent.ts';
import { runScript } from './support/child.ts';
import { removeDir, tempDir, writeTree } from './support/fs.ts';

let dir = '';
let cwd = '';
let ctx: ToolContext;

beforeEach(() => {
  dir = tempDir('agent-edit-hostile');
  cwd = path.join(dir, 'cwd');
  fs.mkdirSync(cwd);
  ctx = { cwd };
});
afterEach(() => removeDir(dir));

const at = (rel: string) => path.join(cwd, rel);
const bytes = (rel: string) => fs.readFileSync(at(rel));
const lines = (...parts: string[]) => parts.join('\n') + '\n';

/** Run `job` (see fixtures/blocking-job.ts) in a child killed after `deadlineMs`. */
async function inChild<T>(job: Record<string, unknown>, deadlineMs: number): Promise<T> {
  const file = path.join(dir, 'job.json');
  fs.writeFileSync(file, JSON.stringify(job));
  const out = await runScript('blocking-job.ts', [file], { deadlineMs });
  if (out.killedAtDeadline) throw new Error(`the job did not answer within ${deadlineMs} ms (killed): ${JSON.stringify(job).slice(0, 200)}`);
  if (out.exitCode !== 0) throw new Error(`the job exited with ${out.exitCode}: ${out.stderr}`);
  return JSON.parse(out.stdout.trim().split('\n').at(-1)!) as T;
}

describe('one file, one name in a patch', () => {
  test('sections for `a` and `dir/../a` (dir a link into sub/) change each file where it is: no content crosses over', async () => {
    writeTree(cwd, { a: 'name=A\ncommon\n', 'sub/a': 'name=S\ncommon\n', 'sub/deep/': '' });
    fs.symlinkSync('sub/deep', at('dir'));
    const patch =
      lines('--- a/a', '+++ b/a', '@@ -1,2 +1,2 @@', ' name=A', '-common', '+common A') +
      lines('--- a/dir/../a', '+++ b/dir/../a', '@@ -2,0 +3,1 @@', '+added below');
    const text = expectOk(await editTool.execute({ patch }, ctx));
    expect(bytes('a').toString()).toBe('name=A\ncommon A\n');
    expect(bytes('sub/a').toString()).toBe('name=S\ncommon\nadded below\n');
    expect(text).toContain('modified dir/../a');
  });

  test('sections for `b` (a link to `a`) and `a` are refused naming both, and nothing changes', async () => {
    writeTree(cwd, { a: 'one\ntwo\n' });
    fs.symlinkSync('a', at('b'));
    const patch = lines('--- a/b', '+++ b/b', '@@ -1 +1 @@', '-one', '+ONE') + lines('--- a/a', '+++ b/a', '@@ -2 +2 @@', '-two', '+TWO');
    const message = expectError(await editTool.execute({ patch }, ctx), 'PATCH_FAILED');
    expect(message).toContain('b and a are one file');
    expect(bytes('a').toString()).toBe('one\ntwo\n');
    expect(fs.lstatSync(at('b')).isSymbolicLink()).toBe(true);
  });
});

describe('a file rewritten behind the tools, its size and mtime put back', () => {
  test('a change expecting the version read is refused (ESTALE) and the other writer keeps its bytes', async () => {
    writeTree(cwd, { f: 'name=A\n', ref: '' });
    const read = await readFile('f', { cwd });
    spawnSync('touch', ['-r', at('f'), at('ref')]);
    const before = fs.statSync(at('f'), { bigint: true });
    // The other writer (cp -p, rsync --inplace -t): same size, in place, the mtime put back.
    // Retried until the clock moved on, so that its status change is visible at all.
    while (fs.statSync(at('f'), { bigint: true }).ctimeNs === before.ctimeNs) {
      await Bun.sleep(5);
      fs.writeFileSync(at('f'), 'name=B\n', { flag: 'r+' });
      spawnSync('touch', ['-r', at('ref'), at('f')]);
    }
    const now = fs.statSync(at('f'), { bigint: true });
    expect([now.size, now.mtimeNs, now.ino]).toEqual([before.size, before.mtimeNs, before.ino]);
    const change: FileChange = { op: 'write', path: 'f', data: 'mine\n', stamp: read.stamp };
    const error = await applyFileChanges([change], { cwd }).then(
      () => undefined,
      (e: unknown) => e as { code: string },
    );
    expect(error?.code).toBe('ESTALE');
    expect(bytes('f').toString()).toBe('name=B\n');
  });
});

describe('paths past PATH_MAX are refused at once, never walked', () => {
  test('write, read and edit of a 4.8 KB and a 20 KB path answer NAME_TOO_LONG and create nothing', async () => {
    for (const levels of [2_400, 10_000]) {
      const rel = 'd/'.repeat(levels) + 'f';
      for (const tool of ['write', 'read', 'edit'] as const) {
        const args = { write: { path: rel, content: 'x' }, read: { path: rel }, edit: { path: rel, oldText: 'x', newText: 'y' } }[tool];
        const result = await inChild<ToolResult>({ kind: 'tool', tool, args, cwd }, 20_000);
        expect(result.details.code).toBe('NAME_TOO_LONG');
        expect(result.text).toContain('4096');
      }
    }
    expect(fs.readdirSync(cwd)).toEqual([]);
  }, 130_000);

  test('invalidating the scan cache for such a path answers at once, its directories there or not', async () => {
    // 2,300 real directories (a path of 4.6 KB), each made inside the last one's handle: no call takes the whole path.
    const deep = (script: string) => expect(spawnSync('python3', ['-c', script], { cwd }).status).toBe(0);
    deep(
      [
        'import os',
        "fd = os.open('.', os.O_RDONLY)",
        'for _ in range(2300):',
        "    os.mkdir('d', dir_fd=fd); inner = os.open('d', os.O_RDONLY, dir_fd=fd); os.close(fd); fd = inner",
        "os.close(os.open('f', os.O_CREAT | os.O_WRONLY, dir_fd=fd))",
      ].join('\n'),
    );
    try {
      for (const levels of [2_300, 10_000]) {
        const result = await inChild<{ ok?: boolean }>({ kind: 'invalidate', path: path.join(cwd, 'd/'.repeat(levels) + 'f') }, 20_000);
        expect(result.ok).toBe(true);
      }
    } finally {
      // Removed the same way, deepest first (a recursive removal by path would hit PATH_MAX).
      deep(
        [
          'import os',
          "fds = [os.open('.', os.O_RDONLY)]",
          "while os.path.exists(f'/proc/self/fd/{fds[-1]}/d'): fds.append(os.open('d', os.O_RDONLY, dir_fd=fds[-1]))",
          "os.unlink('f', dir_fd=fds[-1])",
          'while len(fds) > 1:',
          "    os.close(fds.pop()); os.rmdir('d', dir_fd=fds[-1])",
        ].join('\n'),
      );
    }
  }, 60_000);
});

describe('placing hunks costs time linear in the file, off no deadline', () => {
  const identical = 2_000_000;
  beforeEach(() => fs.writeFileSync(at('same.txt'), 'x\n'.repeat(identical)));

  test('a 60 KB hunk that matches nowhere (each of its lines is in the file) is refused against 2 M identical lines', async () => {
    fs.writeFileSync(at('top.txt'), 'y\n' + 'x\n'.repeat(identical));
    const patch = lines('--- a/top.txt', '+++ b/top.txt', `@@ -1,30001 +1,30001 @@`, ...Array(30_000).fill(' x'), '-y', '+z');
    expect(patch.length).toBeGreaterThan(60_000);
    const result = await inChild<ToolResult>({ kind: 'tool', tool: 'edit', args: { patch }, cwd }, 60_000);
    expect(result.details.code).toBe('PATCH_FAILED');
    expect(result.text).toContain('hunk 1');
    expect(fs.statSync(at('top.txt')).size).toBe(2 * identical + 2);
  }, 90_000);

  test('3,000 hunks whose headers all say line 1 are placed in order', async () => {
    const hunks = Array.from({ length: 3_000 }, () => lines('@@ -1,2 +1,2 @@', ' x', '-x', '+z')).join('');
    const patch = lines('--- a/same.txt', '+++ b/same.txt') + hunks;
    const result = await inChild<ToolResult>({ kind: 'tool', tool: 'edit', args: { patch }, cwd }, 60_000);
    expect(result.isError).toBeFalsy();
    const text = bytes('same.txt').toString();
    expect(text.startsWith('x\nz\n'.repeat(3_000))).toBe(true);
    expect(text.length).toBe(2 * identical);
  }, 90_000);
});

describe('a UTF-8 byte order mark belongs to the file, not to line 1', () => {
  const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
  const withBom = (text: string) => Buffer.concat([BOM, Buffer.from(text)]);
  beforeEach(() => fs.writeFileSync(at('b.txt'), withBom('one\ntwo\n')));
  const anchor = async (line: number) =>
    expectOk(await readTool.execute({ path: 'b.txt' }, ctx))
      .split('\n')
      [line - 1]!.split('|')[0]!
      .trim();

  test('read shows line 1 without it', async () => {
    expect(expectOk(await readTool.execute({ path: 'b.txt' }, ctx)).split('\n')[0]).toMatch(/^1:[0-9a-f]{4}\| one$/);
  });

  const cases: [string, (args: { anchor1: string }) => Record<string, unknown>, string][] = [
    ['hashline replace of line 1', ({ anchor1 }) => ({ mode: 'hashline', path: 'b.txt', edits: [{ op: 'replace', anchor: anchor1, text: 'ONE' }] }), 'ONE\ntwo\n'],
    ['hashline delete of line 1', ({ anchor1 }) => ({ mode: 'hashline', path: 'b.txt', edits: [{ op: 'delete', anchor: anchor1 }] }), 'two\n'],
    ['hashline insert_before line 1', ({ anchor1 }) => ({ mode: 'hashline', path: 'b.txt', edits: [{ op: 'insert_before', anchor: anchor1, text: 'zero' }] }), 'zero\none\ntwo\n'],
    ['a hunk adding a top line', () => ({ patch: lines('--- a/b.txt', '+++ b/b.txt', '@@ -1 +1,2 @@', '+zero', ' one') }), 'zero\none\ntwo\n'],
    ['a hunk on line 1 as read shows it', () => ({ patch: lines('--- a/b.txt', '+++ b/b.txt', '@@ -1 +1 @@', '-one', '+ONE') }), 'ONE\ntwo\n'],
    ['a hunk on line 1 as git diff shows it', () => ({ patch: lines('--- a/b.txt', '+++ b/b.txt', '@@ -1 +1 @@', '-\ufeffone', '+\ufeffONE') }), 'ONE\ntwo\n'],
    ['a replace of the first line', () => ({ path: 'b.txt', oldText: 'one\n', newText: 'zero\none\n' }), 'zero\none\ntwo\n'],
  ];
  for (const [name, args, after] of cases) {
    test(`${name} keeps it in front`, async () => {
      expectOk(await editTool.execute(args({ anchor1: await anchor(1) }) as never, ctx));
      expect(bytes('b.txt')).toEqual(withBom(after));
    });
  }
});

describe('line endings: the same bytes git apply makes of the exact diff', () => {
  const git = (args: string[], where: string) => {
    const out = spawnSync('git', args, {
      cwd: where,
      env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', HOME: where },
      encoding: 'buffer',
    });
    if (out.status !== 0) throw new Error(`git ${args.join(' ')}: ${out.stderr.toString()}`);
    return out.stdout;
  };
  /** What `git apply` makes of `before` with the exact diff (every byte, CRs included) that leads to `after`. */
  const gitAnswer = (before: string, after: string): Buffer => {
    const repo = path.join(dir, 'oracle');
    fs.rmSync(repo, { recursive: true, force: true });
    fs.mkdirSync(repo);
    git(['init', '-q'], repo);
    fs.writeFileSync(path.join(repo, 'f'), before);
    git(['add', 'f'], repo);
    git(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'before'], repo);
    fs.writeFileSync(path.join(repo, 'f'), after);
    const diff = git(['diff', '--no-color', '--no-ext-diff'], repo);
    git(['checkout', '-q', 'f'], repo);
    fs.writeFileSync(path.join(repo, 'exact.diff'), diff);
    git(['apply', 'exact.diff'], repo);
    return fs.readFileSync(path.join(repo, 'f'));
  };
  // (before, after, the patch as a model writes it: lines as `read` shows them, LF only)
  const cases: [string, string, string, string][] = [
    ['an LF line replaced in a CRLF/LF file stays LF', 'a\r\nb\nc\r\n', 'a\r\nB\nc\r\n', lines('@@ -1,3 +1,3 @@', ' a', '-b', '+B', ' c')],
    ['a line added among CRLF lines of a mixed file is CRLF', 'a\r\nb\r\nc\n', 'a\r\nX\r\nb\r\nc\n', lines('@@ -1,2 +1,3 @@', ' a', '+X', ' b')],
    [
      'a line appended to a two-line CRLF file without a final newline is CRLF',
      'a\r\nb',
      'a\r\nb\r\nc',
      lines('@@ -1,2 +1,3 @@', ' a', '-b', '\\ No newline at end of file', '+b', '+c', '\\ No newline at end of file'),
    ],
    ['a file of CR lines is patched line by line', 'a\rb\rc\r', 'a\rB\rc\r', lines('@@ -1,3 +1,3 @@', ' a', '-b', '+B', ' c')],
  ];
  for (const [name, before, after, hunks] of cases) {
    test(name, async () => {
      const oracle = gitAnswer(before, after);
      expect(oracle.toString('latin1')).toBe(after);
      fs.writeFileSync(at('f'), before);
      expectOk(await editTool.execute({ patch: lines('--- a/f', '+++ b/f') + hunks }, ctx));
      expect(bytes('f').toString('latin1')).toBe(oracle.toString('latin1'));
    });
  }

  test('a CR file reads as lines and takes a hashline edit', async () => {
    fs.writeFileSync(at('f'), 'a\rb\rc\r');
    const shown = expectOk(await readTool.execute({ path: 'f' }, ctx)).split('\n');
    expect(shown.map((line) => line.split('| ')[1])).toEqual(['a', 'b', 'c']);
    const anchor = shown[1]!.split('|')[0]!.trim();
    expectOk(await editTool.execute({ mode: 'hashline', path: 'f', edits: [{ op: 'insert_after', anchor, text: 'b2' }] }, ctx));
    expect(bytes('f').toString()).toBe('a\rb\rb2\rc\r');
  });
});

describe('bytes and names that are not UTF-8', () => {
  const latin1 = (text: string) => Buffer.from(text, 'latin1');
  beforeEach(() => fs.writeFileSync(at('l.txt'), latin1('caf\xe9 au lait\nsecond\n')));

  test('text copied from read (U+FFFD for the byte) matches, and the byte goes back where it was', async () => {
    expect(expectOk(await readTool.execute({ path: 'l.txt' }, ctx))).toContain('| caf\ufffd au lait');
    expectOk(await editTool.execute({ path: 'l.txt', oldText: 'caf\ufffd au lait', newText: 'caf\ufffd noir' }, ctx));
    expect(bytes('l.txt')).toEqual(latin1('caf\xe9 noir\nsecond\n'));
    expectOk(await editTool.execute({ patch: lines('--- a/l.txt', '+++ b/l.txt', '@@ -1 +1 @@', '-caf\ufffd noir', '+caf\ufffd cr\u00e8me') }, ctx));
    expect(bytes('l.txt')).toEqual(Buffer.concat([latin1('caf\xe9 cr'), Buffer.from('\u00e8'), latin1('me\nsecond\n')]));
    const anchor = expectOk(await readTool.execute({ path: 'l.txt' }, ctx)).split('|')[0]!.trim();
    expectOk(await editTool.execute({ mode: 'hashline', path: 'l.txt', edits: [{ op: 'replace', anchor, text: 'caf\ufffd!' }] }, ctx));
    expect(bytes('l.txt')).toEqual(latin1('caf\xe9!\nsecond\n'));
  });

  test('new text with a different number of U+FFFD than the bytes it replaces is refused, naming why', async () => {
    const message = expectError(await editTool.execute({ path: 'l.txt', oldText: 'caf\ufffd au lait', newText: 'cafe au lait' + '\ufffd\ufffd' }, ctx), 'INVALID_ARGS');
    expect(message).toContain('not UTF-8');
    expect(bytes('l.txt')).toEqual(latin1('caf\xe9 au lait\nsecond\n'));
  });

  test('a name that is not UTF-8 is listed C-quoted, and read, edit, write and patch reach that very file', async () => {
    const name = Buffer.from(path.join(cwd, 'sub', 'caf\xe9.txt'), 'latin1');
    fs.mkdirSync(at('sub'));
    fs.writeFileSync(name, 'x\n');
    const quoted = '"sub/caf\\351.txt"';
    expect(expectError(await readTool.execute({ path: 'sub' }, ctx), 'EISDIR')).toContain('"caf\\351.txt"');
    expect(expectOk(await readTool.execute({ path: quoted }, ctx))).toContain('| x');
    expectOk(await editTool.execute({ path: quoted, oldText: 'x', newText: 'edited' }, ctx));
    expect(fs.readFileSync(name, 'utf8')).toBe('edited\n');
    expect(expectOk(await writeTool.execute({ path: quoted, content: 'written\n' }, ctx))).toContain(quoted);
    expect(fs.readFileSync(name, 'utf8')).toBe('written\n');
    const patch = lines('--- "a/sub/caf\\351.txt"', '+++ "b/sub/caf\\351.txt"', '@@ -1 +1 @@', '-written', '+patched');
    expectOk(await editTool.execute({ patch }, ctx));
    expect(fs.readFileSync(name, 'utf8')).toBe('patched\n');
    expect(fs.readdirSync(at('sub'), { encoding: 'buffer' })).toEqual([Buffer.from('caf\xe9.txt', 'latin1')]);
  });
});

describe('clear refusals', () => {
  test('write of `newdir/` is EISDIR and creates nothing', async () => {
    for (const target of ['newdir/', 'newdir/.']) {
      expect(expectError(await writeTool.execute({ path: target, content: 'x' }, ctx), 'EISDIR')).toContain('names a directory');
    }
    expect(fs.readdirSync(cwd)).toEqual([]);
  });

  test('run in a missing working directory is ENOENT naming it, and runs nothing', async () => {
    const missing = path.join(dir, 'gone');
    const message = expectError(await runTool.execute({ command: `touch ${path.join(dir, 'ran')}` }, { cwd: missing }), 'ENOENT');
    expect(message).toContain(missing);
    expect(fs.existsSync(path.join(dir, 'ran'))).toBe(false);
  });

  test('run with a timeout past what a timer can wait is INVALID_ARGS, not an instant kill', async () => {
    const message = expectError(await runTool.execute({ command: 'true', timeoutMs: 3_000_000_000 }, ctx), 'INVALID_ARGS');
    expect(message).toContain('2147483647');
  });
});

describe('a batch killed midway is finished or rolled back by the next one', () => {
  const STATES = {
    one: { 'a.txt': 'a one\n', 'b.txt': 'b one\n', 'sub/c.txt': 'c one\n' },
    two: { 'a.txt': 'a two\n', 'moved.txt': 'b one\n', 'sub/d/c.txt': 'c two\n' },
  };
  /** Every entry under `root`, with its bytes, hidden ones included. */
  const tree = (root: string): Record<string, string> =>
    Object.fromEntries(
      (fs.readdirSync(root, { recursive: true, withFileTypes: true }) as fs.Dirent[])
        .filter((entry) => entry.isFile())
        .map((entry) => {
          const full = path.join(entry.parentPath, entry.name);
          return [path.relative(root, full), fs.readFileSync(full, 'utf8')];
        }),
    );

  test('twenty kills at random moments: each time the next batch leaves state one or state two, nothing else', async () => {
    const loop = [
      "import { applyFileChanges } from './packages/natives/src/index.ts';",
      `const cwd = ${JSON.stringify(cwd)};`,
      'const forth = [',
      "  { op: 'write', path: 'a.txt', data: 'a two\\n' },",
      "  { op: 'rename', path: 'b.txt', to: 'moved.txt' },",
      "  { op: 'delete', path: 'sub/c.txt' },",
      "  { op: 'write', path: 'sub/d/c.txt', data: 'c two\\n', create: true },",
      '];',
      'const back = [',
      "  { op: 'write', path: 'a.txt', data: 'a one\\n' },",
      "  { op: 'rename', path: 'moved.txt', to: 'b.txt' },",
      "  { op: 'delete', path: 'sub/d/c.txt' },",
      "  { op: 'write', path: 'sub/c.txt', data: 'c one\\n', create: true },",
      '];',
      "console.log('ready');",
      'for (let i = 0; ; i++) await applyFileChanges(i % 2 ? back : forth, { cwd });',
    ].join('\n');
    for (let kill = 0; kill < 20; kill++) {
      fs.rmSync(cwd, { recursive: true, force: true });
      writeTree(cwd, STATES.one);
      const child = Bun.spawn([process.execPath, '-e', loop], { cwd: path.join(import.meta.dir, '..'), stdout: 'pipe', stderr: 'inherit' });
      const reader = child.stdout.getReader();
      await reader.read();
      await Bun.sleep(5 + Math.random() * 60);
      child.kill('SIGKILL');
      await child.exited;
      // The next batch in the directory, on a file of its own.
      await applyFileChanges([{ op: 'write', path: 'sub/other.txt', data: 'other\n' }], { cwd });
      fs.rmSync(at('sub/other.txt'));
      const left = tree(cwd);
      expect([JSON.stringify(STATES.one), JSON.stringify(STATES.two)]).toContain(JSON.stringify(Object.fromEntries(Object.entries(left).sort())));
      expect(fs.readdirSync(cwd).filter((name) => name.startsWith('.'))).toEqual([]);
    }
  }, 120_000);
});
