/**
 * The bench's equal-work check (bench/lib/equal-work.ts): a paired row fails
 * when its contenders listed different files or found different match counts.
 */
import { describe, expect, test } from 'bun:test';
import { compareFileSets, describeComparison, equalWork, firstDifference, normalizePath } from '../bench/lib/equal-work.ts';

describe('normalizePath', () => {
  test('drops a leading ./ and trailing slashes', () => {
    expect(normalizePath('./src/a.ts')).toBe('src/a.ts');
    expect(normalizePath('src/dir/')).toBe('src/dir');
    expect(normalizePath('a')).toBe('a');
    expect(normalizePath('/')).toBe('/');
  });
});

describe('compareFileSets', () => {
  test('the same paths, however printed and ordered, are equal', () => {
    const c = compareFileSets(['./b.rs', 'a/x.rs', 'dir/'], ['dir', 'b.rs', './a/x.rs']);
    expect(c.equal).toBe(true);
    expect([c.sizeA, c.sizeB, c.onlyACount, c.onlyBCount]).toEqual([3, 3, 0, 0]);
    expect(describeComparison('natives', 'rg', c)).toBe('natives and rg list the same 3 files');
  });

  test('equal sizes with different members are not equal', () => {
    const c = compareFileSets(['a', 'b'], ['a', 'node_modules/x/index.js']);
    expect(c.equal).toBe(false);
    expect(c.sizeA).toBe(c.sizeB);
    expect(c.onlyA).toEqual(['b']);
    expect(c.onlyB).toEqual(['node_modules/x/index.js']);
  });

  test('samples are sorted and capped; the counts are whole', () => {
    const b = Array.from({ length: 12 }, (_, i) => `n/${String(i).padStart(2, '0')}`);
    const c = compareFileSets(['z'], b, 3);
    expect(c.onlyA).toEqual(['z']);
    expect(c.onlyB).toEqual(['n/00', 'n/01', 'n/02']);
    expect(c.onlyBCount).toBe(12);
    expect(describeComparison('natives', 'fd', c)).toBe(
      'natives lists 1 files, fd 12; 1 only in natives: z; 12 only in fd: n/00, n/01, n/02, ...',
    );
  });

  test('a path listed twice is an error, not a set member', () => {
    expect(() => compareFileSets(['a', './a'], ['a'])).toThrow(/twice/);
  });
});

describe('equalWork', () => {
  test('same files and matches: ok', () => {
    const v = equalWork([
      { name: 'natives', files: 19315, matches: 2077 },
      { name: 'natives cached', files: 19315, matches: 2077 },
      { name: 'rg --json', files: 19315, matches: 2077 },
    ]);
    expect(v).toEqual({ ok: true, problems: [] });
  });

  test('different file counts fail the row', () => {
    const v = equalWork([{ name: 'natives', files: 18508 }, { name: 'fd', files: 37957 }]);
    expect(v.ok).toBe(false);
    expect(v.problems).toEqual(['files differ: natives 18508, fd 37957']);
  });

  test('different match counts fail the row; a contender without a count is not compared', () => {
    const v = equalWork([
      { name: 'natives', files: 3, matches: 10 },
      { name: 'rg --json', files: 3, matches: 11 },
      { name: 'rg', files: 3 },
    ]);
    expect(v.ok).toBe(false);
    expect(v.problems).toEqual(['matches differ: natives 10, rg --json 11']);
  });

  test('problems found elsewhere and missing counts fail the row too', () => {
    const v = equalWork([{ name: 'natives', files: NaN }, { name: 'fd', files: NaN }], ['natives lists 1 files, fd 2']);
    expect(v.ok).toBe(false);
    expect(v.problems[0]).toBe('natives lists 1 files, fd 2');
    expect(v.problems).toContain('natives: no file count');
  });
});

describe('firstDifference', () => {
  const r = (path: string, lineNumber: number) => ({ path, lineNumber });
  test('the same results in the same order, however paths are printed, are equal work', () => {
    expect(firstDifference('natives', [r('a.ts', 1), r('b/c.ts', 3)], 'rg', [r('./a.ts', 1), r('b/c.ts', 3)])).toBeUndefined();
  });
  test('another order, another line or a missing result is the first difference', () => {
    expect(firstDifference('natives', [r('a.ts', 1), r('b.ts', 2)], 'rg', [r('b.ts', 2), r('a.ts', 1)])).toBe(
      'result 1 differs: natives a.ts:1, rg b.ts:2',
    );
    expect(firstDifference('natives', [r('a.ts', 1)], 'rg', [r('a.ts', 2)])).toBe('result 1 differs: natives a.ts:1, rg a.ts:2');
    expect(firstDifference('natives', [r('a.ts', 1)], 'rg', [r('a.ts', 1), r('b.ts', 1)])).toBe(
      'result 2 differs: natives nothing, rg b.ts:1',
    );
  });
});
