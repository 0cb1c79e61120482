//! What every natives library crate shares, defined once:
//!
//! - [`Error`] with its [`ErrorKind`]: the one mapping from a failure to the
//!   stable code users see (`ENOENT`, `EINVAL`, `EBUSY`, ...), keeping the OS
//!   error behind it.
//! - [`CancelToken`]: the one cancellation flag (with an optional deadline)
//!   that long work polls, so an `AbortSignal` or a `timeoutMs` stops it.
//! - [`names`]: file names that are not UTF-8 carried losslessly through
//!   UTF-16 (JS) text, one escape per stray byte.
//! - [`resolve`]: where a path really lands, walked one component at a time
//!   through held directory handles as the kernel would walk it; what a
//!   write is confined by and what a cache invalidation names.
//! - [`view`]: how the views the fronts hand out spell a number, so JSON, JS
//!   objects and TypeScript types agree.
//!
//! # Example
//!
//! ```
//! use natives_core::{CancelToken, ErrorKind};
//!
//! let token = CancelToken::new();
//! assert!(token.check().is_ok());
//! token.cancel();
//! assert_eq!(token.check().unwrap_err().kind(), ErrorKind::Aborted);
//! ```

pub mod cancel;
pub mod error;
pub mod names;
pub mod resolve;
pub mod view;

pub use cancel::CancelToken;
pub use error::{Error, ErrorKind, Result};
