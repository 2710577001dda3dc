//! The accounting invariant under random scenarios: every packet that entered the tunnel (and
//! every further copy the tunnel made) was delivered, dropped in a named queue, or is still in
//! flight. `run` checks it at the end of every run and returns an error on violation; here
//! random scenarios exercise it, with drop-tail or CoDel bottlenecks (either direction) and
//! scheduler queues, and
//! Bernoulli or Gilbert-Elliott loss. The scheduler, tunnel CC, end-to-end CC, reliability and
//! receiver choices come from the names the core registers, so a newly added algorithm is
//! covered without touching this file.

use braid_core::cc::cubic::CubicUndo;
use braid_core::cc::{CcAlgorithm, TunnelCc};
use braid_core::sched::SchedulerKind;
use braid_core::tunnel::Reliability;
use braid_sim::{run, Scenario};
use proptest::prelude::*;

fn one_of(names: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
    proptest::sample::select(names)
}

/// A loss table for a path direction: none, Bernoulli, or Gilbert-Elliott.
fn arb_loss() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("0".to_string()),
        (0.0f64..0.02).prop_map(|p| format!("{{ model = \"bernoulli\", p = {p} }}")),
        (0.0f64..0.02, 0.1f64..1.0, 0.0f64..0.5, 0.98f64..=1.0).prop_map(|(p, r, h, k)| format!(
            "{{ model = \"gilbert_elliott\", p = {p}, r = {r}, h = {h}, k = {k} }}"
        )),
    ]
}

/// Queue disciplines and CoDel parameters for both paths.
fn arb_aqm() -> impl Strategy<Value = Vec<String>> {
    let aqm = || prop_oneof![Just("droptail"), Just("codel")];
    let sched_target =
        prop_oneof![Just("off".to_string()), (1.0f64..20.0).prop_map(|t| t.to_string())];
    (aqm(), aqm(), aqm(), 1.0f64..10.0, 20.0f64..200.0, sched_target).prop_map(
        |(down0, down1, up1, target, interval, sched_target)| {
            vec![
                format!("paths.0.aqm={down0}"),
                format!("paths.1.aqm={down1}"),
                format!("paths.1.uplink_aqm={up1}"),
                format!("paths.0.codel_target_ms={target}"),
                format!("paths.0.codel_interval_ms={interval}"),
                format!("tunnel.sched_codel_target_ms={sched_target}"),
            ]
        },
    )
}

/// Tunnel algorithms and receiver options.
fn arb_tunnel() -> impl Strategy<Value = Vec<String>> {
    (
        one_of(TunnelCc::NAMES),
        one_of(SchedulerKind::NAMES),
        prop_oneof![Just("none"), Just("static"), Just("adaptive")],
        one_of(Reliability::NAMES),
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(None), (5.0f64..300.0).prop_map(Some)],
    )
        .prop_map(|(cc, sched, reorder, reliability, fast_loss, equalize, repair_wait)| {
            let repair_wait =
                repair_wait.filter(|_| reliability == "reliable" && reorder != "none");
            vec![
                format!("tunnel.cc={cc}"),
                format!("tunnel.scheduler={sched}"),
                format!("tunnel.reorder={reorder}"),
                format!("tunnel.reliability={reliability}"),
                format!("tunnel.fast_loss_detection={}", fast_loss && reorder != "none"),
                format!("tunnel.equalize_delay={equalize}"),
                format!(
                    "tunnel.repair_wait_ms={}",
                    repair_wait.map_or("off".into(), |w| w.to_string())
                ),
            ]
        })
}

fn arb_overrides() -> impl Strategy<Value = Vec<String>> {
    (
        (1.0f64..80.0, 0.5f64..60.0, 0.5f64..120.0),
        (5.0f64..80.0, 5.0f64..80.0),
        (5u32..600, 5u32..600, 10u32..2000),
        one_of(CcAlgorithm::NAMES),
        arb_tunnel(),
        (prop_oneof![Just("tcp"), Just("udp")], arb_loss(), arb_loss(), any::<u32>()),
        (arb_aqm(), any::<bool>(), one_of(CubicUndo::NAMES)),
    )
        .prop_map(
            |(
                rtts,
                rates,
                bufs,
                e2e,
                tunnel,
                (kind, loss, uplink_loss, seed),
                (aqm, dsack, undo),
            )| {
                let mut o = vec![
                    format!("server_link.rtt_ms={}", rtts.0),
                    format!("paths.0.rtt_ms={}", rtts.1),
                    format!("paths.1.rtt_ms={}", rtts.2),
                    format!("paths.0.rate_mbps={}", rates.0),
                    format!("paths.1.rate_mbps={}", rates.1),
                    format!("paths.0.buffer_pkts={}", bufs.0),
                    format!("paths.1.buffer_pkts={}", bufs.1),
                    format!("tunnel.sched_queue_pkts={}", bufs.2),
                    format!("e2e.cc={e2e}"),
                    format!("e2e.kind={kind}"),
                    format!("paths.1.loss={loss}"),
                    format!("paths.0.uplink_loss={uplink_loss}"),
                    "e2e.udp_rate_mbps=150".into(),
                    "e2e.bytes=3000000".into(),
                    format!("seed={seed}"),
                    format!("e2e.dsack={dsack}"),
                    format!("e2e.cubic_undo={undo}"),
                ];
                o.extend(tunnel);
                o.extend(aqm);
                o
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_tunnelled_packet_is_accounted_for(overrides in arb_overrides()) {
        let s = Scenario::from_toml_str("", &overrides).expect("generated scenarios are valid");
        let out = run(&s, false);
        prop_assert!(out.is_ok(), "{:?}", out.err());
        let r = out.unwrap().report;
        if s.e2e.kind == braid_sim::scenario::E2eKind::Tcp {
            prop_assert_eq!(r.e2e.bytes_delivered, s.e2e.bytes);
        }
    }
}

/// A run that surely drops at CoDel and loses in bursts passes the check, and the report splits
/// CoDel's drops out of the bottleneck drops. Greedy UDP over a loss-based tunnel CC (CUBIC)
/// keeps growing the window on path 1 (`paths.0`), which has no random loss, until its queue
/// drops: with CDL1 CoDel drops there first. Path 2 loses in bursts on both directions.
#[test]
fn codel_drops_and_bursty_losses_are_accounted_for() {
    let overrides: Vec<String> = [
        "keys=CDL1",
        "tunnel.cc=cubic",
        "e2e.kind=udp",
        "e2e.udp_rate_mbps=150",
        "e2e.bytes=20000000",
        "paths.1.loss={ model = \"gilbert_elliott\", p = 0.002, r = 0.3, h = 0.1, k = 0.999 }",
        "paths.1.uplink_loss={ model = \"gilbert_elliott\", p = 0.01, r = 0.5 }",
        "paths.1.uplink_aqm=codel",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let s = Scenario::from_toml_str("", &overrides).unwrap();
    let r = run(&s, false).expect("accounting holds").report;
    let d = &r.drops;
    assert!(d.bottleneck_aqm[0] > 0, "no CoDel drop on path 1: {d:?}");
    assert!(d.bottleneck[1] > d.bottleneck_aqm[1], "no random loss on path 2: {d:?}");
    assert!(d.uplink[1] > 0, "no loss on path 2's uplink: {d:?}");
}
