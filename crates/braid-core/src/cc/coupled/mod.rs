//! Coupled multipath congestion control: one controller for all paths of a tunnel, whose
//! per-path window increase depends on every path's window and RTT.
//!
//! # Why couple
//! Independent Reno or CUBIC on each of n paths takes n times a single flow's share of a
//! bottleneck the paths share. RFC 6356 section 2 states the goals every algorithm here aims at:
//! (1) do at least as well as a single-path flow on the best path, (2) take no more capacity
//! from any path (or shared bottleneck) than a single-path flow would, (3) move traffic away from
//! the most congested paths. They differ in how the increase is linked:
//!
//! | name | file | source | coupling |
//! |---|---|---|---|
//! | `lia` | [`lia`] | RFC 6356 section 3 | one alpha scales every path's Reno increase |
//! | `olia` | [`olia`] | Khalili et al., ToN 2013; draft-khalili-mptcp-congestion-control-05 | Kelly-Voice term plus alpha_r moving window to the best paths |
//! | `balia` | [`balia`] | Peng et al., ToN 2016; draft-walid-mptcp-congestion-control-04 | rate-balanced increase and a decrease up to 1.5x Reno's |
//! | `wvegas` | [`wvegas`] | Cao, Xu, Fu, ICNP 2012; draft-xu-mptcp-congestion-control-05 | Vegas per path, one total backlog split by rate |
//! | `coupled_cubic` | [`coupled_cubic`] | Lee et al. 2023 (CSSE), eq. 6-11 | CUBIC on large-BDP paths, LIA on the rest, joined through a virtual Reno window |
//!
//! All five keep the single-path machinery of standard TCP (RFC 6356 section 3 couples only the
//! congestion-avoidance increase and leaves slow start, fast retransmit, fast recovery and the
//! multiplicative decrease to RFC 5681): slow start, recovery episodes, the RTO collapse and the
//! app-limited rule are `ClassicWindow` (`cc/classic.rs`), one per path, inside `CoupledPath`. The
//! algorithms supply the congestion-avoidance increase, and BALIA and Coupled CUBIC their own
//! decreases (wVegas its own once-per-round window changes), through the `Coupling` trait; one
//! generic [`MultipathController`] implementation drives every path's events for all five.
//!
//! # Shared per-path state (`CoupledPath`)
//! - the window (charged bytes, see [`super::Counting`]), with the fraction of a byte of growth
//!   earned but not yet applied carried to the next ACK, so the sub-byte increases that coupling
//!   produces on large windows are not lost to rounding;
//! - an RFC 6298 smoothed RTT built from [`AckEvent::rtt`] samples: RFC 6356 section 4 (and every
//!   MPTCP kernel controller) uses the smoothed RTT `srtt` as `rtt_i`;
//! - the inter-loss distance of draft-khalili section 2 (`LossInterval`): charged bytes
//!   acknowledged between the last two loss events and since the last one. OLIA picks its best
//!   paths with it; Coupled CUBIC turns it into a loss-event rate.
//!
//! # Choices common to all five
//! - **Which paths count.** A path enters the coupling sums once it has a nonzero RTT sample
//!   (Linux's `mptcp_*_sk_can_send` requires `srtt`); a path without one neither contributes nor
//!   grows in congestion avoidance. Sums run over a fixed `Vec` of paths, so no ACK allocates.
//! - **Units.** The formulas are dimensionless ratios of windows (bytes) and RTTs (seconds, f64);
//!   with packet counting every packet is charged one MSS, so windows in bytes are windows in
//!   packets times MSS and every formula holds unchanged.
//! - **Minimum window.** OLIA's and BALIA's drafts lower the minimum `ssthresh` to 1 MSS with
//!   several paths; we keep RFC 5681's 2 SMSS floor of `ClassicWindow` for every path.
//! - **A loss event** for the inter-loss distance is a reduction from the open state: one per
//!   recovery episode, or a timeout (Linux OLIA shifts its counters in `set_state` on entering
//!   Recovery or Loss, once per episode).
//! - **Undo** of spurious reductions is not offered: [`MultipathController`] has no such event.

pub mod balia;
pub mod coupled_cubic;
pub mod lia;
pub mod olia;
pub mod wvegas;

use std::time::Duration;

use super::classic::{ClassicWindow, DEFAULT_ABC_LIMIT_SEGMENTS};
use super::{AckEvent, CcMetrics, CcParams, CongestionEvent, MultipathController};
use crate::path::RttEstimator;
use crate::time::Instant;

