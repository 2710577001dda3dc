//! Coupled CUBIC: Lee, Kim, Kwon, Han, "Coupled CUBIC Congestion Control for MPTCP in Broadband
//! Networks", Computer Systems Science and Engineering 45(1), 2023, section 3 and
//! equations 6 to 11, on top of LIA (RFC 6356, [`super::lia`]) and CUBIC (RFC 9438,
//! [`crate::cc::cubic`]).
//!
//! # Model
//! A path whose bandwidth-delay product is large runs CUBIC; the others run LIA. The two are
//! coupled through LIA's alpha, for which a CUBIC path presents a *virtual Reno window*: the
//! window Reno would hold at the same loss rate (section 3.1, Figure 3).
//!
//! **The switch (eq. 6, 7).** The average windows of Reno and CUBIC at loss-event rate p and
//! RTT T (seconds) are (eq. 8 and 9; RFC 8312 section 5.1):
//!
//! ```text
//!   W_RENO  = sqrt(3 / (2 p))                                  (8)
//!   W_CUBIC = (C (3 + b) / (4 (1 - b)))^(1/4) * T^(3/4) / p^(3/4)  = 1.054 T^0.75 / p^0.75   (9)
//! ```
//!
//! with C = 0.4 and b = 0.7. Eq. 6 is their logarithm: CUBIC's window is the larger one exactly
//! when `p < p_bar(T)`, eq. 7: `p_bar = (C (3 + b) / (4 (1 - b))) * T^3 / (3/2)^2`. A path is in
//! **CUBIC mode** when its loss rate is below `p_bar` of its RTT, which is the same as saying the
//! window Reno would need at that loss rate, `sqrt(1.5 / p)`, exceeds `sqrt(1.5 / p_bar(T))`
//! segments (52 at 100 ms, 585 at 20 ms): the path's BDP is large for its RTT. Otherwise it is in
//! **LIA mode**.
//!
//! **The virtual Reno window (eq. 10).** `Virtual W_RENO = current W_CUBIC * W_RENO / W_CUBIC`,
//! the ratio of eq. 8 to eq. 9 at the path's p and T (below 1 in CUBIC mode).
//!
//! **The alpha iteration (Figure 3, section 3.2).** alpha_1 is eq. 1 (LIA's alpha) with the
//! virtual Reno windows of the CUBIC-mode paths and the real windows of the others. The virtual
//! LIA window of a CUBIC-mode path is its virtual Reno window times alpha_1 (Table 2's reason: a
//! LIA window differs from a Reno window by alpha), and alpha_2 is eq. 1 again with those. LIA-mode
//! paths increase by eq. 2 with alpha_2 and the virtual LIA windows in `cwnd_total`.
//!
//! **The coupled CUBIC window (eq. 11).** `W_coupledCUBIC = Virtual W_RENO * alpha_1 * W_CUBIC /
//! W_RENO`, which is `alpha_1 * W_CUBIC`: the CUBIC-mode path runs CUBIC with its curve scaled by
//! alpha_1, `W(t) = alpha_1 C (t - K)^3 + W_max` (eq. 3), decreasing to `b * W_max` on a loss.
//!
//! # Choices where the sources leave room (the text copy lost several symbols)
//! - **b in eq. 6 and 7.** The copy prints `C(4 - b)/(4 b)` (the CUBIC paper's form, with b the
//!   decrease *fraction*); eq. 9's constant 1.054 only follows with that fraction 0.3, i.e. RFC
//!   8312's `C (3 + beta) / (4 (1 - beta))` with beta = 0.7. We use RFC 8312's form throughout,
//!   which makes eq. 6, 7 and 9 consistent: `p_bar(0.1 s) = 5.5e-4`. (The text's "about 0.0002"
//!   at 100 ms results from putting 0.7 into the fraction form, contradicting eq. 9.)
//! - **Rounding of eq. 7.** Its `-0.36` is `4 * log10(sqrt(1.5)) = 0.352` rounded; we use the
//!   exact crossover `(3/2)^2`. The text's sentence on which row of eq. 6 applies is reversed
//!   relative to eq. 6 itself and to Figure 2's description; we follow eq. 6.
//! - **The loss-event rate p** is that of the response-function derivation (section 3.1: one
//!   loss per cycle of N packets, p = 1/N): `p = MSS / l`, with `l = max(l_1, l_2)` the charged
//!   bytes acknowledged between the last two loss events or since the last (`LossInterval`).
//!   Before its first loss event a path is in LIA mode (it is in slow start anyway). T is the
//!   path's smoothed RTT. Eq. 8 to 10 are evaluated directly in f64 where the paper's kernel
//!   uses conversion tables per RTT (section 3.2).
//! - **alpha or its square root.** Section 3.2 says the average LIA and Reno windows differ by
//!   "the square root of alpha", then multiplies by alpha; eq. 11 as printed multiplies by alpha_1.
//!   Radicals are lost elsewhere in the copy (eq. 4 and 8), so either reading is possible. The
//!   default [`CoupledCubicConfig::alpha_exponent`] = 1 follows the printed equations, and with it
//!   two identical CUBIC-mode paths (alpha_1 = 1/2) probe together exactly as fast as one CUBIC
//!   flow (RFC 6356 goal 2); 0.5 selects the square-root reading.
//! - **Scaling CUBIC's curve rather than its window.** Applying eq. 11 to the whole window would
//!   cut it without a loss whenever alpha_1 falls. We scale C by `alpha_1^e` instead: with alpha_1
//!   constant over a congestion-avoidance stage this is exactly eq. 11 (`alpha C (t - K)^3 +
//!   alpha W_max'` with `W_max = alpha W_max'` the window at the last loss), and the window still
//!   returns to W_max at t = K. K is computed at the start of the stage with that stage's alpha.
//!   The factor is capped at 1, LIA's cap carried over (eq. 2's second term): no path grows
//!   faster than a single CUBIC flow on it.
//! - **Iteration count.** Figure 7's CCUBIC(alpha_2) uses alpha_1 and alpha_2;
//!   [`CoupledCubicConfig::alpha_refinements`] = 1 (default) computes alpha_2, 0 gives
//!   CCUBIC(alpha_1), more repeat the step (the fixed point the paper iterates towards "as the
//!   algorithm goes on"). Everything is recomputed from the current windows on every ACK.
//! - **CUBIC details** are RFC 9438's as in [`crate::cc::cubic`]: target `W(t + srtt)` clamped to
//!   `[cwnd, 1.5 cwnd]`, fast convergence (on by default), `ssthresh = b * cwnd`, a stage begins
//!   at the first congestion-avoidance ACK with K = 0 when `cwnd >= W_max`. There is no
//!   Reno-friendly region: LIA mode takes its place (the eq. 6 switch is exactly "CUBIC where it
//!   beats Reno"). A mode change starts a new stage. A timeout in CUBIC mode sets `ssthresh = b *
//!   cwnd` and forgets W_max (RFC 9438 section 4.8); in LIA mode it is Reno's.
//! - W_max is recorded on every loss, in either mode, so a path entering CUBIC mode knows its
//!   saturation point.

