//! NewReno: TCP's standard congestion control, RFC 5681 section 3 (slow start, congestion
//! avoidance) with the fast-recovery response of RFC 6582, written in the recovery-episode form
//! of RFC 9002 section 7.3 (as quinn-proto's `congestion/new_reno.rs` is).
//!
//! # Model
//! Below the slow-start threshold (`cwnd < ssthresh`) every ACK adds the bytes it acknowledged,
//! so a fully used window doubles each round trip. At or above it (congestion avoidance) the
//! window grows by one SMSS per window's worth of acknowledged bytes: one SMSS per round trip.
//! A congestion event sets `ssthresh` to half the flight and drops the window to it, once per
//! recovery episode. A retransmission timeout drops the window to one segment and slow start
//! climbs back to `ssthresh`.
//!
//! ```text
//!   SlowStart --(cwnd reaches ssthresh)--> CongestionAvoidance
//!       |                                        |
//!       +---- loss ----> Recovery <---- loss ----+
//!   Recovery/Loss --(ACK of a packet sent after the episode began)--> SlowStart or CA
//!   any phase --(RTO)--> Loss  (cwnd = 1 SMSS, then slow start up to ssthresh)
//! ```
//!
//! # Choices where the sources leave room
//! - **Slow start counts bytes** (RFC 3465, Appropriate Byte Counting): `cwnd += min(N, L)` per
//!   ACK, where N is the charged bytes it acknowledged and L = 2 SMSS, the largest limit RFC 3465
//!   section 2.2 allows (RFC 5681 suggests 1 SMSS; Linux and quinn-proto apply no limit). L is
//!   [`NewRenoConfig::abc_limit_segments`]: a tunnel whose feedback acknowledges more than two
//!   packets at a time slows down below doubling per round trip unless L is raised. Slow start
//!   stops exactly at `ssthresh`; the rest of that ACK's bytes count towards congestion
//!   avoidance (Linux `tcp_slow_start`).
//! - **Congestion avoidance counts bytes** too, the variant RFC 5681 section 3.1 recommends
//!   (RFC 3465 section 2.1): acknowledged bytes accumulate and each full `cwnd` of them adds one
//!   SMSS. The accumulator restarts on every reduction.
//! - **Loss response**: `ssthresh = max(FlightSize / 2, 2 SMSS)` (RFC 5681 eq. 4). FlightSize is
//!   what was outstanding when the loss was detected, the lost packets included
//!   (`in_flight_bytes + lost_bytes` of the [`CongestionEvent`]). Then `cwnd = ssthresh`, without
//!   RFC 6582's `+ 3 SMSS` inflation and later deflation: the caller limits sending by bytes in
//!   flight (RFC 6675's `pipe`), which is what the inflation emulated. At the end of recovery
//!   the window simply stays at `ssthresh` (the second option of RFC 6582 section 3.2 step 5).
//!   A loss never raises the window, and never leaves it below 2 SMSS. Linux's `reno` halves
//!   `cwnd` instead (`tcp_reno_ssthresh` in net/ipv4/tcp_cong.c: `max(snd_cwnd >> 1, 2)`), for a
//!   loss and for a timeout alike; [`RenoSsthresh::Cwnd`] does that, and
//!   [`NewRenoConfig::linux`] selects it. The two differ only when the window was not full: a
//!   tunnel path whose traffic comes in below its window (a scheduler feeding it, an
//!   end-to-end sender slower than the path) keeps half its window under Linux's rule and half
//!   its flight under RFC 5681's.
//! - **Recovery episodes** (RFC 9002 section 7.3.2): a congestion event opens an episode only if
//!   its newest lost packet was sent after the current episode began; the episode begins at
//!   `now`. ACKs of packets sent before that instant do not grow the window; the first ACK of a
//!   packet sent after it ends the episode. One round trip of losses costs one reduction. Unlike
//!   RFC 9002's `sent_time <= recovery_start`, a packet sent at the very nanosecond the episode
//!   began counts as sent after it: on the simulator's integer clock the packets an ACK (or the
//!   timer) releases leave at the same instant as the reduction it caused, and must not be
//!   mistaken for the old flight (after a timeout that would hold the window at one segment for
//!   an extra round trip).
//! - **Retransmission timeout**: `ssthresh = max(FlightSize / 2, 2 SMSS)` with FlightSize the
//!   flight the timer found (as last reported by `on_sent` / `on_ack` / `on_congestion_event`),
//!   `cwnd = 1 SMSS` (the loss window, RFC 5681 section 3.1). `ssthresh` is held instead when the
//!   timer fires inside a recovery episode (the window was already reduced for this congestion;
//!   Linux `tcp_enter_loss` does the same) or after an earlier timeout without progress (RFC 5681
//!   section 3.1 holds it constant on repeated timeouts). The timeout opens an episode as a loss
//!   does: the phase is `Loss` until the first ACK of a packet sent from the timeout on, and
//!   slow start follows.
//! - **ACKs of an unused window do not grow it**: a window the sender did not fill has not been
//!   validated by the network (RFC 7661's premise). The test is Linux's `tcp_is_cwnd_limited`
//!   ([`crate::path::cwnd_usage`]): the flight reached cwnd at least once during the current
//!   window of data, or, in slow start, cwnd is below twice that window's largest flight. (The
//!   delivery-rate estimator's application-limited mark is stricter: a multipath scheduler
//!   that sends what does not fit one path on another leaves every path's queue empty, and under
//!   that mark the fast path's window never grew; docs/validation.md.) Reductions still apply.
//! - [`CcMetrics::ssthresh_bytes`] is `None` until the first reduction (`ssthresh` is infinite).
//! - **Undo** ([`Controller::on_spurious_congestion`], Linux `tcp_undo_cwnd_reduction` with
//!   `tcp_reno_undo_cwnd`): `cwnd = max(cwnd, prior_cwnd)`, `ssthresh = max(ssthresh,
//!   prior_ssthresh)`, where the priors are the values before the first reduction (recovery or
//!   timeout) taken from the open state; further reductions before the episode ends keep those
//!   priors (Linux sets `prior_cwnd` / `prior_ssthresh` only when not already reducing). The
//!   episode is closed and its start forgotten, so a later genuine loss reduces again. Linux's
//!   `prior_ssthresh` is `tcp_current_ssthresh` (at least 3/4 cwnd); ours is the plain
//!   `ssthresh`, which makes no difference once `cwnd` is restored above it.
//!
//! The window bookkeeping that CUBIC shares unchanged (episodes, slow start, the RTO collapse,
//! the cwnd-limited rule; RFC 9438 section 4.2 keeps Reno's fast recovery) is `ClassicWindow`
//! in `classic.rs`, so the two controllers differ only in their increase and decrease rules.