pub use balia::Balia;
pub use coupled_cubic::{CoupledCubic, CoupledCubicConfig};
pub use lia::Lia;
pub use olia::Olia;
pub use wvegas::{Wvegas, WvegasConfig};

/// RFC 5681 eq. 4: `ssthresh = FlightSize / 2`, the Reno decrease every path keeps.
const RENO_DECREASE_DIVISOR: u64 = 2;
/// RFC 5681 eq. 4: `ssthresh = FlightSize / 2`.
pub(super) fn reno_ssthresh_bytes(flight_size_bytes: u64) -> u64 {
    flight_size_bytes / RENO_DECREASE_DIVISOR
}

/// Unused by the coupled controllers; [`RttEstimator`] wants a floor for its RTO.
const UNUSED_MIN_RTO: Duration = Duration::from_millis(200);

crate::named_enum! {
    /// The coupled algorithms, as `tunnel.cc` names them.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum CoupledAlgorithm {
        what = "coupled congestion control";
        Lia => "lia",
        Olia => "olia",
        Balia => "balia",
        Wvegas => "wvegas",
        CoupledCubic => "coupled_cubic",
    }
}

/// Inter-loss distance of one path (draft-khalili-mptcp-congestion-control-05 section 2):
/// `l_1r` charged bytes acknowledged between the last two loss events, `l_2r` since the last.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct LossInterval {
    /// `l_1r`; zero until the first loss event.
    pub(super) between_last_two_bytes: u64,
    /// `l_2r`: every byte acknowledged since the last loss event (or since the start).
    pub(super) since_last_bytes: u64,
    pub(super) loss_events: u64,
}

impl LossInterval {
    /// "For each ACK on r: l_2r <- l_2r + (number of bytes that are acknowledged by ACK)".
    fn on_acked(&mut self, bytes: u64) {
        self.since_last_bytes += bytes;
    }

    /// "For each loss on r: l_1r <- l_2r and l_2r <- 0".
    fn on_loss_event(&mut self) {
        self.between_last_two_bytes = self.since_last_bytes;
        self.since_last_bytes = 0;
        self.loss_events += 1;
    }

    /// `l_r = max(l_1r, l_2r)`: the smoothed bytes between losses. A long loss-free stretch
    /// counts as soon as it exceeds the last complete interval.
    pub(super) fn smoothed_bytes(&self) -> u64 {
        self.between_last_two_bytes.max(self.since_last_bytes)
    }
}

/// The state every coupled algorithm keeps for one path. See the module documentation.
#[derive(Clone, Debug)]
pub(super) struct CoupledPath {
    pub(super) window: ClassicWindow,
    /// Growth earned but not yet in the integer window, in bytes (may be negative for OLIA).
    carry_bytes: f64,
    rtt: RttEstimator,
    pub(super) loss_interval: LossInterval,
}

impl CoupledPath {
    pub(super) fn new(params: CcParams) -> Self {
        CoupledPath {
            window: ClassicWindow::new(params, DEFAULT_ABC_LIMIT_SEGMENTS),
            carry_bytes: 0.0,
            rtt: RttEstimator::new(UNUSED_MIN_RTO),
            loss_interval: LossInterval::default(),
        }
    }

    pub(super) fn mss_f64(&self) -> f64 {
        self.window.mss_bytes as f64
    }

    /// The window in bytes including the carried fraction.
    pub(super) fn cwnd_f64(&self) -> f64 {
        self.window.cwnd_bytes as f64 + self.carry_bytes
    }

    /// Smoothed RTT, once a nonzero sample arrived.
    pub(super) fn srtt(&self) -> Option<Duration> {
        self.rtt.srtt().filter(|d| !d.is_zero())
    }

    /// Smoothed RTT in seconds, once a nonzero sample arrived.
    pub(super) fn srtt_s(&self) -> Option<f64> {
        self.srtt().map(|d| d.as_secs_f64())
    }

    pub(super) fn on_sent(&mut self, in_flight_bytes: u64) {
        self.window.on_sent(in_flight_bytes);
    }

    /// Books an ACK (RTT sample, inter-loss bytes, recovery episode) and returns the charged
    /// bytes that may grow the window (see `ClassicWindow::on_ack`).
    pub(super) fn book_ack(&mut self, ack: &AckEvent) -> u64 {
        if let Some(sample) = ack.rtt {
            self.rtt.update(sample);
        }
        self.loss_interval.on_acked(ack.newly_acked_bytes);
        self.window.on_ack(ack)
    }

