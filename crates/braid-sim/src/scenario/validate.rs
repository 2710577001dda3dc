//! `Scenario::validate`: every field against its allowed range, first offence reported with its
//! dotted name. Ranges are generous sanity bounds, not claims about the paper; NaN fails every
//! float check because each is written as a positive containment test.

use std::collections::BTreeMap;

use braid_config::range::{float, int, F64Range, QUEUE_PKTS, WAIT_MS};
use braid_config::FieldError;

use crate::tcp::TCP_IP_HEADER_BYTES;

use super::{
    E2eConfig, E2eKind, LinkConfig, LossChoice, NoiseConfig, PathConfig, Scenario, ScenarioError,
    SimConfig, Wire,
};

/// Propagation RTTs, ms.
const RTT_MS: F64Range = F64Range::closed(0.0, 10_000.0);
/// Link rates, Mbit/s.
const RATE_MBPS: F64Range = F64Range::open_closed(0.0, 100_000.0);
/// CoDel's INTERVAL, ms: a round trip, from a LAN's to a satellite's.
const CODEL_INTERVAL_MS: F64Range = F64Range::open_closed(0.0, 10_000.0);
/// A probability.
const PROBABILITY: F64Range = F64Range::closed(0.0, 1.0);
/// A probability that cannot be 1 (a path that loses everything never completes a download).
const LOSS_PROBABILITY: F64Range = F64Range::closed_open(0.0, 1.0);
/// A probability that cannot be 0 (the chain must leave Bad, Good must deliver).
const LEAVING_PROBABILITY: F64Range = F64Range::open_closed(0.0, 1.0);
const MAX_PATHS: usize = 8;
/// TOML integers are signed 64-bit, so larger seeds could not be written back out.
const MAX_SEED: u64 = i64::MAX as u64;

pub(super) fn scenario(s: &Scenario) -> Result<(), ScenarioError> {
    int("seed", s.seed, 0..=MAX_SEED)?;
    link("server_link", &s.server_link)?;
    if !(1..=MAX_PATHS).contains(&s.paths.len()) {
        return Err(ScenarioError::invalid(
            "paths",
            format!("{} entries", s.paths.len()),
            format!("must have 1..={MAX_PATHS} entries"),
        ));
    }
    let mut names: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, p) in s.paths.iter().enumerate() {
        path(&format!("paths.{i}"), p)?;
        if let Some(first) = names.insert(&p.name, i) {
            return Err(ScenarioError::invalid(
                format!("paths.{i}.name"),
                format!("{:?}", p.name),
                format!("must be unique (paths.{first}.name is the same)"),
            ));
        }
    }
    s.tunnel.validate()?;
    e2e(&s.e2e)?;
    through_the_tunnel(s)?;
    daemon_wire(s)?;
    Ok(sim(&s.sim)?)
}

/// With `sim.wire = "daemon"` the daemon's messages set each packet's overhead, so a
/// `tunnel.header_bytes` other than the default would reach no code: refused, not ignored.
fn daemon_wire(s: &Scenario) -> Result<(), FieldError> {
    let default = braid_config::TunnelConfig::default().header_bytes;
    if s.sim.wire == Wire::Daemon && s.tunnel.header_bytes != default {
        return Err(FieldError::invalid(
            "tunnel.header_bytes",
            s.tunnel.header_bytes,
            format!(
                "is not read with sim.wire = \"daemon\", whose messages set each packet's \
                 overhead (48 bytes compact, 92 full): leave it at {default} or remove it"
            ),
        ));
    }
    Ok(())
}

/// The smallest end-to-end MSS (IPv4's 576-byte minimum datagram less 40 bytes of headers,
/// RFC 879).
const MIN_MSS_BYTES: u32 = 536;

