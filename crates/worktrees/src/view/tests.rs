//! The views: their JSON field names, what is left out, every reason's code
//! and the words a person reads for every answer.

use std::{collections::BTreeSet, path::PathBuf};

use natives_core::{Error, ErrorKind};
use serde_json::{Map, Value, json};

use super::*;
use crate::{
    handover::{Foreign, RunSummary},
    registry::SCHEMA_VERSION,
};

fn holder() -> Holder {
    Holder {
        branch: "t1/A".into(),
        path: "/runs/r1/A".into(),
        owner: Owner::EarlierAttempt { run: "r1".into() },
        run: Some(RunSummary {
            id: "r1".into(),
            task: "t1".into(),
            status: Status::Failed,
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

fn released() -> Released {
    Released {
        run: "r1".into(),
        task: "t1".into(),
        candidate: "A".into(),
        branch: "t1/A".into(),
        path: "/runs/r1/A".into(),
        tip: "0123456789abcdef".into(),
        repo: "/repo".into(),
        released_to: "r2".into(),
        handover: "h1".into(),
    }
}

fn request(dry_run: bool) -> Request {
    Request {
        repo: "/repo".into(),
        branch: "t1/A".into(),
        to_run: "r2".into(),
        task: Some("t1".into()),
        regenerable: Vec::new(),
        dry_run,
    }
}

fn keys(value: &Value) -> BTreeSet<&str> {
    value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

fn set<'a>(names: &[&'a str]) -> BTreeSet<&'a str> {
    names.iter().copied().collect()
}

#[test]
fn a_run_is_camel_case_with_optional_fields_left_out() {
    let mut candidate = Candidate::new("A", "t1/A", &PathBuf::from("/runs/r1/A"));
    candidate.base = Some("abc".into());
    let record = RunRecord {
        version: SCHEMA_VERSION,
        id: "r1".into(),
        task: "t1".into(),
        status: Status::Failed,
        worktree_root: "/runs/r1".into(),
        created_at_ms: 7,
        candidates: vec![candidate],
        seats: vec![Seat::new(
            SeatKind::Review,
            1,
            &PathBuf::from("/runs/r1/review-1"),
        )],
        released_to: None,
        released_branches: Vec::new(),
        events: vec![
            Event::now(EventKind::Created).noting("running"),
            Event::now(EventKind::Other("later".into())),
        ],
        lineage: None,
        recovery: None,
        source_paths: Vec::new(),
        extra: Map::from_iter([("unknown".to_owned(), json!(1))]),
    };
    let artifacts = PathBuf::from("/home/worktrees/artifacts/0a1b");
    let view = serde_json::to_value(RunView::of(&record, &Liveness::Dead, &artifacts)).unwrap();
    assert_eq!(
        keys(&view),
        set(&[
            "id",
            "task",
            "status",
            "worktreeRoot",
            "createdAtMs",
            "driver",
            "candidates",
            "seats",
            "releasedBranches",
            "events",
            "version",
            "artifacts",
        ]),
        "no releasedTo, no driverReason, none of the record's unknown fields"
    );
    assert_eq!(view["artifacts"], "/home/worktrees/artifacts/0a1b");
    assert_eq!(view["status"], "failed");
    assert_eq!(view["driver"], "dead");
    assert_eq!(
        view["candidates"][0],
        json!({"name": "A", "branch": "t1/A", "path": "/runs/r1/A", "base": "abc", "folded": false})
    );
    assert_eq!(
        view["seats"][0],
        json!({"kind": "review", "number": 1, "path": "/runs/r1/review-1"})
    );
    assert_eq!(view["events"][0]["kind"], "created");
    assert_eq!(view["events"][0]["note"], "running");
    assert_eq!(view["events"][1]["kind"], "later");
    assert_eq!(keys(&view["events"][1]), set(&["atMs", "kind"]));

    let unknown = RunView::of(&record, &Liveness::Unknown("nfs".into()), &artifacts);
    let unknown = serde_json::to_value(unknown).unwrap();
    assert_eq!(
        (&unknown["driver"], &unknown["driverReason"]),
        (&json!("unknown"), &json!("nfs"))
    );
    let driven = RunView::of(&record, &Liveness::Live, &artifacts);
    assert_eq!(driven.driver.name(), "live");
}

#[test]
fn every_reason_has_its_own_stable_code() {
    let reasons = [
        Reason::DriverLive,
        Reason::LivenessUnknown("nfs".into()),
        Reason::DriverNotStarted,
        Reason::Landing,
        Reason::Dirty(Paths::of(["a".to_owned()])),
        Reason::HeadNotAtTip,
        Reason::NotMadeByUs(Foreign::NoRecord),
        Reason::StagedOnly(Paths::of(["s".to_owned()])),
        Reason::OnlyHere(Paths::of(["refs/worktree/keep".to_owned()])),
        Reason::OperationInProgress(vec!["rebase-merge".into()]),
        Reason::Locked(String::new()),
        Reason::Unsupported(vec!["a.bin: filter=lfs".into()]),
        Reason::NotInspectable,
    ];
    let refusals = [
        RestoreRefusal::NotInForce,
        RestoreRefusal::ReleasedElsewhere(None),
        RestoreRefusal::Superseded,
        RestoreRefusal::DriverNotDead(Liveness::Live),
        RestoreRefusal::BranchHeld("/x".into()),
        RestoreRefusal::PathTaken("/y".into()),
    ];
    let codes: Vec<&str> = reasons
        .iter()
        .map(Reason::code)
        .chain(refusals.iter().map(RestoreRefusal::code))
        .chain(["release-failed"])
        .collect();
    let distinct: BTreeSet<&str> = codes.iter().copied().collect();
    assert_eq!(distinct.len(), codes.len(), "{codes:?}");
    for code in codes {
        assert!(
            code.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
            "{code}"
        );
    }
    let view = ReasonView::from(&reasons[4]);
    assert_eq!(
        serde_json::to_value(view).unwrap(),
        json!({"code": "dirty", "message": "uncommitted changes: a"})
    );
}

#[test]
fn nothing_to_do_says_so() {
    let not_held = HandoverView::of(&request(false), &Answer::Done(Outcome::NotHeld));
    assert_eq!(
        serde_json::to_value(&not_held).unwrap(),
        json!({
            "kind": "not-held", "dryRun": false, "branch": "t1/A", "toRun": "r2",
            "message": "no worktree holds branch t1/A: nothing to do",
        })
    );
    let own = HandoverView::of(&request(true), &Answer::Planned(Plan::HeldByNewRun));
    assert_eq!(
        (own.kind.name(), own.dry_run, own.message.as_str()),
        (
            "held-by-new-run",
            true,
            "run r2's own worktree holds branch t1/A: nothing to do"
        )
    );
}

#[test]
fn a_release_names_the_worktree_and_carries_what_restoring_needs() {
    let view = HandoverView::of(
        &request(false),
        &Answer::Done(Outcome::Released(released())),
    );
    assert_eq!(view.kind, HandoverKind::Released);
    assert_eq!(
        view.message,
        "released the worktree of run r1 (candidate A) at /runs/r1/A: branch t1/A at 0123456789ab is free for run r2"
    );
    let json = serde_json::to_value(&view).unwrap();
    assert_eq!(
        json["released"],
        json!({
            "run": "r1", "task": "t1", "candidate": "A", "branch": "t1/A", "path": "/runs/r1/A",
            "tip": "0123456789abcdef", "repo": "/repo", "releasedTo": "r2", "handover": "h1",
        })
    );
    assert_eq!(
        keys(&json),
        set(&["kind", "dryRun", "branch", "toRun", "message", "released"])
    );
}

#[test]
fn a_refusal_carries_the_holder_and_every_reason() {
    let mut found = holder();
    found.content.dirty = Paths::of(["notes.txt".to_owned()]);
    found.driver = Some(Liveness::Unknown("nfs".into()));
    let reasons = vec![
        Reason::LivenessUnknown("nfs".into()),
        Reason::Dirty(found.content.dirty.clone()),
    ];
    let refused = Refused::Unsafe {
        holder: Box::new(found),
        reasons,
    };
    let text = refused.to_string();
    let view = HandoverView::of(&request(true), &Answer::Planned(Plan::Refuse(refused)));
    assert_eq!(
        (view.kind, view.message.as_str()),
        (HandoverKind::Refused, text.as_str())
    );
    let codes: Vec<&str> = view
        .reasons
        .iter()
        .flatten()
        .map(|r| r.code.as_str())
        .collect();
    assert_eq!(codes, ["liveness-unknown", "dirty"]);
    assert_eq!(
        view.reasons.as_ref().unwrap()[1].message,
        "uncommitted changes: notes.txt"
    );
    let holder = serde_json::to_value(view.holder.unwrap()).unwrap();
    assert_eq!(
        holder["owner"],
        json!({"kind": "earlier-attempt", "run": "r1"})
    );
    assert_eq!(
        holder["run"],
        json!({"id": "r1", "task": "t1", "status": "failed"})
    );
    assert_eq!(
        (&holder["driver"], &holder["driverReason"]),
        (&json!("unknown"), &json!("nfs"))
    );
    assert_eq!(
        holder["content"],
        json!({
            "inspectable": true, "clean": false,
            "dirty": {"named": ["notes.txt"], "total": 1}, "letGo": {"named": [], "total": 0},
            "staged": {"named": [], "total": 0}, "operations": [], "unsupported": [],
        })
    );
    assert_eq!(holder["onlyHere"], json!({"named": [], "total": 0}));
    assert!(holder.get("locked").is_none());

    let mut stranger = holder_of_no_run();
    stranger.locked = Some("usb".into());
    let foreign = Refused::Foreign {
        holder: Box::new(stranger),
        reasons: vec![Reason::NotMadeByUs(Foreign::NoRecord)],
    };
    let view = HandoverView::of(&request(false), &Answer::Done(Outcome::Refused(foreign)));
    let holder = serde_json::to_value(view.holder.unwrap()).unwrap();
    assert_eq!(
        holder["owner"],
        json!({"kind": "foreign", "why": "no run records it as a candidate worktree"})
    );
    assert!(holder.get("run").is_none() && holder.get("driver").is_none());
    assert_eq!(holder["locked"], "usb");
}

fn holder_of_no_run() -> Holder {
    Holder {
        owner: Owner::Foreign(Foreign::NoRecord),
        run: None,
        driver: None,
        ..holder()
    }
}

#[test]
fn a_failed_release_is_a_refusal_with_its_error_as_the_reason() {
    for undone in [true, false] {
        let failed = Refused::ReleaseFailed {
            holder: Box::new(holder()),
            error: Error::new(ErrorKind::Io, "git worktree remove failed"),
            undone,
        };
        let view = HandoverView::of(&request(false), &Answer::Done(Outcome::Refused(failed)));
        assert_eq!(view.kind, HandoverKind::Refused);
        assert_eq!(view.undone, Some(undone));
        assert_eq!(view.reasons.as_ref().map(Vec::len), Some(1));
        assert_eq!(view.reasons.as_ref().unwrap()[0].code, "release-failed");
        assert!(
            view.reasons.as_ref().unwrap()[0]
                .message
                .contains("git worktree remove failed"),
            "{:?}",
            view.reasons
        );
    }
}

#[test]
fn a_dry_run_release_or_finish_names_the_holder() {
    let view = HandoverView::of(
        &request(true),
        &Answer::Planned(Plan::Release(Box::new(holder()))),
    );
    assert_eq!(view.kind, HandoverKind::WouldRelease);
    assert!(
        view.message.starts_with("would release: branch t1/A is checked out at /runs/r1/A by run r1 (failed, an earlier attempt at this task), clean"),
        "{}",
        view.message
    );
    assert!(view.reasons.is_none() && view.unfinished_handover.is_none());
    let finish = Plan::Finish {
        holder: Box::new(holder()),
        handover: "h9".into(),
    };
    let view = HandoverView::of(&request(true), &Answer::Planned(finish));
    assert_eq!(view.kind, HandoverKind::WouldRelease);
    assert_eq!(view.unfinished_handover.as_deref(), Some("h9"));
    assert!(view.message.contains("handover h9"), "{}", view.message);
}

#[test]
fn a_restore_says_what_came_back_or_every_reason_not() {
    let restored = RestoreView::of(&released(), &Restore::Restored);
    assert_eq!(
        serde_json::to_value(&restored).unwrap(),
        json!({
            "kind": "restored",
            "message": "restored the worktree of run r1 at /runs/r1/A (branch t1/A at 0123456789ab)",
        })
    );
    let refusals = vec![
        RestoreRefusal::Superseded,
        RestoreRefusal::PathTaken("/runs/r1/A".into()),
    ];
    let refused = RestoreView::of(&released(), &Restore::Refused(refusals));
    assert_eq!(refused.kind, RestoreKind::Refused);
    let codes: Vec<&str> = refused
        .reasons
        .iter()
        .flatten()
        .map(|r| r.code.as_str())
        .collect();
    assert_eq!(codes, ["superseded", "path-taken"]);
    assert!(
        refused
            .message
            .ends_with("was not restored: the run was superseded; /runs/r1/A exists"),
        "{}",
        refused.message
    );
}

#[test]
fn eviction_views_keep_their_nulls_and_spell_fields_as_the_api() {
    use crate::eviction::{
        Blocker, BlockerKind, Evicted, Phase, Report, Retained, Retention, Settings, seats::SeatTip,
    };
    let blocker = Blocker::new(BlockerKind::NotAWorktree, "no .git");
    let report = Report {
        settings: Settings {
            auto_fold: true,
            reclaim_bytes: 100,
        },
        dry_run: true,
        disabled: None,
        visited: vec!["r1".into()],
        continue_after: None,
        evicted: vec![Evicted {
            run: "r1".into(),
            seat: "review-1".into(),
            path: "/runs/r1/review-1".into(),
            archive: None,
            logical_bytes: 3,
            allocated_bytes: 4096,
            resumed: false,
        }],
        retained: vec![Retained {
            run: "r1".into(),
            seat: "judge-1".into(),
            path: "/runs/r1/judge-1".into(),
            blockers: vec![blocker.clone()],
        }],
        empty_roots: vec![],
        blockers: vec![],
        retention: None,
    };
    let retention = Retention {
        at_ms: 9,
        blockers: [("dirty".to_owned(), 2)].into(),
        observed_free_bytes_before: Some(7),
        ..Retention::default()
    };
    let tip = SeatTip {
        seat: "review-1".into(),
        source: "/runs/r1/review-1".into(),
        head: "c1".into(),
        tree: "t1".into(),
        seen_as: vec!["HEAD@{1}".into()],
        current: false,
        patch_bytes: None,
        phase: Phase::Evicted,
        archive: "/ev/r1".into(),
    };
    let cases = [
        (
            serde_json::to_value(EvictionReportView::from(&report)).unwrap(),
            json!({"settings": {"autoFold": true, "reclaimBytes": 100}, "dryRun": true,
                   "disabled": null, "visited": ["r1"], "continueAfter": null,
                   "evicted": [{"run": "r1", "seat": "review-1", "path": "/runs/r1/review-1",
                                "archive": null, "logicalBytes": 3, "allocatedBytes": 4096,
                                "resumed": false}],
                   "retained": [{"run": "r1", "seat": "judge-1", "path": "/runs/r1/judge-1",
                                 "blockers": [{"kind": "not-a-worktree", "detail": "no .git"}]}],
                   "emptyRoots": [], "blockers": [], "retention": null}),
        ),
        (
            serde_json::to_value(EvictionRetentionView::from(&retention)).unwrap(),
            json!({"atMs": 9, "runsVisited": 0, "sourceLogicalBytes": 0,
                   "sourceAllocatedBytes": 0, "evidenceLogicalBytes": 0,
                   "evidenceAllocatedBytes": 0, "copiesEvicted": 0, "emptyRootsRemoved": 0,
                   "blockers": {"dirty": 2}, "observedFreeBytesBefore": 7,
                   "observedFreeBytesAfter": null}),
        ),
        (
            serde_json::to_value(SeatTipView::from(&tip)).unwrap(),
            json!({"seat": "review-1", "source": "/runs/r1/review-1", "head": "c1", "tree": "t1",
                   "seenAs": ["HEAD@{1}"], "current": false, "patchBytes": null,
                   "phase": "evicted", "archive": "/ev/r1"}),
        ),
    ];
    for (got, expected) in cases {
        assert_eq!(got, expected);
    }
}
