//! `natives claims list|release`: the operator's view of memory-directory
//! claims, and the human "release this folder" action.
//!
//! The store is the one under `$NATIVES_HOME` (else `~/.natives`), or
//! `--home`; neither command creates it. `list` exits 0 when it listed a
//! folder, 1 when there was none, 2 when a record could not be read (each
//! named on standard error, after what could be read). Releasing asks for confirmation on standard input unless
//! `--yes`, because the released agent's next capture will treat the folder
//! as exclusive if nobody else claims it. A claim another OS user made is
//! refused (`EPERM`, by the library) unless `--any-user` says the operator
//! means it.

use std::{
    io::{self, Write},
    path::{Path, PathBuf},
    time::Duration,
};

use natives_ownership::{
    CancelToken,
    claims::{self, ClaimedFolder, Releaser},
    view::ClaimedFolderView,
};
use natives_system::{paths, process::now_ms};
use serde::Serialize;

use crate::{
    Outcome,
    args::ClaimsCommand,
    common::{Output, age, ask, write_json},
};

/// How long a release waits for the zone lock.
const RELEASE_TIMEOUT: Duration = Duration::from_secs(10);

pub fn run(command: ClaimsCommand) -> Result<Outcome, String> {
    match command {
        ClaimsCommand::List { uid, json, home } => list(uid, json, home.home),
        ClaimsCommand::Release {
            uid,
            dir,
            yes,
            any_user,
            home,
        } => {
            let releaser = if any_user {
                Releaser::Operator
            } else {
                Releaser::ClaimOwner
            };
            release(&uid, &dir, yes, releaser, home.home)
        }
    }
}

fn list(uid: Option<String>, json: bool, home: Option<PathBuf>) -> Result<Outcome, String> {
    let home = store_home(home)?;
    let listing = claims::list(&home).map_err(|err| err.to_string())?;
    let folders: Vec<&ClaimedFolder> = listing
        .folders
        .iter()
        .filter(|folder| uid.as_ref().is_none_or(|u| folder.claims.contains_key(u)))
        .collect();
    let mut out = Output::stdout();
    for folder in &folders {
        out.write(|w| print_folder(w, folder, json));
    }
    for (path, err) in &listing.unreadable {
        if json {
            let line = ClaimsLine::Unreadable {
                path,
                error: err.to_string(),
            };
            out.write(|w| write_json(w, &line));
        } else {
            eprintln!("natives: {}: {err}", path.display());
        }
    }
    out.finish()?;
    // As ripgrep does: an error is exit 2 even when something was listed.
    match listing.unreadable.len() {
        0 => Ok(Outcome::from_count(folders.len() as u64)),
        1 => Err("1 claims record could not be read".to_owned()),
        n => Err(format!("{n} claims records could not be read")),
    }
}

/// One line of `claims list --json`: a folder as the library's view gives it
/// (the addon's `claimsOf` objects), or a record that could not be read.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
enum ClaimsLine<'a> {
    /// A claimed folder.
    Folder(ClaimedFolderView),
    /// A claims record that could not be read.
    Unreadable {
        /// The record.
        path: &'a Path,
        /// Why.
        error: String,
    },
}

fn print_folder(out: &mut dyn Write, folder: &ClaimedFolder, json: bool) -> io::Result<()> {
    if json {
        return write_json(out, &ClaimsLine::Folder(ClaimedFolderView::from(folder)));
    }
    writeln!(out, "{}  ({})", folder.dir, folder.zone)?;
    for (uid, claim) in &folder.claims {
        let age = age(now_ms().saturating_sub(claim.at_ms));
        writeln!(
            out,
            "  {uid}  origin={} account={} claimed {age} ago",
            claim.origin, claim.account
        )?;
    }
    Ok(())
}

fn release(
    uid: &str,
    dir: &str,
    yes: bool,
    releaser: Releaser,
    home: Option<PathBuf>,
) -> Result<Outcome, String> {
    let home = store_home(home)?;
    if !yes && !ask(&format!("release {uid}'s claim on {dir}?"))? {
        eprintln!("natives: not released");
        return Ok(Outcome::NoMatch);
    }
    let deadline = CancelToken::new().with_timeout(Some(RELEASE_TIMEOUT));
    let released = claims::release_named(&home, dir, uid, &deadline, releaser)
        .map_err(|err| err.to_string())?;
    if released {
        println!("released {uid}'s claim on {dir}");
        Ok(Outcome::Matched)
    } else {
        eprintln!("natives: {uid} holds no claim on {dir}");
        Ok(Outcome::NoMatch)
    }
}

fn store_home(explicit: Option<PathBuf>) -> Result<PathBuf, String> {
    paths::home(explicit.as_deref()).map_err(|err| err.to_string())
}
