//! A FIFO, or a symlink to `/dev/zero`, where a record should be: every
//! call that reads it answers at once, naming it (`EFTYPE`), and none waits
//! for a writer or reads without end. Each call runs under a time bound, so
//! a regression fails here instead of hanging the suite.
//!
//! Records covered: a cache lease record, the catalog entry, the identity,
//! the cache's `CACHEDIR.TAG`, a zone's claims record and a lease lock file.

use std::{
    fs,
    os::unix::fs::symlink,
    path::{Path, PathBuf},
    time::Duration,
};

use natives_ownership::{
    AcquireOutcome, CancelToken, Leases, Owner,
    claims::{self, Agent, ClaimRequest, Exclusivity, Releaser, Zone, store::ZoneFiles},
    layout::LeaseFiles,
};
use natives_system::paths;
use natives_testkit::within;

/// Far longer than any of these calls takes when it does not hang.
const BOUND: Duration = Duration::from_secs(10);

/// A natives home and a cargo target directory leased (and released) once.
struct Scene {
    _root: tempfile::TempDir,
    home: PathBuf,
    cache: PathBuf,
    memory: PathBuf,
}

impl Scene {
    fn new() -> Scene {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        let cache = base.join("target");
        fs::create_dir_all(cache.join("debug/.fingerprint")).unwrap();
        fs::write(
            cache.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55\n",
        )
        .unwrap();
        let scene = Scene {
            _root: root,
            home: base.join("home"),
            memory: base.join("config/projects/p/memory"),
            cache,
        };
        match scene.leases().try_acquire(&scene.cache, &owner()).unwrap() {
            AcquireOutcome::Acquired(guard) => guard.release().unwrap(),
            AcquireOutcome::Busy(busy) => panic!("busy: {}", busy.describe()),
        }
        scene
    }

    fn leases(&self) -> Leases {
        Leases::open(&self.home).unwrap()
    }

    fn lease_files(&self) -> LeaseFiles {
        LeaseFiles::new(&self.home, &paths::dir_id(&self.cache).unwrap())
    }

    fn claims_record(&self) -> PathBuf {
        let zone = Zone::of(&paths::dir_id(&self.memory).unwrap());
        let record = ZoneFiles::new(&self.home, &zone).record;
        fs::create_dir_all(record.parent().unwrap()).unwrap();
        record
    }

    fn claim(&self) -> ClaimRequest {
        ClaimRequest {
            agent: Agent {
                uid: "a".into(),
                cwd: Some(self.home.parent().unwrap().join("work")),
                account: "ana@example.com".into(),
            },
            memory_dir: self.memory.clone(),
            origin: "store-a".into(),
            ..ClaimRequest::default()
        }
    }
}

fn owner() -> Owner {
    Owner::current("run", "node", "seat")
}

/// What can stand where a record should be.
#[derive(Clone, Copy, Debug)]
enum Hostile {
    Fifo,
    DevZero,
}

impl Hostile {
    fn put(self, at: &Path) {
        let _ = fs::remove_file(at);
        match self {
            Hostile::Fifo => {
                nix::unistd::mkfifo(at, nix::sys::stat::Mode::S_IRWXU).unwrap();
            }
            Hostile::DevZero => symlink("/dev/zero", at).unwrap(),
        }
    }
}

/// `call`'s error code, the call bounded in time.
fn code_of<T: Send + 'static>(
    what: &str,
    call: impl FnOnce() -> natives_ownership::Result<T> + Send + 'static,
) -> Result<(), &'static str> {
    within(what, BOUND, call)
        .map(drop)
        .map_err(|err| err.code())
}

/// One library call, its answer dropped.
type Call = Box<dyn FnOnce() -> natives_ownership::Result<()> + Send>;

