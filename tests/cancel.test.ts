/**
 * Timeout, abort and concurrent deletion on large trees: a 200 000-file tree
 * (generated once into the temp dir and reused) for the latency promises,
 * and a throwaway tree deleted by another process while it is walked.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as path from 'node:path';
import { FIXTURES } from './support/child.ts';
import { ensureBigTree, generateTree } from './support/big-tree.ts';
import { removeDir, tempDir } from './support/fs.ts';
import { SETTLE_BUDGET_MS, abortAfter, medianLateness, settle } from './support/latency.ts';
import { fsScanCacheStats, glob, type GlobOptions } from './support/natives.ts';

const TIMEOUT_MS = 50;
const ABORT_AFTER_MS = 30;

let bigTree = '';
beforeAll(() => {
  bigTree = ensureBigTree();
}, 300_000);

/** The whole tree, as the cancellation promises are stated for it. */
const everything = (): GlobOptions => ({ pattern: '**/*', path: bigTree, hidden: true, gitignore: false });

describe('cancelling a walk of 200 000 files', () => {
  test(
    'an uncancelled walk outlasts a deadline and its settle budget',
    async () => {
      const times: number[] = [];
      for (let i = 0; i < 2; i++) {
        const started = performance.now();
        // A pattern matching nothing: the time is the walk, not building results.
        const result = await glob({ ...everything(), pattern: '**/*.none' });
        times.push(performance.now() - started);
        expect(result.totalMatches).toBe(0);
      }
      const started = performance.now();
      const all = await glob(everything());
      const withResults = performance.now() - started;
      expect(all.totalMatches).toBe(202_200);
      console.log(
        `uncancelled walk of ${all.totalMatches} entries: ${times.map((t) => t.toFixed(0)).join(' / ')} ms ` +
          `(${withResults.toFixed(0)} ms returning every match)`,
      );
      // The cancellation tests below mean something only if their deadline, plus the time it may take
      // to settle, falls inside the walk (they also check the walk did not finish first).
      const fastest = Math.min(...times);
      expect(fastest).toBeGreaterThan(TIMEOUT_MS + SETTLE_BUDGET_MS);
    },
    120_000,
  );

  test(
    `timeoutMs: ${TIMEOUT_MS} rejects with ETIMEDOUT within ${SETTLE_BUDGET_MS} ms of the deadline`,
    async () => {
      const median = await medianLateness(`glob timeoutMs ${TIMEOUT_MS}`, async () => {
        const started = performance.now();
        const outcome = await settle(glob({ ...everything(), timeoutMs: TIMEOUT_MS }));
        expect(outcome.code).toBe('ETIMEDOUT');
        return outcome.at - started - TIMEOUT_MS;
      });
      expect(median).toBeLessThan(SETTLE_BUDGET_MS);
    },
    120_000,
  );

  test(
    `abort() ${ABORT_AFTER_MS} ms into the walk rejects with ABORT_ERR within ${SETTLE_BUDGET_MS} ms`,
    async () => {
      const median = await medianLateness(`glob abort ${ABORT_AFTER_MS} ms in`, async () => {
        const outcome = await abortAfter(ABORT_AFTER_MS, (signal) => glob({ ...everything(), signal }));
        // Resolving (code undefined) would mean the walk beat the abort: the test would be void.
        expect(outcome.code).toBe('ABORT_ERR');
        return outcome.lateness;
      });
      expect(median).toBeLessThan(SETTLE_BUDGET_MS);
    },
    120_000,
  );

  test(
    'an aborted or timed-out cached walk stores nothing',
    async () => {
      const before = fsScanCacheStats();
      const controller = new AbortController();
      setTimeout(() => controller.abort(), ABORT_AFTER_MS);
      const aborted = await settle(glob({ ...everything(), cache: true, signal: controller.signal }));
      expect(aborted.code).toBe('ABORT_ERR');
      const timedOut = await settle(glob({ ...everything(), cache: true, timeoutMs: TIMEOUT_MS }));
      expect(timedOut.code).toBe('ETIMEDOUT');
      const after = fsScanCacheStats();
      expect(after.scans).toBe(before.scans);
      expect(after.entries).toBe(before.entries);
      expect(after.walks).toBe(before.walks + 2);
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
