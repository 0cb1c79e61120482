//! What the registry's records say, and how records of older schema
//! versions are read.
//!
//! Every record carries a `version`. A record written by an older natives
//! is migrated in memory when it is read, one version at a time, and only
//! rewritten (in the current version) when something changes it; reading
//! never rewrites the store. A record written by a newer natives is read as
//! far as this one understands it and never rewritten: a rewrite could drop
//! a meaning this version does not know. Fields this version does not know
//! are kept, at every level, through every rewrite.
//!
//! Schema versions:
//! 1. The first: the worktree root as `root`, candidates as an object keyed
//!    by name, at most one released branch (`releasedBranch`).
//! 2. The current one: `worktreeRoot`, candidates as a list carrying their
//!    name and whether they were folded, seats, `releasedBranches`.

use std::path::{Path, PathBuf};

use natives_core::{Error, ErrorKind, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The schema version this natives writes.
pub const SCHEMA_VERSION: u32 = 2;

/// Where a run stands.
#[cfg_attr(feature = "napi", napi_derive::napi(string_enum = "lowercase"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Being worked on.
    Running,
    /// Waiting on something outside it.
    Blocked,
    /// Ended without a result.
    Failed,
    /// Not heard from for too long.
    Stale,
    /// Put aside, to be resumed.
    Parked,
    /// A later run took its place.
    Superseded,
    /// Its result is being merged: its worktrees are never released.
    Landing,
    /// Finished.
    Done,
}

impl Status {
    /// Every status, in the order above.
    pub const ALL: [Status; 8] = [
        Status::Running,
        Status::Blocked,
        Status::Failed,
        Status::Stale,
        Status::Parked,
        Status::Superseded,
        Status::Landing,
        Status::Done,
    ];

    /// The status as records and users write it (`running`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Blocked => "blocked",
            Status::Failed => "failed",
            Status::Stale => "stale",
            Status::Parked => "parked",
            Status::Superseded => "superseded",
            Status::Landing => "landing",
            Status::Done => "done",
        }
    }

    /// The status named `name`, if any.
    pub fn parse(name: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|status| status.name() == name)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A worktree a run made for one attempt at the task, on its own branch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    /// Its name within the run (`A`, `B`, ...).
    pub name: String,
    /// The branch checked out there (short name, `refs/heads/` left out).
    pub branch: String,
    /// The worktree (canonical when recorded by the registry).
    pub path: PathBuf,
    /// The commit it started from, if recorded.
    #[serde(default)]
    pub base: Option<String>,
    /// Its worktree was released (handed over): the run no longer owns it.
    #[serde(default)]
    pub folded: bool,
    /// The handover that folded it, while folded by one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handover: Option<String>,
    /// What it was granted.
    #[serde(default, skip_serializing_if = "Authority::is_none")]
    pub authority: Authority,
    /// Fields written by other versions, kept as they are.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Candidate {
    /// Its name as a source copy (`candidate-A`): `candidate-` and its
    /// name when that is safe in a file name, else a digest of it.
    pub fn source_name(&self) -> String {
        let name = &self.name;
        let safe = !name.is_empty()
            && name.len() <= 64
            && !name.starts_with('.')
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
        match safe {
            true => format!("candidate-{name}"),
            false => format!(
                "candidate-{}",
                &natives_system::paths::slug(Path::new(name))[..16]
            ),
        }
    }

    /// A candidate `name` on `branch` at `path`, not folded.
    pub fn new(name: &str, branch: &str, path: &Path) -> Candidate {
        Candidate {
            name: name.to_owned(),
            branch: branch.to_owned(),
            path: path.to_owned(),
            base: None,
            folded: false,
            handover: None,
            authority: Authority::default(),
            extra: Map::new(),
        }
    }
}

/// What an orchestrator granted a source copy (a candidate or a seat). Any
/// grant keeps the copy on disk: housekeeping never evicts it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Authority {
    /// Its work was made public (pushed, published, proposed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub public: bool,
    /// It was selected as the source to recover the task from.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub selected_recovery: bool,
    /// Its work was approved.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub approved: bool,
    /// Someone asked for its source to be kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub retain: bool,
    /// Fields written by other versions, kept as they are.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Authority {
    /// Nothing granted, nothing unknown: what a copy carries by default.
    pub fn is_none(&self) -> bool {
        *self == Authority::default()
    }
}

