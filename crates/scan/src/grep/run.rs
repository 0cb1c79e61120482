//! Searching the candidates in parallel while reporting in order.
//!
//! A limited search, or one of a short known list, starts on the calling
//! thread alone: it searches and emits candidates in order for a moment
//! ([`ALONE_FOR`]), and most such searches end there, without the cost of
//! starting threads and handing every report across a channel. What is
//! left when the moment is over goes to the workers.
//!
//! One worker per core takes the next candidate from the queue (a known
//! list, or a walk that is still finding files, see `queue`) and sends its
//! report back; the calling thread buffers reports that arrive early and
//! emits them strictly in candidate (path) order, so results, `offset`,
//! `max_count` and every counter are the same on every run whatever the
//! scheduling. As soon as the emitted results prove the limit is reached
//! (one result beyond `offset + max_count` exists), no further file is
//! handed out, the walk stops, files being searched are interrupted, and
//! reports for later files are dropped unread.
//!
//! Reports that arrive ahead of their turn wait in the emitter. Their bytes
//! are counted in a [`Backlog`]: once it holds more than its bound, workers
//! start no further file (after sending what they hold) until the oldest
//! file still being searched is done and its results, and those waiting
//! behind it, are emitted. Every file handed out before the pause is either
//! being searched or reported, so the emitter always gets what it waits for.

use std::{
    collections::VecDeque,
    fs::File,
    ops::ControlFlow,
    sync::{
        Arc, Condvar, Mutex, OnceLock,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
        mpsc,
    },
    thread,
    time::{Duration, Instant},
};

use grep_regex::RegexMatcher;
use grep_searcher::Searcher;

use super::{
    needs::Needs,
    options::{GrepMode, GrepOptions},
    outcome::{GrepMatch, GrepOutcome},
    prefilter::{Listed, Prefilter},
    queue::Queue,
    read::{Opener, Root},
    search::{
        FileReport, Opened, Shape, Stop, open_file, search_file, search_reader, search_slice,
        settle,
    },
    select::Candidates,
};
use crate::{
    cache::ScanCache,
    cancel::CancelToken,
    content_index::{Gap, Plan, ReadStart},
    error::Result,
    unreadable::Unreadable,
};

/// What one search needs, shared by every worker.
pub(super) struct Job<'a> {
    pub candidates: &'a Candidates,
    pub cache: &'a ScanCache,
    /// Open every file beneath the root without links (see `read`).
    pub confine: bool,
    /// Set once the pattern is compiled (`None`: it failed); workers wait
    /// for it while the walk already finds files.
    pub matcher: &'a OnceLock<Option<Arc<RegexMatcher>>>,
    pub shape: &'a Shape<'a>,
    pub token: &'a CancelToken,
    pub backlog: &'a Backlog,
    /// What the pattern needs of a file's content (see `prefilter`).
    pub needs: Option<Arc<Needs>>,
    /// What the content index remembers what a search finds by (see
    /// `learned_query`).
    pub query: Option<String>,
}

/// How often a worker paused by a full [`Backlog`] re-checks cancellation.
const BACKLOG_POLL: Duration = Duration::from_millis(5);

/// The bytes of reports sent ahead of their turn and not yet emitted.
/// Counting is lock-free (it happens per file); only a worker that has to
/// wait for room takes the lock, and it re-checks every [`BACKLOG_POLL`],
/// so a release that races its wait costs at most that.
pub(super) struct Backlog {
    held: AtomicUsize,
    max: usize,
    waiting: AtomicUsize,
    room: Mutex<()>,
    drained: Condvar,
    /// The most ever held, for tests of the bound.
    peak: AtomicUsize,
}

impl Backlog {
    pub(super) fn new(max: usize) -> Backlog {
        Backlog {
            held: AtomicUsize::new(0),
            max,
            waiting: AtomicUsize::new(0),
            room: Mutex::new(()),
            drained: Condvar::new(),
            peak: AtomicUsize::new(0),
        }
    }

    fn add(&self, bytes: usize) {
        let held = self.held.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak.fetch_max(held, Ordering::Relaxed);
    }

