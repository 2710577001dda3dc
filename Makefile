# Braid: two entry points on a fresh machine (see README.md).
CARGO ?= cargo

.PHONY: demo test deps fuzz bench bench-ns3 bench-python build

# Build in release mode and run the reference experiment: default scenario, CPF and SRTT,
# Cubic and BBR end to end, against the single-path baseline.
demo: python
	$(CARGO) build --release -p braid
	./target/release/braid demo scenarios/default.toml

# The whole test suite: formatting, import cycles, lints, unit, property and scenario tests, docs,
# and every fuzz target for a few seconds.
test: deps python
	$(CARGO) fmt --all -- --check
	python3 scripts/import_cycles.py
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) test --workspace
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --quiet
	.venv/bin/python -m pytest -q python/tests
	FUZZ_SECONDS=$${FUZZ_SECONDS:-3} $(MAKE) fuzz

# Every libFuzzer target in fuzz/ for FUZZ_SECONDS each (default 10) with the nightly toolchain,
# installed when missing (scripts/fuzz.sh; fuzz/README.md).
fuzz:
	bash scripts/fuzz.sh

# System tools the namespace tests need that a bare CI machine lacks: nft (the NAT rebinding
# test, the walkthrough), curl (the walkthrough) and chromium (the operator page). Installed only
# when missing and only as root (the namespace tests need root anyway).
deps:
	@pkgs=""; command -v nft >/dev/null 2>&1 || pkgs="$$pkgs nftables"; \
	command -v curl >/dev/null 2>&1 || pkgs="$$pkgs curl"; \
	if [ -n "$$pkgs" ] && [ "$$(id -u)" -eq 0 ]; then \
		echo "installing$$pkgs for the namespace tests"; \
		out=$$( { apt-get update -qq && \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$pkgs; } 2>&1 ) || \
			{ echo "$$out" >&2; exit 1; }; \
	fi
	@# Debian's chromium for the operator page's browser test, installed in the background while
	@# the workspace builds; the test waits for target/chromium-install.rc (tunnel_edges_netns.rs).
	@if ! command -v chromium >/dev/null 2>&1 && [ "$$(id -u)" -eq 0 ] && \
		[ ! -f target/chromium-install.rc ]; then \
		echo "installing chromium in the background (log: target/chromium-install.log)"; \
		mkdir -p target; \
		( { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends chromium; } > target/chromium-install.log 2>&1; \
			echo $$? > target/chromium-install.rc ) < /dev/null > /dev/null 2>&1 & \
	fi

bench:
	$(CARGO) build --profile dist -p braid
	./target/dist/braid bench

# The nested default against ns-3's single-path download, side by side (docs/performance.md).
# Needs Debian's ns-3 (apt-get install libns3-dev); not part of `make test`.
bench-ns3:
	$(CARGO) build --profile dist -p braid
	python3 scripts/bench_vs_ns3.py --braid target/dist/braid

# The Python package against the command line, and a two-worker Dask LocalCluster against one
# worker, side by side (docs/python.md, "Performance"). Not part of `make test`.
bench-python: python
	$(CARGO) build --release -p braid
	.venv/bin/python scripts/bench_python.py

build:
	$(CARGO) build --release -p braid

# The Python package (python/braid and its native module, crates/braid-py; docs/python.md) in
# .venv at the repository root: the pinned requirements once (again when they change), then
# `maturin develop --release`, which cargo keeps incremental. Quiet unless something fails.
.PHONY: python
python: .venv/.requirements.installed
	@out=$$(cd python && VIRTUAL_ENV="$(CURDIR)/.venv" "$(CURDIR)/.venv/bin/python" -m maturin develop --release 2>&1) || \
		{ echo "$$out" >&2; exit 1; }

.venv/.requirements.installed: python/requirements.txt
	@test -x .venv/bin/python || python3 -m venv .venv
	@out=$$(.venv/bin/python -m pip install -q --disable-pip-version-check -r python/requirements.txt 2>&1) || \
		{ echo "$$out" >&2; exit 1; }
	@touch $@
