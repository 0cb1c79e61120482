// The natives MCP server end to end, through the official SDK client over stdio: initialize,
// tools/list (every schema compiles as JSON Schema), every tool, every error code, progress,
// cancellation mid-grep, a roots change, freshness after the server's own edit and after another
// process's write, and the MCP Inspector's CLI. Each case is `{ name, run(env) }`; `env.command` is
// the server's argv (Node or Bun, installed or from source), `env.inspector` the inspector's bin.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, existsSync, linkSync, mkdirSync, openSync, readFileSync, readdirSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import { call, cleanup, expectError, expectOk, startServer, tempFolder, writeTree } from './mcp-harness.mjs';

/** Every stable code a refusal can carry (coding-agent's TOOL_ERROR_CODES). */
export const ERROR_CODES = [
  'INVALID_ARGS', 'ENOENT', 'EISDIR', 'ENOTDIR', 'EACCES', 'NOT_REGULAR', 'TOO_LARGE', 'READ_ONLY', 'HARD_LINKED', 'BINARY',
  'OUTSIDE_CWD', 'NO_MATCH', 'AMBIGUOUS', 'STALE', 'PATCH_FAILED', 'INVALID_PATTERN', 'ABORTED', 'TIMEOUT', 'EXIT_CODE', 'IO',
];

/** Run `body(server, dir)` against a server rooted at a fresh folder holding `files` (its natives home `home`, else its own). */
async function withServer(env, files, body, { args = [], roots, home } = {}) {
  const dir = tempFolder('natives-mcp-');
  writeTree(dir, files);
  const server = await startServer(env.command, roots ? args : ['--root', dir, ...args], { roots: roots?.(dir), home });
  try {
    return await body(server, dir);
  } finally {
    await server.close();
    cleanup(dir);
  }
}

async function initialize(env) {
  await withServer(env, {}, async (server) => {
    const info = server.client.getServerVersion();
    assert.equal(info.name, 'natives');
    assert.match(info.version, /^\d+\.\d+\.\d+/);
    assert.ok(server.client.getServerCapabilities().tools);
    assert.match(server.client.getInstructions(), /roots/);
  });
}

async function toolsList(env) {
  await withServer(env, {}, async (server) => {
    const { tools } = await server.client.listTools();
    assert.deepEqual(tools.map((tool) => tool.name), ['find', 'glob', 'grep', 'read', 'write', 'edit']);
    const ajv = new Ajv({ strict: false });
    for (const tool of tools) {
      for (const schema of [tool.inputSchema, tool.outputSchema]) {
        assert.equal(schema.type, 'object', tool.name);
        ajv.compile(schema);
      }
      assert.ok(tool.outputSchema.required.includes('root'), `${tool.name}: output names the root`);
      const { readOnlyHint, destructiveHint, idempotentHint } = tool.annotations;
      assert.equal(typeof readOnlyHint, 'boolean', tool.name);
      assert.equal(destructiveHint, !readOnlyHint, tool.name);
      assert.equal(typeof idempotentHint, 'boolean', tool.name);
    }
    assert.deepEqual(tools.filter((tool) => tool.annotations.readOnlyHint).map((tool) => tool.name), ['find', 'glob', 'grep', 'read']);
  });
  await withServer(env, {}, async (server) => {
    const { tools } = await server.client.listTools();
    assert.equal(tools.at(-1).name, 'run', 'run is offered with --allow-run');
  }, { args: ['--allow-run'] });
}

