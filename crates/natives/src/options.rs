//! Options as they arrive from JS: checked numbers, and defaults left to the
//! library.
//!
//! napi converts a JS number to `u32` by wrapping (`-1` becomes 4294967295),
//! so limits and durations arrive as `f64` and are checked here, once, with
//! an `EINVAL` that names the option and the value.
//!
//! An option the JS side leaves out arrives as `None`, and a converter then
//! leaves the library's field as the library's `new`/`Default` set it
//! ([`given`]): defaults live in the library's options types, never here.

use std::time::Duration;

use napi::bindgen_prelude::Either;
use natives_scan::Error;

/// Set `field` to the value the JS side gave, if it gave one; otherwise the
/// field keeps the library's default.
pub fn given<T>(field: &mut T, value: Option<T>) {
    if let Some(value) = value {
        *field = value;
    }
}

/// One value or a list of them (a JS `string | string[]` option), as a list.
pub fn listed(value: Either<String, Vec<String>>) -> Vec<String> {
    match value {
        Either::A(one) => vec![one],
        Either::B(many) => many,
    }
}

/// A non-negative integer option.
pub fn count(name: &'static str, value: Option<f64>) -> Result<Option<usize>, Error> {
    value
        .map(|v| {
            if v.is_finite() && v >= 0.0 && v.fract() == 0.0 {
                Ok(v as usize)
            } else {
                Err(
                    Error::invalid(format!("{name} must be a non-negative integer, got {v}"))
                        .with_option(name, js_number(v)),
                )
            }
        })
        .transpose()
}

/// A non-negative duration option in milliseconds. One too long for a
/// `Duration` (`1e300`) is the longest there is: a deadline that never comes.
pub fn milliseconds(name: &'static str, value: Option<f64>) -> Result<Option<Duration>, Error> {
    value
        .map(|v| {
            if v.is_finite() && v >= 0.0 {
                Ok(Duration::try_from_secs_f64(v / 1000.0).unwrap_or(Duration::MAX))
            } else {
                Err(Error::invalid(format!(
                    "{name} must be a non-negative number of milliseconds, got {v}"
                ))
                .with_option(name, js_number(v)))
            }
        })
        .transpose()
}

/// `value` spelled as JS spells a number (`Infinity`, not Rust's `inf`), for
/// an error's `value`.
fn js_number(value: f64) -> String {
    match value {
        f64::INFINITY => "Infinity".to_string(),
        f64::NEG_INFINITY => "-Infinity".to_string(),
        _ => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_count_names_its_option_and_value_as_js_spells_it() {
        for (v, shown) in [(-1.0, "-1"), (1.5, "1.5"), (f64::INFINITY, "Infinity")] {
            let err = count("maxResults", Some(v)).unwrap_err();
            assert_eq!(
                (err.option(), err.value()),
                (Some("maxResults"), Some(shown))
            );
        }
        assert_eq!(count("maxResults", Some(3.0)).unwrap(), Some(3));
    }

    #[test]
    fn milliseconds_too_many_for_a_duration_are_the_longest_one() {
        for v in [1e300, f64::MAX] {
            assert_eq!(
                milliseconds("timeoutMs", Some(v)).unwrap(),
                Some(Duration::MAX)
            );
        }
        assert_eq!(
            milliseconds("timeoutMs", Some(1500.0)).unwrap(),
            Some(Duration::from_millis(1500))
        );
        for (v, shown) in [(-1.0, "-1"), (f64::NAN, "NaN"), (f64::INFINITY, "Infinity")] {
            let err = milliseconds("timeoutMs", Some(v)).unwrap_err();
            assert_eq!(err.code(), "EINVAL");
            assert!(err.message().contains("timeoutMs"), "{err}");
            assert_eq!(err.option(), Some("timeoutMs"));
            assert_eq!(err.value(), Some(shown));
        }
    }
}
