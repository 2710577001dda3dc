//! CUBIC congestion control, RFC 9438 (which obsoletes RFC 8312), with Linux's
//! `net/ipv4/tcp_cubic.c` consulted where the RFC leaves room.
//!
//! # Model
//! CUBIC remembers the window `W_max` at which the last congestion event struck, cuts the window
//! to `beta_cubic * W_max`, and then regrows it along a cubic function of the *time* since the
//! current congestion-avoidance stage began (RFC 9438 section 4.2, Figures 1 and 2):
//!
//! ```text
//!   W_cubic(t) = C * (t - K)^3 + W_max        K = cbrt((W_max - cwnd_epoch) / C)
//! ```
//!
//! in segments and seconds, where `cwnd_epoch` is the window when the stage began. The curve is
//! concave up to `W_max` (fast regrowth, then a plateau around the last saturation point, which
//! it reaches at `t = K`) and convex beyond it (slow, then accelerating, probing). Growth follows
//! real time rather than the ACK count, so flows with different RTTs reach similar windows.
//! Alongside runs `W_est`, the window Reno would have (section 4.3): on short-RTT, small-BDP paths
//! it grows faster than the cubic curve and CUBIC follows it instead, never doing worse than Reno.
//!
//! Per ACK in congestion avoidance:
//! 1. `W_est += alpha_cubic * segments_acked / cwnd`, with
//!    `alpha_cubic = 3 (1 - beta) / (1 + beta)` until `W_est` reaches `cwnd_prior`, then 1
//!    (section 4.3, Figure 4);
//! 2. if `W_cubic(t) < W_est` (Reno-friendly region) `cwnd = W_est`; otherwise (concave or convex
//!    region, sections 4.4 and 4.5) `cwnd += (target - cwnd) / cwnd` per segment acknowledged,
//!    where `target = W_cubic(t + RTT)` clamped to `[cwnd, 1.5 cwnd]` (section 4.2).
//!
//! On a congestion event (once per recovery episode, exactly as NewReno): fast convergence
//! (section 4.7: if `cwnd < W_max` then `W_max = cwnd (1 + beta) / 2`, else `W_max = cwnd`), then
//! `cwnd_prior = cwnd`, `ssthresh = beta * cwnd`, `cwnd = max(ssthresh, 2 SMSS)` (section 4.6);
//! the next stage restarts the clock (`t_epoch`). On a retransmission timeout (section 4.8):
//! `ssthresh` as in section 4.6, `cwnd = 1 SMSS`, and the first stage afterwards uses `K = 0`
//! and `W_max = cwnd_epoch`. Slow start, recovery episodes and the timeout collapse are NewReno's
//! ([`super::newreno`]): RFC 9438 section 4.2 leaves fast recovery to RFC 6582 / RFC 6675.
//!
//! # Choices where the sources leave room
//! - **Units.** The RFC's formulas are in segments; windows here are charged bytes, converted with
//!   SMSS. The cubic arithmetic runs in f64 (deterministic: no randomness, no clock reads), `cwnd`
//!   stays whole bytes, and the fraction of a byte each ACK earns is carried to the next ACK so
//!   small per-ACK increases are not lost to rounding. `ssthresh` rounds to the nearest byte.
//! - **The RTT in `t + RTT`** is the smoothed RTT, as RFC 9438 section 4.1.2 defines RTT (RFC 6298
//!   SRTT), estimated here from the [`AckEvent::rtt`] samples with [`RttEstimator`]; before any
//!   sample, [`AckEvent::min_rtt`]. Linux uses the minimum RTT (`delay_min`) instead, which
//!   [`CubicConfig::target_rtt`] = [`TargetRtt::Min`] selects.
//! - **`ssthresh` from `cwnd`, not `flight_size`** (section 4.6 notes implementations may; Linux
//!   and quinn-proto do). The RFC then asks for "other measures" keeping `cwnd` from growing past
//!   what is in flight: application-limited ACKs do not grow the window (below).
//! - **The stage starts** at the first ACK that grows the window in congestion avoidance: when a
//!   recovery episode ends, or when slow start reaches `ssthresh` (Linux starts `epoch_start` on
//!   the first update after a reset the same way).
//! - **`W_max <= cwnd_epoch`** (no congestion event yet, after a timeout, or when the 2-SMSS floor
//!   lifted the window above `W_max`): `K = 0` and `W_max = cwnd_epoch`, the rule sections 4.8 and
//!   4.10 give for a stage without a usable `W_max` (Linux `bictcp_update` does the same).
//! - **Reno-friendly region.** When `W_cubic(t) < W_est` the window is set to `W_est`, but a window
//!   above `W_est` is never lowered to it.
//! - **Application-limited ACKs** do not grow the window, and `t` must not include the time the
//!   window was not used (sections 4.2 and 5.8): each app-limited ACK moves `t_epoch` forward by
//!   the time since the previous ACK. (Linux shifts `epoch_start` by the idle time when sending
//!   resumes after the flight drained; ours also covers rate-limited, never-idle senders.)
//! - **Slow start is RFC 5681 slow start** with RFC 3465 byte counting, shared with NewReno, and
//!   optionally ended early by Linux's HyStart ([`super::hystart`], [`CubicConfig::hystart`]).
//!   RFC 9438 section 4.10 says CUBIC SHOULD use HyStart++ (RFC 9406) and MAY use Reno's slow
//!   start; `Default` takes the MAY, so the tunnel's CUBIC is the textbook one.
//!   [`CubicConfig::linux`] turns on the HyStart that Linux enables by default: the simulator's
//!   end-to-end Cubic stands for a Linux server, and without HyStart it overshot where the lab's
//!   kernel left slow start at a few dozen segments (docs/validation.md).
//! - **Fast convergence** is on by default (section 4.7 SHOULD; Linux `fast_convergence = 1`). The
//!   RFC says to disable it for a lone flow; [`CubicConfig::fast_convergence`] does.
//! - **Undo after a spurious congestion event** (section 4.9, MAY;
//!   [`Controller::on_spurious_congestion`]): `cwnd` and `ssthresh` as NewReno's undo (Linux
//!   `cubictcp` uses `tcp_reno_undo_cwnd`: `max(cwnd, prior_cwnd)`), and, as section 4.9 lists,
//!   `W_max`, `cwnd_prior` and the stage (`t_epoch`, K, `W_est`) as they were before the
//!   reduction. Linux keeps the reduced `last_max_cwnd` and restarts the epoch instead; the
//!   RFC's fuller restore is what makes the undo leave no trace of the false loss, and is the
//!   default. [`CubicUndo::Linux`] does what Linux does; the difference matters after HyStart
//!   has left slow start without a loss: Linux's 5%-per-RTT floor (`last_max_cwnd == 0`) ends
//!   with the first spurious recovery, the RFC's restore keeps it.
//! - Not implemented: ECN (section 4.6's 1-SMSS floor): the [`Controller`] trait does not report
//!   it.