async function everyTool(env) {
  const files = { 'src/server.ts': 'export function fetchUser() {}\n', 'src/util.ts': 'export const a = 1;\nexport const b = 2;\n', 'notes.md': 'fetch notes\n' };
  await withServer(env, files, async (server, root) => {
    assert.equal(expectOk(await call(server, 'find', { query: 'srvr' }), root).split('\n')[0], 'src/server.ts');
    assert.deepEqual(expectOk(await call(server, 'glob', { pattern: '*.ts' }), root).split('\n').sort(), ['src/server.ts', 'src/util.ts']);
    assert.equal(expectOk(await call(server, 'grep', { pattern: 'fetch\\w+', glob: '*.ts' }), root), 'src/server.ts:1:export function fetchUser() {}');
    const read = await call(server, 'read', { path: 'src/util.ts' });
    const anchor = expectOk(read, root).split('\n')[1].split('|')[0].trim();
    expectOk(await call(server, 'write', { path: 'src/new.ts', content: 'export {};\n' }), root);
    expectOk(await call(server, 'edit', { path: 'src/server.ts', oldText: 'fetchUser', newText: 'loadUser' }), root);
    expectOk(await call(server, 'edit', { path: 'src/util.ts', edits: [{ op: 'replace', anchor, text: 'export const b = 3;' }] }), root);
    const patch = '--- a/notes.md\n+++ b/notes.md\n@@ -1 +1 @@\n-fetch notes\n+load notes\n';
    assert.equal(expectOk(await call(server, 'edit', { patch }), root), 'Applied the patch to 1 file:\n  modified notes.md');
    assert.equal(expectOk(await call(server, 'read', { path: join(root, 'src/util.ts') }), root).split('|').at(-1), ' export const b = 3;');
    assert.match(expectOk(await call(server, 'grep', { pattern: 'load', mode: 'filesWithMatches' }), root), /notes\.md\nsrc\/server\.ts/);
  });
  await withServer(env, {}, async (server, root) => {
    const ran = await call(server, 'run', { command: 'echo hi > made.txt && cat made.txt' });
    assert.equal(expectOk(ran, root), 'hi\n[exit code 0]');
    assert.equal(ran.structuredContent.exitCode, 0);
  }, { args: ['--allow-run'] });
}

