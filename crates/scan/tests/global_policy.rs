//! The process-wide cache's policy is fixed once: by the first
//! `init_global`, whose variables win over the process environment, and
//! never again. Its own test binary, so no other test touches the global
//! cache first.

use std::time::Duration;

use natives_scan::cache::{self, CachePolicy};

#[test]
fn the_first_init_fixes_the_global_policy_and_later_ones_change_nothing() {
    let given = |ttl: &'static str| {
        CachePolicy::from_lookup(move |name| {
            (name == "FS_SCAN_CACHE_TTL_MS").then(|| ttl.to_string())
        })
    };
    assert!(cache::init_global(given("0")));
    assert!(!cache::init_global(given("5000")));
    assert_eq!(
        *cache::global().policy(),
        CachePolicy::default().ttl(Duration::ZERO)
    );
}