    /// [`Self::book_ack`] then slow start; returns the bytes left for congestion avoidance.
    pub(super) fn on_ack(&mut self, ack: &AckEvent) -> u64 {
        let acked = self.book_ack(ack);
        self.window.slow_start(acked)
    }

    /// Books a congestion event. Returns FlightSize (the flight when the loss was detected, lost
    /// packets included) when the event opens a new recovery episode and the caller must reduce.
    pub(super) fn on_congestion_event(&mut self, event: &CongestionEvent) -> Option<u64> {
        self.window.on_congestion_event(event).then_some(event.in_flight_bytes + event.lost_bytes)
    }

    /// Opens a recovery episode with `ssthresh_bytes` (at least 2 SMSS; the window drops to it).
    pub(super) fn reduce(&mut self, now: Instant, ssthresh_bytes: u64) {
        if self.window.is_open() {
            self.loss_interval.on_loss_event();
        }
        self.window.enter_recovery(now, ssthresh_bytes);
        self.carry_bytes = 0.0;
    }

    /// The retransmission timer fired. `ssthresh_bytes` is the value to set when the timeout
    /// recomputes it (see `ClassicWindow::recomputes_ssthresh_on_rto`); the window collapses
    /// to one segment.
    pub(super) fn timeout(&mut self, now: Instant, ssthresh_bytes: u64) {
        let recompute = self.window.recomputes_ssthresh_on_rto();
        if recompute {
            self.loss_interval.on_loss_event();
        }
        self.window.enter_loss(now, recompute.then_some(ssthresh_bytes));
        self.carry_bytes = 0.0;
    }

    /// NewReno's `ssthresh` on a timeout: `FlightSize / 2` with the flight the timer found.
    pub(super) fn reno_timeout_ssthresh_bytes(&self) -> u64 {
        reno_ssthresh_bytes(self.window.in_flight_bytes())
    }

    /// Adds `delta_bytes` (fractional, possibly negative) to the window. A decrease stops at one
    /// segment and pulls `ssthresh` down with the window, so a path whose coupled increase is
    /// negative stays in congestion avoidance instead of slow-starting back (Linux OLIA leaves
    /// `ssthresh` alone and so re-enters slow start on the next ACK).
    pub(super) fn grow(&mut self, delta_bytes: f64) {
        let next = (self.cwnd_f64() + delta_bytes).max(self.mss_f64());
        let whole = next.floor();
        self.carry_bytes = next - whole;
        self.window.cwnd_bytes = whole as u64;
        if delta_bytes < 0.0 && self.window.cwnd_bytes < self.window.ssthresh_bytes() {
            self.window.set_ssthresh_bytes(self.window.cwnd_bytes);
        }
    }

    /// Sets the window to whole bytes, dropping any carried fraction.
    pub(super) fn set_cwnd_bytes(&mut self, cwnd_bytes: u64) {
        self.window.cwnd_bytes = cwnd_bytes;
        self.carry_bytes = 0.0;
    }

    pub(super) fn metrics(&self) -> CcMetrics {
        self.window.metrics()
    }
}

/// What one coupled algorithm adds to the shared per-path machinery: its congestion-avoidance
/// increase and, where it differs from Reno's, its decrease. Every type implementing it is a
/// [`MultipathController`] through the one implementation below, which books ACKs, losses and
/// timeouts on the path's `CoupledPath` (NewReno's slow start, recovery episodes and RTO
/// collapse, RFC 6356 section 3) and calls these hooks at the points the algorithms differ.
/// The hooks are only called with a valid path index.
pub(super) trait Coupling: std::fmt::Debug + Send {
    /// The name `tunnel.cc` uses.
    const NAME: &'static str;

    fn paths(&self) -> &[CoupledPath];

    fn paths_mut(&mut self) -> &mut [CoupledPath];

    /// The congestion-avoidance increase of `path` for `acked_bytes` (charged bytes left after
    /// slow start), in bytes; `None` leaves the window as it is (e.g. no RTT sample yet).
    fn increase_bytes(&mut self, path: usize, now: Instant, acked_bytes: u64) -> Option<f64>;

    /// `ssthresh` for a loss that opens a new recovery episode on `path`, given FlightSize.
    /// Default: RFC 5681 eq. 4, `FlightSize / 2`.
    fn loss_ssthresh_bytes(&mut self, path: usize, flight_size_bytes: u64) -> u64 {
        let _ = path;
        reno_ssthresh_bytes(flight_size_bytes)
    }

