/**
 * File I/O for tools that change files on a model's behalf: reads that only
 * touch regular files, and changes confined to a directory on its real
 * location, made all together or not at all, that keep each file's metadata
 * and keep the scan cache fresh.
 *
 * Paths are handed to the native side as given, with the directory they are
 * relative to: it resolves them on the filesystem (symlinks followed, `..`
 * applied to the real directory reached), never by their text.
 */
import { native, type NativeFileChange } from './native.ts';
import { callNative, codedError, throwIfAborted } from './errors.ts';
import { handOverScanCachePolicy } from './policy.ts';

const { nativeApplyFileChanges, nativeReadFile, nativeRealPath } = native;

/** Options for {@link readFile}. */
export interface ReadFileOptions {
  /** Directory relative paths resolve against. Default: `process.cwd()`. */
  cwd?: string;
  /** Refuse (`EXDEV`) a path whose real location is outside `cwd`. Default: `false`. */
  confine?: boolean;
  /** The most bytes read; a larger file is refused with `EFBIG`. Default: 64 MiB. */
  maxBytes?: number;
  /** Read the first `maxBytes` of a larger file instead of refusing it (`complete` is then `false`). Default: `false`. */
  head?: boolean;
  /** Reject with `ABORT_ERR` if already aborted. */
  signal?: AbortSignal;
}

/** What {@link readFile} read. */
export interface FileContents {
  /** The file's real path (symlinks resolved). */
  path: string;
  /** The bytes read. */
  data: Buffer;
  /** The file's size in bytes. */
  size: number;
  /** The version read: pass it as a change's `stamp` to refuse writing over a newer one. */
  stamp: string;
  /** `data` holds the whole file. */
  complete: boolean;
  /**
   * What `data` holds, by the one rule `grep` searches by: `utf-8` text, `utf-16le` or `utf-16be`
   * text (named by a byte order mark; decode it with a `TextDecoder` of that label), or `binary`
   * (a NUL byte among the bytes read, wherever it is; in UTF-16, a NUL character).
   */
  encoding: 'utf-8' | 'utf-16le' | 'utf-16be' | 'binary';
}

/**
 * Read a regular file. A FIFO, socket or device is refused (`EFTYPE`, the
 * message names its type) without being opened for a blocking read; a
 * directory is `EISDIR`, a missing file or dangling link `ENOENT`, a file
 * over `maxBytes` `EFBIG`, a path leaving a confined `cwd` `EXDEV`, a path
 * that copies with U+FFFD a name that is not UTF-8 `EILSEQ` (naming the
 * path meant).
 */
export async function readFile(path: string, options: ReadFileOptions = {}): Promise<FileContents> {
  if (typeof path !== 'string') throw codedError('EINVAL', 'readFile: path must be a string', { option: 'path', value: path });
  throwIfAborted(options.signal, 'readFile');
  const { signal, cwd, ...rest } = options;
  return await callNative(`readFile ${path}`, () => nativeReadFile(path, { ...rest, cwd: cwd ?? process.cwd() }), { signal });
}

/** Options for {@link realPath}. */
export interface RealPathOptions {
  /** Directory relative paths resolve against. Default: `process.cwd()`. */
  cwd?: string;
  /** Refuse (`EXDEV`) a path whose real location is outside `cwd`. Default: `false`. */
  confine?: boolean;
  /** Reject with `ABORT_ERR` if already aborted. */
  signal?: AbortSignal;
}

/**
 * Where `path` really is: resolved on the filesystem as {@link readFile}
 * resolves it (symlinks followed, `..` applied to the directory reached), so
 * a confined caller can hand a directory to a search knowing where it lies
 * at the time of the call (and pass it with `confine` so the search stays
 * beneath it while it runs). A missing tail is kept as named (the path need
 * not exist); a path leaving a confined `cwd` is `EXDEV`, naming the place
 * it reaches and the directory it left. Every byte of a name is kept.
 */
