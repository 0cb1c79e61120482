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
    match first_difference(a, b) {
        Some(i) => sort_key(a[i]).cmp(&sort_key(b[i])),
        None => a.len().cmp(&b.len()),
    }
}

/// The first index where `a` and `b` differ, within the shorter one.
///
/// Eight bytes at a time: sorted paths share long prefixes (a directory's
/// entries share its path), and a byte at a time spent most of the
/// comparison there.
fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    let len = a.len().min(b.len());
    let (a_words, b_words) = (a[..len].chunks_exact(8), b[..len].chunks_exact(8));
    let words = a_words.len() * 8;
    for (at, (x, y)) in a_words.zip(b_words).enumerate() {
        let word = |bytes: &[u8]| u64::from_le_bytes(bytes.try_into().unwrap_or_default());
        let differ = word(x) ^ word(y);
        if differ != 0 {
            return Some(at * 8 + differ.trailing_zeros() as usize / 8);
        }
    }
    (words..len).find(|&i| a[i] != b[i])
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
            ("src/components/aaaa/x", "src/components/aaaa/y"),
            ("src/components/aaaa/b", "src/components/aaaa.b"),
            (
                "src/components/aaaa/bbbbbbbbbb",
                "src/components/aaaa/bbbbbbbbbc",
            ),
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

    /// Word-at-a-time comparison agrees with a byte at a time wherever the
    /// first difference falls (inside a word, on a word's edge, past the
    /// last whole word) and whichever byte it is (`/` or not).
    #[test]
    fn the_first_difference_is_found_at_every_offset() {
        for len in 0..20 {
            for at in 0..=len {
                for (x, y) in [(b'a', b'b'), (b'/', b'a'), (b'a', b'/'), (b'-', b'/')] {
                    let mut a = vec![b'p'; len];
                    let mut b = a.clone();
                    if at < len {
                        a[at] = x;
                        b[at] = y;
                    } else {
                        b.push(y);
                    }
                    let bytewise = a.iter().zip(&b).position(|(p, q)| p != q);
                    assert_eq!(first_difference(&a, &b), bytewise, "{len} {at}");
                    let expected = match bytewise {
                        Some(i) => sort_key(a[i]).cmp(&sort_key(b[i])),
                        None => a.len().cmp(&b.len()),
                    };
                    assert_eq!(compare_paths(&a, &b), expected, "{len} {at}");
                }
            }
        }
    }
}
