/**
 * `edit` changes only the bytes it was asked to change: a file that is not
 * valid UTF-8 comes back byte for byte outside the edited range in every
 * mode, inserted lines take the file's line ending, and `read` shows bytes
 * that are not UTF-8 as U+FFFD without ever writing them that way.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { editTool, readTool, type ToolContext, writeTool } from '../packages/coding-agent/src/index.ts';
import { expectError, expectOk } from './support/agent.ts';
import { removeDir, tempDir } from './support/fs.ts';

let dir = '';
let ctx: ToolContext;

beforeEach(() => {
  dir = tempDir('agent-edit-bytes');
  ctx = { cwd: dir };
});
afterEach(() => removeDir(dir));

const at = (rel: string) => path.join(dir, rel);
const bytesOf = (rel: string) => fs.readFileSync(at(rel));
/** Latin-1 bytes of `text` (every character below U+0100). */
const latin1 = (text: string) => Buffer.from(text, 'latin1');

/** The `LINE:HASH` anchors `read` shows for `rel`. */
async function anchors(rel: string): Promise<string[]> {
  return expectOk(await readTool.execute({ path: rel }, ctx))
    .split('\n')
    .map((line) => line.slice(0, line.indexOf('|')).trim());
}

describe('a file that is not valid UTF-8 is edited byte-exactly', () => {
  const original = 'caf\u00e9 cr\u00e8me\nplain line\nna\u00efve \u00fcber\n';

  test('replace', async () => {
    fs.writeFileSync(at('l1.txt'), latin1(original));
    expectOk(await editTool.execute({ path: 'l1.txt', oldText: 'plain line', newText: 'edited line' }, ctx));
    expect(bytesOf('l1.txt')).toEqual(latin1('caf\u00e9 cr\u00e8me\nedited line\nna\u00efve \u00fcber\n'));
  });

  test('hashline', async () => {
    fs.writeFileSync(at('l1.txt'), latin1(original));
    const [, second] = await anchors('l1.txt');
    expectOk(await editTool.execute({ mode: 'hashline', path: 'l1.txt', edits: [{ op: 'replace', anchor: second!, text: 'edited line' }] }, ctx));
    expect(bytesOf('l1.txt')).toEqual(latin1('caf\u00e9 cr\u00e8me\nedited line\nna\u00efve \u00fcber\n'));
  });

  test('patch', async () => {
    fs.writeFileSync(at('l1.txt'), latin1(original));
    const patch = '--- a/l1.txt\n+++ b/l1.txt\n@@ -2 +2 @@\n-plain line\n+edited line\n';
    expectOk(await editTool.execute({ mode: 'patch', patch }, ctx));
    expect(bytesOf('l1.txt')).toEqual(latin1('caf\u00e9 cr\u00e8me\nedited line\nna\u00efve \u00fcber\n'));
  });

  test('a patch renaming the file keeps its bytes', async () => {
    fs.writeFileSync(at('l1.txt'), latin1(original));
    const patch = 'diff --git a/l1.txt b/l2.txt\nsimilarity index 100%\nrename from l1.txt\nrename to l2.txt\n';
    expectOk(await editTool.execute({ mode: 'patch', patch }, ctx));
    expect(bytesOf('l2.txt')).toEqual(latin1(original));
  });

  test('read shows the bytes that are not UTF-8 as U+FFFD', async () => {
    fs.writeFileSync(at('l1.txt'), Buffer.concat([Buffer.from('ok '), Buffer.from([0xe9, 0xff]), Buffer.from(' \u20ac\n')]));
    const shown = expectOk(await readTool.execute({ path: 'l1.txt' }, ctx));
    expect(shown.slice(shown.indexOf('|') + 2)).toBe('ok \ufffd\ufffd \u20ac');
  });

  test('a UTF-8 byte order mark survives an edit', async () => {
    fs.writeFileSync(at('bom.txt'), Buffer.from('\ufeffone\ntwo\n'));
    expectOk(await editTool.execute({ path: 'bom.txt', oldText: 'two', newText: 'TWO' }, ctx));
    expect(bytesOf('bom.txt')).toEqual(Buffer.from('\ufeffone\nTWO\n'));
  });
});

describe('inserted lines take the line ending of the lines they replace', () => {
  test('a one-line replace in a CRLF file with a multi-line newText', async () => {
    fs.writeFileSync(at('w.txt'), 'one\r\ntwo\r\nthree\r\n');
    expectOk(await editTool.execute({ path: 'w.txt', oldText: 'two', newText: 'two\nand a half' }, ctx));
    expect(bytesOf('w.txt').toString('latin1')).toBe('one\r\ntwo\r\nand a half\r\nthree\r\n');
  });

  test('an LF file stays LF', async () => {
    fs.writeFileSync(at('u.txt'), 'one\ntwo\nthree\n');
    expectOk(await editTool.execute({ path: 'u.txt', oldText: 'two', newText: 'two\r\nand a half' }, ctx));
    expect(bytesOf('u.txt').toString('latin1')).toBe('one\ntwo\nand a half\nthree\n');
  });
});

describe('model text holding a lone surrogate is refused, naming the argument', () => {
  const lone = 'caf\udce9';
  const cases: [string, Record<string, unknown>, string][] = [
    ['newText', { path: 'f.txt', oldText: 'one', newText: lone }, '`newText`'],
    ['oldText', { path: 'f.txt', oldText: lone, newText: 'x' }, '`oldText`'],
    ['hashline text', { mode: 'hashline', path: 'f.txt', edits: [{ op: 'insert_after', anchor: '1:0000', text: 'ok' }, { op: 'insert_before', anchor: '1:0000', text: `a\n${lone}` }] }, '`edits[1].text` holds a lone UTF-16 surrogate (line 2)'],
    ['patch', { mode: 'patch', patch: `--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-one\n+${lone}\n` }, '`patch` holds a lone UTF-16 surrogate (line 5)'],
  ];
  test.each(cases)('%s', async (_name, args, named) => {
    fs.writeFileSync(at('f.txt'), 'one\n');
    expect(expectError(await editTool.execute(args as never, ctx), 'INVALID_ARGS')).toContain(named);
    expect(bytesOf('f.txt').toString()).toBe('one\n');
  });

  test('write: content and path', async () => {
    fs.writeFileSync(at('f.txt'), 'one\n');
    expect(expectError(await writeTool.execute({ path: 'f.txt', content: lone }, ctx), 'INVALID_ARGS')).toContain('`content`');
    expect(expectError(await writeTool.execute({ path: lone, content: 'x' }, ctx), 'INVALID_ARGS')).toContain('`path`');
    expect(bytesOf('f.txt').toString()).toBe('one\n');
    expect(fs.readdirSync(dir)).toEqual(['f.txt']);
  });
});
