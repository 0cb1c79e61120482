//! Cached scans kept exact by filesystem events (opt-in per process).
//!
//! Without events a cached scan can be up to a TTL old for every change the
//! agent's own tools did not report: a build, a `git checkout`, an editor, a
//! second agent. With watching on, a cached scan of a watched root is never
//! older than the last event the kernel delivered before the call:
//!
//! - **Watches** are per directory (`notify`, non-recursive): the root of each
//!   cached scan, every directory the scan lists, and the root's ancestors
//!   (their ignore files apply below). A directory is watched when the walk
//!   admits it, before the walk reads its ignore files or lists it (see
//!   `walk::scan_watching`), so no change falls between listing and
//!   watching. Scans of one root in different partitions share watches.
//! - **Draining before answering.** `notify` reads the kernel's queue on a
//!   thread of its own. Before a watched scan answers, a cookie file is
//!   created in a private directory the same watcher watches, and the answer
//!   waits until its event has been routed: a watcher's events come in the
//!   order the kernel queued them, so every earlier event has been too.
//! - **Patching.** An event names a path; the patcher reconciles each named
//!   path with what `lstat` finds now rather than trusting the event's kind:
//!   its old entry and subtree go, its current state comes back if the scan's
//!   rules admit it (`ignore`'s [`IncrementalIgnore`]), and a directory that
//!   appeared is walked (and watched). Its parent's mtime is re-read too, since
//!   the kernel reports a child's change to the parent's watch only.
//! - **What it cannot prove, it drops.** A change to an ignore file, to `.git`,
//!   to a repository's `.git/info/exclude`, or to the root or one of its
//!   ancestors drops the scan (the next call walks again). So does a change
//!   to git's global rules: its global and system configuration files
//!   (they name `core.excludesFile`) and the excludes file they name, whose
//!   directories (or nearest existing ancestors) are watched for every scan
//!   that honours gitignore (see `global_rule_files`). A lost event queue, a watch that cannot be added (the budget or
//!   the kernel's limit), a watcher error or a cookie that never arrives makes
//!   the scan fall back to the TTL, with the reason in [`WatchStats`].
//! - **Mounts.** A filesystem mounted below the root when the scan is walked
//!   is watched like any directory, but mounting or unmounting sends no
//!   event: an answer whose root has gained or lost a mount point at, below
//!   or above it since its walk falls back to the TTL too (see `mounts`).
//!
//! Every watch counts against [`WatchPolicy::budget`]; a scan that would
//! exceed it falls back instead of being half watched.

use std::{
    collections::{HashMap, HashSet},
    path::{Path, PathBuf},
    sync::{
        Arc, Condvar, Mutex, MutexGuard,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use ignore::IncrementalIgnore;
use notify::{
    Config, Event, EventKind, EventKindMask, RecommendedWatcher, RecursiveMode, Watcher,
    event::ModifyKind,
};

use self::{cookies::CookieDir, mounts::Mounts};
use crate::{
    cancel::CancelToken,
    content_index::ContentIndex,
    entries::{
        Added, Entries, Entry, FileType, Patch, bytes_to_path, compare_paths, is_within,
        path_to_bytes,
    },
    error::Result,
    walk::{self, ScanKey},
};

/// How long an answer looks for its cookie before it sleeps until the
/// watcher wakes it. The watcher's thread routes a cookie in tens of
/// microseconds, while a sleep and a wake-up cost about as much again: a
/// first page of a cached grep took about 180 us, a hundred of them in
/// waiting for the cookie.
const COOKIE_SPIN: Duration = Duration::from_micros(200);

/// How long an answer waits for its cookie. The cookie's event follows
/// the events queued before it within microseconds on an idle machine; a
/// wait this long means the watcher's thread is stuck, and the scan falls
/// back rather than answering from an unknown state.
const COOKIE_WAIT: Duration = Duration::from_secs(5);

/// Names whose change alters which entries a scan admits.
pub(crate) const RULE_NAMES: [&[u8]; 4] = [b".gitignore", b".ignore", b".rgignore", b".git"];

/// Watches given back at once from which the watcher is replaced rather
/// than told to drop each (see [`Watching::let_go`]): `notify` looks
/// through all its watches per removal, and below this many that costs
/// less than re-adding what stays.
const RENEW_WATCHER_AT: usize = 1_024;

/// Watching's configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WatchPolicy {
    /// Most directories watched at once across every scan.
    pub budget: usize,
}

impl Default for WatchPolicy {
    /// What the user's processes leave free of the kernel's per-user limit
    /// now, less a quarter of the limit kept for them, at most 131 072 (see
    /// `budget`). It reads `/proc`: a policy is made once, when watching
    /// starts.
    fn default() -> WatchPolicy {
        WatchPolicy {
            budget: budget::default_budget(),
        }
    }
}

/// Why a scan stopped following events and fell back to the TTL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fallback {
    /// The kernel's event queue overflowed: events were lost.
    Overflow,
    /// Watching the scan's directories would exceed the watch budget.
    WatchBudget,
    /// The kernel refused a watch (its per-user limit).
    WatchLimit,
    /// The watcher reported an error.
    WatcherError,
    /// A filesystem was mounted or unmounted at or below the root since
    /// the walk (no event reports it).
    Mounts,
    /// A cookie's event did not arrive in time.
    CookieTimeout,
}

/// Counters of watching, for the cache's stats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WatchStats {
    /// Whether watching is on.
    pub enabled: bool,
    /// Cached scans following events.
    pub watched_roots: usize,
    /// Directories watched.
    pub watches: usize,
    /// Most directories this process watches at once (its
    /// [`WatchPolicy::budget`]); 0 while watching is off.
    pub budget: usize,
    /// Event paths applied to cached scans.
    pub events_applied: u64,
    /// Scans dropped for a change the patcher does not apply (rules, root).
    pub rewalks: u64,
    /// Scans that fell back to the TTL because the kernel's event queue
    /// overflowed.
    pub overflow: u64,
    /// ... because watching them would exceed the watch budget.
    pub watch_budget: u64,
    /// ... because the kernel refused a watch (its per-user limit).
    pub watch_limit: u64,
    /// ... because the watcher reported an error.
    pub watcher_error: u64,
    /// ... because a cookie's event did not arrive in time.
    pub cookie_timeout: u64,
    /// ... because a filesystem was mounted or unmounted at or below the
    /// root since the walk.
    pub mounts: u64,
}

