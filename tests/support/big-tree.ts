/**
 * Large trees for the cancellation and concurrency tests.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sharedFixturePath } from './fs.ts';

/** Files in the shared large tree. */
export const BIG_TREE_FILES = 200_000;

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
 * The shared 200 000-file tree in a per-user folder under the system temp dir, generated
 * once and reused while its stamp file says it is complete.
 */
export function ensureBigTree(): string {
  const root = sharedFixturePath('200k');
  const stamp = `${root}.complete`;
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === String(BIG_TREE_FILES)) return root;
  fs.rmSync(root, { recursive: true, force: true });
  fs.mkdirSync(root, { recursive: true });
  const written = generateTree(root, 200, 10, 100);
  if (written !== BIG_TREE_FILES) throw new Error(`generated ${written} files, expected ${BIG_TREE_FILES}`);
  fs.writeFileSync(stamp, String(BIG_TREE_FILES));
  return root;
}
