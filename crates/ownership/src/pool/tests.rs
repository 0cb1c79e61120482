use std::{
    cell::RefCell,
    fs::File,
    io::Write,
    os::unix::{fs::MetadataExt, process::ExitStatusExt},
    process::{Child, Command},
    rc::Rc,
    time::SystemTime,
};

use super::*;
use crate::fresh::{self, Identity};
use natives_system::lock::try_cargo_lock;

/// One home and one pool directory in a folder the test owns.
struct Fixture {
    _root: tempfile::TempDir,
    pool: PathBuf,
    leases: Leases,
}

fn fixture() -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().canonicalize().unwrap();
    Fixture {
        leases: Leases::open(&base.join("home")).unwrap(),
        pool: base.join("pool"),
        _root: root,
    }
}

fn owner(seat: &str) -> Owner {
    Owner::current("run", "node", seat)
}

fn sized(size: usize) -> PoolOptions {
    PoolOptions {
        size,
        ..PoolOptions::default()
    }
}

impl Fixture {
    fn acquire(&self, seat: &str, options: &PoolOptions) -> Result<PoolLease> {
        let cancel = CancelToken::new();
        self.leases
            .acquire_from_pool(&self.pool, &owner(seat), options, None, &cancel)
    }

    fn record(&self, name: &str) -> Recorded {
        let pool = PoolDir::new(self.leases.home(), &self.pool).unwrap();
        member::read_member(&pool.files.member(name)).unwrap()
    }

    fn state(&self, name: &str) -> Option<MemberState> {
        match self.record(name) {
            Recorded::Member(record) => Some(record.state),
            _ => None,
        }
    }

    fn inventory(&self) -> PoolInventory {
        self.leases.pool_inventory(&self.pool).unwrap()
    }
}

