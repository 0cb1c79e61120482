//! Gathering an archive's contents from a checkout: the proof that it holds
//! nothing its `HEAD` does not, the commits it showed, their objects
//! within bounds, the pack, and what a private repository derives from it.

use std::{
    collections::{BTreeMap, HashSet},
    path::Path,
};

use natives_core::{CancelToken, ErrorKind, Result};

use super::{
    bounds::{Bound, Bounds, REFLOG_BYTES},
    disk,
    format::{self, Manifest, Tip},
    refusal::Refusal,
    validate,
};
use crate::{
    git::{Dirs, Git, Store},
    handover::{Paths, Regenerable, inspect},
    own_history::{self, Unreadable},
};

/// An archive's contents, every file by its relative name, and the private
/// store holding exactly its pack that derived them.
pub(super) struct Contents {
    pub manifest: Manifest,
    pub files: BTreeMap<String, Vec<u8>>,
    pub store: Store,
}

type Collected<T> = std::result::Result<T, Refusal>;

/// Everything the archive of `worktree` over `base` holds, or why it cannot
/// be archived.
pub(super) fn collect(
    git: &Git,
    worktree: &Path,
    base: &str,
    bounds: &Bounds,
    cancel: &CancelToken,
) -> Result<Collected<Contents>> {
    let Some(dirs) = git.dirs(worktree, cancel)? else {
        return Ok(Err(Refusal::NotAWorktree(worktree.to_owned())));
    };
    if let Err(refusal) = prove_clean(git, worktree, cancel)? {
        return Ok(Err(refusal));
    }
    let Some(head) = git.resolve(&dirs.top, "HEAD^{commit}", cancel)? else {
        return Ok(Err(Refusal::Unborn));
    };
    let modes = match modes(git, &dirs, &head, cancel)? {
        Ok(modes) => modes,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let Some(base) = git.resolve(&dirs.top, &format!("{base}^{{commit}}"), cancel)? else {
        return Ok(Err(Refusal::UnknownBase(base.to_owned())));
    };
    let object_format = git.object_format(&dirs, cancel)?;
    let tips = match tips(git, &dirs, &head, &base, &object_format, bounds, cancel)? {
        Ok(tips) => tips,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let objects = match objects(git, &dirs, &tips, bounds, cancel)? {
        Ok(objects) => objects,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let parts = Parts {
        head,
        base,
        object_format,
        modes,
        tips,
        objects,
    };
    archive(git, &dirs, parts, bounds, cancel)
}

/// What an archive is made of, every proof passed.
struct Parts {
    head: String,
    base: String,
    object_format: String,
    modes: Vec<u8>,
    tips: Vec<Checkpoint>,
    objects: Objects,
}

/// The archive's files from its `parts`: the pack, imported into a private
/// store to regenerate the indexes and diffs from, the commits, the
/// manifest and the sums; refused over the run's bound.
fn archive(
    git: &Git,
    dirs: &Dirs,
    parts: Parts,
    bounds: &Bounds,
    cancel: &CancelToken,
) -> Result<Collected<Contents>> {
    let listed: Vec<(&str, &[u8])> = parts
        .objects
        .list
        .iter()
        .map(|(id, path)| (id.as_str(), path.as_slice()))
        .collect();
    let pack = git.pack_objects(dirs, &listed, cancel)?;
    let (source_tree, base_tree) = (
        parts.tips[0].tree.clone(),
        tree_of(&parts.tips, &parts.base),
    );
    let store = git.private_store(&parts.object_format, cancel)?;
    git.import_pack(&store, &pack, cancel)?;
    let mut files: BTreeMap<String, Vec<u8>> =
        validate::regenerate(git, &store, &base_tree, &source_tree, cancel)?
            .into_iter()
            .map(|(name, bytes)| (name.to_owned(), bytes))
            .collect();
    files.insert(format::PACK.to_owned(), pack);
    files.insert(format::MODES.to_owned(), parts.modes);
    for tip in &parts.tips {
        files.insert(format::commit_file(&tip.commit), tip.raw.clone());
    }
    let manifest = Manifest {
        format: format::FORMAT,
        object_format: parts.object_format,
        head: parts.head,
        base: parts.base,
        source_tree,
        base_tree,
        tips: parts.tips.into_iter().map(|tip| tip.tip()).collect(),
        objects: parts.objects.list.len() as u64,
        object_bytes: parts.objects.bytes,
        files: files
            .iter()
            .map(|(name, bytes)| (name.clone(), bytes.len() as u64))
            .collect(),
    };
    Ok(seal(files, manifest, store, bounds))
}

/// The archive: `files` with the manifest and the sums, refused over the
/// run's bound.
fn seal(
    mut files: BTreeMap<String, Vec<u8>>,
    manifest: Manifest,
    store: Store,
    bounds: &Bounds,
) -> Collected<Contents> {
    files.insert(format::MANIFEST.to_owned(), manifest.to_bytes());
    files.insert(format::SUMS.to_owned(), format::sums(&files));
    let total: u64 = files.values().map(|bytes| bytes.len() as u64).sum();
    if total > bounds.run_bytes {
        return Err(over(Bound::RunBytes, bounds.run_bytes, total));
    }
    Ok(Contents {
        manifest,
        files,
        store,
    })
}

/// The content proof of the handover: nothing on disk or in the index that
/// `HEAD` lacks (caches aside: they are not archived), no operation half
/// way, nothing git would transform.
fn prove_clean(git: &Git, worktree: &Path, cancel: &CancelToken) -> Result<Collected<()>> {
    let content = inspect::content(git, worktree, &Regenerable::default(), cancel)?;
    let mut why = Vec::new();
    if !content.dirty.is_empty() {
        why.push(format!("changed or untracked: {}", content.dirty));
    }
    if !content.staged.is_empty() {
        why.push(format!("staged: {}", content.staged));
    }
    if !content.operations.is_empty() {
        why.push(format!("in progress: {}", content.operations.join(", ")));
    }
    if !content.unsupported.is_empty() {
        why.push(format!("unsupported: {}", content.unsupported.join(", ")));
    }
    if !content.inspectable {
        why.push("not inspectable".to_owned());
    }
    Ok(match why.is_empty() {
        true => Ok(()),
        false => Err(Refusal::NotClean(why.join("; "))),
    })
}

/// The permission bits of the checkout at `head` ([`format::MODES`]), or
/// why it holds what git does not see.
fn modes(git: &Git, dirs: &Dirs, head: &str, cancel: &CancelToken) -> Result<Collected<Vec<u8>>> {
    let disk = disk::look(git, dirs, &format!("{head}^{{tree}}"), cancel)?;
    if !disk.unseen.is_empty() {
        let why = format!(
            "FIFOs, sockets, devices or directories git does not track: {}",
            Paths::of(disk.unseen)
        );
        return Ok(Err(Refusal::NotClean(why)));
    }
    Ok(Ok(format::modes(&disk.modes)))
}

/// One commit to archive, with where the checkout showed it.
struct Checkpoint {
    commit: String,
    tree: String,
    raw: Vec<u8>,
    seen_as: Vec<String>,
}

impl Checkpoint {
    fn tip(self) -> Tip {
        Tip {
            commit: self.commit,
            tree: self.tree,
            seen_as: self.seen_as,
        }
    }
}

fn tree_of(tips: &[Checkpoint], commit: &str) -> String {
    tips.iter()
        .find(|tip| tip.commit == commit)
        .map(|tip| tip.tree.clone())
        .unwrap_or_default()
}

/// Every commit to archive, each once, in order: the head, the base, the
/// `HEAD` reflog newest first, `ORIG_HEAD`.
fn tips(
    git: &Git,
    dirs: &Dirs,
    head: &str,
    base: &str,
    object_format: &str,
    bounds: &Bounds,
    cancel: &CancelToken,
) -> Result<Collected<Vec<Checkpoint>>> {
    let id_len = crate::git::id_len(object_format).ok_or_else(|| {
        natives_core::Error::new(
            ErrorKind::Unsupported,
            format!("object format {object_format:?} is not known"),
        )
    })?;
    let mut seen: Vec<(String, String)> = vec![
        (head.to_owned(), "HEAD".to_owned()),
        (base.to_owned(), "base".to_owned()),
    ];
    match own_history::remembered(dirs, id_len)? {
        Ok(remembered) => seen.extend(remembered.into_iter().map(|r| (r.id, r.seen_as))),
        Err(unreadable) => return Ok(Err(refusal_of(unreadable))),
    }
    let mut tips = merge_labels(seen);
    if tips.len() > bounds.checkpoints {
        let (limit, actual) = (bounds.checkpoints as u64, tips.len() as u64);
        return Ok(Err(over(Bound::Checkpoints, limit, actual)));
    }
    for tip in &mut tips {
        if let Err(refusal) = read_tip(git, dirs, tip, id_len, cancel)? {
            return Ok(Err(refusal));
        }
    }
    Ok(Ok(tips))
}

/// One checkpoint per commit, in the order first seen, with every label it
/// was seen as; raw bytes and tree are read later.
fn merge_labels(seen: Vec<(String, String)>) -> Vec<Checkpoint> {
    let mut tips: Vec<Checkpoint> = Vec::new();
    for (commit, label) in seen {
        match tips.iter_mut().find(|tip| tip.commit == commit) {
            Some(tip) => tip.seen_as.push(label),
            None => tips.push(Checkpoint {
                commit,
                tree: String::new(),
                raw: Vec::new(),
                seen_as: vec![label],
            }),
        }
    }
    tips
}

/// Fill in `tip`'s raw commit and tree, or say why it cannot be archived.
fn read_tip(
    git: &Git,
    dirs: &Dirs,
    tip: &mut Checkpoint,
    id_len: usize,
    cancel: &CancelToken,
) -> Result<std::result::Result<(), Refusal>> {
    let seen_as = tip.seen_as.join(", ");
    let unarchivable = |why: String| Refusal::Unarchivable {
        seen_as: seen_as.clone(),
        why,
    };
    let kind = git.object_sizes(dirs, &[&tip.commit], cancel);
    match kind {
        Ok(objects) if objects.first().is_some_and(|o| o.kind == "commit") => {}
        Ok(_) => return Ok(Err(unarchivable(format!("{} is not a commit", tip.commit)))),
        Err(err) if err.kind() == ErrorKind::NotFound => {
            let why = format!("commit {} is no longer in the repository", tip.commit);
            return Ok(Err(unarchivable(why)));
        }
        Err(err) => return Err(err),
    }
    tip.raw = git.raw_commit(dirs, &tip.commit, cancel)?;
    tip.tree = match format::commit_tree(&tip.raw) {
        Some(tree) if crate::git::is_id(&tree, id_len) => tree,
        _ => return Ok(Err(unarchivable("its commit names no tree".to_owned()))),
    };
    Ok(Ok(()))
}

/// Why what the checkout's administration remembers cannot be archived.
fn refusal_of(unreadable: Unreadable) -> Refusal {
    match unreadable {
        Unreadable::Reftable => Refusal::Unsupported(unreadable.to_string()),
        Unreadable::TooLarge(size) => over(Bound::ReflogBytes, REFLOG_BYTES, size),
        Unreadable::Malformed { seen_as, why } => Refusal::Unarchivable { seen_as, why },
    }
}

/// The objects to pack: every tree and blob of every tip's tree, each once,
/// in the order first met (id, path hint), and their expanded size.
struct Objects {
    list: Vec<(String, Vec<u8>)>,
    bytes: u64,
}

fn objects(
    git: &Git,
    dirs: &Dirs,
    tips: &[Checkpoint],
    bounds: &Bounds,
    cancel: &CancelToken,
) -> Result<Collected<Objects>> {
    let mut seen = HashSet::new();
    let mut list = Vec::new();
    for tree in tips.iter().map(|tip| &tip.tree) {
        if !seen.insert(tree.clone()) {
            continue;
        }
        list.push((tree.clone(), Vec::new()));
        for entry in git.tree_entries(dirs, tree, cancel)? {
            // A submodule's commit is another repository's object; the
            // content proof refuses a checkout holding one.
            if entry.kind != "commit" && seen.insert(entry.id.clone()) {
                list.push((entry.id, entry.path));
            }
        }
        if list.len() as u64 > bounds.objects {
            return Ok(Err(over(Bound::Objects, bounds.objects, list.len() as u64)));
        }
    }
    let ids: Vec<&str> = list.iter().map(|(id, _)| id.as_str()).collect();
    let bytes = git
        .object_sizes(dirs, &ids, cancel)?
        .iter()
        .map(|object| object.size)
        .sum();
    if bytes > bounds.object_bytes {
        return Ok(Err(over(Bound::ObjectBytes, bounds.object_bytes, bytes)));
    }
    Ok(Ok(Objects { list, bytes }))
}

fn over(bound: Bound, limit: u64, actual: u64) -> Refusal {
    Refusal::OverBound {
        bound,
        limit,
        actual,
    }
}

#[cfg(test)]
mod tests {
    use super::merge_labels;

    /// Commits and the labels they were seen as.
    type Seen = &'static [(&'static str, &'static str)];
    /// Commits and every label each is a checkpoint for.
    type Merged = &'static [(&'static str, &'static [&'static str])];

    /// Commits seen under several labels become one checkpoint each, in
    /// the order first seen, every label kept in order.
    #[test]
    fn labels_merge_per_commit_in_first_seen_order() {
        let table: [(Seen, Merged); 4] = [
            (&[], &[]),
            (
                &[("a", "HEAD"), ("b", "base")],
                &[("a", &["HEAD"]), ("b", &["base"])],
            ),
            (&[("a", "HEAD"), ("a", "base")], &[("a", &["HEAD", "base"])]),
            (
                &[
                    ("a", "HEAD"),
                    ("b", "base"),
                    ("a", "HEAD@{1}"),
                    ("c", "ORIG_HEAD"),
                ],
                &[
                    ("a", &["HEAD", "HEAD@{1}"]),
                    ("b", &["base"]),
                    ("c", &["ORIG_HEAD"]),
                ],
            ),
        ];
        for (seen, expected) in table {
            let seen = seen
                .iter()
                .map(|(commit, label)| (commit.to_string(), label.to_string()))
                .collect();
            let merged: Vec<(String, Vec<String>)> = merge_labels(seen)
                .into_iter()
                .map(|tip| (tip.commit, tip.seen_as))
                .collect();
            let expected: Vec<(String, Vec<String>)> = expected
                .iter()
                .map(|(commit, labels)| {
                    let labels = labels.iter().map(|label| label.to_string()).collect();
                    (commit.to_string(), labels)
                })
                .collect();
            assert_eq!(merged, expected);
        }
    }
}
