//! Tests of the reorder buffer: the wait-limit mechanics, duplicates, fast loss detection and
//! delay equalisation, and property tests of the release invariants.

use super::*;
use crate::reorder::MAX_WAIT_LIMIT;
use proptest::prelude::*;
use std::collections::HashSet;

const MS: u64 = 1_000_000;

fn t_ms(ms: u64) -> Instant {
    Instant::from_nanos(ms * MS)
}

fn buffer(kind: ReorderKind, buffer_pkts: usize) -> ReorderBuffer<u64> {
    let config = ReorderConfig { kind, buffer_pkts, ..ReorderConfig::default() };
    ReorderBuffer::new(config, 2)
}

/// Inserts `seq` on path 0 at `now` with a 10 ms one-way delay; the payload is `seq`.
fn put(b: &mut ReorderBuffer<u64>, now: Instant, seq: u64) -> Insert<u64> {
    b.insert(now, 0, seq, now.as_nanos().saturating_sub(10 * MS), seq)
}

fn drain(b: &mut ReorderBuffer<u64>, now: Instant) -> Vec<u64> {
    std::iter::from_fn(|| b.poll_release(now)).map(|r| r.global_seq).collect()
}

#[test]
fn in_order_packets_pass_straight_through() {
    let mut b = buffer(ReorderKind::Static, 8);
    for seq in 0..5 {
        assert_eq!(put(&mut b, t_ms(seq), seq), Insert::Accepted);
        assert_eq!(b.len(), 1, "ready until polled");
        assert_eq!(drain(&mut b, t_ms(seq)), vec![seq]);
        assert_eq!(b.poll_timeout(), None);
    }
    assert!(b.is_empty());
    assert_eq!(b.stats(), ReorderStats { in_order: 5, ..ReorderStats::default() });
}

#[test]
fn gap_is_held_until_filled_then_everything_goes_in_order() {
    let mut b = buffer(ReorderKind::Static, 8);
    put(&mut b, t_ms(0), 0);
    assert_eq!(drain(&mut b, t_ms(0)), vec![0]);
    put(&mut b, t_ms(1), 2);
    put(&mut b, t_ms(2), 3);
    assert_eq!(drain(&mut b, t_ms(2)), Vec::<u64>::new());
    assert_eq!(b.len(), 2);
    put(&mut b, t_ms(3), 1);
    let released: Vec<_> = std::iter::from_fn(|| b.poll_release(t_ms(3))).collect();
    assert_eq!(released.iter().map(|r| r.global_seq).collect::<Vec<_>>(), vec![1, 2, 3]);
    // Arrival times survive for the head-of-line metric.
    assert_eq!(released[1].arrival, t_ms(1));
    assert!(b.is_empty());
    assert_eq!(b.poll_timeout(), None);
    assert_eq!(b.stats(), ReorderStats { in_order: 4, ..ReorderStats::default() });
}

#[test]
fn unfilled_gap_is_skipped_after_exactly_the_static_wait() {
    let mut b = buffer(ReorderKind::Static, 8);
    put(&mut b, t_ms(0), 0);
    drain(&mut b, t_ms(0));
    put(&mut b, t_ms(1), 2);
    put(&mut b, t_ms(2), 3);
    put(&mut b, t_ms(3), 5);
    let deadline = t_ms(1) + Duration::from_millis(50);
    assert_eq!(b.poll_timeout(), Some(deadline));
    assert_eq!(drain(&mut b, Instant::from_nanos(deadline.as_nanos() - 1)), Vec::<u64>::new());
    assert_eq!(b.stats().skipped_seqs, 0);
    assert_eq!(drain(&mut b, deadline), vec![2, 3]);
    assert_eq!(b.next_expected(), 4);
    // Packet 5 keeps its own deadline, counted from its arrival.
    let deadline = t_ms(3) + Duration::from_millis(50);
    assert_eq!(b.poll_timeout(), Some(deadline));
    assert_eq!(drain(&mut b, Instant::from_nanos(deadline.as_nanos() - 1)), Vec::<u64>::new());
    assert_eq!(drain(&mut b, deadline), vec![5]);
    assert_eq!(
        b.stats(),
        ReorderStats {
            in_order: 2,
            released_on_timeout: 2,
            skipped_seqs: 2,
            ..ReorderStats::default()
        }
    );
}

#[test]
fn expiry_of_the_oldest_arrival_releases_the_held_packets_below_it() {
    let mut b = buffer(ReorderKind::Static, 8);
    put(&mut b, t_ms(0), 3);
    put(&mut b, t_ms(5), 1);
    // The oldest arrival, not the lowest number, sets the deadline.
    assert_eq!(b.poll_timeout(), Some(t_ms(50)));
    assert_eq!(drain(&mut b, t_ms(50)), vec![1, 3]);
    assert_eq!(
        b.stats(),
        ReorderStats { released_on_timeout: 2, skipped_seqs: 2, ..ReorderStats::default() }
    );
}