/// The files cargo lays out in a target directory, enough to be copied,
/// refreshed and pruned as one: `bytes` in the compiled library; left
/// alone long enough for a seed to trust them ([`settle`]).
fn lay_out_build(dir: &Path, bytes: usize) {
    let files: [(&str, Vec<u8>); 5] = [
        (
            "CACHEDIR.TAG",
            b"Signature: 8a477f597d28d172789f06886806bc55\n".to_vec(),
        ),
        (".rustc_info.json", b"{}".to_vec()),
        ("debug/.cargo-lock", Vec::new()),
        ("debug/.fingerprint/x-1/lib-x", b"abc".to_vec()),
        ("debug/deps/libx-1.rlib", vec![b'r'; bytes]),
    ];
    for (rel, contents) in files {
        natives_testkit::write(dir, rel, contents);
    }
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    File::options()
        .write(true)
        .open(dir.join("debug/deps/libx-1.rlib"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    settle(dir);
}

/// Wait until what was just written under `dir` is old enough for a seed to
/// trust its copy without reading it again.
fn settle(dir: &Path) {
    let since = clone::fs_clock(dir).unwrap();
    thread::sleep(since.settle() + Duration::from_millis(50));
}

#[test]
fn a_free_member_is_leased_at_once_and_a_busy_pool_grows_to_its_size() {
    let fx = fixture();
    let first = fx.acquire("a", &sized(2)).unwrap();
    assert_eq!(first.member(), "member-0");
    assert_eq!(first.seed().unwrap().strategy, SeedStrategy::Cold);
    assert_eq!(first.dir(), fx.pool.join("member-0"));
    let env = first.env();
    assert_eq!(
        env[0],
        ("CARGO_TARGET_DIR".to_owned(), first.dir().to_owned())
    );
    assert_eq!(env[1].0, "CARGO_BUILD_BUILD_DIR");
    let second = fx.acquire("b", &sized(2)).unwrap();
    assert_eq!(second.member(), "member-1");
    let full = fx.acquire("c", &sized(2)).unwrap_err();
    assert_eq!(full.code(), "EBUSY");
    for named in ["member-0", "member-1", "run/node/a", "run/node/b"] {
        assert!(full.message().contains(named), "{full}");
    }
    first.release().unwrap();
    let again = fx.acquire("c", &sized(2)).unwrap();
    assert_eq!(again.member(), "member-0");
    assert!(again.seed().is_none(), "an existing member is not seeded");
}

#[test]
fn a_full_pool_is_waited_for_within_the_budget() {
    let fx = fixture();
    let held = fx.acquire("a", &sized(1)).unwrap();
    let cancel = CancelToken::new();
    let wait = CancelToken::new().with_timeout(Some(Duration::from_millis(150)));
    let started = Instant::now();
    let err = fx
        .leases
        .acquire_from_pool(&fx.pool, &owner("b"), &sized(1), Some(&wait), &cancel)
        .unwrap_err();
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert_eq!(err.code(), "ETIMEDOUT");
    assert!(err.message().contains("run/node/a"), "{err}");
    let letting_go = thread::spawn(move || {
        thread::sleep(Duration::from_millis(100));
        held.release().unwrap();
    });
    let wait = CancelToken::new().with_timeout(Some(Duration::from_secs(60)));
    let lease = fx
        .leases
        .acquire_from_pool(&fx.pool, &owner("b"), &sized(1), Some(&wait), &cancel)
        .unwrap();
    letting_go.join().unwrap();
    assert_eq!(lease.member(), "member-0");
    let stopped = CancelToken::new();
    stopped.cancel();
    let err = fx
        .leases
        .acquire_from_pool(&fx.pool, &owner("c"), &sized(1), Some(&wait), &stopped)
        .unwrap_err();
    assert_eq!(err.code(), "ABORT_ERR");
}

#[test]
fn bad_options_and_owners_are_refused() {
    let fx = fixture();
    let err = fx.acquire("a", &sized(0)).unwrap_err();
    assert_eq!(err.code(), "EINVAL");
    assert!(err.message().contains("size"), "{err}");
    let err = fx.acquire("", &sized(1)).unwrap_err();
    assert_eq!(err.code(), "EINVAL");
    assert!(err.message().contains("owner.seat"), "{err}");
    assert_eq!(
        SeedStrategy::parse("hardlink").unwrap_err().code(),
        "EINVAL"
    );
    for strategy in ["auto", "reflink", "copy", "cold"] {
        assert_eq!(SeedStrategy::parse(strategy).unwrap().name(), strategy);
    }
}

/// A new member made while the warm one is held is a copy of it: same
/// bytes, modes and times, its identity carried over, marked ready.
#[test]
fn a_new_member_is_seeded_from_the_warm_member_while_it_is_held() {
    let fx = fixture();
    let warm = fx.acquire("a", &sized(3)).unwrap();
    lay_out_build(warm.dir(), 10_000);
    let identity = Identity {
        worktree: fx.pool.parent().unwrap().to_owned(),
        head: "c0ffee".to_owned(),
    };
    fresh::record_identity(fx.leases.home(), warm.dir(), &identity).unwrap();
    let seeded = fx.acquire("b", &sized(3)).unwrap();
    let report = seeded.seed().unwrap();
    assert_eq!(report.from.as_deref(), Some("member-0"));
    assert_ne!(report.strategy, SeedStrategy::Cold, "{report:?}");
    assert_eq!(report.files, 5);
    let copy = seeded.dir().join("debug/deps/libx-1.rlib");
    let source = warm.dir().join("debug/deps/libx-1.rlib");
    assert_eq!(fs::read(&copy).unwrap(), fs::read(&source).unwrap());
    let (copied, original) = (fs::metadata(&copy).unwrap(), fs::metadata(&source).unwrap());
    assert_eq!(copied.modified().unwrap(), original.modified().unwrap());
    assert_ne!(copied.ino(), original.ino());
    assert!(!fresh::needs_refresh(fx.leases.home(), seeded.dir(), &identity).unwrap());
    assert_eq!(fx.state("member-1"), Some(MemberState::Ready));
    assert_eq!(
        fx.inventory().members[1].seed.as_ref().map(|s| s.strategy),
        Some(report.strategy)
    );
}

/// A seed carries its source's identity over only when it reads the same
/// before and after the copy: a refresh of the source for another source
/// during the copy (here, as the first pass ends) leaves the new member
/// with none, so that its own refresh cleans every workspace package.
#[test]
fn a_seed_carries_no_identity_that_changed_during_its_copy() {
    let fx = fixture();
    let warm = fx.acquire("a", &sized(3)).unwrap();
    lay_out_build(warm.dir(), 100);
    let identity = |head: &str| Identity {
        worktree: fx.pool.parent().unwrap().to_owned(),
        head: head.to_owned(),
    };
    let (home, source) = (fx.leases.home().to_owned(), warm.dir().to_owned());
    fresh::record_identity(&home, &source, &identity("before")).unwrap();
    let during = identity("after");
    crash::install(Some(Box::new(move |point| {
        if point == seed::points::COPIED_ONCE {
            fresh::record_identity(&home, &source, &during).unwrap();
        }
    })));
    let seeded = fx.acquire("b", &sized(3));
    crash::install(None);
    let seeded = seeded.unwrap();
    assert_ne!(seeded.seed().map(|s| s.strategy), Some(SeedStrategy::Cold));
    for head in ["before", "after"] {
        let home = fx.leases.home();
        assert!(
            fresh::needs_refresh(home, seeded.dir(), &identity(head)).unwrap(),
            "{head}"
        );
    }
}

/// On this test's filesystem (no reflinks on ext4 or tmpfs) a reflink asked
/// for is refused, and the choice says why it copied.
#[test]
fn the_seed_strategy_is_reported_and_a_reflink_is_never_faked() {
    let fx = fixture();
    let warm = fx.acquire("a", &sized(4)).unwrap();
    lay_out_build(warm.dir(), 100);
    let probe = warm.dir().join("debug/deps/libx-1.rlib");
    if clone::reflink_works(&probe, warm.dir()).unwrap() {
        println!("skipped: this filesystem clones files (see tests/pool_processes.rs)");
        return;
    }
    let reflink = PoolOptions {
        seed: SeedStrategy::Reflink,
        ..sized(4)
    };
    let err = fx.acquire("b", &reflink).unwrap_err();
    assert_eq!(err.code(), "ENOTSUP");
    let auto = fx.acquire("c", &sized(4)).unwrap();
    let report = auto.seed().unwrap();
    assert_eq!(report.strategy, SeedStrategy::Copy);
    assert!(report.reason.contains("no reflinks here"), "{report:?}");
    let cold = PoolOptions {
        seed: SeedStrategy::Cold,
        ..sized(4)
    };
    let report = fx.acquire("d", &cold).unwrap().seed().cloned().unwrap();
    assert_eq!((report.strategy, report.files), (SeedStrategy::Cold, 0));
}

/// A plain copy measured to be slower than a build from nothing gives way
/// to a cold member, emptied of what the sample copied.
#[test]
fn a_copy_slower_than_a_cold_build_gives_way_to_a_cold_member() {
    let fx = fixture();
    let warm = fx.acquire("a", &sized(2)).unwrap();
    lay_out_build(warm.dir(), 1_000_000);
    let pool = PoolDir::new(fx.leases.home(), &fx.pool).unwrap();
    let mut record = member::read_pool(&pool.files.record).unwrap();
    record.cold_fill_ms = Some(0);
    member::write_pool(&pool.files.record, &record).unwrap();
    let lease = fx.acquire("b", &sized(2)).unwrap();
    let report = lease.seed().unwrap();
    if report.strategy == SeedStrategy::Reflink {
        println!("skipped: this filesystem clones files");
        return;
    }
    assert_eq!(report.strategy, SeedStrategy::Cold, "{report:?}");
    assert!(
        report.reason.contains("longer than a build from nothing"),
        "{report:?}"
    );
    assert_eq!(fs::read_dir(lease.dir()).unwrap().count(), 0);
}

/// A member created cold measures a build from nothing when first let go.
#[test]
fn a_cold_member_measures_a_build_from_nothing() {
    let fx = fixture();
    let lease = fx.acquire("a", &sized(1)).unwrap();
    thread::sleep(Duration::from_millis(20));
    lease.release().unwrap();
    let measured = fx.inventory().cold_fill_ms.unwrap();
    assert!(measured >= 20, "{measured}");
    assert_eq!(fx.inventory().size, Some(1));
}

/// A seed never waits for a cargo writing its source: with the warm
/// member's lock held by a "cargo" for the whole acquisition (and a wait it
/// may use), the new member is a copy of the source as that cargo left it,
/// the fingerprint it emptied (as cargo does before it rebuilds a unit)
/// empty, so that the new member's build remakes that unit.
#[test]
fn a_seed_never_waits_for_a_cargo_writing_its_source() {
    let fx = fixture();
    let warm = fx.acquire("a", &sized(3)).unwrap();
    natives_testkit::write(warm.dir(), "debug/.fingerprint/y-2/lib-y", "def");
    lay_out_build(warm.dir(), 100);
    let cargo = try_cargo_lock(&warm.dir().join("debug/.cargo-lock"), true)
        .unwrap()
        .unwrap();
    natives_testkit::write(warm.dir(), "debug/.fingerprint/x-1/lib-x", "");
    let wait = CancelToken::new().with_timeout(Some(Duration::from_secs(5)));
    let cancel = CancelToken::new();
    let lease = fx
        .leases
        .acquire_from_pool(&fx.pool, &owner("b"), &sized(3), Some(&wait), &cancel)
        .unwrap();
    let report = lease.seed().unwrap();
    assert_eq!(report.from.as_deref(), Some("member-0"), "{report:?}");
    assert_ne!(report.strategy, SeedStrategy::Cold, "{report:?}");
    assert_eq!((report.files, report.left_out), (6, 0), "{report:?}");
    let copy = lease.dir();
    for kept in [
        "debug/deps/libx-1.rlib",
        "debug/.fingerprint/x-1/lib-x",
        "debug/.fingerprint/y-2/lib-y",
        "CACHEDIR.TAG",
    ] {
        assert_eq!(
            fs::read(copy.join(kept)).unwrap(),
            fs::read(warm.dir().join(kept)).unwrap()
        );
    }
    drop(cargo);
}

#[test]
fn members_closest_to_the_owner_come_first() {
    let view = |name: &str, worktree: &str, head: &str, used: u64| MemberView {
        name: name.to_owned(),
        dir: PathBuf::from("/p").join(name),
        record: Recorded::Member(MemberRecord {
            state: MemberState::Ready,
            last_used_ms: used,
            ..MemberRecord::seeding(name, PathBuf::from("/p").join(name), 0)
        }),
        identity: Some(Identity {
            worktree: PathBuf::from(worktree),
            head: head.to_owned(),
        }),
    };
    let members = [
        view("recent", "/w/other", "h2", 9),
        view("same-tree", "/w/mine", "h2", 1),
        view("same-head", "/w/other", "h1", 2),
        view("exact", "/w/mine", "h1", 0),
        view("older", "/w/other", "h2", 5),
    ];
    let me = owner("a").building(PathBuf::from("/w/mine"), "h1".to_owned());
    let order: Vec<&str> = ranked(&members, &me)
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    assert_eq!(
        order,
        ["exact", "same-head", "same-tree", "recent", "older"]
    );
}

/// Idle members beyond the budget go least recently used first; a leased
/// one never does.
#[test]
fn a_budget_prunes_idle_members_least_recently_used_first() {
    let fx = fixture();
    let leases: Vec<PoolLease> = ["a", "b", "c"]
        .iter()
        .map(|seat| fx.acquire(seat, &sized(3)).unwrap())
        .collect();
    for lease in &leases {
        lay_out_build(lease.dir(), 100_000);
    }
    let mut leases = leases.into_iter();
    let (zero, one, two) = (
        leases.next().unwrap(),
        leases.next().unwrap(),
        leases.next().unwrap(),
    );
    one.release().unwrap();
    thread::sleep(Duration::from_millis(5));
    zero.release().unwrap();
    let member_size = fx.inventory().members[2].usage.allocated;
    let planned = fx.leases.plan_pool_prune(&fx.pool, member_size).unwrap();
    let planned: Vec<&str> = planned.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(planned, ["member-1", "member-0"]);
    assert!(fx.pool.join("member-1").exists(), "a plan removes nothing");
    let report = fx
        .leases
        .prune_pool(&fx.pool, member_size, &owner("janitor"))
        .unwrap();
    let pruned: Vec<&str> = report.pruned.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(pruned, ["member-1", "member-0"], "{report:?}");
    assert!(report.bytes_after <= member_size, "{report:?}");
    assert_eq!(report.kept.len(), 1, "{report:?}");
    assert!(report.kept[0].why.contains("run/node/c"), "{report:?}");
    assert!(two.dir().join("debug/deps/libx-1.rlib").exists());
    assert!(!fx.pool.join("member-0").exists() && !fx.pool.join("member-1").exists());
    let names: Vec<String> = fx.inventory().members.into_iter().map(|m| m.name).collect();
    assert_eq!(names, ["member-2"]);
    assert_eq!(
        fs::read_dir(&fx.pool).unwrap().count(),
        1,
        "nothing left aside"
    );
}

/// A member's directory that the pool did not make, or that holds a
/// repository, is never removed.
#[test]
fn prune_never_removes_what_is_not_the_pools() {
    let fx = fixture();
    let lease = fx.acquire("a", &sized(2)).unwrap();
    lay_out_build(lease.dir(), 100);
    fs::create_dir(lease.dir().join(".git")).unwrap();
    lease.release().unwrap();
    natives_testkit::write(&fx.pool, "member-7/notes.txt", "mine");
    let report = fx
        .leases
        .prune_pool(&fx.pool, 0, &owner("janitor"))
        .unwrap();
    assert!(report.pruned.is_empty(), "{report:?}");
    assert!(report.kept[0].why.contains(".git"), "{report:?}");
    assert_eq!(
        fs::read_to_string(fx.pool.join("member-7/notes.txt")).unwrap(),
        "mine"
    );
    let inventory = fx.inventory();
    let statuses: Vec<&str> = inventory.members.iter().map(|m| m.status.name()).collect();
    assert_eq!(statuses, ["ready", "unregistered"]);
    let lease = fx.acquire("b", &sized(3)).unwrap();
    assert_eq!(lease.member(), "member-0");
    let other = fx.acquire("c", &sized(3)).unwrap();
    assert_eq!(
        other.member(),
        "member-1",
        "member-7's name is not taken over"
    );
}

/// A repository deep inside a member (a build script's checkout with a
/// commit nobody pushed) keeps the whole member, named.
#[test]
fn prune_keeps_a_member_holding_a_repository_at_any_depth() {
    let fx = fixture();
    let lease = fx.acquire("a", &sized(2)).unwrap();
    lay_out_build(lease.dir(), 100);
    let checkout = lease.dir().join("debug/build/x-1/out/checkout");
    natives_testkit::write(&checkout, "src.rs", "unpushed work");
    fs::create_dir(checkout.join(".git")).unwrap();
    lease.release().unwrap();
    let report = fx
        .leases
        .prune_pool(&fx.pool, 0, &owner("janitor"))
        .unwrap();
    assert!(report.pruned.is_empty(), "{report:?}");
    assert!(
        report.kept[0].why.contains("out/checkout"),
        "the repository is named: {report:?}"
    );
    assert_eq!(
        fs::read_to_string(checkout.join("src.rs")).unwrap(),
        "unpushed work"
    );
}

#[test]
fn the_inventory_shows_holders_identities_sizes_and_last_use() {
    let fx = fixture();
    let me = owner("a").building(fx.pool.parent().unwrap().to_owned(), "h1".to_owned());
    let options = PoolOptions {
        refresh: Refresh::Skip,
        budget_bytes: Some(1 << 30),
        ..sized(2)
    };
    let cancel = CancelToken::new();
    let held = fx
        .leases
        .acquire_from_pool(&fx.pool, &me, &options, None, &cancel)
        .unwrap();
    lay_out_build(held.dir(), 50_000);
    let inventory = fx.inventory();
    assert_eq!(
        (inventory.size, inventory.budget_bytes),
        (Some(2), Some(1 << 30))
    );
    let member = &inventory.members[0];
    assert_eq!(
        (member.lease.name(), member.status.name()),
        ("active", "ready")
    );
    assert_eq!(member.holder.as_ref().unwrap().seat, "a");
    assert!(member.usage.logical >= 50_000 && member.usage.allocated > 0);
    assert_eq!(member.usage.files, 5);
    let before = member.last_used_ms.unwrap();
    thread::sleep(Duration::from_millis(5));
    held.release().unwrap();
    let member = &fx.inventory().members[0];
    assert_eq!(member.lease.name(), "free");
    assert!(member.holder.is_none());
    assert!(member.last_used_ms.unwrap() > before);
}

/// The environment variable naming the crash point a child is killed at
/// (its index among the points the child's work passes).
const KILL_AT: &str = "NATIVES_TEST_POOL_KILL_AT";
/// The child's pool directory and home.
const CHILD_PLACE: [&str; 2] = ["NATIVES_TEST_POOL_DIR", "NATIVES_TEST_POOL_HOME"];

/// The crash points of making a member, in the order a seed passes them.
const SEED_POINTS: [&str; 8] = [
    seed::points::LEASED,
    seed::points::MARKED,
    seed::points::CREATED,
    clone::SAMPLED,
    seed::points::COPIED_ONCE,
    seed::points::COPIED,
    seed::points::SYNCED,
    seed::points::READY,
];

/// The crash points of discarding a member, in order.
const DISCARD_POINTS: [&str; 4] = [
    discard::points::MARKED,
    discard::points::MOVED_ASIDE,
    discard::points::REMOVED,
    discard::points::FORGOTTEN,
];

/// Every crash point `work` passes on this thread, in order.
fn points_passed(work: impl FnOnce()) -> Vec<&'static str> {
    let passed = Rc::new(RefCell::new(Vec::new()));
    let seen = passed.clone();
    crash::install(Some(Box::new(move |point| seen.borrow_mut().push(point))));
    work();
    crash::install(None);
    passed.take()
}

/// Where `point` comes among `passed`, which must hold it exactly once.
fn index_of(passed: &[&str], point: &str) -> usize {
    let at: Vec<usize> = (0..passed.len()).filter(|&i| passed[i] == point).collect();
    assert_eq!(at.len(), 1, "{point:?} not passed once: {passed:?}");
    at[0]
}

/// A fixture with a warm member held, as each seed crash test starts.
fn warm_fixture() -> (Fixture, PoolLease) {
    let fx = fixture();
    let warm = fx.acquire("warm", &sized(3)).unwrap();
    lay_out_build(warm.dir(), 300_000);
    (fx, warm)
}

/// The crash points a seed of a new member passes, in order, every one.
fn seed_passes() -> Vec<&'static str> {
    let (fx, _warm) = warm_fixture();
    points_passed(|| drop(fx.acquire("seeder", &sized(3)).unwrap()))
}

