//! Paths copied from a listing that lost bytes.
//!
//! A file whose name is not UTF-8 (`caf\xe9.txt`, from a Latin-1 system)
//! appears as `caf\u{fffd}.txt` in any listing that decodes names lossily:
//! a host's own `readdir`, another tool, a log. That text names no file. A
//! read of it would only say "no such file", and a write would create a
//! second file beside the real one. So where a path names nothing and the
//! first missing name on the way is such a lossy copy of a name its
//! directory holds ([`natives_core::names::is_lossy_copy`]), the answer is
//! `LossyName` (`EILSEQ`), naming the path that was meant, quoted as the
//! tools show it, so it can be given back.

use std::{
    ffi::OsStr,
    os::unix::ffi::{OsStrExt, OsStringExt},
    path::{Component, Path, PathBuf},
};

use natives_core::{
    Error, ErrorKind, Result,
    names::{is_lossy_copy, quoted},
    resolve::Location,
};
use nix::{dir::Dir, fcntl::OFlag, sys::stat::Mode};

/// What a caller was doing with the path, for the refusal's wording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Doing {
    /// Reading (or changing) a file that should exist.
    Reading,
    /// Creating a file or directory the path names.
    Creating,
}

/// `Ok` unless `given`, which resolved to the absent `location`, is a
/// lossy copy of a path that exists (see the module docs).
pub(crate) fn refuse_lossy_copy(location: &Location, given: &Path, doing: Doing) -> Result<()> {
    let missing = location.first_missing();
    if !missing
        .as_bytes()
        .windows(3)
        .any(|w| w == "\u{fffd}".as_bytes())
    {
        return Ok(());
    }
    let Some(real) = original_of(location, missing) else {
        return Ok(());
    };
    let meant = quoted(replaced(given, missing, &real).as_os_str().as_bytes());
    let why = "a name in it holds U+FFFD where the name on disk has bytes that are not UTF-8";
    let message = match doing {
        Doing::Reading => format!(
            "{}: no such file, but {meant} is there ({why}); give the path as {meant}, C-quoted as the tools show it",
            given.display()
        ),
        Doing::Creating => format!(
            "{}: not created beside {meant} ({why}); to reach that file give the path as {meant}, C-quoted as the tools show it; a new name holds no U+FFFD for a byte",
            given.display()
        ),
    };
    Err(Error::new(ErrorKind::LossyName, message))
}

/// The name in the deepest existing directory of `location` that `lossy`
/// is a lossy copy of; `None` when there is none or it cannot be listed.
fn original_of(location: &Location, lossy: &OsStr) -> Option<Vec<u8>> {
    let (dir, _) = location.existing_dir();
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let mut listing = Dir::openat(dir, ".", flags, Mode::empty()).ok()?;
    listing
        .iter()
        .filter_map(|entry| entry.ok())
        .find_map(|entry| {
            let name = entry.file_name().to_bytes();
            is_lossy_copy(lossy.as_bytes(), name).then(|| name.to_vec())
        })
}

/// `given` with its first component named `lossy` replaced by `real`.
fn replaced(given: &Path, lossy: &OsStr, real: &[u8]) -> PathBuf {
    let mut swapped = false;
    given
        .components()
        .map(|component| match component {
            Component::Normal(name) if !swapped && name == lossy => {
                swapped = true;
                PathBuf::from(std::ffi::OsString::from_vec(real.to_vec()))
            }
            other => PathBuf::from(other.as_os_str()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use natives_core::resolve::{Last, Scope};
    use std::ffi::OsString;

    fn path(bytes: &[u8]) -> PathBuf {
        PathBuf::from(OsString::from_vec(bytes.to_vec()))
    }

    /// (path given, the path it is taken for, if any).
    #[test]
    fn a_lossy_copy_of_a_name_on_disk_is_refused_naming_the_real_one() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(path(
            &[dir.path().as_os_str().as_bytes(), b"/d\xe8p"].concat(),
        ))
        .unwrap();
        std::fs::write(
            path(&[dir.path().as_os_str().as_bytes(), b"/caf\xe9.txt"].concat()),
            "x",
        )
        .unwrap();
        let scope = Scope::confined(dir.path()).unwrap();
        let table: &[(&str, Option<&str>)] = &[
            ("caf\u{fffd}.txt", Some(r#""caf\351.txt""#)),
            ("./caf\u{fffd}.txt", Some(r#""./caf\351.txt""#)),
            ("d\u{fffd}p/new.txt", Some(r#""d\350p/new.txt""#)),
            // Nothing on disk it could be a copy of.
            ("other\u{fffd}.txt", None),
            ("caf\u{fffd}\u{fffd}.txt", None),
            ("missing.txt", None),
        ];
        for &(given, meant) in table {
            let location = scope.locate(Path::new(given), Last::Follow).unwrap();
            for doing in [Doing::Reading, Doing::Creating] {
                let answer = refuse_lossy_copy(&location, Path::new(given), doing);
                match meant {
                    None => assert!(answer.is_ok(), "{given}"),
                    Some(meant) => {
                        let err = answer.unwrap_err();
                        assert_eq!(err.code(), "EILSEQ", "{given}");
                        assert!(err.message().starts_with(given), "{}", err.message());
                        assert!(err.message().contains(meant), "{}", err.message());
                    }
                }
            }
        }
    }
}
