//! Adaptive Cheapest Path First (ACPF): Pieska et al., "Adaptive Cheapest Path First Scheduling
//! in a Transport-Layer Multi-Path Tunnel Context", ANRW 2021, sections 3.2, 4 and 4.2.
//! The pseudo-code of its Figure 2b/2c is lost in the text copy; docs/design.md section 3
//! ("ACPF") states what the project relies on.
//!
//! # Model
//! CPF fills the cheap path's window before it spills to the dear one, and with a BBR tunnel
//! (cwnd about 2 x BDP, section 3.2 eq. 1) that window includes a full BDP of bottleneck queue:
//! the end-to-end sender sees one long path and rarely grows enough to aggregate (section 3.1).
//! ACPF schedules as CPF does, but against a *live cwnd* = fraction x *raw cwnd* (the path
//! controller's window). One fraction is shared by all paths ("each path has its own fraction,
//! which is kept synchronized", section 4). A management step moves it every 1 ms (section 4.2,
//! the user-space variant; the kernel variant steps per scheduled packet):
//! - scheduler queue > 10 packets (section 4): the sender wants more than the live windows take,
//!   so the fraction grows; a queue that has persisted for more than 10 ms (section 4.2) makes it
//!   grow faster;
//! - otherwise the fraction shrinks, towards 0.47 (section 4: found experimentally; about half,
//!   because BBR's cwnd gain is 2 and half of cwnd is then about one BDP, section 3.2);
//! - while any path's controller is in BBR ProbeRTT, management is paused (section 4.1): the
//!   queue that builds while the window is cut to 4 packets says nothing about the BDP.
//!
//! # Choices where the source is vague
//! - **Which paths**: the fraction limits *every* path, as section 3.2 says ("the amount of
//!   packets that can be scheduled over any path is limited to a fraction of cwnd"). Limiting
//!   the dearest path too is what lets its queue build up and push the fraction back up once all
//!   paths hold about a BDP. A live cwnd is never below one packet (as the MP-DCCP kernel
//!   module's `min_cwnd`), so a path never closes because of the fraction alone.
//! - **Increment law (Figure 2c is lost)**: additive per tick, in parts per million so that runs
//!   are exact. A persistent queue adds `(max - min) / 530 ticks` = 0.001 per tick: "the default
//!   time required to bring the fraction from its minimum to its maximum" is "530 ms" (section
//!   4.2), and 0.53 / 530 ms is exactly one per-mille per 1 ms tick, which we read as the paper's
//!   unit step. A transient queue (its first 10 ticks) adds a quarter of that, our choice for
//!   "scaled down ... reacts more aggressively to a queue-buildup which is persistent". A
//!   sustained queue therefore takes 10 + 527.5 = 538 ms from minimum to maximum ("about 530").
//!   Additive rather than multiplicative because the paper states a fixed min-to-max time,
//!   which only an additive law gives independently of where the fraction starts.
//! - **Decrease law**: symmetric, 0.001 per tick (maximum to minimum in 530 ms); the paper gives
//!   no rate.
//! - **Initial fraction**: the minimum, for the "initial shallow occupancy of the primary path
//!   buffer" of section 3.2.
//! - **Lazy ticks**: steps fall due every `tick` of `now` and run, in order, at the next
//!   `select` call, using that call's queue length and path phases. The sender calls `select`
//!   whenever its queue is non-empty and anything happens (a packet enters, feedback, a pacing
//!   slot), so while packets wait few ticks are ever missed; while the queue is empty there are
//!   no calls, and the first packet afterwards (queue of 1) rightly counts as a short queue.

use std::time::Duration;

use super::config::{out_of_range, within};
use super::{PathView, Scheduler, SchedulerMetrics};
use crate::cc::CcPhase;
use crate::time::{duration_nanos, Instant};
use crate::ConfigError;