/// A fixture with one idle member beyond a budget of nothing, as each
/// prune crash test starts.
fn idle_fixture() -> Fixture {
    let fx = fixture();
    let lease = fx.acquire("a", &sized(2)).unwrap();
    lay_out_build(lease.dir(), 200_000);
    lease.release().unwrap();
    fx
}

/// The crash points a prune removing a member passes, in order, every one.
fn prune_passes() -> Vec<&'static str> {
    let fx = idle_fixture();
    let pruner = owner("pruner");
    points_passed(|| drop(fx.leases.prune_pool(&fx.pool, 0, &pruner).unwrap()))
}

/// Run the child test `name` against `fx`, killed at the crash point
/// `index`; it must say it died at `point`, so a step skipped or out of
/// order fails the test.
fn run_child(fx: &Fixture, name: &str, index: usize, point: &str) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", name, "--nocapture"])
        .env(KILL_AT, index.to_string())
        .env(CHILD_PLACE[0], &fx.pool)
        .env(CHILD_PLACE[1], fx.leases.home())
        .output()
        .unwrap();
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGKILL),
        "the child was not killed at {point}: {out:?}"
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains(&format!("({point})")), "{point}: {said}");
}

/// Seeding and discarding pass their crash points in order, each once: the
/// kill-at-every-step tests kill at each of these.
#[test]
fn seeding_and_discarding_pass_every_step_in_order() {
    let ours = |passed: Vec<&'static str>, points: &[&str]| -> Vec<&'static str> {
        passed.into_iter().filter(|p| points.contains(p)).collect()
    };
    assert_eq!(ours(seed_passes(), &SEED_POINTS), SEED_POINTS);
    assert_eq!(ours(prune_passes(), &DISCARD_POINTS), DISCARD_POINTS);
}

