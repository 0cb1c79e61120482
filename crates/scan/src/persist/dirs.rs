//! The directories of a scan, checked in parallel: writing a record and
//! proving one current both look at every directory a scan lists (an
//! `lstat` or more each), most of what either costs.

use std::path::Path;

use crate::{
    cancel::CancelToken,
    entries::{Entries, FileType, bytes_to_path},
    error::Result,
    walk::{self, ScanKey},
};

/// How many directories are checked between two looks at the caller's
/// cancellation.
const CANCEL_POLL_INTERVAL: usize = 1024;

/// A listed directory: its index (`None`: the root), relative and absolute
/// paths.
#[derive(Clone, Copy)]
pub(super) struct Dir<'a> {
    pub index: Option<usize>,
    pub relative: &'a [u8],
    pub absolute: &'a Path,
}

/// `each` of the root and every directory `entries` lists (`key`'s scan),
/// with its position among them, on a thread per core, each taking a run
/// of them; what it returns, in list order. A scan's directories are
/// checked by one `lstat` or more each, most of what writing or restoring
/// a record costs. Polls `token` between directories.
pub(super) fn each_dir<T: Send>(
    key: &ScanKey,
    entries: &Entries,
    token: &CancelToken,
    each: impl Fn(usize, Dir<'_>) -> Option<T> + Sync,
) -> Result<Vec<T>> {
    let dirs: Vec<Option<usize>> = std::iter::once(None)
        .chain(
            (0..entries.len())
                .filter(|&i| entries.get(i).file_type == FileType::Dir)
                .map(Some),
        )
        .collect();
    let run = dirs.len().div_ceil(walk::walker_threads()).max(1);
    let each = &each;
    let part = |first: usize, part: &[Option<usize>]| -> Result<Vec<T>> {
        let mut out = Vec::new();
        for (step, &index) in part.iter().enumerate() {
            if step % CANCEL_POLL_INTERVAL == 0 {
                token.check()?;
            }
            let relative = index.map_or(&[][..], |i| entries.get(i).path);
            let absolute = match index {
                Some(_) => key.root.join(bytes_to_path(relative)),
                None => key.root.clone(),
            };
            let dir = Dir {
                index,
                relative,
                absolute: &absolute,
            };
            out.extend(each(first + step, dir));
        }
        Ok(out)
    };
    std::thread::scope(|scope| {
        let parts: Vec<_> = dirs
            .chunks(run)
            .enumerate()
            .map(|(at, dirs)| scope.spawn(move || part(at * run, dirs)))
            .collect();
        let mut out = Vec::new();
        for part in parts {
            let part = part
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            out.extend(part?);
        }
        Ok(out)
    })
}
