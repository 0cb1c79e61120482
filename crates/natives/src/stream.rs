//! Streaming results to a JS callback in batches, as they are decided.
//!
//! One JS call per result would cost more than producing it, so results
//! collect in a batch that is handed over when it is full or when its oldest
//! result has waited long enough. Every streaming binding (glob, grep) uses
//! this one mechanism; the TypeScript layer unpacks batches, calls the user's
//! callback per result, and waits for the count of batches the final result
//! reports (a callback can trail the promise's resolution).

use std::time::{Duration, Instant};

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

/// Sends results to a callback in batches.
pub struct Streamer<'a, B: Batch> {
    callback: &'a BatchCallback<B::Js>,
    batch: B,
    opened_at: Instant,
    sent: u32,
}

impl<'a, B: Batch> Streamer<'a, B> {
    /// A streamer with nothing sent yet.
    pub fn new(callback: &'a BatchCallback<B::Js>) -> Streamer<'a, B> {
        Streamer {
            callback,
            batch: B::default(),
            opened_at: Instant::now(),
            sent: 0,
        }
    }

    /// Add a result, handing the batch over when it is due.
    pub fn push(&mut self, item: B::Item<'_>) {
        if self.batch.is_empty() {
            self.opened_at = Instant::now();
        }
        self.batch.push(item);
        if self.batch.len() >= BATCH_MAX_ITEMS || self.opened_at.elapsed() >= BATCH_MAX_DELAY {
            self.flush();
        }
    }

    /// Hand over what is left; returns how many batches were sent in all.
    pub fn finish(mut self) -> u32 {
        self.flush();
        self.sent
    }

    fn flush(&mut self) {
        if !self.batch.is_empty() {
            let batch = std::mem::take(&mut self.batch).finish();
            self.callback
                .call(batch, ThreadsafeFunctionCallMode::Blocking);
            self.sent += 1;
        }
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
