/**
 * Running ripgrep as the reference for grep: finding the binary, and reading
 * its `--json`, `--count` and `-l` output into comparable shapes.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The repository root (tests/support/../..). */
const REPO_ROOT = path.join(import.meta.dir, '..', '..');

/**
 * The `rg` binary: on `PATH`, then in `~/.cargo/bin`, then in
 * `target/tools/bin`. Without one, print a loud notice and return
 * `undefined` (the parity tests then skip), unless `NATIVES_REQUIRE_RG` is
 * set: CI installs rg and a missing one there is a failure.
 */
export function findRg(): string | undefined {
  const dirs = [
    ...(process.env.PATH ?? '').split(path.delimiter).filter((dir) => dir !== ''),
    path.join(os.homedir(), '.cargo', 'bin'),
    path.join(REPO_ROOT, 'target', 'tools', 'bin'),
  ];
  for (const dir of dirs) {
    const candidate = path.join(dir, 'rg');
    try {
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // Not in this directory.
    }
  }
  if (process.env.NATIVES_REQUIRE_RG) {
    throw new Error('NATIVES_REQUIRE_RG is set but rg is not on PATH, in ~/.cargo/bin or in target/tools/bin');
  }
  console.warn(
    '\n!!!!!!!! rg not found on PATH, in ~/.cargo/bin or in target/tools/bin: grep/rg parity NOT CHECKED !!!!!!!!\n',
  );
  return undefined;
}

/** One reported line: a match (its first line number, text without the final `\n`) or a context line. */
export interface ReportedLine {
  path: string;
  lineNumber: number;
  text: string;
  kind: 'match' | 'context';
}

/** What `rg --json` reported. */
export interface RgReport {
  lines: ReportedLine[];
  /** `match` records (one per matching line, or per match block with `-U`). */
  matchRecords: number;
  /** Files searched, from the summary. */
  searches: number;
  /** Files with a match, from the summary. */
  searchesWithMatch: number;
}

/** Run `rg --sort path <args> -e <pattern> -- <target>` in `cwd`; its stdout. */
export function runRg(rg: string, cwd: string, args: readonly string[], pattern: string, target = '.'): Buffer {
  // No user configuration may change what the reference does.
  const env = { ...process.env };
  delete env.RIPGREP_CONFIG_PATH;
  const result = spawnSync(rg, ['--sort', 'path', ...args, '-e', pattern, '--', target], {
    cwd,
    env,
    maxBuffer: 256 << 20,
  });
  if (result.error) throw result.error;
  // 0: matches, 1: none; anything else is an error of the reference itself.
  if (result.status !== 0 && result.status !== 1) {
    throw new Error(`rg ${args.join(' ')} -e ${pattern} exited with ${result.status}: ${result.stderr}`);
  }
  return result.stdout;
}

/** `rg --json` data as text: `text` as is, `bytes` decoded with U+FFFD for invalid UTF-8. */
function textOf(value: { text?: string; bytes?: string }): string {
  if (typeof value.text === 'string') return value.text;
  if (typeof value.bytes === 'string') return new TextDecoder().decode(Buffer.from(value.bytes, 'base64'));
  throw new Error(`rg --json value without text or bytes: ${JSON.stringify(value)}`);
}

const stripDot = (p: string) => (p.startsWith('./') ? p.slice(2) : p);

/** Run `rg --json` and collect its match and context lines and summary counts. */
export function rgJson(rg: string, cwd: string, args: readonly string[], pattern: string, target = '.'): RgReport {
  return readRgJson(runRg(rg, cwd, ['--json', ...args], pattern, target).toString('utf8'));
}

/** Collect the match and context lines and summary counts of `rg --json` output (`natives grep --json` too). */
export function readRgJson(stdout: string): RgReport {
  const report: RgReport = { lines: [], matchRecords: 0, searches: 0, searchesWithMatch: 0 };
  for (const raw of stdout.split('\n')) {
    if (raw === '') continue;
    const message = JSON.parse(raw) as { type: string; data: Record<string, any> };
    const { data } = message;
    if (message.type === 'match' || message.type === 'context') {
      const text = textOf(data.lines);
      report.lines.push({
        path: stripDot(textOf(data.path)),
        lineNumber: data.line_number as number,
        text: text.endsWith('\n') ? text.slice(0, -1) : text,
        kind: message.type,
      });
      if (message.type === 'match') report.matchRecords++;
    } else if (message.type === 'summary') {
      report.searches = data.stats.searches as number;
      report.searchesWithMatch = data.stats.searches_with_match as number;
    }
  }
  return report;
}

/** Run `rg` for plain-text output (`--count`, `-l`): its lines, `./` dropped. */
export function rgLines(rg: string, cwd: string, args: readonly string[], pattern: string, target = '.'): string[] {
  return runRg(rg, cwd, args, pattern, target)
    .toString('utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map(stripDot);
}

/** The lines of grep results in the same shape: context before, the match, context after. */
export function reportedLines(
  matches: readonly {
    path: string;
    lineNumber: number;
    line: string;
    contextBefore?: readonly { lineNumber: number; line: string }[];
    contextAfter?: readonly { lineNumber: number; line: string }[];
  }[],
): ReportedLine[] {
  const lines: ReportedLine[] = [];
  for (const m of matches) {
    const context = (c: { lineNumber: number; line: string }): ReportedLine => ({
      path: m.path,
      lineNumber: c.lineNumber,
      text: c.line,
      kind: 'context',
    });
    lines.push(...(m.contextBefore ?? []).map(context));
    lines.push({ path: m.path, lineNumber: m.lineNumber, text: m.line, kind: 'match' });
    lines.push(...(m.contextAfter ?? []).map(context));
  }
  return lines;
}

/** rg's notice that it stopped at a NUL byte: grep counts such files (`binaryFilesSkipped`) instead. */
export const isBinaryNotice = (line: string) => line.includes(': WARNING: stopped searching binary file');

/**
 * Results as `rg -n --no-heading -H` prints them: `path:line:text` (a multi-line match one line at
 * a time), context as `path-line-text`, and with `context` on, `--` between groups that do not touch.
 */
export function printedLikeRg(
  matches: readonly {
    path: string;
    lineNumber: number;
    line: string;
    contextBefore?: readonly { lineNumber: number; line: string }[];
    contextAfter?: readonly { lineNumber: number; line: string }[];
  }[],
  context: boolean,
): string[] {
  const printed: string[] = [];
  let last: { path: string; line: number } | undefined;
  for (const m of matches) {
    const first = m.contextBefore?.[0]?.lineNumber ?? m.lineNumber;
    const joins = last !== undefined && last.path === m.path && first <= last.line + 1;
    if (context && last !== undefined && !joins) printed.push('--');
    for (const c of m.contextBefore ?? []) printed.push(`${m.path}-${c.lineNumber}-${c.line}`);
    const lines = m.line.split('\n');
    lines.forEach((text, i) => printed.push(`${m.path}:${m.lineNumber + i}:${text}`));
    for (const c of m.contextAfter ?? []) printed.push(`${m.path}-${c.lineNumber}-${c.line}`);
    const end = m.contextAfter?.at(-1)?.lineNumber ?? m.lineNumber + lines.length - 1;
    last = { path: m.path, line: end };
  }
  return printed;
}
