//! Bottleneck link models, sans-I/O: the parts of a link that decide, not the parts that move
//! packets. The simulator's links and a user-space link emulator drive the same models, so
//! what a scenario measures is what the emulator reproduces.
//!
//! - [`codel`]: CoDel AQM (RFC 8289), consulted at each dequeue.
//! - [`loss`]: random loss, Bernoulli or Gilbert-Elliott, driven by the caller's RNG.
//! - [`trace`]: Mahimahi capacity traces and a cursor over their delivery opportunities.
//!
//! None of them holds packets, reads a clock or owns randomness: the caller keeps the queue,
//! passes the time in, and lends an RNG.

pub mod codel;
pub mod loss;
pub mod trace;

pub use codel::{CoDel, CoDelConfig, CoDelConfigError, Verdict};
pub use loss::{
    BernoulliConfig, ChannelState, GilbertElliottConfig, LossConfig, LossConfigError, LossModel,
};
pub use trace::{MahimahiTrace, TraceCursor, TraceError, OPPORTUNITY_BYTES};