/// Section 4: "a queue size threshold of 10 packets".
pub const ACPF_QUEUE_THRESHOLD_PKTS: usize = 10;
/// Section 4: "the minimum fraction was determined experimentally to be 0.47".
pub const ACPF_MIN_FRACTION: f64 = 0.47;
/// A live cwnd never exceeds the raw one.
pub const ACPF_MAX_FRACTION: f64 = 1.0;
/// Section 4.2: the management function runs "every 1 ms".
pub const ACPF_TICK: Duration = Duration::from_millis(1);
/// Section 4.2: minimum to maximum "530 ms" by default.
pub const ACPF_RAMP_UP: Duration = Duration::from_millis(530);
/// Section 4.2: "any queue lasting for more than 10 ms is persistent".
pub const ACPF_PERSISTENT_AFTER: Duration = Duration::from_millis(10);
/// Our choice: a transient queue grows the fraction at a quarter of the persistent rate.
pub const ACPF_TRANSIENT_STEP_DIVISOR: u32 = 4;
/// Our choice: shrinking is as fast as persistent growth.
pub const ACPF_RAMP_DOWN: Duration = Duration::from_millis(530);

/// Fractions are kept in parts per million.
const PPM: u64 = 1_000_000;

/// ACPF parameters. `Default` is the ACPF paper's values (Pieska et al. 2021) plus the choices in
/// the module doc.
#[derive(Clone, Debug, PartialEq)]
pub struct AcpfConfig {
    /// The fraction grows while the scheduler queue holds more than this many packets.
    pub queue_threshold_pkts: usize,
    pub min_fraction: f64,
    pub max_fraction: f64,
    /// Fraction before the first management step.
    pub initial_fraction: f64,
    /// Interval of the management step.
    pub tick: Duration,
    /// Time from `min_fraction` to `max_fraction` at the persistent-queue step.
    pub ramp_up: Duration,
    /// A queue above the threshold for longer than this is persistent.
    pub persistent_after: Duration,
    /// The transient-queue step is the persistent step divided by this.
    pub transient_step_divisor: u32,
    /// Time from `max_fraction` to `min_fraction` while the queue stays short.
    pub ramp_down: Duration,
}

impl Default for AcpfConfig {
    fn default() -> Self {
        AcpfConfig {
            queue_threshold_pkts: ACPF_QUEUE_THRESHOLD_PKTS,
            min_fraction: ACPF_MIN_FRACTION,
            max_fraction: ACPF_MAX_FRACTION,
            initial_fraction: ACPF_MIN_FRACTION,
            tick: ACPF_TICK,
            ramp_up: ACPF_RAMP_UP,
            persistent_after: ACPF_PERSISTENT_AFTER,
            transient_step_divisor: ACPF_TRANSIENT_STEP_DIVISOR,
            ramp_down: ACPF_RAMP_DOWN,
        }
    }
}

impl AcpfConfig {
    /// Checks every field; the error names the first one out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let hour = Duration::from_secs(3600);
        if self.queue_threshold_pkts > 1_000_000 {
            return out_of_range("acpf.queue_threshold_pkts", "in 0..=1000000");
        }
        if !(self.min_fraction > 0.0 && self.min_fraction <= 1.0) {
            return out_of_range("acpf.min_fraction", "in (0, 1]");
        }
        if !within(self.max_fraction, self.min_fraction, 1.0) {
            return out_of_range("acpf.max_fraction", "in [min_fraction, 1]");
        }
        if !within(self.initial_fraction, self.min_fraction, self.max_fraction) {
            return out_of_range("acpf.initial_fraction", "in [min_fraction, max_fraction]");
        }
        if !(Duration::from_micros(1)..=Duration::from_secs(1)).contains(&self.tick) {
            return out_of_range("acpf.tick", "in [1 us, 1 s]");
        }
        if !(self.tick..=hour).contains(&self.ramp_up) {
            return out_of_range("acpf.ramp_up", "in [tick, 3600 s]");
        }
        if self.persistent_after > hour {
            return out_of_range("acpf.persistent_after", "in [0, 3600 s]");
        }
        if !(1..=1000).contains(&self.transient_step_divisor) {
            return out_of_range("acpf.transient_step_divisor", "in 1..=1000");
        }
        if !(self.tick..=hour).contains(&self.ramp_down) {
            return out_of_range("acpf.ramp_down", "in [tick, 3600 s]");
        }
        Ok(())
    }
}

