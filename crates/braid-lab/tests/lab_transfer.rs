//! Real kernel TCP over the single-path baseline (server -> proxy -> path 1 -> UE, no tunnel)
//! of the default scenario, emulated with the htb fallback. Needs root.
//!
//! Bound on goodput: htb counts 1514-byte frames, so a 50 Mbit/s path carries at most
//! 50 * 1448 / 1514 = 47.82 Mbit/s of TCP payload (MSS 1448 with timestamps; docs/design.md
//! section 7). A greedy download of 20 MB must stay below that (and so below the 50 Mbit/s
//! rate) and reach at least 80% of it over its whole DLCT, slow start included.

use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::Duration;

use braid_lab::host::attempts;
use braid_lab::netns::list_netns;
use braid_lab::topology::{LinkCounters, Topology, TopologyOptions};
use braid_lab::transfer::{
    run_pair, KernelCc, ReceiverConfig, SenderConfig, TransferError, TransferReport,
};
use braid_sim::Scenario;

/// One transfer at a time: two greedy downloads at once share the 2 CPUs and slow each other.
static SERIAL: Mutex<()> = Mutex::new(());

const BYTES: u64 = 20_000_000;
const PATH_RATE_MBPS: f64 = 50.0;
const MSS_BYTES: f64 = 1448.0;
const FRAME_BYTES: f64 = 1514.0;

fn configs(topo: &Topology, cc: KernelCc, bytes: u64) -> (SenderConfig, ReceiverConfig) {
    let ue = topo.route_single_path(1).unwrap();
    let listen = (ue, 5201).into();
    let send = SenderConfig {
        connect: listen,
        bytes,
        cc,
        seed: 11,
        sample_interval: Duration::from_millis(100),
        timeout: Duration::from_secs(30),
        idle_timeout: Duration::from_secs(5),
    };
    let recv = ReceiverConfig {
        listen,
        bin: Duration::from_millis(100),
        timeout: Duration::from_secs(30),
        idle_timeout: Duration::from_secs(5),
    };
    (send, recv)
}

/// One download over a fresh topology: the report, path 1's queue counters and the namespaces
/// it used (gone by the time this returns).
fn one_transfer(cc: KernelCc) -> (TransferReport, LinkCounters, Vec<String>) {
    let topo = Topology::build(&Scenario::default(), &TopologyOptions::new()).unwrap();
    let (send, recv) = configs(&topo, cc, BYTES);
    let r = run_pair(topo.server().name(), topo.ue().name(), &send, &recv, &AtomicBool::new(false))
        .unwrap();
    let counters = topo.counters(1).unwrap().unwrap();
    let names = topo.namespace_names();
    drop(topo);
    (r, counters, names)
}

fn baseline_transfer(cc: KernelCc) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let payload_cap = PATH_RATE_MBPS * MSS_BYTES / FRAME_BYTES; // 47.82 Mbit/s
                                                                // The floor is a timing claim: the sender and receiver threads share 2 CPUs with the
                                                                // kernel's forwarding, so up to three transfers, each printed with the host's CPU steal.
    let (r, counters, prefix) = attempts(
        &format!("{cc:?} baseline goodput"),
        3,
        || one_transfer(cc),
        |(r, _, _)| {
            let goodput = r.receiver.goodput_mbps;
            eprintln!(
                "{cc:?}: DLCT {:.3} s, goodput {goodput:.2} Mbit/s, retrans {}",
                r.receiver.dlct_s,
                last_retrans(r)
            );
            if goodput >= 0.8 * payload_cap {
                Ok(())
            } else {
                Err(format!("goodput {goodput:.2} below 80% of {payload_cap:.2}"))
            }
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));

    assert_eq!(r.sender.cc_effective, cc.as_str(), "TCP_CONGESTION read back");
    assert_eq!(r.receiver.bytes, BYTES);
    assert_eq!(r.receiver.bin_bytes.iter().sum::<u64>(), BYTES);
    let goodput = r.receiver.goodput_mbps;
    assert!(goodput <= PATH_RATE_MBPS, "{cc:?}: goodput {goodput:.2} above the path rate");
    assert!(goodput <= payload_cap * 1.01, "{cc:?}: goodput {goodput:.2} above {payload_cap:.2}");
    // DLCT = bytes * 8 / goodput, by definition.
    let dlct_from_goodput = BYTES as f64 * 8.0 / (goodput * 1e6);
    assert!((r.receiver.dlct_s - dlct_from_goodput).abs() < 1e-6);

    // The sender's TCP_INFO: the connection's packets all went through the path, and the
    // sampled srtt includes the queue the greedy flow builds (no propagation delay here).
    let last = r.sender.final_info().unwrap();
    assert!(last.bytes_acked.unwrap() > BYTES, "{last:?}");
    assert!(r.sender.samples.len() >= 10, "{} samples", r.sender.samples.len());
    assert!(r.sender.samples.iter().any(|s| s.info.snd_cwnd > 10));

    // The downlink queue of path 1 carried every payload byte in 1514-byte frames.
    let min_frames = BYTES / MSS_BYTES as u64;
    assert!(counters.down.packets >= min_frames, "{counters:?}");
    let left: Vec<_> = list_netns().unwrap().into_iter().filter(|n| prefix.contains(n)).collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn baseline_transfer_with_cubic_fills_the_path() {
    baseline_transfer(KernelCc::Cubic);
}

#[test]
fn baseline_transfer_with_bbr_fills_the_path() {
    baseline_transfer(KernelCc::Bbr);
}

#[test]
fn a_transfer_to_nobody_fails_fast_and_the_topology_still_goes() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let topo = Topology::build(&Scenario::default(), &TopologyOptions::new()).unwrap();
    let (mut send, recv) = configs(&topo, KernelCc::Reno, 1000);
    // Nothing listens on this port: the sender's connect is refused, the receiver is stopped.
    send.connect.set_port(5999);
    let t0 = std::time::Instant::now();
    let err =
        run_pair(topo.server().name(), topo.ue().name(), &send, &recv, &AtomicBool::new(false))
            .unwrap_err();
    assert!(matches!(err, TransferError::Io { what: "connect", .. }), "{err:?}");
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
}

fn last_retrans(r: &TransferReport) -> u32 {
    r.sender.final_info().map_or(0, |i| i.total_retrans)
}
