/**
 * The MCP server: `tools/list` and `tools/call` over the coding-agent
 * tools, confined to the roots.
 *
 * Each call runs its tool with the chosen root (roots.ts) as the working
 * directory, reads confined like writes (`confineReads`), searches served
 * from the shared scan cache (`scanCache`; the process keeps it exact by
 * watching, see cli.ts) and the request's `AbortSignal`, which the SDK
 * aborts on `notifications/cancelled`: the native work polls it and stops.
 *
 * A success answers with the tool's text and its details as
 * `structuredContent` (plus `root`), fitting the tool's output schema. A
 * refusal answers with `isError: true`, text that starts with the stable
 * code (`OUTSIDE_CWD: ...`, coding-agent's `TOOL_ERROR_CODES`), and the code
 * with the details in `_meta["natives/error"]`; it carries no
 * `structuredContent`, which would have to fit the success schema.
 *
 * The low-level `Server` is used rather than `McpServer` because the tools'
 * schemas are JSON Schema already (TypeBox) and go out as they are.
 */
import { createRequire } from 'node:module';
import type { ToolResult } from '@natives/coding-agent';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  type CallToolResult,
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type ProgressToken,
  RootsListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from './log.ts';
import type { Root, Roots } from './roots.ts';
import { type McpTool, offeredTools, outputSchemaOf } from './tools.ts';

/** Between two progress notifications of a search; the first comes after one interval. */
export const PROGRESS_INTERVAL_MS = 250;

/** The `_meta` key of a refusal's code and details. */
export const ERROR_META_KEY = 'natives/error';

/** How a server is set up. */
export interface ServerOptions {
  roots: Roots;
  /** Offer `run` (a shell command in the first root). Default `false`. */
  allowRun?: boolean;
  log: Logger;
}

/** This package's version, as its manifest gives it. */
export const VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

/** A server answering `tools/list` and `tools/call`, following the client's roots; connect it to a transport. */
export function createServer(options: ServerOptions): Server {
  const { roots, log } = options;
  const server = new Server(
    { name: 'natives', version: VERSION },
    {
      capabilities: { tools: {} },
      instructions:
        'File search and edits confined to the roots. Relative paths resolve against the first root; ' +
        'give absolute paths to reach the others. Tools refuse any path whose real location leaves its root.',
    },
  );
  const tools = offeredTools(options.allowRun ?? false);
  const rootsReady = followClientRoots(server, roots, log);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map(listing) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const entry = tools.find((candidate) => candidate.name === request.params.name);
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    await rootsReady.current;
    const call = { id: String(extra.requestId), signal: extra.signal, progressToken: extra._meta?.progressToken, notify: extra.sendNotification };
    return runCall(entry, request.params.arguments ?? {}, call, roots, log);
  });
  return server;
}

/** A tool as `tools/list` shows it. */
function listing(entry: McpTool) {
  const { tool } = entry;
  return {
    name: entry.name,
    title: entry.annotations.title,
    description: tool.description,
    inputSchema: tool.parameters as { type: 'object' },
    outputSchema: outputSchemaOf(tool) as { type: 'object' },
    annotations: entry.annotations,
  };
}

/**
 * Keep `roots` in step with the client's, when it has any: listed once the
 * session is initialized and again on each `roots/list_changed`. Calls wait
 * for the latest listing (`current`) so none runs against roots the client
 * already replaced.
 */
function followClientRoots(server: Server, roots: Roots, log: Logger): { current: Promise<void> } {
  const state = { current: Promise.resolve() };
  const refresh = () => {
    if (!server.getClientCapabilities()?.roots) return;
    state.current = state.current
      .then(() => server.listRoots())
      .then(({ roots: listed }) => {
        for (const skipped of roots.setClientRoots(listed.map((root) => root.uri))) log.warn(`client root left out: ${skipped}`);
        log.info(`roots: ${roots.list().map(describeRoot).join(', ')}`);
      })
      .catch((error) => log.warn(`the client's roots could not be listed: ${error instanceof Error ? error.message : String(error)}`));
  };
  server.oninitialized = refresh;
  server.setNotificationHandler(RootsListChangedNotificationSchema, async () => refresh());
  return state;
}

function describeRoot(root: Root): string {
  return `${root.real} (${root.source})`;
}

/** What a call needs of its request. */
interface CallContext {
  id: string;
  signal: AbortSignal;
  progressToken: ProgressToken | undefined;
  notify: (notification: { method: 'notifications/progress'; params: { progressToken: ProgressToken; progress: number; message: string } }) => Promise<void>;
}

/** Run one tool call in the root its path belongs to, reporting progress and how a cancellation was answered. */
async function runCall(entry: McpTool, args: Record<string, unknown>, call: CallContext, roots: Roots, log: Logger): Promise<CallToolResult> {
  const choice = roots.choose(typeof args.path === 'string' ? args.path : undefined);
  if ('refusal' in choice) {
    return refusal({ isError: true, text: choice.refusal, details: { code: 'OUTSIDE_CWD', roots: roots.list().map((root) => root.real) } });
  }
  const { root } = choice;
  const started = performance.now();
  let cancelledAt: number | undefined;
  call.signal.addEventListener('abort', () => (cancelledAt = performance.now()), { once: true });
  const progress = entry.reportsProgress && call.progressToken !== undefined ? reportProgress(entry.name, call) : undefined;
  let result: ToolResult;
  try {
    result = await entry.tool.execute(args, { cwd: root.real, signal: call.signal, confineReads: true, scanCache: true });
  } finally {
    progress?.stop();
  }
  const ended = performance.now();
  const outcome = result.isError ? String(result.details.code) : 'ok';
  if (cancelledAt === undefined) log.debug(`call ${call.id} ${entry.name}: ${outcome} in ${(ended - started).toFixed(1)} ms (root ${root.real})`);
  else log.info(`call ${call.id} ${entry.name}: cancelled; ended ${outcome} ${(ended - cancelledAt).toFixed(1)} ms after the cancellation`);
  return result.isError ? refusal({ ...result, details: { ...result.details, root: root.real } }) : success(result, root);
}

/** Send `notifications/progress` every {@link PROGRESS_INTERVAL_MS} until stopped. */
function reportProgress(name: string, call: CallContext): { stop(): void } {
  const started = performance.now();
  let ticks = 0;
  const timer = setInterval(() => {
    ticks++;
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const params = { progressToken: call.progressToken!, progress: ticks, message: `${name}: still searching after ${seconds} s` };
    call.notify({ method: 'notifications/progress', params }).catch(() => {});
  }, PROGRESS_INTERVAL_MS);
  return { stop: () => clearInterval(timer) };
}

function success(result: ToolResult, root: Root): CallToolResult {
  return { content: [{ type: 'text', text: result.text }], structuredContent: { ...result.details, root: root.real } };
}

function refusal(result: ToolResult): CallToolResult {
  const code = String(result.details.code);
  return { isError: true, content: [{ type: 'text', text: `${code}: ${result.text}` }], _meta: { [ERROR_META_KEY]: result.details } };
}
