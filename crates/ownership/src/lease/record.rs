//! What a lease record says, and the verdicts read from it.

use std::path::{Path, PathBuf};

use natives_core::{Error, ErrorKind};
use serde::{Deserialize, Serialize};

use natives_system::process::{self, ProcessIdentity, now_ms};

/// Who is holding, or wants, a cache directory.
///
/// `run`, `node` and `seat` say which job the borrower is; the process fields
/// say which process it is, so that neither a reused pid nor a reboot can
/// pass for it; `nonce` names one acquisition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Owner {
    /// The run (a job of the orchestrator) the borrower belongs to.
    pub run: String,
    /// The node (task) within the run.
    pub node: String,
    /// The seat (role) within the node.
    pub seat: String,
    /// The holder's process id.
    pub pid: u32,
    /// The worktree the build's source comes from, if any.
    pub worktree: Option<PathBuf>,
    /// The commit the build's source is at, if known.
    pub head: Option<String>,
    /// The holder's host name.
    pub host: String,
    /// The holder's machine id (with the host name, which machine it ran
    /// on); absent in records made where there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_id: Option<String>,
    /// The boot the holder started in.
    pub boot_id: Option<String>,
    /// The holder's start time, clock ticks since boot.
    pub start_time: Option<u64>,
    /// Names this acquisition; release deletes only a record carrying it.
    pub nonce: String,
}

impl Owner {
    /// The calling process, as borrower `run`/`node`/`seat`.
    pub fn current(run: &str, node: &str, seat: &str) -> Owner {
        let me = ProcessIdentity::current();
        Owner {
            run: run.to_owned(),
            node: node.to_owned(),
            seat: seat.to_owned(),
            pid: me.pid,
            worktree: None,
            head: None,
            host: me.host,
            machine_id: me.machine_id,
            boot_id: me.boot_id,
            start_time: me.start_time,
            nonce: process::nonce(),
        }
    }

    /// Refuse (`EINVAL`, naming the field) an owner whose run, node or seat
    /// is empty: a lease must say who holds it.
    pub fn check(&self) -> natives_core::Result<()> {
        for (field, value) in [
            ("run", &self.run),
            ("node", &self.node),
            ("seat", &self.seat),
        ] {
            if value.is_empty() {
                return Err(Error::invalid(format!(
                    "owner.{field} must be a non-empty string"
                )));
            }
        }
        Ok(())
    }

    /// The same owner, building from `worktree` at `head`.
    pub fn building(mut self, worktree: PathBuf, head: String) -> Owner {
        self.worktree = Some(worktree);
        self.head = Some(head);
        self
    }

    /// `run/node/seat (pid P on HOST)`, for messages.
    pub fn describe(&self) -> String {
        format!(
            "{}/{}/{} (pid {} on {})",
            self.run, self.node, self.seat, self.pid, self.host
        )
    }

    /// Whether this owner's process may still be alive, judged from here:
    /// an owner on another host (see [`process::on_this_host`]) always may.
    pub(crate) fn may_be_alive(&self) -> bool {
        let boot_id = self.boot_id.as_deref();
        !process::on_this_host(&self.host, self.machine_id.as_deref(), boot_id)
            || process::pid_alive(self.pid, self.start_time, boot_id)
    }
}

/// The record of one held lease, as stored on disk.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeaseRecord {
    /// The record format; this crate writes and reads version 1 only.
    pub version: u32,
    /// The cache directory's canonical id.
    pub dir: PathBuf,
    /// Who holds it.
    pub owner: Owner,
    /// When it was acquired, milliseconds since the Unix epoch.
    pub acquired_at_ms: u64,
}

/// The only record version this crate reads or writes.
pub(crate) const RECORD_VERSION: u32 = 1;

impl LeaseRecord {
    pub(crate) fn new(dir: PathBuf, owner: Owner) -> LeaseRecord {
        LeaseRecord {
            version: RECORD_VERSION,
            dir,
            owner,
            acquired_at_ms: now_ms(),
        }
    }

    /// Parse a record; anything but a whole version-1 record is a fault
    /// saying what is wrong with it.
    pub(crate) fn parse(bytes: &[u8]) -> Result<LeaseRecord, RecordFault> {
        if bytes.is_empty() {
            return Err(RecordFault::Empty);
        }
        // Records are written ending in a newline: one without it was cut short.
        if !bytes.ends_with(b"\n") {
            return Err(RecordFault::Truncated);
        }
        let record: LeaseRecord = serde_json::from_slice(bytes)
            .map_err(|err| RecordFault::Unreadable(err.to_string()))?;
        if record.version != RECORD_VERSION {
            return Err(RecordFault::Version(record.version));
        }
        Ok(record)
    }

    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a lease record serialises");
        bytes.push(b'\n');
        bytes
    }
}

/// What is wrong with a lease record that cannot be trusted: the lease
/// is then in an unknown state, never reclaimed automatically.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordFault {
    /// The file is empty.
    Empty,
    /// The record does not end in its final newline: it was cut short.
    Truncated,
    /// Not a lease record's JSON (what the parser said).
    Unreadable(String),
    /// A whole record of another version.
    Version(u32),
}

