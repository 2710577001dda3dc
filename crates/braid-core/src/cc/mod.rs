//! Congestion control: one trait for a per-path controller, and the multipath seam.
//!
//! The shape follows quinn-proto's `congestion.rs` and Linux's `tcp_congestion_ops`: the caller
//! (a tunnel path or the simulator's end-to-end TCP sender) owns the sent-packet bookkeeping,
//! loss detection and delivery-rate sampling, and reports events to the controller:
//!
//! 1. [`Controller::on_sent`] after each transmission;
//! 2. per feedback / ACK, first [`Controller::on_congestion_event`] if the ACK revealed new
//!    losses, then [`Controller::on_ack`] with everything the ACK delivered (Linux calls
//!    `ssthresh` on entering recovery before `cong_control` runs on the same ACK);
//! 3. [`Controller::on_rto`] when the retransmission timer fired and the whole flight is
//!    considered lost (RFC 6298 section 5, RFC 5681 section 3.1 eq. 4);
//! 4. [`Controller::on_spurious_congestion`] when the caller learns that the losses behind the
//!    latest reduction were not losses (every packet declared lost was delivered by its original
//!    transmission): Linux's undo (`tcp_try_undo_recovery` / `tcp_try_undo_partial` ->
//!    `tcp_undo_cwnd_reduction` -> `ca_ops->undo_cwnd`).
//!
//! The controller answers with a window ([`Controller::cwnd_bytes`]), an optional pacing rate
//! and a [`CcMetrics`] snapshot that schedulers inspect (CPF needs the window, ACPF and ECF the
//! bandwidth estimate, ACPF the ProbeRTT phase).
//!
//! # Byte counting and packet counting
//! Every controller works on "charged bytes". A byte-counted path (TCP-like tunnels, E2E TCP)
//! charges each packet its length. A packet-counted path (DCCP CCID2 = NewReno in packets,
//! RFC 4341; CCID5 = BBR in packets) charges each packet one MSS whatever its length, so the
//! window is effectively counted in packets: a 52-byte TCP ACK takes a whole slot, as in DCCP.
//! [`Counting::charge`] does the conversion at the path, so each algorithm is written once.
//!
//! # Coupled controllers
//! A tunnel drives its paths through [`MultipathController`], indexed by path. Uncoupled
//! algorithms are wrapped in [`Uncoupled`]; coupled ones (LIA, OLIA, BALIA, wVegas, Coupled
//! CUBIC) implement the trait directly and share state across paths. Callers never learn which.

pub mod bbr;
pub mod bbr2;
mod bbr_common;
mod classic;
pub mod coupled;
pub mod cubic;
pub mod hystart;
pub mod multipath;
pub mod newreno;
#[cfg(test)]
mod test_support;
pub mod tuning;

use std::fmt;
use std::time::Duration;

use crate::time::Instant;

/// Moved to [`crate::names`]; re-exported here, where it was first defined.
pub use crate::names::UnknownName;
pub use coupled::CoupledAlgorithm;
pub use multipath::{MultipathController, Uncoupled};
pub use tuning::{Bbr2Tuning, CcTuning, CcTuningError};

/// How a path charges packets against its congestion window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counting {
    /// Each packet costs its length in bytes (TCP, RFC 5681 with byte counting, RFC 3465).
    Bytes,
    /// Each packet costs one MSS whatever its length (DCCP CCID2, RFC 4341 section 5).
    Packets,
}

impl Counting {
    /// Charged size of a packet of `len_bytes`.
    #[inline]
    pub fn charge(self, len_bytes: u64, mss_bytes: u64) -> u64 {
        match self {
            Counting::Bytes => len_bytes,
            Counting::Packets => mss_bytes,
        }
    }
}

/// Parameters common to every controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcParams {
    /// Sender maximum segment size in bytes (SMSS of RFC 5681); the unit of window growth.
    pub mss_bytes: u64,
    /// Initial window in packets (RFC 6928: 10).
    pub initial_window_pkts: u64,
}

impl CcParams {
    pub fn initial_window_bytes(&self) -> u64 {
        self.initial_window_pkts * self.mss_bytes
    }
}

impl Default for CcParams {
    fn default() -> Self {
        CcParams { mss_bytes: 1448, initial_window_pkts: 10 }
    }
}

