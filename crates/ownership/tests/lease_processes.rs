//! Leases under real processes: many racers on one cache directory while
//! holders are SIGKILLed at random points, and how fast a dead holder's
//! lease is taken over.
//!
//! The children are this test binary run again with `--ignored --exact` and
//! an environment naming their part (see [`CHILD_ENV`]), including how far
//! they trust kernel locks: the storm runs once as on a local filesystem and
//! once as on a network one, where the record is the lease.

use std::{
    env, fs,
    io::{BufRead, BufReader, ErrorKind, Write},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{Mutex, mpsc},
    thread,
    time::{Duration, Instant},
};

use natives_ownership::{
    AcquireOutcome, Leases, Owner, Status,
    lease::{POLL_INTERVAL, resource_hold},
};
use natives_system::{
    lock::LockTrust,
    process::{pid_alive, start_time},
};

/// Rounds each racer position completes.
const ROUNDS: u64 = 500;

/// The two tests run one after the other: the storm's sixteen processes
/// would otherwise be the takeover timing's noise.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The environment a child reads: its home, cache directory, rounds, and
/// whether it trusts kernel locks ([`RECORD_ONLY`] if not).
const CHILD_ENV: [&str; 4] = [
    "NATIVES_TEST_LEASE_HOME",
    "NATIVES_TEST_LEASE_CACHE",
    "NATIVES_TEST_LEASE_ROUNDS",
    "NATIVES_TEST_LEASE_TRUST",
];

/// The trust value of a child forced to treat records as the lease.
const RECORD_ONLY: &str = "record-only";

/// 16 racers x 500 completed rounds, with a holder SIGKILLed every few
/// milliseconds: never two holders at once (each holder creates an exclusive
/// marker and finds no live holder's marker), and dead holders' leases are
/// reclaimed.
#[test]
fn racers_under_sigkill_never_hold_together() {
    storm(&LockTrust::Kernel);
}

/// The same storm where kernel locks are not trusted (as on NFS): records
/// are published by hard link and dead owners reclaimed under the reclaim
/// lock, by racers that each have their own temporary directory.
#[test]
fn record_only_racers_under_sigkill_never_hold_together() {
    storm(&LockTrust::RecordOnly(RECORD_ONLY.to_owned()));
}

fn storm(trust: &LockTrust) {
    let _alone = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    const RACERS: usize = 16;
    let dir = tempfile::tempdir().unwrap();
    let place = Place::new(dir.path(), trust);
    let (events, received) = mpsc::channel();
    let mut slots: Vec<Slot> = (0..RACERS)
        .map(|id| Slot::spawn(id, ROUNDS, &place, &events))
        .collect();
    let leases = place.leases();
    let mut storm = Storm {
        rng: 0x2545_f491_4f6c_dd1d,
        kills: 0,
        holders_killed: 0,
        reclaims: 0,
    };
    let started = Instant::now();
    while slots.iter().any(|s| s.done < ROUNDS) {
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "race did not finish: {:?}",
            progress(&slots)
        );
        while let Ok((id, event)) = received.try_recv() {
            match event {
                Event::Round => slots[id].done += 1,
                Event::Reclaimed => storm.reclaims += 1,
                Event::Violation(text) => panic!("two holders at once: {text}"),
            }
        }
        storm.strike(&leases, &mut slots, &place, &events);
        thread::sleep(Duration::from_millis(3));
    }
    for slot in &mut slots {
        let status = slot.child.wait().unwrap();
        assert!(
            status.success() || slot.done >= ROUNDS,
            "racer {} ended {status}",
            slot.id
        );
    }
    println!(
        "{trust:?}: {RACERS} racers x {ROUNDS} rounds in {:.1} s: {} SIGKILLs ({} of the holder), \
         {} stale leases reclaimed, 0 overlaps",
        started.elapsed().as_secs_f64(),
        storm.kills,
        storm.holders_killed,
        storm.reclaims
    );
    assert!(
        storm.holders_killed >= 50 && storm.reclaims >= 25,
        "storm too weak: {storm:?}"
    );
}