use super::lia::{lia_alpha, lia_increase_bytes};
use super::{reno_ssthresh_bytes, CoupledPath, Coupling};
use crate::cc::cubic::{
    epoch_w_max_and_k, validate_c_and_beta, w_cubic_bytes, w_max_after_loss_bytes, CUBIC_BETA,
    CUBIC_C_SEGMENTS_PER_S3, TARGET_MAX_CWND_RATIO,
};
use crate::cc::CcParams;
use crate::time::Instant;
use crate::ConfigError;

/// Figure 7's CCUBIC(alpha_2): one refinement after alpha_1.
pub const DEFAULT_ALPHA_REFINEMENTS: u32 = 1;
/// More refinements than this add nothing measurable (the step contracts) and cost per ACK.
pub const MAX_ALPHA_REFINEMENTS: u32 = 8;
/// Eq. 11 as printed: the virtual LIA window is the virtual Reno window times alpha_1.
pub const DEFAULT_ALPHA_EXPONENT: f64 = 1.0;
/// Eq. 8: W_RENO = sqrt(3 / (2 p)).
const RENO_RESPONSE_FACTOR: f64 = 1.5;

/// Tuning for [`CoupledCubic`]. `Default` is Lee et al. 2023's (C = 0.4, beta = 0.7,
/// CCUBIC(alpha_2)).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct CoupledCubicConfig {
    /// C of eq. 3 in segments per second cubed. Default 0.4 (Lee et al. 2023, section 2.2).
    pub c_segments_per_s3: f64,
    /// The multiplicative decrease: the window after a loss is `beta * W_max`. Default 0.7.
    pub beta: f64,
    /// RFC 9438 section 4.7 fast convergence in CUBIC mode. Default on.
    pub fast_convergence: bool,
    /// Alpha refinements after alpha_1 (Figure 3). Default 1 (alpha_2); at most 8.
    pub alpha_refinements: u32,
    /// e in `virtual LIA window = virtual Reno window * alpha^e` and in the curve scale
    /// `alpha_1^e`. Default 1 (eq. 11 as printed); 0.5 is the square-root reading of section 3.2.
    pub alpha_exponent: f64,
}

