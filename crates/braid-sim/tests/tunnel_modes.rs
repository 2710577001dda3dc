//! Whole-system checks of the tunnel's reliability modes and redundant scheduling: what each
//! promises end to end, seen from the application and from the report's counters.

use braid_sim::{run, Scenario};

/// A light UDP flow (5 Mbit/s, 1500-byte packets): every path's window has room for it.
/// 6 MB is 4077 datagrams of 1472 payload bytes; the source sends whole datagrams.
const PACKETS: u64 = 6_000_000u64.div_ceil(1472);
const DELIVERED_IF_NOTHING_IS_LOST: u64 = PACKETS * 1472;

fn light_udp(extra: &[&str]) -> Scenario {
    let mut o: Vec<String> = ["e2e.kind=udp", "e2e.udp_rate_mbps=5", "e2e.bytes=6000000"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    o.extend(extra.iter().map(|s| s.to_string()));
    Scenario::from_toml_str("", &o).expect("valid scenario")
}

#[test]
fn redundant_scheduling_delivers_every_packet_once_despite_loss_on_one_path() {
    let s = light_udp(&["tunnel.scheduler=redundant", "paths.0.loss=0.05"]);
    let r = run(&s, false).expect("runs").report;
    assert_eq!(
        r.e2e.bytes_delivered, DELIVERED_IF_NOTHING_IS_LOST,
        "path 2's copies cover the losses"
    );
    let packets = PACKETS;
    // Light load: nearly every packet finds both windows open; the lossy path's window is now
    // and then full during recovery and that path skips the packet (the documented choice).
    assert!(r.tunnel.redundant_copies <= packets);
    assert!(r.tunnel.redundant_copies * 100 >= packets * 95, "{:?}", r.tunnel);
    // Each packet that arrived twice was delivered once: the second copies are refused.
    let lost_on_path_1 = r.drops.bottleneck[0];
    assert!(lost_on_path_1 > 0);
    assert!(r.reorder.duplicates + lost_on_path_1 >= r.tunnel.redundant_copies, "{:?}", r.reorder);
    assert!(r.reorder.duplicates <= r.tunnel.redundant_copies);
}

/// Redundant mode must work with every reorder policy. Whatever the receiver does with
/// gaps, each packet is handed to the application exactly once: with path 2 loss-free every
/// datagram arrives, so any second delivery would push the byte count above the total.
#[test]
fn redundant_scheduling_delivers_each_packet_once_under_every_receiver_policy() {
    let receivers: [&[&str]; 6] = [
        &["tunnel.reorder=none"],
        &["tunnel.reorder=static"],
        &["tunnel.reorder=adaptive"],
        &["tunnel.reorder=static", "tunnel.fast_loss_detection=true"],
        &["tunnel.reorder=adaptive", "tunnel.equalize_delay=true"],
        &[
            "tunnel.reorder=adaptive",
            "tunnel.fast_loss_detection=true",
            "tunnel.equalize_delay=true",
        ],
    ];
    for receiver in receivers {
        let mut o = vec!["tunnel.scheduler=redundant", "paths.0.loss=0.05"];
        o.extend(receiver);
        let r = run(&light_udp(&o), false).expect("runs").report;
        assert_eq!(r.e2e.bytes_delivered, DELIVERED_IF_NOTHING_IS_LOST, "{receiver:?}");
        assert!(r.tunnel.redundant_copies * 100 >= PACKETS * 95, "{receiver:?}: {:?}", r.tunnel);
        assert!(r.reorder.duplicates > 0, "{receiver:?}: second copies arrived and were refused");
    }
}

#[test]
fn reliable_paths_hide_random_loss_from_the_application() {
    let lossy = ["paths.0.loss=0.03", "tunnel.scheduler=rr"];
    let r = run(&light_udp(&lossy), false).expect("runs").report;
    assert!(r.e2e.bytes_delivered < DELIVERED_IF_NOTHING_IS_LOST, "unreliable: the loss shows");
    assert_eq!(r.tunnel.retransmissions, 0);

    let s = light_udp(&[lossy[0], lossy[1], "tunnel.reliability=reliable"]);
    let r = run(&s, false).expect("runs").report;
    assert_eq!(r.e2e.bytes_delivered, DELIVERED_IF_NOTHING_IS_LOST, "reliable: all arrive");
    assert!(r.tunnel.retransmissions >= r.drops.bottleneck[0], "{:?}", r.tunnel);
}

#[test]
fn partial_paths_resend_only_what_can_beat_the_wait_limit() {
    let lossy = ["paths.0.loss=0.03", "tunnel.scheduler=rr", "tunnel.reliability=partial"];
    // A 200 ms static wait leaves time for a resend over a 20 ms path: nothing is lost.
    let mut o = lossy.to_vec();
    o.extend(["tunnel.reorder=static", "tunnel.static_wait_ms=200"]);
    let r = run(&light_udp(&o), false).expect("runs").report;
    assert_eq!(r.e2e.bytes_delivered, DELIVERED_IF_NOTHING_IS_LOST);
    assert!(r.tunnel.retransmissions > 0);
    assert_eq!(r.tunnel.expired, 0);
    // Without reordering nothing waits for a gap: every resend would be late, none is sent.
    let mut o = lossy.to_vec();
    o.push("tunnel.reorder=none");
    let r = run(&light_udp(&o), false).expect("runs").report;
    assert_eq!(r.tunnel.retransmissions, 0);
    assert!(r.tunnel.expired > 0);
    assert!(r.e2e.bytes_delivered < DELIVERED_IF_NOTHING_IS_LOST);
}

/// CoDel on the scheduler queue (RFC 8289; `tunnel.sched_codel_target_ms`): Cubic end to end
/// grows its window into the 1500-packet drop-tail queue in front of the paths and inflates its
/// own RTT; with CoDel the standing queue goes, the end-to-end RTT stays near the paths' own,
/// the drops happen at the queue's head (counted as scheduler drops) and every byte still
/// arrives. What it costs in DLCT is a finding for docs/validation.md, not asserted here.
#[test]
fn codel_on_the_scheduler_queue_removes_the_end_to_end_rtt_inflation() {
    let cubic = |extra: &[&str]| {
        let mut o: Vec<String> =
            ["e2e.cc=cubic", "e2e.bytes=150000000"].iter().map(|s| s.to_string()).collect();
        o.extend(extra.iter().map(|s| s.to_string()));
        run(&Scenario::from_toml_str("", &o).expect("valid scenario"), false).expect("runs").report
    };
    let droptail = cubic(&[]);
    let codel = cubic(&["tunnel.sched_codel_target_ms=5", "tunnel.sched_codel_interval_ms=100"]);
    assert_eq!(codel.e2e.bytes_delivered, 150_000_000);
    assert!(
        droptail.e2e.srtt_ms_mean > 100.0,
        "drop-tail lets the queue stand: {:?}",
        droptail.e2e
    );
    assert!(
        codel.e2e.srtt_ms_mean < droptail.e2e.srtt_ms_mean * 0.75,
        // measured: 75 ms against 113 ms (82 against 183 before PRR: Cubic's recoveries now
        // drain the queue they fill instead of refilling it at once)
        "CoDel keeps it short: {} ms against {} ms",
        codel.e2e.srtt_ms_mean,
        droptail.e2e.srtt_ms_mean
    );
    assert!(codel.drops.scheduler > 0, "CoDel drops at the head: {:?}", codel.drops);
}

/// A path whose window the data fills must be allowed to grow even though the scheduler sends
/// what does not fit on another path: Linux grows a window that filled once in the current
/// window of data (`tcp_is_cwnd_limited`), and so does the tunnel (braid-core
/// `path/cwnd_usage.rs`). Under the delivery-rate estimator's application-limited mark, which
/// the scheduler's empty queue set after every burst, path 1's NewReno window stayed at its
/// initial 12 packets for the whole download of this cell (ASYM200, the static wait below the
/// paths' 100 ms delay difference, SRTT) and Cubic end to end took 18 times the single-path
/// time, held to path 1's 12 packets by the losses the slow path's late packets looked like.
#[test]
fn a_window_the_data_fills_grows_though_the_overflow_takes_another_path() {
    let o = [
        "keys=ASYM200",
        "e2e.cc=cubic",
        "e2e.bytes=20000000",
        "tunnel.cc=newreno",
        "tunnel.reliability=reliable",
        "tunnel.reorder=static",
        "tunnel.scheduler=srtt",
    ];
    let s = Scenario::from_toml_str("", &o.map(String::from)).expect("valid scenario");
    let r = braid_sim::run_with_baseline(&s).expect("runs").report;
    let initial_window = 10 * 1560;
    let path1 = r.paths[0].cwnd_bytes_mean;
    assert!(path1 > 5.0 * initial_window as f64, "path 1's mean window {path1:.0} B");
    let relative = r.relative_dlct.unwrap();
    assert!(relative < 3.0, "relative DLCT {relative:.2}");
}
