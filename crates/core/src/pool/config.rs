//! A pool's options and their defaults.

use std::time::Duration;

use crate::policy::PolicyConfig;

/// Default nice increment of the worker threads: enough that the event
/// loop no longer waited out worker time slices in the benchmarks, where
/// half of it was not (docs/benchmarks-history.md, "Event loop"). The cost: a busy
/// thread at normal priority in the same session or cgroup gets ~9× a
/// worker's share of a core (Linux shares the CPU between those groups
/// first, so other groups are unaffected); `niceIncrement: 0` opts out.
pub const DEFAULT_NICE_INCREMENT: u8 = 10;

/// Options of a pool.
#[derive(Debug, Clone)]
pub struct PoolConfig {
    /// The scaling policy's tunables (thread bounds, delays).
    pub policy: PolicyConfig,
    /// How long an idle worker polls for new work before it parks.
    pub spin: Duration,
    /// Most tasks waiting in the queue; `submit` refuses more (`Full`).
    pub max_queue: usize,
    /// A task that has waited longer than this when a thread takes it is
    /// completed as `Expired` instead of being run late.
    pub max_queue_age: Option<Duration>,
    /// Most bytes a task's output may have; a kernel that would write more
    /// stops and the task fails with [`KernelError::TooLarge`](crate::kernels::KernelError).
    pub max_output_bytes: usize,
    /// The same limit for the kernels whose output may be far larger than
    /// their input (decoders: [`Kernel::expands`](crate::kernels::Kernel::expands)).
    pub max_expanded_bytes: usize,
    /// Most bytes of working memory the running tasks hold at once
    /// ([`Kernel::working_bytes`](crate::kernels::Kernel::working_bytes):
    /// a memory-hard hash's); `usize::MAX`: no bound. See `memory.rs`.
    pub max_working_bytes: usize,
    /// How much lower than the spawning thread's priority the workers run
    /// (a nice increment, 0..=19; Linux only, see [`crate::priority`]).
    pub nice_increment: u8,
    /// The machine's budget of running threads, shared with other
    /// processes (None: this pool answers to no one but `max_threads`).
    /// A worker runs tasks only while it holds one of its shares.
    pub budget: Option<std::sync::Arc<crate::budget::MachineBudget>>,
    /// Fault injection for tests: every thread start after this many
    /// successful ones fails as if the OS said EAGAIN.
    #[doc(hidden)]
    pub fail_spawns_after: Option<u64>,
}

impl Default for PoolConfig {
    fn default() -> Self {
        let max = crate::cpus::available_parallelism();
        PoolConfig {
            policy: PolicyConfig {
                min_threads: 1,
                max_threads: max,
                spawn_delay: Duration::from_millis(1),
                idle_timeout: Duration::from_millis(100),
                check_interval: Duration::from_millis(1),
                rule: Default::default(),
            },
            spin: Duration::from_micros(20),
            max_queue: usize::MAX,
            max_queue_age: None,
            max_output_bytes: usize::MAX,
            max_expanded_bytes: usize::MAX,
            max_working_bytes: usize::MAX,
            nice_increment: DEFAULT_NICE_INCREMENT,
            budget: None,
            fail_spawns_after: None,
        }
    }
}
