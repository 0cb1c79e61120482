//! Many short strings handed to JS as a few long ones.
//!
//! Creating one JS string per path or line costs more than the search that
//! found it; V8 makes a few long strings quickly, and `split` or `slice` on
//! the JS side is cheap. Chunks stay below `CHUNK_BYTES` so V8 keeps them
//! out of its large-object space. Once a chunk's text has crossed, its
//! buffer is kept for the next chunks (see `SPARE_CHUNKS`).

use std::{ptr, sync::Mutex};

use napi::{
    bindgen_prelude::{ToNapiValue, Utf16String},
    check_status, sys,
};

/// Largest chunk handed to JS as one string (unless one piece is longer).
/// V8 puts strings above 128 KiB in its large-object space, one fresh
/// mapping each, and the page faults of that cost more than the rest of a
/// cached glob; chunks below it are bump-allocated.
const CHUNK_BYTES: usize = 64 * 1024;

/// Buffers of chunks whose text has crossed, kept for the next chunks (2
/// MiB at most). A fresh buffer is faulted in page by page once the
/// allocator has given the last one's pages back, 5 ms after they were
/// freed: about 75 page faults per cached glob of the bench's generated
/// tree, 6 to 10 % of its time.
const SPARE_CHUNKS: usize = 32;

/// The kept buffers, each of `CHUNK_BYTES` capacity and empty.
static SPARE: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// Pieces of bytes appended in order into chunks, each chunk holding whole
/// pieces only. The chunks before the last are complete and may be taken
/// out early ([`Chunks::take_complete`]), to cross while more are made.
#[derive(Default)]
pub struct Chunks {
    /// The chunks not taken yet.
    chunks: Vec<Vec<u8>>,
    /// Pieces in each chunk, taken or not.
    pieces: Vec<u32>,
    /// Per chunk not taken, its form when every piece in it came as text
    /// (and so is known to be UTF-8, and known ASCII or not); `None` once a
    /// piece of bytes joined it, to be found by one validation when it
    /// crosses.
    forms: Vec<Option<Form>>,
    /// Bytes in the complete chunks not taken yet.
    complete: usize,
}

impl Chunks {
    /// Append `piece`, after `separator` when its chunk already holds one.
    pub fn push(&mut self, piece: &[u8], separator: Option<u8>) {
        self.append(piece, separator, None);
    }

    /// Whether a piece of `len` bytes is too long to share a chunk: it is
    /// one chunk alone, and its length is the chunk's.
    pub fn stands_alone(len: usize) -> bool {
        len > CHUNK_BYTES
    }

    /// Append `text`, which is ASCII when `ascii` says so. A piece that
    /// [stands alone](Chunks::stands_alone) becomes a chunk as it is, its
    /// bytes not copied (in a dense search of minified files most of the
    /// text is such lines).
    pub fn push_text(&mut self, text: String, ascii: bool) {
        let form = Some(if ascii { Form::Latin1 } else { Form::Utf8 });
        if !Chunks::stands_alone(text.len()) {
            return self.append(text.as_bytes(), None, form);
        }
        self.start(text.into_bytes(), form);
    }

    fn append(&mut self, piece: &[u8], separator: Option<u8>, form: Option<Form>) {
        let sep = usize::from(separator.is_some());
        let last = (
            self.chunks.last_mut(),
            self.pieces.last_mut(),
            self.forms.last_mut(),
        );
        match last {
            (Some(chunk), Some(count), Some(known))
                if chunk.len() + sep + piece.len() <= CHUNK_BYTES =>
            {
                chunk.extend(separator);
                chunk.extend_from_slice(piece);
                *count += 1;
                *known = Form::joined(*known, form);
            }
            _ => {
                let mut chunk = buffer_for(piece.len());
                chunk.extend_from_slice(piece);
                self.start(chunk, form);
            }
        }
    }

    /// Begin a chunk holding one piece; the one before is complete.
    fn start(&mut self, chunk: Vec<u8>, form: Option<Form>) {
        self.complete += self.chunks.last().map_or(0, Vec::len);
        self.chunks.push(chunk);
        self.pieces.push(1);
        self.forms.push(form);
    }

    /// Bytes in the complete chunks not taken yet.
    pub fn complete_bytes(&self) -> usize {
        self.complete
    }

    /// The complete chunks not taken yet (every one but the last), as JS
    /// strings, in order; their pieces stay counted in [`Chunks::finish`].
    pub fn take_complete(&mut self) -> Vec<JsChunk> {
        let complete = self.chunks.len().saturating_sub(1);
        self.complete = 0;
        let forms = self.forms.drain(..complete);
        let chunks = self.chunks.drain(..complete).zip(forms);
        chunks
            .map(|(bytes, form)| JsChunk::of(bytes, form))
            .collect()
    }