/// What a cached scan is after draining its events.
pub(crate) enum Refresh {
    /// Nothing changed under it.
    Current,
    /// These entries replace it.
    Patched(Arc<Entries>),
    /// It must be walked again.
    Rewalk,
    /// It does not follow events: the TTL decides.
    Unwatched,
}

/// The process's watcher and the routing of its events to cached scans.
pub(crate) struct Watching {
    watcher: Mutex<RecommendedWatcher>,
    shared: Arc<Shared>,
    cookies: CookieDir,
    next_cookie: AtomicU64,
    /// Numbers the walks that watch, so a walk that ends late (fenced by an
    /// invalidation) gives back its own watches, not those of the walk
    /// that replaced it.
    next_generation: AtomicU64,
    policy: WatchPolicy,
    /// The mount table, re-read when it changes.
    mounts: Mutex<Mounts>,
}

/// Which watching walk of a key a route belongs to.
pub(crate) type Generation = u64;

/// Event paths kept for readers of this process's lists: enough for a
/// reader that asks a few times a second through a burst of events (a
/// checkout, a build); one that falls further behind is told it lost
/// track, and checks each file it relies on once.
const JOURNAL_KEPT: usize = 16_384;

/// The paths events named, in order, numbered; kept only by a process
/// that shares its index (others have no reader to tell, and a burst of
/// events would copy every path for nothing).
#[derive(Default)]
struct Journal {
    /// Whether paths are kept at all.
    kept_on: bool,
    /// The number of the last path noted.
    last: u64,
    /// Every path numbered above `floor` is kept.
    floor: u64,
    kept: std::collections::VecDeque<(u64, PathBuf)>,
}

impl Journal {
    fn note(&mut self, path: &Path) {
        if !self.kept_on {
            return;
        }
        self.last += 1;
        if self.kept.len() == JOURNAL_KEPT
            && let Some((number, _)) = self.kept.pop_front()
        {
            self.floor = number;
        }
        self.kept.push_back((self.last, path.to_path_buf()));
    }

    /// Events went unseen (the kernel's queue overflowed, the watcher
    /// failed): nothing before now can be told.
    fn lose(&mut self) {
        self.kept.clear();
        self.floor = self.last;
    }

    /// The paths within `root` noted after `since`; `None` when some may
    /// have been dropped, or none are kept.
    fn since(&self, since: u64, root: &Path) -> Option<Vec<PathBuf>> {
        if !self.kept_on || since < self.floor {
            return None;
        }
        let after = self.kept.partition_point(|(number, _)| *number <= since);
        Some(
            self.kept
                .range(after..)
                .filter(|(_, path)| path.starts_with(root))
                .map(|(_, path)| path.clone())
                .collect(),
        )
    }
}

/// What events changed within a watched scan's root since a reader last
/// asked (see [`Watching::events_since`]).
pub(crate) struct EventsSince {
    /// The walk the scan's watch belongs to: under another one, what the
    /// reader learned under the old one proves nothing.
    pub generation: Generation,
    /// Where the next question starts.
    pub last: u64,
    /// The paths named, or `None` when some may be missing (the first
    /// question, a reader too far behind, events lost).
    pub paths: Option<Vec<PathBuf>>,
}

struct Shared {
    routes: Mutex<Routes>,
    cookie_arrived: Condvar,
    /// The highest cookie whose event was routed, stored under the
    /// routes' lock (so a wait on `cookie_arrived` misses no store) and
    /// read without it by an answer looking for its cookie.
    cookie_seen: AtomicU64,
    /// The content index: every event drops the entries of the path it
    /// names before any later cookie is seen (see `content_index`).
    contents: Arc<ContentIndex>,
    /// The paths events named, kept for the processes that read this
    /// process's lists (see [`Watching::events_since`]).
    journal: Mutex<Journal>,
    /// Test hook: held by a test to stall the watcher's thread (so the
    /// kernel's queue overflows).
    #[cfg(test)]
    stall: Mutex<()>,
    /// Test hook: watches given back one by one.
    #[cfg(test)]
    unwatched: std::sync::atomic::AtomicUsize,
    /// Test hook: no second watcher can be made beside the first (as at
    /// the kernel's per-user limit).
    #[cfg(test)]
    refuse_second_watcher: std::sync::atomic::AtomicBool,
}

#[derive(Default)]
struct Routes {
    keys: HashMap<ScanKey, Route>,
    /// Every watched directory and how many scans hold it.
    holders: HashMap<PathBuf, usize>,
    stats: WatchStats,
}

/// One cached scan's share of the watcher.
#[derive(Default)]
struct Route {
    /// The walk that made this route.
    generation: Generation,
    /// Directories this scan holds a watch on.
    dirs: HashSet<PathBuf>,
    /// Paths named by events since the last patch, and whether an event on
    /// the path was structural (created, removed, renamed) rather than a
    /// change of content or attributes.
    pending: HashMap<PathBuf, bool>,
    /// The scan must be walked again.
    rewalk: bool,
    /// Why the scan no longer follows events.
    fallen: Option<Fallback>,
    /// The mount points deciding what the root holds when it was walked,
    /// and the mount table's generation they were last checked against.
    mounts: (Vec<PathBuf>, u64),
    /// The files git's global ignore rules come from, when the scan honours
    /// gitignore ([`global_rule_files`]).
    global_rules: Vec<PathBuf>,
}

