//! A build-cache pool under real processes, real git and real cargo: eight
//! agents, each in its own worktree of one workspace, acquire a member,
//! build, run the binary they built and release, in a loop, while agents are
//! SIGKILLed with their tools (their whole process group, as a supervisor
//! kills an agent).
//!
//! What must hold: never two holders of one member (each holder creates an
//! exclusive marker per member and finds no live holder's marker); every
//! binary is the one just built (each round commits a new stamp whose file
//! is dated 2001, older than any build, so only the refresh, never cargo's
//! mtime check, can tell a member built from another worktree apart: this
//! is the stale control of `ensure_fresh.rs`, per member); no member is
//! used half seeded (a member is leased only when its record says ready,
//! and the canary file laid into the first member is whole wherever a
//! member holds it).
//!
//! The workspace depends on a crate outside it (a path dependency, compiled
//! like a registry one and never cleaned by a refresh), so a seeded member
//! is seen to compile only the workspace's own crate.
//!
//! It runs on this test's filesystem and, when the test runs as root with
//! `mkfs.btrfs` (or `mkfs.xfs`) at hand, again with the pool on a
//! loop-mounted image of a filesystem that clones files, where seeds are
//! reflinks and the pool's disk is measured. Otherwise that part prints why
//! it was skipped.

use std::{
    env, fs,
    io::{BufRead, BufReader, ErrorKind, Write},
    os::unix::process::CommandExt,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{Mutex, mpsc},
    thread,
    time::{Duration, Instant, SystemTime},
};

use natives_ownership::{
    CancelToken, Leases, Owner,
    fresh::Cargo,
    pool::{MemberStatus, PoolOptions, SeedStrategy, usage},
};
use natives_system::process::{pid_alive, start_time};
use natives_testkit::mount::{LoopMount, REFLINKING};

/// Members in the pool.
const K: usize = 3;
/// Agents at once, each in its own worktree.
const AGENTS: usize = 8;
/// The canary's size: big enough that a copy of it is not one write.
const CANARY_BYTES: usize = 1 << 20;
/// Before anything a build could produce.
const OLD_SOURCE: Duration = Duration::from_secs(1_000_000_000);

/// The storms run one at a time: each is the other's noise.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// What a child agent reads: its workspace root, pool, home, worktree
/// index and rounds.
const CHILD_ENV: [&str; 5] = [
    "NATIVES_TEST_STORM_ROOT",
    "NATIVES_TEST_STORM_POOL",
    "NATIVES_TEST_STORM_HOME",
    "NATIVES_TEST_STORM_AGENT",
    "NATIVES_TEST_STORM_ROUNDS",
];

#[test]
fn eight_agents_under_sigkill_on_this_filesystem() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let place = Place::new(&root, &root.join("pool"));
    place.storm(3, 6);
}

#[test]
fn eight_agents_under_sigkill_with_the_pool_on_a_reflink_filesystem() {
    on_a_mount(&REFLINKING, "reflink filesystem", |place, mount| {
        place.reflink_seed_shares_blocks(mount);
        place.release_shares_alike_blocks(mount);
        let seeds = place.storm(3, 6);
        assert!(
            seeds.contains(&SeedStrategy::Reflink),
            "no member was seeded by reflink on {}: {seeds:?}",
            mount.kind
        );
    });
}

/// Where a released member's equal blocks are shared (XFS, made by the test
/// as root when `mkfs.xfs` is at hand), the filesystem's use falls.
#[test]
fn a_released_member_shares_alike_blocks_on_xfs() {
    on_a_mount(&REFLINKING[1..], "XFS", |place, mount| {
        place.release_shares_alike_blocks(mount);
    });
}

/// The long soak: the same storm with more rounds and kills (run by hand
/// with `--ignored`).
#[test]
#[ignore = "a soak of several minutes; the default suite runs the short storm"]
fn soak_agents_under_sigkill() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let place = Place::new(&root, &root.join("pool"));
    place.storm(12, 40);
}

/// The long storm on a reflink filesystem (btrfs first, where a release
/// writes files anew and a kill may land at any of its steps; run by hand
/// with `--ignored`, as root).
#[test]
#[ignore = "the longer storm; the default suite runs the short one"]
fn soak_agents_under_sigkill_on_a_reflink_filesystem() {
    on_a_mount(&REFLINKING, "reflink filesystem", |place, _| {
        place.storm(12, 40);
    });
}

