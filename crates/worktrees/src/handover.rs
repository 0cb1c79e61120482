//! Handing a branch over from an earlier attempt (seed 002).
//!
//! A retried task reopens a branch that an earlier run still has checked
//! out in its own worktree. Git lets a branch be checked out in one worktree
//! at a time, so the new run cannot start until that worktree goes. This
//! module releases it, and only it, when natives can prove two things:
//!
//! - **whose it is** ([`Owner`]): the worktree's path is a candidate
//!   worktree, not folded, that exactly one run's record names, laid
//!   directly under that record's worktree root (paths compared
//!   canonically). That run is an earlier attempt at the new run's task, or
//!   at least a run natives recorded; anything else is foreign;
//! - **that nothing would be lost** ([`decide`]): nobody drives the run (and
//!   that can be told: see below), it is not landing, the worktree holds no
//!   byte `HEAD` does not (see [`Content`]; only caches and what the caller
//!   declared [`Regenerable`] may go with it), stages nothing, is in the
//!   middle of no operation, is not locked, its `HEAD` is the branch tip,
//!   and its administration remembers no ref of its own and no commit that
//!   nothing else names (the rule the eviction pass shares: see
//!   `own_history.rs`).
//!
//! The branch, every commit and any pull request stay exactly where they
//! were: only the worktree goes, through a non-forced `git worktree remove`.
//!
//! **When nobody drives a run.** A driver holds the run's driver lock, and
//! taking it records a `driven` event. A run recorded as `running` is being
//! started: the orchestrator recorded it and its driver is on the way. So
//! "nobody drives it" is said of a `running` run only when its driver lock
//! is free *and* a driver took the run since it was last set running (its
//! driver started, then stopped or died); until then it is refused as
//! [`Reason::DriverNotStarted`]. A run in any other status is not driven
//! when its driver lock is free.
//!
//! [`decide`] is pure: it judges a [`Holder`], what was found about the
//! worktree, and collects every reason to refuse at once. [`release`] is
//! the only function that touches git or disk, in this order (each durable
//! step survives a kill; see its docs): find the holder, prove the owner,
//! take the run's owner lock, reload and prove again, **write the old run's
//! record first** (candidate folded, released to the new run, the branch,
//! an event), inspect and decide again from the record on disk, mark the
//! removal, remove. Any failure rolls the record back with an `undone`
//! event. [`Released::restore`] puts a released worktree back when the run
//! that took the branch over never started, unless ownership changed since.
//! [`plan`] is the dry run: the same first look and decision, nothing
//! written; [`Request`] is a handover as the fronts ask for it (a task's
//! retry or a hand-run review, released or only planned).
//!
//! Every refusal is a value ([`Outcome::Refused`], [`Restore::Refused`])
//! whose text says why; errors are for what went wrong (git missing, a
//! record unreadable).

mod holder;
pub(crate) mod inspect;
mod plan;
mod release;
mod restore;
mod takeover;
mod untracked;
mod verdict;

pub use holder::{Content, Foreign, Holder, Owner, PATHS_NAMED, Paths, RunSummary};
pub use plan::{Answer, Plan, Request, plan};
pub use release::{Outcome, Released, release};
pub use restore::{Restore, RestoreRefusal};
pub use takeover::Takeover;
pub use untracked::{CACHEDIR_SIGNATURE, CACHEDIR_TAG, Regenerable};
pub use verdict::{Decision, Reason, Refused, decide};

#[cfg(test)]
mod crash_tests;
#[cfg(test)]
mod lossless_tests;
#[cfg(test)]
mod tests;

#[cfg(test)]
mod decide_tests {
    use super::*;
    use crate::registry::{Liveness, Status};