/// Every lease call that reads `cache`'s lease record, by name.
fn lease_readers(leases: &Leases, cache: &Path) -> Vec<(&'static str, Call)> {
    let (l, c) = (leases.clone(), cache.to_owned());
    let call = move |work: fn(&Leases, &Path) -> natives_ownership::Result<()>| -> Call {
        let (l, c) = (l.clone(), c.clone());
        Box::new(move || work(&l, &c))
    };
    vec![
        ("classify", call(|l, c| l.classify(c).map(drop))),
        (
            "try_acquire",
            call(|l, c| l.try_acquire(c, &owner()).map(drop)),
        ),
        (
            "wait_for",
            call(|l, c| l.wait_for(c, &owner(), Duration::from_secs(1)).map(drop)),
        ),
        (
            "release_unowned",
            call(|l, c| l.release_unowned(c).map(drop)),
        ),
        ("inventory", call(|l, _| l.inventory().map(drop))),
        (
            "maintenance_prune",
            call(|l, c| l.maintenance_prune(c, 0, &owner()).map(drop)),
        ),
    ]
}

#[test]
fn a_lease_record_that_is_not_a_file_fails_every_reader_at_once() {
    for hostile in [Hostile::Fifo, Hostile::DevZero] {
        let scene = Scene::new();
        hostile.put(&scene.lease_files().record);
        for (name, call) in lease_readers(&scene.leases(), &scene.cache) {
            assert_eq!(
                code_of(name, call),
                Err("EFTYPE"),
                "{name} with {hostile:?}"
            );
        }
    }
}

#[test]
fn a_catalog_entry_or_identity_that_is_not_a_file_is_read_as_absent_at_once() {
    for hostile in [Hostile::Fifo, Hostile::DevZero] {
        let scene = Scene::new();
        let files = scene.lease_files();
        hostile.put(&files.catalog);
        hostile.put(&files.identity);
        let leases = scene.leases();
        let entries = within("inventory", BOUND, move || leases.inventory()).unwrap();
        assert_eq!(entries.len(), 1, "{hostile:?}");
        assert_eq!(entries[0].identity, None, "{hostile:?}");
    }
}

#[test]
fn a_cache_tag_that_is_not_a_file_refuses_the_prune_at_once() {
    for hostile in [Hostile::Fifo, Hostile::DevZero] {
        let scene = Scene::new();
        let tag = scene.cache.join("CACHEDIR.TAG");
        hostile.put(&tag);
        let (leases, cache) = (scene.leases(), scene.cache.clone());
        let err = within("plan_prune", BOUND, move || leases.plan_prune(&cache, 0)).unwrap_err();
        assert_eq!(err.code(), "EFTYPE", "{hostile:?}: {err}");
        assert!(err.message().contains("CACHEDIR.TAG"), "{err}");
    }
}

#[test]
fn a_lease_lock_file_that_is_a_fifo_fails_the_probe_at_once() {
    let scene = Scene::new();
    Hostile::Fifo.put(&scene.lease_files().lock);
    let (leases, cache) = (scene.leases(), scene.cache.clone());
    assert_eq!(
        code_of("classify", move || leases.classify(&cache)),
        Err("EFTYPE")
    );
}

#[test]
fn a_claims_record_that_is_not_a_file_fails_every_reader_at_once() {
    for hostile in [Hostile::Fifo, Hostile::DevZero] {
        let scene = Scene::new();
        let record = scene.claims_record();
        hostile.put(&record);
        let home = scene.home.clone();
        let listing = within("list", BOUND, move || claims::list(&home)).unwrap();
        assert!(listing.folders.is_empty(), "{hostile:?}");
        let [(path, err)] = &listing.unreadable[..] else {
            panic!("{hostile:?}: {:?}", listing.unreadable);
        };
        assert_eq!((path, err.code()), (&record, "EFTYPE"), "{hostile:?}");

        let (home, request) = (scene.home.clone(), scene.claim());
        let deadline = CancelToken::new().with_timeout(Some(Duration::from_secs(1)));
        let verdict = within("check_and_claim", BOUND, move || {
            claims::check_and_claim(&home, &request, &deadline)
        });
        let Exclusivity::Shared { detail, .. } = &verdict else {
            panic!("{hostile:?}: {verdict}");
        };
        assert!(detail.starts_with("EFTYPE"), "{hostile:?}: {verdict}");

        let (home, memory) = (scene.home.clone(), scene.memory.clone());
        let released = code_of("release", move || {
            let deadline = CancelToken::new().with_timeout(Some(Duration::from_secs(1)));
            claims::release(&home, &memory, "a", &deadline, Releaser::ClaimOwner)
        });
        assert_eq!(released, Err("EFTYPE"), "{hostile:?}");
    }
}