impl Watching {
    /// A watcher with its cookie directory, or the error that prevents one;
    /// events also reach `contents`.
    /// With `journal`, the paths events name are kept for processes
    /// reading this one's lists (see [`Watching::events_since`]).
    pub(crate) fn start(
        policy: WatchPolicy,
        contents: Arc<ContentIndex>,
        journal: bool,
    ) -> std::io::Result<Watching> {
        let cookies = CookieDir::make()?;
        let shared = Arc::new(Shared {
            routes: Mutex::new(Routes::default()),
            cookie_arrived: Condvar::new(),
            cookie_seen: AtomicU64::new(0),
            contents,
            journal: Mutex::new(Journal {
                kept_on: journal,
                ..Journal::default()
            }),
            #[cfg(test)]
            stall: Mutex::new(()),
            #[cfg(test)]
            unwatched: std::sync::atomic::AtomicUsize::new(0),
            #[cfg(test)]
            refuse_second_watcher: std::sync::atomic::AtomicBool::new(false),
        });
        let watcher = new_watcher(&shared, cookies.path()).map_err(std::io::Error::other)?;
        Ok(Watching {
            watcher: Mutex::new(watcher),
            shared,
            cookies,
            next_cookie: AtomicU64::new(0),
            next_generation: AtomicU64::new(0),
            policy,
            mounts: Mutex::new(Mounts::open()),
        })
    }

    /// Walk `key` for the cache, watching its root, the root's ancestors and
    /// every directory the walk admits; returns the entries and the walk's
    /// generation (see [`Watching::release_walk`]). A scan that could not be
    /// watched whole has fallen back by the time this returns; a walk that
    /// fails gives its watches back.
    pub(crate) fn scan(
        self: &Arc<Self>,
        key: &ScanKey,
        token: &CancelToken,
    ) -> Result<(Entries, Generation)> {
        let generation = self.follow(key);
        let listed = walk::scan_watching(&key.root, key.policy, self.holder(key), token);
        self.settle(key, generation, listed.is_ok());
        listed.map(|entries| (entries, generation))
    }

    /// Start following `key` afresh: its route, and watches on the root's
    /// ancestors and the directories of git's global rule files. Returns
    /// the listing's generation; the listing (a walk, or a restore that
    /// watches each directory before it checks it, see
    /// `persist::Store::restore_following`) ends with [`Watching::settle`].
    pub(crate) fn follow(&self, key: &ScanKey) -> Generation {
        self.release(key);
        let generation = self.next_generation.fetch_add(1, Ordering::SeqCst) + 1;
        let global_rules = global_rules_of(key);
        let route = Route {
            generation,
            mounts: self.mounts_at_or_below(&key.root),
            global_rules: global_rules.clone(),
            ..Route::default()
        };
        self.shared.lock().keys.insert(key.clone(), route);
        for ancestor in key.root.ancestors().skip(1) {
            self.hold(key, ancestor);
        }
        for rule in &global_rules {
            if let Some(dir) = rule.ancestors().skip(1).find(|dir| dir.is_dir()) {
                self.hold(key, dir);
            }
        }
        generation
    }

    /// What holds a watch on each directory a listing of `key` admits.
    pub(crate) fn holder(self: &Arc<Self>, key: &ScanKey) -> walk::OnDir {
        let (watching, owner) = (Arc::clone(self), key.clone());
        Arc::new(move |dir| watching.hold(&owner, dir))
    }

    /// End the listing `generation` of `key`: when it `listed`, check it
    /// against the mounts and the budget; else give its watches back.
    pub(crate) fn settle(&self, key: &ScanKey, generation: Generation, listed: bool) {
        if listed {
            // A mount made while the listing ran may or may not be in it.
            self.check_mounts(key);
            // A listing that went over the budget gives back what it took
            // now, not at the scan's next use.
            self.tidy(key);
        } else {
            self.release_walk(key, generation);
        }
    }

    /// [`Watching::release`], if `key` still follows the walk `generation`
    /// made (and not a later walk's).
    pub(crate) fn release_walk(&self, key: &ScanKey, generation: Generation) {
        let route = {
            let mut routes = self.shared.lock();
            match routes.keys.get(key) {
                Some(route) if route.generation == generation => routes.keys.remove(key),
                _ => None,
            }
        };
        if let Some(route) = route {
            self.let_go(route.dirs);
        }
    }

    /// Drain `key`'s events up to now and apply them to `entries`. A
    /// deadline of `token`'s that comes before the cookie is its error: the
    /// caller gave up, which says nothing against the watch.
    pub(crate) fn refresh(
        self: &Arc<Self>,
        key: &ScanKey,
        entries: &Entries,
        token: &CancelToken,
    ) -> Result<Refresh> {
        self.check_mounts(key);
        if !self.drain(token) {
            token.check()?;
            self.fall(key, Fallback::CookieTimeout);
        }
        Ok(self.apply_pending(key, entries))
    }

    /// Apply the events routed for `key` to `entries`.
    fn apply_pending(self: &Arc<Self>, key: &ScanKey, entries: &Entries) -> Refresh {
        // Events drained may include a lost queue: a scan that fell gives its
        // watches back here.
        if !self.follows(key) {
            return Refresh::Unwatched;
        }
        let pending = {
            let mut routes = self.shared.lock();
            let Some(route) = routes.keys.get_mut(key) else {
                return Refresh::Unwatched;
            };
            if route.rewalk {
                routes.stats.rewalks += 1;
                return Refresh::Rewalk;
            }
            std::mem::take(&mut route.pending)
        };
        if pending.is_empty() {
            return Refresh::Current;
        }
        let applied = pending.len() as u64;
        let refresh = match self.patch(key, entries, pending) {
            Some(patch) => Refresh::Patched(Arc::new(entries.patched(&patch))),
            None => Refresh::Rewalk,
        };
        let mut routes = self.shared.lock();
        match refresh {
            Refresh::Rewalk => routes.stats.rewalks += 1,
            _ => routes.stats.events_applied += applied,
        }
        drop(routes);
        if !self.follows(key) {
            return Refresh::Unwatched;
        }
        refresh
    }

