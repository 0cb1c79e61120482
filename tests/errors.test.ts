/**
 * The error model end to end: every failure is an `Error` with a stable
 * `code`, and bad input is refused before any walk runs.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { codedRejection } from './support/errors.ts';
import { runJson } from './support/child.ts';
import { removeDir, tempDir, writeTree } from './support/fs.ts';
import { stageForUnprivileged } from './support/unprivileged.ts';
import { applyFileChanges, fsScanCacheStats, fuzzyFind, glob, grep, invalidateFsScanCache, readFile, type CodedError, type FileChange, type GlobOptions } from './support/natives.ts';

let root = '';
beforeAll(() => {
  root = tempDir('errors');
  writeTree(root, ['a.ts', 'file.txt', 'sub/b.ts']);
});
afterAll(() => removeDir(root));

describe('bad paths', () => {
  test('an empty path is EINVAL for glob and for invalidation (it is not the cwd)', async () => {
    const empty = await codedRejection(glob({ pattern: '*', path: '' }));
    expect([empty.code, empty.option, empty.value]).toEqual(['EINVAL', 'path', '']);
    let thrown: unknown;
    try {
      invalidateFsScanCache('');
    } catch (error) {
      thrown = error;
    }
    expect((thrown as { code?: string }).code).toBe('EINVAL');
  });

  test('a missing directory is ENOENT naming it', async () => {
    const missing = path.join(root, 'no-such-dir');
    const error = await codedRejection(glob({ pattern: '*', path: missing }));
    expect(error.code).toBe('ENOENT');
    expect(error.message).toContain(missing);
    expect(error.path).toBe(missing);
    expect(error.option).toBeUndefined();
  });

  test('a file as the search path is ENOTDIR naming it', async () => {
    const file = path.join(root, 'file.txt');
    const error = await codedRejection(glob({ pattern: '*', path: file }));
    expect(error.code).toBe('ENOTDIR');
    expect(error.message).toContain(file);
    // A path through a file is not a directory either.
    expect((await codedRejection(glob({ pattern: '*', path: path.join(file, 'below') }))).code).toBe('ENOTDIR');
  });

  test('an unreadable directory is EACCES for an unprivileged process; unreadable subdirectories are skipped', async () => {
    // As root, permissions do not deny us: the glob runs as `nobody` in a child. As anyone else this
    // process is the unprivileged one, and a directory it owns is closed to it by mode 000.
    const privileged = process.getuid?.() === 0;
    const base = tempDir('eacces');
    const locked = path.join(base, 'locked');
    const nobody = privileged ? { uid: 65534, stage: stageForUnprivileged() } : undefined;
    try {
      writeTree(base, ['locked/secret.txt', 'open/visible.txt']);
      fs.chmodSync(base, 0o755);
      fs.chmodSync(path.join(base, 'open'), 0o755);
      fs.chmodSync(path.join(base, 'open', 'visible.txt'), 0o644);
      fs.chmodSync(locked, privileged ? 0o700 : 0o000);
      type Out = { error?: { code: string; message: string }; matches?: Array<{ path: string }> };
      const unprivileged = async (options: GlobOptions): Promise<Out> => {
        if (nobody) return runJson<Out>('glob-json.ts', [JSON.stringify(options)], { asUser: nobody });
        return glob(options).then(
          (result) => ({ matches: result.matches }),
          (error: CodedError) => ({ error: { code: error.code, message: error.message } }),
        );
      };

      const denied = await unprivileged({ pattern: '*', path: locked });
      expect(denied.error?.code).toBe('EACCES');
      expect(denied.error?.message).toContain(locked);

      const partial = await unprivileged({ pattern: '**/*', path: base });
      expect(partial.error).toBeUndefined();
      expect(partial.matches?.map((m) => m.path)).toEqual(['locked', 'open', 'open/visible.txt']);

      // With the permission, the same glob sees everything: the difference is the permission.
      if (!privileged) fs.chmodSync(locked, 0o700);
      const permitted = await glob({ pattern: '**/*', path: base });
      expect(permitted.matches.map((m) => m.path)).toEqual(['locked', 'locked/secret.txt', 'open', 'open/visible.txt']);
    } finally {
      fs.chmodSync(locked, 0o700);
      removeDir(base);
      if (nobody) removeDir(nobody.stage);
    }
  }, 30_000);
});

