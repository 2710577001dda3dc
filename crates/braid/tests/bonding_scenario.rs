//! `scenarios/bonding.toml` is the data plane's default tunnel, so that the lab and the
//! simulator run what `braid tunnel` runs without a `[tunnel]` section.

use std::path::Path;

use braid_net::config::{default_tunnel, DaemonConfig, Transport, DEFAULT_MTU};
use braid_sim::scenario::{SimConfig, Wire};
use braid_sim::Scenario;

#[test]
fn the_bonding_scenario_is_the_daemons_default_tunnel() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/bonding.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let s = Scenario::from_toml_str(&text, &[]).unwrap();
    // The daemon keeps its TUN's MTU in [interface], the scenario in [tunnel].
    assert_eq!(s.tunnel.mtu_bytes, Some(f64::from(DEFAULT_MTU)));
    // The daemon derives its header bytes from the real wire, whose datagrams the scenario
    // models (sim.wire = "daemon"): its core is told what the example client's (two IPv4
    // paths, compact messages by default) is.
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/client.toml");
    let client = DaemonConfig::from_toml_str(&std::fs::read_to_string(example).unwrap()).unwrap();
    let (core, daemon) = (braid_sim::run::tunnel_config(&s), client.core_config());
    let wire = |c: &braid_core::tunnel::TunnelConfig| {
        (c.header_bytes, c.mss_bytes, c.compact_seq_reach, c.owd_sample_interval)
    };
    assert_eq!(wire(&core), wire(&daemon));
    let defaults = default_tunnel(Transport::Udp);
    let tunnel = braid_sim::scenario::TunnelConfig { mtu_bytes: None, ..s.tunnel.clone() };
    assert_eq!(tunnel, defaults);
    // Only the tunnel and the wire differ from the default scenario.
    let sim = SimConfig { wire: Wire::Daemon, ..Default::default() };
    let expected = Scenario { tunnel: s.tunnel.clone(), sim, ..Default::default() };
    assert_eq!(format!("{s:?}"), format!("{expected:?}"));
}
