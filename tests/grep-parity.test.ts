/**
 * `grep` against ripgrep itself, through the package: one git repository
 * holding every kind of content, a table of requests each paired with the
 * equivalent `rg` flags, and the answers compared line for line (path, line
 * number, text, match or context) together with the counters both report.
 *
 * Equivalences: `hidden: true` is `rg --hidden`, and the cases search hidden files with both
 * (left out, both skip them: one case says so);
 * `gitignore: false` is `--no-ignore`; `multiline` is `-U`; `context`,
 * `contextBefore`, `contextAfter` are `-C`, `-B`, `-A`; `glob` is `-g`;
 * `type` is `-t`; `ignoreCase`, `smartCase`, `literal` are `-i`, `-S`, `-F`.
 * grep never enters `.git`, which `rg --hidden` does, so every rg run here
 * excludes it with `-g '!.git'`; node_modules is searched by rg, so the
 * cases turn `includeNodeModules` on unless they are about it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as path from 'node:path';
import { grep, type GrepOptions } from './support/grep.ts';
import { writeGrepFixture } from './support/grep-fixture.ts';
import { removeDir } from './support/fs.ts';
import { findRg, isBinaryNotice, printedLikeRg, reportedLines, rgJson, rgLines } from './support/rg.ts';

const rg = findRg();

interface Case {
  name: string;
  pattern: string;
  rgArgs: string[];
  options?: Partial<GrepOptions>;
  /** rg's pattern when it is written differently from grep's. */
  rgPattern?: string;
}

