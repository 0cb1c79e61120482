//! Bindings for the agent tools' file I/O (`natives_files`).
//!
//! Both calls run off the JS thread: a read or a batch of changes is quick,
//! but a slow disk or network filesystem must not stall the event loop. Bytes
//! cross as `Buffer`s (file contents need not be UTF-8); paths cross with
//! every byte kept ([`crate::names`]), so a name that is not UTF-8 can be
//! read and written back; a version of a file crosses as the opaque `stamp`
//! string that a later change can expect.

use std::path::Path;

use napi::bindgen_prelude::{AsyncTask, Buffer, Utf16String};
use napi_derive::napi;
use natives_core::Error;
use natives_files::{
    Applied, ApplyOptions, Change, Contents, Expect, Last, ReadOptions, Scope, Stamp,
};

use crate::{
    errors::guarded,
    names::{path_from_js, path_to_js},
    options::{count, given},
    task::{Work, task},
};

/// Options of the native `readFile`; the TypeScript `readFile` documents them.
#[napi(object)]
pub struct NativeReadFileOptions {
    /// Directory relative paths resolve against.
    pub cwd: Utf16String,
    /// Refuse (`EXDEV`) a path whose real location leaves `cwd`.
    pub confine: Option<bool>,
    /// The most bytes read.
    pub max_bytes: Option<f64>,
    /// Read at most `maxBytes` from the start instead of refusing a larger file.
    pub head: Option<bool>,
}

/// What the native `readFile` resolves with.
#[napi(object)]
pub struct NativeFileContents {
    /// The file's real path.
    pub path: Utf16String,
    /// The bytes read.
    pub data: Buffer,
    /// The file's size in bytes.
    pub size: f64,
    /// The version read, for `expect` in a later change.
    pub stamp: String,
    /// `data` is the whole file.
    pub complete: bool,
    /// What `data` holds, by the rule grep searches by (`natives_scan::text`):
    /// `utf-8`, `utf-16le` or `utf-16be` text (UTF-16 named by a byte order
    /// mark), or `binary` (a NUL byte in it).
    #[napi(ts_type = "'utf-8' | 'utf-16le' | 'utf-16be' | 'binary'")]
    pub encoding: String,
}

/// Read a regular file (see the TypeScript `readFile`).
#[napi(
    js_name = "nativeReadFile",
    ts_return_type = "Promise<NativeFileContents>"
)]
pub fn native_read_file(
    path: Utf16String,
    options: NativeReadFileOptions,
) -> AsyncTask<Work<NativeFileContents>> {
    task(move || {
        let read = read_options(&options)?;
        let cwd = path_from_js(&options.cwd, "cwd")?;
        let path = path_from_js(&path, "path")?;
        let scope = Scope::new(&cwd, read.confine)?;
        natives_files::read_file(&scope, &path, read.limit()?).map(to_js_contents)
    })
}

fn read_options(options: &NativeReadFileOptions) -> Result<ReadOptions, Error> {
    let mut converted = ReadOptions::default();
    given(&mut converted.confine, options.confine);
    let max_bytes = count("maxBytes", options.max_bytes)?;
    given(
        &mut converted.max_bytes,
        max_bytes.map(|bytes| Some(bytes as u64)),
    );
    given(&mut converted.head, options.head);
    Ok(converted)
}

fn to_js_contents(contents: Contents) -> NativeFileContents {
    NativeFileContents {
        encoding: natives_scan::text::classify(&contents.bytes)
            .name()
            .to_owned(),
        path: path_to_js(&contents.path),
        data: contents.bytes.into(),
        size: contents.size as f64,
        stamp: contents.stamp.token(),
        complete: contents.complete,
    }
}

/// The real location of `path` (see the TypeScript `realPath`): resolved
/// as `readFile` resolves it, links followed, and refused (`EXDEV`) when
/// `confine` and it leaves `cwd`. A missing tail is kept as named; a byte
/// of a name that is not UTF-8 crosses as the lone surrogate U+DC00 + byte.
#[napi(js_name = "nativeRealPath", ts_return_type = "Promise<string>")]
pub fn native_real_path(
    path: Utf16String,
    cwd: Utf16String,
    confine: bool,
) -> AsyncTask<Work<Utf16String>> {
    task(move || {
        let scope = Scope::new(&path_from_js(&cwd, "cwd")?, confine)?;
        let location = scope.locate(&path_from_js(&path, "path")?, Last::Follow)?;
        Ok(path_to_js(&location.real_path()))
    })
}

