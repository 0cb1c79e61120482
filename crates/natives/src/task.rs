//! Two ways to run library work off the JS thread as a promise, panics
//! guarded and errors mapped to coded JS errors on the JS thread.
//!
//! - [`task`]: on napi's thread pool, for work that computes or does I/O of
//!   its own (a glob, a search, reading a file, applying changes). Every
//!   pool binding uses this one task type, so a task's guard, its single
//!   run and its error mapping are written once.
//! - [`on_own_thread`]: on a thread of its own, for work that waits on other
//!   processes (a busy lease, a claims zone lock, a cargo command). On the
//!   pool such work would hold a thread while it sleeps, and queued behind a
//!   busy pool it would not even start before its deadline, which counts
//!   from the JS call, had passed: the caller would hear of it late.
//!
//! napi types a generic task's promise as `Promise<unknown>`, so each binding
//! that returns one states its resolved type with `ts_return_type`.

use std::{
    sync::{Arc, Mutex},
    thread,
};

use napi::{
    Env, JsValue, Task,
    bindgen_prelude::{AsyncTask, PromiseRaw, ToNapiValue, TypeName},
};
use natives_core::{CancelToken as LibraryToken, Error, ErrorKind};

use crate::{
    cancel::CancelToken,
    errors::{guarded, to_js},
};

/// Library work, run once.
type Job<T> = Box<dyn FnOnce() -> Result<T, Error> + Send>;

/// A unit of library work to run on napi's thread pool.
pub struct Work<T> {
    work: Option<Job<T>>,
}

impl<T: ToNapiValue + TypeName + Send + 'static> Task for Work<T> {
    type Output = Result<T, Error>;
    type JsValue = T;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(run_once(&mut self.work))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<T> {
        output.map_err(|err| to_js(&env, &err))
    }
}

/// `work` as an `AsyncTask` (a promise on the JS side).
pub fn task<T>(work: impl FnOnce() -> Result<T, Error> + Send + 'static) -> AsyncTask<Work<T>>
where
    T: ToNapiValue + TypeName + Send + 'static,
{
    AsyncTask::new(Work {
        work: Some(Box::new(work)),
    })
}

/// [`task`] for a call that takes a token and a `timeoutMs`: the library
/// token (its deadline counting from now) and the converted `options` are
/// made here, on the JS thread and guarded, so a bad option rejects without
/// any work; `work` gets both on the pool.
pub fn cancellable_task<O, T>(
    token: Option<&CancelToken>,
    timeout_ms: Option<f64>,
    options: impl FnOnce() -> Result<O, Error>,
    work: impl FnOnce(O, LibraryToken) -> Result<T, Error> + Send + 'static,
) -> AsyncTask<Work<T>>
where
    O: Send + 'static,
    T: ToNapiValue + TypeName + Send + 'static,
{
    let prepared = guarded(|| {
        let token = CancelToken::for_call(token, timeout_ms)?;
        Ok((options()?, token))
    });
    task(move || {
        let (options, token) = prepared?;
        work(options, token)
    })
}

/// Run the job in `slot`, guarded: its outcome, or `EIO` when it already ran
/// (napi computes a task once; a second run would be a fault of ours).
fn run_once<T>(slot: &mut Option<Job<T>>) -> Result<T, Error> {
    match slot.take() {
        Some(work) => guarded(work),
        None => Err(Error::new(ErrorKind::Io, "internal error: task ran twice")),
    }
}

/// What settles a promise, run on the JS thread.
type Settle<T> = Box<dyn FnOnce(Env) -> napi::Result<T> + Send>;

/// A promise settled by `work`, which starts at once on a thread of its own.
pub fn on_own_thread<'env, T>(
    env: &'env Env,
    work: impl FnOnce() -> Result<T, Error> + Send + 'static,
) -> napi::Result<PromiseRaw<'env, T>>
where
    T: ToNapiValue + Send + 'static,
{
    let (deferred, promise) = env.create_deferred::<T, Settle<T>>()?;
    let deferred = Arc::new(Mutex::new(Some(deferred)));
    let for_thread = Arc::clone(&deferred);
    let started = spawn_guarded(work, move |outcome| {
        if let Some(deferred) = take(&for_thread) {
            deferred.resolve(settle(outcome));
        }
    });
    // A thread that could not start dropped its closure: the promise is
    // still ours to settle.
    if let Err(failure) = started
        && let Some(deferred) = take(&deferred)
    {
        deferred.resolve(settle(Err(failure)));
    }
    Ok(PromiseRaw::new(env.raw(), promise.raw()))
}

/// Start `work` on a thread of its own and hand its outcome, a panic turned
/// into `EIO`, to `deliver` there. When no thread can start, `deliver` is
/// dropped uncalled and the reason returned.
fn spawn_guarded<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, Error> + Send + 'static,
    deliver: impl FnOnce(Result<T, Error>) + Send + 'static,
) -> Result<(), Error> {
    thread::Builder::new()
        .name("natives-wait".to_owned())
        .spawn(move || deliver(guarded(work)))
        .map(drop)
        .map_err(|err| Error::new(ErrorKind::Io, format!("cannot start a thread: {err}")))
}

fn take<D>(slot: &Mutex<Option<D>>) -> Option<D> {
    slot.lock().unwrap_or_else(|p| p.into_inner()).take()
}

fn settle<T: Send + 'static>(outcome: Result<T, Error>) -> Settle<T> {
    Box::new(move |env| outcome.map_err(|err| to_js(&env, &err)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(run: impl FnOnce() -> Result<u32, Error> + Send + 'static) -> Option<Job<u32>> {
        Some(Box::new(run))
    }

    #[test]
    fn a_task_run_twice_fails_with_eio_the_second_time() {
        let mut slot = job(|| Ok(7));
        assert_eq!(run_once(&mut slot).unwrap(), 7);
        let again = run_once(&mut slot).unwrap_err();
        assert_eq!(again.code(), "EIO");
        assert!(again.message().contains("ran twice"), "{again}");
    }

    #[test]
    fn a_panic_on_a_thread_of_its_own_is_delivered_as_eio() {
        let (deliver, delivered) = std::sync::mpsc::channel();
        spawn_guarded(
            || -> Result<u32, Error> { panic!("fault while waiting") },
            move |outcome| deliver.send(outcome).unwrap(),
        )
        .unwrap();
        let err = delivered.recv().unwrap().unwrap_err();
        assert_eq!(err.code(), "EIO");
        assert!(err.message().contains("fault while waiting"), "{err}");
    }

    #[test]
    fn a_panic_in_a_task_fails_it_with_eio() {
        let err = run_once(&mut job(|| panic!("fault inside the task"))).unwrap_err();
        assert_eq!(err.code(), "EIO");
        assert!(err.message().contains("fault inside the task"), "{err}");
    }
}
