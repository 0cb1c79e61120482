//! Searching the candidates in parallel while reporting in order.
//!
//! One worker per core pulls the next file index from a shared counter and
//! sends its report back; the calling thread buffers reports that arrive
//! early and emits them strictly in candidate (path) order, so results,
//! `offset`, `max_count` and every counter are the same on every run
//! whatever the scheduling. As soon as the emitted results prove the limit
//! is reached (one result beyond `offset + max_count` exists), no further
//! file is handed out, files being searched are interrupted, and reports
//! for later files are dropped unread.

use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicBool, AtomicUsize, Ordering},
        mpsc,
    },
    thread,
    time::{Duration, Instant},
};

use grep_regex::RegexMatcher;

use super::{
    GrepMatch, GrepMode, GrepOutcome,
    read::{Opener, Root},
    search::{FileReport, Shape, Stop, search_file},
    select::Candidates,
};
use crate::{
    cancel::CancelToken,
    error::{Error, Result},
};

/// Search every candidate and emit the results in order.
pub(super) fn run(
    candidates: &Candidates,
    matcher: &RegexMatcher,
    shape: &Shape,
    emitter: &mut Emitter<'_>,
    token: &CancelToken,
) -> Result<()> {
    let count = candidates.len();
    let workers = thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(count);
    let root = Root::open(candidates.root()).map_err(|err| Error::io(candidates.root(), err))?;
    let next = AtomicUsize::new(0);
    let halt = AtomicBool::new(false);
    let stop = Stop { token, halt: &halt };
    thread::scope(|scope| {
        let (sender, receiver) = mpsc::channel();
        for _ in 0..workers {
            let sender = sender.clone();
            let (next, stop, root) = (&next, &stop, &root);
            scope.spawn(move || {
                let mut searcher = shape.searcher(candidates.is_explicit());
                let mut opener = Opener::new(root);
                let mut batch = Reports::new(sender);
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= count || stop.halt.load(Ordering::Relaxed) {
                        break;
                    }
                    let report = search_file(
                        &mut searcher,
                        &mut opener,
                        matcher,
                        shape,
                        candidates.path(index),
                        candidates.is_explicit(),
                        stop,
                    );
                    if !batch.add(index, report) {
                        break;
                    }
                }
                batch.send();
            });
        }
        drop(sender);
        let outcome = emit_in_order(candidates, receiver, emitter);
        halt.store(true, Ordering::Relaxed);
        outcome
    })
}

/// Receive reports in any order, emit them in candidate order; stop at the
/// first error or once the emitter is done.
/// Reports a worker holds back before sending: a channel message per file
/// (most files have no match) costs several futex calls, more than
/// searching a small file.
const REPORTS_PER_MESSAGE: usize = 64;
/// ...but never longer than this, so results still stream promptly and the
/// in-order emitter is not kept waiting for a quiet worker's batch.
const REPORTS_MAX_DELAY: Duration = Duration::from_millis(5);

type Report = (usize, Result<FileReport>);

/// One worker's reports on their way to the emitter.
struct Reports {
    sender: mpsc::Sender<Vec<Report>>,
    held: Vec<Report>,
    since: Instant,
}

impl Reports {
    fn new(sender: mpsc::Sender<Vec<Report>>) -> Reports {
        Reports {
            sender,
            held: Vec::new(),
            since: Instant::now(),
        }
    }

    /// Hold `report`, sending when it carries results, an error, a full
    /// batch or an old one. `false` once the worker should stop.
    fn add(&mut self, index: usize, report: Result<FileReport>) -> bool {
        let (urgent, failed) = match &report {
            Ok(report) => (report.count > 0, false),
            Err(_) => (true, true),
        };
        if self.held.is_empty() {
            self.since = Instant::now();
        }
        self.held.push((index, report));
        let due = urgent
            || self.held.len() >= REPORTS_PER_MESSAGE
            || self.since.elapsed() >= REPORTS_MAX_DELAY;
        (!due || self.send()) && !failed
    }

    /// Send what is held; `false` when the emitter has stopped listening.
    fn send(&mut self) -> bool {
        self.held.is_empty() || self.sender.send(std::mem::take(&mut self.held)).is_ok()
    }
}

fn emit_in_order(
    candidates: &Candidates,
    receiver: mpsc::Receiver<Vec<Report>>,
    emitter: &mut Emitter<'_>,
) -> Result<()> {
    let mut early = HashMap::new();
    let mut next = 0;
    for (index, report) in receiver.into_iter().flatten() {
        early.insert(index, report?);
        while let Some(report) = early.remove(&next) {
            if !emitter.file(candidates.path(next), report) {
                return Ok(());
            }
            next += 1;
        }
    }
    Ok(())
}

/// Applies `mode`, `offset` and `max_count` to file reports taken in result
/// order, calling `on_match` for each returned result as it is decided.
pub(super) struct Emitter<'a> {
    mode: GrepMode,
    offset: usize,
    /// `offset + max_count`: results at or past this index are not returned.
    end: usize,
    /// Results seen so far, returned or skipped by `offset`.
    seen: usize,
    pub(super) outcome: GrepOutcome,
    on_match: &'a mut dyn FnMut(&GrepMatch),
}

impl<'a> Emitter<'a> {
    pub(super) fn new(
        mode: GrepMode,
        offset: usize,
        max_count: Option<usize>,
        outcome: GrepOutcome,
        on_match: &'a mut dyn FnMut(&GrepMatch),
    ) -> Emitter<'a> {
        Emitter {
            mode,
            offset,
            end: max_count.map_or(usize::MAX, |max| offset.saturating_add(max)),
            seen: 0,
            outcome,
            on_match,
        }
    }

    /// Take the next file's report; `false` once the limit is reached.
    pub(super) fn file(&mut self, path: &[u8], report: FileReport) -> bool {
        let outcome = &mut self.outcome;
        outcome.files_searched += usize::from(report.searched);
        outcome.binary_files_skipped += usize::from(report.binary);
        outcome.files_skipped_too_large += usize::from(report.too_large);
        outcome.files_unreadable += usize::from(report.unreadable);
        // As `rg --count`: a file whose search stopped at a NUL has no count.
        if report.count == 0 || (self.mode == GrepMode::Count && report.binary) {
            return true;
        }
        outcome.files_with_matches += 1;
        match self.mode {
            GrepMode::Content => {
                outcome.total_matches += report.count;
                report.matches.into_iter().all(|found| {
                    self.offer(GrepMatch {
                        path: path.to_vec(),
                        ..found
                    })
                })
            }
            GrepMode::Count => {
                outcome.total_matches += report.count;
                self.offer(GrepMatch::file(path, report.count))
            }
            GrepMode::FilesWithMatches => {
                outcome.total_matches += 1;
                self.offer(GrepMatch::file(path, 0))
            }
        }
    }

    /// One result in order: skipped by `offset`, returned, or proof that the
    /// limit is reached (`false`).
    fn offer(&mut self, found: GrepMatch) -> bool {
        if self.seen >= self.end {
            self.outcome.limit_reached = true;
            return false;
        }
        if self.seen >= self.offset {
            (self.on_match)(&found);
            self.outcome.matches.push(found);
        }
        self.seen += 1;
        true
    }
}
