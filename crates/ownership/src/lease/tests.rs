use std::{
    cell::RefCell,
    fs,
    os::unix::process::ExitStatusExt,
    path::PathBuf,
    rc::Rc,
    thread,
    time::{Duration, Instant},
};

use super::*;

use super::slot::{RECLAIMING, Slot, Taken};
use crate::layout::LeaseFiles;
use natives_core::CancelToken;
use natives_system::lock::LockTrust;
use natives_system::{crash, durable, process};

/// The environment the record-only acquirer children read: home and cache.
const ACQUIRER_ENV: [&str; 2] = ["NATIVES_TEST_ACQUIRER_HOME", "NATIVES_TEST_ACQUIRER_CACHE"];

/// At which crash point the crashing acquirer child dies (its index among
/// the points it passes).
const CRASH_STEP_ENV: &str = "NATIVES_TEST_ACQUIRER_CRASH_STEP";

/// The crash points of taking a slot by its record, in order: reclaiming a
/// dead owner's (left out when the slot is free), then each step of
/// publishing the new record.
fn take_points(reclaiming: bool) -> Vec<&'static str> {
    let publishing = durable::Step::ALL.map(durable::Step::name);
    let reclaim = reclaiming.then_some(RECLAIMING);
    reclaim.into_iter().chain(publishing).collect()
}

/// Take the slot for `record` with `at(point)` called at every crash point
/// the take passes on this thread.
fn take_observed(
    slot: &Slot<'_>,
    record: &LeaseRecord,
    at: impl FnMut(&'static str) + 'static,
) -> Result<Taken> {
    crash::install(Some(Box::new(at)));
    let taken = slot.try_take(record, || Ok(None));
    crash::install(None);
    taken
}

struct Fixture {
    _dir: tempfile::TempDir,
    leases: Leases,
    cache: PathBuf,
}

/// A home and a cache directory laid out as cargo's (so that it may be
/// pruned once registered).
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let cache = root.join("target");
    fs::create_dir_all(cache.join("debug/.fingerprint")).unwrap();
    fs::write(cache.join(".rustc_info.json"), "{}").unwrap();
    let leases = Leases::open(&root.join("home")).unwrap();
    Fixture {
        _dir: dir,
        leases,
        cache,
    }
}

fn record_only(leases: &Leases) -> Leases {
    leases
        .clone()
        .with_trust(LockTrust::RecordOnly("test".to_owned()))
}

fn owner(seat: &str) -> Owner {
    Owner::current("run-1", "node-a", seat)
}

fn acquire(leases: &Leases, cache: &Path, seat: &str) -> Guard {
    match leases.try_acquire(cache, &owner(seat)).unwrap() {
        AcquireOutcome::Acquired(guard) => guard,
        AcquireOutcome::Busy(busy) => panic!("expected to acquire, got {busy:?}"),
    }
}

fn busy(leases: &Leases, cache: &Path) -> Busy {
    match leases.try_acquire(cache, &owner("late")).unwrap() {
        AcquireOutcome::Busy(busy) => busy,
        AcquireOutcome::Acquired(guard) => {
            panic!("expected busy, acquired {:?}", guard.record())
        }
    }
}

fn files(f: &Fixture) -> LeaseFiles {
    LeaseFiles::create_dirs(f.leases.home()).unwrap();
    LeaseFiles::new(f.leases.home(), &f.cache)
}

/// A record as a dead process of this host would have left it.
fn dead_record(f: &Fixture) -> LeaseRecord {
    let mut record = LeaseRecord::new(f.cache.clone(), owner("dead"));
    let mut child = std::process::Command::new("true").spawn().unwrap();
    record.owner.pid = child.id();
    child.wait().unwrap();
    record
}

#[test]
fn a_held_lease_is_busy_and_names_its_holder() {
    let f = fixture();
    for leases in [f.leases.clone(), record_only(&f.leases)] {
        let guard = acquire(&leases, &f.cache, "builder");
        assert_eq!(guard.dir(), f.cache);
        assert!(
            matches!(leases.classify(&f.cache).unwrap(), Status::Active(Some(r)) if r == *guard.record())
        );
        assert!(leases.in_use(&f.cache).unwrap());
        let Busy::Active(holder) = busy(&leases, &f.cache) else {
            panic!("not active")
        };
        assert!(
            holder.describe().contains("run-1/node-a/builder"),
            "{}",
            holder.describe()
        );
        guard.release().unwrap();
        assert_eq!(leases.classify(&f.cache).unwrap(), Status::Free);
        assert!(!leases.in_use(&f.cache).unwrap());
        drop(acquire(&leases, &f.cache, "next"));
        assert_eq!(
            leases.classify(&f.cache).unwrap(),
            Status::Free,
            "drop releases"
        );
    }
}

