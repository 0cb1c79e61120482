//! Who a process is, and whether it is still alive: conservatively.
//!
//! A pid alone does not name a process: pids are reused, and after a reboot
//! every pid means something else. So a process is named by its pid, its
//! start time (field 22 of `/proc/<pid>/stat`, in clock ticks since boot) and
//! the boot id. [`pid_alive`] answers `false` only when death is certain: no
//! such pid, a zombie, a different start time, a different boot. Anything it
//! cannot establish (no `/proc`, permission refused, an unparseable stat)
//! reads as alive, because calling a live owner dead would hand its directory
//! to a second holder.
//!
//! A pid means something only on its own machine, and a host name does not
//! name one machine (containers and cloned images share names), so a host is
//! its name plus its machine id (`/etc/machine-id`), or, where there is none,
//! its boot id. A process recorded on any other host may be alive: see
//! [`on_this_host`].

use std::{
    fs,
    io::Read,
    sync::{
        OnceLock,
        atomic::{AtomicU64, Ordering},
    },
    time::{SystemTime, UNIX_EPOCH},
};

use nix::{errno::Errno, sys::signal, unistd::Pid};
use sha2::{Digest, Sha256};

/// Where the kernel publishes this boot's id (a random UUID per boot).
const BOOT_ID_PATH: &str = "/proc/sys/kernel/random/boot_id";

/// Where this installation's id lives (set once, kept across reboots), in
/// the order they are read.
const MACHINE_ID_PATHS: [&str; 2] = ["/etc/machine-id", "/var/lib/dbus/machine-id"];

/// A process, named so that neither pid reuse nor a reboot can alias it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessIdentity {
    /// The process id.
    pub pid: u32,
    /// Start time in clock ticks since boot, if it could be read.
    pub start_time: Option<u64>,
    /// This boot's id, if it could be read.
    pub boot_id: Option<String>,
    /// The host name.
    pub host: String,
    /// This machine's id, if it has one.
    pub machine_id: Option<String>,
}

impl ProcessIdentity {
    /// The calling process.
    pub fn current() -> ProcessIdentity {
        let pid = std::process::id();
        ProcessIdentity {
            pid,
            start_time: start_time(pid),
            boot_id: boot_id().map(str::to_owned),
            host: host_name().to_owned(),
            machine_id: machine_id().map(str::to_owned),
        }
    }
}

/// Whether the process `pid` — started at `start_time` during boot `boot_id`,
/// when known — may still be alive. `false` only when its death is certain.
pub fn pid_alive(pid: u32, start_time: Option<u64>, boot_id: Option<&str>) -> bool {
    if let (Some(recorded), Some(current)) = (boot_id, self::boot_id())
        && recorded != current
    {
        return false;
    }
    let Ok(raw) = i32::try_from(pid) else {
        return true;
    };
    if raw <= 0 {
        return true;
    }
    let exists = signal::kill(Pid::from_raw(raw), None) != Err(Errno::ESRCH);
    judge(exists, read_stat(pid), start_time)
}

/// The verdict from what could be observed: the pid exists (a refused probe
/// counts as existing), its stat (if readable) and the recorded start time.
fn judge(exists: bool, stat: Option<Stat>, recorded_start: Option<u64>) -> bool {
    match (exists, stat) {
        (false, _) => false,
        (true, Some(stat)) if stat.zombie => false,
        (
            true,
            Some(Stat {
                start_time: Some(now),
                ..
            }),
        ) => recorded_start.is_none_or(|r| r == now),
        (true, _) => true,
    }
}

/// Start time of `pid` in clock ticks since boot, if readable.
pub fn start_time(pid: u32) -> Option<u64> {
    read_stat(pid).and_then(|stat| stat.start_time)
}

/// This boot's id, if the kernel publishes one.
pub fn boot_id() -> Option<&'static str> {
    static BOOT_ID: OnceLock<Option<String>> = OnceLock::new();
    BOOT_ID
        .get_or_init(|| {
            fs::read_to_string(BOOT_ID_PATH)
                .ok()
                .map(|id| id.trim().to_owned())
                .filter(|id| !id.is_empty())
        })
        .as_deref()
}

/// This machine's id, if it has one (an empty or missing file: none).
pub fn machine_id() -> Option<&'static str> {
    static MACHINE_ID: OnceLock<Option<String>> = OnceLock::new();
    MACHINE_ID
        .get_or_init(|| {
            MACHINE_ID_PATHS.iter().find_map(|path| {
                fs::read_to_string(path)
                    .ok()
                    .map(|id| id.trim().to_owned())
                    .filter(|id| !id.is_empty())
            })
        })
        .as_deref()
}