/// Run `test` with a pool on the first of `kinds` this process can mount
/// (one test at a time); skipped, saying why (`what` is missing), where it
/// cannot.
fn on_a_mount(kinds: &[(&'static str, &str)], what: &str, test: impl FnOnce(&Place, &LoopMount)) {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let Some(mount) = LoopMount::or_skip(&root, kinds, what) else {
        return;
    };
    let place = Place::new(&root, &mount.dir.join("pool"));
    test(&place, &mount);
}

/// Where a storm's processes meet: a repository with one worktree per
/// agent, a dependency outside the workspace, the pool and the home.
struct Place {
    root: PathBuf,
    pool: PathBuf,
    home: PathBuf,
}

impl Place {
    fn new(root: &Path, pool: &Path) -> Place {
        write(&root.join("dep/Cargo.toml"), DEP_MANIFEST);
        write(&root.join("dep/src/lib.rs"), DEP_SOURCE);
        let main = root.join("repo");
        write(&main.join("Cargo.toml"), APP_MANIFEST);
        write(&main.join("src/main.rs"), APP_SOURCE);
        write(&main.join("src/stamp.txt"), "initial");
        write(&main.join(".gitignore"), "Cargo.lock\n");
        git(&main, &["init", "-q"]);
        git(&main, &["add", "."]);
        git(&main, &["commit", "-q", "-m", "app"]);
        for agent in 0..AGENTS {
            let dir = root.join(format!("wt-{agent}"));
            let branch = format!("agent-{agent}");
            git(
                &main,
                &[
                    "worktree",
                    "add",
                    "-q",
                    "-b",
                    &branch,
                    dir.to_str().unwrap(),
                ],
            );
        }
        fs::create_dir_all(root.join("markers")).unwrap();
        Place {
            root: root.to_owned(),
            pool: pool.to_owned(),
            home: root.join("home"),
        }
    }

    /// Warm the first member from agent 0's worktree and lay the canary
    /// into it, then run the agents with `rounds` each and `kills`
    /// SIGKILLs; the strategies every member was seeded by.
    fn storm(&self, rounds: u64, kills: u64) -> Vec<SeedStrategy> {
        self.warm_first_member();
        let (events, received) = mpsc::channel();
        let mut agents: Vec<Agent> = (0..AGENTS)
            .map(|id| Agent::spawn(id, rounds, self, &events))
            .collect();
        let started = Instant::now();
        let mut strikes = Strikes::new(kills);
        let mut compiled_dep_in_seeded = 0;
        while agents.iter().any(|a| a.done < rounds) {
            assert!(
                started.elapsed() < Duration::from_secs(900),
                "the storm did not finish: {:?}",
                agents.iter().map(|a| a.done).collect::<Vec<_>>()
            );
            while let Ok((id, event)) = received.try_recv() {
                match event {
                    Event::Round { seeded_dep_rebuilt } => {
                        agents[id].done += 1;
                        compiled_dep_in_seeded += u64::from(seeded_dep_rebuilt);
                    }
                    Event::Violation(text) => panic!("agent {id}: {text}"),
                }
            }
            check_alive(&mut agents, rounds);
            strikes.strike(&mut agents, rounds, self, &events);
            thread::sleep(Duration::from_millis(20));
        }
        for agent in &mut agents {
            let status = agent.child.wait().unwrap();
            assert!(status.success(), "agent {} ended {status}", agent.id);
        }
        self.check_after(started, strikes.killed, compiled_dep_in_seeded)
    }

    /// Every member ready or discarding, at most K of them; the strategies.
    fn check_after(&self, started: Instant, killed: u64, dep_rebuilt: u64) -> Vec<SeedStrategy> {
        let leases = Leases::open(&self.home).unwrap();
        let inventory = leases.pool_inventory(&self.pool).unwrap();
        let counted = inventory
            .members
            .iter()
            .filter(|m| m.status.name() != "discarding")
            .count();
        let seeds: Vec<SeedStrategy> = inventory
            .members
            .iter()
            .filter_map(|m| m.seed.as_ref().map(|s| s.strategy))
            .collect();
        println!(
            "{AGENTS} agents, K={K}, pool at {}: done in {:.1} s with {killed} SIGKILLs; members: {:?}; \
             seeded members that compiled the dependency: {dep_rebuilt}",
            self.pool.display(),
            started.elapsed().as_secs_f64(),
            inventory
                .members
                .iter()
                .map(|m| (
                    m.name.as_str(),
                    m.status.name(),
                    m.seed.as_ref().map(|s| s.strategy.name())
                ))
                .collect::<Vec<_>>()
        );
        assert!(counted <= K, "{inventory:?}");
        for member in &inventory.members {
            assert!(
                !matches!(
                    member.status,
                    MemberStatus::Unknown(_) | MemberStatus::Unregistered
                ),
                "{member:?}"
            );
        }
        assert_eq!(
            dep_rebuilt, 0,
            "a member seeded warm compiled the dependency again"
        );
        seeds
    }

    /// Member 0, built once from agent 0's worktree, with the canary.
    fn warm_first_member(&self) {
        let leases = Leases::open(&self.home).unwrap();
        let worktree = self.root.join("wt-0");
        let owner = Owner::current("storm", "setup", "warm")
            .building(worktree.clone(), git(&worktree, &["rev-parse", "HEAD"]));
        let options = PoolOptions {
            size: K,
            ..PoolOptions::default()
        };
        let cancel = CancelToken::new();
        let lease = leases
            .acquire_from_pool(&self.pool, &owner, &options, None, &cancel)
            .unwrap();
        let built = cargo_build(&worktree, &lease.env());
        assert!(built.status.success(), "{built:?}");
        let canary = lease.dir().join("debug/canary.bin");
        fs::write(&canary, canary_bytes()).unwrap();
        lease.release().unwrap();
    }

    /// Member 0 warm (see [`Place::warm_first_member`]), with the leases of
    /// the storm's home and the pool's options.
    fn warmed(&self) -> (Leases, PoolOptions) {
        self.warm_first_member();
        let options = PoolOptions {
            size: K,
            ..PoolOptions::default()
        };
        (Leases::open(&self.home).unwrap(), options)
    }

    /// A member seeded by reflink from a built one takes almost no new
    /// blocks: the filesystem's use grows by far less than the member holds.
    fn reflink_seed_shares_blocks(&self, mount: &LoopMount) {
        let (leases, options) = self.warmed();
        let cancel = CancelToken::new();
        let first = leases
            .acquire_from_pool(
                &self.pool,
                &Owner::current("s", "n", "a"),
                &options,
                None,
                &cancel,
            )
            .unwrap();
        let one_member = usage(first.dir()).unwrap();
        let before = mount.used();
        let second = leases
            .acquire_from_pool(
                &self.pool,
                &Owner::current("s", "n", "b"),
                &options,
                None,
                &cancel,
            )
            .unwrap();
        let seed = second.seed().unwrap().clone();
        let grew = mount.used().saturating_sub(before);
        println!(
            "{}: a reflink seed of {} files, {} bytes logical ({} allocated), in {} ms grew the \
             filesystem's use by {grew} bytes",
            mount.kind, seed.files, seed.bytes, one_member.allocated, seed.took_ms
        );
        assert_eq!(seed.strategy, SeedStrategy::Reflink, "{seed:?}");
        assert!(
            grew * 10 < one_member.logical,
            "grew {grew} for {one_member:?}"
        );
        drop((first, second));
        self.shared_blocks_count_once(&leases, mount, one_member.allocated);
    }

    /// A member let go shares the blocks its build wrote alike with another
    /// member's (in place on XFS, by writing its files anew on btrfs):
    /// after a build from another worktree rewrote its binary,
    /// the members take less disk once it is released, both binaries still
    /// say what they were built from, and cargo finds the shared member's
    /// build fresh.
    fn release_shares_alike_blocks(&self, mount: &LoopMount) {
        let (leases, options) = self.warmed();
        let cancel = CancelToken::new();
        let acquire = |seat: &str| {
            let owner = Owner::current("s", "n", seat);
            leases.acquire_from_pool(&self.pool, &owner, &options, None, &cancel)
        };
        let (held, seeded) = (acquire("a").unwrap(), acquire("b").unwrap());
        assert_eq!(
            seeded.seed().map(|s| s.strategy),
            Some(SeedStrategy::Reflink)
        );
        let (warm, other) = (held.dir().to_owned(), seeded.dir().to_owned());
        held.release().unwrap();
        let worktree = self.root.join("wt-1");
        write(&worktree.join("src/stamp.txt"), "wt-1 v2");
        let env = seeded.env();
        let built = cargo_build(&worktree, &env);
        assert!(built.status.success(), "{built:?}");
        let before = (
            leases.pool_inventory(&self.pool).unwrap().physical,
            mount.used(),
        );
        seeded.release().unwrap();
        let after = (
            leases.pool_inventory(&self.pool).unwrap().physical,
            mount.used(),
        );
        println!(
            "{}: two members built from two worktrees: {} bytes on disk by their extent maps \
             ({} used on the filesystem), {} ({}) once let go",
            mount.kind, before.0, before.1, after.0, after.1
        );
        assert!(
            after.0 < before.0 && after.1 < before.1,
            "{}: {after:?} of {before:?}",
            mount.kind
        );
        let said = |member: &Path| {
            let ran = Command::new(member.join("debug/app")).output().unwrap();
            String::from_utf8(ran.stdout).unwrap().trim().to_owned()
        };
        assert_eq!(
            (said(&warm), said(&other)),
            ("initial".into(), "wt-1 v2".into())
        );
        let again = cargo_build(&worktree, &env);
        let again_said = String::from_utf8_lossy(&again.stderr);
        assert!(
            again.status.success() && !again_said.contains("Compiling"),
            "{}: a build after sharing was not fresh: {again_said}",
            mount.kind
        );
        write(&worktree.join("src/stamp.txt"), "initial");
        let cleared = leases
            .prune_pool(&self.pool, 0, &Owner::current("s", "n", "j"))
            .unwrap();
        assert_eq!(cleared.pruned.len(), 2, "{cleared:?}");
    }

    /// The pool's own accounting counts the blocks its members share once,
    /// so a budget of 1.3 members keeps a member and its reflink; a budget
    /// of nothing removes both.
    fn shared_blocks_count_once(&self, leases: &Leases, mount: &LoopMount, one_member: u64) {
        let inventory = leases.pool_inventory(&self.pool).unwrap();
        let budget = one_member * 13 / 10;
        println!(
            "{}: two members, one a reflink of the other: {} bytes on disk by their extent maps \
             ({} allocated added up), one member {} allocated",
            mount.kind,
            inventory.physical,
            inventory.usage().allocated,
            one_member
        );
        assert!(inventory.physical <= budget, "{inventory:?}");
        assert!(
            leases
                .plan_pool_prune(&self.pool, budget)
                .unwrap()
                .is_empty()
        );
        let cleared = leases
            .prune_pool(&self.pool, 0, &Owner::current("s", "n", "j"))
            .unwrap();
        assert_eq!(cleared.pruned.len(), 2, "{cleared:?}");
    }

    fn spawn_agent(&self, id: usize, rounds: u64) -> Child {
        let mut command = Command::new(env::current_exe().unwrap());
        command
            .args([
                "--ignored",
                "--exact",
                "agent_child",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(CHILD_ENV[0], &self.root)
            .env(CHILD_ENV[1], &self.pool)
            .env(CHILD_ENV[2], &self.home)
            .env(CHILD_ENV[3], id.to_string())
            .env(CHILD_ENV[4], rounds.to_string())
            .stdout(Stdio::piped())
            .process_group(0);
        command.spawn().unwrap()
    }
}

/// An agent that ended before its rounds were done, other than by a kill,
/// ends the storm.
fn check_alive(agents: &mut [Agent], rounds: u64) {
    for agent in agents {
        if let Some(status) = agent.child.try_wait().unwrap() {
            assert!(
                status.success() || agent.done >= rounds,
                "agent {} ended {status} after {} rounds",
                agent.id,
                agent.done
            );
        }
    }
}

/// SIGKILLs an agent (with its tools) every 0.7 to 2.2 s, up to a count,
/// and starts another in its place for the rounds it had left.
struct Strikes {
    rng: u64,
    left: u64,
    killed: u64,
    next: Instant,
}

impl Strikes {
    fn new(kills: u64) -> Strikes {
        Strikes {
            rng: 0x9e37_79b9_7f4a_7c15,
            left: kills,
            killed: 0,
            next: Instant::now() + Duration::from_secs(1),
        }
    }

    fn strike(
        &mut self,
        agents: &mut [Agent],
        rounds: u64,
        place: &Place,
        events: &mpsc::Sender<(usize, Event)>,
    ) {
        if self.killed >= self.left || Instant::now() < self.next {
            return;
        }
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let victim = self.rng as usize % agents.len();
        let agent = &mut agents[victim];
        if agent.done < rounds && agent.child.try_wait().unwrap().is_none() {
            agent.kill();
            self.killed += 1;
            let done = agent.done;
            *agent = Agent::spawn(victim, rounds - done, place, events);
            agent.done = done;
        }
        self.next = Instant::now() + Duration::from_millis(700 + (self.rng >> 40) % 1500);
    }
}

enum Event {
    Round { seeded_dep_rebuilt: bool },
    Violation(String),
}

/// One agent position: its current process and the rounds completed.
struct Agent {
    id: usize,
    child: Child,
    done: u64,
}

impl Agent {
    fn spawn(
        id: usize,
        rounds: u64,
        place: &Place,
        events: &mpsc::Sender<(usize, Event)>,
    ) -> Agent {
        let mut child = place.spawn_agent(id, rounds);
        let stdout = child.stdout.take().unwrap();
        let events = events.clone();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let event = if let Some(rebuilt) = line.strip_prefix("round ") {
                    Event::Round {
                        seeded_dep_rebuilt: rebuilt == "seeded-dep-rebuilt",
                    }
                } else if let Some(text) = line.strip_prefix("violation ") {
                    Event::Violation(text.to_owned())
                } else {
                    continue;
                };
                let _ = events.send((id, event));
            }
        });
        Agent { id, child, done: 0 }
    }

    /// SIGKILL the agent with its tools (its process group).
    fn kill(&mut self) {
        let group = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL).unwrap();
        self.child.wait().unwrap();
    }
}

