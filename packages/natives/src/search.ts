/**
 * `@natives/natives/search`: finding and searching files, alone. `glob`, `grep` and `fuzzyFind` over
 * the shared scan cache (and `globIter`/`grepIter` to read them with `for await`), the cache's
 * invalidation and watching, and the confined file reads and changes that keep it fresh. Importing
 * this entry evaluates none of the ownership modules (leases, claims, the run registry).
 */
export { FileType, fsScanCacheStats, glob, globIter, invalidateFsScanCache, watchFsScanCache } from './glob.ts';
export type { FsScanCacheStats, GlobMatch, GlobOptions, GlobResult, GlobStream, GlobSummary, OnGlobMatch, UnreadablePath } from './glob.ts';
export { fuzzyFind } from './fuzzy.ts';
export type { FuzzyFindOptions, FuzzyFindResult, FuzzyMatch, FuzzyTier } from './fuzzy.ts';
export { grep, grepIter, hasMatch, search } from './grep.ts';
export type { ContextLine, GrepMatch, GrepMode, GrepOptions, GrepResult, GrepStream, GrepSummary, ListSource, MatchOptions } from './grep.ts';
export { PULL_WINDOW_BATCHES, PullStream } from './stream.ts';
export { applyFileChanges, readFile, realPath } from './files.ts';
export type { AppliedFileChanges, ApplyFileChangesOptions, FileChange, FileContents, ReadFileOptions, RealPathOptions } from './files.ts';
export { ERROR_CODES, codedError } from './errors.ts';
export type { CodedError, ErrorCode, ErrorDetails } from './errors.ts';
