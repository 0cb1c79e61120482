//! Bindings for the scan cache and glob (`natives_scan`).
//!
//! Results cross the boundary as columns (`\0`-joined strings of paths,
//! a `Uint8Array` of types, a `Float64Array` of mtimes): creating one JS
//! object per match costs about four times more than columns, and the
//! TypeScript layer builds the `GlobMatch[]` the API promises.

use std::collections::HashMap;

use napi::{
    Env, Status,
    bindgen_prelude::{AsyncTask, Either, Float64Array, Uint8Array, Utf16String},
    threadsafe_function::ThreadsafeFunction,
};
use napi_derive::napi;
use natives_core::names;
use natives_scan::{
    CachePolicy, CacheStats, CancelToken as LibraryToken, Entry, Error, GlobOptions, PersistStats,
    SharingStats, Unreadable, WatchStats, cache, view,
};

use crate::{
    cancel::CancelToken,
    chunks::{Chunks, JsChunk},
    errors::on_js_thread,
    options::{count, given, listed},
    pace::{Outlet, StreamPacer},
    stream::{Batch, stream},
    task::{Work, cancellable_task},
};

/// What a filesystem entry is (from `lstat`: links are never followed).
#[napi]
pub enum FileType {
    /// A regular file.
    File = 1,
    /// A directory.
    Dir = 2,
    /// A symbolic link.
    Symlink = 3,
    /// A FIFO, socket or device: listed, never typed as a file, never opened.
    Other = 4,
}

impl From<natives_scan::FileType> for FileType {
    fn from(file_type: natives_scan::FileType) -> FileType {
        match file_type {
            natives_scan::FileType::File => FileType::File,
            natives_scan::FileType::Dir => FileType::Dir,
            natives_scan::FileType::Symlink => FileType::Symlink,
            natives_scan::FileType::Other => FileType::Other,
        }
    }
}

/// Options for the native `glob`; the TypeScript `glob` documents them and
/// supplies `path`.
#[napi(object)]
pub struct NativeGlobOptions {
    /// Glob pattern or patterns (`*.ts`, `src/**/*.{ts,tsx}`); an entry
    /// matching any is returned; one starting with `!` ignores.
    pub pattern: Either<String, Vec<String>>,
    /// Leave out entries matching these patterns and all below a directory
    /// matching one (default none).
    pub ignore: Option<Either<String, Vec<String>>>,
    /// Directory to search, absolute or relative to the process cwd (a byte
    /// of a name that is not UTF-8 as the lone surrogate U+DC00 + byte).
    pub path: Utf16String,
    /// Only this type: 1 file, 2 directory, 3 symlink, 4 other (FIFO, socket, device).
    pub file_type: Option<u32>,
    /// Match a `/`-free pattern at any depth (default true).
    pub recursive: Option<bool>,
    /// Include dot-files (default false).
    pub hidden: Option<bool>,
    /// Honour .gitignore/.ignore (default true).
    pub gitignore: Option<bool>,
    /// Include node_modules (default: only if the pattern names it).
    pub include_node_modules: Option<bool>,
    /// Return at most this many matches (default: all).
    pub max_results: Option<f64>,
    /// Newest first (default false).
    pub sort_by_mtime: Option<bool>,
    /// Return each match's mtime (default true); without it a walk that is
    /// not cached stats nothing unless it sorts by mtime.
    pub mtime: Option<bool>,
    /// Use the shared scan cache (default false).
    pub cache: Option<bool>,
    /// Stay beneath `path`, a real path: nothing is listed through a link
    /// (default false).
    pub confine: Option<bool>,
    /// Fail with `ETIMEDOUT` after this many milliseconds.
    pub timeout_ms: Option<f64>,
}

