/**
 * Paired benchmark harness. Every round runs each contender once (or `reps`
 * times), alternating the order between rounds so that drift on a noisy machine
 * (thermal, page cache, background jobs) hits all contenders alike. We report
 * medians with p10/p90 and ratios computed per round (paired), then their
 * median, rather than trusting any single absolute time.
 */
import { spawn, spawnSync } from 'node:child_process';

export interface Contender {
  name: string;
  /** Does the work once and returns how many results it produced. */
  run: () => Promise<number> | number;
  /** Timed repetitions per round (for very fast contenders). */
  reps?: number;
  note?: string;
}

export interface Summary {
  name: string;
  note?: string;
  samples: number;
  medianMs: number;
  p10Ms: number;
  p90Ms: number;
  minMs: number;
  maxMs: number;
  count: number;
}

export interface PairedResult {
  summaries: Record<string, Summary>;
  /** Per-round medians, index-aligned across contenders, for paired ratios. */
  rounds: Record<string, number[]>;
}

export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export const median = (xs: number[]) => quantile([...xs].sort((a, b) => a - b), 0.5);

export async function paired(contenders: Contender[], rounds: number, onProgress?: (round: number) => void): Promise<PairedResult> {
  const counts = new Map<string, number>();
  for (const c of contenders) counts.set(c.name, await c.run()); // untimed warm-up
  const all = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  const perRound = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? contenders : [...contenders].reverse();
    for (const c of order) {
      const times: number[] = [];
      for (let i = 0; i < (c.reps ?? 1); i++) {
        const t0 = performance.now();
        const n = await c.run();
        times.push(performance.now() - t0);
        if (n !== counts.get(c.name)) throw new Error(`${c.name}: result count changed from ${counts.get(c.name)} to ${n}`);
      }
      all.get(c.name)!.push(...times);
      perRound.get(c.name)!.push(median(times));
    }
    onProgress?.(r + 1);
  }
  const summaries: Record<string, Summary> = {};
  for (const c of contenders) {
    const s = all.get(c.name)!.sort((a, b) => a - b);
    summaries[c.name] = {
      name: c.name, note: c.note, samples: s.length, medianMs: quantile(s, 0.5), p10Ms: quantile(s, 0.1),
      p90Ms: quantile(s, 0.9), minMs: s[0]!, maxMs: s[s.length - 1]!, count: counts.get(c.name)!,
    };
  }
  return { summaries, rounds: Object.fromEntries(perRound) };
}

/** Median over rounds of time(a) / time(b), measured in the same rounds. */
export function pairedRatio(res: PairedResult, a: string, b: string): number {
  const ra = res.rounds[a], rb = res.rounds[b];
  if (!ra || !rb) return NaN;
  return median(ra.map((x, i) => x / rb[i]!));
}

/**
 * Spawns a command, counts the lines it prints (output is discarded). `cwd`
 * defaults to this process's; `quiet` drops its stderr (rg's notes on binary
 * files); `okCodes` are the exit codes taken as success (default: 0).
 */
export function spawnCount(cmd: string, args: string[], opts: { cwd?: string; quiet?: boolean; okCodes?: number[] } = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, stdio: ['ignore', 'pipe', opts.quiet ? 'ignore' : 'inherit'] });
    let lines = 0;
    child.stdout.on('data', (b: Buffer) => {
      for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) lines++;
    });
    child.on('error', reject);
    child.on('close', (code) => ((opts.okCodes ?? [0]).includes(code ?? -1) ? resolve(lines) : reject(new Error(`${cmd} exited with ${code}`))));
  });
}

/** Runs a command to the end (untimed) and returns the lines it printed. */
export function spawnLines(cmd: string, args: string[], cwd: string): string[] {
  const r = spawnSync(cmd, args, { cwd, maxBuffer: 1 << 30, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}`);
  return r.stdout.split('\n').filter((l) => l !== '');
}

const fmt = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));

/** A compact fixed-width table of summaries, with a ratio column against `base`. */
export function table(res: PairedResult, base: string | undefined, ratioLabel: string): string {
  const rows = [['contender', 'median ms', 'p10', 'p90', 'n', 'results', ratioLabel]];
  for (const s of Object.values(res.summaries)) {
    const ratio = base && res.summaries[base] ? pairedRatio(res, s.name, base) : NaN;
    rows.push([s.name + (s.note ? ` (${s.note})` : ''), fmt(s.medianMs), fmt(s.p10Ms), fmt(s.p90Ms), String(s.samples), String(s.count),
      Number.isNaN(ratio) ? '-' : ratio.toFixed(2) + 'x']);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
}

/** A contender run once per item (a query, say) rather than once per round. */
export interface ItemContender<I> {
  name: string;
  /** Does the work for one item and returns how many results it produced. */
  run: (item: I) => Promise<number> | number;
  note?: string;
}

export interface PairedItemsResult extends PairedResult {
  /** Per contender, per item: the median time over rounds and the result count. */
  items: Record<string, { medianMs: number; count: number }[]>;
}

/**
 * Like {@link paired}, over a list of items: every round runs every item on
 * every contender, the contender order alternating per item and per round.
 * Each (round, item) time is one sample, so summaries are over
 * rounds x items and `pairedRatio` pairs the same item in the same round.
 */
export async function pairedItems<I>(contenders: ItemContender<I>[], items: readonly I[], rounds: number,
  onProgress?: (round: number) => void): Promise<PairedItemsResult> {
  const counts = new Map<string, number[]>();
  for (const c of contenders) {
    const n: number[] = [];
    for (const item of items) n.push(await c.run(item)); // untimed warm-up
    counts.set(c.name, n);
  }
  const samples = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  const perItem = new Map<string, number[][]>(contenders.map((c) => [c.name, items.map(() => [])]));
  let flip = 0;
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < items.length; i++) {
      const order = flip++ % 2 === 0 ? contenders : [...contenders].reverse();
      for (const c of order) {
        const t0 = performance.now();
        const n = await c.run(items[i]!);
        const ms = performance.now() - t0;
        if (n !== counts.get(c.name)![i]) throw new Error(`${c.name}: result count for item ${i} changed from ${counts.get(c.name)![i]} to ${n}`);
        samples.get(c.name)!.push(ms);
        perItem.get(c.name)![i]!.push(ms);
      }
    }
    onProgress?.(r + 1);
  }
  const summaries: Record<string, Summary> = {};
  for (const c of contenders) {
    const s = [...samples.get(c.name)!].sort((a, b) => a - b);
    summaries[c.name] = {
      name: c.name, note: c.note, samples: s.length, medianMs: quantile(s, 0.5), p10Ms: quantile(s, 0.1),
      p90Ms: quantile(s, 0.9), minMs: s[0]!, maxMs: s[s.length - 1]!, count: counts.get(c.name)!.reduce((a, b) => a + b, 0),
    };
  }
  return {
    summaries,
    rounds: Object.fromEntries(contenders.map((c) => [c.name, samples.get(c.name)!])),
    items: Object.fromEntries(contenders.map((c) => [c.name, perItem.get(c.name)!.map((t, i) => ({ medianMs: median(t), count: counts.get(c.name)![i]! }))])),
  };
}

/** Take `--name value` out of `args`: the value, or undefined when absent. */
export function takeOption(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at === -1 ? undefined : args.splice(at, 2)[1];
}
