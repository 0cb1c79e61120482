/**
 * ripgrep as a Node program would call it: spawn `rg --json`, read its JSON
 * lines as they stream in and turn each `match` record into a match object.
 */
import { spawn } from 'node:child_process';

export interface RgMatch {
  path: string;
  lineNumber: number;
  line: string;
}

export interface RgResult {
  matches: RgMatch[];
  /**
   * Files rg searched, from its closing `summary` record (`stats.searches`);
   * undefined when the process was killed before printing it.
   */
  searches?: number;
}

/** `rg --json` carries text as `text`, or as base64 `bytes` when it is not UTF-8. */
function textOf(v: { text?: string; bytes?: string }): string {
  return v.text ?? Buffer.from(v.bytes ?? '', 'base64').toString('utf8');
}

/**
 * Runs `rg --json <args>` in `cwd` and returns its matches (one per matching
 * line), paths relative to `cwd`. With `limit`, the process is killed once that
 * many matches have been read (its remaining output is dropped), which is how
 * a caller gets a global limit out of rg: `-m` only limits matches per file.
 * The promise settles when the process has exited.
 */
export function rgJson(rg: string, args: string[], cwd: string, limit = Infinity): Promise<RgResult> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    delete env.RIPGREP_CONFIG_PATH; // no user configuration
    const child = spawn(rg, ['--json', ...args], { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] });
    const matches: RgMatch[] = [];
    let searches: number | undefined;
    let rest = '';
    let done = false;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (done) return;
      const text = rest + chunk;
      let start = 0;
      for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
        const record = JSON.parse(text.slice(start, nl)) as { type: string; data: any };
        start = nl + 1;
        if (record.type === 'summary') searches = record.data.stats?.searches;
        if (record.type !== 'match') continue;
        const { data } = record;
        const path = textOf(data.path);
        const line = textOf(data.lines);
        matches.push({
          path: path.startsWith('./') ? path.slice(2) : path,
          lineNumber: data.line_number,
          line: line.endsWith('\n') ? line.slice(0, -1) : line,
        });
        if (matches.length >= limit) {
          done = true;
          child.kill('SIGKILL');
          return;
        }
      }
      rest = text.slice(start);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      // 0: matches, 1: none; a killed process has no code.
      if (done || code === 0 || code === 1) resolve({ matches, searches });
      else reject(new Error(`rg exited with ${code}`));
    });
  });
}
