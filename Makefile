# rtclab developer commands. `make run` and `make test` are the README's two set-up commands:
# both create .venv, install the Python dependencies and build the Rust core into it.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEPS   := $(VENV)/.deps-installed
CORE   := $(VENV)/.core-built
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(BIN)):$(PATH)

RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null) Cargo.toml Cargo.lock

.PHONY: install run test test-rust test-python lint bench clean

$(DEPS): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet "maturin>=1.5,<2" "numpy>=1.24" "pandas>=2.0" "pyarrow>=14" "matplotlib>=3.7" "pytest>=7"
	touch $@

$(CORE): $(DEPS) $(RUST_SOURCES)
	$(BIN)/maturin develop --release --quiet
	touch $@

install: $(CORE)

## Run the default built-in scenario; results in rtclab-out/default/.
run: install
	$(BIN)/rtclab run

## The whole test suite: formatting, lints, Rust tests, Python tests.
test: install lint test-rust test-python

lint:
	cargo fmt --all --check
	cargo clippy --quiet --workspace --all-targets -- -D warnings

test-rust:
	cargo test --release --workspace --exclude rtclab-py

test-python: install
	$(BIN)/python -m pytest -q

bench: install
	$(BIN)/rtclab bench sim --out bench-out

clean:
	rm -rf $(VENV) target rtclab-out bench-out
