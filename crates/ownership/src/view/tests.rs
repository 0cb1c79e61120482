use serde_json::json;

use super::*;
use crate::lease::Owner;

fn owner() -> Owner {
    Owner {
        run: "r".into(),
        node: "n".into(),
        seat: "s".into(),
        pid: 7,
        worktree: None,
        head: Some("abc".into()),
        host: "h".into(),
        machine_id: None,
        boot_id: None,
        start_time: Some(42),
        nonce: "x".into(),
    }
}

#[test]
fn views_leave_out_what_is_none_and_spell_fields_as_the_api() {
    let entry = Entry {
        dir: None,
        slug: "slug".into(),
        status: EntryStatus::Unknown("torn".into()),
        owner: Some(owner()),
        since_ms: Some(1_700_000_000_000),
        released_at_ms: None,
        outputs_held: false,
        identity: None,
    };
    let cases = [
        (
            serde_json::to_value(CacheEntryView::from(&entry)).unwrap(),
            json!({
                "slug": "slug", "status": "unknown", "reason": "torn", "outputsHeld": false,
                "sinceMs": 1_700_000_000_000_i64,
                "owner": {"run": "r", "node": "n", "seat": "s", "pid": 7, "head": "abc",
                          "host": "h", "startTime": 42, "nonce": "x"},
            }),
        ),
        (
            serde_json::to_value(VerdictView::from(Exclusivity::Shared {
                reason: SharedReason::KnownShared,
                detail: "home".into(),
            }))
            .unwrap(),
            json!({"exclusive": false, "reason": "known-shared", "detail": "home"}),
        ),
        (
            serde_json::to_value(VerdictView::from(Exclusivity::Exclusive)).unwrap(),
            json!({"exclusive": true}),
        ),
        (
            serde_json::to_value(LeaseReleaseView::from(&Released::Nothing)).unwrap(),
            json!({"released": "nothing"}),
        ),
    ];
    for (got, expected) in cases {
        assert_eq!(got, expected);
    }
}

#[test]
fn pool_views_keep_their_nulls_and_spell_fields_as_the_api() {
    use crate::pool::{
        KeptMember, MemberState, MemberStatus, PoolInventory, PoolMember, PoolPruneReport,
        PrunedMember, SeedReport, SeedStrategy, Usage,
    };
    let usage = Usage {
        logical: 10,
        allocated: 12,
        shared: 0,
        files: 1,
    };
    let member = |name: &str, status| PoolMember {
        name: name.into(),
        dir: format!("/p/{name}").into(),
        status,
        lease: LeaseStatus::Free,
        holder: None,
        identity: None,
        usage,
        last_used_ms: None,
        created_at_ms: Some(5),
        seed: None,
    };
    let seeded = PoolMember {
        lease: LeaseStatus::Active,
        holder: Some(owner()),
        seed: Some(SeedReport {
            strategy: SeedStrategy::Cold,
            from: None,
            reason: "first".into(),
            files: 0,
            bytes: 0,
            left_out: 1,
            took_ms: 2,
        }),
        ..member("member-0", MemberStatus::State(MemberState::Ready))
    };
    let inventory = PoolInventory {
        dir: "/p".into(),
        size: Some(2),
        budget_bytes: None,
        cold_fill_ms: None,
        physical: 12,
        members: vec![
            seeded,
            member("member-1", MemberStatus::Unknown("torn".into())),
        ],
    };
    let usage_json = json!({"logical": 10, "allocated": 12, "shared": 0, "files": 1});
    let owner_json = json!({"run": "r", "node": "n", "seat": "s", "pid": 7, "head": "abc",
                            "host": "h", "startTime": 42, "nonce": "x"});
    let prune = PoolPruneReport {
        bytes_before: 24,
        bytes_after: 12,
        pruned: vec![PrunedMember {
            name: "member-2".into(),
            usage,
        }],
        discarded: vec!["member-3".into()],
        kept: vec![KeptMember {
            name: "member-0".into(),
            why: "busy".into(),
        }],
    };
    let cases = [
        (
            serde_json::to_value(PoolInventoryView::from(&inventory)).unwrap(),
            json!({"dir": "/p", "size": 2, "budgetBytes": null, "coldFillMs": null, "physical": 12,
                   "members": [
                {"name": "member-0", "dir": "/p/member-0", "state": "ready", "reason": null,
                 "lease": "active", "holder": owner_json, "identity": null, "usage": usage_json,
                 "lastUsedMs": null, "createdAtMs": 5,
                 "seed": {"strategy": "cold", "from": null, "reason": "first", "files": 0,
                          "bytes": 0, "leftOut": 1, "tookMs": 2}},
                {"name": "member-1", "dir": "/p/member-1", "state": "unknown", "reason": "torn",
                 "lease": "free", "holder": null, "identity": null, "usage": usage_json,
                 "lastUsedMs": null, "createdAtMs": 5, "seed": null},
            ]}),
        ),
        (
            serde_json::to_value(PoolPruneReportView::from(&prune)).unwrap(),
            json!({"bytesBefore": 24, "bytesAfter": 12,
                   "pruned": [{"name": "member-2", "usage": usage_json}],
                   "discarded": ["member-3"], "kept": [{"name": "member-0", "why": "busy"}]}),
        ),
    ];
    for (got, expected) in cases {
        assert_eq!(got, expected);
    }
}
