//! `braid bench flood`: a download through an established two-path tunnel while a third
//! namespace floods the server's path-1 port, next to the same download without the flood.
//!
//! ```text
//!   ue  u1 ==htb== p1 ┐              proxy runs the server daemon and the TCP sender
//!       u2 ==htb== p2 │ proxy        (the download goes proxy -> UE through the tunnel)
//!   att a1 ------ pa1 ┘ (bridge b1 joins p1 and pa1; the server's path 1 binds to b1)
//! ```
//!
//! Both paths are shaped by htb at [`FloodConfig::path_rate_mbit`] each way and have no delay;
//! the attacker's link is not shaped, so what the flood costs is the server's work, not a
//! shared bottleneck (on the Internet a flood reaches the proxy by its own uplink, not by the
//! client's access network). Three kinds of flood ([`FloodKind`]): initiation-shaped random
//! bytes, initiations with a valid `mac1` (the attacker knows the server's public key), and
//! random bytes. After each flooded download, with the flood still going, the client daemon is
//! restarted and the time until its new handshake completes is measured: a legitimate new
//! handshake must still get through.

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use braid_core::Instant as CoreInstant;
use braid_net::crypto::cookie::CookieJar;
use braid_net::crypto::envelope::{INITIATION_LEN, MAC_LEN};
use braid_net::crypto::PublicKey;
use serde::Serialize;

use crate::bench::{download_configs, BenchError};
use crate::host::process_cpu_seconds;
use crate::netns::{run_in, unique_prefix, veth_pair, NetError, Netns};
use crate::topology::{shape_htb, Endpoint};
use crate::transfer::{run_pair, KernelCc, TransferReport};
use crate::tunnel::{io_err, TunnelPair, TunnelSpec, BASE_PORT};

const PORT: u16 = 5202;
/// Distinct datagrams the flooder cycles through.
const POOL: usize = 4096;

/// What the flood sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FloodKind {
    /// Type byte 1, reserved zeros, random bytes to an initiation's length: costs a server
    /// without `mac1` two X25519 operations each.
    Initiation,
    /// Initiation-shaped random bytes with a valid `mac1`, as an attacker who knows the
    /// server's public key sends: passes `mac1`, so it exercises load, cookies and limits.
    Keyed,
    /// Random bytes of random length (32 to 200).
    Junk,
}

impl FloodKind {
    pub const ALL: [FloodKind; 3] = [FloodKind::Initiation, FloodKind::Keyed, FloodKind::Junk];

    pub fn as_str(self) -> &'static str {
        match self {
            FloodKind::Initiation => "initiation",
            FloodKind::Keyed => "keyed",
            FloodKind::Junk => "junk",
        }
    }
}

impl std::str::FromStr for FloodKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        FloodKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| format!("unknown flood kind {s:?} (known: initiation, keyed, junk)"))
    }
}

/// The benchmark's settings.
#[derive(Clone, Debug)]
pub struct FloodConfig {
    /// Bytes of each download.
    pub bytes: u64,
    pub cc: KernelCc,
    /// Datagrams per second to try, each with every kind.
    pub rates: Vec<u64>,
    pub kinds: Vec<FloodKind>,
    /// htb rate of each path, each way.
    pub path_rate_mbit: u32,
    /// Length of the `initiation` kind's datagrams: the running build's initiation unless a
    /// build with another wire format is measured.
    pub initiation_len: usize,
    /// Restart the client during each flood and time its new handshake.
    pub handshake: bool,
    /// Measurements of each kind and rate.
    pub repeat: u32,
}

impl Default for FloodConfig {
    fn default() -> Self {
        FloodConfig {
            bytes: 50_000_000,
            cc: KernelCc::Cubic,
            rates: vec![1_000, 5_000, 20_000, 50_000],
            kinds: vec![FloodKind::Initiation, FloodKind::Keyed, FloodKind::Junk],
            path_rate_mbit: 50,
            initiation_len: INITIATION_LEN,
            handshake: true,
            repeat: 1,
        }
    }
}

