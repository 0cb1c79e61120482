//! Rules 1 and 2: what makes a folder shared before any claim is counted.
//! They only read the filesystem; nothing here writes to the store.
//!
//! Rule 1, known shared locations: a blank working directory (the default
//! agents directory, shared by same-name agents), `$HOME` (the caller's,
//! always, and the one the request names), an ancestor of
//! another agent's working directory, any folder the CLI keys by a whole
//! repository, and memory redirected by settings or the environment.
//! Rule 2, vetoes: another agent that resolves to the same canonical folder
//! by any route. A guess is good enough for a veto (the same working
//! directory), because a veto only ever keeps memory out of a folder.

use std::path::{Path, PathBuf};

use natives_core::{CancelToken, Result};

use super::{
    claude_layout::{has_linked_worktrees, memory_project_root},
    redirect::find_redirect,
    request::{ClaimRequest, KnownAgent},
    verdict::SharedReason,
};
use natives_system::paths::{dir_id, user_homes};

/// The first rule that makes `request`'s folder (canonical id `memory_dir`)
/// shared, with what it saw; `None` when rules 1 and 2 allow exclusivity.
pub fn known_shared_or_vetoed(
    request: &ClaimRequest,
    memory_dir: &Path,
    deadline: &CancelToken,
) -> Result<Option<(SharedReason, String)>> {
    let Some(cwd) = non_blank(request.agent.cwd.as_deref()) else {
        return Ok(Some((
            SharedReason::KnownShared,
            "blank working directory: the default agents directory is shared by same-name agents"
                .to_owned(),
        )));
    };
    let cwd = dir_id(cwd)?;
    if let Some(found) = known_shared(request, &cwd, deadline)? {
        return Ok(Some(found));
    }
    if let Some(found) = repository_wide(&cwd, deadline)? {
        return Ok(Some(found));
    }
    if let Some(redirect) = find_redirect(&request.redirects, deadline)? {
        return Ok(Some((SharedReason::Redirected, redirect)));
    }
    vetoed(request, &cwd, memory_dir, deadline)
}

/// A user's home, or an ancestor of another agent's working directory.
fn known_shared(
    request: &ClaimRequest,
    cwd: &Path,
    deadline: &CancelToken,
) -> Result<Option<(SharedReason, String)>> {
    if homes(request)?.iter().any(|home| home == cwd) {
        return Ok(Some((
            SharedReason::KnownShared,
            format!("{} is $HOME, a user's home directory", cwd.display()),
        )));
    }
    for other in others(request) {
        deadline.check()?;
        if let Some(theirs) = other_cwd(other)?
            && theirs != cwd
            && theirs.starts_with(cwd)
        {
            return Ok(Some((
                SharedReason::KnownShared,
                format!(
                    "{} is an ancestor of agent {}'s working directory {}",
                    cwd.display(),
                    other.uid,
                    theirs.display()
                ),
            )));
        }
    }
    Ok(None)
}

/// The home directories that are shared locations: the one the request
/// names, if any, and always the caller's own.
fn homes(request: &ClaimRequest) -> Result<Vec<PathBuf>> {
    let mut homes = user_homes();
    if let Some(given) = non_blank(request.user_home.as_deref()) {
        homes.push(dir_id(given)?);
    }
    Ok(homes)
}

/// A folder the CLI keys by a whole repository.
fn repository_wide(cwd: &Path, deadline: &CancelToken) -> Result<Option<(SharedReason, String)>> {
    let root = memory_project_root(cwd, deadline)?;
    let detail = if root != cwd {
        format!(
            "the CLI keys {}'s memory by the whole repository at {}",
            cwd.display(),
            root.display()
        )
    } else if has_linked_worktrees(&root, deadline)? {
        format!(
            "{} has linked worktrees, which share its memory",
            root.display()
        )
    } else {
        return Ok(None);
    };
    Ok(Some((SharedReason::RepositoryWide, detail)))
}

/// Another agent resolving to the same folder, or (a guess) working in the
/// same directory.
fn vetoed(
    request: &ClaimRequest,
    cwd: &Path,
    memory_dir: &Path,
    deadline: &CancelToken,
) -> Result<Option<(SharedReason, String)>> {
    for other in others(request) {
        deadline.check()?;
        if let Some(theirs) = non_blank(other.memory_dir.as_deref())
            && dir_id(theirs)? == memory_dir
        {
            return Ok(Some((
                SharedReason::Vetoed,
                format!("agent {} uses {} too", other.uid, memory_dir.display()),
            )));
        }
        if other_cwd(other)?.as_deref() == Some(cwd) {
            return Ok(Some((
                SharedReason::Vetoed,
                format!(
                    "agent {} works in {} too, so its memory is likely the same",
                    other.uid,
                    cwd.display()
                ),
            )));
        }
    }
    Ok(None)
}

/// The other agents, never the requesting one under another entry.
fn others(request: &ClaimRequest) -> impl Iterator<Item = &KnownAgent> {
    request
        .others
        .iter()
        .filter(|other| other.uid != request.agent.uid)
}

fn other_cwd(other: &KnownAgent) -> Result<Option<PathBuf>> {
    non_blank(other.cwd.as_deref()).map(dir_id).transpose()
}

fn non_blank(path: Option<&Path>) -> Option<&Path> {
    path.filter(|p| !p.as_os_str().to_string_lossy().trim().is_empty())
}
