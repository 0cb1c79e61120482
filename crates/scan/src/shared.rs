//! One index per root for every process of a user (opt-in:
//! `FS_SCAN_CACHE_SHARED=1`).
//!
//! Without it, eight agent processes on one tree walk it eight times and
//! register eight sets of watches. With it, the first process that needs a
//! root becomes that root's **indexer**: it walks (or restores the record of)
//! the tree, watches it, and answers every other process's request for the
//! list over a Unix socket; those **readers** neither walk nor watch.
//!
//! - **Who indexes.** A kernel lock on a file beside the socket (the same
//!   OFD locks leases use) decides: its holder indexes, and the kernel frees
//!   it when the holder dies, even by `SIGKILL`. A reader whose indexer went
//!   away (its connection ends) tries the lock within the same call and,
//!   taking it, indexes from then on, restoring the root's record (sharing
//!   turns persistence on) rather than walking. No reader waits on a dead
//!   indexer; one that finds the lock held but no socket yet (an indexer
//!   starting) waits at most [`STARTING_WAIT`] and then answers alone.
//! - **Freshness.** A reader's request is answered by the indexer's own
//!   cache at the moment of the request: a watched scan takes in every event
//!   queued before it (the cookie rule of `crate::watch`), so a reader's
//!   answer is never older than the last event before its call, as an
//!   in-process watched answer is. A mutation a reader reports
//!   (`invalidate`) is forwarded to the indexer before the reader's next
//!   question, so it holds even where the indexer's scan could not be
//!   watched and keeps to its TTL.
//! - **What travels.** The list crosses once per change: a reader keeps the
//!   last list it received and asks whether it is still current; the answer
//!   is a byte (unchanged) or the new list, in the entries section of a
//!   persisted record (`crate::persist::put_entries`), checked as a record's
//!   is when it arrives. Lists carry no mtimes (a glob `lstat`s the matches
//!   whose mtime it shows, as after a restore). A list with unreadable paths
//!   is not handed over: the reader walks alone.
//! - **Contents.** With each answer the indexer hands over the paths its
//!   watch's events named since the reader's previous question (a bounded
//!   journal, `watch::Journal`). The reader's content index forgets them
//!   before the answer is used, and trusts the rest of what it read under a
//!   stamp of that watch, so a cached grep of a reader rules files out with
//!   no system call each, as a watching process's does. A new watch (the
//!   indexer walked again, or another process took over) or a journal the
//!   reader fell behind brings a new stamp: each file is checked again once.
//! - **Privacy.** The sockets live in the natives home's `index/`
//!   directory, used only while private to the user, and each end checks
//!   that the other runs as the same user (`SO_PEERCRED`) before a byte of
//!   a list crosses.
//! - **Bounded waits.** A socket that does not greet within 2 s,
//!   an indexer that does not answer within a minute (alive, holding
//!   its lock, but stopped or stuck), or three links lost in one call: the
//!   reader answers alone rather than wait, and leaves a stuck indexer
//!   alone for as long again. A call's own token is honoured throughout,
//!   also while another call of the process holds the connection.
//!
//! Why a service rather than a mapped file: freshness needs the indexer at
//! every call anyway (only it can say which events came before the call),
//! and its answer is a byte while nothing changed, a round trip of tens of
//! microseconds. Readers still hold a copy of each list they read (and
//! build their own name and content indexes from it): what is shared is the
//! walk, the watches and the freshness, not the memory; a mapped list would
//! share that, at the price of a layout read in place.

use std::{
    collections::{HashMap, HashSet},
    fs,
    io::{self, Read, Write},
    os::{
        fd::{AsRawFd, OwnedFd},
        unix::net::{UnixListener, UnixStream},
    },
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex, MutexGuard,
        atomic::{AtomicU64, Ordering},
    },
    thread,
    time::{Duration, Instant},
};

use natives_system::{
    durable,
    lock::{self, HeldLock},
    paths,
};

use crate::{
    cancel::CancelToken,
    entries::{Entries, path_to_bytes},
    error::{Error, ErrorKind, Result},
    persist::{put_entries, take_entries},
    walk::ScanKey,
    watch::{EventsSince, Generation},
};

#[cfg(doc)]
use crate::watch::Watching;

/// The directory of the sockets and their locks, below the natives home.
const INDEX_DIR: &str = "index";

/// What an indexer says first on every connection.
const HELLO: &[u8; 8] = b"natshr\0\0";

/// The protocol's version, also part of every socket's name: processes of
/// two versions of natives index a root each rather than misread each other.
const VERSION: u32 = 1;

