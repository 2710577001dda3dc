//! A run's time series as tidy columns (one list per column, equal lengths), ready for
//! `pandas.DataFrame(columns)`: the periodic trace with one row per sample and path, and the
//! throughput with one row per bin and path.

use braid_sim::metrics::Series;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The trace: per sample and path, the path's sender state (`cwnd_bytes`, `in_flight_bytes`,
/// `srtt_ms`, `pacing_rate_mbps`, `queue_pkts`, `phase`, `drops`) beside the tunnel-wide and
/// end-to-end values of that sample (repeated on each path's row), as `trace.csv` of
/// `braid sim --out` has them in wide form. Missing values (no ACPF fraction, no packet
/// delivered since the previous sample) are NaN, as pandas has them.
pub fn trace_columns<'py>(py: Python<'py>, s: &Series) -> PyResult<Bound<'py, PyDict>> {
    let np = s.path_names.len();
    let rows = s.trace.len() * np;
    let mut t_s = Vec::with_capacity(rows);
    let mut path = Vec::with_capacity(rows);
    let mut path_index = Vec::with_capacity(rows);
    let mut cwnd = Vec::with_capacity(rows);
    let mut in_flight = Vec::with_capacity(rows);
    let mut srtt = Vec::with_capacity(rows);
    let mut pacing = Vec::with_capacity(rows);
    let mut queue = Vec::with_capacity(rows);
    let mut phase = Vec::with_capacity(rows);
    let mut drops = Vec::with_capacity(rows);
    let mut e2e_cwnd = Vec::with_capacity(rows);
    let mut e2e_in_flight = Vec::with_capacity(rows);
    let mut e2e_srtt = Vec::with_capacity(rows);
    let mut e2e_pacing = Vec::with_capacity(rows);
    let mut e2e_retx = Vec::with_capacity(rows);
    let mut sched_queue = Vec::with_capacity(rows);
    let mut reorder = Vec::with_capacity(rows);
    let mut wait_limit = Vec::with_capacity(rows);
    let mut acpf = Vec::with_capacity(rows);
    let mut hol_mean = Vec::with_capacity(rows);
    let mut hol_max = Vec::with_capacity(rows);
    let mut retx = Vec::with_capacity(rows);
    let mut on_timeout = Vec::with_capacity(rows);
    let mut on_fast_loss = Vec::with_capacity(rows);
    for (k, r) in s.trace.iter().enumerate() {
        let samples = s.path_trace.get(k * np..(k + 1) * np).unwrap_or(&[]);
        for (i, (name, p)) in s.path_names.iter().zip(samples).enumerate() {
            t_s.push(r.t_s);
            path.push(name.as_str());
            path_index.push(i);
            cwnd.push(p.cwnd_bytes);
            in_flight.push(p.in_flight_bytes);
            srtt.push(p.srtt_ms);
            pacing.push(p.pacing_rate_mbps);
            queue.push(p.bottleneck_queue_pkts);
            phase.push(p.phase);
            drops.push(p.drops);
            e2e_cwnd.push(r.e2e_cwnd_bytes);
            e2e_in_flight.push(r.e2e_in_flight_bytes);
            e2e_srtt.push(r.e2e_srtt_ms);
            e2e_pacing.push(r.e2e_pacing_mbps);
            e2e_retx.push(r.e2e_retransmissions);
            sched_queue.push(r.sched_queue_pkts);
            reorder.push(r.reorder_pkts);
            wait_limit.push(r.wait_limit_ms);
            acpf.push(r.acpf_fraction.unwrap_or(f64::NAN));
            hol_mean.push(r.hol_ms.map_or(f64::NAN, |h| h.mean));
            hol_max.push(r.hol_ms.map_or(f64::NAN, |h| h.max));
            retx.push(r.tunnel_retransmissions);
            on_timeout.push(r.released_on_timeout);
            on_fast_loss.push(r.released_on_fast_loss);
        }
    }
    let d = PyDict::new(py);
    d.set_item("t_s", t_s)?;
    d.set_item("path", path)?;
    d.set_item("path_index", path_index)?;
    d.set_item("cwnd_bytes", cwnd)?;
    d.set_item("in_flight_bytes", in_flight)?;
    d.set_item("srtt_ms", srtt)?;
    d.set_item("pacing_rate_mbps", pacing)?;
    d.set_item("queue_pkts", queue)?;
    d.set_item("phase", phase)?;
    d.set_item("drops", drops)?;
    d.set_item("e2e_cwnd_bytes", e2e_cwnd)?;
    d.set_item("e2e_in_flight_bytes", e2e_in_flight)?;
    d.set_item("e2e_srtt_ms", e2e_srtt)?;
    d.set_item("e2e_pacing_mbps", e2e_pacing)?;
    d.set_item("e2e_retransmissions", e2e_retx)?;
    d.set_item("sched_queue_pkts", sched_queue)?;
    d.set_item("reorder_pkts", reorder)?;
    d.set_item("wait_limit_ms", wait_limit)?;
    d.set_item("acpf_fraction", acpf)?;
    d.set_item("hol_ms_mean", hol_mean)?;
    d.set_item("hol_ms_max", hol_max)?;
    d.set_item("tunnel_retransmissions", retx)?;
    d.set_item("released_on_timeout", on_timeout)?;
    d.set_item("released_on_fast_loss", on_fast_loss)?;
    Ok(d)
}

/// The throughput: per bin (`bin_s` wide, starting at `t_s`) and path, the tunnel frame bytes
/// the path delivered downlink in Mbit/s (`mbps`), beside the application goodput of that bin
/// (`goodput_mbps`, repeated on each path's row), as `throughput.csv` has them in wide form.
pub fn throughput_columns<'py>(py: Python<'py>, s: &Series) -> PyResult<Bound<'py, PyDict>> {
    let bins = s.path_bins.iter().map(Vec::len).chain([s.goodput_bins.len()]).max().unwrap_or(0);
    let to_mbps = |b: u64| b as f64 * 8.0 / s.bin_s / 1e6;
    let (mut t_s, mut path, mut path_index, mut mbps, mut goodput) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for k in 0..bins {
        let good = to_mbps(s.goodput_bins.get(k).copied().unwrap_or(0));
        for (i, (name, per_bin)) in s.path_names.iter().zip(&s.path_bins).enumerate() {
            t_s.push(k as f64 * s.bin_s);
            path.push(name.as_str());
            path_index.push(i);
            mbps.push(to_mbps(per_bin.get(k).copied().unwrap_or(0)));
            goodput.push(good);
        }
    }
    let d = PyDict::new(py);
    d.set_item("t_s", t_s)?;
    d.set_item("path", path)?;
    d.set_item("path_index", path_index)?;
    d.set_item("mbps", mbps)?;
    d.set_item("goodput_mbps", goodput)?;
    Ok(d)
}
