//! Where cargo laid out build output in a target directory (or a build
//! directory), and which `cargo clean` flags reach each place.
//!
//! Cargo 1.95 lays a target directory out like this (a separate build
//! directory, `build.build-dir`, the same way):
//!
//! ```text
//! CACHEDIR.TAG  .rustc_info.json  .rustdoc_fingerprint.json   files
//! debug/  release/  <custom profile>/    host profiles: .fingerprint/,
//!                                        deps/, build/, incremental/,
//!                                        examples/, .cargo-lock
//! <target>/CACHEDIR.TAG                  built with `--target <target>`
//! <target>/<profile>/                    as a host profile
//! <target>/doc/  doc/  tmp/  package/    documentation, the tests'
//!                                        CARGO_TARGET_TMPDIR, `cargo
//!                                        package`: no compiled output
//! ```
//!
//! `dev` and `test` are laid out in `debug`, `release` and `bench` in
//! `release`, any other profile under its own name. Where cargo keeps
//! intermediate output in a build directory, the target directory's profile
//! directories hold only the final artifacts and their `.cargo-lock`; `cargo
//! clean -p` then removes a package's files from both directories, and
//! `cargo clean --target <t>` cleans the host's profile directory as well as
//! the target's.
//!
//! # What is recognised
//!
//! Cargo reuses compiled output only through a profile directory's
//! `.fingerprint`, and it creates `.fingerprint` or `.cargo-lock` in every
//! profile directory it lays out; a target directory of its own carries
//! `CACHEDIR.TAG`. So those are the marks read here, and every directory that
//! carries one, at the top or one level down, must be recognised:
//!
//! - a directory holding `.fingerprint` or `.cargo-lock` is a host profile
//!   directory, and its name must be one cargo gives a profile (`debug`,
//!   `release`, or a custom profile's name: ASCII letters, digits, `-`, `_`);
//! - a directory holding `CACHEDIR.TAG`, or a subdirectory with one of those
//!   marks, is a target's directory: its name must be one cargo gives a
//!   target (letters, digits, `-`, `_`, `.`), its marked subdirectories
//!   profile directories as above.
//!
//! Anything else marked (a profile directory named `dev`, `test` or `bench`,
//! which cargo never writes; a target directory inside a target's directory,
//! as a tool's own target directory nested in the cache) is refused with
//! `ENOTSUP` naming it. Files, and directories that carry no mark (cargo's
//! `doc`, `tmp` and `package`, a tool's `criterion`, `nextest` or installed
//! binaries), hold nothing cargo would reuse as compiled output, and are
//! left alone. Whether cargo can clean a target's directory (a custom target
//! given as a JSON file is not known by its name alone) is cargo's to say
//! when it is asked.

use std::{
    fs, io,
    path::{Path, PathBuf},
};

use natives_core::{Error, ErrorKind, Result};

/// One build-output directory cargo laid out: a profile's output, built for
/// the host or for a target.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Layout {
    /// The target it was built for (cargo's `--target`), `None` for the host.
    pub target: Option<String>,
    /// The profile (cargo's `--profile`): `dev` for `debug`.
    pub profile: String,
}

impl Layout {
    /// Its directory under the target (or build) directory `root`.
    pub fn dir(&self, root: &Path) -> PathBuf {
        let mut dir = root.to_owned();
        if let Some(target) = &self.target {
            dir.push(target);
        }
        dir.push(profile_dir(&self.profile));
        dir
    }
}

/// The directory cargo lays `profile`'s output out in: `debug` for `dev` and
/// `test`, `release` for `release` and `bench`, its own name otherwise.
pub fn profile_dir(profile: &str) -> &str {
    match profile {
        "dev" | "test" => "debug",
        "bench" => "release",
        other => other,
    }
}

/// The profile to name to cargo for the output directory `dir`; `None` for
/// a name cargo never gives a profile's directory.
pub fn profile_of_dir(dir: &str) -> Option<&str> {
    match dir {
        "debug" => Some("dev"),
        "dev" | "test" | "bench" => None,
        name if is_name(name, b"-_") => Some(name),
        _ => None,
    }
}