/// What a seat does.
#[cfg_attr(feature = "napi", napi_derive::napi(string_enum = "lowercase"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeatKind {
    /// Reviews a candidate.
    Review,
    /// Judges between candidates.
    Judge,
    /// Advises.
    Advisor,
}

impl SeatKind {
    /// The kind as records and users write it (`review`, ...).
    pub fn name(self) -> &'static str {
        match self {
            SeatKind::Review => "review",
            SeatKind::Judge => "judge",
            SeatKind::Advisor => "advisor",
        }
    }
}

/// A worktree a run made for a role (`review 1`, `judge 2`, ...).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Seat {
    /// The role.
    pub kind: SeatKind,
    /// Which one of that role (1, 2, ...).
    pub number: u32,
    /// Its worktree (canonical when recorded by the registry).
    pub path: PathBuf,
    /// The base commit it looks from, if recorded.
    #[serde(default)]
    pub base_head: Option<String>,
    /// The commit under review, if recorded.
    #[serde(default)]
    pub review_head: Option<String>,
    /// What it was granted.
    #[serde(default, skip_serializing_if = "Authority::is_none")]
    pub authority: Authority,
    /// Fields written by other versions, kept as they are.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Seat {
    /// Its name as a source copy (`review-1`, `judge-2`).
    pub fn source_name(&self) -> String {
        format!("{}-{}", self.kind.name(), self.number)
    }

    /// Seat `kind` number `number` at `path`.
    pub fn new(kind: SeatKind, number: u32, path: &Path) -> Seat {
        Seat {
            kind,
            number,
            path: path.to_owned(),
            base_head: None,
            review_head: None,
            authority: Authority::default(),
            extra: Map::new(),
        }
    }
}

/// What happened to a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EventKind {
    /// The run was recorded.
    Created,
    /// Its status changed (`note`: the new status).
    Status,
    /// A candidate was added (`note`: its name).
    Candidate,
    /// A seat was added (`note`: its kind and number).
    Seat,
    /// A candidate's worktree was released to another run (`to`), the
    /// record written before anything was removed.
    Released,
    /// The released worktree passed its content proof and is being removed.
    Removing,
    /// A release was rolled back (`note`: why).
    Undone,
    /// A released worktree was put back.
    Restored,
    /// A driver took the run (or held it while it was set running).
    Driven,
    /// A kind written by another version, kept as it is.
    #[serde(untagged)]
    Other(String),
}

/// One entry of a run's history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// What.
    pub kind: EventKind,
    /// The branch concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The run a worktree was released to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The handover concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handover: Option<String>,
    /// The worktree concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// The branch's commit at the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tip: Option<String>,
    /// The repository's main worktree, where a released worktree is put
    /// back from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<PathBuf>,
    /// What the run taking a worktree over declared regenerable (gitignore
    /// patterns): untracked paths they match went with the worktree.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub regenerable: Vec<String>,
    /// Anything else worth reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Fields written by other versions, kept as they are.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Event {
    /// An event of `kind`, now, with nothing else said.
    pub fn now(kind: EventKind) -> Event {
        Event {
            at_ms: natives_system::process::now_ms(),
            kind,
            branch: None,
            to: None,
            handover: None,
            path: None,
            tip: None,
            repo: None,
            regenerable: Vec::new(),
            note: None,
            extra: Map::new(),
        }
    }

    /// The same event with `note`.
    pub fn noting(mut self, note: impl Into<String>) -> Event {
        self.note = Some(note.into());
        self
    }
}

