//! The data sender of a greedy download: sends while the window allows, processes ACKs, detects
//! losses with RACK-TLP, runs the retransmission timer and paces when the controller asks to.
//!
//! # Sending (RFC 6675 section 5, RFC 5681, Linux `tcp_write_xmit`)
//! A segment may leave when `pipe + len <= cwnd` (or nothing is in the pipe, so a window below
//! one segment cannot stall the connection) and, for new data, when it lies within
//! `snd_una + rwnd_bytes`. Segments marked lost are retransmitted first, lowest first (RFC 6675
//! NextSeg() rule 1, with RACK deciding "lost"), then new data (rule 2).
//!
//! # Proportional Rate Reduction (RFC 6937; Linux `tcp_cwnd_reduction`)
//! With [`TcpSender::with_prr`], the window during fast recovery is not the controller's but
//! PRR's: at each ACK that delivers data, `cwnd = pipe + sndcnt`, where, while the pipe is above
//! `ssthresh` (the controller's reduced window), `sndcnt = ceil(ssthresh * prr_delivered /
//! prior_cwnd) - prr_out`, and at or below it (PRR-SSRB) `sndcnt = min(ssthresh - pipe,
//! max(prr_delivered - prr_out, delivered) + 1 MSS if snd_una advanced and nothing new was
//! lost)`, never below one MSS before the first retransmission. `prior_cwnd` is the window
//! before the reduction (Linux's choice for RFC 6937's RecoverFS), `prr_delivered` what the
//! episode's ACKs delivered and `prr_out` what it sent. So a recovery sends about `ssthresh /
//! prior_cwnd` of what is delivered until the pipe falls to `ssthresh`: the queue that caused
//! the loss drains instead of taking a burst of new data at once. The episode's end (or a
//! timeout) hands the window back to the controller. Linux reduces this way for every
//! controller without its own `cong_control` (Reno, Cubic), not for BBR.
//!
//! # Pacing (Linux `tcp_update_skb_after_send`, `tcp_pacing_check`)
//! When the controller returns a pacing rate, each departure pushes the next release time
//! forward by `len / rate`, where `len` is the payload (Linux `skb->len`, the same unit the
//! controller is charged in). After an idle period up to half of that spacing is forgiven, as
//! Linux's `credit` does. The first [`PACING_EXEMPT_SEGMENTS`] data segments are not paced
//! (Linux: `tp->data_segs_out >= 10`). `poll_timeout` exposes the release time while a segment
//! is waiting for it.
//!
//! # ACK processing (call order of `braid_core::cc`)
//! 1. the cumulative ACK removes segments from the scoreboard; SACK blocks, sorted ascending,
//!    mark new segments SACKed (only the parts not already SACKed are visited);
//! 2. each newly delivered segment feeds the delivery-rate estimator and RACK; the RTT sample is
//!    taken from the most recently sent newly delivered segment that was never retransmitted
//!    (Karn's algorithm, RFC 6298 section 3; Linux's `ca_rtt_us`). When no such segment is
//!    newly delivered (all were retransmitted, or the ACK only moves `snd_una` over SACKed ones)
//!    and the ACK advances `snd_una`, the sample is `now - TSecr` instead (RFC 7323 section 4,
//!    RTTM: the echoed TSval names the transmission that was acknowledged; Linux
//!    `tcp_ack_update_rtt` with timestamps on, its default), and the controller gets it too
//!    (`ca_rtt_us` is set to it);
//! 3. recovery ends once `snd_una` reaches the recovery point (RFC 6675 section 5);
//! 4. RACK declares losses (RFC 8985 section 6.2); the first loss outside recovery starts a
//!    recovery episode whose point is `snd_nxt`. Every batch of new losses is reported through
//!    `on_congestion_event` (the controllers ignore repeats from the same episode by comparing
//!    `largest_lost_sent_time` with their recovery start), then `on_ack` reports the ACK.
//!
//! # Undo of spurious recoveries (Linux `tcp_try_undo_partial` / `tcp_try_undo_recovery`)
//! Reordering beyond RACK's window makes segments look lost that are only late. Without DSACK
//! the model uses Linux's other test, `tcp_packet_delayed`, with TCP timestamps (RFC 7323, on
//! by default in Linux): `retrans_stamp` is the send time of the episode's first
//! retransmission, and an ACK whose TSecr is older than it was triggered by an original
//! transmission, so the hole it filled was reordering, not loss. Entering recovery arms the
//! undo (Linux `tcp_init_undo`: `undo_marker`); an RTO disarms it. The episode is undone
//! ([`Controller::on_spurious_congestion`], Linux `tcp_undo_cwnd_reduction`; the episode ends as
//! Linux returns to `TCP_CA_Open`) on the first ACK that either
//! - finds every segment marked lost delivered by its original while nothing was retransmitted
//!   (`retrans_stamp == 0`); the sender counts the episode's lost segments still undelivered in
//!   one counter, so the check is O(1) per ACK; or
//! - advances `snd_una` with a TSecr older than `retrans_stamp` while no retransmission is in
//!   flight (`tcp_try_undo_partial` undoes only when `retrans_out` is zero, whatever is still
//!   marked lost). As Linux's undo (`tcp_undo_cwnd_reduction` with `unmark_loss`), it clears
//!   every lost mark: the segments still marked are counted in flight again and are not
//!   retransmitted; a real loss among them is found again by RACK. So after a reordering that
//!   made hundreds of segments look lost at one SACK, the sender retransmits only until the
//!   cumulative ACKs of the late originals overtake its retransmissions, then stops.
//!
//! A segment marked lost and then acknowledged or SACKed leaves the scoreboard's lost count as
//! it is delivered, so the pipe stays exact. An episode that ends without either proof is not
//! undone.
//!
//! # Timers
//! - RTO (RFC 6298 section 5): started when data leaves and none is outstanding, restarted when
//!   an ACK advances `snd_una`, doubled on every expiry (section 5.5) and reset to the estimator's
//!   value when new data is acknowledged. On expiry everything outstanding and not SACKed is
//!   lost (Linux `tcp_enter_loss`), the controller is told (`on_rto`), and retransmission starts
//!   from `snd_una`. As in Linux (`tcp_xmit_retransmit_queue`), retransmitting `snd_una` during
//!   fast recovery restarts the timer, so a long recovery is not cut short by a spurious RTO.
//! - RACK reordering timer (RFC 8985 section 6.3).
//! - TLP (RFC 8985 section 7): armed after new data leaves or `snd_una` advances, outside
//!   recovery and while nothing is SACKed (Linux: only in the Open state), PTO = 2 SRTT (+200 ms
//!   with one segment in flight), capped by the RTO. The probe is one new segment if the
//!   receive window allows, else the last segment sent; it ignores the congestion window (Linux
//!   `push_one = 2`). One probe per episode.
//! - pacing release time, while a paced segment waits.

