"""`braid.sweep` and `braid.load`: sweeps of the sweep engine (`braid sweep`, docs/sweeps.md)
into a folder, read back as a pandas DataFrame. Locally the engine's own thread pool runs
them; given a `dask.distributed` Client, chunks of runs go to the cluster's workers and the
driver writes each chunk into the folder's journal as it returns. Either way the table is
built from the journal alone, so it is the same, row for row, and an interrupted sweep
resumes from what the journal has.
"""

import json
import math
import os
import sys
import time

from . import _native


def load(out):
    """The table of a sweep folder (`runs.parquet`) as a DataFrame; its `sweep.json`, where
    present, in `df.attrs["sweep"]`."""
    import pandas as pd

    out = os.fspath(out)
    table = os.path.join(out, "runs.parquet") if os.path.isdir(out) else out
    if not os.path.isfile(table):
        raise FileNotFoundError(f"no sweep table at {table}")
    df = pd.read_parquet(table)
    summary = os.path.join(os.path.dirname(table), "sweep.json")
    if os.path.isfile(summary):
        with open(summary) as f:
            df.attrs["sweep"] = json.load(f)
    return df


def sweep(spec, out, client=None, jobs=None, shard=None, chunk_size=None, progress=False):
    """Runs the sweep spec file `spec` into the folder `out` and returns its runs as a
    DataFrame (see `load`).

    - Without `client`: in this process on `jobs` threads (default: every core), or only
      shard `shard` ("I/N") of it, as `braid sweep --jobs --shard`.
    - With a `dask.distributed.Client`: chunks of `chunk_size` consecutive runs (default:
      about four chunks per worker) run on the cluster's workers, one at a time per task.
      The workers read the spec and its scenario files at the same absolute paths as this
      process (a shared file system, as on a Slurm or PBS cluster), and refuse to run if the
      spec they read is not the driver's.

    Bad input raises `braid.BraidError` with the message `braid sweep` prints.
    """
    spec = os.path.abspath(os.fspath(spec))
    out = os.path.abspath(os.fspath(out))
    if client is None:
        if jobs is None:
            jobs = os.cpu_count() or 1
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise ValueError(f"jobs: expected an integer >= 1, found {jobs!r}")
        _native.sweep_local(spec, out, jobs, shard, bool(progress))
        return load(out)
    if shard is not None or jobs is not None:
        raise ValueError("shard and jobs apply to a local sweep; with a client, the cluster's workers run it")
    _on_cluster(client, spec, out, chunk_size, progress)
    return load(out)


def _run_chunk(spec, ids, spec_hash):
    """A worker's task: runs `ids` of `spec`; returns (runs, baselines, scenarios)."""
    from braid import _native as native

    return native.sweep_execute(spec, list(ids), spec_hash)


def _on_cluster(client, spec, out, chunk_size, progress):
    from distributed import as_completed

    start = time.perf_counter()
    pending, skipped, spec_hash = _native.sweep_prepare(spec, out)
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    if chunk_size is None:
        chunk_size = max(1, math.ceil(len(pending) / (4 * workers)))
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size: expected an integer >= 1, found {chunk_size!r}")
    chunks = [pending[i : i + chunk_size] for i in range(0, len(pending), chunk_size)]
    futures = [client.submit(_run_chunk, spec, c, spec_hash, pure=False) for c in chunks]
    ran = baselines = scenarios = 0
    for future in as_completed(futures):
        runs, b, s = future.result()
        _native.sweep_record(spec, out, runs)
        ran += len(runs)
        baselines += b
        scenarios += s
        if progress:
            print(f"braid sweep: {ran}/{len(pending)} runs on {workers} workers", file=sys.stderr, flush=True)
    wall_s = time.perf_counter() - start
    _native.sweep_complete(spec, out, ran, skipped, baselines, scenarios, workers, wall_s)
