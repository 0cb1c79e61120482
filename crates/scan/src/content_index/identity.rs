//! A file's identity and timestamps: what the content index trusts a
//! signature by, and what a read learns of the file it opened.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long before a read a file's last change must lie for the read to be
/// trusted by the file's identity alone. Timestamps come from a clock that
/// ticks every few milliseconds, and some filesystems keep whole or even
/// two seconds; a change closer to the read than this could be followed by
/// another one that leaves every timestamp as it was.
pub(crate) const RACY_MARGIN: Duration = Duration::from_secs(3);

/// A file's identity and timestamps: while these stay the same, so does its
/// content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Identity {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    /// Nanoseconds since the epoch (see [`nanos`]).
    pub mtime: i64,
    pub ctime: i64,
}

impl Identity {
    #[cfg(unix)]
    pub(crate) fn of(metadata: &std::fs::Metadata) -> Identity {
        use std::os::unix::fs::MetadataExt;
        Identity {
            dev: metadata.dev(),
            ino: metadata.ino(),
            size: metadata.size(),
            mtime: nanos(metadata.mtime(), metadata.mtime_nsec()),
            ctime: nanos(metadata.ctime(), metadata.ctime_nsec()),
        }
    }

    /// Off Unix there is no identity to trust: no file is ever signed.
    #[cfg(not(unix))]
    pub(crate) fn of(metadata: &std::fs::Metadata) -> Identity {
        Identity {
            dev: u64::MAX,
            ino: 0,
            size: metadata.len(),
            mtime: 0,
            ctime: 0,
        }
    }

    /// Whether its last change came at least [`RACY_MARGIN`] before `read`.
    pub(crate) fn settled_before(&self, read: SystemTime) -> bool {
        let Ok(read) = read.duration_since(UNIX_EPOCH) else {
            return false;
        };
        let limit = i64::try_from(read.as_nanos())
            .unwrap_or(i64::MAX)
            .saturating_sub(RACY_MARGIN.as_nanos() as i64);
        self.mtime < limit && self.ctime < limit
    }
}

/// A timestamp as nanoseconds since the epoch, in 8 bytes rather than 16
/// (an indexed file holds two): exact from the years 1678 to 2261, and
/// pinned to the nearest end beyond. Two times pinned alike never hide a
/// change, since every write also sets the change time to the kernel's
/// present, which lies well inside.
pub(crate) fn nanos(seconds: i64, nanoseconds: i64) -> i64 {
    seconds
        .saturating_mul(1_000_000_000)
        .saturating_add(nanoseconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_changes_are_not_settled() {
        let now = SystemTime::now();
        let since = |ago: Duration| {
            let at = (now - ago).duration_since(UNIX_EPOCH).unwrap().as_nanos() as i64;
            Identity {
                dev: 0,
                ino: 0,
                size: 0,
                mtime: at,
                ctime: at,
            }
        };
        assert!(since(RACY_MARGIN * 2).settled_before(now));
        assert!(!since(RACY_MARGIN / 2).settled_before(now));
        assert!(!since(Duration::ZERO).settled_before(now));
    }

    /// Times are exact in the range files have, and pinned beyond it.
    #[test]
    fn times_are_exact_in_range_and_pinned_beyond() {
        let table = [
            ((0, 0), 0),
            ((1_700_000_000, 123_456_789), 1_700_000_000_123_456_789),
            ((-1, 999_999_999), -1),
            ((10_000_000_000, 0), i64::MAX),
            ((-10_000_000_000, 0), i64::MIN),
        ];
        for ((seconds, nanoseconds), expected) in table {
            assert_eq!(
                nanos(seconds, nanoseconds),
                expected,
                "{seconds}.{nanoseconds}"
            );
        }
    }
}
