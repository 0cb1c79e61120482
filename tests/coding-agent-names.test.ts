/**
 * A file whose name is not UTF-8 (`caf\xe9.txt`, a Latin-1 byte) through the search side: glob, grep
 * and fuzzyFind hand its name over with every byte (a stray byte as the lone surrogate U+DC00 +
 * byte), unreadable paths too; the grep, find and fuzzy_find tools show it C-quoted as read does,
 * and read, edit and write given the listed name reach that very file. A copy of the name that lost
 * the byte (U+FFFD in its place), as a host's own listing may hand it over, is answered naming the
 * real file, and write makes no second file beside it.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type ToolContext, type ToolResult, editTool, findTool, fuzzyFindTool, grepTool, readTool, writeTool } from '../packages/coding-agent/src/index.ts';
import { fuzzyFind, glob, grep, readFile } from './support/natives.ts';
import { expectError, expectOk } from './support/agent.ts';
import { removeDir, tempDir } from './support/fs.ts';

/** The name as natives hands it over, and as the tools show it. */
const ESCAPED = 'sub/caf\udce9.txt';
const QUOTED = '"sub/caf\\351.txt"';
/** The name with its byte lost, as a lossy listing shows it. */
const LOSSY = 'sub/caf\ufffd.txt';

let dir = '';
let cwd = '';
let ctx: ToolContext;
/** The file's own path, as bytes. */
let file: Buffer;

beforeEach(() => {
  dir = tempDir('agent-names');
  cwd = path.join(dir, 'cwd');
  fs.mkdirSync(path.join(cwd, 'sub'), { recursive: true });
  file = Buffer.concat([Buffer.from(`${cwd}/sub/`), Buffer.from('caf\xe9.txt', 'latin1')]);
  fs.writeFileSync(file, 'needle\n');
  ctx = { cwd };
});
afterEach(() => removeDir(dir));

/** The names `sub` holds, as bytes. */
const inSub = () => fs.readdirSync(path.join(cwd, 'sub'), { encoding: 'buffer' });

describe('search results keep every byte of a name', () => {
  for (const cache of [false, true]) {
    test(`glob, grep and fuzzyFind name the file by its bytes, and readFile takes the name back (cache ${cache})`, async () => {
      const globbed = await glob({ pattern: '**/*.txt', path: cwd, cache });
      const grepped = await grep({ pattern: 'needle', path: cwd, cache });
      const found = await fuzzyFind({ query: 'caf', path: cwd, cache });
      expect(globbed.matches.map((m) => m.path)).toEqual([ESCAPED]);
      expect(grepped.matches.map((m) => m.path)).toEqual([ESCAPED]);
      const match = found.matches.find((m) => m.path === ESCAPED)!;
      expect([...match.path].filter((_, i) => match.indices.includes(i)).join('')).toBe('caf');
      expect((await readFile(ESCAPED, { cwd })).data.toString()).toBe('needle\n');
    });
  }

  test('a directory named so can be a search root, and grep a named file in it', async () => {
    const globbed = await glob({ pattern: '*', path: path.join(cwd, 'sub') });
    expect(globbed.matches.map((m) => m.path)).toEqual(['caf\udce9.txt']);
    const named = await grep({ pattern: 'needle', path: `${cwd}/${ESCAPED}` });
    expect(named.matches.map((m) => [m.path, m.line])).toEqual([['caf\udce9.txt', 'needle']]);
  });

  test('an unreadable path keeps its bytes', async () => {
    // A directory named with the byte whose subtree reaches past PATH_MAX, built from the bottom up
    // (each level moved under a new one) since no single path may name its depths.
    const top = Buffer.concat([Buffer.from(`${cwd}/`), Buffer.from('d\xe9p', 'latin1')]);
    const level = (n: number) => Buffer.concat([top, Buffer.from(`/${String(n).padStart(3, '0')}${'x'.repeat(200)}`)]);
    fs.mkdirSync(level(0), { recursive: true });
    for (let n = 1; n < 22; n++) {
      fs.mkdirSync(level(n));
      fs.renameSync(level(n - 1), Buffer.concat([level(n), Buffer.from(level(n - 1).subarray(top.length))]));
    }
    const globbed = await glob({ pattern: '**/*', path: cwd });
    expect(globbed.unreadable.length).toBeGreaterThan(0);
    expect(globbed.unreadable.every((u) => u.path.startsWith('d\udce9p/'))).toBe(true);
    const result = await findTool.execute({ pattern: '*' }, ctx);
    expect((result.details.unreadablePaths as { path: string }[])[0]!.path.startsWith('"d\\351p/')).toBe(true);
  });
});

