//! Per-path estimators shared by the tunnel's paths and the simulator's TCP senders: the RTT
//! estimator of RFC 6298, the delivery-rate estimator of
//! draft-cheng-iccrg-delivery-rate-estimation and Linux's record of whether the congestion
//! window was used.

pub mod cwnd_usage;
pub mod rate;
pub mod rtt;

pub use cwnd_usage::CwndUsage;
pub use rate::{DeliveryRateEstimator, PacketRateInfo};
pub use rtt::RttEstimator;