/// What must fit the tunnel's interface MTU: a greedy UDP flow's datagrams (the tunnel does
/// not fragment), and room for a TCP segment (the MSS it leaves, MTU less 52, at least 536).
fn through_the_tunnel(s: &Scenario) -> Result<(), FieldError> {
    let Some(mtu) = s.tunnel.mtu_bytes else { return Ok(()) };
    match s.e2e.kind {
        E2eKind::Udp if f64::from(s.e2e.udp_packet_bytes) > mtu => Err(FieldError::invalid(
            "e2e.udp_packet_bytes",
            s.e2e.udp_packet_bytes,
            format!("must be at most tunnel.mtu_bytes ({mtu}): the tunnel does not fragment"),
        )),
        E2eKind::Tcp if mtu < f64::from(MIN_MSS_BYTES + TCP_IP_HEADER_BYTES) => {
            Err(FieldError::invalid(
                "tunnel.mtu_bytes",
                mtu,
                format!(
                    "must be at least {} with TCP end to end (an MSS of {MIN_MSS_BYTES} plus \
                     {TCP_IP_HEADER_BYTES} bytes of headers)",
                    MIN_MSS_BYTES + TCP_IP_HEADER_BYTES
                ),
            ))
        }
        _ => Ok(()),
    }
}

fn link(prefix: &str, l: &LinkConfig) -> Result<(), FieldError> {
    float(&format!("{prefix}.rtt_ms"), l.rtt_ms, RTT_MS)?;
    float(&format!("{prefix}.rate_mbps"), l.rate_mbps, RATE_MBPS)?;
    int(&format!("{prefix}.buffer_pkts"), l.buffer_pkts, QUEUE_PKTS)
}

fn path(prefix: &str, p: &PathConfig) -> Result<(), FieldError> {
    if p.name.trim().is_empty() {
        return Err(FieldError::invalid(
            format!("{prefix}.name"),
            format!("{:?}", p.name),
            "must not be empty",
        ));
    }
    float(&format!("{prefix}.rtt_ms"), p.rtt_ms, RTT_MS)?;
    float(&format!("{prefix}.rate_mbps"), p.rate_mbps, RATE_MBPS)?;
    int(&format!("{prefix}.buffer_pkts"), p.buffer_pkts, QUEUE_PKTS)?;
    float(&format!("{prefix}.uplink_rate_mbps"), p.uplink_rate_mbps, RATE_MBPS)?;
    int(&format!("{prefix}.uplink_buffer_pkts"), p.uplink_buffer_pkts, QUEUE_PKTS)?;
    loss(&format!("{prefix}.loss"), &p.loss)?;
    loss(&format!("{prefix}.uplink_loss"), &p.uplink_loss)?;
    codel(prefix, p)
}

/// Each loss parameter; Bernoulli `p < 1`, Gilbert-Elliott `r > 0` and `k > 0`, so that a
/// path cannot lose every packet for ever.
fn loss(prefix: &str, l: &LossChoice) -> Result<(), FieldError> {
    match *l {
        LossChoice::None => Ok(()),
        LossChoice::Bernoulli { p } => float(&format!("{prefix}.p"), p, LOSS_PROBABILITY),
        LossChoice::GilbertElliott { p, r, h, k } => {
            float(&format!("{prefix}.p"), p, PROBABILITY)?;
            float(&format!("{prefix}.r"), r, LEAVING_PROBABILITY)?;
            float(&format!("{prefix}.h"), h, PROBABILITY)?;
            float(&format!("{prefix}.k"), k, LEAVING_PROBABILITY)
        }
    }
}

/// CoDel's INTERVAL, then TARGET within it (RFC 8289 section 4.4 puts TARGET at 5-10% of it).
fn codel(prefix: &str, p: &PathConfig) -> Result<(), FieldError> {
    let interval = p.codel_interval_ms;
    float(&format!("{prefix}.codel_interval_ms"), interval, CODEL_INTERVAL_MS)?;
    if !(p.codel_target_ms > 0.0 && p.codel_target_ms <= interval) {
        return Err(FieldError::invalid(
            format!("{prefix}.codel_target_ms"),
            p.codel_target_ms,
            format!("must be in (0, {interval}] (at most {prefix}.codel_interval_ms)"),
        ));
    }
    Ok(())
}

