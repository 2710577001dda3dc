//! Packet schedulers: which path carries the next packet.
//!
//! The tunnel sender asks its scheduler once per packet at the head of the scheduler queue,
//! passing a [`PathView`] per path. A scheduler answers with a path index, or `None` to keep the
//! packet queued until feedback opens a window (draft-bonaventure-iccrg-schedulers section 2:
//! schedulers pick among paths whose congestion window has room).
//!
//! Stateless schedulers (CPF, SRTT, round robin, OTIAS) decide from the views alone. ACPF,
//! BLEST and ECF keep a little state across calls (ACPF's cwnd fraction, BLEST's lambda, ECF's
//! waiting flag), advanced only by the `now` passed in, so runs stay deterministic; they report
//! it through [`Scheduler::metrics`]. Their parameters are in [`SchedulerConfig`].

pub mod acpf;
pub mod blest;
pub mod config;
pub mod cpf;
pub mod ecf;
pub mod otias;
pub mod redundant;
pub mod round_robin;
pub mod srtt;

use std::time::Duration;

use crate::cc::CcMetrics;
use crate::time::Instant;

pub use acpf::{AcpfConfig, AdaptiveCheapestPathFirst};
pub use blest::{Blest, BlestConfig};
pub use config::SchedulerConfig;
pub use cpf::CheapestPathFirst;
pub use ecf::{EarliestCompletionFirst, EcfConfig};
pub use otias::Otias;
pub use redundant::Redundant;
pub use round_robin::RoundRobin;
pub use srtt::LowestRtt;

/// What a scheduler may know about one path when it decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathView {
    pub index: usize,
    /// Configured cost; CPF prefers lower (Pieska et al. 2024, section 2.3: WiFi before cellular).
    pub cost: u32,
    /// Whether the path is usable at all (liveness; always true in the simulator).
    pub is_up: bool,
    /// Charged bytes in flight, including packets assigned to the path and waiting for pacing.
    pub in_flight_bytes: u64,
    /// What the packet being scheduled would be charged on this path.
    pub charge_bytes: u64,
    /// Smoothed RTT, if the path has measured one.
    pub srtt: Option<Duration>,
    /// RTT variance of the path's RFC 6298 estimator (zero before the first sample); ECF's
    /// delta is the larger of two paths' values.
    pub rttvar: Duration,
    /// Charged size of a full packet on this path (the tunnel MSS in charged bytes): the unit in
    /// which BLEST and ECF count windows and queues, and ACPF's smallest live window.
    pub mss_bytes: u64,
    pub cc: CcMetrics,
}

impl PathView {
    /// Pieska et al. 2024, section 2.3: "a path is considered available if its path congestion
    /// window has sufficient room to send a packet".
    #[inline]
    pub fn has_room(&self) -> bool {
        self.has_room_in(self.cc.cwnd_bytes)
    }

    /// Whether the packet fits under `window_bytes` instead of the controller's cwnd (ACPF's live
    /// cwnd).
    #[inline]
    pub fn has_room_in(&self, window_bytes: u64) -> bool {
        self.is_up && self.in_flight_bytes + self.charge_bytes <= window_bytes
    }
}

/// Smoothed RTT for ranking paths; a path without a sample yet ranks as fastest so that it gets
/// probed (as [`LowestRtt`] does).
#[inline]
pub(crate) fn rank_srtt(p: &PathView) -> Duration {
    p.srtt.unwrap_or_default()
}

/// The path MinRTT would pick: lowest smoothed RTT among the paths with room.
pub(crate) fn lowest_rtt_with_room(paths: &[PathView]) -> Option<&PathView> {
    paths.iter().filter(|p| p.has_room()).min_by_key(|p| (rank_srtt(p), p.cost, p.index))
}

/// The fastest usable path whether or not its window has room: the "x_f" of BLEST and ECF.
pub(crate) fn fastest(paths: &[PathView]) -> Option<&PathView> {
    paths.iter().filter(|p| p.is_up).min_by_key(|p| (rank_srtt(p), p.cost, p.index))
}

