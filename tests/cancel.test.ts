/**
 * Timeout, abort and concurrent deletion on large trees: a tree of 200 000
 * files or more (generated once into the temp dir and reused) for the
 * latency promises, and a throwaway tree deleted by another process while it
 * is walked.
 *
 * A cancellation promise means something only while the uncancelled walk
 * outlasts the deadline plus the time a cancelled call may take to settle:
 * otherwise a walk that never polls its token would pass. How long a walk
 * takes depends on the machine, so the work is sized to it: the tree grows
 * (by further 200 000-file parts) until its walk takes at least
 * {@link MIN_WALK_MS} here, and each attempt measures an uncancelled walk
 * just before it and cancels a quarter of the way into that time.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as path from 'node:path';
import { FIXTURES } from './support/child.ts';
import { ensureBigTree, generateTree } from './support/big-tree.ts';
import { removeDir, tempDir } from './support/fs.ts';
import { SETTLE_BUDGET_MS, abortAfter, medianLateness, settle } from './support/latency.ts';
import { fsScanCacheStats, glob, type GlobOptions } from './support/natives.ts';

/** The shortest uncancelled walk the tree is grown to here (three settle budgets). */
const MIN_WALK_MS = 3 * SETTLE_BUDGET_MS;
/** The most 200 000-file parts the tree grows to. */
const MAX_PARTS = 16;
/** Where in an uncancelled walk's time a deadline or an abort lands. */
const CANCEL_AT = 1 / 4;

let tree = { root: '', entries: 0 };
beforeAll(async () => {
  tree = await treeWalkingAtLeast(MIN_WALK_MS);
}, 600_000);

/** The whole tree, as the cancellation promises are stated for it. */
const everything = (): GlobOptions => ({ pattern: '**/*', path: tree.root, hidden: true, gitignore: false });

/** The fastest of two uncancelled walks of `root` (a pattern matching nothing: the time is the walk). */
async function walkMs(root: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 2; i++) {
    const started = performance.now();
    const result = await glob({ pattern: '**/*.none', path: root, hidden: true, gitignore: false });
    times.push(performance.now() - started);
    expect(result.totalMatches).toBe(0);
  }
  return Math.min(...times);
}

/** The shared large tree, grown by further parts until walking it takes at least `minMs` here. */
async function treeWalkingAtLeast(minMs: number): Promise<{ root: string; entries: number }> {
  let parts = 1;
  for (;;) {
    const grown = ensureBigTree(parts);
    const ms = await walkMs(grown.root);
    console.log(`a walk of ${grown.entries} entries (${parts} part${parts > 1 ? 's' : ''}): ${ms.toFixed(0)} ms`);
    if (ms >= minMs || parts === MAX_PARTS) return grown;
    // Powers of two, so a machine whose speed varies with its load reuses a few trees.
    const needed = (parts * 1.5 * minMs) / Math.max(ms, 1);
    parts = Math.min(MAX_PARTS, 2 ** Math.ceil(Math.log2(needed)));
  }
}

/**
 * Measure an uncancelled walk, then cancel `call` at {@link CANCEL_AT} of that time: the deadline or
 * abort delay it was given, and the walk time it is judged against. The promise is void unless that
 * walk outlasts the cancellation point plus the settle budget, so that is checked each time.
 */
async function cancelInsideAWalk<T>(call: (afterMs: number) => Promise<T>): Promise<T> {
  const ms = await walkMs(tree.root);
  const afterMs = Math.max(1, Math.round(ms * CANCEL_AT));
  expect(ms).toBeGreaterThan(afterMs + SETTLE_BUDGET_MS);
  return await call(afterMs);
}