    fn release(&self, bytes: usize) {
        let held = self.held.fetch_sub(bytes, Ordering::Relaxed) - bytes;
        if held <= self.max && self.waiting.load(Ordering::Relaxed) > 0 {
            let _room = self.room.lock().unwrap_or_else(|p| p.into_inner());
            self.drained.notify_all();
        }
    }

    fn full(&self) -> bool {
        self.held.load(Ordering::Relaxed) > self.max
    }

    /// Wait until there is room again, or the search stops.
    fn wait_for_room(&self, stop: &Stop<'_>) {
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let mut room = self.room.lock().unwrap_or_else(|p| p.into_inner());
        while self.full() && !stop.halt.load(Ordering::Relaxed) && stop.token.check().is_ok() {
            room = self
                .drained
                .wait_timeout(room, BACKLOG_POLL)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        self.waiting.fetch_sub(1, Ordering::Relaxed);
    }

    /// The most bytes held at once so far.
    #[cfg(test)]
    pub(super) fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }
}

/// Search every candidate and emit the results in order; returns what the
/// walk finding them (if any) could not enter or read.
pub(super) fn run(job: &Job<'_>, emitter: &mut Emitter<'_>) -> Result<Vec<Unreadable>> {
    let root = job.candidates.root();
    let root = Root::open(root, job.confine)?;
    let prefilter = prefilter_for(job, &root);
    let plan = prefilter.as_ref().map(Prefilter::plan);
    let limited = job.shape.per_file_cap.is_some();
    let queue = Queue::new(job.candidates, limited, plan);
    let halt = AtomicBool::new(false);
    let stop = Stop {
        token: job.token,
        halt: &halt,
    };
    let search = Search {
        job,
        queue: &queue,
        root: &root,
        prefilter: prefilter.as_ref(),
        stop: &stop,
    };
    match search.alone(emitter, plan)? {
        Searched::Done => Ok(Vec::new()),
        Searched::From(first) => search.with_workers((emitter, first), plan),
    }
}

/// One search of a job's candidates: the calling thread's share first,
/// then the workers'.
struct Search<'a> {
    job: &'a Job<'a>,
    queue: &'a Queue<'a>,
    root: &'a Root,
    prefilter: Option<&'a Prefilter<'a>>,
    stop: &'a Stop<'a>,
}

#[cfg(test)]
std::thread_local! {
    /// Workers this thread's searches started, for tests of [`Search::alone`].
    pub(super) static WORKERS_STARTED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// [`ALONE_FOR`] for this thread's searches, so a test's outcome does
    /// not depend on the machine's speed.
    pub(super) static ALONE_FOR_IN_TESTS: std::cell::Cell<Option<Duration>> =
        const { std::cell::Cell::new(None) };
}

/// How long the calling thread searches alone: [`ALONE_FOR`].
fn alone_for() -> Duration {
    #[cfg(test)]
    if let Some(duration) = ALONE_FOR_IN_TESTS.get() {
        return duration;
    }
    ALONE_FOR
}

/// How long the calling thread searches a limited or short list on its
/// own before workers start. Starting them costs a thread each, and every
/// report then crosses a channel (a futex wake and a context switch):
/// measured on the bench's trees, more than searching the few files a
/// first page of results or a short list needs.
const ALONE_FOR: Duration = Duration::from_millis(1);

/// A list this short is searched alone first even without a limit.
const ALONE_FILES: usize = 64;

/// How far [`Search::alone`] got.
enum Searched {
    /// The search is over: every candidate is emitted, or the limit is.
    Done,
    /// The candidates from this index on are left for the workers.
    From(usize),
}

