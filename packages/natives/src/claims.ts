/**
 * Memory-directory claims: whether a Claude memory folder is one agent's alone.
 *
 * The CLI keys memory by account and repository, not by agent, so two agents can share a folder
 * without knowing it. A folder is shared unless proven exclusive, and only an exclusive folder may
 * be projected into, captured from or cleaned. Inputs are explicit: the caller passes the agent,
 * the other agents its own channel store knows, its store id, a deadline and what may redirect
 * memory (see {@link memoryRedirectsFor}); nothing reads a global registry of agents.
 *
 * The verdict calls never throw: any failure, including bad arguments and a passed deadline, is
 * `{exclusive: false, reason: 'unproven'}`.
 */
import { native, type ClaimView, type ClaimedFolderView, type NativeKnownAgent, type VerdictView, type SharedReason } from './native.ts';
import { callNative, codedError, type CodedError } from './errors.ts';
import { anchored } from './paths.ts';

const {
  claudeFolderName: nativeClaudeFolderName,
  claudeMemoryDir: nativeClaudeMemoryDir,
  dirId: nativeDirId,
  hasLinkedWorktrees: nativeHasLinkedWorktrees,
  memoryProjectRoot: nativeMemoryProjectRoot,
  memorySettingsFiles,
  nativeCheckAndClaim,
  nativeClaimsOf,
  nativeHeldExclusively,
  nativePruneStaleClaims,
  nativeReleaseClaim,
  nativeUsedByAnother,
} = native;

export type { SharedReason };

/** Exclusive, or shared with the rule that decided and what it saw. */
export type ClaimVerdict = { exclusive: true } | { exclusive: false; reason: SharedReason; detail: string };

/** A point in time: a `Date` or milliseconds since the epoch (`Date.now()` style). */
export type Deadline = Date | number;

/** The agent asking for a folder. */
export interface ClaimAgent {
  /** Stable across the agent's spawns. */
  uid: string;
  /** Its working directory; absent or blank for the default agents directory (always shared). */
  cwd?: string | null;
  /** The account it runs under (recorded with the claim). */
  account: string;
}

/** Another agent the caller's channel store has. */
export interface KnownAgent {
  uid: string;
  cwd?: string | null;
  /** The memory folder it resolves to, where known. */
  memoryDir?: string | null;
}

/** What may move memory out of the per-project folder. */
export interface MemoryRedirects {
  /** Settings files that may set `autoMemoryDirectory`; missing files set nothing. */
  settingsFiles: readonly string[];
  /** The agent's `CLAUDE_COWORK_MEMORY_PATH_OVERRIDE`, if set. */
  pathOverride: string | null;
}

/** Everything {@link checkAndClaim} decides from. */
export interface ClaimRequest {
  agent: ClaimAgent;
  /** The memory folder the agent's spawn uses (see {@link claudeMemoryDir}). */
  memoryDir: string;
  /** Every other agent the caller's store has: its stale claims are pruned against this list. */
  others: readonly KnownAgent[];
  /** The caller's channel store id; only this store may later prune the claim. */
  origin: string;
  /** Checks that cannot finish by then answer `unproven`. */
  deadline: Deadline;
  /**
   * The agent's user's home directory, a known shared location. The caller's own home (`os.homedir()`:
   * `$HOME`, else the user database's) is one whether or not this is given; the rule cannot be turned off.
   */
  userHome?: string;
  /** What may redirect the agent's memory: build it with {@link memoryRedirectsFor}. Required. */
  redirects: MemoryRedirects;
  /** The natives home holding the store. Default: `$NATIVES_HOME`, else `~/.natives`. */
  home?: string;
}

/** One agent's claim on one folder. */
export interface ClaimTarget {
  memoryDir: string;
  uid: string;
  deadline: Deadline;
  home?: string;
}

/** A claim in a listing. */
export type FolderClaim = ClaimView;

/** A claimed folder and every claim on it. */
export type ClaimedFolder = ClaimedFolderView;

