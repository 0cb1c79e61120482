//! What a linked worktree's git administration alone remembers, and so
//! loses when the worktree is removed: one rule for every way natives lets
//! a worktree go.
//!
//! `git worktree remove` deletes `.git/worktrees/<name>/`, and with it:
//!
//! - the worktree's **own refs** (`refs/worktree/*`, `refs/bisect/*`,
//!   `refs/rewritten/*`: everything under its `refs/`), names someone gave
//!   to commits, which no other ref needs to share;
//! - its **`HEAD` reflog** (`logs/HEAD`) and **`ORIG_HEAD`**: a commit made
//!   on a detached `HEAD` and left by a checkout is named there and nowhere
//!   else, and once they are gone `gc` deletes it.
//!
//! Whoever removes a worktree must keep both. A worktree with refs of its
//! own always stays (the refs themselves are the work). The commits the
//! reflog and `ORIG_HEAD` name ([`remembered`]) must outlive it: the
//! eviction pass archives every one of them in the checkout's evidence;
//! the handover, which keeps no archive, releases a worktree only when
//! something that stays (a ref, or a reflog entry of one) still names each.

use std::{fmt, fs, io, path::Path};

use natives_core::{Error, ErrorKind, Result};
use natives_system::durable;

use crate::git::{self, Dirs};

/// The largest `HEAD` reflog read: far more than an archive holds
/// ([`crate::evidence::CHECKPOINTS`] entries).
pub const REFLOG_BYTES: u64 = 4 << 20;

/// The directory of a worktree's administration that holds its own refs.
const OWN_REFS: &str = "refs";

/// Whether `name` (relative to a worktree's administration) is one of the
/// worktree's own refs, which die with it.
pub(crate) fn is_own_ref(name: &str) -> bool {
    name.strip_prefix(OWN_REFS)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// Every ref of the worktree's own in its administration `git_dir`, by
/// name (`refs/worktree/keep`), sorted. An unreadable directory is an
/// error, never "none".
pub(crate) fn own_refs(git_dir: &Path) -> Result<Vec<String>> {
    let mut found = Vec::new();
    let mut pending = vec![OWN_REFS.to_owned()];
    while let Some(rel) = pending.pop() {
        let dir = git_dir.join(&rel);
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
            Err(err) => return Err(Error::io(&dir, err)),
        };
        for entry in entries {
            let entry = entry.map_err(|err| Error::io(&dir, err))?;
            let name = format!("{rel}/{}", entry.file_name().to_string_lossy());
            match entry.file_type().map_err(|err| Error::io(&dir, err))? {
                kind if kind.is_dir() => pending.push(name),
                _ => found.push(name),
            }
        }
    }
    found.sort();
    Ok(found)
}

/// A commit the worktree's administration names, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Remembered {
    /// The commit's id.
    pub id: String,
    /// Where it is named: `HEAD@{n}` (newest first), `ORIG_HEAD`.
    pub seen_as: String,
}

/// Why what the administration remembers cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Unreadable {
    /// The repository keeps its reflogs in a reftable.
    Reftable,
    /// `logs/HEAD` is over [`REFLOG_BYTES`] (its size).
    TooLarge(u64),
    /// An entry is not in the shape git writes (where, and why).
    Malformed {
        /// `HEAD's reflog`, `ORIG_HEAD`.
        seen_as: String,
        /// What is wrong.
        why: String,
    },
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unreadable::Reftable => f.write_str(
                "the repository keeps its reflogs in a reftable, which natives cannot read entry by entry",
            ),
            Unreadable::TooLarge(size) => write!(
                f,
                "HEAD's reflog is {size} bytes, over the {REFLOG_BYTES} natives reads"
            ),
            Unreadable::Malformed { seen_as, why } => write!(f, "{seen_as}: {why}"),
        }
    }
}

