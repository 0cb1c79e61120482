//! Many short strings handed to JS as a few long ones.
//!
//! Creating one JS string per path or line costs more than the search that
//! found it; V8 makes a few long strings quickly, and `split` or `slice` on
//! the JS side is cheap. Chunks stay below `CHUNK_BYTES` so V8 keeps them
//! out of its large-object space. Once a chunk's text has crossed, its
//! buffer is kept for the next chunks (see `SPARE_CHUNKS`).
//!
//! A chunk's text is put in the form the engine copies without decoding
//! (Latin-1 or UTF-16) on the thread that made it, and a chunk of any size
//! but a small answer's is lent to the engine rather than copied (see
//! `LEND_AT`): the JS thread, which every result must cross, does as little
//! per byte as it can.

use std::{
    ffi::c_void,
    ptr,
    sync::{Mutex, OnceLock},
};

use napi::{Env, JsValue, bindgen_prelude::ToNapiValue, check_status, sys};
use natives_scan::{Error, ErrorKind};

use crate::errors;

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

/// A chunk as JS receives it: its text already in the form the engine
/// copies as it is, made on the thread that built the chunk, not on the JS
/// thread (Node's UTF-8 decoder took a fifth of a dense search's time
/// there, scanning each chunk twice).
pub struct JsChunk {
    text: Text,
}

/// A chunk's text as the engine takes it without decoding.
#[derive(Debug, PartialEq, Eq)]
enum Text {
    /// One byte per character: ASCII, or UTF-8 whose characters all fit.
    Latin1(Vec<u8>),
    /// Anything else.
    Utf16(Vec<u16>),
}

/// How a chunk's bytes become a JS string; one validation per chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// ASCII (the common case): its bytes are its Latin-1.
    Latin1,
    /// Other UTF-8: Latin-1 when every character fits, else UTF-16.
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

    /// The form of `bytes`, found by reading them.
    fn of(bytes: &[u8]) -> Form {
        if bytes.is_ascii() {
            Form::Latin1
        } else if std::str::from_utf8(bytes).is_ok() {
            Form::Utf8
        } else {
            Form::Utf16
        }
    }
}

impl JsChunk {
    /// A chunk of form `form`, when known; else found from its bytes.
    fn of(bytes: Vec<u8>, form: Option<Form>) -> JsChunk {
        let text = match form.unwrap_or_else(|| Form::of(&bytes)) {
            Form::Latin1 => {
                return JsChunk {
                    text: Text::Latin1(bytes),
                };
            }
            // SAFETY: a chunk is `Utf8` only when every piece in it came as
            // text or `Form::of` found it valid.
            Form::Utf8 => utf8_text(unsafe { std::str::from_utf8_unchecked(&bytes) }),
            Form::Utf16 => Text::Utf16(natives_core::names::to_utf16(&bytes)),
        };
        give_back(bytes);
        JsChunk { text }
    }
}

/// `text` in one byte per character when every character fits, else in
/// UTF-16 (`encoding_rs` widens ASCII runs many bytes at a time).
fn utf8_text(text: &str) -> Text {
    if encoding_rs::mem::is_str_latin1(text) {
        let mut latin1 = vec![0; text.len()];
        let len = encoding_rs::mem::convert_utf8_to_latin1_lossy(text.as_bytes(), &mut latin1);
        latin1.truncate(len);
        return Text::Latin1(latin1);
    }
    let mut units = vec![0; text.len() + 1];
    let len = encoding_rs::mem::convert_str_to_utf16(text, &mut units);
    units.truncate(len);
    Text::Utf16(units)
}

impl Text {
    /// Its length in characters as JS counts them (UTF-16 code units).
    fn units(&self) -> usize {
        match self {
            Text::Latin1(bytes) => bytes.len(),
            Text::Utf16(units) => units.len(),
        }
    }

    /// The bytes the text takes.
    fn bytes(&self) -> usize {
        match self {
            Text::Latin1(_) => self.units(),
            Text::Utf16(_) => self.units() * 2,
        }
    }
}

