/**
 * The tools the server offers: each is a `@natives/coding-agent` tool under
 * the name an MCP client sees, with its parameters schema as the input
 * schema (the same TypeBox object, not a copy), its details schema plus the
 * root as the output schema, and the hints MCP clients show their users.
 *
 * `find` is the fuzzy finder and `glob` the pattern finder (coding-agent's
 * `find`), the names agents know these searches by. `run` is offered only
 * when the server is started with `--allow-run`.
 */
import {
  type JsonSchema,
  type Tool,
  editTool,
  findTool,
  fuzzyFindTool,
  grepTool,
  readTool,
  runTool,
  writeTool,
} from '@natives/coding-agent';
import { Type } from '@sinclair/typebox';

/** MCP's tool annotations (hints for the client, not guarantees). */
export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** One tool as the server offers it. */
export interface McpTool {
  /** The name clients call it by. */
  name: string;
  /** The coding-agent tool that does the work. */
  tool: Tool<any>;
  annotations: ToolAnnotations;
  /** Long searches report progress while they run. */
  reportsProgress: boolean;
}

const reading = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** Every tool, in the order `tools/list` gives them. */
export const MCP_TOOLS: readonly McpTool[] = [
  { name: 'find', tool: fuzzyFindTool, annotations: { title: 'Find files by name (fuzzy)', ...reading }, reportsProgress: true },
  { name: 'glob', tool: findTool, annotations: { title: 'Find files by glob pattern', ...reading }, reportsProgress: true },
  { name: 'grep', tool: grepTool, annotations: { title: 'Search file contents', ...reading }, reportsProgress: true },
  { name: 'read', tool: readTool, annotations: { title: 'Read a file', ...reading }, reportsProgress: false },
  {
    name: 'write',
    tool: writeTool,
    annotations: { title: 'Write a file', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    reportsProgress: false,
  },
  {
    name: 'edit',
    tool: editTool,
    annotations: { title: 'Edit files (replace, patch, hashline)', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    reportsProgress: false,
  },
  {
    name: 'run',
    tool: runTool,
    annotations: { title: 'Run a shell command', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    reportsProgress: false,
  },
];

/** The tools a server offers: all but `run` unless it is allowed. */
export function offeredTools(allowRun: boolean): McpTool[] {
  return MCP_TOOLS.filter((entry) => allowRun || entry.name !== 'run');
}

/** The output schema of a tool: its details, and the root its paths were judged against. */
export function outputSchemaOf(tool: Tool<any>): JsonSchema {
  const details = tool.output as Parameters<typeof Type.Composite>[0][number];
  return Type.Composite([details, Type.Object({ root: Type.String({ description: 'The root the paths were judged against.' }) })]);
}