/// The delivery-rate sample is the path layer's ([`crate::path::rate`]); controllers read it
/// from [`AckEvent::rate`].
pub use crate::path::rate::RateSample;

/// Everything one ACK (or tunnel feedback frame) told the sender, after loss detection ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckEvent {
    pub now: Instant,
    /// Charged bytes newly acknowledged (cumulatively or selectively) by this ACK.
    pub newly_acked_bytes: u64,
    /// Charged bytes newly declared lost while processing this ACK.
    pub newly_lost_bytes: u64,
    /// Send time of the most recently sent packet this ACK acknowledged; controllers compare it
    /// with the start of recovery to decide whether the window may grow (RFC 9002 7.3.2).
    pub largest_acked_sent_time: Instant,
    /// RTT sample from this ACK, if it acknowledged a packet that was never retransmitted.
    pub rtt: Option<Duration>,
    /// Minimum RTT observed on this path (the path's estimator, over its lifetime).
    pub min_rtt: Option<Duration>,
    /// Charged bytes in flight before this ACK was processed.
    pub prior_in_flight_bytes: u64,
    /// Charged bytes in flight after this ACK was processed (and losses removed).
    pub in_flight_bytes: u64,
    /// Total charged bytes delivered on this path so far (`C.delivered`).
    pub delivered_bytes: u64,
    /// Delivery-rate sample, when the ACK produced one.
    pub rate: Option<RateSample>,
    /// Whether the sender was limited by the application (not the window) when the newest
    /// acknowledged packet was sent, by the delivery-rate estimator's mark
    /// (draft-cheng-iccrg-delivery-rate-estimation section 3.4). CUBIC leaves such time out of
    /// its curve; window growth follows `cwnd_limited` instead.
    pub app_limited: bool,
    /// Whether the sender's current window filled the congestion window at least once (Linux
    /// `tp->is_cwnd_limited`, [`crate::path::CwndUsage`]). With `max_in_flight_bytes` it decides
    /// whether a loss-based window may grow (`tcp_is_cwnd_limited`, RFC 7661's premise).
    pub cwnd_limited: bool,
    /// The largest flight of the sender's current window, bytes (Linux `tp->max_packets_out`).
    pub max_in_flight_bytes: u64,
}

/// A congestion event: one or more packets declared lost by one ACK or timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CongestionEvent {
    pub now: Instant,
    /// Send time of the most recently sent packet among those declared lost.
    pub largest_lost_sent_time: Instant,
    /// Charged bytes declared lost.
    pub lost_bytes: u64,
    /// Charged bytes in flight after the lost packets were removed.
    pub in_flight_bytes: u64,
}

/// The phase a controller is in, for schedulers and traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CcPhase {
    SlowStart,
    CongestionAvoidance,
    /// Fast recovery after a loss (RFC 6582 / RFC 6675), or BBR's packet conservation.
    Recovery,
    /// After a retransmission timeout, until the window is rebuilt.
    Loss,
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

impl CcPhase {
    pub fn as_str(self) -> &'static str {
        match self {
            CcPhase::SlowStart => "slow_start",
            CcPhase::CongestionAvoidance => "congestion_avoidance",
            CcPhase::Recovery => "recovery",
            CcPhase::Loss => "loss",
            CcPhase::Startup => "startup",
            CcPhase::Drain => "drain",
            CcPhase::ProbeBw => "probe_bw",
            CcPhase::ProbeRtt => "probe_rtt",
        }
    }
}

/// A snapshot of a controller's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcMetrics {
    pub cwnd_bytes: u64,
    /// Slow-start threshold, for loss-based controllers.
    pub ssthresh_bytes: Option<u64>,
    /// Pacing rate in bytes per second, when the controller paces.
    pub pacing_rate_bytes_per_s: Option<u64>,
    /// Bottleneck bandwidth estimate in bytes per second, for model-based controllers.
    pub bw_estimate_bytes_per_s: Option<u64>,
    /// The controller's own min_rtt estimate, for model-based controllers.
    pub min_rtt: Option<Duration>,
    pub phase: CcPhase,
}

