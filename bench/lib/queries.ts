/**
 * Fuzzy-find queries an agent would type, derived deterministically from the
 * names in a path list: exact file names, name prefixes, scattered
 * abbreviations (`hdlincreq` for handleIncomingRequest) and directory-plus-name
 * fragments, some as space-separated words.
 */
import { Rng } from './rng.ts';

export type QueryKind = 'name' | 'prefix' | 'abbrev' | 'path';

export interface FuzzyQuery {
  query: string;
  kind: QueryKind;
  /** The path the query was made from. */
  from: string;
}

const VOWELS = new Set('aeiou');

/** Words of a file stem: split at `-`, `_`, `.` and camelCase humps, lowercased. */
export function words(stem: string): string[] {
  return stem
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s\-_.]+/)
    .filter((w) => w !== '')
    .map((w) => w.toLowerCase());
}

/** `handle` -> `hdl` (first letter, then consonants) or `han` (first three letters). */
function abbreviate(word: string, consonants: boolean): string {
  if (!consonants) return word.slice(0, 3);
  let out = word[0]!;
  for (const ch of word.slice(1)) {
    if (out.length === 3) break;
    if (!VOWELS.has(ch) && ch !== out[out.length - 1]) out += ch;
  }
  return out;
}

function stemOf(base: string): string {
  const dot = base.indexOf('.', 1);
  return dot === -1 ? base : base.slice(0, dot);
}

/** `perKind` queries of each kind from `files` (relative `/`-separated paths). */
export function deriveQueries(files: readonly string[], perKind = 5, seed = 0x0f22_2024): FuzzyQuery[] {
  const rng = new Rng(seed);
  const sorted = [...files].sort();
  const seen = new Set<string>();
  const out: FuzzyQuery[] = [];
  const make: Record<QueryKind, (path: string, i: number) => string | undefined> = {
    name: (path) => {
      const base = path.slice(path.lastIndexOf('/') + 1);
      return stemOf(base).length >= 6 ? base : undefined;
    },
    prefix: (path) => {
      const stem = stemOf(path.slice(path.lastIndexOf('/') + 1));
      if (stem.length < 7) return undefined;
      return stem.slice(0, Math.max(4, Math.ceil(stem.length * 0.6))).toLowerCase();
    },
    abbrev: (path, i) => {
      const w = words(stemOf(path.slice(path.lastIndexOf('/') + 1)));
      if (w.length < 2 || w.some((x) => x.length < 3)) return undefined;
      return w.map((x) => abbreviate(x, i % 2 === 0)).join('');
    },
    path: (path, i) => {
      const parts = path.split('/');
      if (parts.length < 3) return undefined;
      const stem = stemOf(parts[parts.length - 1]!);
      const parent = parts[parts.length - 2]!;
      if (stem.length < 5 || parent.length < 3) return undefined;
      const name = stem.slice(0, Math.min(stem.length, 6)).toLowerCase();
      return i % 2 === 0 ? `${parent}/${name}` : `${parent} ${name}`;
    },
  };
  for (const kind of Object.keys(make) as QueryKind[]) {
    for (let i = 0, tries = 0; i < perKind && tries < 10_000; tries++) {
      const from = rng.pick(sorted);
      const query = make[kind](from, i);
      if (query === undefined || seen.has(query)) continue;
      seen.add(query);
      out.push({ query, kind, from });
      i++;
    }
  }
  return out;
}
