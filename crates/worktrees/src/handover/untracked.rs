//! What a worktree holds that git does not track, and the little of it
//! that may go with the worktree.
//!
//! `git worktree remove` deletes ignored files and empty directories
//! without a word, and a `.gitignore` is no promise that what it matches is
//! disposable: `*.log` matches a findings log, `.env` a secret, `notes/` a
//! folder of notes, and an uncommitted `.gitignore` is anybody's wish, not
//! the project's. So ignore rules decide nothing here. The worktree is
//! walked entry by entry against `HEAD`'s tree, and every entry `HEAD`
//! does not hold (an ignored file, an empty directory, a symlink) keeps the
//! worktree, named, unless it is one of two things that say themselves
//! they can be made again:
//!
//! - inside a directory that declares itself a cache: it holds a
//!   `CACHEDIR.TAG` whose first bytes are the standard signature
//!   ([`CACHEDIR_SIGNATURE`]; cargo writes one in every `target/`). The
//!   top of the worktree cannot declare the worktree a cache;
//! - matched by a pattern the caller declared regenerable for this one
//!   handover ([`Regenerable`], gitignore syntax, such as `node_modules/`
//!   or `dist/`), and recorded with it.
//!
//! Tracked files are not judged here: the content proof compares their
//! bytes and modes with `HEAD`.
//!
//! A removal cut short is finished on the terms it was proven on: the
//! patterns the release recorded, each cache it let go (recorded as an
//! anchored pattern, [`anchored`]: a half-deleted cache may have lost its
//! tag), and the directories git had emptied when it was stopped.

use std::{
    fs,
    os::unix::ffi::OsStrExt,
    path::{Path, PathBuf},
};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use natives_core::{CancelToken, Error, Result};
use natives_system::durable;

use crate::git::{Dirs, Git};

/// The first bytes of a valid `CACHEDIR.TAG` (the Cache Directory Tagging
/// Specification).
pub const CACHEDIR_SIGNATURE: &[u8] = b"Signature: 8a477f597d28d172789f06886806bc55";

/// The file that declares its directory a cache.
pub const CACHEDIR_TAG: &str = "CACHEDIR.TAG";

/// The most of a `CACHEDIR.TAG` read: the signature and a comment (cargo's
/// tag is 150 bytes); a larger one declares nothing.
const CACHEDIR_TAG_BYTES: u64 = 64 << 10;

/// Paths a caller declares regenerable for one handover: untracked entries
/// they match (as a `.gitignore` in the worktree's top would) may go with
/// the worktree. Default: none.
#[derive(Clone, Debug, Default)]
pub struct Regenerable {
    patterns: Vec<String>,
    matcher: Option<Gitignore>,
    emptied_dirs: bool,
}

/// Equal when they let the same go: the same patterns, the same word on
/// emptied directories (the matcher is built from the patterns).
impl PartialEq for Regenerable {
    fn eq(&self, other: &Regenerable) -> bool {
        (&self.patterns, self.emptied_dirs) == (&other.patterns, other.emptied_dirs)
    }
}

impl Eq for Regenerable {}

impl Regenerable {
    /// `patterns`, each a gitignore pattern (`node_modules/`, `/dist`,
    /// `*.o`, `!keep/`). `EINVAL` naming one that is blank, a comment, holds
    /// a line break, or does not parse.
    pub fn new(patterns: Vec<String>) -> Result<Regenerable> {
        if patterns.is_empty() {
            return Ok(Regenerable::default());
        }
        let mut builder = GitignoreBuilder::new("/");
        for pattern in &patterns {
            let bad = |why: &str| {
                Error::invalid(format!(
                    "regenerable: {pattern:?} is not a gitignore pattern ({why})"
                ))
            };
            if pattern.trim().is_empty() || pattern.starts_with('#') {
                return Err(bad("blank, or a comment"));
            }
            if pattern.contains(['\n', '\r', '\0']) {
                return Err(bad("a line break or NUL in it"));
            }
            builder
                .add_line(None, pattern)
                .map_err(|err| bad(&err.to_string()))?;
        }
        let matcher = builder
            .build()
            .map_err(|err| Error::invalid(format!("regenerable: {err}")))?;
        Ok(Regenerable {
            patterns,
            matcher: Some(matcher),
            emptied_dirs: false,
        })
    }

