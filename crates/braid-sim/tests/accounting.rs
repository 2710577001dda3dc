//! The accounting invariant under random scenarios: every packet that entered the tunnel was
//! delivered, dropped in a named queue, or is still in flight. `run` checks it at the end of
//! every run and returns an error on violation; here random scenarios exercise it. The
//! scheduler, tunnel CC, reliability and receiver choices come from the names the core
//! registers, so a newly added algorithm is covered without touching this file.

use braid_core::cc::TunnelCc;
use braid_core::sched::SchedulerKind;
use braid_core::tunnel::Reliability;
use braid_sim::{run, Scenario};
use proptest::prelude::*;

fn one_of(names: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
    proptest::sample::select(names)
}

fn arb_overrides() -> impl Strategy<Value = Vec<String>> {
    (
        (1.0f64..80.0, 0.5f64..60.0, 0.5f64..120.0),
        (5.0f64..80.0, 5.0f64..80.0),
        (5u32..600, 5u32..600, 10u32..2000),
        prop_oneof![Just("newreno"), Just("cubic"), Just("bbr")],
        one_of(TunnelCc::NAMES),
        one_of(SchedulerKind::NAMES),
        (
            prop_oneof![Just("none"), Just("static"), Just("adaptive")],
            one_of(Reliability::NAMES),
            any::<bool>(),
            any::<bool>(),
        ),
        (prop_oneof![Just("tcp"), Just("udp")], 0.0f64..0.02, any::<u32>()),
    )
        .prop_map(|(rtts, rates, bufs, e2e, tcc, sched, receiver, (kind, loss, seed))| {
            let (reorder, reliability, fast_loss, equalize) = receiver;
            vec![
                format!("server_link.rtt_ms={}", rtts.0),
                format!("paths.0.rtt_ms={}", rtts.1),
                format!("paths.1.rtt_ms={}", rtts.2),
                format!("paths.0.rate_mbps={}", rates.0),
                format!("paths.1.rate_mbps={}", rates.1),
                format!("paths.0.buffer_pkts={}", bufs.0),
                format!("paths.1.buffer_pkts={}", bufs.1),
                format!("tunnel.sched_queue_pkts={}", bufs.2),
                format!("e2e.cc={e2e}"),
                format!("tunnel.cc={tcc}"),
                format!("tunnel.scheduler={sched}"),
                format!("tunnel.reorder={reorder}"),
                format!("tunnel.reliability={reliability}"),
                format!("tunnel.fast_loss_detection={}", fast_loss && reorder != "none"),
                format!("tunnel.equalize_delay={equalize}"),
                format!("e2e.kind={kind}"),
                format!("paths.1.loss={loss}"),
                "e2e.udp_rate_mbps=150".into(),
                "e2e.bytes=3000000".into(),
                format!("seed={seed}"),
            ]
        })
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
