/**
 * The agent tools called directly: what each returns, and every refusal
 * with its stable code (missing file, ambiguous replace, a patch that does
 * not apply, a stale hashline, a path outside cwd, a binary read, an
 * aborted command...). Freshness of the scan cache after each mutation is
 * tested in coding-agent-tools-freshness.test.ts.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  TOOL_ERROR_CODES,
  type Tool,
  type ToolErrorCode,
  type ToolResult,
  agentTools,
  editTool,
  findTool,
  grepTool,
  lineHashes,
  readTool,
  runTool,
  writeTool,
  type ToolContext,
} from '../packages/coding-agent/src/index.ts';
import { splitLines } from '../packages/coding-agent/src/lines.ts';
import { decodeText } from '../packages/coding-agent/src/text.ts';
import { expectError, expectOk } from './support/agent.ts';
import { removeDir, run, tempDir, writeTree } from './support/fs.ts';

let dir = '';
let ctx: ToolContext;
const outside: string[] = [];

// The working directory is a folder inside one the test owns, so a `../x` escape, were the confinement
// broken, would land in the test's own folder and not beside it in the system's temp dir.
beforeEach(() => {
  dir = path.join(tempDir('agent-tools'), 'cwd');
  fs.mkdirSync(dir);
  ctx = { cwd: dir };
});
afterEach(() => {
  removeDir(path.dirname(dir));
  for (const o of outside.splice(0)) removeDir(o);
});

const at = (rel: string) => path.join(dir, rel);
const text = (rel: string) => fs.readFileSync(at(rel), 'utf8');


/** The `LINE:HASH` anchors `read` shows for `rel`. */
async function anchors(rel: string): Promise<string[]> {
  return expectOk(await readTool.execute({ path: rel }, ctx))
    .split('\n')
    .map((line) => line.slice(0, line.indexOf('|')).trim());
}