impl std::fmt::Display for RecordFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordFault::Empty => write!(f, "empty lease record"),
            RecordFault::Truncated => write!(f, "truncated lease record (no final newline)"),
            RecordFault::Unreadable(why) => write!(f, "unreadable lease record: {why}"),
            RecordFault::Version(version) => write!(f, "lease record version {version} is not 1"),
        }
    }
}

/// Where a lease's classification lands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Nobody holds it.
    Free,
    /// A live owner holds it; `None` while a new holder has taken the lock
    /// but not yet written its record.
    Active(Option<LeaseRecord>),
    /// The record's owner is dead: the next acquirer reclaims it.
    Stale(LeaseRecord),
    /// The record cannot be read (why): never reclaimed automatically.
    Unknown(String),
}

impl Status {
    /// `Active` and `Unknown` count as in use.
    pub fn in_use(&self) -> bool {
        matches!(self, Status::Active(_) | Status::Unknown(_))
    }

    /// The status as the word every front shows: `free`, `active`,
    /// `stale` or `unknown`.
    pub fn name(&self) -> &'static str {
        match self {
            Status::Free => "free",
            Status::Active(_) => "active",
            Status::Stale(_) => "stale",
            Status::Unknown(_) => "unknown",
        }
    }
}

/// Which lease a holder has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The cache lease, held for a build.
    Build,
    /// The output lease, held by process cleanup.
    Cleanup,
}

/// A live holder, as far as its record tells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    /// Which lease it holds.
    pub role: Role,
    /// Its record (`None` while it is being written).
    pub record: Option<LeaseRecord>,
}

impl Holder {
    /// Who holds it, for messages.
    pub fn describe(&self) -> String {
        let who = self
            .record
            .as_ref()
            .map(|r| r.owner.describe())
            .unwrap_or_else(|| "a new holder still writing its record".to_owned());
        match self.role {
            Role::Build => who,
            Role::Cleanup => format!("process cleanup by {who}"),
        }
    }
}

/// Why an acquisition did not hand back a guard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Busy {
    /// A live owner holds the lease, or process cleanup still owns its outputs.
    Active(Box<Holder>),
    /// The lease record cannot be read (why); a human must look.
    Unknown(String),
    /// Another acquirer got there in the same instant; try again.
    Contended,
}

impl Busy {
    /// The `EBUSY` error for `cache_dir`, naming who or what is in the way.
    pub fn to_error(&self, cache_dir: &Path) -> Error {
        Error::new(
            ErrorKind::Busy,
            format!("{}: build cache {}", cache_dir.display(), self.describe()),
        )
    }

    /// Who or what is in the way, for messages.
    pub fn describe(&self) -> String {
        match self {
            Busy::Active(holder) => format!("held by {}", holder.describe()),
            Busy::Unknown(why) => format!("in an unknown state ({why})"),
            Busy::Contended => "contended by another acquirer".to_owned(),
        }
    }
}

/// What releasing a lease on a human's behalf did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Released {
    /// Nobody held it.
    Nothing,
    /// A dead owner's record was removed.
    Dead(Box<LeaseRecord>),
    /// An unreadable record was renamed aside (kept whole).
    MovedAside {
        /// Where the record now is.
        to: PathBuf,
        /// Why it could not be read.
        why: String,
    },
}

/// Where a lease stands.
#[cfg_attr(feature = "napi", napi_derive::napi(string_enum = "lowercase"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LeaseStatus {
    /// Nobody holds it.
    Free,
    /// A live owner holds it.
    Active,
    /// Its owner died without releasing it: the next acquirer reclaims it.
    Stale,
    /// Its record cannot be read: never reclaimed automatically.
    Unknown,
}

impl LeaseStatus {
    /// Where `status` stands, as a word.
    pub fn of(status: &Status) -> LeaseStatus {
        match status {
            Status::Free => LeaseStatus::Free,
            Status::Active(_) => LeaseStatus::Active,
            Status::Stale(_) => LeaseStatus::Stale,
            Status::Unknown(_) => LeaseStatus::Unknown,
        }
    }

    /// The status as the views spell it (`free`, `active`, `stale`,
    /// `unknown`).
    pub fn name(self) -> &'static str {
        match self {
            LeaseStatus::Free => "free",
            LeaseStatus::Active => "active",
            LeaseStatus::Stale => "stale",
            LeaseStatus::Unknown => "unknown",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each way a record falls short is named, and a whole record parses.
    #[test]
    fn a_record_that_falls_short_says_how() {
        let owner = Owner::current("run", "node", "seat");
        let whole = LeaseRecord::new(PathBuf::from("/cache"), owner).to_bytes();
        let mut other_version = String::from_utf8(whole.clone()).unwrap();
        other_version = other_version.replace("\"version\": 1", "\"version\": 2");
        let table: &[(&[u8], Option<RecordFault>)] = &[
            (&whole, None),
            (b"", Some(RecordFault::Empty)),
            (&whole[..whole.len() - 1], Some(RecordFault::Truncated)),
            (other_version.as_bytes(), Some(RecordFault::Version(2))),
        ];
        for (bytes, fault) in table {
            assert_eq!(LeaseRecord::parse(bytes).err(), *fault);
        }
        let garbage = LeaseRecord::parse(b"{not json\n").unwrap_err();
        assert!(matches!(garbage, RecordFault::Unreadable(_)), "{garbage}");
        assert!(garbage.to_string().starts_with("unreadable lease record: "));
    }
}
