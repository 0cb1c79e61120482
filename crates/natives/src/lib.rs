//! The N-API addon: thin glue from JavaScript to the natives library crates.
//!
//! One file per domain. Each binding converts options, runs the work off the
//! JS thread as an `AsyncTask`, and turns a library error into a JS `Error`
//! with a stable `code` ([`errors`]). Behaviour lives in the library crates;
//! nothing here decides what a result is.
//!
//! - [`alloc`]: the addon's allocator (mimalloc), tuned to hand memory
//!   back.
//! - [`errors`]: library error → JS `Error { code, message }`, and the panic
//!   guard that keeps a Rust panic from crossing the FFI boundary.
//! - [`cancel`]: `CancelToken`, the JS handle on a native cancellation flag.
//! - [`options`]: checking numeric options that arrive as JS numbers, and
//!   leaving every option JS left out at the library's default.
//! - [`stream`]: results streamed to a JS callback in batches.
//! - [`chunks`]: many short strings (paths, lines) handed to JS as a few
//!   long ones.
//! - [`scan`]: `glob`, `invalidateFsScanCache`, `fsScanCacheStats`,
//!   `initFsScanCachePolicy`.
//! - [`grep`]: `grep`, in-memory `search` and `hasMatch`.
//! - [`fuzzy`]: `fuzzyFind`, ranked by name then path.
//! - [`files`]: the agent tools' file I/O: `readFile`, `applyFileChanges`.
//! - [`names`]: paths across the boundary as UTF-16 with every byte kept
//!   (names that are not UTF-8 included).
//! - [`lease`]: build-cache leases, freshness and the pure cargo parsers.
//! - [`evidence`]: checkout evidence: capture, validate, read the patch,
//!   restore.
//! - [`eviction`]: the housekeeping pass that archives and removes
//!   inactive checkouts, and the archived seats it leaves.
//! - [`claims`]: memory-directory claims and the CLI's memory layout.
//! - [`worktrees`]: the run registry, driving a run, and handing a branch
//!   over from an earlier attempt (released, refused or planned; restored).
//! - [`task`]: library work run off the JS thread as a promise: on napi's
//!   pool, or (work that waits on other processes) on a thread of its own.
//!
//! Every public item is documented (`missing_docs`): napi copies these docs
//! into `index.d.cts`, where they are the only description of a field that
//! TypeScript callers see.
#![warn(missing_docs)]

pub mod alloc;
pub mod cancel;
pub mod chunks;
pub mod claims;
pub mod errors;
pub mod eviction;
pub mod evidence;
pub mod files;
pub mod fuzzy;
pub mod grep;
pub mod lease;
pub mod names;
#[cfg(test)]
mod napi_stubs;
pub mod options;
pub mod pace;
pub mod pool;
pub mod scan;
pub mod stream;
pub mod task;
pub mod worktrees;
