"""The figures of `braid reproduce` as functions of DataFrames: the very module the command
draws with (`braid.figures`), under the name a script reaches for.

Each function takes a DataFrame and returns a matplotlib Figure (colour-blind-safe palette,
readable defaults from `braid.style`; pass `rc={...}` or restyle the Figure):

    import braid
    df = braid.sweep("sweeps/example.toml", out="out/example")
    braid.plot.bars_relative_dlct(df).savefig("bars.png")
    r = braid.simulate("scenarios/default.toml")
    braid.plot.throughput_over_time(r.throughput).savefig("throughput.png")
    braid.plot.window_traces(r.series, r.throughput).savefig("windows.png")

The time-series functions take `SimResult.series` / `.throughput` (one row per time and
path) as well as the wide `trace.csv` / `throughput.csv` of `braid sim --out`.
"""

from .figures import (  # noqa: F401  (re-exported)
    bars_relative_dlct,
    bars_relative_dlct_by_scenario,
    contour,
    contour_coordinates,
    goodput_bars,
    load_series,
    load_sweep,
    load_traces,
    subflow_windows,
    throughput_over_time,
    utilisation_bars,
    wide_throughput,
    wide_trace,
    window_traces,
    with_combination,
    with_scenario,
)

__all__ = [
    "bars_relative_dlct",
    "bars_relative_dlct_by_scenario",
    "throughput_over_time",
    "contour",
    "contour_coordinates",
    "goodput_bars",
    "window_traces",
    "subflow_windows",
    "utilisation_bars",
    "with_combination",
    "with_scenario",
    "wide_throughput",
    "wide_trace",
    "load_sweep",
    "load_series",
    "load_traces",
]
