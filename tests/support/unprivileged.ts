/**
 * What a child process run as another user needs, copied where that user can reach it.
 *
 * The checkout may sit in a folder only its owner may enter (a 0700 home directory, say). A child
 * started there as `nobody` can neither enter its working directory nor load its script, the
 * package sources or the addon, and fails before doing anything it was started to show. So the
 * child scripts, their support modules and the natives package (sources, loader, addon) are
 * copied into a fresh folder under the system temp directory that every user may traverse and
 * read, and the child starts there, with that folder as its working directory.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const CHECKOUT = path.join(import.meta.dir, '..', '..');
const PACKAGE = path.join('packages', 'natives');

/** What the child scripts load, relative to the checkout, in the same layout. */
function stagedPaths(): string[] {
  const addons = fs.readdirSync(path.join(CHECKOUT, PACKAGE)).filter((name) => name.endsWith('.node'));
  return [
    path.join('tests', 'fixtures'),
    path.join('tests', 'support'),
    ...['package.json', 'index.cjs', 'src', ...addons].map((name) => path.join(PACKAGE, name)),
  ];
}

/** Let everyone traverse and read `target` and everything below it. */
function openToAll(target: string): void {
  const stat = fs.statSync(target);
  fs.chmodSync(target, stat.isDirectory() ? 0o755 : 0o644);
  if (stat.isDirectory()) for (const name of fs.readdirSync(target)) openToAll(path.join(target, name));
}

/** Another user, and the stage (from {@link stageForUnprivileged}) a child run as that user starts from. */
export interface Unprivileged {
  uid: number;
  stage: string;
}

/** A fresh staged copy in a folder every user can reach; the caller removes it when done. */
export function stageForUnprivileged(): string {
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'natives-e2e-unprivileged-'));
  for (const rel of stagedPaths()) fs.cpSync(path.join(CHECKOUT, rel), path.join(stage, rel), { recursive: true });
  openToAll(stage);
  return stage;
}
