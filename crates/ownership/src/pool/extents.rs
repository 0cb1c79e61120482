//! Where a file's bytes lie on disk, so that blocks members share (a
//! reflink seed) are counted once.
//!
//! The kernel's extent map (`FS_IOC_FIEMAP`) gives each extent of a file
//! its physical address and length, and marks the extents shared with other
//! files. A pool's real disk use is then its unshared extents plus the union
//! of its shared ones (per device). A filesystem without an extent map
//! (tmpfs, some network filesystems) is counted by its allocated blocks, as
//! are extents whose place is not known yet (data still in memory) or that
//! live inside metadata (small files btrfs stores inline).

use std::{collections::HashMap, fs::File, io, os::fd::AsRawFd};

/// `_IOWR('f', 11, struct fiemap)`.
const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
/// The last extent of the file.
const EXTENT_LAST: u32 = 0x1;
/// Its place is not known (`UNKNOWN`, `DELALLOC`) or it is in metadata
/// (`DATA_INLINE`, `DATA_TAIL`, `NOT_ALIGNED`): not a block range of its own.
const EXTENT_NO_PLACE: u32 = 0x2 | 0x4 | 0x100 | 0x200 | 0x400;
/// Shared with another file.
const EXTENT_SHARED: u32 = 0x2000;
/// Extents asked for per call.
const BATCH: usize = 64;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct FiemapExtent {
    logical: u64,
    physical: u64,
    length: u64,
    reserved64: [u64; 2],
    flags: u32,
    reserved: [u32; 3],
}

#[repr(C)]
struct Fiemap {
    start: u64,
    length: u64,
    flags: u32,
    mapped_extents: u32,
    extent_count: u32,
    reserved: u32,
    extents: [FiemapExtent; BATCH],
}

/// Blocks of one or more trees, each shared range counted once.
#[derive(Clone, Debug, Default)]
pub(super) struct Footprint {
    /// Bytes no other file shares (and those with no place of their own).
    unique: u64,
    /// Shared ranges, per device: (physical start, length).
    shared: HashMap<u64, Vec<(u64, u64)>>,
}

impl Footprint {
    /// Count `bytes` that belong to one file alone.
    pub fn add_unique(&mut self, bytes: u64) {
        self.unique += bytes;
    }

    /// The bytes of every footprint in `parts` together, shared ranges once.
    pub fn combined<'a>(parts: impl IntoIterator<Item = &'a Footprint>) -> u64 {
        let mut unique = 0;
        let mut ranges: HashMap<u64, Vec<(u64, u64)>> = HashMap::new();
        for part in parts {
            unique += part.unique;
            for (dev, list) in &part.shared {
                ranges.entry(*dev).or_default().extend(list);
            }
        }
        unique + ranges.into_values().map(union_length).sum::<u64>()
    }

    /// Count the file `file` on device `dev` by its extent map; the bytes
    /// in shared extents, or `None` when the filesystem keeps no extent map
    /// (the caller counts its blocks instead).
    pub fn add_file(&mut self, file: &File, dev: u64) -> Option<u64> {
        let extents = map(file).ok()?;
        let mut shared = 0;
        for extent in extents {
            if extent.flags & EXTENT_NO_PLACE != 0 {
                self.unique += extent.length;
            } else if extent.flags & EXTENT_SHARED != 0 {
                shared += extent.length;
                let ranges = self.shared.entry(dev).or_default();
                ranges.push((extent.physical, extent.length));
            } else {
                self.unique += extent.length;
            }
        }
        Some(shared)
    }
}

/// Whether `a` and `b` lie on one same block at one same offset: one is a
/// reflink of the other, or some of their blocks were shared since; `false`
/// when either has no extent map.
pub(super) fn share_a_block(a: &File, b: &File) -> bool {
    let (Ok(a), Ok(b)) = (map(a), map(b)) else {
        return false;
    };
    let placed = |e: &&FiemapExtent| e.flags & EXTENT_NO_PLACE == 0;
    let b: Vec<&FiemapExtent> = b.iter().filter(placed).collect();
    a.iter()
        .filter(placed)
        .any(|x| b.iter().any(|y| same_place(x, y)))
}

