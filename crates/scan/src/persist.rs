//! Cached scans kept across restarts (opt-in: `FS_SCAN_CACHE_PERSIST=1`).
//!
//! A new agent process starts with an empty cache and walks its tree again,
//! though nearly nothing changed since the last process walked it. With
//! persistence on, every scan the cache walks is also written, in the
//! background, to a record under the natives home (`scans/`, private to its
//! user); a later miss on the same root and switches reads the record and
//! proves it current instead of walking:
//!
//! - **Rule files first.** The identity of every ignore file the walk read
//!   (in the tree, in the root's ancestors, git's global configuration and
//!   excludes, each repository's `info/exclude`) and the absence of those
//!   that were missing above the root are checked. A rule file below the
//!   root that changed has the subtree it governs walked again; any other
//!   walks the whole tree, since its rules reach every directory.
//! - **Then each directory.** A directory whose identity (device, inode,
//!   change time, see `identity`) is unchanged, and old enough to vouch,
//!   holds the names it held. One that changed is listed again and the
//!   names it gained or lost are reconciled exactly as a filesystem event
//!   naming them would be (`watch::reconciled`: a new directory is walked,
//!   a gone one leaves with its subtree); one replaced by another object
//!   is walked whole.
//! - **Files' mtimes are not kept.** A file edited in place changes no
//!   directory, so a restored list carries no file mtimes; a glob shows or
//!   sorts by them after an `lstat` of the matches concerned.
//!
//! Processes that miss the same root at once list it once: the one that
//! walks holds a kernel lock beside the record until the record is written
//! (`Store::listing_lock`), and the others wait for it and restore; the
//! kernel frees the lock of a holder that dies, so a waiter never waits on
//! a dead one.
//!
//! A record is believed only whole: the version, the checksum, the key,
//! every length and path order are checked, and it must belong to the
//! caller and be writable by no one else (`durable::read_private`); a
//! record that fails any check is ignored and written anew after the walk,
//! and the reason is counted ([`PersistStats`]). Records are written as every
//! natives record is (`durable::replace`: a temporary file, flushed, then
//! renamed), so a reader sees an old record or a new one, never a torn one.
//! The records together stay within a byte budget, least recently written
//! removed first. A scan with unreadable paths is not written: its record
//! could not say what a later walk would find there.

mod dirs;
mod identity;
mod record;
mod rules;

pub(crate) use record::{put_entries, take_entries};

use std::{
    collections::{HashMap, HashSet},
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    thread::JoinHandle,
    time::{Instant, SystemTime, UNIX_EPOCH},
};

use natives_system::{
    durable,
    lock::{self, HeldLock},
    paths,
};

use self::{
    dirs::{Dir, each_dir},
    identity::Identity,
    record::{Flaw, Record},
};
use crate::{
    cancel::CancelToken,
    entries::{Entries, FileType, bytes_to_path, is_within, path_to_bytes},
    error::{ErrorKind, Result},
    walk::{self, ScanKey},
    watch::{self, Generation, Watching},
};

/// Default disk budget for every record together: a record costs about
/// 60 bytes per entry, so this holds the scans of several million-file
/// trees.
pub const DEFAULT_PERSIST_BYTES: u64 = 1 << 30;

/// The directory of the records, below the natives home.
const SCANS_DIR: &str = "scans";

/// How a record's file name ends.
const RECORD_SUFFIX: &str = ".scan";

/// How long after writing a root's record a process writes it again from a
/// restore that found changes (a walk's list is always written): long
/// against the TTL that brings restores, short against a session.
pub const REWRITE_AFTER: std::time::Duration = std::time::Duration::from_secs(60);

/// Longest a process waits for another listing the same root (walking it
/// and writing its record) before it walks too: a million files are
/// listed and written in a few seconds; a holder this slow is stuck.
pub const LISTING_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Age past which a temporary file in the records' directory is a write
/// that died: writing a record of millions of entries takes seconds.
const ABANDONED_WRITE: std::time::Duration = std::time::Duration::from_secs(600);

