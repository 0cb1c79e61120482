//! One way to run library work off the JS thread: a closure in an
//! `AsyncTask`, panics guarded, errors mapped on the JS thread.
//!
//! napi types a generic task's promise as `Promise<unknown>`, so each binding
//! that returns one states its resolved type with `ts_return_type`.

use napi::{
    Env, Task,
    bindgen_prelude::{AsyncTask, ToNapiValue, TypeName},
};
use natives_core::Error;

use crate::errors::{guarded, to_js};

/// A unit of library work to run on napi's thread pool.
pub struct Work<T> {
    work: Option<Box<dyn FnOnce() -> Result<T, Error> + Send>>,
}

impl<T: ToNapiValue + TypeName + Send + 'static> Task for Work<T> {
    type Output = Result<T, Error>;
    type JsValue = T;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let work = self.work.take();
        Ok(guarded(|| match work {
            Some(work) => work(),
            None => Err(Error::invalid("internal error: task ran twice")),
        }))
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
