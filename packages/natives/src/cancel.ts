/**
 * Bridges an `AbortSignal` to a native `CancelToken` for one call: napi can
 * only cancel work that has not started, so running native work polls the
 * token, which the signal's `abort` event raises.
 */
import { CancelToken } from '../index.js';

/** A token cancelled when `signal` aborts; dispose to stop listening. */
export function linkSignal(signal: AbortSignal | undefined): { token: CancelToken } & Disposable {
  const token = new CancelToken();
  if (!signal) return { token, [Symbol.dispose]() {} };
  const onAbort = () => token.cancel();
  signal.addEventListener('abort', onAbort, { once: true });
  return {
    token,
    [Symbol.dispose]() {
      signal.removeEventListener('abort', onAbort);
    },
  };
}