#[test]
fn poll_timeout_is_the_earliest_deadline() {
    let mut b = buffer(ReorderKind::Static, 16);
    assert_eq!(b.poll_timeout(), None);
    put(&mut b, t_ms(1), 5);
    put(&mut b, t_ms(2), 3);
    put(&mut b, t_ms(7), 8);
    assert_eq!(b.poll_timeout(), Some(t_ms(51)));
    // Filling 0, 1, 2 and 4 releases 0..=5; 8 (arrived at 7 ms) now gives the deadline.
    for seq in [0, 1, 2, 4] {
        put(&mut b, t_ms(10), seq);
    }
    assert_eq!(drain(&mut b, t_ms(10)), vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(b.poll_timeout(), Some(t_ms(57)));
    put(&mut b, t_ms(11), 6);
    put(&mut b, t_ms(11), 7);
    assert_eq!(drain(&mut b, t_ms(11)), vec![6, 7, 8]);
    assert_eq!(b.poll_timeout(), None);
}

#[test]
fn adaptive_limit_converges_to_owd_difference_plus_margin() {
    let mut b = buffer(ReorderKind::Adaptive, 64);
    assert_eq!(b.wait_limit(), Duration::from_millis(10), "margin alone");
    // Path 0: 10 ms one-way delay; path 1: 30 ms. The sender's clock is 5 s behind.
    let offset = 5_000 * MS;
    let at = |ms: u64| Instant::from_nanos(offset + ms * MS);
    let arrive = |b: &mut ReorderBuffer<u64>, ms: u64, seq: u64, path: usize| {
        let owd_ms = [10, 30][path];
        b.insert(at(ms), path, seq, (ms - owd_ms) * MS, seq);
        drain(b, at(ms))
    };
    assert_eq!(arrive(&mut b, 10, 0, 0), vec![0]);
    assert_eq!(b.wait_limit(), Duration::from_millis(10), "one path: sample 0");
    assert_eq!(arrive(&mut b, 31, 1, 1), vec![1]);
    // 0.95 * 20 ms + 0.05 * 0 = 19 ms, plus the 10 ms margin.
    assert_eq!(b.wait_limit(), Duration::from_millis(29));
    assert_eq!(arrive(&mut b, 32, 2, 0), vec![2]);
    // 0.95 * 20 ms + 0.05 * 19 ms = 19.95 ms, plus the margin.
    assert_eq!(b.wait_limit(), Duration::from_micros(29_950));
    // Packet 3 goes on the slow path, 4 on the fast one: 4 arrives first and waits for 3.
    assert_eq!(arrive(&mut b, 34, 4, 0), Vec::<u64>::new());
    let deadline = b.poll_timeout().unwrap();
    assert_eq!(deadline, at(34) + b.wait_limit());
    assert!(deadline > at(53));
    assert_eq!(arrive(&mut b, 53, 3, 1), vec![3, 4]);
    for seq in 5..30 {
        arrive(&mut b, 60 + seq, seq, (seq % 2) as usize);
    }
    let limit = b.wait_limit().as_nanos() as i128;
    assert!((limit - 30 * MS as i128).abs() <= 1, "{limit}");
    assert_eq!(b.stats().released_on_timeout, 0);
    assert_eq!(b.stats().in_order, 30);
}

/// Path 0 with a 10 ms one-way delay, path 1 with 25 ms: a packet sent on path 1 first
/// (global 1) arrives 15 ms after the path-0 packet sent just behind it (global 2). Without a
/// measured delay difference the wait limit is the bare 10 ms margin and gives packet 1 up;
/// with the paths' probe RTTs (20 and 50 ms) it starts at half their spread plus the margin
/// and packet 1 is in time.
fn first_packet_on_the_slower_path(rtts_ms: Option<(u64, u64)>) -> ReorderBuffer<u64> {
    let mut b = buffer(ReorderKind::Adaptive, 64);
    if let Some((a, z)) = rtts_ms {
        b.on_path_rtt_sample(0, Duration::from_millis(a));
        b.on_path_rtt_sample(1, Duration::from_millis(z));
    }
    b.insert(t_ms(10), 0, 0, 0, 0);
    assert_eq!(drain(&mut b, t_ms(10)), vec![0]);
    // Global 1 went on path 1 at 1 ms, global 2 on path 0 at 2 ms.
    b.insert(t_ms(12), 0, 2, 2 * MS, 2);
    let deadline = b.poll_timeout().unwrap();
    let mut released = drain(&mut b, t_ms(26).min(deadline));
    if deadline <= t_ms(26) {
        released.extend(drain(&mut b, deadline));
    }
    b.insert(t_ms(26), 1, 1, MS, 1);
    released.extend(drain(&mut b, t_ms(26)));
    assert_eq!(released.len(), 2, "{released:?}");
    b
}

#[test]
fn probe_rtts_give_the_first_packets_of_a_slower_path_their_delay_difference() {
    let without = first_packet_on_the_slower_path(None);
    assert_eq!(without.stats().released_on_timeout, 1, "given up at 12 + 10 ms");
    assert_eq!(without.stats().late, 1);

    let with = first_packet_on_the_slower_path(Some((20, 50)));
    assert_eq!(with.stats().released_on_timeout, 0);
    assert_eq!(with.stats().late, 0);
    // The first data from both paths replaced the prior: 15 ms measured.
    let limit = with.wait_limit();
    assert!(limit > Duration::from_millis(24) && limit < Duration::from_millis(26), "{limit:?}");
}

#[test]
fn probe_rtts_no_longer_count_once_two_paths_delivered() {
    let mut b = buffer(ReorderKind::Adaptive, 64);
    b.on_path_rtt_sample(0, Duration::from_millis(20));
    // One path's RTT says nothing about a difference.
    assert_eq!(b.wait_limit(), Duration::from_millis(10));
    b.on_path_rtt_sample(1, Duration::from_millis(60));
    // Half the 40 ms spread, weighed 95% into an estimate of 0, plus the margin.
    assert_eq!(b.wait_limit(), Duration::from_millis(29));
    b.insert(t_ms(10), 0, 0, 0, 0); // one fresh path: the prior is the sample
    assert!(b.wait_limit() > Duration::from_millis(29));
    b.insert(t_ms(11), 1, 1, MS, 1); // two fresh paths, 0 ms apart
    assert_eq!(drain(&mut b, t_ms(11)), vec![0, 1]);
    let measured = b.wait_limit();
    assert!(measured < Duration::from_millis(12), "{measured:?}");
    // Later probes change nothing.
    b.on_path_rtt_sample(1, Duration::from_millis(300));
    assert_eq!(b.wait_limit(), measured);
}

#[test]
fn deadline_follows_the_limit_read_at_check_time() {
    let mut b = buffer(ReorderKind::Adaptive, 64);
    b.insert(t_ms(100), 0, 0, 90 * MS, 0); // OWD 10 ms
    b.insert(t_ms(101), 0, 2, 91 * MS, 2);
    assert_eq!(b.poll_timeout(), Some(t_ms(111)));
    // A slow path shows up: the held packet may now wait longer.
    b.insert(t_ms(102), 1, 9, 62 * MS, 9); // OWD 40 ms, spread 30 ms -> 28.5 ms estimate
    assert_eq!(b.wait_limit(), Duration::from_micros(38_500));
    assert_eq!(b.poll_timeout(), Some(t_ms(101) + Duration::from_micros(38_500)));
    assert_eq!(drain(&mut b, t_ms(111)), vec![0]);
}

#[test]
fn overflow_forces_release_from_the_head_and_counts() {
    let mut b = buffer(ReorderKind::Static, 4);
    // Exactly buffer_pkts packets can be held: 1..=4 while 0 is missing.
    for seq in [1, 2, 4, 3] {
        put(&mut b, t_ms(0), seq);
    }
    assert_eq!(b.len(), 4);
    assert_eq!(drain(&mut b, t_ms(0)), Vec::<u64>::new());
    // 6 does not fit: give 0 up, release 1 for room, then 2..=4 follow in order.
    put(&mut b, t_ms(1), 6);
    assert_eq!(drain(&mut b, t_ms(1)), vec![1, 2, 3, 4]);
    assert_eq!(b.len(), 1);
    assert_eq!(
        b.stats(),
        ReorderStats {
            in_order: 3,
            released_on_overflow: 1,
            skipped_seqs: 1,
            ..ReorderStats::default()
        }
    );
    // Far ahead: 5 given up, 6 released, then the empty stretch skipped in one step.
    put(&mut b, t_ms(2), 1_000_000);
    assert_eq!(drain(&mut b, t_ms(2)), vec![6]);
    assert_eq!(b.next_expected(), 1_000_000 - 4);
    assert_eq!(b.stats().released_on_overflow, 2);
    assert_eq!(b.stats().skipped_seqs, 1 + (1_000_000 - 4 - 6));
    assert_eq!(b.len(), 1);
}

#[test]
fn late_packets_are_released_at_once_and_counted() {
    let mut b = buffer(ReorderKind::Static, 8);
    put(&mut b, t_ms(0), 1);
    assert_eq!(drain(&mut b, t_ms(50)), vec![1]);
    assert_eq!(put(&mut b, t_ms(60), 0), Insert::Accepted);
    assert_eq!(drain(&mut b, t_ms(60)), vec![0]);
    assert_eq!(b.stats().late, 1);
    assert_eq!(b.stats().skipped_seqs, 1);
    assert!(b.is_empty());
}

#[test]
fn every_copy_after_the_first_is_handed_back_under_every_policy() {
    for kind in [ReorderKind::None, ReorderKind::Static, ReorderKind::Adaptive] {
        let mut b = buffer(kind, 8);
        put(&mut b, t_ms(0), 2);
        // A copy of a packet still held (or, for none, already released).
        assert_eq!(b.insert(t_ms(1), 1, 2, 0, 77), Insert::Duplicate(77), "{kind:?}");
        put(&mut b, t_ms(2), 0);
        put(&mut b, t_ms(2), 1);
        let expected = if kind == ReorderKind::None { vec![2, 0, 1] } else { vec![0, 1, 2] };
        assert_eq!(drain(&mut b, t_ms(2)), expected, "{kind:?}");
        // Copies of released packets, in order or not: refused, not released as late.
        for seq in [2, 0, 1] {
            assert_eq!(put(&mut b, t_ms(3), seq), Insert::Duplicate(seq), "{kind:?}");
        }
        assert_eq!(drain(&mut b, t_ms(3)), Vec::<u64>::new());
        let s = b.stats();
        assert_eq!((s.duplicates, s.too_old, s.late, s.released()), (4, 0, 0, 3), "{kind:?}");
    }
}

#[test]
fn numbers_below_the_duplicate_window_are_refused_as_too_old() {
    let mut b = buffer(ReorderKind::Static, 8);
    put(&mut b, t_ms(0), 20_000);
    drain(&mut b, t_ms(100));
    // 20000 - 8191 is the oldest number the window still tells apart: late, but a first copy.
    assert_eq!(put(&mut b, t_ms(101), 20_000 - 8191), Insert::Accepted);
    assert_eq!(drain(&mut b, t_ms(101)), vec![20_000 - 8191]);
    assert_eq!(put(&mut b, t_ms(102), 20_000 - 8192), Insert::Duplicate(20_000 - 8192));
    let s = b.stats();
    assert_eq!((s.late, s.duplicates, s.too_old), (1, 1, 1));
}

#[test]
fn passthrough_releases_in_arrival_order() {
    let mut b = buffer(ReorderKind::None, 8);
    for (i, seq) in [3, 1, 2, 9].into_iter().enumerate() {
        assert_eq!(put(&mut b, t_ms(i as u64), seq), Insert::Accepted);
    }
    assert_eq!(put(&mut b, t_ms(4), 1), Insert::Duplicate(1));
    assert_eq!(b.len(), 4);
    assert_eq!(b.poll_timeout(), None);
    assert_eq!(b.wait_limit(), Duration::ZERO);
    assert_eq!(drain(&mut b, t_ms(5)), vec![3, 1, 2, 9]);
    assert_eq!(b.stats(), ReorderStats { in_order: 4, duplicates: 1, ..ReorderStats::default() });
}

#[test]
fn extreme_sequence_numbers_and_configs_do_not_panic() {
    let orders: [&[u64]; 2] = [
        &[u64::MAX, u64::MAX - 1, 0, u64::MAX, 5, u64::MAX - 2],
        &[0, 5, u64::MAX - 1, u64::MAX, u64::MAX - 2, u64::MAX, 3],
    ];
    for kind in [ReorderKind::None, ReorderKind::Static, ReorderKind::Adaptive] {
        for cap in [0, 1, 3] {
            for (fast_loss_detection, equalize_delay) in
                [(false, false), (true, false), (false, true), (true, true)]
            {
                let config = ReorderConfig {
                    kind,
                    buffer_pkts: cap,
                    fast_loss_detection,
                    equalize_delay,
                    ..ReorderConfig::default()
                };
                for order in orders {
                    let mut b = ReorderBuffer::new(config.clone(), 2);
                    for (i, &seq) in order.iter().enumerate() {
                        let path = [0, 1, 9][i % 3];
                        b.insert(t_ms(i as u64), path, seq, [0, u64::MAX][i % 2], seq);
                        drain(&mut b, t_ms(i as u64));
                    }
                    drain(&mut b, t_ms(20_000));
                    assert!(b.is_empty());
                    assert_eq!(b.poll_timeout(), None);
                }
            }
        }
    }
}

/// Path 0 has a one-way delay of 10 ms, path 1 of 30 ms. `send` sends packet `seq` at
/// `sent_ms` on `path` and delivers it at `sent_ms` + its path's delay.
struct TwoPaths {
    b: ReorderBuffer<u64>,
}

const OWD_MS: [u64; 2] = [10, 30];

impl TwoPaths {
    fn new(kind: ReorderKind, fast_loss_detection: bool, equalize_delay: bool) -> Self {
        let config = ReorderConfig {
            kind,
            buffer_pkts: 64,
            fast_loss_detection,
            equalize_delay,
            ..ReorderConfig::default()
        };
        TwoPaths { b: ReorderBuffer::new(config, 2) }
    }

    fn arrival(path: usize, sent_ms: u64) -> Instant {
        t_ms(sent_ms + OWD_MS[path])
    }

    fn send(&mut self, path: usize, seq: u64, sent_ms: u64) -> Insert<u64> {
        let at = Self::arrival(path, sent_ms);
        self.b.insert(at, path, seq, sent_ms * MS, seq)
    }

    fn drain(&mut self, now: Instant) -> Vec<u64> {
        drain(&mut self.b, now)
    }
}

#[test]
fn fast_loss_gives_a_gap_up_once_every_path_has_passed_it() {
    for kind in [ReorderKind::Static, ReorderKind::Adaptive] {
        let mut p = TwoPaths::new(kind, true, false);
        // Both paths deliver: 0 on the slow path (sent at 0 ms, arrives at 30 ms), 1 on the
        // fast one (sent at 20 ms, arrives at 30 ms).
        p.send(1, 0, 0);
        p.send(0, 1, 20);
        assert_eq!(p.drain(t_ms(30)), vec![0, 1]);
        // 2 is lost on the fast path; 3 follows on it (sent at 22 ms, arrives at 32 ms).
        p.send(0, 3, 22);
        assert_eq!(p.drain(t_ms(32)), Vec::<u64>::new(), "{kind:?}: slow path may carry 2");
        let deadline = p.b.poll_timeout().unwrap();
        // The slow path delivers 4 (sent at 23 ms, arrives at 53 ms): it carried nothing
        // below 4 that has not arrived, so 2 is lost on both paths.
        p.send(1, 4, 23);
        assert!(t_ms(53) < deadline, "{kind:?}: released before the wait limit");
        assert_eq!(p.drain(t_ms(53)), vec![3, 4], "{kind:?}");
        let s = p.b.stats();
        assert_eq!(
            (s.in_order, s.released_on_fast_loss, s.released_on_timeout, s.skipped_seqs),
            (3, 1, 0, 1),
            "{kind:?}"
        );
        assert_eq!(p.b.poll_timeout(), None);
    }
}

#[test]
fn without_progress_on_every_path_the_gap_waits_for_the_wait_limit() {
    for kind in [ReorderKind::Static, ReorderKind::Adaptive] {
        for fast_loss in [true, false] {
            let mut p = TwoPaths::new(kind, fast_loss, false);
            p.send(1, 0, 0);
            p.send(0, 1, 20);
            p.drain(t_ms(30));
            // 2 is missing; the fast path delivers 3 and 5, the slow path nothing more.
            p.send(0, 3, 22);
            p.send(0, 5, 24);
            let deadline = p.b.poll_timeout().unwrap();
            assert_eq!(deadline, t_ms(32) + p.b.wait_limit(), "{kind:?}");
            let just_before = Instant::from_nanos(deadline.as_nanos() - 1);
            assert_eq!(p.drain(just_before), Vec::<u64>::new(), "{kind:?} {fast_loss}");
            assert_eq!(p.drain(deadline), vec![3], "{kind:?} {fast_loss}");
            assert_eq!(p.b.stats().released_on_fast_loss, 0);
            assert_eq!(p.b.stats().released_on_timeout, 1);
        }
    }
    // With fast loss detection off, the slow path passing the gap does not release it.
    let mut p = TwoPaths::new(ReorderKind::Static, false, false);
    p.send(1, 0, 0);
    p.send(0, 1, 20);
    p.send(0, 3, 22);
    p.send(1, 4, 23);
    assert_eq!(p.drain(t_ms(53)), vec![0, 1]);
    assert_eq!(p.b.poll_timeout(), Some(t_ms(32) + Duration::from_millis(50)));
}

#[test]
fn a_path_silent_for_over_a_second_holds_a_gap_only_until_its_packet_could_have_arrived() {
    let mut p = TwoPaths::new(ReorderKind::Static, true, false);
    p.send(1, 0, 0); // the slow path's only packet, at 30 ms
    p.send(0, 1, 20);
    p.drain(t_ms(30));
    // At 1030 ms the slow path is exactly 1 s silent: still active, 3 waits for 2.
    p.send(0, 3, 1020);
    assert_eq!(p.drain(t_ms(1030)), Vec::<u64>::new());
    // 1 ms later it is quiet: 2, sent before 3 (at 1020 ms), could arrive on it until
    // 1020 + 30 ms, 1060 ms with the 10 ms margin; the fast path passing it does not release it.
    p.send(0, 5, 1021);
    p.send(0, 6, 1049);
    assert_eq!(p.drain(t_ms(1059)), Vec::<u64>::new());
    // At 1060 ms 2 is given up and 3 released; 4 (before 5, sent at 1021 ms) waits to 1061 ms.
    p.send(0, 7, 1050);
    assert_eq!(p.drain(t_ms(1060)), vec![3]);
    p.send(0, 8, 1051);
    assert_eq!(p.drain(t_ms(1061)), vec![5, 6, 7, 8]);
    let s = p.b.stats();
    assert_eq!((s.released_on_fast_loss, s.skipped_seqs), (2, 2));
}

#[test]
fn redundant_copies_fill_gaps_and_count_as_progress() {
    // Redundant scheduling: every packet on both paths, sent together.
    let mut p = TwoPaths::new(ReorderKind::Adaptive, true, false);
    let mut arrivals = Vec::new();
    for seq in 0..12u64 {
        // 0 shows both paths to the receiver well before the rest.
        let sent_ms = if seq == 0 { 0 } else { 100 + seq };
        // 5 is lost on the fast path only; 8 on both.
        let lost: &[usize] = match seq {
            5 => &[0],
            8 => &[0, 1],
            _ => &[],
        };
        for path in [0, 1].into_iter().filter(|p| !lost.contains(p)) {
            arrivals.push((TwoPaths::arrival(path, sent_ms), path, seq, sent_ms));
        }
    }
    arrivals.sort();
    let mut released = Vec::new();
    let mut duplicates = 0;
    for (at, path, seq, sent_ms) in arrivals {
        // Deliver whatever fell due before this arrival, at its time.
        while let Some(due) = p.b.poll_timeout().filter(|&d| d <= at) {
            released.extend(p.drain(due).into_iter().map(|s| (s, due)));
        }
        if let Insert::Duplicate(_) = p.send(path, seq, sent_ms) {
            duplicates += 1;
        }
        released.extend(p.drain(at).into_iter().map(|s| (s, at)));
    }
    released.extend(p.drain(t_ms(1000)).into_iter().map(|s| (s, t_ms(1000))));
    let seqs: Vec<u64> = released.iter().map(|&(s, _)| s).collect();
    assert_eq!(seqs, vec![0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11], "each at most once, in order");
    // 5's slow copy (sent at 105 ms, arrives at 135 ms) fills the gap: 6 and 7 wait for it.
    assert_eq!(released[5], (5, t_ms(135)));
    assert_eq!(released[6], (6, t_ms(135)));
    // 8 is missing everywhere: once the slow path's copy of 9 (sent at 109, arriving at
    // 139 ms) shows that path passed 8, 9 goes; 9 arrived on the fast path at 119 ms.
    assert_eq!(released[8], (9, t_ms(139)));
    let s = p.b.stats();
    // Copies of 0..=11 except 8 (both lost) and 5 (one lost) came twice.
    assert_eq!(duplicates, 10);
    assert_eq!((s.duplicates, s.released_on_fast_loss, s.skipped_seqs), (10, 1, 1));
    assert_eq!(s.released_on_timeout, 0);
}

/// Sends `n` packets alternately on the fast and the slow path, one per millisecond from
/// `start_ms`, numbered from `first_seq`, skipping `lost`; records `(seq, path, arrival,
/// hold_end, release)` of every release.
fn alternate(
    p: &mut TwoPaths,
    start_ms: u64,
    first_seq: u64,
    n: u64,
    lost: &[u64],
) -> Vec<(u64, usize, Instant, Instant, Instant)> {
    let mut arrivals: Vec<(Instant, usize, u64, u64)> = (0..n)
        .map(|i| (first_seq + i, (i % 2) as usize, start_ms + i))
        .filter(|(seq, _, _)| !lost.contains(seq))
        .map(|(seq, path, sent)| (TwoPaths::arrival(path, sent), path, seq, sent))
        .collect();
    arrivals.sort();
    let mut out = Vec::new();
    let mut record = |b: &mut ReorderBuffer<u64>, now: Instant| {
        while let Some(r) = b.poll_release(now) {
            out.push((r.global_seq, r.path, r.arrival, r.hold_end, now));
        }
    };
    for (at, path, seq, sent) in arrivals {
        while let Some(due) = p.b.poll_timeout().filter(|&d| d <= at) {
            record(&mut p.b, due);
        }
        assert_eq!(p.b.insert(at, path, seq, sent * MS, seq), Insert::Accepted);
        record(&mut p.b, at);
    }
    while let Some(due) = p.b.poll_timeout() {
        record(&mut p.b, due);
    }
    out
}

#[test]
fn equalization_holds_the_fast_path_by_the_delay_difference() {
    for kind in [ReorderKind::None, ReorderKind::Static, ReorderKind::Adaptive] {
        let mut p = TwoPaths::new(kind, false, true);
        // Both paths have delivered once, so both delays are known.
        p.send(0, 0, 0);
        p.send(1, 1, 0);
        p.drain(t_ms(30));
        let out = alternate(&mut p, 100, 2, 40, &[]);
        let seqs: Vec<u64> = out.iter().map(|r| r.0).collect();
        assert_eq!(seqs, (2..42).collect::<Vec<_>>(), "{kind:?}: in order, none waiting");
        for &(seq, path, arrival, hold_end, release) in &out {
            // 30 ms - 10 ms on the fast path; the slow path is not held.
            let hold = Duration::from_millis([20, 0][path]);
            assert_eq!(hold_end, arrival + hold, "{kind:?} {seq}");
            assert_eq!(release, hold_end, "{kind:?} {seq}: nothing left to reorder");
        }
        let s = p.b.stats();
        assert_eq!((s.in_order, s.released_on_timeout, s.late), (42, 0, 0), "{kind:?}");
    }
}

#[test]
fn with_equalization_the_wait_limit_still_counts_from_the_arrival() {
    for kind in [ReorderKind::Static, ReorderKind::Adaptive] {
        let mut p = TwoPaths::new(kind, false, true);
        p.send(0, 0, 0);
        p.send(1, 1, 0);
        p.drain(t_ms(30));
        // Packets 2.. alternate from 100 ms, 2 on the fast path; 10 (fast path, sent at
        // 108 ms) is lost. 11 (slow, sent at 109 ms) arrives at 139 ms with no hold; 12 (fast,
        // sent at 110 ms) arrives at 120 ms and is held until 140 ms.
        let out = alternate(&mut p, 100, 2, 40, &[10]);
        let at = |seq: u64| out.iter().find(|r| r.0 == seq).unwrap().4;
        let limit = p.b.wait_limit();
        if kind == ReorderKind::Static {
            assert_eq!(limit, Duration::from_millis(50));
        } else {
            // 20 ms of delay difference (every sample) plus the 10 ms margin.
            assert_eq!(limit, Duration::from_millis(30));
        }
        // 12's deadline, max(arrival 120 ms + limit, hold end 140 ms), is the earliest of
        // the packets beyond the gap; 11 arrived later (139 ms) and waits until then too.
        let deadline = (t_ms(120) + limit).max(t_ms(140));
        assert_eq!(at(11), deadline, "{kind:?}");
        assert_eq!(at(12), deadline, "{kind:?}");
        assert_eq!(p.b.stats().skipped_seqs, 1);
    }
}

#[test]
fn fast_loss_never_gives_up_a_packet_still_in_the_delay_line() {
    let mut p = TwoPaths::new(ReorderKind::Static, true, true);
    p.send(0, 0, 0);
    p.send(1, 1, 0);
    p.drain(t_ms(30));
    // 2 (slow, sent at 100 ms) is lost. 3 (fast, sent at 101 ms) arrives at 111 ms and is
    // held to 131 ms; 4 (slow, sent at 102 ms) arrives at 132 ms. Both paths have passed 2,
    // but 3 must not be given up with it: it entered the reorder stage at 131 ms.
    p.send(0, 3, 101);
    assert_eq!(p.drain(t_ms(111)), Vec::<u64>::new());
    assert_eq!(p.b.poll_timeout(), Some(t_ms(131)));
    assert_eq!(p.drain(t_ms(131)), Vec::<u64>::new(), "the slow path may still carry 2");
    p.send(1, 4, 102);
    assert_eq!(p.drain(t_ms(132)), vec![3, 4]);
    let s = p.b.stats();
    assert_eq!((s.released_on_fast_loss, s.late, s.skipped_seqs), (1, 0, 1));
}

#[test]
fn a_full_delay_line_passes_the_packet_due_first_on_early() {
    let config = ReorderConfig {
        kind: ReorderKind::Static,
        buffer_pkts: 3,
        equalize_delay: true,
        ..ReorderConfig::default()
    };
    let mut b = ReorderBuffer::new(config, 2);
    b.insert(t_ms(30), 1, 0, 0, 0); // slow path: 30 ms
    assert_eq!(drain(&mut b, t_ms(30)), vec![0]);
    // Fast-path packets, 10 ms one way, each held 20 ms; the line holds 3.
    for seq in 1..=4u64 {
        b.insert(t_ms(30 + seq), 0, seq, (20 + seq) * MS, seq);
    }
    // 1 went on early when 4 arrived; the others keep their hold.
    assert_eq!(b.len(), 4);
    let first = b.poll_release(t_ms(34)).unwrap();
    assert_eq!((first.global_seq, first.hold_end), (1, t_ms(34)));
    assert_eq!(b.poll_release(t_ms(34)), None);
    assert_eq!(b.poll_timeout(), Some(t_ms(52)));
    assert_eq!(drain(&mut b, t_ms(60)), vec![2, 3, 4]);
}

/// `(global_seq, path, gap before arrival in ns)` per arrival: a jittered order (from nearly
/// in order to a full shuffle) with random losses and a few duplicates.
fn arrivals() -> impl Strategy<Value = Vec<(u64, usize, u64)>> {
    (1usize..150)
        .prop_flat_map(|n| {
            (
                1..=n as u64,
                prop::collection::vec(any::<u64>(), n),
                prop::collection::vec(prop::bool::weighted(0.15), n),
                prop::collection::vec((0..n as u64, 0..=n), 0..6),
                prop::collection::vec((0usize..3, 0u64..4 * MS), n + 6),
            )
        })
        .prop_map(|(spread, jitter, lost, dups, paths)| {
            let mut order: Vec<(u64, u64)> =
                jitter.iter().enumerate().map(|(i, j)| (i as u64 + j % spread, i as u64)).collect();
            order.sort_unstable();
            let mut seqs: Vec<u64> =
                order.into_iter().map(|(_, s)| s).filter(|&s| !lost[s as usize]).collect();
            for (seq, at) in dups {
                seqs.insert(at.min(seqs.len()), seq);
            }
            seqs.into_iter().zip(paths).map(|(s, (p, gap))| (s, p, gap)).collect()
        })
}

fn kinds() -> [ReorderKind; 3] {
    [ReorderKind::None, ReorderKind::Static, ReorderKind::Adaptive]
}

fn config() -> impl Strategy<Value = ReorderConfig> {
    (0usize..3, 1usize..40, 0u64..60, 0u64..20, any::<bool>(), any::<bool>()).prop_map(
        |(k, buffer_pkts, wait_ms, margin_ms, fast_loss, equalize_delay)| ReorderConfig {
            kind: kinds()[k],
            buffer_pkts,
            static_wait: Duration::from_millis(wait_ms),
            margin: Duration::from_millis(margin_ms),
            new_sample_weight: 0.95,
            fast_loss_detection: fast_loss && k != 0,
            equalize_delay,
            repair_wait: None,
        },
    )
}

/// Polls as a driver would: at every event due by `now`, at its time, then at `now`.
fn run_until(
    b: &mut ReorderBuffer<usize>,
    clock: &mut Instant,
    now: Instant,
    out: &mut Vec<(Instant, Released<usize>)>,
) -> Result<(), TestCaseError> {
    while let Some(due) = b.poll_timeout().filter(|&d| d <= now) {
        *clock = (*clock).max(due);
        while let Some(r) = b.poll_release(*clock) {
            out.push((*clock, r));
        }
        prop_assert!(b.poll_timeout().is_none_or(|d| d > *clock), "an event stayed due");
    }
    *clock = now;
    while let Some(r) = b.poll_release(now) {
        out.push((now, r));
    }
    Ok(())
}

fn check_release_invariants(
    config: ReorderConfig,
    arrivals: &[(u64, usize, u64)],
) -> Result<(), TestCaseError> {
    const PATH_OWD_NS: [u64; 3] = [10 * MS, 25 * MS, 45 * MS];
    let kind = config.kind;
    let static_wait = config.static_wait;
    let equalize = config.equalize_delay;
    let cap = config.buffer_pkts;
    let mut b: ReorderBuffer<usize> = ReorderBuffer::new(config, 3);
    let mut clock = Instant::from_nanos(100 * MS);
    let mut accepted = vec![false; arrivals.len()];
    let mut late = vec![false; arrivals.len()];
    let mut out: Vec<(Instant, Released<usize>)> = Vec::new();
    let mut seen = HashSet::new();
    let mut duplicates = 0;

    for (id, &(seq, path, gap)) in arrivals.iter().enumerate() {
        let now = clock.add_nanos(gap);
        run_until(&mut b, &mut clock, now, &mut out)?;
        let late_before = b.stats().late;
        let send_ts = now.as_nanos() - PATH_OWD_NS[path];
        match b.insert(now, path, seq, send_ts, id) {
            Insert::Accepted => {
                prop_assert!(seen.insert(seq), "second copy of {} accepted", seq);
                accepted[id] = true;
            }
            Insert::Duplicate(p) => {
                prop_assert_eq!(p, id);
                prop_assert!(seen.contains(&seq), "first copy of {} refused", seq);
                duplicates += 1;
            }
        }
        late[id] = b.stats().late > late_before;
        run_until(&mut b, &mut clock, now, &mut out)?;
        prop_assert!(b.len() <= 2 * cap, "holds {} > 2 * {}", b.len(), cap);
        prop_assert!(b.poll_timeout().filter(|&d| d <= now).is_none());
        // Nothing releasable stays held: the next expected packet never waits in the ring.
        let n = b.next_expected();
        prop_assert!(b.ring[b.slot(n)].as_ref().is_none_or(|p| p.global_seq != n));
    }
    let end = clock + 2 * MAX_WAIT_LIMIT + Duration::from_secs(1);
    run_until(&mut b, &mut clock, end, &mut out)?;
    prop_assert_eq!(b.len(), 0);
    prop_assert_eq!(b.poll_timeout(), None);

    let mut times_released = vec![0u32; arrivals.len()];
    let mut seqs_released = HashSet::new();
    for (at, r) in &out {
        times_released[r.payload] += 1;
        prop_assert!(seqs_released.insert(r.global_seq), "{} released twice", r.global_seq);
        prop_assert_eq!(r.global_seq, arrivals[r.payload].0);
        prop_assert!(r.arrival <= r.hold_end && r.hold_end <= *at);
        if !equalize {
            prop_assert_eq!(r.hold_end, r.arrival);
        }
        if kind == ReorderKind::Static {
            // The hold counts as part of the wait: out by the later of the two bounds.
            prop_assert!(*at <= (r.arrival + static_wait).max(r.hold_end));
        }
    }
    for id in 0..arrivals.len() {
        prop_assert_eq!(times_released[id], u32::from(accepted[id]), "packet {}", id);
    }
    let s = b.stats();
    if kind == ReorderKind::None {
        if !equalize {
            let ids: Vec<usize> = out.iter().map(|(_, r)| r.payload).collect();
            prop_assert!(ids.windows(2).all(|w| w[0] < w[1]), "passthrough keeps arrival order");
        }
    } else if !equalize {
        let in_seq: Vec<u64> =
            out.iter().filter(|(_, r)| !late[r.payload]).map(|(_, r)| r.global_seq).collect();
        prop_assert!(in_seq.windows(2).all(|w| w[0] < w[1]), "{:?}", in_seq);
        prop_assert_eq!(s.late, late.iter().filter(|&&l| l).count() as u64);
    } else {
        // A packet turns late when it leaves the delay line, not at `insert`, so the late
        // ones cannot be told apart here; but dropping `late` of them must leave the
        // releases in increasing order.
        let seqs: Vec<u64> = out.iter().map(|(_, r)| r.global_seq).collect();
        let lis = longest_increasing_run(&seqs);
        prop_assert!(lis as u64 + s.late >= seqs.len() as u64, "{:?}, {} late", seqs, s.late);
    }
    prop_assert_eq!(s.released(), out.len() as u64);
    prop_assert_eq!(s.duplicates, duplicates);
    prop_assert_eq!(s.too_old, 0);
    Ok(())
}

/// Length of the longest strictly increasing subsequence (patience sorting).
fn longest_increasing_run(seqs: &[u64]) -> usize {
    let mut tails: Vec<u64> = Vec::new();
    for &s in seqs {
        let i = tails.partition_point(|&t| t < s);
        if i == tails.len() {
            tails.push(s);
        } else {
            tails[i] = s;
        }
    }
    tails.len()
}

/// Steps relative to the highest number sent so far: in order, a little late, around the
/// duplicate window's edge, far ahead, a repeat of an earlier number, anywhere below.
fn jumps() -> impl Strategy<Value = Vec<(u8, u64, usize)>> {
    prop::collection::vec((0u8..6, 0u64..30_000, 0usize..2), 1..300)
}

/// One packet's copies: `(path, lost, extra delay in µs)` per path it was sent on.
type Copies = Vec<(usize, bool, u64)>;

/// A tunnel the way the sender and the links behave: packets numbered in sending order,
/// each sent on one or more of `n_paths` paths (redundant when more), each path a FIFO with
/// its own base delay and some jitter, copies lost at random. Packet 0 goes on every path.
fn fifo_paths() -> impl Strategy<Value = (Vec<u64>, Vec<(u64, Copies)>)> {
    (2usize..4).prop_flat_map(|n_paths| {
        let copies = prop::collection::vec(
            (0..n_paths, prop::bool::weighted(0.2), 0u64..5_000),
            1..=n_paths,
        );
        (
            prop::collection::vec(1u64..50, n_paths),
            prop::collection::vec((0u64..2_000, copies), 1..200),
        )
    })
}

proptest! {
    /// Fast loss detection is sound: with every path FIFO and active, it never gives up a
    /// number that is still on its way, so with a wait limit too long to expire (10 s)
    /// nothing is ever released late, with or without equalisation.
    #[test]
    fn fast_loss_never_gives_up_a_packet_still_on_its_way(
        (base_ms, packets) in fifo_paths(),
        equalize_delay in any::<bool>(),
    ) {
        let n_paths = base_ms.len();
        let config = ReorderConfig {
            kind: ReorderKind::Static,
            static_wait: MAX_WAIT_LIMIT,
            fast_loss_detection: true,
            equalize_delay,
            ..ReorderConfig::default()
        };
        let mut b: ReorderBuffer<u64> = ReorderBuffer::new(config, n_paths);
        let mut last_arrival_us = vec![0u64; n_paths];
        let mut arrivals = Vec::new();
        let mut sent_us = 0;
        let warm_up = (0, (0..n_paths).map(|p| (p, false, 0)).collect::<Copies>());
        for (seq, (gap_us, copies)) in std::iter::once(warm_up).chain(packets).enumerate() {
            sent_us += gap_us;
            for (path, lost, jitter_us) in copies {
                // FIFO: never before the path's previous packet.
                let at_us = (sent_us + base_ms[path] * 1000 + jitter_us)
                    .max(last_arrival_us[path]);
                last_arrival_us[path] = at_us;
                if !lost {
                    arrivals.push((at_us, path, seq as u64, sent_us));
                }
            }
        }
        // Stable: equal times keep each path's order.
        arrivals.sort_by_key(|a| a.0);
        let mut released = HashSet::new();
        for (at_us, path, seq, sent_us) in arrivals {
            let now = Instant::from_nanos(at_us * 1000);
            while let Some(due) = b.poll_timeout().filter(|&d| d <= now) {
                while let Some(r) = b.poll_release(due) {
                    prop_assert!(released.insert(r.global_seq));
                }
            }
            b.insert(now, path, seq, sent_us * 1000, seq);
            while let Some(r) = b.poll_release(now) {
                prop_assert!(released.insert(r.global_seq));
            }
            prop_assert_eq!(b.stats().late, 0, "{} arrived after it was given up", seq);
        }
        while let Some(due) = b.poll_timeout() {
            while let Some(r) = b.poll_release(due) {
                prop_assert!(released.insert(r.global_seq));
            }
        }
        prop_assert_eq!(b.stats().late, 0);
        prop_assert!(b.is_empty());
    }

    /// Random arrival orders with losses and duplicates: every first copy comes out exactly
    /// once and every later copy is refused, in increasing sequence order except the late
    /// ones, nothing releasable stays held, no packet waits beyond the static limit (or its
    /// hold), and the buffer empties.
    #[test]
    fn every_accepted_packet_is_released_once_in_order_unless_late(
        config in config(),
        arrivals in arrivals(),
    ) {
        check_release_invariants(config, &arrivals)?;
    }

    /// Sequences with large jumps, repeats and numbers below the duplicate window: under
    /// every policy a number is delivered at most once, and the duplicate and too-old
    /// counts match a set model exactly.
    #[test]
    fn each_number_is_delivered_at_most_once_under_every_policy(
        k in 0usize..3,
        fast_loss in any::<bool>(),
        equalize_delay in any::<bool>(),
        steps in jumps(),
    ) {
        const W: u64 = crate::reorder::DUPLICATE_WINDOW_SEQS;
        let config = ReorderConfig {
            kind: kinds()[k],
            buffer_pkts: 64,
            fast_loss_detection: fast_loss && k != 0,
            equalize_delay,
            ..ReorderConfig::default()
        };
        let mut b: ReorderBuffer<u64> = ReorderBuffer::new(config, 2);
        let (mut seen, mut top) = (HashSet::new(), None::<u64>);
        let (mut history, mut released) = (Vec::new(), HashSet::new());
        let (mut duplicates, mut too_old, mut accepted) = (0u64, 0u64, 0u64);
        for (i, &(kind, x, path)) in steps.iter().enumerate() {
            let t = top.unwrap_or(0);
            let seq = match kind {
                0 => t + x % 4,
                1 => t.saturating_sub(x % 50),
                2 => t.saturating_sub(W - 3 + x % 6),
                3 => t + x,
                4 => history.get(x as usize % history.len().max(1)).copied().unwrap_or(t),
                _ => t.saturating_sub(x),
            };
            history.push(seq);
            let expect_too_old = top.is_some_and(|t| seq <= t && t - seq >= W);
            let expect_dup = !expect_too_old && seen.contains(&seq);
            let now = t_ms(i as u64);
            let send_ts = (i as u64 * MS).saturating_sub([10, 30][path] * MS);
            match b.insert(now, path, seq, send_ts, seq) {
                Insert::Accepted => {
                    prop_assert!(!expect_too_old && !expect_dup, "{} accepted", seq);
                    seen.insert(seq);
                    top = Some(top.map_or(seq, |t| t.max(seq)));
                    accepted += 1;
                }
                Insert::Duplicate(p) => {
                    prop_assert_eq!(p, seq);
                    prop_assert!(expect_too_old || expect_dup, "{} refused", seq);
                    duplicates += 1;
                    too_old += u64::from(expect_too_old);
                }
            }
            while let Some(r) = b.poll_release(now) {
                prop_assert!(released.insert(r.global_seq), "{} delivered twice", r.global_seq);
            }
        }
        while let Some(due) = b.poll_timeout() {
            while let Some(r) = b.poll_release(due) {
                prop_assert!(released.insert(r.global_seq), "{} delivered twice", r.global_seq);
            }
        }
        prop_assert_eq!(released.len() as u64, accepted);
        let s = b.stats();
        prop_assert_eq!((s.duplicates, s.too_old, s.released()), (duplicates, too_old, accepted));
    }
}

/// Static 50 ms wait and `repair_wait`; 0 delivered, 3 held from 10 ms (1 and 2 missing).
fn holding_3(repair_wait: Option<Duration>) -> ReorderBuffer<u64> {
    let config = ReorderConfig {
        kind: ReorderKind::Static,
        buffer_pkts: 16,
        repair_wait,
        ..ReorderConfig::default()
    };
    let mut b = ReorderBuffer::new(config, 2);
    put(&mut b, t_ms(0), 0);
    assert_eq!(drain(&mut b, t_ms(0)), vec![0]);
    put(&mut b, t_ms(10), 3);
    b
}

#[test]
fn the_repair_wait_applies_only_while_a_window_meets_a_missing_number() {
    // Without a window the static wait gives 1 and 2 up at 60 ms.
    let b = holding_3(Some(Duration::from_millis(200)));
    assert_eq!(b.poll_timeout(), Some(t_ms(60)));
    // A window at or above the held packet cannot fill its gaps.
    let mut b = holding_3(Some(Duration::from_millis(200)));
    b.set_repair_window(1, Some(3..9));
    assert_eq!(b.poll_timeout(), Some(t_ms(60)));
    // A window below the next expected number neither.
    b.set_repair_window(1, Some(0..1));
    assert_eq!(b.poll_timeout(), Some(t_ms(60)));
    // Path 1 may still deliver 2: the gap waits 200 ms from 3's arrival.
    b.set_repair_window(1, Some(2..3));
    assert_eq!(b.poll_timeout(), Some(t_ms(210)));
    assert_eq!(drain(&mut b, t_ms(100)), Vec::<u64>::new());
    // Unknown paths and empty windows change nothing; clearing the window restores the wait.
    b.set_repair_window(7, None);
    b.set_repair_window(0, Some(5..5));
    assert_eq!(b.poll_timeout(), Some(t_ms(210)));
    b.set_repair_window(1, None);
    assert_eq!(drain(&mut b, t_ms(100)), vec![3]);
    assert_eq!(b.stats().skipped_seqs, 2);
}

#[test]
fn without_a_repair_wait_a_window_changes_nothing() {
    let mut b = holding_3(None);
    b.set_repair_window(1, Some(1..3));
    assert_eq!(b.poll_timeout(), Some(t_ms(60)));
}