/// The ACPF scheduler. See the module documentation.
#[derive(Clone, Debug)]
pub struct AdaptiveCheapestPathFirst {
    fraction_ppm: u64,
    min_ppm: u64,
    max_ppm: u64,
    persistent_step_ppm: u64,
    transient_step_ppm: u64,
    decrease_step_ppm: u64,
    queue_threshold_pkts: usize,
    tick_ns: u64,
    persistent_after_ticks: u64,
    /// Consecutive ticks that saw a queue above the threshold, saturating one past
    /// `persistent_after_ticks` (beyond that the count changes nothing).
    busy_ticks: u64,
    /// Ticks after which the state can no longer change under a constant input: a bound on the
    /// work of catching up after a long gap between calls.
    settle_ticks: u64,
    /// When the next management step falls due; `None` before the first call.
    next_tick: Option<Instant>,
}

impl AdaptiveCheapestPathFirst {
    /// An ACPF scheduler. `config` should have passed [`AcpfConfig::validate`]; out-of-range
    /// values are clamped so that nothing panics.
    pub fn new(config: &AcpfConfig) -> Self {
        let to_ppm = |x: f64| ((x * PPM as f64).round() as u64).clamp(1, PPM);
        let min_ppm = to_ppm(config.min_fraction);
        let max_ppm = to_ppm(config.max_fraction).max(min_ppm);
        let tick_ns = duration_nanos(config.tick).max(1);
        let ticks_in = |d: Duration| (duration_nanos(d) / tick_ns).max(1);
        let range_ppm = max_ppm - min_ppm;
        let persistent_step_ppm = (range_ppm / ticks_in(config.ramp_up)).max(1);
        let transient_step_ppm =
            (persistent_step_ppm / u64::from(config.transient_step_divisor.max(1))).max(1);
        let decrease_step_ppm = (range_ppm / ticks_in(config.ramp_down)).max(1);
        let persistent_after_ticks = duration_nanos(config.persistent_after) / tick_ns;
        let slowest_step = transient_step_ppm.min(decrease_step_ppm);
        AdaptiveCheapestPathFirst {
            fraction_ppm: to_ppm(config.initial_fraction).clamp(min_ppm, max_ppm),
            min_ppm,
            max_ppm,
            persistent_step_ppm,
            transient_step_ppm,
            decrease_step_ppm,
            queue_threshold_pkts: config.queue_threshold_pkts,
            tick_ns,
            persistent_after_ticks,
            busy_ticks: 0,
            settle_ticks: persistent_after_ticks
                .saturating_add(range_ppm.div_ceil(slowest_step))
                .saturating_add(1),
            next_tick: None,
        }
    }

    /// The shared live/raw cwnd fraction.
    pub fn fraction(&self) -> f64 {
        self.fraction_ppm as f64 / PPM as f64
    }

    /// The live cwnd of `path`: fraction x raw cwnd, but at least one packet (or the raw cwnd
    /// when that is smaller).
    pub fn live_cwnd_bytes(&self, path: &PathView) -> u64 {
        let raw = path.cc.cwnd_bytes;
        let live = (u128::from(raw) * u128::from(self.fraction_ppm) / u128::from(PPM)) as u64;
        live.max(path.mss_bytes.min(raw))
    }

