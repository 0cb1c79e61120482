// Generated from `ErrorKind` in crates/core/src/error.rs; do not edit. After changing
// that table, run `NATIVES_WRITE_CODES=1 cargo test -p natives-core error` to rewrite it.

/** Every code the library rejects with, and what it means. */
export const ERROR_CODES = {
  ENOENT: 'A path given by the caller does not exist.',
  ENOTDIR: 'A path given by the caller exists but is not a directory.',
  EACCES: 'The OS refused access to a path given by the caller.',
  EINVAL: 'An argument is malformed: a bad glob, an empty pattern, a bad limit.',
  ABORT_ERR: 'The caller\'s cancellation token was triggered.',
  ETIMEDOUT: 'The caller\'s deadline passed before the work finished.',
  EBUSY: 'Someone else holds what the caller asked for (a lease, a claim).',
  EISDIR: 'A path given by the caller is a directory where a file was expected.',
  EFTYPE: 'A path given by the caller is a FIFO, socket or device where a regular file was expected (opening one could block or never end).',
  EXDEV: 'A path resolves outside the directory it must stay in (through `..` or a symlink).',
  EFBIG: 'A file, or a result\'s text, is larger than the operation accepts.',
  EPERM: 'A file is marked read-only (no write permission for the caller), so it is not replaced even where the directory would allow it. What the caller asked to change belongs to another OS user (as `kill` answers for another user\'s process).',
  EMLINK: 'A file has more than one hard link: replacing it would leave the other names holding the old contents.',
  ESTALE: 'A file changed, appeared or vanished between being read and being written.',
  EEXIST: 'A path that must not exist yet does.',
  ENOTSUP: 'The environment lacks what the operation needs (a program too old to be relied on).',
  EBADMSG: 'Stored data fails a check of its integrity (a checksum, a hash, a regenerated copy): it cannot be trusted.',
  ENAMETOOLONG: 'A path is longer than the system resolves (`PATH_MAX`), or a name in it longer than a filesystem allows.',
  EILSEQ: 'A path names nothing, but a name in it is a lossy copy of a name on disk that is not UTF-8 (U+FFFD where that name has other bytes): it was copied from a listing that lost bytes.',
  EIO: 'Any other I/O failure.',
} as const;

/** A code from {@link ERROR_CODES}. */
export type ErrorCode = keyof typeof ERROR_CODES;
