//! Test drivers shared by the controllers' test suites (compiled for tests only).
//!
//! - [`ack_clock`]: one flow over a path with a fixed RTT and no queue, ACK-clocked; the
//!   loss-based controllers' suites (NewReno, CUBIC, the coupled controllers) run on it.
//! - [`harness`]: a one-bottleneck network on a virtual clock and hand-cranked ACKs; the
//!   BBRv1 and BBRv2/v3 suites run on it.
//!
//! The coupled controllers' multipath driver (`coupled::multi_clock`) stays beside them: it
//! reaches into their per-path state.

pub(crate) mod ack_clock;
pub(crate) mod harness;
