/**
 * `natives grep` against ripgrep on the grep parity corpus, compared as
 * text: the CLI prints what `rg -n --no-heading -H` prints for the same
 * flags, with line numbers (`-n`, on unless `-N`), whole words (`-w`),
 * inverted lines (`-v`) and each match alone (`-o`).
 *
 * Both skip hidden files here (the CLI follows rg); the CLI skips
 * node_modules unless asked (the library's rule), so rg is told to as well.
 * rg's notice that it stopped at a binary file's NUL byte is not a result
 * and is left out: the CLI counts such files in `--stats` and `--json`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
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
];

describe.skipIf(rg === undefined)('natives grep prints what rg prints', () => {
  let root = '';
  beforeAll(() => {
    root = writeGrepFixture();
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

  test('--files lists what rg --files lists', () => {
    const expected = runRg(rg!, root, ['--files', '-g', '!node_modules'], '').toString('utf8');
    expect(natives(['grep', '--files', '.'], root).out).toBe(expected);
  });
});