describe('bad patterns and options are EINVAL', () => {
  test('an invalid pattern names the pattern', async () => {
    for (const pattern of ['a[', 'src/[z-a]', '**/{x}}']) {
      const error = await codedRejection(glob({ pattern, path: root }));
      expect(error.code).toBe('EINVAL');
      expect(error.message).toContain(pattern);
      expect([error.option, error.value]).toEqual(['pattern', pattern]);
    }
  });

  test('grep names the option at fault: the regex, a glob, a type or a negated type', async () => {
    const table: [Partial<Parameters<typeof grep>[0]>, string, string][] = [
      [{ pattern: 'a(' }, 'pattern', 'a('],
      [{ pattern: 'x', glob: ['*.ts', 'a['] }, 'glob', 'a['],
      [{ pattern: 'x', type: 'rusty' }, 'type', 'rusty'],
      [{ pattern: 'x', typeNot: ['ts', 'pyhton'] }, 'typeNot', 'pyhton'],
    ];
    for (const [options, option, value] of table) {
      const error = await codedRejection(grep({ pattern: 'x', path: root, ...options }));
      expect([error.code, error.option, error.value]).toEqual(['EINVAL', option, value]);
    }
  });

  test('an empty or blank pattern', async () => {
    for (const pattern of ['', '   ']) {
      const error = await codedRejection(glob({ pattern, path: root }));
      expect(error.code).toBe('EINVAL');
      expect(error.message).toContain('empty');
    }
  });

  test('maxResults must be a non-negative integer', async () => {
    for (const maxResults of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const error = await codedRejection(glob({ pattern: '*', path: root, maxResults }));
      expect(error.code).toBe('EINVAL');
      expect(error.message).toContain('maxResults');
      expect([error.option, error.value]).toEqual(['maxResults', String(maxResults)]);
    }
  });

  test('timeoutMs must be a non-negative number', async () => {
    for (const timeoutMs of [-5, Number.NaN]) {
      const error = await codedRejection(glob({ pattern: '*', path: root, timeoutMs }));
      expect(error.code).toBe('EINVAL');
      expect(error.message).toContain('timeoutMs');
    }
  });

  test('fileType must be one of the FileType values', async () => {
    for (const fileType of [0, 5, 9]) {
      const error = await codedRejection(glob({ pattern: '*', path: root, fileType }));
      expect(error.code).toBe('EINVAL');
      expect(error.message).toContain(`fileType ${fileType}`);
      expect([error.option, error.value]).toEqual(['fileType', String(fileType)]);
    }
  });

  test('a file change with an unknown op is EINVAL naming the op, and changes nothing', async () => {
    const change = { op: 'move', path: 'a.ts', to: 'moved.ts' } as unknown as FileChange;
    const error = await codedRejection(applyFileChanges([change], { cwd: root }));
    expect(error.code).toBe('EINVAL');
    expect(error.message).toContain('op');
    expect(error.message).toContain('move');
    expect(fs.existsSync(path.join(root, 'a.ts'))).toBe(true);
  });

  test('file changes stay inside cwd unless told otherwise: a path leaving it is EXDEV and nothing is written', async () => {
    // The escape target lies in the test's own folder, not beside it in the system's temp dir.
    const cwd = path.join(root, 'cwd');
    fs.mkdirSync(cwd);
    const outside = path.join(root, 'outside.txt');
    const change: FileChange = { op: 'write', path: path.relative(cwd, outside), data: 'x' };
    const error = await codedRejection(applyFileChanges([change], { cwd }));
    expect(error.code).toBe('EXDEV');
    expect(fs.existsSync(outside)).toBe(false);
  });

  test('options of the wrong type', async () => {
    const wrong: unknown[] = [
      { pattern: '*', path: root, hidden: 'yes' },
      { pattern: '*', path: root, gitignore: 1 },
      { pattern: '*', path: root, maxResults: '10' },
      { pattern: '*', path: root, fileType: 'file' },
      { pattern: 42, path: root },
      { path: root },
      null,
      42,
    ];
    for (const options of wrong) {
      const error = await codedRejection(glob(options as GlobOptions));
      expect(error.code).toBe('EINVAL');
    }
  });

  test('an argument the TypeScript layer refuses names itself and its value, as the library does', async () => {
    const table: [string, () => Promise<unknown>, string, string][] = [
      ['glob pattern', () => glob({ pattern: 42, path: root } as never), 'pattern', '42'],
      ['glob without a pattern', () => glob({ path: root } as never), 'pattern', 'undefined'],
      ['glob options', () => glob(null as never), 'options', 'null'],
      ['grep pattern', () => grep({ pattern: ['a'], path: root } as never), 'pattern', '["a"]'],
      ['fuzzyFind query', () => fuzzyFind({ query: 7 } as never), 'query', '7'],
      ['readFile path', () => readFile(7 as never), 'path', '7'],
      ['applyFileChanges changes', () => applyFileChanges({} as never), 'changes', '{}'],
    ];
    for (const [label, call, option, value] of table) {
      const error = await codedRejection(call());
      expect([label, error.code, error.option, error.value]).toEqual([label, 'EINVAL', option, value]);
    }
  });

  test('a rejected call runs no walk', async () => {
    const before = fsScanCacheStats().walks;
    await codedRejection(glob({ pattern: 'a[', path: root }));
    await codedRejection(glob({ pattern: '*', path: root, maxResults: -1 }));
    await codedRejection(glob({ pattern: '*', path: path.join(root, 'missing') }));
    expect(fsScanCacheStats().walks).toBe(before);
  });
});

