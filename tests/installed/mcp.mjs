// The MCP server as a user starts it: the `natives-mcp` bin of the installed @natives/mcp, under the
// runtime named on the command line (`node` or `bun`), driven by the official SDK client over stdio
// through every case of mcp-cases.mjs and mcp-hostile.mjs. The MCP Inspector's bin comes from the
// environment (MCP_INSPECTOR). Prints each case checked; exits non-zero on the first failure.
import { join } from 'node:path';
import { CASES } from './mcp-cases.mjs';
import { HOSTILE_CASES } from './mcp-hostile.mjs';

const runtime = process.argv[2] ?? 'node';
const inspector = process.env.MCP_INSPECTOR;
if (!inspector) throw new Error('MCP_INSPECTOR must name the MCP Inspector bin');
const env = { command: [runtime, join(process.cwd(), 'node_modules', '.bin', 'natives-mcp')], inspector };
let passed = 0;
for (const { name, run } of [...CASES, ...HOSTILE_CASES]) {
  const started = performance.now();
  await run(env);
  passed++;
  console.log(`mcp (server under ${runtime}): ${name}: ok (${Math.round(performance.now() - started)} ms)`);
}
console.log(`mcp (server under ${runtime}, client under ${process.versions.bun ? 'bun' : 'node'}): ${passed} cases passed`);
