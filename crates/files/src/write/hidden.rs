//! Names for the hidden siblings a batch makes beside a file: a write's
//! temporary file and the copy of the old one (`place.rs`), a deleted file
//! kept until its batch ends (`change.rs`).

use std::{
    ffi::{OsStr, OsString},
    sync::atomic::{AtomicU64, Ordering},
};

use crate::journal::random;

/// A name for a hidden sibling of `target` no other call will pick:
/// `.<target>.<pid>.<n>.<random>.<suffix>` (the random part keeps anyone
/// from planting a file at the name before it is taken).
pub(crate) fn hidden_name(target: &OsStr, suffix: &str) -> OsString {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // Long names are cut so the hidden name stays within NAME_MAX (255).
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(target);
    let stem = &bytes[..bytes.len().min(180)];
    let mut name = OsString::from(".");
    name.push(<OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(stem));
    name.push(format!(
        ".{}.{}.{:08x}.{suffix}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        random() as u32
    ));
    name
}
