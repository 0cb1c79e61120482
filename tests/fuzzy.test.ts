/**
 * fuzzyFind end to end: the ranking a user would call right, highlight
 * indices, limits, the node_modules and hidden rules, and errors.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as path from 'node:path';
import { removeDir, tempDir, writeTree } from './support/fs.ts';
import { FileType, fsScanCacheStats, fuzzyFind } from './support/natives.ts';

let root = '';
beforeAll(() => {
  root = tempDir('fuzzy');
  writeTree(root, [
    'http_server_api_tests/test_api.py',
    'src/http/server.ts',
    'src/http/server_api.ts',
    'docs/api.md',
    'src/main.rs',
    'src/domain/main_window.rs',
    'lib/remain.rs',
    'a/b/c/util.ts',
    'util.ts',
    'Makefile',
    'docs/café/menü.md',
    '.config/secret.toml',
    'node_modules/left-pad/index.js',
  ]);
});
afterAll(() => removeDir(root));

const top = async (query: string, extra = {}) => (await fuzzyFind({ query, path: root, ...extra })).matches[0]?.path;

describe('ranking', () => {
  const table: [string, string][] = [
    ['@httpserap', 'http_server_api_tests/'],
    ['main.rs', 'src/main.rs'],
    ['main', 'src/main.rs'],
    ['util.ts', 'util.ts'],
    ['ain', 'lib/remain.rs'],
    ['srvapi', 'src/http/server_api.ts'],
    ['makefile', 'Makefile'],
    ['menu', 'docs/café/menü.md'],
  ];
  for (const [query, expected] of table) {
    test(`${query} → ${expected}`, async () => {
      expect(await top(query)).toBe(expected);
    });
  }

  test('exact name > prefix > substring > scattered, with scores that never overlap', async () => {
    const { matches } = await fuzzyFind({ query: 'main', path: root });
    const order = matches.map((m) => m.path);
    expect(order.indexOf('src/main.rs')).toBeLessThan(order.indexOf('src/domain/main_window.rs'));
    expect(order.indexOf('src/domain/main_window.rs')).toBeLessThan(order.indexOf('lib/remain.rs'));
    const scores = matches.map((m) => m.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  test('each match says why it matched', async () => {
    const tiers = async (query: string) => (await fuzzyFind({ query, path: root })).matches.map((m) => `${m.path} ${m.tier}`);
    expect(await tiers('main.rs')).toContain('src/main.rs exactName');
    expect(await tiers('main')).toContain('src/domain/main_window.rs namePrefix');
    expect(await tiers('ain')).toContain('lib/remain.rs nameSubstring');
    expect((await tiers('@httpserap'))[0]).toBe('http_server_api_tests/ nameScattered');
  });

  test('directories carry a trailing slash and their type', async () => {
    const { matches } = await fuzzyFind({ query: 'http_server_api_tests', path: root, maxResults: 1 });
    expect(matches[0]).toMatchObject({ path: 'http_server_api_tests/', fileType: FileType.Dir });
  });
});

describe('indices, limits and rules', () => {
  test('indices are character positions of the returned path', async () => {
    const { matches } = await fuzzyFind({ query: 'menu', path: root, maxResults: 1 });
    const { path: found, indices } = matches[0]!;
    const chars = [...found];
    expect(indices.map((i) => chars[i]).join('').normalize('NFD').replace(/\p{M}/gu, '')).toBe('menu');
  });

  test('maxResults bounds the list and totalMatches counts every match', async () => {
    const all = await fuzzyFind({ query: 's', path: root });
    const two = await fuzzyFind({ query: 's', path: root, maxResults: 2 });
    expect(two.matches.map((m) => m.path)).toEqual(all.matches.slice(0, 2).map((m) => m.path));
    expect(two.totalMatches).toBe(all.totalMatches);
  });

  test('the empty query lists shallow entries first', async () => {
    const { matches } = await fuzzyFind({ query: '', path: root, maxResults: 5 });
    expect(matches.every((m) => m.path.replace(/\/$/, '').split('/').length === 1)).toBe(true);
  });

  test('node_modules only when asked for or named; hidden only when asked for', async () => {
    expect((await top('left-pad')) ?? '').not.toContain('node_modules');
    expect(await top('node_modules/left-pad')).toBe('node_modules/left-pad/');
    expect(await top('left-pad', { includeNodeModules: true })).toBe('node_modules/left-pad/');
    expect(await top('secret')).toBeUndefined();
    expect(await top('secret', { hidden: true })).toBe('.config/secret.toml');
  });
});

describe('errors', () => {
  test('codes for bad input, and no walk before a pre-aborted signal', async () => {
    const codeOf = async (options: object) => {
      try {
        await fuzzyFind(options as never);
        return 'resolved';
      } catch (error) {
        return (error as { code?: string }).code;
      }
    };
    expect(await codeOf({ query: 'x', path: path.join(root, 'missing') })).toBe('ENOENT');
    expect(await codeOf({ query: 'x', path: path.join(root, 'util.ts') })).toBe('ENOTDIR');
    expect(await codeOf({ query: 1 })).toBe('EINVAL');
    expect(await codeOf({ query: 'x', path: root, maxResults: 1.5 })).toBe('EINVAL');
    const walks = fsScanCacheStats().walks;
    expect(await codeOf({ query: 'x', path: root, signal: AbortSignal.abort() })).toBe('ABORT_ERR');
    expect(fsScanCacheStats().walks).toBe(walks);
    expect(await codeOf({ query: 'x', path: root, timeoutMs: 0 })).toBe('ETIMEDOUT');
  });
});