/// Child: one agent in its worktree, for its rounds.
#[test]
#[ignore = "run by the storms in a child process"]
fn agent_child() {
    let Ok(values) = CHILD_ENV
        .iter()
        .map(env::var)
        .collect::<Result<Vec<_>, _>>()
    else {
        return;
    };
    let [root, pool, home, agent, rounds] = <[String; 5]>::try_from(values).unwrap();
    let (root, pool) = (PathBuf::from(root), PathBuf::from(pool));
    let worktree = root.join(format!("wt-{agent}"));
    let leases = Leases::open(Path::new(&home)).unwrap();
    remove_git_locks(&worktree, &agent);
    say("");
    for round in 0..rounds.parse::<u64>().unwrap() {
        let stamp = format!("agent-{agent}-pid-{}-round-{round}", std::process::id());
        let head = commit_stamp(&worktree, &stamp);
        let owner = Owner::current("storm", &format!("agent-{agent}"), "build")
            .building(worktree.clone(), head);
        let rebuilt = one_round(&leases, &pool, &root, &owner, &stamp);
        say(&format!("round {rebuilt}"));
    }
}

/// Remove the locks a predecessor killed mid-commit (with its git: its
/// whole process group) left in this agent's worktree and on its branch.
fn remove_git_locks(worktree: &Path, agent: &str) {
    let dirs = git(
        worktree,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--git-dir",
            "--git-common-dir",
        ],
    );
    let mut dirs = dirs.lines().map(PathBuf::from);
    let (own, common) = (dirs.next().unwrap(), dirs.next().unwrap());
    for lock in [
        own.join("index.lock"),
        own.join("HEAD.lock"),
        common.join(format!("refs/heads/agent-{agent}.lock")),
        common.join(format!("logs/refs/heads/agent-{agent}.lock")),
    ] {
        let _ = fs::remove_file(lock);
    }
}

