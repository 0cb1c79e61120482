/**
 * Confined searches (`confineReads`, as the MCP server runs them) while another process swaps a
 * directory inside cwd with a link to a folder outside, as fast as it can and atomically
 * (renameat2 RENAME_EXCHANGE, so the name is always one or the other): 1,000 greps, cached and
 * not, from cwd and from the swapped directory, and finds and fuzzy finds beside them. The check
 * of where a search starts is of the start only; the walk below it goes by path. No answer may
 * hold a byte or a name from outside.
 */
import { afterEach, beforeEach, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type ToolContext, type ToolResult, findTool, fuzzyFindTool, grepTool } from '../packages/coding-agent/src/index.ts';
import { removeDir, tempDir, writeTree } from './support/fs.ts';

/** What only the outside folder holds: in its files' bytes, in its names. */
const OUTSIDE = ['OUTSIDE-BYTES', 'OUTSIDE-marker', 'outside-sub'];
const GREPS = 1000;

let dir = '';
let cwd = '';

beforeEach(() => {
  dir = tempDir('agent-confine-race');
  cwd = path.join(dir, 'cwd');
  writeTree(cwd, { 'in.txt': 'needle inside\n', 'd/inside.txt': 'needle inside d\n', 'd/e/deep.txt': 'needle deep\n' });
  writeTree(path.join(dir, 'elsewhere'), { 'OUTSIDE-marker.txt': 'needle OUTSIDE-BYTES\n', 'outside-sub/x.txt': 'needle OUTSIDE-BYTES\n' });
  fs.symlinkSync(path.join(dir, 'elsewhere'), path.join(cwd, 'dlink'));
});
afterEach(() => removeDir(dir));

/** The outside strings `result` holds, if any. */
function leaked(result: ToolResult): string[] {
  const all = `${result.text}\n${JSON.stringify(result.details)}`;
  return OUTSIDE.filter((marker) => all.includes(marker));
}

test(`${GREPS} confined greps during a directory/link swap: nothing from outside is read or named`, async () => {
  const stop = path.join(dir, 'stop');
  const exchange = [
    'import ctypes, os, time',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'end = time.time() + 120',
    `while time.time() < end and not os.path.exists(${JSON.stringify(stop)}): libc.renameat2(-100, b"d", -100, b"dlink", 2)`,
  ].join('\n');
  const swapper = Bun.spawn(['python3', '-c', exchange], { cwd, stdout: 'ignore', stderr: 'inherit' });
  const leaks: string[] = [];
  const seen = { inside: 0, refused: 0 };
  try {
    // Start once the swapper is flipping.
    while (!fs.lstatSync(path.join(cwd, 'd'), { throwIfNoEntry: false })?.isSymbolicLink()) await Bun.sleep(1);
    for (let i = 0; i < GREPS; i++) {
      const ctx: ToolContext = { cwd, confineReads: true, scanCache: i % 4 < 2 };
      const from = i % 2 === 0 ? {} : { path: 'd' };
      const results = [await grepTool.execute({ pattern: 'needle', ...from }, ctx)];
      if (i % 5 === 0) results.push(await findTool.execute({ pattern: '*.txt', ...from }, ctx), await fuzzyFindTool.execute({ query: 'txt', ...from }, ctx));
      for (const result of results) {
        const found = leaked(result);
        if (found.length > 0) leaks.push(`${found.join(', ')} in: ${result.text.slice(0, 300)}`);
        if (result.text.includes('inside')) seen.inside++;
        if (result.details.code === 'OUTSIDE_CWD') seen.refused++;
      }
    }
  } finally {
    fs.writeFileSync(stop, '');
    await swapper.exited;
  }
  expect(leaks.slice(0, 5)).toEqual([]);
  // Both sides of the race were met: searches that found the inside files, and searches whose start was a link.
  expect(seen.inside).toBeGreaterThan(0);
  expect(seen.refused).toBeGreaterThan(0);
}, 180_000);
