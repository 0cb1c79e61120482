//! What proves a directory, or a rule file, unchanged since a listing.
//!
//! A directory's entries change only with its change time (`ctime`: the
//! kernel sets it on every add, remove and rename inside, and no program
//! can set it back, unlike `mtime`); a directory put in its place has
//! another inode, a filesystem mounted on it another device. So an equal
//! (device, inode, ctime, mtime, size, type) proves a directory holds the
//! names it held, and a rule file the rules it held, with one exception the
//! kernel's clock makes: a change in the same clock tick as the last one
//! keeps the ctime. An identity whose ctime is not comfortably older than
//! the listing it vouches for ([`RACY_SLACK`]) proves nothing (git calls
//! such index entries racily clean).

use std::{fs::Metadata, os::unix::fs::MetadataExt, path::Path};

/// How much older than the start of a listing a ctime must be to vouch for
/// it. The kernel stamps changes from a coarse clock, at most a tick (10 ms
/// at the slowest common `HZ`) behind the time the listing read; some
/// filesystems keep coarser times (FAT: 2 s), so a second change in the
/// same unit keeps the time; a filesystem served by another machine stamps
/// from that machine's clock. Two seconds covers these, and costs only a
/// second look at the directories changed in the two seconds before a
/// walk.
#[cfg(not(test))]
pub(super) const RACY_SLACK_NS: i64 = 2_000_000_000;
/// The same rule with a shorter wait, so tests can wait it out.
#[cfg(test)]
pub(super) const RACY_SLACK_NS: i64 = 50_000_000;

/// A file's identity as `lstat` gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Identity {
    dev: u64,
    ino: u64,
    ctime_ns: i64,
    mtime_ns: i64,
    size: u64,
    /// The `S_IFMT` bits of the mode.
    kind: u32,
}

impl Identity {
    /// The bytes of one identity in a record.
    pub const BYTES: usize = 44;

    /// What a record keeps for a directory gone by the time it was
    /// written: no object has this identity, so it never vouches.
    pub const MISSING: Identity = Identity {
        dev: 0,
        ino: 0,
        ctime_ns: 0,
        mtime_ns: 0,
        size: 0,
        kind: 0,
    };

    /// The identity of `path` (links not followed), `None` when nothing is
    /// there or it cannot be read.
    pub fn of(path: &Path) -> Option<Identity> {
        std::fs::symlink_metadata(path)
            .ok()
            .map(|meta| Identity::from_metadata(&meta))
    }

    fn from_metadata(meta: &Metadata) -> Identity {
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            ctime_ns: nanos(meta.ctime(), meta.ctime_nsec()),
            mtime_ns: nanos(meta.mtime(), meta.mtime_nsec()),
            size: meta.size(),
            kind: meta.mode() & libc::S_IFMT,
        }
    }

    /// Whether this is a directory's identity.
    pub fn is_dir(&self) -> bool {
        self.kind == libc::S_IFDIR
    }

    /// Whether `now` is still the same object as this identity, recorded
    /// for a listing begun at `taken_at_ns`, and this one is old enough to
    /// prove it unchanged since (see [`RACY_SLACK_NS`]).
    pub fn vouches(&self, now: Option<&Identity>, taken_at_ns: i64) -> bool {
        now == Some(self) && !self.is_racy(taken_at_ns)
    }

    /// Whether this identity changed too close to the start of a listing
    /// begun at `taken_at_ns` (or after it) to tell whether the listing saw
    /// the change.
    pub fn is_racy(&self, taken_at_ns: i64) -> bool {
        self.ctime_ns >= taken_at_ns.saturating_sub(RACY_SLACK_NS)
    }

    /// Whether `now` is the same object (device and inode), changed or not.
    pub fn same_object(&self, now: &Identity) -> bool {
        (self.dev, self.ino, self.kind) == (now.dev, now.ino, now.kind)
    }

    /// Append this identity's [`Identity::BYTES`] bytes.
    pub fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.dev.to_le_bytes());
        out.extend_from_slice(&self.ino.to_le_bytes());
        out.extend_from_slice(&self.ctime_ns.to_le_bytes());
        out.extend_from_slice(&self.mtime_ns.to_le_bytes());
        out.extend_from_slice(&self.size.to_le_bytes());
        out.extend_from_slice(&self.kind.to_le_bytes());
    }

    /// The identity [`Identity::put`] wrote to `bytes` (exactly
    /// [`Identity::BYTES`] long).
    pub fn take(bytes: &[u8]) -> Option<Identity> {
        let u64_at = |at: usize| Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?));
        Some(Identity {
            dev: u64_at(0)?,
            ino: u64_at(8)?,
            ctime_ns: u64_at(16)? as i64,
            mtime_ns: u64_at(24)? as i64,
            size: u64_at(32)?,
            kind: u32::from_le_bytes(bytes.get(40..44)?.try_into().ok()?),
        })
        .filter(|_| bytes.len() == Identity::BYTES)
    }
}

fn nanos(seconds: i64, nanos: i64) -> i64 {
    seconds.saturating_mul(1_000_000_000).saturating_add(nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_identity_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let identity = Identity::of(dir.path()).unwrap();
        let mut bytes = Vec::new();
        identity.put(&mut bytes);
        assert_eq!(bytes.len(), Identity::BYTES);
        assert_eq!(Identity::take(&bytes), Some(identity));
        assert_eq!(Identity::take(&bytes[1..]), None);
        assert!(identity.is_dir());
    }

    /// Table: (ctime relative to the listing's start in ms, same object
    /// now, vouches).
    #[test]
    fn only_an_equal_identity_older_than_the_slack_vouches() {
        let dir = tempfile::tempdir().unwrap();
        let now = Identity::of(dir.path()).unwrap();
        let slack_ms = RACY_SLACK_NS / 1_000_000;
        let table = [
            (-slack_ms - 1, true, true),
            (-slack_ms, true, false),
            (-1, true, false),
            (5, true, false),
            (-slack_ms - 1, false, false),
        ];
        for (offset_ms, same, vouches) in table {
            let taken_at_ns = now.ctime_ns - offset_ms * 1_000_000;
            let seen = match same {
                true => now,
                false => Identity {
                    ino: now.ino + 1,
                    ..now
                },
            };
            assert_eq!(
                seen.vouches(Some(&now), taken_at_ns),
                vouches,
                "{offset_ms} ms, same: {same}"
            );
        }
        assert!(!now.vouches(None, i64::MAX));
    }
}
