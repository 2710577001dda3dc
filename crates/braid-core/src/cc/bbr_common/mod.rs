//! What BBRv1 ([`crate::cc::bbr`]) and BBRv2/v3 ([`crate::cc::bbr2`]) share, written once.
//!
//! Linux keeps the two generations in separate files (`tcp_bbr.c` v1 and v3, `tcp_bbr2.c`
//! v2alpha) that repeat the parts v2 took over from v1 unchanged. Braid keeps each
//! generation's own rules (its state machine, its filters, its reactions to loss) in its own
//! module, and puts here only what is the same computation in both:
//!
//! - [`gain`]: the kernel's fixed-point [`gain::Gain`] and its unit;
//! - [`ack_aggregation`]: the estimator of how far ACKs run ahead of `bw`, and the cwnd
//!   allowance it yields;
//! - [`pacing`]: pacing rate and BDP from `bw`, `min_rtt` and a gain;
//! - [`limits`]: range checks of the tuning fields both configurations have;
//! - [`loss_state`]: recovery episodes, the RTO's loss state and the undo marker, and the
//!   phase reported while in them;
//! - [`outputs`]: the cwnd, pacing rate and ssthresh handed to the sender, and the
//!   [`crate::cc::CcMetrics`] built from them.
//!
//! The one-bottleneck network and the hand-cranked ACK driver both test suites run their
//! controller through are test-only and live with the other test drivers, in
//! `cc::test_support::harness`.

pub(crate) mod ack_aggregation;
pub(crate) mod gain;
pub(crate) mod limits;
pub(crate) mod loss_state;
pub(crate) mod outputs;
pub(crate) mod pacing;