/// Every layout cargo laid out under the target (or build) directory
/// `root`, sorted; none when `root` does not exist. `ENOTSUP` naming the
/// directory for marked output this module does not recognise (see the
/// module docs); an I/O error naming the path when one cannot be read.
pub fn output_layouts(root: &Path) -> Result<Vec<Layout>> {
    let mut layouts = Vec::new();
    for (name, dir) in subdirectories(root)? {
        match mark(&dir)? {
            Mark::Profile => layouts.push(host_layout(&name, &dir)?),
            Mark::TargetDir => layouts.extend(target_layouts(&name, &dir)?),
            Mark::None if has_marked_subdirectory(&dir)? => {
                layouts.extend(target_layouts(&name, &dir)?);
            }
            Mark::None => {}
        }
    }
    layouts.sort();
    Ok(layouts)
}

/// What marks a directory as cargo's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mark {
    /// `.fingerprint` or `.cargo-lock`: a profile's output.
    Profile,
    /// `CACHEDIR.TAG`: a target directory of its own.
    TargetDir,
    None,
}

fn mark(dir: &Path) -> Result<Mark> {
    if exists(&dir.join(".fingerprint"))? || exists(&dir.join(".cargo-lock"))? {
        Ok(Mark::Profile)
    } else if exists(&dir.join("CACHEDIR.TAG"))? {
        Ok(Mark::TargetDir)
    } else {
        Ok(Mark::None)
    }
}

fn has_marked_subdirectory(dir: &Path) -> Result<bool> {
    for (_, child) in subdirectories(dir)? {
        if mark(&child)? != Mark::None {
            return Ok(true);
        }
    }
    Ok(false)
}

fn host_layout(name: &str, dir: &Path) -> Result<Layout> {
    let profile = profile_of_dir(name).ok_or_else(|| not_a_profile(dir))?;
    Ok(Layout {
        target: None,
        profile: profile.to_owned(),
    })
}

/// The profile layouts of the target directory `dir`, named `name`.
fn target_layouts(name: &str, dir: &Path) -> Result<Vec<Layout>> {
    if !is_name(name, b"-_.") {
        return Err(unrecognised(
            dir,
            "holds cargo build output, but its name is not one cargo gives a target",
        ));
    }
    let mut layouts = Vec::new();
    for (child_name, child) in subdirectories(dir)? {
        match mark(&child)? {
            Mark::Profile => {
                let profile = profile_of_dir(&child_name).ok_or_else(|| not_a_profile(&child))?;
                layouts.push(Layout {
                    target: Some(name.to_owned()),
                    profile: profile.to_owned(),
                });
            }
            Mark::TargetDir => {
                return Err(unrecognised(
                    &child,
                    "a target directory (it holds CACHEDIR.TAG) inside a target's directory",
                ));
            }
            Mark::None => {}
        }
    }
    Ok(layouts)
}

/// Whether `name` starts with an ASCII letter or digit and holds nothing
/// but those and the bytes of `also`.
fn is_name(name: &str, also: &[u8]) -> bool {
    name.bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || also.contains(&b))
}

fn not_a_profile(dir: &Path) -> Error {
    unrecognised(
        dir,
        "holds a profile's build output (.fingerprint or .cargo-lock), \
         but cargo gives no profile's directory this name",
    )
}

fn unrecognised(dir: &Path, why: &str) -> Error {
    Error::new(
        ErrorKind::Unsupported,
        format!(
            "{}: {why}; a layout of cargo's output not recognised, so not cleaned",
            dir.display()
        ),
    )
}

/// The subdirectories of `dir` (links to directories included, as cargo
/// follows them) with their names, sorted; none when `dir` does not exist.
/// A name that is not UTF-8 is shown lossily, which no cargo name matches:
/// such a directory is unrecognised if it carries a mark.
fn subdirectories(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let listing = match fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(Error::io(dir, err)),
    };
    let mut found = Vec::new();
    for item in listing {
        let path = item.map_err(|err| Error::io(dir, err))?.path();
        if !is_directory(&path)? {
            continue;
        }
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        found.push((name.into_owned(), path.clone()));
    }
    found.sort();
    Ok(found)
}

/// Whether `path` is a directory, through links; a dangling link is not.
fn is_directory(path: &Path) -> Result<bool> {
    match fs::metadata(path) {
        Ok(meta) => Ok(meta.is_dir()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(Error::io(path, err)),
    }
}

fn exists(path: &Path) -> Result<bool> {
    path.try_exists().map_err(|err| Error::io(path, err))
}

#[cfg(test)]
mod tests;