impl Search<'_> {
    /// Search and emit candidates in order on the calling thread for
    /// [`ALONE_FOR`], when the list is known, the pattern compiled, and the
    /// search limited or the list short: they come in order, so none waits.
    fn alone(&self, emitter: &mut Emitter<'_>, plan: Option<&Plan>) -> Result<Searched> {
        let (job, queue) = (self.job, self.queue);
        let Some(Some(matcher)) = job.matcher.get() else {
            return Ok(Searched::From(0));
        };
        let short = queue.capacity() <= ALONE_FILES;
        if !matches!(queue, Queue::Known { .. }) || !(short || job.shape.per_file_cap.is_some()) {
            return Ok(Searched::From(0));
        }
        let explicit = job.candidates.is_explicit();
        let mut opener = Opener::new(self.root, explicit);
        let mut searcher = job.shape.searcher(explicit);
        let started = Instant::now();
        let mut path = Vec::new();
        let mut next = 0;
        while next == 0 || started.elapsed() < alone_for() {
            let Some(index) = queue.take(&mut path, &mut || {}) else {
                finish(emitter, plan);
                return Ok(Searched::Done);
            };
            let tools = (&mut searcher, matcher.as_ref(), job.shape);
            let (stop, nothing_held) = (self.stop, &mut || {});
            let report = match self.prefilter {
                Some(prefilter) => {
                    prefilter.search_file(tools, &mut opener, (index, &path), stop, nothing_held)
                }
                None => search_file(tools, &mut opener, (&path, explicit), stop, nothing_held),
            }?;
            if let Some(plan) = plan {
                emitter.ruled_out(plan.gaps[index]);
            }
            next = index + 1;
            if !emitter.file(&path, report) {
                return Ok(Searched::Done);
            }
        }
        Ok(Searched::From(next))
    }

    /// For candidates a walk finds, that walk, on a thread of `scope`.
    fn start_walk<'s>(
        &'s self,
        scope: &'s thread::Scope<'s, '_>,
    ) -> Option<thread::ScopedJoinHandle<'s, Result<Vec<Unreadable>>>> {
        let (job, queue, halt) = (self.job, self.queue, self.stop.halt);
        let Candidates::Walk { key, filter } = job.candidates else {
            return None;
        };
        Some(scope.spawn(move || queue.fill(job.cache, key, filter, job.token, halt)))
    }

    /// Search the candidates from `first` on with one worker per core,
    /// emitting in order on the calling thread.
    fn with_workers(
        &self,
        (emitter, first): (&mut Emitter<'_>, usize),
        plan: Option<&Plan>,
    ) -> Result<Vec<Unreadable>> {
        let (job, queue) = (self.job, self.queue);
        let found = AtomicU64::new(0);
        let limit = job.shape.per_file_cap.map(|needed| Limit {
            found: &found,
            needed,
        });
        let cores = thread::available_parallelism().map_or(1, |n| n.get());
        let workers = cores.min(queue.capacity().saturating_sub(first).max(1));
        let read_ahead_bytes = AtomicUsize::new(0);
        thread::scope(|scope| {
            let walk = self.start_walk(scope);
            // The pattern compiles on a core of its own, and a walk takes one.
            let busy = 1 + usize::from(walk.is_some());
            let (sender, receiver) = mpsc::channel();
            for index in 0..workers {
                let worker = Worker {
                    job,
                    queue,
                    root: self.root,
                    prefilter: self.prefilter,
                    stop: self.stop,
                    reads_ahead: index + busy < cores,
                    read_ahead_bytes: &read_ahead_bytes,
                };
                let reports = Reports::new(sender.clone(), job.backlog, limit);
                #[cfg(test)]
                WORKERS_STARTED.set(WORKERS_STARTED.get() + 1);
                scope.spawn(move || worker.run(reports));
            }
            drop(sender);
            let emitted = emit_in_order(receiver, (emitter, first), job.backlog, plan);
            self.stop.halt.store(true, Ordering::Relaxed);
            queue.close();
            let walked = walk.map_or(Ok(Vec::new()), |walk| {
                walk.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            });
            emitted.and(walked)
        })
    }
}

/// The content index's part in a search: only a cached list is searched
/// often enough for an index to pay.
fn prefilter_for<'a>(job: &'a Job<'a>, root: &Root) -> Option<Prefilter<'a>> {
    let Candidates::Tree {
        entries,
        selected,
        stamp,
        ..
    } = job.candidates
    else {
        return None;
    };
    let listed = Listed {
        entries,
        selected,
        stamp: *stamp,
    };
    let (index, needs) = (job.cache.contents(), job.needs.as_deref());
    let query = job.query.as_deref();
    Prefilter::new(index, root, (needs, query), listed, job.shape)
}

