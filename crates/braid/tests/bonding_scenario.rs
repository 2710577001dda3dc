//! `scenarios/bonding.toml` is the data plane's default tunnel, so that the lab and the
//! simulator run what `braid tunnel` runs without a `[tunnel]` section.

use std::path::Path;

use braid_net::config::{default_tunnel, Transport};
use braid_sim::Scenario;

#[test]
fn the_bonding_scenario_is_the_daemons_default_tunnel() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/bonding.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let s = Scenario::from_toml_str(&text, &[]).unwrap();
    assert_eq!(s.tunnel, default_tunnel(Transport::Udp));
    // Only the tunnel differs from the default scenario.
    let expected = Scenario { tunnel: s.tunnel.clone(), ..Default::default() };
    assert_eq!(format!("{s:?}"), format!("{expected:?}"));
}