/// A per-path congestion controller. See the module documentation for the call order.
pub trait Controller: fmt::Debug + Send {
    /// A packet of `bytes` charged bytes left; `in_flight_bytes` includes it.
    fn on_sent(&mut self, now: Instant, bytes: u64, in_flight_bytes: u64);
    /// An ACK was processed (after [`Controller::on_congestion_event`] for its losses).
    fn on_ack(&mut self, ack: &AckEvent);
    /// Loss detection declared packets lost.
    fn on_congestion_event(&mut self, event: &CongestionEvent);
    /// The retransmission timer expired: the flight is lost and the window collapses.
    fn on_rto(&mut self, now: Instant);
    /// The congestion events since the controller last left its open state were spurious:
    /// undo the reduction they caused (Linux `tcp_undo_cwnd_reduction`, which restores
    /// `cwnd = ca_ops->undo_cwnd()` and `ssthresh = max(ssthresh, prior_ssthresh)`). A second
    /// call without a new reduction in between does nothing. The default does nothing, for
    /// controllers without an undo rule.
    fn on_spurious_congestion(&mut self, now: Instant) {
        let _ = now;
    }
    /// Congestion window in charged bytes.
    fn cwnd_bytes(&self) -> u64;
    /// Pacing rate in bytes per second, or `None` for an ACK-clocked controller.
    fn pacing_rate_bytes_per_s(&self) -> Option<u64>;
    fn metrics(&self) -> CcMetrics;
    /// The algorithm's name as scenario files spell it.
    fn name(&self) -> &'static str;
}

crate::named_enum! {
    /// The single-path algorithms, as scenario files and configs name them (`e2e.cc`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum CcAlgorithm {
        what = "congestion control";
        NewReno => "newreno",
        Cubic => "cubic",
        Bbr => "bbr",
        /// BBRv2 ([`bbr2::Bbr2`] with [`bbr2::Version::V2`]).
        Bbr2 => "bbr2",
        /// BBRv3 ([`bbr2::Bbr2`] with [`bbr2::Version::V3`]).
        Bbr3 => "bbr3",
    }
}

impl CcAlgorithm {
    /// A fresh controller of this algorithm with default tuning.
    pub fn build(self, params: CcParams) -> Box<dyn Controller> {
        self.build_seeded(params, 0)
    }

    /// As [`CcAlgorithm::build`], with `seed` for the algorithms that draw random numbers
    /// (BBRv2/v3's probe wait, [`bbr2::Bbr2Config::seed`]); the others ignore it.
    pub fn build_seeded(self, params: CcParams, seed: u64) -> Box<dyn Controller> {
        self.build_tuned(params, seed, &Bbr2Tuning::default())
    }

    /// As [`CcAlgorithm::build_seeded`], with `bbr2` in place of the BBRv2/v3 defaults it
    /// sets (read by `bbr2` and `bbr3`, the version from the name); `bbr2` should have passed
    /// [`Bbr2Tuning::validate`].
    pub fn build_tuned(
        self,
        params: CcParams,
        seed: u64,
        bbr2: &Bbr2Tuning,
    ) -> Box<dyn Controller> {
        let bbr2 = |version| Box::new(bbr2::Bbr2::with_config(params, bbr2.config(version, seed)));
        match self {
            CcAlgorithm::NewReno => Box::new(newreno::NewReno::new(params)),
            CcAlgorithm::Cubic => Box::new(cubic::Cubic::new(params)),
            CcAlgorithm::Bbr => Box::new(bbr::Bbr::new(params)),
            CcAlgorithm::Bbr2 => bbr2(bbr2::Version::V2),
            CcAlgorithm::Bbr3 => bbr2(bbr2::Version::V3),
        }
    }

    /// As [`CcAlgorithm::build_tuned`], but `seed` also starts BBRv1's ProbeBW phase draw
    /// ([`bbr::BbrConfig::cycle_seed`]), which `build_tuned` leaves at 0. Every random choice
    /// of the controller then follows `seed`, as every one of a kernel's follows `prandom`:
    /// the simulator's noise model gives each controller a seed derived from the scenario's
    /// (docs/design.md section 10). `build_tuned` keeps the seeds docs/validation.md's tables
    /// were produced with.
    pub fn build_randomized(
        self,
        params: CcParams,
        seed: u64,
        bbr2: &Bbr2Tuning,
    ) -> Box<dyn Controller> {
        match self {
            CcAlgorithm::Bbr => Box::new(bbr::Bbr::with_config(
                params,
                bbr::BbrConfig { cycle_seed: seed, ..bbr::BbrConfig::default() },
            )),
            _ => self.build_tuned(params, seed, bbr2),
        }
    }
}