/// Every commit the administration of the worktree `dirs` names that dies
/// with it: each entry of its `HEAD` reflog (newest first, the null id
/// left out), then `ORIG_HEAD`, in a repository whose ids are `id_len`
/// hex digits. A commit named twice is listed twice.
pub(crate) fn remembered(
    dirs: &Dirs,
    id_len: usize,
) -> Result<std::result::Result<Vec<Remembered>, Unreadable>> {
    if dirs.common_dir.join("reftable").exists() {
        return Ok(Err(Unreadable::Reftable));
    }
    let log_path = dirs.git_dir.join("logs/HEAD");
    let log = match durable::read_bounded(&log_path, REFLOG_BYTES) {
        Ok(log) => log.unwrap_or_default(),
        Err(err) if err.kind() == ErrorKind::TooLarge => {
            let size = fs::metadata(&log_path).map_or(0, |meta| meta.len());
            return Ok(Err(Unreadable::TooLarge(size)));
        }
        Err(err) => return Err(err),
    };
    let mut found = match reflog_tips(&log, id_len) {
        Ok(tips) => tips
            .into_iter()
            .enumerate()
            .map(|(n, id)| Remembered {
                id,
                seen_as: format!("HEAD@{{{n}}}"),
            })
            .collect::<Vec<_>>(),
        Err(err) => {
            let seen_as = "HEAD's reflog".to_owned();
            let why = err.message().to_owned();
            return Ok(Err(Unreadable::Malformed { seen_as, why }));
        }
    };
    match orig_head(dirs, id_len)? {
        Ok(Some(id)) => found.push(Remembered {
            id,
            seen_as: "ORIG_HEAD".to_owned(),
        }),
        Ok(None) => {}
        Err(unreadable) => return Ok(Err(unreadable)),
    }
    Ok(Ok(found))
}

/// The commit `ORIG_HEAD` of the worktree names, if it has one. Git writes
/// it as a bare object id; anything else cannot be read.
fn orig_head(
    dirs: &Dirs,
    id_len: usize,
) -> Result<std::result::Result<Option<String>, Unreadable>> {
    let path = dirs.git_dir.join("ORIG_HEAD");
    let Some(bytes) = durable::read_bounded(&path, ORIG_HEAD_BYTES)? else {
        return Ok(Ok(None));
    };
    let text = String::from_utf8_lossy(&bytes);
    let id = text.trim_end_matches('\n');
    if !git::is_id(id, id_len) {
        return Ok(Err(Unreadable::Malformed {
            seen_as: "ORIG_HEAD".to_owned(),
            why: format!("{id:?} is not an object id"),
        }));
    }
    Ok(Ok(Some(id.to_owned())))
}

/// More than an object id and a newline: not what git writes in
/// `ORIG_HEAD`.
const ORIG_HEAD_BYTES: u64 = 128;

/// Every id a HEAD reflog names: the new value of each entry
/// (`<old> <new> <ident> <time> <zone>\t<message>`), newest first,
/// skipping the null id. A line not in that shape is an error: an entry
/// that cannot be read cannot be archived.
pub fn reflog_tips(log: &[u8], id_len: usize) -> Result<Vec<String>> {
    let mut tips = Vec::new();
    for (number, line) in log.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let new = line
            .get(id_len + 1..2 * id_len + 1)
            .and_then(|id| std::str::from_utf8(id).ok())
            .filter(|id| {
                git::is_id(id, id_len)
                    && line[id_len] == b' '
                    && line.get(2 * id_len + 1) == Some(&b' ')
            })
            .ok_or_else(|| {
                natives_core::Error::new(
                    natives_core::ErrorKind::Io,
                    format!("HEAD's reflog: entry on line {} is malformed", number + 1),
                )
            })?;
        if new.bytes().any(|b| b != b'0') {
            tips.push(new.to_owned());
        }
    }
    tips.reverse();
    Ok(tips)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_refs_are_the_ones_under_the_administrations_refs() {
        let cases = [
            ("refs/worktree/keep", true),
            ("refs/bisect/bad", true),
            ("refs", false),
            ("refsx/a", false),
            ("logs/HEAD", false),
            ("HEAD", false),
        ];
        for (name, own) in cases {
            assert_eq!(is_own_ref(name), own, "{name}");
        }
    }
}