/// One searching thread's share of a [`Job`].
struct Worker<'a> {
    job: &'a Job<'a>,
    queue: &'a Queue<'a>,
    root: &'a Root,
    /// Skips files that cannot match, for a search of a cached list.
    prefilter: Option<&'a Prefilter<'a>>,
    stop: &'a Stop<'a>,
    /// Whether this worker reads ahead while the pattern compiles.
    reads_ahead: bool,
    /// Bytes read ahead by all workers so far.
    read_ahead_bytes: &'a AtomicUsize,
}

/// Bytes all workers together may read ahead while the pattern compiles.
const READ_AHEAD_MAX: usize = 16 << 20;

/// A file read before the pattern was ready: its content, or the open file
/// when it is too large to hold (with when its read began, for
/// `prefilter`).
enum Ahead {
    Content(Vec<u8>),
    Stream(File, ReadStart),
}

impl Worker<'_> {
    /// Search candidates until there are none left, the search stops, or a
    /// file fails.
    fn run(self, mut reports: Reports) {
        let explicit = self.job.candidates.is_explicit();
        let mut opener = Opener::new(self.root, explicit);
        let ahead = self.read_ahead(&mut opener, &mut reports);
        let Some(matcher) = self.job.matcher.wait() else {
            return;
        };
        let mut searcher = self.job.shape.searcher(explicit);
        if !self.search_ahead(ahead, (&mut searcher, matcher), &opener, &mut reports) {
            return;
        }
        self.search_rest((&mut searcher, matcher), &mut opener, &mut reports);
        reports.send();
    }

    /// Search the files read ahead; `false` when the search is to stop.
    fn search_ahead(
        &self,
        ahead: Vec<(usize, Vec<u8>, Ahead)>,
        (searcher, matcher): (&mut Searcher, &RegexMatcher),
        opener: &Opener<'_>,
        reports: &mut Reports,
    ) -> bool {
        let (shape, stop) = (self.job.shape, self.stop);
        let explicit = self.job.candidates.is_explicit();
        for (index, path, file) in ahead {
            // A stop is seen between files read ahead, as between the others.
            if let Err(err) = stop.token.check() {
                self.hand_in(reports, index, &path, Err(err));
                return false;
            }
            let searched = match file {
                Ahead::Content(content) => search_slice(searcher, matcher, shape, &content, &path),
                Ahead::Stream(file, start) => match self.prefilter {
                    Some(prefilter) => prefilter.search_large(
                        file,
                        (index, &path, start),
                        (&mut *searcher, matcher, shape),
                        stop,
                    ),
                    None => search_reader(shape, explicit, matcher, file, stop, &path),
                },
            };
            let report = settle(searched, opener, &path, explicit, stop);
            if !self.hand_in(reports, index, &path, report) {
                return false;
            }
        }
        true
    }

    /// Take and search candidates until none are left or the search stops.
    fn search_rest(
        &self,
        (searcher, matcher): (&mut Searcher, &RegexMatcher),
        opener: &mut Opener<'_>,
        reports: &mut Reports,
    ) {
        let (shape, stop) = (self.job.shape, self.stop);
        let explicit = self.job.candidates.is_explicit();
        let mut path = Vec::new();
        while !stop.halt.load(Ordering::Relaxed) {
            let Some(index) = self.take(&mut path, reports) else {
                break;
            };
            // A streamed file may take long: results held go first, so
            // they reach the emitter now.
            let mut before_stream = || {
                reports.send_results();
            };
            let tools = (&mut *searcher, matcher, shape);
            let report = match self.prefilter {
                Some(prefilter) => {
                    prefilter.search_file(tools, opener, (index, &path), stop, &mut before_stream)
                }
                None => search_file(tools, opener, (&path, explicit), stop, &mut before_stream),
            };
            if !self.hand_in(reports, index, &path, report) {
                break;
            }
        }
    }

    /// Pass a file's report on, telling the queue when it has a result.
    fn hand_in(
        &self,
        reports: &mut Reports,
        index: usize,
        path: &[u8],
        report: Result<FileReport>,
    ) -> bool {
        if matches!(&report, Ok(found) if found.count > 0) {
            self.queue.note_result();
        }
        reports.add(index, path, report)
    }

    /// The next candidate; held reports go out before waiting for the walk
    /// or for room in the backlog, so the emitter is never kept waiting by
    /// an idle worker.
    fn take(&self, path: &mut Vec<u8>, reports: &mut Reports) -> Option<usize> {
        if self.job.backlog.full() {
            reports.send();
            self.job.backlog.wait_for_room(self.stop);
        }
        let mut flush = || {
            reports.send();
        };
        self.queue.take(path, &mut flush)
    }

    /// While the pattern compiles (a Unicode class can take ~100 ms), open
    /// and read the next candidates, within [`READ_AHEAD_MAX`] bytes shared
    /// by all workers, so the I/O of the first files is done by the time
    /// they can be searched. Only workers on cores the compile and the walk
    /// leave free do it, so neither is slowed. Files that need no search
    /// are reported right away (as are files the prefilter rules out); a
    /// large file ends the read-ahead.
    fn read_ahead(
        &self,
        opener: &mut Opener<'_>,
        reports: &mut Reports,
    ) -> Vec<(usize, Vec<u8>, Ahead)> {
        let mut ahead = Vec::new();
        if !self.reads_ahead {
            return ahead;
        }
        let mut path = Vec::new();
        while self.job.matcher.get().is_none() && !self.stop.halt.load(Ordering::Relaxed) {
            if self.read_ahead_bytes.load(Ordering::Relaxed) >= READ_AHEAD_MAX {
                break;
            }
            let Some(index) = self.take(&mut path, reports) else {
                break;
            };
            let file = match self.open_ahead(opener, index, &path, reports) {
                ControlFlow::Continue(Some(file)) => file,
                ControlFlow::Continue(None) => continue,
                ControlFlow::Break(()) => break,
            };
            let streamed = matches!(file, Ahead::Stream(..));
            ahead.push((index, path.clone(), file));
            if streamed {
                break;
            }
        }
        ahead
    }

    /// Open candidate `index` and read it ahead: the file to search later,
    /// `None` when it was reported at once (it needs no search, or the
    /// prefilter rules it out), or a break when it failed.
    fn open_ahead(
        &self,
        opener: &mut Opener<'_>,
        index: usize,
        path: &[u8],
        reports: &mut Reports,
    ) -> ControlFlow<(), Option<Ahead>> {
        let skipped = self
            .prefilter
            .and_then(|prefilter| prefilter.known(opener, index, path));
        if let Some(report) = skipped {
            reports.add(index, path, Ok(report));
            return ControlFlow::Continue(None);
        }
        let explicit = self.job.candidates.is_explicit();
        let start = self.prefilter.map_or_else(ReadStart::now, Prefilter::start);
        match open_file(opener, self.job.shape, path, explicit, self.stop) {
            Ok(Opened::Content(content, metadata)) => {
                if let Some(prefilter) = self.prefilter {
                    prefilter.consider(index, path, &metadata, start, (content, true));
                }
                self.read_ahead_bytes
                    .fetch_add(content.len(), Ordering::Relaxed);
                ControlFlow::Continue(Some(Ahead::Content(content.to_vec())))
            }
            Ok(Opened::Stream(file)) => ControlFlow::Continue(Some(Ahead::Stream(file, start))),
            Ok(Opened::Done(report)) => {
                reports.add(index, path, Ok(report));
                ControlFlow::Continue(None)
            }
            Err(err) => {
                reports.add(index, path, Err(err));
                ControlFlow::Break(())
            }
        }
    }
}

