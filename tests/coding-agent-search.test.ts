/**
 * The discovery side of the agent tools: `grep` and `find` called directly
 * (their text, paging, filters and every refusal with its code), and `@`
 * mention parsing and resolution. Freshness of the cached mention profile
 * after a write is tested in coding-agent-tools-freshness.test.ts.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  GREP_MAX_CONTEXT,
  GREP_MAX_FILE_BYTES,
  GREP_MAX_OUTPUT_BYTES,
  findTool,
  grepTool,
  parseFileMentions,
  resolveFileMentions,
  type ToolContext,
} from '../packages/coding-agent/src/index.ts';
import { expectError, expectOk } from './support/agent.ts';
import { runJson } from './support/child.ts';
import { gitInit, removeDir, setMtime, tempDir, writeTree } from './support/fs.ts';

let dir = '';
let ctx: ToolContext;

beforeEach(() => {
  dir = tempDir('agent-search');
  ctx = { cwd: dir };
});
afterEach(() => removeDir(dir));


describe('grep', () => {
  beforeEach(() => {
    writeTree(dir, {
      'src/a.ts': 'one\nneedle here\nthree\nfour\nneedle again\nsix\n',
      'src/b.js': 'const needle = 1;\n',
      'docs/c.md': 'Needle in docs\na.b and axb\n',
      '.hidden/h.ts': 'needle hidden\n',
    });
  });

  test('answers path:line:text with paths relative to cwd, in path order', async () => {
    const r = await grepTool.execute({ pattern: 'needle' }, ctx);
    expect(expectOk(r)).toBe(['.hidden/h.ts:1:needle hidden', 'src/a.ts:2:needle here', 'src/a.ts:5:needle again', 'src/b.js:1:const needle = 1;'].join('\n'));
    expect(r.details).toMatchObject({ results: 4, totalMatches: 4, filesWithMatches: 3, limitReached: false });
    // A subdirectory or a single file as path: paths stay relative to cwd.
    expect(expectOk(await grepTool.execute({ pattern: 'needle', path: 'src' }, ctx)).split('\n')[0]).toBe('src/a.ts:2:needle here');
    expect(expectOk(await grepTool.execute({ pattern: 'again', path: 'src/a.ts' }, ctx))).toBe('src/a.ts:5:needle again');
  });

  test('context lines use `-`, groups apart are separated by `--`, overlapping context is shown once', async () => {
    const text = expectOk(await grepTool.execute({ pattern: 'needle', path: 'src', context: 1 }, ctx));
    // a.ts's two groups (1-3, 4-6) touch, so they run on; the next file is apart.
    expect(text).toBe(
      [
        'src/a.ts-1-one',
        'src/a.ts:2:needle here',
        'src/a.ts-3-three',
        'src/a.ts-4-four',
        'src/a.ts:5:needle again',
        'src/a.ts-6-six',
        '--',
        'src/b.js:1:const needle = 1;',
      ].join('\n'),
    );
    const apart = expectOk(await grepTool.execute({ pattern: 'one|six', path: 'src/a.ts', context: 1 }, ctx));
    expect(apart.split('\n')).toEqual(['src/a.ts:1:one', 'src/a.ts-2-needle here', '--', 'src/a.ts-5-needle again', 'src/a.ts:6:six']);
    const overlapping = expectOk(await grepTool.execute({ pattern: 'needle|three', path: 'src/a.ts', context: 2 }, ctx));
    expect(overlapping.split('\n')).toEqual([
      'src/a.ts-1-one',
      'src/a.ts:2:needle here',
      'src/a.ts:3:three',
      'src/a.ts-4-four',
      'src/a.ts:5:needle again',
      'src/a.ts-6-six',
    ]);
  });

  test('maxCount cuts the answer and names the offset that continues it', async () => {
    const first = await grepTool.execute({ pattern: 'needle', maxCount: 2 }, ctx);
    const text = expectOk(first);
    expect(text.split('\n').slice(0, 2)).toEqual(['.hidden/h.ts:1:needle hidden', 'src/a.ts:2:needle here']);
    expect(text).toContain('offset=2');
    expect(first.details).toMatchObject({ results: 2, limitReached: true, nextOffset: 2 });
    const rest = await grepTool.execute({ pattern: 'needle', maxCount: 2, offset: 2 }, ctx);
    expect(expectOk(rest).split('\n')).toEqual(['src/a.ts:5:needle again', 'src/b.js:1:const needle = 1;', '[Showing matching lines 3-4 of 4.]']);
    expect(expectOk(await grepTool.execute({ pattern: 'needle', offset: 10 }, ctx))).toBe('No results at offset 10: there are 4 matching lines.');
  });

  test('the answer is bounded whatever the context: cut at a line, saying where and which offset continues', async () => {
    // 200,000 lines, 20 of them matching, 10,000 lines apart.
    const lines = Array.from({ length: 200_000 }, (_, i) => (i % 10_000 === 5_000 ? `needle ${i}` : `line ${i}`));
    writeTree(dir, { 'big.txt': `${lines.join('\n')}\n` });
    const r = await grepTool.execute({ pattern: 'needle', path: 'big.txt', context: GREP_MAX_CONTEXT }, ctx);
    const text = expectOk(r);
    const note = text.split('\n').at(-1)!;
    expect(Buffer.byteLength(text) - Buffer.byteLength(note)).toBeLessThanOrEqual(GREP_MAX_OUTPUT_BYTES);
    expect(note).toMatch(/^\[Output cut at 50 KiB after \d+ lines \(1 results shown\)\. Continue with offset=1, .*lower context\.\]$/);
    expect(text).toContain('big.txt:5001:needle 5000');
    expect(r.details).toMatchObject({ outputCut: true, results: 1, nextOffset: 1 });
    // Continuing from the offset repeats nothing and skips nothing.
    const rest = await grepTool.execute({ pattern: 'needle', path: 'big.txt', offset: 1, maxCount: 1 }, ctx);
    expect(expectOk(rest).split('\n')[0]).toBe('big.txt:15001:needle 15000');
    // More context than the tool shows is refused, naming the argument.
    expect(expectError(await grepTool.execute({ pattern: 'needle', context: 1_000_000 }, ctx), 'INVALID_ARGS')).toContain('context');
  });

  test('modes, ignoreCase, literal, glob and type', async () => {
    expect(expectOk(await grepTool.execute({ pattern: 'needle', mode: 'filesWithMatches' }, ctx))).toBe('.hidden/h.ts\nsrc/a.ts\nsrc/b.js');
    expect(expectOk(await grepTool.execute({ pattern: 'needle', mode: 'count', path: 'src' }, ctx))).toBe('src/a.ts:2\nsrc/b.js:1');
    expect(expectOk(await grepTool.execute({ pattern: 'NEEDLE', ignoreCase: true, path: 'docs' }, ctx))).toBe('docs/c.md:1:Needle in docs');
    expect(expectOk(await grepTool.execute({ pattern: 'a.b', path: 'docs' }, ctx))).toBe('docs/c.md:2:a.b and axb');
    expect((await grepTool.execute({ pattern: 'axb|a\\.b', path: 'docs' }, ctx)).details.results).toBe(1);
    expect(expectOk(await grepTool.execute({ pattern: 'a.b and', literal: true }, ctx))).toBe('docs/c.md:2:a.b and axb');
    expect(expectOk(await grepTool.execute({ pattern: 'needle', glob: '*.js' }, ctx))).toBe('src/b.js:1:const needle = 1;');
    expect(expectOk(await grepTool.execute({ pattern: 'needle', type: 'ts', path: 'src' }, ctx))).toBe('src/a.ts:2:needle here\nsrc/a.ts:5:needle again');
    expect(expectOk(await grepTool.execute({ pattern: 'here\\nthree', multiline: true }, ctx))).toBe('src/a.ts:2:needle here\nsrc/a.ts:3:three');
  });

  test('no match says so; gitignored files are not searched; binary and too-large files are counted', async () => {
    expect(expectOk(await grepTool.execute({ pattern: 'absent' }, ctx))).toBe('No matches for "absent" in . (4 files searched).');
    gitInit(dir);
    writeTree(dir, { '.gitignore': 'build/\n', 'build/out.ts': 'needle built\n' });
    fs.writeFileSync(path.join(dir, 'blob.bin'), Buffer.from('needle\0binary'));
    fs.writeFileSync(path.join(dir, 'big.txt'), 'needle\n'.padEnd(GREP_MAX_FILE_BYTES + 10, 'x'));
    const r = await grepTool.execute({ pattern: 'needle', mode: 'filesWithMatches' }, ctx);
    const text = expectOk(r);
    expect(text).not.toContain('build/');
    expect(text).not.toContain('blob.bin');
    expect(text.split('\n').at(-1)).toBe('[Not searched: 1 binary file, 1 file over 4 MiB.]');
    expect(r.details).toMatchObject({ binaryFilesSkipped: 1, filesSkippedTooLarge: 1 });
  });

  test('a bad regex is INVALID_PATTERN naming the pattern and suggesting literal: true; literal then works', async () => {
    writeTree(dir, { 'call.ts': 'foo(bar)\n' });
    const text = expectError(await grepTool.execute({ pattern: 'foo(' }, ctx), 'INVALID_PATTERN');
    expect(text).toContain('"foo("');
    expect(text).toContain('literal: true');
    expect(expectOk(await grepTool.execute({ pattern: 'foo(', literal: true }, ctx))).toBe('call.ts:1:foo(bar)');
    // EINVAL for another argument is not blamed on a valid pattern.
    expect(expectError(await grepTool.execute({ pattern: 'foo', type: 'no-such-type' }, ctx), 'INVALID_ARGS')).toContain('no-such-type');
    expect(expectError(await grepTool.execute({ pattern: 'foo', glob: 'a{[' }, ctx), 'INVALID_ARGS')).toContain('a{[');
  });

  test('a missing path is ENOENT; bad arguments are INVALID_ARGS; an aborted signal is ABORTED', async () => {
    expect(expectError(await grepTool.execute({ pattern: 'x', path: 'src/nope.ts' }, ctx), 'ENOENT')).toContain('src/nope.ts does not exist');
    expectError(await grepTool.execute({ pattern: '' }, ctx), 'INVALID_ARGS');
    expectError(await grepTool.execute({ pattern: 'x', mode: 'lines' as never }, ctx), 'INVALID_ARGS');
    expectError(await grepTool.execute({ pattern: 'x', context: -1 }, ctx), 'INVALID_ARGS');
    expectError(await grepTool.execute({ pattern: 'x', ignoreCase: 'yes' as never }, ctx), 'INVALID_ARGS');
    const aborted = new AbortController();
    aborted.abort();
    expectError(await grepTool.execute({ pattern: 'x' }, { cwd: dir, signal: aborted.signal }), 'ABORTED');
  });
});

describe('find', () => {
  beforeEach(() => {
    writeTree(dir, { 'old.ts': '', 'src/mid.ts': '', 'src/new.ts': '', 'src/readme.md': '', 'src/dir.ts/inner.txt': '' });
    setMtime(path.join(dir, 'old.ts'), 1_000_000);
    setMtime(path.join(dir, 'src/mid.ts'), 2_000_000);
    setMtime(path.join(dir, 'src/new.ts'), 3_000_000);
  });

  test('lists files only, newest first, relative to cwd', async () => {
    const r = await findTool.execute({ pattern: '*.ts' }, ctx);
    expect(expectOk(r)).toBe('src/new.ts\nsrc/mid.ts\nold.ts');
    expect(r.details).toMatchObject({ totalMatches: 3, limitReached: false, ignoredIncluded: false });
    expect(expectOk(await findTool.execute({ pattern: '*.ts', path: 'src' }, ctx))).toBe('src/new.ts\nsrc/mid.ts');
    expect(expectOk(await findTool.execute({ pattern: 'src/*' }, ctx)).split('\n').sort()).toEqual(['src/mid.ts', 'src/new.ts', 'src/readme.md']);
  });

  test('limit keeps the newest and says how many matched', async () => {
    const r = await findTool.execute({ pattern: '*.ts', limit: 2 }, ctx);
    expect(expectOk(r)).toBe('src/new.ts\nsrc/mid.ts\n[Showing the 2 newest of 3 matching files; continue with offset=2, raise limit or narrow the pattern.]');
    expect(r.details).toMatchObject({ totalMatches: 3, limitReached: true });
  });

  test('an empty answer is retried once without .gitignore, and the text says so', async () => {
    gitInit(dir);
    writeTree(dir, { '.gitignore': 'dist/\n', 'dist/bundle.js': '' });
    const r = await findTool.execute({ pattern: '*.js' }, ctx);
    const text = expectOk(r);
    expect(text.split('\n')).toEqual(['[No match among files not ignored; searched again including files ignored by .gitignore/.ignore:]', 'dist/bundle.js']);
    expect(r.details).toMatchObject({ ignoredIncluded: true, files: ['dist/bundle.js'] });
    expect(expectOk(await findTool.execute({ pattern: '*.py' }, ctx))).toStartWith('No files match "*.py" under ., ignored files included.');
  });

  test('a missing path is ENOENT, a file is ENOTDIR, a malformed pattern is INVALID_PATTERN', async () => {
    expect(expectError(await findTool.execute({ pattern: '*.ts', path: 'nope' }, ctx), 'ENOENT')).toContain('nope does not exist');
    expectError(await findTool.execute({ pattern: '*.ts', path: 'old.ts' }, ctx), 'ENOTDIR');
    expect(expectError(await findTool.execute({ pattern: 'a{[' }, ctx), 'INVALID_PATTERN')).toContain('"a{["');
    expectError(await findTool.execute({ pattern: '*.ts', limit: 0 }, ctx), 'INVALID_ARGS');
  });
});

describe('file mentions: parsing', () => {
  test('@ at the start or after whitespace/punctuation; trailing punctuation stripped; e-mail is not a mention', () => {
    const text = 'see @src/a.ts, and (@b.md) mail me@host.org or @"docs/x y.md" then @pages/[id].tsx. [@c.ts] @@x @. @ `@d/`';
    expect(parseFileMentions(text).map((m) => m.mention)).toEqual(['src/a.ts', 'b.md', 'docs/x y.md', 'pages/[id].tsx', 'c.ts', 'd/']);
    const [first] = parseFileMentions('x @a.ts! y @a.ts');
    expect(first).toEqual({ mention: 'a.ts', start: 2, end: 7 });
    expect(parseFileMentions('x @a.ts y @a.ts')).toHaveLength(1);
    expect(parseFileMentions('@start.ts:12')[0]!.mention).toBe('start.ts:12');
  });
});

describe('file mentions: resolution', () => {
  beforeEach(() => {
    writeTree(dir, {
      'src/server/http-handler.ts': '',
      'src/index.ts': '',
      'lib/index.ts': '',
      'docs/guide.md': '',
      '.config/settings.json': '',
      'node_modules/pkg/entry.js': '',
    });
  });

  const resolve = async (text: string) => (await resolveFileMentions(text, { cwd: dir })).map(({ mention, resolved, how, kind }) => ({ mention, resolved, how, kind }));

  test('exact paths win, files and directories', async () => {
    expect(await resolve('@src/index.ts @docs/ @docs')).toEqual([
      { mention: 'src/index.ts', resolved: 'src/index.ts', how: 'exact', kind: 'file' },
      { mention: 'docs/', resolved: 'docs/', how: 'exact', kind: 'dir' },
      { mention: 'docs', resolved: 'docs/', how: 'exact', kind: 'dir' },
    ]);
  });

  test('a unique name or path tail resolves by glob, dot-dirs and node_modules included', async () => {
    expect(await resolve('@guide.md @server/http-handler.ts @settings.json @entry.js @server/')).toEqual([
      { mention: 'guide.md', resolved: 'docs/guide.md', how: 'glob', kind: 'file' },
      { mention: 'server/http-handler.ts', resolved: 'src/server/http-handler.ts', how: 'glob', kind: 'file' },
      { mention: 'settings.json', resolved: '.config/settings.json', how: 'glob', kind: 'file' },
      { mention: 'entry.js', resolved: 'node_modules/pkg/entry.js', how: 'glob', kind: 'file' },
      { mention: 'server/', resolved: 'src/server/', how: 'glob', kind: 'dir' },
    ]);
  });

  test('an ambiguous glob resolves nothing and lists the candidates', async () => {
    const [m] = await resolveFileMentions('@index.ts', { cwd: dir });
    expect(m).toMatchObject({ resolved: null, how: 'none', absolutePath: null });
    expect(m!.candidates.sort()).toEqual(['lib/index.ts', 'src/index.ts']);
  });

  test('an inexact mention resolves by fuzzy match when one is clearly best', async () => {
    const [m] = await resolveFileMentions('@httphandl', { cwd: dir });
    expect(m).toMatchObject({ resolved: 'src/server/http-handler.ts', how: 'fuzzy', kind: 'file', absolutePath: path.join(dir, 'src/server/http-handler.ts') });
    expect(m!.candidates[0]).toBe('src/server/http-handler.ts');
  });

  test('an unresolvable mention is how: none with no candidates; absolute and `..` mentions only resolve exactly', async () => {
    expect(await resolveFileMentions('@zzqqxx.rs', { cwd: dir })).toEqual([
      { mention: 'zzqqxx.rs', start: 0, end: 10, resolved: null, absolutePath: null, kind: null, how: 'none', candidates: [] },
    ]);
    const abs = path.join(dir, 'docs/guide.md');
    expect(await resolve(`@${abs} @../nowhere.md @/no/such/file.md`)).toEqual([
      { mention: abs, resolved: 'docs/guide.md', how: 'exact', kind: 'file' },
      { mention: '../nowhere.md', resolved: null, how: 'none', kind: null },
      { mention: '/no/such/file.md', resolved: null, how: 'none', kind: null },
    ]);
  });

  test('gitignored files are found only by an exact mention', async () => {
    gitInit(dir);
    writeTree(dir, { '.gitignore': 'out/\n', 'out/report.txt': '' });
    expect(await resolve('@report.txt @out/report.txt')).toEqual([
      { mention: 'report.txt', resolved: null, how: 'none', kind: null },
      { mention: 'out/report.txt', resolved: 'out/report.txt', how: 'exact', kind: 'file' },
    ]);
  });
});

describe('grep and the watched scan cache', () => {
  const run = (env: Record<string, string>) => {
    writeTree(dir, { 'src/a.ts': 'const needle = 1;\n', 'src/b.ts': 'export const before = 2;\n', 'docs/c.md': 'no match here\n' });
    return runJson<{ steps: Record<string, { text: string; source: string }>; verified: number; skipped: number }>('agent-grep-watched.ts', [dir], {
      env: { FS_SCAN_CACHE_TTL_MS: '600000', ...env },
    });
  };

  test('with watching on, answers come from the watched list and index, and every edit by another process is in the next one', async () => {
    const { steps, verified, skipped } = await run({ FS_SCAN_CACHE_WATCH: '1' });
    for (const step of Object.values(steps)) expect(step.source).toBe('watched');
    expect(steps.appended!.text).toBe('src/a.ts:2:needle appended');
    expect(steps.rewritten!.text).toBe('src/b.ts:1:swappedconst before = 2;');
    expect(steps.created!.text).toBe('src/new.ts:1:needle new');
    expect(steps.moved!.text).toBe('src/moved.ts:1:swappedconst before = 2;');
    expect(skipped).toBeGreaterThan(0);
    expect(verified).toBe(0);
  });

  test('without watching it walks fresh every time', async () => {
    const { steps } = await run({});
    for (const step of Object.values(steps)) expect(step.source).toBe('walked');
    expect(steps.rewritten!.text).toBe('src/b.ts:1:swappedconst before = 2;');
    expect(steps.moved!.text).toBe('src/moved.ts:1:swappedconst before = 2;');
  });
});
