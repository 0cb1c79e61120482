/**
 * `natives grep` against ripgrep on the grep parity corpus, compared as
 * text: the CLI prints what `rg -n --no-heading -H` prints for the same
 * flags, with line numbers (`-n`, on unless `-N`), whole words (`-w`),
 * inverted lines (`-v`) and each match alone (`-o`).
 *
 * Both skip hidden files here (the CLI follows rg); the CLI skips
 * node_modules unless asked (the library's rule), so rg is told to as well.
 * rg's notice that it stopped at a binary file's NUL byte is not a result
 * and is left out: the CLI counts such files in `--stats`.
 *
 * `-g`, `-t` and `-T` repeat as in rg, `-m` caps each file as rg's does
 * (`--max-results` caps the whole), and `--json` is rg's JSON Lines, equal
 * to `rg --json` byte for byte once the elapsed times are left out. The
 * corpus gets a file whose name is not UTF-8 here, so paths go as `bytes`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { natives } from './support/cli.ts';
import { removeDir } from './support/fs.ts';
import { writeGrepFixture } from './support/grep-fixture.ts';
import { findRg, isBinaryNotice, runRg } from './support/rg.ts';

const rg = findRg();

/** A pattern and the flags both tools get. */
const CASES: Array<{ pattern: string; flags: string[] }> = [
  { pattern: 'needle', flags: ['-n'] },
  { pattern: String.raw`ne+dles?\b`, flags: ['-n', '-i'] },
  { pattern: 'needle', flags: ['-n', '-C', '1'] },
  { pattern: 'needle', flags: ['-w'] },
  { pattern: 'needle', flags: [] },
  { pattern: 'needles?', flags: ['-w', '-i', '-n'] },
  { pattern: 'needle', flags: ['-v'] },
  { pattern: 'needle', flags: ['-v', '-n', '-C', '1', '-g', '*.md'] },
  { pattern: 'needle', flags: ['-o'] },
  { pattern: String.raw`n\w+|NEEDLE`, flags: ['-o', '-n'] },
  { pattern: 'e*', flags: ['-o', '-n', '-g', '*.txt', '--no-ignore'] },
  // A file -g selects is searched where ignore files (.gitignore, .rgignore) or the hidden rule
  // would leave it out, but not inside a directory they leave out (build/, .hidden/).
  { pattern: 'needle', flags: ['-g', '*.log'] },
  { pattern: 'needle', flags: ['-g', '*.txt'] },
  { pattern: 'needle', flags: ['-g', 'rg-only.txt', '-l'] },
  { pattern: String.raw`beta needle\ngamma`, flags: ['-o', '-n', '-U'] },
  { pattern: 'needle', flags: ['-n', '-w', '-v', '-o'] },
  { pattern: 'needle', flags: ['-o', '-c'] },
  { pattern: 'needle', flags: ['-v', '-l'] },
  { pattern: 'needle', flags: ['-N'] },
  // Repeated, as in rg: any -g selects (a later `!` excludes), any -t selects, -T excludes.
  { pattern: 'needle', flags: ['-g', '*.md', '-g', '*.rs'] },
  { pattern: 'needle', flags: ['-g', 'src/**', '-g', '!*.rs', '-g', '*.ts'] },
  { pattern: 'needle', flags: ['-g', '!*.txt', '-g', '!*.rs', '-l'] },
  { pattern: 'needle', flags: ['-t', 'rust', '-t', 'md'] },
  { pattern: 'needle', flags: ['-T', 'rust', '-T', 'txt', '-l'] },
  { pattern: 'needle', flags: ['-t', 'txt', '-t', 'js', '-T', 'js'] },
  // -m caps each file, as rg's: with context, the last match's after-context still prints.
  { pattern: 'needle', flags: ['-m', '1'] },
  { pattern: 'needle', flags: ['-m', '2', '-A', '1'] },
  { pattern: 'needle', flags: ['-m', '1', '-c'] },
  { pattern: 'needle', flags: ['-m', '1', '-v', '-g', '*.md'] },
];

/** Flags `--json` is compared with `rg --json` under. */
const JSON_CASES: Array<{ pattern: string; flags: string[] }> = [
  { pattern: 'needle', flags: [] },
  { pattern: 'needle', flags: ['-C', '1'] },
  { pattern: 'needle', flags: ['-v', '-g', '*.md'] },
  { pattern: 'needles?', flags: ['-w', '-i'] },
  { pattern: String.raw`beta needle\ngamma`, flags: ['-U'] },
  { pattern: 'e*', flags: ['-g', '*.txt', '-g', '*.md'] },
  // Binary files: matches before the NUL, and the offset where the search stopped.
  { pattern: 'needle', flags: ['-g', '*.bin'] },
  { pattern: 'needle', flags: ['-m', '1', '-A', '2', '-t', 'txt', '-t', 'rust'] },
  { pattern: 'nothing matches this', flags: [] },
];