/// A chunk the engine refuses to make a string of crosses as the `EFBIG`
/// error saying so, in the string's place, for JS to throw when it reads the
/// chunk: the conversion never fails, because a failure where a streaming
/// callback's queue converts a batch is thrown there, uncaught, and ends
/// the process.
impl ToNapiValue for JsChunk {
    unsafe fn to_napi_value(env: sys::napi_env, chunk: Self) -> napi::Result<sys::napi_value> {
        let units = chunk.text.units();
        // SAFETY: `env` is the live environment napi hands every conversion.
        unsafe { cross(env, chunk.text) }.or_else(|_| {
            let refused = Error::new(
                ErrorKind::TooLarge,
                format!(
                    "a result's text of {units} characters could not be made a JS string \
                     (longer than this engine's longest string?): `maxColumns` cuts long lines"
                ),
            );
            Ok(errors::error_object(&Env::from_raw(env), &refused).raw())
        })
    }
}

/// `text` as a JS string: lent when it is long enough and the engine
/// takes it, else copied.
///
/// # Safety
/// `env` must be the live environment of the current call.
unsafe fn cross(env: sys::napi_env, mut text: Text) -> napi::Result<sys::napi_value> {
    if text.bytes() >= LEND_AT {
        // SAFETY: the caller's `env`.
        match unsafe { lend(env, text) }? {
            Ok(value) => return Ok(value),
            Err(refused) => text = refused,
        }
    }
    // SAFETY: the caller's `env`; the text outlives the call, which copies
    // it.
    let value = unsafe { copy(env, &text) }?;
    if let Text::Latin1(bytes) = text {
        give_back(bytes);
    }
    Ok(value)
}

/// Chunks of at least this many bytes are lent to the engine as external
/// strings instead of copied. V8 copies a long string into fresh pages of
/// its large-object space (faulted in and zeroed one by one) and a shorter
/// one into its young generation, whose collections copy it again, twice,
/// since every chunk of an answer lives until the answer is returned. Under
/// Node, lending took a dense cached grep of the bench's `npm` tree from
/// about 605 ms to 365 (415 lending only chunks of 128 KiB or more), and a
/// cached glob of 657 k paths from about 215 ms to 180; under Bun, paired
/// against the same build with lending off, a dense search took about 2 %
/// longer. Below it (a first page of results, an answer's last chunk) a chunk
/// is copied and its buffer kept for the next chunk, as before: lending was
/// measured only where answers are this large.
const LEND_AT: usize = 32 * 1024;

/// `text` as a new JS string copied from it.
///
/// # Safety
/// `env` must be the live environment of the current call.
unsafe fn copy(env: sys::napi_env, text: &Text) -> napi::Result<sys::napi_value> {
    let mut value = ptr::null_mut();
    // SAFETY: the caller's `env`; `text` is alive for the call.
    let status = unsafe {
        match text {
            Text::Latin1(bytes) => {
                let len = bytes.len() as isize;
                sys::napi_create_string_latin1(env, bytes.as_ptr().cast(), len, &mut value)
            }
            Text::Utf16(units) => {
                let len = units.len() as isize;
                sys::napi_create_string_utf16(env, units.as_ptr(), len, &mut value)
            }
        }
    };
    check_status!(status, "could not make a JS string of a chunk")?;
    Ok(value)
}

