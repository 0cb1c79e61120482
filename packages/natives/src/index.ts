/**
 * natives: fast, fresh file discovery for coding agents.
 *
 * A shared in-memory scan cache feeds `glob`, `fuzzyFind` and `grep`; mutating tools call
 * `invalidateFsScanCache` so no search answers from before a change; `readFile` and `applyFileChanges` give
 * them regular-file reads and confined, all-or-nothing changes that invalidate by themselves. Memory-directory claims
 * tell an orchestrator whether a Claude memory folder is one agent's alone; build-cache leases
 * say who is using a shared `CARGO_TARGET_DIR` and keep it fresh for the source being built, and
 * build-cache pools give N agents K such directories so none waits or builds cold. The run registry
 * records an orchestrator's tasks, runs and worktrees, and hands a branch an earlier attempt still
 * has checked out over to its retry without losing a byte.
 */
export * from './search.ts';
export * from './claims.ts';
export * from './leases.ts';
export * from './runs.ts';