    /// The generation of `key`'s route when it follows every event on its
    /// root (not fallen, no rewalk due): the watch that vouches for the
    /// content index's entries made under it (see `content_index`).
    /// The paths events named within `key`'s root after `since` (a
    /// [`EventsSince::last`] of an earlier answer), when the watch vouches for
    /// `key` (see [`Watching::vouches`]): what a process reading this one's
    /// list must forget of the files it read, as if it had watched them.
    pub(crate) fn events_since(&self, key: &ScanKey, since: Option<u64>) -> Option<EventsSince> {
        let generation = self.vouches(key)?;
        let journal = self
            .shared
            .journal
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        Some(EventsSince {
            generation,
            last: journal.last,
            paths: since.and_then(|since| journal.since(since, &key.root)),
        })
    }

    pub(crate) fn vouches(&self, key: &ScanKey) -> Option<Generation> {
        if !self.follows(key) {
            return None;
        }
        let routes = self.shared.lock();
        let route = routes.keys.get(key)?;
        (route.fallen.is_none() && !route.rewalk).then_some(route.generation)
    }

    /// Have `key`'s scan reconcile `path` (inside its root) at its next
    /// answer, as if an event had named it; `false` when the scan does not
    /// follow events (the caller drops it instead).
    pub(crate) fn reconcile(&self, key: &ScanKey, path: &Path) -> bool {
        let mut routes = self.shared.lock();
        match routes.keys.get_mut(key) {
            Some(route) if route.fallen.is_none() && !route.rewalk => {
                route.pending.insert(path.to_path_buf(), true);
                true
            }
            _ => false,
        }
    }

    /// Whether `key`'s scan follows events (one that fell gives its
    /// watches back here).
    pub(crate) fn follows(&self, key: &ScanKey) -> bool {
        self.tidy(key);
        self.shared
            .lock()
            .keys
            .get(key)
            .is_some_and(|route| route.fallen.is_none())
    }

    /// Stop following `key`: its watches go (those no other scan holds).
    pub(crate) fn release(&self, key: &ScanKey) {
        let dirs = match self.shared.lock().keys.remove(key) {
            Some(route) => route.dirs,
            None => return,
        };
        self.let_go(dirs);
    }

    /// The counters, with `enabled` set.
    pub(crate) fn stats(&self) -> WatchStats {
        let routes = self.shared.lock();
        WatchStats {
            enabled: true,
            watched_roots: routes.keys.values().filter(|r| r.fallen.is_none()).count(),
            watches: routes.holders.len(),
            budget: self.policy.budget,
            ..routes.stats
        }
    }

    /// The mount points deciding what `root` holds now (see
    /// `mounts::Mounts::deciding`), and the table's generation.
    fn mounts_at_or_below(&self, root: &Path) -> (Vec<PathBuf>, u64) {
        let mut mounts = self.mounts.lock().unwrap_or_else(|p| p.into_inner());
        let generation = mounts.refresh();
        (mounts.deciding(root), generation)
    }

    /// Fall back (`Mounts`) if the mount points deciding what `key`'s root
    /// holds are no longer those its walk met.
    fn check_mounts(&self, key: &ScanKey) {
        let now = self.mounts_at_or_below(&key.root);
        let changed = {
            let mut routes = self.shared.lock();
            let Some(route) = routes.keys.get_mut(key) else {
                return;
            };
            let changed = now.1 != route.mounts.1 && now.0 != route.mounts.0;
            route.mounts = now;
            changed
        };
        if changed {
            self.fall(key, Fallback::Mounts);
        }
    }

    /// Create the next cookie and wait until its event has been routed:
    /// `false` when it did not arrive in time, or before `token`'s
    /// deadline.
    fn drain(&self, token: &CancelToken) -> bool {
        let cookie = self.next_cookie.fetch_add(1, Ordering::SeqCst) + 1;
        let path = self.cookies.path().join(cookie.to_string());
        if std::fs::write(&path, b"").is_err() {
            return false;
        }
        if self.cookie_seen_soon(cookie, token.within(COOKIE_SPIN)) {
            return true;
        }
        let routes = self.shared.lock();
        let (routes, _) = self
            .shared
            .cookie_arrived
            .wait_timeout_while(routes, token.within(COOKIE_WAIT), |_| {
                self.shared.cookie_seen.load(Ordering::Acquire) < cookie
            })
            .unwrap_or_else(|p| p.into_inner());
        let arrived = self.shared.cookie_seen.load(Ordering::Acquire) >= cookie;
        drop(routes);
        let _ = std::fs::remove_file(&path);
        arrived
    }

    /// Whether `cookie` is routed within `spin` (at most [`COOKIE_SPIN`]),
    /// yielding the CPU (to the watcher's thread, on a busy machine)
    /// between looks.
    fn cookie_seen_soon(&self, cookie: u64, spin: Duration) -> bool {
        let started = Instant::now();
        loop {
            if self.shared.cookie_seen.load(Ordering::Acquire) >= cookie {
                return true;
            }
            if started.elapsed() >= spin {
                return false;
            }
            std::thread::yield_now();
        }
    }

    /// Watch `dir` for `key` (counted once per scan and directory). Over the
    /// budget, or when the watcher refuses, the scan falls back.
    ///
    /// The watch is (re)added even when another scan holds the same path:
    /// the directory there may be a new one (removed and made again, or
    /// renamed into place) whose events nobody receives yet, and adding a
    /// watch for a path `notify` already watches replaces it.
    fn hold(&self, key: &ScanKey, dir: &Path) {
        {
            let mut routes = self.shared.lock();
            let over_budget =
                !routes.holders.contains_key(dir) && routes.holders.len() >= self.policy.budget;
            let Some(route) = routes.keys.get_mut(key) else {
                return;
            };
            if route.fallen.is_some() || route.dirs.contains(dir) {
                return;
            }
            if over_budget {
                routes.fall(key, Fallback::WatchBudget);
                return;
            }
            route.dirs.insert(dir.to_path_buf());
            *routes.holders.entry(dir.to_path_buf()).or_default() += 1;
        }
        // Never with the routes locked: `notify` answers on the thread that
        // routes events, which may be waiting for that lock.
        let added = self.lock_watcher().watch(dir, RecursiveMode::NonRecursive);
        if let Err(err) = added {
            let fallback = match err.kind {
                notify::ErrorKind::PathNotFound => return,
                // The walk cannot list it either, and names it unreadable;
                // a change that opens it is reported to its parent's watch.
                notify::ErrorKind::Io(ref io) if unreadable_dir(io) => return,
                notify::ErrorKind::MaxFilesWatch => Fallback::WatchLimit,
                _ => Fallback::WatcherError,
            };
            return self.fall(key, fallback);
        }
        if key.policy.use_gitignore {
            self.hold_exclude_file(key, dir);
        }
    }

