//! A real releasing process killed (SIGKILL) after each durable step and
//! inside the removal: afterwards the record and the worktree agree (the
//! record unreleased and the worktree whole, or the record released and the
//! worktree whole, partly removed by git, or gone), no byte of the worktree
//! changed, and a second call converges to released and removed.

use std::{
    fs,
    os::unix::process::ExitStatusExt,
    path::{Path, PathBuf},
    process::Command,
    thread,
    time::Duration,
};

use natives_core::CancelToken;
use nix::{
    sys::signal::{Signal, kill, killpg},
    unistd::Pid,
};

use super::{
    tests::{BRANCH, Scene, drive_at},
    *,
};
use crate::{
    git::Git,
    registry::{EventKind, Registry},
    testing::{children_of, die, snapshot},
};
use natives_system::crash;

/// What the child reads: the scene, and how to die.
const CHILD_HOME: &str = "NATIVES_TEST_CRASH_HOME";
const CHILD_MAIN: &str = "NATIVES_TEST_CRASH_MAIN";
const CHILD_MODE: &str = "NATIVES_TEST_CRASH_MODE";

/// How the child dies.
#[derive(Clone, Copy, Debug)]
enum Death {
    /// SIGKILL at this point.
    At(&'static str),
    /// SIGKILL itself this long after `git worktree remove` began deleting
    /// (the first file it unlinks is gone); git is not touched.
    InsideGitRemoval(Duration),
    /// SIGKILL git's process group this long after it started removing,
    /// then itself: the removal is cut short half way.
    WithGitAfter(Duration),
    /// At "removing", take part of the worktree away as a cut-short removal
    /// would (its `.git` file and every other file of `HEAD`), then die.
    AfterPartRemoved,
    /// At "removing", take the whole directory away, then die.
    AfterAllRemoved,
    /// A driver appears after the first look; die once the rollback is
    /// written.
    AfterUndo,
}

impl Death {
    fn encode(self) -> String {
        match self {
            Death::At(point) => format!("at:{point}"),
            Death::InsideGitRemoval(delay) => format!("inside-removal:{}", delay.as_micros()),
            Death::WithGitAfter(delay) => format!("with-git:{}", delay.as_millis()),
            Death::AfterPartRemoved => "part-removed".into(),
            Death::AfterAllRemoved => "all-removed".into(),
            Death::AfterUndo => "after-undo".into(),
        }
    }

