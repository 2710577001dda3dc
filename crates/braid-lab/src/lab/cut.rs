//! `braid lab --cut PATH:FROM-TO`: one path dead in both directions for a while during the
//! transfer, and what the tunnel made of it.
//!
//! The cut is nftables rules in the proxy's and the UE's namespaces that drop every packet
//! entering or leaving the path's interface (inet family: IPv4 and IPv6, ARP untouched), as a
//! radio link that goes out of range while its interface stays up: nothing tells the daemons
//! but the silence. The interface is not set down (that would tell the kernel and the daemons
//! at once, which a failing access network does not).
//!
//! Figures ([`CutReport`]): `failover_gap_ms`, the longest time after the cut began in which
//! the receiver got no byte (its goodput bins, 10 ms wide when a cut is asked for); and
//! `rejoin_ms`, the time from the restore until the server's sender puts data on the path
//! again (its `tx_pkts`, polled every 10 ms).

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::netns::{run_with_timeout, NetError, COMMAND_TIMEOUT};
use crate::topology::Topology;
use crate::transfer::ReceiverReport;
use crate::tunnel::status;

/// nftables table of a cut, in the proxy's and the UE's namespaces.
const TABLE: &str = "braid_lab_cut";
/// Width of the receiver's goodput bins when a cut is measured.
pub const CUT_BIN: Duration = Duration::from_millis(10);
/// How long the path has to come back after the restore before `rejoin_ms` is left out.
const REJOIN_LIMIT: Duration = Duration::from_secs(10);

/// What to cut and when: `PATH:FROM-TO`, seconds since the transfer started.
#[derive(Clone, Debug, PartialEq)]
pub struct CutSpec {
    pub path: String,
    pub from_s: f64,
    pub to_s: f64,
}

impl std::str::FromStr for CutSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let form = "expected PATH:FROM-TO, e.g. wifi:3-6 (seconds since the transfer started)";
        let (path, times) = s.rsplit_once(':').ok_or(form)?;
        let (from, to) = times.split_once('-').ok_or(form)?;
        let secs = |v: &str, what: &str| -> Result<f64, String> {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0 && *x <= 3600.0)
                .ok_or_else(|| format!("{what} {v:?} must be seconds in 0..=3600; {form}"))
        };
        let (from_s, to_s) = (secs(from, "FROM")?, secs(to, "TO")?);
        if path.is_empty() {
            return Err(format!("no path name; {form}"));
        }
        if to_s <= from_s {
            return Err(format!("TO ({to_s}) must be after FROM ({from_s})"));
        }
        Ok(CutSpec { path: path.to_string(), from_s, to_s })
    }
}

/// The cut's figures, in the report's `cut` object.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CutReport {
    pub path: String,
    pub from_s: f64,
    pub to_s: f64,
    /// Longest run of empty 10 ms receiver bins from the cut on.
    pub failover_gap_ms: f64,
    /// From the restore until the server sends data on the path again; `None` if it did not
    /// within 10 s or the transfer ended first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejoin_ms: Option<f64>,
    /// Whether the server's liveness declared the path down during the cut.
    pub declared_down: bool,
}

/// Where a cut applies: path `index`'s interface at the proxy and at the UE, and the namespace
/// of the server daemon whose status tells what the tunnel did.
#[derive(Clone, Debug)]
pub struct CutTarget {
    pub index: usize,
    pub proxy_ns: String,
    pub proxy_if: String,
    pub ue_ns: String,
    pub ue_if: String,
}

impl CutTarget {
    /// Path `k` of `topo`.
    pub fn new(topo: &Topology, k: usize) -> CutTarget {
        let link = &topo.paths()[k];
        CutTarget {
            index: k,
            proxy_ns: topo.proxy().name().to_string(),
            proxy_if: link.upstream.ifname.clone(),
            ue_ns: topo.ue().name().to_string(),
            ue_if: link.downstream.ifname.clone(),
        }
    }
}

/// A cut in force; dropping it restores the path.
pub struct Cut<'a> {
    namespaces: Vec<&'a str>,
}

impl Drop for Cut<'_> {
    fn drop(&mut self) {
        for ns in &self.namespaces {
            let _ = nft(ns, &format!("delete table inet {TABLE}"));
        }
    }
}

fn nft(ns: &str, script: &str) -> Result<String, NetError> {
    run_with_timeout("ip", &["netns", "exec", ns, "nft", script], COMMAND_TIMEOUT)
}