/// Matches as columns: `paths` joined by `\0` (in chunks), a type and an mtime per match.
#[napi(object, object_from_js = false)]
pub struct GlobColumns {
    /// Relative `/`-separated paths, joined by `\0` within each chunk, in
    /// order across chunks (a byte of a name that is not UTF-8 as the lone
    /// surrogate U+DC00 + byte).
    #[napi(ts_type = "string[]")]
    pub paths: Vec<JsChunk>,
    /// `FileType` per match.
    pub file_types: Uint8Array,
    /// Modification time per match in ms since the epoch; NaN when unknown.
    pub mtimes: Float64Array,
}

/// A path a search could not enter or read, and why.
#[napi(object)]
pub struct UnreadablePath {
    /// Relative to the search root, `/`-separated (empty: the root itself;
    /// a byte of a name that is not UTF-8 as the lone surrogate U+DC00 +
    /// byte).
    pub path: Utf16String,
    /// The errno-style code: `EACCES`, `ENAMETOOLONG`, ...
    pub code: String,
    /// What the OS said: `Permission denied (os error 13)`.
    pub message: String,
}

/// The JS objects for a search's unreadable paths: the library's view of
/// them, with each path's own bytes.
pub fn unreadable_paths(unreadable: &[Unreadable]) -> Vec<UnreadablePath> {
    let views = view::unreadable_views(unreadable);
    unreadable
        .iter()
        .zip(views)
        .map(|(record, view)| UnreadablePath {
            path: names::to_utf16(&record.path).into(),
            code: view.code.to_owned(),
            message: view.message,
        })
        .collect()
}

/// What the native `glob` resolves with.
#[napi(object, object_from_js = false)]
pub struct NativeGlobResult {
    /// The matches; empty when they were streamed through `onBatch`.
    pub matches: GlobColumns,
    /// Matches before `maxResults` was applied.
    pub total_matches: f64,
    /// `true` when `maxResults` cut matches off.
    pub limit_reached: bool,
    /// What the walk could not enter or read, in path order.
    pub unreadable: Vec<UnreadablePath>,
    /// How many batches were streamed through `onBatch`.
    pub batches: u32,
}

/// Columns under construction (plain vectors: sendable across threads).
#[derive(Default)]
struct ColumnBuilder {
    /// Raw path bytes joined by `\0`, in chunks.
    paths: Chunks,
    file_types: Vec<u8>,
    mtimes: Vec<f64>,
}

impl Batch for ColumnBuilder {
    type Item<'a> = &'a Entry<'a>;
    type Js = GlobColumns;

    fn push(&mut self, entry: &Entry<'_>) {
        self.paths.push(entry.path, Some(0));
        self.file_types.push(entry.file_type.as_u8());
        self.mtimes
            .push(entry.mtime_ms.map_or(f64::NAN, |ms| ms as f64));
    }

    fn len(&self) -> usize {
        self.file_types.len()
    }

    fn finish(self) -> GlobColumns {
        GlobColumns {
            paths: self.paths.finish().0,
            file_types: Uint8Array::new(self.file_types),
            mtimes: Float64Array::new(self.mtimes),
        }
    }
}

/// Glob over the scan cache. Resolves with columns; `onBatch`, when given,
/// receives the matches in batches as they are decided (and the result's
/// columns are then empty); with `pacer`, a batch waits for room in the
/// consumer's window (see `StreamPacer`). Rejects with an `Error` whose
/// `code` is `ENOENT`, `ENOTDIR`, `EACCES`, `EINVAL`, `ABORT_ERR` or
/// `ETIMEDOUT`.
#[napi(js_name = "nativeGlob", ts_return_type = "Promise<NativeGlobResult>")]
pub fn native_glob(
    options: NativeGlobOptions,
    token: Option<&CancelToken>,
    on_batch: Option<ThreadsafeFunction<GlobColumns, (), GlobColumns, Status, false>>,
    pacer: Option<&StreamPacer>,
) -> AsyncTask<Work<NativeGlobResult>> {
    let outlet = Outlet::new(on_batch, pacer);
    cancellable_task(
        token,
        options.timeout_ms,
        || convert_options(options),
        move |options, token| run_glob(&options, &token, outlet.as_ref()),
    )
}

