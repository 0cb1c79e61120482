//! The run registry: the tasks, their runs and the worktrees each run made,
//! as an orchestrator records them, under the natives home.
//!
//! ```text
//! <home>/worktrees/                           0700
//!   registry.lock                             serialises creating tasks and runs
//!   tasks/<task slug>/task.json               a task
//!   tasks/<task slug>/runs/<run slug>.json    each run recorded for it (its history)
//!   locks/<run slug>.owner.lock               held for every read-modify-write of the run
//!   locks/<run slug>.driver.lock              held by whoever drives the run
//!   artifacts/<run slug>/                     the run's eviction records and checkout evidence
//! ```
//!
//! Slugs are SHA-256 of the id ([`natives_system::paths::slug`]): any id
//! makes a safe, stable file name. Records are written only through
//! [`natives_system::durable`], so a reader sees a whole record or none;
//! a new record is published create-exclusive, so two creators of one id
//! cannot both win. Reading is bounded before anything is read whole: a
//! record over [`MAX_RECORD_BYTES`] and a listing over [`MAX_HISTORY`]
//! records are refused (`EFBIG`), and a record is never written larger than
//! it could be read back.
//!
//! **Driving a run** is holding the kernel lock on its driver lock file
//! ([`Registry::drive_run`]), the same liveness authority as build-cache
//! leases: the kernel drops it however the driver dies, so a crashed driver
//! reads as stopped at once, and a reused pid cannot pass for it. Where
//! locks cannot be trusted (network filesystems) liveness is
//! [`Liveness::Unknown`], which nothing reads as gone.
//!
//! **Changing a run** takes its owner lock for the whole read-modify-write,
//! so concurrent writers (an orchestrator setting a status, a handover
//! folding a candidate) never lose each other's updates. Taking a run to
//! drive it also passes through the owner lock, so a driver never starts
//! in the middle of a handover of the run's worktree: it waits for the
//! handover to finish and then reads its outcome in the record.

pub mod record;

use std::{
    fs, io,
    path::{Path, PathBuf},
    time::Duration,
};

use natives_core::{CancelToken, Error, ErrorKind, Result};
use natives_system::{
    durable,
    lock::{self, HeldLock, LockTrust},
    paths::{dir_id, slug},
    process::now_ms,
};
use serde_json::Map;

pub use record::{
    Authority, Candidate, Event, EventKind, RunRecord, SCHEMA_VERSION, Seat, SeatKind, Status,
    TaskRecord,
};

/// The largest record read; a larger one is refused unread. The same
/// bound every natives record is read with.
pub const MAX_RECORD_BYTES: u64 = durable::MAX_RECORD_BYTES;

/// The most records one listing reads (a task's runs, the registry's tasks).
pub const MAX_HISTORY: usize = 4096;

/// The longest a change waits for a run's owner lock: a handover holds it
/// while it proves and removes a worktree, which can take a while on a
/// large one; longer than this means a stuck process.
pub const OWNER_LOCK_WAIT: Duration = Duration::from_secs(60);

/// Whether a run's driver is alive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Liveness {
    /// Someone holds its driver lock.
    Live,
    /// Nobody does: no process is driving it.
    Dead,
    /// It cannot be told (why): treated as alive by everything that asks.
    Unknown(String),
}

impl std::fmt::Display for Liveness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Liveness::Live => f.write_str("live"),
            Liveness::Dead => f.write_str("dead"),
            Liveness::Unknown(why) => write!(f, "unknown ({why})"),
        }
    }
}

/// A new run to record.
#[derive(Clone, Debug)]
pub struct NewRun {
    /// Its id, unique in the registry.
    pub id: String,
    /// The task it attempts (recorded already).
    pub task: String,
    /// The directory its candidate worktrees will be made in.
    pub worktree_root: PathBuf,
    /// Where it stands at first.
    pub status: Status,
}

/// The registry under one natives home.
#[derive(Clone, Debug)]
pub struct Registry {
    root: PathBuf,
}

/// Holding a run to drive it; dropping it lets the run go.
#[derive(Debug)]
pub struct Driver {
    run: String,
    _lock: HeldLock,
}

impl Driver {
    /// The run driven.
    pub fn run(&self) -> &str {
        &self.run
    }
}

impl Registry {
    /// The registry under the natives home `home` (see
    /// [`natives_system::paths::home`]).
    pub fn open(home: &Path) -> Registry {
        Registry {
            root: home.join("worktrees"),
        }
    }