#[test]
fn routes_to_one_cache_share_one_lease() {
    let f = fixture();
    let link = f.cache.with_file_name("link");
    std::os::unix::fs::symlink(&f.cache, &link).unwrap();
    let _guard = acquire(&f.leases, &f.cache, "builder");
    assert!(matches!(busy(&f.leases, &link), Busy::Active(_)));
    assert!(matches!(
        busy(&f.leases, &f.cache.join("../target/.")),
        Busy::Active(_)
    ));
}

#[test]
fn a_dead_owners_record_is_reclaimed() {
    let f = fixture();
    for leases in [f.leases.clone(), record_only(&f.leases)] {
        let dead = dead_record(&f);
        durable::replace(&files(&f).record, &dead.to_bytes()).unwrap();
        assert_eq!(
            leases.classify(&f.cache).unwrap(),
            Status::Stale(dead.clone())
        );
        assert!(!leases.in_use(&f.cache).unwrap());
        match leases.try_acquire(&f.cache, &owner("heir")).unwrap() {
            AcquireOutcome::Acquired(guard) => {
                assert_eq!(guard.reclaimed(), Some(&dead));
                assert_eq!(guard.record().owner.seat, "heir");
            }
            AcquireOutcome::Busy(busy) => panic!("{busy:?}"),
        }
    }
}

#[test]
fn a_reused_pid_is_stale_and_an_unreadable_start_time_is_alive() {
    let f = fixture();
    let leases = record_only(&f.leases);
    let me = process::ProcessIdentity::current();
    let mut reused = LeaseRecord::new(f.cache.clone(), owner("old"));
    reused.owner.start_time = me.start_time.map(|t| t + 1);
    durable::replace(&files(&f).record, &reused.to_bytes()).unwrap();
    assert_eq!(leases.classify(&f.cache).unwrap(), Status::Stale(reused));

    let mut unknown_start = LeaseRecord::new(f.cache.clone(), owner("old"));
    unknown_start.owner.start_time = None;
    durable::replace(&files(&f).record, &unknown_start.to_bytes()).unwrap();
    assert_eq!(
        leases.classify(&f.cache).unwrap(),
        Status::Active(Some(unknown_start))
    );
    assert!(matches!(busy(&leases, &f.cache), Busy::Active(_)));
}

#[test]
fn another_hosts_owner_is_never_reclaimed_without_kernel_locks() {
    let f = fixture();
    let leases = record_only(&f.leases);
    let mut remote = dead_record(&f);
    remote.owner.host = "another-host".to_owned();
    durable::replace(&files(&f).record, &remote.to_bytes()).unwrap();
    assert_eq!(
        leases.classify(&f.cache).unwrap(),
        Status::Active(Some(remote.clone()))
    );
    assert!(matches!(busy(&leases, &f.cache), Busy::Active(_)));
    assert_eq!(
        durable::read(&files(&f).record).unwrap().unwrap(),
        remote.to_bytes()
    );
}

/// Two machines of one host name (containers, cloned images): a record made
/// on the other one names a process that may well be alive there, whatever
/// its pid means here. Only a machine known to be this one (same machine
/// id), booted again since, makes the record dead.
#[test]
fn a_same_named_host_on_another_machine_is_another_host() {
    let f = fixture();
    let me = process::ProcessIdentity::current();
    assert!(me.machine_id.is_some() && me.boot_id.is_some(), "{me:?}");
    let another_boot = Some("boot-of-the-twin".to_owned());
    let twin = |machine_id: Option<String>, boot_id: Option<String>| {
        let mut record = dead_record(&f);
        record.owner.machine_id = machine_id;
        record.owner.boot_id = boot_id;
        record
    };
    let foreign = [
        (
            twin(None, another_boot.clone()),
            "no machine id, another boot",
        ),
        (
            twin(Some("0".repeat(32)), me.boot_id.clone()),
            "another machine id",
        ),
        (
            twin(Some("0".repeat(32)), None),
            "another machine id, no boot",
        ),
        (twin(None, None), "neither recorded"),
    ];
    for leases in [f.leases.clone(), record_only(&f.leases)] {
        for (record, case) in &foreign {
            durable::replace(&files(&f).record, &record.to_bytes()).unwrap();
            assert_eq!(
                leases.classify(&f.cache).unwrap(),
                Status::Active(Some(record.clone())),
                "{case}"
            );
            assert!(matches!(busy(&leases, &f.cache), Busy::Active(_)), "{case}");
            assert_eq!(
                durable::read(&files(&f).record).unwrap().unwrap(),
                record.to_bytes(),
                "{case}"
            );
        }
        let rebooted = twin(me.machine_id.clone(), another_boot.clone());
        durable::replace(&files(&f).record, &rebooted.to_bytes()).unwrap();
        assert_eq!(
            leases.classify(&f.cache).unwrap(),
            Status::Stale(rebooted),
            "this machine, booted since"
        );
        drop(acquire(&leases, &f.cache, "after-reboot"));
    }
}