/// Counters of persistence, for the cache's stats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PersistStats {
    /// Whether persistence is on.
    pub enabled: bool,
    /// Records written.
    pub saved: u64,
    /// Scans not written: they had unreadable paths, were larger than the
    /// budget, or the write failed.
    pub not_saved: u64,
    /// Misses answered from a record instead of a walk.
    pub restored: u64,
    /// Directories listed again while restoring, found changed (or too
    /// recently changed to vouch).
    pub dirs_relisted: u64,
    /// Misses that found no record of their scan.
    pub missing: u64,
    /// Records not believed, walked instead, by reason.
    pub rebuilt: Rebuilt,
}

/// Why records were not believed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rebuilt {
    /// Another format or version.
    pub version: u64,
    /// A checksum, length or path that did not hold, or a record that could
    /// not be read.
    pub corrupt: u64,
    /// A record of another root or switches under this one's name.
    pub key: u64,
    /// Not private to the caller: another owner, writable by others, a
    /// link.
    pub owner: u64,
    /// A rule file changed, appeared or went.
    pub rules: u64,
    /// The root is another directory now.
    pub root: u64,
    /// A change the reconciliation cannot bring in (a new rule file, a
    /// path that cannot be read).
    pub changes: u64,
}

/// What persistence notes as a listing begins: when, and the rule files
/// outside the tree (see `rules::outside_tree`).
pub(crate) struct Before {
    taken_at_ns: i64,
    outside: rules::Rules,
}

impl Before {
    /// The note for a listing of `key` beginning now.
    pub fn take(key: &ScanKey) -> Before {
        Before {
            taken_at_ns: now_ns(),
            outside: rules::outside_tree(key),
        }
    }
}

/// A list restored from its record.
pub(crate) struct Restored {
    pub entries: Entries,
    /// Whether it differs from the record (and should be written again).
    pub changed: bool,
}

/// Where records live, their budget and counters.
pub(crate) struct Store {
    dir: PathBuf,
    budget: u64,
    counters: Counters,
    /// Keys being written, so one busy root is not written twice at once.
    saving: Mutex<HashSet<ScanKey>>,
    /// When this process last began writing each key's record.
    written: Mutex<HashMap<ScanKey, Instant>>,
    /// Writes under way (see [`Store::settle`]).
    writers: Mutex<Vec<JoinHandle<()>>>,
}

#[derive(Default)]
struct Counters {
    saved: AtomicU64,
    not_saved: AtomicU64,
    restored: AtomicU64,
    dirs_relisted: AtomicU64,
    missing: AtomicU64,
    version: AtomicU64,
    corrupt: AtomicU64,
    key: AtomicU64,
    owner: AtomicU64,
    rules: AtomicU64,
    root: AtomicU64,
    changes: AtomicU64,
}

/// Why a record was not used, beyond [`Flaw`].
enum Refusal {
    Missing,
    Flaw(Flaw),
    Owner,
    Rules,
    Root,
    Changes,
}

impl Store {
    /// The store under the natives `home` (`home/scans`), keeping its
    /// records within `budget` bytes.
    pub fn new(home: &Path, budget: u64) -> Store {
        Store {
            dir: home.join(SCANS_DIR),
            budget,
            counters: Counters::default(),
            saving: Mutex::default(),
            written: Mutex::default(),
            writers: Mutex::default(),
        }
    }

    /// `key`'s scan from its record, proved current (see the module's
    /// documentation), or `None` when there is no record to believe: the
    /// caller walks, and the reason is counted (when `counted`: a second
    /// look counts nothing again). With `watching`, each directory is
    /// watched before its identity is checked (and each one walked anew
    /// too). `Err` only for `token`.
    pub fn restore(
        &self,
        key: &ScanKey,
        watching: Option<&Arc<Watching>>,
        counted: bool,
        token: &CancelToken,
    ) -> Result<Option<Restored>> {
        let outcome = self
            .read(key)
            .and_then(|record| revalidate(key, record, watching, token));
        match outcome {
            Ok(Ok((restored, relisted))) => {
                self.counters.restored.fetch_add(1, Ordering::Relaxed);
                let relisted = relisted as u64;
                self.counters
                    .dirs_relisted
                    .fetch_add(relisted, Ordering::Relaxed);
                Ok(Some(restored))
            }
            Ok(Err(err)) => Err(err),
            Err(refusal) => {
                if counted {
                    self.count(refusal);
                }
                Ok(None)
            }
        }
    }

