//! How the library's views (the shapes the fronts hand out) spell a number.
//!
//! A view is one definition for three readers: the command line's `--json`
//! (serde), the addon's objects (`#[napi(object)]` behind each library
//! crate's `napi` feature) and the TypeScript types generated from them. JS
//! has one number type; napi turns a `u64` into a `BigInt` but an `i64` into
//! a plain number (exact up to 2^53), and serde writes both as the same JSON
//! integer. So a count, a size or a time in a view is an `i64` made with
//! [`number`], and every reader sees an ordinary number.

/// `n` as a view's number: itself, or `i64::MAX` past it (no count, size or
/// millisecond time this library records comes near).
pub fn number(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::number;

    #[test]
    fn numbers_keep_their_value_and_saturate_past_i64() {
        let cases = [
            (0, 0),
            (1_700_000_000_000, 1_700_000_000_000),
            (u64::MAX, i64::MAX),
        ];
        for (given, expected) in cases {
            assert_eq!(number(given), expected, "{given}");
        }
    }
}
