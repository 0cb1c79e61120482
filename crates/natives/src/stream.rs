//! Streaming results to a JS callback in batches, as they are decided.
//!
//! One JS call per result would cost more than producing it, so results
//! collect in a batch that is handed over when it is full or when its oldest
//! result has waited long enough (a flusher thread sees to the latter). Every streaming binding (glob, grep) uses
//! this one mechanism; the TypeScript layer unpacks batches, calls the user's
//! callback per result, and waits for the count of batches the final result
//! reports (a callback can trail the promise's resolution), so only batches
//! the callback accepted are counted. The flusher stops however the work ends,
//! a panic included: the panic then fails the call with `EIO` (see
//! [`crate::errors::guarded`]) instead of leaving its promise unsettled.

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

/// Where batches go: the JS callback (or, in tests, a plain collector).
pub trait Receiver<J>: Sync {
    /// Hand `batch` over; `false` when it could not be queued.
    fn deliver(&self, batch: J) -> bool;
}

impl<J: ToNapiValue + Send + 'static> Receiver<J> for BatchCallback<J> {
    fn deliver(&self, batch: J) -> bool {
        self.call(batch, ThreadsafeFunctionCallMode::Blocking) == Status::Ok
    }
}

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
/// `BATCH_MAX_DELAY` even when no further result comes to push it out (a
/// search that finds two lines in its first file and then reads a huge one
/// still shows those two lines at once).
pub fn stream<B, R>(
    callback: &dyn Receiver<B::Js>,
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
        let flusher = StopFlusherOnDrop(&streamer);
        let result = work(&streamer);
        let sent = flusher.0.close();
        (result, sent)
    })
}

/// Stops the flusher however the work ends. A panicking work never reaches
/// [`Streamer::close`], and the scope joins every thread before the panic
/// goes on (to become the call's `EIO`), so without this a panic would wait
/// forever for a flusher that never stops, and the call would never settle.
struct StopFlusherOnDrop<'s, 'a, B: Batch>(&'s Streamer<'a, B>);

impl<B: Batch> Drop for StopFlusherOnDrop<'_, '_, B> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Sends results to a callback in batches, in order.
pub struct Streamer<'a, B: Batch> {
    callback: &'a dyn Receiver<B::Js>,
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

    /// Hand over what is left and stop the flusher; how many batches were
    /// delivered.
    fn close(&self) -> u32 {
        let mut pending = self.lock();
        self.flush(&mut pending);
        pending.done = true;
        self.wake.notify_one();
        pending.sent
    }

    /// Stop the flusher without handing anything over.
    fn stop(&self) {
        self.lock().done = true;
        self.wake.notify_one();
    }

    /// Send under the lock, so batches reach JS in the order they filled.
    /// Only a batch the callback accepted is counted: the JS side waits for
    /// as many batches as the result reports.
    fn flush(&self, pending: &mut Pending<B>) {
        if !pending.batch.is_empty() {
            let batch = std::mem::take(&mut pending.batch).finish();
            if self.callback.deliver(batch) {
                pending.sent += 1;
            }
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

#[cfg(test)]
mod tests {
    use std::sync::{
        Mutex,
        atomic::{AtomicUsize, Ordering},
        mpsc,
    };

    use super::*;
    use crate::errors::guarded;

    /// Collects batches, refusing the call at position `refuse` (0-based).
    struct Collector {
        refuse: usize,
        calls: AtomicUsize,
        accepted: Mutex<Vec<Vec<u32>>>,
    }

    impl Collector {
        fn refusing(refuse: usize) -> Collector {
            Collector {
                refuse,
                calls: AtomicUsize::new(0),
                accepted: Mutex::new(Vec::new()),
            }
        }
    }

    impl Receiver<Vec<u32>> for Collector {
        fn deliver(&self, batch: Vec<u32>) -> bool {
            if self.calls.fetch_add(1, Ordering::SeqCst) == self.refuse {
                return false;
            }
            self.accepted.lock().unwrap().push(batch);
            true
        }
    }

    /// `work`'s answer, or a test failure if it has none within `limit`
    /// (a hang fails the test instead of stalling the suite).
    fn within<T: Send + 'static>(limit: Duration, work: impl FnOnce() -> T + Send + 'static) -> T {
        let (answer, answered) = mpsc::channel();
        std::thread::spawn(move || answer.send(work()));
        answered
            .recv_timeout(limit)
            .expect("no answer in time: the call would never settle")
    }

    #[test]
    fn a_panic_in_streaming_work_fails_the_call_with_eio() {
        let outcome = within(Duration::from_secs(10), || {
            let collector = Collector::refusing(usize::MAX);
            guarded(|| {
                let (pushed, _) = stream::<ItemBatch<u32>, _>(&collector, |streamer| {
                    streamer.push(1);
                    panic!("fault inside the walk");
                });
                Ok(pushed)
            })
        });
        let err = outcome.unwrap_err();
        assert_eq!(err.code(), "EIO");
        assert!(err.message().contains("fault inside the walk"), "{err}");
    }

    #[test]
    fn a_batch_that_could_not_be_delivered_is_not_counted() {
        let collector = Collector::refusing(1);
        let items = 3 * BATCH_MAX_ITEMS as u32;
        let ((), sent) = stream::<ItemBatch<u32>, _>(&collector, |streamer| {
            (0..items).for_each(|item| streamer.push(item));
        });
        let accepted = collector.accepted.lock().unwrap();
        assert!(collector.calls.load(Ordering::SeqCst) >= 3);
        assert_eq!(
            sent as usize,
            accepted.len(),
            "only delivered batches count"
        );
    }
}
