/**
 * The CLI's `--json` and the package's result objects are one shape: for
 * the same query, every result line (less its `type` tag) and the summary
 * line have the same field names and value types as the addon's result
 * objects and counters, and the same values, for glob and find. grep's
 * `--json` is ripgrep's JSON Lines (compared with `rg --json` in
 * grep-cli.test.ts); its lines and counts are the addon's.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { natives } from './support/cli.ts';
import { removeDir, tempDir, writeTree } from './support/fs.ts';
import { FileType, fuzzyFind, glob, grep } from './support/natives.ts';
import { readRgJson, reportedLines } from './support/rg.ts';

let root = '';
beforeAll(() => {
  root = tempDir('cli-json');
  writeTree(root, {
    'src/api/server.ts': 'export function serve() {}\nconst needle = 1;\n// needle again\n',
    'src/api/client.ts': 'import { needle } from "./server";\n',
    'src/main.rs': 'fn main() {\n    let needle = "x";\n}\n',
    'docs/api.md': '# API\n\nno match here\n',
    '.hidden/needle.txt': 'needle\n',
  });
});
afterAll(() => removeDir(root));

/** The names and types of a JSON value's fields, all the way down (absent = undefined). */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (value !== null && typeof value === 'object') {
    const fields = Object.entries(value).filter(([, v]) => v !== undefined);
    return Object.fromEntries(fields.sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, shape(v)]));
  }
  return value === null ? 'null' : typeof value;
}

/** `natives ARGS --json` in the fixture: the result objects and the summary, without their `type` tag. */
function cliJson(args: string[]): { matches: unknown[]; summary: Record<string, unknown> } {
  const { code, out, err } = natives([...args, '--json'], root);
  expect([code, err]).toEqual([0, '']);
  const lines = out
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string });
  const untagged = lines.map(({ type: _type, ...rest }) => rest);
  expect(lines.map((l) => l.type)).toEqual([...lines.slice(0, -1).map(() => 'match'), 'summary']);
  return { matches: untagged.slice(0, -1), summary: untagged.at(-1)! };
}

/** Compare the CLI's lines with the addon's `{matches, ...counters}`: shape first, then values. */
function expectSameResults(cli: ReturnType<typeof cliJson>, addon: { matches: unknown[] }): void {
  const { matches, ...summary } = addon;
  expect(matches.length).toBeGreaterThan(0);
  expect(shape(cli.matches)).toEqual(shape(matches));
  expect(shape(cli.summary)).toEqual(shape(summary));
  expect(cli.matches).toEqual(matches);
  expect(cli.summary).toEqual(summary);
}

describe('the CLI --json has the shape of the addon results', () => {
  test('glob', async () => {
    expectSameResults(cliJson(['glob', '*.ts']), await glob({ pattern: '*.ts', path: root }));
    expectSameResults(cliJson(['glob', '*', '--type', 'd']), await glob({ pattern: '*', path: root, fileType: FileType.Dir }));
    expectSameResults(
      cliJson(['glob', '*', '--max', '2', '--sort', 'mtime']),
      await glob({ pattern: '*', path: root, maxResults: 2, sortByMtime: true }),
    );
  });

  test('grep: rg JSON Lines holding the addon\'s lines and counts', async () => {
    const base = { pattern: 'needle', path: root } as const;
    const cases: Array<[string[], Parameters<typeof grep>[0]]> = [
      [['--hidden', 'needle'], { ...base, hidden: true }],
      [['needle'], base],
      [['--hidden', '-C', '1', 'needle'], { ...base, hidden: true, context: 1 }],
      [['-v', 'needle', 'docs'], { ...base, path: `${root}/docs`, invertMatch: true }],
    ];
    for (const [args, options] of cases) {
      const { code, out, err } = natives(['grep', '--json', ...args], root);
      expect([code, err]).toEqual([0, '']);
      const cli = readRgJson(out);
      const addon = await grep(options);
      // The CLI prints paths as PATH was typed; the addon's are relative to it.
      const prefix = args.at(-1) === 'docs' ? 'docs/' : '';
      const lines = reportedLines(addon.matches.map((m) => ({ ...m, path: `${prefix}${m.path}` })));
      expect(cli.lines).toEqual(lines);
      expect([cli.matchRecords, cli.searches, cli.searchesWithMatch]).toEqual([
        addon.totalMatches,
        addon.filesSearched,
        addon.filesWithMatches,
      ]);
    }
  });

  test('find', async () => {
    expectSameResults(cliJson(['find', 'api', '--max', '100']), await fuzzyFind({ query: 'api', path: root, maxResults: 100 }));
    expectSameResults(cliJson(['find', 'srv', '--max', '1']), await fuzzyFind({ query: 'srv', path: root, maxResults: 1 }));
  });
});
