/**
 * The grep parity corpus: one git repository holding every kind of content
 * and selection rule that grep is compared with ripgrep on, through the
 * package (grep-parity.test.ts) and through the CLI (grep-cli.test.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitInit, tempDir } from './fs.ts';

/** Numbered lines, `needle` on some of them: context windows that touch, overlap and stand apart. */
const contextText = Array.from({ length: 40 }, (_, i) => {
  const n = i + 1;
  return [3, 5, 12, 20, 21, 30, 39].includes(n) ? `line ${n} needle` : `line ${n}`;
}).join('\n');

const lateBinary = Buffer.concat([
  Buffer.from('needle before the NUL\n'),
  Buffer.from('filler line without it\n'.repeat(4_000)),
  Buffer.from('needle\0after\nneedle end\n'),
]);

/** The fixture: every kind of content and selection rule the comparison must cover. */
export const FILES: Record<string, string | Buffer> = {
  '.gitignore': '*.log\nbuild/\n/generated.txt\n',
  '.ignore': 'scratch/\n',
  '.rgignore': 'rg-only.txt\n',
  'rg-only.txt': 'needle kept out by .rgignore\n',
  '.dot.log': 'needle in a hidden, ignored log\n',
  'src/main.rs': 'fn main() {\n    let Needle = 1;\n    println!("needle");\n}\n',
  'src/lib.rs':
    'pub struct A {\n    field: u8,\n}\n// start\nmiddle needle\n// end\nlet s = `${name}`;\nx = a.b(c)\nfunction() {\n}\n',
  'src/nested/.gitignore': 'secret.rs\n',
  'src/nested/secret.rs': 'needle kept out by a nested .gitignore\n',
  'src/nested/open.rs': 'needle in a nested directory\n',
  'web/app.ts': "const needle = 'NEEDLE';\n",
  'web/view.tsx': 'export const Needle = () => null;\n',
  'web-old/legacy.js': 'var needle = 1; // NeEdLe\n',
  'web.d/types.d.ts': 'declare const needle: string;\n',
  'docs/guide.md': '# Needle\n\nFind the needle, or needles.\n\nStraße STRASSE straße\n',
  'docs/unicode.txt': 'ÉTÉ needle été\nΣΊΣΥΦΟΣ σίσυφος\n日本語 needle テキスト\n',
  '.hidden/secret.txt': 'needle hidden\n',
  '.config.json': '{ "needle": true }\n',
  'ignored.log': 'needle in a log\n',
  'generated.txt': 'needle generated\n',
  'build/out.txt': 'needle built\n',
  'scratch/notes.txt': 'needle in scratch\n',
  'node_modules/pkg/index.js': "module.exports = 'needle';\n",
  'bin/early.bin': Buffer.from('needle\0binary\nneedle again\n'),
  'bin/late.bin': lateBinary,
  'crlf.txt': 'needle one\r\nneedle two\r\nthree\r\nneedle four\r\n',
  'latin1.txt': Buffer.from([
    ...Buffer.from('caf'),
    0xe9,
    ...Buffer.from(' needle\n'),
    0xff,
    0xfe,
    ...Buffer.from(' other\nneedle '),
    0xe9,
    ...Buffer.from('t'),
    0xe9,
    ...Buffer.from('\n'),
  ]),
  'empty.txt': '',
  'no-newline.txt': 'last line needle without newline',
  'context.txt': `${contextText}\n`,
  'multi.txt': 'alpha\nbeta needle\ngamma\n\nalpha\nbeta\ngamma needle\n',
};

/** Write the corpus into a fresh git repository; the caller removes it. */
export function writeGrepFixture(): string {
  const dir = tempDir('grep-parity');
  gitInit(dir);
  for (const [rel, contents] of Object.entries(FILES)) {
    const target = path.join(dir, rel);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, contents);
  }
  return dir;
}
