//! The shared scan cache (seed 001): complete scan lists keyed by
//! (canonical root, include_hidden, use_gitignore), reused by glob, fuzzy
//! find and grep.
//!
//! Policy is global and fixed once per process: from the `FS_SCAN_*` variables
//! `FS_SCAN_CACHE_TTL_MS` (1000; 0 bypasses the cache), `FS_SCAN_EMPTY_RECHECK_MS`
//! (200), `FS_SCAN_CACHE_MAX_ENTRIES` (16), `FS_SCAN_CACHE_MAX_BYTES` (128 MiB) and
//! `FS_SCAN_CACHE_CONTENT_BYTES` (a thirty-second of memory, 64 MiB to 1 GiB), and `FS_SCAN_CACHE_PERSIST` (off; `1`
//! keeps walked scans across restarts under the natives home, see
//! [`crate::persist`]) with `FS_SCAN_CACHE_PERSIST_BYTES` (1 GiB), and
//! `FS_SCAN_CACHE_SHARED` (off; `1` reads each root from one indexer
//! process of the user's, see [`crate::shared`], and turns watching and
//! persistence on).
//! A front whose runtime keeps its own copy of the environment hands them over
//! with [`init_global`] before the first use (Bun does not pass `process.env`
//! writes on to native code); otherwise [`global`] reads the process
//! environment ([`CachePolicy::from_env`]). Both parse with
//! [`CachePolicy::from_lookup`].
//!
//! Beyond the seed's original behaviour, this cache guarantees:
//! - **single flight**: concurrent misses on one key run one walk; the others
//!   wait for it (still honouring their own cancellation) and share its list;
//! - **generation fence**: invalidating a root marks every walk of it that is
//!   in flight, and a marked walk is never stored, so a walk that started
//!   before a mutation cannot re-insert the pre-mutation view;
//! - **byte budget** beside the entry budget, both evicting oldest-first; a
//!   scan too large for the budget on its own is not stored, and that
//!   refusal is remembered for the TTL, so the calls that follow walk
//!   without building a list only to throw it away (grep then streams its
//!   walk instead) and [`CacheStats::refused`] says so;
//! - **no copies on a hit**: entries are shared through an `Arc`;
//! - **files that cannot match are not read**: cached greps keep content
//!   signatures of the files they read, trusted only while each file's
//!   identity and timestamps are unchanged (see `grep::prefilter`), within
//!   their own byte budget;
//! - **events instead of age**, when watching is on (`FS_SCAN_CACHE_WATCH=1`
//!   or [`ScanCache::watch`]): a stored scan follows filesystem events and is
//!   patched to the moment of each call before it answers (see
//!   [`crate::watch`]); the TTL stays, as the fallback;
//! - **records instead of walks**, when persistence is on: a miss reads the
//!   scan's record, written after an earlier walk
//!   (by this process or another), and proves it current by the identity
//!   of its directories, listing again only those that changed (see
//!   [`crate::persist`]);
//! - **one index per root for every process**, when sharing is on: the
//!   first process that needs a root indexes it (walks, watches) and the
//!   others read its list, never older than their call (see
//!   [`crate::shared`]).
//!
//! All state sits behind one mutex. Every critical section is a few map
//! operations on at most a handful of keys (the walks themselves run outside
//! it), and one lock is what makes "check the fence, then store" atomic with
//! respect to invalidation.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::{
        Arc, Condvar, Mutex, MutexGuard, OnceLock,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use ignore::overrides::Override;
use natives_system::lock::HeldLock;

pub use crate::walk::ScanKey;

use crate::{
    cancel::CancelToken,
    content_index::{ContentIndex, ContentStats, Stamp},
    entries::Entries,
    error::Result,
    names::NameIndex,
    paths::resolve_invalidation_targets,
    persist::{self, DEFAULT_PERSIST_BYTES, PersistStats, Store},
    shared::{self, Answer, Listed, Sharing, SharingStats},
    walk::{self, Needs},
    watch::{EventsSince, Generation, Refresh, WatchPolicy, WatchStats, Watching},
};

/// Default time a cached scan is served: long enough to absorb a burst of
/// tool calls, short enough that a missed invalidation heals within a second.
pub const DEFAULT_TTL_MS: u64 = 1_000;
/// Default age after which an empty answer from the cache is re-checked.
pub const DEFAULT_EMPTY_RECHECK_MS: u64 = 200;
/// Default number of cached scans (distinct keys).
pub const DEFAULT_MAX_ENTRIES: usize = 16;
/// Default memory budget for all cached scans together: a scan of `$HOME`
/// must not be able to hold gigabytes.
pub const DEFAULT_MAX_BYTES: usize = 128 * 1024 * 1024;
/// The least default memory budget of the content index (see
/// [`default_content_bytes`]): its trigram lists take about a sixteenth of
/// the text they cover, so this covers the small text files of a 1 GiB
/// tree.
pub const MIN_CONTENT_BYTES: usize = 64 * 1024 * 1024;
/// The most default memory budget of the content index: the index of a
/// generated tree of a million files (559 259 text files) took 335 MiB.
pub const MAX_DEFAULT_CONTENT_BYTES: usize = 1024 * 1024 * 1024;
/// The share of usable memory (one part in this many) the content index
/// takes by default: eight agent processes, each indexing a large tree of
/// its own, then hold a quarter of the machine between them.
const CONTENT_MEMORY_SHARE: u64 = 32;

/// The content index's default memory budget: a thirty-second of the memory
/// this process may use ([`natives_system::memory::usable_bytes`]), within
/// [`MIN_CONTENT_BYTES`] and [`MAX_DEFAULT_CONTENT_BYTES`]; the least when
/// memory cannot be read. A fixed 64 MiB held the index of a tenth of a
/// million-file tree, so every search read the rest.
pub fn default_content_bytes() -> usize {
    content_bytes_for(natives_system::memory::usable_bytes())
}