fn e2e(e: &E2eConfig) -> Result<(), FieldError> {
    int("e2e.bytes", e.bytes, 1..=1_000_000_000_000)?;
    int("e2e.mss_bytes", e.mss_bytes, u64::from(MIN_MSS_BYTES)..=9000)?;
    int("e2e.initial_window_pkts", e.initial_window_pkts, 1..=1000)?;
    // Up to 4 GiB: beyond Linux's largest scaled window (1 GiB), and within TOML's i64.
    int("e2e.rwnd_bytes", e.rwnd_bytes, u64::from(e.mss_bytes)..=1 << 32)?;
    float("e2e.min_rto_ms", e.min_rto_ms, F64Range::closed(1.0, 60_000.0))?;
    int("e2e.delack_segments", e.delack_segments, 1..=64)?;
    float("e2e.delack_timeout_ms", e.delack_timeout_ms, WAIT_MS)?;
    if let Some(rate) = e.udp_rate_mbps {
        float("e2e.udp_rate_mbps", rate, RATE_MBPS)?;
    }
    int("e2e.udp_packet_bytes", e.udp_packet_bytes, 64..=9000)?;
    braid_config::validate_bbr2("e2e.bbr2", &e.bbr2)
}

fn sim(s: &SimConfig) -> Result<(), FieldError> {
    float("sim.max_time_s", s.max_time_s, F64Range::open_closed(0.0, 1e6))?;
    float("sim.sample_interval_ms", s.sample_interval_ms, F64Range::closed(1.0, 60_000.0))?;
    float("sim.bin_ms", s.bin_ms, F64Range::closed(1.0, 60_000.0))?;
    int("sim.framing_bytes", s.framing_bytes, 0..=100)?;
    noise(&s.noise)
}

/// The noise model's fields: host delays up to 100 ms (far beyond any host's, but a study may
/// exaggerate), a cut no lower than the mean, a start within a minute; host stalls up to 10 000
/// a second and 1 s long, their shape read only while they are on.
fn noise(n: &NoiseConfig) -> Result<(), FieldError> {
    float("sim.noise.host_jitter_us", n.host_jitter_us, F64Range::closed(0.0, 100_000.0))?;
    cut_above_mean(
        ("sim.noise.host_jitter_max_us", n.host_jitter_max_us),
        ("sim.noise.host_jitter_us", n.host_jitter_us),
        100_000.0,
    )?;
    let stalls = n.host_stall_rate_per_s;
    float("sim.noise.host_stall_rate_per_s", stalls, F64Range::closed(0.0, 10_000.0))?;
    if stalls > 0.0 {
        let mean = n.host_stall_mean_us;
        float("sim.noise.host_stall_mean_us", mean, F64Range::closed(1.0, 1_000_000.0))?;
        cut_above_mean(
            ("sim.noise.host_stall_max_us", n.host_stall_max_us),
            ("sim.noise.host_stall_mean_us", mean),
            1_000_000.0,
        )?;
    }
    float("sim.noise.start_offset_ms", n.start_offset_ms, F64Range::closed(0.0, 60_000.0))
}