    /// [`Store::restore`] for a cache that watches: each directory the
    /// record lists is watched before its identity is checked, so a change
    /// is either seen by the check or reported by an event, and the scan
    /// follows events from its first answer, as a walked one does. `None`
    /// when the record could not be believed (nothing is left watched for
    /// it).
    pub fn restore_following(
        &self,
        watching: &Arc<Watching>,
        key: &ScanKey,
        counted: bool,
        token: &CancelToken,
    ) -> Result<Option<(Restored, Generation)>> {
        let generation = watching.follow(key);
        let restored = self.restore(key, Some(watching), counted, token);
        watching.settle(key, generation, matches!(restored, Ok(Some(_))));
        Ok(restored?.map(|restored| (restored, generation)))
    }

    /// The kernel lock a process holds while it lists `key` (walks it and
    /// writes its record), so that processes missing it at the same moment
    /// list it once: taken at once when free; when another process holds
    /// it, waited for (within `token`, at most [`LISTING_WAIT`]), since
    /// its record will answer. The kernel frees the lock of a holder that
    /// dies, so the next waiter takes over at once. `None` when no lock is
    /// to be had (the records' directory cannot be made, or the holder
    /// outlasted the wait): the caller walks without one.
    pub fn listing_lock(&self, key: &ScanKey, token: &CancelToken) -> Result<Option<HeldLock>> {
        if durable::create_private_dir(&self.dir).is_err() {
            return Ok(None);
        }
        let path = self.record_path(key).with_extension("lock");
        match lock::try_exclusive(&path) {
            Ok(Some(held)) => return Ok(Some(held)),
            Ok(None) => {}
            Err(_) => return Ok(None),
        }
        match lock::wait_exclusive(&path, token, LISTING_WAIT) {
            Ok(held) => Ok(Some(held)),
            Err(err) if token.check().is_err() => Err(err),
            Err(_) => Ok(None),
        }
    }

    /// Write `entries`, `key`'s scan whose listing began as `before` notes,
    /// on a thread of its own, then let `listing` (its listing lock) go; a
    /// write of the same key under way makes this one unnecessary. A list
    /// restored (not `walked`) from a record this process wrote less than
    /// [`REWRITE_AFTER`] ago is not written again: its record still proves
    /// it, at the cost of listing the same directories again next time,
    /// while a tree that changes all the time would otherwise have its
    /// record rewritten at every restore (every TTL, without watching).
    pub fn save(
        self: &Arc<Self>,
        key: &ScanKey,
        entries: Arc<Entries>,
        before: Before,
        listing: Option<HeldLock>,
        walked: bool,
    ) {
        let recently = |at: &Instant| at.elapsed() < REWRITE_AFTER;
        if !walked && self.lock_written().get(key).is_some_and(recently) {
            return;
        }
        if !self.lock_saving().insert(key.clone()) {
            return;
        }
        self.lock_written().insert(key.clone(), Instant::now());
        let (store, key) = (Arc::clone(self), key.clone());
        let writer = std::thread::spawn(move || {
            let saved = store.write(&key, &entries, before);
            drop(listing);
            let counter = match saved {
                true => &store.counters.saved,
                false => &store.counters.not_saved,
            };
            counter.fetch_add(1, Ordering::Relaxed);
            store.lock_saving().remove(&key);
        });
        let mut writers = self.writers.lock().unwrap_or_else(|p| p.into_inner());
        writers.retain(|writer| !writer.is_finished());
        writers.push(writer);
    }

    /// Wait for every write under way to end.
    pub fn settle(&self) {
        let writers = std::mem::take(&mut *self.writers.lock().unwrap_or_else(|p| p.into_inner()));
        writers.into_iter().for_each(|writer| {
            let _ = writer.join();
        });
    }

    /// The counters so far.
    pub fn stats(&self) -> PersistStats {
        let c = &self.counters;
        let n = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        PersistStats {
            enabled: true,
            saved: n(&c.saved),
            not_saved: n(&c.not_saved),
            restored: n(&c.restored),
            dirs_relisted: n(&c.dirs_relisted),
            missing: n(&c.missing),
            rebuilt: Rebuilt {
                version: n(&c.version),
                corrupt: n(&c.corrupt),
                key: n(&c.key),
                owner: n(&c.owner),
                rules: n(&c.rules),
                root: n(&c.root),
                changes: n(&c.changes),
            },
        }
    }

