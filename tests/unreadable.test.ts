/**
 * What a search cannot enter or read is named with why, never skipped in silence: a directory
 * the user may not list, and a directory whose path is longer than the system can name
 * (`PATH_MAX`). `rg` names each and exits 2; so do `natives grep`, `glob` and `find`; the API's
 * results carry them (`unreadable`), and the agent tools' answers say which paths are missing.
 *
 * As root no mode closes a directory, so the closed directory is searched by children run as
 * `nobody` (the API from a staged copy of the package, the CLI from a staged copy of the binary);
 * as anyone else this process is the unprivileged one and the directory gets mode 000.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { findTool, grepTool } from '../packages/coding-agent/src/index.ts';
import { runJson } from './support/child.ts';
import { CLI } from './support/cli.ts';
import { removeDir, tempDir, writeTree } from './support/fs.ts';
import { stageForUnprivileged } from './support/unprivileged.ts';
import { fuzzyFind, glob, grep } from './support/natives.ts';

const PATH_MAX = 4096;
const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;
/** How long a CLI run may take before the test fails rather than hangs. */
const CLI_DEADLINE_MS = 30_000;

let root = '';
/** The first directory of the long chain whose full path is too long to name, relative to `root`. */
let tooLong = '';
let nobodyStage = '';

/**
 * A chain of directories past `PATH_MAX` below `root`, holding `needle.txt` at its end, built from
 * the bottom up with short names only (each step moves the chain under a new top directory).
 */
function chainPastPathMax(base: string): string[] {
  const name = (level: number) => `${String(level).padStart(3, '0')}${'d'.repeat(247)}`;
  const levels = Math.floor(PATH_MAX / 250) + 2;
  writeTree(base, { [`${name(0)}/needle.txt`]: 'needle\n' });
  for (let level = 1; level < levels; level++) {
    fs.mkdirSync(path.join(base, name(level)));
    fs.renameSync(path.join(base, name(level - 1)), path.join(base, name(level), name(level - 1)));
  }
  return Array.from({ length: levels }, (_, i) => name(levels - 1 - i));
}

beforeAll(() => {
  root = tempDir('unreadable');
  writeTree(root, { 'open/needle.txt': 'needle\n', 'closed/needle.txt': 'needle\n' });
  const chain = chainPastPathMax(root);
  let length = root.length;
  const parts: string[] = [];
  for (const part of chain) {
    parts.push(part);
    length += 1 + part.length;
    if (length >= PATH_MAX) break;
  }
  tooLong = parts.join('/');
  // Every user may enter the tree (for `nobody`), except the closed directory.
  spawnSync('chmod', ['-R', 'a+rX', '.'], { cwd: root });
  fs.chmodSync(path.join(root, 'closed'), asRoot ? 0o700 : 0o000);
  if (asRoot) {
    nobodyStage = stageForUnprivileged();
    fs.copyFileSync(fs.realpathSync(CLI), path.join(nobodyStage, 'natives'));
    fs.chmodSync(path.join(nobodyStage, 'natives'), 0o755);
  }
});

afterAll(() => {
  if (root) fs.chmodSync(path.join(root, 'closed'), 0o700);
  removeDir(root);
  if (nobodyStage) removeDir(nobodyStage);
});

const LONG = () => `ENAMETOOLONG ${tooLong}: File name too long (os error 36)`;
const CLOSED = 'EACCES closed: Permission denied (os error 13)';

describe('the API names them', () => {
  test('a path past PATH_MAX: glob, grep and fuzzyFind, cached and not, still find the rest', async () => {
    for (const cache of [false, true]) {
      const named = (found: { unreadable: Array<{ path: string; code: string; message: string }> }) =>
        found.unreadable.map((u) => `${u.code} ${u.path}: ${u.message}`).filter((u) => !u.includes('closed'));
      const globbed = await glob({ pattern: '**/needle.txt', path: root, cache });
      expect(named(globbed)).toEqual([LONG()]);
      expect(globbed.matches.map((m) => m.path)).toContain('open/needle.txt');
      const grepped = await grep({ pattern: 'needle', path: root, cache });
      expect(named(grepped)).toEqual([LONG()]);
      expect(grepped.filesUnreadable).toBe(0);
      expect(named(await fuzzyFind({ query: 'needle.txt', path: root, cache }))).toEqual([LONG()]);
    }
  }, 30_000);

  test('a directory closed to the user who searches', async () => {
    type Seen = Record<string, { unreadable: string[]; found: string[] }>;
    const seen = asRoot
      ? await runJson<Seen>('search-unreadable.ts', [root], { asUser: { uid: NOBODY, stage: nobodyStage } })
      : await runJson<Seen>('search-unreadable.ts', [root]);
    for (const [call, { unreadable, found }] of Object.entries(seen)) {
      expect({ call, unreadable }).toEqual({ call, unreadable: [LONG(), CLOSED] });
      expect({ call, found: found.some((p) => p.startsWith('open/needle.txt')) }).toEqual({ call, found: true });
    }
  }, 60_000);
});

describe('the agent tools say what is missing', () => {
  test('grep and find name the unreadable paths relative to cwd, with why', async () => {
    const ctx = { cwd: path.dirname(root) };
    const shown = path.basename(root);
    const grepped = await grepTool.execute({ pattern: 'needle', path: shown }, ctx);
    const found = await findTool.execute({ pattern: 'needle.txt', path: shown }, ctx);
    for (const result of [grepped, found]) {
      expect(result.isError).toBeUndefined();
      const note = result.text.split('\n').at(-1)!;
      expect(note).toStartWith(`[Could not read ${asRoot ? 1 : 2} path`);
      expect(note).toContain(`${shown}/${tooLong} (File name too long (os error 36))`);
      if (!asRoot) expect(note).toContain(`${shown}/closed (Permission denied (os error 13))`);
      expect(result.details).toMatchObject({ unreadable: asRoot ? 1 : 2 });
      expect(result.details.unreadablePaths).toContainEqual({ path: `${shown}/${tooLong}`, code: 'ENAMETOOLONG' });
    }
    expect(grepped.text).toContain(`${shown}/open/needle.txt:1:needle`);
  }, 30_000);
});

describe('the CLI names them on stderr and exits 2, as rg', () => {
  /** `natives ARGS` in `root` as the user a closed directory stops. */
  function natives(args: string[]): { code: number | null; out: string; err: string } {
    const [command, argv] = asRoot
      ? ['setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', path.join(nobodyStage, 'natives'), ...args]]
      : [CLI, args];
    const run = spawnSync(command, argv, { cwd: root, encoding: 'utf8', timeout: CLI_DEADLINE_MS });
    if (run.error) throw run.error;
    return { code: run.status, out: run.stdout, err: run.stderr };
  }

  test('grep, glob and find print what they reached, name the rest, exit 2', () => {
    for (const args of [['grep', 'needle'], ['glob', 'needle.txt'], ['find', 'needle.txt'], ['grep', '--files']]) {
      const { code, out, err } = natives(args);
      expect({ args, code }).toEqual({ args, code: 2 });
      expect(out).toContain('open/needle.txt');
      expect(err).toBe(`natives: ${tooLong}: File name too long (os error 36)\nnatives: closed: Permission denied (os error 13)\n`);
    }
    const { out } = natives(['grep', '--stats', 'needle']);
    expect(out).toContain('\n2 paths unreadable\n');
  }, 60_000);
});
