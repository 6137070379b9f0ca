//! What the integration tests share: a pool configuration with the given
//! thread bounds and fast, deterministic-enough timings.

use std::time::Duration;

use tidepool_core::PoolConfig;

/// The defaults, with `min..=max` threads, extras retiring after 50 ms and
/// workers at the test's own priority.
pub fn config(min: usize, max: usize) -> PoolConfig {
    let mut config = PoolConfig::default();
    config.policy.min_threads = min;
    config.policy.max_threads = max;
    config.policy.idle_timeout = Duration::from_millis(50);
    config.nice_increment = 0;
    config
}