/// Acquire, check, build, run, release; whether a warm-seeded member
/// compiled the dependency.
fn one_round(
    leases: &Leases,
    pool: &Path,
    root: &Path,
    owner: &Owner,
    stamp: &str,
) -> &'static str {
    let options = PoolOptions {
        size: K,
        ..PoolOptions::default()
    };
    let wait = CancelToken::new().with_timeout(Some(Duration::from_secs(600)));
    let lease = leases
        .acquire_from_pool(pool, owner, &options, Some(&wait), &CancelToken::new())
        .unwrap();
    let marker = root.join("markers").join(lease.member());
    claim_marker(&marker);
    check_ready_and_canary(leases, pool, lease.member(), lease.dir());
    let worktree = owner.worktree.as_deref().unwrap();
    let built = cargo_build(worktree, &lease.env());
    if !built.status.success() {
        violation(&format!(
            "cargo build failed in {}: {built:?}",
            lease.member()
        ));
    }
    let ran = Command::new(lease.dir().join("debug/app"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&ran.stdout).trim().to_owned();
    if said != stamp {
        violation(&format!(
            "stale binary in {}: it said {said:?}, built {stamp:?}",
            lease.member()
        ));
    }
    let stderr = String::from_utf8_lossy(&built.stderr);
    let warm_seed = lease
        .seed()
        .is_some_and(|s| s.strategy != SeedStrategy::Cold);
    let dep_rebuilt = warm_seed && stderr.contains("Compiling dep ");
    fs::remove_file(&marker).unwrap();
    lease.release().unwrap();
    if dep_rebuilt {
        "seeded-dep-rebuilt"
    } else {
        "ok"
    }
}

