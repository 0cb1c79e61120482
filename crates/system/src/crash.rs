//! Points where a destructive operation may be cut short, so tests can stop
//! a real process at each one and check what it leaves behind.
//!
//! Every crate that changes files in steps (the durable writer here, file
//! changes, handover, evidence, eviction, a lease's reclaim, a build-cache
//! pool's seeds and discards) marks its steps with [`point`].
//! Outside builds with the `crash-points` feature (which only the crates'
//! own tests turn on) a point does nothing. With it, a thread may install a
//! `Hook` that every point it passes calls with the point's name: to
//! SIGKILL the process there (`kill_at`, in a child process re-executed
//! for the purpose), or to do what a concurrent process would do at that
//! moment; and `count_points` counts the points some work passes, so a
//! test can kill it at each one.

/// A point an operation may be cut short at, named for the tests.
#[inline]
pub fn point(_name: &'static str) {
    #[cfg(feature = "crash-points")]
    hook::reached(_name);
}

#[cfg(feature = "crash-points")]
pub use hook::{Hook, count_points, install, kill_at};

#[cfg(feature = "crash-points")]
mod hook {
    use std::cell::{Cell, RefCell};

    /// What a test does at each point its thread passes.
    pub type Hook = Box<dyn FnMut(&'static str)>;

    thread_local! {
        static HOOK: RefCell<Option<Hook>> = const { RefCell::new(None) };
        static PASSED: Cell<usize> = const { Cell::new(0) };
    }

    /// Call `hook` at every point this thread passes from now on (`None`:
    /// stop). The previous hook, if any, is returned.
    pub fn install(hook: Option<Hook>) -> Option<Hook> {
        HOOK.with(|slot| slot.replace(hook))
    }

    /// A hook that SIGKILLs this process at the `index`th point (0-based)
    /// it is called at, saying where on stderr first.
    pub fn kill_at(index: usize) -> Hook {
        let mut passed = 0;
        Box::new(move |name| {
            if passed == index {
                eprintln!("crash test: killed at point {index} ({name})");
                let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
            }
            passed += 1;
        })
    }

    /// How many points `work` passes on this thread.
    pub fn count_points(work: impl FnOnce()) -> usize {
        let before = PASSED.with(Cell::get);
        work();
        PASSED.with(Cell::get) - before
    }

    pub(super) fn reached(name: &'static str) {
        PASSED.with(|passed| passed.set(passed.get() + 1));
        let hook = HOOK.with(|slot| slot.borrow_mut().take());
        if let Some(mut hook) = hook {
            hook(name);
            HOOK.with(|slot| {
                slot.borrow_mut().get_or_insert(hook);
            });
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_hook_sees_every_point_and_the_count_includes_them() {
            let seen = std::rc::Rc::new(RefCell::new(Vec::new()));
            let keep = seen.clone();
            install(Some(Box::new(move |name| keep.borrow_mut().push(name))));
            let passed = count_points(|| {
                crate::crash::point("one");
                crate::crash::point("two");
            });
            install(None);
            crate::crash::point("after");
            assert_eq!(passed, 2);
            assert_eq!(*seen.borrow(), ["one", "two"]);
        }
    }
}
