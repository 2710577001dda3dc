//! The window machinery every loss-based controller shares: [`ClassicWindow`] keeps `cwnd`
//! and `ssthresh`, recovery episodes, slow start with RFC 3465 byte counting, the RTO
//! collapse, Linux's cwnd-limited rule for growth and Reno-style undo. NewReno ([`super::newreno`]), CUBIC
//! ([`super::cubic`]) and the coupled controllers ([`super::coupled`]) supply only `ssthresh`
//! on a reduction and their congestion-avoidance increase.
//!
//! The model is Linux's `net/ipv4/tcp_cong.c`, whose helpers every loss-based module calls:
//! `tcp_slow_start` is [`ClassicWindow::slow_start`] (RFC 5681 section 3.1 with RFC 3465
//! byte counting, stopping at `ssthresh` and handing the rest of the ACK on); `tcp_cong_avoid_ai`
//! is the additive increase each algorithm keeps beside its own code (NewReno's in
//! `newreno.rs`); `tcp_reno_undo_cwnd` is [`ClassicWindow::undo`]. Reductions follow RFC 5681
//! eq. 4 and RFC 6582's fast recovery, in RFC 9002 section 7.3.2's recovery-episode form.
//! The choices where the sources leave room are documented in [`super::newreno`].

use super::{AckEvent, CcMetrics, CcParams, CcPhase, CongestionEvent};
use crate::path::cwnd_usage;
use crate::time::Instant;

/// RFC 3465 section 2.2: slow start grows by at most L = 2 SMSS per ACK (the largest L allowed).
pub const DEFAULT_ABC_LIMIT_SEGMENTS: u64 = 2;
/// RFC 5681 eq. 4 (and RFC 9438 section 4.6): `ssthresh`, hence the window after a loss, never
/// goes below two segments, so fast retransmit stays possible.
const MIN_WINDOW_SEGMENTS: u64 = 2;
/// RFC 5681 section 3.1: the loss window LW after a retransmission timeout is one segment.
const LOSS_WINDOW_SEGMENTS: u64 = 1;
/// `ssthresh` before the first congestion event: "arbitrarily high" (RFC 5681 section 3.1).
const SSTHRESH_INFINITE_BYTES: u64 = u64::MAX;

/// What a reduction changed, kept to undo it (Linux `prior_cwnd`, `prior_ssthresh`).
#[derive(Clone, Copy, Debug)]
struct WindowUndo {
    prior_cwnd_bytes: u64,
    prior_ssthresh_bytes: u64,
    /// The episode start before the reduction, restored so the undone episode leaves no trace.
    prior_recovery_start: Option<Instant>,
}

/// Which reduction, if any, the window is recovering from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Episode {
    /// No reduction in progress (Linux's `TCP_CA_Open`).
    Open,
    /// Fast recovery after a congestion event.
    Recovery,
    /// After a retransmission timeout.
    Loss,
}

/// The window bookkeeping shared by the loss-based controllers (NewReno, CUBIC, the coupled
/// controllers): `cwnd`,
/// `ssthresh`, recovery episodes, slow start, the RTO collapse and the cwnd-limited rule. The
/// algorithms supply only `ssthresh` on a reduction and their congestion-avoidance increase.
#[derive(Clone, Debug)]
pub(super) struct ClassicWindow {
    pub(super) mss_bytes: u64,
    pub(super) cwnd_bytes: u64,
    /// [`SSTHRESH_INFINITE_BYTES`] until the first reduction.
    ssthresh_bytes: u64,
    /// RFC 3465's L in bytes.
    abc_limit_bytes: u64,
    /// When the current or latest episode began. ACKs of packets sent before it do not grow the
    /// window (RFC 9002 section 7.3.2).
    recovery_start: Option<Instant>,
    episode: Episode,
    /// Charged bytes in flight as the caller last reported them (FlightSize for the RTO).
    in_flight_bytes: u64,
    /// The state before the first reduction from the open state, until undone or replaced by
    /// the next such reduction (Linux `undo_marker` with `prior_cwnd` / `prior_ssthresh`).
    undo: Option<WindowUndo>,
}

