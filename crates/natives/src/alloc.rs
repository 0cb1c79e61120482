//! The addon's allocator: mimalloc, tuned to hand freed memory back.
//!
//! A cached grep reads hundreds of files on several threads at once, and
//! every file's report, lines and paths are allocated and freed as it
//! goes. Under the system's malloc (glibc) those threads queued for its
//! arenas' locks, a twentieth of a search's time (perf, `__lll_lock_wait_private`),
//! and the arenas kept what the searches freed. mimalloc gives each thread
//! a heap of its own: a search of the bench's generated tree whose files
//! all match took 12 to 18 % less time. By default it also keeps freed
//! pages for a while and commits its arenas ahead of use, which nearly
//! doubled the memory held after the bench's searches (145 to 169 MiB
//! against glibc's 81 to 94), so arenas are committed as they are used and
//! freed pages go back to the system after `PURGE_AFTER_MS`: at once, an
//! uncached search re-faulted every page its walk's growing buffers moved
//! to (3 to 18 % slower than with glibc, paired); after 5 ms a search keeps
//! reusing its own pages (0.98x to 1.03x) and an idle process holds about
//! what it would at once (52 to 57 MiB after the bench's searches of the
//! generated tree, against 50 to 55 at once; 92 to 97 after 100 ms).
//!
//! A search that returns a great deal is the exception: its threads free
//! and allocate hundreds of MiB of lines and file contents, and a purge
//! every 5 ms (an arena's freed pages go back together once its first
//! waited that long) made it fault in most of them again: a dense search of
//! the bench's `npm` tree (296 k lines, 161 M characters) spent a third of
//! its time in page faults and took 447 ms, against 381 with pages kept for
//! a second. Such a search holds pages ([`hold_pages`]) while it runs; when
//! the last hold ends, the delay is back to `PURGE_AFTER_MS` and what was
//! kept goes back at once.
//!
//! Only the addon's own allocations use it: the JS engine keeps its own.
//! mimalloc's own environment variables (`MIMALLOC_PURGE_DELAY`,
//! `MIMALLOC_ARENA_EAGER_COMMIT`) still decide where they are set: a
//! process that trades memory for speed otherwise can say so.

use std::sync::Mutex;

/// `mi_option_purge_delay` in mimalloc's `mi_option_e` (`mimalloc.h`):
/// how long freed pages are kept before they go back; 0 is at once.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// The variable mimalloc reads `mi_option_purge_delay` from.
const PURGE_DELAY_VAR: &str = "MIMALLOC_PURGE_DELAY";

/// How long freed pages are kept before they go back (see the module docs).
const PURGE_AFTER_MS: std::ffi::c_long = 5;

/// How long freed pages are kept while a hold is alive (see [`hold_pages`]):
/// longer than any one search, so none of its pages goes back while it runs.
const HELD_PURGE_MS: std::ffi::c_long = 1000;

/// Holds alive; the delay is `HELD_PURGE_MS` while there are any.
static HOLDS: Mutex<usize> = Mutex::new(0);

/// `mi_option_arena_eager_commit` in `mi_option_e`: 0 commits an arena's
/// memory as it is used rather than when the arena is made.
const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

/// The variable mimalloc reads `mi_option_arena_eager_commit` from.
const ARENA_EAGER_COMMIT_VAR: &str = "MIMALLOC_ARENA_EAGER_COMMIT";

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Set mimalloc's options when the addon loads, before its first
/// allocation of any size, unless the environment sets them.
#[napi_derive::module_init]
fn tune() {
    set_unless_given(PURGE_DELAY, PURGE_DELAY_VAR, PURGE_AFTER_MS);
    set_unless_given(ARENA_EAGER_COMMIT, ARENA_EAGER_COMMIT_VAR, 0);
}

