// Types of mcp-hostile.mjs, for the Bun test that runs its cases from the checkout.
import type { McpCase } from './mcp-cases.mjs';
export const HOSTILE_CASES: McpCase[];
