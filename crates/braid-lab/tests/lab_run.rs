//! `braid lab`'s library side end to end: a scenario in, a report in the `braid sim --json`
//! schema out, nothing left behind; and an interrupt tears the test bed down. Needs root.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use braid_lab::lab::{self, LabError, LabMode, LabOptions};
use braid_lab::netns::{list_netns_with_prefix, unique_prefix};
use braid_lab::topology::Emulator;
use braid_sim::Scenario;

fn ours(tag: &str) -> Vec<String> {
    list_netns_with_prefix(tag).unwrap()
}

/// A tag of our own, so the checks see only this test's namespaces.
fn options(tag: &str) -> LabOptions {
    LabOptions { tag: tag.to_string(), ..LabOptions::default() }
}

#[test]
fn a_baseline_run_reports_in_the_sim_schema_and_leaves_nothing() {
    let tag = unique_prefix("blr");
    let s =
        Scenario::from_toml_str("", &["e2e.bytes=5000000".into(), "e2e.cc=bbr".into()]).unwrap();
    let out = lab::run(&s, &options(&tag), &AtomicBool::new(false)).unwrap();
    let r = &out.report;
    assert_eq!(r.e2e.bytes_delivered, 5_000_000);
    assert_eq!(r.lab.cc_effective, "bbr");
    assert_eq!(r.lab.mode, "baseline");
    // The baseline reports path 1 only, as braid sim's baseline does, with all the bytes.
    assert_eq!(r.paths.len(), 1);
    assert_eq!(r.paths[0].name, "wifi");
    assert_eq!(r.paths[0].bytes, Some(5_000_000));
    // Frames on path 1's downlink: at least one per MSS of payload.
    assert!(r.paths[0].packets_sent.unwrap() >= 5_000_000 / 1448);
    // The htb fallback cannot delay: every link's delay is listed as not emulated.
    assert_eq!(r.lab.not_emulated.len(), 6, "{:?}", r.lab.not_emulated);
    // The goodput series adds up to the bytes delivered.
    let series_bytes: f64 = r.lab.goodput_series_mbps.iter().map(|m| m * 1e6 * 0.1 / 8.0).sum();
    assert!((series_bytes - 5e6).abs() < 1.0, "{series_bytes}");
    assert!(r.wall_s >= r.dlct_s);

    let json = serde_json::to_value(r).unwrap();
    for key in ["dlct_s", "goodput_mbps", "paths", "drops", "e2e", "wall_s"] {
        assert!(json.get(key).is_some(), "{key} missing");
    }
    for key in ["events", "simulated_packets", "hol_ms", "protocol_delay_ms", "reorder"] {
        assert!(json.get(key).is_none(), "{key} should be left out");
    }
    assert!(ours(&tag).is_empty(), "{:?}", ours(&tag));
}

/// The `braid` executable of this build, which runs `braid tunnel`. Test executables live in
/// `target/<profile>/deps/`, the workspace's binaries one level up; `cargo test --workspace`
/// builds it (alone, `cargo test -p braid-lab` needs `cargo build -p braid` first).
fn braid_exe() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let braid = exe.parent().and_then(|deps| deps.parent()).unwrap().join("braid");
    assert!(braid.exists(), "{} is missing: cargo build -p braid first", braid.display());
    braid
}

/// With linkem the queues' counters come from its `--stats-json`, written when the run stops
/// it: a path-1 buffer of 20 packets under Cubic overflows, and every drop shows in the report
/// (the path's `drops`, `drops.bottleneck`) and was a segment the sender retransmitted.
#[test]
fn a_linkem_run_reports_the_drops_of_its_queues() {
    let tag = unique_prefix("blr");
    let emulator =
        Emulator::Linkem { braid_exe: braid_exe(), ready_timeout: Duration::from_secs(5) };
    let opts = LabOptions { emulator, ..options(&tag) };
    let overrides = ["e2e.bytes=5000000", "e2e.cc=cubic", "paths.0.buffer_pkts=20"];
    let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
    let s = Scenario::from_toml_str("", &overrides).unwrap();
    let out = lab::run(&s, &opts, &AtomicBool::new(false)).unwrap();
    let r = &out.report;
    assert_eq!(r.e2e.bytes_delivered, 5_000_000);
    let drops = r.drops.bottleneck.clone().expect("linkem's drops are reported");
    assert!(drops[0] > 0, "a 20-packet buffer under Cubic never overflowed: {:?}", r.drops);
    assert_eq!(r.paths[0].drops, Some(drops[0]));
    assert_eq!(r.drops.bottleneck_aqm, Some(vec![0]), "drop-tail has no AQM drops");
    assert!(r.drops.uplink.is_some() && r.drops.server_link.is_some(), "{:?}", r.drops);
    assert!(r.paths[0].packets_sent.unwrap() >= 5_000_000 / 1448);
    let retransmitted = r.e2e.retransmissions.unwrap();
    assert!(retransmitted >= drops[0], "{retransmitted} retransmissions, {} drops", drops[0]);
    // Every link direction's send lateness: server link and both paths, down and up.
    let late = &r.lab.send_lateness;
    let names: Vec<(&str, &str)> =
        late.iter().map(|l| (l.link.as_str(), l.direction.as_str())).collect();
    assert_eq!(
        names,
        [
            ("server_link", "down"),
            ("server_link", "up"),
            ("wifi", "down"),
            ("wifi", "up"),
            ("cellular", "down"),
            ("cellular", "up")
        ]
    );
    let down = late[2].lateness;
    assert!(down.p50_us <= down.p99_us && down.p99_us <= down.max_us + 10.0, "{down:?}");
    assert!(ours(&tag).is_empty(), "{:?}", ours(&tag));
}