/// The seed of path `index`'s controller under a tunnel seed `seed`: a SplitMix64 step
/// (Steele et al., OOPSLA 2014) over both, so that neighbouring paths and neighbouring tunnel
/// seeds give unrelated draws.
pub fn path_seed(seed: u64, index: u64) -> u64 {
    let mut z = seed
        .wrapping_add(index.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Building a coupled controller reads its part of [`CcTuning`], so it lives here rather than
/// in [`coupled`], which [`tuning`] imports its configurations from.
impl CoupledAlgorithm {
    /// A fresh controller for `n_paths` paths with default tuning.
    pub fn build(self, params: CcParams, n_paths: usize) -> Box<dyn MultipathController> {
        self.build_tuned(params, n_paths, &CcTuning::default())
    }

    /// A fresh controller for `n_paths` paths with its part of `tuning` (wVegas and Coupled
    /// CUBIC have one; LIA, OLIA and BALIA have no parameters); `tuning` should have passed
    /// [`CcTuning::validate`].
    pub fn build_tuned(
        self,
        params: CcParams,
        n_paths: usize,
        tuning: &CcTuning,
    ) -> Box<dyn MultipathController> {
        match self {
            CoupledAlgorithm::Lia => Box::new(coupled::Lia::new(params, n_paths)),
            CoupledAlgorithm::Olia => Box::new(coupled::Olia::new(params, n_paths)),
            CoupledAlgorithm::Balia => Box::new(coupled::Balia::new(params, n_paths)),
            CoupledAlgorithm::Wvegas => {
                Box::new(coupled::Wvegas::with_config(params, n_paths, tuning.wvegas))
            }
            CoupledAlgorithm::CoupledCubic => {
                Box::new(coupled::CoupledCubic::with_config(params, n_paths, tuning.coupled_cubic))
            }
        }
    }
}

crate::named_enum! {
    /// A tunnel's congestion control as configs name it (`tunnel.cc`): an algorithm plus how
    /// packets are counted. `ccid2` and `ccid5` are the DCCP flavours (packet-counted); `lia`,
    /// `olia`, `balia`, `wvegas` and `coupled_cubic` couple the paths ([`coupled`]).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum TunnelCc {
        what = "tunnel congestion control";
        NewReno => "newreno",
        Cubic => "cubic",
        Bbr => "bbr",
        /// DCCP CCID2 (RFC 4341): TCP-like congestion control counted in packets.
        Ccid2 => "ccid2",
        /// CCID5 (Moreno et al., ANRW 2021): BBR for DCCP, counted in packets.
        Ccid5 => "ccid5",
        /// BBRv2, byte-counted.
        Bbr2 => "bbr2",
        /// BBRv3, byte-counted.
        Bbr3 => "bbr3",
        /// RFC 6356 LIA, byte-counted.
        Lia => "lia",
        /// OLIA (Khalili et al., ToN 2013), byte-counted.
        Olia => "olia",
        /// BALIA (Peng et al., ToN 2016), byte-counted.
        Balia => "balia",
        /// wVegas (Cao et al., ICNP 2012), byte-counted.
        Wvegas => "wvegas",
        /// Coupled CUBIC (Lee et al. 2023), byte-counted.
        CoupledCubic => "coupled_cubic",
    }
}

/// What runs on a tunnel's paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PathControl {
    /// One independent controller of this algorithm per path ([`Uncoupled`]).
    Independent(CcAlgorithm),
    /// One coupled controller for all paths.
    Coupled(CoupledAlgorithm),
}