/// What MinRTT's choice looks like to BLEST and ECF, which second-guess it only when it is a
/// slower path than the fastest one.
#[derive(Clone, Copy, Debug)]
pub(crate) enum MinRttChoice<'a> {
    /// MinRTT's pick stands: it is the fastest usable path, or one of the two paths has no RTT
    /// sample yet, so there is nothing to compare.
    Take(usize),
    /// MinRTT would use `slow` because the fastest usable path `fast` has no room; both have
    /// smoothed RTTs (`rtt_f` and `rtt_s`).
    Slower { fast: &'a PathView, slow: &'a PathView, rtt_f: Duration, rtt_s: Duration },
}

/// MinRTT's choice against the fastest usable path (BLEST section III, ECF Algorithm 1: both
/// start from MinRTT and only judge a packet MinRTT would put on a slower path). `None` when no
/// path has room.
pub(crate) fn min_rtt_choice(paths: &[PathView]) -> Option<MinRttChoice<'_>> {
    let best = lowest_rtt_with_room(paths)?;
    let fast = fastest(paths)?;
    if best.index == fast.index {
        return Some(MinRttChoice::Take(best.index));
    }
    Some(match (fast.srtt, best.srtt) {
        (Some(rtt_f), Some(rtt_s)) => MinRttChoice::Slower { fast, slow: best, rtt_f, rtt_s },
        _ => MinRttChoice::Take(best.index),
    })
}

/// Internal state a scheduler exposes for traces and metrics endpoints (the shape of
/// quinn-proto's `ControllerMetrics`). A field is `Some` only for the scheduler that has it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SchedulerMetrics {
    /// ACPF: the shared live/raw cwnd fraction, in [min_fraction, max_fraction].
    pub acpf_fraction: Option<f64>,
    /// BLEST: the scaling factor lambda applied to the fast path's send estimate.
    pub blest_lambda: Option<f64>,
    /// ECF: whether the last decision was to wait for the fastest path (its hysteresis state).
    pub ecf_waiting: Option<bool>,
}

/// A packet scheduler.
pub trait Scheduler: std::fmt::Debug + Send {
    /// Picks the path for the packet at the head of the queue, or `None` to wait.
    /// `queued_pkts` is the scheduler queue length including that packet.
    fn select(&mut self, now: Instant, paths: &[PathView], queued_pkts: usize) -> Option<usize>;
    /// Whether the sender should copy each packet to every path with room instead of asking
    /// [`Scheduler::select`] for one ([`redundant`]).
    fn duplicates(&self) -> bool {
        false
    }
    /// Whether [`Scheduler::select`] returns `None`, and changes nothing, whenever no path
    /// has room ([`PathView::has_room`]). The sender then skips the call, and building the
    /// views, when it finds no room itself: a packet joining a full scheduler queue is most of
    /// the calls. False unless the scheduler knows it (CPF, SRTT and round robin do).
    fn waits_without_room(&self) -> bool {
        false
    }
    fn name(&self) -> &'static str;
    /// Internal state for traces. The default (stateless schedulers) reports nothing.
    fn metrics(&self) -> SchedulerMetrics {
        SchedulerMetrics::default()
    }
}

crate::named_enum! {
    /// Scheduler names as configs spell them (`tunnel.scheduler`); `minrtt` and `round_robin`
    /// are accepted as aliases of `srtt` and `rr`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum SchedulerKind {
        what = "scheduler";
        Cpf => "cpf",
        Srtt => "srtt" | "minrtt",
        RoundRobin => "rr" | "round_robin",
        Acpf => "acpf",
        Otias => "otias",
        Blest => "blest",
        Ecf => "ecf",
        Redundant => "redundant",
    }
}

