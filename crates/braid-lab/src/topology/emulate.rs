//! How one link of the topology is emulated inside its emulator namespace `em<k>`: the one place
//! that chooses between the kernel fallback (bridge + tc htb) and the user-space emulator
//! (`braid linkem`).
//!
//! Each link is `upstream ==veth== em<k> ==veth== downstream`. Inside `em<k>` interface
//! [`EM_IF_UP`] faces the upstream end (server, or proxy) and [`EM_IF_DOWN`] the downstream end
//! (proxy, or UE). In linkem's terms A is [`EM_IF_UP`] and B is [`EM_IF_DOWN`], so its `-ab`
//! direction (read on A, sent on B) is the downlink and `-ba` the uplink.
//!
//! - [`Emulator::Htb`]: a Linux bridge joins the two interfaces; each direction's rate and FIFO
//!   are an htb class with a `pfifo` leaf on the interface the direction leaves by (downlink on
//!   [`EM_IF_DOWN`], uplink on [`EM_IF_UP`]). htb counts whole Ethernet frames (1514 bytes for a
//!   1500-byte packet), as the simulator's `framing_bytes` does. No delay, loss or AQM: this
//!   kernel has no netem and no CoDel qdisc (docs/design.md section 7); [`Emulator::missing`] says
//!   what a scenario loses.
//! - [`Emulator::Linkem`]: `braid linkem` forwards between the two interfaces with every knob of
//!   the scenario except Gilbert-Elliott loss and capacity traces, which its command line lacks.

use std::path::{Path, PathBuf};
use std::time::Duration;

use braid_sim::scenario::{AqmChoice, LinkConfig, LossChoice, PathConfig};
use serde::Deserialize;

use crate::netns::{Child, NetError, Netns};

/// Interface in `em<k>` facing the upstream end (server or proxy): linkem's A.
pub const EM_IF_UP: &str = "to-up";
/// Interface in `em<k>` facing the downstream end (proxy or UE): linkem's B.
pub const EM_IF_DOWN: &str = "to-down";
/// Bridge joining the two interfaces in the htb fallback.
const BRIDGE: &str = "br0";
/// Line `braid linkem` prints once it forwards.
pub const LINKEM_READY: &str = "linkem: ready";
/// htb class quantum: one full frame. With a single class the quantum never decides anything;
/// setting it silences tc's "quantum is big" warning at high rates.
const HTB_QUANTUM_BYTES: &str = "1514";

/// What emulates the links.
#[derive(Clone, Debug, PartialEq)]
pub enum Emulator {
    /// Bridge + htb rate + pfifo buffer; no delay, loss or AQM.
    Htb,
    /// `braid linkem`, started from this executable (normally `std::env::current_exe()`).
    Linkem { braid_exe: PathBuf, ready_timeout: Duration },
}

/// One direction of an emulated link.
#[derive(Clone, Debug, PartialEq)]
pub struct DirectionShape {
    pub rate_mbps: f64,
    pub one_way_delay_ms: f64,
    pub buffer_pkts: u32,
    pub loss: LossChoice,
    pub aqm: AqmChoice,
    pub codel_target_ms: f64,
    pub codel_interval_ms: f64,
    /// A capacity trace replaces the rate in the scenario (not emulated here).
    pub has_trace: bool,
}

/// Both directions of one link, named as the scenario names it.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkShape {
    /// `server_link` or the path's name.
    pub name: String,
    /// Server to proxy (server link) or proxy to UE (path).
    pub down: DirectionShape,
    pub up: DirectionShape,
}

impl LinkShape {
    /// The server link: the same rate and buffer both ways, half the RTT each way, no loss.
    pub fn server_link(link: &LinkConfig) -> LinkShape {
        let dir = DirectionShape {
            rate_mbps: link.rate_mbps,
            one_way_delay_ms: link.rtt_ms / 2.0,
            buffer_pkts: link.buffer_pkts,
            loss: LossChoice::None,
            aqm: AqmChoice::DropTail,
            codel_target_ms: 0.0,
            codel_interval_ms: 0.0,
            has_trace: false,
        };
        LinkShape { name: "server_link".into(), down: dir.clone(), up: dir }
    }