/** Each tool that lists files, with arguments that list this one. */
const listers: Record<string, () => Promise<ToolResult>> = {
  'grep (content)': () => grepTool.execute({ pattern: 'needle' }, ctx),
  'grep (filesWithMatches)': () => grepTool.execute({ pattern: 'needle', mode: 'filesWithMatches' }, ctx),
  'grep (count)': () => grepTool.execute({ pattern: 'needle', mode: 'count', path: '"sub"' }, ctx),
  find: () => findTool.execute({ pattern: '*.txt' }, ctx),
  fuzzy_find: () => fuzzyFindTool.execute({ query: 'caf' }, ctx),
};

describe('the tools list such a name C-quoted, as read does, and take it back', () => {
  for (const [name, list] of Object.entries(listers)) {
    test(`${name}: read, edit and write through the listed name reach that very file`, async () => {
      const text = expectOk(await list());
      const listed = /"(?:[^"\\]|\\.)*"/.exec(text)?.[0];
      expect(listed).toBe(QUOTED);
      expect(expectOk(await readTool.execute({ path: listed! }, ctx))).toContain('| needle');
      expectOk(await editTool.execute({ path: listed!, oldText: 'needle', newText: 'edited' }, ctx));
      expect(fs.readFileSync(file, 'utf8')).toBe('edited\n');
      expect(expectOk(await writeTool.execute({ path: listed!, content: 'written\n' }, ctx))).toContain(QUOTED);
      expect(fs.readFileSync(file, 'utf8')).toBe('written\n');
      expect(inSub()).toEqual([Buffer.from('caf\xe9.txt', 'latin1')]);
    });
  }
});

describe('a copy of the name that lost its byte', () => {
  test('read and edit name the file meant, C-quoted', async () => {
    for (const result of [
      await readTool.execute({ path: LOSSY }, ctx),
      await editTool.execute({ path: LOSSY, oldText: 'needle', newText: 'x' }, ctx),
      await editTool.execute({ patch: `--- a/${LOSSY}\n+++ b/${LOSSY}\n@@ -1 +1 @@\n-needle\n+x\n` }, ctx),
    ]) {
      const message = expectError(result, 'LOSSY_NAME');
      expect(message).toContain(LOSSY);
      expect(message).toContain(QUOTED);
    }
    expect(fs.readFileSync(file, 'utf8')).toBe('needle\n');
  });

  test('write and a patch that creates it refuse, naming both, and make no second file', async () => {
    for (const result of [
      await writeTool.execute({ path: LOSSY, content: 'second\n' }, ctx),
      await editTool.execute({ patch: `--- /dev/null\n+++ b/${LOSSY}\n@@ -0,0 +1 @@\n+second\n` }, ctx),
    ]) {
      const message = expectError(result, 'LOSSY_NAME');
      expect(message).toContain(LOSSY);
      expect(message).toContain(QUOTED);
    }
    expect(inSub()).toEqual([Buffer.from('caf\xe9.txt', 'latin1')]);
    expect(fs.readFileSync(file, 'utf8')).toBe('needle\n');
  });

  test('a name that holds U+FFFD and copies nothing is written as asked', async () => {
    expectOk(await writeTool.execute({ path: 'sub/new\ufffd.txt', content: 'made\n' }, ctx));
    expect(fs.readFileSync(path.join(cwd, 'sub/new\ufffd.txt'), 'utf8')).toBe('made\n');
  });
});