fn content_bytes_for(usable: Option<u64>) -> usize {
    let share = usable.map_or(0, |bytes| bytes / CONTENT_MEMORY_SHARE);
    usize::try_from(share)
        .unwrap_or(usize::MAX)
        .clamp(MIN_CONTENT_BYTES, MAX_DEFAULT_CONTENT_BYTES)
}

/// How often a caller waiting on another caller's walk re-checks its own
/// cancellation token; well inside the 50 ms abort promise.
const FLIGHT_POLL: Duration = Duration::from_millis(5);

/// Global freshness and size policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CachePolicy {
    ttl: Duration,
    empty_recheck: Duration,
    max_entries: usize,
    max_bytes: usize,
    content_bytes: usize,
    watch: bool,
    /// `None`: [`WatchPolicy::default`], found when watching starts.
    watch_budget: Option<usize>,
    /// The natives home whose `scans/` keeps records, when persistence is on.
    persist_home: Option<PathBuf>,
    persist_bytes: u64,
    shared: bool,
}

impl Default for CachePolicy {
    fn default() -> CachePolicy {
        CachePolicy {
            ttl: Duration::from_millis(DEFAULT_TTL_MS),
            empty_recheck: Duration::from_millis(DEFAULT_EMPTY_RECHECK_MS),
            max_entries: DEFAULT_MAX_ENTRIES,
            max_bytes: DEFAULT_MAX_BYTES,
            content_bytes: default_content_bytes(),
            watch: false,
            watch_budget: None,
            persist_home: None,
            persist_bytes: DEFAULT_PERSIST_BYTES,
            shared: false,
        }
    }
}

impl CachePolicy {
    /// The policy from the `FS_SCAN_*` environment variables; a variable that
    /// is unset or not a non-negative integer keeps its default.
    pub fn from_env() -> CachePolicy {
        CachePolicy::from_lookup(|name| std::env::var(name).ok())
    }

    /// The policy from `FS_SCAN_*` variables as `lookup` finds them (by
    /// name, raw value); a variable it does not find, or whose value is not
    /// a non-negative integer, keeps its default.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> CachePolicy {
        let given = |name: &str| -> Option<u64> { lookup(name)?.trim().parse().ok() };
        let number = |name: &str, default: u64| -> u64 { given(name).unwrap_or(default) };
        let given_size = |name: &str| given(name).map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        let size = |name: &str, default: usize| -> usize { given_size(name).unwrap_or(default) };
        let shared = number("FS_SCAN_CACHE_SHARED", 0) == 1;
        CachePolicy {
            ttl: Duration::from_millis(number("FS_SCAN_CACHE_TTL_MS", DEFAULT_TTL_MS)),
            empty_recheck: Duration::from_millis(number(
                "FS_SCAN_EMPTY_RECHECK_MS",
                DEFAULT_EMPTY_RECHECK_MS,
            )),
            max_entries: size("FS_SCAN_CACHE_MAX_ENTRIES", DEFAULT_MAX_ENTRIES),
            max_bytes: size("FS_SCAN_CACHE_MAX_BYTES", DEFAULT_MAX_BYTES),
            content_bytes: given_size("FS_SCAN_CACHE_CONTENT_BYTES")
                .unwrap_or_else(default_content_bytes),
            watch: shared || number("FS_SCAN_CACHE_WATCH", 0) == 1,
            watch_budget: given_size("FS_SCAN_CACHE_WATCH_MAX"),
            persist_home: match shared || number("FS_SCAN_CACHE_PERSIST", 0) == 1 {
                true => natives_system::paths::home_in(|name| lookup(name).map(Into::into)).ok(),
                false => None,
            },
            persist_bytes: number("FS_SCAN_CACHE_PERSIST_BYTES", DEFAULT_PERSIST_BYTES),
            shared,
        }
    }

    /// How long a scan is served (default 1 s). Zero bypasses the cache.
    pub fn ttl(mut self, ttl: Duration) -> CachePolicy {
        self.ttl = ttl;
        self
    }

    /// Age after which an empty answer is re-checked (default 200 ms).
    pub fn empty_recheck(mut self, age: Duration) -> CachePolicy {
        self.empty_recheck = age;
        self
    }

    /// Maximum number of cached scans (default 16).
    pub fn max_entries(mut self, count: usize) -> CachePolicy {
        self.max_entries = count;
        self
    }

    /// Maximum bytes held by all cached scans (default 128 MiB). A scan
    /// larger than this on its own is returned but never stored.
    pub fn max_bytes(mut self, bytes: usize) -> CachePolicy {
        self.max_bytes = bytes;
        self
    }

    /// Maximum bytes held by the content index (default
    /// [`default_content_bytes`]: a thirty-second of usable memory, 64 MiB
    /// to 1 GiB; 0 turns it off). Past it, the roots' indexes leave least
    /// recently searched first (see the `content_index` module).
    pub fn content_bytes(mut self, bytes: usize) -> CachePolicy {
        self.content_bytes = bytes;
        self
    }

    /// Keep stored scans exact from filesystem events (default off; see
    /// [`crate::watch`]).
    pub fn watch(mut self, on: bool) -> CachePolicy {
        self.watch = on;
        self
    }

    /// Most directories watched at once (default: what the user's
    /// processes leave free of the kernel's per-user limit when watching
    /// starts, less a quarter of the limit kept for them, at most 131 072;
    /// see [`WatchPolicy::default`]). A scan that needs more falls back to
    /// the TTL.
    pub fn watch_budget(mut self, watches: usize) -> CachePolicy {
        self.watch_budget = Some(watches);
        self
    }

    /// Keep walked scans across restarts as records under the natives
    /// `home` (its `scans/` directory), or not (`None`, the default; see
    /// [`crate::persist`]).
    pub fn persist(mut self, home: Option<PathBuf>) -> CachePolicy {
        self.persist_home = home;
        self
    }

    /// Most bytes the records of persisted scans take on disk together
    /// (default 1 GiB); the least recently written go first.
    pub fn persist_bytes(mut self, bytes: u64) -> CachePolicy {
        self.persist_bytes = bytes;
        self
    }

    /// Read each root from one indexer process of the user's, or index it
    /// for the others (default off; see [`crate::shared`]). It takes effect
    /// with [`ScanCache::share`], which needs persistence's home; sharing
    /// without watching keeps each list to the indexer's TTL.
    pub fn shared(mut self, on: bool) -> CachePolicy {
        self.shared = on;
        self
    }

    /// The empty-recheck threshold in milliseconds.
    pub fn empty_recheck_ms(&self) -> u64 {
        duration_ms(self.empty_recheck)
    }
}