    /// `ssthresh` a timeout on `path` sets when it recomputes it (see [`CoupledPath::timeout`]).
    /// Default: NewReno's, `FlightSize / 2` with the flight the timer found.
    fn timeout_ssthresh_bytes(&self, path: usize) -> u64 {
        self.paths()[path].reno_timeout_ssthresh_bytes()
    }

    /// Called after a timeout collapsed the window of `path`, to reset algorithm state.
    fn after_timeout(&mut self, path: usize) {
        let _ = path;
    }

    /// One ACK on `path`: booked and slow start on the path, then the coupled increase with
    /// the bytes slow start left.
    fn on_path_ack(&mut self, path: usize, ack: &AckEvent) {
        let rest = self.paths_mut()[path].on_ack(ack);
        if rest > 0 {
            self.congestion_avoidance(path, ack.now, rest);
        }
    }

    /// Applies [`Self::increase_bytes`] to the window of `path`.
    fn congestion_avoidance(&mut self, path: usize, now: Instant, acked_bytes: u64) {
        if let Some(increase) = self.increase_bytes(path, now, acked_bytes) {
            self.paths_mut()[path].grow(increase);
        }
    }

    fn path_metrics(&self, path: usize) -> CcMetrics {
        self.paths()[path].metrics()
    }
}

/// Every coupled algorithm drives its paths the same way; only the hooks of `Coupling` vary.
/// Events for a path index out of range are ignored; queries for one panic, as slice indexing.
impl<C: Coupling> MultipathController for C {
    fn on_sent(&mut self, path: usize, _now: Instant, _bytes: u64, in_flight_bytes: u64) {
        if let Some(p) = self.paths_mut().get_mut(path) {
            p.on_sent(in_flight_bytes);
        }
    }

    fn on_ack(&mut self, path: usize, ack: &AckEvent) {
        if path < self.paths().len() {
            self.on_path_ack(path, ack);
        }
    }

    fn on_congestion_event(&mut self, path: usize, event: &CongestionEvent) {
        let Some(p) = self.paths_mut().get_mut(path) else { return };
        if let Some(flight_size) = p.on_congestion_event(event) {
            let ssthresh = self.loss_ssthresh_bytes(path, flight_size);
            self.paths_mut()[path].reduce(event.now, ssthresh);
        }
    }

    fn on_rto(&mut self, path: usize, now: Instant) {
        if path < self.paths().len() {
            let ssthresh = self.timeout_ssthresh_bytes(path);
            self.paths_mut()[path].timeout(now, ssthresh);
            self.after_timeout(path);
        }
    }

    fn cwnd_bytes(&self, path: usize) -> u64 {
        self.paths()[path].window.cwnd_bytes
    }

    fn pacing_rate_bytes_per_s(&self, _path: usize) -> Option<u64> {
        None
    }

    fn metrics(&self, path: usize) -> CcMetrics {
        self.path_metrics(path)
    }

    fn name(&self) -> &'static str {
        C::NAME
    }

    fn path_count(&self) -> usize {
        self.paths().len()
    }
}

/// Window (bytes) and smoothed RTT (seconds) of every path that has an RTT sample: the terms
/// the coupling formulas sum over.
pub(super) fn window_rtt_pairs(paths: &[CoupledPath]) -> impl Iterator<Item = (f64, f64)> + '_ {
    paths.iter().filter_map(|p| p.srtt_s().map(|rtt| (p.cwnd_f64(), rtt)))
}

/// Test drivers: several paths under one [`MultipathController`], each with a fixed RTT and no
/// queue, ACK-clocked and acknowledging each packet separately (the multipath counterpart of
/// [`crate::cc::test_support::ack_clock`]).
#[cfg(test)]
pub(crate) mod multi_clock {
    use std::collections::VecDeque;
    use std::time::Duration;

    use crate::cc::{AckEvent, CongestionEvent, MultipathController};
    use crate::time::Instant;

    pub(crate) const MSS: u64 = 1000;

    pub(crate) struct MultiClock<C: MultipathController> {
        pub cc: C,
        pub now: Instant,
        rtts: Vec<Duration>,
        flights: Vec<VecDeque<Instant>>,
    }

    impl<C: MultipathController> MultiClock<C> {
        /// Starts every path at time zero with its window in flight.
        pub(crate) fn new(cc: C, rtts: &[Duration]) -> Self {
            let flights = rtts.iter().map(|_| VecDeque::new()).collect();
            let mut clock = MultiClock { cc, now: Instant::ZERO, rtts: rtts.to_vec(), flights };
            clock.fill();
            clock
        }

