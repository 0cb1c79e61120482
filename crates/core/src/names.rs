//! File names (and any bytes) carried losslessly through UTF-16 text.
//!
//! A Unix name is bytes; a JS string is UTF-16. Names are nearly always
//! UTF-8, but one that is not (a Latin-1 `caf\xe9.txt`) must come back to
//! the same bytes, or a tool that listed it cannot open it and a write
//! creates a second file beside it. Decoding lossily (each bad byte as
//! U+FFFD) loses which byte it was.
//!
//! The scheme: valid UTF-8 decodes as usual, and every byte that is not
//! part of a valid sequence becomes the lone surrogate U+DC00 + byte (such
//! bytes are >= 0x80, so U+DC80..U+DCFF). Valid text never holds a lone
//! surrogate, so the escapes cannot be mistaken for characters, and
//! [`from_utf16`] is the exact inverse of [`to_utf16`]. The coding-agent
//! tools decode file contents with the same scheme (`text.ts`), so a name
//! and a line of text carry a stray byte alike.
//!
//! A name copied from a lossy listing elsewhere (U+FFFD for the stray
//! bytes) names no file; [`is_lossy_copy`] recognises one, so a read can say
//! which name was meant and a write need not create a second file beside
//! it. Such a name is shown [`quoted`] as git quotes paths, a form that can
//! be typed back.

/// First code unit of an escape: U+DC00 + byte.
const ESCAPE_BASE: u16 = 0xdc00;

/// `bytes` as UTF-16, each byte that is not part of valid UTF-8 escaped.
pub fn to_utf16(bytes: &[u8]) -> Vec<u16> {
    let mut units = Vec::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        units.extend(chunk.valid().encode_utf16());
        units.extend(chunk.invalid().iter().map(|&b| ESCAPE_BASE + u16::from(b)));
    }
    units
}

/// The bytes `units` stand for: UTF-8 of its characters, each escape back
/// to its byte. `Err(index)` names the first lone surrogate that escapes no
/// byte (it cannot have come from [`to_utf16`]).
pub fn from_utf16(units: &[u16]) -> Result<Vec<u8>, usize> {
    let mut bytes = Vec::with_capacity(units.len());
    let mut index = 0;
    for decoded in char::decode_utf16(units.iter().copied()) {
        match decoded {
            Ok(ch) => {
                bytes.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                index += ch.len_utf16();
            }
            Err(lone) => {
                let unit = lone.unpaired_surrogate();
                match unit
                    .checked_sub(ESCAPE_BASE)
                    .and_then(|b| u8::try_from(b).ok())
                {
                    Some(byte) if byte >= 0x80 => bytes.push(byte),
                    _ => return Err(index),
                }
                index += 1;
            }
        }
    }
    Ok(bytes)
}

/// Whether `lossy` is what a lossy decoding makes of `name` (U+FFFD for
/// each maximal run of bytes that is not UTF-8, as Rust's and the WHATWG
/// decoders make it) while `name` itself is not UTF-8: `lossy` is a copy of
/// `name` that lost bytes.
pub fn is_lossy_copy(lossy: &[u8], name: &[u8]) -> bool {
    std::str::from_utf8(name).is_err() && String::from_utf8_lossy(name).as_bytes() == lossy
}

/// `bytes` as the coding-agent tools show a path (`names.ts`), in git's
/// quoting: as is when it is UTF-8 without a control character and does
/// not start with `"`; else in double quotes with C escapes (`\t`, `\n`,
/// `\"`, `\\`...) and three octal digits for each other control character
/// and each byte that is not part of UTF-8 (`"caf\351.txt"`).
pub fn quoted(bytes: &[u8]) -> String {
    if let Ok(text) = std::str::from_utf8(bytes)
        && !bytes.iter().any(u8::is_ascii_control)
        && !bytes.starts_with(b"\"")
    {
        return text.to_owned();
    }
    let mut out = String::from('"');
    for chunk in bytes.utf8_chunks() {
        chunk
            .valid()
            .chars()
            .for_each(|ch| push_quoted(&mut out, ch));
        for byte in chunk.invalid() {
            out.push_str(&format!("\\{byte:03o}"));
        }
    }
    out.push('"');
    out
}