/// Mixed hosts on one export: a process that trusts kernel locks finds the
/// record of a live record-only holder (which holds no kernel lock), or of
/// another host's owner. Neither is taken over or released by hand, and the
/// record stays as it was.
#[test]
fn kernel_lock_users_respect_a_live_record_only_holder() {
    let f = fixture();
    let on_nfs = record_only(&f.leases);
    let holder = acquire(&on_nfs, &f.cache, "on-nfs");
    let mut remote = dead_record(&f);
    remote.owner.host = "another-host".to_owned();
    for live in [holder.record().clone(), remote] {
        durable::replace(&files(&f).record, &live.to_bytes()).unwrap();
        assert_eq!(
            f.leases.classify(&f.cache).unwrap(),
            Status::Active(Some(live.clone()))
        );
        let Busy::Active(found) = busy(&f.leases, &f.cache) else {
            panic!("not active")
        };
        assert_eq!(found.record.as_ref(), Some(&live));
        assert!(matches!(
            f.leases
                .try_acquire_maintenance(&f.cache, &owner("janitor"))
                .unwrap(),
            AcquireOutcome::Busy(Busy::Active(_))
        ));
        assert_eq!(
            f.leases.release_unowned(&f.cache).unwrap_err().code(),
            "EBUSY"
        );
        assert_eq!(
            durable::read(&files(&f).record).unwrap().unwrap(),
            live.to_bytes()
        );
    }
    durable::replace(&files(&f).record, &holder.record().to_bytes()).unwrap();
    holder.release().unwrap();
    drop(acquire(&f.leases, &f.cache, "after"));
}

/// Every way a record can be unreadable: each answers `Unknown`, is never
/// reclaimed, and its bytes stay exactly as they were.
#[test]
fn unreadable_records_are_unknown_and_untouched() {
    let f = fixture();
    let valid = dead_record(&f).to_bytes();
    let mut corrupt: Vec<Vec<u8>> = (0..valid.len()).map(|n| valid[..n].to_vec()).collect();
    corrupt.push(vec![0xff, 0x00, 0x13, 0x37, b'{', 0x80]);
    corrupt.push(b"\0\0\0\0\0\0\0\0".to_vec());
    for wrong_shape in [
        "null",
        "[]",
        "42",
        "\"lease\"",
        "{}",
        r#"{"version":1}"#,
        r#"{"version":2,"dir":"/x","owner":{},"acquiredAtMs":1}"#,
    ] {
        corrupt.push(format!("{wrong_shape}\n").into_bytes());
    }
    let mut extra_field: serde_json::Value = serde_json::from_slice(&valid).unwrap();
    extra_field["surprise"] = true.into();
    corrupt.push(json_line(&extra_field));
    let mut wrong_type = extra_field.clone();
    wrong_type.as_object_mut().unwrap().remove("surprise");
    wrong_type["owner"]["pid"] = "12".into();
    corrupt.push(json_line(&wrong_type));

    let record = files(&f).record;
    for leases in [f.leases.clone(), record_only(&f.leases)] {
        for bytes in &corrupt {
            fs::write(&record, bytes).unwrap();
            let shown = String::from_utf8_lossy(bytes);
            assert!(
                matches!(leases.classify(&f.cache).unwrap(), Status::Unknown(_)),
                "{shown}"
            );
            assert!(leases.in_use(&f.cache).unwrap(), "{shown}");
            assert!(
                matches!(busy(&leases, &f.cache), Busy::Unknown(_)),
                "{shown}"
            );
            assert_eq!(
                leases
                    .maintenance_prune(&f.cache, 0, &owner("janitor"))
                    .unwrap(),
                None
            );
            assert_eq!(&fs::read(&record).unwrap(), bytes, "bytes changed: {shown}");
        }
    }
    assert!(corrupt.len() > valid.len(), "{} cases", corrupt.len());
}

/// Valid JSON as a record line: only its shape can be wrong.
fn json_line(value: &serde_json::Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(value).unwrap();
    bytes.push(b'\n');
    bytes
}

#[test]
fn release_deletes_only_its_own_record() {
    let f = fixture();
    let guard = acquire(&f.leases, &f.cache, "builder");
    let mut intruder = guard.record().clone();
    intruder.owner.nonce = process::nonce();
    durable::replace(&files(&f).record, &intruder.to_bytes()).unwrap();
    guard.release().unwrap();
    assert_eq!(
        durable::read(&files(&f).record).unwrap().unwrap(),
        intruder.to_bytes()
    );
}

#[test]
fn cleanup_holds_outputs_against_admission_and_maintenance() {
    let f = fixture();
    for leases in [f.leases.clone(), record_only(&f.leases)] {
        drop(acquire(&leases, &f.cache, "registering"));
        let cleanup = match leases
            .try_acquire_output(&f.cache, &owner("cleanup"))
            .unwrap()
        {
            AcquireOutcome::Acquired(guard) => guard,
            AcquireOutcome::Busy(busy) => panic!("{busy:?}"),
        };
        assert_eq!(cleanup.role(), Role::Cleanup);
        assert!(leases.in_use(&f.cache).unwrap());
        let Busy::Active(holder) = busy(&leases, &f.cache) else {
            panic!("admitted during cleanup")
        };
        assert_eq!(holder.role, Role::Cleanup);
        assert!(
            holder.describe().contains("cleanup"),
            "{}",
            holder.describe()
        );
        assert_eq!(
            leases
                .maintenance_prune(&f.cache, 0, &owner("janitor"))
                .unwrap(),
            None
        );
        cleanup.release().unwrap();
        let build = acquire(&leases, &f.cache, "builder");
        assert!(matches!(
            leases
                .try_acquire_maintenance(&f.cache, &owner("janitor"))
                .unwrap(),
            AcquireOutcome::Busy(Busy::Active(_))
        ));
        drop(build);
    }
}

