// The natives MCP server on a hostile tree, through the SDK client: every path that leads out of the
// root is refused for reading and writing alike (a link out, a chain of links, a dangling link
// through an in-root link, a sibling whose name starts with the root's, a directory swapped for a
// link by another process during 1,000 reads and 1,000 writes), a hard link is read but never
// written, FIFOs never block the server, and edits keep every byte and mode they were not asked to
// change. Everything lives in one temp folder: `ws` (the root) beside `outside` and `ws-evil`.
import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, linkSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, cleanup, expectError, expectOk, startServer, tempFolder, within, writeTree } from './mcp-harness.mjs';

const SECRET = 'SECRET OUTSIDE BYTES\n';

/** Run `body(server, ws, base)` against a server rooted at `base/ws`, with `base/outside` and `base/ws-evil` beside it. */
async function withHostileTree(env, body) {
  const base = tempFolder('natives-mcp-hostile-');
  const ws = join(base, 'ws');
  writeTree(base, { 'ws/inside.txt': 'inside\n', 'outside/secret.txt': SECRET, 'ws-evil/evil.txt': SECRET });
  const server = await startServer(env.command, ['--root', ws]);
  try {
    return await body(server, ws, base);
  } finally {
    await server.close();
    cleanup(base);
  }
}

/** `outside` and `ws-evil` hold exactly what they held at the start. */
function assertOutsideUntouched(base) {
  for (const [dir, name] of [['outside', 'secret.txt'], ['ws-evil', 'evil.txt']]) {
    assert.deepEqual(readdirSync(join(base, dir)), [name], `nothing was created in ${dir}`);
    assert.equal(readFileSync(join(base, dir, name), 'utf8'), SECRET);
  }
}

/** Links out of the root: one, a chain, a dangling one through an in-root link to outside; reads and writes refused. */
async function linksOut(env) {
  await withHostileTree(env, async (server, ws, base) => {
    symlinkSync('../outside/secret.txt', join(ws, 'out-file'));
    symlinkSync('../outside', join(ws, 'out-dir'));
    symlinkSync('chain-2', join(ws, 'chain-1'));
    symlinkSync('out-dir/secret.txt', join(ws, 'chain-2'));
    symlinkSync('../outside', join(ws, 'hop'));
    symlinkSync('hop/created.txt', join(ws, 'dangling'));
    for (const path of ['out-file', 'out-dir/secret.txt', 'chain-1', 'dangling', 'hop/secret.txt']) {
      expectError(await call(server, 'read', { path }), 'OUTSIDE_CWD');
      expectError(await call(server, 'write', { path, content: 'x' }), 'OUTSIDE_CWD');
      if (path !== 'dangling') expectError(await call(server, 'edit', { path, oldText: 'SECRET', newText: 'x' }), 'OUTSIDE_CWD');
      expectError(await call(server, 'grep', { pattern: 'SECRET', path }), 'OUTSIDE_CWD');
    }
    expectError(await call(server, 'write', { path: 'out-dir/new.txt', content: 'x' }), 'OUTSIDE_CWD');
    expectError(await call(server, 'edit', { patch: '--- /dev/null\n+++ b/hop/new.txt\n@@ -0,0 +1 @@\n+x\n' }), 'OUTSIDE_CWD');
    expectError(await call(server, 'glob', { pattern: '*', path: 'out-dir' }), 'OUTSIDE_CWD');
    expectError(await call(server, 'find', { query: 'secret', path: 'hop' }), 'OUTSIDE_CWD');
    // A search of the root lists links as entries and never follows them.
    assert.match(expectOk(await call(server, 'grep', { pattern: 'SECRET' })), /No matches/);
    assertOutsideUntouched(base);
  });
}

/** `ws-evil` beside `ws`: its name starts with the root's, it is not inside it. */
async function siblingPrefix(env) {
  await withHostileTree(env, async (server, _ws, base) => {
    const evil = join(base, 'ws-evil', 'evil.txt');
    for (const path of [evil, '../ws-evil/evil.txt']) {
      expectError(await call(server, 'read', { path }), 'OUTSIDE_CWD');
      expectError(await call(server, 'write', { path, content: 'x' }), 'OUTSIDE_CWD');
      expectError(await call(server, 'edit', { path, oldText: 'SECRET', newText: 'x' }), 'OUTSIDE_CWD');
    }
    for (const path of [join(base, 'ws-evil'), '../ws-evil']) {
      expectError(await call(server, 'grep', { pattern: 'SECRET', path }), 'OUTSIDE_CWD');
      expectError(await call(server, 'write', { path: `${path}/new.txt`, content: 'x' }), 'OUTSIDE_CWD');
    }
    assertOutsideUntouched(base);
  });
}

/**
 * Another process swaps `ws/sub` between a directory and a link to `outside` while 1,000 reads and
 * 1,000 writes go through it: no read returns an outside byte, no write lands outside. The race is
 * real only if some calls met the link, so refusals are counted and must be some.
 */