use std::time::Duration;

use super::classic::{ClassicWindow, DEFAULT_ABC_LIMIT_SEGMENTS};
use super::hystart::{Hystart, HystartConfig};
use super::{AckEvent, CcMetrics, CcParams, CongestionEvent, Controller};
use crate::path::RttEstimator;
use crate::time::Instant;
use crate::ConfigError;

/// RFC 9438 section 5.1: C SHOULD be 0.4 segments per second cubed, which keeps CUBIC as fast
/// as Reno on common paths yet scalable on long fat ones. Linux: `bic_scale` 41 = 0.4 * 1024 / 10.
pub const CUBIC_C_SEGMENTS_PER_S3: f64 = 0.4;
/// RFC 9438 section 4.6: beta_cubic = 0.7, the multiplicative decrease factor (Linux: 717/1024).
pub const CUBIC_BETA: f64 = 0.7;
/// RFC 9438 section 4.2: the target is at most 1.5 cwnd, keeping growth below slow start's rate.
pub(super) const TARGET_MAX_CWND_RATIO: f64 = 1.5;
/// Linux `bictcp_update`: `cnt` at most 20 ACKed segments per segment of growth while
/// `last_max_cwnd == 0`, i.e. 5% per round trip.
pub const LINUX_GROWTH_WITHOUT_W_MAX: f64 = 1.0 / 20.0;
/// RFC 9438 section 4.3: once W_est reaches cwnd_prior, alpha is Reno's 1 segment per RTT.
const RENO_ALPHA_SEGMENTS_PER_RTT: f64 = 1.0;
/// Unused by CUBIC; [`RttEstimator`] wants a floor for its RTO.
const UNUSED_MIN_RTO: Duration = Duration::from_millis(200);

/// RFC 9438 Figure 2: K = cbrt((W_max - cwnd_epoch) / C), the seconds the curve takes to climb
/// `gap_segments` back to W_max.
fn time_to_w_max_s(gap_segments: f64, c_segments_per_s3: f64) -> f64 {
    (gap_segments / c_segments_per_s3).cbrt()
}

/// RFC 9438 Figure 1: W_cubic(t) = C (t - K)^3 + W_max, with the segment term converted to
/// bytes at `mss_bytes`.
pub(super) fn w_cubic_bytes(
    c_segments_per_s3: f64,
    t_s: f64,
    k_s: f64,
    w_max_bytes: f64,
    mss_bytes: f64,
) -> f64 {
    c_segments_per_s3 * (t_s - k_s).powi(3) * mss_bytes + w_max_bytes
}

/// RFC 9438 section 4.2: W_max and K of a stage that starts at window `cwnd_epoch_bytes` after
/// the last congestion event set `w_max_bytes`. Without a usable W_max (none yet, after a
/// timeout, or not above the starting window) K = 0 and W_max = cwnd_epoch (sections 4.8 and
/// 4.10; Linux `bictcp_update` does the same).
pub(super) fn epoch_w_max_and_k(
    w_max_bytes: Option<f64>,
    cwnd_epoch_bytes: f64,
    mss_bytes: f64,
    c_segments_per_s3: f64,
) -> (f64, f64) {
    match w_max_bytes {
        // Figure 2: K = cbrt((W_max - cwnd_epoch) / C), in segments.
        Some(w_max) if w_max > cwnd_epoch_bytes => {
            let gap_segments = (w_max - cwnd_epoch_bytes) / mss_bytes;
            (w_max, time_to_w_max_s(gap_segments, c_segments_per_s3))
        }
        _ => (cwnd_epoch_bytes, 0.0),
    }
}

/// RFC 9438 section 4.7, fast convergence: W_max after a congestion event at window
/// `cwnd_bytes`. When the window is below the previous W_max the flow releases bandwidth:
/// `W_max = cwnd (1 + beta) / 2`; otherwise `W_max = cwnd`.
pub(super) fn w_max_after_loss_bytes(
    last_w_max_bytes: Option<f64>,
    cwnd_bytes: f64,
    beta: f64,
    fast_convergence: bool,
) -> f64 {
    match last_w_max_bytes {
        Some(w_max) if fast_convergence && cwnd_bytes < w_max => cwnd_bytes * (1.0 + beta) / 2.0,
        _ => cwnd_bytes,
    }
}

/// The checks CUBIC's C and beta share wherever a CUBIC curve is configured: C finite and
/// positive, beta in (0, 1).
pub(super) fn validate_c_and_beta(c_segments_per_s3: f64, beta: f64) -> Result<(), ConfigError> {
    if !(c_segments_per_s3.is_finite() && c_segments_per_s3 > 0.0) {
        return Err(ConfigError::new("c_segments_per_s3", "finite and greater than 0"));
    }
    if !(beta > 0.0 && beta < 1.0) {
        return Err(ConfigError::new("beta", "in the open interval (0, 1)"));
    }
    Ok(())
}

/// Which RTT CUBIC adds to `t` when it computes the target window (RFC 9438 section 4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetRtt {
    /// The smoothed RTT of RFC 6298, as RFC 9438 section 4.1.2 defines RTT.
    Smoothed,
    /// The minimum RTT, as Linux `tcp_cubic.c` uses (`delay_min`).
    Min,
}