#[test]
fn a_dead_cleanups_output_lease_does_not_block() {
    let f = fixture();
    let dead = dead_record(&f);
    durable::replace(&files(&f).output_record, &dead.to_bytes()).unwrap();
    for leases in [f.leases.clone(), record_only(&f.leases)] {
        assert!(!leases.in_use(&f.cache).unwrap());
        drop(acquire(&leases, &f.cache, "builder"));
    }
}

/// A held kernel lock is the authority for "alive": beside a dead owner's
/// record (a takeover under way, say) the output lease stays active, and no
/// build is admitted while it is held.
#[test]
fn a_held_output_lock_beside_a_dead_owners_record_is_active() {
    let f = fixture();
    drop(acquire(&f.leases, &f.cache, "registering"));
    let files = files(&f);
    let _held = natives_system::lock::try_exclusive(&files.output_lock)
        .unwrap()
        .expect("the output lock is free");
    let dead = dead_record(&f);
    durable::replace(&files.output_record, &dead.to_bytes()).unwrap();
    let trust = LockTrust::Kernel;
    assert_eq!(
        Slot::output(&files, &trust).status().unwrap(),
        Status::Active(Some(dead.clone()))
    );
    assert!(f.leases.outputs_in_use(&f.cache).unwrap());
    let Busy::Active(holder) = busy(&f.leases, &f.cache) else {
        panic!("admitted while the output lock is held")
    };
    assert_eq!(
        *holder,
        Holder {
            role: Role::Cleanup,
            record: Some(dead)
        }
    );
}

#[test]
fn inventory_reports_holders_and_last_owners() {
    let f = fixture();
    let other = f.cache.with_file_name("other-target");
    let held = acquire(&f.leases, &f.cache, "builder");
    drop(acquire(&f.leases, &other, "reviewer"));
    let unread = f
        .leases
        .home()
        .join("cache-leases")
        .join(format!("{}.json", "e".repeat(64)));
    fs::write(&unread, b"{").unwrap();
    let entries = f.leases.inventory().unwrap();
    assert_eq!(entries.len(), 3, "{entries:#?}");
    let by_dir = |dir: &Path| {
        entries
            .iter()
            .find(|e| e.dir.as_deref() == Some(dir))
            .unwrap()
    };
    let active = by_dir(&f.cache);
    assert_eq!(active.status, EntryStatus::Active);
    assert_eq!(active.owner.as_ref().unwrap().seat, "builder");
    assert_eq!(active.since_ms, Some(held.record().acquired_at_ms));
    let released = by_dir(&other);
    assert_eq!(released.status, EntryStatus::Free);
    assert_eq!(released.owner.as_ref().unwrap().seat, "reviewer");
    assert!(released.released_at_ms.is_some());
    let unknown = entries.iter().find(|e| e.slug == "e".repeat(64)).unwrap();
    assert!(matches!(unknown.status, EntryStatus::Unknown(_)) && unknown.dir.is_none());
}

/// A cache held only through its output lease (process cleanup of a cache
/// no build ever leased here) is registered all the same.
#[test]
fn inventory_lists_a_cache_held_only_through_its_output_lease() {
    let f = fixture();
    let cleanup = match f
        .leases
        .try_acquire_output(&f.cache, &owner("cleanup"))
        .unwrap()
    {
        AcquireOutcome::Acquired(guard) => guard,
        AcquireOutcome::Busy(busy) => panic!("{busy:?}"),
    };
    let entries = f.leases.inventory().unwrap();
    assert_eq!(entries.len(), 1, "{entries:#?}");
    let entry = &entries[0];
    assert_eq!(entry.dir.as_deref(), Some(f.cache.as_path()));
    assert_eq!(entry.status, EntryStatus::Free);
    assert!(entry.outputs_held);
    assert_eq!(entry.owner.as_ref(), Some(&cleanup.record().owner));
    assert_eq!(entry.since_ms, Some(cleanup.record().acquired_at_ms));
    cleanup.release().unwrap();
    assert_eq!(f.leases.inventory().unwrap(), vec![]);
}