#[test]
fn a_tunnel_run_reports_the_tunnel_side_in_the_sim_schema() {
    let tag = unique_prefix("blr");
    let opts = LabOptions { mode: LabMode::Tunnel, braid_exe: braid_exe(), ..options(&tag) };
    // Round robin, so both paths carry data and both get srtt samples.
    let overrides = ["e2e.bytes=10000000", "e2e.cc=bbr", "tunnel.scheduler=rr"];
    let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
    let s = Scenario::from_toml_str("", &overrides).unwrap();
    let out = lab::run(&s, &opts, &AtomicBool::new(false)).unwrap();
    let r = &out.report;
    assert_eq!(r.e2e.bytes_delivered, 10_000_000);
    assert_eq!(r.lab.mode, "tunnel");
    assert_eq!(r.paths.len(), 2);
    // Inner bytes sent: at least the payload (TCP/IP headers and retransmissions add to it),
    // and not more than half again as much.
    let bytes: Vec<u64> = r.paths.iter().map(|p| p.bytes.unwrap()).collect();
    let total: u64 = bytes.iter().sum();
    assert!((10_000_000..15_000_000).contains(&total), "{bytes:?}");
    // Round robin over equal-rate paths: each carries a fair part.
    for p in &r.paths {
        let share = p.share.unwrap();
        assert!((0.2..0.8).contains(&share), "{}: share {share}", p.name);
        // htb adds no delay: the path RTT is queueing and processing only, well under 1 s,
        // and the maximum is at least the mean.
        let (mean, max) = (p.srtt_ms_mean.unwrap(), p.srtt_ms_max.unwrap());
        assert!(mean > 0.0 && mean < 1000.0 && max >= mean, "{}: srtt {mean} / {max}", p.name);
        // Lost packets cannot exceed the packets the downlink queue sent.
        assert!(p.packets_lost_detected.unwrap() <= p.packets_sent.unwrap(), "{p:?}");
    }
    let shares: f64 = r.paths.iter().map(|p| p.share.unwrap()).sum();
    assert!((shares - 1.0).abs() < 1e-9, "{shares}");
    assert!(r.drops.scheduler.is_some() && r.drops.reorder.is_some(), "{:?}", r.drops);
    let reorder = r.reorder.as_ref().unwrap();
    // Adaptive reordering over two paths: the wait limit is positive and at most the run.
    let wait = reorder.wait_limit_ms_mean.unwrap();
    assert!(wait > 0.0 && wait < r.dlct_s * 1e3, "{reorder:?}");

    let json = serde_json::to_value(r).unwrap();
    eprintln!(
        "tunnel lab: paths {} drops {} reorder {}",
        json["paths"], json["drops"], json["reorder"]
    );
    for key in ["bytes", "share", "srtt_ms_mean", "srtt_ms_max", "packets_lost_detected"] {
        assert!(json["paths"][0].get(key).is_some(), "paths[0].{key} missing");
    }
    for key in ["scheduler", "reorder"] {
        assert!(json["drops"].get(key).is_some(), "drops.{key} missing");
    }
    for key in ["released_on_timeout", "duplicates", "wait_limit_ms_mean"] {
        assert!(json["reorder"].get(key).is_some(), "reorder.{key} missing");
    }
    for key in ["hol_ms", "protocol_delay_ms", "tunnel", "events"] {
        assert!(json.get(key).is_none(), "{key} should be left out");
    }
    assert!(ours(&tag).is_empty(), "{:?}", ours(&tag));
}