describe('abort and timeout', () => {
  test('a pre-aborted signal rejects with ABORT_ERR before any work', async () => {
    const controller = new AbortController();
    const reason = new Error('user cancelled');
    controller.abort(reason);
    const before = fsScanCacheStats().walks;
    const error = await codedRejection(glob({ pattern: '*', path: root, signal: controller.signal }));
    expect(error.code).toBe('ABORT_ERR');
    expect(error.name).toBe('AbortError');
    expect(error.cause).toBe(reason);
    // Even with a bad path the abort wins: nothing was looked at.
    const bad = await codedRejection(glob({ pattern: '*', path: path.join(root, 'missing'), signal: controller.signal }));
    expect(bad.code).toBe('ABORT_ERR');
    expect(fsScanCacheStats().walks).toBe(before);
  });

  test('AbortSignal.abort() and AbortSignal.timeout() signals', async () => {
    const error = await codedRejection(glob({ pattern: '*', path: root, signal: AbortSignal.abort() }));
    expect(error.code).toBe('ABORT_ERR');
    // A signal that fires later: the call still succeeds if it finishes first.
    const result = await glob({ pattern: '*.ts', path: root, signal: AbortSignal.timeout(60_000) });
    expect(result.matches.map((m) => m.path)).toEqual(['a.ts', 'sub/b.ts']);
  });

  test('timeoutMs: 0 rejects with ETIMEDOUT', async () => {
    const error = await codedRejection(glob({ pattern: '*', path: root, timeoutMs: 0 }));
    expect(error.code).toBe('ETIMEDOUT');
  });

  test('a generous timeoutMs does not get in the way', async () => {
    const result = await glob({ pattern: '*.ts', path: root, timeoutMs: 60_000 });
    expect(result.totalMatches).toBe(2);
  });
});