use super::classic::ClassicWindow;
pub use super::classic::DEFAULT_ABC_LIMIT_SEGMENTS;
use super::{AckEvent, CcMetrics, CcParams, CongestionEvent, Controller};
use crate::time::Instant;
use crate::ConfigError;

/// RFC 5681 eq. 4: `ssthresh = FlightSize / 2` (Linux: `cwnd / 2`).
const RENO_DECREASE_DIVISOR: u64 = 2;

/// What a reduction halves ([`NewRenoConfig::ssthresh`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RenoSsthresh {
    /// The flight when the loss was detected, the lost packets included (RFC 5681 eq. 4).
    #[default]
    FlightSize,
    /// The congestion window (Linux `tcp_reno_ssthresh`).
    Cwnd,
}

/// Tuning for [`NewReno`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewRenoConfig {
    /// Slow-start limit L of RFC 3465 in segments: the most one ACK may grow the window by.
    /// Default 2 (RFC 3465 section 2.2). RFC 3465 forbids more than 2 for TCP; a larger value
    /// models Linux (no limit) or tunnel feedback that acknowledges many packets at once.
    pub abc_limit_segments: u64,
    /// What a loss or a timeout halves. Default [`RenoSsthresh::FlightSize`] (RFC 5681).
    pub ssthresh: RenoSsthresh,
}

impl Default for NewRenoConfig {
    fn default() -> Self {
        NewRenoConfig {
            abc_limit_segments: DEFAULT_ABC_LIMIT_SEGMENTS,
            ssthresh: RenoSsthresh::FlightSize,
        }
    }
}