/// Tuning for [`Cubic`]. `Default` is RFC 9438's recommendation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicConfig {
    /// C in segments per second cubed (RFC 9438 sections 4.1.1 and 5.1): the aggressiveness of
    /// the curve. Default 0.4.
    pub c_segments_per_s3: f64,
    /// beta_cubic (RFC 9438 section 4.6): the window after a loss, as a fraction of the window
    /// before. Default 0.7.
    pub beta: f64,
    /// Fast convergence (RFC 9438 section 4.7): release bandwidth faster when the saturation
    /// point drops. Default on (SHOULD; the RFC suggests off for a lone flow).
    pub fast_convergence: bool,
    /// Follow the Reno estimate when it is ahead of the curve (RFC 9438 section 4.3). Default on.
    pub reno_friendly: bool,
    /// The RTT in `W_cubic(t + RTT)`. Default [`TargetRtt::Smoothed`] (RFC 9438 section 4.1.2).
    pub target_rtt: TargetRtt,
    /// Slow-start limit L of RFC 3465 in segments, as [`super::newreno::NewRenoConfig`].
    /// Default 2.
    pub abc_limit_segments: u64,
    /// Linux's HyStart ends slow start before the first loss ([`super::hystart`]). Default
    /// `None` (RFC 9438's plain slow start); [`CubicConfig::linux`] sets it.
    pub hystart: Option<HystartConfig>,
    /// While no congestion event has set W_max (the first stage, and the first after a
    /// timeout), grow by at least this fraction of cwnd per round trip. Linux
    /// `bictcp_update` caps `cnt` at 20 when `last_max_cwnd == 0` ("the initial growth of cubic
    /// function may be too conservative when the available bandwidth is still unknown"): 5% per
    /// RTT, which matters once HyStart has left slow start without a loss. Default 0 (RFC 9438
    /// section 4.10: the curve from K = 0 alone); [`CubicConfig::linux`] sets 0.05.
    pub growth_without_w_max: f64,
    /// What the undo of a spurious congestion event restores. Default
    /// [`CubicUndo::Rfc9438`].
    pub undo: CubicUndo,
}

crate::named_enum! {
    /// What [`Controller::on_spurious_congestion`] restores besides `cwnd` and `ssthresh`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub enum CubicUndo {
        what = "CUBIC undo";
        /// RFC 9438 section 4.9: `W_max`, `cwnd_prior` and the stage as before the reduction.
        #[default]
        Rfc9438 => "rfc9438",
        /// Linux `tcp_cubic.c` (`tcp_undo_cwnd_reduction` with `tcp_reno_undo_cwnd`): nothing;
        /// W_max keeps the value the event set (`last_max_cwnd`) and a new stage starts at the
        /// next ACK (`epoch_start` was cleared by the event).
        Linux => "linux",
    }
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            c_segments_per_s3: CUBIC_C_SEGMENTS_PER_S3,
            beta: CUBIC_BETA,
            fast_convergence: true,
            reno_friendly: true,
            target_rtt: TargetRtt::Smoothed,
            abc_limit_segments: DEFAULT_ABC_LIMIT_SEGMENTS,
            hystart: None,
            growth_without_w_max: 0.0,
            undo: CubicUndo::Rfc9438,
        }
    }
}

impl CubicConfig {
    /// What Linux `tcp_cubic.c` runs by default where it differs from `Default`: HyStart with
    /// both detectors, on an unpaced socket (`hystart = 1`, `hystart_detect = 3`), and 5% growth
    /// per RTT while W_max is unknown.
    pub fn linux() -> Self {
        CubicConfig {
            hystart: Some(HystartConfig::default()),
            growth_without_w_max: LINUX_GROWTH_WITHOUT_W_MAX,
            ..Default::default()
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        validate_c_and_beta(self.c_segments_per_s3, self.beta)?;
        if self.abc_limit_segments == 0 {
            return Err(ConfigError::new("abc_limit_segments", "at least 1"));
        }
        if !(0.0..=1.0).contains(&self.growth_without_w_max) {
            return Err(ConfigError::new("growth_without_w_max", "in [0, 1]"));
        }
        Ok(())
    }

    /// alpha_cubic = 3 (1 - beta) / (1 + beta) (RFC 9438 section 4.3): Reno's average window
    /// for an AIMD(alpha, beta) flow.
    fn alpha_cubic(&self) -> f64 {
        3.0 * (1.0 - self.beta) / (1.0 + self.beta)
    }
}

/// One congestion-avoidance stage: the parameters of its cubic curve and its Reno estimate.
#[derive(Clone, Copy, Debug)]
struct Epoch {
    /// t_epoch, moved forward over application-limited periods.
    start: Instant,
    /// K in seconds: when the curve reaches `w_max_bytes`.
    k_s: f64,
    /// W_max of this stage in bytes.
    w_max_bytes: f64,
    /// W_est in bytes.
    w_est_bytes: f64,
    /// No congestion event set W_max for this stage ([`CubicConfig::growth_without_w_max`]).
    w_max_unknown: bool,
}

/// CUBIC's state before a reduction, kept to undo it (RFC 9438 section 4.9's `*_prior` values).
#[derive(Clone, Copy, Debug)]
struct UndoState {
    w_max_bytes: Option<f64>,
    cwnd_prior_bytes: f64,
    epoch: Option<Epoch>,
}

/// RFC 9438 CUBIC. See the module documentation.
#[derive(Clone, Debug)]
pub struct Cubic {
    config: CubicConfig,
    window: ClassicWindow,
    /// W_max in bytes; `None` before the first congestion event and after a timeout, when the
    /// next stage takes its starting window instead.
    w_max_bytes: Option<f64>,
    /// cwnd_prior in bytes: the window when `ssthresh` was last set.
    cwnd_prior_bytes: f64,
    /// The current congestion-avoidance stage; `None` until the next one begins.
    epoch: Option<Epoch>,
    /// The fraction of a byte of growth earned but not yet in the integer window.
    cwnd_carry_bytes: f64,
    rtt: RttEstimator,
    min_rtt: Option<Duration>,
    last_ack_time: Option<Instant>,
    /// The state before the first reduction from the open state, as [`ClassicWindow`] keeps
    /// `cwnd` and `ssthresh`.
    undo: Option<UndoState>,
    hystart: Option<Hystart>,
}

impl Cubic {
    pub fn new(params: CcParams) -> Self {
        Self::with_config(params, CubicConfig::default())
    }