impl TunnelCc {
    pub fn control(self) -> PathControl {
        match self {
            TunnelCc::NewReno | TunnelCc::Ccid2 => PathControl::Independent(CcAlgorithm::NewReno),
            TunnelCc::Cubic => PathControl::Independent(CcAlgorithm::Cubic),
            TunnelCc::Bbr | TunnelCc::Ccid5 => PathControl::Independent(CcAlgorithm::Bbr),
            TunnelCc::Bbr2 => PathControl::Independent(CcAlgorithm::Bbr2),
            TunnelCc::Bbr3 => PathControl::Independent(CcAlgorithm::Bbr3),
            TunnelCc::Lia => PathControl::Coupled(CoupledAlgorithm::Lia),
            TunnelCc::Olia => PathControl::Coupled(CoupledAlgorithm::Olia),
            TunnelCc::Balia => PathControl::Coupled(CoupledAlgorithm::Balia),
            TunnelCc::Wvegas => PathControl::Coupled(CoupledAlgorithm::Wvegas),
            TunnelCc::CoupledCubic => PathControl::Coupled(CoupledAlgorithm::CoupledCubic),
        }
    }

    pub fn counting(self) -> Counting {
        match self {
            TunnelCc::Ccid2 | TunnelCc::Ccid5 => Counting::Packets,
            _ => Counting::Bytes,
        }
    }

    /// A controller for a tunnel with `n_paths` paths: the coupled controller for a coupled
    /// name, independent per-path controllers otherwise, each with its part of `tuning` (which
    /// should have passed [`CcTuning::validate`]). Independent path `i` gets seed `i`, so that
    /// randomised controllers on different paths do not probe in lockstep.
    pub fn build(
        self,
        params: CcParams,
        n_paths: usize,
        tuning: &CcTuning,
    ) -> Box<dyn MultipathController> {
        self.build_seeded(params, n_paths, tuning, None)
    }