/// A holder SIGKILLed while holding is taken over by the first attempt made
/// after its death, so a waiter polling every [`POLL_INTERVAL`] takes over
/// within one poll: a live holder is never taken over, a dead one never
/// needs a second attempt. The wait across a kill is shown with its times,
/// not judged by them (a loaded machine stretches them, not the rule).
#[test]
fn a_sigkilled_holder_is_taken_over_within_one_poll() {
    let dir = tempfile::tempdir().unwrap();
    let place = Place::new(dir.path(), &LockTrust::Kernel);
    let (leases, cache) = (place.leases(), &place.cache);
    let _alone = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    let heir = Owner::current("run", "node", "heir");
    for _ in 0..3 {
        let mut holder = spawn_holder(&place);
        let busy = leases.try_acquire(cache, &heir).unwrap();
        assert!(
            matches!(busy, AcquireOutcome::Busy(_)),
            "a live holder was taken over"
        );
        kill(holder.id());
        holder.wait().unwrap();
        let AcquireOutcome::Acquired(guard) = leases.try_acquire(cache, &heir).unwrap() else {
            panic!("the first attempt after the holder's death found it busy");
        };
        assert_eq!(guard.reclaimed().map(|r| r.owner.pid), Some(holder.id()));
    }
    let mut takeovers = Vec::new();
    for _ in 0..3 {
        let holder = spawn_holder(&place);
        let (killed_tx, killed_rx) = mpsc::channel();
        let pid = holder.id();
        let killer = thread::spawn(move || {
            let mut holder = holder;
            thread::sleep(Duration::from_millis(130));
            kill(pid);
            killed_tx.send(Instant::now()).unwrap();
            holder.wait().unwrap()
        });
        let guard = leases
            .wait_for(cache, &heir, Duration::from_secs(30))
            .unwrap();
        takeovers.push(Instant::now() - killed_rx.recv().unwrap());
        assert_eq!(guard.reclaimed().map(|r| r.owner.pid), Some(pid));
        killer.join().unwrap();
    }
    println!("SIGKILLed holder taken over after {takeovers:?} (poll interval {POLL_INTERVAL:?})");
}

/// A child holding the lease, once it says so.
fn spawn_holder(place: &Place) -> Child {
    let mut holder = place.spawn_child("holder_child", 0, None);
    let mut lines = BufReader::new(holder.stdout.take().unwrap()).lines();
    assert!(
        lines.any(|line| line.unwrap() == "held"),
        "the holder never held"
    );
    holder
}

/// One-shot acquisitions of a free cache made while another process probes it.
const PROBED_ACQUIRES: u32 = 10_000;

/// One process asks about the lease in a loop (classify, in use, inventory,
/// hold releasable) while this one takes and lets go of the free cache
/// 10,000 times, one attempt each: a probe never makes an attempt fail.
#[test]
fn probes_never_make_an_acquisition_of_a_free_cache_fail() {
    let _alone = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let place = Place::new(dir.path(), &LockTrust::Kernel);
    let (leases, cache) = (place.leases(), &place.cache);
    let owner = Owner::current("run", "node", "one-shot");
    drop(leases.try_acquire(cache, &owner).unwrap());
    let mut prober = place.spawn_child("prober_child", 0, None);
    let mut lines = BufReader::new(prober.stdout.take().unwrap()).lines();
    assert!(
        lines.any(|line| line.unwrap() == "probing"),
        "the prober never started"
    );
    let counted = thread::spawn(move || {
        lines
            .map_while(Result::ok)
            .filter(|l| l == "probed")
            .count()
    });
    let started = Instant::now();
    let mut refused = Vec::new();
    for _ in 0..PROBED_ACQUIRES {
        match leases.try_acquire(cache, &owner).unwrap() {
            AcquireOutcome::Acquired(guard) => guard.release().unwrap(),
            AcquireOutcome::Busy(busy) => refused.push(busy.describe()),
        }
    }
    let took = started.elapsed();
    kill(prober.id());
    prober.wait().unwrap();
    let probe_rounds = counted.join().unwrap();
    println!(
        "{PROBED_ACQUIRES} one-shot acquisitions in {:.1} s beside {probe_rounds} x 100 probe rounds: {} refused",
        took.as_secs_f64(),
        refused.len()
    );
    assert!(
        probe_rounds >= 10,
        "the prober hardly ran: {probe_rounds} x 100 rounds"
    );
    assert!(
        refused.is_empty(),
        "{} refused, first: {:?}",
        refused.len(),
        refused.first()
    );
}

