//! The server under a flood, for real in network namespaces (`braid bench flood`'s bed: a
//! two-path tunnel over htb links, a third namespace sending to the server's path-1 port).
//! Needs root. Each check is bounded (20 MB downloads, a 30 s handshake limit) and the bed's
//! namespaces are gone afterwards.

mod common;

use braid_lab::flood::{flood_bench, FloodConfig, FloodKind, FloodLine};
use braid_lab::host::attempts;
use braid_lab::netns::list_netns_with_prefix;

use common::{braid_exe, serial};

/// One flooded download of `kind` at 50 000 datagrams per second, after its unflooded twin.
fn flooded(kind: FloodKind) -> FloodLine {
    let cfg = FloodConfig {
        bytes: 20_000_000,
        rates: vec![50_000],
        kinds: vec![kind],
        ..FloodConfig::default()
    };
    let mut lines = Vec::new();
    flood_bench(braid_exe(), &cfg, |l| lines.push(l.clone())).expect("the bench runs");
    assert_eq!(lines.len(), 1);
    lines.remove(0)
}

/// Stated before measuring (the target): a flood of 50 000 datagrams per second keeps
/// at least 90% of the goodput of the download just before it, for every kind, and a client
/// that restarts during the flood completes a new handshake: at once when the flood does not
/// know the server's key, within one retry (5 s) and a second when it does and the server
/// answers with cookies. Before handshake MACs, the `initiation` flood stopped the download
/// at 20 000 per second. Downloads on this VM vary by 10-15% from one to the next, so each
/// kind has three attempts (`attempts` prints the CPU steal of each).
#[test]
fn floods_of_50_000_per_second_keep_90_percent_of_goodput_and_a_new_handshake_completes() {
    let _turn = serial();
    for kind in FloodKind::ALL {
        let handshake_limit = if kind == FloodKind::Keyed { 7.0 } else { 2.0 };
        let line = attempts(
            &format!("{} flood", kind.as_str()),
            3,
            || flooded(kind),
            |l| {
                eprintln!("{}", serde_json::to_string(l).unwrap());
                if l.pps_sent < 45_000.0 {
                    return Err(format!("the flooder reached only {:.0}/s", l.pps_sent));
                }
                if l.retained < 0.9 {
                    return Err(format!(
                        "retained {:.3} of {:.1} Mbit/s",
                        l.retained, l.baseline_mbps
                    ));
                }
                match l.handshake_s {
                    Some(s) if s <= handshake_limit => Ok(()),
                    other => {
                        Err(format!("new handshake after {other:?} s (limit {handshake_limit})"))
                    }
                }
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        // Where the datagrams went: each kind ends where it should, before any DH.
        match kind {
            FloodKind::Initiation => assert!(line.bad_mac1 > 100_000, "{line:?}"),
            FloodKind::Keyed => {
                assert_eq!(line.bad_mac1, 0, "{line:?}");
                assert!(line.rate_limited > 100_000, "{line:?}");
                // The client's cookie plus what the flood earned before its source's bucket
                // emptied: the per-source limit, not one reply per datagram.
                assert!((1..2_000).contains(&line.cookie_replies), "{line:?}");
            }
            FloodKind::Junk => assert_eq!(line.bad_mac1 + line.cookie_replies, 0, "{line:?}"),
        }
    }
    let left = list_netns_with_prefix(&format!("bf-{}-", std::process::id())).unwrap();
    assert!(left.is_empty(), "{left:?}");
}