describe('agentTools', () => {
  test('lists read, grep, find, write, edit and run with object schemas', () => {
    const tools = agentTools();
    expect(tools.map((t) => t.name)).toEqual(['read', 'grep', 'find', 'write', 'edit', 'run']);
    for (const tool of tools) {
      expect(tool.parameters.type).toBe('object');
      expect(tool.description.length).toBeGreaterThan(20);
    }
    expect(agentTools({ withoutRun: true }).map((t) => t.name)).toEqual(['read', 'grep', 'find', 'write', 'edit']);
  });

  test('every documented code is produced by some input', async () => {
    writeTree(dir, { 'f.txt': 'a = 1\na = 1\n', 'sub/x.txt': 'x\n' });
    fs.writeFileSync(at('blob.bin'), Buffer.from('ab\0cd'));
    fs.writeFileSync(at('utf16.txt'), Buffer.from('\ufeffutf-16 text\n', 'utf16le'));
    run('mkfifo', [at('pipe')]);
    fs.closeSync(fs.openSync(at('huge.txt'), 'w'));
    fs.truncateSync(at('huge.txt'), 2 ** 30);
    writeTree(dir, { 'ro.txt': 'ro\n', 'linked.txt': 'linked\n' });
    fs.writeFileSync(Buffer.from(at('caf\xe9.txt'), 'latin1'), 'latin-1 name\n');
    fs.chmodSync(at('ro.txt'), 0o444);
    fs.linkSync(at('linked.txt'), at('linked-too.txt'));
    fs.symlinkSync('loop-b', at('loop-a'));
    fs.symlinkSync('loop-a', at('loop-b'));
    // Unreadable even to root: procfs applies the owner bits of this write-only file to uid 0.
    const unreadable = process.getuid?.() === 0 ? '/proc/sys/vm/compact_memory' : at('secret.txt');
    if (process.getuid?.() !== 0) fs.writeFileSync(unreadable, 'secret\n', { mode: 0o000 });
    const aborted = { ...ctx, signal: AbortSignal.abort() };
    const cases: [ToolErrorCode, () => Promise<ToolResult>][] = [
      ['INVALID_ARGS', () => readTool.execute({ path: '' }, ctx)],
      ['ENOENT', () => readTool.execute({ path: 'missing.txt' }, ctx)],
      ['EISDIR', () => readTool.execute({ path: 'sub' }, ctx)],
      ['ENOTDIR', () => findTool.execute({ pattern: '*', path: 'f.txt' }, ctx)],
      ['EACCES', () => readTool.execute({ path: unreadable }, ctx)],
      ['NOT_REGULAR', () => readTool.execute({ path: 'pipe' }, ctx)],
      ['TOO_LARGE', () => editTool.execute({ path: 'huge.txt', oldText: 'a', newText: 'b' }, ctx)],
      ['READ_ONLY', () => writeTool.execute({ path: 'ro.txt', content: 'x' }, ctx)],
      ['HARD_LINKED', () => writeTool.execute({ path: 'linked.txt', content: 'x' }, ctx)],
      ['BINARY', () => readTool.execute({ path: 'blob.bin' }, ctx)],
      ['ENCODING', () => editTool.execute({ path: 'utf16.txt', oldText: 'text', newText: 'x' }, ctx)],
      ['OUTSIDE_CWD', () => writeTool.execute({ path: '../escape.txt', content: 'x' }, ctx)],
      ['NAME_TOO_LONG', () => writeTool.execute({ path: 'd/'.repeat(2_400) + 'f', content: 'x' }, ctx)],
      ['LOSSY_NAME', () => writeTool.execute({ path: 'caf\ufffd.txt', content: 'x' }, ctx)],
      ['NO_MATCH', () => editTool.execute({ path: 'f.txt', oldText: 'nowhere', newText: 'x' }, ctx)],
      ['AMBIGUOUS', () => editTool.execute({ path: 'f.txt', oldText: 'a = 1', newText: 'x' }, ctx)],
      ['STALE', () => editTool.execute({ mode: 'hashline', path: 'f.txt', edits: [{ op: 'delete', anchor: '1:0000' }] }, ctx)],
      ['PATCH_FAILED', () => editTool.execute({ patch: 'not a diff' }, ctx)],
      ['INVALID_PATTERN', () => grepTool.execute({ pattern: 'a(' }, ctx)],
      ['ABORTED', () => readTool.execute({ path: 'f.txt' }, aborted)],
      ['TIMEOUT', () => runTool.execute({ command: 'sleep 5', timeoutMs: 50 }, ctx)],
      ['EXIT_CODE', () => runTool.execute({ command: 'exit 3' }, ctx)],
      ['IO', () => writeTool.execute({ path: 'loop-a', content: 'x' }, ctx)],
    ];
    expect(cases.map(([code]) => code).sort()).toEqual(Object.keys(TOOL_ERROR_CODES).sort() as ToolErrorCode[]);
    for (const [code, call] of cases) expectError(await call(), code);
  });

  test('bad arguments are INVALID_ARGS naming the argument, checked against the schema the model sees', async () => {
    const cases: [Tool<any>, unknown, string][] = [
      [readTool, { path: '' }, '`path` does not fit'],
      [readTool, { path: 'f.txt', offset: 0 }, '`offset` does not fit: expected integer to be greater or equal to 1 (got 0)'],
      [readTool, { path: 'f.txt', limit: 'all' }, '`limit` does not fit'],
      [writeTool, { path: 'x.txt' }, '`content` is required'],
      [writeTool, { path: 'x.txt', content: 'x', mode: 0o755 }, '`mode` is not an argument of this tool'],
      [editTool, { mode: 'nope' }, '`mode` must be one of "replace", "patch", "hashline" (got "nope")'],
      [editTool, { path: 'f.txt', edits: [{ op: 'zap', anchor: '1:0000' }] }, '`edits[0].op` must be one of'],
      [editTool, { path: 'f.txt', edits: [] }, '`edits` does not fit'],
      [editTool, { path: 'f.txt', oldText: 'a' }, '`newText` is required in replace mode'],
      [grepTool, { pattern: 'x', mode: 'lines' }, '`mode` must be one of "content", "filesWithMatches", "count"'],
      [findTool, { pattern: '*', limit: 1.5 }, '`limit` does not fit'],
      [runTool, { command: 'true', timeoutMs: -1 }, '`timeoutMs` does not fit'],
      [runTool, { command: 'true', timeoutMs: 3_000_000_000 }, '`timeoutMs` does not fit: expected integer to be less or equal to 2147483647'],
      [runTool, 'true', 'The arguments must be an object'],
    ];
    for (const [tool, args, named] of cases) {
      expect(expectError(await tool.execute(args as never, ctx), 'INVALID_ARGS')).toContain(named);
      expect(tool.parameters.type).toBe('object');
    }
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});

describe('lineHashes', () => {
  /** 32-bit FNV-1a of `bytes`, high 16 bits in hex: computed here independently of the module. */
  const fnv16 = (bytes: Uint8Array) => {
    let hash = 0x811c9dc5;
    for (const byte of bytes) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
    return (hash >>> 16).toString(16).padStart(4, '0');
  };
  /** Line N's hash straight from the file's bytes: FNV over lines 1..N without terminators, joined by LF. */
  const expected = (file: Buffer) => {
    const lines = file.toString('latin1').split('\n').map((line) => line.replace(/\r$/, ''));
    if (lines.at(-1) === '') lines.pop();
    return lines.map((_, n) => fnv16(Buffer.from(lines.slice(0, n + 1).join('\n'), 'latin1')));
  };
  const files: [string, Buffer][] = [
    ['empty', Buffer.from('')],
    ['LF with repeated and blank lines', Buffer.from('a {\n}\n\n}\n\nend\n')],
    ['CRLF, no final newline', Buffer.from('one\r\ntwo\r\n\r\nthree')],
    ['UTF-8', Buffer.from('caf\u00e9\n\u{1f600} \u20ac\n')],
    ['Latin-1 (not UTF-8)', Buffer.from('caf\u00e9\nna\u00efve\n', 'latin1')],
  ];
  test.each(files)('line N hashes lines 1..N as the file holds them: %s', (_name, file) => {
    expect(lineHashes(splitLines(decodeText(file)).text)).toEqual(expected(file));
  });

  test('the first line is FNV-1a of it alone; a later line depends on the lines above it', () => {
    // FNV-1a 32: "a" = e40c292c, "foobar" = bf9cf968.
    expect(lineHashes(['a'])).toEqual(['e40c']);
    expect(lineHashes(['foobar'])).toEqual(['bf9c']);
    const [, second] = lineHashes(['a', 'foobar']);
    expect(second).toBe(fnv16(Buffer.from('a\nfoobar')));
    expect(lineHashes(['b', '}'])[1]).not.toBe(lineHashes(['a', '}'])[1]);
    expect(lineHashes(['a', '}', 'x'], 2)).toEqual(lineHashes(['a', '}', 'y']).slice(0, 2));
  });
});

describe('read', () => {
  test('numbers every line and tags it with its hash', async () => {
    writeTree(dir, { 'f.txt': 'a\nfoobar\r\n\nlast' });
    const result = await readTool.execute({ path: 'f.txt' }, ctx);
    const [h1, h2, h3, h4] = lineHashes(['a', 'foobar', '', 'last']);
    expect(h1).toBe('e40c');
    expect(expectOk(result)).toBe([`1:${h1}| a`, `2:${h2}| foobar`, `3:${h3}| `, `4:${h4}| last`].join('\n'));
    expect(result.details).toMatchObject({ totalLines: 4, startLine: 1, endLine: 4, truncated: false });
  });

  test('offset and limit show a window and say how to continue', async () => {
    writeTree(dir, { 'big.txt': Array.from({ length: 120 }, (_, i) => `line ${i + 1}`).join('\n') + '\n' });
    const result = await readTool.execute({ path: 'big.txt', offset: 99, limit: 3 }, ctx);
    const lines = expectOk(result).split('\n');
    const hashes = lineHashes(Array.from({ length: 120 }, (_, i) => `line ${i + 1}`));
    expect(lines[0]).toBe(` 99:${hashes[98]}| line 99`);
    expect(lines[2]).toBe(`101:${hashes[100]}| line 101`);
    expect(lines[3]).toBe('[lines 99-101 of 120; continue with offset=102]');
    expect(result.details).toMatchObject({ totalLines: 120, startLine: 99, endLine: 101, truncated: true });
    expectError(await readTool.execute({ path: 'big.txt', offset: 500 }, ctx), 'INVALID_ARGS');
  });

  test('a missing file is ENOENT and suggests close matches', async () => {
    writeTree(dir, ['src/config.ts', 'src/Config.test.ts', 'docs/notes.md']);
    const result = await readTool.execute({ path: 'src/confg.ts' }, ctx);
    expect(expectError(result, 'ENOENT')).toContain('does not exist');
    expect(result.details.suggestions).toEqual([]);
    const close = await readTool.execute({ path: 'lib/config.ts' }, ctx);
    expect(expectError(close, 'ENOENT')).toContain('src/config.ts');
    expect(close.details.suggestions).toEqual(['src/config.ts', 'src/Config.test.ts']);
  });

  test('a binary file is BINARY and not shown', async () => {
    fs.writeFileSync(at('blob.bin'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01, 0x02]));
    const message = expectError(await readTool.execute({ path: 'blob.bin' }, ctx), 'BINARY');
    expect(message).toContain('binary file (7 bytes)');
  });

  test('a directory is EISDIR and lists some entries', async () => {
    writeTree(dir, ['pkg/a.ts', 'pkg/inner/b.ts']);
    const message = expectError(await readTool.execute({ path: 'pkg' }, ctx), 'EISDIR');
    expect(message).toContain('a.ts\ninner/');
    expect(message).toContain('use find or grep');
  });
});

describe('write', () => {
  test('creates parents, then overwrites keeping the file mode, leaving no temp file', async () => {
    const created = await writeTool.execute({ path: 'a/b/c.txt', content: 'one' }, ctx);
    expect(expectOk(created)).toBe('Created a/b/c.txt (3 bytes).');
    expect(text('a/b/c.txt')).toBe('one');
    fs.chmodSync(at('a/b/c.txt'), 0o751);
    expect(expectOk(await writeTool.execute({ path: 'a/b/c.txt', content: 'two' }, ctx))).toBe('Overwrote a/b/c.txt (3 bytes).');
    expect(text('a/b/c.txt')).toBe('two');
    expect(fs.statSync(at('a/b/c.txt')).mode & 0o777).toBe(0o751);
    expect(fs.readdirSync(at('a/b'))).toEqual(['c.txt']);
  });

  test('writing through a symlink inside cwd replaces its target and keeps the link', async () => {
    writeTree(dir, { 'real.txt': 'old' });
    fs.symlinkSync('real.txt', at('link.txt'));
    expectOk(await writeTool.execute({ path: 'link.txt', content: 'new' }, ctx));
    expect(fs.lstatSync(at('link.txt')).isSymbolicLink()).toBe(true);
    expect(text('real.txt')).toBe('new');
  });

  test('a path outside cwd is OUTSIDE_CWD: `..`, an absolute path, a symlinked directory', async () => {
    const elsewhere = tempDir('agent-tools-outside');
    outside.push(elsewhere);
    fs.symlinkSync(elsewhere, at('escape'));
    for (const target of ['../sibling.txt', path.join(elsewhere, 'abs.txt'), 'escape/through-link.txt', 'escape/new/deeper.txt']) {
      const message = expectError(await writeTool.execute({ path: target, content: 'x' }, ctx), 'OUTSIDE_CWD');
      expect(message).toContain('outside the working directory');
    }
    expect(fs.readdirSync(elsewhere)).toEqual([]);
    expect(fs.existsSync(path.join(path.dirname(dir), 'sibling.txt'))).toBe(false);
  });

  test('a dangling symlink pointing outside cwd is OUTSIDE_CWD', async () => {
    const elsewhere = tempDir('agent-tools-outside');
    outside.push(elsewhere);
    fs.symlinkSync(path.join(elsewhere, 'not-yet.txt'), at('dangling.txt'));
    expectError(await writeTool.execute({ path: 'dangling.txt', content: 'x' }, ctx), 'OUTSIDE_CWD');
    expect(fs.existsSync(path.join(elsewhere, 'not-yet.txt'))).toBe(false);
  });

  test('the caller (not the model) can allow writes outside cwd', async () => {
    const elsewhere = tempDir('agent-tools-outside');
    outside.push(elsewhere);
    const target = path.join(elsewhere, 'allowed.txt');
    expectOk(await writeTool.execute({ path: target, content: 'ok' }, { ...ctx, allowOutsideCwd: true }));
    expect(fs.readFileSync(target, 'utf8')).toBe('ok');
  });
});

describe('edit: replace', () => {
  beforeEach(() => writeTree(dir, { 'f.ts': 'const a = 1;\nconst b = 2;\nconst a2 = 1;\n' }));

  test('replaces a unique occurrence', async () => {
    const result = await editTool.execute({ path: 'f.ts', oldText: 'const b = 2;', newText: 'const b = 3;' }, ctx);
    expect(expectOk(result)).toBe('Replaced 1 occurrence in f.ts (at line 2).');
    expect(text('f.ts')).toBe('const a = 1;\nconst b = 3;\nconst a2 = 1;\n');
  });

  test('missing old text is NO_MATCH, naming a near line, and changes nothing', async () => {
    const message = expectError(await editTool.execute({ path: 'f.ts', oldText: '  const b = 2;\nconst c', newText: 'x' }, ctx), 'NO_MATCH');
    expect(message).toContain('not found in f.ts');
    expect(message).toContain('line 2');
    expect(text('f.ts')).toBe('const a = 1;\nconst b = 2;\nconst a2 = 1;\n');
  });

  test('an ambiguous old text is AMBIGUOUS, listing the lines; replaceAll replaces them all', async () => {
    const message = expectError(await editTool.execute({ path: 'f.ts', oldText: ' = 1;', newText: ' = 9;' }, ctx), 'AMBIGUOUS');
    expect(message).toContain('occurs 2 times in f.ts (at lines 1, 3)');
    expect(text('f.ts')).toBe('const a = 1;\nconst b = 2;\nconst a2 = 1;\n');
    expectOk(await editTool.execute({ path: 'f.ts', oldText: ' = 1;', newText: ' = 9;', replaceAll: true }, ctx));
    expect(text('f.ts')).toBe('const a = 9;\nconst b = 2;\nconst a2 = 9;\n');
  });

  test('a missing file is ENOENT with suggestions', async () => {
    const result = await editTool.execute({ path: 'F.ts', oldText: 'a', newText: 'b' }, ctx);
    expect(expectError(result, 'ENOENT')).toContain('f.ts');
    expect(fs.existsSync(at('F.ts'))).toBe(false);
  });

  test('a CRLF file matches old text written with \\n', async () => {
    writeTree(dir, { 'w.txt': 'one\r\ntwo\r\nthree\r\n' });
    expectOk(await editTool.execute({ path: 'w.txt', oldText: 'one\ntwo', newText: 'one\n2' }, ctx));
    expect(text('w.txt')).toBe('one\r\n2\r\nthree\r\n');
  });

  test('a path outside cwd is OUTSIDE_CWD', async () => {
    expectError(await editTool.execute({ path: '../f.ts', oldText: 'a', newText: 'b' }, ctx), 'OUTSIDE_CWD');
  });

  test('a binary file is BINARY', async () => {
    fs.writeFileSync(at('b.bin'), Buffer.from('ab\0cd'));
    expectError(await editTool.execute({ path: 'b.bin', oldText: 'ab', newText: 'x' }, ctx), 'BINARY');
  });
});

describe('edit: hashline', () => {
  beforeEach(() => writeTree(dir, { 'f.txt': 'one\ntwo\nthree\nfour\nfive' }));

  test('replaces, inserts and deletes by anchor, all against the file as read', async () => {
    const [l1, l2, l3, l4, l5] = await anchors('f.txt');
    const result = await editTool.execute(
      {
        mode: 'hashline',
        path: 'f.txt',
        edits: [
          { op: 'replace', anchor: l2!, text: 'TWO\nTWO-B' },
          { op: 'insert_before', anchor: l1!, text: 'zero' },
          { op: 'delete', anchor: l3!, end: l4! },
          { op: 'insert_after', anchor: l5!, text: 'six' },
        ],
      },
      ctx,
    );
    expect(expectOk(result)).toContain('Applied 4 edits to f.txt');
    expect(text('f.txt')).toBe('zero\none\nTWO\nTWO-B\nfive\nsix');
  });

  test('a line changed since it was read is STALE, names the line, and nothing changes', async () => {
    const [, l2, , l4] = await anchors('f.txt');
    fs.writeFileSync(at('f.txt'), 'one\ntwo\nthree\nFOUR\nfive');
    const result = await editTool.execute(
      { mode: 'hashline', path: 'f.txt', edits: [{ op: 'replace', anchor: l2!, text: '2' }, { op: 'delete', anchor: l4! }] },
      ctx,
    );
    const message = expectError(result, 'STALE');
    expect(message).toContain('Line 4 or a line above it changed since the file was read');
    expect(message).toContain('"FOUR"');
    expect(result.details.line).toBe(4);
    expect(text('f.txt')).toBe('one\ntwo\nthree\nFOUR\nfive');
  });

  test('an anchor of a repeated line is STALE once a line above it was inserted', async () => {
    const original = 'a {\nb {\nc\n}\n}\n\nd\n';
    writeTree(dir, { 'nested.txt': original });
    const shown = await anchors('nested.txt');
    // Line 5 is the second `}`; after the insertion the new line 5 is the first `}`, the same text.
    fs.writeFileSync(at('nested.txt'), 'inserted\n' + original);
    const result = await editTool.execute({ mode: 'hashline', path: 'nested.txt', edits: [{ op: 'replace', anchor: shown[4]!, text: '} // a' }] }, ctx);
    expect(expectError(result, 'STALE')).toContain('Line 5');
    expect(text('nested.txt')).toBe('inserted\n' + original);
  });

  test('a change below an anchored line leaves its anchor valid; a change above it does not', async () => {
    writeTree(dir, { 'g.txt': 'one\n}\nthree\n}\nfive\n' });
    const [, l2, , l4] = await anchors('g.txt');
    fs.writeFileSync(at('g.txt'), 'one\n}\nTHREE\n}\nfive\n');
    expectOk(await editTool.execute({ mode: 'hashline', path: 'g.txt', edits: [{ op: 'replace', anchor: l2!, text: '} // two' }] }, ctx));
    expect(text('g.txt')).toBe('one\n} // two\nTHREE\n}\nfive\n');
    fs.writeFileSync(at('g.txt'), 'one\n}\nTHREE\n}\nfive\n');
    expectError(await editTool.execute({ mode: 'hashline', path: 'g.txt', edits: [{ op: 'replace', anchor: l4!, text: '} // four' }] }, ctx), 'STALE');
  });

  test('an anchor past the end is STALE; overlapping ranges and bad anchors are INVALID_ARGS', async () => {
    expect(expectError(await editTool.execute({ mode: 'hashline', path: 'f.txt', edits: [{ op: 'delete', anchor: '9:abcd' }] }, ctx), 'STALE')).toContain('Line 9');
    const [l1, l2, l3] = await anchors('f.txt');
    const overlap = [
      { op: 'delete' as const, anchor: l1!, end: l3! },
      { op: 'replace' as const, anchor: l2!, text: 'x' },
    ];
    expectError(await editTool.execute({ mode: 'hashline', path: 'f.txt', edits: overlap }, ctx), 'INVALID_ARGS');
    expectError(await editTool.execute({ mode: 'hashline', path: 'f.txt', edits: [{ op: 'delete', anchor: 'two' }] }, ctx), 'INVALID_ARGS');
    expect(text('f.txt')).toBe('one\ntwo\nthree\nfour\nfive');
  });
});

describe('edit: patch', () => {
  beforeEach(() =>
    writeTree(dir, {
      'src/a.ts': 'import x from "x";\n\nexport const a = 1;\nexport const b = 2;\n',
      'src/old.ts': 'old\n',
      'src/gone.ts': 'bye\n',
    }),
  );

  test('modifies, creates, deletes and renames in one patch', async () => {
    const patch = [
      'diff --git a/src/a.ts b/src/a.ts',
      'index 1111111..2222222 100644',
      '--- a/src/a.ts',
      '+++ b/src/a.ts',
      '@@ -2,3 +2,3 @@',
      '',
      ' export const a = 1;',
      '-export const b = 2;',
      '+export const b = 3;',
      '--- /dev/null',
      '+++ b/src/new/made.ts',
      '@@ -0,0 +1,2 @@',
      '+line one',
      '+line two',
      'diff --git a/src/gone.ts b/src/gone.ts',
      'deleted file mode 100644',
      '--- a/src/gone.ts',
      '+++ /dev/null',
      '@@ -1 +0,0 @@',
      '-bye',
      'diff --git a/src/old.ts b/src/renamed.ts',
      'similarity index 50%',
      'rename from src/old.ts',
      'rename to src/renamed.ts',
      '--- a/src/old.ts',
      '+++ b/src/renamed.ts',
      '@@ -1 +1 @@',
      '-old',
      '+new',
      '',
    ].join('\n');
    const result = await editTool.execute({ patch }, ctx);
    expect(expectOk(result)).toBe(
      'Applied the patch to 4 files:\n  modified src/a.ts\n  created src/new/made.ts\n  deleted src/gone.ts\n  renamed src/old.ts -> src/renamed.ts',
    );
    expect(text('src/a.ts')).toBe('import x from "x";\n\nexport const a = 1;\nexport const b = 3;\n');
    expect(text('src/new/made.ts')).toBe('line one\nline two\n');
    expect(fs.existsSync(at('src/gone.ts'))).toBe(false);
    expect(fs.existsSync(at('src/old.ts'))).toBe(false);
    expect(text('src/renamed.ts')).toBe('new\n');
  });

  test('a hunk whose header line is off is placed by its context', async () => {
    const patch = '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -40,2 +40,2 @@\n export const a = 1;\n-export const b = 2;\n+export const b = 4;\n';
    expectOk(await editTool.execute({ patch }, ctx));
    expect(text('src/a.ts')).toBe('import x from "x";\n\nexport const a = 1;\nexport const b = 4;\n');
  });

  test('"no newline at end of file" is honoured both ways', async () => {
    const drop = '--- a/src/old.ts\n+++ b/src/old.ts\n@@ -1 +1 @@\n-old\n+older\n\\ No newline at end of file\n';
    expectOk(await editTool.execute({ patch: drop }, ctx));
    expect(text('src/old.ts')).toBe('older');
    const add = '--- a/src/old.ts\n+++ b/src/old.ts\n@@ -1 +1,2 @@\n-older\n\\ No newline at end of file\n+older\n+oldest\n';
    expectOk(await editTool.execute({ patch: add }, ctx));
    expect(text('src/old.ts')).toBe('older\noldest\n');
  });

  test('a patch that does not apply is PATCH_FAILED and changes no file', async () => {
    const patch = [
      '--- a/src/old.ts',
      '+++ b/src/old.ts',
      '@@ -1 +1 @@',
      '-old',
      '+changed',
      '--- /dev/null',
      '+++ b/src/created.ts',
      '@@ -0,0 +1 @@',
      '+created',
      '--- a/src/a.ts',
      '+++ b/src/a.ts',
      '@@ -3,2 +3,2 @@',
      ' export const a = 1;',
      '-export const b = 999;',
      '+export const b = 3;',
    ].join('\n');
    const message = expectError(await editTool.execute({ patch }, ctx), 'PATCH_FAILED');
    expect(message).toContain('src/a.ts: hunk 1');
    expect(message).toContain('No file was changed');
    expect(text('src/old.ts')).toBe('old\n');
    expect(fs.existsSync(at('src/created.ts'))).toBe(false);
  });

  test('creating an existing file, deleting a missing one, renaming onto a file and garbage are PATCH_FAILED', async () => {
    const cases = [
      '--- /dev/null\n+++ b/src/old.ts\n@@ -0,0 +1 @@\n+x\n',
      '--- a/src/missing.ts\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n',
      'diff --git a/src/old.ts b/src/gone.ts\nrename from src/old.ts\nrename to src/gone.ts\n',
      'this is not a diff',
    ];
    for (const patch of cases) expectError(await editTool.execute({ patch }, ctx), 'PATCH_FAILED');
    expect(text('src/old.ts')).toBe('old\n');
    expect(text('src/gone.ts')).toBe('bye\n');
  });

  test('a change failing midway undoes the ones already made', async () => {
    // The second file is read-only: refused when its turn comes, after the first was written.
    writeTree(dir, { 'src/locked.ts': 'locked\n' });
    fs.chmodSync(at('src/locked.ts'), 0o444);
    const patch = '--- a/src/old.ts\n+++ b/src/old.ts\n@@ -1 +1 @@\n-old\n+changed\n--- /dev/null\n+++ b/src/new/made.ts\n@@ -0,0 +1 @@\n+x\n--- a/src/locked.ts\n+++ b/src/locked.ts\n@@ -1 +1 @@\n-locked\n+unlocked\n';
    const message = expectError(await editTool.execute({ patch }, ctx), 'READ_ONLY');
    expect(message).toContain('src/locked.ts: is read-only (mode 0444)');
    expect(message).toContain('No file was changed');
    expect(text('src/old.ts')).toBe('old\n');
    expect(text('src/locked.ts')).toBe('locked\n');
    expect(fs.readdirSync(at('src')).sort()).toEqual(['a.ts', 'gone.ts', 'locked.ts', 'old.ts']);
  });

  test('a path outside cwd is OUTSIDE_CWD and changes no file', async () => {
    const patch = '--- a/src/old.ts\n+++ b/src/old.ts\n@@ -1 +1 @@\n-old\n+changed\n--- /dev/null\n+++ b/../escaped.ts\n@@ -0,0 +1 @@\n+x\n';
    expectError(await editTool.execute({ patch }, ctx), 'OUTSIDE_CWD');
    expect(text('src/old.ts')).toBe('old\n');
    expect(fs.existsSync(path.join(path.dirname(dir), 'escaped.ts'))).toBe(false);
  });
});

describe('run', () => {
  test('returns combined output and the exit code', async () => {
    const result = await runTool.execute({ command: 'echo out; echo err >&2; pwd' }, ctx);
    expect(expectOk(result)).toBe(`out\nerr\n${dir}\n[exit code 0]`);
    expect(result.details).toMatchObject({ exitCode: 0, signal: null, outputCut: false });
  });

  test('a non-zero exit is EXIT_CODE with the output', async () => {
    const result = await runTool.execute({ command: 'echo failing; exit 3' }, ctx);
    expect(expectError(result, 'EXIT_CODE')).toBe('failing\n[exit code 3]');
    expect(result.details.exitCode).toBe(3);
  });

  test('big output keeps the head and the tail and marks the cut', async () => {
    const result = await runTool.execute({ command: 'echo FIRST; head -c 300000 /dev/zero | tr "\\0" x; echo; echo LAST' }, ctx);
    const out = expectOk(result);
    expect(out.startsWith('FIRST\n')).toBe(true);
    expect(out).toMatch(/\[\.\.\. \d+ bytes of output cut \.\.\.\]/);
    expect(out.endsWith('LAST\n[exit code 0]')).toBe(true);
    expect(out.length).toBeLessThan(60 * 1024);
    expect(result.details).toMatchObject({ outputCut: true, outputBytes: 300012 });
  });

  test('a timeout is TIMEOUT and kills the whole process group', async () => {
    const started = Date.now();
    const result = await runTool.execute({ command: 'sleep 30 & echo $! > bg.pid; echo started; wait', timeoutMs: 300 }, ctx);
    expect(expectError(result, 'TIMEOUT')).toContain('started\n[killed after 300 ms: timeout]');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await stillAlive(Number(text('bg.pid')))).toBe(false);
  });

  test('an abort is ABORTED and kills the whole process group', async () => {
    const controller = new AbortController();
    const pending = runTool.execute({ command: 'sleep 30 & echo $! > bg.pid; wait' }, { ...ctx, signal: controller.signal });
    await waitFor(() => fs.existsSync(at('bg.pid')) && text('bg.pid').trim() !== '');
    controller.abort();
    const result = await pending;
    expect(expectError(result, 'ABORTED')).toContain('[killed: the call was aborted]');
    expect(await stillAlive(Number(text('bg.pid')))).toBe(false);
  });

  test('an already aborted signal runs nothing', async () => {
    const result = await runTool.execute({ command: 'touch ran.txt' }, { ...ctx, signal: AbortSignal.abort() });
    expectError(result, 'ABORTED');
    expect(fs.existsSync(at('ran.txt'))).toBe(false);
  });
});

/** Whether `pid` still runs (a zombie counts as dead), polling briefly for a kill to land. */
async function stillAlive(pid: number): Promise<boolean> {
  const running = () => {
    try {
      return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    } catch {
      return false;
    }
  };
  const deadline = Date.now() + 2000;
  while (running()) {
    if (Date.now() > deadline) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}