    /// Runs the management steps that fell due up to `now` (see "Lazy ticks").
    fn catch_up(&mut self, now: Instant, paths: &[PathView], queued_pkts: usize) {
        let tick_ns = self.tick_ns;
        let next = *self.next_tick.get_or_insert(now.add_nanos(tick_ns));
        if now < next {
            return;
        }
        let due = now.nanos_since(next) / tick_ns + 1;
        self.next_tick = Some(next.add_nanos(due.saturating_mul(tick_ns)));
        if paths.iter().any(|p| p.cc.phase == CcPhase::ProbeRtt) {
            return;
        }
        let queue_is_long = queued_pkts > self.queue_threshold_pkts;
        for _ in 0..due.min(self.settle_ticks) {
            self.manage(queue_is_long);
        }
    }

    /// One management step (the lost Figure 2b, with the law chosen in the module doc).
    fn manage(&mut self, queue_is_long: bool) {
        if queue_is_long {
            self.busy_ticks = (self.busy_ticks + 1).min(self.persistent_after_ticks + 1);
            let step = if self.busy_ticks > self.persistent_after_ticks {
                self.persistent_step_ppm
            } else {
                self.transient_step_ppm
            };
            self.fraction_ppm = (self.fraction_ppm + step).min(self.max_ppm);
        } else {
            self.busy_ticks = 0;
            self.fraction_ppm =
                self.fraction_ppm.saturating_sub(self.decrease_step_ppm).max(self.min_ppm);
        }
    }
}

impl Default for AdaptiveCheapestPathFirst {
    fn default() -> Self {
        AdaptiveCheapestPathFirst::new(&AcpfConfig::default())
    }
}

impl Scheduler for AdaptiveCheapestPathFirst {
    fn select(&mut self, now: Instant, paths: &[PathView], queued_pkts: usize) -> Option<usize> {
        self.catch_up(now, paths, queued_pkts);
        paths
            .iter()
            .filter(|p| p.has_room_in(self.live_cwnd_bytes(p)))
            .min_by_key(|p| (p.cost, p.index))
            .map(|p| p.index)
    }