/// Reports a worker holds back before sending: a channel message per file
/// (most files have no match) costs several futex calls, more than
/// searching a small file.
const REPORTS_PER_MESSAGE: usize = 64;
/// ...but never longer than this, so results still stream promptly and the
/// in-order emitter is not kept waiting for a quiet worker's batch.
const REPORTS_MAX_DELAY: Duration = Duration::from_millis(5);

/// A limited search's results found so far by all workers, against the
/// number that proves the limit reached ([`Shape::per_file_cap`]).
///
/// The emitter can tell the limit is reached only once every file before
/// the last result it needs has reported. Until the workers together have
/// found that many results no held report can keep it waiting, so reports
/// without a match are batched as in any search (sent one by one, a search
/// that matches nothing cost a third more); from then on each is sent at
/// once, since while one is held every worker reads further files the
/// answer will not need (a limited search whose candidates are mostly the
/// index's false ones read twice the files it needed).
#[derive(Clone, Copy)]
struct Limit<'a> {
    found: &'a AtomicU64,
    needed: u64,
}

impl Limit<'_> {
    /// Count `results` more; whether the limit's worth has now been found.
    fn in_sight(self, results: u64) -> bool {
        let before = if results == 0 {
            self.found.load(Ordering::Relaxed)
        } else {
            self.found.fetch_add(results, Ordering::Relaxed)
        };
        before.saturating_add(results) >= self.needed
    }
}

