/**
 * The file I/O the tools share, all of it through natives' `readFile` and
 * `applyFileChanges`:
 *
 * - a path is judged on its real location (symlinks and `..` resolved on
 *   the filesystem) and a write lands in the very directory that was
 *   checked, so no chain of links leads a write outside `cwd`;
 * - only regular files are read (a FIFO, socket or device is refused before
 *   it can block a worker thread), never past a size limit;
 * - a change is all-or-nothing, atomic per file, keeps the file's owner,
 *   group, mode and extended attributes, refuses read-only and hard-linked
 *   files, and refuses a file that changed since the tool read it;
 * - every change invalidates the scan cache for the paths it touched, so no
 *   search answers from before it.
 *
 * Reads are confined the same way when `ctx.confineReads` asks it
 * ({@link readConfined}, {@link searchPath}: a search is checked where it
 * starts, and natives' `confine` keeps it beneath that start while it
 * runs). `ctx.allowOutsideCwd` lifts the confinement; nothing else does.
 */
import { resolvePath } from './names.ts';
import { type AppliedFileChanges, type FileChange, type FileContents, applyFileChanges, readFile, realPath } from '@natives/natives';
import type { ToolContext } from './tool.ts';

/**
 * Whether the tools' searches (`grep`, `find`, `fuzzy_find`, `read`'s glob, `@` mentions) see
 * dot-files: yes, one choice for all of them, set here. natives leaves them out by default, as `rg`
 * and `fd` do for a person at a terminal; an agent edits `.github/`, `.eslintrc.json` or `.env.example`
 * like any other source, and `.gitignore` still applies to what it sees.
 */
export const SEARCH_DOT_FILES = true;

/**
 * Why `file` cannot be changed as text, or `undefined` when it can: natives judged it binary (by
 * the rule grep searches by: a NUL byte in it), or UTF-16 text, which an edit would rewrite as UTF-8.
 */
export function notEditableText(file: FileContents): { code: 'BINARY' | 'ENCODING'; why: string } | undefined {
  if (file.encoding === 'binary') return { code: 'BINARY', why: 'is a binary file' };
  if (file.encoding !== 'utf-8') {
    return { code: 'ENCODING', why: `is ${file.encoding.toUpperCase()} text (its byte order mark says so); edits write UTF-8 only` };
  }
  return undefined;
}

/** Read a file a tool is about to change: confined to `cwd`, whole (natives' default size limit applies). */
export function readForChange(ctx: ToolContext, path: string): Promise<FileContents> {
  return readFile(path, { cwd: ctx.cwd, confine: !ctx.allowOutsideCwd, signal: ctx.signal });
}

/** Whether reads must stay inside `cwd` (`ctx.confineReads`, unless `ctx.allowOutsideCwd`). */
export function readConfined(ctx: ToolContext): boolean {
  return (ctx.confineReads ?? false) && !ctx.allowOutsideCwd;
}

/**
 * The absolute directory or file a search starts from (`path` against
 * `cwd`; empty means `cwd`). When reads are confined it is the real
 * location, resolved as the filesystem resolves it (`link/..` is the parent
 * of the link's target) and refused (`EXDEV`) outside `cwd`, so a link
 * inside `cwd` cannot send the search elsewhere; the search is then run with
 * natives' `confine` ({@link readConfined}), so neither can a directory
 * inside swapped for a link to outside while the search runs (the check is
 * of the start only, and the walk below it goes by path).
 */
export async function searchPath(ctx: ToolContext, path: string | undefined): Promise<string> {
  if (!readConfined(ctx)) return resolvePath(ctx.cwd, path || '.');
  return realPath(path || '.', { cwd: ctx.cwd, confine: true, signal: ctx.signal });
}

/** Make `changes` all together or not at all, confined to `cwd`. */
export function changeFiles(ctx: ToolContext, changes: readonly FileChange[]): Promise<AppliedFileChanges> {
  return applyFileChanges(changes, { cwd: ctx.cwd, confine: !ctx.allowOutsideCwd, signal: ctx.signal });
}

/** What {@link atomicWrite} did. */
export interface AtomicWriteOutcome {
  /** The file did not exist before. */
  created: boolean;
  /** The path actually written (the target of a symlink at `path`). */
  writtenPath: string;
}

/**
 * Replace `path`'s contents atomically (relative paths resolve against
 * `process.cwd()`; not confined): a temporary file beside the target,
 * synced, renamed over it. Missing parents are created; a symlink at `path`
 * is followed (the link survives, its target is replaced); the old file's
 * owner, group, mode and extended attributes are kept. Cached scans that saw the path are
 * invalidated. Rejects like natives' `applyFileChanges` (`EPERM` for a
 * read-only file, `EMLINK` for a hard-linked one, `EFTYPE`, `EISDIR`).
 */
export async function atomicWrite(path: string, data: string | Uint8Array): Promise<AtomicWriteOutcome> {
  const cwd = process.cwd();
  const applied = await applyFileChanges([{ op: 'write', path, data }], { cwd, confine: false });
  const outcome = applied.outcomes[0]!;
  return { created: outcome.created, writtenPath: outcome.path };
}

/** The absolute form of a path a model gave, for naming it back (not for deciding where it lands). */
export function shownAbsolute(ctx: ToolContext, path: string): string {
  return resolvePath(ctx.cwd, path);
}
