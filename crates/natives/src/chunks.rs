//! Many short strings handed to JS as a few long ones.
//!
//! Creating one JS string per path or line costs more than the search that
//! found it; V8 makes a few long strings quickly, and `split` or `slice` on
//! the JS side is cheap. Chunks stay below `CHUNK_BYTES` so V8 keeps them
//! out of its large-object space.

use napi::bindgen_prelude::{Either3, Latin1String, Utf16String};

/// Largest chunk handed to JS as one string (unless one piece is longer).
/// V8 puts strings above 128 KiB in its large-object space, one fresh
/// mapping each, and the page faults of that cost more than the rest of a
/// cached glob; chunks below it are bump-allocated.
const CHUNK_BYTES: usize = 64 * 1024;

/// A chunk as JS receives it.
pub type JsChunk = Either3<Latin1String, String, Utf16String>;

/// Pieces of bytes appended in order into chunks, each chunk holding whole
/// pieces only.
#[derive(Default)]
pub struct Chunks {
    chunks: Vec<Vec<u8>>,
    /// Pieces in each chunk.
    pieces: Vec<u32>,
}

impl Chunks {
    /// Append `piece`, after `separator` when its chunk already holds one.
    pub fn push(&mut self, piece: &[u8], separator: Option<u8>) {
        let sep = usize::from(separator.is_some());
        match (self.chunks.last_mut(), self.pieces.last_mut()) {
            (Some(chunk), Some(count)) if chunk.len() + sep + piece.len() <= CHUNK_BYTES => {
                chunk.extend(separator);
                chunk.extend_from_slice(piece);
                *count += 1;
            }
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK_BYTES.max(piece.len()));
                chunk.extend_from_slice(piece);
                self.chunks.push(chunk);
                self.pieces.push(1);
            }
        }
    }

    /// The chunks as JS strings, and how many pieces each holds.
    pub fn finish(self) -> (Vec<JsChunk>, Vec<u32>) {
        (self.chunks.into_iter().map(to_js).collect(), self.pieces)
    }
}

/// One validation per chunk. ASCII (the common case) crosses as Latin-1:
/// V8 copies it instead of running its UTF-8 decoder. A chunk that is not
/// UTF-8 (paths with a name that is not) crosses as UTF-16 with each stray
/// byte escaped, every byte kept ([`crate::names`]); a separator is ASCII,
/// so it is never part of a sequence and escapes never cross pieces.
fn to_js(chunk: Vec<u8>) -> JsChunk {
    match String::from_utf8(chunk) {
        Ok(text) if text.is_ascii() => Either3::A(Latin1String::from(text)),
        Ok(text) => Either3::B(text),
        Err(err) => Either3::C(natives_core::names::to_utf16(err.as_bytes()).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(chunks: &Chunks) -> Vec<(usize, u32)> {
        chunks
            .chunks
            .iter()
            .map(Vec::len)
            .zip(chunks.pieces.iter().copied())
            .collect()
    }

    /// ASCII crosses as Latin-1, other UTF-8 as text, and a chunk with a
    /// byte that is not UTF-8 as UTF-16 with that byte escaped, its
    /// neighbours and separators intact.
    #[test]
    fn every_byte_of_a_chunk_crosses() {
        assert!(matches!(to_js(b"a/b".to_vec()), Either3::A(_)));
        assert!(
            matches!(to_js("caf\u{e9}".as_bytes().to_vec()), Either3::B(text) if text == "caf\u{e9}")
        );
        let Either3::C(units) = to_js(b"caf\xe9\0\xc3\xa9".to_vec()) else {
            panic!("a chunk that is not UTF-8 crosses as UTF-16")
        };
        assert_eq!(*units, [0x63, 0x61, 0x66, 0xdce9, 0, 0xe9]);
    }

    #[test]
    fn pieces_fill_a_chunk_then_start_the_next_and_a_long_one_stands_alone() {
        let mut chunks = Chunks::default();
        let half = vec![b'a'; CHUNK_BYTES / 2];
        chunks.push(&half, Some(0));
        chunks.push(&half[1..], Some(0));
        chunks.push(b"b", Some(0));
        chunks.push(&vec![b'c'; CHUNK_BYTES + 1], None);
        chunks.push(b"", None);
        assert_eq!(
            pieces(&chunks),
            [(CHUNK_BYTES, 2), (1, 1), (CHUNK_BYTES + 1, 1), (0, 1)]
        );
    }
}