/// A seed killed at each of its steps: the member is never leased half
/// seeded. Before `ready` the next acquisition discards it whole (nothing
/// left aside) and makes a new one; from `ready` on it is a whole copy.
#[test]
fn a_seed_killed_at_any_step_leaves_a_whole_member_or_none() {
    let passes = seed_passes();
    for step in SEED_POINTS {
        let (fx, _warm) = warm_fixture();
        let index = index_of(&passes, step);
        run_child(&fx, "pool::tests::seed_child", index, step);
        let survivor = fx.state("member-1");
        let expected = match step {
            seed::points::READY => Some(MemberState::Ready),
            seed::points::LEASED => None,
            _ => Some(MemberState::Seeding),
        };
        assert_eq!(survivor, expected, "after a kill at {step}");
        let next = fx.acquire("next", &sized(3)).unwrap();
        let rlib = next.dir().join("debug/deps/libx-1.rlib");
        assert_eq!(fs::read(&rlib).unwrap().len(), 300_000, "after {step}");
        let (name, seeded) = (next.member(), next.seed().is_some());
        match step {
            seed::points::LEASED => assert_eq!((name, seeded), ("member-1", true)),
            seed::points::READY => assert_eq!((name, seeded), ("member-1", false)),
            // Discarded whole; the next member is a new one.
            _ => assert_eq!((name, seeded), ("member-2", true), "after {step}"),
        }
        let mut names: Vec<_> = fs::read_dir(&fx.pool)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["member-0", name], "after a kill at {step}");
    }
}

