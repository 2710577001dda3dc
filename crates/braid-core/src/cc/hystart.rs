//! Hybrid Slow Start (HyStart) as Linux CUBIC runs it: leave slow start before the first loss,
//! when the ACKs of one round arrive as a train longer than half the minimum RTT, or when the
//! round's RTT has grown clearly above the minimum.
//!
//! Source: Ha and Rhee, "Taming the elephants: New TCP slow start", Computer Networks 55(9),
//! 2011, and its implementation in Linux `net/ipv4/tcp_cubic.c` (`bictcp_hystart_reset`,
//! `hystart_update`, `cubictcp_acked`), which is what the lab's kernel, and the source papers'
//! servers, run by default (`/sys/module/tcp_cubic/parameters/hystart` = 1, `hystart_detect` = 3).
//! RFC 9406 (HyStart++) is a different algorithm; this module follows Linux because the
//! simulator's end-to-end Cubic stands for Linux Cubic.
//!
//! # The two detectors (per round trip, while `cwnd >= 16` segments and in slow start)
//! A round starts when an ACK acknowledges a packet sent after the previous round started
//! (Linux: `snd_una` passes the `snd_nxt` remembered at the reset). Only ACKs that carry an RTT
//! sample count, for rounds as for the detectors (`cubictcp_acked` returns before
//! `hystart_update` without one).
//! - **ACK train** (`HYSTART_ACK_TRAIN`): ACKs closer than 2 ms to the previous one extend the
//!   train; once the train has lasted longer than `(delay_min + ack_delay) / 2` since the round
//!   started, the pipe is judged full. Linux halves the threshold when the socket is not paced
//!   (`SK_PACING_NONE`, Cubic without the fq qdisc), because packets then leave back to back.
//! - **Delay increase** (`HYSTART_DELAY`): the minimum of the round's first 8 RTT samples, and
//!   of every later one, is compared with `delay_min + clamp(delay_min / 8, 4 ms, 16 ms)`; above
//!   it, the queue is judged to be building.
//!
//! Either sets `ssthresh = cwnd`, which ends slow start at once.
//!
//! # Choices
//! - Rounds are tracked by send time instead of sequence numbers: an ACK starts a new round when
//!   the newest packet it acknowledges was sent at or after the current round began. A packet
//!   sent at the reset instant was sent after it (the simulator processes an ACK before the sends
//!   it triggers). Without holes at the receiver this is Linux's test; with holes a SACK of a
//!   newer packet starts the round here, where Linux waits for `snd_una` (the controller is
//!   not told `snd_una`).
//! - `ack_delay` is Linux's `hystart_ack_delay`, `min(1 ms, 4 * gso_max_size / pacing_rate)`:
//!   with a 64 KB GSO limit it is 1 ms below about 2 Gbit/s, so it is a constant 1 ms here
//!   ([`HystartConfig::ack_delay`]).
//! - Linux ignores RTT samples for one second after a congestion-avoidance epoch starts; slow
//!   start never has one running, so that rule is left out.
//! - After a retransmission timeout Linux clears `found` and `delay_min` (`cubictcp_state` on
//!   `TCP_CA_Loss`); [`Hystart::on_rto`] does the same.

use std::time::Duration;

use crate::time::Instant;

/// Linux `hystart_low_window`: detection only once cwnd reaches 16 segments.
pub const LOW_WINDOW_SEGMENTS: u64 = 16;
/// Linux `hystart_ack_delta_us`: ACKs closer than this belong to one train.
pub const ACK_DELTA: Duration = Duration::from_millis(2);
/// Linux `HYSTART_MIN_SAMPLES`: RTT samples per round before the delay detector judges.
pub const MIN_SAMPLES: u32 = 8;
/// Linux `HYSTART_DELAY_MIN` and `HYSTART_DELAY_MAX`: bounds of the delay threshold.
pub const DELAY_THRESH_MIN: Duration = Duration::from_millis(4);
pub const DELAY_THRESH_MAX: Duration = Duration::from_millis(16);

/// Tuning for [`Hystart`]; `Default` is Linux's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HystartConfig {
    /// The ACK-train detector (`hystart_detect` bit 1).
    pub ack_train: bool,
    /// The delay-increase detector (`hystart_detect` bit 2).
    pub delay: bool,
    /// Allowance for ACK compression added to `delay_min` in the train threshold
    /// (`hystart_ack_delay`; see the module documentation).
    pub ack_delay: Duration,
    /// Whether the sender paces; unpaced senders halve the train threshold.
    pub paced: bool,
}

