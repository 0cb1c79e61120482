//! `natives claims list|release`: the operator's view of memory-directory
//! claims, and the human "release this folder" action.
//!
//! The store is the one under `$NATIVES_HOME` (else `~/.natives`), or
//! `--home`. Releasing asks for confirmation on standard input unless
//! `--yes`, because the released agent's next capture will treat the folder
//! as exclusive if nobody else claims it. A claim another OS user made is
//! refused (`EPERM`, by the library) unless `--any-user` says the operator
//! means it.

use std::{
    ffi::OsString,
    io::{self, Write},
    path::{Path, PathBuf},
    time::Duration,
};

use lexopt::{Arg, Parser, ValueExt};
use natives_ownership::{
    CancelToken,
    claims::{self, ClaimedFolder, Releaser, Zone},
    paths,
    process::now_ms,
};
use serde_json::json;

use crate::{
    Outcome,
    common::{Output, age, ask, value},
    describe,
};

/// How long a release waits for the zone lock.
const RELEASE_TIMEOUT: Duration = Duration::from_secs(10);

pub fn run(parser: &mut Parser) -> Result<Outcome, String> {
    match parser.next().map_err(|e| e.to_string())? {
        Some(Arg::Value(sub)) if sub == "list" => list(parser),
        Some(Arg::Value(sub)) if sub == "release" => release(parser),
        Some(other) => Err(format!(
            "claims: unknown subcommand {} (list or release)",
            describe(&other)
        )),
        None => Err("claims: missing subcommand (list or release)".to_owned()),
    }
}

fn list(parser: &mut Parser) -> Result<Outcome, String> {
    let (mut uid, mut json, mut home) = (None, false, None);
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Arg::Long("uid") => uid = Some(value(parser)?),
            Arg::Long("json") => json = true,
            Arg::Long("home") => home = Some(PathBuf::from(value(parser)?)),
            other => return Err(format!("claims list: unknown option {}", describe(&other))),
        }
    }
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
            let line = json!({"type": "unreadable", "path": path, "error": err.to_string()});
            out.write(|w| writeln!(w, "{line}"));
        } else {
            eprintln!("natives: {}: {err}", path.display());
        }
    }
    out.finish()?;
    Ok(Outcome::from_count(folders.len() as u64))
}

fn print_folder(out: &mut dyn Write, folder: &ClaimedFolder, json: bool) -> io::Result<()> {
    if json {
        let claims: Vec<_> = folder
            .claims
            .iter()
            .map(|(uid, c)| {
                json!({"uid": uid, "atMs": c.at_ms, "origin": c.origin, "account": c.account, "user": c.user})
            })
            .collect();
        let line =
            json!({"type": "folder", "dir": folder.dir, "zone": folder.zone, "claims": claims});
        return writeln!(out, "{line}");
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

fn release(parser: &mut Parser) -> Result<Outcome, String> {
    let (mut positionals, mut yes, mut home) = (Vec::new(), false, None);
    let mut releaser = Releaser::ClaimOwner;
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Arg::Long("yes") | Arg::Short('y') => yes = true,
            Arg::Long("any-user") => releaser = Releaser::Operator,
            Arg::Long("home") => home = Some(PathBuf::from(value(parser)?)),
            Arg::Value(v) => positionals.push(v),
            other => {
                return Err(format!(
                    "claims release: unknown option {}",
                    describe(&other)
                ));
            }
        }
    }
    let (uid, dir) = release_target(positionals)?;
    let home = store_home(home)?;
    if !yes && !ask(&format!("release {uid}'s claim on {dir}?"))? {
        eprintln!("natives: not released");
        return Ok(Outcome::NoMatch);
    }
    let deadline = CancelToken::new().with_timeout(Some(RELEASE_TIMEOUT));
    let released = match Zone::parse(&dir) {
        Some(zone) => {
            claims::release_in_zone(&home, &zone, Path::new(""), &uid, &deadline, releaser)
        }
        None => claims::release(&home, Path::new(&dir), &uid, &deadline, releaser),
    }
    .map_err(|err| err.to_string())?;
    if released {
        println!("released {uid}'s claim on {dir}");
        Ok(Outcome::Matched)
    } else {
        eprintln!("natives: {uid} holds no claim on {dir}");
        Ok(Outcome::NoMatch)
    }
}

/// UID and DIR (a folder, or a zone name from `claims list`).
fn release_target(positionals: Vec<OsString>) -> Result<(String, String), String> {
    let mut values = positionals.into_iter();
    let (Some(uid), Some(dir), None) = (values.next(), values.next(), values.next()) else {
        return Err("claims release: expected UID DIR".to_owned());
    };
    let text = |v: OsString| v.string().map_err(|e| format!("claims release: {e}"));
    Ok((text(uid)?, text(dir)?))
}

fn store_home(explicit: Option<PathBuf>) -> Result<PathBuf, String> {
    paths::home(explicit.as_deref()).map_err(|err| err.to_string())
}