    /// The same patterns, finishing a removal cut short: empty directories
    /// (the ones git had emptied) go too.
    pub(crate) fn finishing(mut self) -> Regenerable {
        self.emptied_dirs = true;
        self
    }

    /// The patterns, as given.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    fn matches(&self, path: &Path, is_dir: bool) -> bool {
        self.matcher
            .as_ref()
            .is_some_and(|matcher| matcher.matched(path, is_dir).is_ignore())
    }
}

/// The untracked entries of a worktree: what keeps it, and what may go.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Untracked {
    /// Entries that keep it (a directory's name ends in `/`).
    pub kept: Vec<String>,
    /// Entries that may go: caches and regenerable paths, the topmost ones
    /// (a directory's name ends in `/`).
    pub let_go: Vec<String>,
    /// Of those, the ones let go as caches, as anchored patterns.
    pub caches: Vec<String>,
}

/// Walk the worktree `dirs` against `HEAD`'s tree: every entry `HEAD`
/// does not hold, kept or let go (see the module docs).
pub(crate) fn untracked(
    git: &Git,
    dirs: &Dirs,
    regenerable: &Regenerable,
    cancel: &CancelToken,
) -> Result<Untracked> {
    let tracked = git.tracked(dirs, "HEAD^{tree}", cancel)?;
    let mut found = Untracked::default();
    let mut pending = vec![(PathBuf::new(), false)];
    while let Some((rel, in_cache)) = pending.pop() {
        cancel.check()?;
        let dir = dirs.top.join(&rel);
        let in_cache = in_cache || (!rel.as_os_str().is_empty() && declares_cache(&dir)?);
        for name in sorted_names(&dir)? {
            if rel.as_os_str().is_empty() && name == ".git" {
                continue;
            }
            let path = rel.join(&name);
            let is_dir = fs::symlink_metadata(dirs.top.join(&path))
                .map_err(|err| Error::io(&dirs.top.join(&path), err))?
                .is_dir();
            let key = path.as_os_str().as_bytes();
            if tracked.files.contains(key) {
                continue;
            }
            if is_dir && tracked.dirs.contains(key) {
                pending.push((path, in_cache));
                continue;
            }
            let full = dirs.top.join(&path);
            if found.sort_out(&path, &full, is_dir, in_cache, regenerable)? {
                pending.push((path, false));
            }
        }
    }
    found.kept.sort();
    found.let_go.sort();
    found.caches.sort();
    Ok(found)
}

impl Untracked {
    /// Record the untracked entry `path` (at `full`) as kept, let go or a
    /// cache; `true` for a directory that is none of these yet, to walk into.
    fn sort_out(
        &mut self,
        path: &Path,
        full: &Path,
        is_dir: bool,
        in_cache: bool,
        regenerable: &Regenerable,
    ) -> Result<bool> {
        let shown = shown(path, is_dir);
        if shown.contains(['\n', '\r']) {
            // No pattern can name it: it cannot be recorded as let go.
            self.kept.push(shown);
        } else if in_cache || (is_dir && declares_cache(full)?) {
            self.caches.push(anchored(&shown));
            self.let_go.push(shown);
        } else if regenerable.matches(path, is_dir) {
            self.let_go.push(shown);
        } else if !is_dir {
            self.kept.push(shown);
        } else if sorted_names(full)?.is_empty() {
            match regenerable.emptied_dirs {
                true => self.let_go.push(shown),
                false => self.kept.push(shown),
            }
        } else {
            return Ok(true);
        }
        Ok(false)
    }
}

/// Whether `dir` holds a `CACHEDIR.TAG` (a regular file, not a link)
/// starting with the standard signature.
fn declares_cache(dir: &Path) -> Result<bool> {
    let tag = dir.join(CACHEDIR_TAG);
    match fs::symlink_metadata(&tag) {
        Ok(meta) if meta.is_file() => {}
        _ => return Ok(false),
    }
    // Through the one bounded reader: a tag swapped for a FIFO since the
    // look above is refused at once, and so declares nothing.
    let read = durable::read_bounded(&tag, CACHEDIR_TAG_BYTES);
    Ok(matches!(read, Ok(Some(bytes)) if bytes.starts_with(CACHEDIR_SIGNATURE)))
}