impl NewRenoConfig {
    /// Linux's `reno` where it differs from RFC 5681 in the reduction: `ssthresh` is half of
    /// `cwnd` (`tcp_reno_ssthresh`). Slow start keeps RFC 3465's L = 2 as [`super::cubic`]'s
    /// Linux configuration does.
    pub fn linux() -> Self {
        NewRenoConfig { ssthresh: RenoSsthresh::Cwnd, ..NewRenoConfig::default() }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.abc_limit_segments == 0 {
            return Err(ConfigError::new("abc_limit_segments", "at least 1"));
        }
        Ok(())
    }
}

/// RFC 5681 / RFC 6582 NewReno. See the module documentation.
#[derive(Clone, Debug)]
pub struct NewReno {
    window: ClassicWindow,
    ssthresh: RenoSsthresh,
    /// RFC 3465 section 2.1 `bytes_acked`: acknowledged bytes not yet turned into window growth.
    ca_acked_bytes: u64,
}

impl NewReno {
    pub fn new(params: CcParams) -> Self {
        Self::with_config(params, NewRenoConfig::default())
    }

    /// A controller with explicit tuning; `config` should have passed
    /// [`NewRenoConfig::validate`].
    pub fn with_config(params: CcParams, config: NewRenoConfig) -> Self {
        debug_assert!(config.validate().is_ok(), "invalid NewRenoConfig: {config:?}");
        NewReno {
            window: ClassicWindow::new(params, config.abc_limit_segments),
            ssthresh: config.ssthresh,
            ca_acked_bytes: 0,
        }
    }

    /// The new `ssthresh` (before the 2 SMSS floor) for a reduction with `flight_size` out.
    fn reduced(&self, flight_size: u64) -> u64 {
        match self.ssthresh {
            RenoSsthresh::FlightSize => flight_size / RENO_DECREASE_DIVISOR,
            RenoSsthresh::Cwnd => self.window.cwnd_bytes / RENO_DECREASE_DIVISOR,
        }
    }

    /// RFC 5681 section 3.1 congestion avoidance with byte counting: one SMSS per `cwnd` acked.
    fn congestion_avoidance(&mut self, acked_bytes: u64) {
        self.ca_acked_bytes += acked_bytes;
        while self.ca_acked_bytes >= self.window.cwnd_bytes {
            self.ca_acked_bytes -= self.window.cwnd_bytes;
            self.window.cwnd_bytes += self.window.mss_bytes;
        }
    }
}

impl Controller for NewReno {
    fn on_sent(&mut self, _now: Instant, _bytes: u64, in_flight_bytes: u64) {
        self.window.on_sent(in_flight_bytes);
    }

    fn on_ack(&mut self, ack: &AckEvent) {
        let acked = self.window.on_ack(ack);
        let rest = self.window.slow_start(acked);
        if rest > 0 {
            self.congestion_avoidance(rest);
        }
    }

    fn on_congestion_event(&mut self, event: &CongestionEvent) {
        if !self.window.on_congestion_event(event) {
            return;
        }
        let flight_size = event.in_flight_bytes + event.lost_bytes;
        self.window.enter_recovery(event.now, self.reduced(flight_size));
        self.ca_acked_bytes = 0;
    }

    fn on_rto(&mut self, now: Instant) {
        let ssthresh = self
            .window
            .recomputes_ssthresh_on_rto()
            .then(|| self.reduced(self.window.in_flight_bytes()));
        self.window.enter_loss(now, ssthresh);
        self.ca_acked_bytes = 0;
    }

    /// Linux `tcp_undo_cwnd_reduction` with `tcp_reno_undo_cwnd`: see the module docs.
    fn on_spurious_congestion(&mut self, _now: Instant) {
        self.window.undo();
    }

    fn cwnd_bytes(&self) -> u64 {
        self.window.cwnd_bytes
    }

    fn pacing_rate_bytes_per_s(&self) -> Option<u64> {
        None
    }

    fn metrics(&self) -> CcMetrics {
        self.window.metrics()
    }

    fn name(&self) -> &'static str {
        "newreno"
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::cc::test_support::ack_clock::{ack, ms, AckClock, MSS};
    use crate::cc::CcPhase;

    const RTT: Duration = Duration::from_millis(50);

    fn params() -> CcParams {
        CcParams { mss_bytes: MSS, initial_window_pkts: 10 }
    }

    fn loss(now: Instant, sent: Instant, in_flight_bytes: u64) -> CongestionEvent {
        CongestionEvent { now, largest_lost_sent_time: sent, lost_bytes: MSS, in_flight_bytes }
    }

