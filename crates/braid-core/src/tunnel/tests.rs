//! The sender and receiver state machines driven together over simple lossy, delaying paths:
//! what each reliability mode and the redundant scheduler promise, end to end.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use super::*;
use crate::cc::{Counting, TunnelCc};
use crate::reorder::{ReorderConfig, ReorderKind};
use crate::sched::SchedulerKind;
use crate::time::Instant;
use crate::wire::{DataHeader, Feedback, TimeSync, FLAG_UNSTAMPED};

/// A path: fixed one-way delay, a rate, and a rule that drops some data packets.
struct Path {
    delay: Duration,
    /// Serialisation time per packet (the path's rate).
    per_pkt: Duration,
    busy_until: Instant,
    to_rx: VecDeque<(Instant, DataHeader, u64)>,
    to_tx: VecDeque<(Instant, Feedback)>,
}

struct Loop {
    now: Instant,
    tx: TunnelSender<u64>,
    rx: TunnelReceiver<u64>,
    paths: Vec<Path>,
    /// Delivered payloads in delivery order.
    delivered: Vec<u64>,
    rejected: u64,
    sent_data: u64,
    /// Feedback of this path sent during this interval is lost (one direction of a path cut).
    feedback_cut: Option<(usize, std::ops::Range<Instant>)>,
    /// Every transmission: (time, path, is a copy).
    sent_log: Vec<(Instant, usize, bool)>,
    /// Packets sent as compact messages would be (no timestamp on arrival), and time-sync
    /// frames sent after them.
    compact_sent: u64,
    time_syncs_sent: u64,
    /// Time-sync frames on their way: (arrival, path, frame).
    time_syncs: Vec<(Instant, usize, TimeSync)>,
}

impl Loop {
    fn new(config: &TunnelConfig, delays_ms: &[u64]) -> Self {
        Loop {
            now: Instant::ZERO,
            tx: TunnelSender::new(config),
            rx: TunnelReceiver::new(config),
            paths: delays_ms
                .iter()
                .map(|&d| Path {
                    delay: Duration::from_millis(d),
                    per_pkt: Duration::from_micros(240), // 1500 bytes at 50 Mbit/s
                    busy_until: Instant::ZERO,
                    to_rx: VecDeque::new(),
                    to_tx: VecDeque::new(),
                })
                .collect(),
            delivered: Vec::new(),
            rejected: 0,
            sent_data: 0,
            feedback_cut: None,
            sent_log: Vec::new(),
            compact_sent: 0,
            time_syncs_sent: 0,
            time_syncs: Vec::new(),
        }
    }