fn sorted_names(dir: &Path) -> Result<Vec<std::ffi::OsString>> {
    let mut names = fs::read_dir(dir)
        .map_err(|err| Error::io(dir, err))?
        .map(|entry| {
            entry
                .map(|e| e.file_name())
                .map_err(|err| Error::io(dir, err))
        })
        .collect::<Result<Vec<_>>>()?;
    names.sort();
    Ok(names)
}

/// A gitignore pattern that matches exactly `shown` (relative to the top,
/// a directory's ending in `/`): anchored with `/`, the characters a
/// pattern gives a meaning to escaped.
pub(crate) fn anchored(shown: &str) -> String {
    let mut pattern = String::from("/");
    for c in shown.chars() {
        if matches!(c, '\\' | '*' | '?' | '[' | ' ') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern
}

/// A path as a refusal names it: a directory's ends in `/`.
fn shown(path: &Path, is_dir: bool) -> String {
    let text = path.to_string_lossy();
    match is_dir {
        true => format!("{text}/"),
        false => text.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_as_a_gitignore_at_the_top_would() {
        let regenerable =
            Regenerable::new(vec!["node_modules/".into(), "/dist".into(), "*.o".into()]).unwrap();
        let cases = [
            ("node_modules", true, true),
            ("node_modules", false, false),
            ("web/node_modules", true, true),
            ("dist", true, true),
            ("web/dist", true, false),
            ("a/b.o", false, true),
            ("notes", true, false),
        ];
        for (path, is_dir, expected) in cases {
            assert_eq!(
                regenerable.matches(Path::new(path), is_dir),
                expected,
                "{path} {is_dir}"
            );
        }
        assert!(!Regenerable::default().matches(Path::new("x"), false));
    }

    #[test]
    fn an_anchored_pattern_matches_its_path_alone() {
        let paths = [
            ("target/", true),
            ("a b/c*d?[e]\\f", false),
            ("!x", false),
            ("#y/", true),
            ("trailing /", true),
        ];
        let patterns = paths.iter().map(|(p, _)| anchored(p)).collect();
        let regenerable = Regenerable::new(patterns).unwrap();
        for (path, is_dir) in paths {
            let path = path.trim_end_matches('/');
            assert!(regenerable.matches(Path::new(path), is_dir), "{path}");
        }
        for (other, is_dir) in [("x/target", true), ("a b/cXd?[e]\\f", false), ("!", false)] {
            assert!(!regenerable.matches(Path::new(other), is_dir), "{other}");
        }
    }

    #[test]
    fn a_pattern_that_is_no_pattern_is_refused_naming_it() {
        for bad in ["", "  ", "# comment", "a\nb", "a[z-a]", "x\0"] {
            let err = Regenerable::new(vec!["ok/".into(), bad.into()]).unwrap_err();
            assert_eq!(err.code(), "EINVAL", "{bad:?}");
            assert!(err.to_string().contains(&format!("{bad:?}")), "{err}");
        }
    }

    #[test]
    fn only_a_regular_tag_with_the_signature_declares_a_cache() {
        let dir = tempfile::tempdir().unwrap();
        let tag = dir.path().join(CACHEDIR_TAG);
        let signed = [CACHEDIR_SIGNATURE, b"\n# made by a build tool\n"].concat();
        let cases: [(&str, &dyn Fn(), bool); 5] = [
            ("none", &|| {}, false),
            ("signed", &|| fs::write(&tag, &signed).unwrap(), true),
            (
                "unsigned",
                &|| fs::write(&tag, b"Signature: wrong").unwrap(),
                false,
            ),
            (
                "a FIFO",
                &|| nix::unistd::mkfifo(&tag, nix::sys::stat::Mode::S_IRWXU).unwrap(),
                false,
            ),
            (
                "too large",
                &|| {
                    let big =
                        [signed.as_slice(), &vec![b'#'; CACHEDIR_TAG_BYTES as usize]].concat();
                    fs::write(&tag, big).unwrap()
                },
                false,
            ),
        ];
        for (what, make, expected) in cases {
            let _ = fs::remove_file(&tag);
            make();
            assert_eq!(declares_cache(dir.path()).unwrap(), expected, "{what}");
        }
    }
}