describe(`cancelling a walk of ${MIN_WALK_MS} ms or more`, () => {
  test(
    'an uncancelled walk outlasts a deadline and its settle budget',
    async () => {
      const ms = await walkMs(tree.root);
      const started = performance.now();
      const all = await glob(everything());
      const withResults = performance.now() - started;
      expect(all.totalMatches).toBe(tree.entries);
      const deadline = Math.round(ms * CANCEL_AT);
      console.log(
        `uncancelled walk of ${all.totalMatches} entries: ${ms.toFixed(0)} ms (${withResults.toFixed(0)} ms ` +
          `returning every match); cancelled at ${deadline} ms, settle budget ${SETTLE_BUDGET_MS} ms`,
      );
      // The cancellation tests below mean something only if their deadline, plus the time it may take
      // to settle, falls inside the walk (they also check the walk did not finish first).
      expect(ms).toBeGreaterThan(deadline + SETTLE_BUDGET_MS);
    },
    120_000,
  );

  test(
    `timeoutMs a quarter into the walk rejects with ETIMEDOUT within ${SETTLE_BUDGET_MS} ms of the deadline`,
    async () => {
      const median = await medianLateness('glob timeoutMs', () =>
        cancelInsideAWalk(async (timeoutMs) => {
          const started = performance.now();
          const outcome = await settle(glob({ ...everything(), timeoutMs }));
          expect(outcome.code).toBe('ETIMEDOUT');
          return outcome.at - started - timeoutMs;
        }),
      );
      expect(median).toBeLessThan(SETTLE_BUDGET_MS);
    },
    120_000,
  );

  test(
    `abort() a quarter into the walk rejects with ABORT_ERR within ${SETTLE_BUDGET_MS} ms`,
    async () => {
      const median = await medianLateness('glob abort', () =>
        cancelInsideAWalk(async (afterMs) => {
          const outcome = await abortAfter(afterMs, (signal) => glob({ ...everything(), signal }));
          // Resolving (code undefined) would mean the walk beat the abort: the test would be void.
          expect(outcome.code).toBe('ABORT_ERR');
          return outcome.lateness;
        }),
      );
      expect(median).toBeLessThan(SETTLE_BUDGET_MS);
    },
    120_000,
  );

  test(
    'an aborted or timed-out cached walk stores nothing',
    async () => {
      const before = fsScanCacheStats();
      const aborted = await cancelInsideAWalk((afterMs) => {
        const controller = new AbortController();
        setTimeout(() => controller.abort(), afterMs);
        return settle(glob({ ...everything(), cache: true, signal: controller.signal }));
      });
      expect(aborted.code).toBe('ABORT_ERR');
      const timedOut = await cancelInsideAWalk((timeoutMs) => settle(glob({ ...everything(), cache: true, timeoutMs })));
      expect(timedOut.code).toBe('ETIMEDOUT');
      const after = fsScanCacheStats();
      expect(after.scans).toBe(before.scans);
      expect(after.entries).toBe(before.entries);
      // Two measuring walks before each cancelled one.
      expect(after.walks).toBe(before.walks + 6);
    },
    120_000,
  );
});

describe('files deleted while a walk runs', () => {
  let root = '';
  afterAll(() => {
    if (root) removeDir(root);
  });

  test(
    'are not an error: every uncached glob resolves with entries from the tree',
    async () => {
      root = tempDir('deleting');
      const files = generateTree(root, 40, 10, 100);
      const initial = await glob({ pattern: '**/*', path: root, hidden: true, gitignore: false });
      expect(initial.totalMatches).toBe(files + 40 + 400);
      const known = new Set(initial.matches.map((m) => m.path));

      const deleter = Bun.spawn([process.execPath, path.join(FIXTURES, 'delete-tree.ts'), root], {
        stdout: 'pipe',
        stderr: 'inherit',
      });
      let running = true;
      const exited = deleter.exited.then((code) => {
        running = false;
        return code;
      });
      let printed = '';
      const output = (async () => {
        const decoder = new TextDecoder();
        const reader = deleter.stdout.getReader();
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
          printed += decoder.decode(chunk.value, { stream: true });
        }
        return printed;
      })();
      // Wait until deletion has begun (`started` follows the first unlink).
      while (running && !printed.includes('started')) await Bun.sleep(2);

      const runs: Array<{ total: number; during: boolean }> = [];
      do {
        const startedDuring = running;
        const result = await glob({ pattern: '**/*', path: root, hidden: true, gitignore: false });
        for (const match of result.matches) {
          if (!known.has(match.path)) throw new Error(`unexpected path ${match.path}`);
        }
        expect(result.matches).toHaveLength(result.totalMatches);
        runs.push({ total: result.totalMatches, during: startedDuring && running });
      } while (running);

      expect(await exited).toBe(0);
      expect((await output).trim().split('\n').at(-1)).toBe(`done ${files}`);
      const overlapping = runs.filter((r) => r.during);
      console.log(
        `deleting ${files} files: ${runs.length} globs, ${overlapping.length} entirely during deletion, totals ` +
          runs.map((r) => r.total).join(' '),
      );
      // At least one glob ran start to finish while files were vanishing.
      expect(overlapping.length).toBeGreaterThan(0);
      expect(overlapping.some((r) => r.total < initial.totalMatches)).toBe(true);
      const final = await glob({ pattern: '**/*', path: root, hidden: true, gitignore: false });
      expect(final.totalMatches).toBe(0);
    },
    120_000,
  );
});
