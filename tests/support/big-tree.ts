/**
 * Large trees for the cancellation and concurrency tests.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sharedFixturePath } from './fs.ts';

/** Files in the shared large tree. */
export const BIG_TREE_FILES = 200_000;

/** Entries a walk of the shared large tree returns: its files and 200 + 2 000 directories. */
export const BIG_TREE_ENTRIES = BIG_TREE_FILES + 200 + 2_000;

/**
 * Write `dirs` × `subdirs` × `files` empty files under `root`
 * (`dNNN/sN/fNNN.txt`). Returns the number of files.
 */
export function generateTree(root: string, dirs: number, subdirs: number, files: number): number {
  let count = 0;
  for (let d = 0; d < dirs; d++) {
    for (let s = 0; s < subdirs; s++) {
      const dir = path.join(root, `d${String(d).padStart(3, '0')}`, `s${s}`);
      fs.mkdirSync(dir, { recursive: true });
      for (let f = 0; f < files; f++) {
        fs.closeSync(fs.openSync(path.join(dir, `f${String(f).padStart(3, '0')}.txt`), 'w'));
        count++;
      }
    }
  }
  return count;
}

/**
 * A tree of `parts` copies of the large tree's shape (`pN/dNNN/sN/fNNN.txt`;
 * one part is the shared large tree itself, `dNNN/...`) in a per-user folder
 * under the system temp dir, generated once and reused while its stamp file
 * says it is complete. Returns its root and how many entries a walk of it
 * returns.
 */
export function ensureBigTree(parts = 1): { root: string; entries: number } {
  const root = sharedFixturePath(parts === 1 ? '200k' : `${parts}x200k`);
  const files = parts * BIG_TREE_FILES;
  const entries = parts === 1 ? BIG_TREE_ENTRIES : parts * (BIG_TREE_ENTRIES + 1);
  const stamp = `${root}.complete`;
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === String(files)) return { root, entries };
  fs.rmSync(root, { recursive: true, force: true });
  fs.mkdirSync(root, { recursive: true });
  let written = 0;
  for (let part = 0; part < parts; part++) {
    written += generateTree(parts === 1 ? root : path.join(root, `p${part}`), 200, 10, 100);
  }
  if (written !== files) throw new Error(`generated ${written} files, expected ${files}`);
  fs.writeFileSync(stamp, String(files));
  return { root, entries };
}
