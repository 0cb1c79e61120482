//! The one place library errors become JS errors, and panics are stopped.
//!
//! A JS caller gets an `Error` whose `code` is the library's stable code
//! (`ENOENT`, `EINVAL`, `ABORT_ERR`, ...) and whose message names the input at
//! fault. napi's own `Status` cannot carry such codes, so the error object is
//! built here, on the JS thread, and handed to napi to throw or reject with.
//!
//! A panic that unwinds out of a binding aborts the whole JS process, so
//! every synchronous binding runs through [`on_js_thread`], every binding's
//! preparation on the JS thread (checking options, starting a deadline)
//! through [`guarded`], and the off-thread work of [`crate::task`] through
//! [`guarded`] as well: a fault becomes an `EIO` error instead.

use napi::{Env, JsError};
use natives_scan::{Error, ErrorKind};

/// A JS `Error` carrying `err`'s code and message.
pub fn to_js(env: &Env, err: &Error) -> napi::Error {
    let js = JsError::from(napi::Error::new(err.code(), err.message()));
    napi::Error::from(js.into_unknown(*env))
}

/// Run a synchronous binding's `work` on the JS thread: a library error
/// becomes a coded JS error, a panic an `EIO` one.
pub fn on_js_thread<T>(env: &Env, work: impl FnOnce() -> Result<T, Error>) -> napi::Result<T> {
    guarded(work).map_err(|err| to_js(env, &err))
}

/// Run `work`, turning a panic into an `EIO` error instead of letting it
/// unwind into the JS engine.
pub fn guarded<T>(work: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|panic| {
        let detail = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(Error::new(
            ErrorKind::Io,
            format!("internal error: {detail}"),
        ))
    })
}