/**
 * Decide whether `memoryDir` is exclusive to `agent`, recording its claim whatever the answer.
 * Rules in order: known shared locations, vetoes, then the machine-wide claims.
 */
export async function checkAndClaim(request: ClaimRequest): Promise<ClaimVerdict> {
  try {
    const { agent, others, redirects } = claimInputs(request);
    const native = await callNative('checkAndClaim', () =>
      nativeCheckAndClaim({
        agent: { uid: agent.uid, cwd: workingDir(agent.cwd), account: agent.account },
        memoryDir: anchored(request.memoryDir),
        others: others.map(toNativeAgent),
        origin: request.origin,
        userHome: request.userHome === undefined || request.userHome === null ? undefined : anchored(request.userHome),
        settingsFiles: redirects.settingsFiles.map(anchored),
        memoryPathOverride: redirects.pathOverride ?? undefined,
        home: request.home,
        timeoutMs: remainingMs(request.deadline),
      }),
    );
    return toVerdict(native);
  } catch (error) {
    return unproven(error);
  }
}

/**
 * The parts of a request this layer reads before native code does, checked: a missing or malformed one
 * is `EINVAL` naming it (what each holds, native code checks).
 */
function claimInputs(request: ClaimRequest): Pick<ClaimRequest, 'agent' | 'others' | 'redirects'> {
  const invalid = (option: string, what: string, got: unknown) =>
    codedError('EINVAL', `checkAndClaim: ${what}, got ${got === null ? 'null' : typeof got}`, { option, value: got });
  if (typeof request !== 'object' || request === null) throw invalid('request', 'the request must be an object', request);
  const { agent, others, redirects } = request;
  if (typeof agent !== 'object' || agent === null) throw invalid('agent', 'agent must be an object {uid, cwd, account}', agent);
  if (!Array.isArray(others)) throw invalid('others', 'others must be an array of the agents the caller knows', others);
  if (typeof redirects !== 'object' || redirects === null || !Array.isArray(redirects.settingsFiles)) {
    throw invalid('redirects', 'redirects must be an object {settingsFiles: string[], pathOverride} (see memoryRedirectsFor)', redirects);
  }
  return { agent, others, redirects };
}

/** Whether `uid` still holds the only claim on `memoryDir`: the read-only re-check before every capture. */
export async function heldExclusively(target: ClaimTarget): Promise<ClaimVerdict> {
  try {
    return toVerdict(await nativeHeldExclusively(toNativeTarget(target)));
  } catch (error) {
    return unproven(error);
  }
}

/** Whether another agent uses `memoryDir`: a claim in any channel, or one of `others` resolving to it. Failures answer `true`. */
export async function usedByAnother(target: ClaimTarget & { others: readonly KnownAgent[] }): Promise<boolean> {
  try {
    return await nativeUsedByAnother({ ...toNativeTarget(target), others: target.others.map(toNativeAgent) });
  } catch {
    return true;
  }
}

/**
 * Remove `uid`'s claim on `memoryDir` (a human released the folder); resolves with whether there was
 * one. A claim another OS user made rejects with `EPERM` naming that user, unless `anyUser` (an
 * operator's explicit override).
 */
export async function releaseClaim(target: ClaimTarget & { anyUser?: boolean }): Promise<boolean> {
  return await callNative('releaseClaim', () => nativeReleaseClaim(toNativeTarget(target), target.anyUser));
}

/** Remove the claims `origin` wrote for agents it no longer has (`storeAgents`: every agent it has). */
export async function pruneStaleClaims(options: {
  origin: string;
  storeAgents: readonly string[];
  deadline: Deadline;
  home?: string;
}): Promise<number> {
  const prune = () => nativePruneStaleClaims(options.origin, [...options.storeAgents], options.home, remainingMs(options.deadline));
  return await callNative('pruneStaleClaims', prune);
}

