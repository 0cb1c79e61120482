/**
 * Where each hunk of a patch goes in a file, found in time linear in the
 * file, however alike its lines are.
 *
 * A hunk's old lines (context and removed) must occur in the file, at or
 * after the end of the previous hunk, nearest to the line its header names.
 * Comparing the block line by line at every candidate position costs the
 * file's length times the block's (a 60 KB patch against 2 M identical
 * lines took 95 s). Instead each distinct line gets a number, the file a
 * prefix table of polynomial hashes over those numbers, and a candidate
 * position is one comparison of two hashes; only a position whose hash
 * agrees is compared line by line, and the first that agrees is taken. A
 * block holding a line the file does not have is refused without a search.
 *
 * The search walks outward from the header's line, so its cost is how far
 * a hunk sits from where its header says. That distance is bounded for the
 * whole file ({@link searchBudget} positions); a patch whose line numbers
 * are so far off that it runs out is refused, naming the hunk, rather than
 * holding the thread.
 *
 * The index is built from the lines as the model sees them (text.ts's
 * `displayText`), so an escaped byte matches the U+FFFD `read` showed.
 */
/** A block of lines to find: their texts, as the patch gives them. */
export type Block = readonly string[];

/** Positions a whole file's hunks may examine: eight passes over the file, plus room for small files. */
export function searchBudget(lines: number): number {
  return 8 * lines + 100_000;
}

/** Why a hunk could not be placed. */
export type Unplaced = 'missing' | 'budget';

/** A file's lines, numbered for fast block search. */
export class LineIndex {
  private readonly ids: Int32Array;
  private readonly numbers = new Map<string, number>();
  /** `prefix[i]`: the hash of lines `0..i`, each line's number times `BASE^index`. */
  private readonly prefix: Int32Array;
  private readonly powers: Int32Array;
  private budget: number;

  /** `lines`: the file's lines as the model sees them. */
  constructor(lines: readonly string[]) {
    const n = lines.length;
    this.ids = new Int32Array(n);
    this.prefix = new Int32Array(n + 1);
    this.powers = new Int32Array(n + 1);
    this.powers[0] = 1;
    for (let i = 0; i < n; i++) {
      const id = this.number(lines[i]!);
      this.ids[i] = id;
      this.powers[i + 1] = Math.imul(this.powers[i]!, BASE);
      this.prefix[i + 1] = (this.prefix[i]! + Math.imul(id, this.powers[i]!)) | 0;
    }
    this.budget = searchBudget(n);
  }

  /**
   * The position of `block` at or after `floor` nearest to `expected`
   * (lower on a tie), or why there is none.
   */
  find(block: Block, expected: number, floor: number): number | Unplaced {
    const ids = block.map((line) => this.numbers.get(line));
    if (ids.some((id) => id === undefined)) return 'missing';
    const wanted = ids as number[];
    const last = this.ids.length - wanted.length;
    if (last < floor) return 'missing';
    const hash = wanted.reduce((sum, id, k) => (sum + Math.imul(id, this.powers[k]!)) | 0, 0);
    const start = Math.min(Math.max(expected, floor), last);
    for (let distance = 0; start + distance <= last || start - distance >= floor; distance++) {
      this.budget -= 2;
      if (this.budget < 0) return 'budget';
      const up = start - distance;
      if (up >= floor && this.matches(wanted, hash, up)) return up;
      const down = start + distance;
      if (distance > 0 && down <= last && this.matches(wanted, hash, down)) return down;
    }
    return 'missing';
  }

  private matches(wanted: readonly number[], hash: number, at: number): boolean {
    const window = (this.prefix[at + wanted.length]! - this.prefix[at]!) | 0;
    if (window !== Math.imul(hash, this.powers[at]!)) return false;
    return wanted.every((id, k) => this.ids[at + k] === id);
  }

  private number(line: string): number {
    let id = this.numbers.get(line);
    if (id === undefined) {
      // Numbers start at 1: a 0 would vanish from every sum.
      id = this.numbers.size + 1;
      this.numbers.set(line, id);
    }
    return id;
  }
}

/** An odd multiplier, drawn per process, so no patch can be built to make hashes collide. */
const BASE = (Math.floor(Math.random() * 0x3fffffff) * 2 + 1) | 0;