/// One flooded download.
#[derive(Clone, Debug, Serialize)]
pub struct FloodLine {
    pub kind: FloodKind,
    /// Repetition, from 1.
    pub rep: u32,
    /// Datagrams per second asked for.
    pub rate_pps: u64,
    /// Datagrams per second the flooder achieved.
    pub pps_sent: f64,
    pub bytes: u64,
    pub baseline_mbps: f64,
    /// Goodput under the flood; 0 if the download did not complete.
    pub goodput_mbps: f64,
    /// `goodput_mbps / baseline_mbps`.
    pub retained: f64,
    /// The server daemon's CPU during the flooded download, in cores.
    pub server_cpu_cores: f64,
    /// Time from a client restart, during the flood, until its new session was established;
    /// `None` if it was not within 30 s or not measured.
    pub handshake_s: Option<f64>,
    /// Server counters over the line: handshake messages dropped for a wrong mac1, cookie
    /// replies sent, initiations refused by the rate limits (0 for builds without them).
    pub bad_mac1: u64,
    pub cookie_replies: u64,
    pub rate_limited: u64,
    /// Why the download failed, if it did.
    pub error: Option<String>,
}

/// The bench's namespaces and addresses.
struct Bed {
    ue: Netns,
    proxy: Netns,
    attacker: Netns,
    paths: Vec<(Endpoint, Endpoint)>,
    attacker_addr: Ipv4Addr,
}

fn endpoint(ns: &Netns, ifname: &str, addr: Ipv4Addr) -> Endpoint {
    Endpoint { netns: ns.name().into(), ifname: ifname.into(), addr, prefix_len: 24 }
}

fn build_bed(path_rate_mbit: u32) -> Result<Bed, NetError> {
    crate::netns::require_net_admin()?;
    let prefix = unique_prefix("bf");
    let ue = Netns::create(&format!("{prefix}-ue"))?;
    let proxy = Netns::create(&format!("{prefix}-prx"))?;
    let attacker = Netns::create(&format!("{prefix}-att"))?;
    let shape = |ns: &Netns, dev: &str| shape_htb(ns, dev, f64::from(path_rate_mbit), 500);
    let mut paths = Vec::new();
    for k in 1..=2u8 {
        let (u, p, b) = (format!("u{k}"), format!("p{k}"), format!("b{k}"));
        veth_pair(&ue, &u, &proxy, &p)?;
        proxy.ip(&["link", "add", "name", &b, "type", "bridge", "forward_delay", "0"])?;
        proxy.ip(&["link", "set", "dev", &p, "master", &b])?;
        let server_addr = Ipv4Addr::new(10, 60 + k, 0, 1);
        let ue_addr = Ipv4Addr::new(10, 60 + k, 0, 2);
        proxy.ip(&["addr", "add", &format!("{server_addr}/24"), "dev", &b])?;
        ue.ip(&["addr", "add", &format!("{ue_addr}/24"), "dev", &u])?;
        for (ns, dev) in [(&proxy, p.as_str()), (&proxy, b.as_str()), (&ue, u.as_str())] {
            ns.ip(&["link", "set", dev, "up"])?;
        }
        shape(&proxy, &p)?;
        shape(&ue, &u)?;
        paths.push((endpoint(&proxy, &b, server_addr), endpoint(&ue, &u, ue_addr)));
    }
    veth_pair(&attacker, "a1", &proxy, "pa1")?;
    proxy.ip(&["link", "set", "dev", "pa1", "master", "b1", "up"])?;
    let attacker_addr = Ipv4Addr::new(10, 61, 0, 66);
    attacker.ip(&["addr", "add", &format!("{attacker_addr}/24"), "dev", "a1"])?;
    attacker.ip(&["link", "set", "a1", "up"])?;
    for ns in [&ue, &proxy, &attacker] {
        ns.ip(&["link", "set", "lo", "up"])?;
    }
    Ok(Bed { ue, proxy, attacker, paths, attacker_addr })
}

/// A small xorshift generator: the flood needs variety, not secrecy.
struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn fill(&mut self, buf: &mut [u8]) {
        for b in buf {
            *b = self.next() as u8;
        }
    }
}