    /// The chunks not taken as JS strings, and how many pieces each chunk
    /// holds (the taken ones first).
    pub fn finish(self) -> (Vec<JsChunk>, Vec<u32>) {
        let chunks = self.chunks.into_iter().zip(self.forms);
        let js = chunks.map(|(bytes, form)| JsChunk::of(bytes, form));
        (js.collect(), self.pieces)
    }
}

/// An empty buffer for a chunk starting with a piece of `len` bytes: a
/// kept one when the piece fits.
fn buffer_for(len: usize) -> Vec<u8> {
    let spare = (len <= CHUNK_BYTES)
        .then(|| SPARE.lock().unwrap_or_else(|p| p.into_inner()).pop())
        .flatten();
    spare.unwrap_or_else(|| Vec::with_capacity(CHUNK_BYTES.max(len)))
}

/// Keep `buffer` for a later chunk (see [`keep`]).
fn give_back(buffer: Vec<u8>) {
    keep(&mut SPARE.lock().unwrap_or_else(|p| p.into_inner()), buffer);
}

/// Put `buffer` in `spare`, emptied, if it is a chunk's size and room is
/// left; else free it.
fn keep(spare: &mut Vec<Vec<u8>>, mut buffer: Vec<u8>) {
    if buffer.capacity() == CHUNK_BYTES && spare.len() < SPARE_CHUNKS {
        buffer.clear();
        spare.push(buffer);
    }
}

/// A chunk as JS receives it: a string made from its bytes, after which
/// its buffer is given back.
pub struct JsChunk {
    bytes: Vec<u8>,
    form: Form,
}

/// How a chunk's bytes become a JS string; one validation per chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// ASCII (the common case) crosses as Latin-1: V8 copies it instead of
    /// running its UTF-8 decoder.
    Latin1,
    /// Other UTF-8 is decoded by the engine.
    Utf8,
    /// A chunk that is not UTF-8 (paths with a name that is not) crosses as
    /// UTF-16 with each stray byte escaped, every byte kept
    /// ([`crate::names`]); a separator is ASCII, so it is never part of a
    /// sequence and escapes never cross pieces.
    Utf16,
}

impl Form {
    /// The form of a chunk of form `chunk` once a piece of form `piece`
    /// joined it: known only when both are.
    fn joined(chunk: Option<Form>, piece: Option<Form>) -> Option<Form> {
        match (chunk?, piece?) {
            (Form::Latin1, Form::Latin1) => Some(Form::Latin1),
            (Form::Utf16, _) | (_, Form::Utf16) => None,
            _ => Some(Form::Utf8),
        }
    }
}

impl JsChunk {
    /// A chunk of form `form`, when known; else found from its bytes.
    fn of(bytes: Vec<u8>, form: Option<Form>) -> JsChunk {
        match form {
            Some(form) => JsChunk { bytes, form },
            None => JsChunk::new(bytes),
        }
    }

    fn new(bytes: Vec<u8>) -> JsChunk {
        let form = if bytes.is_ascii() {
            Form::Latin1
        } else if std::str::from_utf8(&bytes).is_ok() {
            Form::Utf8
        } else {
            Form::Utf16
        };
        JsChunk { bytes, form }
    }
}

impl ToNapiValue for JsChunk {
    unsafe fn to_napi_value(env: sys::napi_env, chunk: Self) -> napi::Result<sys::napi_value> {
        let bytes = &chunk.bytes;
        // SAFETY: `env` is the live environment napi hands every
        // conversion; `bytes` outlives each call, which copies it.
        let value = unsafe {
            match chunk.form {
                Form::Latin1 => {
                    let mut value = ptr::null_mut();
                    check_status!(
                        sys::napi_create_string_latin1(
                            env,
                            bytes.as_ptr().cast(),
                            bytes.len() as isize,
                            &mut value,
                        ),
                        "could not make a JS string of a chunk"
                    )?;
                    value
                }
                Form::Utf8 => <&str>::to_napi_value(env, std::str::from_utf8_unchecked(bytes))?,
                Form::Utf16 => {
                    Utf16String::to_napi_value(env, natives_core::names::to_utf16(bytes).into())?
                }
            }
        };
        give_back(chunk.bytes);
        Ok(value)
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
        let form = |bytes: &[u8]| JsChunk::new(bytes.to_vec()).form;
        assert_eq!(form(b"a/b"), Form::Latin1);
        assert_eq!(form("caf\u{e9}".as_bytes()), Form::Utf8);
        assert_eq!(form(b"caf\xe9\0\xc3\xa9"), Form::Utf16);
        let units = natives_core::names::to_utf16(b"caf\xe9\0\xc3\xa9");
        assert_eq!(units, [0x63, 0x61, 0x66, 0xdce9, 0, 0xe9]);
    }

