/** grep, search and hasMatch of the package under test, imported from its TypeScript sources. */
export { fsScanCacheStats, grep, hasMatch, invalidateFsScanCache, search } from '../../packages/natives/src/index.ts';
export type { CodedError, GrepMatch, GrepOptions, GrepResult } from '../../packages/natives/src/index.ts';
