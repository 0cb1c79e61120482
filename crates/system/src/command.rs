//! Running a child process under a [`CancelToken`]: the one place natives
//! waits for a program it started (cargo, git).
//!
//! The child runs in a process group of its own, so that stopping it stops
//! everything it started too. The group is killed when the caller's token
//! stops (cancelled or past its deadline), and when the call is left any
//! other way before the child was reaped (a panic unwinding through it):
//! a child is never left running behind a call that returned.
//!
//! Nor behind a caller that died: on Linux the child is SIGKILLed when the
//! thread that started it ends, however it ends (`PR_SET_PDEATHSIG`, set
//! between fork and exec; a parent already gone by then fails the spawn).
//! That thread is the one that waits for the child, so the signal fires
//! exactly when natives can no longer stop the child itself: a `git
//! worktree remove` whose caller was killed stops deleting rather than
//! racing the call that comes to finish it. A caller that must also be
//! able to tell when such a child has really gone hands it a lock to hold
//! ([`run_holding`]): an open file description lock stays held until every
//! process sharing it has exited, so whoever takes the lock next knows the
//! child is gone.
//!
//! Exit is waited for with `waitid(WNOWAIT)` on a thread of its own, which
//! sees the exit without reaping it: the child's pid cannot be reused while
//! the group might still be signalled, and the caller hears of the exit at
//! once instead of at the next poll. Both output pipes are drained while the
//! child runs (a full pipe would stall it), and input, if any, is fed from
//! another thread for the same reason.

use std::{
    io::{self, Read, Write},
    os::{
        fd::{AsRawFd, BorrowedFd, RawFd},
        unix::process::CommandExt,
    },
    process::{Child, Command, Output, Stdio},
    sync::mpsc::{self, RecvTimeoutError},
    thread,
    time::Duration,
};

use natives_core::{CancelToken, Error};
use nix::{
    fcntl::{FcntlArg, FdFlag, fcntl},
    sys::{
        signal::{Signal, killpg},
        wait::{Id, WaitPidFlag, waitid},
    },
    unistd::{Pid, getpid},
};

/// How a child ended.
#[derive(Debug)]
pub enum Ended {
    /// It exited (or was killed by someone else): its status and output.
    Finished(Output),
    /// The token stopped first: the child and its group were killed, and
    /// this is the token's error (`ABORT_ERR`, `ETIMEDOUT`).
    Stopped(Error),
}

/// How long the wait sleeps between looks at the token.
const CANCEL_POLL: Duration = Duration::from_millis(10);

/// Run `command` to completion in a process group of its own, with `input`
/// on its standard input (none when empty: stdin is then `/dev/null`) and
/// both output streams captured. A token that has already stopped spawns
/// nothing. Errors are the spawn's or the wait's.
pub fn run(command: &mut Command, input: &[u8], cancel: &CancelToken) -> io::Result<Ended> {
    run_holding(command, input, &[], cancel)
}

