//! tidepool-core: the plain-Rust heart of tidepool, testable with `cargo test`
//! alone (no Node.js needed).
//!
//! * [`pool`]: the queue, the worker threads and the supervisor (mechanism).
//! * [`policy`]: when to start or retire a thread (a pure function).
//! * [`completion`]: batched, wake-once delivery of finished tasks.
//! * [`kernels`]: the computations behind the `Kernel` trait, a file or a
//!   folder each.
//! * [`input`]: zero-copy views of the caller's memory; [`records`]: one
//!   input cut into records, each read in place.
//! * [`task`]: what goes in and what comes out.
//! * [`stream`]: a kernel's state kept between the tasks of one stream.
//! * `file`: a kernel run over a file a worker thread reads (`postFile`).
//! * [`cpus`]: how many CPUs this process may use (for the pool and the
//!   machine [`budget`] alike).

pub mod budget;
pub mod completion;
pub mod cpus;
mod file;
pub mod histogram;
pub mod input;
pub mod inputs;
pub mod kernels;
pub mod policy;
pub mod pool;
pub mod priority;
pub mod records;
pub mod stream;
mod sync;
pub mod task;
pub mod wipe;

pub use completion::Waker;
pub use input::{Input, RawSlice};
pub use inputs::Inputs;
pub use kernels::{KernelId, Output};
pub use pool::{Pool, PoolConfig, PoolEvent, PoolStats, Refused};
pub use records::Records;
pub use stream::{ChunkEnd, Stream, StreamChunk};
pub use task::{CancelFlag, Completion, Mode, Packed, Task, TaskError};