#[test]
fn wait_for_is_bounded_by_its_budget_and_names_the_holder() {
    let f = fixture();
    let _held = acquire(&f.leases, &f.cache, "builder");
    let budget = Duration::from_millis(300);
    let started = Instant::now();
    let err = f
        .leases
        .wait_for(&f.cache, &owner("waiter"), budget)
        .unwrap_err();
    let took = started.elapsed();
    assert_eq!(err.code(), "ETIMEDOUT");
    assert!(err.message().contains("run-1/node-a/builder"), "{err}");
    assert!(
        took >= budget && took <= budget + POLL_INTERVAL + Duration::from_millis(50),
        "{took:?}"
    );
}

#[test]
fn wait_for_takes_the_lease_once_it_is_released() {
    let f = fixture();
    let held = acquire(&f.leases, &f.cache, "builder");
    let releaser = thread::spawn(move || {
        thread::sleep(Duration::from_millis(100));
        held.release().unwrap();
    });
    let guard = f
        .leases
        .wait_for(&f.cache, &owner("waiter"), Duration::from_secs(5))
        .unwrap();
    assert_eq!(guard.record().owner.seat, "waiter");
    releaser.join().unwrap();
}

#[test]
fn wait_within_gives_up_within_one_poll_of_cancel() {
    let f = fixture();
    let _held = acquire(&f.leases, &f.cache, "builder");
    let token = CancelToken::new().with_timeout(Some(Duration::from_secs(10)));
    let cancelled_at = std::sync::Mutex::new(None);
    thread::scope(|scope| {
        scope.spawn(|| {
            thread::sleep(Duration::from_millis(120));
            *cancelled_at.lock().unwrap() = Some(Instant::now());
            token.cancel();
        });
        let waited = f.leases.wait_within(&f.cache, &owner("waiter"), &token);
        assert_eq!(waited.unwrap_err().code(), "ABORT_ERR");
        let after_cancel = cancelled_at.lock().unwrap().unwrap().elapsed();
        assert!(
            after_cancel <= POLL_INTERVAL + Duration::from_millis(25),
            "{after_cancel:?}"
        );
    });
    assert!(
        matches!(f.leases.classify(&f.cache).unwrap(), Status::Active(Some(r)) if r.owner.seat == "builder")
    );
}

/// Acquiring for a build: with no budget, one attempt that a busy lease
/// refuses with `EBUSY` naming the holder; with a budget, a wait that ends
/// in `ETIMEDOUT` or, once free, in the lease with the cache made fresh for
/// the build's source (here a cache with no build output yet, so nothing is
/// cleaned), and nothing to do for the same source again.
#[test]
fn acquire_for_build_waits_within_its_budget_then_makes_the_cache_fresh() {
    let f = fixture();
    let cache = f.cache.with_file_name("no-output-yet");
    fs::create_dir(&cache).unwrap();
    let worktree = f.cache.with_file_name("worktree");
    fs::create_dir(&worktree).unwrap();
    let identity = crate::fresh::Identity {
        worktree: worktree.clone(),
        head: "a".repeat(40),
    };
    let build = |budget: Duration| {
        let wait = CancelToken::new().with_timeout(Some(budget));
        f.leases.acquire_for_build(
            &cache,
            &owner("builder"),
            crate::fresh::Refresh::For(identity.clone()),
            &crate::fresh::Build::default(),
            (!budget.is_zero()).then_some(&wait),
            &CancelToken::new(),
        )
    };
    let held = acquire(&f.leases, &cache, "holder");
    let once = build(Duration::ZERO).unwrap_err();
    assert_eq!(once.code(), "EBUSY", "{once}");
    assert!(once.message().contains("run-1/node-a/holder"), "{once}");
    assert_eq!(
        build(Duration::from_millis(60)).unwrap_err().code(),
        "ETIMEDOUT"
    );
    drop(held);
    let (guard, freshness) = build(Duration::from_secs(5)).unwrap();
    assert_eq!(
        freshness,
        Some(crate::fresh::Freshness::Refreshed { cleaned: vec![] })
    );
    assert_eq!(guard.record().owner.seat, "builder");
    drop(guard);
    let (_, again) = build(Duration::ZERO).unwrap();
    assert_eq!(again, Some(crate::fresh::Freshness::Unchanged));
}

#[test]
fn a_human_release_refuses_a_live_owner_and_keeps_unreadable_bytes() {
    let f = fixture();
    for leases in [f.leases.clone(), record_only(&f.leases)] {
        assert_eq!(leases.release_unowned(&f.cache).unwrap(), Released::Nothing);
        let held = acquire(&leases, &f.cache, "builder");
        let err = leases.release_unowned(&f.cache).unwrap_err();
        assert_eq!(err.code(), "EBUSY");
        assert!(err.message().contains("run-1/node-a/builder"), "{err}");
        drop(held);

        let dead = dead_record(&f);
        durable::replace(&files(&f).record, &dead.to_bytes()).unwrap();
        assert_eq!(
            leases.release_unowned(&f.cache).unwrap(),
            Released::Dead(Box::new(dead))
        );
        let entry = leases.inventory().unwrap().remove(0);
        assert_eq!(
            (entry.status, entry.owner.unwrap().seat),
            (EntryStatus::Free, "dead".to_owned())
        );
        assert!(
            entry.released_at_ms.is_some(),
            "the catalog remembers the release"
        );
        assert_eq!(leases.classify(&f.cache).unwrap(), Status::Free);

        fs::write(&files(&f).record, b"{\"torn").unwrap();
        let Released::MovedAside { to, .. } = leases.release_unowned(&f.cache).unwrap() else {
            panic!("unreadable record not moved aside");
        };
        assert_eq!(fs::read(&to).unwrap(), b"{\"torn");
        assert_eq!(leases.classify(&f.cache).unwrap(), Status::Free);
        fs::remove_file(to).unwrap();
    }
}