/** Every case runs with `hidden: true` and rg's `--hidden` unless it sets `hidden` itself, and rg gets `-g !.git` always. */
const CASES: Case[] = [
  { name: 'plain word', pattern: 'needle', rgArgs: [] },
  { name: 'regex with a repetition and a word boundary', pattern: String.raw`ne+dle\b`, rgArgs: [] },
  { name: 'case-sensitive word', pattern: String.raw`\bNeedle\b`, rgArgs: [] },
  { name: 'ignoreCase', pattern: 'NEEDLE', rgArgs: ['-i'], options: { ignoreCase: true } },
  { name: 'ignoreCase with Unicode case folding', pattern: 'été|σίσυφος|straße', rgArgs: ['-i'], options: { ignoreCase: true } },
  { name: 'smartCase, lowercase pattern', pattern: 'needle', rgArgs: ['-S'], options: { smartCase: true } },
  { name: 'smartCase, uppercase pattern', pattern: 'Needle', rgArgs: ['-S'], options: { smartCase: true } },
  { name: 'ignoreCase wins over smartCase', pattern: 'Needle', rgArgs: ['-S', '-i'], options: { smartCase: true, ignoreCase: true } },
  { name: 'literal with regex metacharacters', pattern: 'a.b(', rgArgs: ['-F'], options: { literal: true } },
  { name: 'literal and ignoreCase', pattern: "'NeedLE'", rgArgs: ['-F', '-i'], options: { literal: true, ignoreCase: true } },
  { name: 'escaped braces', pattern: String.raw`\$\{name\}`, rgArgs: [] },
  { name: 'anchors', pattern: '^needle', rgArgs: [] },
  { name: 'end anchor on CRLF and no-newline files', pattern: 'needle$', rgArgs: [] },
  { name: 'non-UTF-8 lines', pattern: String.raw`needle \S+`, rgArgs: [] },
  { name: 'multiline across two lines', pattern: String.raw`struct A \{\n\s+field`, rgArgs: ['-U'], options: { multiline: true } },
  { name: 'multiline with (?s)', pattern: '(?s)// start.*?// end', rgArgs: ['-U'], options: { multiline: true } },
  { name: 'multiline over CRLF', pattern: String.raw`one\r?\nneedle`, rgArgs: ['-U'], options: { multiline: true } },
  { name: 'multiline blank line', pattern: String.raw`gamma\n\nalpha`, rgArgs: ['-U'], options: { multiline: true } },
  { name: 'multiline with context', pattern: String.raw`beta needle\ngamma`, rgArgs: ['-U', '-C', '1'], options: { multiline: true, context: 1 } },
  { name: 'context 2', pattern: 'needle', rgArgs: ['-C', '2'], options: { context: 2 } },
  { name: 'contextAfter 1', pattern: 'needle', rgArgs: ['-A', '1'], options: { contextAfter: 1 } },
  { name: 'contextBefore 3', pattern: 'needle', rgArgs: ['-B', '3'], options: { contextBefore: 3 } },
  { name: 'contextBefore and contextAfter differ', pattern: 'needle', rgArgs: ['-B', '1', '-A', '4'], options: { contextBefore: 1, contextAfter: 4 } },
  { name: 'contextAfter overrides context', pattern: 'needle', rgArgs: ['-C', '3', '-A', '0'], options: { context: 3, contextAfter: 0 } },
  // As rg's `-g`, a glob selects files past ignore and hidden rules (see 'a glob brings back the
  // ignored and hidden files it selects' below).
  { name: 'glob by extension', pattern: 'needle', rgArgs: ['-g', '*.ts'], options: { glob: '*.ts' } },
  { name: 'glob by extension, no ignore rules', pattern: 'needle', rgArgs: ['-g', '*.rs', '--no-ignore'], options: { glob: '*.rs', gitignore: false } },
  { name: 'glob anchored with /', pattern: 'needle', rgArgs: ['-g', 'web/**'], options: { glob: 'web/**' } },
  { name: 'glob anchored with /, no ignore rules', pattern: 'needle', rgArgs: ['-g', 'src/**', '--no-ignore'], options: { glob: 'src/**', gitignore: false } },
  { name: 'glob with braces', pattern: 'needle', rgArgs: ['-g', '*.{ts,tsx}'], options: { glob: '*.{ts,tsx}' } },
  { name: 'negated glob', pattern: 'needle', rgArgs: ['-g', '!*.md'], options: { glob: '!*.md' } },
  { name: 'negated directory glob', pattern: 'needle', rgArgs: ['-g', '!web*'], options: { glob: '!web*' } },
  { name: 'type rust', pattern: '(?i)needle', rgArgs: ['-t', 'rust'], options: { type: 'rust' } },
  { name: 'type ts', pattern: '(?i)needle', rgArgs: ['-t', 'ts'], options: { type: 'ts' } },
  { name: 'type js', pattern: '(?i)needle', rgArgs: ['-t', 'js'], options: { type: 'js' } },
  { name: 'type md', pattern: '(?i)needle', rgArgs: ['-t', 'md'], options: { type: 'md' } },
  { name: 'type with glob', pattern: 'needle', rgArgs: ['-t', 'ts', '-g', 'web/**'], options: { type: 'ts', glob: 'web/**' } },
  { name: 'hidden: false', pattern: 'needle', rgArgs: [], options: { hidden: false } },
  { name: 'hidden left out: dot-files skipped, as rg does by default', pattern: 'needle', rgArgs: [], options: { hidden: undefined } },
  { name: 'gitignore: false', pattern: 'needle', rgArgs: ['--no-ignore'], options: { gitignore: false } },
  {
    name: 'node_modules skipped by default',
    pattern: 'needle',
    rgArgs: ['-g', '!node_modules'],
    options: { includeNodeModules: undefined },
  },
  {
    name: 'empty pattern matches every line',
    pattern: '',
    rgArgs: ['-g', '*.txt', '--no-ignore'],
    options: { glob: '*.txt', gitignore: false },
  },
  { name: 'wordRegexp', pattern: 'needle', rgArgs: ['-w'], options: { wordRegexp: true } },
  { name: 'wordRegexp with ignoreCase', pattern: 'needles?', rgArgs: ['-w', '-i'], options: { wordRegexp: true, ignoreCase: true } },
  { name: 'wordRegexp with a non-word edge', pattern: String.raw`\$\{name`, rgArgs: ['-w'], options: { wordRegexp: true } },
  { name: 'invertMatch', pattern: 'needle', rgArgs: ['-v'], options: { invertMatch: true } },
  {
    name: 'invertMatch with context',
    pattern: 'needle',
    rgArgs: ['-v', '-C', '1', '-g', '*.txt', '--no-ignore'],
    options: { invertMatch: true, context: 1, glob: '*.txt', gitignore: false },
  },
  { name: 'invertMatch multiline', pattern: String.raw`needle\s+`, rgArgs: ['-v', '-U'], options: { invertMatch: true, multiline: true } },
  { name: 'invertMatch with wordRegexp', pattern: 'needle', rgArgs: ['-v', '-w'], options: { invertMatch: true, wordRegexp: true } },
  // Stray `{`/`}` are literal in grep (rg rejects them): compared with rg's fixed-string search.
  { name: 'template braces taken literally', pattern: 'let s = `${name}`', rgArgs: ['-F'] },
  { name: 'a lone opening brace', pattern: String.raw`function\(\) {`, rgArgs: ['-F'], rgPattern: 'function() {' },
  { name: 'a lone closing brace', pattern: '^}$', rgArgs: [], rgPattern: String.raw`^\}$` },
];

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
});

