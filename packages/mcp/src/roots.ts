/**
 * The directories the server may touch, and which of them a path is judged
 * against.
 *
 * Roots come from the command line (`--root`) and from the client (MCP
 * `roots`, listed again on every `roots/list_changed`); with neither, the
 * directory the server was started in is the one root. Each root is kept as
 * its real path (symlinks resolved when it is added) beside the form it was
 * given in.
 *
 * Choosing the root is only a choice of which directory to judge by: a
 * relative path belongs to the first root; an absolute one to the deepest
 * root that holds it as written (in either form); one no root holds is
 * refused here, before the filesystem is touched. Whether the path really
 * stays inside the chosen root (symlinks, `..`, a directory swapped for a
 * link) is decided by the natives file layer on the real location, for
 * reads and writes alike (`confineReads` in the tool context).
 */
import { realpathSync, statSync } from 'node:fs';
import * as nodePath from 'node:path';
import { fileURLToPath } from 'node:url';

/** One root: where it really is, and how it was named. */
export interface Root {
  /** The real path: what tools run in and are confined to. */
  real: string;
  /** As given (command line) or as the client's `file://` URI named it. */
  given: string;
  /** Where the root came from. */
  source: 'command line' | 'client' | 'working directory';
}

/** The root a path is judged against, or why no root takes it. */
export type RootChoice = { root: Root } | { refusal: string };

/** Why a directory cannot be a root. */
export class RootError extends Error {}

/** The current roots: the command line's, then the client's. */
export class Roots {
  private client: Root[] = [];
  private readonly fallback: Root;

  constructor(
    private readonly fromCommandLine: readonly Root[],
    cwd = process.cwd(),
  ) {
    this.fallback = { real: realpathSync(cwd), given: cwd, source: 'working directory' };
  }

  /** Roots named on the command line; a missing directory or a file is a {@link RootError}. */
  static fromArgs(dirs: readonly string[]): Roots {
    return new Roots(dirs.map((dir) => rootOf(dir, dir, 'command line')));
  }

  /**
   * Take the client's roots (from `roots/list`): `file://` URIs of existing
   * directories. Returns what was left out and why, for the log.
   */
  setClientRoots(uris: readonly string[]): string[] {
    const skipped: string[] = [];
    const taken: Root[] = [];
    for (const uri of uris) {
      try {
        if (!uri.startsWith('file://')) throw new RootError('not a file:// URI');
        taken.push(rootOf(fileURLToPath(uri), uri, 'client'));
      } catch (error) {
        skipped.push(`${uri}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    this.client = taken;
    return skipped;
  }

  /** Every root, the first being the one relative paths belong to. */
  list(): Root[] {
    const all = [...this.fromCommandLine, ...this.client];
    const unique = all.filter((root, i) => all.findIndex((other) => other.real === root.real) === i);
    return unique.length > 0 ? unique : [this.fallback];
  }

  /** The root `path` is judged against (see the module comment). */
  choose(path: string | undefined): RootChoice {
    const roots = this.list();
    if (!path || !nodePath.isAbsolute(path)) return { root: roots[0]! };
    const wanted = nodePath.resolve(path);
    const holding = roots
      .map((root) => ({ root, depth: Math.max(depthInside(root.real, wanted), depthInside(givenPath(root), wanted)) }))
      .filter((candidate) => candidate.depth >= 0)
      .sort((a, b) => b.depth - a.depth);
    if (holding.length > 0) return { root: holding[0]!.root };
    return { refusal: `Refused: ${path} is outside every root (${roots.map((root) => root.real).join(', ')}).` };
  }
}

/** A root from a directory path, refused unless it is an existing directory. */
function rootOf(dir: string, given: string, source: Root['source']): Root {
  let real: string;
  try {
    real = realpathSync(nodePath.resolve(dir));
  } catch (error) {
    throw new RootError(`${dir} does not exist (${(error as { code?: string }).code ?? String(error)})`);
  }
  if (!statSync(real).isDirectory()) throw new RootError(`${dir} is not a directory`);
  return { real, given, source };
}

/** The path a root was given as (a URI's path for a client root). */
function givenPath(root: Root): string {
  return root.given.startsWith('file://') ? fileURLToPath(root.given) : nodePath.resolve(root.given);
}

/** How deep `dir` is, when `path` lies in it as written (the root itself included); -1 otherwise. */
function depthInside(dir: string, path: string): number {
  const rel = nodePath.relative(dir, path);
  if (rel === '..' || rel.startsWith('..' + nodePath.sep) || nodePath.isAbsolute(rel)) return -1;
  return dir.split(nodePath.sep).length;
}
