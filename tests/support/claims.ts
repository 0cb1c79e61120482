/**
 * Fixtures for the claims tests: real repositories built with the git CLI (a main checkout with a
 * linked worktree, a bare repository with one, a bogus `.git` file, symlinked routes), the CLI's
 * folder-name rule written independently in plain JavaScript, and a driver for claimer processes.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { childCommand } from './child.ts';
import { stageForUnprivileged, type Unprivileged } from './unprivileged.ts';
import { removeDir, run } from './fs.ts';
import { checkAndClaim as claim } from '../../packages/natives/src/index.ts';

export {
  checkAndClaim,
  claimsOf,
  claudeFolderName,
  claudeMemoryDir,
  dirId,
  hasLinkedWorktrees,
  heldExclusively,
  memoryProjectRoot,
  memoryRedirectsFor,
  pruneStaleClaims,
  releaseClaim,
  usedByAnother,
} from '../../packages/natives/src/index.ts';
export type { ClaimRequest, ClaimVerdict, KnownAgent } from '../../packages/natives/src/index.ts';

/** Run git with a fixed identity and no system configuration. */
export function git(cwd: string, ...args: string[]): void {
  run('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd });
}

/**
 * Under `root`: `plain/sub` (no repository), `solo/src` (a repository without worktrees),
 * `main/src/deep` with linked worktree `wt`, `bare.git` (a bare clone) with linked worktree
 * `bare-wt`, `bogus/sub` under a `.git` file pointing nowhere, and symlinks `link-wt` → `wt`,
 * `link-deep` → `main/src/deep`, `link-solo` → `solo`, `link-plain` → `plain`.
 */
export function buildRepos(root: string): void {
  for (const dir of ['plain/sub', 'solo/src', 'main/src/deep', 'bogus/sub']) fs.mkdirSync(path.join(root, dir), { recursive: true });
  for (const repo of ['solo', 'main']) {
    git(root, 'init', '-q', repo);
    fs.writeFileSync(path.join(root, repo, 'README'), repo);
    git(path.join(root, repo), 'add', 'README');
    git(path.join(root, repo), 'commit', '-q', '-m', 'first');
  }
  git(path.join(root, 'main'), 'worktree', 'add', '-q', '../wt');
  git(root, 'clone', '-q', '--bare', 'main', 'bare.git');
  git(path.join(root, 'bare.git'), 'worktree', 'add', '-q', '../bare-wt');
  fs.writeFileSync(path.join(root, 'bogus/.git'), 'gitdir: /nonexistent/worktrees/x\n');
  for (const [link, target] of [
    ['link-wt', 'wt'],
    ['link-deep', 'main/src/deep'],
    ['link-solo', 'solo'],
    ['link-plain', 'plain'],
  ]) {
    fs.symlinkSync(path.join(root, target!), path.join(root, link!));
  }
}

/** The CLI's folder-name rule in JavaScript string semantics (UTF-16 units), as a reference. */
export function referenceFolderName(name: string): string {
  const sanitised = name.replace(/[^a-zA-Z0-9]/g, '-');
  if (sanitised.length <= 200) return sanitised;
  let hash = 0;
  for (let i = 0; i < name.length; i++) hash = ((hash << 5) - hash + name.charCodeAt(i)) | 0;
  return `${sanitised.slice(0, 200)}-${Math.abs(hash).toString(36)}`;
}

/** A claimer child process, driven one command at a time over stdin/stdout. */
export class Claimer {
  private readonly child: ReturnType<typeof Bun.spawn<'pipe', 'pipe', 'pipe'>>;
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private buffered = '';

  constructor(config: { home: string; memoryDir: string; uid: string; origin: string; cwd: string }, asUser?: Unprivileged) {
    const { argv, cwd } = childCommand('claimer.ts', [JSON.stringify(config)], { asUser });
    this.child = Bun.spawn(argv, { cwd, stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' });
    this.reader = this.child.stdout.getReader();
  }

  /** The next JSON line the child prints. */
  async next<T = Record<string, unknown>>(): Promise<T> {
    for (;;) {
      const newline = this.buffered.indexOf('\n');
      if (newline >= 0) {
        const line = this.buffered.slice(0, newline);
        this.buffered = this.buffered.slice(newline + 1);
        return JSON.parse(line) as T;
      }
      const { value, done } = await this.reader.read();
      if (done) throw new Error(`claimer exited early: ${await new Response(this.child.stderr).text()}`);
      this.buffered += new TextDecoder().decode(value);
    }
  }

  /** Send `command` (`claim`, `held`, `release`) and read its answer. */
  async send<T = Record<string, unknown>>(command: string): Promise<T> {
    this.child.stdin.write(`${command}\n`);
    await this.child.stdin.flush();
    return this.next<T>();
  }

  /** Ask the child to exit; resolves with its exit code. */
  async exit(): Promise<number> {
    this.child.stdin.write('exit\n');
    await this.child.stdin.end();
    return this.child.exited;
  }
}

/** The user the tests run other-user children as. */
export const NOBODY = 65534;

/**
 * A claim on `config.memoryDir` made by another OS user, in a store under `base` (created here):
 * really made by `nobody` in a child process when this process is root (`base` is then given to
 * `nobody`), otherwise made here and recorded as another user's, as a claim from another user's
 * store would read. Resolves with that user's id.
 */
export async function claimAsAnotherUser(base: string, config: { home: string; memoryDir: string; uid: string; origin: string; cwd: string }): Promise<number> {
  fs.mkdirSync(base, { recursive: true });
  if (process.getuid?.() !== 0) return forgeAnotherUsersClaim(config);
  fs.chmodSync(path.dirname(base), 0o755);
  execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, base]);
  const stage = stageForUnprivileged();
  const claimer = new Claimer(config, { uid: NOBODY, stage });
  try {
    await claimer.next();
    const { verdict } = await claimer.send<{ verdict: { exclusive: boolean } }>('claim');
    if (!verdict.exclusive) throw new Error(`nobody's claim was not exclusive: ${JSON.stringify(verdict)}`);
  } finally {
    const exited = await claimer.exit();
    removeDir(stage);
    if (exited !== 0) throw new Error(`the claimer run as nobody exited with ${exited}`);
  }
  return NOBODY;
}

async function forgeAnotherUsersClaim(config: { home: string; memoryDir: string; uid: string; origin: string; cwd: string }): Promise<number> {
  await claim({
    agent: { uid: config.uid, cwd: config.cwd, account: 'ana@example.com' },
    memoryDir: config.memoryDir,
    others: [],
    origin: config.origin,
    deadline: Date.now() + 5_000,
    redirects: { settingsFiles: [], pathOverride: null },
    home: config.home,
  });
  const store = path.join(config.home, 'claims');
  const [file] = fs.readdirSync(store).filter((name) => name.endsWith('.json'));
  const record = JSON.parse(fs.readFileSync(path.join(store, file!), 'utf8'));
  const other = (process.getuid?.() ?? 0) + 1;
  record.claims[config.uid].user = other;
  fs.writeFileSync(path.join(store, file!), JSON.stringify(record));
  return other;
}