    /// Offers `n` packets at `gap` intervals and runs until `end`, dropping the data packets
    /// for which `drop(path, path_seq, is_copy)` says so.
    fn run(
        &mut self,
        n: u64,
        gap: Duration,
        end: Instant,
        mut drop: impl FnMut(usize, u64, bool) -> bool,
    ) {
        let step = Duration::from_micros(100);
        let mut next_offer = Instant::ZERO;
        let mut offered = 0;
        while self.now < end {
            while offered < n && next_offer <= self.now {
                self.tx.handle_packet(self.now, offered, 1400).expect("queue has room");
                offered += 1;
                next_offer += gap;
            }
            self.tx.handle_timeout(self.now);
            while let Some(t) = self.tx.poll_transmit(self.now) {
                self.sent_data += 1;
                self.sent_log.push((self.now, t.path, t.copy));
                let p = &mut self.paths[t.path];
                let start = p.busy_until.max(self.now);
                p.busy_until = start + p.per_pkt;
                let mut header = t.header;
                if t.compact {
                    // What a compact message leaves for the receiver to know.
                    self.compact_sent += 1;
                    header.flags = FLAG_UNSTAMPED;
                    header.send_ts_ns = 0;
                }
                if t.time_sync {
                    let ts = TimeSync {
                        path_id: t.path as u8,
                        path_seq: t.header.path_seq,
                        send_ts_ns: t.header.send_ts_ns,
                    };
                    self.time_syncs.push((p.busy_until + p.delay, t.path, ts));
                    self.time_syncs_sent += 1;
                }
                if !drop(t.path, t.header.path_seq, t.copy) {
                    p.to_rx.push_back((p.busy_until + p.delay, header, t.payload));
                }
            }
            for i in 0..self.paths.len() {
                while self.paths[i].to_rx.front().is_some_and(|(at, _, _)| *at <= self.now) {
                    let (_, h, payload) = self.paths[i].to_rx.pop_front().unwrap();
                    if self.rx.handle_data(self.now, &h, payload).is_some() {
                        self.rejected += 1;
                    }
                    while self.rx.poll_rejected().is_some() {
                        self.rejected += 1;
                    }
                }
                // A time-sync frame arrives just behind its packet on the same path.
                let due: Vec<TimeSync> = self
                    .time_syncs
                    .iter()
                    .filter(|(at, path, _)| *path == i && *at <= self.now)
                    .map(|(_, _, ts)| *ts)
                    .collect();
                self.time_syncs.retain(|(at, path, _)| !(*path == i && *at <= self.now));
                for ts in due {
                    self.rx.handle_time_sync(self.now, &ts);
                }
                while self.paths[i].to_tx.front().is_some_and(|(at, _)| *at <= self.now) {
                    let (_, fb) = self.paths[i].to_tx.pop_front().unwrap();
                    self.tx.handle_feedback(self.now, &fb);
                }
            }
            while let Some(fb) = self.rx.poll_feedback(self.now) {
                let i = fb.path_id as usize;
                if self.feedback_cut.as_ref().is_some_and(|(c, t)| *c == i && t.contains(&self.now))
                {
                    continue;
                }
                let p = &mut self.paths[i];
                p.to_tx.push_back((self.now + p.delay, fb));
            }
            while let Some(r) = self.rx.poll_deliver(self.now) {
                self.delivered.push(r.payload);
            }
            self.now += step;
        }
    }

    fn delivered_once(&self) -> BTreeMap<u64, usize> {
        let mut m = BTreeMap::new();
        for &p in &self.delivered {
            *m.entry(p).or_insert(0) += 1;
        }
        m
    }
}

fn config(reliability: Reliability, scheduler: SchedulerKind) -> TunnelConfig {
    TunnelConfig {
        scheduler,
        cc: TunnelCc::NewReno,
        path_costs: vec![1, 2],
        reliability,
        reorder: ReorderConfig { kind: ReorderKind::Static, ..ReorderConfig::default() },
        ..TunnelConfig::default()
    }
}

fn at_ms(ms: u64) -> Instant {
    Instant::from_nanos(ms * 1_000_000)
}

#[test]
fn reliable_paths_deliver_every_packet_exactly_once_despite_loss() {
    let cfg = TunnelConfig {
        reorder: ReorderConfig {
            kind: ReorderKind::Static,
            static_wait: Duration::from_millis(500),
            ..ReorderConfig::default()
        },
        ..config(Reliability::Reliable, SchedulerKind::Cpf)
    };
    let mut l = Loop::new(&cfg, &[10, 30]);
    // Every 50th first transmission on path 0 is lost, and every 7th retransmission too.
    let (mut copies, mut dropped_first) = (0, 0);
    l.run(3000, Duration::from_micros(300), at_ms(4000), |path, seq, copy| {
        copies += u64::from(copy);
        let drop = if copy { copies % 7 == 0 } else { path == 0 && seq % 50 == 25 };
        dropped_first += u64::from(drop && !copy);
        drop
    });
    let m = l.delivered_once();
    assert_eq!(m.len(), 3000, "every packet delivered");
    assert!(m.values().all(|&c| c == 1), "exactly once");
    assert!(dropped_first >= 5, "the test exercises loss: {dropped_first}");
    assert!(l.tx.stats().retransmissions >= dropped_first, "{:?}", l.tx.stats());
    assert_eq!(l.tx.stats().expired, 0);
}

