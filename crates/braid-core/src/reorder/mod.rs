//! Receiver-side reordering: release tunnelled packets in global sequence order, waiting a
//! bounded time for gaps to fill.
//!
//! Sources: Pieska et al. 2024, section 2.1 and Table 1, which summarise the
//! reordering of MP-DCCP: wait for early packets up to a static or adaptive limit, fast loss
//! detection, delay equalisation; draft-amend-iccrg-multipath-reordering ("Multipath sequence
//! maintenance"), the problem statement for reordering in unreliable multipath tunnels (ATSSS).
//! The behaviour of MP-DCCP's active reordering module (telekom/mp-dccp,
//! `net/dccp/non_gpl_reordering/ro_active.c`) was read for comparison only; its licence is
//! non-commercial and no code is taken from it.
//!
//! # Model
//! Every tunnelled packet carries a global sequence number (one counter per tunnel direction,
//! from 0) and the sender's send timestamp. Packets scheduled on paths with different delays
//! arrive scrambled; the end-to-end TCP above would read the scrambling as loss. The receiver
//! therefore holds a packet that arrived beyond a gap until either the gap fills or the packet
//! has waited the *wait limit*; then it gives the gap up as lost and releases what it holds.
//!
//! [`ReorderKind`] selects the policy:
//! - `none`: passthrough; every packet is released at once, in arrival order.
//! - `static`: the wait limit is [`ReorderConfig::static_wait`].
//! - `adaptive`: the wait limit follows the measured one-way-delay difference between paths
//!   plus a margin ([`wait_limit::AdaptiveWaitLimit`]).
//!
//! Three switches add to a policy (all off by default: Table 1 names only the adaptive policy):
//! - [`ReorderConfig::fast_loss_detection`] (`static`, `adaptive`): a gap is given up as soon as
//!   every active path has delivered a higher number and no quiet path could still bring it
//!   (`fast_loss.rs`); the wait limit still applies.
//! - [`ReorderConfig::equalize_delay`] (every policy): packets of faster paths are held by their
//!   lag behind the slowest path before they reach the reorder stage (`equalize.rs`).
//! - [`ReorderConfig::repair_wait`] (`static`, `adaptive`; Braid's own, not in Pieska et al. 2024):
//!   on reliable tunnel paths, a gap that a path may still be repairing waits up to this long for
//!   the retransmission instead of the wait limit. The tunnel receiver tells the buffer which
//!   global numbers each path may still deliver: the loss and the packets it holds back behind
//!   it ([`ReorderBuffer::set_repair_window`]). Without it the adaptive limit, the paths' delay
//!   difference plus 10 ms, gives up a gap before a repair one path RTT later can fill it,
//!   and the end-to-end TCP sees the loss the tunnel was repairing.
//!
//! Whatever the policy, each global sequence number is delivered at most once: a sliding-window
//! duplicate filter in front of everything refuses second copies (`duplicate_filter.rs`), which
//! redundant scheduling produces on purpose.
//!
//! ```text
//! insert ─▶ duplicate filter ─▶ [delay line] ─▶ reorder stage ─▶ poll_release
//!             (refused: Insert::Duplicate)       (ring, wait limit, fast loss detection)
//! ```
//!
//! The mechanics are in [`ReorderBuffer`] (`buffer.rs`); the wait limit in `wait_limit.rs`; the
//! per-path delay samples both the adaptive limit and equalisation read in `path_delay.rs`.
//!
//! # Choices where the sources are vague
//! - *Late packets* (their gap was already given up) are released at once, out of order, and
//!   counted, not dropped. The TCP above prefers a late segment to a lost one: if it arrives
//!   before the sender's loss detection fires it fills the hole and nothing is retransmitted;
//!   if after, the receiver's DSACK lets the sender undo its window reduction. A dropped
//!   segment always costs an end-to-end retransmission and a window reduction. MP-DCCP's
//!   active reordering forwards late packets too by default.
//! - *Duplicates* (a number already received, whether still held or released, or one more than
//!   [`DUPLICATE_WINDOW_SEQS`] below the highest received) are handed back to the caller
//!   ([`Insert::Duplicate`]), who counts them as reorder-queue drops. They still count as delay
//!   samples and as fast-loss evidence of the path they came on.
//! - *Static wait* defaults to 50 ms: Pieska et al. 2024 give no value for the static module. 50 ms
//!   is our choice: the path RTTs of every reference scenario except ASYM40 / ASYM200 differ by at
//!   most 20 ms (10 ms one way), which leaves 40 ms for queueing on the slower path. (MP-DCCP's
//!   active reordering module uses 15 ms as its fixed default.)
//! - *Margin* defaults to 10 ms as in Table 1; the text of section 4.2 says 5 ms. Configurable.
//! - *Fast loss detection with `none`* is refused by `validate`: nothing is held, so there is
//!   no gap to give up.