/// A cut law's maximum `max` (field `max_field`) lies between its mean (field `mean_field`)
/// and `upper`.
fn cut_above_mean(
    (max_field, max): (&str, f64),
    (mean_field, mean): (&str, f64),
    upper: f64,
) -> Result<(), FieldError> {
    if F64Range::closed(mean, upper).contains(max) {
        return Ok(());
    }
    Err(FieldError::invalid(
        max_field,
        max,
        format!("must be in [{mean}, {upper}] (at least {mean_field})"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err_of(edit: impl FnOnce(&mut Scenario)) -> String {
        let mut s = Scenario::default();
        edit(&mut s);
        s.validate().unwrap_err().to_string()
    }

    #[test]
    fn defaults_are_valid() {
        Scenario::default().validate().unwrap();
    }

    #[test]
    fn the_daemon_wire_refuses_a_header_size_it_would_not_read() {
        let daemon = |s: &mut Scenario| s.sim.wire = Wire::Daemon;
        let mut s = Scenario::default();
        daemon(&mut s);
        s.validate().unwrap();
        let err = err_of(|s| {
            daemon(s);
            s.tunnel.header_bytes = 48;
        });
        assert!(err.starts_with("tunnel.header_bytes = 48: is not read with sim.wire"), "{err}");
        assert!(err.contains("leave it at 60"), "{err}");
        // The plain wire reads it.
        let mut s = Scenario::default();
        s.tunnel.header_bytes = 48;
        s.validate().unwrap();
    }

    #[test]
    fn zero_rate_names_the_field_and_range() {
        assert_eq!(
            err_of(|s| s.paths[1].rate_mbps = 0.0),
            "paths.1.rate_mbps = 0: must be in (0, 100000]"
        );
    }

    #[test]
    fn nan_is_rejected_everywhere() {
        assert_eq!(
            err_of(|s| s.server_link.rtt_ms = f64::NAN),
            "server_link.rtt_ms = NaN: must be in [0, 10000]"
        );
        assert!(err_of(|s| s.paths[0].loss = LossChoice::Bernoulli { p: f64::NAN })
            .starts_with("paths.0.loss.p = NaN"));
        assert!(err_of(|s| s.paths[0].codel_target_ms = f64::NAN)
            .starts_with("paths.0.codel_target_ms = NaN"));
        assert!(err_of(|s| s.tunnel.reorder_weight = f64::NAN)
            .starts_with("tunnel.reorder_weight = NaN"));
        assert!(
            err_of(|s| s.e2e.udp_rate_mbps = Some(f64::NAN)).starts_with("e2e.udp_rate_mbps = NaN")
        );
        assert!(err_of(|s| s.sim.bin_ms = f64::INFINITY).starts_with("sim.bin_ms = inf"));
    }

    #[test]
    fn path_count_and_names() {
        assert_eq!(
            err_of(|s| s.paths = vec![PathConfig::default(); 9]),
            "paths = 9 entries: must have 1..=8 entries"
        );
        assert!(err_of(|s| s.paths.clear()).starts_with("paths = 0 entries"));
        assert_eq!(
            err_of(|s| s.paths[1].name = "wifi".into()),
            "paths.1.name = \"wifi\": must be unique (paths.0.name is the same)"
        );
    }

    #[test]
    fn ranges_at_their_edges() {
        assert!(err_of(|s| s.paths[0].loss = LossChoice::Bernoulli { p: 1.0 })
            .starts_with("paths.0.loss.p = 1: must be in [0, 1)"));
        assert!(err_of(|s| s.tunnel.reorder_weight = 0.0).contains("must be in (0, 1]"));
        assert!(err_of(|s| s.e2e.mss_bytes = 535)
            .contains("e2e.mss_bytes = 535: must be in 536..=9000"));
        assert!(err_of(|s| s.e2e.rwnd_bytes = 1000)
            .contains("e2e.rwnd_bytes = 1000: must be in 1448..="));
        assert!(err_of(|s| s.tunnel.feedback_every_pkts = 0).contains("1..=64"));
        assert!(err_of(|s| s.sim.framing_bytes = 101).contains("sim.framing_bytes"));
        assert!(err_of(|s| s.seed = u64::MAX).starts_with("seed = 18446744073709551615"));
        let mut s = Scenario::default();
        s.paths[0].loss = LossChoice::Bernoulli { p: 0.999 };
        s.paths[1].uplink_loss = LossChoice::GilbertElliott { p: 1.0, r: 1.0, h: 1.0, k: 1.0 };
        s.paths[1].codel_target_ms = 100.0;
        s.paths[1].rtt_ms = 0.0;
        s.tunnel.reorder_weight = 1.0;
        s.e2e.udp_rate_mbps = Some(100_000.0);
        s.validate().unwrap();
    }

    #[test]
    fn noise_fields_name_their_dotted_key_and_range() {
        assert_eq!(
            err_of(|s| s.sim.noise.host_jitter_us = -1.0),
            "sim.noise.host_jitter_us = -1: must be in [0, 100000]"
        );
        assert_eq!(
            err_of(|s| s.sim.noise.host_jitter_us = f64::NAN),
            "sim.noise.host_jitter_us = NaN: must be in [0, 100000]"
        );
        assert_eq!(
            err_of(|s| {
                s.sim.noise.host_jitter_us = 50.0;
                s.sim.noise.host_jitter_max_us = 20.0;
            }),
            "sim.noise.host_jitter_max_us = 20: must be in [50, 100000] \
             (at least sim.noise.host_jitter_us)"
        );
        assert_eq!(
            err_of(|s| s.sim.noise.start_offset_ms = 60_001.0),
            "sim.noise.start_offset_ms = 60001: must be in [0, 60000]"
        );
        assert_eq!(
            err_of(|s| s.sim.noise.host_stall_rate_per_s = -5.0),
            "sim.noise.host_stall_rate_per_s = -5: must be in [0, 10000]"
        );
        assert_eq!(
            err_of(|s| {
                s.sim.noise.host_stall_rate_per_s = 10.0;
                s.sim.noise.host_stall_mean_us = 0.0;
            }),
            "sim.noise.host_stall_mean_us = 0: must be in [1, 1000000]"
        );
        assert_eq!(
            err_of(|s| {
                s.sim.noise.host_stall_rate_per_s = 10.0;
                s.sim.noise.host_stall_max_us = 500.0;
            }),
            "sim.noise.host_stall_max_us = 500: must be in [1000, 1000000] \
             (at least sim.noise.host_stall_mean_us)"
        );
        // Without stalls their shape is not read.
        let mut s = Scenario::default();
        s.sim.noise.host_stall_mean_us = 0.0;
        s.validate().unwrap();
        let mut s = Scenario::default();
        s.sim.noise = NoiseConfig::host();
        s.validate().unwrap();
    }

    #[test]
    fn link_model_fields_name_their_dotted_key_and_range() {
        let ge = |p, r, h, k| LossChoice::GilbertElliott { p, r, h, k };
        assert_eq!(
            err_of(|s| s.paths[1].loss = ge(0.1, 0.0, 0.0, 1.0)),
            "paths.1.loss.r = 0: must be in (0, 1]"
        );
        assert_eq!(
            err_of(|s| s.paths[0].uplink_loss = ge(1.5, 0.5, 0.0, 1.0)),
            "paths.0.uplink_loss.p = 1.5: must be in [0, 1]"
        );
        assert_eq!(
            err_of(|s| s.paths[0].loss = ge(0.1, 0.5, -1.0, 1.0)),
            "paths.0.loss.h = -1: must be in [0, 1]"
        );
        assert_eq!(
            err_of(|s| s.paths[0].loss = ge(0.1, 0.5, 0.0, 0.0)),
            "paths.0.loss.k = 0: must be in (0, 1]"
        );
        assert_eq!(
            err_of(|s| s.paths[1].codel_interval_ms = 0.0),
            "paths.1.codel_interval_ms = 0: must be in (0, 10000]"
        );
        assert_eq!(
            err_of(|s| s.paths[0].codel_target_ms = 150.0),
            "paths.0.codel_target_ms = 150: must be in (0, 100] (at most paths.0.codel_interval_ms)"
        );
        assert!(err_of(|s| s.paths[0].codel_target_ms = 0.0)
            .starts_with("paths.0.codel_target_ms = 0: must be in (0, 100]"));
    }
}
