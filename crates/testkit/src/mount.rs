//! Filesystems that share extents, made for a test: an image file under
//! the test's folder, formatted and loop-mounted there (as root only), so
//! reflink and block-sharing code runs against the real kernel code paths.

use std::path::{Path, PathBuf};

/// The filesystems that clone files, each with the command that makes one.
/// In the order a test tries them.
pub const REFLINKING: [(&str, &str); 2] = [("btrfs", "mkfs.btrfs"), ("xfs", "mkfs.xfs")];

/// A filesystem that clones files, made in an image file under the test's
/// folder and loop-mounted there; unmounted when dropped.
pub struct LoopMount {
    /// Where it is mounted.
    pub dir: PathBuf,
    /// Which filesystem (`btrfs`, `xfs`).
    pub kind: &'static str,
}

impl LoopMount {
    /// One of `kinds` (each with its `mkfs`), the first that can be made;
    /// `None` (the test skipped, saying why, as `what` is missing) when
    /// this process cannot make one (not root, no mkfs, no loop devices).
    pub fn or_skip(root: &Path, kinds: &[(&'static str, &str)], what: &str) -> Option<LoopMount> {
        LoopMount::of(root, kinds)
            .map_err(|why| println!("skipped: no {what} to test on: {why}"))
            .ok()
    }

    /// One of `kinds`, the first that can be made, or why none could.
    pub fn of(root: &Path, kinds: &[(&'static str, &str)]) -> Result<LoopMount, String> {
        if !nix::unistd::geteuid().is_root() {
            return Err("not running as root (mounting an image needs it)".to_owned());
        }
        let image = root.join("reflink.img");
        let dir = root.join("reflink");
        std::fs::create_dir(&dir).map_err(|e| e.to_string())?;
        let file = std::fs::File::create(&image).map_err(|e| e.to_string())?;
        file.set_len(1 << 30).map_err(|e| e.to_string())?;
        let mut why = Vec::new();
        for &(kind, mkfs) in kinds {
            let made = std::process::Command::new(mkfs)
                .arg("-q")
                .arg(&image)
                .output();
            match made {
                Ok(out) if out.status.success() => {}
                Ok(out) => {
                    why.push(format!(
                        "{mkfs}: {}",
                        String::from_utf8_lossy(&out.stderr).trim()
                    ));
                    continue;
                }
                Err(err) => {
                    why.push(format!("{mkfs}: {err} (install btrfs-progs or xfsprogs)"));
                    continue;
                }
            }
            let mounted = std::process::Command::new("mount")
                .args(["-o", "loop"])
                .arg(&image)
                .arg(&dir)
                .output();
            match mounted {
                Ok(out) if out.status.success() => return Ok(LoopMount { dir, kind }),
                Ok(out) => why.push(format!(
                    "mount: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                )),
                Err(err) => why.push(format!("mount: {err}")),
            }
        }
        Err(why.join("; "))
    }

    /// Bytes in use on the mounted filesystem, flushed first.
    pub fn used(&self) -> u64 {
        let handle = std::fs::File::open(&self.dir).unwrap();
        nix::unistd::syncfs(&handle).unwrap();
        let stat = nix::sys::statvfs::statvfs(&self.dir).unwrap();
        (stat.blocks() - stat.blocks_free()) * stat.fragment_size()
    }
}

impl Drop for LoopMount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.dir).status();
    }
}