    #[test]
    fn slow_start_doubles_the_window_every_round_trip() {
        let mut f = AckClock::new(NewReno::new(params()), RTT);
        for expected_pkts in [20, 40, 80] {
            f.round();
            assert_eq!(f.cc.cwnd_bytes(), expected_pkts * MSS);
            assert_eq!(f.cc.metrics().phase, CcPhase::SlowStart);
        }
    }

    /// A window the flight did not fill: 40 segments, 12 out (11 + 1 lost) when a loss is
    /// detected. RFC 5681 halves the flight (6), Linux's `tcp_reno_ssthresh` the window (20);
    /// after a timeout with 12 out, likewise.
    #[test]
    fn linux_halves_the_window_where_rfc_5681_halves_the_flight() {
        let grown = |config: NewRenoConfig| {
            let mut f = AckClock::new(NewReno::with_config(params(), config), RTT);
            f.round();
            f.round();
            assert_eq!(f.cc.cwnd_bytes(), 40 * MSS);
            f.cc.on_sent(ms(1000), MSS, 12 * MSS);
            f.cc
        };
        let (mut rfc, mut linux) = (grown(NewRenoConfig::default()), grown(NewRenoConfig::linux()));
        rfc.on_congestion_event(&loss(ms(1100), ms(1000), 11 * MSS));
        linux.on_congestion_event(&loss(ms(1100), ms(1000), 11 * MSS));
        assert_eq!((rfc.cwnd_bytes(), rfc.metrics().ssthresh_bytes), (6 * MSS, Some(6 * MSS)));
        assert_eq!(
            (linux.cwnd_bytes(), linux.metrics().ssthresh_bytes),
            (20 * MSS, Some(20 * MSS))
        );

        let (mut rfc, mut linux) = (grown(NewRenoConfig::default()), grown(NewRenoConfig::linux()));
        rfc.on_rto(ms(1300));
        linux.on_rto(ms(1300));
        assert_eq!(rfc.metrics().ssthresh_bytes, Some(6 * MSS));
        assert_eq!(linux.metrics().ssthresh_bytes, Some(20 * MSS));
        assert_eq!((rfc.cwnd_bytes(), linux.cwnd_bytes()), (MSS, MSS), "both collapse to 1 SMSS");
    }