impl Default for CoupledCubicConfig {
    fn default() -> Self {
        CoupledCubicConfig {
            c_segments_per_s3: CUBIC_C_SEGMENTS_PER_S3,
            beta: CUBIC_BETA,
            fast_convergence: true,
            alpha_refinements: DEFAULT_ALPHA_REFINEMENTS,
            alpha_exponent: DEFAULT_ALPHA_EXPONENT,
        }
    }
}

impl CoupledCubicConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        validate_c_and_beta(self.c_segments_per_s3, self.beta)?;
        let err = |field, allowed| Err(ConfigError::new(field, allowed));
        if self.alpha_refinements > MAX_ALPHA_REFINEMENTS {
            return err("alpha_refinements", "at most 8");
        }
        if !(0.5..=1.0).contains(&self.alpha_exponent) {
            return err("alpha_exponent", "in [0.5, 1]");
        }
        Ok(())
    }

    /// Eq. 9's coefficient, RFC 8312 section 5.1: `(C (3 + beta) / (4 (1 - beta)))^(1/4)`,
    /// 1.054 for C = 0.4 and beta = 0.7.
    pub fn cubic_response_coefficient(&self) -> f64 {
        self.cubic_response_coefficient_pow4().powf(0.25)
    }

    fn cubic_response_coefficient_pow4(&self) -> f64 {
        self.c_segments_per_s3 * (3.0 + self.beta) / (4.0 * (1.0 - self.beta))
    }

    /// Eq. 7: the loss-event rate below which CUBIC's average window exceeds Reno's on a path
    /// of RTT `rtt_s`: `p_bar = C (3 + beta) / (4 (1 - beta)) * T^3 / (3/2)^2`.
    pub fn switch_loss_rate(&self, rtt_s: f64) -> f64 {
        self.cubic_response_coefficient_pow4() * rtt_s.powi(3)
            / (RENO_RESPONSE_FACTOR * RENO_RESPONSE_FACTOR)
    }

    /// Eq. 8: Reno's average window at loss-event rate `p`, segments.
    pub fn reno_average_window_pkts(&self, p: f64) -> f64 {
        (RENO_RESPONSE_FACTOR / p).sqrt()
    }

    /// Eq. 9: CUBIC's average window at loss-event rate `p` and RTT `rtt_s`, segments.
    pub fn cubic_average_window_pkts(&self, p: f64, rtt_s: f64) -> f64 {
        self.cubic_response_coefficient() * (rtt_s / p).powf(0.75)
    }

    /// Eq. 6 and 7: the mode of a path with loss-event rate `p` and RTT `rtt_s`.
    pub fn mode_for(&self, p: f64, rtt_s: f64) -> PathMode {
        if p < self.switch_loss_rate(rtt_s) {
            PathMode::Cubic
        } else {
            PathMode::Lia
        }
    }
}

