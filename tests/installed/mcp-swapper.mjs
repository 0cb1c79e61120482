// Another process swapping a directory for a link to outside and back, as fast as it can, until
// `stop` exists: `node mcp-swapper.mjs <dir> <outside> <stop>`. Each round moves the directory
// aside to a fresh name, puts a symlink to `outside` in its place, then puts a directory back. A
// step that fails (a write through the server created the directory meanwhile, say) is skipped: the
// point is only that `dir` keeps changing between a directory inside and a link leading out.
// Prints the number of rounds made.
import { existsSync, renameSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';

const [dir, outside, stop] = process.argv.slice(2);
let rounds = 0;
const attempt = (step) => {
  try {
    step();
  } catch {
    // Skipped: the next round tries again.
  }
};
while (!existsSync(stop)) {
  const aside = `${dir}.aside-${rounds}`;
  attempt(() => renameSync(dir, aside));
  attempt(() => symlinkSync(outside, dir));
  attempt(() => unlinkSync(dir));
  attempt(() => renameSync(aside, dir));
  attempt(() => rmSync(aside, { recursive: true, force: true }));
  rounds++;
}
console.log(rounds);