/// Run a seed of a new member in `fx` in a child killed once its sample is
/// copied: a member left half-seeded.
fn kill_seed_at_its_sample(fx: &Fixture) {
    let index = index_of(&seed_passes(), clone::SAMPLED);
    run_child(fx, "pool::tests::seed_child", index, clone::SAMPLED);
}

/// A member removed whole, by a prune or discarded half-seeded, leaves no
/// entry in the lease inventory (`natives cache show`): nothing lists a
/// directory that is gone.
#[test]
fn a_removed_member_leaves_no_entry_in_the_lease_inventory() {
    let fx = fixture();
    let warm = fx.acquire("warm", &sized(3)).unwrap();
    lay_out_build(warm.dir(), 1000);
    kill_seed_at_its_sample(&fx);
    let listed = || -> Vec<PathBuf> {
        let entries = fx.leases.inventory().unwrap();
        entries.into_iter().filter_map(|e| e.dir).collect()
    };
    let (half, idle) = (fx.pool.join("member-1"), fx.pool.join("member-0"));
    assert!(listed().contains(&half));
    warm.release().unwrap();
    let report = fx
        .leases
        .prune_pool(&fx.pool, 0, &owner("janitor"))
        .unwrap();
    assert_eq!(report.discarded, ["member-1"], "{report:?}");
    assert_eq!(report.pruned.len(), 1, "{report:?}");
    assert!(!half.exists() && !idle.exists());
    assert_eq!(listed(), Vec::<PathBuf>::new(), "{report:?}");
}

