// What the MCP tests share: a natives MCP server started as a client starts it (a child process on
// stdio, driven by the official SDK Client), its stderr kept line by line, trees in a temp folder the
// test owns, and checks of what a tool call answers. Plain JavaScript: it runs under Node and Bun,
// from the checkout (tests/mcp.test.ts) and from a project that installed the packed tarballs (mcp.mjs).
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/** A fresh folder under the system temp directory, real path; removed by `cleanup`. */
export function tempFolder(prefix) {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

/** Write `files` (relative path → text or bytes) under `dir`, making parents. */
export function writeTree(dir, files) {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

/**
 * Start the server `command` (argv) with `args` and connect an SDK client. `roots` (paths) makes the
 * client declare the roots capability and answer `roots/list` with them (change them with
 * `setRoots`). The server's natives home (where it keeps scans across restarts) is `home`, else a
 * temp folder of its own, removed when it closes: a test never writes to the user's. Returns the
 * client, the server's stderr lines so far, and `waitForLog`.
 */
export async function startServer(command, args = [], { roots, home } = {}) {
  const ownHome = home === undefined ? tempFolder('natives-mcp-home-') : undefined;
  const env = { ...getDefaultEnvironment(), NATIVES_HOME: home ?? ownHome };
  const transport = new StdioClientTransport({ command: command[0], args: [...command.slice(1), ...args], stderr: 'pipe', env });
  const lines = [];
  const waiters = new Set();
  let partial = '';
  transport.stderr?.on('data', (chunk) => {
    const text = partial + chunk.toString();
    const parts = text.split('\n');
    partial = parts.pop();
    for (const line of parts) {
      lines.push(line);
      for (const waiter of waiters) waiter(line);
    }
  });
  const capabilities = roots ? { roots: { listChanged: true } } : {};
  const client = new Client({ name: 'natives-mcp-tests', version: '1.0.0' }, { capabilities });
  let current = roots ?? [];
  if (roots) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: current.map((path) => ({ uri: `file://${path}` })) }));
  await client.connect(transport);
  return {
    client,
    lines,
    /** The process the transport started (the server, or the launcher that runs it). */
    pid: transport.pid,
    /** Replace the client's roots and tell the server. */
    async setRoots(paths) {
      current = paths;
      await client.sendRootsListChanged();
    },
    /** The first stderr line from the `from`th on (already written or still to come) matching `regex`; rejects after `ms`. */
    waitForLog(regex, { from = 0, ms = 30_000 } = {}) {
      const seen = lines.slice(from).find((line) => regex.test(line));
      if (seen) return Promise.resolve({ line: seen, at: performance.now() });
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no server log line matched ${regex} within ${ms} ms; stderr:\n${lines.join('\n')}`));
        }, ms);
        const waiter = (line) => {
          if (!regex.test(line)) return;
          clearTimeout(timer);
          waiters.delete(waiter);
          resolve({ line, at: performance.now() });
        };
        waiters.add(waiter);
      });
    },
    close: async () => {
      await client.close();
      if (ownHome !== undefined) cleanup(ownHome);
    },
  };
}

/** Call `name` with `args`; the SDK client has checked any structuredContent against the tool's output schema. */
export function call(server, name, args, options) {
  return server.client.callTool({ name, arguments: args }, undefined, options);
}

/** The text of a successful result (fails with the result otherwise); checks it names `root` when given. */
export function expectOk(result, root) {
  assert.ok(!result.isError, `expected success, got: ${JSON.stringify(result)}`);
  assert.ok(result.structuredContent, 'a success carries structuredContent');
  if (root !== undefined) assert.equal(result.structuredContent.root, root);
  return result.content[0].text;
}

/** The text of a refusal with `code`, in the text and in `_meta["natives/error"]`. */
export function expectError(result, code) {
  assert.equal(result.isError, true, `expected ${code}, got success: ${JSON.stringify(result)}`);
  const text = result.content[0].text;
  assert.equal(result._meta?.['natives/error']?.code, code, text);
  assert.ok(text.startsWith(`${code}: `), text);
  assert.equal(result.structuredContent, undefined);
  return text;
}

/** Remove a folder a test made (permissions restored first, so a 0444 or 0000 file cannot stop it). */
export function cleanup(dir) {
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}

/** Reject after `ms` unless `promise` settles: a hang becomes a failure naming `what`. */
export function within(ms, promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
