//! Streaming results to a JS callback in batches, as they are decided.
//!
//! One JS call per result would cost more than producing it, so results
//! collect in a batch that is handed over when it is full or when its oldest
//! result has waited long enough (a flusher thread sees to the latter). Every streaming binding (glob, grep) uses
//! this one mechanism; the TypeScript layer unpacks batches, calls the user's
//! callback per result, and waits for the count of batches the final result
//! reports (a callback can trail the promise's resolution).

use std::{
    sync::{Condvar, Mutex, MutexGuard},
    time::{Duration, Instant},
};

use napi::{
    Status,
    bindgen_prelude::ToNapiValue,
    threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode},
};

/// A batch is handed over at this many results...
const BATCH_MAX_ITEMS: usize = 256;
/// ...or as soon as its oldest result has waited this long, so a slow search
/// still streams promptly.
const BATCH_MAX_DELAY: Duration = Duration::from_millis(10);

/// The JS callback receiving batches of `T`.
pub type BatchCallback<T> = ThreadsafeFunction<T, (), T, Status, false>;

/// Results under collection, and what they become in JS.
pub trait Batch: Default {
    /// One result, as the library hands it over.
    type Item<'a>;
    /// The batch as it crosses to JS.
    type Js: ToNapiValue + Send + 'static;
    /// Add a result.
    fn push(&mut self, item: Self::Item<'_>);
    /// Results held.
    fn len(&self) -> usize;
    /// `true` when nothing is held.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Convert for the callback.
    fn finish(self) -> Self::Js;
}

/// Run `work` with a [`Streamer`] feeding `callback`; returns what `work`
/// returned and how many batches were sent.
///
/// A flusher thread hands over a batch whose oldest result has waited
/// [`BATCH_MAX_DELAY`] even when no further result comes to push it out (a
/// search that finds two lines in its first file and then reads a huge one
/// still shows those two lines at once).
pub fn stream<B, R>(
    callback: &BatchCallback<B::Js>,
    work: impl FnOnce(&Streamer<'_, B>) -> R,
) -> (R, u32)
where
    B: Batch + Send,
{
    let streamer = Streamer {
        callback,
        pending: Mutex::new(Pending {
            batch: B::default(),
            opened_at: Instant::now(),
            sent: 0,
            done: false,
        }),
        wake: Condvar::new(),
    };
    std::thread::scope(|scope| {
        scope.spawn(|| streamer.flush_when_due());
        let result = work(&streamer);
        let sent = streamer.close();
        (result, sent)
    })
}

/// Sends results to a callback in batches, in order.
pub struct Streamer<'a, B: Batch> {
    callback: &'a BatchCallback<B::Js>,
    pending: Mutex<Pending<B>>,
    wake: Condvar,
}

struct Pending<B> {
    batch: B,
    opened_at: Instant,
    sent: u32,
    done: bool,
}

impl<B: Batch> Streamer<'_, B> {
    /// Add a result, handing the batch over when it is full.
    pub fn push(&self, item: B::Item<'_>) {
        let mut pending = self.lock();
        if pending.batch.is_empty() {
            pending.opened_at = Instant::now();
            self.wake.notify_one();
        }
        pending.batch.push(item);
        if pending.batch.len() >= BATCH_MAX_ITEMS {
            self.flush(&mut pending);
        }
    }

    /// The flusher thread: hand over batches that waited long enough.
    fn flush_when_due(&self) {
        let mut pending = self.lock();
        while !pending.done {
            let due = pending.opened_at + BATCH_MAX_DELAY;
            if !pending.batch.is_empty() && Instant::now() >= due {
                self.flush(&mut pending);
                continue;
            }
            let wait = due
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1));
            pending = self
                .wake
                .wait_timeout(pending, wait)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Hand over what is left and stop the flusher; how many batches were sent.
    fn close(&self) -> u32 {
        let mut pending = self.lock();
        self.flush(&mut pending);
        pending.done = true;
        self.wake.notify_one();
        pending.sent
    }

    /// Send under the lock, so batches reach JS in the order they filled.
    fn flush(&self, pending: &mut Pending<B>) {
        if !pending.batch.is_empty() {
            let batch = std::mem::take(&mut pending.batch).finish();
            self.callback
                .call(batch, ThreadsafeFunctionCallMode::Blocking);
            pending.sent += 1;
        }
    }

    fn lock(&self) -> MutexGuard<'_, Pending<B>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A plain list of already-converted results.
pub struct ItemBatch<T>(Vec<T>);

impl<T> Default for ItemBatch<T> {
    fn default() -> ItemBatch<T> {
        ItemBatch(Vec::new())
    }
}

impl<T: ToNapiValue + Send + 'static> Batch for ItemBatch<T> {
    type Item<'a> = T;
    type Js = Vec<T>;

    fn push(&mut self, item: T) {
        self.0.push(item);
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn finish(self) -> Vec<T> {
        self.0
    }
}