    /// Watch where `dir`'s repository keeps `info/exclude`, when `dir`
    /// holds a `.git` directory: the walk never enters `.git`, but its
    /// rules apply to the repository's whole tree.
    fn hold_exclude_file(&self, key: &ScanKey, dir: &Path) {
        if dir.file_name() == Some(std::ffi::OsStr::new(".git")) {
            return;
        }
        let git = dir.join(".git");
        if std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir()) {
            self.hold(key, &git);
            let info = git.join("info");
            if std::fs::symlink_metadata(&info).is_ok_and(|m| m.is_dir()) {
                self.hold(key, &info);
            }
        }
    }

    /// Give up the watches on `dirs` that no scan holds any more. The
    /// cookie directory stays watched, even when a scan of a directory
    /// above it (the temp directory itself) listed and let go of it.
    ///
    /// `notify` looks through every watch it has to remove one, so giving
    /// watches back one by one costs the square of their number: the 48 135
    /// watches of a scan of a million files that went over the budget took
    /// minutes. When at least [`RENEW_WATCHER_AT`] go and fewer stay, the
    /// watcher is replaced instead: a new one watches what stays, then the
    /// old one is dropped, its watches with it (both deliver events in
    /// between, which only repeats some).
    fn let_go(&self, dirs: HashSet<PathBuf>) {
        let unheld: Vec<PathBuf> = {
            let mut routes = self.shared.lock();
            dirs.into_iter()
                .filter(|dir| routes.drop_holder(dir) && dir != self.cookies.path())
                .collect()
        };
        let mut watcher = self.lock_watcher();
        if unheld.len() >= RENEW_WATCHER_AT {
            let kept: Vec<PathBuf> = self.shared.lock().holders.keys().cloned().collect();
            if kept.len() < unheld.len() {
                match self.renewed_watcher(&kept) {
                    Some(renewed) => *watcher = renewed,
                    None => self.renew_in_place(&mut watcher, &kept),
                }
                return;
            }
        }
        #[cfg(test)]
        self.shared
            .unwatched
            .fetch_add(unheld.len(), Ordering::Relaxed);
        for dir in unheld {
            // A watch the kernel already dropped (its directory went) is
            // gone either way.
            let _ = watcher.unwatch(&dir);
        }
    }

    /// A new watcher of the cookie directory and of `kept`, or `None` when
    /// one of them cannot be watched (see [`Watching::renew_in_place`]).
    fn renewed_watcher(&self, kept: &[PathBuf]) -> Option<RecommendedWatcher> {
        #[cfg(test)]
        if self.shared.refuse_second_watcher.load(Ordering::Relaxed) {
            return None;
        }
        let mut watcher = new_watcher(&self.shared, self.cookies.path()).ok()?;
        for dir in kept {
            match watcher.watch(dir, RecursiveMode::NonRecursive) {
                Ok(()) => {}
                // Gone since: nothing left to hear from it.
                Err(err) if matches!(err.kind, notify::ErrorKind::PathNotFound) => {}
                Err(_) => return None,
            }
        }
        Some(watcher)
    }

    /// Replace `watcher` by a new one when no second watcher fits beside it
    /// (the kernel's per-user limit is reached: most likely the very reason
    /// a scan is giving its watches back). Giving them back one by one
    /// instead would cost the square of their number (minutes of a core at
    /// a million files), so the old watcher goes first, its watches all at
    /// once, and the new one then watches the cookie directory and `kept`.
    /// Events on `kept` in between are lost: every scan still following
    /// events is walked again at its next answer.
    fn renew_in_place(&self, watcher: &mut RecommendedWatcher, kept: &[PathBuf]) {
        let Ok(bare) = bare_watcher(&self.shared, self.cookies.path()) else {
            self.shared.lock().fall_all(Fallback::WatcherError);
            return;
        };
        drop(std::mem::replace(watcher, bare));
        let cookies = watcher.watch(self.cookies.path(), RecursiveMode::NonRecursive);
        let mut routes = self.shared.lock();
        if cookies.is_err() {
            return routes.fall_all(Fallback::WatchLimit);
        }
        if kept.is_empty() {
            return;
        }
        drop(routes);
        for dir in kept {
            match watcher.watch(dir, RecursiveMode::NonRecursive) {
                Ok(()) => {}
                Err(err) if matches!(err.kind, notify::ErrorKind::PathNotFound) => {}
                Err(_) => return self.shared.lock().fall_all(Fallback::WatchLimit),
            }
        }
        self.shared.lock().rewalk_all();
    }

    /// `key` stops following events, for `reason`, and gives its watches
    /// back. Not on the watcher's thread (see [`Watching::hold`]).
    fn fall(&self, key: &ScanKey, reason: Fallback) {
        self.shared.lock().fall(key, reason);
        self.tidy(key);
    }

    /// Give back the watches of `key` if it fell (on the watcher's thread,
    /// a fall only marks it).
    fn tidy(&self, key: &ScanKey) {
        let dirs = {
            let mut routes = self.shared.lock();
            match routes.keys.get_mut(key) {
                Some(route) if route.fallen.is_some() => std::mem::take(&mut route.dirs),
                _ => return,
            }
        };
        self.let_go(dirs);
    }

    /// The changes that bring `entries` (the scan of `key`) up to date with
    /// the paths `pending` names, or `None` when the scan must be walked
    /// again.
    fn patch(
        self: &Arc<Self>,
        key: &ScanKey,
        entries: &Entries,
        pending: HashMap<PathBuf, bool>,
    ) -> Option<Patch> {
        let named: Vec<(Vec<u8>, bool)> = pending
            .into_iter()
            .filter_map(|(path, structural)| {
                let relative = path.strip_prefix(&key.root).ok()?;
                Some((path_to_bytes(relative).into_owned(), structural))
            })
            .collect();
        reconciled_by(Some(self), key, entries, named)
    }

    fn lock_watcher(&self) -> MutexGuard<'_, RecommendedWatcher> {
        self.watcher.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A watcher whose events `shared` routes, watching the cookie directory