export async function realPath(path: string, options: RealPathOptions = {}): Promise<string> {
  if (typeof path !== 'string') throw codedError('EINVAL', 'realPath: path must be a string', { option: 'path', value: path });
  throwIfAborted(options.signal, 'realPath');
  const { signal, cwd = process.cwd(), confine = false } = options;
  return await callNative(`realPath ${path}`, () => nativeRealPath(path, cwd, confine), { signal });
}

/** One change of a batch given to {@link applyFileChanges}. */
export type FileChange =
  | {
      /** Create or replace the file at `path` (a symlink at `path` is followed: its target is replaced). */
      op: 'write';
      path: string;
      /** The new contents (a string is written as UTF-8). */
      data: string | Uint8Array;
      /** Refuse (`ESTALE`) unless the file is still the version {@link readFile} returned with this stamp. */
      stamp?: string;
      /** Refuse (`EEXIST`) if the file exists. */
      create?: boolean;
      /** Give the file execute permission wherever it has read permission, or take it away. Default: an existing file keeps its mode; a new one gets `0o666` less the umask. */
      executable?: boolean;
    }
  | {
      /** Delete the entry at `path` (a symlink itself, not its target). */
      op: 'delete';
      path: string;
      stamp?: string;
    }
  | {
      /** Move the entry at `path` to `to`, which must not exist (a symlink moves as a symlink). */
      op: 'rename';
      path: string;
      to: string;
      stamp?: string;
    };

/** Options for {@link applyFileChanges}. */
export interface ApplyFileChangesOptions {
  /** Directory relative paths resolve against. Default: `process.cwd()`. */
  cwd?: string;
  /** Refuse (`EXDEV`, before anything changes) a path whose real location is outside `cwd`. Default: `true`. */
  confine?: boolean;
  /** Reject with `ABORT_ERR` if already aborted. */
  signal?: AbortSignal;
}

/** What {@link applyFileChanges} did. */
export interface AppliedFileChanges {
  /** One per change, in order: the real path left (written, deleted, renamed to) and whether a write created it. */
  outcomes: { path: string; created: boolean }[];
  /** Every real path that appeared, changed or vanished (created directories included). */
  touched: string[];
}

/**
 * Make every change, in order, or none: if one fails, those already made
 * are undone (old bytes restored, created files and directories removed,
 * renames and deletions reversed) and the promise rejects with the failing
 * change's error. Each write is atomic and keeps the old file's owner,
 * group, mode and extended attributes. Refusals: `EXDEV` (outside `cwd`),
 * `EPERM` (a read-only file), `EMLINK` (a file with several hard links),
 * `EFTYPE` (a FIFO, socket or device), `EISDIR`, `ESTALE` (`stamp` no longer
 * matches), `EEXIST` (`create` or a rename's `to` exists), `ENOENT`,
 * `EILSEQ` (a path that names nothing but copies, with U+FFFD, a name that
 * is not UTF-8: no second file is made beside the real one).
 * Cached scans that saw any touched path are invalidated.
 */
export async function applyFileChanges(changes: readonly FileChange[], options: ApplyFileChangesOptions = {}): Promise<AppliedFileChanges> {
  if (!Array.isArray(changes)) throw codedError('EINVAL', 'applyFileChanges: changes must be an array', { option: 'changes', value: changes });
  throwIfAborted(options.signal, 'applyFileChanges');
  const native = changes.map(toNative);
  // The changes invalidate the scan cache, which must not start without the process's policy.
  handOverScanCachePolicy();
  return await callNative('applyFileChanges', () => nativeApplyFileChanges(options.cwd ?? process.cwd(), options.confine, native), {
    signal: options.signal,
  });
}

function toNative(change: FileChange, index: number): NativeFileChange {
  if (typeof change !== 'object' || change === null) {
    throw codedError('EINVAL', `applyFileChanges: changes[${index}] must be an object`, { option: `changes[${index}]`, value: change });
  }
  if (change.op !== 'write') return change;
  const { data } = change;
  if (typeof data !== 'string' && !(data instanceof Uint8Array)) {
    throw codedError('EINVAL', `applyFileChanges: changes[${index}].data must be a string or a Uint8Array`, {
      option: `changes[${index}].data`,
      value: data,
    });
  }
  return { ...change, data: typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength) };
}