/// A scan list and how old it is.
#[derive(Clone, Debug)]
pub struct ScanResult {
    /// The shared, path-sorted entries.
    pub entries: Arc<Entries>,
    /// 0 for a fresh walk; otherwise the cached list's age, at least 1.
    pub cache_age_ms: u64,
    /// The cached list followed every filesystem event on its root up to
    /// this call (watching is on and the scan has not fallen back): the
    /// events prove what it holds, and what it lacks.
    pub watched: bool,
}

/// A snapshot of the cache's size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Watching's counters (all zero while it is off).
    pub watch: WatchStats,
    /// Cached scans (keys).
    pub scans: usize,
    /// Entries across all cached scans.
    pub entries: usize,
    /// Bytes held by all cached scans.
    pub bytes: usize,
    /// Walks this cache has run since it was created (hits run none).
    pub walks: u64,
    /// Keys whose scan was too large for the byte budget, remembered for the
    /// TTL: calls on them walk uncached meanwhile.
    pub refused: usize,
    /// Empty answers old enough for seed 001's recheck that walked no
    /// tree again, because their scan followed every event on its root
    /// (see [`ScanCache::rechecks_empty`]).
    pub empty_rechecks_skipped: u64,
    /// Content signatures' counters.
    pub content: ContentStats,
    /// Persistence's counters (all zero while it is off).
    pub persist: PersistStats,
    /// Sharing's counters (all zero while it is off).
    pub shared: SharingStats,
    /// Name indexes built for cached scans (see the `names` module), and the
    /// bytes they hold (counted in `bytes` too).
    pub names: NameStats,
}

/// The name indexes of the cached scans.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NameStats {
    /// Cached scans whose index is built.
    pub indexes: usize,
    /// Entries those indexes cover.
    pub entries: usize,
    /// Bytes they hold.
    pub bytes: usize,
}

impl CacheStats {
    /// Average bytes per cached entry (0 when empty).
    pub fn bytes_per_entry(&self) -> f64 {
        if self.entries == 0 {
            0.0
        } else {
            self.bytes as f64 / self.entries as f64
        }
    }
}

struct Cached {
    created_at: Instant,
    entries: Arc<Entries>,
    /// The name index of `entries`, once a query built it (`None` inside:
    /// too many entries to index); replaced with `entries`.
    names: Arc<OnceLock<Option<Arc<NameIndex>>>>,
    bytes: usize,
}

impl Cached {
    fn new(entries: Arc<Entries>, created_at: Instant) -> Cached {
        let mut cached = Cached {
            created_at,
            entries,
            names: Arc::default(),
            bytes: 0,
        };
        cached.charge();
        cached
    }

    /// The built name index, if any.
    fn name_index(&self) -> Option<&NameIndex> {
        self.names.get()?.as_deref()
    }

    /// Count what the list and its records and index hold.
    fn charge(&mut self) {
        self.bytes = self.entries.heap_bytes() + self.name_index().map_or(0, NameIndex::heap_bytes);
    }

    /// Take `entries` in place of the list, dropping the old list's index.
    fn replace(&mut self, entries: Arc<Entries>) {
        self.entries = entries;
        self.names = Arc::default();
        self.charge();
    }
}

/// A walk in progress that others may wait for.
#[derive(Default)]
struct Flight {
    /// `None` while running; then the shared list, or `Err(())` when the walk
    /// failed or was fenced out (waiters then retry on their own).
    outcome: Mutex<Option<Result<Arc<Entries>, ()>>>,
    landed: Condvar,
    /// Set (under the cache lock) when the root was invalidated mid-walk.
    fenced: AtomicBool,
}

#[derive(Default)]
struct State {
    cached: HashMap<ScanKey, Cached>,
    flights: HashMap<ScanKey, Arc<Flight>>,
    /// Keys whose scan was larger than the byte budget, and when it started.
    refused: HashMap<ScanKey, Instant>,
}

/// The cache. Most callers use [`global`]; tests build their own.
pub struct ScanCache {
    policy: CachePolicy,
    state: Mutex<State>,
    walks: AtomicU64,
    empty_rechecks_skipped: AtomicU64,
    /// The watcher, once watching is turned on (or the reason it could not
    /// start).
    watching: OnceLock<std::result::Result<Arc<Watching>, String>>,
    /// Held while a scan is patched, so two callers never patch one scan
    /// from the same state and lose each other's events.
    refreshing: Mutex<()>,
    /// The content index of the files cached greps read (shared with the
    /// watcher, whose events keep it exact).
    contents: Arc<ContentIndex>,
    /// Where walked scans are kept across restarts, when persistence is on.
    pub(crate) persisted: Option<Arc<Store>>,
    /// The indexers this cache reads from or is, once sharing is on.
    sharing: OnceLock<Sharing>,
    /// Test hook: when set, a walk waits for a message before it lands.
    #[cfg(test)]
    pub(crate) landing_gate: Mutex<Option<std::sync::mpsc::Receiver<()>>>,
}

