#!/usr/bin/env bash
# Reruns the simulator sweeps behind docs/validation.md's simulator tables and renders each
# table, so that a model change regenerates them with one command instead of a dozen:
#
#   scripts/regenerate_sim_tables.sh [--out DIR] [--jobs N] [--only NAME,NAME] [--braid PATH]
#
# Each table's sweep goes to DIR/NAME (default out/NAME; a finished folder resumes, so a
# second run only renders) and its rendering to DIR/tables/NAME.md, ready to replace the table
# in the section the doc names beside the same commands. The lab's folders are read from
# data/lab/. Not included: `braid reproduce nested-cc` (Table 3; its own command, about half an
# hour) and sections whose lab data is not kept in the repository.
#
# NAME: near-dist, reliability, mptcp-cc-streaming, nested-cc-matrix,
# nested-cc-matrix-exclusion, nested-cc-matrix-handshake, sched-codel, equalize-bonding,
# tcp-one-path, lab-matrix-sim, bonding-fig10-sim, asym200-quiet-paths.
set -euo pipefail
cd "$(dirname "$0")/.."

out=out
jobs=2
only=""
braid=target/release/braid
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --only) only=",$2,"; shift 2 ;;
    --braid) braid=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
if ! [[ "$jobs" =~ ^[1-9][0-9]*$ ]]; then
  echo "--jobs: a whole number of at least 1, not '$jobs'" >&2; exit 2
fi
[ -x "$braid" ] || { echo "no braid at $braid: cargo build --release -p braid" >&2; exit 2; }
export BRAID="$braid"
mkdir -p "$out/tables"

# name | sweep spec | extra sweep arguments | renderer (DIR stands for the sweep folder)
tables=(
  "near-dist|sweeps/near-dist.toml||python3 scripts/near_dist.py DIR"
  "reliability|sweeps/reliability.toml||python3 scripts/reliability.py DIR"
  "mptcp-cc-streaming|sweeps/mptcp-cc-streaming.toml||python3 scripts/mptcp_cc_streaming.py DIR"
  "nested-cc-matrix|sweeps/nested-cc-matrix.toml||python3 scripts/nested_cc_matrix.py DIR"
  "nested-cc-matrix-exclusion|sweeps/nested-cc-matrix-exclusion.toml||python3 scripts/nested_cc_matrix.py DIR"
  "nested-cc-matrix-handshake|sweeps/nested-cc-matrix-handshake.toml||python3 scripts/nested_cc_matrix.py DIR"
  "sched-codel|sweeps/sched-codel.toml||python3 scripts/sched_codel.py DIR"
  "equalize-bonding|sweeps/equalize-bonding.toml||python3 scripts/noise_reps.py --by-cell DIR"
  "tcp-one-path|sweeps/tcp-tunnel-one-path.toml||python3 scripts/tcp_tunnel_one_path.py DIR"
  "lab-matrix-sim|sweeps/lab-matrix.toml|--reps 10 --baseline true --set sim.path_handshake=true --set sim.wire=daemon|python3 scripts/sim_vs_lab_sweeps.py DIR data/lab/lab-matrix-lab-startfix --lab-baselines data/lab/lab-matrix-baselines --by row --spread"
  "bonding-fig10-sim|sweeps/bonding-fig10-lab.toml|--reps 10 --baseline true|python3 scripts/bonding_fig10.py data/lab/bonding-fig10-lab-timesync10 data/lab/lab-matrix-baselines --sim DIR"
  "asym200-quiet-paths|sweeps/asym200-quiet-paths.toml||python3 scripts/noise_reps.py --by-cell DIR"
)

known=","
for t in "${tables[@]}"; do known+="${t%%|*},"; done
for name in ${only//,/ }; do
  case "$known" in *",$name,"*) ;; *) echo "--only: no table '$name' (tables: ${known:1:-1})" >&2; exit 2 ;; esac
done

for t in "${tables[@]}"; do
  IFS='|' read -r name spec extra render <<< "$t"
  if [ -n "$only" ] && [[ "$only" != *",$name,"* ]]; then continue; fi
  dir="$out/$name"
  echo "== $name: $spec -> $dir" >&2
  start=$(date +%s)
  # shellcheck disable=SC2086 # extra holds several arguments
  "$braid" sweep "$spec" --out "$dir" --jobs "$jobs" $extra
  # shellcheck disable=SC2086
  ${render//DIR/$dir} > "$out/tables/$name.md"
  echo "== $name: $(( $(date +%s) - start )) s, table in $out/tables/$name.md" >&2
done