/// The member's record says ready, and a canary it holds is whole.
fn check_ready_and_canary(leases: &Leases, pool: &Path, member: &str, dir: &Path) {
    let inventory = leases.pool_inventory(pool).unwrap();
    let found = inventory.members.iter().find(|m| m.name == member);
    if found.map(|m| m.status.name()) != Some("ready") {
        violation(&format!("{member} leased while not ready: {found:?}"));
    }
    match fs::read(dir.join("debug/canary.bin")) {
        Ok(bytes) if bytes != canary_bytes() => {
            violation(&format!(
                "{member}: a half-copied canary ({} bytes)",
                bytes.len()
            ));
        }
        _ => {}
    }
}

/// Write `stamp` into the worktree's source, dated 2001, and commit it.
fn commit_stamp(worktree: &Path, stamp: &str) -> String {
    let file = worktree.join("src/stamp.txt");
    fs::write(&file, stamp).unwrap();
    fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(SystemTime::UNIX_EPOCH + OLD_SOURCE)
        .unwrap();
    // Git may take the rewritten stamp for unchanged (same size, and the
    // mtime put back); the head must move every round all the same.
    git(worktree, &["commit", "-q", "--allow-empty", "-am", stamp]);
    git(worktree, &["rev-parse", "HEAD"])
}

