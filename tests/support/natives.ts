/** The package under test, imported from its TypeScript sources. */
export { FileType, fsScanCacheStats, glob, invalidateFsScanCache } from '../../packages/natives/src/index.ts';
export type { CodedError, FsScanCacheStats, GlobMatch, GlobOptions, GlobResult } from '../../packages/natives/src/index.ts';