/// `text` as a JS string that keeps it (freed when the engine collects the
/// string), or `text` back when this engine cannot take it.
///
/// # Safety
/// `env` must be the live environment of the current call.
unsafe fn lend(env: sys::napi_env, text: Text) -> napi::Result<Result<sys::napi_value, Text>> {
    let Some(make) = external_strings() else {
        return Ok(Err(text));
    };
    let text = Box::new(text);
    let (data, len, make): (*const c_void, usize, MakeExternal) = match &*text {
        Text::Latin1(bytes) => (bytes.as_ptr().cast(), bytes.len(), make.latin1),
        Text::Utf16(units) => (units.as_ptr().cast(), units.len(), make.utf16),
    };
    let hint = Box::into_raw(text);
    let (mut value, mut copied) = (ptr::null_mut(), false);
    // SAFETY: `data` points into the boxed text, which stays where it is
    // until `free_lent` (or the branch below) drops it.
    let status = unsafe {
        make(
            env.cast(),
            data,
            len as isize,
            Some(free_lent),
            hint.cast(),
            &mut value,
            &mut copied,
        )
    };
    if status != sys::Status::napi_ok || copied {
        // Neither failure nor a copy calls the finalizer: the text is ours.
        // SAFETY: `hint` came from `Box::into_raw` above, and the engine
        // keeps no pointer into it.
        drop(unsafe { Box::from_raw(hint) });
    }
    check_status!(status, "could not lend a chunk to JS")?;
    Ok(Ok(value.cast()))
}

/// Frees a lent text once the engine has collected its string.
unsafe extern "C" fn free_lent(_env: *mut c_void, _data: *mut c_void, hint: *mut c_void) {
    // SAFETY: `hint` is the `Box<Text>` `lend` gave the engine, handed back
    // once.
    drop(unsafe { Box::from_raw(hint.cast::<Text>()) });
}

/// `node_api_create_external_string_latin1` and `_utf16`, in one type.
type MakeExternal = unsafe extern "C" fn(
    env: *mut c_void,
    data: *const c_void,
    length: isize,
    finalize: Option<unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_void)>,
    hint: *mut c_void,
    result: *mut *mut c_void,
    copied: *mut bool,
) -> sys::napi_status;

/// The engine's functions that make external strings.
#[derive(Clone, Copy)]
struct ExternalStrings {
    latin1: MakeExternal,
    utf16: MakeExternal,
}

/// The engine's external-string functions, looked up once in the running
/// program: Node has them from 20.4 and Bun from 1.2, and napi-rs declares
/// them only under its N-API 10 feature, which would make the addon fail to
/// load on any Node 20 (N-API 9) that lacks them.
fn external_strings() -> Option<ExternalStrings> {
    static FOUND: OnceLock<Option<ExternalStrings>> = OnceLock::new();
    *FOUND.get_or_init(|| {
        let latin1 = find(c"node_api_create_external_string_latin1")?;
        let utf16 = find(c"node_api_create_external_string_utf16")?;
        Some(ExternalStrings { latin1, utf16 })
    })
}

