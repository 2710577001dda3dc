//! Packet schedulers: which path carries the next packet.
//!
//! The tunnel sender asks its scheduler once per packet at the head of the scheduler queue,
//! passing a [`PathView`] per path. A scheduler answers with a path index, or `None` to keep the
//! packet queued until feedback opens a window (draft-bonaventure-iccrg-schedulers section 2:
//! schedulers pick among paths whose congestion window has room).

pub mod cpf;
pub mod redundant;
pub mod round_robin;
pub mod srtt;

use std::str::FromStr;
use std::time::Duration;

use crate::cc::{CcMetrics, UnknownName};
use crate::time::Instant;

pub use cpf::CheapestPathFirst;
pub use redundant::Redundant;
pub use round_robin::RoundRobin;
pub use srtt::LowestRtt;

/// What a scheduler may know about one path when it decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathView {
    pub index: usize,
    /// Configured cost; CPF prefers lower (seed 000 section 2.3: WiFi before cellular).
    pub cost: u32,
    /// Whether the path is usable at all (liveness; always true in the simulator).
    pub is_up: bool,
    /// Charged bytes in flight, including packets assigned to the path and waiting for pacing.
    pub in_flight_bytes: u64,
    /// What the packet being scheduled would be charged on this path.
    pub charge_bytes: u64,
    /// Smoothed RTT, if the path has measured one.
    pub srtt: Option<Duration>,
    pub cc: CcMetrics,
}

impl PathView {
    /// Seed 000 section 2.3: "a path is considered available if its path congestion window
    /// has sufficient room to send a packet".
    #[inline]
    pub fn has_room(&self) -> bool {
        self.is_up && self.in_flight_bytes + self.charge_bytes <= self.cc.cwnd_bytes
    }
}

/// A packet scheduler.
pub trait Scheduler: std::fmt::Debug + Send {
    /// Picks the path for the packet at the head of the queue, or `None` to wait.
    /// `queued_pkts` is the scheduler queue length including that packet.
    fn select(&mut self, now: Instant, paths: &[PathView], queued_pkts: usize) -> Option<usize>;
    /// Whether the sender should copy each packet to every path with room instead of asking
    /// [`Scheduler::select`] for one ([`redundant`]).
    fn duplicates(&self) -> bool {
        false
    }
    fn name(&self) -> &'static str;
}

/// Scheduler names as configs spell them (`tunnel.scheduler`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SchedulerKind {
    Cpf,
    Srtt,
    RoundRobin,
    Redundant,
}

impl SchedulerKind {
    pub const NAMES: &'static [&'static str] = &["cpf", "srtt", "rr", "redundant"];

    pub fn as_str(self) -> &'static str {
        match self {
            SchedulerKind::Cpf => "cpf",
            SchedulerKind::Srtt => "srtt",
            SchedulerKind::RoundRobin => "rr",
            SchedulerKind::Redundant => "redundant",
        }
    }

    pub fn build(self) -> Box<dyn Scheduler> {
        match self {
            SchedulerKind::Cpf => Box::new(CheapestPathFirst),
            SchedulerKind::Srtt => Box::new(LowestRtt),
            SchedulerKind::RoundRobin => Box::new(RoundRobin::default()),
            SchedulerKind::Redundant => Box::new(Redundant),
        }
    }
}

impl FromStr for SchedulerKind {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cpf" => Ok(SchedulerKind::Cpf),
            "srtt" | "minrtt" => Ok(SchedulerKind::Srtt),
            "rr" | "round_robin" => Ok(SchedulerKind::RoundRobin),
            "redundant" => Ok(SchedulerKind::Redundant),
            _ => Err(UnknownName { what: "scheduler", given: s.to_string(), allowed: Self::NAMES }),
        }
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::*;
    use crate::cc::CcPhase;

    /// A path view with `cwnd` and `in_flight` in packets of 1000 bytes.
    pub fn view(index: usize, cost: u32, cwnd: u64, in_flight: u64, srtt_ms: u64) -> PathView {
        PathView {
            index,
            cost,
            is_up: true,
            in_flight_bytes: in_flight * 1000,
            charge_bytes: 1000,
            srtt: Some(Duration::from_millis(srtt_ms)),
            cc: CcMetrics {
                cwnd_bytes: cwnd * 1000,
                ssthresh_bytes: None,
                pacing_rate_bytes_per_s: None,
                bw_estimate_bytes_per_s: None,
                min_rtt: None,
                phase: CcPhase::CongestionAvoidance,
            },
        }
    }
}
