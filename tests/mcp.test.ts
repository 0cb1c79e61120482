/**
 * The MCP server from source under Bun, through the official SDK client over stdio: the cases of
 * tests/installed/mcp-cases.mjs and mcp-hostile.mjs, which tests/installed/run.sh also runs against
 * the packed and installed package under Node and Bun.
 */
import { describe, test } from 'bun:test';
import * as path from 'node:path';
import { CASES } from './installed/mcp-cases.mjs';
import { HOSTILE_CASES } from './installed/mcp-hostile.mjs';

const checkout = path.join(import.meta.dir, '..');
const env = {
  command: ['bun', path.join(checkout, 'packages/mcp/src/cli.ts')],
  inspector: path.join(checkout, 'node_modules/.bin/mcp-inspector'),
};

describe('natives MCP server (from source, Bun)', () => {
  for (const { name, run } of [...CASES, ...HOSTILE_CASES]) test(name, () => run(env), 120_000);
});
