//! Backpressure for a stream read by pulling (`for await`): the native side
//! hands JS a batch only while the consumer has room for it.
//!
//! A callback stream hands every batch over as soon as it fills: the caller's
//! callback runs at once and keeps up by construction. An iterator's consumer
//! takes results when it wants them, so without a bound a slow one would let
//! the search queue its whole answer in JS memory. Here the consumer grants a
//! window of batches ([`StreamPacer`]); a batch handed over takes one place,
//! and the consumer gives it back when it takes the batch from its queue. With
//! the window full the native work waits (on its pool thread) before handing
//! over its next batch, so at most the window's batches wait in JS, plus the
//! one the native side is filling. The wait looks at the call's cancel token
//! every `CANCEL_WAIT_SLICE`, so a `break` (which cancels), an abort or a
//! deadline ends it within milliseconds.

use std::{
    sync::{
        Arc, Condvar, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use napi::{Env, bindgen_prelude::ToNapiValue};
use napi_derive::napi;
use natives_core::CancelToken as LibraryToken;
use natives_scan::Error;

use crate::{
    errors::on_js_thread,
    stream::{BatchCallback, Receiver},
};

/// How long a waiting stream sleeps between two looks at its cancel token.
const CANCEL_WAIT_SLICE: Duration = Duration::from_millis(5);

/// Batches handed to JS that the consumer has not taken yet, and the bound.
#[derive(Debug)]
pub struct Window {
    free: Mutex<u32>,
    freed: Condvar,
}

impl Window {
    /// A window with room for `batches` batches.
    pub fn new(batches: u32) -> Window {
        Window {
            free: Mutex::new(batches),
            freed: Condvar::new(),
        }
    }

    /// Take a place for one batch, waiting while there is none; `false`
    /// (nothing taken) once `token` is cancelled or past its deadline.
    pub fn admit(&self, token: &LibraryToken) -> bool {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if token.is_stopped() {
                return false;
            }
            if *free > 0 {
                *free -= 1;
                return true;
            }
            free = self
                .freed
                .wait_timeout(free, CANCEL_WAIT_SLICE)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// The consumer took a batch: its place is free again.
    pub fn release(&self) {
        *self.free.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.freed.notify_one();
    }
}

/// How many batches of a pulled stream may wait in JS, untaken. Pass it to
/// `nativeGlob`/`nativeGrep` with the batch callback, and call `taken()`
/// each time the consumer takes a batch from its queue.
#[napi]
pub struct StreamPacer {
    window: Arc<Window>,
}

#[napi]
impl StreamPacer {
    /// Room for `batches` untaken batches (at least 1).
    #[napi(constructor)]
    pub fn new(env: Env, batches: u32) -> napi::Result<StreamPacer> {
        on_js_thread(&env, || {
            if batches == 0 {
                let message = "a stream's window must hold at least one batch";
                return Err(Error::invalid(message).with_option("batches", "0"));
            }
            Ok(StreamPacer {
                window: Arc::new(Window::new(batches)),
            })
        })
    }

    /// The consumer took a batch from its queue: one more may come.
    #[napi]
    pub fn taken(&self) {
        self.window.release();
    }

    /// The window, shared with the work that waits on it.
    pub(crate) fn window(&self) -> Arc<Window> {
        Arc::clone(&self.window)
    }
}

/// Where a stream's batches go: the JS callback, and the consumer's window
/// when the stream is pulled.
pub struct Outlet<J: ToNapiValue + Send + 'static> {
    callback: BatchCallback<J>,
    window: Option<Arc<Window>>,
}

impl<J: ToNapiValue + Send + 'static> Outlet<J> {
    /// The outlet of a call given `callback` (none: the call does not
    /// stream) and, for a pulled stream, `pacer`.
    pub fn new(
        callback: Option<BatchCallback<J>>,
        pacer: Option<&StreamPacer>,
    ) -> Option<Outlet<J>> {
        callback.map(|callback| Outlet {
            callback,
            window: pacer.map(StreamPacer::window),
        })
    }

    /// The receiver for one run: each batch waits for room, until `token`
    /// stops the run.
    pub fn paced<'a>(&'a self, token: &'a LibraryToken) -> Paced<'a, J> {
        Paced {
            callback: &self.callback,
            window: self.window.as_deref(),
            token,
            refused: AtomicBool::new(false),
        }
    }
}

/// The batch callback, paced by the consumer's window when it has one.
pub struct Paced<'a, J: ToNapiValue + Send + 'static> {
    callback: &'a BatchCallback<J>,
    window: Option<&'a Window>,
    token: &'a LibraryToken,
    /// A batch was dropped because the token stopped the wait for room.
    refused: AtomicBool,
}

impl<J: ToNapiValue + Send + 'static> Paced<'_, J> {
    /// `Err` (the token's `ABORT_ERR` or `ETIMEDOUT`) when the token stopped
    /// a wait for room, so a batch was dropped: the run's answer lacks it
    /// and must not resolve as whole, however the library's run ended (a
    /// grep may finish the files it had in hand without looking at the
    /// token again).
    pub fn interrupted(&self) -> Result<(), Error> {
        match self.refused.load(Ordering::Relaxed) {
            true => self.token.check(),
            false => Ok(()),
        }
    }
}

impl<J: ToNapiValue + Send + 'static> Receiver<J> for Paced<'_, J> {
    fn deliver(&self, batch: J) -> bool {
        if self.window.is_some_and(|window| !window.admit(self.token)) {
            self.refused.store(true, Ordering::Relaxed);
            return false;
        }
        self.callback.deliver(batch)
    }
}

#[cfg(test)]
mod tests {
    use std::{sync::mpsc, thread};

    use super::*;

    /// Far longer than any admission takes once there is room.
    const PATIENCE: Duration = Duration::from_secs(20);

    #[test]
    fn a_full_window_holds_the_next_batch_until_the_consumer_takes_one() {
        let window = Arc::new(Window::new(2));
        let token = LibraryToken::new();
        let (admitted, admissions) = mpsc::channel();
        let producer = {
            let (window, token) = (Arc::clone(&window), token.clone());
            thread::spawn(move || {
                for batch in 0..3 {
                    assert!(window.admit(&token));
                    admitted.send(batch).unwrap();
                }
            })
        };
        assert_eq!(admissions.recv_timeout(PATIENCE), Ok(0));
        assert_eq!(admissions.recv_timeout(PATIENCE), Ok(1));
        // However long it is given, the third batch waits: the window is full.
        let third = admissions.recv_timeout(Duration::from_millis(100));
        assert_eq!(third, Err(mpsc::RecvTimeoutError::Timeout));
        window.release();
        assert_eq!(admissions.recv_timeout(PATIENCE), Ok(2));
        producer.join().unwrap();
    }

    #[test]
    fn cancelling_ends_a_wait_without_taking_a_place() {
        let window = Arc::new(Window::new(1));
        let token = LibraryToken::new();
        assert!(window.admit(&token));
        let waiter = {
            let (window, token) = (Arc::clone(&window), token.clone());
            thread::spawn(move || window.admit(&token))
        };
        token.cancel();
        assert!(!waiter.join().unwrap(), "a cancelled wait admits nothing");
        let deadline = LibraryToken::new().with_timeout(Some(Duration::ZERO));
        assert!(!window.admit(&deadline), "a passed deadline ends it too");
    }
}
