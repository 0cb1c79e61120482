//! `CancelToken`: how a JS `AbortSignal` reaches running native work.
//!
//! napi only cancels work that has not started, so the TypeScript layer
//! creates a token per call, wires `signal`'s `abort` event to
//! [`CancelToken::cancel`], and passes the token in; the library polls it.

use napi::Env;
use napi_derive::napi;

use crate::errors::on_js_thread;

/// A cancellation flag shared with native work. Call `cancel()` to stop the
/// work that holds it; the promise then rejects with code `ABORT_ERR`.
#[napi]
#[derive(Default)]
pub struct CancelToken {
    inner: natives_scan::CancelToken,
}

#[napi]
impl CancelToken {
    /// A fresh, un-cancelled token.
    #[napi(constructor)]
    pub fn new(env: Env) -> napi::Result<CancelToken> {
        on_js_thread(&env, || Ok(CancelToken::default()))
    }

    /// Stop every native call holding this token, within milliseconds.
    #[napi]
    pub fn cancel(&self, env: Env) -> napi::Result<()> {
        on_js_thread(&env, || {
            self.inner.cancel();
            Ok(())
        })
    }

    /// The library token for one call: this flag (if the caller passed a
    /// token) with the call's `timeoutMs` deadline, counted from now.
    pub(crate) fn for_call(
        token: Option<&CancelToken>,
        timeout_ms: Option<f64>,
    ) -> Result<natives_scan::CancelToken, natives_scan::Error> {
        CancelToken::with_deadline(token, "timeoutMs", timeout_ms)
    }

    /// [`CancelToken::for_call`] for a deadline given by the option `name`
    /// (`budgetMs`, say). Called by a binding before it hands its work to
    /// another thread, so the deadline counts from the JS call.
    pub(crate) fn with_deadline(
        token: Option<&CancelToken>,
        name: &'static str,
        milliseconds: Option<f64>,
    ) -> Result<natives_scan::CancelToken, natives_scan::Error> {
        let timeout = crate::options::milliseconds(name, milliseconds)?;
        let base = token.map(|t| t.inner.clone()).unwrap_or_default();
        Ok(base.with_timeout(timeout))
    }
}