/// One run: an attempt at a task, with the worktrees it made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    /// The schema version it was written in ([`SCHEMA_VERSION`] once
    /// migrated; higher when written by a newer natives).
    pub version: u32,
    /// The run's id, unique in the registry.
    pub id: String,
    /// The task it attempts.
    pub task: String,
    /// Where it stands.
    pub status: Status,
    /// The directory its candidate worktrees are made in, directly.
    pub worktree_root: PathBuf,
    /// When it was recorded, in milliseconds since the Unix epoch.
    #[serde(default)]
    pub created_at_ms: u64,
    /// Its candidate worktrees.
    #[serde(default)]
    pub candidates: Vec<Candidate>,
    /// Its seats.
    #[serde(default)]
    pub seats: Vec<Seat>,
    /// The run its worktree was last released to.
    #[serde(default)]
    pub released_to: Option<String>,
    /// The branches whose worktrees were released.
    #[serde(default)]
    pub released_branches: Vec<String>,
    /// Its history, oldest first.
    #[serde(default)]
    pub events: Vec<Event>,
    /// The run it succeeds. Naming a predecessor borrows none of its copies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lineage: Option<String>,
    /// The source copy it recovers from, explicitly selected: that copy
    /// stays on disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<PathBuf>,
    /// Source copies of other runs it reads from: each stays on disk.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub source_paths: Vec<PathBuf>,
    /// Fields written by other versions, kept as they are.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl RunRecord {
    /// The candidate named `name`.
    pub fn candidate(&self, name: &str) -> Option<&Candidate> {
        self.candidates.iter().find(|c| c.name == name)
    }

    pub(crate) fn candidate_mut(&mut self, name: &str) -> Option<&mut Candidate> {
        self.candidates.iter_mut().find(|c| c.name == name)
    }

    /// The authority of the source copy named `source` (`review-1`,
    /// `candidate-A`; see [`Seat::source_name`], [`Candidate::source_name`]).
    pub fn authority_mut(&mut self, source: &str) -> Option<&mut Authority> {
        if let Some(seat) = self.seats.iter_mut().find(|s| s.source_name() == source) {
            return Some(&mut seat.authority);
        }
        self.candidates
            .iter_mut()
            .find(|c| c.source_name() == source)
            .map(|c| &mut c.authority)
    }

    /// Recorded as `running`, and no driver took the run since it was last
    /// set running (its `driven` events all come before): its driver may be
    /// on its way, so nobody can say yet that nobody drives it.
    pub fn awaiting_driver(&self) -> bool {
        if self.status != Status::Running {
            return false;
        }
        let last = |kind: fn(&EventKind) -> bool| self.events.iter().rposition(|e| kind(&e.kind));
        let set_running = last(|kind| matches!(kind, EventKind::Created | EventKind::Status));
        let driven = last(|kind| *kind == EventKind::Driven);
        match (set_running, driven) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(set), Some(driven)) => driven < set,
        }
    }

    /// The `released` event of handover `handover`.
    pub fn release_event(&self, handover: &str) -> Option<&Event> {
        self.events
            .iter()
            .find(|e| e.kind == EventKind::Released && e.handover.as_deref() == Some(handover))
    }

    /// Undo what handover `handover` wrote (its candidate unfolded, its
    /// branch no longer released), noting `kind` (`undone`, `restored`).
    pub(crate) fn take_back(&mut self, handover: &str, event: Event) {
        let branch = self.release_event(handover).and_then(|e| e.branch.clone());
        for candidate in &mut self.candidates {
            if candidate.handover.as_deref() == Some(handover) {
                candidate.folded = false;
                candidate.handover = None;
            }
        }
        if let Some(at) = self
            .released_branches
            .iter()
            .rposition(|b| Some(b) == branch.as_ref())
        {
            self.released_branches.remove(at);
        }
        self.events.push(event);
        self.released_to = self.latest_release_target();
    }

    /// The run the latest handover still in force released a worktree to.
    fn latest_release_target(&self) -> Option<String> {
        let in_force = |e: &&Event| {
            e.kind == EventKind::Released
                && self
                    .candidates
                    .iter()
                    .any(|c| c.folded && c.handover.is_some() && c.handover == e.handover)
        };
        self.events.iter().rev().find(in_force)?.to.clone()
    }
}

/// A task: what its runs attempt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRecord {
    /// The schema version it was written in.
    pub version: u32,
    /// The task's id.
    pub task: String,
    /// When it was recorded, in milliseconds since the Unix epoch.
    #[serde(default)]
    pub created_at_ms: u64,
    /// Source copies the task pins: each stays on disk.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pins: Vec<PathBuf>,
    /// Source copies chosen to replace the task's source: each stays on
    /// disk.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replacements: Vec<PathBuf>,
    /// Fields written by other versions, kept as they are.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One step from a schema version to the next.
type Migration = fn(Map<String, Value>) -> Result<Map<String, Value>, Unmigratable>;

/// What keeps a record of an older version from its next version's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Unmigratable {
    /// Version 1's `candidates` is not an object keyed by name.
    CandidatesNotKeyed,
    /// Version 1's candidate of this name is not an object.
    CandidateNotAnObject(String),
    /// Version 1's `releasedBranch` is neither a string nor null.
    ReleasedBranchNotAName,
}