/// The function `name` exported by the program or a library it loaded.
fn find(name: &std::ffi::CStr) -> Option<MakeExternal> {
    // SAFETY: `dlsym` on the default scope only reads the loaded symbol
    // tables; a found address of this name is N-API's function of this
    // signature.
    unsafe {
        let found = libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr());
        (!found.is_null()).then(|| std::mem::transmute::<*mut c_void, MakeExternal>(found))
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

    /// The text a chunk of these bytes crosses as.
    fn crossed(bytes: &[u8]) -> Text {
        JsChunk::of(bytes.to_vec(), None).text
    }

    /// Text crosses one byte per character when every character fits
    /// (ASCII, or UTF-8 within Latin-1), else as UTF-16; a chunk with a
    /// byte that is not UTF-8 as UTF-16 with that byte escaped, its
    /// neighbours and separators intact.
    #[test]
    fn every_character_of_a_chunk_crosses_in_the_narrowest_form() {
        let cases: &[(&[u8], Text)] = &[
            (b"a/b", Text::Latin1(b"a/b".to_vec())),
            (b"", Text::Latin1(vec![])),
            (
                "caf\u{e9}\0\u{ff}".as_bytes(),
                Text::Latin1(vec![b'c', b'a', b'f', 0xe9, 0, 0xff]),
            ),
            ("\u{100}".as_bytes(), Text::Utf16(vec![0x100])),
            (
                "a\u{e9}\u{1f600}".as_bytes(),
                Text::Utf16(vec![0x61, 0xe9, 0xd83d, 0xde00]),
            ),
            (
                b"caf\xe9\0\xc3\xa9",
                Text::Utf16(vec![0x63, 0x61, 0x66, 0xdce9, 0, 0xe9]),
            ),
        ];
        for (bytes, text) in cases {
            assert_eq!(
                &crossed(bytes),
                text,
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    /// A chunk's buffer is kept emptied; a longer one, or one past the
    /// kept number, is freed.
    #[test]
    fn a_buffer_whose_text_crossed_is_kept_for_the_next_chunk() {
        let mut chunks = Chunks::default();
        chunks.push(b"first", None);
        let (mut crossed, _) = chunks.finish();
        let Text::Latin1(buffer) = crossed.pop().expect("one chunk").text else {
            panic!("ASCII crosses as it is")
        };
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
    /// buffer, not a copy of it; one that is not ASCII is narrowed or
    /// widened whole.
    #[test]
    fn a_long_text_piece_crosses_in_its_own_buffer() {
        let long = "x".repeat(CHUNK_BYTES + 1);
        let address = long.as_ptr();
        let mut chunks = Chunks::default();
        chunks.push_text("before".into(), true);
        chunks.push_text(long, true);
        chunks.push_text("\u{e9}".repeat(CHUNK_BYTES), false);
        chunks.push_text("after".into(), true);
        let (crossed, pieces) = chunks.finish();
        assert_eq!(pieces, [1, 1, 1, 1]);
        let Text::Latin1(bytes) = &crossed[1].text else {
            panic!("ASCII crosses as it is")
        };
        assert_eq!(bytes.as_ptr(), address);
        assert_eq!(crossed[2].text, Text::Latin1(vec![0xe9; CHUNK_BYTES]));
    }

    /// The form known from text pieces gives the text a validation of the
    /// chunk's bytes gives, and a chunk with bytes pushed is validated.
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
            &[Text("a"), Text("\u{1f600}")],
            &[Text("a"), Bytes(b"b")],
            &[Text("a"), Bytes(b"caf\xe9")],
            &[Bytes(b"caf\xc3\xa9"), Text("b")],
        ];
        for case in cases {
            let mut chunks = Chunks::default();
            let mut bytes = Vec::new();
            for piece in *case {
                match piece {
                    Text(text) => chunks.push_text(text.to_string(), text.is_ascii()),
                    Bytes(piece) => chunks.push(piece, None),
                }
                bytes.extend_from_slice(match piece {
                    Text(text) => text.as_bytes(),
                    Bytes(piece) => piece,
                });
            }
            let (made, _) = chunks.finish();
            let [chunk] = &made[..] else {
                panic!("one chunk")
            };
            assert_eq!(chunk.text, crossed(&bytes));
        }
    }

    /// Complete chunks taken out early, then the rest at the end, are the
    /// chunks made without taking, in order, with every chunk's pieces.
    #[test]
    fn complete_chunks_taken_early_and_the_rest_are_all_the_chunks() {
        let fill = |chunks: &mut Chunks, mut taken: Option<&mut Vec<Text>>| {
            for n in 0..5_000 {
                chunks.push_text(format!("line {n} {}", "x".repeat(n % 97)), true);
                if n == 1_000 {
                    chunks.push_text("y".repeat(CHUNK_BYTES + 5), true);
                }
                if let Some(taken) = taken.as_deref_mut()
                    && chunks.complete_bytes() >= CHUNK_BYTES * 2
                {
                    taken.extend(chunks.take_complete().into_iter().map(|c| c.text));
                }
            }
        };
        let (mut whole, mut early, mut taken) = (Chunks::default(), Chunks::default(), Vec::new());
        fill(&mut whole, None);
        fill(&mut early, Some(&mut taken));
        assert!(!taken.is_empty());
        let (all, pieces) = whole.finish();
        let (rest, early_pieces) = early.finish();
        taken.extend(rest.into_iter().map(|c| c.text));
        assert_eq!(taken, all.into_iter().map(|c| c.text).collect::<Vec<_>>());
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