static GLOBAL: OnceLock<ScanCache> = OnceLock::new();

/// The process-wide cache. Its policy is the one [`init_global`] fixed, or
/// else the one read from the process environment at this first call.
pub fn global() -> &'static ScanCache {
    let cache = GLOBAL.get_or_init(|| ScanCache::new(CachePolicy::from_env()));
    if cache.policy.shared && cache.sharing.get().is_none() {
        // Without a home the cache answers alone, as it would unshared.
        let _ = cache.share();
    }
    cache
}

/// Fix the process-wide cache's policy before its first use; `false`, with
/// nothing changed, when it was already fixed (by an earlier call, or by a
/// use that read the environment). The policy never changes once the cache
/// exists.
pub fn init_global(policy: CachePolicy) -> bool {
    let mut took_effect = false;
    GLOBAL.get_or_init(|| {
        took_effect = true;
        ScanCache::new(policy)
    });
    took_effect
}

impl ScanCache {
    /// An empty cache with `policy`.
    pub fn new(policy: CachePolicy) -> ScanCache {
        let persisted = policy
            .persist_home
            .as_deref()
            .map(|home| Arc::new(Store::new(home, policy.persist_bytes)));
        let cache = ScanCache {
            contents: Arc::new(ContentIndex::new(policy.content_bytes)),
            persisted,
            policy,
            state: Mutex::new(State::default()),
            walks: AtomicU64::new(0),
            empty_rechecks_skipped: AtomicU64::new(0),
            watching: OnceLock::new(),
            sharing: OnceLock::new(),
            refreshing: Mutex::new(()),
            #[cfg(test)]
            landing_gate: Mutex::new(None),
        };
        if cache.policy.watch {
            // A watcher that cannot start leaves the TTL in charge; `watch`
            // reports why to whoever asks for it explicitly.
            let _ = cache.watch();
        }
        cache
    }

    /// Turn watching on (see [`crate::watch`]): scans stored from now on
    /// follow filesystem events. Idempotent. Fails with an I/O error when
    /// the system gives no watcher (out of inotify instances, say); the
    /// cache then keeps to its TTL.
    pub fn watch(&self) -> Result<()> {
        let started = self.watching.get_or_init(|| {
            let policy = match self.policy.watch_budget {
                Some(budget) => WatchPolicy { budget },
                None => WatchPolicy::default(),
            };
            Watching::start(policy, Arc::clone(&self.contents), self.policy.shared)
                .map(Arc::new)
                .map_err(|err| err.to_string())
        });
        match started {
            Ok(_) => Ok(()),
            Err(reason) => Err(crate::error::Error::new(
                crate::error::ErrorKind::Io,
                format!("file events unavailable: {reason}"),
            )),
        }
    }

    /// Turn sharing on (see [`crate::shared`]): from now on each root is
    /// read from its indexer, or indexed here for the other processes.
    /// Idempotent. It needs persistence's home (the sockets live beside the
    /// records, and a process taking over an index restores its record);
    /// without one it fails with `EINVAL` and the cache answers alone. Only
    /// a policy with [`CachePolicy::shared`] keeps the journal of event
    /// paths its readers' content indexes trust by; without it, readers
    /// check each file they rely on.
    pub fn share(&'static self) -> Result<()> {
        let Some(home) = &self.policy.persist_home else {
            return Err(crate::error::Error::invalid(
                "sharing scans needs the natives home (turn persistence on)",
            ));
        };
        self.sharing.get_or_init(|| Sharing::new(home, self));
        Ok(())
    }

    pub(crate) fn watching(&self) -> Option<&Arc<Watching>> {
        self.watching.get().and_then(|w| w.as_ref().ok())
    }

    /// This cache's policy.
    pub fn policy(&self) -> &CachePolicy {
        &self.policy
    }

    /// The cached list for `key` if it is younger than the TTL; otherwise a
    /// walk (joined with any identical walk already running) whose result is
    /// stored. With a TTL of 0 every call walks, collecting only what `needs`
    /// asks for, and nothing is stored.
    pub fn get_or_scan(
        &self,
        key: &ScanKey,
        needs: Needs,
        token: &CancelToken,
    ) -> Result<ScanResult> {
        if self.policy.ttl.is_zero() {
            return self.walk_fresh(key, needs, token);
        }
        if let Some(read) = self.read_shared(key, false, token)? {
            return Ok(read);
        }
        loop {
            let watched = self.watching().is_some_and(|w| w.follows(key));
            let mut state = self.lock();
            if let Some(hit) = self.lookup(&mut state, key, watched) {
                drop(state);
                match self.refreshed(key, hit, token)? {
                    Some(hit) => return Ok(hit),
                    None => continue,
                }
            }
            if self.still_refused(&mut state, key) {
                drop(state);
                return self.walk_fresh(key, needs, token);
            }
            let Some(flight) = state.flights.get(key).cloned() else {
                let flight = register_flight(&mut state, key);
                drop(state);
                return self.fly(key, &flight, Source::RecordOrWalk, token);
            };
            drop(state);
            if let Some(entries) = wait_for(&flight, token)? {
                return Ok(ScanResult {
                    entries,
                    cache_age_ms: 0,
                    watched: false,
                });
            }
        }
    }

    /// Walk `key` now and store the result in place of the cached list (a
    /// walk of the same key already running is fenced out, since it may have
    /// passed the change that prompted this call). With a TTL of 0 nothing
    /// is stored.
    pub fn force_rescan(&self, key: &ScanKey, token: &CancelToken) -> Result<ScanResult> {
        if self.policy.ttl.is_zero() {
            return self.walk_fresh(key, Needs::EVERYTHING, token);
        }
        if let Some(read) = self.read_shared(key, true, token)? {
            return Ok(read);
        }
        let mut state = self.lock();
        state.cached.remove(key);
        if let Some(old) = state.flights.get(key) {
            fence(old);
        }
        let flight = register_flight(&mut state, key);
        drop(state);
        self.fly(key, &flight, Source::Walk, token)
    }

