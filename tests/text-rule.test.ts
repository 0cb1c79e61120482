/**
 * One rule for what is text, for grep and for read and edit alike (rg's): a UTF-16 byte order mark
 * names the encoding and the content is transcoded; a NUL byte anywhere in the bytes searched or
 * read makes the content binary. Each file below is judged the same way by `grep` (searched as
 * text, or counted binary), by `readFile`'s `encoding`, by the `read` tool (shown, or refused as
 * BINARY) and by `edit` (changed, or refused with the file untouched).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { editTool, readTool } from '../packages/coding-agent/src/index.ts';
import { removeDir, tempDir } from './support/fs.ts';
import { grep, readFile } from './support/natives.ts';

const utf16 = (text: string, bigEndian: boolean): Buffer => {
  const le = Buffer.from(text, 'utf16le');
  if (bigEndian) le.swap16();
  return Buffer.concat([Buffer.from(bigEndian ? [0xfe, 0xff] : [0xff, 0xfe]), le]);
};
/** `needle` lines, then a NUL past `offset` bytes, then one more `needle` line. */
const lateNul = (offset: number): Buffer =>
  Buffer.concat([Buffer.from('needle line\n'.repeat(Math.ceil(offset / 12))), Buffer.from('tail\0needle after\n')]);

/** Each file, and what the rule says it holds. */
const FILES: Record<string, { bytes: Buffer; encoding: 'utf-8' | 'utf-16le' | 'utf-16be' | 'binary' }> = {
  'plain.txt': { bytes: Buffer.from('needle one\nneedle two\n'), encoding: 'utf-8' },
  'bom8.txt': { bytes: Buffer.from('\ufeffneedle one\n'), encoding: 'utf-8' },
  'le.txt': { bytes: utf16('needle été\nsecond needle\n', false), encoding: 'utf-16le' },
  'be.txt': { bytes: utf16('needle one\nneedle two\n', true), encoding: 'utf-16be' },
  'nul-10k.txt': { bytes: lateNul(10 * 1024), encoding: 'binary' },
  'nul-100k.txt': { bytes: lateNul(100 * 1024), encoding: 'binary' },
};

let dir = '';
beforeAll(() => {
  dir = tempDir('text-rule');
  for (const [name, { bytes }] of Object.entries(FILES)) fs.writeFileSync(path.join(dir, name), bytes);
});
afterAll(() => removeDir(dir));

describe('grep, readFile, read and edit judge every file alike', () => {
  test('readFile names what grep searched as text or counted binary', async () => {
    const searched = await grep({ pattern: 'needle', path: dir });
    const binary = Object.entries(FILES).filter(([, f]) => f.encoding === 'binary');
    expect(searched.binaryFilesSkipped).toBe(binary.length);
    for (const [name, { encoding }] of Object.entries(FILES)) {
      const read = await readFile(name, { cwd: dir });
      expect({ name, encoding: read.encoding }).toEqual({ name, encoding });
      const lines = searched.matches.filter((m) => m.path === name).map((m) => m.line);
      // A binary file's search stops at its NUL; a text file's lines are all found.
      if (encoding === 'binary') expect(lines.some((l) => l.includes('after'))).toBe(false);
      else expect(lines.length).toBeGreaterThan(0);
    }
  });

  test('read shows UTF-16 text transcoded, as grep prints it, and refuses a NUL past 8 KiB as binary', async () => {
    const searched = await grep({ pattern: 'needle', path: dir });
    for (const [name, { encoding }] of Object.entries(FILES)) {
      const result = await readTool.execute({ path: name }, { cwd: dir });
      if (encoding === 'binary') {
        expect({ name, code: result.details.code }).toEqual({ name, code: 'BINARY' });
        continue;
      }
      expect({ name, isError: result.isError }).toEqual({ name, isError: undefined });
      // Compared without a UTF-8 byte order mark, which grep leaves out of line 1.
      const shown = result.text.split('\n').map((line) => line.replace(/^\s*\d+:[0-9a-f]+\| \ufeff?/, ''));
      const found = searched.matches.filter((m) => m.path === name);
      expect(found.length).toBeGreaterThan(0);
      for (const match of found) expect(shown).toContain(match.line);
    }
  });

  test('edit refuses a binary file and a UTF-16 file, changing neither', async () => {
    for (const [name, { bytes, encoding }] of Object.entries(FILES)) {
      if (encoding === 'utf-8') continue;
      const result = await editTool.execute({ path: name, oldText: 'needle', newText: 'pin' }, { cwd: dir });
      expect({ name, code: result.details.code }).toEqual({ name, code: encoding === 'binary' ? 'BINARY' : 'ENCODING' });
      expect(fs.readFileSync(path.join(dir, name)).equals(bytes)).toBe(true);
    }
  });
});