/// Longest a reader waits for an indexer that holds the lock but has no
/// socket yet (it is binding it): binding takes microseconds, so a holder
/// this slow is stuck, and the reader answers alone.
pub const STARTING_WAIT: Duration = Duration::from_secs(2);

/// Longest a reader waits for a new connection's greeting: an indexer
/// greets from the thread that accepts, at once; a socket that stays silent
/// is not an indexer's.
const HELLO_WAIT: Duration = Duration::from_secs(2);

/// Invalidations kept for one root's indexer until the next question; past
/// this many, one invalidation of the whole root stands for them.
const PENDING_KEPT: usize = 4_096;

/// Links a call may lose before it answers alone: one loss is an indexer
/// that died (the next try takes over); more in one call is a socket that
/// greets and hangs up, which must not keep the call going round.
const LINK_TRIES: usize = 3;

/// Between two tries of the lock and the socket while an indexer starts.
const RETRY: Duration = Duration::from_millis(5);

/// How often a reader waiting for an answer checks its own cancellation
/// (well inside the 50 ms abort promise).
const READ_POLL: Duration = Duration::from_millis(20);

/// Longest a reader waits for an answer before it takes its indexer for
/// stuck (stopped, or looping): a walk of a million files on a loaded
/// machine takes seconds. It then answers alone, and asks that indexer
/// nothing for as long again.
#[cfg(not(test))]
const REPLY_WAIT: Duration = Duration::from_secs(60);
#[cfg(test)]
const REPLY_WAIT: Duration = Duration::from_secs(1);

/// Longest a `sun_path` this module binds or connects to directly; a longer
/// socket path is reached through `/proc/self/fd` (the kernel's limit is
/// 108 bytes with the terminating NUL).
const SUN_PATH_MAX: usize = 100;

/// Requests, one byte each (an invalidation adds its path).
mod op {
    /// The list, which the reader does not hold.
    pub const LIST: u8 = 1;
    /// The list, unless the last one sent on this connection is current.
    pub const LIST_KNOWN: u8 = 2;
    /// The list walked again now.
    pub const FORCE: u8 = 3;
    /// A mutation at a path (length, bytes) to take in.
    pub const INVALIDATE: u8 = 4;
}

/// Answers, one byte each, then their fields.
mod status {
    /// The last list sent is current: its age (ms) and watched flag.
    pub const UNCHANGED: u8 = 0;
    /// A new list: its age, watched flag, length and entries section.
    pub const LIST: u8 = 1;
    /// Not handed over (the list has unreadable paths): answer alone.
    pub const ALONE: u8 = 2;
    /// The indexer's error: its code and message.
    pub const ERROR: u8 = 3;
    /// An invalidation taken in.
    pub const DONE: u8 = 4;
}

/// What a process's scan cache does for sharing, as an indexer and as a
/// reader; the scan cache implements it (this module knows nothing of the
/// cache itself).
pub(crate) trait Indexer: Send + Sync {
    /// `key`'s list as this process's cache answers it (walked again first
    /// when `force`).
    fn list(&self, key: &ScanKey, force: bool, token: &CancelToken) -> Result<Listed>;
    /// Take in a mutation at `target` (a canonical path), as the process's
    /// own invalidation does.
    fn invalidate(&self, target: &Path);
    /// What this process's watch saw change within `key`'s root after
    /// `since` (see [`Watching::events_since`]).
    fn events_since(&self, key: &ScanKey, since: Option<u64>) -> Option<EventsSince>;
    /// As a reader: forget what the content index knows of `path`, which an
    /// event at the indexer named.
    fn forget_contents(&self, path: &Path);
}

/// A list as an indexer answers it.
pub(crate) struct Listed {
    pub entries: Arc<Entries>,
    pub age_ms: u64,
    /// It followed every event on its root up to the request.
    pub watched: bool,
}

/// What a caller of [`Sharing::ask`] does.
pub(crate) enum Answer {
    /// Use this list, read from the root's indexer.
    Read(Listed),
    /// Answer from this process's own cache: it indexes the root, or no
    /// indexer could be asked. `drop_replica`: the cache holds a list read
    /// from an indexer earlier, which no event keeps current here.
    Local { drop_replica: bool },
}

