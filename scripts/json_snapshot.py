#!/usr/bin/env python3
"""Writes the JSON summary of `braid sim --json --baseline` for the default scenario and for every
cell of the nested-CC matrix (`nested_cc_matrix.py`: 11 tunnel rows x CPF/SRTT x 13 scenario
keys) into a folder, one file per run, so that a change meant to keep behaviour can be checked
bit for bit:

    python3 scripts/json_snapshot.py --out /tmp/before          # at the old commit's binary
    python3 scripts/json_snapshot.py --out /tmp/after           # at the new one
    diff -r /tmp/before /tmp/after && echo identical

BRAID names the binary (see braidsim.py). `--bytes` is the matrix script's default, 100 MB.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess

from braidsim import command
from nested_cc_matrix import SCENARIOS, TUNNELS


def cells(nbytes):
    """(file name, overrides) of every run: the default scenario, then the matrix."""
    yield "default", []
    rows = [(e2e, cc, rel, reorder) for e2e in ["cubic", "bbr"] for cc, rel, reorder in TUNNELS]
    rows.append(("bbr", "ccid5", "unreliable", "static"))
    for e2e, cc, rel, reorder in rows:
        for sched in ["cpf", "srtt"]:
            for key in SCENARIOS:
                sets = [f"e2e.cc={e2e}", f"tunnel.cc={cc}", f"tunnel.reliability={rel}",
                        f"tunnel.reorder={reorder}", f"tunnel.scheduler={sched}",
                        f"e2e.bytes={nbytes}"] + ([f"keys={key}"] if key else [])
                name = f"{e2e}-{cc}-{reorder}-{sched}-{key or 'default'}"
                yield name, sets
    # The noise model (host jitter, start offsets, controller phases) on a few cells and seeds:
    # its events interleave with the rest, so a change to the event queue shows here first.
    noise = ["sim.noise.host_jitter_us=20", "sim.noise.start_offset_ms=1000", "sim.noise.cc_phase=true"]
    for e2e, cc, sched, key in [("cubic", "bbr", "cpf", ""), ("bbr", "bbr", "srtt", "ASYM40"),
                                ("cubic", "newreno", "srtt", "SHORT+NEAR")]:
        for seed in [1, 2, 3]:
            sets = [f"e2e.cc={e2e}", f"tunnel.cc={cc}", f"tunnel.scheduler={sched}",
                    f"e2e.bytes={nbytes}", f"seed={seed}"] + noise + ([f"keys={key}"] if key else [])
            yield f"noise-{e2e}-{cc}-{sched}-{key or 'default'}-seed{seed}", sets


def run(out, name, sets):
    """Writes the run's summary without its wall-clock time (`wall_s`, the one field that differs
    from run to run) and without `events` (how many events the queue processed: a measure of the
    simulator's work, not of the simulated system), or its exit status and stderr when it fails."""
    proc = subprocess.run(command(sets, extra=["--json", "--baseline"]), capture_output=True, text=True)
    if proc.returncode == 0:
        summary = json.loads(proc.stdout)
        summary.pop("wall_s", None)
        summary.pop("events", None)
        text = json.dumps(summary, indent=1) + "\n"
    else:
        text = f"exit {proc.returncode}\n{proc.stderr}"
    with open(os.path.join(out, name + ".json"), "w") as f:
        f.write(text)
    return proc.returncode == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--bytes", type=int, default=100_000_000)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda c: run(args.out, *c), cells(args.bytes)))
    print(json.dumps({"runs": len(results), "failed": results.count(False)}))


if __name__ == "__main__":
    main()
