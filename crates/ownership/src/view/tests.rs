use serde_json::json;

use super::*;

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