    /// The path of `key`'s record.
    pub fn record_path(&self, key: &ScanKey) -> PathBuf {
        let switches =
            u8::from(key.policy.include_hidden) | (u8::from(key.policy.use_gitignore) << 1);
        let name = format!("{}.{switches}{RECORD_SUFFIX}", paths::slug(&key.root));
        self.dir.join(name)
    }

    fn read(&self, key: &ScanKey) -> std::result::Result<Record, Refusal> {
        let bytes = match durable::read_private(&self.record_path(key), self.budget) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Err(Refusal::Missing),
            Err(err) if err.kind() == ErrorKind::NotOwner => return Err(Refusal::Owner),
            Err(err) if err.kind() == ErrorKind::NotARegularFile => return Err(Refusal::Owner),
            Err(_) => return Err(Refusal::Flaw(Flaw::Corrupt)),
        };
        record::decode(&bytes, key).map_err(Refusal::Flaw)
    }

    /// Write the record; `false` when it was not written: the scan has
    /// unreadable paths, the rules outside the tree changed while it was
    /// listed, it is over the budget, or the write failed.
    fn write(&self, key: &ScanKey, entries: &Entries, before: Before) -> bool {
        if !entries.unreadable().is_empty() || durable::create_private_dir(&self.dir).is_err() {
            return false;
        }
        let mut rules = rules::outside_tree(key);
        if rules != before.outside {
            return false;
        }
        rules.extend(rules::inside_tree(key, entries));
        let dirs = identities(key, entries);
        let bytes = record::encode(key, entries, before.taken_at_ns, &dirs, &rules);
        if bytes.len() as u64 > self.budget {
            return false;
        }
        let written = durable::replace(&self.record_path(key), &bytes).is_ok();
        if written {
            self.prune();
        }
        written
    }

    /// Remove the least recently written records until the rest fit the
    /// budget, and the temporary files of writes that died (a process
    /// killed mid-write leaves one; a write lasts seconds at most).
    fn prune(&self) {
        let Ok(listing) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut records: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        for entry in listing.flatten() {
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            let Ok(modified) = meta.modified() else {
                continue;
            };
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.ends_with(RECORD_SUFFIX) {
                records.push((modified, meta.len(), entry.path()));
            } else if name.ends_with(durable::TEMP_SUFFIX)
                && modified.elapsed().is_ok_and(|age| age > ABANDONED_WRITE)
            {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        records.sort();
        let mut total: u64 = records.iter().map(|(_, len, _)| len).sum();
        for (_, len, path) in records {
            if total <= self.budget {
                break;
            }
            if durable::remove(&path).is_ok() {
                total -= len;
            }
        }
    }

    fn count(&self, refusal: Refusal) {
        let c = &self.counters;
        let counter = match refusal {
            Refusal::Missing => &c.missing,
            Refusal::Flaw(Flaw::Version) => &c.version,
            Refusal::Flaw(Flaw::Corrupt) => &c.corrupt,
            Refusal::Flaw(Flaw::Key) => &c.key,
            Refusal::Owner => &c.owner,
            Refusal::Rules => &c.rules,
            Refusal::Root => &c.root,
            Refusal::Changes => &c.changes,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn lock_saving(&self) -> std::sync::MutexGuard<'_, HashSet<ScanKey>> {
        self.saving.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_written(&self) -> std::sync::MutexGuard<'_, HashMap<ScanKey, Instant>> {
        self.written.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The wall clock in ns since the epoch: when a listing begins.
fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_nanos()).unwrap_or(i64::MAX)
        })
}

/// The identities a record keeps: the root's, then each listed directory's
/// in list order ([`Identity::MISSING`] for one gone since).
fn identities(key: &ScanKey, entries: &Entries) -> Vec<Identity> {
    let never = CancelToken::new();
    let each =
        |_: usize, dir: Dir<'_>| Some(Identity::of(dir.absolute).unwrap_or(Identity::MISSING));
    each_dir(key, entries, &never, each).unwrap_or_default()
}