#[test]
fn unreliable_paths_lose_what_the_network_drops() {
    let mut l = Loop::new(&config(Reliability::Unreliable, SchedulerKind::Cpf), &[10, 30]);
    l.run(2000, Duration::from_micros(300), at_ms(3000), |path, seq, _| {
        path == 0 && seq % 50 == 25
    });
    let m = l.delivered_once();
    assert!(m.len() < 2000 && m.len() >= 2000 - 2000 / 50, "{}", m.len());
    assert_eq!(l.tx.stats().retransmissions, 0);
}

#[test]
fn a_reliable_path_holds_later_packets_behind_a_loss() {
    // One loss on path 0 (10 ms one way): its retransmission comes about one RTT later, and
    // every later packet of path 0 waits for it in the reassembly buffer.
    let cfg =
        TunnelConfig { path_costs: vec![1], ..config(Reliability::Reliable, SchedulerKind::Cpf) };
    let mut l = Loop::new(&cfg, &[10]);
    l.run(200, Duration::from_millis(1), at_ms(600), |_, seq, copy| !copy && seq == 20);
    assert_eq!(l.delivered.len(), 200);
    // Delivered strictly in order on one path: the reassembly kept the path order.
    assert!(l.delivered.windows(2).all(|w| w[0] < w[1]), "{:?}", &l.delivered[..40]);
    assert_eq!(l.tx.stats().retransmissions, 1);
}

#[test]
fn partial_paths_give_up_a_retransmission_that_would_arrive_after_the_wait_limit() {
    // The receiver waits 5 ms for a gap; a retransmission over a 10 ms one-way path cannot
    // make it, so the partial path gives the packet up instead of sending it.
    let cfg = TunnelConfig {
        reorder: ReorderConfig {
            kind: ReorderKind::Static,
            static_wait: Duration::from_millis(5),
            ..ReorderConfig::default()
        },
        path_costs: vec![1],
        ..config(Reliability::Partial, SchedulerKind::Cpf)
    };
    let mut l = Loop::new(&cfg, &[10]);
    l.run(200, Duration::from_millis(1), at_ms(600), |_, seq, copy| !copy && seq == 20);
    assert_eq!(l.tx.stats().retransmissions, 0);
    assert_eq!(l.tx.stats().expired, 1);
    assert_eq!(l.delivered_once().len(), 199);

    // With a 100 ms wait the same loss is repaired.
    let cfg = TunnelConfig {
        reorder: ReorderConfig {
            kind: ReorderKind::Static,
            static_wait: Duration::from_millis(100),
            ..ReorderConfig::default()
        },
        ..cfg
    };
    let mut l = Loop::new(&cfg, &[10]);
    l.run(200, Duration::from_millis(1), at_ms(600), |_, seq, copy| !copy && seq == 20);
    assert_eq!((l.tx.stats().retransmissions, l.tx.stats().expired), (1, 0));
    assert_eq!(l.delivered_once().len(), 200);
}

#[test]
fn redundant_scheduling_sends_every_packet_on_both_paths_and_delivers_it_once() {
    // Light load: one packet every 10 ms keeps at most 6 packets in flight on the 60 ms path,
    // within the initial window of 10, so both windows have room for every packet.
    let cfg = config(Reliability::Unreliable, SchedulerKind::Redundant);
    let mut l = Loop::new(&cfg, &[10, 30]);
    l.run(500, Duration::from_millis(10), at_ms(6000), |_, _, _| false);
    assert_eq!(l.tx.stats().redundant_copies, 500);
    assert_eq!((l.tx.path_stats(0).sent_pkts, l.tx.path_stats(1).sent_pkts), (500, 500));
    let m = l.delivered_once();
    assert_eq!(m.len(), 500);
    assert!(m.values().all(|&c| c == 1));
    assert_eq!(l.rejected, 500, "the later copy of each packet is a duplicate");

    // Path 0 loses every 10th packet: its NewReno window shrinks and it skips packets it has
    // no room for, but loss-free path 1 keeps room for all of them, so nothing is missing.
    let mut l = Loop::new(&cfg, &[10, 30]);
    l.run(500, Duration::from_millis(10), at_ms(6000), |path, seq, _| path == 0 && seq % 10 == 3);
    assert_eq!(l.tx.path_stats(1).sent_pkts, 500);
    let m = l.delivered_once();
    assert_eq!(m.len(), 500, "path 1's copies cover path 0's losses");
    assert!(m.values().all(|&c| c == 1));
    let arrived = l.tx.path_stats(0).sent_pkts + 500 - l.tx.path_stats(0).sent_pkts.div_ceil(10);
    assert_eq!(l.rejected, arrived - 500, "every arriving copy but one per packet is refused");
}

