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

#[cfg(test)]
mod tests {
    use super::*;

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