#[test]
fn a_hold_is_releasable_once_its_lease_is_free() {
    let f = fixture();
    let hold = resource_hold(&f.cache).unwrap();
    let held = acquire(&f.leases, &f.cache, "builder");
    assert!(!f.leases.hold_releasable(&hold).unwrap());
    drop(held);
    assert!(f.leases.hold_releasable(&hold).unwrap());
    assert_eq!(
        f.leases
            .hold_releasable("resource:gpu:/x")
            .unwrap_err()
            .code(),
        "EINVAL"
    );
}

#[test]
fn reading_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let leases = Leases::open(&home).unwrap();
    assert_eq!(leases.classify(dir.path()).unwrap(), Status::Free);
    assert!(!leases.in_use(dir.path()).unwrap());
    assert!(leases.inventory().unwrap().is_empty());
    assert!(!home.exists(), "a read created the store");
    drop(acquire(&leases, dir.path(), "builder"));
    assert!(home.join("cache-leases/catalog").is_dir());
}

/// Two reclaimers of one dead owner's record on this host, each with its own
/// temporary directory: while one reclaims, the other (a real process) is
/// told the lease is contended, and only the first holds it.
#[test]
fn reclaimers_serialise_whatever_their_temporary_directory() {
    let f = fixture();
    let leases = record_only(&f.leases);
    let files = files(&f);
    let dead = dead_record(&f);
    durable::replace(&files.record, &dead.to_bytes()).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let mine = LeaseRecord::new(f.cache.clone(), owner("first"));
    let second = Rc::new(RefCell::new(None));
    let (answer, home, cache) = (second.clone(), f.leases.home().to_owned(), f.cache.clone());
    let temp = elsewhere.path().to_owned();
    let taken = take_observed(&Slot::cache(&files, leases.trust()), &mine, move |point| {
        if point == RECLAIMING {
            *answer.borrow_mut() = Some(record_only_acquirer(&home, &cache, &temp));
        }
    })
    .unwrap();
    let Taken::Held(held, Some(reclaimed)) = taken else {
        panic!("the first reclaimer did not hold")
    };
    assert_eq!(reclaimed, dead);
    assert_eq!(
        second.borrow().as_deref(),
        Some("busy: contended by another acquirer")
    );
    assert_eq!(
        durable::read(&files.record).unwrap().unwrap(),
        mine.to_bytes()
    );
    assert!(held.release().unwrap());
}

/// An operator's release while a reclaimer holds the reclaim lock: it is
/// refused as busy, and the dead record stays for the reclaimer to replace.
#[test]
fn a_human_release_during_a_reclaim_is_refused() {
    let f = fixture();
    let leases = record_only(&f.leases);
    let files = files(&f);
    let dead = dead_record(&f);
    durable::replace(&files.record, &dead.to_bytes()).unwrap();
    let mine = LeaseRecord::new(f.cache.clone(), owner("reclaimer"));
    let refused = Rc::new(RefCell::new(None));
    let (answer, (human, cache), record) = (
        refused.clone(),
        (leases.clone(), f.cache.clone()),
        files.record.clone(),
    );
    let slot = Slot::cache(&files, leases.trust());
    let dead_bytes = dead.to_bytes();
    let taken = take_observed(&slot, &mine, move |point| {
        if point == RECLAIMING {
            let released = human.release_unowned(&cache).map_err(|e| e.to_string());
            *answer.borrow_mut() = Some(released);
            assert_eq!(durable::read(&record).unwrap().unwrap(), dead_bytes);
        }
    })
    .unwrap();
    let refused = refused.take().expect("never reclaimed").unwrap_err();
    assert!(refused.starts_with("EBUSY: "), "{refused}");
    assert!(refused.contains("contended"), "{refused}");
    assert!(matches!(taken, Taken::Held(_, Some(_))));
}

/// Recording the acquisition in the catalog fails after the lease record
/// was published (a directory is in the catalog entry's way): the attempt
/// fails and leaves no record naming this live process, so the lease is not
/// wedged.
#[test]
fn a_failure_after_publication_leaves_the_lease_free() {
    let f = fixture();
    let files = files(&f);
    fs::create_dir_all(files.catalog.join("in-the-way")).unwrap();
    for leases in [f.leases.clone(), record_only(&f.leases)] {
        let err = leases.try_acquire(&f.cache, &owner("builder")).unwrap_err();
        assert_eq!(err.code(), "EISDIR", "{err}");
        assert!(
            durable::read(&files.record).unwrap().is_none(),
            "record left"
        );
        assert_eq!(leases.classify(&f.cache).unwrap(), Status::Free);
    }
    fs::remove_dir_all(&files.catalog).unwrap();
    drop(acquire(&record_only(&f.leases), &f.cache, "after"));
}