use std::time::Duration;

use braid_core::cc::{AckEvent, CcMetrics, CongestionEvent, Controller};
use braid_core::path::rtt::MAX_RTO;
use braid_core::path::{CwndUsage, DeliveryRateEstimator, RttEstimator};
use braid_core::time::{duration_nanos, transmission_time, Instant};

use super::rack::{LossBatch, Rack, Tlp, TlpAckOutcome};
use super::scoreboard::{Scoreboard, SegState};
use super::{Ack, SackBlock, Segment, TcpConfig, MAX_SACK_BLOCKS};

/// Linux `tcp_update_skb_after_send`: the first data segments leave unpaced (`data_segs_out >=
/// 10` before pacing applies), so the initial window goes out as one burst.
pub const PACING_EXEMPT_SEGMENTS: u64 = 10;
/// RFC 6298 section 5.5 doubles the RTO per expiry; with a 200 ms floor, 2^9 already exceeds
/// the 60 s cap (`MAX_RTO`), so the exponent stops growing here.
pub const MAX_RTO_BACKOFF_EXPONENT: u32 = 10;

/// Loss-recovery state (Linux `icsk_ca_state`, reduced to what the model needs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Recovery {
    Open,
    /// Fast recovery after RACK-detected loss, until `snd_una` reaches `point` (RFC 6675).
    Fast {
        point: u64,
    },
    /// After an RTO, until `snd_una` reaches `point` (Linux `TCP_CA_Loss`).
    Rto {
        point: u64,
    },
}

/// A snapshot of the sender, for traces and scenario results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpSenderMetrics {
    pub cwnd_bytes: u64,
    /// RFC 6675 pipe in charged bytes (payload; one MSS per segment for a stream).
    pub in_flight_bytes: u64,
    /// Charged bytes between `snd_una` and `snd_nxt`, SACKed and lost ones included.
    pub outstanding_bytes: u64,
    /// Payload bytes cumulatively acknowledged.
    pub bytes_acked: u64,
    pub srtt: Option<Duration>,
    pub min_rtt: Option<Duration>,
    /// Current retransmission timeout, backoff included.
    pub rto: Duration,
    pub pacing_rate_bytes_per_s: Option<u64>,
    /// Data segments transmitted, retransmissions included.
    pub segments_sent: u64,
    /// Retransmitted segments (RACK, RTO and TLP retransmissions).
    pub retransmissions: u64,
    /// Segments declared lost (RACK and RTO).
    pub lost_segments: u64,
    pub rto_count: u64,
    pub tlp_count: u64,
    /// Fast-recovery episodes entered, plus losses repaired by a TLP retransmission.
    pub congestion_events: u64,
    /// Fast-recovery episodes found spurious and undone (a subset of `congestion_events`).
    pub spurious_recoveries: u64,
    pub in_recovery: bool,
    pub reordering_seen: bool,
    pub cc: CcMetrics,
}

/// What one ACK delivered, accumulated while walking the newly delivered segments.
#[derive(Clone, Copy, Debug, Default)]
struct Delivered {
    bytes: u64,
    /// Most recently sent newly delivered segment: (sent time, seq, sent while app-limited).
    newest: Option<(Instant, u64, bool)>,
    /// Send time of the most recently sent newly delivered segment never retransmitted.
    rtt_sent_time: Option<Instant>,
}

