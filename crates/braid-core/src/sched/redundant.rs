//! Redundant scheduling: every packet on every path that can take it, so the first copy to
//! arrive wins and a loss or a delay spike on one path costs nothing while another path
//! delivers. This is what real-time users of bonding tools (voice, gaming, remote control) ask
//! for: latency and loss resilience bought with capacity.
//!
//! Source: the Linux MPTCP redundant scheduler (multipath-tcp/mptcp `net/mptcp/mptcp_redundant.c`,
//! read for behaviour only) and draft-bonaventure-iccrg-schedulers section 3 (the "redundant"
//! family). The receiver delivers each global sequence number once and counts the other copies
//! as duplicates ([`crate::reorder`]).
//!
//! # Choice where the sources differ
//! MPTCP keeps a per-subflow position in the send queue, so a subflow whose window was full
//! later sends the packets it missed (skipping those already acknowledged). Braid's tunnel
//! sender is simpler: when the packet at the head of the scheduler queue is scheduled, it is
//! copied to *every path with room in its window at that moment*; a path without room skips it.
//! Under light load (the real-time case) every path has room and every packet goes everywhere;
//! under saturation a path only carries what it had room for, so redundancy gives way to
//! aggregation instead of queueing stale copies behind a full window. The sender asks
//! [`Scheduler::duplicates`] and does the copying; [`Scheduler::select`] here answers the
//! cheapest path with room, for callers that want one path.

use super::{PathView, Scheduler};
use crate::time::Instant;

#[derive(Clone, Copy, Debug, Default)]
pub struct Redundant;

impl Scheduler for Redundant {
    fn select(&mut self, _now: Instant, paths: &[PathView], _queued_pkts: usize) -> Option<usize> {
        paths.iter().filter(|p| p.has_room()).min_by_key(|p| (p.cost, p.index)).map(|p| p.index)
    }

    fn duplicates(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "redundant"
    }
}