    /// A walk of `key` that collects only what `needs` asks for and never
    /// touches the cache: nothing is stored, evicted or fenced. It counts
    /// as a walk.
    pub fn walk_fresh(
        &self,
        key: &ScanKey,
        needs: Needs,
        token: &CancelToken,
    ) -> Result<ScanResult> {
        self.walks.fetch_add(1, Ordering::Relaxed);
        Ok(ScanResult {
            entries: Arc::new(walk::scan_for(&key.root, key.policy, needs, token)?),
            cache_age_ms: 0,
            watched: false,
        })
    }

    /// [`ScanCache::walk_fresh`] for types, learning the mtimes of the
    /// entries `wanted` accepts while it walks (see
    /// [`walk::scan_learning_mtimes`]); `node_modules` directories are
    /// entered only when asked for.
    pub(crate) fn walk_fresh_learning_mtimes(
        &self,
        key: &ScanKey,
        node_modules: bool,
        wanted: &walk::Wanted<'_>,
        token: &CancelToken,
    ) -> Result<ScanResult> {
        self.walks.fetch_add(1, Ordering::Relaxed);
        let entries =
            walk::scan_learning_mtimes(&key.root, key.policy, node_modules, wanted, token)?;
        Ok(ScanResult {
            entries: Arc::new(entries),
            cache_age_ms: 0,
            watched: false,
        })
    }

    /// A fresh walk that hands out entries in path order while it goes
    /// and never touches the cache: the no-cache path of a consumer that
    /// may need only the first entries and shows no mtime (see
    /// [`walk::ordered`]); `node_modules` directories are entered only
    /// when asked for, and `overrides` (`rg -g` globs) select files as in
    /// `rg`. It counts as a walk.
    pub(crate) fn walk_in_order(
        &self,
        key: &ScanKey,
        node_modules: bool,
        overrides: Option<&Override>,
        token: &CancelToken,
        halt: &AtomicBool,
        on_run: &mut walk::ordered::OnRun<'_>,
    ) -> Result<Vec<crate::Unreadable>> {
        self.walks.fetch_add(1, Ordering::Relaxed);
        let listing = walk::ordered::Listing {
            policy: key.policy,
            node_modules,
            overrides,
        };
        walk::ordered::walk_in_order(&key.root, listing, token, halt, on_run)
    }

    /// Invalidate after a mutation at `path` (relative to the current
    /// directory; it may no longer exist): every target
    /// [`resolve_invalidation_targets`] finds for it.
    pub fn invalidate_path(&self, path: &Path) -> Result<()> {
        for target in resolve_invalidation_targets(path)? {
            self.invalidate(&target);
        }
        Ok(())
    }

    /// Whether a scan of `key` was too large to store, within the TTL: a
    /// caller that can work without the whole list (grep) should walk
    /// without the cache.
    pub fn refuses(&self, key: &ScanKey) -> bool {
        let mut state = self.lock();
        self.still_refused(&mut state, key)
    }

    /// Whether this cache keeps the scans it walks (its TTL is not 0 and it
    /// may hold a scan at all).
    pub fn stores(&self) -> bool {
        !self.policy.ttl.is_zero() && self.policy.max_entries > 0
    }

    /// Whether an empty answer drawn from `scan` must be checked by a new
    /// walk (seed 001's recheck): when the list is at least
    /// [`CachePolicy::empty_recheck`] old, unless it followed every
    /// filesystem event on its root up to the call ([`ScanResult::watched`]):
    /// the events prove the answer then, and the recheck skipped is counted
    /// ([`CacheStats::empty_rechecks_skipped`]).
    pub fn rechecks_empty(&self, scan: &ScanResult) -> bool {
        if scan.cache_age_ms < self.policy.empty_recheck_ms() {
            return false;
        }
        if scan.watched {
            self.empty_rechecks_skipped.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// What the rules of `key`'s scan left out of `entries` (a list this
    /// cache gave out for `key`; see [`Entries::skipped`]), listed now when
    /// the list holds no record yet (see [`walk::skipped`]). The record
    /// counts against the byte budget from then on.
    pub(crate) fn skipped<'e>(
        &self,
        key: &ScanKey,
        entries: &'e Arc<Entries>,
        token: &CancelToken,
    ) -> Result<&'e Entries> {
        if let Some(skipped) = entries.skipped() {
            return Ok(skipped);
        }
        let recorded = entries.record_skipped(walk::skipped(&key.root, entries, token)?);
        let mut state = self.lock();
        if let Some(cached) = state.cached.get_mut(key)
            && Arc::ptr_eq(&cached.entries, entries)
        {
            cached.charge();
        }
        Ok(recorded)
    }

    /// The name index of `entries` (see [`crate::names`]), built now when
    /// there is none yet; it counts against the byte budget from then on.
    /// `None` when this cache does not hold `entries` as `key`'s list (a
    /// walk that was not stored, or a list replaced meanwhile: indexing
    /// it would cost more than the one query it serves), when the list is
    /// too long to index, or when `token` is cancelled while building.
    pub(crate) fn name_index(
        &self,
        key: &ScanKey,
        entries: &Arc<Entries>,
        token: &CancelToken,
    ) -> Option<Arc<NameIndex>> {
        let slot = {
            let state = self.lock();
            let cached = state.cached.get(key)?;
            Arc::ptr_eq(&cached.entries, entries).then(|| Arc::clone(&cached.names))?
        };
        if let Some(built) = slot.get() {
            return built.clone();
        }
        let built = NameIndex::build(entries, token).ok()?.map(Arc::new);
        let built = slot.get_or_init(|| built).clone();
        let mut state = self.lock();
        if let Some(cached) = state.cached.get_mut(key)
            && Arc::ptr_eq(&cached.names, &slot)
        {
            cached.charge();
        }
        built
    }

