//! Placeholder until the algorithm lands (being written now).
use super::*;
#[derive(Debug)]
pub struct Cubic { cwnd: u64 }
impl Cubic { pub fn new(p: CcParams) -> Self { Cubic { cwnd: p.initial_window_bytes() } } }
impl Controller for Cubic {
    fn on_sent(&mut self, _: Instant, _: u64, _: u64) {}
    fn on_ack(&mut self, _: &AckEvent) {}
    fn on_congestion_event(&mut self, _: &CongestionEvent) {}
    fn on_rto(&mut self, _: Instant) {}
    fn cwnd_bytes(&self) -> u64 { self.cwnd }
    fn pacing_rate_bytes_per_s(&self) -> Option<u64> { None }
    fn metrics(&self) -> CcMetrics { CcMetrics { cwnd_bytes: self.cwnd, ssthresh_bytes: None, pacing_rate_bytes_per_s: None, bw_estimate_bytes_per_s: None, min_rtt: None, phase: CcPhase::SlowStart } }
    fn name(&self) -> &'static str { "cubic" }
}