    /// A path: the downlink from its `rate_mbps`, `buffer_pkts`, `loss`, `aqm`, `trace`; the
    /// uplink from the `uplink_*` fields; half the RTT each way; CoDel parameters shared.
    pub fn path(p: &PathConfig) -> LinkShape {
        let down = DirectionShape {
            rate_mbps: p.rate_mbps,
            one_way_delay_ms: p.rtt_ms / 2.0,
            buffer_pkts: p.buffer_pkts,
            loss: p.loss,
            aqm: p.aqm,
            codel_target_ms: p.codel_target_ms,
            codel_interval_ms: p.codel_interval_ms,
            has_trace: p.trace.is_some(),
        };
        let up = DirectionShape {
            rate_mbps: p.uplink_rate_mbps,
            buffer_pkts: p.uplink_buffer_pkts,
            loss: p.uplink_loss,
            aqm: p.uplink_aqm,
            has_trace: p.uplink_trace.is_some(),
            ..down.clone()
        };
        LinkShape { name: p.name.clone(), down, up }
    }
}

/// Packet counters of one direction's queue: what left it, and what it dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QueueCounters {
    /// Frame bytes sent (Ethernet header included).
    pub bytes: u64,
    pub packets: u64,
    /// Every drop: tail drops, AQM drops and random loss (the simulator's `paths[].drops`).
    pub drops: u64,
    /// The AQM's share of `drops` (htb has no AQM: zero).
    pub aqm_drops: u64,
    /// How late the emulator put frames on the wire (linkem only; htb's kernel does not say).
    pub lateness: Option<SendLateness>,
}

/// How late an emulator sent frames after their due time, us: its own timing noise (a late
/// wake-up sends the frames due meanwhile back to back).
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, serde::Serialize)]
pub struct SendLateness {
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// Counters of both directions of one link.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkCounters {
    pub down: QueueCounters,
    pub up: QueueCounters,
}

impl Emulator {
    /// Sets up link `shape` between [`EM_IF_UP`] and [`EM_IF_DOWN`] in `em` (both already up).
    /// Returns the emulator process, if this backend has one; linkem writes its counters to
    /// `stats_json` when it stops ([`read_linkem_counters`]).
    pub fn start(
        &self,
        em: &Netns,
        shape: &LinkShape,
        stats_json: &Path,
    ) -> Result<Option<Child>, NetError> {
        match self {
            Emulator::Htb => {
                bridge(em)?;
                htb(em, EM_IF_DOWN, &shape.down)?;
                htb(em, EM_IF_UP, &shape.up)?;
                Ok(None)
            }
            Emulator::Linkem { braid_exe, ready_timeout } => {
                let mut args = linkem_args(shape);
                args.extend(["--stats-json".into(), stats_json.to_string_lossy().into_owned()]);
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let exe = braid_exe.to_string_lossy();
                let mut child = em.spawn(&exe, &args)?;
                child.wait_for_line(LINKEM_READY, *ready_timeout)?;
                Ok(Some(child))
            }
        }
    }

    /// What of `shape` this backend does not reproduce, one phrase each (empty when exact).
    pub fn missing(&self, shape: &LinkShape) -> Vec<String> {
        let mut out = Vec::new();
        for (dir, d) in [("downlink", &shape.down), ("uplink", &shape.up)] {
            let at = format!("{} {dir}", shape.name);
            if d.has_trace {
                out.push(format!("{at}: capacity trace (the constant rate is used)"));
            }
            match self {
                Emulator::Htb => {
                    if d.one_way_delay_ms > 0.0 {
                        out.push(format!("{at}: one-way delay {} ms", d.one_way_delay_ms));
                    }
                    if d.loss != LossChoice::None {
                        out.push(format!("{at}: random loss {:?}", d.loss));
                    }
                    if d.aqm != AqmChoice::DropTail {
                        out.push(format!("{at}: aqm {}", d.aqm));
                    }
                }
                Emulator::Linkem { .. } => {
                    if matches!(d.loss, LossChoice::GilbertElliott { .. }) {
                        out.push(format!("{at}: Gilbert-Elliott loss"));
                    }
                }
            }
        }
        out
    }

