# rtclab developer commands. `make run` and `make test` are the README's two set-up commands:
# both create .venv, install the Python dependencies and build the Rust core into it.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEPS   := $(VENV)/.deps-installed
CORE   := $(VENV)/.core-built
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(BIN)):$(PATH)

RUST_SOURCES := $(shell find crates -name '*.rs' -o -name '*.j2' -o -name Cargo.toml 2>/dev/null) Cargo.toml Cargo.lock

.PHONY: install run test test-rust test-python lint bench bench-ns3 bench-ns3-wheel fuzz tshark chromium web-assets realclient clean

$(DEPS): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet "maturin>=1.5,<2" "numpy>=1.24" "pandas>=2.0" "pyarrow>=14" "matplotlib>=3.7" \
	  "tqdm>=4.66" "tabulate>=0.9" "pytest>=7" "selenium>=4.20" "duckdb>=1.0" "ray>=2.40" "ruff>=0.5" \
	  "gymnasium>=1.0" "scikit-learn>=1.4" "aiortc>=1.9" "jax>=0.4.30" "optax>=0.2" "networkx>=3.2" "lime>=0.2" \
	  "playwright>=1.40"
	touch $@

$(CORE): $(DEPS) $(RUST_SOURCES)
	$(BIN)/maturin develop --release --quiet
	touch $@

install: $(CORE)

## Run the default built-in scenario; results in rtclab-out/default/.
run: install
	$(BIN)/rtclab run

## The whole test suite: formatting, lints, Rust tests, Python tests.
test: install lint tshark chromium web-assets test-rust test-python

## tshark dissects our RTP/RTCP in the interop test; install it where we can (root + apt).
tshark:
	@command -v tshark >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing tshark for the RTP/RTCP interop test"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark) >/dev/null 2>&1 \
	      || echo "tshark could not be installed: the interop test will be skipped"; \
	  else echo "tshark is missing and cannot be installed here: the interop test will be skipped"; fi; }

## Headless Chromium renders the HTML report in a test; install it where we can (root + apt).
chromium:
	@{ command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; } || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium for the report rendering test"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) >/dev/null 2>&1 \
	      || echo "chromium could not be installed: the report rendering test will be skipped"; \
	  else echo "chromium is missing and cannot be installed here: the report rendering test will be skipped"; fi; }

## dash.js and TensorFlow.js for `rtclab metis deploy` (the browser case), from npm at pinned,
## integrity-checked versions into ~/.cache/rtclab/web; without npm the browser tests are skipped.
web-assets: install
	@$(BIN)/python -m rtclab.metis.webassets >/dev/null 2>&1 \
	  || echo "dash.js/tf.js could not be fetched (npm missing or offline): the browser case's tests will be skipped"

lint: $(DEPS)
	cargo fmt --all --check
	cargo clippy --quiet --workspace --all-targets -- -D warnings
	$(BIN)/ruff check --quiet --select F python tests bench

test-rust:
	cargo test --release --workspace --exclude rtclab-py

test-python: install
	cargo build --release --quiet -p rtclab-emu --bin rtclab-emu
	RTCLAB_EMU_BIN=$(CURDIR)/target/release/rtclab-emu $(BIN)/python -m pytest -q

bench: install
	$(BIN)/rtclab bench sim --out bench-out/sim
	@if [ "$$(id -u)" = 0 ]; then $(BIN)/rtclab bench emu --out bench-out/emu; \
	  else echo "bench emu skipped: the emulator needs root"; fi

## Whole processes against ns-3 and htsim, side by side (docs/benchmarks.md): builds ns-3.44 from
## source, optimized (bench/ns3/build-optimized.sh: the ns-3.44 source archive from gitlab.com,
## 10-15 minutes on 2 cores; NS3_SRC=<checkout> uses one you have) and the htsim dumbbell
## (bench/htsim/build.sh: github.com/Broadcom/csg-htsim, a minute; HTSIM_SRC=<checkout>), then
## runs `rtclab bench process` with both. Only on request: not part of `make test`.
bench-ns3: install
	bench/ns3/build-optimized.sh bench-out/ns3-opt
	bench/htsim/build.sh bench-out/htsim
	$(BIN)/rtclab bench process --ns3 bench-out/ns3-opt/bench-10-cubic --htsim bench-out/htsim/dumbbell \
	  --out bench-out/process

## The same against ns-3's PyPI wheel (`ns3==3.44.post0`, 69 MB, quick to install; about 4x slower
## than the optimized build, so its ratios are not the ones docs/benchmarks.md states).
NS3_VERSION := 3.44.post0
NS3_DIR     := bench-out/ns3
NS3_LIBS    := -lns3.44-core -lns3.44-network -lns3.44-internet -lns3.44-point-to-point \
               -lns3.44-applications -lns3.44-traffic-control
bench-ns3-wheel: install
	@test -d $(NS3_DIR)/ns3/include || $(BIN)/pip install --quiet --no-deps --target $(NS3_DIR) "ns3==$(NS3_VERSION)"
	g++ -O3 -std=c++20 -w bench/ns3/bench-10-cubic.cc -I$(NS3_DIR)/ns3/include -L$(NS3_DIR)/ns3/lib64 \
	  $(NS3_LIBS) -Wl,-rpath,$(abspath $(NS3_DIR))/ns3/lib64 -o $(NS3_DIR)/bench-10-cubic
	$(BIN)/rtclab bench process --ns3 $(NS3_DIR)/bench-10-cubic --out bench-out/process-wheel

## Real WebRTC stacks through the emulator (docs/realclient.md): aiortc, pion and Chromium on the
## step, dip and Wi-Fi scenarios, 3 runs each, with captures. Needs root (and go, chromium).
## `make test` runs one 60 s call of each in CI only.
realclient: install chromium
	for c in aiortc pion chromium; do for s in step dip wifi; do \
	  $(BIN)/rtclab realclient $$c $$s --runs 3 --capture --out realclient-out/$$c-$$s || exit 1; done; done

## Coverage-guided fuzzing of every wire parser (cargo-fuzz, nightly): FUZZ_SECONDS each.
FUZZ_SECONDS ?= 60
fuzz:
	command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
	cd fuzz && for t in $$(cargo +nightly fuzz list); do \
	  echo "== $$t ($(FUZZ_SECONDS) s)"; \
	  cargo +nightly fuzz run $$t -- -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 || exit 1; \
	done

clean:
	rm -rf $(VENV) target rtclab-out bench-out