/// Counters of sharing, for the cache's stats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SharingStats {
    /// Whether sharing is on.
    pub enabled: bool,
    /// Roots (with their switches) this process indexes for others.
    pub indexing: u64,
    /// Roots this process reads from another process's index.
    pub reading: u64,
    /// Requests this process answered as an indexer.
    pub served: u64,
    /// Lists received from an indexer (the first, and each change).
    pub lists_received: u64,
    /// Answers from the list already held, the indexer saying it is current.
    pub unchanged: u64,
    /// Times this process became a root's indexer after its indexer went
    /// away.
    pub takeovers: u64,
    /// Answers made alone: no indexer could be asked, or it would not hand
    /// its list over.
    pub alone: u64,
}

/// The sharing side of a scan cache.
pub(crate) struct Sharing {
    dir: PathBuf,
    cache: &'static dyn Indexer,
    roles: Mutex<HashMap<ScanKey, Arc<Role>>>,
    /// Keys whose cached list came from an indexer.
    replicas: Mutex<HashSet<ScanKey>>,
    /// Invalidations to send each key's indexer ahead of the next question
    /// (see [`Sharing::forward_invalidate`]).
    pending: Mutex<HashMap<ScanKey, Vec<PathBuf>>>,
    /// Keys whose indexer did not answer within [`REPLY_WAIT`], and when.
    stuck: Mutex<HashMap<ScanKey, Instant>>,
    /// For each key read from a watching indexer, the stamp under which
    /// this process's content index trusts the files it read (see
    /// [`Sharing::vouches`]).
    stamps: Mutex<HashMap<ScanKey, Stamp>>,
    counters: Counters,
}

#[derive(Default)]
struct Counters {
    served: Arc<AtomicU64>,
    lists_received: AtomicU64,
    unchanged: AtomicU64,
    takeovers: AtomicU64,
    alone: AtomicU64,
}

/// This process's part for one key.
enum Role {
    /// It holds the lock; a thread accepts readers on the socket.
    Indexing { _lock: HeldLock },
    /// It reads over this connection.
    Reading(Mutex<Link>),
}

struct Link {
    stream: UnixStream,
    /// The last list received on this connection.
    last: Option<Arc<Entries>>,
    /// The indexer's watch generation this link's stamp was issued under.
    trust: Option<(Generation, Stamp)>,
}

/// How a request over a link failed.
enum Lost {
    /// The connection ended or broke: the indexer is gone (or the reader
    /// gave up mid-answer); the link is of no further use.
    Link,
    /// The answer is an error to hand on (the link stays usable when the
    /// indexer sent it).
    Failed(Error, bool),
    /// No answer within [`REPLY_WAIT`]: the indexer lives (it holds its
    /// lock) but is stuck.
    Stuck,
}

impl Sharing {
    /// Sharing under the natives `home`, answering readers from `cache`.
    pub(crate) fn new(home: &Path, cache: &'static dyn Indexer) -> Sharing {
        Sharing {
            dir: home.join(INDEX_DIR),
            cache,
            roles: Mutex::new(HashMap::new()),
            replicas: Mutex::new(HashSet::new()),
            pending: Mutex::new(HashMap::new()),
            stuck: Mutex::new(HashMap::new()),
            stamps: Mutex::new(HashMap::new()),
            counters: Counters::default(),
        }
    }

    /// How `key`'s list is to be had for this call (walked again at the
    /// indexer when `force`).
    pub(crate) fn ask(&self, key: &ScanKey, force: bool, token: &CancelToken) -> Result<Answer> {
        let mut lost_indexer = false;
        for _ in 0..LINK_TRIES {
            token.check()?;
            let role = match self.role(key, token)? {
                Some(role) => role,
                None => return Ok(self.alone(key)),
            };
            let link = match &*role {
                Role::Indexing { .. } => {
                    // This process's own invalidations reach its lists.
                    lock(&self.pending).remove(key);
                    if lost_indexer {
                        self.counters.takeovers.fetch_add(1, Ordering::Relaxed);
                    }
                    return Ok(self.local(key));
                }
                Role::Reading(link) => link,
            };
            match self.read(key, link, force, token) {
                Ok(Some(listed)) => {
                    self.replicas().insert(key.clone());
                    return Ok(Answer::Read(listed));
                }
                Ok(None) => return Ok(self.alone(key)),
                Err(Lost::Failed(err, usable)) => {
                    if !usable {
                        self.forget(key, &role);
                    }
                    return Err(err);
                }
                Err(Lost::Link) => {
                    self.forget(key, &role);
                    lost_indexer = true;
                }
                Err(Lost::Stuck) => {
                    self.forget(key, &role);
                    lock(&self.stuck).insert(key.clone(), Instant::now());
                    return Ok(self.alone(key));
                }
            }
        }
        Ok(self.alone(key))
    }

