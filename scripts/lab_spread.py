#!/usr/bin/env python3
"""Run-to-run spread of the lab against the simulator's noise model, cell by cell
(docs/validation.md, "Repetitions: the lab's spread and the simulator's").

For each cell, runs `braid lab --mode tunnel --emulator linkem --baseline` N times (real
namespaces, kernel TCP end to end, two `braid tunnel` daemons over `braid linkem` links) and
`braid sim --baseline` with the noise model of sweeps (`[sim.noise]` as `noise = true` sets it)
for seeds 1..N, and prints each side's relative DLCTs with mean, standard deviation, min and max.
Needs root and a quiet machine (the lab is real time on 2 cores):

    cargo build --release -p braid && sudo python3 scripts/lab_spread.py [--runs 5] [--bytes 100000000]
"""
import argparse
import statistics

from braidsim import lab, report

# The cells: the default scenario (Cubic over BBR tunnels, CPF), and the two cells that tip
# between modes in the simulator (docs/validation.md, "Repetitions: the noise model").
CELLS = [
    ("Cubic / BBR, CPF, default", ["e2e.cc=cubic", "tunnel.cc=bbr", "tunnel.scheduler=cpf"]),
    ("BBR / BBR, SRTT, ASYM40", ["e2e.cc=bbr", "tunnel.cc=bbr", "tunnel.scheduler=srtt",
                                "keys=ASYM40"]),
    ("Cubic / reliable NewReno, SRTT, SHORT+NEAR",
     ["e2e.cc=cubic", "tunnel.cc=newreno", "tunnel.reliability=reliable",
      "tunnel.scheduler=srtt", "keys=SHORT+NEAR"]),
]

# The sweeps' noise model (crates/braid-sim/src/noise.rs, NoiseConfig::host).
NOISE = ["sim.noise.host_jitter_us=20", "sim.noise.start_offset_ms=1000", "sim.noise.cc_phase=true"]


def summary(values):
    pct = [v * 100 for v in values]
    sd = statistics.stdev(pct) if len(pct) > 1 else 0.0
    return (f"{statistics.mean(pct):.1f}% | {sd:.1f} | {min(pct):.1f}% | {max(pct):.1f}% | "
            + " ".join(f"{v:.1f}" for v in pct))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--bytes", type=int, default=100_000_000)
    args = ap.parse_args()
    print("| cell | side | mean | sd (points) | min | max | values (%) |")
    print("|---|---|---|---|---|---|---|")
    for name, sets in CELLS:
        sets = sets + [f"e2e.bytes={args.bytes}"]
        sim = [report(sets + NOISE + [f"seed={s}"], baseline=True)["relative_dlct"]
               for s in range(1, args.runs + 1)]
        print(f"| {name} | simulator, noise, seeds 1-{args.runs} | {summary(sim)} |", flush=True)
        real = [lab(sets)["relative_dlct"] for _ in range(args.runs)]
        print(f"| {name} | lab, {args.runs} runs | {summary(real)} |", flush=True)


if __name__ == "__main__":
    main()