    /// `hit` brought up to date with the events on its root, when it follows
    /// them; `None` when it must be walked again (it is dropped). Waits for
    /// another caller's refresh and for the watch no longer than `token`
    /// allows.
    fn refreshed(
        &self,
        key: &ScanKey,
        hit: ScanResult,
        token: &CancelToken,
    ) -> Result<Option<ScanResult>> {
        let Some(watching) = self.watching().filter(|w| w.follows(key)) else {
            return Ok(Some(hit));
        };
        let _one_at_a_time = token.lock(&self.refreshing)?;
        // Another caller may have patched it while this one waited.
        let Some(hit) = self.lookup(&mut self.lock(), key, true) else {
            return Ok(None);
        };
        Ok(match watching.refresh(key, &hit.entries, token)? {
            Refresh::Current => Some(ScanResult {
                watched: true,
                ..hit
            }),
            Refresh::Unwatched => Some(hit),
            Refresh::Patched(entries) => {
                let mut state = self.lock();
                if let Some(cached) = state.cached.get_mut(key)
                    && Arc::ptr_eq(&cached.entries, &hit.entries)
                {
                    cached.replace(Arc::clone(&entries));
                }
                Some(ScanResult {
                    entries,
                    watched: true,
                    ..hit
                })
            }
            Refresh::Rewalk => {
                let mut state = self.lock();
                if state
                    .cached
                    .get(key)
                    .is_some_and(|cached| Arc::ptr_eq(&cached.entries, &hit.entries))
                {
                    state.cached.remove(key);
                }
                drop(state);
                watching.release(key);
                None
            }
        })
    }

    /// Hold the lock a refresh takes, as a refresh under way does.
    #[cfg(test)]
    pub(crate) fn hold_refresh(&self) -> MutexGuard<'_, ()> {
        self.refreshing.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stop following the scans of `keys` (after they left the cache).
    fn release(&self, keys: Vec<ScanKey>) {
        if let Some(watching) = self.watching() {
            keys.iter().for_each(|key| watching.release(key));
        }
    }

    /// Drop every cached list whose root contains `target` (a resolved,
    /// canonical path) or lies inside it (a renamed or deleted directory), and
    /// fence the matching walks in flight. A remembered refusal of such a
    /// root is forgotten too: the tree may have shrunk. A list that follows
    /// events and whose root holds `target` below it is kept instead, and
    /// reconciles `target` at its next answer as it would an event naming
    /// it (the content index keeps what it knows of the rest of the tree).
    pub fn invalidate(&self, target: &Path) {
        if let Some(sharing) = self.sharing.get() {
            sharing.forward_invalidate(target);
        }
        self.invalidate_here(target);
    }

    /// [`ScanCache::invalidate`] of this cache's own lists only: what an
    /// indexer does with an invalidation a reader forwarded (forwarding it
    /// on could send it back and forth between two processes that each
    /// index a root the other reads).
    fn invalidate_here(&self, target: &Path) {
        self.contents.changed_at(target);
        let affected = |root: &Path| target.starts_with(root) || root.starts_with(target);
        let reconciles = |key: &ScanKey| {
            target != key.root
                && target.starts_with(&key.root)
                && self.watching().is_some_and(|w| w.reconcile(key, target))
        };
        let mut state = self.lock();
        let dropped: Vec<ScanKey> = state
            .cached
            .keys()
            .filter(|key| affected(&key.root) && !reconciles(key))
            .cloned()
            .collect();
        state.cached.retain(|key, _| !dropped.contains(key));
        state.refused.retain(|key, _| !affected(&key.root));
        for (key, flight) in &state.flights {
            if affected(&key.root) {
                fence(flight);
            }
        }
        drop(state);
        self.release(dropped);
    }

    /// Drop every cached list and content signature, and fence every walk
    /// in flight.
    pub fn clear(&self) {
        if let Some(sharing) = self.sharing.get() {
            sharing.forward_clear();
        }
        self.contents.clear();
        let mut state = self.lock();
        let dropped: Vec<ScanKey> = state.cached.drain().map(|(key, _)| key).collect();
        state.refused.clear();
        state.flights.values().for_each(|f| fence(f));
        drop(state);
        self.release(dropped);
    }

    /// Current size of the cache.
    pub fn stats(&self) -> CacheStats {
        let mut state = self.lock();
        let ttl = self.policy.ttl;
        state.refused.retain(|_, at| at.elapsed() < ttl);
        let empty = CacheStats {
            walks: self.walks.load(Ordering::Relaxed),
            refused: state.refused.len(),
            empty_rechecks_skipped: self.empty_rechecks_skipped.load(Ordering::Relaxed),
            watch: self.watching().map(|w| w.stats()).unwrap_or_default(),
            content: self.contents.stats(),
            persist: self
                .persisted
                .as_ref()
                .map(|p| p.stats())
                .unwrap_or_default(),
            shared: self.sharing.get().map(|s| s.stats()).unwrap_or_default(),
            ..CacheStats::default()
        };
        state.cached.values().fold(empty, |acc, c| CacheStats {
            scans: acc.scans + 1,
            entries: acc.entries + c.entries.len(),
            bytes: acc.bytes + c.bytes,
            names: match c.name_index() {
                Some(index) => NameStats {
                    indexes: acc.names.indexes + 1,
                    entries: acc.names.entries + c.entries.len(),
                    bytes: acc.names.bytes + index.heap_bytes(),
                },
                None => acc.names,
            },
            ..acc
        })
    }

