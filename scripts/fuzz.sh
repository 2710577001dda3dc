#!/usr/bin/env bash
# `make fuzz`: builds every libFuzzer target in fuzz/ with the nightly toolchain (installed when
# missing) and AddressSanitizer, and runs each for FUZZ_SECONDS (default 10) from the seeds in
# fuzz/corpus-seeds/. New inputs libFuzzer finds go to fuzz/corpus/ (not committed); a crash
# leaves its input in fuzz/artifacts/TARGET/ and fails the run, naming it: turn it into a
# regression test beside the code it broke, then add it to corpus-seeds/.
#
# cargo-fuzz is not needed: the flags below are the ones `cargo fuzz build` passes
# (instrumentation for libFuzzer's coverage, ASan, debug assertions and overflow checks).
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

seconds=${FUZZ_SECONDS:-10}
case "$seconds" in
  ''|*[!0-9]*) echo "FUZZ_SECONDS must be a whole number of seconds, got '$seconds'" >&2; exit 2 ;;
esac
target_triple=x86_64-unknown-linux-gnu

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  echo "fuzz: installing the nightly toolchain (minimal profile)" >&2
  rustup toolchain install nightly --profile minimal
fi

export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Zsanitizer=address \
-Cdebug-assertions -Coverflow-checks"
# The instrumented build has its own target directory: RUSTFLAGS differ from the workspace's.
export CARGO_TARGET_DIR=target
cargo +nightly build --release --locked --target "$target_triple" --bins

targets=$(sed -n 's/^name = "\([a-z_]*\)"$/\1/p' Cargo.toml | grep -v '^braid-fuzz$')
failed=0
for t in $targets; do
  corpus=corpus/$t
  seeds=corpus-seeds/$t
  mkdir -p "$corpus" "artifacts/$t"
  dirs=("$corpus")
  [ -d "$seeds" ] && dirs+=("$seeds")
  if "target/$target_triple/release/$t" -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="artifacts/$t/" "${dirs[@]}" > "artifacts/$t/log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "artifacts/$t/log")
    echo "fuzz: $t: ${runs:-?} inputs in ${seconds} s, no crash"
  else
    echo "fuzz: $t FAILED; its log ends:" >&2
    tail -n 30 "artifacts/$t/log" >&2
    ls "artifacts/$t" >&2
    failed=1
  fi
done
exit "$failed"