/// `ch` inside a quoted path: C's escape for it, octal for another control
/// character, else itself.
fn push_quoted(out: &mut String, ch: char) {
    const LETTERS: [(char, char); 9] = [
        ('\x07', 'a'),
        ('\x08', 'b'),
        ('\t', 't'),
        ('\n', 'n'),
        ('\x0b', 'v'),
        ('\x0c', 'f'),
        ('\r', 'r'),
        ('"', '"'),
        ('\\', '\\'),
    ];
    match LETTERS.iter().find(|(escaped, _)| *escaped == ch) {
        Some((_, letter)) => {
            out.push('\\');
            out.push(*letter);
        }
        None if ch.is_ascii_control() => out.push_str(&format!("\\{:03o}", ch as u32)),
        None => out.push(ch),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lossy_copies_are_told_from_real_names() {
        let table: &[(&[u8], &[u8], bool)] = &[
            ("caf\u{fffd}.txt".as_bytes(), b"caf\xe9.txt", true),
            // One U+FFFD for a run a decoder takes as one bad sequence.
            ("\u{fffd}x".as_bytes(), b"\xe0\xa0x", true),
            ("\u{fffd}\u{fffd}x".as_bytes(), b"\xe0\xa0x", false),
            // A name that is UTF-8, U+FFFD in it or not, is its own name.
            (
                "caf\u{fffd}.txt".as_bytes(),
                "caf\u{fffd}.txt".as_bytes(),
                false,
            ),
            (b"cafe.txt", b"cafe.txt", false),
            ("caf\u{fffd}.txt".as_bytes(), b"caf\xe8.tx", false),
        ];
        for &(lossy, name, expected) in table {
            assert_eq!(is_lossy_copy(lossy, name), expected, "{lossy:x?} {name:x?}");
        }
    }

    #[test]
    fn paths_are_quoted_as_the_tools_show_them() {
        let table: &[(&[u8], &str)] = &[
            (b"src/a.rs", "src/a.rs"),
            ("caf\u{e9}.txt".as_bytes(), "caf\u{e9}.txt"),
            (b"caf\xe9.txt", r#""caf\351.txt""#),
            (b"a\tb\nc", r#""a\tb\nc""#),
            (b"say \"hi\"", r#"say "hi""#),
            (b"\"quoted\" \\", r#""\"quoted\" \\""#),
            (b"bell\x07\x01\x7f", r#""bell\a\001\177""#),
            (b"\xe0\xa0x\xff", r#""\340\240x\377""#),
        ];
        for &(bytes, expected) in table {
            assert_eq!(quoted(bytes), expected, "{bytes:x?}");
        }
    }

    #[test]
    fn every_byte_string_round_trips() {
        let mut samples: Vec<Vec<u8>> = vec![
            b"plain.txt".to_vec(),
            "caf\u{e9} \u{1f600}".as_bytes().to_vec(),
            b"caf\xe9.txt".to_vec(),
            b"\xe0\xa0".to_vec(),
            b"\xed\xa0\x80".to_vec(),
            b"\xf4\x90\x80\x80".to_vec(),
            b"\xc0\xaf\xff\xfe".to_vec(),
            vec![],
        ];
        // Every two-byte string, which covers every lead and continuation pairing.
        for a in 0..=255u8 {
            for b in (0..=255u8).step_by(7) {
                samples.push(vec![a, b, b'x']);
            }
        }
        for bytes in samples {
            let units = to_utf16(&bytes);
            assert_eq!(from_utf16(&units), Ok(bytes.clone()), "{bytes:x?}");
            if let Ok(text) = std::str::from_utf8(&bytes) {
                assert_eq!(units, text.encode_utf16().collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn each_bad_byte_is_one_escape() {
        assert_eq!(
            to_utf16(b"a\xe9b\xe0\xa0"),
            [0x61, 0xdce9, 0x62, 0xdce0, 0xdca0]
        );
    }

    #[test]
    fn a_lone_surrogate_that_escapes_no_byte_is_refused_at_its_index() {
        assert_eq!(from_utf16(&[0x61, 0xd800, 0x62]), Err(1));
        assert_eq!(from_utf16(&[0x61, 0x62, 0xdc41]), Err(2));
        assert_eq!(from_utf16(&[0xd83d, 0xde00, 0xdfff]), Err(2));
    }
}