/// A half-seeded member that may not be removed (it holds a repository)
/// is neither removed nor ever leased.
#[test]
fn a_half_seeded_member_that_cannot_be_removed_is_never_leased() {
    let fx = fixture();
    let warm = fx.acquire("warm", &sized(3)).unwrap();
    lay_out_build(warm.dir(), 1000);
    kill_seed_at_its_sample(&fx);
    natives_testkit::write(&fx.pool, "member-1/.git/HEAD", "ref: refs/heads/main\n");
    for seat in ["b", "c"] {
        let lease = fx.acquire(seat, &sized(3)).unwrap();
        assert_eq!(lease.member(), "member-2", "{seat}");
        drop(lease);
    }
    assert_eq!(fx.state("member-1"), Some(MemberState::Seeding));
    assert!(fx.pool.join("member-1/.git/HEAD").exists());
    let report = fx
        .leases
        .prune_pool(&fx.pool, 0, &owner("janitor"))
        .unwrap();
    assert!(fx.pool.join("member-1/.git/HEAD").exists(), "{report:?}");
}

/// A prune killed at each step of removing a member: the member is never
/// leased again, and the next prune finishes its removal.
#[test]
fn a_prune_killed_at_any_step_is_finished_by_the_next() {
    let passes = prune_passes();
    for step in DISCARD_POINTS {
        let fx = idle_fixture();
        run_child(
            &fx,
            "pool::tests::prune_child",
            index_of(&passes, step),
            step,
        );
        let state = fx.state("member-0");
        let gone = step == discard::points::FORGOTTEN;
        let expected = (!gone).then_some(MemberState::Discarding);
        assert_eq!(state, expected, "after a kill at {step}");
        let next = fx.acquire("b", &sized(2)).unwrap();
        lay_out_build(next.dir(), 100);
        assert_ne!(
            (next.member(), next.seed().is_none()),
            ("member-0", true),
            "a half-removed member was leased after {step}"
        );
        drop(next);
        let report = fx
            .leases
            .prune_pool(&fx.pool, 0, &owner("janitor"))
            .unwrap();
        assert!(report.kept.is_empty(), "{report:?}");
        let left: Vec<_> = fs::read_dir(&fx.pool)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert!(left.is_empty(), "after {step}: {left:?} {report:?}");
        assert!(fx.inventory().members.is_empty(), "after {step}");
    }
}