/// Drops everything on the target's interfaces at the proxy and the UE until the guard drops.
pub fn cut(target: &CutTarget) -> Result<Cut<'_>, NetError> {
    let mut guard = Cut { namespaces: Vec::new() };
    for (ns, ifname) in [
        (target.proxy_ns.as_str(), target.proxy_if.as_str()),
        (target.ue_ns.as_str(), target.ue_if.as_str()),
    ] {
        let script = format!(
            "add table inet {TABLE}\n\
             add chain inet {TABLE} cut_in {{ type filter hook input priority -300; policy accept; }}\n\
             add chain inet {TABLE} cut_out {{ type filter hook output priority -300; policy accept; }}\n\
             add chain inet {TABLE} cut_fwd {{ type filter hook forward priority -300; policy accept; }}\n\
             add rule inet {TABLE} cut_in iifname \"{ifname}\" drop\n\
             add rule inet {TABLE} cut_out oifname \"{ifname}\" drop\n\
             add rule inet {TABLE} cut_fwd iifname \"{ifname}\" drop\n\
             add rule inet {TABLE} cut_fwd oifname \"{ifname}\" drop\n"
        );
        nft(ns, &script)?;
        guard.namespaces.push(ns);
    }
    Ok(guard)
}

/// Runs the cut `spec` on `target` while the transfer runs (it started at `started`), reading
/// the server daemon's status in the proxy namespace; returns whether the server declared the
/// path down and the rejoin time.
pub fn run_cut(
    target: &CutTarget,
    spec: &CutSpec,
    started: Instant,
    finished: &std::sync::atomic::AtomicBool,
) -> Result<(bool, Option<f64>), NetError> {
    let k = target.index;
    let server = || status(&target.proxy_ns);
    use std::sync::atomic::Ordering;
    let at = |s: f64| started + Duration::from_secs_f64(s);
    let wait_until = |t: Instant| {
        while Instant::now() < t && !finished.load(Ordering::Relaxed) {
            std::thread::sleep((t - Instant::now()).min(Duration::from_millis(5)));
        }
    };
    wait_until(at(spec.from_s));
    if finished.load(Ordering::Relaxed) {
        return Ok((false, None));
    }
    let guard = cut(target)?;
    let mut declared_down = false;
    while Instant::now() < at(spec.to_s) && !finished.load(Ordering::Relaxed) {
        declared_down |= server().is_ok_and(|s| s.paths.get(k).is_some_and(|p| !p.up));
        std::thread::sleep(Duration::from_millis(20));
    }
    let tx = || server().ok().and_then(|s| s.paths.get(k).map(|p| p.tx_pkts));
    let before = tx();
    drop(guard);
    let restored = Instant::now();
    while restored.elapsed() < REJOIN_LIMIT && !finished.load(Ordering::Relaxed) {
        if let (Some(b), Some(now)) = (before, tx()) {
            if now > b {
                return Ok((declared_down, Some(restored.elapsed().as_secs_f64() * 1e3)));
            }
        }
        std::thread::sleep(CUT_BIN);
    }
    Ok((declared_down, None))
}

/// The longest run of empty bins of `receiver` from `from_s` on, in milliseconds. Bins are
/// counted from the receiver's first byte, which is within a round trip of the transfer's
/// start.
pub fn failover_gap_ms(receiver: &ReceiverReport, from_s: f64) -> f64 {
    let bin = receiver.bin_s.max(1e-9);
    let first = (from_s / bin).floor() as usize;
    let mut longest = 0usize;
    let mut run = 0usize;
    for &b in receiver.bin_bytes.iter().skip(first) {
        if b == 0 {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    longest as f64 * bin * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_reads_path_and_seconds_and_names_what_is_wrong() {
        assert_eq!(
            "wifi:3-6.5".parse::<CutSpec>(),
            Ok(CutSpec { path: "wifi".into(), from_s: 3.0, to_s: 6.5 })
        );
        assert!("wifi".parse::<CutSpec>().unwrap_err().contains("PATH:FROM-TO"));
        assert!("wifi:6-3".parse::<CutSpec>().unwrap_err().contains("must be after"));
        assert!("wifi:x-3".parse::<CutSpec>().unwrap_err().contains("FROM \"x\""));
        assert!(":1-2".parse::<CutSpec>().unwrap_err().contains("no path name"));
    }

    #[test]
    fn the_gap_is_the_longest_empty_run_after_the_cut() {
        let r = ReceiverReport {
            bytes: 0,
            seed: 0,
            connect_start_ns: 0,
            first_byte_s: 0.0,
            last_byte_s: 0.0,
            dlct_s: 0.0,
            goodput_mbps: 0.0,
            bin_s: 0.01,
            // 10 ms bins: a 40 ms hole before the cut (ignored), then 30 ms, then 50 ms.
            bin_bytes: vec![5, 0, 0, 0, 0, 5, 5, 0, 0, 0, 5, 0, 0, 0, 0, 0, 5],
        };
        assert!((failover_gap_ms(&r, 0.06) - 50.0).abs() < 1e-9);
        assert!((failover_gap_ms(&r, 0.0) - 50.0).abs() < 1e-9);
        assert!((failover_gap_ms(&r, 0.165) - 0.0).abs() < 1e-9);
    }
}