        pub(crate) fn cwnd_pkts(&self, path: usize) -> f64 {
            self.cc.cwnd_bytes(path) as f64 / MSS as f64
        }

        pub(crate) fn total_cwnd_pkts(&self) -> f64 {
            (0..self.rtts.len()).map(|p| self.cwnd_pkts(p)).sum()
        }

        fn in_flight_bytes(&self, path: usize) -> u64 {
            self.flights[path].len() as u64 * MSS
        }

        /// Sends on every path while its window allows.
        pub(crate) fn fill(&mut self) {
            for path in 0..self.rtts.len() {
                while self.in_flight_bytes(path) + MSS <= self.cc.cwnd_bytes(path) {
                    self.flights[path].push_back(self.now);
                    let in_flight = self.in_flight_bytes(path);
                    self.cc.on_sent(path, self.now, MSS, in_flight);
                }
            }
        }

        /// The path whose oldest packet is acknowledged first, and when.
        fn next_ack(&self) -> Option<(Instant, usize)> {
            (0..self.rtts.len())
                .filter_map(|p| self.flights[p].front().map(|&sent| (sent + self.rtts[p], p)))
                .min()
        }

        /// Acknowledges the oldest packet of `path` at its arrival time, then refills.
        pub(crate) fn ack_one(&mut self, path: usize) {
            let sent = self.flights[path].pop_front().expect("a packet in flight");
            self.now = self.now.max(sent + self.rtts[path]);
            let ev = AckEvent {
                now: self.now,
                newly_acked_bytes: MSS,
                newly_lost_bytes: 0,
                largest_acked_sent_time: sent,
                rtt: Some(self.rtts[path]),
                min_rtt: Some(self.rtts[path]),
                prior_in_flight_bytes: self.in_flight_bytes(path) + MSS,
                in_flight_bytes: self.in_flight_bytes(path),
                delivered_bytes: 0,
                rate: None,
                app_limited: false,
                cwnd_limited: true,
                max_in_flight_bytes: 0,
            };
            self.cc.on_ack(path, &ev);
            self.fill();
        }

        /// Declares the oldest packet of `path` lost when its ACK would have arrived.
        pub(crate) fn lose_one(&mut self, path: usize) {
            let sent = self.flights[path].pop_front().expect("a packet in flight");
            self.now = self.now.max(sent + self.rtts[path]);
            let in_flight_bytes = self.in_flight_bytes(path);
            self.cc.on_congestion_event(
                path,
                &CongestionEvent {
                    now: self.now,
                    largest_lost_sent_time: sent,
                    lost_bytes: MSS,
                    in_flight_bytes,
                },
            );
        }

        /// Processes every ACK due by `end` in time order, then moves the clock to `end`.
        pub(crate) fn run_until(&mut self, end: Instant) {
            while let Some((t, path)) = self.next_ack().filter(|(t, _)| *t <= end) {
                debug_assert!(t >= self.now);
                self.ack_one(path);
            }
            self.now = self.now.max(end);
            self.fill();
        }

        /// Acknowledges everything now in flight on `path`.
        pub(crate) fn round(&mut self, path: usize) {
            for _ in 0..self.flights[path].len() {
                self.ack_one(path);
            }
        }
    }
}

/// Test helpers that put a path into a given state directly.
#[cfg(test)]
pub(crate) mod test_util {
    use std::time::Duration;

    use super::CoupledPath;
    use crate::cc::test_support::ack_clock::{ack, ms};
    use crate::cc::AckEvent;
    use crate::time::Instant;

    /// Congestion avoidance at `cwnd_pkts` segments of `mss` bytes, with srtt = `rtt` exactly
    /// (a first RFC 6298 sample sets srtt to itself).
    pub(in crate::cc::coupled) fn set_path(path: &mut CoupledPath, cwnd_pkts: u64, rtt: Duration) {
        let mss = path.window.mss_bytes;
        let mut a = ack(ms(0), ms(0), 0);
        a.rtt = Some(rtt);
        path.book_ack(&a);
        path.set_cwnd_bytes(cwnd_pkts * mss);
        path.window.set_ssthresh_bytes(cwnd_pkts * mss);
    }