/// A candidate's index, its path (only when it has results or failed), its report
/// and the bytes the report counts for in the [`Backlog`].
type Report = (usize, Vec<u8>, Result<FileReport>, usize);

/// One worker's reports on their way to the emitter.
struct Reports<'a> {
    sender: mpsc::Sender<Vec<Report>>,
    backlog: &'a Backlog,
    held: Vec<Report>,
    since: Instant,
    /// A limited search's count of results found (see [`Limit`]).
    limit: Option<Limit<'a>>,
    /// [`REPORTS_MAX_DELAY`] (a test holds reports longer, to see what
    /// else sends them).
    max_delay: Duration,
}

impl<'a> Reports<'a> {
    fn new(
        sender: mpsc::Sender<Vec<Report>>,
        backlog: &'a Backlog,
        limit: Option<Limit<'a>>,
    ) -> Reports<'a> {
        Reports {
            sender,
            backlog,
            held: Vec::new(),
            since: Instant::now(),
            limit,
            max_delay: REPORTS_MAX_DELAY,
        }
    }

    /// Hold `report`, sending when it carries an error, a full batch or an
    /// old one, or in a limited search when it carries results or once the
    /// results that prove the limit are found. `false` once the worker
    /// should stop.
    ///
    /// Results of a search without a limit wait in the batch too: sending
    /// each file's at once woke the emitter once per file with a match (a
    /// futex wake and a context switch each: 15 to 20 % of a search whose
    /// files mostly match), and a batch waits at most [`REPORTS_MAX_DELAY`]
    /// between small files, and one holding results never waits while a
    /// streamed (larger) file is searched: it goes before.
    fn add(&mut self, index: usize, path: &[u8], report: Result<FileReport>) -> bool {
        let (results, failed) = match &report {
            Ok(report) => (report.results(), false),
            Err(_) => (0, true),
        };
        let urgent = failed || (results > 0 && self.limit.is_some());
        if self.held.is_empty() {
            self.since = Instant::now();
        }
        let path = if results > 0 || failed {
            path.to_vec()
        } else {
            Vec::new()
        };
        let bytes = report
            .as_ref()
            .map_or(0, |found| found.held_bytes() + path.len());
        self.backlog.add(bytes);
        self.held.push((index, path, report, bytes));
        let limit_in_sight = self.limit.is_some_and(|limit| limit.in_sight(results));
        let due = urgent
            || limit_in_sight
            || self.held.len() >= REPORTS_PER_MESSAGE
            || self.since.elapsed() >= self.max_delay;
        (!due || self.send()) && !failed
    }

    /// Send what is held; `false` when the emitter has stopped listening.
    fn send(&mut self) -> bool {
        self.held.is_empty() || self.sender.send(std::mem::take(&mut self.held)).is_ok()
    }

    /// Send what is held when it holds results (a message per file
    /// streamed, for reports without any, cost searches of trees of many
    /// larger files 5 % and more).
    fn send_results(&mut self) {
        if self.held.iter().any(|(_, path, ..)| !path.is_empty()) {
            self.send();
        }
    }
}