impl std::fmt::Display for Unmigratable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unmigratable::CandidatesNotKeyed => {
                write!(f, "version 1 candidates must be an object keyed by name")
            }
            Unmigratable::CandidateNotAnObject(name) => {
                write!(f, "version 1 candidate {name} must be an object")
            }
            Unmigratable::ReleasedBranchNotAName => {
                write!(f, "version 1 releasedBranch must be a string or null")
            }
        }
    }
}

/// The steps from version 1 to [`SCHEMA_VERSION`], in order, for runs.
const RUN_MIGRATIONS: [Migration; 1] = [run_1_to_2];

/// Tasks kept their shape from version 1 to 2.
const TASK_MIGRATIONS: [Migration; 1] = [Ok];

/// Version 1 kept candidates keyed by name, the root as `root` and a single
/// released branch.
fn run_1_to_2(mut record: Map<String, Value>) -> Result<Map<String, Value>, Unmigratable> {
    if let Some(root) = record.remove("root") {
        record.insert("worktreeRoot".into(), root);
    }
    if let Some(candidates) = record.remove("candidates") {
        let Value::Object(by_name) = candidates else {
            return Err(Unmigratable::CandidatesNotKeyed);
        };
        let mut list = Vec::new();
        for (name, candidate) in by_name {
            let Value::Object(mut candidate) = candidate else {
                return Err(Unmigratable::CandidateNotAnObject(name));
            };
            candidate.insert("name".into(), Value::String(name));
            list.push(Value::Object(candidate));
        }
        record.insert("candidates".into(), Value::Array(list));
    }
    if let Some(branch) = record.remove("releasedBranch") {
        let branches = match branch {
            Value::Null => vec![],
            Value::String(_) => vec![branch],
            _ => return Err(Unmigratable::ReleasedBranchNotAName),
        };
        record.insert("releasedBranches".into(), Value::Array(branches));
    }
    Ok(record)
}

/// A run record from its bytes, migrated to the current schema.
pub(crate) fn decode_run(bytes: &[u8], path: &Path) -> Result<RunRecord> {
    decode(bytes, path, &RUN_MIGRATIONS)
}

/// A task record from its bytes, migrated to the current schema.
pub(crate) fn decode_task(bytes: &[u8], path: &Path) -> Result<TaskRecord> {
    decode(bytes, path, &TASK_MIGRATIONS)
}

fn decode<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    path: &Path,
    migrations: &[Migration],
) -> Result<T> {
    let corrupt = |why: String| {
        Error::new(
            ErrorKind::Io,
            format!(
                "{}: unreadable record, left as it is: {why}",
                path.display()
            ),
        )
    };
    let Value::Object(mut record) =
        serde_json::from_slice(bytes).map_err(|e| corrupt(e.to_string()))?
    else {
        return Err(corrupt("not a JSON object".into()));
    };
    let version = record
        .get("version")
        .and_then(Value::as_u64)
        .and_then(|v| u32::try_from(v).ok())
        .filter(|&v| v >= 1)
        .ok_or_else(|| corrupt("no schema version".into()))?;
    for step in migrations.iter().skip(version as usize - 1) {
        record = step(record).map_err(|fault| corrupt(fault.to_string()))?;
    }
    let current = version.max(SCHEMA_VERSION);
    record.insert("version".into(), Value::from(current));
    serde_json::from_value(Value::Object(record)).map_err(|e| corrupt(e.to_string()))
}

/// A record as written: pretty JSON and a final newline.
pub(crate) fn encode(record: &impl Serialize) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(record).expect("a registry record always serialises");
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A version 1 run whose fields have the wrong shape names the field,
    /// and the record is reported unreadable, left as it is.
    #[test]
    fn a_version_1_run_of_the_wrong_shape_says_which_field() {
        let table = [
            (json!({"candidates": []}), Unmigratable::CandidatesNotKeyed),
            (
                json!({"candidates": {"A": 1}}),
                Unmigratable::CandidateNotAnObject("A".into()),
            ),
            (
                json!({"releasedBranch": 7}),
                Unmigratable::ReleasedBranchNotAName,
            ),
        ];
        for (fields, fault) in table {
            let Value::Object(record) = fields else {
                unreachable!()
            };
            assert_eq!(run_1_to_2(record.clone()).unwrap_err(), fault);
            let mut v1 = record;
            v1.insert("version".into(), Value::from(1));
            let bytes = serde_json::to_vec(&v1).unwrap();
            let err = decode_run(&bytes, Path::new("run.json")).unwrap_err();
            assert!(
                err.to_string()
                    .ends_with(&format!("left as it is: {fault}")),
                "{err}"
            );
        }
    }
}