    /// Hand a mutation at `target` (canonical) to the indexers of the roots
    /// it touches that this process reads: it goes out ahead of the next
    /// question to each, on the same connection, so the answer includes it.
    /// Nothing is sent or waited for here: an invalidation is a tool's
    /// synchronous call, and must not wait on a busy or stuck indexer.
    pub(crate) fn forward_invalidate(&self, target: &Path) {
        let reading: Vec<ScanKey> = self
            .lock_roles()
            .iter()
            .filter(|(key, role)| {
                matches!(***role, Role::Reading(_))
                    && (target.starts_with(&key.root) || key.root.starts_with(target))
            })
            .map(|(key, _)| key.clone())
            .collect();
        let mut pending = lock(&self.pending);
        for key in reading {
            let queued = pending.entry(key.clone()).or_default();
            if queued.first() == Some(&key.root) {
                // The whole root goes already.
                continue;
            }
            if queued.len() < PENDING_KEPT {
                queued.push(target.to_path_buf());
            } else {
                // As many writes as a checkout's: the root itself stands
                // for them all (the indexer lists the tree again).
                *queued = vec![key.root.clone()];
            }
        }
    }

    /// Forward the invalidation of every root read from an indexer.
    pub(crate) fn forward_clear(&self) {
        let roots: Vec<PathBuf> = self
            .lock_roles()
            .keys()
            .map(|key| key.root.clone())
            .collect();
        roots.iter().for_each(|root| self.forward_invalidate(root));
    }

    pub(crate) fn stats(&self) -> SharingStats {
        let roles = self.lock_roles();
        let count = |indexing: bool| {
            roles
                .values()
                .filter(|role| matches!(***role, Role::Indexing { .. }) == indexing)
                .count() as u64
        };
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        SharingStats {
            enabled: true,
            indexing: count(true),
            reading: count(false),
            served: n(&self.counters.served),
            lists_received: n(&self.counters.lists_received),
            unchanged: n(&self.counters.unchanged),
            takeovers: n(&self.counters.takeovers),
            alone: n(&self.counters.alone),
        }
    }

    fn alone(&self, key: &ScanKey) -> Answer {
        self.counters.alone.fetch_add(1, Ordering::Relaxed);
        self.local(key)
    }

    fn local(&self, key: &ScanKey) -> Answer {
        lock(&self.stamps).remove(key);
        Answer::Local {
            drop_replica: self.replicas().remove(key),
        }
    }

    /// `key`'s role, decided now when it has none: a reader of a live
    /// indexer, else its indexer when the lock is free; `None` when neither
    /// came within [`STARTING_WAIT`], when the index directory cannot be
    /// made, or while `key`'s indexer is taken for stuck.
    fn role(&self, key: &ScanKey, token: &CancelToken) -> Result<Option<Arc<Role>>> {
        let mut roles = self.lock_roles();
        if let Some(role) = roles.get(key) {
            return Ok(Some(Arc::clone(role)));
        }
        let mut stuck = lock(&self.stuck);
        stuck.retain(|_, since| since.elapsed() < REPLY_WAIT);
        if stuck.contains_key(key) {
            return Ok(None);
        }
        drop(stuck);
        if !private_dir(&self.dir) {
            return Ok(None);
        }
        let names = Names::of(&self.dir, key);
        let give_up = Instant::now() + STARTING_WAIT;
        let role = loop {
            if let Some(stream) = connect(&names.socket) {
                break Role::Reading(Mutex::new(Link {
                    stream,
                    last: None,
                    trust: None,
                }));
            }
            if let Some(held) = lock::try_exclusive(&names.lock)? {
                self.index(key, &names)?;
                break Role::Indexing { _lock: held };
            }
            token.check()?;
            if Instant::now() >= give_up {
                return Ok(None);
            }
            thread::sleep(RETRY);
        };
        let role = Arc::new(role);
        roles.insert(key.clone(), Arc::clone(&role));
        Ok(Some(role))
    }

    /// Start answering readers of `key` (this process holds its lock): the
    /// socket a dead indexer left is replaced, and the names of other roots'
    /// dead indexers are removed ([`prune_gone`]).
    fn index(&self, key: &ScanKey, names: &Names) -> Result<()> {
        prune_gone(&self.dir);
        let _ = fs::remove_file(&names.socket);
        let listener = within_sun_path(&names.socket, |path| UnixListener::bind(path))
            .map_err(|err| Error::io(&names.socket, err))?;
        let cache = self.cache;
        let served = Arc::clone(&self.counters.served);
        let key = key.clone();
        thread::Builder::new()
            .name("natives-indexer".into())
            .spawn(move || accept(listener, cache, key, served))
            .map_err(|err| Error::io(&names.socket, err))?;
        Ok(())
    }

