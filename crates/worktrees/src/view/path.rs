//! How a view writes a path: as text, bytes that are not UTF-8 replaced
//! (JSON and JS strings hold only text). Every view module writes paths.

use std::path::Path;

/// `path` as a view's text.
pub(super) fn lossy(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}
