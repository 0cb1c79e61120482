// The agent tools under Node 20 (through tsx): write, read, replace and hashline edits round-trip; grep and find see the result;
// a name that is not UTF-8 and a byte order mark come back byte for byte.
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { editTool, findTool, grepTool, lineHashes, readTool, writeTool } from '../../packages/coding-agent/src/index.ts';

// The working directory lies inside a folder this check owns: the `../escape.txt` refused below would land there.
const base = realpathSync(mkdtempSync(join(tmpdir(), 'natives-node-agent-')));
const cwd = join(base, 'cwd');
mkdirSync(cwd);
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

  const latin1 = Buffer.from(join(cwd, 'caf\xe9.txt'), 'latin1');
  writeFileSync(latin1, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('one\n')]));
  const quoted = '"caf\\351.txt"';
  const named = await editTool.execute({ path: quoted, oldText: 'one', newText: 'two' }, ctx);
  assert.equal(named.isError, undefined, named.text);
  assert.ok(named.text.includes(quoted), named.text);
  assert.deepEqual(readFileSync(latin1), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('two\n')]));
  assert.deepEqual(readdirSync(cwd, { encoding: 'buffer' }).sort(Buffer.compare), [Buffer.from('caf\xe9.txt', 'latin1'), Buffer.from('src')]);
  console.log('node agent smoke: write, read, replace, hashline, stale anchor, containment, grep, find, non-UTF-8 name, byte order mark ok');
} finally {
  rmSync(base, { recursive: true, force: true });
}