impl SchedulerKind {
    /// A scheduler of this kind. `config` should have passed [`SchedulerConfig::validate`] (out
    /// of range values are clamped, never a panic); `reorder_window_pkts` is the receiver's
    /// reorder buffer capacity, which BLEST treats as the connection window.
    pub fn build(self, config: &SchedulerConfig, reorder_window_pkts: usize) -> Box<dyn Scheduler> {
        match self {
            SchedulerKind::Cpf => Box::new(CheapestPathFirst),
            SchedulerKind::Srtt => Box::new(LowestRtt),
            SchedulerKind::RoundRobin => Box::new(RoundRobin::default()),
            SchedulerKind::Acpf => Box::new(AdaptiveCheapestPathFirst::new(&config.acpf)),
            SchedulerKind::Otias => Box::new(Otias),
            SchedulerKind::Blest => Box::new(Blest::new(&config.blest, reorder_window_pkts)),
            SchedulerKind::Ecf => Box::new(EarliestCompletionFirst::new(&config.ecf)),
            SchedulerKind::Redundant => Box::new(Redundant),
        }
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::*;
    use crate::cc::CcPhase;

    /// A path view with `cwnd` and `in_flight` in packets of 1000 bytes.
    pub fn view(index: usize, cost: u32, cwnd: u64, in_flight: u64, srtt_ms: u64) -> PathView {
        PathView {
            index,
            cost,
            is_up: true,
            in_flight_bytes: in_flight * 1000,
            charge_bytes: 1000,
            srtt: Some(Duration::from_millis(srtt_ms)),
            rttvar: Duration::ZERO,
            mss_bytes: 1000,
            cc: CcMetrics {
                cwnd_bytes: cwnd * 1000,
                ssthresh_bytes: None,
                pacing_rate_bytes_per_s: None,
                bw_estimate_bytes_per_s: None,
                min_rtt: None,
                phase: CcPhase::CongestionAvoidance,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::view;
    use super::*;

    #[test]
    fn min_rtt_choice_hands_over_only_a_slower_pick_with_both_rtts() {
        // Path 0 (20 ms) full, path 1 (60 ms) open: MinRTT picks 1, slower than the fastest 0.
        let paths = [view(0, 1, 10, 10, 20), view(1, 2, 10, 5, 60)];
        match min_rtt_choice(&paths) {
            Some(MinRttChoice::Slower { fast, slow, rtt_f, rtt_s }) => {
                assert_eq!((fast.index, slow.index), (0, 1));
                assert_eq!((rtt_f, rtt_s), (Duration::from_millis(20), Duration::from_millis(60)));
            }
            other => panic!("expected Slower, got {other:?}"),
        }
        // The fastest path has room: MinRTT's pick is the fastest path and stands.
        let open = [view(0, 1, 10, 9, 20), view(1, 2, 10, 5, 60)];
        assert!(matches!(min_rtt_choice(&open), Some(MinRttChoice::Take(0))));
        // The full path 0 has no sample yet: it ranks fastest, MinRTT picks path 1, and with
        // one RTT missing there is nothing to compare, so the pick stands.
        let mut unsampled = paths;
        unsampled[0].srtt = None;
        assert!(matches!(min_rtt_choice(&unsampled), Some(MinRttChoice::Take(1))));
        // No path has room: wait.
        let full = [view(0, 1, 10, 10, 20), view(1, 2, 10, 10, 60)];
        assert!(min_rtt_choice(&full).is_none());
    }

    #[test]
    fn every_name_parses_to_a_scheduler_of_that_name() {
        for &name in SchedulerKind::NAMES {
            let kind: SchedulerKind = name.parse().unwrap();
            assert_eq!(kind.as_str(), name);
            assert_eq!(kind.build(&SchedulerConfig::default(), 1500).name(), name);
        }
        assert!("fastest".parse::<SchedulerKind>().is_err());
    }

    #[test]
    fn only_stateful_schedulers_report_metrics() {
        let config = SchedulerConfig::default();
        let acpf = SchedulerKind::Acpf.build(&config, 1500).metrics();
        assert_eq!(acpf.acpf_fraction, Some(0.47));
        assert_eq!(SchedulerKind::Cpf.build(&config, 1500).metrics(), SchedulerMetrics::default());
    }
}