/// A path whose feedback is lost for longer than its retransmission timeout: the sender
/// declares its whole flight lost and resends it, oldest first, one packet per backed-off RTO
/// (RFC 6298 section 5.5), each a duplicate at the receiver, which has everything. The first
/// resend after the feedback returns must be answered (RFC 9293 section 3.10.7.4, RFC 5681
/// section 4.2), and the path then carries new data again; before, a reliable path's
/// duplicate made no feedback and the path stalled for good. Without a liveness check to bring
/// the path back (the data plane's, see crates/braid/tests), that first resend comes with the
/// backed-off RTO: 200 ms doubled from the cut at 1 s gives 1.2, 1.6, 2.4, 4.0, 7.2 and 13.6 s.
#[test]
fn a_path_whose_feedback_was_cut_for_10_s_carries_data_again_once_it_returns() {
    // Round robin shares the load between the paths whenever both have room.
    let cfg = config(Reliability::Reliable, SchedulerKind::RoundRobin);
    let mut l = Loop::new(&cfg, &[10, 20]);
    let (cut_from, cut_to) = (at_ms(1000), at_ms(11_000));
    l.feedback_cut = Some((1, cut_from..cut_to));
    // 3000 packets/s, which path 0 alone can carry while path 1 is stalled.
    l.run(48_000, Duration::from_nanos(333_333), at_ms(17_000), |_, _, _| false);
    let path1 = |from: Instant, to: Instant, copy: bool| {
        l.sent_log.iter().filter(move |&&(t, p, c)| p == 1 && c == copy && t >= from && t < to)
    };
    assert!(path1(at_ms(500), cut_from, false).count() > 200, "path 1 carried data before");
    assert_eq!(path1(cut_from + Duration::from_millis(500), cut_to, false).count(), 0);
    let resent = path1(cut_from, cut_to, true).count();
    assert!((4..=8).contains(&resent), "one resend per backed-off RTO: {resent}");
    let first_resend = path1(cut_to, at_ms(16_000), true).next().expect("a resend after").0;
    let first_new = path1(cut_to, at_ms(16_000), false).next().map(|s| s.0);
    assert!(
        first_new.is_some_and(|t| t < first_resend + Duration::from_millis(100)),
        "new data within two RTTs of the first answered resend at {first_resend:?}: {first_new:?}"
    );
    assert!(first_resend < cut_to + Duration::from_secs(3), "{first_resend:?}");
    // And it keeps carrying new data (its slow start is slow: the light load leaves it
    // application-limited, RFC 7661, so this is no measure of its share).
    for s in [14_000, 15_000] {
        let n = path1(at_ms(s), at_ms(s + 1000), false).count();
        assert!(n > 50, "new packets on path 1 in the second from {s} ms: {n}");
    }
    let m = l.delivered_once();
    assert_eq!(m.len(), 48_000, "every packet delivered");
    assert!(m.values().all(|&c| c == 1), "exactly once");
}

/// Drains every transmission due at `now` into (path, global_seq, payload).
fn drain(tx: &mut TunnelSender<u64>, now: Instant) -> Vec<(usize, u64, u64)> {
    std::iter::from_fn(|| tx.poll_transmit(now))
        .map(|t| (t.path, t.header.global_seq, t.payload))
        .collect()
}

fn bbr_cpf() -> TunnelConfig {
    TunnelConfig { cc: TunnelCc::Bbr, ..config(Reliability::Unreliable, SchedulerKind::Cpf) }
}