    /// Counters of the link's two queues: htb's from `tc -s` while it runs; linkem's from the
    /// `stats_json` it wrote when it stopped (`None` while it still runs).
    pub fn counters(
        &self,
        em: &Netns,
        stats_json: &Path,
    ) -> Result<Option<LinkCounters>, NetError> {
        match self {
            Emulator::Htb => Ok(Some(LinkCounters {
                down: root_qdisc_counters(em, EM_IF_DOWN)?,
                up: root_qdisc_counters(em, EM_IF_UP)?,
            })),
            Emulator::Linkem { .. } => read_linkem_counters(stats_json),
        }
    }
}

fn bridge(em: &Netns) -> Result<(), NetError> {
    em.ip(&["link", "add", "name", BRIDGE, "type", "bridge", "forward_delay", "0"])?;
    for port in [EM_IF_UP, EM_IF_DOWN] {
        em.ip(&["link", "set", "dev", port, "master", BRIDGE])?;
    }
    em.ip(&["link", "set", "dev", BRIDGE, "up"]).map(drop)
}

/// A rate in bits per second as tc reads it (`50000000bit`).
fn tc_rate(rate_mbps: f64) -> String {
    format!("{}bit", (rate_mbps * 1e6).round() as u64)
}

fn htb(em: &Netns, dev: &str, d: &DirectionShape) -> Result<(), NetError> {
    shape_htb(em, dev, d.rate_mbps, d.buffer_pkts)
}

/// Shapes what leaves `dev` in `ns` to `rate_mbps` with a `buffer_pkts` drop-tail FIFO: one htb
/// class of one frame's quantum and a `pfifo` leaf (the htb fallback emulator's queue, also the
/// shaped paths of `braid bench flood` and the several-clients bed).
pub fn shape_htb(ns: &Netns, dev: &str, rate_mbps: f64, buffer_pkts: u32) -> Result<(), NetError> {
    let rate = tc_rate(rate_mbps);
    let limit = buffer_pkts.to_string();
    ns.tc(&["qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", "1"])?;
    ns.tc(&[
        "class",
        "add",
        "dev",
        dev,
        "parent",
        "1:",
        "classid",
        "1:1",
        "htb",
        "rate",
        &rate,
        "ceil",
        &rate,
        "quantum",
        HTB_QUANTUM_BYTES,
    ])?;
    ns.tc(&["qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", "pfifo", "limit", &limit])
        .map(drop)
}

/// linkem's command line for `shape`: every option in its `-ab` (downlink) and `-ba` (uplink)
/// form, so no direction depends on linkem's defaults. CoDel's target and interval are the
/// exception: linkem takes one pair for both directions (`--codel-target`, `--codel-interval`),
/// as a scenario gives one pair per path; they come from the first direction running CoDel.
pub fn linkem_args(shape: &LinkShape) -> Vec<String> {
    let mut args: Vec<String> =
        vec!["linkem".into(), "--a".into(), EM_IF_UP.into(), "--b".into(), EM_IF_DOWN.into()];
    for (suffix, d) in [("ab", &shape.down), ("ba", &shape.up)] {
        let mut opt = |name: &str, value: String| {
            args.push(format!("--{name}-{suffix}"));
            args.push(value);
        };
        opt("rate", format!("{}mbit", d.rate_mbps));
        opt("delay", format!("{}ms", d.one_way_delay_ms));
        opt("buffer-pkts", d.buffer_pkts.to_string());
        if let LossChoice::Bernoulli { p } = d.loss {
            opt("loss", p.to_string());
        }
        opt("aqm", d.aqm.as_str().to_string());
    }
    if let Some(d) = [&shape.down, &shape.up].into_iter().find(|d| d.aqm == AqmChoice::CoDel) {
        args.extend(["--codel-target".into(), format!("{}ms", d.codel_target_ms)]);
        args.extend(["--codel-interval".into(), format!("{}ms", d.codel_interval_ms)]);
    }
    args
}

#[derive(Deserialize)]
struct TcQdiscStats {
    #[serde(default)]
    root: bool,
    #[serde(default)]
    bytes: u64,
    #[serde(default)]
    packets: u64,
    #[serde(default)]
    drops: u64,
}