    /// `key`'s list read from its indexer, kept as the cached list (so its
    /// name index and selections are built once per list); `None` when this
    /// process answers alone or indexes `key` itself, having dropped any
    /// list it read earlier (no event keeps that one current here).
    fn read_shared(
        &self,
        key: &ScanKey,
        force: bool,
        token: &CancelToken,
    ) -> Result<Option<ScanResult>> {
        let Some(sharing) = self.sharing.get() else {
            return Ok(None);
        };
        let listed = match sharing.ask(key, force, token)? {
            Answer::Read(listed) => listed,
            Answer::Local { drop_replica } => {
                if drop_replica {
                    self.lock().cached.remove(key);
                }
                return Ok(None);
            }
        };
        let mut state = self.lock();
        let held = state
            .cached
            .get(key)
            .is_some_and(|cached| Arc::ptr_eq(&cached.entries, &listed.entries));
        if !held {
            let evicted = self.store(&mut state, key, Arc::clone(&listed.entries), Instant::now());
            drop(state);
            self.release(evicted);
        }
        Ok(Some(ScanResult {
            entries: listed.entries,
            cache_age_ms: listed.age_ms,
            watched: listed.watched,
        }))
    }

    /// The content signatures cached greps use.
    pub(crate) fn contents(&self) -> &ContentIndex {
        &self.contents
    }

    /// The watch that vouches for the content index's entries under `key`
    /// (see `content_index`): the scan follows every event on its root, and
    /// the events queued before this call were taken in when it was looked
    /// up; or, for a scan read from an indexer, the stamp of the indexer's
    /// watch, whose events were taken in as they were handed over (see
    /// [`crate::shared`]).
    pub(crate) fn vouching_watch(&self, key: &ScanKey) -> Option<Stamp> {
        match self.sharing.get().and_then(|sharing| sharing.vouches(key)) {
            Some(stamp) => Some(stamp),
            None => self.watching()?.vouches(key),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A live hit, removing an expired one. A scan the watcher follows
    /// (`watched`) does not expire: events keep it exact, and the TTL is
    /// only the fallback of scans that cannot be watched.
    fn lookup(&self, state: &mut State, key: &ScanKey, watched: bool) -> Option<ScanResult> {
        let cached = state.cached.get(key)?;
        let age = cached.created_at.elapsed();
        if watched || age < self.policy.ttl {
            return Some(ScanResult {
                entries: Arc::clone(&cached.entries),
                cache_age_ms: duration_ms(age).max(1),
                watched: false,
            });
        }
        state.cached.remove(key);
        None
    }

    /// Whether `key` was refused within the TTL (an expired refusal is
    /// forgotten).
    fn still_refused(&self, state: &mut State, key: &ScanKey) -> bool {
        match state.refused.get(key) {
            Some(at) if at.elapsed() < self.policy.ttl => true,
            Some(_) => {
                state.refused.remove(key);
                false
            }
            None => false,
        }
    }

    /// Run the walk for a registered flight (or, from `source`, restore the
    /// scan's record), publish it, and store it unless fenced; a list that
    /// a record does not already hold is then written as one, when
    /// persistence is on.
    fn fly(
        &self,
        key: &ScanKey,
        flight: &Arc<Flight>,
        source: Source,
        token: &CancelToken,
    ) -> Result<ScanResult> {
        let started = Instant::now();
        let before = self.persisted.as_ref().map(|_| persist::Before::take(key));
        let landing = Landing {
            cache: self,
            key,
            flight,
        };
        let listing = self.record_or_lock(key, source, token)?;
        let walked = matches!(listing, Listing::Walk(_));
        let (entries, generation, unrecorded, listing_lock) = match (listing, self.watching()) {
            (Listing::Restored(restored, generation), _) => {
                let changed = restored.changed;
                (Arc::new(restored.entries), generation, changed, None)
            }
            (Listing::Walk(lock), Some(watching)) => {
                self.walks.fetch_add(1, Ordering::Relaxed);
                let (entries, generation) = watching.scan(key, token)?;
                (Arc::new(entries), Some(generation), true, lock)
            }
            (Listing::Walk(lock), None) => {
                let walked = self.walk_fresh(key, Needs::EVERYTHING, token)?;
                (walked.entries, None, true, lock)
            }
        };
        #[cfg(test)]
        {
            let gate = self.landing_gate.lock().unwrap().take();
            if let Some(gate) = gate {
                let _ = gate.recv();
            }
        }
        let stored = landing.land(Arc::clone(&entries), started, generation);
        if let (Some(store), Some(before)) = (&self.persisted, before)
            && stored
            && unrecorded
        {
            store.save(key, Arc::clone(&entries), before, listing_lock, walked);
        }
        Ok(ScanResult {
            entries,
            cache_age_ms: 0,
            watched: false,
        })
    }

    /// `key`'s scan from its record (with its watch's generation, when the
    /// cache watches), when `source` allows one, persistence is on and the
    /// record proves current; else the lock to list `key` under, when one
    /// is to be had (see `persist::Store::listing_lock`): a process that
    /// finds another listing the same root waits for its record rather than
    /// walking too.
    fn record_or_lock(
        &self,
        key: &ScanKey,
        source: Source,
        token: &CancelToken,
    ) -> Result<Listing> {
        let (Some(store), Source::RecordOrWalk) = (&self.persisted, source) else {
            return Ok(Listing::Walk(None));
        };
        let restore = |counted: bool| match self.watching() {
            Some(watching) => {
                store
                    .restore_following(watching, key, counted, token)
                    .map(|restored| {
                        restored.map(|(restored, generation)| {
                            Listing::Restored(restored, Some(generation))
                        })
                    })
            }
            None => store
                .restore(key, None, counted, token)
                .map(|restored| restored.map(|restored| Listing::Restored(restored, None))),
        };
        if let Some(restored) = restore(true)? {
            return Ok(restored);
        }
        let lock = store.listing_lock(key, token)?;
        // Another process may have written the record meanwhile (it held
        // the lock while this one looked); what failed before is counted.
        Ok(restore(false)?.unwrap_or(Listing::Walk(lock)))
    }

    /// Wait until every record being written is written (tests, and a front
    /// about to exit).
    pub fn settle_records(&self) {
        if let Some(store) = &self.persisted {
            store.settle();
        }
    }

    /// Store `entries` for `key`, evicting oldest first to stay within the
    /// budgets; returns the keys that left (`key` itself when it was not
    /// stored).
    fn store(
        &self,
        state: &mut State,
        key: &ScanKey,
        entries: Arc<Entries>,
        created_at: Instant,
    ) -> Vec<ScanKey> {
        let cached = Cached::new(entries, created_at);
        let bytes = cached.bytes;
        if self.policy.max_entries == 0 {
            return vec![key.clone()];
        }
        if bytes > self.policy.max_bytes {
            state.refused.insert(key.clone(), created_at);
            return vec![key.clone()];
        }
        let mut evicted = Vec::new();
        state.refused.remove(key);
        state.cached.insert(key.clone(), cached);
        while state.cached.len() > self.policy.max_entries
            || state.cached.values().map(|c| c.bytes).sum::<usize>() > self.policy.max_bytes
        {
            let oldest = state
                .cached
                .iter()
                .min_by_key(|(_, c)| c.created_at)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(oldest) => {
                    state.cached.remove(&oldest);
                    evicted.push(oldest);
                }
                None => break,
            };
        }
        evicted
    }
}

/// Where a flight's list comes from, once the records are looked at.
enum Listing {
    /// Restored from its record (with its watch's generation).
    Restored(persist::Restored, Option<Generation>),
    /// To walk, under the listing lock when one was had.
    Walk(Option<HeldLock>),
}

/// Where a flight's list may come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// The scan's record, when it proves current, else a walk.
    RecordOrWalk,
    /// A walk: seed 001's recheck of an empty answer asks the tree itself.
    Walk,
}