/// Whether extents `x` and `y` overlap at the same offsets on the same
/// physical blocks.
fn same_place(x: &FiemapExtent, y: &FiemapExtent) -> bool {
    let start = x.logical.max(y.logical);
    let end = (x.logical + x.length).min(y.logical + y.length);
    start < end && x.physical.wrapping_sub(x.logical) == y.physical.wrapping_sub(y.logical)
}

/// The total length of `ranges`, overlaps counted once.
fn union_length(mut ranges: Vec<(u64, u64)>) -> u64 {
    ranges.sort_unstable();
    let (mut total, mut reached) = (0u64, 0u64);
    for (start, length) in ranges {
        let end = start.saturating_add(length);
        if end > reached {
            total += end - start.max(reached);
            reached = end;
        }
    }
    total
}

/// Every extent of `file`, in order.
fn map(file: &File) -> io::Result<Vec<FiemapExtent>> {
    let mut found = Vec::new();
    let mut start = 0u64;
    loop {
        let mut request = Fiemap {
            start,
            length: u64::MAX - start,
            flags: 0,
            mapped_extents: 0,
            extent_count: BATCH as u32,
            reserved: 0,
            extents: [FiemapExtent::default(); BATCH],
        };
        // SAFETY: `request` is a `struct fiemap` followed by room for
        // `extent_count` extents, as FS_IOC_FIEMAP requires, and lives
        // through the call; the descriptor is open.
        let rc = unsafe { libc::ioctl(file.as_raw_fd(), FS_IOC_FIEMAP, &mut request) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        let mapped = &request.extents[..request.mapped_extents as usize];
        let Some(last) = mapped.last() else {
            return Ok(found);
        };
        let done = last.flags & EXTENT_LAST != 0;
        start = last.logical.saturating_add(last.length);
        found.extend_from_slice(mapped);
        if done {
            return Ok(found);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unions_count_overlaps_once() {
        let table: [(&[(u64, u64)], u64); 5] = [
            (&[], 0),
            (&[(0, 10)], 10),
            (&[(0, 10), (0, 10)], 10),
            (&[(0, 10), (5, 10), (30, 5)], 20),
            (&[(10, 5), (0, 100)], 100),
        ];
        for (ranges, expected) in table {
            assert_eq!(union_length(ranges.to_vec()), expected, "{ranges:?}");
        }
    }

    /// Extents as (logical, physical, length).
    #[test]
    fn extents_share_a_place_only_at_the_same_offsets_on_the_same_blocks() {
        let extent = |(logical, physical, length): (u64, u64, u64)| FiemapExtent {
            logical,
            physical,
            length,
            ..FiemapExtent::default()
        };
        let table = [
            ((0, 4096, 8192), (0, 4096, 8192), true),
            ((0, 4096, 8192), (4096, 8192, 4096), true),
            ((0, 4096, 8192), (4096, 4096, 4096), false),
            ((0, 4096, 4096), (4096, 8192, 4096), false),
            ((8192, 100, 4096), (0, 100, 4096), false),
        ];
        for (x, y, expected) in table {
            let (x, y) = (extent(x), extent(y));
            assert_eq!(same_place(&x, &y), expected, "{x:?} {y:?}");
            assert_eq!(same_place(&y, &x), expected, "{y:?} {x:?}");
        }
    }

    #[test]
    fn a_written_file_is_mapped_where_the_filesystem_maps_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![1u8; 64 * 1024]).unwrap();
        let file = File::open(&path).unwrap();
        file.sync_all().unwrap();
        let mut footprint = Footprint::default();
        match footprint.add_file(&file, 1) {
            Some(shared) => {
                assert_eq!(shared, 0);
                assert!(Footprint::combined([&footprint]) >= 64 * 1024);
            }
            None => println!("skipped: this filesystem keeps no extent map"),
        }
    }
}
