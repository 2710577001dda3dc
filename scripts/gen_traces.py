#!/usr/bin/env python3
"""Generate the Mahimahi capacity traces shipped in traces/ (stdlib only, seeded).

Mahimahi trace format (mm-link): one line per delivery opportunity, an integer millisecond
timestamp, non-decreasing; each opportunity carries one 1500-byte MTU (12 kbit), so one line
per millisecond is 12 Mbit/s. The trace repeats with a period equal to its last timestamp.

The process is a Markov-modulated rate:
- time is cut into slots of SLOT_MS; in each slot the link runs at one rate level (Mbit/s);
- at each slot boundary the level moves one step up or down, each with probability
  MOVE_PROB / 2, and otherwise stays; a move past either end stays put. This is a symmetric
  birth-death chain with reflecting ends, so every level is equally likely in the long run and
  the mean rate is the mean of the levels;
- within a slot at R Mbit/s the link is owed R / 12 opportunities per millisecond; the
  fractional part carries over, and each millisecond gets one line per whole opportunity owed;
- the last line is the trace's duration, so the period is exactly DURATION_MS.

Traces:
- wifi-var.mahi: levels 5/15/25/35/45 Mbit/s (long-run mean 25; this 10 s sample averages
  23.0), 40 ms slots: a WiFi link whose rate follows contention and rate adaptation quickly.
- lte-var.mahi: levels 2/6/12/18/24 Mbit/s (long-run mean 12.4; this 20 s sample averages
  13.4), 200 ms slots: a cellular link whose scheduler share changes more slowly.

Regenerate (the output is byte-for-byte reproducible):

    python3 scripts/gen_traces.py [--out traces]
"""
import argparse
import os
import random

OPPORTUNITY_KBIT = 12  # 1500 bytes

TRACES = {
    "wifi-var.mahi": {
        "seed": 1,
        "levels_mbps": [5, 15, 25, 35, 45],
        "slot_ms": 40,
        "move_prob": 0.5,
        "duration_ms": 10_000,
    },
    "lte-var.mahi": {
        "seed": 2,
        "levels_mbps": [2, 6, 12, 18, 24],
        "slot_ms": 200,
        "move_prob": 0.5,
        "duration_ms": 20_000,
    },
}


def level_path(rng, n_levels, n_slots, move_prob):
    """Level index of each slot: a reflecting birth-death chain started in the middle."""
    level = n_levels // 2
    path = []
    for _ in range(n_slots):
        path.append(level)
        u = rng.random()
        if u < move_prob / 2:
            level = max(level - 1, 0)
        elif u < move_prob:
            level = min(level + 1, n_levels - 1)
    return path


def opportunities(seed, levels_mbps, slot_ms, move_prob, duration_ms):
    """Millisecond timestamps of the delivery opportunities, one per line of the trace."""
    rng = random.Random(seed)
    n_slots = -(-duration_ms // slot_ms)
    levels = level_path(rng, len(levels_mbps), n_slots, move_prob)
    owed = 0.0
    stamps = []
    for ms in range(1, duration_ms + 1):
        rate_mbps = levels_mbps[levels[(ms - 1) // slot_ms]]
        owed += rate_mbps / OPPORTUNITY_KBIT  # Mbit/s = kbit/ms
        whole = int(owed)
        owed -= whole
        stamps.extend([ms] * whole)
    if not stamps or stamps[-1] != duration_ms:
        stamps.append(duration_ms)
    return stamps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="traces", help="output directory (default: traces)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, params in TRACES.items():
        stamps = opportunities(**params)
        path = os.path.join(args.out, name)
        with open(path, "w", encoding="ascii", newline="\n") as f:
            f.write("".join(f"{ms}\n" for ms in stamps))
        mean_mbps = len(stamps) * OPPORTUNITY_KBIT / stamps[-1]
        print(f"{path}: {len(stamps)} opportunities over {stamps[-1]} ms, "
              f"mean {mean_mbps:.2f} Mbit/s, {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