impl Delivered {
    /// The ACK's RTT sample (Linux `ca_rtt_us`): from [`Self::rtt_sent_time`], else, when the
    /// ACK advanced `snd_una`, from its TSecr (Linux `tcp_ack_update_rtt`: `seq_rtt_us < 0`,
    /// `rcv_tsecr != 0` and `FLAG_ACKED`). A zero TSecr is Linux's "none echoed".
    fn rtt_sample(&self, now: Instant, una_advanced: bool, ts_ecr: Instant) -> Option<Duration> {
        let from_timestamp = (una_advanced && ts_ecr > Instant::ZERO).then_some(ts_ecr);
        self.rtt_sent_time.or(from_timestamp).map(|t| now.saturating_since(t))
    }
}

/// The undo state of a fast-recovery episode that may still prove spurious (Linux
/// `undo_marker` while `retrans_stamp == 0`).
#[derive(Clone, Copy, Debug)]
struct UndoArmed {
    /// Segments marked lost in the episode and not yet delivered by their original.
    lost_undelivered: u64,
}

/// The sending end of a greedy download ([`TcpSender::new`]) or of a byte stream an
/// application writes into over time ([`TcpSender::stream`]).
#[derive(Debug)]
pub struct TcpSender {
    config: TcpConfig,
    /// Bytes there are to send: the download's size, or what the application has written.
    limit_bytes: u64,
    /// A stream: more bytes may be written, and the sender is never complete.
    stream: bool,
    /// Payload bytes of segments `0..nxt` (Linux `snd_nxt` as a byte count).
    sent_bytes: u64,
    /// Payload bytes of segments `0..una` (`snd_una`).
    acked_bytes: u64,
    cc: Box<dyn Controller>,
    board: Scoreboard,
    rack: Rack,
    tlp: Tlp,
    rtt: RttEstimator,
    rate: DeliveryRateEstimator,
    /// Whether the window was used, for the controller's growth (Linux `tcp_cwnd_validate`).
    usage: CwndUsage,
    recovery: Recovery,
    rto_deadline: Option<Instant>,
    rto_backoff: u32,
    reo_deadline: Option<Instant>,
    /// Earliest departure of the next paced segment (Linux `tcp_wstamp_ns`).
    next_send_time: Instant,
    /// The last `poll_transmit` held a sendable segment back for pacing.
    pacing_blocked: bool,
    segments_sent: u64,
    retransmissions: u64,
    lost_segments: u64,
    rto_count: u64,
    tlp_count: u64,
    congestion_events: u64,
    spurious_recoveries: u64,
    /// Set while the current fast-recovery episode may still prove spurious.
    undo: Option<UndoArmed>,
    /// Send time of the first retransmission since the sender was last clean (Linux
    /// `retrans_stamp`).
    retrans_stamp: Option<Instant>,
    /// Proportional Rate Reduction in fast recovery (module documentation).
    prr_enabled: bool,
    /// PRR's state while a fast-recovery episode lasts.
    prr: Option<Prr>,
}

/// RFC 6937's state for one fast-recovery episode, in charged bytes (Linux `prior_cwnd`,
/// `prr_delivered`, `prr_out`, and the window it last set).
#[derive(Clone, Copy, Debug)]
struct Prr {
    prior_cwnd: u64,
    delivered: u64,
    out: u64,
    cwnd: u64,
}

impl TcpSender {
    pub fn new(config: TcpConfig, cc: Box<dyn Controller>) -> Self {
        Self::with_limit(config, cc, config.total_bytes, false)
    }

    /// The sending end of a byte stream (a tunnel path's TCP connection): nothing to send until
    /// [`TcpSender::write`]. Segments are cut when they first leave, of at most one MSS from
    /// what is written and not yet sent (Linux `tcp_sendmsg` appends to the unsent tail, and
    /// with `TCP_NODELAY` a short tail leaves at once when the window allows); a retransmission
    /// repeats its segment's bytes. `config.total_bytes` is not read.
    ///
    /// A stream counts packets, as Linux does: every segment, short or full, takes one MSS of
    /// the window and of the pipe, and is one MSS of acknowledged, lost and delivered bytes for
    /// the controller and the delivery rate (Linux keeps `snd_cwnd`, `packets_out` and
    /// `delivered` in segments; `tcp_cwnd_test` compares packets). A writer of frames a little
    /// longer than the MSS sends a short segment after each full one, so counting bytes would
    /// let about twice as many packets into a packet-counted bottleneck queue as Linux does
    /// (docs/validation.md). A download's segments are all full but its last, so it keeps
    /// counting bytes.
    pub fn stream(config: TcpConfig, cc: Box<dyn Controller>) -> Self {
        Self::with_limit(config, cc, 0, true)
    }

    /// What a segment of `len` payload bytes counts for ([`SegState::charge_bytes`]).
    fn charge(&self, len: u32) -> u32 {
        if self.stream {
            self.config.mss_bytes
        } else {
            len
        }
    }