    /// The registry's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where `run`'s artifacts live (its eviction records, its checkout
    /// evidence): `<home>/worktrees/artifacts/<run slug>/`.
    pub fn artifacts(&self, run: &str) -> PathBuf {
        self.root.join("artifacts").join(slug(Path::new(run)))
    }

    /// Record task `task`, or return it if it is recorded already.
    pub fn create_task(&self, task: &str, cancel: &CancelToken) -> Result<TaskRecord> {
        check_id("task", task)?;
        let _creating = self.creation_lock(cancel)?;
        if let Some(existing) = self.read_task(task)? {
            return Ok(existing);
        }
        let record = TaskRecord {
            version: SCHEMA_VERSION,
            task: task.to_owned(),
            created_at_ms: now_ms(),
            pins: Vec::new(),
            replacements: Vec::new(),
            extra: Map::new(),
        };
        let dir = self.task_dir(task);
        durable::create_private_dir(&dir.join("runs"))?;
        publish(&dir.join("task.json"), &record::encode(&record))?;
        Ok(record)
    }

    /// Change task `task`'s record (its pins, its replacements) under the
    /// registry's lock: `change` sees it as it is on disk, and what it
    /// leaves is written back unless it fails. A record written by a newer
    /// natives is never rewritten (`ENOTSUP`).
    pub fn update_task<T>(
        &self,
        task: &str,
        cancel: &CancelToken,
        change: impl FnOnce(&mut TaskRecord) -> Result<T>,
    ) -> Result<T> {
        let _changing = self.creation_lock(cancel)?;
        let mut record = self.task(task)?;
        if record.version > SCHEMA_VERSION {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!(
                    "task {task} was written by a newer natives (schema {}); left as it is",
                    record.version
                ),
            ));
        }
        let out = change(&mut record)?;
        let path = self.task_dir(task).join("task.json");
        durable::replace(&path, &record::encode(&record))?;
        Ok(out)
    }

    /// Task `task` (`ENOENT` if it was never recorded).
    pub fn task(&self, task: &str) -> Result<TaskRecord> {
        self.read_task(task)?.ok_or_else(|| no_such("task", task))
    }

    /// Record a new run of a recorded task: `EEXIST` if its id is taken (by
    /// any task), `ENOENT` if the task was never recorded.
    pub fn create_run(&self, new: &NewRun, cancel: &CancelToken) -> Result<RunRecord> {
        check_id("run", &new.id)?;
        let _creating = self.creation_lock(cancel)?;
        self.task(&new.task)?;
        if self.find_run(&new.id)?.is_some() {
            return Err(Error::new(
                ErrorKind::AlreadyExists,
                format!("run {} is recorded already", new.id),
            ));
        }
        let record = RunRecord {
            version: SCHEMA_VERSION,
            id: new.id.clone(),
            task: new.task.clone(),
            status: new.status,
            worktree_root: dir_id(&new.worktree_root)?,
            created_at_ms: now_ms(),
            candidates: Vec::new(),
            seats: Vec::new(),
            released_to: None,
            released_branches: Vec::new(),
            events: vec![Event::now(EventKind::Created).noting(new.status.name())],
            lineage: None,
            recovery: None,
            source_paths: Vec::new(),
            extra: Map::new(),
        };
        let path = self
            .task_dir(&new.task)
            .join("runs")
            .join(run_file(&new.id));
        publish(&path, &encoded(&record, &path)?)?;
        Ok(record)
    }

    /// Run `run` (`ENOENT` if it was never recorded).
    pub fn show(&self, run: &str) -> Result<RunRecord> {
        let path = self.find_run(run)?.ok_or_else(|| no_such("run", run))?;
        read_run(&path)?.ok_or_else(|| no_such("run", run))
    }

    /// Every run recorded, or only `task`'s, oldest first.
    pub fn list(&self, task: Option<&str>) -> Result<Vec<RunRecord>> {
        let mut runs = match task {
            Some(task) => self.runs_of(task)?,
            None => {
                let mut all = Vec::new();
                for task_dir in self.task_dirs()? {
                    all.extend(read_runs_in(&task_dir.join("runs"))?);
                }
                all
            }
        };
        runs.sort_by(|a, b| (a.created_at_ms, &a.id).cmp(&(b.created_at_ms, &b.id)));
        Ok(runs)
    }

    /// Every run recorded for `task` (superseded or not, whatever its
    /// status), oldest first: the attempts a new run of the task may take a
    /// branch over from.
    pub fn earlier_attempts(&self, task: &str) -> Result<Vec<RunRecord>> {
        self.list(Some(task))
    }

    /// Add `candidate` to `run`, its path made canonical: `EEXIST` if the
    /// run has a candidate of that name.
    pub fn add_candidate(
        &self,
        run: &str,
        candidate: &Candidate,
        cancel: &CancelToken,
    ) -> Result<RunRecord> {
        let mut candidate = candidate.clone();
        candidate.path = dir_id(&candidate.path)?;
        self.update(run, cancel, |record| {
            if record.candidate(&candidate.name).is_some() {
                return Err(Error::new(
                    ErrorKind::AlreadyExists,
                    format!("run {run} has a candidate {} already", candidate.name),
                ));
            }
            record
                .events
                .push(Event::now(EventKind::Candidate).noting(&candidate.name));
            record.candidates.push(candidate);
            Ok(record.clone())
        })
    }

    /// Add `seat` to `run`, its path made canonical: `EEXIST` if the run
    /// has that seat.
    pub fn add_seat(&self, run: &str, seat: &Seat, cancel: &CancelToken) -> Result<RunRecord> {
        let mut seat = seat.clone();
        seat.path = dir_id(&seat.path)?;
        self.update(run, cancel, |record| {
            let taken = record
                .seats
                .iter()
                .any(|s| (s.kind, s.number) == (seat.kind, seat.number));
            let name = format!("{} {}", seat.kind.name(), seat.number);
            if taken {
                return Err(Error::new(
                    ErrorKind::AlreadyExists,
                    format!("run {run} has seat {name} already"),
                ));
            }
            record.events.push(Event::now(EventKind::Seat).noting(name));
            record.seats.push(seat);
            Ok(record.clone())
        })
    }

    /// Grant (or take back) authority over `run`'s source copy `source`
    /// (`review-1`, `candidate-A`): `change` sets what it holds. A copy with
    /// any authority is never evicted. `ENOENT` when the run has no such
    /// copy.
    pub fn grant(
        &self,
        run: &str,
        source: &str,
        cancel: &CancelToken,
        change: impl FnOnce(&mut Authority),
    ) -> Result<RunRecord> {
        self.update(run, cancel, |record| {
            let authority = record.authority_mut(source).ok_or_else(|| {
                Error::new(
                    ErrorKind::NotFound,
                    format!("run {run} has no seat or candidate named {source:?}"),
                )
            })?;
            change(authority);
            Ok(record.clone())
        })
    }

    /// Set `run`'s status. Set to `running` while a driver holds the run,
    /// a `driven` event follows: the run is not waiting for a driver.
    pub fn set_status(&self, run: &str, status: Status, cancel: &CancelToken) -> Result<RunRecord> {
        self.update(run, cancel, |record| {
            record.status = status;
            record
                .events
                .push(Event::now(EventKind::Status).noting(status.name()));
            if status == Status::Running && self.driver_liveness(run) == Liveness::Live {
                record.events.push(Event::now(EventKind::Driven));
            }
            Ok(record.clone())
        })
    }

    /// Change `run`'s record under its owner lock: `change` sees the record
    /// as it is on disk, and what it leaves is written back (unless it
    /// fails, which writes nothing).
    pub fn update<T>(
        &self,
        run: &str,
        cancel: &CancelToken,
        change: impl FnOnce(&mut RunRecord) -> Result<T>,
    ) -> Result<T> {
        let held = self.lock_run(run, cancel)?;
        let mut record = held.load()?;
        let out = change(&mut record)?;
        held.save(&record)?;
        Ok(out)
    }

    /// Take `run` to drive it: `EBUSY` if another holds it. Dropping the
    /// guard (or dying, however) lets it go. Waits for a handover of the
    /// run's worktree in progress to finish first, so the record read after
    /// this returns says what became of it, and records a `driven` event
    /// (a `running` run is no longer waiting for its driver; a record a
    /// newer natives wrote is left as it is, and keeps waiting).
    pub fn drive_run(&self, run: &str, cancel: &CancelToken) -> Result<Driver> {
        self.show(run)?;
        let path = self.lock_path(run, "driver");
        durable::create_private_dir(path.parent().expect("lock files have a directory"))?;
        let lock = lock::try_exclusive(&path)?.ok_or_else(|| {
            Error::new(
                ErrorKind::Busy,
                format!("run {run} is being driven by another process"),
            )
        })?;
        let held = self.lock_run(run, cancel)?;
        let mut record = held.load()?;
        if record.version <= SCHEMA_VERSION {
            record.events.push(Event::now(EventKind::Driven));
            held.save(&record)?;
        }
        drop(held);
        Ok(Driver {
            run: run.to_owned(),
            _lock: lock,
        })
    }

    /// Whether anyone drives `run` right now. The lock is only probed,
    /// never taken, so asking cannot make a driver fail to start.
    pub fn driver_liveness(&self, run: &str) -> Liveness {
        let path = self.lock_path(run, "driver");
        let dir = path.parent().expect("lock files have a directory");
        match dir.try_exists() {
            Ok(false) => return Liveness::Dead,
            Ok(true) => {}
            Err(err) => return Liveness::Unknown(Error::io(dir, err).to_string()),
        }
        match lock::trust(dir) {
            Ok(LockTrust::Kernel) => {}
            Ok(LockTrust::RecordOnly(filesystem)) => {
                return Liveness::Unknown(format!(
                    "{} is on {filesystem}, where file locks cannot be trusted",
                    dir.display()
                ));
            }
            Err(err) => return Liveness::Unknown(err.to_string()),
        }
        match lock::is_held(&path) {
            Ok(true) => Liveness::Live,
            Ok(false) => Liveness::Dead,
            Err(err) => Liveness::Unknown(err.to_string()),
        }
    }

    /// Hold `run`'s owner lock (waiting within [`OWNER_LOCK_WAIT`] and
    /// `cancel`), to read, change and write its record.
    pub(crate) fn lock_run(&self, run: &str, cancel: &CancelToken) -> Result<RunLock> {
        let record = self.find_run(run)?.ok_or_else(|| no_such("run", run))?;
        let path = self.lock_path(run, "owner");
        durable::create_private_dir(path.parent().expect("lock files have a directory"))?;
        let held = lock::wait_exclusive(&path, cancel, OWNER_LOCK_WAIT)?;
        Ok(RunLock {
            run: run.to_owned(),
            record,
            held,
        })
    }

    /// Hold `run`'s owner lock if nobody else does right now.
    pub(crate) fn try_lock_run(&self, run: &str) -> Result<Option<RunLock>> {
        let record = self.find_run(run)?.ok_or_else(|| no_such("run", run))?;
        let path = self.lock_path(run, "owner");
        durable::create_private_dir(path.parent().expect("lock files have a directory"))?;
        Ok(lock::try_exclusive(&path)?.map(|held| RunLock {
            run: run.to_owned(),
            record,
            held,
        }))
    }

    fn creation_lock(&self, cancel: &CancelToken) -> Result<HeldLock> {
        durable::create_private_dir(&self.root)?;
        lock::wait_exclusive(&self.root.join("registry.lock"), cancel, OWNER_LOCK_WAIT)
    }

    fn task_dir(&self, task: &str) -> PathBuf {
        self.root.join("tasks").join(slug(Path::new(task)))
    }

    fn lock_path(&self, run: &str, kind: &str) -> PathBuf {
        let name = format!("{}.{kind}.lock", slug(Path::new(run)));
        self.root.join("locks").join(name)
    }

    fn read_task(&self, task: &str) -> Result<Option<TaskRecord>> {
        let path = self.task_dir(task).join("task.json");
        match durable::read_bounded(&path, MAX_RECORD_BYTES)? {
            Some(bytes) => record::decode_task(&bytes, &path).map(Some),
            None => Ok(None),
        }
    }

    fn runs_of(&self, task: &str) -> Result<Vec<RunRecord>> {
        self.task(task)?;
        read_runs_in(&self.task_dir(task).join("runs"))
    }

    /// The directory of every recorded task (bounded by [`MAX_HISTORY`]).
    pub(crate) fn task_dirs(&self) -> Result<Vec<PathBuf>> {
        bounded_listing(&self.root.join("tasks"), |name| !name.starts_with('.'))
    }

    /// Where `run`'s record is, if it is recorded (under any task).
    fn find_run(&self, run: &str) -> Result<Option<PathBuf>> {
        let file = run_file(run);
        for task_dir in self.task_dirs()? {
            let path = task_dir.join("runs").join(&file);
            if path.try_exists().map_err(|err| Error::io(&path, err))? {
                return Ok(Some(path));
            }
        }
        Ok(None)
    }
}

