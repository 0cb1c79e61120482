//! Bindings for `fuzzyFind` (`natives_scan::fuzzy`).

use napi::bindgen_prelude::{AsyncTask, Utf16String};
use napi_derive::napi;
use natives_core::names;
use natives_scan::{
    Error, cache,
    fuzzy::{FuzzyMatch, FuzzyOptions, Tier, fuzzy_find},
};

use crate::{
    cancel::CancelToken,
    options::{count, given},
    scan::{FileType, UnreadablePath, unreadable_paths},
    task::{Work, cancellable_task},
};

/// Options for the native `fuzzyFind`; the TypeScript layer documents them
/// and supplies `path`.
#[napi(object)]
pub struct NativeFuzzyOptions {
    /// What to look for (`@` mention syntax allowed; words separated by spaces).
    pub query: String,
    /// Directory to search, absolute or relative to the cwd (a byte of a
    /// name that is not UTF-8 as the lone surrogate U+DC00 + byte).
    pub path: Utf16String,
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
    /// Stay beneath `path`, a real path: nothing is listed through a link
    /// (default false).
    pub confine: Option<bool>,
    /// Fail with `ETIMEDOUT` after this many milliseconds.
    pub timeout_ms: Option<f64>,
}

/// One match.
#[napi(object)]
pub struct NativeFuzzyMatch {
    /// Relative, `/`-separated; directories end with `/` (a byte of a name
    /// that is not UTF-8 as the lone surrogate U+DC00 + byte).
    pub path: Utf16String,
    /// What the entry is.
    pub file_type: FileType,
    /// Higher ranks first.
    pub score: f64,
    /// Why it matched.
    pub tier: FuzzyTier,
    /// Matched character positions in `path` (a byte that is not part of
    /// UTF-8 counts as one), for highlighting.
    pub indices: Vec<u32>,
}

/// Why a path matched, best first.
#[napi(string_enum = "camelCase")]
pub enum FuzzyTier {
    /// The name is the query.
    ExactName,
    /// The name starts with the query.
    NamePrefix,
    /// The name contains the query.
    NameSubstring,
    /// The path contains the query (not the name).
    PathSubstring,
    /// The query's letters appear in order within the name.
    NameScattered,
    /// The query's letters appear in order across the path.
    Scattered,
}

impl From<Tier> for FuzzyTier {
    fn from(tier: Tier) -> FuzzyTier {
        match tier {
            Tier::ExactName => FuzzyTier::ExactName,
            Tier::NamePrefix => FuzzyTier::NamePrefix,
            Tier::NameSubstring => FuzzyTier::NameSubstring,
            Tier::PathSubstring => FuzzyTier::PathSubstring,
            Tier::NameScattered => FuzzyTier::NameScattered,
            Tier::Scattered => FuzzyTier::Scattered,
        }
    }
}

/// What the native `fuzzyFind` resolves with.
#[napi(object)]
pub struct NativeFuzzyResult {
    /// Best first.
    pub matches: Vec<NativeFuzzyMatch>,
    /// Matches before `maxResults` was applied.
    pub total_matches: f64,
    /// What the walk could not enter or read, in path order.
    pub unreadable: Vec<UnreadablePath>,
}

fn to_js_match(found: FuzzyMatch) -> NativeFuzzyMatch {
    NativeFuzzyMatch {
        path: names::to_utf16(&found.path).into(),
        file_type: found.file_type.into(),
        score: f64::from(found.score),
        tier: found.tier.into(),
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
    cancellable_task(
        token,
        options.timeout_ms,
        || convert_options(options),
        |options, token| {
            let outcome = fuzzy_find(&options, cache::global(), &token, &mut |_| {})?;
            Ok(NativeFuzzyResult {
                matches: outcome.matches.into_iter().map(to_js_match).collect(),
                total_matches: outcome.total_matches as f64,
                unreadable: unreadable_paths(&outcome.unreadable),
            })
        },
    )
}

fn convert_options(options: NativeFuzzyOptions) -> Result<FuzzyOptions, Error> {
    let path = crate::names::path_from_js(&options.path, "path")?;
    let mut converted = FuzzyOptions::new(options.query, path);
    given(&mut converted.include_hidden, options.hidden);
    given(&mut converted.use_gitignore, options.gitignore);
    given(
        &mut converted.include_node_modules,
        options.include_node_modules.map(Some),
    );
    given(
        &mut converted.max_results,
        count("maxResults", options.max_results)?,
    );
    given(&mut converted.cache, options.cache);
    given(&mut converted.confine, options.confine);
    Ok(converted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_left_out_keep_the_library_defaults() {
        let options = NativeFuzzyOptions {
            query: "main".into(),
            path: String::from("src").into(),
            hidden: None,
            gitignore: None,
            include_node_modules: None,
            max_results: None,
            cache: None,
            confine: None,
            timeout_ms: None,
        };
        assert_eq!(
            convert_options(options).unwrap(),
            FuzzyOptions::new("main", "src")
        );
    }
}