    /// Drop `role` as `key`'s role (unless another call replaced it).
    fn forget(&self, key: &ScanKey, role: &Arc<Role>) {
        let mut roles = self.lock_roles();
        if roles.get(key).is_some_and(|r| Arc::ptr_eq(r, role)) {
            roles.remove(key);
        }
    }

    /// One request for the list over `link`: `None` when the indexer will
    /// not hand it over.
    fn read(
        &self,
        key: &ScanKey,
        link: &Mutex<Link>,
        force: bool,
        token: &CancelToken,
    ) -> std::result::Result<Option<Listed>, Lost> {
        let mut link = token.lock(link).map_err(|err| Lost::Failed(err, true))?;
        let request = match (force, &link.last) {
            (true, _) => op::FORCE,
            (false, Some(_)) => op::LIST_KNOWN,
            (false, None) => op::LIST,
        };
        let invalidated = lock(&self.pending).remove(key).unwrap_or_default();
        let mut out = Vec::new();
        for target in &invalidated {
            out.push(op::INVALIDATE);
            put_text(&mut out, &path_to_bytes(target));
        }
        out.push(request);
        let answer = match link.stream.write_all(&out) {
            Ok(()) => receive_after(&mut link.stream, invalidated.len(), token),
            Err(_) => Err(Lost::Link),
        };
        if answer.is_err() {
            // A reply left half read cannot be told from the next one; the
            // invalidations go again ahead of the next question, to whichever
            // indexer answers it (once more is harmless).
            link.last = None;
            let mut pending = lock(&self.pending);
            pending
                .entry(key.clone())
                .or_default()
                .splice(0..0, invalidated);
        }
        let (listed, events) = match answer? {
            Reply::Unchanged {
                age_ms,
                watched,
                events,
            } => {
                let entries = link.last.clone().ok_or(Lost::Link)?;
                self.counters.unchanged.fetch_add(1, Ordering::Relaxed);
                let listed = Listed {
                    entries,
                    age_ms,
                    watched,
                };
                (listed, events)
            }
            Reply::List(listed, events) => {
                link.last = Some(Arc::clone(&listed.entries));
                self.counters.lists_received.fetch_add(1, Ordering::Relaxed);
                (listed, events)
            }
            Reply::Alone => return Ok(None),
            Reply::Done => return Err(Lost::Link),
        };
        self.take_in(key, &mut link, events);
        Ok(Some(listed))
    }

    /// Take in what the indexer's watch saw change, still holding the link
    /// (so no other call of this process answers before it is taken in):
    /// the content index forgets each path named, and trusts the files it
    /// reads from now on under the link's stamp, a new one whenever the
    /// paths may be incomplete or the watch is another walk's.
    fn take_in(&self, key: &ScanKey, link: &mut Link, events: Option<Events>) {
        let Some(events) = events else {
            link.trust = None;
            lock(&self.stamps).remove(key);
            return;
        };
        if let Some(paths) = &events.paths {
            paths
                .iter()
                .for_each(|path| self.cache.forget_contents(path));
        }
        let kept = events.paths.is_some()
            && link
                .trust
                .is_some_and(|(generation, _)| generation == events.generation);
        if !kept {
            link.trust = Some((events.generation, new_stamp()));
        }
        if let Some((_, stamp)) = link.trust {
            lock(&self.stamps).insert(key.clone(), stamp);
        }
    }

    /// The stamp under which this process's content index may trust the
    /// files of `key` it read, without a system call each: the key is read
    /// from an indexer whose watch vouched for it at the last answer, and
    /// every path its events named since was forgotten.
    pub(crate) fn vouches(&self, key: &ScanKey) -> Option<Stamp> {
        lock(&self.stamps).get(key).copied()
    }