/// Child: probe the lease as an operator's tools do, forever; say "probed"
/// every 100 rounds.
#[test]
#[ignore = "run by probes_never_make_an_acquisition_of_a_free_cache_fail in a child process"]
fn prober_child() {
    let Some((leases, cache, _)) = child_setup() else {
        return;
    };
    say("");
    say("probing");
    let hold = resource_hold(&cache).unwrap();
    for round in 1.. {
        leases.classify(&cache).unwrap();
        leases.in_use(&cache).unwrap();
        leases.inventory().unwrap();
        leases.hold_releasable(&hold).unwrap();
        if round % 100 == 0 {
            say("probed");
        }
    }
}

/// Child: hold the lease, say so, and wait to be killed.
#[test]
#[ignore = "run by a_sigkilled_holder_is_taken_over_within_one_poll in a child process"]
fn holder_child() {
    let Some((leases, cache, _)) = child_setup() else {
        return;
    };
    say("");
    let _guard = leases
        .wait_for(
            &cache,
            &Owner::current("run", "node", "holder"),
            Duration::from_secs(30),
        )
        .unwrap();
    say("held");
    thread::sleep(Duration::from_secs(60));
}

/// Child: take the lease `rounds` times, each time proving no other live
/// holder's marker exists, then creating and removing its own.
#[test]
#[ignore = "run by racers_under_sigkill_never_hold_together in a child process"]
fn racer_child() {
    let Some((leases, cache, rounds)) = child_setup() else {
        return;
    };
    say("");
    let marker = cache.join("holder.marker");
    let me = std::process::id();
    let owner = Owner::current("race", "node", &format!("racer-{me}"));
    for _ in 0..rounds {
        let guard = leases
            .wait_for(&cache, &owner, Duration::from_secs(120))
            .unwrap();
        if guard.reclaimed().is_some() {
            say("reclaimed");
        }
        claim_marker(&marker, me);
        spin(Duration::from_micros(u64::from(me % 7) * 150));
        fs::remove_file(&marker).unwrap();
        guard.release().unwrap();
        say("round");
    }
}

/// Create the marker exclusively; a marker left by a dead holder is removed,
/// one of a live holder is a violation.
fn claim_marker(marker: &Path, me: u32) {
    loop {
        match fs::File::options()
            .write(true)
            .create_new(true)
            .open(marker)
        {
            Ok(mut file) => {
                let start = start_time(me).unwrap_or(0);
                write!(file, "{me} {start}").unwrap();
                return;
            }
            Err(err) if err.kind() == ErrorKind::AlreadyExists => {
                let text = fs::read_to_string(marker).unwrap_or_default();
                let mut fields = text.split(' ').map(|f| f.parse::<u64>().ok());
                let (pid, start) = (fields.next().flatten(), fields.next().flatten());
                if let Some(pid) = pid
                    && pid_alive(pid as u32, start.filter(|s| *s != 0), None)
                {
                    say(&format!("violation marker of live {pid} found by {me}"));
                    std::process::exit(3);
                }
                // A dead holder's marker (or one still being written by a
                // holder killed mid-write): it is gone, remove it.
                let _ = fs::remove_file(marker);
            }
            Err(err) => panic!("{}: {err}", marker.display()),
        }
    }
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").unwrap();
    out.flush().unwrap();
}