/// Holding a run's owner lock: its record may be read, changed and written
/// back without losing anyone's update.
#[derive(Debug)]
pub(crate) struct RunLock {
    run: String,
    record: PathBuf,
    held: HeldLock,
}

impl RunLock {
    /// The lock's file: a git command that changes the run's worktree holds
    /// it too ([`crate::git::Call::holding`]), so the lock is not free
    /// again until that git has exited, even if this process dies first.
    pub(crate) fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        std::os::fd::AsFd::as_fd(&self.held)
    }

    /// The record as it is on disk now.
    pub(crate) fn load(&self) -> Result<RunRecord> {
        read_run(&self.record)?.ok_or_else(|| no_such("run", &self.run))
    }

    /// Write `record` back durably. A record written by a newer natives is
    /// never rewritten (`ENOTSUP`), nor one too large to be read back.
    pub(crate) fn save(&self, record: &RunRecord) -> Result<()> {
        if record.version > SCHEMA_VERSION {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!(
                    "run {} was written by a newer natives (schema {}; this one writes {}); left as it is",
                    self.run, record.version, SCHEMA_VERSION
                ),
            ));
        }
        durable::replace(&self.record, &encoded(record, &self.record)?)
    }
}

/// A record's bytes as written (pretty JSON, a final newline), refused
/// (`EFBIG`) when they could not be read back.
pub(crate) fn encoded(record: &impl serde::Serialize, path: &Path) -> Result<Vec<u8>> {
    let bytes = record::encode(record);
    if bytes.len() as u64 > MAX_RECORD_BYTES {
        return Err(Error::new(
            ErrorKind::TooLarge,
            format!(
                "{}: the record would be {} bytes, over the limit of {MAX_RECORD_BYTES}; not written",
                path.display(),
                bytes.len()
            ),
        ));
    }
    Ok(bytes)
}

