//! One error type for every library crate, with a kind that maps to a stable code.
//!
//! Every front (the N-API addon, the CLI) shows users the same code for the
//! same failure, so the mapping from [`ErrorKind`] to a code lives here, once.
//! The underlying [`io::Error`] is kept so callers can still inspect the OS
//! error (for example to tell `ENOENT` from `EACCES`).

use std::{fmt, io, path::Path};

/// What went wrong, independent of the message wording.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A path given by the caller does not exist.
    NotFound,
    /// A path given by the caller exists but is not a directory.
    NotADirectory,
    /// The OS refused access to a path given by the caller.
    PermissionDenied,
    /// An argument is malformed: a bad glob, an empty pattern, a bad limit.
    InvalidInput,
    /// The caller's cancellation token was triggered.
    Aborted,
    /// The caller's deadline passed before the work finished.
    TimedOut,
    /// Someone else holds what the caller asked for (a lease, a claim).
    Busy,
    /// A path given by the caller is a directory where a file was expected.
    IsADirectory,
    /// A path given by the caller is a FIFO, socket or device where a
    /// regular file was expected (opening one could block or never end).
    NotARegularFile,
    /// A path resolves outside the directory it must stay in (through `..`
    /// or a symlink).
    OutsideRoot,
    /// A file is larger than the operation accepts.
    TooLarge,
    /// A file is marked read-only (no write permission for the caller), so
    /// it is not replaced even where the directory would allow it.
    ReadOnly,
    /// A file has more than one hard link: replacing it would leave the
    /// other names holding the old contents.
    HardLinked,
    /// A file changed, appeared or vanished between being read and being
    /// written.
    Changed,
    /// A path that must not exist yet does.
    AlreadyExists,
    /// What the caller asked to change belongs to another OS user (as
    /// `kill` answers for another user's process).
    NotOwner,
    /// The environment lacks what the operation needs (a program too old
    /// to be relied on).
    Unsupported,
    /// Stored data fails a check of its integrity (a checksum, a hash, a
    /// regenerated copy): it cannot be trusted.
    Corrupt,
    /// A path is longer than the system resolves (`PATH_MAX`), or a name
    /// in it longer than a filesystem allows.
    NameTooLong,
    /// A path names nothing, but a name in it is a lossy copy of a name on
    /// disk that is not UTF-8 (U+FFFD where that name has other bytes): it
    /// was copied from a listing that lost bytes.
    LossyName,
    /// Any other I/O failure.
    Io,
}

impl ErrorKind {
    /// The stable, errno-style code shown to users (`ENOENT`, `EINVAL`, ...).
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "ENOENT",
            ErrorKind::NotADirectory => "ENOTDIR",
            ErrorKind::PermissionDenied => "EACCES",
            ErrorKind::InvalidInput => "EINVAL",
            ErrorKind::Aborted => "ABORT_ERR",
            ErrorKind::TimedOut => "ETIMEDOUT",
            ErrorKind::Busy => "EBUSY",
            ErrorKind::IsADirectory => "EISDIR",
            // BSD's errno for "inappropriate file type"; Linux has none closer.
            ErrorKind::NotARegularFile => "EFTYPE",
            // What openat2's RESOLVE_BENEATH answers for an escaping path.
            ErrorKind::OutsideRoot => "EXDEV",
            ErrorKind::TooLarge => "EFBIG",
            ErrorKind::ReadOnly => "EPERM",
            ErrorKind::HardLinked => "EMLINK",
            ErrorKind::Changed => "ESTALE",
            ErrorKind::AlreadyExists => "EEXIST",
            ErrorKind::NotOwner => "EPERM",
            ErrorKind::Unsupported => "ENOTSUP",
            // What the kernel answers when data fails its verification.
            ErrorKind::Corrupt => "EBADMSG",
            ErrorKind::NameTooLong => "ENAMETOOLONG",
            // "Illegal byte sequence": the bytes of the name were lost.
            ErrorKind::LossyName => "EILSEQ",
            ErrorKind::Io => "EIO",
        }
    }

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

/// An error with its kind, a message naming the offending input, and the OS
/// error behind it when there is one.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    source: Option<io::Error>,
}

impl Error {
    /// An error of `kind` with a message that names the input at fault.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// An I/O error on `path`, classified by the OS error's kind.
    pub fn io(path: &Path, err: io::Error) -> Error {
        Error {
            kind: ErrorKind::from_io(&err),
            message: format!("{}: {err}", path.display()),
            source: Some(err),
        }
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

    #[test]
    fn display_leads_with_the_code() {
        let err = Error::invalid("bad glob `a[`");
        assert_eq!(err.to_string(), "EINVAL: bad glob `a[`");
    }
}
