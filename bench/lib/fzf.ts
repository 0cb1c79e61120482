/** fzf as a filter: the candidate list on stdin, ranked matches on stdout. */
import { spawn, spawnSync } from 'node:child_process';

/** Whether `fzf` runs (it is optional). */
export function hasFzf(fzf: string): boolean {
  const r = spawnSync(fzf, ['--version'], { stdio: 'ignore' });
  return !r.error && r.status === 0;
}

/**
 * `fzf --filter <query> [extra]` fed `input` (newline-terminated candidates);
 * returns its first `limit` lines, best first. fzf prints only after ranking
 * every candidate, so reading all of its output costs little more.
 */
export function fzfFilter(fzf: string, query: string, input: string, limit = 100, extra: string[] = []): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    delete env.FZF_DEFAULT_OPTS; // no user configuration
    delete env.FZF_DEFAULT_OPTS_FILE;
    const child = spawn(fzf, ['--filter', query, ...extra], { env, stdio: ['pipe', 'pipe', 'inherit'] });
    const lines: string[] = [];
    let rest = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (lines.length >= limit) return;
      const text = rest + chunk;
      let start = 0;
      for (let nl = text.indexOf('\n'); nl !== -1 && lines.length < limit; nl = text.indexOf('\n', start)) {
        lines.push(text.slice(start, nl));
        start = nl + 1;
      }
      rest = text.slice(start);
    });
    child.stdin.on('error', () => {}); // fzf may exit before reading everything
    child.stdin.end(input);
    child.on('error', reject);
    // 0: matches, 1: none.
    child.on('close', (code) => (code === 0 || code === 1 ? resolve(lines) : reject(new Error(`fzf exited with ${code}`))));
  });
}
