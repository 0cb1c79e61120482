//! Points where a destructive operation may be cut short, so tests can kill
//! a real process at each one and check what a crash leaves behind.
//!
//! Outside tests [`point`] does nothing. In this crate's tests, a thread can
//! count the points it passes ([`count_points`]), and a child process told
//! by its environment to die at point `n` SIGKILLs itself there.

/// The variable naming the point (0-based) a crash-test child dies at.
#[cfg(test)]
pub(crate) const CRASH_AT: &str = "NATIVES_FILES_CRASH_AT";

/// A point an operation may be cut short at, named for test failures.
#[inline]
pub(crate) fn point(_name: &'static str) {
    #[cfg(test)]
    test_hook::reached(_name);
}

#[cfg(test)]
pub(crate) use test_hook::count_points;

#[cfg(test)]
mod test_hook {
    use std::cell::Cell;

    thread_local! {
        static PASSED: Cell<usize> = const { Cell::new(0) };
    }

    pub(super) fn reached(name: &'static str) {
        let index = PASSED.with(|passed| passed.replace(passed.get() + 1));
        let die_at = std::env::var(super::CRASH_AT)
            .ok()
            .and_then(|n| n.parse::<usize>().ok());
        if die_at == Some(index) {
            eprintln!("crash test: killed at point {index} ({name})");
            let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
        }
    }

    /// How many points `work` passes on this thread.
    pub(crate) fn count_points(work: impl FnOnce()) -> usize {
        let before = PASSED.with(Cell::get);
        work();
        PASSED.with(Cell::get) - before
    }
}