/// Sent bytes, packets and drops of the root qdisc of `dev`. htb's root counts what it sent,
/// and every drop of its leaf (`htb_enqueue` accounts a failed child enqueue on the root).
fn root_qdisc_counters(em: &Netns, dev: &str) -> Result<QueueCounters, NetError> {
    let out = em.tc(&["-s", "-j", "qdisc", "show", "dev", dev])?;
    parse_root_counters(&out).map_err(|message| NetError::Parse {
        cmd: format!("tc -n {} -s -j qdisc show dev {dev}", em.name()),
        message,
    })
}

fn parse_root_counters(json: &str) -> Result<QueueCounters, String> {
    let qdiscs: Vec<TcQdiscStats> = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let root = qdiscs.iter().find(|q| q.root).ok_or("no root qdisc")?;
    Ok(QueueCounters {
        bytes: root.bytes,
        packets: root.packets,
        drops: root.drops,
        aqm_drops: 0,
        lateness: None,
    })
}

/// The fields of one direction of `braid linkem --stats-json` ([`crate::linkem::DirectionStats`])
/// that the lab's report reads.
#[derive(Deserialize)]
struct LinkemDirection {
    sent_frames: u64,
    sent_bytes: u64,
    drops_buffer: u64,
    drops_loss: u64,
    drops_codel: u64,
    drops_oversize: u64,
    lateness: SendLateness,
}

#[derive(Deserialize)]
struct LinkemFile {
    ab: LinkemDirection,
    ba: LinkemDirection,
}

impl From<&LinkemDirection> for QueueCounters {
    fn from(d: &LinkemDirection) -> Self {
        QueueCounters {
            bytes: d.sent_bytes,
            packets: d.sent_frames,
            drops: d.drops_buffer + d.drops_loss + d.drops_codel + d.drops_oversize,
            aqm_drops: d.drops_codel,
            lateness: Some(d.lateness),
        }
    }
}

/// A stopped linkem's counters from its `--stats-json` file: `ab` is the downlink (A faces
/// upstream), `ba` the uplink. `None` when the file is not there (linkem still runs, or died
/// before writing it).
pub fn read_linkem_counters(path: &Path) -> Result<Option<LinkCounters>, NetError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(NetError::File {
                what: "reading linkem's counters",
                path: path.display().to_string(),
                message: e.to_string(),
            })
        }
    };
    parse_linkem_counters(&text).map(Some).map_err(|message| NetError::File {
        what: "parsing linkem's counters",
        path: path.display().to_string(),
        message,
    })
}

