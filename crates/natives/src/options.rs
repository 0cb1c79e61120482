//! Checking numeric options that arrive as JS numbers.
//!
//! napi converts a JS number to `u32` by wrapping (`-1` becomes 4294967295),
//! so limits and durations arrive as `f64` and are checked here, once, with
//! an `EINVAL` that names the option and the value.

use std::time::Duration;

use natives_scan::Error;

/// A non-negative integer option.
pub fn count(name: &str, value: Option<f64>) -> Result<Option<usize>, Error> {
    value
        .map(|v| {
            if v.is_finite() && v >= 0.0 && v.fract() == 0.0 {
                Ok(v as usize)
            } else {
                Err(Error::invalid(format!(
                    "{name} must be a non-negative integer, got {v}"
                )))
            }
        })
        .transpose()
}

/// A non-negative duration option in milliseconds.
pub fn milliseconds(name: &str, value: Option<f64>) -> Result<Option<Duration>, Error> {
    value
        .map(|v| {
            if v.is_finite() && v >= 0.0 {
                Ok(Duration::from_secs_f64(v / 1000.0))
            } else {
                Err(Error::invalid(format!(
                    "{name} must be a non-negative number of milliseconds, got {v}"
                )))
            }
        })
        .transpose()
}