/// [`run`], the child also holding `held` (open descriptors of the
/// caller's, typically a held lock's file): they stay open in the child
/// (and whatever it starts) across `exec`, so a lock on them is not free
/// again until the child has exited too, even when the caller dies first.
pub fn run_holding(
    command: &mut Command,
    input: &[u8],
    held: &[BorrowedFd<'_>],
    cancel: &CancelToken,
) -> io::Result<Ended> {
    if let Err(stopped) = cancel.check() {
        return Ok(Ended::Stopped(stopped));
    }
    let mut group = spawn_group(command, !input.is_empty(), held)?;
    let (stdin, stdout, stderr) = (
        group.child.stdin.take(),
        group.child.stdout.take(),
        group.child.stderr.take(),
    );
    thread::scope(|scope| {
        if let Some(mut pipe) = stdin {
            // A child that exits without reading it all closes the pipe;
            // its exit status says what happened.
            scope.spawn(move || drop(pipe.write_all(input)));
        }
        let stdout = scope.spawn(|| read_all(stdout));
        let stderr = scope.spawn(|| read_all(stderr));
        let ended = group.wait(cancel);
        let join =
            |reader: thread::ScopedJoinHandle<'_, Vec<u8>>| reader.join().unwrap_or_default();
        let (stdout, stderr) = (join(stdout), join(stderr));
        Ok(match ended? {
            Waited::Exited(status) => Ended::Finished(Output {
                status,
                stdout,
                stderr,
            }),
            Waited::Killed(stopped) => Ended::Stopped(stopped),
        })
    })
}

/// Start `command` in a process group of its own, stdout and stderr piped
/// (stdin too when `piped_input`), handed the `held` descriptors and killed
/// with its parent (see `in_child`).
fn spawn_group(
    command: &mut Command,
    piped_input: bool,
    held: &[BorrowedFd<'_>],
) -> io::Result<Group> {
    let stdin = match piped_input {
        true => Stdio::piped(),
        false => Stdio::null(),
    };
    let held: Vec<RawFd> = held.iter().map(AsRawFd::as_raw_fd).collect();
    let parent = getpid();
    // SAFETY: the closure runs between fork and exec and only makes system
    // calls (prctl, getppid, fcntl), which are async-signal-safe.
    unsafe {
        command.pre_exec(move || in_child(parent, &held));
    }
    let child = command
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    Ok(Group { child, armed: true })
}

/// In the child, before `exec`: die with the thread that started it, and
/// keep `held` open across `exec`.
fn in_child(parent: Pid, held: &[RawFd]) -> io::Result<()> {
    die_with_parent(parent)?;
    for &fd in held {
        // SAFETY: `fd` was open in the parent when it forked, so it is
        // open here; only this process's flag on it changes.
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        fcntl(fd, FcntlArg::F_SETFD(FdFlag::empty()))?;
    }
    Ok(())
}

/// Ask the kernel to SIGKILL this (child) process when the thread that
/// forked it ends; a parent gone before the request was made fails the
/// spawn instead (the child was re-parented, and no signal would come).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn die_with_parent(parent: Pid) -> io::Result<()> {
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
    if nix::unistd::getppid() != parent {
        return Err(io::Error::other("the parent died before the child started"));
    }
    Ok(())
}

/// Elsewhere no such request exists: a child outlives a caller killed
/// with SIGKILL.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn die_with_parent(_parent: Pid) -> io::Result<()> {
    Ok(())
}

/// A running child and its process group, killed when dropped unless the
/// child was reaped.
struct Group {
    child: Child,
    armed: bool,
}

enum Waited {
    Exited(std::process::ExitStatus),
    Killed(Error),
}