    /// A worktree that may go: an earlier attempt's, parked, not driven,
    /// clean, at its tip.
    fn releasable() -> Holder {
        Holder {
            branch: "run/t1/A".into(),
            path: "/runs/r1/A".into(),
            owner: Owner::EarlierAttempt { run: "r1".into() },
            run: Some(RunSummary {
                id: "r1".into(),
                task: "t1".into(),
                status: Status::Parked,
                awaiting_driver: false,
            }),
            driver: Some(Liveness::Dead),
            head: Some("0123456789abcdef".into()),
            tip: Some("0123456789abcdef".into()),
            locked: None,
            content: Content {
                inspectable: true,
                ..Content::default()
            },
            only_here: Paths::default(),
        }
    }

    fn paths(names: &[&str]) -> Paths {
        Paths::of(names.iter().map(|n| n.to_string()))
    }

    /// One change to a releasable holder, and the one reason it must give.
    type Case = (&'static str, fn(&mut Holder), Reason);

    /// Cases that change the same fact, so they cannot hold together: the
    /// driver is live, unknown or not started yet, `HEAD` differs from the
    /// tip or is none.
    const EXCLUSIVE: [&[&str]; 2] = [
        &["driver live", "liveness unknown", "driver not started"],
        &["HEAD not at the tip", "no HEAD"],
    ];

    fn exclusive(a: &str, b: &str) -> bool {
        EXCLUSIVE
            .iter()
            .any(|group| group.contains(&a) && group.contains(&b))
    }

    fn cases() -> Vec<Case> {
        vec![
            (
                "driver live",
                |h| h.driver = Some(Liveness::Live),
                Reason::DriverLive,
            ),
            (
                "liveness unknown",
                |h| h.driver = Some(Liveness::Unknown("nfs".into())),
                Reason::LivenessUnknown("nfs".into()),
            ),
            (
                "driver not started",
                |h| {
                    let run = h.run.as_mut().unwrap();
                    (run.status, run.awaiting_driver) = (Status::Running, true);
                },
                Reason::DriverNotStarted,
            ),
            (
                "landing",
                |h| h.run.as_mut().unwrap().status = Status::Landing,
                Reason::Landing,
            ),
            (
                "dirty",
                |h| h.content.dirty = paths(&["a", "b"]),
                Reason::Dirty(paths(&["a", "b"])),
            ),
            (
                "HEAD not at the tip",
                |h| h.tip = Some("fedcba".into()),
                Reason::HeadNotAtTip,
            ),
            (
                "no HEAD",
                |h| (h.head, h.tip) = (None, None),
                Reason::HeadNotAtTip,
            ),
            (
                "not made by us",
                |h| h.owner = Owner::Foreign(Foreign::NoRecord),
                Reason::NotMadeByUs(Foreign::NoRecord),
            ),
            (
                "staged only",
                |h| h.content.staged = paths(&["s"]),
                Reason::StagedOnly(paths(&["s"])),
            ),
            (
                "only here",
                |h| h.only_here = paths(&["refs/worktree/keep"]),
                Reason::OnlyHere(paths(&["refs/worktree/keep"])),
            ),
            (
                "operation in progress",
                |h| h.content.operations = vec!["rebase-merge".into()],
                Reason::OperationInProgress(vec!["rebase-merge".into()]),
            ),
            (
                "locked",
                |h| h.locked = Some("on a usb disk".into()),
                Reason::Locked("on a usb disk".into()),
            ),
            (
                "unsupported",
                |h| h.content.unsupported = vec!["a.bin: filter=lfs".into()],
                Reason::Unsupported(vec!["a.bin: filter=lfs".into()]),
            ),
            (
                "not inspectable",
                |h| h.content.inspectable = false,
                Reason::NotInspectable,
            ),
        ]
    }

    #[test]
    fn a_releasable_holder_is_released_whatever_its_other_status() {
        assert_eq!(decide(&releasable()), Decision::Release);
        for status in Status::ALL.into_iter().filter(|s| *s != Status::Landing) {
            let mut holder = releasable();
            holder.run.as_mut().unwrap().status = status;
            assert_eq!(decide(&holder), Decision::Release, "{status}");
        }
        let mut own = releasable();
        own.owner = Owner::OwnRun { run: "r1".into() };
        assert_eq!(decide(&own), Decision::Release, "a run natives recorded");
    }

    #[test]
    fn every_reason_alone() {
        for (case, change, reason) in cases() {
            let mut holder = releasable();
            change(&mut holder);
            assert_eq!(decide(&holder), Decision::Refuse(vec![reason]), "{case}");
        }
    }

    #[test]
    fn every_reason_at_once_in_order() {
        let mut holder = releasable();
        let mut expected = Vec::new();
        for (case, change, reason) in cases() {
            if ["driver live", "driver not started", "no HEAD"].contains(&case) {
                continue;
            }
            change(&mut holder);
            expected.push(reason);
        }
        assert_eq!(decide(&holder), Decision::Refuse(expected));
    }

    #[test]
    fn reasons_combine_pairwise() {
        let cases = cases();
        for (i, (first, change_first, reason_first)) in cases.iter().enumerate() {
            for (second, change_second, reason_second) in &cases[i + 1..] {
                if exclusive(first, second) {
                    continue;
                }
                let mut holder = releasable();
                change_first(&mut holder);
                change_second(&mut holder);
                let expected = vec![reason_first.clone(), reason_second.clone()];
                assert_eq!(
                    decide(&holder),
                    Decision::Refuse(expected),
                    "{first} + {second}"
                );
            }
        }
    }

    /// A foreign worktree with no run has no driver to ask about: only
    /// "not made by us" is said of it.
    #[test]
    fn a_worktree_of_no_run_is_refused_as_not_ours_only() {
        let mut holder = releasable();
        holder.owner = Owner::Foreign(Foreign::NoRecord);
        holder.run = None;
        holder.driver = None;
        assert_eq!(
            decide(&holder),
            Decision::Refuse(vec![Reason::NotMadeByUs(Foreign::NoRecord)])
        );
    }

    #[test]
    fn paths_are_named_up_to_five_and_counted() {
        let many = paths(&["a", "b", "c", "d", "e", "f", "g"]);
        assert_eq!(many.named, ["a", "b", "c", "d", "e"]);
        assert_eq!(many.total, 7);
        assert_eq!(many.to_string(), "a, b, c, d, e and 2 more");
        assert_eq!(paths(&["a"]).to_string(), "a");
    }

    #[test]
    fn the_refusal_names_the_run_status_content_head_tip_and_relation() {
        let mut holder = releasable();
        holder.content.dirty = paths(&["notes.txt"]);
        holder.tip = Some("fedcba9876543210".into());
        let text = Refused::from_decision(holder.clone(), vec![Reason::HeadNotAtTip]).to_string();
        assert_eq!(
            text,
            "branch run/t1/A is checked out at /runs/r1/A by run r1 (parked, an earlier attempt \
             at this task), dirty, HEAD 0123456789ab and branch tip fedcba987654: refused: \
             HEAD is not at the branch tip"
        );
        holder.owner = Owner::OwnRun { run: "r1".into() };
        holder.content.dirty = Paths::default();
        holder.tip = holder.head.clone();
        let text = Refused::from_decision(holder.clone(), vec![Reason::DriverLive]).to_string();
        assert!(
            text.contains("by run r1 (parked, a run of task t1), clean, HEAD 0123456789ab and branch tip 0123456789ab"),
            "{text}"
        );
        holder.run = None;
        holder.owner = Owner::Foreign(Foreign::NoRecord);
        let refused = Refused::from_decision(holder, vec![Reason::NotMadeByUs(Foreign::NoRecord)]);
        assert!(matches!(refused, Refused::Foreign { .. }));
        assert!(
            refused.to_string().contains(
                "by no run natives recorded, clean, HEAD 0123456789ab and branch tip 0123456789ab: \
                 refused: natives did not make this worktree: no run records it as a candidate worktree"
            ),
            "{refused}"
        );
    }
}