fn spin(duration: Duration) {
    let until = Instant::now() + duration;
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

fn child_setup() -> Option<(Leases, PathBuf, u64)> {
    let [home, cache, rounds, trust] = CHILD_ENV.map(env::var);
    let (home, cache, rounds) = (home.ok()?, cache.ok()?, rounds.ok()?);
    let leases = Leases::open(Path::new(&home)).unwrap();
    let leases = match trust.as_deref() {
        Ok(RECORD_ONLY) => leases.with_trust(LockTrust::RecordOnly(RECORD_ONLY.to_owned())),
        _ => leases,
    };
    Some((leases, PathBuf::from(cache), rounds.parse().unwrap()))
}

/// Where a test's processes meet: one home and one cache directory, and how
/// far they all trust kernel locks.
struct Place {
    root: PathBuf,
    home: PathBuf,
    cache: PathBuf,
    trust: LockTrust,
}

impl Place {
    fn new(root: &Path, trust: &LockTrust) -> Place {
        let cache = root.join("target");
        fs::create_dir(&cache).unwrap();
        Place {
            root: root.to_owned(),
            home: root.join("home"),
            cache,
            trust: trust.clone(),
        }
    }

    /// This process's view of the store, trusting what the children trust.
    fn leases(&self) -> Leases {
        Leases::open(&self.home)
            .unwrap()
            .with_trust(self.trust.clone())
    }

    /// Run the child test `name` here, with `TMPDIR` of its own when
    /// `temp` names it (created under the test's folder).
    fn spawn_child(&self, name: &str, rounds: u64, temp: Option<&str>) -> Child {
        let mut command = Command::new(env::current_exe().unwrap());
        command
            .args([
                "--ignored",
                "--exact",
                name,
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(CHILD_ENV[0], &self.home)
            .env(CHILD_ENV[1], &self.cache)
            .env(CHILD_ENV[2], rounds.to_string())
            .stdout(Stdio::piped());
        if let LockTrust::RecordOnly(_) = self.trust {
            command.env(CHILD_ENV[3], RECORD_ONLY);
        }
        if let Some(temp) = temp {
            let dir = self.root.join(temp);
            fs::create_dir_all(&dir).unwrap();
            command.env("TMPDIR", dir);
        }
        command.spawn().unwrap()
    }
}

fn kill(pid: u32) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
}

enum Event {
    Round,
    Reclaimed,
    Violation(String),
}

/// One racer position: its current process and the rounds completed in it.
struct Slot {
    id: usize,
    child: Child,
    done: u64,
}

impl Slot {
    /// The racer at position `id`, with a temporary directory of its own.
    fn spawn(id: usize, rounds: u64, place: &Place, events: &mpsc::Sender<(usize, Event)>) -> Slot {
        let temp = format!("tmp-{id}");
        let mut child = place.spawn_child("racer_child", rounds, Some(&temp));
        let stdout = child.stdout.take().unwrap();
        let events = events.clone();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let event = match line.as_str() {
                    "round" => Event::Round,
                    "reclaimed" => Event::Reclaimed,
                    text if text.starts_with("violation") => Event::Violation(text.to_owned()),
                    _ => continue,
                };
                let _ = events.send((id, event));
            }
        });
        Slot { id, child, done: 0 }
    }
}

/// Every ~50 ms, SIGKILLs the lease's current holder (two times in three)
/// or a random racer, and starts a replacement for its remaining rounds.
#[derive(Debug)]
struct Storm {
    rng: u64,
    kills: u64,
    holders_killed: u64,
    reclaims: u64,
}

impl Storm {
    fn strike(
        &mut self,
        leases: &Leases,
        slots: &mut [Slot],
        place: &Place,
        events: &mpsc::Sender<(usize, Event)>,
    ) {
        let roll = self.next();
        if !roll.is_multiple_of(16) {
            return;
        }
        let holder = match leases.classify(&place.cache).unwrap() {
            Status::Active(Some(record)) if !roll.is_multiple_of(3) => {
                slots.iter().position(|s| s.child.id() == record.owner.pid)
            }
            _ => None,
        };
        let index = holder.unwrap_or((roll >> 8) as usize % slots.len());
        let slot = &mut slots[index];
        if slot.done >= ROUNDS || slot.child.try_wait().unwrap().is_some() {
            return;
        }
        kill(slot.child.id());
        slot.child.wait().unwrap();
        self.kills += 1;
        self.holders_killed += u64::from(holder.is_some());
        let done = slot.done;
        *slot = Slot::spawn(slot.id, ROUNDS - done, place, events);
        slot.done = done;
    }

    fn next(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }
}

fn progress(slots: &[Slot]) -> Vec<u64> {
    slots.iter().map(|s| s.done).collect()
}
