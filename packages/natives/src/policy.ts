/**
 * The scan cache's policy comes from `process.env`, under Node and Bun alike.
 *
 * The native side reads its policy once, at its first use. Reading the
 * process environment there would miss values set in `process.env` while the
 * program runs under Bun, which keeps `process.env` to itself rather than
 * passing writes on to native code (Node does pass them). So before the first
 * call that reaches the cache, the `FS_SCAN_*` variables of `process.env` are
 * handed over as they are, with the two that place persisted scans
 * (`NATIVES_HOME`, else `HOME`); the library parses them.
 */
import { native } from './native.ts';
import { callNative } from './errors.ts';

const { initFsScanCachePolicy } = native;

/** The prefix of every scan-cache policy variable. */
const POLICY_PREFIX = 'FS_SCAN_';

/** The variables naming the natives home, where persisted scans are kept. */
const HOME_VARIABLES = ['NATIVES_HOME', 'HOME'];

let handedOver = false;

/** Hand `process.env`'s policy variables to the native side, once per process. */
export function handOverScanCachePolicy(): void {
  if (handedOver) return;
  handedOver = true;
  const variables: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    const wanted = name.startsWith(POLICY_PREFIX) || HOME_VARIABLES.includes(name);
    if (wanted && value !== undefined) variables[name] = value;
  }
  callNative('initFsScanCachePolicy', () => initFsScanCachePolicy(variables));
}