    /// An ACK of `bytes` for a packet sent at `sent`, without an RTT sample (so it leaves the
    /// srtt a test set up untouched).
    pub(in crate::cc::coupled) fn plain_ack(now: Instant, sent: Instant, bytes: u64) -> AckEvent {
        AckEvent { rtt: None, ..ack(now, sent, bytes) }
    }

    /// Sets `l_1r` and `l_2r` (in segments) as if that many had been acknowledged around a loss.
    pub(in crate::cc::coupled) fn set_loss_interval(
        path: &mut CoupledPath,
        between_pkts: u64,
        since_pkts: u64,
    ) {
        let mss = path.window.mss_bytes;
        path.loss_interval.between_last_two_bytes = between_pkts * mss;
        path.loss_interval.since_last_bytes = since_pkts * mss;
        path.loss_interval.loss_events = 1;
    }
}

#[cfg(test)]
mod tests {
    use super::multi_clock::MSS;
    use super::test_util::set_path;
    use super::*;
    use crate::cc::test_support::ack_clock::{ack, ms};

    fn params() -> CcParams {
        CcParams { mss_bytes: MSS, initial_window_pkts: 10 }
    }

    #[test]
    fn names_round_trip_and_build_one_controller_for_all_paths() {
        for name in CoupledAlgorithm::NAMES {
            let alg: CoupledAlgorithm = name.parse().unwrap();
            assert_eq!(alg.as_str(), *name);
            let cc = alg.build(params(), 3);
            assert_eq!((cc.name(), cc.path_count()), (*name, 3));
            assert_eq!(cc.cwnd_bytes(2), 10 * MSS);
        }
        assert!("cubic".parse::<CoupledAlgorithm>().is_err());
    }

    #[test]
    fn events_for_a_path_index_out_of_range_are_ignored() {
        for name in CoupledAlgorithm::NAMES {
            let mut cc = name.parse::<CoupledAlgorithm>().unwrap().build(params(), 2);
            cc.on_sent(2, ms(0), MSS, MSS);
            cc.on_ack(2, &ack(ms(50), ms(0), MSS));
            let loss = CongestionEvent {
                now: ms(60),
                largest_lost_sent_time: ms(0),
                lost_bytes: MSS,
                in_flight_bytes: 0,
            };
            cc.on_congestion_event(2, &loss);
            cc.on_rto(2, ms(70));
            // Both real paths keep their initial window of 10 segments, in slow start.
            for path in 0..2 {
                assert_eq!(cc.cwnd_bytes(path), 10 * MSS, "{name} path {path}");
                assert_eq!(cc.metrics(path).phase, crate::cc::CcPhase::SlowStart);
            }
        }
    }

    #[test]
    fn inter_loss_distance_follows_the_draft_updates() {
        let mut path = CoupledPath::new(params());
        // "If no losses have been observed ... l_1r = 0 and l_2r is the total".
        for i in 0..30 {
            path.on_ack(&ack(ms(50), ms(i / 10), MSS));
        }
        assert_eq!(path.loss_interval.since_last_bytes, 30 * MSS);
        assert_eq!(path.loss_interval.smoothed_bytes(), 30 * MSS);
        path.reduce(ms(60), reno_ssthresh_bytes(40 * MSS));
        assert_eq!(path.loss_interval.between_last_two_bytes, 30 * MSS);
        assert_eq!(path.loss_interval.since_last_bytes, 0);
        // A second reduction inside the same episode is not a new loss event.
        path.reduce(ms(61), reno_ssthresh_bytes(20 * MSS));
        assert_eq!(path.loss_interval.loss_events, 1);
        // l_r = max(l_1r, l_2r): the loss-free stretch counts once it is the longer one.
        for _ in 0..31 {
            path.on_ack(&ack(ms(120), ms(70), MSS));
        }
        assert_eq!(path.loss_interval.smoothed_bytes(), 31 * MSS);
    }

    #[test]
    fn growth_carries_fractions_and_a_decrease_keeps_congestion_avoidance() {
        let mut path = CoupledPath::new(params());
        set_path(&mut path, 20, Duration::from_millis(50));
        for _ in 0..4 {
            path.grow(0.25);
        }
        assert_eq!(path.window.cwnd_bytes, 20 * MSS + 1);
        path.grow(-1500.0);
        assert_eq!(path.window.cwnd_bytes, 18 * MSS + 501);
        assert_eq!(path.window.ssthresh_bytes(), path.window.cwnd_bytes);
        assert!(!path.window.in_slow_start());
        path.grow(-1e9);
        assert_eq!(path.window.cwnd_bytes, MSS, "never below one segment");
    }
}