/// `cookies`.
fn new_watcher(shared: &Arc<Shared>, cookies: &Path) -> notify::Result<RecommendedWatcher> {
    let mut watcher = bare_watcher(shared, cookies)?;
    watcher.watch(cookies, RecursiveMode::NonRecursive)?;
    Ok(watcher)
}

/// A watcher whose events `shared` routes, watching nothing yet.
fn bare_watcher(shared: &Arc<Shared>, cookies: &Path) -> notify::Result<RecommendedWatcher> {
    let cookie_dir = cookies.to_path_buf();
    let handler = {
        let shared = Arc::clone(shared);
        move |event: notify::Result<Event>| shared.route(&cookie_dir, event)
    };
    let config = Config::default().with_event_kinds(EventKindMask::CORE);
    RecommendedWatcher::new(handler, config)
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keep the paths `event` names for readers, or mark what it lost.
    fn note_in_journal(&self, event: &notify::Result<Event>) {
        let mut journal = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        match event {
            Ok(event) if !event.need_rescan() => {
                event.paths.iter().for_each(|path| journal.note(path));
            }
            _ => journal.lose(),
        }
    }

    /// Route one event from the watcher's thread.
    fn route(&self, cookies: &Path, event: notify::Result<Event>) {
        #[cfg(test)]
        drop(self.stall.lock());
        if let Ok(event) = &event {
            event
                .paths
                .iter()
                .for_each(|path| self.contents.changed_at(path));
        }
        self.note_in_journal(&event);
        let mut routes = self.lock();
        let event = match event {
            Ok(event) if event.need_rescan() => return routes.fall_all(Fallback::Overflow),
            Ok(event) => event,
            Err(err) => {
                let reason = match err.kind {
                    notify::ErrorKind::MaxFilesWatch => Fallback::WatchLimit,
                    _ => Fallback::WatcherError,
                };
                return routes.fall_all(reason);
            }
        };
        let structural = !matches!(
            event.kind,
            EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Metadata(_)) | EventKind::Access(_)
        );
        for path in &event.paths {
            if path.parent() == Some(cookies) {
                let number = path.file_name().and_then(|n| n.to_str()?.parse().ok());
                if let Some(number) = number {
                    if matches!(event.kind, EventKind::Create(_)) {
                        // Removed here rather than by the answer that made
                        // it, which goes on at once.
                        let _ = std::fs::remove_file(path);
                    }
                    self.cookie_seen.fetch_max(number, Ordering::Release);
                    self.cookie_arrived.notify_all();
                }
            }
            // A cookie is a file like any other to a scan of a directory
            // above the temp directory.
            routes.note(path, structural);
        }
    }
}

impl Routes {
    /// Record an event on `path` for every scan it concerns.
    fn note(&mut self, path: &Path, structural: bool) {
        for (key, route) in &mut self.keys {
            if route.fallen.is_some() {
                continue;
            }
            if path.starts_with(&key.root) && path != key.root {
                *route.pending.entry(path.to_path_buf()).or_default() |= structural;
            } else if (structural && key.root.starts_with(path))
                || (key.policy.use_gitignore && is_rule_of(path, &key.root))
            {
                // The root itself moved or went, or a rule above it changed.
                route.rewalk = true;
            }
            if key.policy.use_gitignore && is_exclude_rule_of(path, &key.root) {
                route.rewalk = true;
            }
            if is_global_rule(path, structural, &route.global_rules) {
                route.rewalk = true;
            }
        }
    }

    fn fall(&mut self, key: &ScanKey, reason: Fallback) {
        let Some(route) = self.keys.get_mut(key) else {
            return;
        };
        if route.fallen.is_none() {
            route.fallen = Some(reason);
            self.stats.count(reason);
        }
    }

    /// Every scan still following events is walked again at its next
    /// answer (events may have been missed).
    fn rewalk_all(&mut self) {
        for route in self.keys.values_mut() {
            if route.fallen.is_none() {
                route.rewalk = true;
            }
        }
    }

    fn fall_all(&mut self, reason: Fallback) {
        let keys: Vec<ScanKey> = self.keys.keys().cloned().collect();
        keys.iter().for_each(|key| self.fall(key, reason));
    }

    /// One scan less holds `dir`; `true` when none does any more.
    fn drop_holder(&mut self, dir: &Path) -> bool {
        match self.holders.get_mut(dir) {
            Some(count) if *count > 1 => {
                *count -= 1;
                false
            }
            Some(_) => {
                self.holders.remove(dir);
                true
            }
            None => false,
        }
    }
}

impl WatchStats {
    fn count(&mut self, reason: Fallback) {
        let counter = match reason {
            Fallback::Overflow => &mut self.overflow,
            Fallback::WatchBudget => &mut self.watch_budget,
            Fallback::WatchLimit => &mut self.watch_limit,
            Fallback::WatcherError => &mut self.watcher_error,
            Fallback::CookieTimeout => &mut self.cookie_timeout,
            Fallback::Mounts => &mut self.mounts,
        };
        *counter += 1;
    }
}

/// Whether `path` is an ignore rule source of a scan of `root` outside it:
/// an ignore file or `.git` in one of the root's ancestors.
fn is_rule_of(path: &Path, root: &Path) -> bool {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return false;
    };
    root.starts_with(parent) && RULE_NAMES.contains(&path_to_bytes(Path::new(name)).as_ref())
}

/// The global rule files of `key`'s scans: [`global_rule_files`] from the
/// process environment and the excludes file they name; none when the
/// scans honour no ignore files.
pub(crate) fn global_rules_of(key: &ScanKey) -> Vec<PathBuf> {
    if !key.policy.use_gitignore {
        return Vec::new();
    }
    let mut files = global_rule_files(&|name| std::env::var_os(name));
    files.extend(ignore::gitignore::gitconfig_excludes_path());
    files
}