impl ClassicWindow {
    pub(super) fn new(params: CcParams, abc_limit_segments: u64) -> Self {
        ClassicWindow {
            mss_bytes: params.mss_bytes,
            cwnd_bytes: params.initial_window_bytes(),
            ssthresh_bytes: SSTHRESH_INFINITE_BYTES,
            abc_limit_bytes: abc_limit_segments.saturating_mul(params.mss_bytes),
            recovery_start: None,
            episode: Episode::Open,
            in_flight_bytes: 0,
            undo: None,
        }
    }

    /// The floor a reduction never goes below: 2 SMSS (RFC 5681 eq. 4).
    pub(super) fn min_window_bytes(&self) -> u64 {
        MIN_WINDOW_SEGMENTS * self.mss_bytes
    }

    /// Charged bytes in flight as last reported (FlightSize for a timeout).
    pub(super) fn in_flight_bytes(&self) -> u64 {
        self.in_flight_bytes
    }

    /// `ssthresh`; [`SSTHRESH_INFINITE_BYTES`] before the first reduction.
    pub(super) fn ssthresh_bytes(&self) -> u64 {
        self.ssthresh_bytes
    }

    /// Sets `ssthresh` directly, for controllers that move it outside a reduction (Vegas leaves
    /// slow start early; OLIA's negative increase lowers the window in congestion avoidance).
    pub(super) fn set_ssthresh_bytes(&mut self, ssthresh_bytes: u64) {
        self.ssthresh_bytes = ssthresh_bytes;
    }

    pub(super) fn on_sent(&mut self, in_flight_bytes: u64) {
        self.in_flight_bytes = in_flight_bytes;
    }

    /// Books an ACK and returns the charged bytes that may grow the window: zero while the ACK
    /// only covers packets sent before the current episode began, or when the sender did not use
    /// its window (Linux `tcp_is_cwnd_limited`: the window filled during the current window of
    /// data, or, in slow start, it is below twice that window's largest flight;
    /// [`crate::path::cwnd_usage`]).
    pub(super) fn on_ack(&mut self, ack: &AckEvent) -> u64 {
        self.in_flight_bytes = ack.in_flight_bytes;
        if self.sent_before_recovery(ack.largest_acked_sent_time) {
            return 0;
        }
        // RFC 9002 section 7.3.2: a packet sent after the episode began was acknowledged.
        self.episode = Episode::Open;
        if !self.window_used(ack) {
            return 0;
        }
        ack.newly_acked_bytes
    }

    /// Whether the sender used this window as `ack` reports it, so that the ACK may grow it
    /// (Linux `tcp_is_cwnd_limited`, [`cwnd_usage::may_grow`]).
    pub(super) fn window_used(&self, ack: &AckEvent) -> bool {
        cwnd_usage::may_grow(
            ack.cwnd_limited,
            ack.max_in_flight_bytes,
            self.cwnd_bytes,
            self.in_slow_start(),
        )
    }

    /// Whether a packet sent at `sent_time` left before the current episode began. A packet sent
    /// at the very instant the episode began counts as sent after it (see the `newreno` module
    /// docs).
    fn sent_before_recovery(&self, sent_time: Instant) -> bool {
        self.recovery_start.is_some_and(|start| sent_time < start)
    }

    /// Books a congestion event; true when it opens a new episode (its newest lost packet was
    /// sent after the current episode began), so the caller must reduce the window.
    pub(super) fn on_congestion_event(&mut self, event: &CongestionEvent) -> bool {
        self.in_flight_bytes = event.in_flight_bytes;
        !self.sent_before_recovery(event.largest_lost_sent_time)
    }

    /// Opens a recovery episode at `now`: `ssthresh` becomes `ssthresh_bytes` (at least 2 SMSS)
    /// and the window drops to it, but never rises and never goes below 2 SMSS.
    pub(super) fn enter_recovery(&mut self, now: Instant, ssthresh_bytes: u64) {
        self.save_undo();
        self.ssthresh_bytes = ssthresh_bytes.max(self.min_window_bytes());
        self.cwnd_bytes = self.cwnd_bytes.min(self.ssthresh_bytes).max(self.min_window_bytes());
        self.recovery_start = Some(now);
        self.episode = Episode::Recovery;
    }

