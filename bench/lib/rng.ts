/**
 * Small seeded PRNG so that generated trees are identical on every machine.
 * A Weyl sequence (golden-ratio increment) scrambled by an avalanche mix:
 * 32-bit state, full period, fast enough for millions of draws.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  u32(): number {
    this.state = (this.state + 0x9e3779b9) >>> 0;
    let z = this.state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.u32() / 4294967296;
  }

  /** Uniform integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.float() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.float() * items.length)]!;
  }

  /** Picks a key of `weights` with probability proportional to its value. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const keys = Object.keys(weights) as K[];
    let total = 0;
    for (const k of keys) total += weights[k];
    let x = this.float() * total;
    for (const k of keys) {
      x -= weights[k];
      if (x < 0) return k;
    }
    return keys[keys.length - 1]!;
  }

  /** Derives an independent generator, so sections do not shift each other. */
  fork(salt: number): Rng {
    return new Rng(this.u32() ^ Math.imul(salt, 0x27d4eb2d));
  }

  hex(len: number): string {
    let s = '';
    while (s.length < len) s += this.u32().toString(16).padStart(8, '0');
    return s.slice(0, len);
  }

  bytes(len: number): Uint8Array {
    const out = new Uint8Array(len);
    for (let i = 0; i < len; i += 4) {
      const v = this.u32();
      out[i] = v & 0xff;
      if (i + 1 < len) out[i + 1] = (v >>> 8) & 0xff;
      if (i + 2 < len) out[i + 2] = (v >>> 16) & 0xff;
      if (i + 3 < len) out[i + 3] = v >>> 24;
    }
    return out;
  }
}
