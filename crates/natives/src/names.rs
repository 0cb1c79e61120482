//! Paths across the boundary without losing a byte.
//!
//! napi's `String` decodes a JS string as UTF-8 and encodes Rust text the
//! same way, so a name that is not UTF-8 comes out with U+FFFD and the file
//! it named cannot be reached again. Paths therefore cross as UTF-16
//! (`Utf16String`, typed `string` in JS) in the escape scheme of
//! [`natives_core::names`]: each byte that is not valid UTF-8 is the lone
//! surrogate U+DC00 + byte. Every binding that takes or gives a path a
//! caller may hand back (files, and the search results that name files)
//! goes through these two functions.

use std::{
    ffi::OsString,
    os::unix::ffi::{OsStrExt, OsStringExt},
    path::{Path, PathBuf},
};

use napi::bindgen_prelude::Utf16String;
use natives_core::{Error, names};

/// The path a JS string names; `EINVAL` naming `what` for a lone surrogate
/// that escapes no byte.
pub fn path_from_js(text: &Utf16String, what: &str) -> Result<PathBuf, Error> {
    names::from_utf16(text)
        .map(|bytes| PathBuf::from(OsString::from_vec(bytes)))
        .map_err(|index| {
            Error::invalid(format!(
                "{what} {text}: holds a lone UTF-16 surrogate at index {index} that escapes no byte"
            ))
        })
}

/// `path` as a JS string, every byte kept.
pub fn path_to_js(path: &Path) -> Utf16String {
    names::to_utf16(path.as_os_str().as_bytes()).into()
}