    fn name(&self) -> &'static str {
        "acpf"
    }

    fn metrics(&self) -> SchedulerMetrics {
        SchedulerMetrics { acpf_fraction: Some(self.fraction()), ..SchedulerMetrics::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::test_util::view;

    fn ms(v: u64) -> Instant {
        Instant::from_nanos(v * 1_000_000)
    }

    /// Two paths with open windows, so the decision never depends on the fraction.
    fn open_paths() -> [PathView; 2] {
        [view(0, 1, 100, 0, 20), view(1, 2, 100, 0, 40)]
    }

    /// Calls `select` once per millisecond over `(from, to]` with `queued` packets waiting.
    fn run(
        s: &mut AdaptiveCheapestPathFirst,
        paths: &[PathView],
        from: u64,
        to: u64,
        queued: usize,
    ) {
        for t in from + 1..=to {
            s.select(ms(t), paths, queued);
        }
    }

    fn started_at(initial_fraction: f64) -> AdaptiveCheapestPathFirst {
        let mut s =
            AdaptiveCheapestPathFirst::new(&AcpfConfig { initial_fraction, ..Default::default() });
        s.select(ms(0), &open_paths(), 0);
        s
    }

    #[test]
    fn a_sustained_long_queue_takes_the_fraction_from_min_to_max_in_about_530_ms() {
        let mut s = started_at(ACPF_MIN_FRACTION);
        let paths = open_paths();
        let mut reached = None;
        for t in 1..=1000 {
            s.select(ms(t), &paths, 11);
            if reached.is_none() && s.fraction_ppm == PPM {
                reached = Some(t);
            }
        }
        // Ticks 1-10: transient, 250 ppm each -> 0.4725. Then 1000 ppm per tick for the
        // remaining 527 500 ppm: 527.5 -> 528 ticks. 10 + 528 = 538 ms.
        assert_eq!(reached, Some(538));
        assert_eq!(s.fraction(), 1.0);
    }

    #[test]
    fn a_queue_persisting_beyond_10_ms_grows_the_fraction_faster() {
        let mut s = started_at(ACPF_MIN_FRACTION);
        let paths = open_paths();
        run(&mut s, &paths, 0, 10, 20);
        let after_transient = s.fraction_ppm;
        run(&mut s, &paths, 10, 20, 20);
        let after_persistent = s.fraction_ppm;
        // 0.47 + 10 x 0.00025 = 0.4725; then + 10 x 0.001 = 0.4825.
        assert_eq!(after_transient, 472_500);
        assert_eq!(after_persistent, 482_500);
        // A dip to a short queue makes the next long queue transient again.
        run(&mut s, &paths, 20, 21, 3);
        run(&mut s, &paths, 21, 22, 20);
        assert_eq!(s.fraction_ppm, 482_500 - 1000 + 250);
    }

    #[test]
    fn a_short_queue_shrinks_the_fraction_to_its_minimum() {
        let mut s = started_at(1.0);
        let paths = open_paths();
        // Exactly 10 packets is not "more than 10": shrink by 0.001 per tick.
        run(&mut s, &paths, 0, 100, 10);
        assert_eq!(s.fraction_ppm, 900_000);
        run(&mut s, &paths, 100, 529, 10);
        assert_eq!(s.fraction_ppm, 471_000);
        run(&mut s, &paths, 529, 2000, 0);
        assert_eq!(s.fraction(), ACPF_MIN_FRACTION);
    }

    #[test]
    fn the_fraction_never_leaves_its_bounds() {
        let mut s = started_at(ACPF_MIN_FRACTION);
        let paths = open_paths();
        // Alternate long bursts of queue and silence, with uneven call spacing.
        let mut t = 0;
        for round in 0..40u64 {
            let queued = if round % 3 == 2 { 0 } else { 500 };
            for _ in 0..(50 + round * 7) {
                t += 1 + (round % 4);
                s.select(ms(t), &paths, queued);
                let f = s.fraction();
                assert!((ACPF_MIN_FRACTION..=ACPF_MAX_FRACTION).contains(&f), "{f} at {t} ms");
            }
        }
    }

    #[test]
    fn management_is_paused_while_a_path_is_in_probe_rtt() {
        let mut s = started_at(ACPF_MIN_FRACTION);
        let mut paths = open_paths();
        run(&mut s, &paths, 0, 50, 30);
        let before = s.fraction_ppm;
        paths[1].cc.phase = CcPhase::ProbeRtt;
        run(&mut s, &paths, 50, 250, 30);
        assert_eq!(s.fraction_ppm, before, "frozen through 200 ms of ProbeRTT");
        run(&mut s, &paths, 250, 450, 0);
        assert_eq!(s.fraction_ppm, before, "a short queue does not shrink it either");
        paths[1].cc.phase = CcPhase::ProbeBw;
        run(&mut s, &paths, 450, 451, 30);
        assert!(s.fraction_ppm > before, "management resumes after ProbeRTT");
    }

    #[test]
    fn missed_ticks_run_at_the_next_call_as_if_called_every_tick() {
        let paths = open_paths();
        let mut eager = started_at(ACPF_MIN_FRACTION);
        run(&mut eager, &paths, 0, 300, 40);
        let mut lazy = started_at(ACPF_MIN_FRACTION);
        lazy.select(ms(300), &paths, 40);
        assert_eq!(lazy.fraction_ppm, eager.fraction_ppm);
        // A call between ticks runs nothing; the step due at 301 ms runs at 301.5 ms.
        lazy.select(Instant::from_nanos(300_500_000), &paths, 40);
        assert_eq!(lazy.fraction_ppm, eager.fraction_ppm);
        lazy.select(Instant::from_nanos(301_500_000), &paths, 40);
        assert_eq!(lazy.fraction_ppm, eager.fraction_ppm + 1000);
        // A gap of an hour costs no more than settling does.
        lazy.select(ms(3_600_000), &paths, 0);
        assert_eq!(lazy.fraction(), ACPF_MIN_FRACTION);
    }

    #[test]
    fn the_live_cwnd_decides_availability() {
        let mut s = started_at(ACPF_MIN_FRACTION);
        // Path 0: raw cwnd 10 000 B, 4000 B in flight: CPF's window has room for a 1000 B
        // packet, but the live cwnd is 0.47 x 10 000 = 4700 B and 4000 + 1000 > 4700.
        let paths = [view(0, 1, 10, 4, 20), view(1, 2, 10, 0, 40)];
        assert_eq!(s.live_cwnd_bytes(&paths[0]), 4700);
        assert_eq!(s.select(ms(0), &paths, 1), Some(1));
        let mut cpf = crate::sched::CheapestPathFirst;
        assert_eq!(cpf.select(ms(0), &paths, 1), Some(0));
        // At 3000 B in flight it fits the live window: 3000 + 1000 <= 4700.
        let paths = [view(0, 1, 10, 3, 20), view(1, 2, 10, 0, 40)];
        assert_eq!(s.select(ms(0), &paths, 1), Some(0));
        // With the fraction at 1, ACPF is CPF.
        let mut full = started_at(1.0);
        let paths = [view(0, 1, 10, 9, 20), view(1, 2, 10, 0, 40)];
        assert_eq!(full.select(ms(0), &paths, 1), Some(0));
    }

    #[test]
    fn a_live_cwnd_is_never_below_one_packet() {
        let s = started_at(ACPF_MIN_FRACTION);
        // 0.47 x 2000 B = 940 B, below the 1000 B MSS: one packet may still go.
        assert_eq!(s.live_cwnd_bytes(&view(0, 1, 2, 0, 20)), 1000);
        let mut tiny = view(0, 1, 0, 0, 20);
        tiny.cc.cwnd_bytes = 600;
        assert_eq!(s.live_cwnd_bytes(&tiny), 600, "never above the raw cwnd");
    }

    #[test]
    fn reports_its_fraction() {
        let s = started_at(0.8);
        assert_eq!(s.metrics().acpf_fraction, Some(0.8));
        assert_eq!(s.metrics().blest_lambda, None);
    }

    #[test]
    fn config_errors_name_the_field_and_range() {
        assert_eq!(AcpfConfig::default().validate(), Ok(()));
        let bad = AcpfConfig { min_fraction: 0.0, ..Default::default() };
        assert_eq!(bad.validate().unwrap_err().to_string(), "acpf.min_fraction: must be in (0, 1]");
        let bad = AcpfConfig { max_fraction: 0.4, ..Default::default() };
        assert_eq!(bad.validate().unwrap_err().field, "acpf.max_fraction");
        let bad = AcpfConfig { initial_fraction: f64::NAN, ..Default::default() };
        assert_eq!(bad.validate().unwrap_err().field, "acpf.initial_fraction");
        let bad = AcpfConfig { tick: Duration::ZERO, ..Default::default() };
        assert_eq!(bad.validate().unwrap_err().field, "acpf.tick");
        let bad = AcpfConfig { ramp_up: Duration::from_micros(10), ..Default::default() };
        assert_eq!(bad.validate().unwrap_err().field, "acpf.ramp_up");
        let bad = AcpfConfig { transient_step_divisor: 0, ..Default::default() };
        assert_eq!(bad.validate().unwrap_err().field, "acpf.transient_step_divisor");
        // An unvalidated config still builds without panicking.
        let wild = AcpfConfig {
            min_fraction: 2.0,
            max_fraction: -1.0,
            tick: Duration::ZERO,
            transient_step_divisor: 0,
            ..Default::default()
        };
        let mut s = AdaptiveCheapestPathFirst::new(&wild);
        s.select(ms(5), &open_paths(), 100);
        assert!(s.fraction() <= 1.0);
    }
}