    fn decode(text: &str) -> Death {
        let points = ["release recorded", "removal marked", "removed"];
        match text.split_once(':') {
            Some(("at", point)) => Death::At(points.into_iter().find(|p| *p == point).unwrap()),
            Some(("with-git", ms)) => {
                Death::WithGitAfter(Duration::from_millis(ms.parse().unwrap()))
            }
            Some(("inside-removal", us)) => {
                Death::InsideGitRemoval(Duration::from_micros(us.parse().unwrap()))
            }
            _ => match text {
                "part-removed" => Death::AfterPartRemoved,
                "all-removed" => Death::AfterAllRemoved,
                "after-undo" => Death::AfterUndo,
                other => panic!("unknown death {other}"),
            },
        }
    }
}

/// On a thread: wait for the git this process starts, then kill as told.
fn kill_once_git_runs(kill_git_after: Duration) {
    thread::spawn(move || {
        let git = first_child();
        thread::sleep(kill_git_after);
        // The process itself too: caught between fork and exec it may not
        // lead its group yet.
        let _ = kill(Pid::from_raw(git), Signal::SIGKILL);
        let _ = killpg(Pid::from_raw(git), Signal::SIGKILL);
        die();
    });
}

/// The first child this process starts, once it is there.
fn first_child() -> i32 {
    loop {
        if let Some(&pid) = children_of(std::process::id()).first() {
            return pid;
        }
        thread::yield_now();
    }
}

/// On a thread: once the file a removal of `wt` unlinks first is gone,
/// wait `delay` and die, leaving git to the kernel.
fn die_inside_the_removal(wt: &Path, delay: Duration) {
    let first = first_unlinked(wt);
    thread::spawn(move || {
        while fs::symlink_metadata(&first).is_ok() {
            thread::yield_now();
        }
        thread::sleep(delay);
        die();
    });
}

/// The file a recursive removal of `dir` unlinks first: depth first, in
/// directory order, as git's removal walks.
fn first_unlinked(dir: &Path) -> PathBuf {
    let first = fs::read_dir(dir).unwrap().next().unwrap().unwrap();
    match first.file_type().unwrap().is_dir() {
        true => first_unlinked(&first.path()),
        false => first.path(),
    }
}

/// Take away every file of `HEAD` but one, and the `.git` file.
fn remove_part(wt: &Path) {
    fs::remove_file(wt.join(".git")).unwrap();
    fs::remove_file(wt.join("README")).unwrap();
    fs::remove_dir_all(wt.join("many")).unwrap();
}

/// The child: release the scene's branch to run `r2` and die as told.
#[test]
#[ignore = "run by the crash tests in a child process"]
fn releasing_child() {
    let (Ok(home), Ok(main), Ok(mode)) = (
        std::env::var(CHILD_HOME),
        std::env::var(CHILD_MAIN),
        std::env::var(CHILD_MODE),
    ) else {
        return;
    };
    let registry = Registry::open(Path::new(&home));
    let wt = PathBuf::from(&main).parent().unwrap().join("runs/r1/A");
    let death = Death::decode(&mode);
    let mut taken = None;
    let hook: crash::Hook = match death {
        Death::At(point) => Box::new(move |reached| {
            if reached == point {
                die();
            }
        }),
        Death::WithGitAfter(delay) => Box::new(move |reached| {
            if reached == "removing" {
                kill_once_git_runs(delay);
            }
        }),
        Death::InsideGitRemoval(delay) => {
            let wt = wt.clone();
            Box::new(move |reached| {
                if reached == "removing" {
                    die_inside_the_removal(&wt, delay);
                }
            })
        }
        Death::AfterPartRemoved | Death::AfterAllRemoved => Box::new(move |reached| {
            if reached == "removing" {
                match death {
                    Death::AfterPartRemoved => remove_part(&wt),
                    _ => fs::remove_dir_all(&wt).unwrap(),
                }
                die();
            }
        }),
        Death::AfterUndo => {
            let (mut drive, keep) = drive_at("first look", &registry, "r1");
            taken = Some(keep);
            Box::new(move |reached| {
                drive(reached);
                if reached == "undone" {
                    die();
                }
            })
        }
    };
    crash::install(Some(hook));
    let regenerable = Regenerable::new(vec![REGENERABLE.to_owned()]).unwrap();
    let takeover = Takeover::for_task(&registry, "t1", "r2")
        .unwrap()
        .with_regenerable(regenerable);
    let git = Git::new().unwrap();
    let outcome = release(
        &registry,
        &git,
        Path::new(&main),
        BRANCH,
        &takeover,
        &CancelToken::new(),
    );
    if matches!(death, Death::WithGitAfter(_)) {
        // git finished its removal before the killer saw it (a loaded
        // machine): die now, a kill just after the removal, which the
        // parent's checks hold to the same rule.
        eprintln!("{mode}: git finished before the kill");
        die();
    }
    // Killed from another thread: wait for it.
    thread::sleep(Duration::from_secs(30));
    panic!(
        "{mode}: not killed ({outcome:?}, driver {})",
        taken.is_some()
    );
}

/// What the releasing child declares regenerable.
const REGENERABLE: &str = "node_modules/";

/// A scene whose candidate holds `files` more files, so a removal takes a
/// while, and, untracked, a cache (`target/`, tagged) and what the child
/// declares regenerable (`node_modules/`), which go with it.
fn big_scene(files: usize) -> Scene {
    let scene = Scene::new();
    for n in 0..files {
        scene.repo.write(
            &scene.wt,
            &format!("many/{:02}/{n}.txt", n % 30),
            &format!("file {n}\n"),
        );
    }
    scene.repo.commit(&scene.wt, "many files");
    let tag = "Signature: 8a477f597d28d172789f06886806bc55\n";
    scene.repo.write(&scene.wt, "target/CACHEDIR.TAG", tag);
    for n in 0..50 {
        let (object, module) = (
            format!("target/debug/{n}.o"),
            format!("node_modules/m/{n}.js"),
        );
        scene.repo.write(&scene.wt, &object, "object\n");
        scene.repo.write(&scene.wt, &module, "module\n");
    }
    scene
}

/// Where a child's scratch files go: inside the scene, so what a killed
/// child leaves goes with it.
fn scratch(home: &Path) -> PathBuf {
    let dir = home.join("tmp");
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn kill_child(scene: &Scene, death: Death) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "handover::crash_tests::releasing_child",
            "--nocapture",
        ])
        .env(CHILD_HOME, &scene.home)
        .env(CHILD_MAIN, &scene.repo.main)
        .env(CHILD_MODE, death.encode())
        .env("TMPDIR", scratch(&scene.home))
        .output()
        .unwrap();
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGKILL),
        "{death:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The state after a kill: which of the consistent states it is in, with
/// every remaining file holding its bytes from `before`.
#[derive(Debug, PartialEq, Eq)]
enum State {
    /// Record unreleased, worktree whole.
    Unreleased,
    /// Record released, worktree whole.
    ReleasedWhole,
    /// Record released, the worktree partly removed by git.
    ReleasedPartlyRemoved,
    /// Record released, worktree gone.
    ReleasedRemoved,
}

