//! Git worktrees for agent runs: a registry of the runs and the worktrees
//! they made, handing a branch over from an earlier attempt, and evidence
//! that rebuilds a checkout, without losing a byte of anyone's work.
//!
//! - [`registry`]: the tasks, their runs (status, worktree root,
//!   candidates, seats, what was released to whom, a history of events) as
//!   an orchestrator records them under the natives home; who drives a run
//!   (a kernel lock, so a crashed driver reads as stopped at once); a
//!   versioned schema whose older versions load without rewriting the store.
//! - [`handover`]: releasing the worktree that holds a branch a new run
//!   needs, when an earlier attempt at the same task (or a run natives
//!   recorded) holds it and nothing would be lost: [`handover::decide`]
//!   judges, purely, and names every reason to refuse;
//!   [`handover::release`] proves, records first and removes, surviving a
//!   kill at every step; [`handover::Released::restore`] puts it back.
//!   [`handover::plan`] says what a release would do, writing nothing;
//!   [`handover::Request`] is a handover as the fronts ask for it.
//! - [`view`]: what the fronts hand out (the command line's `--json`, the
//!   addon's objects): runs, handovers and restores, with every word a
//!   person reads about them and every reason's stable code.
//! - [`evidence`]: checkout evidence, an archive that proves a checkout can
//!   be rebuilt without its repository (complete trees, every tip of its
//!   reflog, original commits, the binary patch), published whole or not at
//!   all and never replaced, validated on every read, restorable.
//! - [`eviction`]: the housekeeping pass that archives and removes a few
//!   inactive copies (review, judge and advisor seats, empty superseded
//!   attempts) and names every reason each other copy stays.
//! - [`git`]: the git driver, the only place git runs: machine formats, a
//!   pinned environment, a timeout, a cancel token, a minimum version.
//!
//! Errors are [`natives_core::Error`]s with stable codes; refusals are
//! values ([`handover::Outcome::Refused`], [`handover::Restore::Refused`])
//! whose text names the run, its status, whether the worktree is clean, its
//! `HEAD` and the branch tip, and whether it is an earlier attempt.
//!
//! # Example
//!
//! An orchestrator records a run and its candidate worktree; the run fails;
//! a retry of the same task takes the branch over.
//!
//! ```
//! use natives_core::CancelToken;
//! use natives_worktrees::{
//!     git::Git,
//!     handover::{self, Outcome, Takeover},
//!     registry::{Candidate, NewRun, Registry, Status},
//! };
//! # use std::{path::Path, process::Command};
//! # fn git(dir: &Path, args: &[&str]) {
//! #     let ok = Command::new("git").current_dir(dir).args(args).status().unwrap().success();
//! #     assert!(ok, "git {args:?}");
//! # }
//! # let dir = tempfile::tempdir()?;
//! # let base = dir.path().canonicalize()?;
//! # let (home, repo, runs) = (base.join("home"), base.join("repo"), base.join("runs"));
//! # std::fs::create_dir_all(&repo)?;
//! # git(&repo, &["init", "-q", "-b", "main"]);
//! # git(&repo, &["-c", "user.name=n", "-c", "user.email=e@x", "commit", "-q", "--allow-empty", "-m", "first"]);
//!
//! let registry = Registry::open(&home);
//! let cancel = CancelToken::new();
//! registry.create_task("t1", &cancel)?;
//! let run = |id: &str| NewRun {
//!     id: id.into(),
//!     task: "t1".into(),
//!     worktree_root: runs.join(id),
//!     status: Status::Running,
//! };
//! registry.create_run(&run("r1"), &cancel)?;
//! let candidate = runs.join("r1/A");
//! // The run makes its candidate worktree (`git worktree add -b t1/A ...`)...
//! # git(&repo, &["worktree", "add", "-q", "-b", "t1/A", candidate.to_str().unwrap()]);
//! registry.add_candidate("r1", &Candidate::new("A", "t1/A", &candidate), &cancel)?;
//! // ...and fails, leaving its worktree behind.
//! registry.set_status("r1", Status::Failed, &cancel)?;
//!
//! // A retry of the task needs branch t1/A.
//! registry.create_run(&run("r2"), &cancel)?;
//! let takeover = Takeover::for_task(&registry, "t1", "r2")?;
//! let git = Git::new()?;
//! match handover::release(&registry, &git, &repo, "t1/A", &takeover, &cancel)? {
//!     Outcome::Released(released) => {
//!         assert!(!candidate.exists());
//!         assert!(registry.show("r1")?.candidate("A").unwrap().folded);
//!         // Had the review failed to start, the worktree could go back:
//!         // released.restore(&registry, &git, &cancel)?;
//! #       let _ = released;
//!     }
//!     Outcome::Refused(why) => panic!("{why}"),
//!     Outcome::NotHeld | Outcome::HeldByNewRun => unreachable!(),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod eviction;
pub mod evidence;
pub mod git;
pub mod handover;
mod own_history;
pub mod registry;
#[cfg(test)]
mod testing;
pub mod view;

pub use natives_core::{CancelToken, Error, ErrorKind, Result};