/// How a path increases its window (eq. 6's two rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathMode {
    /// Small BDP: LIA's linked increase (eq. 1 and 2).
    Lia,
    /// Large BDP: CUBIC scaled by alpha_1 (eq. 3 and 11).
    Cubic,
}

/// The alphas of Figure 3 at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CouplingAlphas {
    /// alpha_1: eq. 1 over the virtual Reno windows; scales the CUBIC-mode paths.
    pub alpha_1: f64,
    /// The last refinement (alpha_2 by default): the alpha of the LIA-mode paths.
    pub alpha: f64,
    /// `cwnd_total` of eq. 2 for the LIA-mode paths: the windows `alpha` was computed from.
    pub cwnd_total_bytes: f64,
}

/// One CUBIC congestion-avoidance stage of a path.
#[derive(Clone, Copy, Debug)]
struct Epoch {
    start: Instant,
    k_s: f64,
    w_max_bytes: f64,
}

/// The per-path state beyond `CoupledPath`.
#[derive(Clone, Copy, Debug)]
struct CubicPath {
    mode: PathMode,
    /// Eq. 10's `W_RENO / W_CUBIC` at the path's loss rate and RTT, in CUBIC mode.
    reno_ratio: Option<f64>,
    /// The window at the last loss (after fast convergence); `None` before one and after a
    /// timeout.
    w_max_bytes: Option<f64>,
    epoch: Option<Epoch>,
}

/// Coupled CUBIC over all paths of a tunnel. See the module documentation.
#[derive(Clone, Debug)]
pub struct CoupledCubic {
    config: CoupledCubicConfig,
    paths: Vec<CoupledPath>,
    cubic: Vec<CubicPath>,
}

impl CoupledCubic {
    pub fn new(params: CcParams, n_paths: usize) -> Self {
        Self::with_config(params, n_paths, CoupledCubicConfig::default())
    }

    /// A controller with explicit tuning; `config` should have passed
    /// [`CoupledCubicConfig::validate`].
    pub fn with_config(params: CcParams, n_paths: usize, config: CoupledCubicConfig) -> Self {
        debug_assert!(config.validate().is_ok(), "invalid CoupledCubicConfig: {config:?}");
        let fresh =
            CubicPath { mode: PathMode::Lia, reno_ratio: None, w_max_bytes: None, epoch: None };
        CoupledCubic {
            config,
            paths: (0..n_paths).map(|_| CoupledPath::new(params)).collect(),
            cubic: vec![fresh; n_paths],
        }
    }

    /// The mode `path` was last put in.
    pub fn path_mode(&self, path: usize) -> PathMode {
        self.cubic[path].mode
    }

    /// The alphas of Figure 3 from the current windows, once a path has an RTT sample.
    pub fn coupling_alphas(&self) -> Option<CouplingAlphas> {
        let exponent = self.config.alpha_exponent;
        // Eq. 1's windows: virtual (Reno times `scale`) on CUBIC-mode paths, real elsewhere.
        let windows = |scale: f64| {
            self.paths.iter().zip(&self.cubic).filter_map(move |(p, c)| {
                let w = p.cwnd_f64();
                Some((c.reno_ratio.map_or(w, |ratio| w * ratio * scale), p.srtt_s()?))
            })
        };
        let alpha_1 = lia_alpha(windows(1.0))?;
        let (mut alpha, mut scale) = (alpha_1, 1.0);
        for _ in 0..self.config.alpha_refinements {
            scale = alpha.powf(exponent);
            alpha = lia_alpha(windows(scale))?;
        }
        let cwnd_total_bytes = windows(scale).map(|(w, _)| w).sum();
        Some(CouplingAlphas { alpha_1, alpha, cwnd_total_bytes })
    }

    /// `p = MSS / l`: one loss event per `l` bytes, once the path has seen a loss event.
    fn loss_event_rate(path: &CoupledPath) -> Option<f64> {
        let interval = &path.loss_interval;
        (interval.loss_events > 0)
            .then(|| path.mss_f64() / (interval.smoothed_bytes() as f64).max(1.0))
    }

