//! The one place library errors become JS errors, and panics are stopped.
//!
//! A JS caller gets an `Error` whose `code` is the library's stable code
//! (`ENOENT`, `EINVAL`, `ABORT_ERR`, ...) and whose message names the input at
//! fault. napi's own `Status` cannot carry such codes, so the error object is
//! built here, on the JS thread, and handed to napi to throw or reject with.
//! What was wrong travels as fields beside the code, as Node's own errors
//! carry theirs: `path`, and `option` with its `value`.
//!
//! A panic that unwinds out of a binding aborts the whole JS process, so
//! every synchronous binding runs through [`on_js_thread`], every binding's
//! preparation on the JS thread (checking options, starting a deadline)
//! through [`guarded`], and the off-thread work of [`crate::task`] through
//! [`guarded`] as well: a fault becomes an `EIO` error instead.

use napi::{
    Env, JsError, Unknown, ValueType,
    bindgen_prelude::{JsObjectValue, Object},
};
use natives_scan::{Error, ErrorKind};

use crate::names::path_to_js;

/// A JS `Error` carrying `err`'s code and message, and what was wrong as
/// data: `path` (every byte kept, as paths cross), `option` and `value`.
pub fn to_js(env: &Env, err: &Error) -> napi::Error {
    napi::Error::from(error_object(env, err))
}

/// The JS `Error` [`to_js`] throws, as a value: for a conversion that must
/// not throw (one run by a callback's queue, where a throw would be
/// uncaught) and hands the error over in place of its value.
pub fn error_object<'env>(env: &'env Env, err: &Error) -> Unknown<'env> {
    let js = JsError::from(napi::Error::new(err.code(), err.message())).into_unknown(*env);
    // Best effort: an error object that cannot take a field still has its code and message.
    if let Some(mut object) = as_object(js) {
        let _ = attach_data(&mut object, err);
    }
    js
}

/// `value` as an object, when it is one (napi leaves no value behind when
/// the environment is tearing down).
fn as_object(value: Unknown<'_>) -> Option<Object<'_>> {
    match value.get_type() {
        // SAFETY: the value's type was just checked to be an object.
        Ok(ValueType::Object) => unsafe { value.cast::<Object>() }.ok(),
        _ => None,
    }
}

/// Set `err`'s path, option and value on the JS error `object`.
fn attach_data(object: &mut Object<'_>, err: &Error) -> napi::Result<()> {
    if let Some(path) = err.path() {
        object.set_named_property("path", path_to_js(path))?;
    }
    if let (Some(option), Some(value)) = (err.option(), err.value()) {
        object.set_named_property("option", option)?;
        object.set_named_property("value", value)?;
    }
    Ok(())
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