fn cargo_build(worktree: &Path, env: &[(String, PathBuf)]) -> std::process::Output {
    Command::new(Cargo::default().program)
        .args(["build", "--offline"])
        .current_dir(worktree)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap()
}

/// Create the marker exclusively; a dead holder's is removed, a live
/// holder's is a violation.
fn claim_marker(marker: &Path) {
    let me = std::process::id();
    loop {
        match fs::File::options()
            .write(true)
            .create_new(true)
            .open(marker)
        {
            Ok(mut file) => {
                write!(file, "{me} {}", start_time(me).unwrap_or(0)).unwrap();
                return;
            }
            Err(err) if err.kind() == ErrorKind::AlreadyExists => {
                let text = fs::read_to_string(marker).unwrap_or_default();
                let mut fields = text.split(' ').map(|f| f.parse::<u64>().ok());
                let (pid, start) = (fields.next().flatten(), fields.next().flatten());
                if let Some(pid) = pid
                    && pid_alive(pid as u32, start.filter(|s| *s != 0), None)
                {
                    violation(&format!(
                        "two holders: the marker of live {pid} found by {me}"
                    ));
                }
                let _ = fs::remove_file(marker);
            }
            Err(err) => panic!("{}: {err}", marker.display()),
        }
    }
}

fn violation(text: &str) -> ! {
    say(&format!("violation {text}"));
    std::process::exit(3);
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").unwrap();
    out.flush().unwrap();
}

fn canary_bytes() -> Vec<u8> {
    (0..CANARY_BYTES).map(|i| (i % 251) as u8).collect()
}

const DEP_MANIFEST: &str = r#"[package]
name = "dep"
version = "0.1.0"
edition = "2021"
"#;

const DEP_SOURCE: &str = "pub fn trim(text: &str) -> &str {\n    text.trim()\n}\n";

const APP_MANIFEST: &str = r#"[package]
name = "app"
version = "0.1.0"
edition = "2021"

[dependencies]
dep = { path = "../dep" }

[workspace]
"#;

const APP_SOURCE: &str = r#"fn main() {
    println!("{}", dep::trim(include_str!("stamp.txt")));
}
"#;

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=storm",
            "-c",
            "user.email=storm@example.invalid",
        ])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}
