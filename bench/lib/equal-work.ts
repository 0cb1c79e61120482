/**
 * Equal work: a paired row compares two contenders only if they searched or
 * listed the same files and, for grep, found the same number of matches.
 * A row whose contenders differ fails (it is not a warning): its ratio would
 * compare different work.
 */

/** A path as a contender printed it, relative to the tree: no `./`, no trailing `/`. */
export function normalizePath(p: string): string {
  let s = p.startsWith('./') ? p.slice(2) : p;
  while (s.length > 1 && s.endsWith('/')) s = s.slice(0, -1);
  return s;
}

export interface SetComparison {
  equal: boolean;
  sizeA: number;
  sizeB: number;
  /** Up to `samples` paths listed by A only, then by B only, sorted. */
  onlyA: string[];
  onlyB: string[];
  /** How many paths each side alone listed. */
  onlyACount: number;
  onlyBCount: number;
}

/** Compares two file listings as sets of normalized paths; a path listed twice is an error of its own. */
export function compareFileSets(a: Iterable<string>, b: Iterable<string>, samples = 5): SetComparison {
  const sa = toSet(a, 'A'), sb = toSet(b, 'B');
  const onlyA = [...sa].filter((p) => !sb.has(p)).sort();
  const onlyB = [...sb].filter((p) => !sa.has(p)).sort();
  return {
    equal: onlyA.length === 0 && onlyB.length === 0,
    sizeA: sa.size,
    sizeB: sb.size,
    onlyA: onlyA.slice(0, samples),
    onlyB: onlyB.slice(0, samples),
    onlyACount: onlyA.length,
    onlyBCount: onlyB.length,
  };
}

function toSet(paths: Iterable<string>, side: string): Set<string> {
  const s = new Set<string>();
  for (const p of paths) {
    const n = normalizePath(p);
    if (s.has(n)) throw new Error(`listing ${side} holds ${n} twice`);
    s.add(n);
  }
  return s;
}

/** One line of a set comparison, for a row's notes. */
export function describeComparison(nameA: string, nameB: string, c: SetComparison): string {
  if (c.equal) return `${nameA} and ${nameB} list the same ${c.sizeA} files`;
  const part = (name: string, n: number, xs: string[]) => (n === 0 ? '' : `; ${n} only in ${name}: ${xs.join(', ')}${n > xs.length ? ', ...' : ''}`);
  return `${nameA} lists ${c.sizeA} files, ${nameB} ${c.sizeB}` + part(nameA, c.onlyACount, c.onlyA) + part(nameB, c.onlyBCount, c.onlyB);
}

/** What one contender of a row did: the files it searched or listed, the matches it returned. */
export interface Work {
  name: string;
  files: number;
  /** Grep rows: matches returned (or counted). */
  matches?: number;
}

export interface Verdict {
  ok: boolean;
  problems: string[];
}

/**
 * The equal-work verdict of a row: every contender's file count must be the
 * same and, where counted, every contender's match count too. `extra` are
 * problems found elsewhere (a file-set comparison), which fail the row too.
 */
export function equalWork(work: readonly Work[], extra: readonly string[] = []): Verdict {
  const problems = [...extra];
  const files = new Set(work.map((w) => w.files));
  if (files.size > 1) problems.push(`files differ: ${work.map((w) => `${w.name} ${w.files}`).join(', ')}`);
  const counted = work.filter((w) => w.matches !== undefined);
  if (new Set(counted.map((w) => w.matches)).size > 1) {
    problems.push(`matches differ: ${counted.map((w) => `${w.name} ${w.matches}`).join(', ')}`);
  }
  for (const w of work) if (!Number.isInteger(w.files) || w.files < 0) problems.push(`${w.name}: no file count`);
  return { ok: problems.length === 0, problems };
}

/** A grep result as the equal-results check sees it. */
export interface Located {
  path: string;
  lineNumber: number;
}

/**
 * Whether two contenders returned the same results in the same order (paths
 * normalized); `undefined` when they did, else the first difference. A
 * limited search is equal work only when both return the same first results.
 */
export function firstDifference(nameA: string, a: readonly Located[], nameB: string, b: readonly Located[]): string | undefined {
  const at = (r: Located | undefined) => (r ? `${normalizePath(r.path)}:${r.lineNumber}` : 'nothing');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (at(a[i]) !== at(b[i])) return `result ${i + 1} differs: ${nameA} ${at(a[i])}, ${nameB} ${at(b[i])}`;
  }
  return undefined;
}