fn parse_linkem_counters(json: &str) -> Result<LinkCounters, String> {
    let f: LinkemFile = serde_json::from_str(json).map_err(|e| e.to_string())?;
    Ok(LinkCounters { down: (&f.ab).into(), up: (&f.ba).into() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wifi() -> PathConfig {
        PathConfig::default()
    }

    #[test]
    fn path_shape_halves_the_rtt_and_takes_uplink_fields() {
        let mut p = wifi();
        p.uplink_rate_mbps = 10.0;
        p.uplink_buffer_pkts = 100;
        p.aqm = AqmChoice::CoDel;
        let s = LinkShape::path(&p);
        // Table 1's path 1: RTT 20 ms, so 10 ms each way.
        assert_eq!(s.down.one_way_delay_ms, 10.0);
        assert_eq!(s.up.one_way_delay_ms, 10.0);
        assert_eq!((s.down.rate_mbps, s.down.buffer_pkts), (50.0, 500));
        assert_eq!((s.up.rate_mbps, s.up.buffer_pkts), (10.0, 100));
        assert_eq!((s.down.aqm, s.up.aqm), (AqmChoice::CoDel, AqmChoice::DropTail));
    }

    #[test]
    fn linkem_counters_read_what_linkem_writes_ab_as_the_downlink() {
        use crate::linkem::stats::LatenessSummary;
        use crate::linkem::{DirectionStats, LinkemStats};
        let stats = LinkemStats {
            ab: DirectionStats {
                sent_frames: 10,
                sent_bytes: 15_140,
                drops_buffer: 3,
                drops_loss: 2,
                drops_codel: 4,
                drops_oversize: 1,
                lateness: LatenessSummary {
                    frames: 10,
                    mean_us: 12.5,
                    p50_us: 10.0,
                    p99_us: 250.0,
                    max_us: 600.0,
                },
                ..Default::default()
            },
            ba: DirectionStats { sent_frames: 5, sent_bytes: 330, ..Default::default() },
        };
        let c = parse_linkem_counters(&serde_json::to_string_pretty(&stats).unwrap()).unwrap();
        let late = SendLateness { mean_us: 12.5, p50_us: 10.0, p99_us: 250.0, max_us: 600.0 };
        assert_eq!(
            c.down,
            QueueCounters {
                bytes: 15_140,
                packets: 10,
                drops: 10,
                aqm_drops: 4,
                lateness: Some(late)
            }
        );
        assert_eq!(c.up.lateness, Some(SendLateness::default()));
        assert_eq!((c.up.bytes, c.up.packets, c.up.drops, c.up.aqm_drops), (330, 5, 0, 0));
        assert!(parse_linkem_counters("{\"ab\": {}}").is_err());
        let missing = std::env::temp_dir().join("braid-lab-no-such-linkem-stats.json");
        assert_eq!(read_linkem_counters(&missing).unwrap(), None);
    }

    #[test]
    fn linkem_args_put_the_downlink_on_ab() {
        let mut p = wifi();
        p.uplink_rate_mbps = 10.0;
        p.loss = LossChoice::Bernoulli { p: 0.01 };
        p.aqm = AqmChoice::CoDel;
        let args = linkem_args(&LinkShape::path(&p)).join(" ");
        assert!(args.starts_with("linkem --a to-up --b to-down "), "{args}");
        for expected in [
            "--rate-ab 50mbit",
            "--delay-ab 10ms",
            "--buffer-pkts-ab 500",
            "--loss-ab 0.01",
            "--aqm-ab codel",
            "--codel-target 5ms",
            "--codel-interval 100ms",
            "--rate-ba 10mbit",
            "--delay-ba 10ms",
            "--aqm-ba droptail",
        ] {
            assert!(args.contains(expected), "{expected} missing from {args}");
        }
        assert!(!args.contains("--loss-ba"), "{args}");
        assert!(!args.contains("--codel-target-"), "linkem has no per-direction form: {args}");
        // Without CoDel on either side, neither CoDel option.
        let plain = linkem_args(&LinkShape::path(&wifi())).join(" ");
        assert!(!plain.contains("--codel"), "{plain}");
    }

    #[test]
    fn htb_misses_delay_loss_and_aqm_and_linkem_only_gilbert_elliott() {
        let mut p = wifi();
        p.loss = LossChoice::GilbertElliott { p: 0.01, r: 0.3, h: 0.0, k: 1.0 };
        p.aqm = AqmChoice::CoDel;
        let s = LinkShape::path(&p);
        let htb = Emulator::Htb.missing(&s);
        // downlink: delay, loss, aqm; uplink: delay only.
        assert_eq!(htb.len(), 4, "{htb:?}");
        let linkem =
            Emulator::Linkem { braid_exe: "braid".into(), ready_timeout: Duration::from_secs(1) };
        assert_eq!(linkem.missing(&s), vec!["wifi downlink: Gilbert-Elliott loss".to_string()]);
    }

    #[test]
    fn tc_rate_is_whole_bits_per_second() {
        assert_eq!(tc_rate(50.0), "50000000bit");
        assert_eq!(tc_rate(12.5), "12500000bit");
    }

    #[test]
    fn root_counters_come_from_the_root_qdisc() {
        let json = r#"[{"kind":"htb","handle":"1:","root":true,"bytes":3028,"packets":2,"drops":1},
                       {"kind":"pfifo","handle":"10:","parent":"1:1","bytes":9,"packets":9,"drops":9}]"#;
        assert_eq!(
            parse_root_counters(json).unwrap(),
            QueueCounters { bytes: 3028, packets: 2, drops: 1, aqm_drops: 0, lateness: None }
        );
        assert!(parse_root_counters("[]").is_err());
    }
}
