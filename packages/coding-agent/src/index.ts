/**
 * Tools a coding agent uses to change and discover files, each wired to the
 * natives scan cache, and the resolution of `@path` mentions in a message.
 */
import { editTool } from './edit.ts';
import { findTool } from './find.ts';
import { grepTool } from './grep.ts';
import { readTool } from './read.ts';
import { runTool } from './run.ts';
import type { Tool } from './tool.ts';
import { writeTool } from './write.ts';

export {
  invalidateFsScanAfterDelete,
  invalidateFsScanAfterRename,
  invalidateFsScanAfterWrite,
} from './fs-cache-invalidation.ts';
export { TOOL_ERROR_CODES } from './tool.ts';
export { atomicWrite } from './files.ts';
export type { AtomicWriteOutcome } from './files.ts';
export type { JsonSchema, Tool, ToolContext, ToolDetails, ToolErrorCode, ToolResult } from './tool.ts';
export { DEFAULT_READ_LIMIT, MAX_LINE_CHARS, readTool, suggestPaths } from './read.ts';
export type { ReadArgs } from './read.ts';
export { writeTool } from './write.ts';
export type { WriteArgs } from './write.ts';
export { editTool } from './edit.ts';
export type { EditArgs, EditMode } from './edit.ts';
export { DEFAULT_RUN_TIMEOUT_MS, KILL_GRACE_MS, MAX_OUTPUT_BYTES, MAX_RUN_TIMEOUT_MS, runTool } from './run.ts';
export type { RunArgs } from './run.ts';
export { DEFAULT_GREP_LIMIT, GREP_MAX_CONTEXT, GREP_MAX_FILE_BYTES, GREP_MAX_LINE_CHARS, GREP_MAX_OUTPUT_BYTES, grepTool } from './grep.ts';
export type { GrepArgs } from './grep.ts';
export { DEFAULT_FIND_LIMIT, findTool } from './find.ts';
export type { FindArgs } from './find.ts';
export { DEFAULT_FUZZY_LIMIT, fuzzyFindTool } from './fuzzy-find.ts';
export type { FuzzyFindArgs } from './fuzzy-find.ts';
export {
  DEFAULT_MENTION_CANDIDATES,
  MENTION_SCAN_PROFILE,
  parseFileMentions,
  resolveFileMentions,
  resolveMention,
} from './file-mentions.ts';
export type { FileMention, MentionResolution, ParsedMention, ResolveMentionsOptions } from './file-mentions.ts';
export { applyHashlineEdits, formatHashline, lineHashes } from './hashline.ts';
export type { HashlineOperation } from './hashline.ts';
export { applyFilePatch } from './hunks.ts';
export { parsePatch } from './patch.ts';
export type { FilePatch, Hunk } from './patch.ts';

/** Which tools {@link agentTools} returns. */
export interface AgentToolsOptions {
  /** Leave out `run` (an agent that may only read and edit). Default `false`. */
  withoutRun?: boolean;
}

/**
 * The tools, in the order a model usually needs them: read, grep, find,
 * write, edit, run. Each takes `(args, ctx)`; give every call the same
 * `ctx.cwd`.
 */
export function agentTools(options: AgentToolsOptions = {}): Tool<any>[] {
  const tools: Tool<any>[] = [readTool, grepTool, findTool, writeTool, editTool];
  if (!options.withoutRun) tools.push(runTool);
  return tools;
}
