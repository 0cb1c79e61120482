//! One error type for every library crate, with a kind that maps to a stable code.
//!
//! Every front (the N-API addon, the CLI) shows users the same code for the
//! same failure, so the mapping from [`ErrorKind`] to a code lives here, once.
//! The underlying [`io::Error`] is kept so callers can still inspect the OS
//! error (for example to tell `ENOENT` from `EACCES`).
//!
//! What was wrong travels as data beside the message (the path, the option
//! and its value), so a caller that must tell one bad argument from another
//! reads a field instead of parsing the message or trying the input again.

use std::{
    fmt, io,
    path::{Path, PathBuf},
};

/// Declares [`ErrorKind`] and its code from one table, so the kinds, their
/// codes and the documentation of each (which the TypeScript list of codes is
/// generated from) cannot drift apart.
macro_rules! error_kinds {
    ($($(#[doc = $doc:literal])+ $kind:ident => $code:literal,)+) => {
        /// What went wrong, independent of the message wording.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorKind {
            $($(#[doc = $doc])+ $kind,)+
        }

        impl ErrorKind {
            /// Every kind, in the order of the table.
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$kind),+];

            /// The stable, errno-style code shown to users (`ENOENT`, `EINVAL`, ...).
            pub fn code(self) -> &'static str {
                match self {
                    $(ErrorKind::$kind => $code,)+
                }
            }

            /// The kind's documentation, one line per line of its doc comment
            /// (read by the test that renders the TypeScript list of codes).
            #[cfg(test)]
            fn doc(self) -> &'static str {
                match self {
                    $(ErrorKind::$kind => concat!($($doc, "\n"),+),)+
                }
            }
        }
    };
}

error_kinds! {
    /// A path given by the caller does not exist.
    NotFound => "ENOENT",
    /// A path given by the caller exists but is not a directory.
    NotADirectory => "ENOTDIR",
    /// The OS refused access to a path given by the caller.
    PermissionDenied => "EACCES",
    /// An argument is malformed: a bad glob, an empty pattern, a bad limit.
    InvalidInput => "EINVAL",
    /// The caller's cancellation token was triggered.
    Aborted => "ABORT_ERR",
    /// The caller's deadline passed before the work finished.
    TimedOut => "ETIMEDOUT",
    /// Someone else holds what the caller asked for (a lease, a claim).
    Busy => "EBUSY",
    /// A path given by the caller is a directory where a file was expected.
    IsADirectory => "EISDIR",
    /// A path given by the caller is a FIFO, socket or device where a
    /// regular file was expected (opening one could block or never end).
    // BSD's errno for "inappropriate file type"; Linux has none closer.
    NotARegularFile => "EFTYPE",
    /// A path resolves outside the directory it must stay in (through `..`
    /// or a symlink).
    // What openat2's RESOLVE_BENEATH answers for an escaping path.
    OutsideRoot => "EXDEV",
    /// A file, or a result's text, is larger than the operation accepts.
    TooLarge => "EFBIG",
    /// A file is marked read-only (no write permission for the caller), so
    /// it is not replaced even where the directory would allow it.
    ReadOnly => "EPERM",
    /// A file has more than one hard link: replacing it would leave the
    /// other names holding the old contents.
    HardLinked => "EMLINK",
    /// A file changed, appeared or vanished between being read and being
    /// written.
    Changed => "ESTALE",
    /// A path that must not exist yet does.
    AlreadyExists => "EEXIST",
    /// What the caller asked to change belongs to another OS user (as
    /// `kill` answers for another user's process).
    NotOwner => "EPERM",
    /// The environment lacks what the operation needs (a program too old
    /// to be relied on).
    Unsupported => "ENOTSUP",
    /// Stored data fails a check of its integrity (a checksum, a hash, a
    /// regenerated copy): it cannot be trusted.
    // What the kernel answers when data fails its verification.
    Corrupt => "EBADMSG",
    /// A path is longer than the system resolves (`PATH_MAX`), or a name
    /// in it longer than a filesystem allows.
    NameTooLong => "ENAMETOOLONG",
    /// A path names nothing, but a name in it is a lossy copy of a name on
    /// disk that is not UTF-8 (U+FFFD where that name has other bytes): it
    /// was copied from a listing that lost bytes.
    // "Illegal byte sequence": the bytes of the name were lost.
    LossyName => "EILSEQ",
    /// Any other I/O failure.
    Io => "EIO",
}