fn publish(path: &Path, bytes: &[u8]) -> Result<()> {
    if durable::publish(path, bytes)? {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::AlreadyExists,
        format!("{}: exists already", path.display()),
    ))
}

fn read_run(path: &Path) -> Result<Option<RunRecord>> {
    match durable::read_bounded(path, MAX_RECORD_BYTES)? {
        Some(bytes) => record::decode_run(&bytes, path).map(Some),
        None => Ok(None),
    }
}

/// Every run record in `dir`, the count checked before any is read.
fn read_runs_in(dir: &Path) -> Result<Vec<RunRecord>> {
    let paths = bounded_listing(dir, |name| {
        !name.starts_with('.') && name.ends_with(".json")
    })?;
    let mut runs = Vec::with_capacity(paths.len());
    for path in paths {
        runs.extend(read_run(&path)?);
    }
    Ok(runs)
}

/// The entries of `dir` whose names pass `keep`, sorted; `EFBIG` when there
/// are more than [`MAX_HISTORY`] (nothing else read). A missing directory
/// has none.
pub(crate) fn bounded_listing(dir: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<PathBuf>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(Error::io(dir, err)),
    };
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|err| Error::io(dir, err))?;
        if keep(&entry.file_name().to_string_lossy()) {
            paths.push(entry.path());
        }
        if paths.len() > MAX_HISTORY {
            return Err(Error::new(
                ErrorKind::TooLarge,
                format!(
                    "{}: more than {MAX_HISTORY} records; refused before reading them",
                    dir.display()
                ),
            ));
        }
    }
    paths.sort();
    Ok(paths)
}

fn run_file(run: &str) -> String {
    format!("{}.json", slug(Path::new(run)))
}

/// The longest id accepted.
const MAX_ID_BYTES: usize = 1024;

pub(crate) fn check_id(what: &str, id: &str) -> Result<()> {
    if id.trim().is_empty() || id.len() > MAX_ID_BYTES || id.contains('\0') {
        return Err(Error::invalid(format!(
            "a {what} id must be 1 to {MAX_ID_BYTES} bytes, not blank, without NUL: {id:?}"
        )));
    }
    Ok(())
}

fn no_such(what: &str, id: &str) -> Error {
    Error::new(ErrorKind::NotFound, format!("no {what} {id:?} is recorded"))
}

#[cfg(test)]
mod tests;