    /// A controller with explicit tuning; `config` should have passed [`CubicConfig::validate`].
    pub fn with_config(params: CcParams, config: CubicConfig) -> Self {
        debug_assert!(config.validate().is_ok(), "invalid CubicConfig: {config:?}");
        Cubic {
            config,
            window: ClassicWindow::new(params, config.abc_limit_segments),
            w_max_bytes: None,
            cwnd_prior_bytes: 0.0,
            epoch: None,
            cwnd_carry_bytes: 0.0,
            rtt: RttEstimator::new(UNUSED_MIN_RTO),
            min_rtt: None,
            last_ack_time: None,
            undo: None,
            hystart: config.hystart.map(Hystart::new),
        }
    }

    fn mss_f64(&self) -> f64 {
        self.window.mss_bytes as f64
    }

    /// The window in bytes including the carried fraction.
    fn cwnd_f64(&self) -> f64 {
        self.window.cwnd_bytes as f64 + self.cwnd_carry_bytes
    }

    fn set_cwnd(&mut self, cwnd_bytes: f64) {
        let whole = cwnd_bytes.floor();
        self.cwnd_carry_bytes = cwnd_bytes - whole;
        self.window.cwnd_bytes = whole as u64;
    }

    /// The RTT added to `t` for the target (see [`TargetRtt`]).
    fn target_rtt(&self) -> Duration {
        let smoothed = match self.config.target_rtt {
            TargetRtt::Smoothed => self.rtt.srtt(),
            TargetRtt::Min => None,
        };
        smoothed.or(self.min_rtt).unwrap_or(Duration::ZERO)
    }

    /// RFC 9438 section 4.2: a new stage starts at `now` from the current window.
    fn begin_epoch(&mut self, now: Instant) -> Epoch {
        let cwnd_epoch = self.cwnd_f64();
        let (w_max, k_s) = epoch_w_max_and_k(
            self.w_max_bytes,
            cwnd_epoch,
            self.mss_f64(),
            self.config.c_segments_per_s3,
        );
        let w_max_unknown = self.w_max_bytes.is_none();
        self.w_max_bytes = Some(w_max);
        Epoch { start: now, k_s, w_max_bytes: w_max, w_est_bytes: cwnd_epoch, w_max_unknown }
    }

    /// Figure 1: W_cubic(t) = C (t - K)^3 + W_max, in bytes.
    fn w_cubic_bytes(&self, epoch: &Epoch, t_s: f64) -> f64 {
        let c = self.config.c_segments_per_s3;
        w_cubic_bytes(c, t_s, epoch.k_s, epoch.w_max_bytes, self.mss_f64())
    }

    /// One ACK's growth in congestion avoidance (RFC 9438 sections 4.2 to 4.5).
    fn congestion_avoidance(&mut self, now: Instant, acked_bytes: u64) {
        let mut epoch = match self.epoch {
            Some(epoch) => epoch,
            None => self.begin_epoch(now),
        };
        let cwnd = self.cwnd_f64();
        let acked = acked_bytes as f64;
        // Section 4.3, Figure 4, in bytes: W_est += alpha * acked * SMSS / cwnd.
        let alpha = if epoch.w_est_bytes >= self.cwnd_prior_bytes {
            RENO_ALPHA_SEGMENTS_PER_RTT
        } else {
            self.config.alpha_cubic()
        };
        epoch.w_est_bytes += alpha * acked * self.mss_f64() / cwnd;

        let t_s = now.saturating_since(epoch.start).as_secs_f64();
        let reno_region =
            self.config.reno_friendly && self.w_cubic_bytes(&epoch, t_s) < epoch.w_est_bytes;
        let next = if reno_region {
            cwnd.max(epoch.w_est_bytes)
        } else {
            // Sections 4.4 and 4.5, in bytes: cwnd += (target - cwnd) * acked / cwnd.
            let ahead_s = t_s + self.target_rtt().as_secs_f64();
            let target =
                self.w_cubic_bytes(&epoch, ahead_s).clamp(cwnd, TARGET_MAX_CWND_RATIO * cwnd);
            cwnd + (target - cwnd) * acked / cwnd
        };
        // Linux's floor while W_max is unknown: `growth_without_w_max` x cwnd per cwnd of ACKs.
        let floor = if epoch.w_max_unknown {
            cwnd + self.config.growth_without_w_max * acked
        } else {
            cwnd
        };
        self.set_cwnd(next.max(floor));
        self.epoch = Some(epoch);
    }

    /// Section 4.9: remember the curve before a reduction from the open state (a reduction
    /// inside an episode keeps the older values, as [`ClassicWindow`] does).
    fn save_undo(&mut self) {
        if self.window.is_open() {
            self.undo = Some(UndoState {
                w_max_bytes: self.w_max_bytes,
                cwnd_prior_bytes: self.cwnd_prior_bytes,
                epoch: self.epoch,
            });
        }
    }

    /// Sections 4.2 and 5.8: time the window went unused does not advance the curve.
    fn exclude_app_limited_time(&mut self, now: Instant, since_last_ack: Duration) {
        if let Some(epoch) = self.epoch.as_mut() {
            epoch.start = (epoch.start + since_last_ack).min(now);
        }
    }
}

impl Controller for Cubic {
    fn on_sent(&mut self, _now: Instant, _bytes: u64, in_flight_bytes: u64) {
        self.window.on_sent(in_flight_bytes);
    }

