"""Braid from Python: the simulator and the sweep engine in-process, results in pandas.

    import braid
    r = braid.simulate("scenarios/default.toml", set={"tunnel.scheduler": "srtt"}, seed=1)
    r.summary["dlct_s"]           # the fields of `braid sim --json`
    r.series                      # one row per sample and path (cwnd, srtt, queues, ...)
    df = braid.sweep("sweeps/example.toml", out="out/example")   # runs.parquet as a DataFrame
    df = braid.sweep(spec, out=..., client=dask_client)          # the same rows, on a cluster
    braid.plot.bars_relative_dlct(df)

Light on purpose: importing `braid` loads nothing heavy; pandas, matplotlib and the native
module load when first used. The figures live in `braid.plot` (the module `braid reproduce`
draws with, `braid.figures`).
"""

import importlib

__all__ = ["simulate", "SimResult", "sweep", "load", "plot", "figures", "style", "BraidError"]

_LAZY = {
    "simulate": ("braid.sim", "simulate"),
    "SimResult": ("braid.sim", "SimResult"),
    "sweep": ("braid.sweeps", "sweep"),
    "load": ("braid.sweeps", "load"),
    "BraidError": ("braid._native", "BraidError"),
}


def __getattr__(name):
    if name in _LAZY:
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
    elif name in ("plot", "figures", "style"):
        value = importlib.import_module(f"braid.{name}")
    else:
        raise AttributeError(f"module 'braid' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