fn state(scene: &Scene, before: &[(PathBuf, Vec<u8>)], death: Death) -> State {
    let record = scene.r1();
    let folded = record.candidate("A").unwrap().folded;
    let now = if scene.wt.exists() {
        snapshot(&scene.wt)
    } else {
        Vec::new()
    };
    for file in &now {
        assert!(
            before.contains(file),
            "{death:?}: {} changed or appeared",
            file.0.display()
        );
    }
    if !folded {
        assert_eq!(record.released_to, None, "{death:?}");
        assert!(
            scene.listed() && now == before,
            "{death:?}: unreleased but not whole"
        );
        return State::Unreleased;
    }
    assert_eq!(record.released_to.as_deref(), Some("r2"), "{death:?}");
    assert_eq!(record.released_branches, [BRANCH], "{death:?}");
    match (scene.listed(), now.as_slice() == before) {
        (false, _) => {
            assert!(!scene.wt.exists(), "{death:?}: unlisted but present");
            State::ReleasedRemoved
        }
        (true, true) => State::ReleasedWhole,
        (true, false) => State::ReleasedPartlyRemoved,
    }
}

/// A second call finishes: released (or nothing left to do) and removed.
fn converges(scene: &Scene, tip: &str, death: Death) {
    match scene.release() {
        Outcome::Released(released) => assert_eq!(released.tip, tip, "{death:?}"),
        Outcome::NotHeld => {}
        other => panic!("{death:?}: the second call did not converge: {other:?}"),
    }
    assert!(!scene.listed() && !scene.wt.exists(), "{death:?}");
    let record = scene.r1();
    assert!(record.candidate("A").unwrap().folded, "{death:?}");
    assert_eq!(record.released_to.as_deref(), Some("r2"), "{death:?}");
    assert_eq!(scene.repo.tip(BRANCH), tip, "{death:?}: the branch moved");
    assert!(matches!(scene.release(), Outcome::NotHeld), "{death:?}");
}

/// Kill a releasing child as told, check the state it left, and that the
/// next call converges leaving every ref and reflog entry of the
/// repository (all of its git directory but the worktree's administration
/// and the objects) as it was.
fn killed_then_converges(scene: &Scene, death: Death) -> State {
    let before = snapshot(&scene.wt);
    let repository = scene.repo.state(&scene.wt);
    let tip = scene.repo.tip(BRANCH);
    kill_child(scene, death);
    let state = state(scene, &before, death);
    converges(scene, &tip, death);
    let after = scene.repo.state(&scene.wt);
    assert_eq!(
        after.git_without("A"),
        repository.git_without("A"),
        "{death:?}"
    );
    state
}

#[test]
fn a_kill_after_each_durable_step_leaves_record_and_worktree_consistent() {
    let table = [
        ("release recorded", State::ReleasedWhole),
        ("removal marked", State::ReleasedWhole),
        ("removed", State::ReleasedRemoved),
    ];
    for (point, expected) in table {
        let scene = Scene::new();
        assert_eq!(
            killed_then_converges(&scene, Death::At(point)),
            expected,
            "{point}"
        );
    }
}

#[test]
fn a_kill_after_a_rollback_was_written_leaves_the_worktree_unreleased() {
    let scene = Scene::new();
    assert_eq!(
        killed_then_converges(&scene, Death::AfterUndo),
        State::Unreleased
    );
    let kinds: Vec<_> = scene.r1().events.iter().map(|e| e.kind.clone()).collect();
    let undone = kinds.iter().position(|k| *k == EventKind::Undone).unwrap();
    assert_eq!(kinds[undone - 1], EventKind::Released);
}

/// The releasing process killed at many moments inside git's removal,
/// and the next call made at once: git dies with the process (it does not
/// go on deleting behind the next call's back), the next call waits until
/// it is gone, and converges, every time.
#[test]
fn a_kill_inside_the_removal_is_finished_by_the_very_next_call() {
    let mut states = Vec::new();
    for trial in 0..32 {
        let scene = big_scene(1000);
        let death = Death::InsideGitRemoval(Duration::from_millis(trial));
        states.push(killed_then_converges(&scene, death));
    }
    assert!(
        !states.contains(&State::Unreleased),
        "a kill inside the removal left the record unreleased: {states:?}"
    );
}

/// Git killed with the releasing process at several moments of its
/// removal: whatever it had deleted, the next call puts it back from
/// `HEAD`, proves the content again and removes.
#[test]
fn a_removal_cut_short_at_any_moment_is_finished_by_the_next_call() {
    for delay in [0, 2, 5, 10, 20, 40] {
        let scene = big_scene(3000);
        let death = Death::WithGitAfter(Duration::from_millis(delay));
        let state = killed_then_converges(&scene, death);
        assert_ne!(state, State::Unreleased, "{death:?}");
    }
}

#[test]
fn a_removal_cut_short_after_the_git_file_went_is_finished_by_the_next_call() {
    let scene = big_scene(3000);
    let state = killed_then_converges(&scene, Death::AfterPartRemoved);
    assert_eq!(state, State::ReleasedPartlyRemoved);
}

#[test]
fn a_removal_cut_short_after_the_directory_went_is_finished_by_the_next_call() {
    let scene = Scene::new();
    let state = killed_then_converges(&scene, Death::AfterAllRemoved);
    assert_eq!(state, State::ReleasedPartlyRemoved, "git still lists it");
}
