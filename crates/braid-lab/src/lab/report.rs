//! The summary of a lab run, in the schema of `braid sim --json` ([`braid_sim::Report`]): the
//! same field names, types and units, so one script reads both. What the lab cannot measure is
//! left out of the JSON (an `Option` that stays `None`), never written as a made-up zero:
//!
//! | field | lab |
//! |---|---|
//! | `dlct_s`, `goodput_mbps` | receiver: `connect` start to last byte |
//! | `paths[].bytes`, `share` | baseline: all E2E bytes on path 1 (routing); tunnel: inner bytes the proxy sent on the path ([`super::tunnel_side`]) |
//! | `paths[].mean_mbps`, `drops`, `packets_sent` | the downlink queue's counters (htb: `tc -s`; linkem: its `--stats-json`, written when the run stops it; drops include CoDel's and random loss, as the simulator's) |
//! | `paths[].srtt_ms_mean`, `srtt_ms_max` | tunnel: the proxy's path srtt, sampled; out in baseline |
//! | `paths[].packets_lost_detected` | tunnel: the proxy's loss detection; out in baseline |
//! | `paths[].owd` | tunnel: the UE daemon's receiver, its one-way-delay samples of the path summarised (as the simulator's UE receiver); out in baseline |
//! | `paths[].queue_delay_*` | out (no per-packet queue timing) |
//! | `drops.bottleneck`, `uplink`, `server_link` | queue counters (htb, linkem) |
//! | `drops.bottleneck_aqm` | htb: zeros (no AQM exists there); linkem: CoDel's drops |
//! | `drops.scheduler`, `drops.reorder` | tunnel: both daemons' scheduler drops and reorder duplicates; out in baseline |
//! | `reorder.released_on_timeout`, `duplicates`, `wait_limit_ms_mean` | tunnel: the UE daemon's; its other fields out |
//! | `protocol_delay_ms`, `hol_ms`, `tunnel` | out (the daemon does not time packets or count copies) |
//! | `e2e.retransmissions`, `rto_count`, `srtt_ms_mean` | sender `TCP_INFO`: `tcpi_total_retrans`, `tcpi_total_rto`, mean sampled `tcpi_rtt` |
//! | `events`, `simulated_packets` | out (simulator only) |
//! | `wall_s` | the whole run: build, transfer, teardown |
//!
//! A `lab` object adds what only the lab has: mode, emulator, what was not emulated, the
//! effective congestion control, the goodput series and (linkem) each link's send lateness.

use braid_core::reorder::OwdSummary;
use braid_sim::metrics::MeanMax;
use serde::Serialize;

/// Per-path summary ([`braid_sim::metrics::PathReport`] with unmeasured fields left out).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LabPathReport {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_mbps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub srtt_ms_mean: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub srtt_ms_max: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drops: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_delay_ms_mean: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_delay_ms_max: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packets_sent: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packets_lost_detected: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owd: Option<OwdSummary>,
}

/// Drops per queue ([`braid_sim::metrics::Drops`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LabDrops {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<Vec<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bottleneck_aqm: Option<Vec<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uplink: Option<Vec<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_link: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reorder: Option<u64>,
}

/// The downlink reorder buffer ([`braid_sim::metrics::ReorderReport`]), what the daemon counts.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LabReorderReport {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub released_on_timeout: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicates: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_limit_ms_mean: Option<f64>,
}

/// End-to-end TCP ([`braid_sim::metrics::E2eReport`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LabE2eReport {
    pub kind: String,
    pub cc: String,
    pub bytes_delivered: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retransmissions: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rto_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub srtt_ms_mean: Option<f64>,
    /// A UDP flow's datagrams, and those that never arrived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub datagrams_sent: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub datagrams_lost: Option<u64>,
}

/// What only a lab run has.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LabInfo {
    /// `baseline` (path 1, no tunnel) or `tunnel`.
    pub mode: String,
    /// `htb` or `linkem`.
    pub emulator: String,
    /// Parts of the scenario the emulator did not reproduce.
    pub not_emulated: Vec<String>,
    /// `TCP_CONGESTION` as read back from the sender's socket.
    pub cc_effective: String,
    /// Goodput per `sim.bin_ms` bin from `connect`, Mbit/s.
    pub goodput_series_mbps: Vec<f64>,
    /// linkem only: how late each link direction sent its frames (the lab's own timing noise;
    /// docs/validation.md, "Repetitions: the noise model"). Empty with htb.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub send_lateness: Vec<LinkLateness>,
}

/// One link direction's send lateness in the lab.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkLateness {
    /// `server_link` or the path's name.
    pub link: String,
    /// `down` (towards the UE) or `up`.
    pub direction: String,
    #[serde(flatten)]
    pub lateness: crate::topology::SendLateness,
}

/// The summary of one lab run: `braid lab --json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LabReport {
    pub dlct_s: f64,
    pub goodput_mbps: f64,
    pub paths: Vec<LabPathReport>,
    pub drops: LabDrops,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_delay_ms: Option<MeanMax>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hol_ms: Option<MeanMax>,
    pub e2e: LabE2eReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reorder: Option<LabReorderReport>,
    pub wall_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_dlct_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relative_dlct: Option<f64>,
    /// The path cut asked for with `--cut`, and what it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<super::cut::CutReport>,
    pub lab: LabInfo,
}

impl LabReport {
    /// Adds the baseline's DLCT and the relative DLCT (this run's DLCT over the baseline's).
    pub fn set_baseline(&mut self, baseline_dlct_s: f64) {
        self.baseline_dlct_s = Some(baseline_dlct_s);
        self.relative_dlct = (baseline_dlct_s > 0.0).then(|| self.dlct_s / baseline_dlct_s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmeasured_fields_are_left_out_and_measured_ones_keep_sim_names() {
        let r = LabReport {
            dlct_s: 8.5,
            goodput_mbps: 47.0,
            paths: vec![LabPathReport {
                name: "wifi".into(),
                bytes: Some(5),
                ..Default::default()
            }],
            ..Default::default()
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["dlct_s"], 8.5);
        assert_eq!(v["paths"][0]["bytes"], 5);
        assert!(v["paths"][0].get("srtt_ms_mean").is_none());
        assert!(v.get("hol_ms").is_none());
        assert!(v.get("events").is_none());
        assert!(v["drops"].get("scheduler").is_none());
        assert!(v.get("reorder").is_none());
    }

    #[test]
    fn relative_dlct_is_the_ratio_to_the_baseline() {
        let mut r = LabReport { dlct_s: 6.0, ..Default::default() };
        r.set_baseline(12.0);
        // Two equal paths aggregated perfectly halve the DLCT: 50% (Pieska et al. 2024, section 5).
        assert_eq!(r.relative_dlct, Some(0.5));
        r.set_baseline(0.0);
        assert_eq!(r.relative_dlct, None);
    }
}