    /// Eq. 6, 7 and 10 for every path: its mode and virtual-Reno ratio. A mode change ends the
    /// path's CUBIC stage.
    fn refresh_modes(&mut self) {
        for (p, c) in self.paths.iter().zip(self.cubic.iter_mut()) {
            let sample = p.srtt_s().zip(Self::loss_event_rate(p));
            let (mode, ratio) = match sample {
                Some((rtt_s, rate)) if self.config.mode_for(rate, rtt_s) == PathMode::Cubic => {
                    let reno = self.config.reno_average_window_pkts(rate);
                    let cubic = self.config.cubic_average_window_pkts(rate, rtt_s);
                    (PathMode::Cubic, Some(reno / cubic))
                }
                _ => (PathMode::Lia, None),
            };
            if mode != c.mode {
                c.epoch = None;
            }
            c.mode = mode;
            c.reno_ratio = ratio;
        }
    }

    /// RFC 9438 section 4.2 with C scaled by `scale` (eq. 11): one ACK's growth in CUBIC mode,
    /// in bytes.
    fn cubic_increase_bytes(
        &mut self,
        path: usize,
        now: Instant,
        acked_bytes: u64,
        scale: f64,
    ) -> Option<f64> {
        let p = &self.paths[path];
        let srtt_s = p.srtt_s()?;
        let (mss, cwnd) = (p.mss_f64(), p.cwnd_f64());
        let c = self.config.c_segments_per_s3 * scale;
        let state = &mut self.cubic[path];
        let epoch = *state.epoch.get_or_insert_with(|| {
            let (w_max_bytes, k_s) = epoch_w_max_and_k(state.w_max_bytes, cwnd, mss, c);
            Epoch { start: now, k_s, w_max_bytes }
        });
        state.w_max_bytes = Some(epoch.w_max_bytes);
        let t_s = now.saturating_since(epoch.start).as_secs_f64() + srtt_s;
        let curve = w_cubic_bytes(c, t_s, epoch.k_s, epoch.w_max_bytes, mss);
        let target = curve.clamp(cwnd, TARGET_MAX_CWND_RATIO * cwnd);
        Some((target - cwnd) * acked_bytes as f64 / cwnd)
    }
}

impl Coupling for CoupledCubic {
    const NAME: &'static str = "coupled_cubic";

    fn paths(&self) -> &[CoupledPath] {
        &self.paths
    }

    fn paths_mut(&mut self) -> &mut [CoupledPath] {
        &mut self.paths
    }

    /// One ACK's congestion-avoidance increase on `path`: eq. 11 in CUBIC mode, eq. 2 in LIA
    /// mode.
    fn increase_bytes(&mut self, path: usize, now: Instant, acked_bytes: u64) -> Option<f64> {
        self.refresh_modes();
        let alphas = self.coupling_alphas()?;
        match self.cubic[path].mode {
            PathMode::Cubic => {
                let scale = alphas.alpha_1.powf(self.config.alpha_exponent).min(1.0);
                self.cubic_increase_bytes(path, now, acked_bytes, scale)
            }
            PathMode::Lia => {
                let p = &self.paths[path];
                p.srtt()?;
                Some(lia_increase_bytes(
                    alphas.alpha,
                    alphas.cwnd_total_bytes,
                    p.cwnd_f64(),
                    acked_bytes as f64,
                    p.mss_f64(),
                ))
            }
        }
    }

    /// A new loss event: W_max with fast convergence (RFC 9438 section 4.7) in either mode, a
    /// new stage next, and `ssthresh = beta * cwnd` in CUBIC mode or Reno's halving of
    /// FlightSize in LIA mode.
    fn loss_ssthresh_bytes(&mut self, path: usize, flight_size_bytes: u64) -> u64 {
        self.refresh_modes();
        let cwnd = self.paths[path].cwnd_f64();
        let state = &mut self.cubic[path];
        state.w_max_bytes = Some(w_max_after_loss_bytes(
            state.w_max_bytes,
            cwnd,
            self.config.beta,
            self.config.fast_convergence,
        ));
        state.epoch = None;
        match state.mode {
            PathMode::Cubic => (cwnd * self.config.beta).round() as u64,
            PathMode::Lia => reno_ssthresh_bytes(flight_size_bytes),
        }
    }