/// Whether a process recorded as running on `host`, machine `machine_id`,
/// during boot `boot_id` ran on this machine, so that its pid can be asked
/// about here: the same host name, and the same machine id; where either
/// side has none, the same boot (another boot might be another machine of
/// the same name). Anything that cannot be told apart is another host.
pub fn on_this_host(host: &str, machine_id: Option<&str>, boot_id: Option<&str>) -> bool {
    if host != host_name() {
        return false;
    }
    match (machine_id, self::machine_id()) {
        (Some(recorded), Some(here)) => recorded == here,
        _ => matches!((boot_id, self::boot_id()), (Some(recorded), Some(here)) if recorded == here),
    }
}

/// This machine's host name (`"unknown"` if it has none).
pub fn host_name() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| {
        nix::unistd::gethostname()
            .ok()
            .and_then(|name| name.into_string().ok())
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| "unknown".to_owned())
    })
}

/// 128 random bits as 32 hex digits: names a lease or a temporary file so
/// that no two writers, in any process, ever pick the same one.
pub fn nonce() -> String {
    let mut bytes = [0u8; 16];
    let random = fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if random.is_err() {
        bytes = fallback_entropy();
    }
    hex(&bytes)
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Without `/dev/urandom`: pid, clock and a process-wide counter, hashed.
fn fallback_entropy() -> [u8; 16] {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let seed = format!(
        "{}:{now}:{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let digest = Sha256::digest(seed.as_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&digest[..16]);
    out
}

struct Stat {
    zombie: bool,
    start_time: Option<u64>,
}

/// The state and start time from `/proc/<pid>/stat`. The command name (field
/// 2) may hold spaces and parentheses, so fields are counted from its last `)`.
fn read_stat(pid: u32) -> Option<Stat> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

fn parse_stat(text: &str) -> Option<Stat> {
    let after_name = &text[text.rfind(')')? + 1..];
    let mut fields = after_name.split_ascii_whitespace();
    let state = fields.next()?;
    // Field 3 is the state; field 22, the start time, is 19 fields further.
    let start_time = fields.nth(18).and_then(|f| f.parse().ok());
    Some(Stat {
        zombie: matches!(state, "Z" | "X" | "x"),
        start_time,
    })
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Stdio};

    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_last_parenthesis() {
        let table = [
            (
                "12 (cargo) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 777 19",
                Some(777),
                false,
            ),
            (
                "12 (a (b) c) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 42 19",
                Some(42),
                false,
            ),
            (
                "12 (x) Z 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 9 19",
                Some(9),
                true,
            ),
            ("12 (x) S 1 2", None, false),
        ];
        for (text, start, zombie) in table {
            let stat = parse_stat(text).unwrap();
            assert_eq!(stat.start_time, start, "{text}");
            assert_eq!(stat.zombie, zombie, "{text}");
        }
        assert!(parse_stat("no parenthesis").is_none());
    }

    #[test]
    fn the_current_process_is_alive_under_its_own_identity() {
        let me = ProcessIdentity::current();
        assert!(me.start_time.is_some() && me.boot_id.is_some());
        assert!(pid_alive(me.pid, me.start_time, me.boot_id.as_deref()));
    }

    #[test]
    fn a_reused_pid_is_dead_and_an_unreadable_start_is_alive() {
        let me = ProcessIdentity::current();
        let other_start = me.start_time.map(|t| t + 1);
        assert!(!pid_alive(me.pid, other_start, None), "another start time");
        assert!(
            !pid_alive(me.pid, me.start_time, Some("another-boot")),
            "another boot"
        );
        assert!(pid_alive(me.pid, None, None), "no start time recorded");
        // pid 1's stat is readable; a pid whose stat is not is still alive.
        assert!(
            pid_alive(u32::MAX, Some(1), None),
            "unrepresentable pid reads as alive"
        );
    }

    #[test]
    fn an_exited_process_is_dead() {
        let mut child = Command::new("true").stdout(Stdio::null()).spawn().unwrap();
        let pid = child.id();
        let start = start_time(pid);
        child.wait().unwrap();
        assert!(!pid_alive(pid, start, None));
    }

    #[test]
    fn an_unreaped_child_is_dead() {
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(!pid_alive(pid, None, None), "a zombie has exited");
        child.wait().unwrap();
    }

    #[test]
    fn only_certain_death_reads_as_dead() {
        let stat = |zombie, start_time| Some(Stat { zombie, start_time });
        let table = [
            (false, stat(false, Some(5)), Some(5), false, "no such pid"),
            (true, stat(false, Some(5)), Some(5), true, "same start time"),
            (true, stat(false, Some(6)), Some(5), false, "pid reused"),
            (true, stat(true, Some(5)), Some(5), false, "zombie"),
            (
                true,
                stat(false, None),
                Some(5),
                true,
                "unparseable start time",
            ),
            (true, None, Some(5), true, "unreadable stat"),
            (true, stat(false, Some(6)), None, true, "nothing recorded"),
        ];
        for (exists, stat, recorded, alive, case) in table {
            assert_eq!(judge(exists, stat, recorded), alive, "{case}");
        }
    }

    #[test]
    fn nonces_are_distinct_hex() {
        let a = nonce();
        let b = nonce();
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