/// Whether the rule file at `path`, recorded as `was` (`None`: absent) for
/// a listing begun at `taken_at_ns`, still holds the rules it held. A
/// repository's `.git` counts by its existence and type alone: git changes
/// what it holds at every command, and only `info/exclude` in it (recorded
/// on its own) holds rules.
fn rule_unchanged(path: &Path, was: Option<&Identity>, taken_at_ns: i64) -> bool {
    let now = Identity::of(path);
    match (was, now) {
        (None, now) => now.is_none(),
        (Some(was), Some(now)) if path.file_name() == Some(".git".as_ref()) => {
            was.same_object(&now)
        }
        (Some(was), now) => was.vouches(now.as_ref(), taken_at_ns),
    }
}

/// The directory below `key`'s root whose subtree the rule file at `path`
/// governs (relative to the root): the one holding it, or for a
/// repository's `.git/info/exclude` the one holding `.git`; `None` for a
/// rule file at the root, above it or outside the tree.
fn governed_dir(key: &ScanKey, path: &Path) -> Option<Vec<u8>> {
    let relative = path.strip_prefix(&key.root).ok()?;
    let holder = match relative.ends_with(".git/info/exclude") {
        true => relative.ancestors().nth(3)?,
        false => relative.parent()?,
    };
    let holder = path_to_bytes(holder);
    (!holder.is_empty()).then(|| holder.into_owned())
}

/// `record` proved current for `key`, with the directories listed again;
/// `Ok(Err)` only for `token`.
fn revalidate(
    key: &ScanKey,
    record: Record,
    watching: Option<&Arc<Watching>>,
    token: &CancelToken,
) -> std::result::Result<Result<(Restored, usize)>, Refusal> {
    let taken_at_ns = record.taken_at_ns;
    let mut present_rules = HashSet::new();
    let mut rules_changed_in = Vec::new();
    let global = watch::global_rules_of(key);
    for (path, was) in &record.rules {
        if !rule_unchanged(path, was.as_ref(), taken_at_ns) {
            // A rule file inside the tree governs its directory's subtree
            // alone: that subtree is walked again with the rules as they
            // are now. One at the root, above it or global (wherever it
            // lies, even inside the tree): the whole tree.
            let governed = match global.contains(path) {
                true => None,
                false => governed_dir(key, path),
            };
            match governed {
                Some(dir) => rules_changed_in.push((dir, true)),
                None => return Err(Refusal::Rules),
            }
        }
        if was.is_some() {
            present_rules.insert(path.as_path());
        }
    }
    let entries = &record.entries;
    let root_was = &record.dirs[0];
    let root_now = Identity::of(&key.root);
    if root_was.is_racy(taken_at_ns) || !root_now.is_some_and(|now| root_was.same_object(&now)) {
        return Err(Refusal::Root);
    }
    let hold = watching.map(|watching| watching.holder(key));
    let changes = match changed_dirs(key, &record, &present_rules, hold.as_ref(), token) {
        Ok(changes) => changes,
        Err(err) => return Ok(Err(err)),
    };
    let relisted = changes.len() + rules_changed_in.len();
    let mut named = rules_changed_in;
    for change in changes {
        named.extend(change.ok_or(Refusal::Changes)?);
    }
    if named.is_empty() {
        let restored = Restored {
            entries: record.entries,
            changed: false,
        };
        return Ok(Ok((restored, 0)));
    }
    let patch = watch::reconciled(watching, key, entries, named).ok_or(Refusal::Changes)?;
    let restored = Restored {
        entries: entries.patched(&patch),
        changed: true,
    };
    Ok(Ok((restored, relisted)))
}

/// What a directory found changed brings to reconcile: its children's
/// names, or itself whole (see [`dir_changes`]); `None` when it cannot be
/// listed now.
type Change = Option<Vec<(Vec<u8>, bool)>>;