/** Every folder `uid` holds a claim on, with every other claim there; without `uid`, every claimed folder. */
export async function claimsOf(uid?: string, options: { home?: string } = {}): Promise<ClaimedFolder[]> {
  return await callNative('claimsOf', () => nativeClaimsOf(uid, options.home));
}

/** A directory's canonical id: the longest existing prefix with symlinks resolved, the rest as given. */
export function dirId(path: string): string {
  return callNative('dirId', () => nativeDirId(anchored(path)));
}

/** The directory the CLI keys `cwd`'s memory by: the repository root (main checkout), or `cwd` outside one. */
export function memoryProjectRoot(cwd: string, options: { timeoutMs?: number } = {}): string {
  return callNative('memoryProjectRoot', () => nativeMemoryProjectRoot(anchored(cwd), options.timeoutMs));
}

/** Whether the repository rooted at `root` has linked worktrees. */
export function hasLinkedWorktrees(root: string, options: { timeoutMs?: number } = {}): boolean {
  return callNative('hasLinkedWorktrees', () => nativeHasLinkedWorktrees(anchored(root), options.timeoutMs));
}

/** The CLI's folder name for a path: non-alphanumeric UTF-16 units become `-`; long names are cut and hashed. */
export function claudeFolderName(path: string): string {
  return callNative('claudeFolderName', () => nativeClaudeFolderName(path));
}

/** The memory folder the CLI with configuration directory `configDir` (e.g. `~/.claude`) uses for `cwd`. */
export function claudeMemoryDir(configDir: string, cwd: string, options: { timeoutMs?: number } = {}): string {
  return callNative('claudeMemoryDir', () => nativeClaudeMemoryDir(anchored(configDir), anchored(cwd), options.timeoutMs));
}

/**
 * The documented sources of a memory redirect for one agent: its user (`<configDir>/settings.json`),
 * local (`<projectDir>/.claude/settings.local.json`) and managed policy settings, and
 * `CLAUDE_COWORK_MEMORY_PATH_OVERRIDE` from the environment the agent will run with.
 */
export function memoryRedirectsFor(options: { configDir: string; projectDir: string; env: Readonly<Record<string, string | undefined>> }): MemoryRedirects {
  return {
    settingsFiles: callNative('memoryRedirectsFor', () => memorySettingsFiles(anchored(options.configDir), anchored(options.projectDir))),
    pathOverride: options.env.CLAUDE_COWORK_MEMORY_PATH_OVERRIDE ?? null,
  };
}

function toVerdict(native: VerdictView): ClaimVerdict {
  if (native.exclusive) return { exclusive: true };
  return { exclusive: false, reason: native.reason ?? 'unproven', detail: native.detail ?? '' };
}

/** Shared, unproven, for a failure: the detail leads with the error's code, as the native side's do. */
function unproven(error: unknown): ClaimVerdict {
  const code = (error as Partial<CodedError> | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const detail = code === undefined || message.startsWith(`${code}:`) ? message : `${code}: ${message}`;
  return { exclusive: false, reason: 'unproven', detail };
}

function toNativeAgent(agent: KnownAgent): NativeKnownAgent {
  return { uid: agent.uid, cwd: workingDir(agent.cwd), memoryDir: agent.memoryDir ? anchored(agent.memoryDir) : undefined };
}

function toNativeTarget(target: ClaimTarget) {
  return { memoryDir: anchored(target.memoryDir), uid: target.uid, home: target.home, timeoutMs: remainingMs(target.deadline) };
}

/** A blank working directory stays blank (it means the shared default), anything else becomes absolute. */
function workingDir(cwd: string | null | undefined): string | undefined {
  if (cwd === null || cwd === undefined) return undefined;
  return cwd.trim() === '' ? cwd : anchored(cwd);
}

/** Milliseconds left until `deadline` (0 once passed); an invalid deadline is NaN, which native code refuses. */
function remainingMs(deadline: Deadline): number {
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  return Math.max(0, at - Date.now());
}
