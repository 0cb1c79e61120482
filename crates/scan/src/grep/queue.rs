//! The candidates in the order workers take them: a list known up front, or
//! the files of an ordered walk as it finds them.
//!
//! Without the cache, waiting for a whole walk before searching meant a
//! grep that needs only its first results listed the entire tree first.
//! Instead the walk ([`crate::walk::ordered`]) appends each completed run of
//! files, already in path order, and workers take the next file as soon as
//! it is known; a worker that catches up with the walk waits for the next
//! run. Indices are positions in path order either way, so the emitter's
//! order and the limit logic do not care where the files came from. For a
//! limited search that has found something the walk pauses once it is
//! [`AHEAD_MAX`] files ahead of the workers.

use std::sync::{
    Condvar, Mutex, MutexGuard,
    atomic::{AtomicBool, AtomicUsize, Ordering},
};

use super::select::{Candidates, FileFilter};
use crate::{
    cache::{ScanCache, ScanKey},
    cancel::CancelToken,
    content_index::Plan,
    entries::Entry,
    error::Result,
    unreadable::Unreadable,
};

/// Files the walk of a limited search may find ahead of the workers before
/// it pauses: enough to keep them busy while the next subtree is walked,
/// few enough that the search does not lose a core to walking far past the
/// files it needs. Only once the search has results can the limit be near:
/// until then (and always without a limit) every file found is one the
/// search needs, so the walk never pauses and walks on while the pattern
/// compiles.
const AHEAD_MAX: usize = 4096;

/// Where workers get the next candidate.
pub(super) enum Queue<'a> {
    /// Candidates known up front (the cache's list, or one named file),
    /// all of them or the items of an index's plan.
    Known {
        candidates: &'a Candidates,
        plan: Option<&'a Plan>,
        next: AtomicUsize,
    },
    /// Files of a walk still going.
    Walked(Feed),
}

/// The files an ordered walk has found so far, in path order.
#[derive(Default)]
pub(super) struct Feed {
    state: Mutex<Found>,
    /// Signalled when files are added (or the feed closes).
    grown: Condvar,
    /// Signalled when the paused walk may go on.
    drained: Condvar,
    /// Whether the walk pauses when far ahead (see [`AHEAD_MAX`]).
    pauses: bool,
    /// Whether any file searched so far had a result.
    has_results: AtomicBool,
}

#[derive(Default)]
struct Found {
    /// The relative paths back to back, and where each ends.
    text: Vec<u8>,
    ends: Vec<usize>,
    /// How many have been taken.
    taken: usize,
    /// No more will come: the walk ended or the search stopped.
    closed: bool,
    /// The walk is paused, waiting for the workers to catch up.
    paused: bool,
}

impl Found {
    fn ahead(&self) -> usize {
        self.ends.len() - self.taken
    }
}

impl<'a> Queue<'a> {
    /// The queue for `candidates` (only the items of `plan`, when the index
    /// planned the search); a `limited` search may not need them all.
    pub(super) fn new(
        candidates: &'a Candidates,
        limited: bool,
        plan: Option<&'a Plan>,
    ) -> Queue<'a> {
        match candidates {
            Candidates::Walk { .. } => Queue::Walked(Feed {
                pauses: limited,
                ..Feed::default()
            }),
            _ => Queue::Known {
                candidates,
                plan,
                next: AtomicUsize::new(0),
            },
        }
    }

    /// Most candidates there may be (workers beyond it would idle).
    pub(super) fn capacity(&self) -> usize {
        match self {
            Queue::Known {
                plan: Some(plan), ..
            } => plan.items.len(),
            Queue::Known { candidates, .. } => candidates.len(),
            Queue::Walked(_) => usize::MAX,
        }
    }

    /// The next candidate's index, with its relative path written to
    /// `path`; `None` once there are no more. Before waiting for a walk to
    /// find more, `before_wait` runs.
    pub(super) fn take(&self, path: &mut Vec<u8>, before_wait: &mut dyn FnMut()) -> Option<usize> {
        path.clear();
        match self {
            Queue::Known {
                candidates,
                plan,
                next,
            } => {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let candidate = match plan {
                    Some(plan) => plan.items.get(index)?.candidate as usize,
                    None => index,
                };
                let found = candidates.path(candidate)?;
                path.extend_from_slice(found);
                Some(index)
            }
            Queue::Walked(feed) => feed.take(path, before_wait),
        }
    }

    /// Run the walk that fills a [`Queue::Walked`] queue, then close it.
    /// Returns the walk's error, if any, else what it could not enter or
    /// read (see [`FileFilter::reports`]); `halt` stops it early.
    pub(super) fn fill(
        &self,
        cache: &ScanCache,
        key: &ScanKey,
        filter: &FileFilter,
        token: &CancelToken,
        halt: &AtomicBool,
    ) -> Result<Vec<Unreadable>> {
        let Queue::Walked(feed) = self else {
            return Ok(Vec::new());
        };
        let mut on_run = |run: &mut dyn Iterator<Item = Entry<'_>>| {
            feed.push(run.filter(|entry| filter.accepts(entry)));
        };
        let walked = cache.walk_in_order(
            key,
            filter.needs().node_modules,
            filter.overrides(),
            token,
            halt,
            &mut on_run,
        );
        feed.close();
        walked.map(|unreadable| filter.reports(unreadable))
    }

    /// A searched file had a result: from now on a limited search's walk
    /// may pause ahead of the workers.
    pub(super) fn note_result(&self) {
        if let Queue::Walked(feed) = self {
            feed.has_results.store(true, Ordering::Relaxed);
        }
    }

    /// No more candidates will be taken: wake every waiting worker.
    pub(super) fn close(&self) {
        if let Queue::Walked(feed) = self {
            feed.close();
        }
    }
}

impl Feed {
    fn lock(&self) -> MutexGuard<'_, Found> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Append a run of files; then, if the walk pauses and is too far
    /// ahead, wait until the workers have caught up.
    fn push<'e>(&self, files: impl Iterator<Item = Entry<'e>>) {
        let mut found = self.lock();
        let before = found.ends.len();
        for file in files {
            found.text.extend_from_slice(file.path);
            let end = found.text.len();
            found.ends.push(end);
        }
        if found.ends.len() > before {
            self.grown.notify_all();
        }
        if self.pauses && self.has_results.load(Ordering::Relaxed) && found.ahead() > AHEAD_MAX {
            found.paused = true;
            while found.ahead() > AHEAD_MAX && !found.closed {
                found = self
                    .drained
                    .wait(found)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
            }
            found.paused = false;
        }
    }

    fn close(&self) {
        self.lock().closed = true;
        self.grown.notify_all();
        self.drained.notify_all();
    }

    fn take(&self, path: &mut Vec<u8>, before_wait: &mut dyn FnMut()) -> Option<usize> {
        let mut found = self.lock();
        loop {
            let index = found.taken;
            if let Some(&end) = found.ends.get(index) {
                let start = index.checked_sub(1).map_or(0, |prev| found.ends[prev]);
                path.extend_from_slice(&found.text[start..end]);
                found.taken += 1;
                if found.paused && found.ahead() <= AHEAD_MAX {
                    self.drained.notify_one();
                }
                return Some(index);
            }
            if found.closed {
                return None;
            }
            drop(found);
            before_wait();
            found = self.lock();
            if found.taken >= found.ends.len() && !found.closed {
                found = self
                    .grown
                    .wait(found)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
            }
        }
    }
}
