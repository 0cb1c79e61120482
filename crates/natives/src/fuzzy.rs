//! Bindings for `fuzzyFind` (`natives_scan::fuzzy`).

use std::path::PathBuf;

use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;
use natives_scan::{
    Error, cache,
    fuzzy::{DEFAULT_MAX_RESULTS, FuzzyMatch, FuzzyOptions, fuzzy_find},
};

use crate::{
    cancel::CancelToken,
    errors::guarded,
    options::count,
    task::{Work, task},
};

/// Options for the native `fuzzyFind`; the TypeScript layer documents them
/// and supplies `path`.
#[napi(object)]
pub struct NativeFuzzyOptions {
    /// What to look for (`@` mention syntax allowed; words separated by spaces).
    pub query: String,
    /// Directory to search, absolute or relative to the cwd.
    pub path: String,
    /// Include dot-files (default false).
    pub hidden: Option<bool>,
    /// Honour .gitignore/.ignore (default true).
    pub gitignore: Option<bool>,
    /// Include node_modules (default: only if the query names it).
    pub include_node_modules: Option<bool>,
    /// Return at most this many matches (default 100).
    pub max_results: Option<f64>,
    /// Use the shared scan cache (default false).
    pub cache: Option<bool>,
    /// Fail with `ETIMEDOUT` after this many milliseconds.
    pub timeout_ms: Option<f64>,
}

/// One match.
#[napi(object)]
pub struct NativeFuzzyMatch {
    /// Relative, `/`-separated; directories end with `/`.
    pub path: String,
    /// 1 file, 2 directory, 3 symlink, 4 other.
    pub file_type: u32,
    /// Higher ranks first.
    pub score: f64,
    /// Why it matched: `exactName`, `namePrefix`, `nameSubstring`,
    /// `pathSubstring`, `nameScattered` or `scattered` (best first).
    #[napi(
        ts_type = "'exactName' | 'namePrefix' | 'nameSubstring' | 'pathSubstring' | 'nameScattered' | 'scattered'"
    )]
    pub tier: String,
    /// Matched character positions in `path`, for highlighting.
    pub indices: Vec<u32>,
}

/// What the native `fuzzyFind` resolves with.
#[napi(object)]
pub struct NativeFuzzyResult {
    /// Best first.
    pub matches: Vec<NativeFuzzyMatch>,
    /// Matches before `maxResults` was applied.
    pub total_matches: f64,
}

fn to_js_match(found: FuzzyMatch) -> NativeFuzzyMatch {
    NativeFuzzyMatch {
        path: found.path,
        file_type: u32::from(found.file_type.as_u8()),
        score: f64::from(found.score),
        tier: found.tier.name().to_string(),
        indices: found.indices,
    }
}

/// Rank the files and directories under `path` against `query`: exact name,
/// then name prefix, name substring, path substring, scattered letters; ties
/// to the shallower path. Rejects with an `Error` whose `code` is `ENOENT`,
/// `ENOTDIR`, `EACCES`, `EINVAL`, `ABORT_ERR` or `ETIMEDOUT`.
#[napi(
    js_name = "nativeFuzzyFind",
    ts_return_type = "Promise<NativeFuzzyResult>"
)]
pub fn native_fuzzy_find(
    options: NativeFuzzyOptions,
    token: Option<&CancelToken>,
) -> AsyncTask<Work<NativeFuzzyResult>> {
    let prepared = guarded(|| {
        let token = CancelToken::for_call(token, options.timeout_ms)?;
        Ok((convert_options(options)?, token))
    });
    task(move || {
        let (options, token) = prepared?;
        let outcome = fuzzy_find(&options, cache::global(), &token, &mut |_| {})?;
        Ok(NativeFuzzyResult {
            matches: outcome.matches.into_iter().map(to_js_match).collect(),
            total_matches: outcome.total_matches as f64,
        })
    })
}

fn convert_options(options: NativeFuzzyOptions) -> Result<FuzzyOptions, Error> {
    let mut converted = FuzzyOptions::new(options.query, PathBuf::from(options.path));
    converted.include_hidden = options.hidden.unwrap_or(false);
    converted.use_gitignore = options.gitignore.unwrap_or(true);
    converted.include_node_modules = options.include_node_modules;
    converted.max_results =
        count("maxResults", options.max_results)?.unwrap_or(DEFAULT_MAX_RESULTS);
    converted.cache = options.cache.unwrap_or(false);
    Ok(converted)
}