impl Default for HystartConfig {
    fn default() -> Self {
        HystartConfig {
            ack_train: true,
            delay: true,
            ack_delay: Duration::from_millis(1),
            paced: false,
        }
    }
}

/// Which detector ended slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HystartExit {
    AckTrain,
    Delay,
}

/// Linux HyStart state. See the module documentation.
#[derive(Clone, Debug)]
pub struct Hystart {
    config: HystartConfig,
    /// Set once a detector fired; cleared only by a timeout.
    found: Option<HystartExit>,
    /// When the current round began; `None` before the first ACK (Linux resets at connection
    /// start, before anything is sent, so the first ACK begins a round).
    round_start: Option<Instant>,
    /// The last ACK of the current train.
    last_ack: Instant,
    /// Minimum RTT of the current round.
    curr_rtt: Option<Duration>,
    sample_cnt: u32,
    delay_min: Option<Duration>,
}

impl Hystart {
    pub fn new(config: HystartConfig) -> Self {
        Hystart {
            config,
            found: None,
            round_start: None,
            last_ack: Instant::ZERO,
            curr_rtt: None,
            sample_cnt: 0,
            delay_min: None,
        }
    }

    /// `bictcp_hystart_reset`: a new round begins at `now`.
    fn reset_round(&mut self, now: Instant) {
        self.round_start = Some(now);
        self.last_ack = now;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// One ACK while the flow is in slow start at `cwnd_segments`. `largest_acked_sent_time`
    /// is the send time of the newest packet it acknowledged, `rtt` its RTT sample if any.
    /// Returns the detector that fired, once: the caller then sets `ssthresh = cwnd`.
    pub fn on_slow_start_ack(
        &mut self,
        now: Instant,
        largest_acked_sent_time: Instant,
        rtt: Option<Duration>,
        cwnd_segments: u64,
    ) -> Option<HystartExit> {
        // `cubictcp_acked` returns before `hystart_update` when the ACK has no RTT sample, and
        // the round check lives in `hystart_update`: such an ACK neither starts a round nor
        // reaches the detectors.
        let rtt = rtt?;
        if self.round_start.is_none_or(|start| largest_acked_sent_time >= start) {
            self.reset_round(now);
        }
        let rtt = rtt.max(Duration::from_micros(1));
        let delay_min = self.delay_min.map_or(rtt, |m| m.min(rtt));
        self.delay_min = Some(delay_min);
        if self.found.is_some() || cwnd_segments < LOW_WINDOW_SEGMENTS {
            return None;
        }
        let exit = self.ack_train(now, delay_min).or_else(|| self.delay_increase(rtt, delay_min));
        self.found = exit;
        exit
    }

    /// The ACK-train detector (`hystart_update`, `HYSTART_ACK_TRAIN`).
    fn ack_train(&mut self, now: Instant, delay_min: Duration) -> Option<HystartExit> {
        if !self.config.ack_train || now.saturating_since(self.last_ack) > ACK_DELTA {
            return None;
        }
        self.last_ack = now;
        let mut threshold = delay_min + self.config.ack_delay;
        if !self.config.paced {
            threshold /= 2;
        }
        let round_start = self.round_start.unwrap_or(now);
        (now.saturating_since(round_start) > threshold).then_some(HystartExit::AckTrain)
    }

    /// The delay-increase detector (`hystart_update`, `HYSTART_DELAY`).
    fn delay_increase(&mut self, rtt: Duration, delay_min: Duration) -> Option<HystartExit> {
        if !self.config.delay {
            return None;
        }
        let curr = self.curr_rtt.map_or(rtt, |c| c.min(rtt));
        self.curr_rtt = Some(curr);
        if self.sample_cnt < MIN_SAMPLES {
            self.sample_cnt += 1;
            return None;
        }
        let thresh = (delay_min / 8).clamp(DELAY_THRESH_MIN, DELAY_THRESH_MAX);
        (curr > delay_min + thresh).then_some(HystartExit::Delay)
    }

    /// A retransmission timeout: slow start begins again with both detectors armed and the
    /// minimum RTT forgotten (`cubictcp_state` on `TCP_CA_Loss`).
    pub fn on_rto(&mut self) {
        *self = Hystart::new(self.config);
    }

    /// The detector that ended slow start, if one has.
    pub fn exit(&self) -> Option<HystartExit> {
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: f64) -> Instant {
        Instant::from_nanos((v * 1e6) as u64)
    }

    fn d(v: f64) -> Duration {
        Duration::from_secs_f64(v / 1e3)
    }

    /// Only the delay detector, so trains cannot interfere.
    fn delay_only() -> Hystart {
        Hystart::new(HystartConfig { ack_train: false, ..Default::default() })
    }

    /// One round of `n` ACKs spaced `gap_ms` apart from `t0`, each acknowledging a packet sent
    /// one RTT earlier; returns the first detector that fired.
    fn round(
        h: &mut Hystart,
        t0: f64,
        n: usize,
        gap_ms: f64,
        rtt_ms: f64,
        cwnd: u64,
    ) -> Option<HystartExit> {
        (0..n).find_map(|k| {
            let now = t0 + k as f64 * gap_ms;
            h.on_slow_start_ack(ms(now), ms(now - rtt_ms), Some(d(rtt_ms)), cwnd)
        })
    }

    #[test]
    fn delay_growth_beyond_an_eighth_of_min_rtt_ends_slow_start() {
        // delay_min 40 ms: threshold clamp(40 / 8 = 5 ms, 4, 16) = 5 ms, so 45.0 ms is the edge.
        let mut h = delay_only();
        assert_eq!(round(&mut h, 40.0, 20, 3.0, 40.0, 20), None);
        assert_eq!(round(&mut h, 100.0, 20, 3.0, 44.9, 20), None, "below the threshold");
        assert_eq!(round(&mut h, 200.0, 20, 3.0, 45.5, 20), Some(HystartExit::Delay));
        assert_eq!(h.exit(), Some(HystartExit::Delay));
    }

    #[test]
    fn delay_detector_waits_for_eight_samples_of_the_round() {
        let mut h = delay_only();
        round(&mut h, 40.0, 20, 3.0, 40.0, 20);
        // A new round of 60 ms samples: the 9th sample is the first judged.
        let fired_at = (0..20).position(|k| {
            let now = 200.0 + k as f64 * 3.0;
            h.on_slow_start_ack(ms(now), ms(now - 60.0), Some(d(60.0)), 20).is_some()
        });
        assert_eq!(fired_at, Some(MIN_SAMPLES as usize));
    }

    #[test]
    fn delay_threshold_is_clamped_to_4_and_16_ms() {
        // delay_min 8 ms: 8 / 8 = 1 ms, clamped up to 4 ms; 11 ms does not fire, 12.5 ms does.
        // ACKs 0.5 ms apart keep each round long enough for the 8 samples.
        let mut h = delay_only();
        round(&mut h, 8.0, 20, 0.5, 8.0, 20);
        assert_eq!(round(&mut h, 30.0, 20, 0.5, 11.0, 20), None);
        assert_eq!(round(&mut h, 100.0, 20, 0.5, 12.5, 20), Some(HystartExit::Delay));
        // delay_min 200 ms: 25 ms clamped down to 16 ms; 215 ms does not fire, 217 ms does.
        let mut h = delay_only();
        round(&mut h, 200.0, 20, 3.0, 200.0, 20);
        assert_eq!(round(&mut h, 500.0, 20, 3.0, 215.0, 20), None);
        assert_eq!(round(&mut h, 900.0, 20, 3.0, 217.0, 20), Some(HystartExit::Delay));
    }

    #[test]
    fn nothing_fires_below_the_low_window() {
        let mut h = Hystart::new(HystartConfig::default());
        round(&mut h, 40.0, 20, 3.0, 40.0, LOW_WINDOW_SEGMENTS - 1);
        assert_eq!(round(&mut h, 200.0, 40, 0.1, 80.0, LOW_WINDOW_SEGMENTS - 1), None);
        assert_eq!(h.exit(), None);
    }

    #[test]
    fn an_ack_train_longer_than_half_min_rtt_ends_slow_start() {
        // delay_min 40 ms, unpaced: threshold (40 + 1) / 2 = 20.5 ms. ACKs 1 ms apart at
        // constant RTT (no delay growth): the train passes 20.5 ms at its 22nd ACK (21 ms).
        let mut h = Hystart::new(HystartConfig::default());
        h.on_slow_start_ack(ms(40.0), ms(0.0), Some(d(40.0)), 16);
        let start = 100.0;
        let fired_at = (0..40).position(|k| {
            let now = start + k as f64;
            h.on_slow_start_ack(ms(now), ms(now - 40.0), Some(d(40.0)), 16).is_some()
        });
        assert_eq!(fired_at, Some(21));
        assert_eq!(h.exit(), Some(HystartExit::AckTrain));
    }

    #[test]
    fn a_paced_sender_needs_a_train_longer_than_min_rtt() {
        // Paced: threshold 40 + 1 = 41 ms, longer than a round at the minimum RTT, so it can
        // only fire once a queue stretches the round: RTT 50 ms (the delay detector is off).
        // At 1 ms spacing the ACK 42 ms into the round is the first past 41 ms.
        let config = HystartConfig { paced: true, delay: false, ..Default::default() };
        let mut h = Hystart::new(config);
        h.on_slow_start_ack(ms(40.0), ms(0.0), Some(d(40.0)), 16);
        let fired_at = (0..50).position(|k| {
            let now = 100.0 + k as f64;
            h.on_slow_start_ack(ms(now), ms(now - 50.0), Some(d(50.0)), 16).is_some()
        });
        assert_eq!(fired_at, Some(42));
    }

    #[test]
    fn an_ack_without_an_rtt_sample_does_not_start_a_round() {
        // `cubictcp_acked` returns on `rtt_us < 0` before `hystart_update`, where the round
        // check is. Round 1 starts at 40 ms (delay_min 40 ms, train threshold (40 + 1) / 2 =
        // 20.5 ms). At 100 ms an ACK without a sample acknowledges a packet sent at 60 ms, after
        // the round began. From 103 ms, ACKs 1 ms apart with 40 ms samples. Linux starts round
        // 2 at the first of them (103 ms, its packet was sent at 63 ms) and the train passes
        // 20.5 ms at its 22nd ACK (124 ms). Had the sampleless ACK started the round at 100 ms,
        // the 3 ms gap to 103 ms would have broken the train and nothing would fire.
        let mut h = Hystart::new(HystartConfig::default());
        h.on_slow_start_ack(ms(40.0), ms(0.0), Some(d(40.0)), 16);
        assert_eq!(h.on_slow_start_ack(ms(100.0), ms(60.0), None, 16), None);
        let fired_at = (0..40).position(|k| {
            let now = 103.0 + k as f64;
            h.on_slow_start_ack(ms(now), ms(now - 40.0), Some(d(40.0)), 16).is_some()
        });
        assert_eq!(fired_at, Some(21));
        assert_eq!(h.exit(), Some(HystartExit::AckTrain));
    }

    #[test]
    fn acks_spaced_wider_than_2_ms_break_the_train() {
        // 2.5 ms apart for a whole round: the train never grows, and constant RTT keeps the
        // delay detector quiet.
        let mut h = Hystart::new(HystartConfig::default());
        h.on_slow_start_ack(ms(40.0), ms(0.0), Some(d(40.0)), 16);
        assert_eq!(round(&mut h, 100.0, 16, 2.5, 40.0, 16), None);
    }

    #[test]
    fn a_timeout_rearms_the_detectors_and_forgets_delay_min() {
        let mut h = delay_only();
        round(&mut h, 40.0, 20, 3.0, 40.0, 20);
        assert_eq!(round(&mut h, 200.0, 20, 3.0, 60.0, 20), Some(HystartExit::Delay));
        assert_eq!(round(&mut h, 300.0, 20, 3.0, 90.0, 20), None, "fires once");
        h.on_rto();
        assert_eq!(h.exit(), None);
        // delay_min is now learnt afresh at 90 ms: 95 ms is within 90 + 11.25 ms.
        round(&mut h, 1000.0, 20, 3.0, 90.0, 20);
        assert_eq!(round(&mut h, 1200.0, 20, 3.0, 95.0, 20), None);
        assert_eq!(round(&mut h, 1400.0, 20, 3.0, 102.0, 20), Some(HystartExit::Delay));
    }
}