function writeFixture(): string {
  const dir = writeGrepFixture();
  dirs.push(dir);
  return dir;
}

/** The rg flags for a case: `--hidden` unless the case sets `hidden` other than `true`, never `.git`. */
function rgFlags(c: Case): string[] {
  const hidden = c.options !== undefined && 'hidden' in c.options ? c.options.hidden === true : true;
  return [...(hidden ? ['--hidden'] : []), '-g', '!.git', ...c.rgArgs];
}

describe.skipIf(rg === undefined)('grep matches rg', () => {
  let root = '';
  beforeAll(() => {
    root = writeFixture();
  });

  for (const c of CASES) {
    test(`content: ${c.name} (${JSON.stringify(c.pattern)})`, async () => {
      const options: GrepOptions = { pattern: c.pattern, path: root, includeNodeModules: true, hidden: true, ...c.options };
      const expected = rgJson(rg!, root, rgFlags(c), c.rgPattern ?? c.pattern);
      const result = await grep(options);
      expect(reportedLines(result.matches)).toEqual(expected.lines);
      expect(result.totalMatches).toBe(expected.matchRecords);
      expect(result.filesWithMatches).toBe(expected.searchesWithMatch);
      expect(result.filesSearched).toBe(expected.searches);
      expect(result.matches).toHaveLength(result.totalMatches);
      expect(result.limitReached).toBe(false);
      // Every case compares something.
      expect(expected.lines.length).toBeGreaterThan(0);
    });
  }

  test('binary files: matches before the NUL are kept, the files are counted', async () => {
    const expected = rgJson(rg!, path.join(root, 'bin'), ['--hidden'], 'needle');
    const result = await grep({ pattern: 'needle', path: path.join(root, 'bin') });
    expect(reportedLines(result.matches)).toEqual(expected.lines);
    expect(reportedLines(result.matches)).toEqual([
      { path: 'late.bin', lineNumber: 1, text: 'needle before the NUL', kind: 'match' },
    ]);
    expect(result.binaryFilesSkipped).toBe(2);
    expect(result.filesSearched).toBe(expected.searches);
  });

  test('a binary file named as the path is searched whole, as rg searches a named file', async () => {
    for (const name of ['early.bin', 'late.bin']) {
      const expected = rgJson(rg!, path.join(root, 'bin'), [], 'needle', name);
      const result = await grep({ pattern: 'needle', path: path.join(root, 'bin', name) });
      expect(reportedLines(result.matches)).toEqual(expected.lines);
      expect(result.matches.every((m) => m.path === name)).toBe(true);
    }
    const early = await grep({ pattern: 'needle', path: path.join(root, 'bin', 'early.bin') });
    expect(early.matches.map((m) => m.lineNumber)).toEqual([1, 2]);
  });

  test('a glob brings back the ignored and hidden files it selects, as rg -g does, cached or not', async () => {
    // A file the glob selects is searched where .gitignore (ignored.log), .rgignore (rg-only.txt) or
    // the hidden rule (.dot.log) would leave it out; not inside a directory they leave out.
    for (const [glob, hidden] of [['*.log', true], ['*.log', false], ['rg-only.txt', true], ['*.txt', false]] as const) {
      const rgArgs = [...(hidden ? ['--hidden'] : []), '-g', '!.git', '-g', glob];
      const expected = rgJson(rg!, root, rgArgs, 'needle').lines.map((l) => l.path);
      expect(expected.length).toBeGreaterThan(0);
      for (const cache of [false, true]) {
        const ours = await grep({ pattern: 'needle', path: root, glob, hidden, cache, includeNodeModules: true });
        const paths = [...new Set(ours.matches.map((m) => m.path))];
        expect({ glob, hidden, cache, paths }).toEqual({ glob, hidden, cache, paths: [...new Set(expected)] });
      }
    }
  });

  const ONLY_MATCHING_CASES: Array<{ pattern: string; rgArgs: string[]; options: Partial<GrepOptions> }> = [
    { pattern: 'needle', rgArgs: [], options: {} },
    { pattern: 'ne+dles?|NEEDLE|Needle', rgArgs: [], options: {} },
    { pattern: 'needle', rgArgs: ['-i', '-w'], options: { ignoreCase: true, wordRegexp: true } },
    { pattern: 'needle', rgArgs: ['-C', '1'], options: { context: 1 } },
    { pattern: 'e*', rgArgs: ['-g', '*.txt', '--no-ignore'], options: { glob: '*.txt', gitignore: false } },
    { pattern: String.raw`beta needle\ngamma|needle\s+\w+`, rgArgs: ['-U'], options: { multiline: true } },
    { pattern: 'needle', rgArgs: ['-v', '-g', '*.md'], options: { invertMatch: true, glob: '*.md' } },
  ];

  // rg --json reports lines, not matches, for -o: compared with what rg prints.
  for (const c of ONLY_MATCHING_CASES) {
    const label = `${JSON.stringify(c.pattern)} ${c.rgArgs.join(' ')}`;
    test(`onlyMatching matches rg -o: ${label}`, async () => {
      const flags = ['--hidden', '-g', '!.git', '-o', ...c.rgArgs];
      const options: GrepOptions = { pattern: c.pattern, path: root, includeNodeModules: true, hidden: true, onlyMatching: true, ...c.options };
      const printed = rgLines(rg!, root, [...flags, '-n', '--no-heading', '-H'], c.pattern).filter((l) => !isBinaryNotice(l));
      const result = await grep(options);
      expect(printedLikeRg(result.matches, (c.options.context ?? 0) > 0)).toEqual(printed);
      expect(result.matches).toHaveLength(result.totalMatches);
      expect(printed.length).toBeGreaterThan(0);
      const counted = await grep({ ...options, mode: 'count' });
      expect(counted.matches.map((m) => `${m.path}:${m.matchCount}`)).toEqual(rgLines(rg!, root, [...flags, '--count', '-H'], c.pattern));
    });
  }

  const MODE_CASES: Array<{ pattern: string; rgArgs: string[]; options: Partial<GrepOptions> }> = [
    { pattern: 'needle', rgArgs: [], options: {} },
    { pattern: 'Needle', rgArgs: [], options: {} },
    { pattern: 'needle', rgArgs: ['-i'], options: { ignoreCase: true } },
    { pattern: String.raw`needle\s+`, rgArgs: ['-U'], options: { multiline: true } },
    { pattern: String.raw`(?s)needle.*?line`, rgArgs: ['-U'], options: { multiline: true } },
    { pattern: 'needle', rgArgs: ['-g', '*.txt', '--no-ignore'], options: { glob: '*.txt', gitignore: false } },
    { pattern: '', rgArgs: ['-t', 'rust'], options: { type: 'rust' } },
    { pattern: 'needle', rgArgs: ['-w'], options: { wordRegexp: true } },
    { pattern: 'needle', rgArgs: ['-v'], options: { invertMatch: true } },
  ];

  for (const c of MODE_CASES) {
    const flags = ['--hidden', '-g', '!.git', ...c.rgArgs];
    const label = `${JSON.stringify(c.pattern)} ${c.rgArgs.join(' ')}`;

    test(`count mode matches rg --count: ${label}`, async () => {
      const result = await grep({ pattern: c.pattern, path: root, includeNodeModules: true, hidden: true, mode: 'count', ...c.options });
      const counts = result.matches.map((m) => `${m.path}:${m.matchCount}`);
      const expected = rgLines(rg!, root, [...flags, '--count'], c.pattern);
      expect(counts).toEqual(expected);
      expect(expected.length).toBeGreaterThan(0);
      expect(result.matches.every((m) => m.lineNumber === 0 && m.line === '')).toBe(true);
      expect(result.totalMatches).toBe(result.matches.reduce((sum, m) => sum + (m.matchCount ?? 0), 0));
      expect(result.filesWithMatches).toBe(result.matches.length);
    });

    test(`filesWithMatches mode matches rg -l: ${label}`, async () => {
      const result = await grep({
        pattern: c.pattern,
        path: root,
        includeNodeModules: true,
        hidden: true,
        mode: 'filesWithMatches',
        ...c.options,
      });
      const expected = rgLines(rg!, root, [...flags, '-l'], c.pattern);
      expect(result.matches.map((m) => m.path)).toEqual(expected);
      expect(result.totalMatches).toBe(expected.length);
      expect(result.filesWithMatches).toBe(expected.length);
    });
  }
});
