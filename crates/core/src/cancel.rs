//! Cooperative cancellation: one token threaded through every long loop.
//!
//! A JS `AbortSignal` cannot interrupt native code, and napi only cancels
//! work that has not started. So every walk, filter and search loop polls a
//! [`CancelToken`]: an atomic flag the caller can raise from any thread, plus
//! an optional deadline. Polling is a relaxed atomic load and, with a
//! deadline, a monotonic clock read (tens of nanoseconds), cheap enough to do
//! per directory entry; that is what lets a walk stop within milliseconds.

use std::{
    sync::{
        Arc, Mutex, MutexGuard, TryLockError,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use crate::error::{Error, ErrorKind, Result};

/// Entries a filter loop goes through between two looks at the token:
/// about 50 µs of work, so an abort lands far inside its 50 ms promise
/// without slowing the loop.
pub const CANCEL_POLL_INTERVAL: usize = 1024;

/// The first sleep of a caller waiting for a lock another holds (see
/// [`CancelToken::lock`]); each further try sleeps twice as long, up to
/// [`LOCK_POLL_MAX`]: most holds end within a millisecond, and a long one
/// must not keep the waiter's core busy.
const LOCK_POLL_FIRST: Duration = Duration::from_micros(50);

/// The longest sleep between two tries of a lock: well inside the 50 ms
/// abort promise.
const LOCK_POLL_MAX: Duration = Duration::from_millis(2);

/// A cheap, cloneable cancellation flag with an optional deadline.
///
/// Clones share the flag: cancelling one cancels all.
#[derive(Clone, Debug, Default)]
pub struct CancelToken {
    flag: Arc<AtomicBool>,
    deadline: Option<Instant>,
}

impl CancelToken {
    /// A token that is never cancelled until [`CancelToken::cancel`] is called.
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// The same flag, with a deadline `timeout` from now (`None`: no
    /// deadline). A deadline past the end of the clock's range would never
    /// come, so it is none.
    pub fn with_timeout(mut self, timeout: Option<Duration>) -> CancelToken {
        self.deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        self
    }

    /// Raise the flag; every clone observes it on its next check.
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }

    /// `Err(ABORT_ERR)` once cancelled, `Err(ETIMEDOUT)` once the deadline
    /// has passed, `Ok` otherwise. Cancellation wins over the deadline.
    pub fn check(&self) -> Result<()> {
        if self.flag.load(Ordering::Relaxed) {
            return Err(Error::new(ErrorKind::Aborted, "the operation was aborted"));
        }
        match self.deadline {
            Some(deadline) if Instant::now() >= deadline => Err(Error::new(
                ErrorKind::TimedOut,
                "the operation timed out (timeoutMs)",
            )),
            _ => Ok(()),
        }
    }

    /// `true` once [`CancelToken::check`] would fail.
    pub fn is_stopped(&self) -> bool {
        self.check().is_err()
    }

    /// Time left before the deadline (zero once it passed); `None` without
    /// a deadline.
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline
            .map(|deadline| deadline.saturating_duration_since(Instant::now()))
    }

    /// `limit`, or the time left when the deadline comes first: how long a
    /// wait bounded by `limit` may last for this call.
    pub fn within(&self, limit: Duration) -> Duration {
        self.remaining().map_or(limit, |left| left.min(limit))
    }

    /// `mutex` locked, or this token's error once it stops first: a holder
    /// may keep a lock long (a refresh waiting for a stuck watch, a
    /// question to a slow process), and a waiter must still honour its
    /// abort and its deadline. A poisoned lock is taken as it is.
    pub fn lock<'m, T>(&self, mutex: &'m Mutex<T>) -> Result<MutexGuard<'m, T>> {
        let mut pause = LOCK_POLL_FIRST;
        loop {
            match mutex.try_lock() {
                Ok(guard) => return Ok(guard),
                Err(TryLockError::Poisoned(poisoned)) => return Ok(poisoned.into_inner()),
                Err(TryLockError::WouldBlock) => {
                    self.check()?;
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(LOCK_POLL_MAX);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lock held elsewhere is waited for until it is released, or until
    /// the waiter's token stops, whichever comes first.
    #[test]
    fn a_lock_is_waited_for_within_the_token() {
        let mutex = Arc::new(Mutex::new(0));
        let held = mutex.lock().unwrap();
        let token = CancelToken::new();
        let waiter = {
            let (mutex, token) = (Arc::clone(&mutex), token.clone());
            std::thread::spawn(move || token.lock(&mutex).map(|guard| *guard).map_err(|e| e.code()))
        };
        std::thread::sleep(Duration::from_millis(30));
        let cancelled = Instant::now();
        token.cancel();
        assert_eq!(waiter.join().unwrap(), Err("ABORT_ERR"));
        assert!(cancelled.elapsed() < Duration::from_millis(50));

        let waiter = {
            let mutex = Arc::clone(&mutex);
            std::thread::spawn(move || CancelToken::new().lock(&mutex).map(|guard| *guard).is_ok())
        };
        std::thread::sleep(Duration::from_millis(30));
        drop(held);
        assert!(waiter.join().unwrap());
    }

    #[test]
    fn cancel_is_shared_by_clones() {
        let token = CancelToken::new();
        let clone = token.clone();
        assert!(clone.check().is_ok());
        token.cancel();
        assert_eq!(clone.check().unwrap_err().code(), "ABORT_ERR");
    }

    #[test]
    fn deadline_reports_timeout() {
        assert_eq!(CancelToken::new().remaining(), None);
        let token = CancelToken::new().with_timeout(Some(Duration::ZERO));
        assert_eq!(token.remaining(), Some(Duration::ZERO));
        assert_eq!(token.check().unwrap_err().code(), "ETIMEDOUT");
        token.cancel();
        assert_eq!(token.check().unwrap_err().code(), "ABORT_ERR");
    }

    #[test]
    fn a_wait_ends_at_its_limit_or_the_deadline() {
        let limit = Duration::from_secs(5);
        assert_eq!(CancelToken::new().within(limit), limit);
        let soon = CancelToken::new().with_timeout(Some(Duration::from_millis(1)));
        assert!(soon.within(limit) <= Duration::from_millis(1));
        let late = CancelToken::new().with_timeout(Some(Duration::from_secs(60)));
        assert_eq!(late.within(limit), limit);
    }

    #[test]
    fn a_deadline_past_the_clock_s_range_is_none() {
        let token = CancelToken::new().with_timeout(Some(Duration::MAX));
        assert_eq!(token.remaining(), None);
        assert!(token.check().is_ok());
    }
}