async function swappedDirectory(env) {
  await withHostileTree(env, async (server, ws, base) => {
    writeTree(ws, { 'sub/secret.txt': 'inside sub\n' });
    const stop = join(base, 'stop');
    const swapper = spawn(process.execPath, [join(dirname(fileURLToPath(import.meta.url)), 'mcp-swapper.mjs'), join(ws, 'sub'), join(base, 'outside'), stop], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const rounds = new Promise((resolve) => swapper.stdout.on('data', (data) => resolve(Number(data))));
    const tally = { read: 0, written: 0, refused: 0, other: 0 };
    try {
      await Promise.all(Array.from({ length: 8 }, (_, lane) => raceLane(server, lane, tally)));
    } finally {
      writeFileSync(stop, '');
    }
    const swaps = await within(30_000, rounds, 'the swapper');
    assert.ok(tally.read + tally.written + tally.refused + tally.other >= 2000);
    assert.ok(tally.refused > 0, `no call met the link (${JSON.stringify(tally)}, ${swaps} swaps): the race was not run`);
    assertOutsideUntouched(base);
    return { ...tally, swaps };
  });
}

/** One of 8 lanes of calls: 125 reads and 125 writes each. */
async function raceLane(server, lane, tally) {
  for (let i = 0; i < 125; i++) {
    const read = await call(server, 'read', { path: 'sub/secret.txt' });
    assert.ok(!read.content[0].text.includes('SECRET OUTSIDE'), `a read returned outside bytes: ${read.content[0].text}`);
    count(tally, read, 'read');
    count(tally, await call(server, 'write', { path: `sub/w-${lane}-${i}.txt`, content: 'x' }), 'written');
  }
}

function count(tally, result, ok) {
  if (!result.isError) tally[ok]++;
  else if (result._meta['natives/error'].code === 'OUTSIDE_CWD') tally.refused++;
  else tally.other++;
}

/**
 * A hard link inside the root to a file outside it. Policy: a hard link is the file itself (no
 * real location tells its names apart), so it is read like any file in the root; it is never
 * written (HARD_LINKED: replacing it would part it from its other name), and the outside name
 * keeps its bytes.
 */
async function hardLink(env) {
  await withHostileTree(env, async (server, ws, base) => {
    linkSync(join(base, 'outside', 'secret.txt'), join(ws, 'hard.txt'));
    assert.match(expectOk(await call(server, 'read', { path: 'hard.txt' })), /SECRET OUTSIDE BYTES/);
    expectError(await call(server, 'write', { path: 'hard.txt', content: 'x' }), 'HARD_LINKED');
    expectError(await call(server, 'edit', { path: 'hard.txt', oldText: 'SECRET', newText: 'x' }), 'HARD_LINKED');
    assertOutsideUntouched(base);
  });
}

/** Four reads of a FIFO at once are refused at once, and a normal read after them is answered. */
async function fifos(env) {
  await withHostileTree(env, async (server, ws) => {
    execFileSync('mkfifo', [join(ws, 'pipe')]);
    const reads = Array.from({ length: 4 }, () => call(server, 'read', { path: 'pipe' }));
    for (const result of await within(10_000, Promise.all(reads), 'four FIFO reads')) expectError(result, 'NOT_REGULAR');
    assert.match(expectOk(await within(10_000, call(server, 'read', { path: 'inside.txt' }), 'the read after them')), /inside/);
    expectError(await call(server, 'edit', { path: 'pipe', oldText: 'a', newText: 'b' }), 'NOT_REGULAR');
    expectError(await call(server, 'write', { path: 'pipe', content: 'x' }), 'NOT_REGULAR');
    assert.ok(statSync(join(ws, 'pipe')).isFIFO());
  });
}

/** Edits keep what they were not asked to change: Latin-1 bytes, CRLF, a BOM, modes; a 0444 file is not changed. */
async function bytesAndModes(env) {
  await withHostileTree(env, async (server, ws) => {
    const files = {
      'latin1.txt': [Buffer.from('caf\xe9 = 1\n', 'latin1'), Buffer.from('caf\xe9 = 2\n', 'latin1')],
      'crlf.txt': [Buffer.from('a = 1\r\nb = 0\r\n'), Buffer.from('a = 2\r\nb = 0\r\n')],
      'bom.txt': [Buffer.from('\ufeffa = 1\n'), Buffer.from('\ufeffa = 2\n')],
      'exec.sh': [Buffer.from('a = 1\n'), Buffer.from('a = 2\n')],
    };
    for (const [name, [before]] of Object.entries(files)) writeFileSync(join(ws, name), before);
    chmodSync(join(ws, 'exec.sh'), 0o755);
    writeFileSync(join(ws, 'ro.txt'), 'a = 1\n');
    chmodSync(join(ws, 'ro.txt'), 0o444);
    for (const [name, [, after]] of Object.entries(files)) {
      expectOk(await call(server, 'edit', { path: name, oldText: '= 1', newText: '= 2' }));
      assert.deepEqual(readFileSync(join(ws, name)), after, name);
    }
    assert.equal(statSync(join(ws, 'exec.sh')).mode & 0o777, 0o755);
    expectError(await call(server, 'edit', { path: 'ro.txt', oldText: '= 1', newText: '= 2' }), 'READ_ONLY');
    expectError(await call(server, 'write', { path: 'ro.txt', content: 'x' }), 'READ_ONLY');
    assert.equal(readFileSync(join(ws, 'ro.txt'), 'utf8'), 'a = 1\n');
    assert.equal(statSync(join(ws, 'ro.txt')).mode & 0o777, 0o444);
  });
}

export const HOSTILE_CASES = [
  { name: 'hostile: a link out, a chain, a dangling link through an in-root link: reads and writes refused', run: linksOut },
  { name: 'hostile: a sibling whose name starts with the root\'s (ws-evil) is outside', run: siblingPrefix },
  { name: 'hostile: a directory swapped for a link during 1,000 reads and 1,000 writes: no byte out, none in', run: swappedDirectory },
  { name: 'hostile: a hard link to an outside file is read, never written', run: hardLink },
  { name: 'hostile: four FIFO reads at once, then a normal read, all answered', run: fifos },
  { name: 'hostile: Latin-1, CRLF, BOM, 0755 edited byte-exactly; 0444 refused', run: bytesAndModes },
];
