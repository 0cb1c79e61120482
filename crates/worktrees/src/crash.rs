//! Points where a handover or the publication of checkout evidence may be
//! cut short, so tests can stop a real process at each one and check what
//! it leaves behind.
//!
//! Outside tests [`point`] does nothing. In this crate's tests a thread may
//! install a hook that every point it passes calls with the point's name:
//! to SIGKILL the process there (in a child process re-executed for the
//! purpose), or to do what a concurrent process would do at that moment.

/// A point a handover or a publication may be cut short at, named for the
/// tests.
#[inline]
pub(crate) fn point(_name: &'static str) {
    #[cfg(test)]
    hook::reached(_name);
}

#[cfg(test)]
pub(crate) use hook::{Hook, install};

#[cfg(test)]
mod hook {
    use std::cell::RefCell;

    /// What a test does at each point its thread passes.
    pub(crate) type Hook = Box<dyn FnMut(&'static str)>;

    thread_local! {
        static HOOK: RefCell<Option<Hook>> = const { RefCell::new(None) };
    }

    /// Call `hook` at every point this thread passes from now on (`None`:
    /// stop). The previous hook, if any, is returned.
    pub(crate) fn install(hook: Option<Hook>) -> Option<Hook> {
        HOOK.with(|slot| slot.replace(hook))
    }

    pub(super) fn reached(name: &'static str) {
        let hook = HOOK.with(|slot| slot.borrow_mut().take());
        if let Some(mut hook) = hook {
            hook(name);
            HOOK.with(|slot| {
                slot.borrow_mut().get_or_insert(hook);
            });
        }
    }
}