#[test]
fn an_interrupt_during_the_transfer_tears_everything_down() {
    let tag = unique_prefix("blr");
    // 100 MB at 50 Mbit/s takes 17 s; interrupt after 1.5 s.
    let s = Scenario::from_toml_str("", &["e2e.bytes=100000000".into()]).unwrap();
    let cancel = AtomicBool::new(false);
    let t0 = Instant::now();
    let result = std::thread::scope(|sc| {
        sc.spawn(|| {
            std::thread::sleep(Duration::from_millis(1500));
            assert!(!ours(&tag).is_empty(), "the topology should be up mid-run");
            cancel.store(true, Ordering::Relaxed);
        });
        lab::run(&s, &options(&tag), &cancel)
    });
    assert!(matches!(result, Err(LabError::Interrupted)), "{result:?}");
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    assert!(ours(&tag).is_empty(), "{:?}", ours(&tag));
}

#[test]
fn a_tunnel_that_cannot_start_is_an_error_and_everything_is_cleaned_up() {
    let tag = unique_prefix("blr");
    let opts = LabOptions {
        mode: LabMode::Tunnel,
        braid_exe: "/nonexistent/braid".into(),
        ..options(&tag)
    };
    let s = Scenario::from_toml_str("", &["e2e.bytes=1000".into()]).unwrap();
    let result = lab::run(&s, &opts, &AtomicBool::new(false));
    assert!(matches!(result, Err(LabError::Net(_))), "{result:?}");
    assert!(ours(&tag).is_empty(), "{:?}", ours(&tag));
}

/// `e2e.kind = "udp"` on path 1 alone: 80 Mbit/s offered into a 50 Mbit/s htb bottleneck. Every
/// datagram of the budget is sent, the excess is lost at the bottleneck, and what arrives comes
/// at the bottleneck's rate (1372 bytes of payload per 1400-byte packet; htb also counts the
/// 14-byte Ethernet header: at most 49 Mbit/s of payload).
#[test]
fn a_udp_flow_above_the_bottleneck_rate_is_cut_to_it() {
    let tag = unique_prefix("blu");
    let overrides =
        ["e2e.kind=udp", "e2e.bytes=5000000", "e2e.udp_packet_bytes=1400", "e2e.udp_rate_mbps=80"];
    let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
    let s = Scenario::from_toml_str("", &overrides).unwrap();
    let out = lab::run(&s, &options(&tag), &AtomicBool::new(false)).unwrap();
    let r = &out.report;
    eprintln!(
        "udp baseline: {:.2} Mbit/s over {:.2} s; {:?} of {:?} datagrams lost",
        r.goodput_mbps, r.dlct_s, r.e2e.datagrams_lost, r.e2e.datagrams_sent
    );
    assert_eq!(r.e2e.kind, "udp");
    assert_eq!(r.e2e.datagrams_sent, Some(5_000_000u64.div_ceil(1372)));
    let lost = r.e2e.datagrams_lost.unwrap();
    assert!(lost > 0 && r.e2e.bytes_delivered < 5_000_000, "{:?}", r.e2e);
    assert_eq!(r.e2e.bytes_delivered % 1372, 0, "whole datagrams only");
    assert!((40.0..49.5).contains(&r.goodput_mbps), "{}", r.goodput_mbps);
    assert!(r.e2e.retransmissions.is_none() && r.e2e.srtt_ms_mean.is_none());
    assert!(ours(&tag).is_empty(), "{:?}", ours(&tag));
}

/// A UDP flow through the tunnel at 120 Mbit/s: both paths carry it, so more arrives per second
/// than path 1 alone can carry (49 Mbit/s of payload, the test above).
#[test]
fn a_udp_flow_through_the_tunnel_gets_more_than_one_path() {
    let tag = unique_prefix("blu");
    let opts = LabOptions { mode: LabMode::Tunnel, braid_exe: braid_exe(), ..options(&tag) };
    let overrides = [
        "e2e.kind=udp",
        "e2e.bytes=10000000",
        "e2e.udp_packet_bytes=1400",
        "e2e.udp_rate_mbps=120",
    ];
    let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
    let s = Scenario::from_toml_str("", &overrides).unwrap();
    let out = lab::run(&s, &opts, &AtomicBool::new(false)).unwrap();
    let r = &out.report;
    let shares: Vec<f64> = r.paths.iter().map(|p| p.share.unwrap_or(0.0)).collect();
    eprintln!(
        "udp tunnel: {:.2} Mbit/s over {:.2} s; {:?} of {:?} datagrams lost; shares {shares:?}",
        r.goodput_mbps, r.dlct_s, r.e2e.datagrams_lost, r.e2e.datagrams_sent
    );
    assert_eq!(r.e2e.kind, "udp");
    assert!(r.goodput_mbps > 55.0, "{}", r.goodput_mbps);
    assert!(shares.iter().all(|&x| x > 0.2), "both paths carry it: {shares:?}");
    assert!(ours(&tag).is_empty(), "{:?}", ours(&tag));
}