    fn on_ack(&mut self, ack: &AckEvent) {
        if let Some(sample) = ack.rtt {
            self.rtt.update(sample);
        }
        if ack.min_rtt.is_some() {
            self.min_rtt = ack.min_rtt;
        }
        let since_last_ack = self.last_ack_time.map(|t| ack.now.saturating_since(t));
        self.last_ack_time = Some(ack.now);
        // The window went unused by the same test that keeps it from growing (Linux
        // `tcp_is_cwnd_limited`), so the curve and the window stand still together.
        let unused = !self.window.window_used(ack);

        let acked = self.window.on_ack(ack);
        if let Some(hystart) = self.hystart.as_mut().filter(|_| self.window.in_slow_start()) {
            let cwnd_segments = self.window.cwnd_bytes / self.window.mss_bytes;
            let exit = hystart.on_slow_start_ack(
                ack.now,
                ack.largest_acked_sent_time,
                ack.rtt,
                cwnd_segments,
            );
            if exit.is_some() {
                self.window.set_ssthresh_bytes(self.window.cwnd_bytes);
            }
        }
        if unused {
            if let Some(gap) = since_last_ack {
                self.exclude_app_limited_time(ack.now, gap);
            }
        }
        let rest = self.window.slow_start(acked);
        if rest > 0 {
            self.congestion_avoidance(ack.now, rest);
        }
    }

    fn on_congestion_event(&mut self, event: &CongestionEvent) {
        if !self.window.on_congestion_event(event) {
            return;
        }
        self.save_undo();
        let cwnd = self.cwnd_f64();
        // Section 4.7: fast convergence, before the reduction.
        self.w_max_bytes = Some(w_max_after_loss_bytes(
            self.w_max_bytes,
            cwnd,
            self.config.beta,
            self.config.fast_convergence,
        ));
        // Section 4.6: multiplicative decrease.
        self.cwnd_prior_bytes = cwnd;
        let ssthresh = (cwnd * self.config.beta).round() as u64;
        self.window.enter_recovery(event.now, ssthresh);
        self.cwnd_carry_bytes = 0.0;
        self.epoch = None;
    }

    fn on_rto(&mut self, now: Instant) {
        self.save_undo();
        let cwnd = self.cwnd_f64();
        // Section 4.8: ssthresh as in section 4.6 (held inside an episode, as NewReno).
        let ssthresh = self.window.recomputes_ssthresh_on_rto().then(|| {
            self.cwnd_prior_bytes = cwnd;
            (cwnd * self.config.beta).round() as u64
        });
        self.window.enter_loss(now, ssthresh);
        if let Some(hystart) = self.hystart.as_mut() {
            hystart.on_rto();
        }
        // Section 4.8: the first stage after a timeout takes W_max from its starting window.
        self.w_max_bytes = None;
        self.cwnd_carry_bytes = 0.0;
        self.epoch = None;
    }

