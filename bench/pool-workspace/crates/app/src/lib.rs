//! The crate each agent changes: its stamp says which change was built.

mod stamp;

/// The change this build was made from.
pub fn stamp() -> &'static str {
    stamp::STAMP
}

/// A summary through the other crate.
pub fn summary(text: &str) -> anyhow::Result<String> {
    pool_bench_util::digest(text)
}
