/** Assertions on agent tool results. */
import { expect } from 'bun:test';
import type { TOOL_ERROR_CODES, ToolResult } from '../../packages/coding-agent/src/index.ts';

/** A refusal with `code`; returns its text. */
export function expectError(result: ToolResult, code: keyof typeof TOOL_ERROR_CODES): string {
  expect(result.isError).toBe(true);
  expect(result.details.code).toBe(code);
  return result.text;
}

/** A success; returns its text (or fails with the refusal's code and text). */
export function expectOk(result: ToolResult): string {
  if (result.isError) throw new Error(`expected success, got ${result.details.code}: ${result.text}`);
  return result.text;
}