    /// RFC 9438 section 4.9 and Linux `tcp_undo_cwnd_reduction` (`undo_cwnd` =
    /// `tcp_reno_undo_cwnd`): see the module docs.
    fn on_spurious_congestion(&mut self, _now: Instant) {
        let restored_window = self.window.undo();
        let Some(undo) = self.undo.take() else {
            return;
        };
        debug_assert!(restored_window, "CUBIC and its window save undo state together");
        self.cwnd_carry_bytes = 0.0;
        match self.config.undo {
            CubicUndo::Rfc9438 => {
                self.w_max_bytes = undo.w_max_bytes;
                self.cwnd_prior_bytes = undo.cwnd_prior_bytes;
                self.epoch = undo.epoch;
            }
            CubicUndo::Linux => self.epoch = None,
        }
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
        "cubic"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::hystart::HystartExit;
    use crate::cc::test_support::ack_clock::{ack, ms, AckClock, MSS};
    use crate::cc::CcPhase;

    fn params() -> CcParams {
        CcParams { mss_bytes: MSS, initial_window_pkts: 10 }
    }

    fn loss(now: Instant, sent: Instant) -> CongestionEvent {
        CongestionEvent { now, largest_lost_sent_time: sent, lost_bytes: MSS, in_flight_bytes: 0 }
    }

    #[test]
    fn linux_hystart_ends_slow_start_before_any_loss_when_the_rtt_grows() {
        // 40 ms RTT for the first round (cwnd 10 -> 20 segments, passing HyStart's low window of
        // 16), then 50 ms: above 40 + clamp(40 / 8, 4, 16) = 45 ms. The round's 9th sample is the
        // first judged; before its growth cwnd is 20 + 8 = 28 segments, which becomes ssthresh.
        let rtt = Duration::from_millis(40);
        let mut linux = AckClock::new(Cubic::with_config(params(), CubicConfig::linux()), rtt);
        let mut rfc = AckClock::new(Cubic::new(params()), rtt);
        for f in [&mut linux, &mut rfc] {
            f.round();
            f.rtt = Duration::from_millis(50);
            f.round();
        }
        let m = linux.cc.metrics();
        assert_eq!(m.ssthresh_bytes, Some(28 * MSS));
        assert_eq!(m.phase, CcPhase::CongestionAvoidance);
        assert!(linux.cwnd_pkts() >= 28.0 && linux.cwnd_pkts() < 29.0, "{}", linux.cwnd_pkts());
        assert_eq!(linux.cc.hystart.as_ref().and_then(|h| h.exit()), Some(HystartExit::Delay));
        // RFC 9438's default keeps doubling.
        assert_eq!(rfc.cc.metrics().phase, CcPhase::SlowStart);
        assert_eq!(rfc.cwnd_pkts(), 40.0);
    }

    #[test]
    fn linux_grows_five_percent_per_rtt_until_a_loss_sets_w_max() {
        // As the HyStart test: slow start ends at 28 segments without a loss. Then 10 rounds:
        // Linux's floor compounds 5% per round, about e^0.5 = 1.65x (28.5 -> about 47), where the
        // curve from K = 0 adds 0.4 * 0.5^3 = 0.05 segments and Reno's estimate 1 per round.
        let rtt = Duration::from_millis(40);
        let hystart_only =
            CubicConfig { hystart: Some(HystartConfig::default()), ..Default::default() };
        let mut linux = AckClock::new(Cubic::with_config(params(), CubicConfig::linux()), rtt);
        let mut plain = AckClock::new(Cubic::with_config(params(), hystart_only), rtt);
        for f in [&mut linux, &mut plain] {
            f.round();
            f.rtt = Duration::from_millis(50);
            for _ in 0..11 {
                f.round();
            }
        }
        assert!((45.0..48.5).contains(&linux.cwnd_pkts()), "linux {}", linux.cwnd_pkts());
        assert!(plain.cwnd_pkts() < 40.0, "plain {}", plain.cwnd_pkts());
        // After a loss W_max is known: the floor no longer applies, the concave curve does.
        linux.lose_one();
        linux.run_past(linux.now);
        let after_loss = linux.cwnd_pkts();
        for _ in 0..2 {
            linux.round();
        }
        assert!(linux.cwnd_pkts() < after_loss * 1.05, "{after_loss} -> {}", linux.cwnd_pkts());
    }

    #[test]
    fn a_linux_undo_keeps_the_reduced_w_max_so_the_five_percent_floor_ends() {
        // As above, slow start ends at 28 segments without a loss; then a loss that proves
        // spurious. RFC 9438 4.9 restores W_max (unknown), so the floor keeps compounding 5% a
        // round (x1.63 in 10); Linux keeps the last_max_cwnd the event set, and a stage from
        // K = 0 follows.
        let rtt = Duration::from_millis(40);
        let run = |undo: CubicUndo| {
            let config = CubicConfig { undo, ..CubicConfig::linux() };
            let mut f = AckClock::new(Cubic::with_config(params(), config), rtt);
            f.round();
            f.rtt = Duration::from_millis(50);
            for _ in 0..3 {
                f.round();
            }
            let before = f.cwnd_pkts();
            f.lose_one();
            f.cc.on_spurious_congestion(f.now);
            assert_eq!(f.cwnd_pkts(), before, "{undo:?}: the window is restored either way");
            for _ in 0..10 {
                f.round();
            }
            let unknown = f.cc.epoch.map(|e| e.w_max_unknown);
            (before, f.cwnd_pkts(), unknown)
        };
        let (before, rfc, rfc_unknown) = run(CubicUndo::Rfc9438);
        assert_eq!(rfc_unknown, Some(true), "the restored stage still has no W_max");
        assert!(rfc > before * 1.5, "RFC 9438 undo: {before} -> {rfc}");
        let (before, linux, linux_unknown) = run(CubicUndo::Linux);
        assert_eq!(linux_unknown, Some(false), "the new stage starts from the event's W_max");
        // The Reno estimate leads the curve from K = 0: about one segment a round.
        assert!(linux - before < 11.0, "Linux undo: {before} -> {linux}");
        assert_eq!("linux".parse::<CubicUndo>(), Ok(CubicUndo::Linux));
        assert!("bsd".parse::<CubicUndo>().unwrap_err().to_string().contains("rfc9438, linux"));
    }

    #[test]
    fn linux_hystart_stays_out_of_the_way_at_constant_rtt() {
        let rtt = Duration::from_millis(40);
        let mut linux = AckClock::new(Cubic::with_config(params(), CubicConfig::linux()), rtt);
        for _ in 0..4 {
            linux.round();
        }
        assert_eq!(linux.cwnd_pkts(), 160.0);
        assert_eq!(linux.cc.metrics().phase, CcPhase::SlowStart);
    }

    #[test]
    fn curve_helpers_on_concrete_numbers() {
        let mss = MSS as f64;
        // Figure 2: W_max 100 segments, a stage starting at 70: K = cbrt(30 / 0.4) = 4.2172 s.
        let (w_max, k_s) = epoch_w_max_and_k(Some(100.0 * mss), 70.0 * mss, mss, 0.4);
        assert_eq!(w_max, 100.0 * mss);
        assert!((k_s - 4.2172).abs() < 1e-4, "K {k_s}");
        // Sections 4.8 and 4.10: no W_max, or one not above the start: K = 0, W_max = start.
        assert_eq!(epoch_w_max_and_k(None, 70.0 * mss, mss, 0.4), (70.0 * mss, 0.0));
        assert_eq!(epoch_w_max_and_k(Some(60.0 * mss), 70.0 * mss, mss, 0.4), (70.0 * mss, 0.0));
        // Figure 1: 0.4 (t - K)^3 + W_max; at t = K + 2 s: 0.4 * 8 = 3.2 segments above W_max,
        // at t = K - 2 s 3.2 below.
        assert!((w_cubic_bytes(0.4, 6.0, 4.0, 100.0 * mss, mss) - 103.2 * mss).abs() < 1e-9);
        assert!((w_cubic_bytes(0.4, 2.0, 4.0, 100.0 * mss, mss) - 96.8 * mss).abs() < 1e-9);
        // Section 4.7: a loss at 80 segments below W_max 100 with beta 0.7 remembers
        // 80 * 1.7 / 2 = 68; without fast convergence, or at or above W_max, the window itself.
        let fc = w_max_after_loss_bytes(Some(100.0 * mss), 80.0 * mss, 0.7, true);
        assert!((fc - 68.0 * mss).abs() < 1e-9, "W_max {fc}");
        assert_eq!(w_max_after_loss_bytes(Some(100.0 * mss), 80.0 * mss, 0.7, false), 80.0 * mss);
        assert_eq!(w_max_after_loss_bytes(Some(100.0 * mss), 120.0 * mss, 0.7, true), 120.0 * mss);
        assert_eq!(w_max_after_loss_bytes(None, 80.0 * mss, 0.7, true), 80.0 * mss);
        // The shared checks name the field.
        assert_eq!(validate_c_and_beta(0.0, 0.7).unwrap_err().field, "c_segments_per_s3");
        assert_eq!(validate_c_and_beta(0.4, 1.0).unwrap_err().field, "beta");
        assert!(validate_c_and_beta(0.4, 0.7).is_ok());
    }

    /// Grows a fresh controller's window to `pkts` segments with slow-start ACKs sent at 0.
    fn grown_to(config: CubicConfig, pkts: u64) -> Cubic {
        let mut cc = Cubic::with_config(params(), config);
        while cc.cwnd_bytes() < pkts * MSS {
            cc.on_ack(&ack(ms(50), ms(0), MSS));
        }
        cc
    }

    fn w_max_pkts(cc: &Cubic) -> f64 {
        cc.w_max_bytes.expect("W_max is set") / MSS as f64
    }

    #[test]
    fn undo_restores_the_window_and_the_curve_once() {
        let mut cc = grown_to(CubicConfig::default(), 20);
        cc.on_congestion_event(&loss(ms(60), ms(50))); // W_max 20, cwnd 14
        cc.on_ack(&ack(ms(120), ms(70), MSS)); // a stage begins
        let (cwnd, ssthresh) = (cc.cwnd_bytes(), cc.metrics().ssthresh_bytes);
        let (w_max, epoch) = (cc.w_max_bytes, cc.epoch.map(|e| (e.start, e.k_s)));
        cc.on_congestion_event(&loss(ms(130), ms(125))); // fast convergence: W_max 11.9
        assert!(cc.cwnd_bytes() < cwnd);
        assert!(w_max_pkts(&cc) < 14.0);
        cc.on_spurious_congestion(ms(140));
        assert_eq!((cc.cwnd_bytes(), cc.metrics().ssthresh_bytes), (cwnd, ssthresh));
        assert_eq!((cc.w_max_bytes, cc.epoch.map(|e| (e.start, e.k_s))), (w_max, epoch));
        assert_eq!(cc.metrics().phase, CcPhase::CongestionAvoidance);
        // A second undo finds nothing to restore.
        cc.on_ack(&ack(ms(150), ms(135), MSS));
        let after = (cc.cwnd_bytes(), cc.metrics(), cc.w_max_bytes);
        cc.on_spurious_congestion(ms(151));
        assert_eq!((cc.cwnd_bytes(), cc.metrics(), cc.w_max_bytes), after);
    }

    #[test]
    fn loss_sets_the_window_to_beta_times_w_max() {
        let mut f = AckClock::new(Cubic::new(params()), Duration::from_millis(50));
        for _ in 0..3 {
            f.round();
        }
        assert_eq!(f.cc.cwnd_bytes(), 80 * MSS);
        f.lose_one();
        assert_eq!(f.cc.cwnd_bytes(), 56 * MSS);
        assert_eq!(f.cc.metrics().ssthresh_bytes, Some(56 * MSS));
        assert_eq!(f.cc.metrics().phase, CcPhase::Recovery);
        assert_eq!(w_max_pkts(&f.cc), 80.0);
        // The rest of the old flight neither grows nor reduces the window again.
        f.lose_one();
        f.round();
        assert_eq!(f.cc.cwnd_bytes(), 56 * MSS);
    }

    #[test]
    fn regrows_to_w_max_after_k_seconds() {
        let rtt = Duration::from_millis(100);
        let mut f = AckClock::new(Cubic::new(params()), rtt);
        for _ in 0..7 {
            f.round();
        }
        let w_max = f.cwnd_pkts();
        assert_eq!(w_max, 1280.0);
        f.lose_one();
        let loss_time = f.now;
        f.run_past(loss_time);
        let epoch = f.cc.epoch.expect("congestion avoidance began");
        let k_s = ((w_max - 0.7 * w_max) / 0.4f64).cbrt();
        assert!((epoch.k_s - k_s).abs() < 1e-9, "K = {} s, want {k_s} s", epoch.k_s);

        // Concave: at K/2 the window follows the curve, well below W_max.
        f.run_until(epoch.start + Duration::from_secs_f64(k_s / 2.0));
        let curve = 0.4 * (-k_s / 2.0f64).powi(3) + w_max;
        let at_half = f.cwnd_pkts();
        assert!((at_half - curve).abs() / curve < 0.02, "cwnd {at_half} vs W_cubic {curve}");

        // At t = K the window is back at W_max.
        f.run_until(epoch.start + Duration::from_secs_f64(k_s));
        let at_k = f.cwnd_pkts();
        assert!((at_k - w_max).abs() / w_max < 0.03, "cwnd {at_k} at t = K, W_max {w_max}");
        assert_eq!(f.cc.metrics().phase, CcPhase::CongestionAvoidance);

        // Convex: past K it probes beyond W_max, faster and faster (C t^3: 10.8, then 75.6).
        f.run_until(epoch.start + Duration::from_secs_f64(k_s + 3.0));
        let first = f.cwnd_pkts() - at_k;
        f.run_until(epoch.start + Duration::from_secs_f64(k_s + 6.0));
        let second = f.cwnd_pkts() - at_k - first;
        assert!(
            (first - 10.8).abs() < 1.0 && (second - 75.6).abs() < 3.0,
            "grew {first} then {second}"
        );
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_the_saturation_point_drops() {
        for fast_convergence in [true, false] {
            let config = CubicConfig { fast_convergence, ..CubicConfig::default() };
            let mut cc = grown_to(config, 100);
            cc.on_congestion_event(&loss(ms(100), ms(50)));
            assert_eq!(w_max_pkts(&cc), 100.0);
            assert_eq!(cc.cwnd_bytes(), 70 * MSS);
            // Recovery ends; the next loss strikes below the old W_max.
            cc.on_ack(&ack(ms(150), ms(101), MSS));
            let cwnd = cc.cwnd_f64() / MSS as f64;
            assert!(cwnd < 71.0);
            cc.on_congestion_event(&loss(ms(160), ms(102)));
            let want_w_max = if fast_convergence { cwnd * (1.0 + 0.7) / 2.0 } else { cwnd };
            assert!((w_max_pkts(&cc) - want_w_max).abs() < 1e-9, "W_max {}", w_max_pkts(&cc));
            assert_eq!(cc.cwnd_bytes(), (cwnd * 0.7 * MSS as f64).round() as u64);
        }
    }

    #[test]
    fn reno_friendly_region_governs_short_rtt_paths() {
        let rtt = Duration::from_millis(1);
        let run = |reno_friendly| {
            let config = CubicConfig { reno_friendly, ..CubicConfig::default() };
            let mut f = AckClock::new(Cubic::with_config(params(), config), rtt);
            f.round(); // cwnd 20 = W_max
            f.lose_one(); // cwnd 14
            let loss_time = f.now;
            f.run_past(loss_time);
            let start = f.cc.epoch.expect("congestion avoidance began").start;
            f.run_until(start + rtt * 100);
            f
        };
        let f = run(true);
        // Reno's estimate: 6 segments at alpha = 0.53 per RTT (about 11 RTTs) back to
        // cwnd_prior = 20, then 1 segment per RTT: about 14 + 6 + 88 = 108 segments.
        let alpha = f.cc.config.alpha_cubic();
        assert!((alpha - 0.9 / 1.7).abs() < 1e-12);
        let cwnd = f.cwnd_pkts();
        assert!((104.0..=112.0).contains(&cwnd), "cwnd {cwnd} segments after 100 RTTs");
        let epoch = f.cc.epoch.unwrap();
        let cubic_only = f.cc.w_cubic_bytes(&epoch, 0.1) / MSS as f64;
        assert!(cubic_only < 16.0, "the cubic curve alone is at {cubic_only}");
        // Without the Reno-friendly region CUBIC stays on its slow concave curve.
        assert!(run(false).cwnd_pkts() < 16.0);
    }

    #[test]
    fn target_limits_growth_to_half_the_window_per_window_acked() {
        let mut cc = grown_to(CubicConfig::default(), 10);
        cc.on_congestion_event(&loss(ms(100), ms(50))); // cwnd 7
        cc.on_ack(&ack(ms(150), ms(101), MSS)); // stage begins
        let before = cc.cwnd_f64();
        // A minute later the curve is far above; each segment acked adds at most half a segment.
        for _ in 0..7 {
            cc.on_ack(&ack(ms(60_000), ms(59_950), MSS));
        }
        let grown = (cc.cwnd_f64() - before) / MSS as f64;
        assert!((grown - 3.5).abs() < 1e-6, "grew {grown} segments for 7 acked");
    }

    #[test]
    fn rto_collapses_to_one_segment_and_restarts_the_curve_at_k_zero() {
        // Without the Reno estimate, which would otherwise lead here (W_est starts at 56, 0.53
        // segments per 50 ms RTT, while the curve from K = 0 rises only 0.4 t^3).
        let config = CubicConfig { reno_friendly: false, ..CubicConfig::default() };
        let mut f = AckClock::new(Cubic::with_config(params(), config), Duration::from_millis(50));
        for _ in 0..3 {
            f.round();
        }
        f.timeout(Duration::from_secs(1));
        assert_eq!(f.cc.cwnd_bytes(), MSS);
        assert_eq!(f.cc.metrics().ssthresh_bytes, Some(56 * MSS));
        assert_eq!(f.cc.metrics().phase, CcPhase::Loss);
        assert_eq!(f.cc.w_max_bytes, None);

        while f.cc.epoch.is_none() {
            f.ack_one();
        }
        assert_eq!(f.cc.metrics().ssthresh_bytes, Some(56 * MSS));
        let epoch = f.cc.epoch.unwrap();
        assert_eq!(epoch.k_s, 0.0);
        assert_eq!(epoch.w_max_bytes, (56 * MSS) as f64);
        // Convex from the start: W_cubic(t) = 0.4 t^3 + 56, slow at first, then faster.
        f.run_until(epoch.start + Duration::from_secs(1));
        let first = f.cwnd_pkts() - 56.0;
        f.run_until(epoch.start + Duration::from_secs(2));
        let second = f.cwnd_pkts() - 56.0 - first;
        assert!(first < 1.0 && second > 2.0, "grew {first} then {second}");
        assert!((f.cwnd_pkts() - 59.2).abs() < 1.0, "cwnd {} at t = 2 s", f.cwnd_pkts());
    }

    #[test]
    fn window_never_drops_below_two_segments_after_a_loss() {
        let mut cc = Cubic::new(params());
        for round in 0..10u64 {
            let t = ms(100 * (round + 1));
            cc.on_congestion_event(&loss(t, t - Duration::from_millis(1)));
            assert!(cc.cwnd_bytes() >= 2 * MSS);
            assert!(cc.metrics().ssthresh_bytes.unwrap() >= 2 * MSS);
        }
        assert_eq!(cc.cwnd_bytes(), 2 * MSS);
        cc.on_rto(ms(2000));
        cc.on_congestion_event(&loss(ms(2100), ms(2001)));
        assert_eq!(cc.cwnd_bytes(), 2 * MSS);
    }

    #[test]
    fn unused_window_time_does_not_advance_the_curve() {
        let mut cc = grown_to(CubicConfig::default(), 100);
        cc.on_congestion_event(&loss(ms(100), ms(50))); // cwnd 70
        cc.on_ack(&ack(ms(150), ms(101), MSS)); // stage begins at 150 ms
        let start = cc.epoch.unwrap().start;
        let cwnd = cc.cwnd_bytes();
        for i in 1..=100 {
            let mut a = ack(ms(150 + 100 * i), ms(100 + 100 * i), MSS);
            a.cwnd_limited = false;
            cc.on_ack(&a);
        }
        assert_eq!(cc.cwnd_bytes(), cwnd, "ACKs of an unused window do not grow it");
        assert_eq!(cc.epoch.unwrap().start, start + Duration::from_secs(10));
        assert_eq!(cc.metrics().phase, CcPhase::CongestionAvoidance);
    }

    #[test]
    fn smoothed_or_minimum_rtt_sets_the_look_ahead() {
        let mut cc = Cubic::new(params());
        let mut a = ack(ms(100), ms(0), MSS);
        a.min_rtt = Some(Duration::from_millis(40));
        cc.on_ack(&a);
        assert_eq!(cc.target_rtt(), Duration::from_millis(100));
        let min = CubicConfig { target_rtt: TargetRtt::Min, ..CubicConfig::default() };
        let mut cc = Cubic::with_config(params(), min);
        cc.on_ack(&a);
        assert_eq!(cc.target_rtt(), Duration::from_millis(40));
    }

    #[test]
    fn defaults_are_rfc_9438s_and_validation_names_the_field() {
        let d = CubicConfig::default();
        assert_eq!((d.c_segments_per_s3, d.beta), (0.4, 0.7));
        assert!(d.fast_convergence && d.reno_friendly && d.validate().is_ok());
        let bad = CubicConfig { beta: 1.0, ..d };
        assert_eq!(
            bad.validate().unwrap_err().to_string(),
            "beta: must be in the open interval (0, 1)"
        );
        let bad = CubicConfig { c_segments_per_s3: f64::NAN, ..d };
        assert_eq!(bad.validate().unwrap_err().field, "c_segments_per_s3");
    }
}
