/**
 * A machine where no native binary loads: importing the package fails at once with `ENOTSUP`
 * naming the platform and the package that would fit, under Bun and Node alike, rather than with
 * the generated loader's message, which names neither. A binary that is missing is simulated by
 * pointing the loader's override variable at a path that does not exist.
 */
import { describe, expect, test } from 'bun:test';
import { runJson } from './support/child.ts';

interface Outcome {
  loaded?: boolean;
  error?: { code?: string; message?: string; cause?: string };
}

const MISSING = { NAPI_RS_NATIVE_LIBRARY_PATH: '/nonexistent/natives.node' };
const platform = `${process.platform}-${process.arch}`;

describe('no native binary', () => {
  for (const node of [false, true]) {
    test(`under ${node ? 'Node' : 'Bun'}: the import is ENOTSUP naming the platform package, the loader's errors as cause`, async () => {
      const outcome = await runJson<Outcome>('load-package.ts', [], { env: MISSING, node });
      expect(outcome.error?.code).toBe('ENOTSUP');
      expect(outcome.error?.message).toContain(`@natives/natives-${platform}`);
      expect(outcome.error?.cause).toContain('Cannot find native binding');
    });
  }

  test('with the binary in place the same import loads', async () => {
    expect(await runJson<Outcome>('load-package.ts', [])).toEqual({ loaded: true });
  });
});