    /// A chunk's buffer is kept emptied; a longer one, or one past the
    /// kept number, is freed.
    #[test]
    fn a_buffer_whose_text_crossed_is_kept_for_the_next_chunk() {
        let mut chunks = Chunks::default();
        chunks.push(b"first", None);
        let (mut crossed, _) = chunks.finish();
        let buffer = crossed.pop().expect("one chunk").bytes;
        let address = buffer.as_ptr();
        let mut spare = Vec::new();
        keep(&mut spare, buffer);
        assert_eq!(spare.len(), 1);
        assert_eq!((spare[0].as_ptr(), spare[0].len()), (address, 0));
        keep(&mut spare, vec![0; CHUNK_BYTES + 1]);
        for _ in 0..SPARE_CHUNKS {
            keep(&mut spare, Vec::with_capacity(CHUNK_BYTES));
        }
        assert_eq!(spare.len(), SPARE_CHUNKS);
        assert!(spare.iter().all(|b| b.capacity() == CHUNK_BYTES));
    }

    /// A text piece too long to share a chunk becomes one with its own
    /// buffer, not a copy of it.
    #[test]
    fn a_long_text_piece_crosses_in_its_own_buffer() {
        let long = "\u{e9}".repeat(CHUNK_BYTES);
        let address = long.as_ptr();
        let mut chunks = Chunks::default();
        chunks.push_text("before".into(), true);
        chunks.push_text(long, false);
        chunks.push_text("after".into(), true);
        let (crossed, pieces) = chunks.finish();
        assert_eq!(pieces, [1, 1, 1]);
        assert_eq!(crossed[1].bytes.as_ptr(), address);
        assert_eq!(crossed[1].form, Form::Utf8);
    }

    /// The form known from text pieces is the one a validation of the
    /// chunk finds, and a chunk with bytes pushed is validated.
    #[test]
    fn a_chunk_s_known_form_is_the_one_its_bytes_have() {
        enum Piece {
            Text(&'static str),
            Bytes(&'static [u8]),
        }
        use Piece::{Bytes, Text};
        let cases: &[&[Piece]] = &[
            &[Text("a"), Text("b")],
            &[Text("a"), Text("caf\u{e9}")],
            &[Text("caf\u{e9}"), Text("b")],
            &[Text("a"), Bytes(b"b")],
            &[Text("a"), Bytes(b"caf\xe9")],
            &[Bytes(b"caf\xc3\xa9"), Text("b")],
        ];
        for case in cases {
            let mut chunks = Chunks::default();
            for piece in *case {
                match piece {
                    Text(text) => chunks.push_text(text.to_string(), text.is_ascii()),
                    Bytes(bytes) => chunks.push(bytes, None),
                }
            }
            let (crossed, _) = chunks.finish();
            let [chunk] = &crossed[..] else {
                panic!("one chunk")
            };
            assert_eq!(chunk.form, JsChunk::new(chunk.bytes.clone()).form);
        }
    }

    /// Complete chunks taken out early, then the rest at the end, are the
    /// chunks made without taking, in order, with every chunk's pieces.
    #[test]
    fn complete_chunks_taken_early_and_the_rest_are_all_the_chunks() {
        let fill = |chunks: &mut Chunks, mut taken: Option<&mut Vec<Vec<u8>>>| {
            for n in 0..5_000 {
                chunks.push_text(format!("line {n} {}", "x".repeat(n % 97)), true);
                if n == 1_000 {
                    chunks.push_text("y".repeat(CHUNK_BYTES + 5), true);
                }
                if let Some(taken) = taken.as_deref_mut()
                    && chunks.complete_bytes() >= CHUNK_BYTES * 2
                {
                    taken.extend(chunks.take_complete().into_iter().map(|c| c.bytes));
                }
            }
        };
        let (mut whole, mut early, mut taken) = (Chunks::default(), Chunks::default(), Vec::new());
        fill(&mut whole, None);
        fill(&mut early, Some(&mut taken));
        assert!(!taken.is_empty());
        let (all, pieces) = whole.finish();
        let (rest, early_pieces) = early.finish();
        taken.extend(rest.into_iter().map(|c| c.bytes));
        assert_eq!(taken, all.into_iter().map(|c| c.bytes).collect::<Vec<_>>());
        assert_eq!(early_pieces, pieces);
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