/// The glob itself, off the JS thread: matches into the result's columns,
/// or streamed to `on_batch`.
fn run_glob(
    options: &GlobOptions,
    token: &LibraryToken,
    outlet: Option<&Outlet<GlobColumns>>,
) -> Result<NativeGlobResult, Error> {
    let glob = |on_match: &mut dyn FnMut(Entry<'_>)| {
        natives_scan::glob(options, cache::global(), token, on_match)
    };
    let (outcome, columns, batches) = match outlet {
        Some(outlet) => {
            let receiver = outlet.paced(token);
            let (outcome, batches) = stream::<ColumnBuilder, _>(&receiver, |streamer| {
                glob(&mut |entry| streamer.push(&entry))
            });
            let outcome = outcome?;
            receiver.interrupted()?;
            (outcome, ColumnBuilder::default(), batches)
        }
        None => {
            let mut columns = ColumnBuilder::default();
            let outcome = glob(&mut |entry| columns.push(&entry))?;
            (outcome, columns, 0)
        }
    };
    Ok(NativeGlobResult {
        matches: columns.finish(),
        total_matches: outcome.total_matches as f64,
        limit_reached: outcome.limit_reached(),
        unreadable: unreadable_paths(&outcome.unreadable),
        batches,
    })
}

fn convert_options(options: NativeGlobOptions) -> Result<GlobOptions, Error> {
    let path = crate::names::path_from_js(&options.path, "path")?;
    let mut converted = GlobOptions::new(String::new(), path);
    converted.patterns = listed(options.pattern);
    given(&mut converted.ignore, options.ignore.map(listed));
    let file_type = options.file_type.map(file_type).transpose()?;
    given(&mut converted.file_type, file_type.map(Some));
    given(&mut converted.recursive, options.recursive);
    given(&mut converted.include_hidden, options.hidden);
    given(&mut converted.use_gitignore, options.gitignore);
    given(
        &mut converted.include_node_modules,
        options.include_node_modules.map(Some),
    );
    let max_results = count("maxResults", options.max_results)?;
    given(&mut converted.max_results, max_results.map(Some));
    given(&mut converted.sort_by_mtime, options.sort_by_mtime);
    given(&mut converted.mtime, options.mtime);
    given(&mut converted.cache, options.cache);
    given(&mut converted.confine, options.confine);
    Ok(converted)
}

fn file_type(value: u32) -> Result<natives_scan::FileType, Error> {
    u8::try_from(value)
        .ok()
        .and_then(natives_scan::FileType::from_u8)
        .ok_or_else(|| {
            Error::invalid(format!(
                "fileType {value} is not one of 1 (File), 2 (Dir), 3 (Symlink), 4 (Other)"
            ))
            .with_option("fileType", value.to_string())
        })
}

/// Drop cached scans after a filesystem mutation. With a path (relative to
/// the cwd; it may no longer exist), drops every cached scan whose root
/// contains it or lies inside it; without one, drops them all. The path is
/// resolved one lookup per component (at once, whatever its length), and a
/// name that is not UTF-8 is taken in the escaped form paths come back in.
#[napi(js_name = "invalidateFsScanCache")]
pub fn invalidate_fs_scan_cache(env: Env, path: Option<Utf16String>) -> napi::Result<()> {
    on_js_thread(&env, || {
        let path = path
            .as_ref()
            .map(|path| crate::names::path_from_js(path, "path"))
            .transpose()?;
        natives_scan::invalidate(path.as_deref())
    })
}

