/** The package under test, imported from its TypeScript sources. */
export { FileType, applyFileChanges, fsScanCacheStats, fuzzyFind, glob, grep, hasMatch, invalidateFsScanCache, readFile, search, watchFsScanCache } from '../../packages/natives/src/index.ts';
export type {
  CodedError,
  FileChange,
  FsScanCacheStats,
  FuzzyFindOptions,
  FuzzyMatch,
  GlobMatch,
  GlobOptions,
  GlobResult,
  GrepMatch,
  GrepOptions,
  GrepResult,
} from '../../packages/natives/src/index.ts';