    fn with_limit(config: TcpConfig, cc: Box<dyn Controller>, limit: u64, stream: bool) -> Self {
        let window = config.window_segments();
        TcpSender {
            config,
            limit_bytes: limit,
            stream,
            sent_bytes: 0,
            acked_bytes: 0,
            cc,
            board: Scoreboard::new(window),
            rack: Rack::new(window),
            tlp: Tlp::default(),
            rtt: if config.linux_rto {
                RttEstimator::linux(config.min_rto)
            } else {
                RttEstimator::new(config.min_rto)
            },
            rate: DeliveryRateEstimator::new(),
            usage: CwndUsage::new(),
            recovery: Recovery::Open,
            rto_deadline: None,
            rto_backoff: 0,
            reo_deadline: None,
            next_send_time: Instant::ZERO,
            pacing_blocked: false,
            segments_sent: 0,
            retransmissions: 0,
            lost_segments: 0,
            rto_count: 0,
            tlp_count: 0,
            congestion_events: 0,
            spurious_recoveries: 0,
            undo: None,
            retrans_stamp: None,
            prr_enabled: false,
            prr: None,
        }
    }

    /// Reduces the window in fast recovery by Proportional Rate Reduction (module
    /// documentation), as Linux does for controllers without their own `cong_control`.
    pub fn with_prr(mut self, on: bool) -> Self {
        self.prr_enabled = on;
        self
    }

    /// The window the sender obeys: PRR's during a fast-recovery episode, else the
    /// controller's.
    fn cwnd(&self) -> u64 {
        self.prr.map_or_else(|| self.cc.cwnd_bytes(), |p| p.cwnd)
    }

    /// Every byte of a download has been cumulatively acknowledged (a stream never completes).
    pub fn is_complete(&self) -> bool {
        !self.stream && self.acked_bytes >= self.limit_bytes
    }

    /// Appends `bytes` to a stream's send queue.
    pub fn write(&mut self, bytes: u64) {
        debug_assert!(self.stream, "only a stream takes writes");
        self.limit_bytes += bytes;
    }

    /// Bytes written and not yet cumulatively acknowledged (what `ss` shows as Send-Q).
    pub fn unacked_bytes(&self) -> u64 {
        self.limit_bytes - self.acked_bytes
    }

    /// Bytes written and never sent (Linux `tcpi_notsent_bytes`).
    pub fn notsent_bytes(&self) -> u64 {
        self.limit_bytes - self.sent_bytes
    }

    /// Bytes cumulatively acknowledged.
    pub fn acked_bytes(&self) -> u64 {
        self.acked_bytes
    }

    /// Bytes written into a stream so far (a download's size).
    pub fn written_bytes(&self) -> u64 {
        self.limit_bytes
    }

    /// The RTT variation of RFC 6298 (Linux `tcpi_rttvar`).
    pub fn rttvar(&self) -> Duration {
        self.rtt.rttvar()
    }

    pub fn config(&self) -> &TcpConfig {
        &self.config
    }

    /// The congestion controller, for traces.
    pub fn controller(&self) -> &dyn Controller {
        self.cc.as_ref()
    }

    pub fn metrics(&self) -> TcpSenderMetrics {
        TcpSenderMetrics {
            cwnd_bytes: self.cwnd(),
            in_flight_bytes: self.board.pipe(),
            outstanding_bytes: self.board.outstanding_bytes(),
            bytes_acked: self.acked_bytes,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            rto: self.rto(),
            pacing_rate_bytes_per_s: self.cc.pacing_rate_bytes_per_s(),
            segments_sent: self.segments_sent,
            retransmissions: self.retransmissions,
            lost_segments: self.lost_segments,
            rto_count: self.rto_count,
            tlp_count: self.tlp_count,
            congestion_events: self.congestion_events,
            spurious_recoveries: self.spurious_recoveries,
            in_recovery: self.recovery != Recovery::Open,
            reordering_seen: self.rack.reordering_seen(),
            cc: self.cc.metrics(),
        }
    }

    // ---------------------------------------------------------------- sending

