# Braid: two entry points on a fresh machine (see README.md).
CARGO ?= cargo

.PHONY: demo test bench build

# Build in release mode and run the reference experiment: default scenario, CPF and SRTT,
# Cubic and BBR end to end, against the single-path baseline.
demo:
	$(CARGO) build --release -p braid
	./target/release/braid demo scenarios/default.toml

# The whole test suite: formatting, lints, unit, property and scenario tests, docs.
test:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) test --workspace
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --quiet

bench:
	$(CARGO) build --release -p braid
	./target/release/braid bench

build:
	$(CARGO) build --release -p braid