impl ErrorKind {
    fn from_io(err: &io::Error) -> ErrorKind {
        match err.kind() {
            io::ErrorKind::NotFound => ErrorKind::NotFound,
            io::ErrorKind::NotADirectory => ErrorKind::NotADirectory,
            io::ErrorKind::PermissionDenied => ErrorKind::PermissionDenied,
            io::ErrorKind::IsADirectory => ErrorKind::IsADirectory,
            io::ErrorKind::AlreadyExists => ErrorKind::AlreadyExists,
            io::ErrorKind::FileTooLarge => ErrorKind::TooLarge,
            io::ErrorKind::InvalidFilename => ErrorKind::NameTooLong,
            _ => ErrorKind::Io,
        }
    }
}

/// An error with its kind, a message naming the offending input, the OS
/// error behind it when there is one, and what was wrong as data.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    source: Option<io::Error>,
    path: Option<PathBuf>,
    option: Option<BadOption>,
}

/// The caller's option at fault, by its name, and the value it was given.
#[derive(Debug)]
struct BadOption {
    name: &'static str,
    value: String,
}

impl Error {
    /// An error of `kind` with a message that names the input at fault.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            source: None,
            path: None,
            option: None,
        }
    }

    /// An I/O error on `path`, classified by the OS error's kind; the error
    /// names `path` ([`Error::path`]).
    pub fn io(path: &Path, err: io::Error) -> Error {
        Error {
            kind: ErrorKind::from_io(&err),
            message: format!("{}: {err}", path.display()),
            source: Some(err),
            path: Some(path.to_path_buf()),
            option: None,
        }
    }

    /// This error, naming `path` as the one at fault.
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Error {
        self.path = Some(path.into());
        self
    }

    /// This error, naming the caller's option `name` (as the caller spells
    /// it: `pattern`, `glob`, `type`) and the `value` it was given as the
    /// one at fault.
    pub fn with_option(mut self, name: &'static str, value: impl Into<String>) -> Error {
        self.option = Some(BadOption {
            name,
            value: value.into(),
        });
        self
    }

    /// A bad argument (`EINVAL`).
    pub fn invalid(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidInput, message)
    }

    /// The kind of this error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// Shorthand for `self.kind().code()`.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// The message, without the code.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The OS error behind this one, if any.
    pub fn io_error(&self) -> Option<&io::Error> {
        self.source.as_ref()
    }

    /// The path at fault, when the error names one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The name of the caller's option at fault, when the error names one.
    pub fn option(&self) -> Option<&'static str> {
        self.option.as_ref().map(|option| option.name)
    }

    /// The value the option at fault was given, when the error names one.
    pub fn value(&self) -> Option<&str> {
        self.option.as_ref().map(|option| option.value.as_str())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code(), self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_keep_their_kind_and_source() {
        let table = [
            (io::ErrorKind::NotFound, "ENOENT"),
            (io::ErrorKind::NotADirectory, "ENOTDIR"),
            (io::ErrorKind::PermissionDenied, "EACCES"),
            (io::ErrorKind::IsADirectory, "EISDIR"),
            (io::ErrorKind::AlreadyExists, "EEXIST"),
            (io::ErrorKind::FileTooLarge, "EFBIG"),
            (io::ErrorKind::InvalidFilename, "ENAMETOOLONG"),
            (io::ErrorKind::Other, "EIO"),
        ];
        for (io_kind, code) in table {
            let err = Error::io(Path::new("/x/y"), io::Error::from(io_kind));
            assert_eq!(err.code(), code, "{io_kind:?}");
            assert!(err.message().starts_with("/x/y: "), "{}", err.message());
            assert_eq!(err.io_error().map(io::Error::kind), Some(io_kind));
            assert_eq!(err.path(), Some(Path::new("/x/y")));
        }
    }

    #[test]
    fn every_kind_has_its_stable_code() {
        let table = [
            (ErrorKind::NotFound, "ENOENT"),
            (ErrorKind::NotADirectory, "ENOTDIR"),
            (ErrorKind::PermissionDenied, "EACCES"),
            (ErrorKind::InvalidInput, "EINVAL"),
            (ErrorKind::Aborted, "ABORT_ERR"),
            (ErrorKind::TimedOut, "ETIMEDOUT"),
            (ErrorKind::Busy, "EBUSY"),
            (ErrorKind::IsADirectory, "EISDIR"),
            (ErrorKind::NotARegularFile, "EFTYPE"),
            (ErrorKind::OutsideRoot, "EXDEV"),
            (ErrorKind::TooLarge, "EFBIG"),
            (ErrorKind::ReadOnly, "EPERM"),
            (ErrorKind::HardLinked, "EMLINK"),
            (ErrorKind::Changed, "ESTALE"),
            (ErrorKind::AlreadyExists, "EEXIST"),
            (ErrorKind::NotOwner, "EPERM"),
            (ErrorKind::Unsupported, "ENOTSUP"),
            (ErrorKind::Corrupt, "EBADMSG"),
            (ErrorKind::NameTooLong, "ENAMETOOLONG"),
            (ErrorKind::LossyName, "EILSEQ"),
            (ErrorKind::Io, "EIO"),
        ];
        for (kind, code) in table {
            assert_eq!(kind.code(), code, "{kind:?}");
        }
    }

    /// Where the TypeScript list of codes lives, generated from [`ErrorKind`].
    const TYPESCRIPT_CODES: &str = "../../packages/natives/src/error-codes.ts";

    /// The TypeScript module listing every code, each with the documentation
    /// of the kinds that report it (in table order, a code once).
    fn typescript_codes() -> String {
        let mut out = String::from(concat!(
            "// Generated from `ErrorKind` in crates/core/src/error.rs; do not edit. After changing\n",
            "// that table, run `NATIVES_WRITE_CODES=1 cargo test -p natives-core error` to rewrite it.\n",
            "\n",
            "/** Every code the library rejects with, and what it means. */\n",
            "export const ERROR_CODES = {\n",
        ));
        let mut seen = Vec::new();
        for kind in ErrorKind::ALL {
            if seen.contains(&kind.code()) {
                continue;
            }
            seen.push(kind.code());
            let docs: Vec<&str> = ErrorKind::ALL
                .iter()
                .filter(|other| other.code() == kind.code())
                .flat_map(|other| other.doc().lines().map(str::trim))
                .collect();
            let text = docs.join(" ").replace('\\', "\\\\").replace('\'', "\\'");
            out.push_str(&format!("  {}: '{text}',\n", kind.code()));
        }
        out.push_str("} as const;\n\n/** A code from {@link ERROR_CODES}. */\n");
        out.push_str("export type ErrorCode = keyof typeof ERROR_CODES;\n");
        out
    }

    #[test]
    fn typescript_codes_match_the_kinds() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(TYPESCRIPT_CODES);
        let expected = typescript_codes();
        if std::env::var_os("NATIVES_WRITE_CODES").is_some() {
            std::fs::write(&path, &expected).unwrap();
        }
        let actual = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            actual == expected,
            "{} differs from ErrorKind: run `NATIVES_WRITE_CODES=1 cargo test -p natives-core error`",
            path.display()
        );
    }

    #[test]
    fn what_was_wrong_travels_as_data() {
        let plain = Error::invalid("bad");
        assert_eq!(
            (plain.path(), plain.option(), plain.value()),
            (None, None, None)
        );
        let err = Error::invalid("invalid regex `a(`")
            .with_option("pattern", "a(")
            .with_path("/x");
        assert_eq!(err.option(), Some("pattern"));
        assert_eq!(err.value(), Some("a("));
        assert_eq!(err.path(), Some(Path::new("/x")));
        assert_eq!(err.message(), "invalid regex `a(`");
    }

    #[test]
    fn display_leads_with_the_code() {
        let err = Error::invalid("bad glob `a[`");
        assert_eq!(err.to_string(), "EINVAL: bad glob `a[`");
    }
}