#[test]
fn a_failed_path_hands_its_paced_packets_to_the_other_path_keeping_their_sequence_numbers() {
    let mut tx = TunnelSender::new(&bbr_cpf());
    let t0 = at_ms(1);
    for p in 0..8 {
        tx.handle_packet(t0, p, 1000).unwrap();
    }
    // BBR paces: the first packet leaves, the rest wait for path 0's pacing slots.
    let first = drain(&mut tx, t0);
    assert_eq!(first, vec![(0, 0, 0)]);
    assert_eq!(tx.pacing_queue_len(0), 7);
    tx.set_path_up(t0, 0, false);
    assert!(!tx.is_path_up(0));
    assert_eq!(tx.pacing_queue_len(0), 0);
    let mut rest = Vec::new();
    for step in 0..100 {
        rest.extend(drain(&mut tx, t0 + Duration::from_millis(step)));
    }
    assert!(rest.iter().all(|&(path, _, _)| path == 1), "{rest:?}");
    // Same packets, same global sequence numbers, same order: the receiver sees no gap.
    let expected: Vec<_> = (1..8).map(|p| (1, p, p)).collect();
    assert_eq!(rest, expected);
    // New packets go on path 1 while path 0 is down, and their numbers continue.
    tx.handle_packet(t0, 8, 1000).unwrap();
    let more: Vec<_> = (100..200).flat_map(|ms| drain(&mut tx, at_ms(ms))).collect();
    assert_eq!(more, vec![(1, 8, 8)]);
}

#[test]
fn a_failed_reliable_path_hands_its_packets_in_flight_to_the_other_path_first() {
    // A reliable path keeps a copy of what it sent; when it goes down, those copies leave on
    // the other path at once, ahead of the packets that were still waiting for its pacing
    // slots, all with their global sequence numbers (MPTCP's reinjection, RFC 8684 3.3.6).
    let cfg =
        TunnelConfig { cc: TunnelCc::Bbr, ..config(Reliability::Reliable, SchedulerKind::Cpf) };
    let mut tx = TunnelSender::new(&cfg);
    let t0 = at_ms(1);
    for p in 0..8 {
        tx.handle_packet(t0, p, 1000).unwrap();
    }
    // Three leave on path 0 over its first pacing slots; the rest wait in its pacing queue.
    let sent: Vec<_> =
        (0..3).flat_map(|ms| drain(&mut tx, t0 + Duration::from_micros(ms * 200))).collect();
    assert!(sent.len() >= 2 && sent.iter().all(|&(path, _, _)| path == 0), "{sent:?}");
    let n_sent = sent.len() as u64;
    tx.set_path_up(t0, 0, false);
    assert_eq!(tx.stats().failover_moved, n_sent);
    let mut rest = Vec::new();
    for step in 0..200 {
        rest.extend(drain(&mut tx, t0 + Duration::from_millis(step)));
    }
    let expected: Vec<_> = (0..8).map(|p| (1, p, p)).collect();
    assert_eq!(rest, expected, "every packet again on path 1, in order, the ones in flight first");
    // Path 0 returns: it sends what it had in flight again, under the same path sequence
    // numbers, so its receiver's in-order stream is whole (the copies are duplicates there).
    tx.set_path_up(at_ms(300), 0, true);
    let again: Vec<_> = (300..3000).flat_map(|ms| drain(&mut tx, at_ms(ms))).collect();
    // It restarts from the loss window (one packet, no feedback in this test): the oldest.
    let resent: Vec<_> = sent.iter().map(|&(_, g, p)| (0, g, p)).collect();
    assert_eq!(again, resent[..1], "path 0 repairs its own stream, oldest first");
    // An unreliable path keeps no copies: its packets in flight are lost with it.
    let mut tx = TunnelSender::new(&bbr_cpf());
    tx.handle_packet(t0, 0, 1000).unwrap();
    assert_eq!(drain(&mut tx, t0), vec![(0, 0, 0)]);
    tx.set_path_up(t0, 0, false);
    assert_eq!(tx.stats().failover_moved, 0);
    assert!((0..100).flat_map(|ms| drain(&mut tx, at_ms(ms))).next().is_none());
}