/// Receive reports in any order, emit them in candidate order; stop at the
/// first error or once the emitter is done. Early reports wait in a window
/// starting at the next index to emit. With a `plan`, the files it ruled
/// out are counted as searched in their place in that order.
fn emit_in_order(
    receiver: mpsc::Receiver<Vec<Report>>,
    (emitter, mut next): (&mut Emitter<'_>, usize),
    backlog: &Backlog,
    plan: Option<&Plan>,
) -> Result<()> {
    let mut early: VecDeque<Option<(Vec<u8>, FileReport, usize)>> = VecDeque::new();
    for (index, path, report, bytes) in receiver.into_iter().flatten() {
        let slot = index - next;
        if early.len() <= slot {
            early.resize_with(slot + 1, || None);
        }
        early[slot] = Some((path, report?, bytes));
        while let Some(ready) = early.front_mut() {
            let Some((path, report, bytes)) = ready.take() else {
                break;
            };
            early.pop_front();
            if let Some(plan) = plan {
                emitter.ruled_out(plan.gaps[next]);
            }
            next += 1;
            let more = emitter.file(&path, report);
            backlog.release(bytes);
            if !more {
                return Ok(());
            }
        }
    }
    finish(emitter, plan);
    Ok(())
}

/// After the last report: count the files the plan ruled out past it.
fn finish(emitter: &mut Emitter<'_>, plan: Option<&Plan>) {
    if let Some(plan) = plan {
        emitter.ruled_out(plan.after);
        (emitter.on_progress)(&emitter.outcome);
    }
}

/// Takes what a [`FileObserver`](super::FileObserver) wrote for each
/// file, in path order.
pub(super) type OnObserved<'h> = &'h mut dyn FnMut(&[u8]);

/// Applies `mode`, `offset` and `max_count` to file reports taken in result
/// order, handing `on_match` each returned result as it is decided.
pub(super) struct Emitter<'a> {
    mode: GrepMode,
    /// See `Shape::binary_hides_file`.
    binary_hides_file: bool,
    /// Whether returned results are kept in the outcome (see
    /// [`GrepOptions::retain_matches`]).
    retain: bool,
    offset: usize,
    /// `offset + max_count`: results at or past this index are not returned.
    end: usize,
    /// Results seen so far, returned or skipped by `offset`.
    seen: usize,
    pub(super) outcome: GrepOutcome,
    on_match: &'a mut dyn FnMut(GrepMatch),
    /// Sees the counters after each file's report.
    on_progress: &'a mut dyn FnMut(&GrepOutcome),
    /// Sees what an observer wrote for each file (see
    /// [`super::grep_observed`]).
    pub(super) on_observed: Option<OnObserved<'a>>,
}