/// 4 096 distinct datagrams of `kind` (`POOL`).
pub fn flood_datagrams(
    kind: FloodKind,
    initiation_len: usize,
    server: &PublicKey,
    seed: u64,
) -> Vec<Vec<u8>> {
    let mut rng = Xorshift(seed | 1);
    let mut jar = CookieJar::new(server);
    (0..POOL)
        .map(|_| match kind {
            FloodKind::Initiation | FloodKind::Keyed => {
                let len = if kind == FloodKind::Keyed { INITIATION_LEN } else { initiation_len };
                let mut m = vec![0u8; len];
                rng.fill(&mut m[4..]);
                m[0] = 1;
                if kind == FloodKind::Keyed {
                    m[len - 2 * MAC_LEN..].fill(0);
                    jar.stamp(CoreInstant::ZERO, &mut m);
                }
                m
            }
            FloodKind::Junk => {
                let mut m = vec![0u8; 32 + (rng.next() % 169) as usize];
                rng.fill(&mut m);
                m
            }
        })
        .collect()
}

/// Sends `datagrams` round-robin to `target` at `rate` per second from `from` (inside the
/// caller's namespace) until `stop`; returns the datagrams sent and the seconds taken.
fn flood(
    from: Ipv4Addr,
    target: SocketAddr,
    datagrams: &[Vec<u8>],
    rate: u64,
    stop: &AtomicBool,
) -> std::io::Result<(u64, f64)> {
    let sock = UdpSocket::bind((from, 0))?;
    sock.connect(target)?;
    let start = Instant::now();
    let (mut tried, mut sent) = (0u64, 0u64);
    while !stop.load(Ordering::Relaxed) {
        let due = (start.elapsed().as_secs_f64() * rate as f64) as u64;
        while tried < due {
            // Refusals (ICMP port unreachable) and full buffers are the flood's loss: only
            // what left counts as sent.
            let datagram = &datagrams[(tried % datagrams.len() as u64) as usize];
            tried += 1;
            if sock.send(datagram).is_ok() {
                sent += 1;
            }
        }
        thread::sleep(Duration::from_millis(1));
    }
    Ok((sent, start.elapsed().as_secs_f64()))
}

/// Server counters that tell where a flood's datagrams went.
fn server_counters(pair: &TunnelPair) -> [u64; 3] {
    pair.server_status()
        .map(|s| [s.handshake_bad_mac1, s.cookie_replies, s.handshakes_rate_limited])
        .unwrap_or_default()
}

/// Restarts the client daemon; the seconds its new session took, if at most 30.
fn restart_client(pair: &mut TunnelPair, braid_exe: &Path) -> Result<Option<f64>, NetError> {
    Ok(pair.restart_client(braid_exe, Duration::from_secs(30))?.map(|d| d.as_secs_f64()))
}