#[test]
fn a_returning_path_is_preferred_again_and_restarts_from_the_loss_window() {
    let mut tx = TunnelSender::new(&bbr_cpf());
    let t0 = at_ms(1);
    tx.handle_packet(t0, 0, 1000).unwrap();
    assert_eq!(drain(&mut tx, t0), vec![(0, 0, 0)]);
    tx.set_path_up(t0, 0, false);
    tx.handle_packet(t0, 1, 1000).unwrap();
    assert_eq!(drain(&mut tx, t0), vec![(1, 1, 1)]);
    let cwnd_before = tx.path_metrics(0).cc.cwnd_bytes;
    tx.set_path_up(at_ms(2), 0, true);
    assert!(tx.path_metrics(0).cc.cwnd_bytes < cwnd_before, "restarts from the loss window");
    // Once the timer has cleared what was in flight when the path died, the one-packet
    // window has room and CPF prefers path 0 again.
    let later = at_ms(3000);
    tx.handle_timeout(later);
    tx.handle_packet(later, 2, 1000).unwrap();
    assert_eq!(drain(&mut tx, later), vec![(0, 2, 2)], "CPF prefers path 0 again");
}

#[test]
fn a_path_that_never_carried_anything_comes_up_with_its_initial_window() {
    // A server's paths stay down until the client speaks on them: that is a first start, not
    // a return, and must not cost the path its initial window (nor, for BBR, an initial
    // pacing rate computed from a 1-packet window).
    let mut tx: TunnelSender<u64> = TunnelSender::new(&bbr_cpf());
    let initial = tx.path_metrics(0).cc;
    tx.set_path_up(at_ms(0), 0, false);
    tx.set_path_up(at_ms(5), 0, true);
    assert_eq!(tx.path_metrics(0).cc, initial);
}

#[test]
fn pacing_catch_up_lets_a_late_caller_send_the_slots_it_missed_and_no_more() {
    // One path with a window far larger than the test's packets, so only pacing limits; the
    // caller then wakes up 1 ms late. How many packets leave at that wake-up?
    let late_wake_up = |catch_up: Duration| {
        let cfg = TunnelConfig {
            pacing_catch_up: catch_up,
            path_costs: vec![1],
            initial_window_pkts: 200,
            ..bbr_cpf()
        };
        let mut tx = TunnelSender::new(&cfg);
        for p in 0..150 {
            tx.handle_packet(at_ms(1), p, 1000).unwrap();
        }
        drain(&mut tx, at_ms(1));
        let slot = tx.poll_timeout().unwrap().saturating_since(at_ms(1));
        (drain(&mut tx, at_ms(2)).len(), slot)
    };
    let (without, slot) = late_wake_up(Duration::ZERO);
    assert_eq!(without, 1, "exact pacing: the missed slots are lost");
    // A horizon of 20 slots: the slot due now, and one more per missed slot within it.
    let slots = 20;
    let (with, _) = late_wake_up(slot * slots as u32);
    assert!((slots..=slots + 2).contains(&with), "{with} packets at once, {slots} slots");
}

#[test]
fn a_path_slower_than_the_spread_gets_no_new_packets_once_measured() {
    // One-way delays 10 and 110 ms: minimum RTTs 20 and 220 ms, 200 ms apart. Round robin
    // would use both; with a 100 ms spread the slow path stops getting new packets as soon as
    // both paths have an RTT sample (its first feedback returns after about 220 ms).
    let run = |spread: Option<Duration>| {
        let cfg = TunnelConfig {
            max_rtt_spread: spread,
            reorder: ReorderConfig {
                kind: ReorderKind::Static,
                static_wait: Duration::from_millis(500),
                ..ReorderConfig::default()
            },
            ..config(Reliability::Unreliable, SchedulerKind::RoundRobin)
        };
        let mut l = Loop::new(&cfg, &[10, 110]);
        l.run(2000, Duration::from_micros(500), at_ms(3000), |_, _, _| false);
        (l.tx.path_stats(1).sent_pkts, l.delivered.len())
    };
    let (slow_without, delivered_without) = run(None);
    let (slow_with, delivered_with) = run(Some(Duration::from_millis(100)));
    // Round robin fills the slow path's window every round trip while offers last (1 s, about
    // 4.5 round trips of 220 ms; the window stays near its initial 10 packets because the
    // path is rarely window-limited).
    assert!(slow_without >= 40, "round robin alone uses the slow path: {slow_without}");
    // With exclusion only the initial window leaves before the first RTT sample.
    assert!(slow_with <= 10, "excluded after its first RTT sample: {slow_with}");
    assert_eq!((delivered_without, delivered_with), (2000, 2000));
}

