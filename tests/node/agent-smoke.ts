// The agent tools under Node 20 (through tsx): write, read, replace and hashline edits round-trip; grep and find see the result.
import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { editTool, findTool, grepTool, lineHashes, readTool, writeTool } from '../../packages/coding-agent/src/index.ts';

const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'natives-node-agent-')));
try {
  const ctx = { cwd };
  const written = await writeTool.execute({ path: 'src/greet.ts', content: 'export const greeting = "hello";\nexport const n = 1;\n' }, ctx);
  assert.equal(written.isError, undefined, written.text);

  const read = await readTool.execute({ path: 'src/greet.ts' }, ctx);
  const [h1, h2] = lineHashes(['export const greeting = "hello";', 'export const n = 1;']);
  assert.equal(read.text, `1:${h1}| export const greeting = "hello";\n2:${h2}| export const n = 1;`);

  const replaced = await editTool.execute({ path: 'src/greet.ts', oldText: '"hello"', newText: '"hi"' }, ctx);
  assert.equal(replaced.isError, undefined, replaced.text);

  const anchor = `2:${lineHashes(['export const greeting = "hi";', 'export const n = 1;'])[1]}`;
  const hashed = await editTool.execute({ mode: 'hashline', path: 'src/greet.ts', edits: [{ op: 'replace', anchor, text: 'export const n = 2;' }] }, ctx);
  assert.equal(hashed.isError, undefined, hashed.text);
  assert.equal(readFileSync(join(cwd, 'src/greet.ts'), 'utf8'), 'export const greeting = "hi";\nexport const n = 2;\n');

  const stale = await editTool.execute({ mode: 'hashline', path: 'src/greet.ts', edits: [{ op: 'delete', anchor }] }, ctx);
  assert.equal(stale.details.code, 'STALE');
  const outside = await writeTool.execute({ path: '../escape.txt', content: 'x' }, ctx);
  assert.equal(outside.details.code, 'OUTSIDE_CWD');

  const grepped = await grepTool.execute({ pattern: 'n = \\d' }, ctx);
  assert.equal(grepped.text, 'src/greet.ts:2:export const n = 2;');
  const badRegex = await grepTool.execute({ pattern: 'greeting(' }, ctx);
  assert.equal(badRegex.details.code, 'INVALID_PATTERN');
  const found = await findTool.execute({ pattern: '*.ts' }, ctx);
  assert.equal(found.text, 'src/greet.ts');
  const missing = await findTool.execute({ pattern: '*.ts', path: 'nope' }, ctx);
  assert.equal(missing.details.code, 'ENOENT');
  console.log('node agent smoke: write, read, replace, hashline, stale anchor, containment, grep, find ok');
} finally {
  rmSync(cwd, { recursive: true, force: true });
}
