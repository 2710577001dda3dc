//! docs/operating.md's "From zero to a bonded download", run as written by
//! `scripts/walkthrough.py` in network namespaces (a client with two 20 Mbit/s uplinks, a
//! server that forwards and masquerades, a web server behind it): every step succeeds, the
//! download through the tunnel is faster than one uplink, and stopping the daemons removes
//! their routing rules and TUN devices. Needs root, `nft`, `curl` and `unshare`.

mod common;

use std::process::Command;

use common::{braid_exe, serial};

#[test]
fn the_operating_guide_from_zero_to_a_bonded_download_works_as_written() {
    let _turn = serial();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("python3")
        .arg(root.join("scripts/walkthrough.py"))
        .arg("--braid")
        .arg(braid_exe())
        .output()
        .expect("python3 runs");
    let report = String::from_utf8_lossy(&out.stdout);
    eprintln!("{report}");
    assert!(out.status.success(), "{report}\n{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_str(&report).unwrap();
    // Two 20 Mbit/s uplinks: bonded, well above one of them.
    let mbps = json["download_mbps"].as_f64().unwrap();
    assert!(mbps > 28.0, "{mbps} Mbit/s");
    assert!(json["checks"].as_object().unwrap().values().all(|v| v == true), "{report}");
}
