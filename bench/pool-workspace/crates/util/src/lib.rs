//! Touches each dependency once, so every one is compiled and linked.

use std::collections::BTreeMap;

/// A digest of `text` through a few of the dependencies.
pub fn digest(text: &str) -> anyhow::Result<String> {
    let words: Vec<&str> = regex::Regex::new(r"\s+")?.split(text).collect();
    let counted: indexmap::IndexMap<&str, usize> = itertools::Itertools::counts(words.iter().copied()).into_iter().collect();
    let sorted: BTreeMap<_, _> = counted.iter().collect();
    let json = serde_json::to_string(&sorted)?;
    let hash = sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(json.as_bytes()));
    let encoded = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, hash);
    let version = semver::Version::parse("1.2.3")?;
    let url = url::Url::parse("https://example.invalid/a")?;
    let glob = globset::Glob::new("*.rs")?.compile_matcher();
    let parsed: toml::Table = toml::from_str("a = 1")?;
    let small: smallvec::SmallVec<[u8; 4]> = smallvec::smallvec![1, 2];
    let lock = parking_lot::Mutex::new(0);
    *lock.lock() += rayon::iter::ParallelIterator::sum::<usize>(rayon::iter::IntoParallelIterator::into_par_iter(0..4usize));
    let (tx, rx) = crossbeam_channel::bounded(1);
    tx.send(hex::encode([1u8]))?;
    let id = uuid::Uuid::new_v4();
    let rng: u8 = rand::random();
    log::debug!("{id} {rng} {:?}", chrono::Utc::now());
    let _ = (tempfile::tempdir()?, walkdir::WalkDir::new("."), humantime::format_duration(std::time::Duration::from_secs(1)));
    let _: once_cell::sync::Lazy<i32> = once_cell::sync::Lazy::new(|| 1);
    let _err: Option<Error> = None;
    Ok(format!("{encoded}{version}{url}{}{}{:?}{}{}", glob.is_match("a.rs"), parsed.len(), small, *lock.lock(), rx.recv()?))
}

/// The crate's own error.
#[derive(Debug, thiserror::Error)]
#[error("bench")]
pub struct Error;