mod buffer;
pub mod duplicate_filter;
mod equalize;
pub mod fast_loss;
pub mod owd_stats;
pub mod path_delay;
pub mod wait_limit;

use std::time::Duration;

use crate::time::Instant;

pub use buffer::ReorderBuffer;
pub use duplicate_filter::{DuplicateFilter, Seen, DUPLICATE_WINDOW_SEQS};
pub use fast_loss::FastLossDetector;
pub use owd_stats::{OwdStats, OwdSummary};
pub use path_delay::{PathDelays, PATH_SAMPLE_MAX_AGE};
pub use wait_limit::{AdaptiveWaitLimit, MAX_WAIT_LIMIT};

/// Reorder buffer size in packets (Pieska et al. 2024, Table 1: "Reorder buffer 1500 pkt").
pub const DEFAULT_BUFFER_PKTS: usize = 1500;
/// Wait limit of the static policy; our choice (see the module documentation).
pub const DEFAULT_STATIC_WAIT: Duration = Duration::from_millis(50);
/// Margin added to the adaptive estimate (Pieska et al. 2024, Table 1: "Added margin 10 ms").
pub const DEFAULT_MARGIN: Duration = Duration::from_millis(10);
/// Weight of a new sample in the adaptive estimate (Pieska et al. 2024, Table 1: "Moving
/// average weight 95%"; section 4.2: "each new value determining 95% of the estimation").
pub const DEFAULT_NEW_SAMPLE_WEIGHT: f64 = 0.95;
/// Largest buffer `validate` accepts: a million packets is 1.5 GB of 1500-byte frames.
pub const MAX_BUFFER_PKTS: usize = 1_000_000;

crate::named_enum! {
    /// The release policy, as configs name it (`tunnel.reorder`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum ReorderKind {
        what = "reorder policy";
        /// Passthrough: release every packet at once, in arrival order.
        None => "none",
        /// Hold out-of-order packets for a fixed wait limit.
        Static => "static",
        /// Hold out-of-order packets for the measured path delay difference plus a margin.
        Adaptive => "adaptive",
    }
}

/// Configuration of the receiver's reorder buffer. `Default` is Table 1 of Pieska et al. 2024.
#[derive(Clone, Debug, PartialEq)]
pub struct ReorderConfig {
    pub kind: ReorderKind,
    /// Most packets held at once (Table 1: 1500).
    pub buffer_pkts: usize,
    /// Wait limit of [`ReorderKind::Static`] (default 50 ms, our choice).
    pub static_wait: Duration,
    /// Added to the adaptive estimate (Table 1: 10 ms; the paper's text: 5 ms).
    pub margin: Duration,
    /// Weight of a new delay-difference sample in the moving average, in (0, 1] (Table 1: 0.95).
    pub new_sample_weight: f64,
    /// Give a gap up as soon as every active path has delivered beyond it and no quiet path
    /// could still bring it (Pieska et al. 2024, section 2.1; `fast_loss.rs`). `static` and
    /// `adaptive` only. Default off.
    pub fast_loss_detection: bool,
    /// Hold packets of faster paths by their one-way-delay lag behind the slowest path
    /// (Pieska et al. 2024, section 2.1). Any policy. Default off.
    pub equalize_delay: bool,
    /// Wait for repairs: a held packet below which a reliable path may still deliver a number,
    /// behind a loss it is repairing ([`ReorderBuffer::set_repair_window`]), waits up to this
    /// long after its arrival before its gap is given up, if that is longer than the wait
    /// limit. `None` (the default, as in Pieska et al. 2024) waits the wait limit only. `static`
    /// and `adaptive` only.
    pub repair_wait: Option<Duration>,
}