#[test]
fn a_path_measured_by_its_handshake_is_excluded_before_it_carries_anything() {
    // As above, but each path's RTT is known from a handshake before the first packet: the
    // slow path (220 ms against 20 ms) never gets a packet, not even an initial window.
    let cfg = TunnelConfig {
        max_rtt_spread: Some(Duration::from_millis(100)),
        ..config(Reliability::Unreliable, SchedulerKind::RoundRobin)
    };
    let mut l = Loop::new(&cfg, &[10, 110]);
    l.tx.on_path_rtt_sample(0, Duration::from_millis(20));
    l.tx.on_path_rtt_sample(1, Duration::from_millis(220));
    assert_eq!(l.tx.path_metrics(1).srtt, Some(Duration::from_millis(220)));
    l.run(2000, Duration::from_micros(500), at_ms(3000), |_, _, _| false);
    assert_eq!(l.tx.path_stats(1).sent_pkts, 0);
    assert_eq!(l.delivered.len(), 2000);
    // Samples for an unknown path, or of zero, change nothing.
    let before = (l.tx.path_metrics(0).srtt, l.tx.path_metrics(0).min_rtt);
    l.tx.on_path_rtt_sample(7, Duration::from_millis(5));
    l.tx.on_path_rtt_sample(0, Duration::ZERO);
    assert_eq!((l.tx.path_metrics(0).srtt, l.tx.path_metrics(0).min_rtt), before);
}

#[test]
fn a_spread_wider_than_the_asymmetry_changes_nothing() {
    let run = |spread: Option<Duration>| {
        let cfg = TunnelConfig {
            max_rtt_spread: spread,
            ..config(Reliability::Unreliable, SchedulerKind::RoundRobin)
        };
        let mut l = Loop::new(&cfg, &[10, 30]);
        l.run(1000, Duration::from_micros(500), at_ms(2000), |_, _, _| false);
        (l.tx.path_stats(0).sent_pkts, l.tx.path_stats(1).sent_pkts)
    };
    assert_eq!(run(None), run(Some(Duration::from_millis(100))));
}

#[test]
fn any_controller_can_be_packet_counted() {
    // RFC 4341 section 5's packet counting for CUBIC, whose name alone counts bytes: ten
    // 100-byte packets occupy ten MSS of window instead of ten times their wire length.
    let in_flight = |counting: Option<Counting>| {
        let cfg = TunnelConfig { cc: TunnelCc::Cubic, counting, ..TunnelConfig::default() };
        let mut tx: TunnelSender<u64> = TunnelSender::new(&cfg);
        for p in 0..10 {
            tx.handle_packet(at_ms(0), p, 100).unwrap();
        }
        assert_eq!(drain(&mut tx, at_ms(0)).len(), 10);
        (tx.path_metrics(0).in_flight_bytes, cfg.mss_bytes, u64::from(100 + cfg.header_bytes))
    };
    let (bytes, _, wire) = in_flight(None);
    assert_eq!(bytes, 10 * wire);
    let (packets, mss, _) = in_flight(Some(Counting::Packets));
    assert_eq!(packets, 10 * mss);
}

#[test]
fn max_rtt_spread_is_validated() {
    let bad = TunnelConfig { max_rtt_spread: Some(Duration::ZERO), ..TunnelConfig::default() };
    assert_eq!(bad.validate().unwrap_err().field, "max_rtt_spread");
    let ok = TunnelConfig {
        max_rtt_spread: Some(Duration::from_millis(100)),
        ..TunnelConfig::default()
    };
    assert!(ok.validate().is_ok());
}