/** Paging: grep, glob and find answer at most the limit asked and say which offset continues. */
async function paging(env) {
  const files = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${String(i).padStart(2, '0')}.txt`, 'needle\n']));
  await withServer(env, files, async (server) => {
    const first = await call(server, 'grep', { pattern: 'needle', maxCount: 10 });
    assert.equal(first.structuredContent.results, 10);
    assert.equal(first.structuredContent.nextOffset, 10);
    const next = await call(server, 'grep', { pattern: 'needle', maxCount: 10, offset: 25 });
    assert.equal(next.structuredContent.results, 5);
    const globbed = await call(server, 'glob', { pattern: '*.txt', limit: 12, offset: 24 });
    assert.equal(globbed.structuredContent.files.length, 6);
    const found = await call(server, 'find', { query: 'txt', limit: 20 });
    assert.equal(found.structuredContent.nextOffset, 20);
  });
}

/** Every stable code, each produced through the protocol (ABORTED: the cancellation case). */
async function everyErrorCode(env) {
  const files = { 'f.txt': 'a = 1\na = 1\n', 'sub/x.txt': 'x\n', 'blob.bin': Buffer.from('ab\0cd'), 'ro.txt': 'ro\n', 'linked.txt': 'linked\n' };
  await withServer(env, files, async (server, root) => {
    const at = (name) => join(root, name);
    execFileSync('mkfifo', [at('pipe')]);
    closeSync(openSync(at('huge.txt'), 'w'));
    truncateSync(at('huge.txt'), 2 ** 30);
    chmodSync(at('ro.txt'), 0o444);
    linkSync(at('linked.txt'), at('linked-too.txt'));
    symlinkSync('loop-b', at('loop-a'));
    symlinkSync('loop-a', at('loop-b'));
    // Unreadable even to root: procfs applies the owner bits of this write-only file to uid 0 (its folder is a second root).
    const unreadable = process.getuid?.() === 0 ? '/proc/sys/vm/compact_memory' : at('secret.txt');
    if (process.getuid?.() !== 0) writeFileSync(unreadable, 'secret\n', { mode: 0o000 });
    const cases = [
      ['INVALID_ARGS', 'read', { path: '' }],
      ['ENOENT', 'read', { path: 'missing.txt' }],
      ['EISDIR', 'read', { path: 'sub' }],
      ['ENOTDIR', 'glob', { pattern: '*', path: 'f.txt' }],
      ['EACCES', 'read', { path: unreadable }],
      ['NOT_REGULAR', 'read', { path: 'pipe' }],
      ['TOO_LARGE', 'edit', { path: 'huge.txt', oldText: 'a', newText: 'b' }],
      ['READ_ONLY', 'write', { path: 'ro.txt', content: 'x' }],
      ['HARD_LINKED', 'write', { path: 'linked.txt', content: 'x' }],
      ['BINARY', 'read', { path: 'blob.bin' }],
      ['OUTSIDE_CWD', 'write', { path: '../escape.txt', content: 'x' }],
      ['NO_MATCH', 'edit', { path: 'f.txt', oldText: 'nowhere', newText: 'x' }],
      ['AMBIGUOUS', 'edit', { path: 'f.txt', oldText: 'a = 1', newText: 'x' }],
      ['STALE', 'edit', { mode: 'hashline', path: 'f.txt', edits: [{ op: 'delete', anchor: '1:0000' }] }],
      ['PATCH_FAILED', 'edit', { patch: 'not a diff' }],
      ['INVALID_PATTERN', 'grep', { pattern: 'a(' }],
      ['TIMEOUT', 'run', { command: 'sleep 5', timeoutMs: 50 }],
      ['EXIT_CODE', 'run', { command: 'exit 3' }],
      ['IO', 'write', { path: 'loop-a', content: 'x' }],
    ];
    assert.deepEqual([...cases.map(([code]) => code), 'ABORTED'].sort(), [...ERROR_CODES].sort());
    for (const [code, tool, args] of cases) expectError(await call(server, tool, args), code);
    const outside = expectError(await call(server, 'read', { path: '../escape.txt' }), 'OUTSIDE_CWD');
    assert.ok(outside.includes(root), `the refusal names the root: ${outside}`);
  }, { args: ['--allow-run', ...(process.getuid?.() === 0 ? ['--root', '/proc/sys/vm'] : [])] });
}

/** A call to a tool that is not offered is a protocol error, not a tool result. */
async function unknownTool(env) {
  await withServer(env, {}, async (server) => {
    await assert.rejects(call(server, 'run', { command: 'true' }), /Unknown tool: run/);
  });
}

/**
 * Text where `\b\p{L}{30}\b` matches nowhere yet costs every line a slow scan: a Unicode word
 * boundary over non-ASCII words keeps the regex engine off its fast paths and no literal lets a
 * prefilter skip a file. `files` files of 16 KiB: cancellation is polled between files (and between
 * 64 KiB blocks of a big file), so a file costs at most a few ms of this scan before the abort is seen.
 */
function slowGrepTree(files) {
  const line = 'éléphant café naïve façade über größe señor '.repeat(2) + '\n';
  const body = line.repeat(Math.ceil(16 * 1024 / Buffer.byteLength(line)));
  return Object.fromEntries(Array.from({ length: files }, (_, i) => [`slow/f${i}.txt`, body]));
}
const SLOW_PATTERN = '\\b\\p{L}{30}\\b';
/** How soon after the client cancels a grep it must have ended (median of three). */
const CANCEL_BUDGET_MS = 100;

/**
 * A grep still running when the first progress notification comes (after 250 ms) is cancelled
 * then; the server's log says when its native call ended. The median of three such cancellations
 * must be within 100 ms of the client sending the cancellation (measured at the client, stderr's
 * travel included; a median, so one stall of a loaded machine is not taken for the server's). A
 * grep over before the cancellation reached it (a fast machine) is tried again, over a tree twice
 * as big once that happens twice.
 */
async function cancelMidGrep(env) {
  for (let files = 256; files <= 16384; files *= 2) {
    const samples = await withServer(env, slowGrepTree(files), async (server) => {
      const taken = [];
      for (let tooQuick = 0; taken.length < 3 && tooQuick < 2; ) {
        const sample = await cancelOneGrep(server);
        if (sample === undefined) tooQuick++;
        else taken.push(sample);
      }
      expectOk(await call(server, 'glob', { pattern: '*.txt', limit: 1 }));
      return taken;
    }, { args: ['--log-level', 'debug'] });
    if (samples.length < 3) continue;
    const median = samples.map((sample) => sample.clientMs).sort((a, b) => a - b)[1];
    assert.ok(median < CANCEL_BUDGET_MS, `cancelled greps ended ${JSON.stringify(samples)} ms after the cancellation was sent (median ${median.toFixed(1)} ms)`);
    return;
  }
  assert.fail('every grep was over before the cancellation reached it, even over 16384 files');
}

/** Start the slow grep, cancel it at its first progress notification: the ms until it ended, or undefined if it was over first. */
async function cancelOneGrep(server) {
  const from = server.lines.length;
  const controller = new AbortController();
  const progress = [];
  let cancelledAt;
  const onprogress = (notification) => {
    progress.push(notification.progress);
    if (cancelledAt !== undefined) return;
    cancelledAt = performance.now();
    controller.abort();
  };
  await call(server, 'grep', { pattern: SLOW_PATTERN, maxCount: 1 }, { signal: controller.signal, timeout: 600_000, onprogress }).catch(() => {});
  const { line, at } = await server.waitForLog(/call \S+ grep: (cancelled; ended \S+ [\d.]+ ms after the cancellation|\S+ in [\d.]+ ms)/, { from });
  if (!line.includes('cancelled')) return undefined;
  const [, ended, serverMs] = line.match(/ended (\S+) ([\d.]+) ms/);
  // Its last files already in hand when the cancellation came, a grep may end well within the
  // budget: it was over first. One that ignored the cancellation runs on past the budget (the tree
  // doubles until the rest of a grep outlasts it), and fails here.
  if (ended === 'ok' && Number(serverMs) < CANCEL_BUDGET_MS) return undefined;
  assert.equal(ended, 'ABORTED', `the grep went on to its end after the cancellation: ${line}`);
  assert.ok(progress.length >= 1, 'cancelled at a progress notification');
  return { clientMs: Math.round(at - cancelledAt), serverMs: Number(serverMs) };
}

/** Progress: a grep that runs longer than a moment notifies, with increasing progress, until it answers. */
async function progressNotifications(env) {
  await withServer(env, slowGrepTree(256), async (server) => {
    const progress = [];
    const started = performance.now();
    const result = await call(server, 'grep', { pattern: SLOW_PATTERN, maxCount: 1 }, { onprogress: (n) => progress.push(n), timeout: 600_000 });
    const elapsed = performance.now() - started;
    expectOk(result);
    // One notification per 250 ms the grep ran; a grep shorter than that may send none.
    if (elapsed > 600) assert.ok(progress.length >= 1, `no progress over a ${elapsed.toFixed(0)} ms grep`);
    progress.forEach((n, i) => {
      assert.match(n.message, /grep: still searching after/);
      if (i > 0) assert.ok(n.progress > progress[i - 1].progress);
    });
    const quiet = await call(server, 'read', { path: 'slow/f0.txt', limit: 1 }, { onprogress: () => assert.fail('read reports no progress') });
    expectOk(quiet);
  });
}

/** The client's roots confine the server started without --root, and a roots/list_changed moves them. */
async function rootsChange(env) {
  const other = tempFolder('natives-mcp-other-');
  try {
    writeTree(other, { 'b.txt': 'in the other root\n' });
    await withServer(env, { 'a.txt': 'in the first root\n' }, async (server, first) => {
      expectOk(await call(server, 'read', { path: 'a.txt' }), first);
      expectError(await call(server, 'read', { path: join(other, 'b.txt') }), 'OUTSIDE_CWD');
      await server.setRoots([other]);
      assert.match(expectOk(await call(server, 'read', { path: 'b.txt' }), other), /in the other root/);
      expectError(await call(server, 'read', { path: join(first, 'a.txt') }), 'OUTSIDE_CWD');
      await server.setRoots([first, other]);
      expectOk(await call(server, 'read', { path: join(other, 'b.txt') }), other);
      assert.equal(expectOk(await call(server, 'glob', { pattern: '*.txt' }), first), 'a.txt');
    }, { roots: (dir) => [dir] });
  } finally {
    cleanup(other);
  }
}

/** Freshness: an edit through the server, then a grep through it, finds the edit; so does a file another process writes (watching). */
async function freshness(env) {
  await withServer(env, { 'src/a.ts': 'const alpha = 1;\n' }, async (server, root) => {
    assert.match(expectOk(await call(server, 'grep', { pattern: 'omega' })), /No matches/);
    expectOk(await call(server, 'edit', { path: 'src/a.ts', oldText: 'alpha', newText: 'omega' }));
    assert.equal(expectOk(await call(server, 'grep', { pattern: 'omega' })), 'src/a.ts:1:const omega = 1;');
    assert.match(expectOk(await call(server, 'grep', { pattern: 'gamma' })), /No matches/);
    assert.deepEqual(expectOk(await call(server, 'glob', { pattern: '*.ts' })).split('\n'), ['src/a.ts']);
    // This test process is another process than the server: only watching can tell the cache.
    writeTree(root, { 'src/b.ts': 'const gamma = 2;\n' });
    assert.equal(expectOk(await call(server, 'grep', { pattern: 'gamma' })), 'src/b.ts:1:const gamma = 2;');
    assert.deepEqual(expectOk(await call(server, 'glob', { pattern: '*.ts' })).split('\n').sort(), ['src/a.ts', 'src/b.ts']);
    assert.equal(expectOk(await call(server, 'find', { query: 'b.ts' })).split('\n')[0], 'src/b.ts');
  });
}

/** The records of the scans a server walked, in its natives home `home`, once one is written (within `ms`). */
async function records(home, ms) {
  const scans = join(home, 'scans');
  const written = () => existsSync(scans) && readdirSync(scans).some((name) => name.endsWith('.scan'));
  const deadline = Date.now() + ms;
  while (!written() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return written() ? readdirSync(scans).filter((name) => name.endsWith('.scan')).map((name) => join(scans, name)) : [];
}

/**
 * Scans kept across restarts, on by default: a server writes private records of what it walked under
 * its natives home, and the next server on that home answers from them exactly (a file written in
 * between included); `--no-persist` writes none.
 */
async function persistence(env) {
  const home = tempFolder('natives-mcp-home-');
  try {
    await withServer(env, { 'src/a.ts': 'const alpha = 1;\n' }, async (server, root) => {
      assert.deepEqual(expectOk(await call(server, 'glob', { pattern: '*.ts' }), root).split('\n'), ['src/a.ts']);
      const written = await records(home, 20_000);
      assert.ok(written.length > 0, 'a record is written');
      assert.equal(statSync(join(home, 'scans')).mode & 0o777, 0o700);
      for (const record of written) assert.equal(statSync(record).mode & 0o777, 0o600, record);
      await server.close();
      writeTree(root, { 'src/b.ts': 'const beta = 2;\n' });
      const next = await startServer(env.command, ['--root', root], { home });
      try {
        assert.deepEqual(expectOk(await call(next, 'glob', { pattern: '*.ts' }), root).split('\n').sort(), ['src/a.ts', 'src/b.ts']);
        assert.equal(expectOk(await call(next, 'grep', { pattern: 'beta' }), root), 'src/b.ts:1:const beta = 2;');
      } finally {
        await next.close();
      }
    }, { home });
    const other = tempFolder('natives-mcp-home-');
    try {
      await withServer(env, { 'a.ts': '' }, async (server, root) => {
        assert.equal(expectOk(await call(server, 'glob', { pattern: '*.ts' }), root), 'a.ts');
        assert.deepEqual(await records(other, 1_000), [], '--no-persist writes no record');
      }, { home: other, args: ['--no-persist'] });
    } finally {
      cleanup(other);
    }
  } finally {
    cleanup(home);
  }
}

/** The inotify watches held by process `pid` and its descendants (from /proc). */
function inotifyWatches(pid) {
  const children = new Map();
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // The process ended meanwhile.
    }
  }
  let watches = 0;
  for (const member of [pid, ...descendants(pid, children)]) {
    try {
      for (const fd of readdirSync(`/proc/${member}/fdinfo`)) {
        watches += readFileSync(`/proc/${member}/fdinfo/${fd}`, 'utf8').split('\n').filter((line) => line.startsWith('inotify wd:')).length;
      }
    } catch {
      // The process ended meanwhile.
    }
  }
  return watches;
}

function descendants(pid, children) {
  return (children.get(pid) ?? []).flatMap((child) => [child, ...descendants(child, children)]);
}

/**
 * Two servers of one user on one root share one index: the first walks and watches the root, the
 * second reads its list (the kernel counts the watches: the reader holds none of the tree's); both
 * answer a file another process writes; once the first is gone the second takes the index over and
 * still answers every change. `--no-share` gives a server its own index.
 */
async function sharedIndex(env) {
  const home = tempFolder('natives-mcp-home-');
  const files = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`d${i}/f${i}.ts`, `const f${i} = ${i};\n`]));
  try {
    await withServer(env, files, async (first, root) => {
      assert.equal(expectOk(await call(first, 'glob', { pattern: '*.ts', limit: 100 }), root).split('\n').length, 40);
      const second = await startServer(env.command, ['--root', root], { home });
      const alone = await startServer(env.command, ['--root', root, '--no-share'], { home });
      try {
        assert.equal(expectOk(await call(second, 'glob', { pattern: '*.ts', limit: 100 }), root).split('\n').length, 40);
        assert.equal(expectOk(await call(alone, 'glob', { pattern: '*.ts', limit: 100 }), root).split('\n').length, 40);
        const watches = [first, second, alone].map((server) => inotifyWatches(server.pid));
        assert.ok(watches[0] >= 41, `the indexer watches the tree: ${watches}`);
        assert.ok(watches[1] < 10, `the reader watches none of it: ${watches}`);
        assert.ok(watches[2] >= 41, `--no-share watches on its own: ${watches}`);
        writeTree(root, { 'd0/fresh.ts': 'const fresh = 1;\n' });
        for (const server of [first, second]) assert.equal(expectOk(await call(server, 'grep', { pattern: 'fresh' }), root), 'd0/fresh.ts:1:const fresh = 1;');
        await first.close();
        writeTree(root, { 'd1/later.ts': 'const later = 1;\n' });
        assert.equal(expectOk(await call(second, 'grep', { pattern: 'later' }), root), 'd1/later.ts:1:const later = 1;');
        assert.equal(statSync(join(home, 'index')).mode & 0o777, 0o700);
      } finally {
        await second.close();
        await alone.close();
      }
    }, { home });
  } finally {
    cleanup(home);
  }
}

/** The MCP Inspector's CLI (a client no one here wrote either) lists the tools and calls one. */
async function inspector(env) {
  const home = tempFolder('natives-mcp-home-');
  await withServer(env, { 'hello.txt': 'hello from natives\n' }, async (_server, root) => {
    const options = { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] };
    const server = ['-e', `NATIVES_HOME=${home}`, ...env.command, '--root', root];
    const inspect = (...args) => execFileSync(env.inspector, ['--cli', ...server, ...args], options);
    const { tools } = JSON.parse(inspect('--method', 'tools/list'));
    assert.deepEqual(tools.map((tool) => tool.name), ['find', 'glob', 'grep', 'read', 'write', 'edit']);
    const result = JSON.parse(inspect('--method', 'tools/call', '--tool-name', 'grep', '--tool-arg', 'pattern=natives'));
    assert.equal(result.content[0].text, 'hello.txt:1:hello from natives');
    assert.equal(result.structuredContent.root, root);
  }, { home });
  cleanup(home);
}

export const CASES = [
  { name: 'initialize: server info, tools capability, instructions', run: initialize },
  { name: 'tools/list: every input and output schema compiles, annotations; run only with --allow-run', run: toolsList },
  { name: 'every tool answers with text and structuredContent fitting its schema, naming the root', run: everyTool },
  { name: 'results are bounded and paged (grep, glob, find)', run: paging },
  { name: 'every error code comes back as a tool result with isError and the code', run: everyErrorCode },
  { name: 'run is not offered without --allow-run', run: unknownTool },
  { name: 'cancellation mid-grep: the native search ends within 100 ms (ABORTED)', run: cancelMidGrep },
  { name: 'progress notifications while a grep runs', run: progressNotifications },
  { name: "the client's roots confine the server, and a roots change is followed", run: rootsChange },
  { name: 'freshness: an edit through the server, and a file another process writes, are found by the next grep', run: freshness },
  { name: 'scans are kept across restarts under the natives home, privately; --no-persist keeps none', run: persistence },
  { name: 'servers of one user share one index per root; the second takes it over; --no-share keeps its own', run: sharedIndex },
  { name: 'the MCP Inspector CLI lists the tools and calls one', run: inspector },
];