/**
 * JSON Lines as printed, each elapsed time (the only fields that cannot be equal) cut out of the
 * text, every other byte kept.
 */
function withoutElapsed(out: string): string[] {
  return out
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.replace(/"elapsed(_total)?":\{"[a-z]+":[^{}]*\},?/g, ''));
}

describe.skipIf(rg === undefined)('natives grep prints what rg prints', () => {
  let root = '';
  beforeAll(() => {
    root = writeGrepFixture();
    // `caf\xe9-name.txt`: a Latin-1 name, not UTF-8.
    const latin1Name = Buffer.concat([Buffer.from(`${root}/docs/caf`), Buffer.from([0xe9]), Buffer.from('-name.txt')]);
    fs.writeFileSync(latin1Name, 'needle in a file whose name is not UTF-8\n');
  });
  afterAll(() => removeDir(root));

  for (const c of CASES) {
    test(`${c.flags.join(' ')} ${JSON.stringify(c.pattern)}`, () => {
      // The CLI numbers lines unless -N; rg only on a terminal unless -n.
      const numbered = c.flags.includes('-N') ? [] : ['-n'];
      const rgFlags = ['--no-heading', '-H', '-g', '!node_modules', ...numbered, ...c.flags];
      const expected = runRg(rg!, root, rgFlags, c.pattern)
        .toString('utf8')
        .split('\n')
        .filter((line) => !isBinaryNotice(line))
        .join('\n');
      const { code, out, err } = natives(['grep', ...c.flags, '--', c.pattern, '.'], root);
      expect(err).toBe('');
      expect(out).toBe(expected);
      expect(code).toBe(0);
    });
  }

  for (const c of JSON_CASES) {
    test(`--json ${c.flags.join(' ')} ${JSON.stringify(c.pattern)} is rg --json`, () => {
      const rgOut = runRg(rg!, root, ['--json', '-g', '!node_modules', ...c.flags], c.pattern).toString('utf8');
      const { code, out, err } = natives(['grep', '--json', ...c.flags, '--', c.pattern, '.'], root);
      expect(err).toBe('');
      expect(withoutElapsed(out)).toEqual(withoutElapsed(rgOut));
      expect(code).toBe(rgOut.includes('"type":"match"') ? 0 : 1);
    });
  }

  test('--json names a non-UTF-8 path as bytes, as rg does', () => {
    const { out } = natives(['grep', '--json', 'whose name', '.'], root);
    const begin = JSON.parse(out.split('\n')[0]);
    expect(begin.type).toBe('begin');
    expect(Buffer.from(begin.data.path.bytes, 'base64')).toEqual(
      Buffer.concat([Buffer.from('./docs/caf'), Buffer.from([0xe9]), Buffer.from('-name.txt')]),
    );
  });

  test('--json on one named file names it as typed, as rg does', () => {
    const target = path.join('src', 'lib.rs');
    const rgOut = runRg(rg!, root, ['--json'], 'needle', target).toString('utf8');
    const { out } = natives(['grep', '--json', 'needle', target], root);
    expect(withoutElapsed(out)).toEqual(withoutElapsed(rgOut));
  });

  test('--max-results caps the whole, where -m caps each file', () => {
    const all = runRg(rg!, root, ['--no-heading', '-H', '-n', '-g', '!node_modules'], 'needle')
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '' && !isBinaryNotice(line));
    const { code, out } = natives(['grep', '--max-results', '3', 'needle', '.'], root);
    expect(out).toBe(`${all.slice(0, 3).join('\n')}\n`);
    expect(code).toBe(0);
    expect(natives(['grep', '-m', '0', 'needle', '.'], root)).toEqual({ code: 1, out: '', err: '' });
    expect(natives(['grep', '-m', '0', '--json', 'needle', '.'], root).out).toBe('');
  });

  test('--files lists what rg --files lists', () => {
    const expected = runRg(rg!, root, ['--files', '-g', '!node_modules'], '').toString('utf8');
    expect(natives(['grep', '--files', '.'], root).out).toBe(expected);
  });
});
