/**
 * What a host turns on for an MCP client: reads confined to `cwd` like writes (`confineReads`), the
 * shared scan cache for searches (`scanCache`), and the tools the MCP server adds (`fuzzy_find`,
 * `find` pages). Without the switches the tools read anywhere and walk fresh, as before.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type ToolContext, findTool, fuzzyFindTool, grepTool, readTool } from '../packages/coding-agent/src/index.ts';
import { realPath } from '../packages/natives/src/index.ts';
import { expectError, expectOk } from './support/agent.ts';
import { removeDir, tempDir, writeTree } from './support/fs.ts';

let dir = '';
let cwd = '';
let confined: ToolContext;

beforeEach(() => {
  dir = fs.realpathSync(tempDir('agent-confine'));
  cwd = path.join(dir, 'cwd');
  writeTree(cwd, { 'in.txt': 'inside\n', 'src/a.ts': 'export const a = 1;\n', 'src/b.ts': 'export const b = 1;\n' });
  writeTree(path.join(dir, 'outside'), { 'secret.txt': 'outside\n' });
  fs.symlinkSync('../outside/secret.txt', path.join(cwd, 'out-file'));
  fs.symlinkSync('../outside', path.join(cwd, 'out-dir'));
  confined = { cwd, confineReads: true };
});
afterEach(() => removeDir(dir));

describe('confineReads', () => {
  test('read, grep and find refuse a path whose real location leaves cwd; without it they read there', async () => {
    expectError(await readTool.execute({ path: 'out-file' }, confined), 'OUTSIDE_CWD');
    expectError(await readTool.execute({ path: '../outside/secret.txt' }, confined), 'OUTSIDE_CWD');
    expectError(await grepTool.execute({ pattern: 'outside', path: 'out-dir' }, confined), 'OUTSIDE_CWD');
    expectError(await findTool.execute({ pattern: '*', path: 'out-dir' }, confined), 'OUTSIDE_CWD');
    expectError(await fuzzyFindTool.execute({ query: 'secret', path: 'out-dir' }, confined), 'OUTSIDE_CWD');
    expect(expectOk(await readTool.execute({ path: 'out-file' }, { cwd }))).toContain('outside');
    expect(expectOk(await readTool.execute({ path: 'out-file' }, { ...confined, allowOutsideCwd: true }))).toContain('outside');
    expect(expectOk(await readTool.execute({ path: 'in.txt' }, confined))).toContain('inside');
  });

  test('realPath resolves links on the filesystem and refuses one leading out when confined', async () => {
    expect(await realPath('out-dir', { cwd })).toBe(path.join(dir, 'outside'));
    expect(await realPath('src/missing/x.ts', { cwd, confine: true })).toBe(path.join(cwd, 'src/missing/x.ts'));
    await expect(realPath('out-dir', { cwd, confine: true })).rejects.toMatchObject({ code: 'EXDEV' });
  });
});

describe('fuzzy_find and paging', () => {
  test('fuzzy_find ranks by name and pages with offset', async () => {
    expect(expectOk(await fuzzyFindTool.execute({ query: 'a.ts' }, confined)).split('\n')[0]).toBe('src/a.ts');
    const first = await fuzzyFindTool.execute({ query: '.ts', limit: 1 }, { ...confined, scanCache: true });
    expect(first.details).toMatchObject({ limitReached: true, nextOffset: 1 });
    const next = await fuzzyFindTool.execute({ query: '.ts', limit: 1, offset: 1 }, { ...confined, scanCache: true });
    expect(next.details.entries).not.toEqual(first.details.entries);
  });

  test('find continues a cut answer at offset', async () => {
    const all = (await findTool.execute({ pattern: '*.ts' }, confined)).details.files as string[];
    const page = await findTool.execute({ pattern: '*.ts', limit: 1, offset: 1 }, { ...confined, scanCache: true });
    expect(page.details.files).toEqual([all[1]]);
    expect(expectOk(page)).toContain('[Showing files 2-2 of 2 matching files.]');
  });
});