/// The changes of the directories of `record` (the root and each listed
/// directory) whose recorded identity does not vouch for them now, in list
/// order; each directory is first given to `hold` (a watch). Checked on a
/// thread per core, each taking a run of the list: an `lstat` per
/// directory, and listing those that changed, is most of what a restore
/// costs.
fn changed_dirs(
    key: &ScanKey,
    record: &Record,
    present_rules: &HashSet<&Path>,
    hold: Option<&walk::OnDir>,
    token: &CancelToken,
) -> Result<Vec<Change>> {
    each_dir(key, &record.entries, token, |position, dir| {
        if let Some(hold) = hold {
            hold(dir.absolute);
        }
        let was = &record.dirs[position];
        let now = Identity::of(dir.absolute);
        let vouched = was.vouches(now.as_ref(), record.taken_at_ns);
        (!vouched).then(|| dir_changes(key, record, dir, was, now, present_rules))
    })
}

/// What the listed directory `dir`, recorded as `was` and found `now`,
/// brings to reconcile: the names it gained, lost or retyped, when it is
/// the same directory as before, recorded long enough before its listing
/// (see [`children_named`]); else itself, walked whole.
fn dir_changes(
    key: &ScanKey,
    record: &Record,
    dir: Dir<'_>,
    was: &Identity,
    now: Option<Identity>,
    present_rules: &HashSet<&Path>,
) -> Change {
    match now {
        Some(now) if now.is_dir() && was.same_object(&now) && !was.is_racy(record.taken_at_ns) => {
            children_named(key, &record.entries, dir, present_rules)
        }
        _ => Some(vec![(dir.relative.to_vec(), true)]),
    }
}

/// The names to reconcile in the listed directory `dir`, whose entries
/// changed: each child it listed that it no longer holds, or holds with
/// another type, and each it holds that it did not list; all structural.
/// A child held with the type it was listed with stays as it is (a
/// directory's own identity speaks for what it holds), as do rule files
/// the record proved unchanged. When a rule file came or went, the
/// directory itself instead, to be walked whole. `None` when the directory
/// cannot be listed now, or a rule file came to or went from the root.
fn children_named(
    key: &ScanKey,
    entries: &Entries,
    dir: Dir<'_>,
    present_rules: &HashSet<&Path>,
) -> Option<Vec<(Vec<u8>, bool)>> {
    let Dir {
        index,
        relative,
        absolute,
    } = dir;
    let prefix_len = if relative.is_empty() {
        0
    } else {
        relative.len() + 1
    };
    let mut listed: HashMap<&[u8], FileType> = HashMap::new();
    let mut at = index.map_or(0, |i| i + 1);
    while at < entries.len() {
        let entry = entries.get(at);
        if !relative.is_empty() && !is_within(entry.path, relative) {
            break;
        }
        listed.insert(&entry.path[prefix_len..], entry.file_type);
        at = match entry.file_type {
            FileType::Dir => entries.subtree_end(at),
            _ => at + 1,
        };
    }
    let rule_proven = |name: &[u8]| {
        key.policy.use_gitignore
            && watch::RULE_NAMES.contains(&name)
            && present_rules.contains(absolute.join(bytes_to_path(name)).as_path())
    };
    let mut changed: Vec<Vec<u8>> = Vec::new();
    for child in std::fs::read_dir(absolute).ok()? {
        let child = child.ok()?;
        let name = child.file_name();
        let name = path_to_bytes(Path::new(&name));
        let now = child.file_type().ok().map(FileType::from_std);
        let was = listed.remove(name.as_ref());
        if was.is_none_or(|was| Some(was) != now) && !rule_proven(&name) {
            changed.push(name.into_owned());
        }
    }
    changed.extend(
        listed
            .into_keys()
            .filter(|name| !rule_proven(name))
            .map(<[u8]>::to_vec),
    );
    let rule_came_or_went = key.policy.use_gitignore
        && changed
            .iter()
            .any(|name| watch::RULE_NAMES.contains(&name.as_slice()));
    if rule_came_or_went {
        // Its rules govern the whole subtree: walked again, unless it is
        // the root's (the whole tree then).
        return (!relative.is_empty()).then(|| vec![(relative.to_vec(), true)]);
    }
    let named = changed
        .into_iter()
        .map(|name| match relative.is_empty() {
            true => (name, true),
            false => ([relative, b"/", &name].concat(), true),
        })
        .collect();
    Some(named)
}

#[cfg(test)]
mod tests;
