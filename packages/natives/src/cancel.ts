/**
 * Bridges an `AbortSignal` to a native `CancelToken` for one call: napi can
 * only cancel work that has not started, so running native work polls the
 * token, which the signal's `abort` event raises.
 */
import { native, type CancelToken } from './native.ts';

/** A call's cancellation: the token to pass down (if any) and how to stop it. */
export interface CallCancellation extends Disposable {
  /** `undefined` when nothing can cancel the call: the native side then skips polling a flag. */
  readonly token: CancelToken | undefined;
}

/**
 * A token cancelled when `signal` aborts, or created anyway when the caller
 * needs to stop the work itself (`needToken`; `token`, when the caller made
 * it already). Dispose to stop listening.
 */
export function linkSignal(signal: AbortSignal | undefined, needToken: boolean, token?: CancelToken): CallCancellation {
  if (!signal && !needToken) return { token: undefined, [Symbol.dispose]() {} };
  token ??= new native.CancelToken();
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