/// What a change does.
#[napi(string_enum = "lowercase")]
pub enum FileChangeOp {
    /// Create or replace a file.
    Write,
    /// Delete an entry.
    Delete,
    /// Rename an entry to a path that does not exist.
    Rename,
}

/// One change in a batch.
#[napi(object)]
pub struct NativeFileChange {
    /// What the change does.
    pub op: FileChangeOp,
    /// The file written or deleted; a rename's source.
    pub path: Utf16String,
    /// A rename's destination.
    pub to: Option<Utf16String>,
    /// A write's new contents.
    pub data: Option<Buffer>,
    /// The version that was read: refuse (`ESTALE`) if the file changed since.
    pub stamp: Option<String>,
    /// The path must not exist yet (`EEXIST` otherwise).
    pub create: Option<bool>,
    /// Make a written file executable (execute wherever read is allowed) or
    /// not (default: an existing file keeps its mode; a new one is not).
    pub executable: Option<bool>,
}

/// What one change did.
#[napi(object)]
pub struct NativeChangeOutcome {
    /// The real path written, deleted, or renamed to.
    pub path: Utf16String,
    /// A write created the file.
    pub created: bool,
}

/// What the native `applyFileChanges` resolves with.
#[napi(object)]
pub struct NativeAppliedChanges {
    /// One per change, in order.
    pub outcomes: Vec<NativeChangeOutcome>,
    /// Every real path that appeared, changed or vanished.
    pub touched: Vec<Utf16String>,
}

/// Make every change or none (see the TypeScript `applyFileChanges`).
#[napi(
    js_name = "nativeApplyFileChanges",
    ts_return_type = "Promise<NativeAppliedChanges>"
)]
pub fn native_apply_file_changes(
    cwd: Utf16String,
    confine: Option<bool>,
    changes: Vec<NativeFileChange>,
) -> AsyncTask<Work<NativeAppliedChanges>> {
    // Buffers are copied here, on the JS thread, before the work leaves it.
    let converted = guarded(|| {
        changes
            .into_iter()
            .map(to_change)
            .collect::<Result<Vec<_>, _>>()
    });
    task(move || {
        let mut options = ApplyOptions::default();
        given(&mut options.confine, confine);
        let scope = Scope::new(&path_from_js(&cwd, "cwd")?, options.confine)?;
        natives_files::apply(&scope, &converted?).map(to_js_applied)
    })
}

fn to_change(change: NativeFileChange) -> Result<Change, Error> {
    let path = path_from_js(&change.path, "path")?;
    let expect = expectation(&change, &path)?;
    match change.op {
        FileChangeOp::Write => Ok(Change::Write {
            data: change.data.map(|data| data.to_vec()).ok_or_else(|| {
                Error::invalid(format!("write of {}: data is missing", path.display()))
            })?,
            path,
            expect,
            executable: change.executable,
        }),
        FileChangeOp::Delete => Ok(Change::Delete { path, expect }),
        FileChangeOp::Rename => Ok(Change::Rename {
            to: match &change.to {
                Some(to) => path_from_js(to, "to")?,
                None => {
                    return Err(Error::invalid(format!(
                        "rename of {}: to is missing",
                        path.display()
                    )));
                }
            },
            from: path,
            expect,
        }),
    }
}

fn expectation(change: &NativeFileChange, path: &Path) -> Result<Expect, Error> {
    match (&change.stamp, change.create) {
        (Some(_), Some(true)) => Err(Error::invalid(format!(
            "{}: stamp and create contradict each other",
            path.display()
        ))),
        (Some(stamp), _) => Ok(Expect::Unchanged(Stamp::parse(stamp)?)),
        (None, Some(true)) => Ok(Expect::Absent),
        (None, _) => Ok(Expect::default()),
    }
}

fn to_js_applied(applied: Applied) -> NativeAppliedChanges {
    NativeAppliedChanges {
        outcomes: applied
            .outcomes
            .iter()
            .map(|outcome| NativeChangeOutcome {
                path: path_to_js(&outcome.path),
                created: outcome.created,
            })
            .collect(),
        touched: applied
            .touched
            .iter()
            .map(|path| path_to_js(path))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_left_out_keep_the_library_defaults() {
        let options = NativeReadFileOptions {
            cwd: String::from("/").into(),
            confine: None,
            max_bytes: None,
            head: None,
        };
        assert_eq!(read_options(&options).unwrap(), ReadOptions::default());
    }
}