impl Default for ReorderConfig {
    fn default() -> Self {
        ReorderConfig {
            kind: ReorderKind::Adaptive,
            buffer_pkts: DEFAULT_BUFFER_PKTS,
            static_wait: DEFAULT_STATIC_WAIT,
            margin: DEFAULT_MARGIN,
            new_sample_weight: DEFAULT_NEW_SAMPLE_WEIGHT,
            fast_loss_detection: false,
            equalize_delay: false,
            repair_wait: None,
        }
    }
}

/// A reorder configuration value out of range; names the field and what is allowed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ReorderConfigError {
    #[error("buffer_pkts = {0}: must be in 1..={MAX_BUFFER_PKTS}")]
    BufferPkts(usize),
    #[error("static_wait = {0:?}: must be at most {MAX_WAIT_LIMIT:?}")]
    StaticWait(Duration),
    #[error("margin = {0:?}: must be at most {MAX_WAIT_LIMIT:?}")]
    Margin(Duration),
    #[error("new_sample_weight = {0}: must be in (0, 1]")]
    NewSampleWeight(f64),
    #[error("fast_loss_detection = true: needs kind static or adaptive (none holds no gaps)")]
    FastLossWithoutWait,
    #[error("repair_wait = {0:?}: must be at most {MAX_WAIT_LIMIT:?}")]
    RepairWait(Duration),
    #[error("repair_wait is set: needs kind static or adaptive (none holds no gaps)")]
    RepairWaitWithoutWait,
}

impl ReorderConfig {
    pub fn validate(&self) -> Result<(), ReorderConfigError> {
        if !(1..=MAX_BUFFER_PKTS).contains(&self.buffer_pkts) {
            return Err(ReorderConfigError::BufferPkts(self.buffer_pkts));
        }
        if self.static_wait > MAX_WAIT_LIMIT {
            return Err(ReorderConfigError::StaticWait(self.static_wait));
        }
        if self.margin > MAX_WAIT_LIMIT {
            return Err(ReorderConfigError::Margin(self.margin));
        }
        // Written so that NaN fails too.
        if !(self.new_sample_weight > 0.0 && self.new_sample_weight <= 1.0) {
            return Err(ReorderConfigError::NewSampleWeight(self.new_sample_weight));
        }
        if self.fast_loss_detection && self.kind == ReorderKind::None {
            return Err(ReorderConfigError::FastLossWithoutWait);
        }
        match self.repair_wait {
            Some(w) if w > MAX_WAIT_LIMIT => return Err(ReorderConfigError::RepairWait(w)),
            Some(_) if self.kind == ReorderKind::None => {
                return Err(ReorderConfigError::RepairWaitWithoutWait)
            }
            _ => {}
        }
        Ok(())
    }
}

/// What [`ReorderBuffer::insert`] did with a packet.
#[derive(Debug, PartialEq, Eq)]
pub enum Insert<P> {
    /// Taken: it will come out of [`ReorderBuffer::poll_release`] exactly once.
    Accepted,
    /// Its global sequence number was received before, or lies below the duplicate window
    /// ([`DUPLICATE_WINDOW_SEQS`]); here is the payload back.
    Duplicate(P),
}

/// A packet released for delivery, with what the caller needs for the delay metrics
/// (head-of-line blocking = delivery time - `arrival`, docs/design.md section 5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Released<P> {
    pub payload: P,
    pub global_seq: u64,
    /// When the packet reached the receiver.
    pub arrival: Instant,
    /// When it reached the reorder stage: the end of its delay-equalisation hold, or `arrival`
    /// without equalisation.
    pub hold_end: Instant,
    /// The path it arrived on.
    pub path: usize,
}

/// Counters of a reorder buffer. Every released packet is counted in exactly one of
/// `in_order`, `released_on_timeout`, `released_on_fast_loss`, `released_on_overflow` and `late`.
#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReorderStats {
    /// Released because it was next in sequence (for `none`: every packet).
    pub in_order: u64,
    /// Released because the oldest held packet's wait limit expired: that packet and the held
    /// packets below it. The consecutive run after it counts as `in_order`.
    pub released_on_timeout: u64,
    /// Released because fast loss detection gave the gaps below it up: the held packets below
    /// the bound (the lowest of the active paths' highest numbers) and the packet at the bound.
    /// The consecutive run after it counts as `in_order`.
    pub released_on_fast_loss: u64,
    /// Released early to make room for a packet beyond the end of the buffer.
    pub released_on_overflow: u64,
    /// Arrived after its sequence number had been given up; released out of order.
    pub late: u64,
    /// Returned as [`Insert::Duplicate`]: second copies and those below the window.
    pub duplicates: u64,
    /// Of `duplicates`, those refused for lying below the duplicate window.
    pub too_old: u64,
    /// Sequence numbers given up as lost (by expiry, fast loss detection or overflow).
    pub skipped_seqs: u64,
}