    #[test]
    fn slow_start_grows_at_most_two_segments_per_stretch_ack() {
        let mut cc = NewReno::new(params());
        cc.on_ack(&ack(ms(50), ms(0), 8 * MSS));
        assert_eq!(cc.cwnd_bytes(), 12 * MSS, "RFC 3465 L = 2 SMSS");
        let mut unlimited = NewReno::with_config(
            params(),
            NewRenoConfig { abc_limit_segments: u64::MAX, ..Default::default() },
        );
        unlimited.on_ack(&ack(ms(50), ms(0), 8 * MSS));
        assert_eq!(unlimited.cwnd_bytes(), 18 * MSS);
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_hands_the_rest_to_congestion_avoidance() {
        let mut cc = NewReno::new(params());
        cc.on_congestion_event(&loss(ms(10), ms(0), 15 * MSS)); // ssthresh 8, cwnd 8
        cc.on_rto(ms(20)); // ssthresh held (in recovery), cwnd 1
        assert_eq!(cc.metrics().ssthresh_bytes, Some(8 * MSS));
        for i in 0..6 {
            cc.on_ack(&ack(ms(30 + i), ms(21), MSS));
        }
        assert_eq!(cc.cwnd_bytes(), 7 * MSS);
        assert_eq!(cc.metrics().phase, CcPhase::SlowStart);
        // 2 SMSS acked one SMSS below ssthresh: one grows slow start, one counts for CA.
        cc.on_ack(&ack(ms(40), ms(21), 2 * MSS));
        assert_eq!(cc.cwnd_bytes(), 8 * MSS);
        assert_eq!(cc.metrics().phase, CcPhase::CongestionAvoidance);
        assert_eq!(cc.ca_acked_bytes, MSS);
    }

    #[test]
    fn congestion_avoidance_adds_one_segment_per_round_trip() {
        let mut f = AckClock::new(NewReno::new(params()), RTT);
        f.round();
        f.round(); // cwnd 40
        f.lose_one();
        let loss_time = f.now;
        assert_eq!(f.cc.cwnd_bytes(), 20 * MSS);
        f.run_past(loss_time);
        assert_eq!(f.cc.metrics().phase, CcPhase::CongestionAvoidance);
        let start_pkts = f.cwnd_pkts();
        let start = f.now;
        f.run_until(start + RTT * 10);
        let grown = f.cwnd_pkts() - start_pkts;
        assert!((9.0..=11.0).contains(&grown), "grew {grown} segments in 10 RTTs");
    }

    #[test]
    fn loss_halves_the_flight_once_per_recovery_episode() {
        let mut cc = NewReno::new(params());
        for i in 0..30 {
            cc.on_ack(&ack(ms(50), ms(i / 10), MSS));
        }
        assert_eq!(cc.cwnd_bytes(), 40 * MSS);
        cc.on_congestion_event(&loss(ms(60), ms(10), 39 * MSS));
        assert_eq!(cc.cwnd_bytes(), 20 * MSS);
        assert_eq!(cc.metrics().ssthresh_bytes, Some(20 * MSS));
        assert_eq!(cc.metrics().phase, CcPhase::Recovery);
        // More losses from the same flight: same episode, no second reduction.
        cc.on_congestion_event(&loss(ms(61), ms(12), 30 * MSS));
        cc.on_congestion_event(&loss(ms(62), ms(59), 30 * MSS));
        assert_eq!(cc.cwnd_bytes(), 20 * MSS);
        // A packet sent after the episode began is lost: new episode, halve again.
        cc.on_congestion_event(&loss(ms(130), ms(60), 19 * MSS));
        assert_eq!(cc.cwnd_bytes(), 10 * MSS);
    }

    #[test]
    fn acks_of_packets_sent_before_recovery_do_not_grow_the_window() {
        let mut cc = NewReno::new(params());
        cc.on_congestion_event(&loss(ms(100), ms(40), 11 * MSS)); // ssthresh = cwnd = 6
        for _ in 0..20 {
            cc.on_ack(&ack(ms(101), ms(99), MSS));
        }
        assert_eq!(cc.cwnd_bytes(), 6 * MSS);
        assert_eq!(cc.metrics().phase, CcPhase::Recovery);
        // A packet released at the instant of the reduction belongs to the new flight.
        cc.on_ack(&ack(ms(150), ms(100), MSS));
        assert_eq!(cc.metrics().phase, CcPhase::CongestionAvoidance);
        assert_eq!(cc.ca_acked_bytes, MSS, "the ACK ending recovery counts");
        // A late ACK of an old packet after recovery still does not count.
        cc.on_ack(&ack(ms(151), ms(99), MSS));
        assert_eq!(cc.ca_acked_bytes, MSS);
    }

    #[test]
    fn rto_collapses_to_one_segment_and_halves_the_flight() {
        let mut cc = NewReno::new(params());
        for _ in 0..10 {
            cc.on_ack(&ack(ms(50), ms(0), MSS));
        }
        cc.on_sent(ms(50), MSS, 18 * MSS);
        cc.on_rto(ms(1050));
        assert_eq!(cc.cwnd_bytes(), MSS);
        assert_eq!(cc.metrics().ssthresh_bytes, Some(9 * MSS));
        assert_eq!(cc.metrics().phase, CcPhase::Loss);
        // Late ACKs from the dead flight neither grow the window nor end the Loss phase.
        cc.on_ack(&ack(ms(1060), ms(50), MSS));
        assert_eq!((cc.cwnd_bytes(), cc.metrics().phase), (MSS, CcPhase::Loss));
        // Nor does a loss among them reduce again.
        cc.on_congestion_event(&loss(ms(1061), ms(50), 0));
        assert_eq!(cc.metrics().ssthresh_bytes, Some(9 * MSS));
        // A repeated timeout holds ssthresh (RFC 5681 section 3.1).
        cc.on_sent(ms(1061), MSS, MSS);
        cc.on_rto(ms(3061));
        assert_eq!(cc.metrics().ssthresh_bytes, Some(9 * MSS));
        // The first ACK of a packet sent from the timeout on restarts slow start.
        cc.on_ack(&ack(ms(3100), ms(3061), MSS));
        assert_eq!(cc.cwnd_bytes(), 2 * MSS);
        assert_eq!(cc.metrics().phase, CcPhase::SlowStart);
    }

    #[test]
    fn window_never_drops_below_two_segments_after_a_loss() {
        let mut cc = NewReno::new(params());
        for round in 0..10u64 {
            let t = ms(100 * (round + 1));
            cc.on_congestion_event(&loss(t, t - Duration::from_millis(1), 0));
            assert_eq!(cc.cwnd_bytes(), 2 * MSS);
            assert_eq!(cc.metrics().ssthresh_bytes, Some(2 * MSS));
        }
        cc.on_rto(ms(2000));
        cc.on_congestion_event(&loss(ms(2100), ms(2001), 0));
        assert_eq!(cc.cwnd_bytes(), 2 * MSS, "a loss after an RTO lifts the window to 2 SMSS");
    }

    #[test]
    fn acks_of_an_unused_window_do_not_grow_it() {
        // Four packets in flight never fill a ten-packet window, and 10 >= 2 * 4 ends slow
        // start's allowance (Linux `tcp_is_cwnd_limited`).
        let mut f = AckClock::new_app_limited(NewReno::new(params()), RTT, 4);
        f.run_until(ms(1000));
        assert_eq!(f.cc.cwnd_bytes(), 10 * MSS);
        // The ACK of an unused window still ends a recovery episode.
        let mut cc = NewReno::new(params());
        cc.on_congestion_event(&loss(ms(10), ms(0), 9 * MSS));
        let mut a = ack(ms(60), ms(11), MSS);
        a.cwnd_limited = false;
        cc.on_ack(&a);
        assert_eq!(cc.metrics().phase, CcPhase::CongestionAvoidance);
        assert_eq!(cc.cwnd_bytes(), 5 * MSS);
    }

    /// Linux lets slow start grow a window the sender did not fill while it is below twice the
    /// largest flight: six packets in flight grow a ten-packet window to twelve, no further.
    #[test]
    fn slow_start_grows_an_unfilled_window_to_twice_its_largest_flight() {
        let mut f = AckClock::new_app_limited(NewReno::new(params()), RTT, 6);
        f.run_until(ms(1000));
        assert_eq!(f.cc.cwnd_bytes(), 12 * MSS);
    }

    #[test]
    fn undo_restores_the_window_before_a_spurious_reduction_once() {
        let mut cc = NewReno::new(params());
        cc.on_congestion_event(&loss(ms(10), ms(0), 15 * MSS)); // ssthresh 8, cwnd 8
        cc.on_ack(&ack(ms(70), ms(10), MSS)); // episode over, CA
        for _ in 0..8 {
            cc.on_ack(&ack(ms(80), ms(20), MSS));
        }
        let before = (cc.cwnd_bytes(), cc.metrics().ssthresh_bytes);
        assert_eq!(before, (9 * MSS, Some(8 * MSS)));
        cc.on_congestion_event(&loss(ms(100), ms(90), 10 * MSS)); // ssthresh 5, cwnd 5
        cc.on_congestion_event(&loss(ms(101), ms(100), 3 * MSS)); // nested: ssthresh 2
        assert_eq!(cc.cwnd_bytes(), 2 * MSS);
        cc.on_spurious_congestion(ms(120));
        assert_eq!((cc.cwnd_bytes(), cc.metrics().ssthresh_bytes), before);
        assert_eq!(cc.metrics().phase, CcPhase::CongestionAvoidance);
        // Nothing left to undo.
        cc.on_ack(&ack(ms(130), ms(110), MSS));
        let after = cc.metrics();
        cc.on_spurious_congestion(ms(131));
        assert_eq!(cc.metrics(), after);
        // The undone episode is forgotten: a loss from the same flight reduces again.
        cc.on_congestion_event(&loss(ms(140), ms(95), 9 * MSS));
        assert_eq!(cc.cwnd_bytes(), 5 * MSS);
    }

    #[test]
    fn config_validation_names_the_field() {
        assert_eq!(NewRenoConfig::default().abc_limit_segments, 2);
        let err =
            NewRenoConfig { abc_limit_segments: 0, ..Default::default() }.validate().unwrap_err();
        assert_eq!(err.to_string(), "abc_limit_segments: must be at least 1");
    }
}