/// The child's home and pool, with the crash point it is to be killed at
/// installed; `None` outside a child.
fn child_fixture() -> Option<(Leases, PathBuf)> {
    let index = std::env::var(KILL_AT).ok()?;
    crash::install(Some(crash::kill_at(index.parse().unwrap())));
    let [pool, home] = CHILD_PLACE.map(|name| PathBuf::from(std::env::var(name).unwrap()));
    Some((Leases::open(&home).unwrap(), pool))
}

/// Child: seed a new member, killed at the crash point it is told.
#[test]
#[ignore = "run by a_seed_killed_at_any_step_leaves_a_whole_member_or_none in a child process"]
fn seed_child() {
    let Some((leases, pool)) = child_fixture() else {
        return;
    };
    let cancel = CancelToken::new();
    let _ = leases.acquire_from_pool(&pool, &owner("seeder"), &sized(3), None, &cancel);
}

/// Child: prune an idle member, killed at the crash point it is told.
#[test]
#[ignore = "run by a_prune_killed_at_any_step_is_finished_by_the_next in a child process"]
fn prune_child() {
    let Some((leases, pool)) = child_fixture() else {
        return;
    };
    let _ = leases.prune_pool(&pool, 0, &owner("pruner"));
}

/// The environment variable naming the file a pausing seed child records
/// its seed points in; it waits at the sample until a file `go` beside it
/// exists.
const PAUSE_EVENTS: &str = "NATIVES_TEST_POOL_EVENTS";

/// Nobody waits while the pool has room. With K = 4 and the warm member
/// held, three processes each create a member from it at once. While all
/// three are in the middle of their copies (each paused there), the
/// holder's cargo takes its lock on the warm member without waiting,
/// empties a fingerprint, adds and removes output, and keeps the lock until
/// every seed has finished. Each member then holds what the holder's cargo
/// left.
#[test]
fn nobody_waits_while_the_pool_has_room() {
    let fx = fixture();
    let warm = fx.acquire("warm", &sized(4)).unwrap();
    lay_out_build(warm.dir(), 300_000);
    let events = fx.pool.with_file_name("events");
    let mut seeds = Seeds((0..3).map(|_| spawn_paused_seed(&fx, &events)).collect());
    wait_for_events(&events, clone::SAMPLED, 3, &mut seeds.0);
    let cargo = try_cargo_lock(&warm.dir().join("debug/.cargo-lock"), true).unwrap();
    assert!(
        cargo.is_some(),
        "the holder's cargo waited for a seed: {}",
        read(&events)
    );
    natives_testkit::write(warm.dir(), "debug/.fingerprint/x-1/lib-x", "");
    natives_testkit::write(warm.dir(), "debug/deps/liby-2.rmeta", "y");
    fs::remove_file(warm.dir().join("debug/deps/libx-1.rlib")).unwrap();
    File::create(events.with_file_name("go")).unwrap();
    while let Some(mut seed) = seeds.0.pop() {
        assert!(seed.wait().unwrap().success(), "{}", read(&events));
    }
    drop(cargo);
    for name in ["member-1", "member-2", "member-3"] {
        assert_eq!(fx.state(name), Some(MemberState::Ready), "{name}");
        let member = fx.pool.join(name);
        let fingerprint = fs::read(member.join("debug/.fingerprint/x-1/lib-x")).unwrap();
        assert!(fingerprint.is_empty(), "{name}");
        assert!(member.join("debug/deps/liby-2.rmeta").is_file(), "{name}");
        assert!(!member.join("debug/deps/libx-1.rlib").exists(), "{name}");
        assert!(member.join("CACHEDIR.TAG").is_file(), "{name}");
    }
}