    /// As [`TunnelCc::build`]; with `seed`, independent path `i` is built by
    /// [`CcAlgorithm::build_randomized`] with [`path_seed`]`(seed, i)`, so every random draw of
    /// every path (BBRv1's ProbeBW start phase included) follows `seed`. `None` is
    /// [`TunnelCc::build`]'s fixed seeds. The coupled controllers draw nothing.
    pub fn build_seeded(
        self,
        params: CcParams,
        n_paths: usize,
        tuning: &CcTuning,
        seed: Option<u64>,
    ) -> Box<dyn MultipathController> {
        match self.control() {
            PathControl::Independent(alg) => {
                let path = |i: usize| match seed {
                    None => alg.build_tuned(params, i as u64, &tuning.bbr2),
                    Some(s) => alg.build_randomized(params, path_seed(s, i as u64), &tuning.bbr2),
                };
                Box::new(Uncoupled::new((0..n_paths).map(path).collect()))
            }
            PathControl::Coupled(alg) => alg.build_tuned(params, n_paths, tuning),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_counting_charges_one_mss_per_packet() {
        assert_eq!(Counting::Packets.charge(52, 1448), 1448);
        assert_eq!(Counting::Bytes.charge(52, 1448), 52);
    }

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        for name in TunnelCc::NAMES {
            assert_eq!(name.parse::<TunnelCc>().unwrap().as_str(), *name);
        }
        for name in CcAlgorithm::NAMES {
            let alg = name.parse::<CcAlgorithm>().unwrap();
            assert_eq!(alg.as_str(), *name);
            assert_eq!(alg.build(CcParams::default()).name(), *name);
        }
        let err = "bbr9".parse::<CcAlgorithm>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown congestion control \"bbr9\"; expected one of: newreno, cubic, bbr, bbr2, bbr3"
        );
        let err = "mptcp".parse::<TunnelCc>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown tunnel congestion control \"mptcp\"; expected one of: newreno, cubic, bbr, \
             ccid2, ccid5, bbr2, bbr3, lia, olia, balia, wvegas, coupled_cubic"
        );
        // End-to-end TCP is single-path: it does not accept coupled names.
        for name in CoupledAlgorithm::NAMES {
            assert!(name.parse::<CcAlgorithm>().is_err());
        }
    }

    #[test]
    fn bbr2_and_bbr3_tunnels_are_byte_counted() {
        assert_eq!(TunnelCc::Bbr2.control(), PathControl::Independent(CcAlgorithm::Bbr2));
        assert_eq!(TunnelCc::Bbr3.control(), PathControl::Independent(CcAlgorithm::Bbr3));
        assert_eq!(TunnelCc::Bbr2.counting(), Counting::Bytes);
        assert_eq!(TunnelCc::Bbr3.counting(), Counting::Bytes);
    }

    #[test]
    fn dccp_flavours_count_packets() {
        assert_eq!(TunnelCc::Ccid2.counting(), Counting::Packets);
        assert_eq!(TunnelCc::Ccid5.control(), PathControl::Independent(CcAlgorithm::Bbr));
        assert_eq!(TunnelCc::Bbr.counting(), Counting::Bytes);
    }

    #[test]
    fn tuning_reaches_the_controllers_built_for_a_tunnel() {
        // The controllers are opaque behind the trait; their Debug output shows the config
        // each was built with.
        let mut tuning = CcTuning::default();
        tuning.bbr2.loss_thresh_percent = 5;
        tuning.wvegas.total_alpha_pkts = 20;
        tuning.coupled_cubic.alpha_exponent = 0.5;
        let built = |cc: TunnelCc| format!("{:?}", cc.build(CcParams::default(), 2, &tuning));
        for (cc, version) in [(TunnelCc::Bbr2, "version: V2"), (TunnelCc::Bbr3, "version: V3")] {
            let debug = built(cc);
            assert!(debug.contains(version), "{debug}");
            // One controller per path, both tuned.
            assert_eq!(debug.matches("loss_thresh_percent: 5,").count(), 2, "{debug}");
        }
        assert!(built(TunnelCc::Wvegas).contains("total_alpha_pkts: 20,"));
        assert!(built(TunnelCc::CoupledCubic).contains("alpha_exponent: 0.5"));
        let default =
            format!("{:?}", TunnelCc::Bbr3.build(CcParams::default(), 1, &CcTuning::default()));
        assert!(default.contains("loss_thresh_percent: 2,"), "{default}");
        // The end-to-end (single-path) build takes the same BBR table.
        let e2e = CcAlgorithm::Bbr2.build_tuned(CcParams::default(), 0, &tuning.bbr2);
        assert!(format!("{e2e:?}").contains("loss_thresh_percent: 5,"));
    }

    /// A tunnel seed reaches every randomised controller, BBRv1's ProbeBW phase included;
    /// without one the paths keep the fixed seeds (BBRv1 0, BBRv2/v3 the path index).
    #[test]
    fn a_tunnel_seed_reaches_every_path_controller() {
        let tuning = CcTuning::default();
        let built = |cc: TunnelCc, seed| {
            format!("{:?}", cc.build_seeded(CcParams::default(), 2, &tuning, seed))
        };
        let fixed = built(TunnelCc::Bbr, None);
        assert_eq!(fixed.matches("cycle_seed: 0,").count(), 2, "{fixed}");
        assert_eq!(fixed, format!("{:?}", TunnelCc::Bbr.build(CcParams::default(), 2, &tuning)));
        let seeded = built(TunnelCc::Bbr, Some(7));
        for i in 0..2 {
            assert!(seeded.contains(&format!("cycle_seed: {},", path_seed(7, i))), "{seeded}");
        }
        assert_ne!(path_seed(7, 0), path_seed(7, 1));
        assert_ne!(path_seed(7, 0), path_seed(8, 0));
        let v2 = built(TunnelCc::Bbr2, Some(7));
        assert!(v2.contains(&format!("seed: {}", path_seed(7, 1))), "{v2}");
        assert_ne!(built(TunnelCc::Bbr2, Some(7)), built(TunnelCc::Bbr2, Some(8)));
    }

    #[test]
    fn coupled_names_build_one_coupled_controller_counted_in_bytes() {
        let params = CcParams::default();
        for name in CoupledAlgorithm::NAMES {
            let cc: TunnelCc = name.parse().unwrap();
            assert_eq!(cc.counting(), Counting::Bytes);
            assert!(matches!(cc.control(), PathControl::Coupled(_)));
            let built = cc.build(params, 2, &CcTuning::default());
            assert_eq!((built.name(), built.path_count()), (*name, 2));
        }
        let built = TunnelCc::Ccid2.build(params, 3, &CcTuning::default());
        assert_eq!((built.name(), built.path_count()), ("newreno", 3));
    }
}