impl Group {
    /// Wait for the child to exit, killing its group once `cancel` stops;
    /// the child is reaped either way.
    fn wait(&mut self, cancel: &CancelToken) -> io::Result<Waited> {
        let pid = self.pid();
        let (exited, exit) = mpsc::channel();
        // Sees the exit without reaping, so the pid stays the group's.
        thread::spawn(move || {
            let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT;
            let _ = exited.send(waitid(Id::Pid(pid), flags));
        });
        let mut stopped = None;
        loop {
            match exit.recv_timeout(CANCEL_POLL) {
                Ok(_) | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) if stopped.is_none() => {
                    if let Err(why) = cancel.check() {
                        self.kill();
                        stopped = Some(why);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
        let status = self.child.wait()?;
        self.armed = false;
        Ok(stopped.map_or(Waited::Exited(status), Waited::Killed))
    }

    fn pid(&self) -> Pid {
        Pid::from_raw(i32::try_from(self.child.id()).unwrap_or(i32::MAX))
    }

    /// SIGKILL the whole group (the child is not reaped yet, so its pid
    /// still names the group).
    fn kill(&self) {
        let _ = killpg(self.pid(), Signal::SIGKILL);
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.armed {
            self.kill();
            let _ = self.child.wait();
        }
    }
}

/// Everything `pipe` yields until it closes (nothing if there is no pipe or
/// it fails: the exit status still tells success from failure).
fn read_all(pipe: Option<impl Read>) -> Vec<u8> {
    let mut bytes = Vec::new();
    if let Some(mut pipe) = pipe {
        let _ = pipe.read_to_end(&mut bytes);
    }
    bytes
}

#[cfg(test)]
mod tests {
    use std::{
        fs,
        os::fd::AsFd,
        path::Path,
        time::{Duration, Instant},
    };

    use super::*;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        command
    }

    fn finished(ended: Ended) -> Output {
        match ended {
            Ended::Finished(output) => output,
            Ended::Stopped(why) => panic!("stopped: {why}"),
        }
    }

    #[test]
    fn output_status_and_input_are_carried() {
        let out = finished(
            run(
                &mut sh("cat; echo err >&2; exit 3"),
                b"fed",
                &CancelToken::new(),
            )
            .unwrap(),
        );
        assert_eq!(out.stdout, b"fed");
        assert_eq!(out.stderr, b"err\n");
        assert_eq!(out.status.code(), Some(3));
        let out = finished(run(&mut sh("cat"), b"", &CancelToken::new()).unwrap());
        assert_eq!(out.stdout, b"", "stdin is /dev/null without input");
    }

    /// A large output on both streams does not stall the child.
    #[test]
    fn both_pipes_are_drained_while_the_child_runs() {
        let script = "head -c 1000000 /dev/zero; head -c 1000000 /dev/zero >&2";
        let out = finished(run(&mut sh(script), b"", &CancelToken::new()).unwrap());
        assert_eq!((out.stdout.len(), out.stderr.len()), (1_000_000, 1_000_000));
    }

    #[test]
    fn a_stopped_token_spawns_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let token = CancelToken::new();
        token.cancel();
        let ended = run(
            &mut sh(&format!("touch '{}'", marker.display())),
            b"",
            &token,
        )
        .unwrap();
        assert!(matches!(ended, Ended::Stopped(ref e) if e.code() == "ABORT_ERR"));
        assert!(!marker.exists());
    }

    /// The pid a script wrote to `path`, once it is there.
    fn wait_for_pid(path: &Path) -> i32 {
        let started = Instant::now();
        loop {
            if let Some(pid) = fs::read_to_string(path)
                .ok()
                .and_then(|s| s.trim().parse().ok())
            {
                return pid;
            }
            assert!(started.elapsed() < Duration::from_secs(20), "never started");
            thread::sleep(Duration::from_millis(5));
        }
    }

    fn gone(pid: i32) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let state = fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    stat.rsplit_once(") ")
                        .and_then(|(_, rest)| rest.chars().next())
                });
            if matches!(state, None | Some('Z' | 'X')) {
                return true;
            }
            if Instant::now() > deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// A script that starts a grandchild and records its pid, then waits.
    fn sleeper(dir: &Path) -> Command {
        sh(&format!(
            "sleep 600 & echo $! > '{0}/pid.tmp' && mv '{0}/pid.tmp' '{0}/pid'; wait",
            dir.display()
        ))
    }

    #[test]
    fn a_deadline_kills_the_child_and_its_group_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let token = CancelToken::new().with_timeout(Some(Duration::from_millis(300)));
        let started = Instant::now();
        let ended = run(&mut sleeper(dir.path()), b"", &token).unwrap();
        assert!(matches!(ended, Ended::Stopped(ref e) if e.code() == "ETIMEDOUT"));
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert!(
            gone(wait_for_pid(&dir.path().join("pid"))),
            "the grandchild outlived the deadline"
        );
    }

    /// A call left by a panic while the child runs still kills its group.
    #[test]
    fn leaving_by_a_panic_kills_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let result = std::panic::catch_unwind(|| {
            let child = sleeper(dir.path())
                .stdout(Stdio::null())
                .process_group(0)
                .spawn()
                .unwrap();
            let _group = Group { child, armed: true };
            wait_for_pid(&pid_file);
            panic!("left while the child runs");
        });
        assert!(result.is_err());
        assert!(
            gone(wait_for_pid(&pid_file)),
            "the group outlived the panic"
        );
    }

    /// Where the dying-caller child writes its child's pid.
    const CALLER_DIR: &str = "NATIVES_TEST_COMMAND_CALLER_DIR";

    /// A caller killed (SIGKILL) while its child runs takes the child with
    /// it: nothing is left running that nobody can stop.
    #[test]
    fn a_child_dies_with_its_caller() {
        let dir = tempfile::tempdir().unwrap();
        let mut caller = Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                "command::tests::dying_caller",
                "--nocapture",
            ])
            .env(CALLER_DIR, dir.path())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let child = wait_for_pid(&dir.path().join("pid"));
        caller.kill().unwrap();
        caller.wait().unwrap();
        assert!(gone(child), "the child outlived its caller");
    }

    /// The caller of [`a_child_dies_with_its_caller`]: runs a child that
    /// records its pid and sleeps, and is killed meanwhile.
    #[test]
    #[ignore = "run by a_child_dies_with_its_caller in a child process"]
    fn dying_caller() {
        let Ok(dir) = std::env::var(CALLER_DIR) else {
            return;
        };
        let script = format!(
            "echo $$ > '{dir}/pid.tmp' && mv '{dir}/pid.tmp' '{dir}/pid' && exec sleep 600"
        );
        let ended = run(&mut sh(&script), b"", &CancelToken::new());
        panic!("not killed: {ended:?}");
    }

    /// Where the lock-holding caller keeps its lock and its grandchild's pid.
    const HOLDING_DIR: &str = "NATIVES_TEST_COMMAND_HOLDING_DIR";

    /// A caller killed while what it started still runs: the lock it handed
    /// down stays held until the last process holding it is gone, so the
    /// next taker of the lock cannot race it.
    #[test]
    fn a_lock_handed_down_is_held_until_the_last_holder_exits() {
        let dir = tempfile::tempdir().unwrap();
        let mut caller = Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                "command::tests::holding_caller",
                "--nocapture",
            ])
            .env(HOLDING_DIR, dir.path())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let grandchild = wait_for_pid(&dir.path().join("pid"));
        caller.kill().unwrap();
        caller.wait().unwrap();
        let lock = dir.path().join("lock");
        let held_meanwhile = crate::lock::is_held(&lock).unwrap();
        nix::sys::signal::kill(Pid::from_raw(grandchild), Signal::SIGKILL).unwrap();
        assert!(
            held_meanwhile,
            "the lock was free while a process holding it still ran"
        );
        assert!(gone(grandchild));
        let limit = Duration::from_secs(20);
        crate::lock::wait_exclusive(&lock, &CancelToken::new(), limit).unwrap();
    }

    /// The caller of [`a_lock_handed_down_is_held_until_the_last_holder_exits`]:
    /// holds a lock, hands it to a child that starts a long grandchild, and
    /// is killed meanwhile.
    #[test]
    #[ignore = "run by a_lock_handed_down_is_held_until_the_last_holder_exits in a child process"]
    fn holding_caller() {
        let Ok(dir) = std::env::var(HOLDING_DIR) else {
            return;
        };
        let held = crate::lock::try_exclusive(&Path::new(&dir).join("lock"))
            .unwrap()
            .unwrap();
        let script = format!(
            "sleep 600 & echo $! > '{dir}/pid.tmp' && mv '{dir}/pid.tmp' '{dir}/pid'; wait"
        );
        let ended = run_holding(&mut sh(&script), b"", &[held.as_fd()], &CancelToken::new());
        panic!("not killed: {ended:?}");
    }

    /// A descriptor handed to the child stays open in it across `exec`;
    /// any other is closed there, as every descriptor natives opens is.
    #[test]
    fn held_descriptors_stay_open_in_the_child() {
        let file = tempfile::tempfile().unwrap();
        let fd = file.as_raw_fd();
        let script = format!("[ -e /proc/$$/fd/{fd} ]");
        let cancel = CancelToken::new();
        let held = finished(run_holding(&mut sh(&script), b"", &[file.as_fd()], &cancel).unwrap());
        assert!(held.status.success(), "{held:?}");
        let not_held = finished(run(&mut sh(&script), b"", &cancel).unwrap());
        assert_eq!(not_held.status.code(), Some(1), "{not_held:?}");
    }

    /// The exit is heard when it happens, not at the next look at the
    /// token: fifty runs take less than fifty polls.
    #[test]
    fn an_exit_is_seen_at_once() {
        let started = Instant::now();
        for _ in 0..50 {
            finished(run(&mut Command::new("true"), b"", &CancelToken::new()).unwrap());
        }
        assert!(
            started.elapsed() < CANCEL_POLL * 50,
            "{:?}",
            started.elapsed()
        );
    }
}