impl<'a> Emitter<'a> {
    pub(super) fn new(
        options: &GrepOptions,
        outcome: GrepOutcome,
        on_match: &'a mut dyn FnMut(GrepMatch),
        on_progress: &'a mut dyn FnMut(&GrepOutcome),
    ) -> Emitter<'a> {
        let offset = options.offset;
        Emitter {
            mode: options.mode,
            binary_hides_file: Shape::of(options).binary_hides_file(),
            retain: options.retain_matches,
            offset,
            end: options
                .max_count
                .map_or(usize::MAX, |max| offset.saturating_add(max)),
            seen: 0,
            outcome,
            on_match,
            on_progress,
            on_observed: None,
        }
    }

    /// Count the files the index ruled out (they come before the next
    /// report, or after the last) as reading them would have: searched
    /// without a match, binary where their search stops at a NUL.
    fn ruled_out(&mut self, gap: Gap) {
        self.outcome.files_searched += gap.files as usize;
        self.outcome.binary_files_skipped += gap.binary as usize;
    }

    /// Take the next file's report, then tell `on_progress`; `false` once
    /// the limit is reached.
    pub(super) fn file(&mut self, path: &[u8], report: FileReport) -> bool {
        let more = self.take(path, report);
        (self.on_progress)(&self.outcome);
        more
    }

    /// Count the next file's report and offer its results.
    fn take(&mut self, path: &[u8], report: FileReport) -> bool {
        if let Some(on_observed) = &mut self.on_observed
            && !report.observed.is_empty()
        {
            on_observed(&report.observed);
        }
        let outcome = &mut self.outcome;
        outcome.files_searched += usize::from(report.searched);
        outcome.binary_files_skipped += usize::from(report.binary);
        outcome.files_skipped_too_large += usize::from(report.too_large);
        if let Some(unreadable) = report.unreadable {
            outcome.files_unreadable += 1;
            outcome.unreadable.push(unreadable);
        }
        // As `rg --count` (and `rg -l -v`): a file whose search stopped at a
        // NUL has no count.
        if report.count == 0 || (self.binary_hides_file && report.binary) {
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
            if self.retain {
                self.outcome.matches.push(found.clone());
            }
            (self.on_match)(found);
        }
        self.seen += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nothing_found() -> Result<FileReport> {
        Ok(FileReport {
            searched: true,
            ..FileReport::default()
        })
    }

    /// `reports`, never sending for age alone.
    fn patient(reports: Reports<'_>) -> Reports<'_> {
        Reports {
            max_delay: Duration::from_secs(3600),
            ..reports
        }
    }

    fn found(results: usize) -> Result<FileReport> {
        Ok(FileReport {
            searched: true,
            count: results as u64,
            matches: vec![GrepMatch::default(); results],
            ..FileReport::default()
        })
    }

    /// A limited search's workers batch reports without a match until they
    /// have found the results that prove the limit together; from then on
    /// each is sent at once, the ones held first.
    #[test]
    fn a_limited_search_holds_reports_until_its_results_are_found() {
        let backlog = Backlog::new(usize::MAX);
        let counted = AtomicU64::new(0);
        let limit = Limit {
            found: &counted,
            needed: 3,
        };
        let (sender, receiver) = mpsc::channel();
        let mut quiet = patient(Reports::new(sender.clone(), &backlog, Some(limit)));
        let mut lucky = patient(Reports::new(sender, &backlog, Some(limit)));
        assert!(quiet.add(0, b"a.rs", nothing_found()));
        assert!(
            receiver.try_recv().is_err(),
            "held while results are missing"
        );
        assert!(lucky.add(1, b"b.rs", found(2)));
        assert_eq!(receiver.try_recv().expect("results go at once")[0].0, 1);
        assert!(quiet.add(2, b"c.rs", nothing_found()));
        assert!(
            receiver.try_recv().is_err(),
            "two of three found: still held"
        );
        assert!(lucky.add(3, b"d.rs", found(1)));
        assert_eq!(receiver.try_recv().expect("results go at once")[0].0, 3);
        assert!(quiet.add(4, b"e.rs", nothing_found()));
        let sent: Vec<usize> = receiver
            .try_recv()
            .expect("sent once the limit is in sight")
            .iter()
            .map(|report| report.0)
            .collect();
        assert_eq!(sent, [0, 2, 4]);
        assert!(quiet.add(5, b"f.rs", nothing_found()));
        assert_eq!(receiver.try_recv().expect("and at once after")[0].0, 5);
    }

    /// An unlimited search batches its reports, with results or without;
    /// an error goes at once.
    #[test]
    fn an_unlimited_search_batches_its_reports() {
        let backlog = Backlog::new(usize::MAX);
        let (sender, receiver) = mpsc::channel();
        let mut reports = patient(Reports::new(sender, &backlog, None));
        for index in 0..REPORTS_PER_MESSAGE - 1 {
            let report = if index % 2 == 0 {
                found(2)
            } else {
                nothing_found()
            };
            assert!(reports.add(index, b"a.rs", report));
        }
        assert!(receiver.try_recv().is_err());
        assert!(reports.add(REPORTS_PER_MESSAGE, b"b.rs", nothing_found()));
        let batch = receiver.try_recv().expect("a full batch");
        assert_eq!(batch.len(), REPORTS_PER_MESSAGE);
        assert_eq!(batch[0].1, b"a.rs", "a report with results keeps its path");
        assert!(reports.add(REPORTS_PER_MESSAGE + 2, b"d.rs", nothing_found()));
        reports.send_results();
        assert!(receiver.try_recv().is_err(), "no results held: still held");
        assert!(reports.add(REPORTS_PER_MESSAGE + 3, b"e.rs", found(1)));
        reports.send_results();
        assert_eq!(receiver.try_recv().expect("results held: sent").len(), 2);
        let failed = Err(crate::error::Error::invalid("bad"));
        assert!(!reports.add(REPORTS_PER_MESSAGE + 4, b"c.rs", failed));
        assert_eq!(receiver.try_recv().expect("an error at once").len(), 1);
    }
}