/// Runs the benchmark with daemons from `braid_exe`; `on_line` gets each line as it is
/// measured. Each flooded download follows an unflooded one, so `retained` compares downloads a
/// few seconds apart (this VM's throughput drifts by more than a flood of junk costs).
pub fn flood_bench(
    braid_exe: &Path,
    cfg: &FloodConfig,
    mut on_line: impl FnMut(&FloodLine),
) -> Result<(), BenchError> {
    let bed = build_bed(cfg.path_rate_mbit)?;
    let spec = TunnelSpec::new(bed.proxy.name(), bed.ue.name(), bed.paths.clone());
    let mut pair = TunnelPair::start(&spec, braid_exe, Duration::from_secs(10))?;
    let server_public = pair.server_public_key();
    let target = SocketAddr::from((bed.paths[0].0.addr, BASE_PORT));
    let download = |limit: Duration| -> Result<TransferReport, crate::transfer::TransferError> {
        let to = SocketAddr::from((spec.client_addr, PORT));
        let (send, recv) = download_configs(to, cfg.bytes, cfg.cc, limit);
        run_pair(bed.proxy.name(), bed.ue.name(), &send, &recv, &AtomicBool::new(false))
    };
    let mbps = |r: &TransferReport| cfg.bytes as f64 * 8.0 / r.receiver.dlct_s / 1e6;
    let runs = cfg.kinds.iter().flat_map(|&k| {
        cfg.rates.iter().flat_map(move |&r| (1..=cfg.repeat.max(1)).map(move |i| (k, r, i)))
    });
    for (kind, rate, rep) in runs {
        let baseline = mbps(&download(Duration::from_secs(120))?);
        // A flooded download may take 5x the baseline before it counts as failed.
        let limit = Duration::from_secs_f64(cfg.bytes as f64 * 8.0 / (baseline * 1e6) * 5.0 + 10.0);
        let seed = rate ^ u64::from(rep) << 32;
        let datagrams = flood_datagrams(kind, cfg.initiation_len, &server_public, seed);
        let stop = AtomicBool::new(false);
        let counters_before = server_counters(&pair);
        let (flooded, cpu, handshake, sent) = thread::scope(|sc| {
            let flooder = sc.spawn(|| {
                run_in(bed.attacker.name(), || {
                    flood(bed.attacker_addr, target, &datagrams, rate, &stop)
                })
            });
            thread::sleep(Duration::from_millis(300));
            let cpu_before = process_cpu_seconds(pair.server.pid());
            let flooded = download(limit);
            let cpu = process_cpu_seconds(pair.server.pid()) - cpu_before;
            let handshake = cfg.handshake.then(|| restart_client(&mut pair, braid_exe));
            stop.store(true, Ordering::Relaxed);
            (flooded, cpu, handshake, flooder.join().expect("the flooder does not panic"))
        });
        let handshake = handshake.transpose()?.flatten();
        let (sent, secs) = sent?.map_err(|e| io_err(bed.attacker.name(), "flooding", e))?;
        // What the server still had queued when the flood stopped belongs to this line.
        thread::sleep(Duration::from_millis(1500));
        let after = server_counters(&pair);
        let (goodput, cpu_cores, error) = match &flooded {
            Ok(r) => (mbps(r), cpu / r.receiver.dlct_s, None),
            Err(e) => (0.0, 0.0, Some(e.to_string())),
        };
        on_line(&FloodLine {
            kind,
            rep,
            rate_pps: rate,
            pps_sent: sent as f64 / secs.max(1e-9),
            bytes: cfg.bytes,
            baseline_mbps: baseline,
            goodput_mbps: goodput,
            retained: goodput / baseline,
            server_cpu_cores: cpu_cores,
            handshake_s: handshake,
            bad_mac1: after[0].saturating_sub(counters_before[0]),
            cookie_replies: after[1].saturating_sub(counters_before[1]),
            rate_limited: after[2].saturating_sub(counters_before[2]),
            error,
        });
        if cfg.handshake && handshake.is_none() {
            // Give the next line a working tunnel, or fail here.
            if restart_client(&mut pair, braid_exe)?.is_none() {
                return Err(NetError::NotReady {
                    what: "the restarted client".into(),
                    marker: "established".into(),
                    timeout_ms: 30_000,
                    status: "no handshake after the flood stopped".into(),
                    output: pair.client.output_tail(),
                }
                .into());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use braid_net::crypto::cookie::CookieChecker;
    use braid_net::crypto::generate_keypair;

    #[test]
    fn each_kind_has_its_shape() {
        let (_, server) = generate_keypair().unwrap();
        let checker = CookieChecker::new(&server);
        for kind in FloodKind::ALL {
            let pool = flood_datagrams(kind, INITIATION_LEN, &server, 7);
            assert_eq!(pool.len(), POOL);
            let distinct: std::collections::HashSet<&Vec<u8>> = pool.iter().collect();
            assert!(distinct.len() > POOL * 99 / 100, "{kind:?}: variety");
            match kind {
                FloodKind::Initiation | FloodKind::Keyed => {
                    assert!(pool
                        .iter()
                        .all(|m| m.len() == INITIATION_LEN && m[..4] == [1, 0, 0, 0]));
                    let valid = pool.iter().filter(|m| checker.check_mac1(m)).count();
                    let expected = if kind == FloodKind::Keyed { POOL } else { 0 };
                    assert_eq!(valid, expected, "{kind:?}: mac1");
                }
                FloodKind::Junk => {
                    assert!(pool.iter().all(|m| (32..=200).contains(&m.len())));
                }
            }
        }
        assert_eq!(flood_datagrams(FloodKind::Initiation, 116, &server, 1)[0].len(), 116);
        assert_eq!("keyed".parse::<FloodKind>(), Ok(FloodKind::Keyed));
        assert!("syn".parse::<FloodKind>().unwrap_err().contains("initiation, keyed, junk"));
    }
}