    /// RFC 9438 section 4.8 in CUBIC mode (`ssthresh = beta * cwnd`), Reno's in LIA mode.
    fn timeout_ssthresh_bytes(&self, path: usize) -> u64 {
        let p = &self.paths[path];
        match self.cubic[path].mode {
            PathMode::Cubic => (p.cwnd_f64() * self.config.beta).round() as u64,
            PathMode::Lia => p.reno_timeout_ssthresh_bytes(),
        }
    }

    /// RFC 9438 section 4.8: the first stage after a timeout takes W_max from its start.
    fn after_timeout(&mut self, path: usize) {
        let state = &mut self.cubic[path];
        state.w_max_bytes = None;
        state.epoch = None;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::lia::Lia;
    use super::super::multi_clock::{MultiClock, MSS};
    use super::super::test_util::{plain_ack, set_loss_interval, set_path};
    use super::*;
    use crate::cc::test_support::ack_clock::ms;
    use crate::cc::{CcPhase, CongestionEvent, MultipathController};

    fn params() -> CcParams {
        CcParams { mss_bytes: MSS, initial_window_pkts: 10 }
    }

    /// Paths given as (cwnd segments, RTT ms, segments between the last two losses and since).
    fn coupled(config: CoupledCubicConfig, paths: &[(u64, u64, u64)]) -> CoupledCubic {
        let mut cc = CoupledCubic::with_config(params(), paths.len(), config);
        for (p, &(cwnd, rtt_ms, l)) in cc.paths.iter_mut().zip(paths) {
            set_path(p, cwnd, Duration::from_millis(rtt_ms));
            set_loss_interval(p, l, l);
        }
        cc.refresh_modes();
        cc
    }

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn response_functions_cross_at_the_switch_loss_rate() {
        let cfg = CoupledCubicConfig::default();
        // Eq. 9's constant: (0.4 * 3.7 / (4 * 0.3))^(1/4) = 1.2333^(1/4) = 1.0538.
        assert!(close(cfg.cubic_response_coefficient(), 1.0538, 1e-4));
        // Eq. 7 at T = 0.1 s: 1.2333 * 0.001 / 2.25 = 5.4815e-4 (the paper's rounded -0.36
        // gives 5.38e-4).
        let p_bar = cfg.switch_loss_rate(0.1);
        assert!(close(p_bar, 5.4815e-4, 1e-4), "p_bar {p_bar}");
        // There both average windows are sqrt(1.5 / 5.4815e-4) = 52.31 segments.
        let reno = cfg.reno_average_window_pkts(p_bar);
        assert!(close(reno, 52.31, 1e-3), "W_RENO {reno}");
        assert!(close(cfg.cubic_average_window_pkts(p_bar, 0.1), reno, 1e-9));
        // At T = 0.02 s: 1.2333 * 8e-6 / 2.25 = 4.385e-6, a window of sqrt(1.5/p) = 584.9.
        let p_bar = cfg.switch_loss_rate(0.02);
        assert!(close(cfg.reno_average_window_pkts(p_bar), 584.9, 1e-3));
    }

    #[test]
    fn the_mode_switches_by_bdp_as_equations_6_and_7_define() {
        let cfg = CoupledCubicConfig::default();
        // p = 1e-4 is below p_bar(100 ms) = 5.5e-4 (large BDP: CUBIC) but above
        // p_bar(20 ms) = 4.4e-6 (small BDP: LIA).
        assert_eq!(cfg.mode_for(1e-4, 0.1), PathMode::Cubic);
        assert_eq!(cfg.mode_for(1e-4, 0.02), PathMode::Lia);
        assert_eq!(cfg.mode_for(1e-3, 0.1), PathMode::Lia);
        // The controller: 10000 segments between losses (p = 1e-4) at 100 ms and at 20 ms,
        // 1000 segments (p = 1e-3) at 100 ms.
        let cc = coupled(cfg, &[(100, 100, 10_000), (100, 20, 10_000), (100, 100, 1000)]);
        let modes: Vec<_> = (0..3).map(|p| cc.path_mode(p)).collect();
        assert_eq!(modes, [PathMode::Cubic, PathMode::Lia, PathMode::Lia]);
        // Before its first loss event a path is in LIA mode.
        let mut cc = CoupledCubic::new(params(), 1);
        set_path(&mut cc.paths[0], 100, Duration::from_millis(100));
        cc.refresh_modes();
        assert_eq!(cc.path_mode(0), PathMode::Lia);
    }

    #[test]
    fn virtual_reno_window_follows_equation_10() {
        // p = 1e-5, T = 0.1 s: W_RENO = sqrt(1.5e5) = 387.30; W_CUBIC = 1.0538 * 0.1^0.75 *
        // 1e5^0.75 = 1.0538 * 0.17783 * 5623.4 = 1053.8; ratio 0.36752.
        let cc = coupled(CoupledCubicConfig::default(), &[(1000, 100, 100_000)]);
        assert_eq!(cc.path_mode(0), PathMode::Cubic);
        let ratio = cc.cubic[0].reno_ratio.unwrap();
        assert!(close(ratio, 387.30 / 1053.8, 1e-3), "ratio {ratio}");
    }

    #[test]
    fn alpha_iteration_on_a_concrete_example() {
        // Path 0: CUBIC mode, 1000 segments, p = 1e-5: virtual Reno window 367.52.
        // Path 1: LIA mode (p = 1e-2), 100 segments. Equal RTTs, so eq. 1 is max w / sum w.
        // alpha_1 = 367.52 / 467.52 = 0.78611.
        // Virtual LIA window 367.52 * 0.78611 = 288.91; alpha_2 = 288.91 / 388.91 = 0.74287.
        let paths = [(1000, 100, 100_000), (100, 100, 100)];
        let cc = coupled(CoupledCubicConfig::default(), &paths);
        let a = cc.coupling_alphas().unwrap();
        assert!(close(a.alpha_1, 0.78611, 1e-4), "alpha_1 {}", a.alpha_1);
        assert!(close(a.alpha, 0.74287, 1e-4), "alpha_2 {}", a.alpha);
        assert!(close(a.cwnd_total_bytes, 388_910.0, 1e-4));
        // CCUBIC(alpha_1): no refinement, the LIA paths use alpha_1 itself.
        let alpha_1_only = CoupledCubicConfig { alpha_refinements: 0, ..Default::default() };
        let a1 = coupled(alpha_1_only, &paths).coupling_alphas().unwrap();
        assert_eq!(a1.alpha, a1.alpha_1);
        // The square-root reading: 367.52 * sqrt(0.78611) = 325.85, alpha_2 = 325.85 / 425.85.
        let sqrt = CoupledCubicConfig { alpha_exponent: 0.5, ..Default::default() };
        let a = coupled(sqrt, &paths).coupling_alphas().unwrap();
        assert!(close(a.alpha, 0.76518, 1e-4), "alpha_2 {}", a.alpha);
        // The LIA path's increase (eq. 2) per segment acked: min(0.74287 * 1000 * 1000 /
        // 388910, 1000 * 1000 / 100000) = min(1.9101, 10) = 1.9101 bytes.
        let mut cc = coupled(CoupledCubicConfig::default(), &paths);
        cc.on_ack(1, &plain_ack(ms(100), ms(50), MSS));
        let grown = cc.paths[1].cwnd_f64() - 100_000.0;
        assert!(close(grown, 1.9101, 1e-3), "grew {grown} bytes");
    }

    #[test]
    fn with_every_path_in_lia_mode_it_is_lia() {
        // p = 1e-2 on both paths: LIA mode, no virtual window; every increase is LIA's.
        let paths = [(10, 10, 100), (20, 40, 100)];
        let mut cc = coupled(CoupledCubicConfig::default(), &paths);
        let mut lia = Lia::new(params(), 2);
        for (p, &(cwnd, rtt_ms, _)) in lia.paths.iter_mut().zip(&paths) {
            set_path(p, cwnd, Duration::from_millis(rtt_ms));
        }
        for path in [0, 1, 0, 1] {
            cc.on_ack(path, &plain_ack(ms(100), ms(50), MSS));
            lia.on_ack(path, &plain_ack(ms(100), ms(50), MSS));
            assert_eq!(cc.paths[path].cwnd_f64(), lia.paths[path].cwnd_f64());
        }
        assert!(cc.paths[0].cwnd_f64() > 10_000.0);
        assert_eq!((cc.path_mode(0), cc.path_mode(1)), (PathMode::Lia, PathMode::Lia));
    }

    #[test]
    fn after_a_loss_the_window_is_beta_times_w_max() {
        let mut cc = coupled(CoupledCubicConfig::default(), &[(1000, 100, 100_000)]);
        assert_eq!(cc.path_mode(0), PathMode::Cubic);
        let loss = CongestionEvent {
            now: ms(200),
            largest_lost_sent_time: ms(100),
            lost_bytes: MSS,
            in_flight_bytes: 999 * MSS,
        };
        cc.on_congestion_event(0, &loss);
        assert_eq!(cc.cubic[0].w_max_bytes, Some(1_000_000.0));
        assert_eq!(cc.cwnd_bytes(0), 700 * MSS, "beta * W_max");
        assert_eq!(cc.metrics(0).phase, CcPhase::Recovery);
        // The next stage climbs back to W_max after K = cbrt(300 / 0.4) = 9.09 s (one path:
        // alpha_1 = 1, so the curve is unscaled).
        cc.on_ack(0, &plain_ack(ms(400), ms(300), MSS));
        let epoch = cc.cubic[0].epoch.expect("a stage began");
        assert!(close(epoch.k_s, (300.0f64 / 0.4).cbrt(), 1e-9), "K {}", epoch.k_s);
        // A LIA-mode path halves its flight instead.
        let mut cc = coupled(CoupledCubicConfig::default(), &[(100, 100, 100)]);
        cc.on_congestion_event(0, &CongestionEvent { in_flight_bytes: 99 * MSS, ..loss });
        assert_eq!(cc.cwnd_bytes(0), 50 * MSS);
        assert_eq!(cc.cubic[0].w_max_bytes, Some(100_000.0));
    }

    #[test]
    fn two_identical_cubic_paths_probe_no_faster_than_one_cubic_flow() {
        // Both paths in CUBIC mode (p = 1e-6 at 100 ms) at 500 segments with no W_max above:
        // K = 0, and alpha_1 = 1/2 scales each curve to 0.5 * 0.4 * t^3. The pair adds
        // 0.4 * t^3 = one CUBIC flow's convex probe: 0.4 * (4.9 + 0.1)^3 = 50 segments by 5 s
        // (the stage starts with the first ACK at 100 ms; the target looks one srtt ahead).
        // Two uncoupled CUBIC flows would add 100.
        let rtt = Duration::from_millis(100);
        let cc = coupled(CoupledCubicConfig::default(), &[(500, 100, 1_000_000); 2]);
        let mut f = MultiClock::new(cc, &[rtt, rtt]);
        f.run_until(ms(5000));
        assert_eq!(f.cc.path_mode(0), PathMode::Cubic);
        let grown = f.total_cwnd_pkts() - 1000.0;
        assert!((40.0..=52.5).contains(&grown), "the pair grew {grown} segments in 5 s");
    }

    #[test]
    fn config_validation_names_the_field() {
        let d = CoupledCubicConfig::default();
        assert_eq!((d.c_segments_per_s3, d.beta, d.alpha_refinements), (0.4, 0.7, 1));
        assert!(d.validate().is_ok());
        let bad = CoupledCubicConfig { alpha_exponent: 2.0, ..d };
        assert_eq!(bad.validate().unwrap_err().to_string(), "alpha_exponent: must be in [0.5, 1]");
        let bad = CoupledCubicConfig { alpha_refinements: 9, ..d };
        assert_eq!(bad.validate().unwrap_err().field, "alpha_refinements");
    }
}