/// Set `option` to `value` unless `var` is in the environment, where
/// mimalloc reads it itself.
fn set_unless_given(option: libmimalloc_sys::mi_option_t, var: &str, value: std::ffi::c_long) {
    if std::env::var_os(var).is_some() {
        return;
    }
    // SAFETY: setting an option is a plain store into mimalloc's option
    // table, valid at any time (mimalloc reads the delay each time it
    // schedules or runs a purge); the indices are checked by the test below.
    unsafe { libmimalloc_sys::mi_option_set(option, value) }
}

/// Keeps freed pages for `HELD_PURGE_MS` until the returned hold, and every
/// other, is dropped; then they go back at once (see the module docs). For
/// work that frees and allocates a great deal; a short search does not
/// need it and should not pay for the collection at its end.
pub fn hold_pages() -> PagesHeld {
    let mut holds = HOLDS.lock().unwrap_or_else(|p| p.into_inner());
    if *holds == 0 {
        set_unless_given(PURGE_DELAY, PURGE_DELAY_VAR, HELD_PURGE_MS);
    }
    *holds += 1;
    PagesHeld(())
}

/// See [`hold_pages`].
pub struct PagesHeld(());

impl Drop for PagesHeld {
    fn drop(&mut self) {
        let mut holds = HOLDS.lock().unwrap_or_else(|p| p.into_inner());
        *holds -= 1;
        if *holds > 0 || std::env::var_os(PURGE_DELAY_VAR).is_some() {
            return;
        }
        set_unless_given(PURGE_DELAY, PURGE_DELAY_VAR, PURGE_AFTER_MS);
        // SAFETY: a collection is valid on any thread at any time; `true`
        // purges what is kept now rather than when its delay ends.
        unsafe { libmimalloc_sys::mi_collect(true) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The indices name the options meant: the neighbours the binding
    /// does name sit where `mimalloc.h` puts them around ours, and the
    /// options hold what `tune` set when the addon loaded.
    #[test]
    fn the_options_are_set_at_their_indices() {
        let _alone = DELAY_TESTS.lock();
        assert_eq!(libmimalloc_sys::mi_option_use_numa_nodes - 1, PURGE_DELAY);
        assert_eq!(libmimalloc_sys::mi_option_verbose + 2, ARENA_EAGER_COMMIT);
        assert_eq!(
            libmimalloc_sys::mi_option_large_os_pages - 2,
            ARENA_EAGER_COMMIT
        );
        // SAFETY: reading an option is a plain load from its table.
        let (delay, eager) = unsafe {
            (
                libmimalloc_sys::mi_option_get(PURGE_DELAY),
                libmimalloc_sys::mi_option_get(ARENA_EAGER_COMMIT),
            )
        };
        assert_eq!(
            (delay, eager),
            (PURGE_AFTER_MS, 0),
            "set when the addon loads"
        );
    }

    /// A variable mimalloc reads (here one always set, `PATH`, standing for
    /// `MIMALLOC_PURGE_DELAY`) keeps the addon's value out.
    #[test]
    fn a_variable_in_the_environment_wins() {
        let _alone = DELAY_TESTS.lock();
        set_unless_given(PURGE_DELAY, "PATH", PURGE_AFTER_MS + 1);
        assert_eq!(delay(), PURGE_AFTER_MS);
    }

    /// Pages are held from the first hold to the end of the last.
    #[test]
    fn pages_are_held_until_the_last_hold_ends() {
        let _alone = DELAY_TESTS.lock();
        let first = hold_pages();
        let second = hold_pages();
        assert_eq!(delay(), HELD_PURGE_MS);
        drop(first);
        assert_eq!(delay(), HELD_PURGE_MS, "one hold is left");
        drop(second);
        assert_eq!(delay(), PURGE_AFTER_MS);
    }

    /// The tests that read or change the delay, one at a time.
    static DELAY_TESTS: Mutex<()> = Mutex::new(());

    fn delay() -> std::ffi::c_long {
        // SAFETY: reading an option is a plain load from its table.
        unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) }
    }
}