/// Fix the scan cache's policy from the `FS_SCAN_*` variables given (name to
/// raw value, parsed by the library; with `NATIVES_HOME` and `HOME`, which
/// place persisted scans), before the first call that uses the cache. The TypeScript package hands over `process.env`'s, since Bun does
/// not pass `process.env` writes on to native code. Returns `false`,
/// changing nothing, when the policy was already fixed.
#[napi(js_name = "initFsScanCachePolicy")]
pub fn init_fs_scan_cache_policy(
    env: Env,
    variables: HashMap<String, String>,
) -> napi::Result<bool> {
    on_js_thread(&env, || {
        Ok(cache::init_global(CachePolicy::from_lookup(|name| {
            variables.get(name).cloned()
        })))
    })
}

/// The scan cache's current size.
#[napi(object)]
pub struct FsScanCacheStats {
    /// Cached scans (distinct root/hidden/gitignore keys).
    pub scans: u32,
    /// Entries across all cached scans.
    pub entries: f64,
    /// Bytes held by all cached scans.
    pub bytes: f64,
    /// `bytes / entries` (0 when empty).
    pub bytes_per_entry: f64,
    /// Directory walks run since the process started (cache hits run none).
    pub walks: f64,
    /// Roots whose scan was too large for the byte budget, remembered for
    /// the TTL: cached calls on them walk uncached meanwhile.
    pub refused: u32,
    /// Empty answers old enough for the empty-result recheck that walked no
    /// tree again because their scan followed every file event on its root
    /// (watching on, no fallback): the events prove them.
    pub empty_rechecks_skipped: f64,
    /// Filesystem watching (all zero while it is off).
    pub watch: FsScanWatchStats,
    /// The content index: cached greps skip, unread, the files it rules
    /// out (`FS_SCAN_CACHE_CONTENT_BYTES`).
    pub content: FsScanContentStats,
    /// Name indexes: cached globs and fuzzy finds look a name up in them
    /// instead of reading every path (counted in `bytes` too).
    pub names: FsScanNameStats,
    /// Scans kept across restarts (all zero while `FS_SCAN_CACHE_PERSIST`
    /// is off).
    pub persist: FsScanPersistStats,
    /// One index per root for every process of the user (all zero while
    /// `FS_SCAN_CACHE_SHARED` is off).
    pub shared: FsScanSharedStats,
}

/// What this process indexes for others and reads from them.
#[napi(object)]
pub struct FsScanSharedStats {
    /// Whether sharing is on (`FS_SCAN_CACHE_SHARED=1`).
    pub enabled: bool,
    /// Roots this process indexes (walks and watches) for the others.
    pub indexing: u32,
    /// Roots this process reads from another process's index.
    pub reading: u32,
    /// Requests this process answered as an indexer.
    pub served: f64,
    /// Lists received from an indexer: the first of a root, then each change.
    pub lists_received: f64,
    /// Answers from the list already held, the indexer saying it is current.
    pub unchanged: f64,
    /// Times this process became a root's indexer after the one it read from went away.
    pub takeovers: f64,
    /// Answers made alone: no indexer could be asked, or it would not hand
    /// its list over (a list with unreadable paths).
    pub alone: f64,
}

/// What persistence wrote and restored, and why records were not believed.
#[napi(object)]
pub struct FsScanPersistStats {
    /// Whether persistence is on (`FS_SCAN_CACHE_PERSIST=1`).
    pub enabled: bool,
    /// Records written.
    pub saved: f64,
    /// Scans not written: with unreadable paths, over the budget, rules
    /// outside the tree changed while listed, or the write failed.
    pub not_saved: f64,
    /// Cache misses answered from a record proved current, without a walk.
    pub restored: f64,
    /// Directories listed again while restoring (changed since the record).
    pub dirs_relisted: f64,
    /// Misses that found no record.
    pub missing: f64,
    /// Records not believed (a walk answered instead), by reason.
    pub rebuilt: FsScanPersistRebuilt,
}

