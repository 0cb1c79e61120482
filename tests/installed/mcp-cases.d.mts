// Types of mcp-cases.mjs, for the Bun test that runs its cases from the checkout.
export interface McpTestEnv {
  /** The server's argv. */
  command: string[];
  /** The MCP Inspector's bin. */
  inspector: string;
}
export interface McpCase {
  name: string;
  run(env: McpTestEnv): Promise<void>;
}
export const ERROR_CODES: string[];
export const CASES: McpCase[];
