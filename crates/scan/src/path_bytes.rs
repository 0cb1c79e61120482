//! Relative paths as bytes: how the scan stores, orders and converts them.
//!
//! A scan keeps every path as `/`-separated bytes (exact on Unix) so that
//! lists sort and compare with `memcmp`. These helpers are the one place that
//! says what that order is and how a [`Path`] becomes bytes and back; the
//! entry list and the unreadable records both build on them.

use std::{borrow::Cow, cmp::Ordering, path::Path};

/// Whether `path` is `dir` or lies below it.
pub(crate) fn is_within(path: &[u8], dir: &[u8]) -> bool {
    path.strip_prefix(dir)
        .is_some_and(|rest| rest.is_empty() || rest[0] == b'/')
}

/// Path order: component by component, byte-wise within a component.
///
/// This is the order of a depth-first walk that visits siblings sorted by
/// name (`a`, `a/b`, `a.txt`), and of [`Path`]'s own `Ord`. On the joined
/// bytes it amounts to comparing byte-wise with `/` below every other byte.
pub fn compare_paths(a: &[u8], b: &[u8]) -> Ordering {
    let common = a.iter().zip(b).position(|(x, y)| x != y);
    match common {
        Some(i) => sort_key(a[i]).cmp(&sort_key(b[i])),
        None => a.len().cmp(&b.len()),
    }
}

fn sort_key(byte: u8) -> u16 {
    if byte == b'/' { 0 } else { u16::from(byte) + 1 }
}

/// Relative path bytes of `path` (exact on Unix, lossy elsewhere), with `/`
/// as the separator.
pub(crate) fn path_to_bytes(path: &Path) -> Cow<'_, [u8]> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Cow::Borrowed(path.as_os_str().as_bytes())
    }
    #[cfg(not(unix))]
    {
        let text = path.to_string_lossy().replace('\\', "/");
        Cow::Owned(text.into_bytes())
    }
}

/// The inverse of [`path_to_bytes`].
pub(crate) fn bytes_to_path(bytes: &[u8]) -> Cow<'_, Path> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Cow::Borrowed(Path::new(std::ffi::OsStr::from_bytes(bytes)))
    }
    #[cfg(not(unix))]
    {
        Cow::Owned(std::path::PathBuf::from(
            String::from_utf8_lossy(bytes).into_owned(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_order_matches_std_path_order() {
        let table: &[(&str, &str)] = &[
            ("a", "a/b"),
            ("a/b", "a.txt"),
            ("a/z", "ab"),
            ("a-b/c", "a.b"),
            ("a/b/c", "a/b.c"),
            ("", "a"),
        ];
        for &(lo, hi) in table {
            assert_eq!(
                compare_paths(lo.as_bytes(), hi.as_bytes()),
                Ordering::Less,
                "{lo} < {hi}"
            );
            assert_eq!(
                Path::new(lo).cmp(Path::new(hi)),
                Ordering::Less,
                "std: {lo} < {hi}"
            );
        }
    }
}