    /// The next segment to put on the wire now, if any; call until `None`.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Segment> {
        self.pacing_blocked = false;
        if self.is_complete() {
            return None;
        }
        if self.tlp.probe_pending {
            self.tlp.probe_pending = false;
            if let Some(seg) = self.send_probe(now) {
                return Some(seg);
            }
        }
        let pipe = self.board.pipe();
        let cwnd = self.cwnd();
        let (seq, retransmission) = if let Some(seq) = self.board.next_to_retransmit() {
            (seq, true)
        } else if self.new_data_allowed() {
            (self.board.nxt(), false)
        } else {
            // Application-limited only once everything is sent (draft-cheng-iccrg-delivery-rate-
            // estimation 3.4; Linux `tcp_rate_check_app_limited` requires an empty write queue).
            // A full receive window is not: data is waiting, and with a hole at snd_una the
            // window stays full through a whole recovery; marking it would make every rate
            // sample app-limited until a window's worth more was delivered, and the controller
            // would not grow (a 25 s stall at cwnd 1 after an RTO, found in the Pieska et al. 2024
            // matrix).
            if self.sent_bytes >= self.limit_bytes
                && pipe + u64::from(self.config.mss_bytes) <= cwnd
            {
                self.rate.on_app_limited(pipe);
            }
            return None;
        };
        let len = self.segment_len(seq);
        if pipe > 0 && pipe + u64::from(self.charge(len)) > cwnd {
            // Data waits for the window: Linux's transmission pass records a cwnd-limited
            // window even when it sends nothing (`tcp_write_xmit`).
            self.note_window_use(cwnd);
            return None;
        }
        if self.pacing_rate().is_some() && now < self.next_send_time {
            self.pacing_blocked = true;
            return None;
        }
        Some(self.transmit(now, seq, retransmission, false))
    }

    /// New data may be sent: some is left and it fits in `snd_una + rwnd`.
    fn new_data_allowed(&self) -> bool {
        let len = self.new_segment_len();
        len > 0 && self.sent_bytes + u64::from(len) - self.acked_bytes <= self.config.rwnd_bytes
    }

    /// Payload bytes of the next new segment: one MSS, or what is left.
    fn new_segment_len(&self) -> u32 {
        (self.limit_bytes - self.sent_bytes).min(u64::from(self.config.mss_bytes)) as u32
    }

    /// Payload bytes of segment `seq`: fixed when it first left, or the next new one's.
    fn segment_len(&self, seq: u64) -> u32 {
        if seq < self.board.nxt() {
            self.board.get(seq).len_bytes
        } else {
            self.new_segment_len()
        }
    }

    fn pacing_rate(&self) -> Option<u64> {
        self.cc.pacing_rate_bytes_per_s().filter(|&r| r > 0)
    }

    /// Puts segment `seq` on the wire and does the bookkeeping of a departure.
    fn transmit(&mut self, now: Instant, seq: u64, retransmission: bool, probe: bool) -> Segment {
        let len = self.segment_len(seq);
        // Linux `tcp_rate_skb_sent` restarts the sampling clocks when `packets_out` is zero;
        // the flight the segment joins is the pipe plus itself (`tx.in_flight`).
        let charge = self.charge(len);
        let tx_in_flight = self.board.pipe() + u64::from(charge);
        let info = self.rate.on_sent(now, self.board.outstanding_bytes(), tx_in_flight);
        if retransmission {
            self.board.on_retransmit(seq, info);
            self.rack.on_retransmit(seq, now);
            self.retransmissions += 1;
            self.retrans_stamp.get_or_insert(now);
            if seq == self.board.una() && matches!(self.recovery, Recovery::Fast { .. }) {
                self.rto_deadline = Some(now + self.rto());
            }
        } else {
            debug_assert_eq!(seq, self.board.nxt());
            self.board.push_new(len, charge, info);
            self.sent_bytes += u64::from(len);
            self.note_window_use(self.cwnd());
        }
        if let Some(prr) = self.prr.as_mut() {
            prr.out += u64::from(charge);
        }
        self.segments_sent += 1;
        self.cc.on_sent(now, u64::from(charge), self.board.pipe());
        // RFC 6298 section 5.1: start the timer if it is not running.
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto());
        }
        self.advance_pacing(now, len);
        // RFC 8985 section 7.2: (re)arm the PTO after sending new data that is not a probe.
        if !retransmission && !probe {
            self.schedule_tlp(now);
        }
        Segment { seq, len_bytes: len, retransmission, ts_val: now }
    }

    /// Linux `tcp_cwnd_validate` after a transmission pass ([`CwndUsage`]).
    fn note_window_use(&mut self, cwnd: u64) {
        let mss = u64::from(self.config.mss_bytes);
        self.usage.on_sent(self.board.pipe(), cwnd, mss, self.board.una(), self.board.nxt());
    }

    /// Linux `tcp_update_skb_after_send`: the next release is one payload-transmission time at
    /// the pacing rate after this one, minus up to half of it as credit for idle time.
    fn advance_pacing(&mut self, now: Instant, len: u32) {
        let Some(rate) = self.pacing_rate() else {
            return;
        };
        if self.segments_sent < PACING_EXEMPT_SEGMENTS {
            return;
        }
        let prior = self.next_send_time;
        let start = prior.max(now);
        let credit_ns = start.nanos_since(prior);
        let len_ns = duration_nanos(transmission_time(u64::from(len), rate));
        self.next_send_time = start.add_nanos(len_ns - credit_ns.min(len_ns / 2));
    }

    /// RFC 8985 section 7.3, TLP_send_probe.
    fn send_probe(&mut self, now: Instant) -> Option<Segment> {
        let seg = if self.new_data_allowed() {
            self.tlp.is_retrans = false;
            Some(self.transmit(now, self.board.nxt(), false, true))
        } else {
            let last = self.board.nxt().checked_sub(1).filter(|&s| s >= self.board.una());
            match last {
                Some(seq) if !self.board.get(seq).sacked => {
                    let s = *self.board.get(seq);
                    self.tlp.is_retrans = true;
                    self.tlp.repaired_sent_time = s.xmit_time();
                    self.tlp.repaired_charge_bytes = s.charge_bytes;
                    Some(self.transmit(now, seq, true, true))
                }
                _ => None,
            }
        };
        if seg.is_some() {
            self.tlp.end_seq = Some(self.board.nxt());
            self.tlp_count += 1;
        }
        // "After attempting to send a loss probe, regardless of whether a loss probe was sent,
        // the sender MUST re-arm the RTO timer, not the PTO timer, if FlightSize is not zero."
        if self.board.outstanding_segments() > 0 {
            self.rto_deadline = Some(now + self.rto());
        }
        seg
    }

    // ---------------------------------------------------------------- ACKs

    /// Processes an ACK from the receiver.
    pub fn handle_ack(&mut self, now: Instant, ack: &Ack) {
        if ack.cum_ack > self.board.nxt() {
            // Acknowledges data never sent (RFC 9293 section 3.10.7.4): ignore.
            return;
        }
        let prior_in_flight = self.board.pipe();
        let prior_una = self.board.una();
        let min_rtt = self.rtt.min_rtt();
        let mut delivered = Delivered::default();
        self.rack.begin_ack();

        // Cumulatively acknowledged segments, lowest first.
        while self.board.una() < ack.cum_ack {
            let Some((seq, s)) = self.board.pop_acked() else {
                break;
            };
            self.acked_bytes += u64::from(s.len_bytes);
            if !s.sacked {
                self.on_delivered(now, seq, &s, min_rtt, &mut delivered);
            }
        }
        self.board.trim_sacked_ranges();

        // SACK blocks in ascending order (RACK_detect_reordering wants ascending end_seq).
        let mut blocks = [SackBlock::default(); MAX_SACK_BLOCKS];
        let n = ack.sack_blocks().len();
        blocks[..n].copy_from_slice(ack.sack_blocks());
        blocks[..n].sort_unstable();
        for b in &blocks[..n] {
            let start = b.start.max(self.board.una());
            let end = b.end.min(self.board.nxt());
            if start >= end {
                continue;
            }
            let mut pos = start;
            while let Some((gap_start, gap_end)) = self.board.next_unsacked_gap(pos, end) {
                for seq in gap_start..gap_end {
                    let s = self.board.mark_sacked(seq);
                    self.on_delivered(now, seq, &s, min_rtt, &mut delivered);
                }
                pos = gap_end;
            }
            self.board.insert_sacked_range(start, end);
        }

        let was_recovering = self.recovery != Recovery::Open;
        let una_advanced = self.board.una() > prior_una;
        let rtt_sample = delivered.rtt_sample(now, una_advanced, ack.ts_ecr);
        if let Some(r) = rtt_sample {
            self.rtt.update(r);
        }

        // RFC 6675 section 5: recovery ends once the recovery point is cumulatively acked.
        let episode_ended = match self.recovery {
            Recovery::Fast { point } | Recovery::Rto { point } if self.board.una() >= point => {
                self.recovery = Recovery::Open;
                true
            }
            _ => false,
        };
        self.check_spurious_recovery(now, episode_ended, una_advanced, ack.ts_ecr);
        if was_recovering && self.recovery == Recovery::Open {
            self.rack.on_recovery_exit();
        }
        self.rack.on_ack_dsack(ack.dsack, self.board.una(), self.board.nxt());

        // RFC 8985 section 7.4: did an outstanding loss probe repair a loss?
        if self.tlp.on_ack(self.board.una(), delivered.bytes > 0) == TlpAckOutcome::RepairedLoss {
            self.congestion_events += 1;
            self.cc.on_congestion_event(&CongestionEvent {
                now,
                largest_lost_sent_time: self.tlp.repaired_sent_time,
                lost_bytes: u64::from(self.tlp.repaired_charge_bytes),
                in_flight_bytes: self.board.pipe(),
            });
        }

        let mut lost = LossBatch::default();
        self.detect_losses(now, &mut lost);

        // RFC 6298 sections 5.2 and 5.3; the backoff ends with new data acknowledged.
        if una_advanced {
            self.rto_backoff = 0;
            self.rto_deadline = (self.board.outstanding_segments() > 0).then(|| now + self.rto());
        }

        if !lost.is_empty() {
            self.on_losses(now, &lost);
        }
        if self.recovery == Recovery::Open {
            self.prr = None;
        }
        self.prr_on_ack(delivered.bytes, una_advanced && lost.is_empty());
        let rate = self.rate.take_sample(self.rtt.min_rtt());
        let (largest_acked_sent_time, app_limited) =
            delivered.newest.map_or((Instant::ZERO, false), |(t, _, a)| (t, a));
        self.cc.on_ack(&AckEvent {
            now,
            newly_acked_bytes: delivered.bytes,
            newly_lost_bytes: lost.bytes,
            largest_acked_sent_time,
            rtt: rtt_sample,
            min_rtt: self.rtt.min_rtt(),
            prior_in_flight_bytes: prior_in_flight,
            in_flight_bytes: self.board.pipe(),
            delivered_bytes: self.rate.delivered(),
            rate,
            app_limited,
            cwnd_limited: self.usage.is_cwnd_limited(),
            max_in_flight_bytes: self.usage.max_in_flight_bytes(),
        });

        // RFC 8985 section 7.2: re-arm the PTO on a cumulative ACK of new data; drop it when
        // it may not run (recovery, SACKed data).
        if una_advanced {
            self.schedule_tlp(now);
        } else if !self.tlp_allowed() {
            self.tlp.deadline = None;
        }
    }

    /// Bookkeeping for one newly delivered (cumulatively or selectively acknowledged) segment.
    fn on_delivered(
        &mut self,
        now: Instant,
        seq: u64,
        s: &SegState,
        min_rtt: Option<Duration>,
        d: &mut Delivered,
    ) {
        d.bytes += u64::from(s.charge_bytes);
        if s.lost && !s.ever_retransmitted {
            // Marked lost, yet its original arrived: the loss was reordering.
            if let Some(undo) = self.undo.as_mut() {
                undo.lost_undelivered = undo.lost_undelivered.saturating_sub(1);
            }
        }
        self.rate.on_delivered(now, u64::from(s.charge_bytes), &s.rate);
        self.rack.on_delivered(seq, s, now, min_rtt);
        let t = s.xmit_time();
        if d.newest.is_none_or(|(nt, ns, _)| t > nt || (t == nt && seq > ns)) {
            d.newest = Some((t, seq, s.rate.is_app_limited));
        }
        if !s.ever_retransmitted && d.rtt_sent_time.is_none_or(|rt| t > rt) {
            d.rtt_sent_time = Some(t);
        }
    }

    /// Linux `tcp_try_undo_partial` / `tcp_try_undo_recovery` with `tcp_packet_delayed`: see
    /// the module docs. Called once per ACK after its deliveries, before new losses.
    fn check_spurious_recovery(
        &mut self,
        now: Instant,
        episode_ended: bool,
        una_advanced: bool,
        ts_ecr: Instant,
    ) {
        if let Some(undo) = self.undo {
            self.try_undo(now, undo, episode_ended, una_advanced, ts_ecr);
        }
        // Linux clears `retrans_stamp` once no retransmission is outstanding in the Open state.
        if self.recovery == Recovery::Open && self.board.retrans_in_flight_bytes() == 0 {
            self.retrans_stamp = None;
        }
    }

    fn try_undo(
        &mut self,
        now: Instant,
        undo: UndoArmed,
        episode_ended: bool,
        una_advanced: bool,
        ts_ecr: Instant,
    ) {
        let delayed = match self.retrans_stamp {
            None => undo.lost_undelivered == 0,
            Some(stamp) => {
                una_advanced
                    && ts_ecr < stamp
                    && self.board.retrans_in_flight_bytes() == 0
                    && (self.config.linux_undo || self.board.lost_bytes() == 0)
            }
        };
        if delayed {
            if self.config.linux_undo {
                self.board.unmark_lost();
            }
            self.undo = None;
            self.spurious_recoveries += 1;
            self.recovery = Recovery::Open;
            self.rack.note_reordering();
            self.cc.on_spurious_congestion(now);
        } else if episode_ended {
            self.undo = None;
        }
    }

    /// Runs RACK loss detection and arms the reordering timer.
    fn detect_losses(&mut self, now: Instant, lost: &mut LossBatch) {
        let reo_wnd = self.rack.reo_wnd(
            self.recovery != Recovery::Open,
            self.board.sacked_segments(),
            self.rtt.min_rtt(),
            self.rtt.srtt(),
        );
        self.reo_deadline = self.rack.detect_loss(&mut self.board, now, reo_wnd, lost);
    }

    /// New losses: start a recovery episode if none is running and tell the controller.
    fn on_losses(&mut self, now: Instant, lost: &LossBatch) {
        self.lost_segments += lost.segments;
        self.rate.on_lost(lost.bytes);
        let opens_episode = self.recovery == Recovery::Open;
        let prior_cwnd = self.cc.cwnd_bytes();
        if opens_episode {
            self.recovery = Recovery::Fast { point: self.board.nxt() };
            self.congestion_events += 1;
            self.tlp.reset();
            // Linux `tcp_init_undo`.
            self.undo = Some(UndoArmed { lost_undelivered: 0 });
        }
        if let Some(undo) = self.undo.as_mut() {
            undo.lost_undelivered += lost.segments;
        }
        self.cc.on_congestion_event(&CongestionEvent {
            now,
            largest_lost_sent_time: lost.largest_sent_time,
            lost_bytes: lost.bytes,
            in_flight_bytes: self.board.pipe(),
        });
        if opens_episode && self.prr_enabled {
            // Linux `tcp_init_cwnd_reduction`: the window before, nothing delivered or sent.
            self.prr = Some(Prr { prior_cwnd, delivered: 0, out: 0, cwnd: self.cc.cwnd_bytes() });
        }
    }

    /// RFC 6937 section 3.1 on an ACK of a fast-recovery episode that delivered `delivered`
    /// charged bytes (Linux `tcp_cwnd_reduction`; `una_clean`: `snd_una` advanced and the ACK
    /// found no new loss, Linux's `FLAG_SND_UNA_ADVANCED && !newly_lost`).
    fn prr_on_ack(&mut self, delivered: u64, una_clean: bool) {
        // Outside an episode (every ACK of an open connection) nothing to do: check first, the
        // controller's metrics are not free.
        if !self.prr.is_some_and(|p| delivered > 0 && p.prior_cwnd > 0) {
            return;
        }
        let ssthresh = self.cc.metrics().ssthresh_bytes.unwrap_or_else(|| self.cc.cwnd_bytes());
        let pipe = self.board.pipe();
        let mss = u64::from(self.config.mss_bytes);
        let Some(prr) = self.prr.as_mut() else { return };
        prr.delivered += delivered;
        let sndcnt = if pipe > ssthresh {
            // Proportional part: ceil(ssthresh * prr_delivered / prior_cwnd) - prr_out.
            (ssthresh * prr.delivered).div_ceil(prr.prior_cwnd).saturating_sub(prr.out)
        } else {
            // Slow-start reduction bound (PRR-SSRB).
            let limit = prr.delivered.saturating_sub(prr.out).max(delivered)
                + if una_clean { mss } else { 0 };
            limit.min(ssthresh - pipe)
        };
        // Linux forces the first retransmission of the episode out.
        let sndcnt = sndcnt.max(if prr.out == 0 { mss } else { 0 });
        prr.cwnd = pipe + sndcnt;
    }

    // ---------------------------------------------------------------- timers

    /// The current RTO with exponential backoff (RFC 6298 sections 2 and 5.5), at most 60 s.
    fn rto(&self) -> Duration {
        self.rtt.rto().saturating_mul(1 << self.rto_backoff).min(MAX_RTO)
    }

    /// Whether a loss probe may be scheduled (RFC 8985 section 7.2; Linux: `TCP_CA_Open`).
    fn tlp_allowed(&self) -> bool {
        self.recovery == Recovery::Open
            && self.tlp.end_seq.is_none()
            && self.board.sacked_segments() == 0
            && self.board.outstanding_segments() > 0
    }

    /// RFC 8985 section 7.2: arms the PTO, capped by the RTO deadline.
    fn schedule_tlp(&mut self, now: Instant) {
        self.tlp.deadline = None;
        if !self.tlp_allowed() {
            return;
        }
        let pto = Tlp::pto(self.rtt.srtt(), self.board.outstanding_segments());
        let at = now + pto;
        self.tlp.deadline = Some(self.rto_deadline.map_or(at, |rto| at.min(rto)));
    }

    /// The earliest instant at which [`Self::handle_timeout`] has work: RTO, RACK reordering
    /// timer, loss probe, or the release of a paced segment.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let pacing = self.pacing_blocked.then_some(self.next_send_time);
        [self.rto_deadline, self.reo_deadline, self.tlp.deadline, pacing]
            .into_iter()
            .flatten()
            .min()
    }

    /// Runs the timers due at `now`; transmissions follow through `poll_transmit`.
    pub fn handle_timeout(&mut self, now: Instant) {
        let rto_due = self.rto_deadline.is_some_and(|t| t <= now);
        if let Some(pto) = self.tlp.deadline.filter(|&t| t <= now) {
            // A PTO capped to the RTO deadline fires instead of the RTO (RFC 8985 section 7.2).
            if !rto_due || self.rto_deadline.is_some_and(|r| pto <= r) {
                self.tlp.deadline = None;
                self.tlp.probe_pending = true;
                self.rto_deadline = Some(now + self.rto());
            }
        }
        if self.rto_deadline.is_some_and(|t| t <= now) {
            self.on_rto(now);
        }
        if self.reo_deadline.is_some_and(|t| t <= now) {
            self.reo_deadline = None;
            let mut lost = LossBatch::default();
            self.detect_losses(now, &mut lost);
            if !lost.is_empty() {
                self.on_losses(now, &lost);
            }
        }
    }

    /// RFC 6298 section 5.4-5.6 with Linux `tcp_enter_loss`.
    fn on_rto(&mut self, now: Instant) {
        self.rto_deadline = None;
        if self.board.outstanding_segments() == 0 {
            return;
        }
        self.rto_count += 1;
        // Everything in the pipe is declared lost (Linux `tcp_timeout_mark_lost`).
        self.rate.on_lost(self.board.pipe());
        self.lost_segments += self.board.mark_all_lost();
        self.undo = None;
        self.rack.on_rto(self.board.nxt());
        self.recovery = Recovery::Rto { point: self.board.nxt() };
        self.prr = None;
        self.tlp.reset();
        self.reo_deadline = None;
        self.cc.on_rto(now);
        self.rto_backoff = (self.rto_backoff + 1).min(MAX_RTO_BACKOFF_EXPONENT);
        self.rto_deadline = Some(now + self.rto());
    }

    /// Test hook: checks the scoreboard's running sums against a recount.
    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        self.board.check_invariants();
    }
}
