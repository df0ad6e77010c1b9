# The one task runner: `.ci/run` runs `make ci`, `.pre-commit-config.yaml` runs `make lint`.
# `make help` lists the targets. Recipes run from the repository root.
PYTHON ?= python
PYTEST := $(PYTHON) -m pytest
PYTHONS ?= 3.10 3.13
WHEELS_DIR ?= dist

.DEFAULT_GOAL := help
.PHONY: help dev test-fast test lint format docs docs-serve bench fuzz-smoke readme-test ci \
	wheels check-wheels portable-wheel sdist ci-wheels

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 14

dev:  ## install bytepair in editable mode with the test, lint and docs tools
	$(PYTHON) -m pip install -e ".[dev,docs]"

test-fast:  ## the inner loop: the Python tests not marked slow (under two minutes)
	$(PYTEST) -m "not slow" -q

test:  ## everything: Rust tests and the whole Python suite (slow corpus-wide tests too)
	cargo test
	$(PYTEST)

lint:  ## formatting, clippy, ruff, mypy and the stub check: what CI checks besides tests
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	ruff check python tests benchmarks
	ruff format --check python tests benchmarks
	mypy
	$(PYTHON) -m mypy.stubtest bytepair._core

format:  ## rewrite Rust and Python files in the house style
	cargo fmt --all
	ruff check --fix python tests benchmarks
	ruff format python tests benchmarks

docs:  ## build the documentation site into site/, warnings as errors
	NO_MKDOCS_2_WARNING=1 mkdocs build --strict

docs-serve:  ## serve the documentation site locally, rebuilt on change
	mkdocs serve

bench:  ## the encoding and training tables side by side with the other libraries
	$(PYTHON) benchmarks/bench_encode.py
	$(PYTHON) benchmarks/bench_train.py

fuzz-smoke:  ## a few seconds of cargo-fuzz per target (FUZZ_SECONDS=60 for longer)
	bash scripts/fuzz-smoke.sh

wheels:  ## manylinux wheels for each of PYTHONS (default 3.10 3.13) into WHEELS_DIR
	WHEELS_DIR=$(WHEELS_DIR) scripts/wheels.sh $(PYTHONS)

check-wheels: wheels  ## install each wheel in a fresh venv without Rust and test it
	for python in $(PYTHONS); do scripts/check-wheel.sh $(WHEELS_DIR) $$python || exit 1; done

sdist:  ## the source distribution into WHEELS_DIR
	WHEELS_DIR=$(WHEELS_DIR) scripts/wheels.sh --sdist

# The README's test command, verbatim: CI proves that what a newcomer types works.
# tests/test_readme.py checks that this line and the README's agree.
readme-test:
	pip install -e ".[dev]" && cargo test && python -m pytest

ci: dev lint docs readme-test ci-wheels fuzz-smoke  ## what .ci/run runs: install, lint, docs, README test command, wheels, fuzz
	@echo "== all green =="

portable-wheel:  ## the portable wheel (abi3, no CPython internals) into WHEELS_DIR
	WHEELS_DIR=$(WHEELS_DIR) scripts/wheels.sh --portable 3.10

# CI builds the 3.10 and 3.13 wheels once each and tests them installed, then the portable
# wheel, tested on 3.12, a version no per-version wheel is built for here (docs/install.md).
ci-wheels:
	rm -rf target/ci-wheels target/ci-portable
	$(MAKE) check-wheels PYTHONS="3.10 3.13" WHEELS_DIR=target/ci-wheels
	$(MAKE) portable-wheel WHEELS_DIR=target/ci-portable
	scripts/check-wheel.sh target/ci-portable 3.12