    fn lock_roles(&self) -> MutexGuard<'_, HashMap<ScanKey, Arc<Role>>> {
        self.roles.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn replicas(&self) -> MutexGuard<'_, HashSet<ScanKey>> {
        self.replicas.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// What a content index trusts its files under (see `content_index`).
type Stamp = crate::content_index::Stamp;

/// A stamp no watch of this process issues: a watch's stamps are its
/// generations, counted from 0; these have the top bit set.
fn new_stamp() -> Stamp {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    (1 << 63) | NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Whether `dir` is, once made if missing, a directory of this user that no
/// one else may enter: the sockets' own privacy, whatever the home it lies
/// in (a home set to a shared directory must not let another user plant a
/// socket or hold a lock there).
fn private_dir(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    durable::create_private_dir(dir).is_ok()
        && fs::symlink_metadata(dir).is_ok_and(|meta| {
            meta.is_dir()
                && meta.uid() == nix::unistd::geteuid().as_raw()
                && meta.mode() & 0o077 == 0
        })
}

/// Remove the socket and lock file of every indexer gone (its lock free)
/// from the index directory `dir`: each root a process of the user once
/// indexed leaves both names there, and a root not searched again would
/// keep them for good. A lock is taken before its names go, so a process
/// about to index that root either finds it held (and waits, as for any
/// indexer starting) or, having opened the file just removed, is sent to
/// the new one by `lock::try_exclusive`'s check that the path still names
/// the file it locked.
fn prune_gone(dir: &Path) {
    let Ok(listing) = fs::read_dir(dir) else {
        return;
    };
    for entry in listing.flatten() {
        let path = entry.path();
        if path.extension() != Some("lock".as_ref()) {
            continue;
        }
        if let Ok(Some(held)) = lock::try_exclusive(&path) {
            let _ = fs::remove_file(path.with_extension("sock"));
            let _ = fs::remove_file(&path);
            drop(held);
        }
    }
}

/// The socket and lock of one key.
struct Names {
    socket: PathBuf,
    lock: PathBuf,
}

impl Names {
    fn of(dir: &Path, key: &ScanKey) -> Names {
        let switches =
            u8::from(key.policy.include_hidden) | (u8::from(key.policy.use_gitignore) << 1);
        // Half the slug's 256 bits keep names distinct and leave room in
        // `sun_path` for a longer home.
        let slug = paths::slug(&key.root);
        let stem = format!("{}.{switches}.v{VERSION}", &slug[..32]);
        Names {
            socket: dir.join(format!("{stem}.sock")),
            lock: dir.join(format!("{stem}.lock")),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// Run `call` on `path`, or, when `path` is too long for a socket address,
/// on the same name reached through this process's descriptor of its
/// directory.
fn within_sun_path<T>(path: &Path, call: impl FnOnce(&Path) -> io::Result<T>) -> io::Result<T> {
    if path.as_os_str().len() <= SUN_PATH_MAX {
        return call(path);
    }
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return call(path);
    };
    let dir: OwnedFd = std::fs::File::open(dir)?.into();
    call(&Path::new(&format!("/proc/self/fd/{}", dir.as_raw_fd())).join(name))
}

/// A connection to the live indexer at `socket` that greeted in this
/// protocol's version and runs as this user; `None` otherwise.
fn connect(socket: &Path) -> Option<UnixStream> {
    let mut stream = within_sun_path(socket, |path| UnixStream::connect(path)).ok()?;
    if !same_user(&stream) {
        return None;
    }
    stream.set_read_timeout(Some(HELLO_WAIT)).ok()?;
    let mut hello = [0u8; HELLO.len() + 4];
    stream.read_exact(&mut hello).ok()?;
    let greeted = hello[..HELLO.len()] == *HELLO
        && u32::from_le_bytes(hello[HELLO.len()..].try_into().ok()?) == VERSION;
    greeted.then_some(stream)
}

/// Whether the process at the other end of `stream` runs as this user.
fn same_user(stream: &UnixStream) -> bool {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    getsockopt(stream, PeerCredentials)
        .is_ok_and(|peer| peer.uid() == nix::unistd::geteuid().as_raw())
}

/// Accept readers of `key` for as long as the process lives, each on a
/// thread of its own.
fn accept(
    listener: UnixListener,
    cache: &'static dyn Indexer,
    key: ScanKey,
    served: Arc<AtomicU64>,
) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else {
            continue;
        };
        if !same_user(&stream) {
            continue;
        }
        let key = key.clone();
        let served = Arc::clone(&served);
        let _ = thread::Builder::new()
            .name("natives-reader".into())
            .spawn(move || {
                let _ = serve(stream, cache, &key, &served);
            });
    }
}

/// Answer one reader's requests until it hangs up.
fn serve(
    mut stream: UnixStream,
    cache: &'static dyn Indexer,
    key: &ScanKey,
    served: &AtomicU64,
) -> io::Result<()> {
    let mut hello = HELLO.to_vec();
    hello.extend_from_slice(&VERSION.to_le_bytes());
    stream.write_all(&hello)?;
    let mut sent: Option<Arc<Entries>> = None;
    let mut journal: Option<u64> = None;
    loop {
        let mut request = [0u8; 1];
        if stream.read(&mut request)? == 0 {
            return Ok(());
        }
        served.fetch_add(1, Ordering::Relaxed);
        let reply = match request[0] {
            op::INVALIDATE => {
                let mut len = [0u8; 4];
                stream.read_exact(&mut len)?;
                let mut path = vec![0u8; u32::from_le_bytes(len) as usize];
                stream.read_exact(&mut path)?;
                let path = crate::entries::bytes_to_path(&path).into_owned();
                cache.invalidate(&path);
                vec![status::DONE]
            }
            op @ (op::LIST | op::LIST_KNOWN | op::FORCE) => {
                let force = op == op::FORCE;
                let known = if op == op::LIST_KNOWN {
                    sent.take()
                } else {
                    None
                };
                let mut reply = answer(
                    cache.list(key, force, &CancelToken::new()),
                    known,
                    &mut sent,
                );
                if matches!(reply[0], status::UNCHANGED | status::LIST) {
                    let events = cache.events_since(key, journal);
                    journal = events.as_ref().map(|events| events.last);
                    put_events(&mut reply, events.as_ref());
                }
                reply
            }
            _ => return Ok(()),
        };
        stream.write_all(&reply)?;
    }
}

/// The reply to a request for the list, given what this connection last
/// sent (`known`, when the reader holds it); `sent` becomes what the
/// reader holds after it.
fn answer(
    listed: Result<Listed>,
    known: Option<Arc<Entries>>,
    sent: &mut Option<Arc<Entries>>,
) -> Vec<u8> {
    let listed = match listed {
        Ok(listed) => listed,
        Err(err) => {
            *sent = known;
            let mut out = vec![status::ERROR];
            put_text(&mut out, err.code().as_bytes());
            put_text(&mut out, err.message().as_bytes());
            put_text(&mut out, &err.path().map(path_to_bytes).unwrap_or_default());
            return out;
        }
    };
    if !listed.entries.unreadable().is_empty() {
        return vec![status::ALONE];
    }
    // Only the very list the reader holds is "unchanged": one made again
    // with the same paths (a patch of files the rules leave out, a TTL's
    // walk) may differ in what it left out, which the reader records anew
    // from a new list (see `Entries::skipped`).
    let unchanged = known
        .as_ref()
        .is_some_and(|known| Arc::ptr_eq(known, &listed.entries));
    let mut out = vec![if unchanged {
        status::UNCHANGED
    } else {
        status::LIST
    }];
    out.extend_from_slice(&listed.age_ms.to_le_bytes());
    out.push(u8::from(listed.watched));
    if !unchanged {
        let mut section = Vec::new();
        put_entries(&mut section, &listed.entries);
        out.extend_from_slice(&(section.len() as u64).to_le_bytes());
        out.extend_from_slice(&section);
    }
    *sent = Some(listed.entries);
    out
}

fn put_text(out: &mut Vec<u8>, text: &[u8]) {
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(text);
}

/// An indexer's reply, as read.
enum Reply {
    Unchanged {
        age_ms: u64,
        watched: bool,
        events: Option<Events>,
    },
    List(Listed, Option<Events>),
    Alone,
    Done,
}

/// What the indexer's watch saw change, as a reader receives it: `None`
/// in place of one when the watch does not vouch for the scan.
struct Events {
    generation: Generation,
    /// `None`: some may be missing.
    paths: Option<Vec<PathBuf>>,
}

/// Append the events section of a reply: whether the watch vouches, then
/// its generation, whether the paths are complete, and the paths.
fn put_events(out: &mut Vec<u8>, events: Option<&EventsSince>) {
    let Some(events) = events else {
        out.push(0);
        return;
    };
    out.push(1);
    out.extend_from_slice(&events.generation.to_le_bytes());
    match &events.paths {
        None => out.push(0),
        Some(paths) => {
            out.push(1);
            out.extend_from_slice(&(paths.len() as u32).to_le_bytes());
            paths
                .iter()
                .for_each(|path| put_text(out, &path_to_bytes(path)));
        }
    }
}

/// Read one reply off `stream`, giving up when `token` is cancelled or
/// after `wait`.
fn receive(
    stream: &mut UnixStream,
    token: &CancelToken,
    wait: Duration,
) -> std::result::Result<Reply, Lost> {
    stream
        .set_read_timeout(Some(READ_POLL))
        .map_err(|_| Lost::Link)?;
    let give_up = Instant::now() + wait;
    let mut wire = Wire {
        stream,
        token,
        give_up,
    };
    match wire.take::<1>()?[0] {
        status::UNCHANGED => {
            let age_ms = u64::from_le_bytes(wire.take()?);
            let watched = wire.take::<1>()?[0] == 1;
            let events = wire.events()?;
            Ok(Reply::Unchanged {
                age_ms,
                watched,
                events,
            })
        }
        status::LIST => {
            let age_ms = u64::from_le_bytes(wire.take()?);
            let watched = wire.take::<1>()?[0] == 1;
            let len = usize::try_from(u64::from_le_bytes(wire.take()?)).map_err(|_| Lost::Link)?;
            let section = wire.take_vec(len)?;
            let entries = take_entries(&section).ok_or(Lost::Link)?;
            let listed = Listed {
                entries: Arc::new(entries),
                age_ms,
                watched,
            };
            Ok(Reply::List(listed, wire.events()?))
        }
        status::ALONE => Ok(Reply::Alone),
        status::DONE => Ok(Reply::Done),
        status::ERROR => {
            let code = wire.text()?;
            let message = wire.text()?;
            let path = wire.text()?;
            let kind = ErrorKind::ALL
                .iter()
                .copied()
                .find(|kind| kind.code() == code)
                .unwrap_or(ErrorKind::Io);
            let err = Error::new(kind, message);
            let err = match path.is_empty() {
                true => err,
                false => err.with_path(path),
            };
            Err(Lost::Failed(err, true))
        }
        _ => Err(Lost::Link),
    }
}

/// The reply to a question sent after `invalidated` invalidations, each
/// acknowledged first, in order, on the same connection.
fn receive_after(
    stream: &mut UnixStream,
    invalidated: usize,
    token: &CancelToken,
) -> std::result::Result<Reply, Lost> {
    for _ in 0..invalidated {
        match receive(stream, token, REPLY_WAIT)? {
            Reply::Done => {}
            _ => return Err(Lost::Link),
        }
    }
    receive(stream, token, REPLY_WAIT)
}

/// Reads a reply's fields, each whole, from a stream with a read timeout,
/// checking the caller's token and the time given between tries.
struct Wire<'a> {
    stream: &'a mut UnixStream,
    token: &'a CancelToken,
    give_up: Instant,
}

impl Wire<'_> {
    fn fill(&mut self, buf: &mut [u8]) -> std::result::Result<(), Lost> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.stream.read(&mut buf[filled..]) {
                Ok(0) => return Err(Lost::Link),
                Ok(n) => filled += n,
                Err(err)
                    if matches!(
                        err.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) =>
                {
                    if let Err(err) = self.token.check() {
                        return Err(Lost::Failed(err, false));
                    }
                    if Instant::now() >= self.give_up {
                        return Err(Lost::Stuck);
                    }
                }
                Err(_) => return Err(Lost::Link),
            }
        }
        Ok(())
    }

    fn take<const N: usize>(&mut self) -> std::result::Result<[u8; N], Lost> {
        let mut buf = [0u8; N];
        self.fill(&mut buf)?;
        Ok(buf)
    }

    fn take_vec(&mut self, len: usize) -> std::result::Result<Vec<u8>, Lost> {
        let mut buf = vec![0u8; len];
        self.fill(&mut buf)?;
        Ok(buf)
    }

    fn events(&mut self) -> std::result::Result<Option<Events>, Lost> {
        if self.take::<1>()?[0] == 0 {
            return Ok(None);
        }
        let generation = u64::from_le_bytes(self.take()?);
        let paths = match self.take::<1>()?[0] {
            0 => None,
            _ => {
                let count = u32::from_le_bytes(self.take()?);
                let mut paths = Vec::with_capacity(count.min(1 << 16) as usize);
                for _ in 0..count {
                    let len = u32::from_le_bytes(self.take()?) as usize;
                    let bytes = self.take_vec(len)?;
                    paths.push(crate::entries::bytes_to_path(&bytes).into_owned());
                }
                Some(paths)
            }
        };
        Ok(Some(Events { generation, paths }))
    }

    fn text(&mut self) -> std::result::Result<String, Lost> {
        let len = u32::from_le_bytes(self.take()?) as usize;
        Ok(String::from_utf8_lossy(&self.take_vec(len)?).into_owned())
    }
}

#[cfg(test)]
mod tests;