/// Records not believed, by reason.
#[napi(object)]
pub struct FsScanPersistRebuilt {
    /// Another format or version.
    pub version: f64,
    /// A checksum, length or path that did not hold.
    pub corrupt: f64,
    /// Another root's record under this one's name.
    pub key: f64,
    /// Not private to this user (another owner, writable by others, a link).
    pub owner: f64,
    /// An ignore file changed, appeared or went.
    pub rules: f64,
    /// The root is another directory now.
    pub root: f64,
    /// A change a record cannot take in (a new ignore file, an unreadable path).
    pub changes: f64,
}

/// The name indexes of the cached scans, built on a query's first use.
#[napi(object)]
pub struct FsScanNameStats {
    /// Cached scans whose index is built.
    pub indexes: u32,
    /// Entries those indexes cover.
    pub entries: f64,
    /// Bytes they hold (16 per entry).
    pub bytes: f64,
}

/// What the content index holds and has saved.
#[napi(object)]
pub struct FsScanContentStats {
    /// Roots with an index.
    pub roots: u32,
    /// Files indexed.
    pub files: f64,
    /// Distinct trigrams with a posting list.
    pub trigrams: f64,
    /// Bytes held by posting lists, indexed files and identities noted once.
    pub bytes: f64,
    /// Files cached greps ruled out unread since the process started.
    pub files_skipped: f64,
    /// ... of which an `fstatat` proved unchanged (the others were vouched
    /// for by filesystem events, with no system call).
    pub files_verified: f64,
    /// Files whose results cached greps took unread from an earlier search
    /// for the same pattern and options, since the process started.
    pub files_answered: f64,
}

/// What watching does: scans following events, watches, events applied,
/// and the scans that fell back to the TTL, by reason.
#[napi(object)]
pub struct FsScanWatchStats {
    /// Whether watching is on (`FS_SCAN_CACHE_WATCH=1` or `watchFsScanCache`).
    pub enabled: bool,
    /// Cached scans following events.
    pub watched_roots: u32,
    /// Directories watched.
    pub watches: u32,
    /// Most directories watched at once: `FS_SCAN_CACHE_WATCH_MAX`, or by
    /// default what the user's processes left free of the kernel's
    /// per-user limit when watching started, less a quarter of the limit
    /// kept for them (at most 131 072); 0 while watching is off.
    pub budget: u32,
    /// Event paths applied to cached scans.
    pub events_applied: f64,
    /// Scans dropped for a change that needs a new walk (an ignore file,
    /// `.git`, the root itself).
    pub rewalks: f64,
    /// Scans that fell back to the TTL, by reason.
    pub fallbacks: FsScanWatchFallbacks,
}

/// Scans that fell back to the TTL, by reason.
#[napi(object)]
pub struct FsScanWatchFallbacks {
    /// The kernel's event queue overflowed (events were lost).
    pub overflow: f64,
    /// Watching them would exceed the watch budget (`FS_SCAN_CACHE_WATCH_MAX`).
    pub watch_budget: f64,
    /// The kernel refused a watch (its per-user limit).
    pub watch_limit: f64,
    /// The watcher reported an error.
    pub watcher_error: f64,
    /// Events could not be confirmed drained in time.
    pub cookie_timeout: f64,
    /// A filesystem was mounted or unmounted at, below or above the root
    /// since its walk (mounting sends no event).
    pub mounts: f64,
}

/// Keep the scans the cache stores from now on exact by following
/// filesystem events (as `FS_SCAN_CACHE_WATCH=1` does from the start).
/// Throws an `Error` with code `EIO` when the system gives no watcher.
#[napi(js_name = "watchFsScanCache")]
pub fn watch_fs_scan_cache(env: Env) -> napi::Result<()> {
    on_js_thread(&env, || cache::global().watch())
}

/// Report the scan cache's size and how many walks it has run.
#[napi(js_name = "fsScanCacheStats")]
pub fn fs_scan_cache_stats(env: Env) -> napi::Result<FsScanCacheStats> {
    on_js_thread(&env, || Ok(to_js_stats(cache::global().stats())))
}

