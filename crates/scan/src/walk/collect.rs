//! The parallel collector: what each walker thread finds goes into a batch
//! of its own (no lock per entry), sorted on that thread; the batches are
//! merged into one path-ordered list at the end.

use std::{
    fs,
    path::Path,
    sync::{Arc, Mutex},
};

use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};

use super::stat_at::StatAt;
use crate::{
    cancel::CancelToken,
    entries::{Entries, Entry, FileType, KEY_SEPARATOR, Unsorted, path_to_bytes},
    error::{Error, Result},
    unreadable::{self, Unreadable},
};

/// A predicate on entries as a walk meets them (mtime unknown).
pub(crate) type Wanted<'a> = dyn Fn(&Entry<'_>) -> bool + Sync + 'a;

/// Whose mtime a walk learns, by `lstat`.
#[derive(Clone, Copy)]
pub(super) enum Mtimes<'a> {
    /// Every entry's (types come from the same `lstat`).
    All,
    /// Nobody's: types come from the directory listings.
    None,
    /// Those of the entries this accepts; types come from the listings.
    Of(&'a Wanted<'a>),
}

/// Run `builder`'s walk of `root` (the root itself excluded), learning
/// `mtimes`: what each walker thread found.
pub(super) fn collect_batches(
    root: &Path,
    builder: &WalkBuilder,
    mtimes: Mtimes<'_>,
    token: &CancelToken,
) -> Result<Vec<Batch>> {
    token.check()?;
    // Fail loudly on an unreadable root instead of returning an empty list.
    fs::read_dir(root).map_err(|err| Error::io(root, err))?;
    let sink = Arc::new(Mutex::new(Vec::new()));
    let mut collector = CollectorBuilder {
        root_len: path_to_bytes(root).len(),
        mtimes,
        token,
        sink: Arc::clone(&sink),
    };
    builder.build_parallel().visit(&mut collector);
    drop(collector);
    token.check()?;
    let batches = std::mem::take(&mut *sink.lock().unwrap_or_else(|p| p.into_inner()));
    Ok(batches)
}

/// The entries of `batches`, in path order, with what they could not read.
pub(super) fn sorted(batches: &[Batch]) -> Entries {
    let unread = batches.iter().flat_map(|b| b.unreadable.iter().cloned());
    Entries::from_unsorted(batches.iter().flat_map(Batch::items).collect())
        .with_unreadable(unreadable::merged(unread.collect()))
}

/// One walker thread per core, as fd and ripgrep do; `ignore` alone would use two.
pub(crate) fn walker_threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().min(12))
}

struct CollectorBuilder<'a> {
    root_len: usize,
    mtimes: Mtimes<'a>,
    token: &'a CancelToken,
    sink: Arc<Mutex<Vec<Batch>>>,
}

impl<'s> ParallelVisitorBuilder<'s> for CollectorBuilder<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Collector {
            root_len: self.root_len,
            mtimes: self.mtimes,
            token: self.token,
            batch: Batch::default(),
            stat: StatAt::default(),
            sink: Arc::clone(&self.sink),
        })
    }
}

/// One per walker thread; hands its batch to the sink when the walk ends.
struct Collector<'a> {
    root_len: usize,
    mtimes: Mtimes<'a>,
    token: &'a CancelToken,
    batch: Batch,
    stat: StatAt,
    sink: Arc<Mutex<Vec<Batch>>>,
}

impl ParallelVisitor for Collector<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if self.token.is_stopped() {
            return WalkState::Quit;
        }
        match entry {
            Ok(entry) if entry.depth() > 0 => {
                let path = path_to_bytes(entry.path());
                let relative = &path[self.root_len..];
                if let Some((file_type, mtime_ms)) = self.describe(&entry, relative) {
                    self.batch.push(relative, file_type, mtime_ms);
                }
            }
            Ok(_) => {}
            Err(err) => self
                .batch
                .unreadable
                .extend(Unreadable::from_walk(&err, self.root_len)),
        }
        WalkState::Continue
    }
}

impl Collector<'_> {
    /// Type and mtime as `mtimes` asks, or `None` when the entry vanished.
    /// `relative` is its path below the root, after a `/`.
    fn describe(&mut self, entry: &DirEntry, relative: &[u8]) -> Option<(FileType, Option<i64>)> {
        let listed = entry.file_type().map(FileType::from_std);
        let wanted = match self.mtimes {
            Mtimes::All => true,
            Mtimes::None => false,
            Mtimes::Of(wanted) => {
                let path = relative.strip_prefix(b"/").unwrap_or(relative);
                listed.is_some_and(|file_type| wanted(&Entry::walked(path, file_type)))
            }
        };
        if wanted {
            self.stat.lstat(entry.path())
        } else {
            listed.map(|file_type| (file_type, None))
        }
    }
}

impl Drop for Collector<'_> {
    fn drop(&mut self) {
        // A stopped walk's entries are thrown away: sorting them (a quarter
        // of a large tree is tens of milliseconds) would only delay the
        // cancellation.
        if self.token.is_stopped() {
            return;
        }
        let mut batch = std::mem::take(&mut self.batch);
        batch.sort();
        self.sink
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(batch);
    }
}

/// A thread's entries: sort keys back to back in one buffer, no allocation
/// per entry; and what it could not read.
#[derive(Default)]
pub(super) struct Batch {
    keys: Vec<u8>,
    /// `(start, end)` of the key in `keys`, type and mtime.
    items: Vec<(usize, usize, FileType, Option<i64>)>,
    unreadable: Vec<Unreadable>,
}

impl Batch {
    /// Record `relative` (still starting with the separator after the root).
    pub(super) fn push(&mut self, relative: &[u8], file_type: FileType, mtime_ms: Option<i64>) {
        let relative = relative.strip_prefix(b"/").unwrap_or(relative);
        let separators = relative
            .iter()
            .map(|&b| if b == b'/' { KEY_SEPARATOR } else { b });
        let start = self.keys.len();
        self.keys.extend(separators);
        self.items
            .push((start, self.keys.len(), file_type, mtime_ms));
    }

    /// Sort by key, on the walker thread that built the batch, so the final
    /// sort only merges one sorted run per thread.
    pub(super) fn sort(&mut self) {
        let keys = &self.keys;
        self.items
            .sort_unstable_by(|a, b| keys[a.0..a.1].cmp(&keys[b.0..b.1]));
    }

    pub(super) fn items(&self) -> impl Iterator<Item = Unsorted<'_>> + '_ {
        self.items
            .iter()
            .map(|&(start, end, file_type, mtime_ms)| Unsorted {
                key: &self.keys[start..end],
                file_type,
                mtime_ms,
            })
    }
}
