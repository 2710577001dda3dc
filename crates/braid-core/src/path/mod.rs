//! Per-path estimators shared by the tunnel's paths and the simulator's TCP senders: the RTT
//! estimator of RFC 6298 and the delivery-rate estimator of
//! draft-cheng-iccrg-delivery-rate-estimation.

pub mod rate;
pub mod rtt;

pub use rate::{DeliveryRateEstimator, PacketRateInfo};
pub use rtt::RttEstimator;
