/**
 * An MCP server over stdio that gives any coding agent natives' search
 * (`find`, `glob`, `grep`) and confined, byte-preserving file changes
 * (`read`, `write`, `edit`, and `run` when allowed), built on the
 * `@natives/coding-agent` tools. Run it with `npx -y @natives/mcp`; this
 * module is for embedding it.
 */
export { ERROR_META_KEY, PROGRESS_INTERVAL_MS, VERSION, createServer } from './server.ts';
export type { ServerOptions } from './server.ts';
export { MCP_TOOLS, offeredTools, outputSchemaOf } from './tools.ts';
export type { McpTool, ToolAnnotations } from './tools.ts';
export { RootError, Roots } from './roots.ts';
export type { Root, RootChoice } from './roots.ts';
export { LOG_LEVELS, stderrLogger } from './log.ts';
export type { LogLevel, Logger } from './log.ts';
export { main, parseCommandLine } from './main.ts';
export type { CommandLine } from './main.ts';