/// The files git's global ignore rules come from, as the walk reads them
/// (`ignore`'s `gitconfig_excludes_path`): the global configuration
/// (`$GIT_CONFIG_GLOBAL`, else `~/.gitconfig` and
/// `$XDG_CONFIG_HOME/git/config`), the system one (`$GIT_CONFIG_SYSTEM`,
/// else `/etc/gitconfig`) and the excludes file's default
/// (`$XDG_CONFIG_HOME/git/ignore`); the file they name is added by the
/// caller. `var` reads the environment.
fn global_rule_files(var: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<PathBuf> {
    let set = |name: &str| {
        var(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    let home = set("HOME");
    let config = set("XDG_CONFIG_HOME").or_else(|| home.as_ref().map(|home| home.join(".config")));
    let mut files: Vec<PathBuf> = match set("GIT_CONFIG_GLOBAL") {
        Some(global) => vec![global],
        None => [
            home.map(|home| home.join(".gitconfig")),
            config.as_ref().map(|c| c.join("git/config")),
        ]
        .into_iter()
        .flatten()
        .collect(),
    };
    files.push(set("GIT_CONFIG_SYSTEM").unwrap_or_else(|| PathBuf::from("/etc/gitconfig")));
    files.extend(config.map(|config| config.join("git/ignore")));
    files
}

/// Whether an event on `path` may change the global rules read from
/// `rules`: any event on one of them, or a structural one on a directory
/// above one (made, removed or renamed, it brings or takes the file).
fn is_global_rule(path: &Path, structural: bool, rules: &[PathBuf]) -> bool {
    rules
        .iter()
        .any(|rule| rule == path || (structural && rule.starts_with(path)))
}

/// Whether `path` is a repository's `.git/info` or `.git/info/exclude`
/// whose rules apply to some of a scan of `root`: the repository contains
/// the root or lies inside it.
fn is_exclude_rule_of(path: &Path, root: &Path) -> bool {
    let mut tail: Vec<&std::ffi::OsStr> = path.iter().collect();
    if tail.last().is_some_and(|name| *name == "exclude") {
        tail.pop();
    }
    let [.., git, info] = tail.as_slice() else {
        return false;
    };
    if *git != ".git" || *info != "info" {
        return false;
    }
    let repository: PathBuf = tail[..tail.len() - 2].iter().collect();
    root.starts_with(&repository) || repository.starts_with(root)
}

/// The changes that bring `entries`, a scan of `key` (followed by
/// `watching`, if given), up to date with the paths `named` (relative, each with whether its
/// change may be structural: made, removed or renamed), reconciled as
/// events naming them would be; `None` when the scan must be walked again
/// (a rule file among them, or something unreadable). What persisted scans
/// found changed since their record is brought up to date by this.
pub(crate) fn reconciled(
    watching: Option<&Arc<Watching>>,
    key: &ScanKey,
    entries: &Entries,
    named: Vec<(Vec<u8>, bool)>,
) -> Option<Patch> {
    reconciled_by(watching, key, entries, named)
}

/// [`reconciled`], holding a watch on each directory walked when a
/// watcher follows the scan.
fn reconciled_by(
    watching: Option<&Arc<Watching>>,
    key: &ScanKey,
    entries: &Entries,
    mut named: Vec<(Vec<u8>, bool)>,
) -> Option<Patch> {
    named.sort_by(|a, b| compare_paths(&a.0, &b.0));
    let mut patcher = Patcher {
        watching,
        key,
        entries,
        matcher: walk::matcher(&key.root, key.policy),
        changes: Changes::default(),
    };
    for (relative, structural) in named {
        patcher.reconcile(&relative, structural)?;
    }
    Some(patcher.changes.into_patch())
}

/// Reconciles the paths events named with what is there now, watching what
/// it walks when a watcher follows the scan.
struct Patcher<'a> {
    watching: Option<&'a Arc<Watching>>,
    key: &'a ScanKey,
    entries: &'a Entries,
    matcher: IncrementalIgnore,
    changes: Changes,
}

/// Changes gathered for a [`Patch`], each path once.
#[derive(Default)]
struct Changes {
    removed: Vec<Vec<u8>>,
    added: HashMap<Vec<u8>, (FileType, Option<i64>)>,
    /// What the scan's rules leave out, for its record of them (see
    /// [`Entries::skipped`]).
    skipped: HashMap<Vec<u8>, (FileType, Option<i64>)>,
    /// Directories walked whole in this patch: what lies below them is
    /// already current.
    walked: Vec<Vec<u8>>,
}

impl Changes {
    fn into_patch(self) -> Patch {
        let mut removed = self.removed;
        removed.sort_by(|a, b| compare_paths(a, b));
        removed.dedup();
        Patch {
            removed,
            added: in_path_order(self.added),
            skipped: in_path_order(self.skipped),
        }
    }
}

/// `entries` as additions, in path order.
fn in_path_order(entries: HashMap<Vec<u8>, (FileType, Option<i64>)>) -> Vec<Added> {
    let mut added: Vec<Added> = entries
        .into_iter()
        .map(|(path, (file_type, mtime_ms))| Added {
            path,
            file_type,
            mtime_ms,
        })
        .collect();
    added.sort_by(|a, b| compare_paths(&a.path, &b.path));
    added
}

impl Patcher<'_> {
    /// Bring `relative` up to date; `None` when the scan must be walked
    /// again instead.
    fn reconcile(&mut self, relative: &[u8], structural: bool) -> Option<()> {
        if self
            .changes
            .walked
            .iter()
            .any(|dir| is_within(relative, dir))
        {
            return Some(());
        }
        let name = relative.rsplit(|&b| b == b'/').next().unwrap_or(relative);
        if self.key.policy.use_gitignore && RULE_NAMES.contains(&name) {
            return None;
        }
        if self.touches_unreadable(relative) {
            return None;
        }
        let parent = parent_of(relative);
        if parent.is_some_and(|parent| !self.is_listed_dir(parent)) {
            // Named through a directory the scan does not list (one renamed
            // away since): that directory's own event brings it up to date.
            return Some(());
        }
        if !relative.split(|&b| b == b'/').any(walk::is_git_dir) {
            self.bring_up_to_date(relative, structural)?;
        }
        if let Some(parent) = parent {
            self.refresh_dir(parent);
        }
        Some(())
    }

    /// The entry of `relative` (in a listed directory) as it is now.
    fn bring_up_to_date(&mut self, relative: &[u8], structural: bool) -> Option<()> {
        let absolute = self.key.root.join(bytes_to_path(relative));
        let now = walk::lstat(&absolute);
        let listed = self
            .entries
            .find(relative)
            .map(|i| self.entries.get(i).file_type);
        match (structural, listed, now) {
            (false, Some(was), Some((file_type, mtime_ms))) if was == file_type => {
                self.changes
                    .added
                    .insert(relative.to_vec(), (file_type, mtime_ms));
                Some(())
            }
            _ => {
                if let (Some(FileType::Dir), Some(watching)) = (listed, self.watching) {
                    self.let_go_within(&absolute);
                    let contents = &watching.shared.contents;
                    contents.forget_within(&self.key.root, relative);
                }
                self.replace(relative, &absolute, now)
            }
        }
    }

    /// Drop `relative` and its subtree, then add what is there now if the
    /// scan's rules admit it, walking a directory; what they leave out goes
    /// to the scan's record of it instead.
    fn replace(
        &mut self,
        relative: &[u8],
        absolute: &Path,
        now: Option<(FileType, Option<i64>)>,
    ) -> Option<()> {
        self.changes.removed.push(relative.to_vec());
        let Some((file_type, mtime_ms)) = now else {
            return Some(());
        };
        let is_dir = file_type == FileType::Dir;
        if self
            .matcher
            .matched(bytes_to_path(relative), is_dir)
            .is_ignore()
        {
            self.changes
                .skipped
                .insert(relative.to_vec(), (file_type, None));
            return Some(());
        }
        self.changes
            .added
            .insert(relative.to_vec(), (file_type, mtime_ms));
        if is_dir {
            self.walk_into(relative, absolute)?;
        }
        Some(())
    }

    /// Whether a change at `relative` may change what the scan could not
    /// read: it names an unreadable path (a `chmod` that opens a directory
    /// is such a change) or one above it. The patcher cannot tell, so the
    /// scan is walked again.
    fn touches_unreadable(&self, relative: &[u8]) -> bool {
        self.entries
            .unreadable()
            .iter()
            .any(|unread| is_within(&unread.path, relative))
    }

    /// Walk the new directory `relative` (watching it) and add its entries;
    /// `None` (walk the scan again) when part of it could not be read, as
    /// a patch carries no unreadable paths.
    fn walk_into(&mut self, relative: &[u8], absolute: &Path) -> Option<()> {
        let on_dir: walk::OnDir = match self.watching {
            Some(watching) => watching.holder(self.key),
            None => Arc::new(|_| {}),
        };
        // A directory that vanished or became unreadable since the `lstat`
        // has its own event coming: an empty walk is right for now.
        let token = CancelToken::new();
        let found =
            walk::scan_watching(absolute, self.key.policy, on_dir, &token).unwrap_or_default();
        if !found.unreadable().is_empty() {
            return None;
        }
        let below = |entry: &Entry<'_>| [relative, b"/", entry.path].concat();
        for entry in found.iter() {
            let listed = (entry.file_type, entry.mtime_ms);
            self.changes.added.insert(below(&entry), listed);
        }
        // The directory is watched: what its walk left out is kept in the
        // record from here on by events, as its entries are.
        if self.entries.skipped().is_some() {
            let skipped = walk::skipped(absolute, &found, &token).unwrap_or_default();
            for entry in skipped.iter() {
                let left_out = (entry.file_type, None);
                self.changes.skipped.insert(below(&entry), left_out);
            }
        }
        self.changes.walked.push(relative.to_vec());
        Some(())
    }

    /// Re-read the mtime of the listed directory `relative`, whose children
    /// changed.
    fn refresh_dir(&mut self, relative: &[u8]) {
        if self.changes.added.contains_key(relative) {
            return;
        }
        let absolute = self.key.root.join(bytes_to_path(relative));
        if let Some((FileType::Dir, mtime_ms)) = walk::lstat(&absolute) {
            self.changes
                .added
                .insert(relative.to_vec(), (FileType::Dir, mtime_ms));
        }
    }

    /// Whether `relative` is a directory of the scan (listed, or walked in
    /// this patch).
    fn is_listed_dir(&self, relative: &[u8]) -> bool {
        let listed = self
            .entries
            .find(relative)
            .is_some_and(|i| self.entries.get(i).file_type == FileType::Dir);
        listed
            || self
                .changes
                .added
                .get(relative)
                .is_some_and(|(t, _)| *t == FileType::Dir)
    }

    /// Give up this scan's watches at or below `absolute`.
    fn let_go_within(&self, absolute: &Path) {
        let Some(watching) = self.watching else {
            return;
        };
        let dirs: HashSet<PathBuf> = {
            let mut routes = watching.shared.lock();
            let Some(route) = routes.keys.get_mut(self.key) else {
                return;
            };
            let within: HashSet<PathBuf> = route
                .dirs
                .iter()
                .filter(|dir| dir.starts_with(absolute))
                .cloned()
                .collect();
            route.dirs.retain(|dir| !within.contains(dir));
            within
        };
        watching.let_go(dirs);
    }
}

/// Whether a watch was refused for a reason that also stops a walk from
/// listing the directory (no read permission, a path past `PATH_MAX`).
fn unreadable_dir(err: &std::io::Error) -> bool {
    matches!(
        err.kind(),
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::InvalidFilename
    )
}

/// The parent of the relative path `relative`, if it is not the root.
fn parent_of(relative: &[u8]) -> Option<&[u8]> {
    memchr::memrchr(b'/', relative).map(|slash| &relative[..slash])
}

mod budget;
mod cookies;
mod mounts;
#[cfg(test)]
mod tests;
