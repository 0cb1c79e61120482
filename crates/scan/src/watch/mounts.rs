//! The mount table: what filesystem events cannot show.
//!
//! Watches are per directory inode, so a filesystem mounted below a watched
//! root when the scan was walked is covered like any other directory: its
//! directories are watched, and a change made through another path to them
//! (the source of a bind mount) is reported all the same. But mounting or
//! unmounting replaces what a path holds without any event: a bind mount
//! made below a watched root after its walk would stay missing until the
//! TTL. So each watched scan remembers the mount points that decide what its
//! root holds (at, below or above it) when it was walked, and an answer
//! compares them with the table now: when they differ, the scan falls back
//! to the TTL ([`super::Fallback::Mounts`]).
//!
//! The kernel marks `/proc/self/mountinfo` with a priority event when the
//! table changes, so an answer re-reads it only after a change; an
//! unchanged table costs one `poll`. Where there is no such file (other
//! systems), the table is empty and never changes.

use std::{
    fs::File,
    io::{Read, Seek},
    path::{Path, PathBuf},
};

/// Where Linux lists the process's mounts.
const MOUNTINFO: &str = "/proc/self/mountinfo";

/// The mount points last read, and a count of the reads that found a change.
pub(super) struct Mounts {
    file: Option<File>,
    points: Vec<PathBuf>,
    generation: u64,
}

impl Mounts {
    /// The table as it is now.
    pub(super) fn open() -> Mounts {
        let mut mounts = Mounts {
            file: File::open(MOUNTINFO).ok(),
            points: Vec::new(),
            generation: 0,
        };
        mounts.reread();
        mounts
    }

    /// Re-read the table if it changed since it was last read; returns its
    /// generation (it grows with each change seen).
    pub(super) fn refresh(&mut self) -> u64 {
        if self.changed() {
            self.reread();
            self.generation += 1;
        }
        self.generation
    }

    /// The mount points that decide what `root` holds: those at or below
    /// it, and those above it (a mount over an ancestor replaces it too), in
    /// table order.
    pub(super) fn deciding(&self, root: &Path) -> Vec<PathBuf> {
        self.points
            .iter()
            .filter(|point| point.starts_with(root) || root.starts_with(point))
            .cloned()
            .collect()
    }

    /// Whether the kernel marked the table changed since the last read.
    #[cfg(target_os = "linux")]
    fn changed(&self) -> bool {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        use std::os::fd::AsFd;
        let Some(file) = &self.file else {
            return false;
        };
        let mut fds = [PollFd::new(file.as_fd(), PollFlags::POLLPRI)];
        poll(&mut fds, PollTimeout::ZERO).is_ok_and(|ready| ready > 0)
    }

    #[cfg(not(target_os = "linux"))]
    fn changed(&self) -> bool {
        false
    }

    /// Read the table from its start (which also clears the kernel's mark).
    fn reread(&mut self) {
        let Some(file) = &mut self.file else {
            return;
        };
        let mut text = String::new();
        if file.rewind().is_ok() && file.read_to_string(&mut text).is_ok() {
            self.points = mount_points(&text);
        }
    }
}

/// The mount points `mountinfo` lists (its fifth field), unescaped.
fn mount_points(mountinfo: &str) -> Vec<PathBuf> {
    mountinfo
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|point| PathBuf::from(unescape(point)))
        .collect()
}

/// A `mountinfo` field with its octal escapes (`\040` for a space, `\011`,
/// `\012`, `\134`) turned back into the bytes they stand for.
fn unescape(field: &str) -> std::ffi::OsString {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let octal = bytes.get(at + 1..at + 4).and_then(|digits| {
            let text = std::str::from_utf8(digits).ok()?;
            u8::from_str_radix(text, 8).ok()
        });
        match (bytes[at], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                at += 4;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    crate::entries::bytes_to_path(&out)
        .into_owned()
        .into_os_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points_of(paths: &[&str]) -> Vec<PathBuf> {
        paths.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn mount_points_are_the_fifth_field_unescaped() {
        let table = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n\
                     40 22 0:35 / /tmp rw shared:2 - tmpfs tmpfs rw\n\
                     41 40 8:1 /src /tmp/a\\040b/mnt rw - ext4 /dev/sda1 rw\n";
        let points = mount_points(table);
        assert_eq!(
            points,
            [
                PathBuf::from("/"),
                PathBuf::from("/tmp"),
                PathBuf::from("/tmp/a b/mnt")
            ]
        );
        let mounts = Mounts {
            file: None,
            points,
            generation: 0,
        };
        assert_eq!(
            mounts.deciding(Path::new("/tmp/a b")),
            points_of(&["/", "/tmp", "/tmp/a b/mnt"])
        );
        assert_eq!(
            mounts.deciding(Path::new("/tmp/c")),
            points_of(&["/", "/tmp"])
        );
        assert_eq!(mounts.deciding(Path::new("/tmp/a b/mnt/x")).len(), 3);
    }
}
