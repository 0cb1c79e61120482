//! A small most-recently-used table: compiled patterns (and what they need
//! of a file's content) are kept for the next search with the same pattern
//! and options, since an agent repeats its searches and a pattern with a
//! Unicode class takes tens of milliseconds to compile.
//!
//! The tables are a few dozen entries, so a vector searched front to back
//! beats a linked hash map in both code and time; the least recently used
//! entry is the one that leaves.

use std::sync::{Mutex, MutexGuard};

/// At most `capacity` values by key; the least recently used goes first.
pub(crate) struct Recent<K, V> {
    capacity: usize,
    /// Least recently used first.
    entries: Mutex<Vec<(K, V)>>,
}

impl<K: PartialEq, V: Clone> Recent<K, V> {
    pub(crate) const fn new(capacity: usize) -> Recent<K, V> {
        Recent {
            capacity,
            entries: Mutex::new(Vec::new()),
        }
    }

    /// The value kept for `key`, now the most recently used.
    pub(crate) fn get(&self, key: &K) -> Option<V> {
        let mut entries = self.lock();
        let at = entries.iter().position(|(k, _)| k == key)?;
        let entry = entries.remove(at);
        let value = entry.1.clone();
        entries.push(entry);
        Some(value)
    }

    /// Keep `value` for `key` (replacing an older one), evicting the least
    /// recently used entry past the capacity.
    pub(crate) fn put(&self, key: K, value: V) {
        let mut entries = self.lock();
        entries.retain(|(k, _)| *k != key);
        entries.push((key, value));
        while entries.len() > self.capacity {
            entries.remove(0);
        }
    }

    /// The value for `key`, made by `make` (outside the lock) and kept when
    /// it is not there; an error is returned and nothing kept.
    pub(crate) fn get_or_try<E>(
        &self,
        key: K,
        make: impl FnOnce() -> Result<V, E>,
    ) -> Result<V, E> {
        if let Some(value) = self.get(&key) {
            return Ok(value);
        }
        let value = make()?;
        self.put(key, value.clone());
        Ok(value)
    }

    fn lock(&self) -> MutexGuard<'_, Vec<(K, V)>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_entry_leaves_first() {
        let recent = Recent::new(2);
        recent.put("a", 1);
        recent.put("b", 2);
        assert_eq!(recent.get(&"a"), Some(1), "a is now the most recent");
        recent.put("c", 3);
        assert_eq!(recent.get(&"b"), None, "b was the least recently used");
        assert_eq!(recent.get(&"a"), Some(1));
        assert_eq!(recent.get(&"c"), Some(3));
        recent.put("c", 4);
        assert_eq!(recent.get(&"c"), Some(4), "a key is kept once");
        assert_eq!(recent.get(&"a"), Some(1));
    }

    #[test]
    fn failures_are_not_kept() {
        let recent: Recent<&str, u32> = Recent::new(4);
        let mut made = 0;
        let mut make = |ok: bool| {
            made += 1;
            if ok { Ok(7) } else { Err("bad") }
        };
        assert_eq!(recent.get_or_try("k", || make(false)), Err("bad"));
        assert_eq!(recent.get_or_try("k", || make(true)), Ok(7));
        assert_eq!(recent.get_or_try("k", || make(true)), Ok(7));
        assert_eq!(made, 2, "made again after the failure, then kept");
    }
}