/// The new record is linked under its name and the attempt dies before
/// flushing the directory (a panic standing for a failed `fsync`): the
/// record naming this live process is taken back.
#[test]
fn a_publication_that_fails_after_linking_is_taken_back() {
    let f = fixture();
    let leases = record_only(&f.leases);
    let files = files(&f);
    let mine = LeaseRecord::new(f.cache.clone(), owner("builder"));
    let slot = Slot::cache(&files, leases.trust());
    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        take_observed(&slot, &mine, |point| {
            if point == durable::Step::Named.name() {
                panic!("the directory could not be flushed");
            }
        })
    }));
    assert!(failed.is_err());
    assert!(
        durable::read(&files.record).unwrap().is_none(),
        "record left"
    );
    assert_eq!(leases.classify(&f.cache).unwrap(), Status::Free);
}

/// A real record-only acquirer is SIGKILLed right after each step of taking
/// a free lease, and of reclaiming a dead owner's: the lease is left free or
/// stale (never unknown, never held by the dead), and the next acquirer
/// takes it.
#[test]
fn a_record_only_acquirer_killed_at_any_step_never_wedges_the_lease() {
    for reclaiming in [false, true] {
        for (index, point) in take_points(reclaiming).into_iter().enumerate() {
            let f = fixture();
            let leases = record_only(&f.leases);
            if reclaiming {
                durable::replace(&files(&f).record, &dead_record(&f).to_bytes()).unwrap();
            }
            let out = acquirer_child("lease::tests::record_only_crash_child", &f)
                .env(CRASH_STEP_ENV, index.to_string())
                .output()
                .unwrap();
            let case = format!("reclaiming: {reclaiming}, killed after {point:?}");
            assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{case}: {out:?}");
            let said = String::from_utf8_lossy(&out.stderr);
            assert!(said.contains(&format!("({point})")), "{case}: {said}");
            let left = leases.classify(&f.cache).unwrap();
            assert!(
                matches!(left, Status::Free | Status::Stale(_)),
                "{case}: {left:?}"
            );
            let heir = acquire(&leases, &f.cache, "heir");
            assert_eq!(heir.reclaimed().is_some(), left != Status::Free, "{case}");
        }
    }
}

/// Taking a slot by its record passes its crash points in order, each once:
/// the kill-at-every-step test kills at each of these.
#[test]
fn taking_by_record_passes_every_step_in_order() {
    for reclaiming in [false, true] {
        let f = fixture();
        let files = files(&f);
        if reclaiming {
            durable::replace(&files.record, &dead_record(&f).to_bytes()).unwrap();
        }
        let passed = Rc::new(RefCell::new(Vec::new()));
        let seen = passed.clone();
        let mine = LeaseRecord::new(f.cache.clone(), owner("taker"));
        let leases = record_only(&f.leases);
        let slot = Slot::cache(&files, leases.trust());
        let taken = take_observed(&slot, &mine, move |point| seen.borrow_mut().push(point));
        assert!(matches!(taken.unwrap(), Taken::Held(..)));
        assert_eq!(
            *passed.borrow(),
            take_points(reclaiming),
            "reclaiming: {reclaiming}"
        );
    }
}

/// Child: take the slot by its record, dying at the crash point it is told.
#[test]
#[ignore = "run by a_record_only_acquirer_killed_at_any_step_never_wedges_the_lease in a child process"]
fn record_only_crash_child() {
    let ([Ok(home), Ok(cache)], Ok(step)) = (
        ACQUIRER_ENV.map(std::env::var),
        std::env::var(CRASH_STEP_ENV),
    ) else {
        return;
    };
    LeaseFiles::create_dirs(Path::new(&home)).unwrap();
    let files = LeaseFiles::new(Path::new(&home), Path::new(&cache));
    let trust = LockTrust::RecordOnly("test".to_owned());
    let record = LeaseRecord::new(PathBuf::from(&cache), owner("crashing"));
    crash::install(Some(crash::kill_at(step.parse().unwrap())));
    let _taken = Slot::cache(&files, &trust)
        .try_take(&record, || Ok(None))
        .unwrap();
}

/// The command running the acquirer child `test` on `f`'s home and cache.
fn acquirer_child(test: &str, f: &Fixture) -> std::process::Command {
    acquirer_child_on(test, f.leases.home(), &f.cache)
}

/// The command running the acquirer child `test` on `home` and `cache`.
fn acquirer_child_on(test: &str, home: &Path, cache: &Path) -> std::process::Command {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command
        .args(["--ignored", "--exact", test, "--nocapture"])
        .env(ACQUIRER_ENV[0], home)
        .env(ACQUIRER_ENV[1], cache);
    command
}