#[test]
fn cc_tuning_is_validated_and_names_the_algorithm_field() {
    let mut bad = TunnelConfig::default();
    bad.cc_tuning.bbr2.beta_percent = 100;
    let e = bad.validate().unwrap_err();
    assert_eq!(e.field, "cc_tuning");
    assert_eq!(e.detail, "bbr2.beta_percent: must be in 1..=99");
    // Every tuning is checked, whichever algorithm runs (as every scheduler's parameters are).
    let mut bad = TunnelConfig { cc: TunnelCc::Bbr, ..TunnelConfig::default() };
    bad.cc_tuning.wvegas.initial_alpha_pkts = 0;
    assert_eq!(bad.validate().unwrap_err().detail, "wvegas.initial_alpha_pkts: must be at least 1");
}

/// Compact messages carry no send timestamp: with time-sync frames every 5 ms per path the
/// receiver still measures the paths' delay difference (30 ms here) and waits that long for
/// gaps; without them it has no samples and waits the margin only. Every packet is eligible
/// (nothing is far from what the receiver expects), and every packet arrives once.
#[test]
fn compact_packets_without_timestamps_keep_the_wait_limit_through_time_sync_frames() {
    let run = |interval: Option<Duration>| {
        let mut c = config(Reliability::Reliable, SchedulerKind::Cpf);
        c.reorder.kind = ReorderKind::Adaptive;
        c.compact_seq_reach = Some(1 << 13);
        c.owd_sample_interval = interval;
        let mut l = Loop::new(&c, &[10, 40]);
        l.run(3000, Duration::from_micros(150), at_ms(1500), |_, _, _| false);
        l
    };
    let with = run(Some(Duration::from_millis(5)));
    assert_eq!(with.delivered_once().len(), 3000);
    assert!(with.delivered_once().values().all(|&n| n == 1));
    assert_eq!(with.compact_sent, with.sent_data, "every packet within reach");
    let syncs = with.time_syncs_sent;
    assert!(syncs > 0, "time-sync frames were sent");
    // Two paths for about 450 ms of sending: at most one frame per path per 5 ms, plus one.
    assert!(with.sent_log.len() > 2000 && syncs < 2 * 100, "{syncs} time-sync frames");
    let limit = with.rx.wait_limit();
    assert!(
        limit >= Duration::from_millis(30),
        "wait limit {limit:?} follows the 30 ms difference"
    );
    let without = run(None);
    assert_eq!(without.time_syncs_sent, 0);
    assert!(
        without.rx.wait_limit() < Duration::from_millis(20),
        "no samples, the margin only: {:?}",
        without.rx.wait_limit()
    );
}

/// A retransmission reuses its path sequence number with the next attempt, and the sender
/// counts them per packet. It always travels as a full message: a compact message's nonce is
/// its (path sequence, attempt) slot, which the sealing end never moves back to, so a
/// compact retransmission would be refused there (in the daemon it was, silently, and a
/// reliable path that timed out never recovered).
#[test]
fn retransmissions_count_their_attempts_and_travel_as_full_messages() {
    let mut c = config(Reliability::Reliable, SchedulerKind::Cpf);
    c.compact_seq_reach = Some(1 << 13);
    let mut tx: TunnelSender<u64> = TunnelSender::new(&c);
    tx.handle_packet(Instant::ZERO, 7, 1400).unwrap();
    let first = tx.poll_transmit(Instant::ZERO).unwrap();
    assert_eq!((first.attempt, first.copy, first.compact), (0, false, true));
    let mut attempts = Vec::new();
    for _ in 0..4 {
        // No feedback: the RTO declares it lost each time and it leaves again.
        let now = tx.poll_timeout().unwrap();
        tx.handle_timeout(now);
        let t = tx.poll_transmit(now).expect("a retransmission");
        assert_eq!(t.header.path_seq, first.header.path_seq);
        assert!(!t.compact, "attempt {} as a full message", t.attempt);
        attempts.push(t.attempt);
    }
    assert_eq!(attempts, [1, 2, 3, 4]);
}
