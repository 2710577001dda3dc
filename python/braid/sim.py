"""`braid.simulate`: one scenario in-process, with the GIL released while Rust simulates."""

import json
import os
from dataclasses import dataclass, field

from . import _native
from ._overrides import overrides


@dataclass
class SimResult:
    """One simulated run.

    - `summary`: the report, field for field what `braid sim --json` prints (`dlct_s`,
      `goodput_mbps`, `paths`, `e2e`, `tunnel`, ...; with `baseline=True` also
      `baseline_dlct_s` and `relative_dlct`).
    - `series`: the periodic trace, one row per sampling interval (`sim.sample_interval_ms`)
      and path: `t_s`, `path`, `path_index`, the path sender's `cwnd_bytes`,
      `in_flight_bytes`, `srtt_ms`, `pacing_rate_mbps`, `queue_pkts` (its bottleneck queue),
      `phase`, `drops`, and that sample's tunnel-wide and end-to-end values (`e2e_cwnd_bytes`,
      `e2e_in_flight_bytes`, `e2e_srtt_ms`, `e2e_pacing_mbps`, `e2e_retransmissions`,
      `sched_queue_pkts`, `reorder_pkts`, `wait_limit_ms`, `acpf_fraction`, `hol_ms_mean`,
      `hol_ms_max`, `tunnel_retransmissions`, `released_on_timeout`,
      `released_on_fast_loss`).
    - `throughput`: one row per bin (`sim.bin_ms`) and path: `t_s`, `path`, `path_index`,
      `mbps` (tunnel frames the path delivered downlink) and `goodput_mbps` (the
      application's, the same on each path's row).
    - `scenario`: the resolved scenario as TOML (what `braid sim --out` writes).
    """

    summary: dict
    series: "object" = field(repr=False)
    throughput: "object" = field(repr=False)
    scenario: str = field(repr=False)


def simulate(scenario, set=None, seed=None, baseline=False):
    """Simulates `scenario` (a TOML file's path) with the overrides `set` (a dict of dotted
    keys, `{"tunnel.scheduler": "srtt", "paths.1.rtt_ms": 60}`, or `key=value` strings, as
    `braid sim --set`) and `seed`; with `baseline`, also the single-path baseline, as
    `braid sim --baseline`. Returns a `SimResult`.

    Bad input raises `braid.BraidError` (a ValueError) with the message `braid sim` prints.
    """
    import pandas as pd

    report, trace, throughput, resolved = _native.simulate(
        os.fspath(scenario), overrides(set, seed), bool(baseline)
    )
    return SimResult(
        summary=json.loads(report),
        series=pd.DataFrame(trace),
        throughput=pd.DataFrame(throughput),
        scenario=resolved,
    )
