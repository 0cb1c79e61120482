//! Where the Claude CLI keeps a working directory's memory, computed the way
//! the CLI computes it, so a claim names the folder the CLI will really use.
//!
//! The CLI keys memory by the whole git repository, not by the working
//! directory: `<config>/projects/<folder name of the repository root>/memory`.
//! Every subdirectory and every linked worktree of a repository therefore
//! shares one memory folder, which is why the claims rules treat them as
//! shared. The repository root is found by reading files only (no `git`
//! process): the nearest `.git` upwards; a `.git` file (`gitdir: ...`) is
//! followed through `commondir` to the main checkout, but only when the
//! worktree's back-pointer leads back to where we started. Anything malformed
//! keeps the root where the `.git` file is, as the CLI does.
//!
//! Every file probe is preceded by a deadline check, so a hung filesystem
//! ends in `ETIMEDOUT` rather than an unbounded wait, and no probe opens
//! anything but a regular file: a FIFO where a `.git` file should be is
//! `EFTYPE` at once, never a read that waits for a writer.

use std::{
    fs, io,
    path::{Path, PathBuf},
};

use natives_core::{CancelToken, Error, ErrorKind, Result};

use natives_system::{durable, paths::dir_id};

/// The longest folder name the CLI keeps whole; longer names are cut here
/// and made unique again with a hash of the full path.
pub const MAX_FOLDER_NAME: usize = 200;

/// The largest git pointer file read (`.git`, `commondir`, `gitdir`: one
/// path each).
const GIT_FILE_LIMIT: u64 = 64 << 10;

/// The CLI's folder name for `path`: every UTF-16 code unit that is not an
/// ASCII letter or digit becomes `-`; a name longer than
/// [`MAX_FOLDER_NAME`] keeps its first 200 characters, then `-` and the
/// base-36 magnitude of the Java-style hash of the whole original path.
pub fn folder_name(path: &str) -> String {
    let units: Vec<u16> = path.encode_utf16().collect();
    let name: String = units
        .iter()
        .map(|&unit| match u8::try_from(unit) {
            Ok(byte) if byte.is_ascii_alphanumeric() => char::from(byte),
            _ => '-',
        })
        .collect();
    if name.len() <= MAX_FOLDER_NAME {
        return name;
    }
    let magnitude = i64::from(java_string_hash(&units)).unsigned_abs();
    format!("{}-{}", &name[..MAX_FOLDER_NAME], base36(magnitude))
}

/// Java's `String.hashCode` over UTF-16 units: `h = 31 * h + unit`, wrapping
/// at 32 bits.
fn java_string_hash(units: &[u16]) -> i32 {
    units.iter().fold(0i32, |hash, &unit| {
        hash.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

/// `value` in base 36 with lowercase digits, as JavaScript's `toString(36)`.
fn base36(mut value: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut digits = Vec::new();
    loop {
        digits.push(DIGITS[(value % 36) as usize]);
        value /= 36;
        if value == 0 {
            break;
        }
    }
    digits.reverse();
    String::from_utf8(digits).expect("base-36 digits are ASCII")
}

/// The directory the CLI keys `cwd`'s memory by: the root of the repository
/// `cwd` is in (the main checkout for a linked worktree, the common git
/// directory for a worktree of a bare repository), or `cwd` itself outside
/// any repository. Canonical, like [`dir_id`].
pub fn memory_project_root(cwd: &Path, deadline: &CancelToken) -> Result<PathBuf> {
    let start = dir_id(cwd)?;
    for dir in start.ancestors() {
        let dot_git = dir.join(".git");
        deadline.check()?;
        let metadata = match fs::metadata(&dot_git) {
            Ok(metadata) => metadata,
            Err(err) if absent(&err) => continue,
            Err(err) => return Err(Error::io(&dot_git, err)),
        };
        if metadata.is_dir() {
            return Ok(dir.to_owned());
        }
        let root = linked_checkout_root(dir, &dot_git, deadline)?;
        return Ok(root.unwrap_or_else(|| dir.to_owned()));
    }
    Ok(start)
}

/// The repository a linked worktree at `dir` belongs to, from its `.git`
/// file; `None` when any step is missing or does not point back.
fn linked_checkout_root(
    dir: &Path,
    dot_git: &Path,
    deadline: &CancelToken,
) -> Result<Option<PathBuf>> {
    let Some(pointer) = read_probe(dot_git, deadline)? else {
        return Ok(None);
    };
    let Some(git_dir) = pointer.trim().strip_prefix("gitdir:").map(str::trim) else {
        return Ok(None);
    };
    let Ok(git_dir) = dir.join(git_dir).canonicalize() else {
        return Ok(None);
    };
    let Some(common) = read_probe(&git_dir.join("commondir"), deadline)? else {
        return Ok(None);
    };
    let Ok(common_dir) = git_dir.join(common.trim()).canonicalize() else {
        return Ok(None);
    };
    if git_dir.parent() != Some(common_dir.join("worktrees").as_path()) {
        return Ok(None);
    }
    let Some(back) = read_probe(&git_dir.join("gitdir"), deadline)? else {
        return Ok(None);
    };
    if dir_id(&git_dir.join(back.trim()))? != dot_git {
        return Ok(None);
    }
    Ok(Some(match common_dir.file_name() {
        Some(name) if name == ".git" => common_dir.parent().unwrap_or(&common_dir).to_owned(),
        _ => common_dir,
    }))
}

/// The text of a small git file, or `None` if it cannot be read as text
/// (a missing or malformed file is not an error here: it keeps the root).
/// Read as every record is ([`durable::read_bounded`]): a FIFO, a device or
/// an oversized file in its place is an error naming it (`EFTYPE`,
/// `EFBIG`), never opened to block or read without end.
fn read_probe(path: &Path, deadline: &CancelToken) -> Result<Option<String>> {
    deadline.check()?;
    let bytes = match durable::read_bounded(path, GIT_FILE_LIMIT) {
        Ok(bytes) => bytes,
        Err(err) if matches!(err.kind(), ErrorKind::NotARegularFile | ErrorKind::TooLarge) => {
            return Err(err);
        }
        Err(_) => None,
    };
    deadline.check()?;
    Ok(bytes.and_then(|bytes| String::from_utf8(bytes).ok()))
}

/// Whether the repository whose root is `root` has linked worktrees: a
/// non-empty `.git/worktrees/` (or `worktrees/` of a bare repository). Stale
/// entries count: until pruned, git still considers them worktrees.
pub fn has_linked_worktrees(root: &Path, deadline: &CancelToken) -> Result<bool> {
    deadline.check()?;
    let dot_git = root.join(".git");
    let worktrees = if dot_git.is_dir() {
        dot_git.join("worktrees")
    } else if root.join("HEAD").is_file() && root.join("objects").is_dir() {
        root.join("worktrees")
    } else {
        return Ok(false);
    };
    deadline.check()?;
    match fs::read_dir(&worktrees) {
        Ok(mut entries) => Ok(entries.next().is_some()),
        Err(err) if absent(&err) => Ok(false),
        Err(err) => Err(Error::io(&worktrees, err)),
    }
}

/// The memory folder the CLI with configuration directory `config_dir` uses
/// for an agent working in `cwd`.
pub fn memory_dir(config_dir: &Path, cwd: &Path, deadline: &CancelToken) -> Result<PathBuf> {
    let root = memory_project_root(cwd, deadline)?;
    let name = folder_name(&root.to_string_lossy());
    Ok(config_dir.join("projects").join(name).join("memory"))
}

fn absent(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

#[cfg(test)]
mod tests;
