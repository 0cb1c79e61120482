//! The shared scan cache (seed 001): complete scan lists keyed by
//! (canonical root, include_hidden, use_gitignore), reused by glob, fuzzy
//! find and grep.
//!
//! Policy is global and fixed once per process: from the `FS_SCAN_*` variables
//! `FS_SCAN_CACHE_TTL_MS` (1000; 0 bypasses the cache), `FS_SCAN_EMPTY_RECHECK_MS`
//! (200), `FS_SCAN_CACHE_MAX_ENTRIES` (16) and `FS_SCAN_CACHE_MAX_BYTES` (128 MiB).
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
//! - **no copies on a hit**: entries are shared through an `Arc`.
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

use crate::{
    cancel::CancelToken,
    entries::Entries,
    error::Result,
    paths::resolve_invalidation_targets,
    walk::{self, Needs, ScanPolicy},
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

/// How often a caller waiting on another caller's walk re-checks its own
/// cancellation token; well inside the 50 ms abort promise.
const FLIGHT_POLL: Duration = Duration::from_millis(5);

/// Global freshness and size policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CachePolicy {
    ttl: Duration,
    empty_recheck: Duration,
    max_entries: usize,
    max_bytes: usize,
}

impl Default for CachePolicy {
    fn default() -> CachePolicy {
        CachePolicy {
            ttl: Duration::from_millis(DEFAULT_TTL_MS),
            empty_recheck: Duration::from_millis(DEFAULT_EMPTY_RECHECK_MS),
            max_entries: DEFAULT_MAX_ENTRIES,
            max_bytes: DEFAULT_MAX_BYTES,
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
        let number = |name: &str, default: u64| -> u64 {
            lookup(name)
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(default)
        };
        let size = |name: &str, default: usize| -> usize {
            usize::try_from(number(name, default as u64)).unwrap_or(usize::MAX)
        };
        CachePolicy {
            ttl: Duration::from_millis(number("FS_SCAN_CACHE_TTL_MS", DEFAULT_TTL_MS)),
            empty_recheck: Duration::from_millis(number(
                "FS_SCAN_EMPTY_RECHECK_MS",
                DEFAULT_EMPTY_RECHECK_MS,
            )),
            max_entries: size("FS_SCAN_CACHE_MAX_ENTRIES", DEFAULT_MAX_ENTRIES),
            max_bytes: size("FS_SCAN_CACHE_MAX_BYTES", DEFAULT_MAX_BYTES),
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

    /// The empty-recheck threshold in milliseconds.
    pub fn empty_recheck_ms(&self) -> u64 {
        duration_ms(self.empty_recheck)
    }
}

/// What a cache entry is keyed by.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ScanKey {
    /// Canonical root directory (see [`crate::resolve_search_path`]).
    pub root: PathBuf,
    /// Traversal switches.
    pub policy: ScanPolicy,
}

/// A scan list and how old it is.
#[derive(Clone, Debug)]
pub struct ScanResult {
    /// The shared, path-sorted entries.
    pub entries: Arc<Entries>,
    /// 0 for a fresh walk; otherwise the cached list's age, at least 1.
    pub cache_age_ms: u64,
}

/// A snapshot of the cache's size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
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
    bytes: usize,
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
    /// Test hook: when set, a walk waits for a message before it lands.
    #[cfg(test)]
    landing_gate: Mutex<Option<std::sync::mpsc::Receiver<()>>>,
}

static GLOBAL: OnceLock<ScanCache> = OnceLock::new();

/// The process-wide cache. Its policy is the one [`init_global`] fixed, or
/// else the one read from the process environment at this first call.
pub fn global() -> &'static ScanCache {
    GLOBAL.get_or_init(|| ScanCache::new(CachePolicy::from_env()))
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
        ScanCache {
            policy,
            state: Mutex::new(State::default()),
            walks: AtomicU64::new(0),
            #[cfg(test)]
            landing_gate: Mutex::new(None),
        }
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
        loop {
            let mut state = self.lock();
            if let Some(hit) = self.lookup(&mut state, key) {
                return Ok(hit);
            }
            if self.still_refused(&mut state, key) {
                drop(state);
                return self.walk_fresh(key, needs, token);
            }
            let Some(flight) = state.flights.get(key).cloned() else {
                let flight = register_flight(&mut state, key);
                drop(state);
                return self.fly(key, &flight, token);
            };
            drop(state);
            if let Some(entries) = wait_for(&flight, token)? {
                return Ok(ScanResult {
                    entries,
                    cache_age_ms: 0,
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
        let mut state = self.lock();
        state.cached.remove(key);
        if let Some(old) = state.flights.get(key) {
            fence(old);
        }
        let flight = register_flight(&mut state, key);
        drop(state);
        self.fly(key, &flight, token)
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
        })
    }

    /// A fresh walk that hands out entries in path order while it goes
    /// and never touches the cache: the no-cache path of a consumer that
    /// may need only the first entries and shows no mtime (see
    /// [`walk::ordered`]); `node_modules` directories are entered only
    /// when asked for. It counts as a walk.
    pub(crate) fn walk_in_order(
        &self,
        key: &ScanKey,
        node_modules: bool,
        token: &CancelToken,
        halt: &AtomicBool,
        on_run: &mut walk::ordered::OnRun<'_>,
    ) -> Result<()> {
        self.walks.fetch_add(1, Ordering::Relaxed);
        walk::ordered::walk_in_order(&key.root, key.policy, node_modules, token, halt, on_run)
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

    /// Drop every cached list whose root contains `target` (a resolved,
    /// canonical path) or lies inside it (a renamed or deleted directory), and
    /// fence the matching walks in flight. A remembered refusal of such a
    /// root is forgotten too: the tree may have shrunk.
    pub fn invalidate(&self, target: &Path) {
        let affected = |root: &Path| target.starts_with(root) || root.starts_with(target);
        let mut state = self.lock();
        state.cached.retain(|key, _| !affected(&key.root));
        state.refused.retain(|key, _| !affected(&key.root));
        for (key, flight) in &state.flights {
            if affected(&key.root) {
                fence(flight);
            }
        }
    }

    /// Drop every cached list and fence every walk in flight.
    pub fn clear(&self) {
        let mut state = self.lock();
        state.cached.clear();
        state.refused.clear();
        state.flights.values().for_each(|f| fence(f));
    }

    /// Current size of the cache.
    pub fn stats(&self) -> CacheStats {
        let mut state = self.lock();
        let ttl = self.policy.ttl;
        state.refused.retain(|_, at| at.elapsed() < ttl);
        let empty = CacheStats {
            walks: self.walks.load(Ordering::Relaxed),
            refused: state.refused.len(),
            ..CacheStats::default()
        };
        state.cached.values().fold(empty, |acc, c| CacheStats {
            scans: acc.scans + 1,
            entries: acc.entries + c.entries.len(),
            bytes: acc.bytes + c.bytes,
            ..acc
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A live hit, removing an expired one.
    fn lookup(&self, state: &mut State, key: &ScanKey) -> Option<ScanResult> {
        let cached = state.cached.get(key)?;
        let age = cached.created_at.elapsed();
        if age < self.policy.ttl {
            return Some(ScanResult {
                entries: Arc::clone(&cached.entries),
                cache_age_ms: duration_ms(age).max(1),
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

    /// Run the walk for a registered flight, publish it, and store it unless fenced.
    fn fly(&self, key: &ScanKey, flight: &Arc<Flight>, token: &CancelToken) -> Result<ScanResult> {
        let started = Instant::now();
        let landing = Landing {
            cache: self,
            key,
            flight,
        };
        let entries = self.walk_fresh(key, Needs::EVERYTHING, token)?.entries;
        #[cfg(test)]
        if let Some(gate) = self.landing_gate.lock().unwrap().take() {
            let _ = gate.recv();
        }
        landing.land(Arc::clone(&entries), started);
        Ok(ScanResult {
            entries,
            cache_age_ms: 0,
        })
    }

    fn store(&self, state: &mut State, key: &ScanKey, entries: Arc<Entries>, created_at: Instant) {
        let bytes = entries.heap_bytes();
        if self.policy.max_entries == 0 {
            return;
        }
        if bytes > self.policy.max_bytes {
            state.refused.insert(key.clone(), created_at);
            return;
        }
        state.refused.remove(key);
        state.cached.insert(
            key.clone(),
            Cached {
                created_at,
                entries,
                bytes,
            },
        );
        while state.cached.len() > self.policy.max_entries
            || state.cached.values().map(|c| c.bytes).sum::<usize>() > self.policy.max_bytes
        {
            let oldest = state
                .cached
                .iter()
                .min_by_key(|(_, c)| c.created_at)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(oldest) => state.cached.remove(&oldest),
                None => break,
            };
        }
    }
}

/// Ends a flight on every path out of [`ScanCache::fly`], including errors
/// and panics, so waiters never hang.
struct Landing<'a> {
    cache: &'a ScanCache,
    key: &'a ScanKey,
    flight: &'a Arc<Flight>,
}

impl Landing<'_> {
    fn land(self, entries: Arc<Entries>, started: Instant) {
        let mut state = self.cache.lock();
        let outcome = if is_fenced(self.flight) {
            Err(())
        } else {
            self.cache
                .store(&mut state, self.key, Arc::clone(&entries), started);
            Ok(entries)
        };
        self.finish(&mut state, outcome);
        std::mem::forget(self);
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
            .wait_timeout(outcome, FLIGHT_POLL)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
}

fn duration_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests;