    /// Whether a timeout now should compute a new `ssthresh`: not inside a recovery episode
    /// (already reduced for this congestion) nor after an earlier timeout without progress.
    pub(super) fn recomputes_ssthresh_on_rto(&self) -> bool {
        self.episode == Episode::Open
    }

    /// The retransmission timer fired: `cwnd` collapses to the loss window, `ssthresh` becomes
    /// `ssthresh_bytes` (at least 2 SMSS) or is held when `None`, and a Loss episode begins.
    pub(super) fn enter_loss(&mut self, now: Instant, ssthresh_bytes: Option<u64>) {
        self.save_undo();
        if let Some(ssthresh) = ssthresh_bytes {
            self.ssthresh_bytes = ssthresh.max(self.min_window_bytes());
        }
        self.cwnd_bytes = LOSS_WINDOW_SEGMENTS * self.mss_bytes;
        self.recovery_start = Some(now);
        self.episode = Episode::Loss;
    }

    /// Whether no reduction is in progress: the next reduction saves fresh undo state.
    pub(super) fn is_open(&self) -> bool {
        self.episode == Episode::Open
    }

    /// Linux `tcp_init_undo` / `tcp_init_cwnd_reduction`: remember the window before a
    /// reduction from the open state; a reduction inside an episode keeps the older priors.
    fn save_undo(&mut self) {
        if self.is_open() {
            self.undo = Some(WindowUndo {
                prior_cwnd_bytes: self.cwnd_bytes,
                prior_ssthresh_bytes: self.ssthresh_bytes,
                prior_recovery_start: self.recovery_start,
            });
        }
    }

    /// Linux `tcp_undo_cwnd_reduction` with `tcp_reno_undo_cwnd`: `cwnd = max(cwnd,
    /// prior_cwnd)`, `ssthresh = max(ssthresh, prior_ssthresh)`, and the episode ends (Linux
    /// returns to `TCP_CA_Open`). False when there is nothing to undo.
    pub(super) fn undo(&mut self) -> bool {
        let Some(undo) = self.undo.take() else {
            return false;
        };
        self.cwnd_bytes = self.cwnd_bytes.max(undo.prior_cwnd_bytes);
        self.ssthresh_bytes = self.ssthresh_bytes.max(undo.prior_ssthresh_bytes);
        self.recovery_start = undo.prior_recovery_start;
        self.episode = Episode::Open;
        true
    }

    pub(super) fn in_slow_start(&self) -> bool {
        self.cwnd_bytes < self.ssthresh_bytes
    }

    /// RFC 5681 slow start with RFC 3465 byte counting, stopping at `ssthresh`. Returns the
    /// acknowledged bytes left over for congestion avoidance.
    pub(super) fn slow_start(&mut self, acked_bytes: u64) -> u64 {
        if !self.in_slow_start() {
            return acked_bytes;
        }
        let room = self.ssthresh_bytes - self.cwnd_bytes;
        let increase = acked_bytes.min(self.abc_limit_bytes).min(room);
        self.cwnd_bytes += increase;
        if self.in_slow_start() {
            0
        } else {
            acked_bytes - increase
        }
    }

    pub(super) fn phase(&self) -> CcPhase {
        match self.episode {
            Episode::Recovery => CcPhase::Recovery,
            Episode::Loss => CcPhase::Loss,
            Episode::Open if self.in_slow_start() => CcPhase::SlowStart,
            Episode::Open => CcPhase::CongestionAvoidance,
        }
    }

    pub(super) fn metrics(&self) -> CcMetrics {
        CcMetrics {
            cwnd_bytes: self.cwnd_bytes,
            ssthresh_bytes: (self.ssthresh_bytes != SSTHRESH_INFINITE_BYTES)
                .then_some(self.ssthresh_bytes),
            pacing_rate_bytes_per_s: None,
            bw_estimate_bytes_per_s: None,
            min_rtt: None,
            phase: self.phase(),
        }
    }
}
