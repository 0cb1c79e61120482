//! What is text: the one rule grep searches by and a file is read by.
//!
//! Two readers of one file must not disagree on whether it is text (grep
//! printing a file's lines that `read` refuses as binary, or skipping as
//! binary a file `read` shows). The rule is `rg`'s:
//!
//! - a UTF-16 byte order mark (`FF FE`, `FE FF`) names the encoding, and the
//!   content is transcoded from it (grep searches the transcoded lines);
//! - content holding a NUL byte (after transcoding) is binary, wherever the
//!   NUL is in the bytes searched or read.
//!
//! [`classify`] applies it to bytes in memory; `configure` sets a
//! `grep-searcher` to apply it to what it searches.

use grep_searcher::{BinaryDetection, SearcherBuilder};

/// The byte that makes content binary.
pub const BINARY_BYTE: u8 = b'\0';

/// What a run of bytes holds, by the rule above.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Content {
    /// UTF-8 text (or bytes read as such: invalid sequences are not
    /// binary), a UTF-8 byte order mark included.
    Utf8,
    /// Text after a little-endian UTF-16 byte order mark.
    Utf16Le,
    /// Text after a big-endian UTF-16 byte order mark.
    Utf16Be,
    /// A NUL byte (or, in UTF-16, a NUL character) among the bytes.
    Binary,
}

impl Content {
    /// The name every front shows: `utf-8`, `utf-16le`, `utf-16be` (the
    /// WHATWG encoding labels a JS `TextDecoder` takes) or `binary`.
    pub fn name(self) -> &'static str {
        match self {
            Content::Utf8 => "utf-8",
            Content::Utf16Le => "utf-16le",
            Content::Utf16Be => "utf-16be",
            Content::Binary => "binary",
        }
    }
}

/// What `bytes` (a whole file, or the part of it read) hold.
pub fn classify(bytes: &[u8]) -> Content {
    let has_nul = |rest: &[u8], unit: fn([u8; 2]) -> u16| {
        rest.chunks_exact(2)
            .any(|pair| unit([pair[0], pair[1]]) == 0)
    };
    match bytes {
        [0xFF, 0xFE, rest @ ..] if !has_nul(rest, u16::from_le_bytes) => Content::Utf16Le,
        [0xFE, 0xFF, rest @ ..] if !has_nul(rest, u16::from_be_bytes) => Content::Utf16Be,
        [0xFF, 0xFE, ..] | [0xFE, 0xFF, ..] => Content::Binary,
        _ if memchr::memchr(BINARY_BYTE, bytes).is_some() => Content::Binary,
        _ => Content::Utf8,
    }
}

/// Set `builder` to search by the rule: byte order marks sniffed (UTF-16
/// transcoded), and, unless the caller named the file (searched whole, NUL
/// bytes and all, as `rg` searches a file named on its command line), the
/// search stopped as binary at the first NUL.
pub(crate) fn configure(builder: &mut SearcherBuilder, named: bool) -> &mut SearcherBuilder {
    let binary = match named {
        true => BinaryDetection::none(),
        false => BinaryDetection::quit(BINARY_BYTE),
    };
    builder.bom_sniffing(true).binary_detection(binary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        cache::{CachePolicy, ScanCache},
        cancel::CancelToken,
        grep::{GrepOptions, grep},
    };

    fn utf16(text: &str, big_endian: bool) -> Vec<u8> {
        let bom: &[u8] = if big_endian {
            &[0xFE, 0xFF]
        } else {
            &[0xFF, 0xFE]
        };
        let units = text.encode_utf16().flat_map(|unit| match big_endian {
            true => unit.to_be_bytes(),
            false => unit.to_le_bytes(),
        });
        bom.iter().copied().chain(units).collect()
    }

    /// Files of every shape the rule decides, with what it says of each.
    fn table() -> Vec<(&'static str, Vec<u8>, Content)> {
        let filler = "filler line\n".repeat(1_000);
        let late = |at: usize| {
            let mut bytes = "needle line\n".repeat(at / 12).into_bytes();
            bytes.extend_from_slice(b"tail\0needle after\n");
            bytes
        };
        vec![
            ("plain.txt", b"needle\n".to_vec(), Content::Utf8),
            ("bom8.txt", b"\xEF\xBB\xBFneedle\n".to_vec(), Content::Utf8),
            ("latin1.txt", b"caf\xe9 needle\n".to_vec(), Content::Utf8),
            (
                "le.txt",
                utf16("needle \u{e9}t\u{e9}\n", false),
                Content::Utf16Le,
            ),
            ("be.txt", utf16("needle\nmore\n", true), Content::Utf16Be),
            ("le-nul.txt", utf16("needle\0\n", false), Content::Binary),
            ("nul-8k.txt", late(10 * 1024), Content::Binary),
            ("nul-100k.txt", late(100 * 1024), Content::Binary),
            (
                "no-bom16.txt",
                "needle".encode_utf16().flat_map(u16::to_le_bytes).collect(),
                Content::Binary,
            ),
            (
                "long.txt",
                format!("{filler}needle\n").into_bytes(),
                Content::Utf8,
            ),
        ]
    }

    #[test]
    fn classify_table() {
        for (name, bytes, content) in table() {
            assert_eq!(classify(&bytes), content, "{name}");
        }
        assert_eq!(classify(b""), Content::Utf8);
        assert_eq!(Content::Utf16Le.name(), "utf-16le");
    }

    /// grep, walking a tree of the table's files, searches as text exactly
    /// the files the rule calls text and counts the others binary (stopping
    /// at their NUL); a UTF-16 file's lines are its transcoded text.
    #[test]
    fn grep_searches_by_the_same_rule() {
        let files = table();
        let borrowed: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(name, bytes, _)| (*name, bytes.as_slice()))
            .collect();
        let dir = natives_testkit::tree(&borrowed);
        for cached in [false, true] {
            let mut options = GrepOptions::new("needle", dir.path());
            options.cache = cached;
            let cache = ScanCache::new(CachePolicy::default());
            let outcome = grep(&options, &cache, &CancelToken::new(), &mut |_| {}).unwrap();
            let binary = files
                .iter()
                .filter(|(_, _, c)| *c == Content::Binary)
                .count();
            assert_eq!(outcome.binary_files_skipped, binary, "cache {cached}");
            for (name, _, content) in &files {
                let lines: Vec<&str> = outcome
                    .matches
                    .iter()
                    .filter(|m| m.path == name.as_bytes())
                    .map(|m| m.line.as_str())
                    .collect();
                // A binary file's search stops at its NUL: nothing after it is reported.
                match content {
                    Content::Binary => {
                        assert!(!lines.iter().any(|l| l.contains("after")), "{name}")
                    }
                    _ => assert!(!lines.is_empty(), "{name} is searched as text"),
                }
            }
            let le: Vec<&str> = outcome
                .matches
                .iter()
                .filter(|m| m.path == b"le.txt")
                .map(|m| m.line.as_str())
                .collect();
            assert_eq!(le, ["needle \u{e9}t\u{e9}"], "transcoded, cache {cached}");
        }
    }
}