/// Run [`record_only_acquirer_child`] on `home` and `cache` with `TMPDIR`
/// set to `temp`: what it answered (`acquired` or `busy: WHY`).
fn record_only_acquirer(home: &Path, cache: &Path, temp: &Path) -> String {
    let out = acquirer_child_on("lease::tests::record_only_acquirer_child", home, cache)
        .env("TMPDIR", temp)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let answer = stdout
        .lines()
        .find_map(|line| line.strip_prefix("answer: "));
    answer
        .unwrap_or_else(|| panic!("no answer in {stdout}"))
        .to_owned()
}

/// Child: one record-only acquisition; prints `answer: acquired` or
/// `answer: busy: WHY`, and lets go of what it took.
#[test]
#[ignore = "run by the reclaim tests in a child process"]
fn record_only_acquirer_child() {
    let [Ok(home), Ok(cache)] = ACQUIRER_ENV.map(std::env::var) else {
        return;
    };
    let leases = Leases::open(Path::new(&home))
        .unwrap()
        .with_trust(LockTrust::RecordOnly("test".to_owned()));
    let answer = match leases.try_acquire(Path::new(&cache), &owner("second")) {
        Ok(AcquireOutcome::Acquired(_)) => "acquired".to_owned(),
        Ok(AcquireOutcome::Busy(busy)) => format!("busy: {}", busy.describe()),
        Err(err) => format!("error: {err}"),
    };
    println!("\nanswer: {answer}");
}

/// An owner must say who holds a lease: an empty run, node or seat is
/// refused (`EINVAL`, naming the field) by every way to acquire, and nothing
/// is recorded.
#[test]
fn an_owner_that_names_nobody_is_refused_by_every_acquisition() {
    let f = fixture();
    for field in ["run", "node", "seat"] {
        let mut nobody = owner("builder");
        match field {
            "run" => nobody.run.clear(),
            "node" => nobody.node.clear(),
            _ => nobody.seat.clear(),
        }
        let refusals = [
            f.leases.try_acquire(&f.cache, &nobody).map(drop),
            f.leases.try_acquire_output(&f.cache, &nobody).map(drop),
            f.leases
                .try_acquire_maintenance(&f.cache, &nobody)
                .map(drop),
            f.leases
                .wait_for(&f.cache, &nobody, Duration::from_millis(10))
                .map(drop),
        ];
        for refused in refusals {
            let err = refused.unwrap_err();
            assert_eq!(err.code(), "EINVAL", "{field}: {err}");
            assert!(err.message().contains(&format!("owner.{field}")), "{err}");
        }
    }
    assert_eq!(f.leases.classify(&f.cache).unwrap(), Status::Free);
}

/// Every front shows statuses with the same words, and `inspect` answers
/// status and use together.
#[test]
fn statuses_have_one_name_and_inspect_says_whether_the_cache_is_in_use() {
    let f = fixture();
    let table = [
        (Status::Free, "free"),
        (Status::Active(None), "active"),
        (Status::Stale(dead_record(&f)), "stale"),
        (Status::Unknown("torn".into()), "unknown"),
    ];
    for (status, name) in table {
        assert_eq!(status.name(), name);
    }
    let entries = [
        (EntryStatus::Free, "free"),
        (EntryStatus::Active, "active"),
        (EntryStatus::Stale, "stale"),
        (EntryStatus::Unknown("torn".into()), "unknown"),
    ];
    for (status, name) in entries {
        assert_eq!(status.name(), name);
    }
    let free = f.leases.inspect(&f.cache).unwrap();
    assert_eq!((free.status.name(), free.in_use), ("free", false));
    let held = acquire(&f.leases, &f.cache, "builder");
    let busy = f.leases.inspect(&f.cache).unwrap();
    assert_eq!((busy.status.name(), busy.in_use), ("active", true));
    drop(held);
    let cleanup = f
        .leases
        .try_acquire_output(&f.cache, &owner("cleanup"))
        .unwrap();
    let cleaning = f.leases.inspect(&f.cache).unwrap();
    assert_eq!((cleaning.status.name(), cleaning.in_use), ("free", true));
    drop(cleanup);
}

/// A zero or absent budget makes one attempt; a budget waits, bounded.
#[test]
fn a_budget_of_zero_or_none_means_one_attempt() {
    let token = CancelToken::new();
    assert!(Leases::budget_wait(&token, None).is_none());
    assert!(Leases::budget_wait(&token, Some(Duration::ZERO)).is_none());
    let wait = Leases::budget_wait(&token, Some(Duration::from_secs(5))).unwrap();
    let left = wait.remaining().unwrap();
    assert!(
        left > Duration::from_secs(4) && left <= Duration::from_secs(5),
        "{left:?}"
    );
    token.cancel();
    assert_eq!(
        wait.check().unwrap_err().code(),
        "ABORT_ERR",
        "the wait stops with its token"
    );
}