/// Ends a flight on every path out of [`ScanCache::fly`], including errors
/// and panics, so waiters never hang.
struct Landing<'a> {
    cache: &'a ScanCache,
    key: &'a ScanKey,
    flight: &'a Arc<Flight>,
}

impl Landing<'_> {
    /// Publish the walk, store it unless fenced, and stop following the
    /// scans that left the cache (this walk's own, by its `generation`,
    /// when it was not stored); whether it was stored.
    fn land(self, entries: Arc<Entries>, started: Instant, generation: Option<Generation>) -> bool {
        let mut state = self.cache.lock();
        let (outcome, left) = if is_fenced(self.flight) {
            (Err(()), vec![self.key.clone()])
        } else {
            let left = self
                .cache
                .store(&mut state, self.key, Arc::clone(&entries), started);
            (Ok(entries), left)
        };
        self.finish(&mut state, outcome);
        drop(state);
        let (own, others): (Vec<ScanKey>, Vec<ScanKey>) =
            left.into_iter().partition(|key| key == self.key);
        let stored = own.is_empty();
        if let (Some(watching), Some(generation)) = (self.cache.watching(), generation)
            && !own.is_empty()
        {
            watching.release_walk(self.key, generation);
        }
        self.cache.release(others);
        std::mem::forget(self);
        stored
    }

    fn finish(&self, state: &mut State, outcome: Result<Arc<Entries>, ()>) {
        if state
            .flights
            .get(self.key)
            .is_some_and(|f| Arc::ptr_eq(f, self.flight))
        {
            state.flights.remove(self.key);
        }
        *self
            .flight
            .outcome
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(outcome);
        self.flight.landed.notify_all();
    }
}

impl Drop for Landing<'_> {
    fn drop(&mut self) {
        let mut state = self.cache.lock();
        self.finish(&mut state, Err(()));
    }
}

fn register_flight(state: &mut State, key: &ScanKey) -> Arc<Flight> {
    let flight = Arc::new(Flight::default());
    state.flights.insert(key.clone(), Arc::clone(&flight));
    flight
}

fn fence(flight: &Flight) {
    flight.fenced.store(true, Ordering::SeqCst);
}

fn is_fenced(flight: &Flight) -> bool {
    flight.fenced.load(Ordering::SeqCst)
}

/// Wait for another caller's walk: `Some(list)` when it landed, `None` when
/// it failed or was fenced (the caller retries), or this caller's own
/// cancellation error.
fn wait_for(flight: &Flight, token: &CancelToken) -> Result<Option<Arc<Entries>>> {
    let mut outcome = flight.outcome.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        if let Some(done) = outcome.as_ref() {
            return Ok(done.as_ref().ok().cloned());
        }
        token.check()?;
        outcome = flight
            .landed
            .wait_timeout(outcome, token.within(FLIGHT_POLL))
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
}

fn duration_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// What this cache does as a root's indexer: answer as it answers its own
/// calls (the indexer's own role makes [`ScanCache::get_or_scan`] answer
/// locally, so this never asks another process).
impl shared::Indexer for ScanCache {
    fn list(&self, key: &ScanKey, force: bool, token: &CancelToken) -> Result<Listed> {
        let scan = match force {
            true => self.force_rescan(key, token)?,
            false => self.get_or_scan(key, Needs::EVERYTHING, token)?,
        };
        Ok(Listed {
            entries: scan.entries,
            age_ms: scan.cache_age_ms,
            watched: scan.watched,
        })
    }

    fn invalidate(&self, target: &Path) {
        self.invalidate_here(target);
    }

    fn events_since(&self, key: &ScanKey, since: Option<u64>) -> Option<EventsSince> {
        self.watching()?.events_since(key, since)
    }

    fn forget_contents(&self, path: &Path) {
        self.contents.changed_at(path);
    }
}

#[cfg(test)]
mod tests;
