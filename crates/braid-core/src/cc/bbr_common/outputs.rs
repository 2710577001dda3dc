//! What a BBR controller hands its sender, kept alike by v1 and v2/v3: the cwnd and the
//! pacing rate BBR derives from its model (the kernel's `snd_cwnd` and `sk_pacing_rate`), and
//! the ssthresh it sets on entering Drain for observers only (`bbr_check_drain`). Both
//! generations report them, with their own phase and model, as the same [`CcMetrics`].

use std::time::Duration;

use crate::cc::{CcMetrics, CcPhase};

/// The controller's outputs (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Outputs {
    pub cwnd_bytes: u64,
    pub pacing_rate_bytes_per_s: u64,
    /// Set on entering Drain to the estimated BDP, for observers only (as the kernel does).
    pub ssthresh_bytes: Option<u64>,
}

impl Outputs {
    /// The outputs before any event: the initial window, no pacing rate yet (each controller
    /// sets its initial one at construction), no ssthresh.
    pub fn new(initial_cwnd_bytes: u64) -> Self {
        Outputs { cwnd_bytes: initial_cwnd_bytes, pacing_rate_bytes_per_s: 0, ssthresh_bytes: None }
    }

    /// The snapshot schedulers read, with the controller's `phase` (ProbeRTT over the loss
    /// states over the mode, see [`super::loss_state::LossState::phase`]), its bandwidth
    /// estimate `bw` in bytes/s (reported only once a sample has set it) and its `min_rtt`.
    pub fn metrics(&self, phase: CcPhase, bw: u64, min_rtt: Option<Duration>) -> CcMetrics {
        CcMetrics {
            cwnd_bytes: self.cwnd_bytes,
            ssthresh_bytes: self.ssthresh_bytes,
            pacing_rate_bytes_per_s: Some(self.pacing_rate_bytes_per_s),
            bw_estimate_bytes_per_s: (bw > 0).then_some(bw),
            min_rtt,
            phase,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_report_the_outputs_and_no_bandwidth_before_a_sample() {
        let mut out = Outputs::new(14_480);
        out.pacing_rate_bytes_per_s = 1_000_000;
        let m = out.metrics(CcPhase::Startup, 0, None);
        assert_eq!((m.cwnd_bytes, m.pacing_rate_bytes_per_s), (14_480, Some(1_000_000)));
        assert_eq!((m.ssthresh_bytes, m.bw_estimate_bytes_per_s, m.min_rtt), (None, None, None));
        out.ssthresh_bytes = Some(50_000);
        let rtt = Duration::from_millis(20);
        let m = out.metrics(CcPhase::ProbeRtt, 1_250_000, Some(rtt));
        assert_eq!(m.ssthresh_bytes, Some(50_000));
        assert_eq!((m.bw_estimate_bytes_per_s, m.min_rtt), (Some(1_250_000), Some(rtt)));
        assert_eq!(m.phase, CcPhase::ProbeRtt);
    }
}