fn to_js_stats(stats: CacheStats) -> FsScanCacheStats {
    FsScanCacheStats {
        scans: u32::try_from(stats.scans).unwrap_or(u32::MAX),
        entries: stats.entries as f64,
        bytes: stats.bytes as f64,
        bytes_per_entry: stats.bytes_per_entry(),
        walks: stats.walks as f64,
        refused: u32::try_from(stats.refused).unwrap_or(u32::MAX),
        empty_rechecks_skipped: stats.empty_rechecks_skipped as f64,
        watch: to_js_watch_stats(stats.watch),
        content: FsScanContentStats {
            roots: stats.content.roots as u32,
            files: stats.content.files as f64,
            trigrams: stats.content.trigrams as f64,
            bytes: stats.content.bytes as f64,
            files_skipped: stats.content.files_skipped as f64,
            files_verified: stats.content.files_verified as f64,
            files_answered: stats.content.files_answered as f64,
        },
        names: FsScanNameStats {
            indexes: u32::try_from(stats.names.indexes).unwrap_or(u32::MAX),
            entries: stats.names.entries as f64,
            bytes: stats.names.bytes as f64,
        },
        persist: to_js_persist_stats(stats.persist),
        shared: to_js_shared_stats(stats.shared),
    }
}

fn to_js_shared_stats(shared: SharingStats) -> FsScanSharedStats {
    FsScanSharedStats {
        enabled: shared.enabled,
        indexing: u32::try_from(shared.indexing).unwrap_or(u32::MAX),
        reading: u32::try_from(shared.reading).unwrap_or(u32::MAX),
        served: shared.served as f64,
        lists_received: shared.lists_received as f64,
        unchanged: shared.unchanged as f64,
        takeovers: shared.takeovers as f64,
        alone: shared.alone as f64,
    }
}

fn to_js_persist_stats(persist: PersistStats) -> FsScanPersistStats {
    let rebuilt = persist.rebuilt;
    FsScanPersistStats {
        enabled: persist.enabled,
        saved: persist.saved as f64,
        not_saved: persist.not_saved as f64,
        restored: persist.restored as f64,
        dirs_relisted: persist.dirs_relisted as f64,
        missing: persist.missing as f64,
        rebuilt: FsScanPersistRebuilt {
            version: rebuilt.version as f64,
            corrupt: rebuilt.corrupt as f64,
            key: rebuilt.key as f64,
            owner: rebuilt.owner as f64,
            rules: rebuilt.rules as f64,
            root: rebuilt.root as f64,
            changes: rebuilt.changes as f64,
        },
    }
}

fn to_js_watch_stats(watch: WatchStats) -> FsScanWatchStats {
    FsScanWatchStats {
        enabled: watch.enabled,
        watched_roots: u32::try_from(watch.watched_roots).unwrap_or(u32::MAX),
        watches: u32::try_from(watch.watches).unwrap_or(u32::MAX),
        budget: u32::try_from(watch.budget).unwrap_or(u32::MAX),
        events_applied: watch.events_applied as f64,
        rewalks: watch.rewalks as f64,
        fallbacks: FsScanWatchFallbacks {
            overflow: watch.overflow as f64,
            watch_budget: watch.watch_budget as f64,
            watch_limit: watch.watch_limit as f64,
            watcher_error: watch.watcher_error as f64,
            cookie_timeout: watch.cookie_timeout as f64,
            mounts: watch.mounts as f64,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_left_out_keep_the_library_defaults() {
        let options = NativeGlobOptions {
            pattern: Either::A("*.rs".into()),
            ignore: None,
            path: String::from("src").into(),
            file_type: None,
            recursive: None,
            hidden: None,
            gitignore: None,
            include_node_modules: None,
            max_results: None,
            sort_by_mtime: None,
            mtime: None,
            cache: None,
            confine: None,
            timeout_ms: None,
        };
        assert_eq!(
            convert_options(options).unwrap(),
            GlobOptions::new("*.rs", "src")
        );
    }
}