/// A prune never removes a member a seed is copying, though the seed holds
/// no lock cargo knows: with a seed paused in its copy of the warm member,
/// and the warm member let go (idle, no cargo in it), a prune to nothing
/// keeps it and says why, and the seed then finishes a whole copy.
#[test]
fn a_prune_keeps_a_member_a_seed_is_copying() {
    let fx = fixture();
    let warm = fx.acquire("warm", &sized(4)).unwrap();
    lay_out_build(warm.dir(), 300_000);
    let events = fx.pool.with_file_name("events");
    let mut seeds = Seeds(vec![spawn_paused_seed(&fx, &events)]);
    wait_for_events(&events, clone::SAMPLED, 1, &mut seeds.0);
    warm.release().unwrap();
    let pruned = fx
        .leases
        .prune_pool(&fx.pool, 0, &owner("janitor"))
        .unwrap();
    let kept = pruned.kept.iter().find(|k| k.name == "member-0");
    assert_eq!(
        kept.map(|k| k.why.as_str()),
        Some("busy: a seed is copying it"),
        "{pruned:?}"
    );
    File::create(events.with_file_name("go")).unwrap();
    let mut seed = seeds.0.pop().unwrap();
    assert!(seed.wait().unwrap().success(), "{}", read(&events));
    let copy = fx.pool.join("member-1/debug/deps/libx-1.rlib");
    assert_eq!(fs::read(copy).unwrap().len(), 300_000);
}

/// Seed children, killed if the test ends before they do.
struct Seeds(Vec<Child>);

impl Drop for Seeds {
    fn drop(&mut self) {
        for seed in &mut self.0 {
            let _ = seed.kill();
            let _ = seed.wait();
        }
    }
}

fn spawn_paused_seed(fx: &Fixture, events: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "pool::tests::paused_seed_child"])
        .env(PAUSE_EVENTS, events)
        .env(CHILD_PLACE[0], &fx.pool)
        .env(CHILD_PLACE[1], fx.leases.home())
        .spawn()
        .unwrap()
}

/// Wait until `events` holds `count` lines naming `step`; fails when a
/// seed exits first, and (a guard against a hang, not a timing check)
/// after two minutes.
fn wait_for_events(events: &Path, step: &str, count: usize, seeds: &mut [Child]) {
    let guard = Instant::now();
    while read(events).matches(step).count() < count {
        for seed in seeds.iter_mut() {
            let exited = seed.try_wait().unwrap();
            assert!(
                exited.is_none(),
                "a seed exited: {exited:?}: {}",
                read(events)
            );
        }
        assert!(
            guard.elapsed() < Duration::from_secs(120),
            "{}",
            read(events)
        );
        thread::sleep(Duration::from_millis(10));
    }
}

fn note(events: &Path, line: &str) {
    let mut file = File::options()
        .create(true)
        .append(true)
        .open(events)
        .unwrap();
    file.write_all(format!("{line}\n").as_bytes()).unwrap();
}

fn read(events: &Path) -> String {
    fs::read_to_string(events).unwrap_or_default()
}

#[test]
#[ignore = "run by nobody_waits_while_the_pool_has_room in a child process"]
fn paused_seed_child() {
    let Ok(events) = std::env::var(PAUSE_EVENTS).map(PathBuf::from) else {
        return;
    };
    let [pool, home] = CHILD_PLACE.map(|name| PathBuf::from(std::env::var(name).unwrap()));
    let leases = Leases::open(&home).unwrap();
    let wait = CancelToken::new().with_timeout(Some(Duration::from_secs(120)));
    crash::install(Some(pause_at_sample(events)));
    let lease = leases.acquire_from_pool(
        &pool,
        &owner(&format!("seed-{}", std::process::id())),
        &sized(4),
        Some(&wait),
        &CancelToken::new(),
    );
    lease.unwrap().release().unwrap();
}

/// A crash hook noting each seed point passed in `events`, and waiting at
/// the sample until a file `go` beside it exists.
fn pause_at_sample(events: PathBuf) -> crash::Hook {
    let go = events.with_file_name("go");
    let guard = Instant::now();
    Box::new(move |point| {
        if !SEED_POINTS.contains(&point) {
            return;
        }
        note(&events, &format!("{} {point}", std::process::id()));
        while point == clone::SAMPLED && !go.exists() {
            assert!(
                guard.elapsed() < Duration::from_secs(120),
                "never told to go on"
            );
            thread::sleep(Duration::from_millis(10));
        }
    })
}