impl ReorderStats {
    /// Packets released so far.
    pub fn released(&self) -> u64 {
        self.in_order
            + self.released_on_timeout
            + self.released_on_fast_loss
            + self.released_on_overflow
            + self.late
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_table_1() {
        let c = ReorderConfig::default();
        assert_eq!(c.kind, ReorderKind::Adaptive);
        assert_eq!(c.buffer_pkts, 1500);
        assert_eq!(c.static_wait, Duration::from_millis(50));
        assert_eq!(c.margin, Duration::from_millis(10));
        assert_eq!(c.new_sample_weight, 0.95);
        assert!(!c.fast_loss_detection && !c.equalize_delay, "Table 1 names neither");
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        for name in ReorderKind::NAMES {
            assert_eq!(name.parse::<ReorderKind>().unwrap().as_str(), *name);
        }
        let err = "dynamic".parse::<ReorderKind>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown reorder policy \"dynamic\"; expected one of: none, static, adaptive"
        );
    }

    #[test]
    fn validate_names_the_field_and_range() {
        let ok = ReorderConfig::default();
        let check =
            |c: ReorderConfig, msg: &str| assert_eq!(c.validate().unwrap_err().to_string(), msg);
        check(
            ReorderConfig { buffer_pkts: 0, ..ok.clone() },
            "buffer_pkts = 0: must be in 1..=1000000",
        );
        check(
            ReorderConfig { buffer_pkts: 1_000_001, ..ok.clone() },
            "buffer_pkts = 1000001: must be in 1..=1000000",
        );
        check(
            ReorderConfig { static_wait: Duration::from_secs(11), ..ok.clone() },
            "static_wait = 11s: must be at most 10s",
        );
        check(
            ReorderConfig { margin: Duration::from_secs(11), ..ok.clone() },
            "margin = 11s: must be at most 10s",
        );
        for w in [0.0, -0.5, 1.5, f64::NAN] {
            let c = ReorderConfig { new_sample_weight: w, ..ok.clone() };
            assert!(matches!(c.validate(), Err(ReorderConfigError::NewSampleWeight(_))), "{w}");
        }
        check(
            ReorderConfig { kind: ReorderKind::None, fast_loss_detection: true, ..ok.clone() },
            "fast_loss_detection = true: needs kind static or adaptive (none holds no gaps)",
        );
        for kind in [ReorderKind::None, ReorderKind::Static, ReorderKind::Adaptive] {
            let c = ReorderConfig { kind, equalize_delay: true, ..ok.clone() };
            assert_eq!(c.validate(), Ok(()), "equalisation combines with {kind:?}");
        }
        for kind in [ReorderKind::Static, ReorderKind::Adaptive] {
            let c = ReorderConfig { kind, fast_loss_detection: true, ..ok.clone() };
            assert_eq!(c.validate(), Ok(()), "fast loss detection combines with {kind:?}");
            let c = ReorderConfig { kind, repair_wait: Some(MAX_WAIT_LIMIT), ..ok.clone() };
            assert_eq!(c.validate(), Ok(()), "the repair wait combines with {kind:?}");
        }
        let long = MAX_WAIT_LIMIT + Duration::from_millis(1);
        assert_eq!(
            ReorderConfig { repair_wait: Some(long), ..ok.clone() }.validate(),
            Err(ReorderConfigError::RepairWait(long))
        );
        assert_eq!(
            ReorderConfig {
                kind: ReorderKind::None,
                repair_wait: Some(Duration::from_millis(1)),
                ..ok.clone()
            }
            .validate(),
            Err(ReorderConfigError::RepairWaitWithoutWait)
        );
        let edges = ReorderConfig {
            buffer_pkts: 1,
            static_wait: MAX_WAIT_LIMIT,
            margin: Duration::ZERO,
            new_sample_weight: 1.0,
            ..ok
        };
        assert_eq!(edges.validate(), Ok(()));
    }
}
