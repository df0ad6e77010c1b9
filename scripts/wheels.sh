#!/usr/bin/env bash
# Build the release wheels and the sdist into dist/, exactly as the release workflow does.
#
#   scripts/wheels.sh 3.10 3.13           # one wheel per CPython: a version, a command or a path
#   scripts/wheels.sh --portable 3.10     # the portable wheel (no CPython internals, abi3)
#   scripts/wheels.sh --sdist             # the source distribution
#
# Linux wheels are linked with zig against glibc 2.17 (manylinux2014), so any distribution
# builds them without docker, and maturin's audit fails the build if a symbol needs a newer
# glibc. macOS and Windows wheels are built natively. maturin and ziglang are pinned and live
# in their own venv (target/packaging-tools), created on first use. Output: $WHEELS_DIR, else
# dist/. The Rust toolchain is the one on PATH (rust-toolchain.toml where present).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source scripts/packaging-env.sh

out="${WHEELS_DIR:-$root/dist}"
policy="${BYTEPAIR_MANYLINUX:-manylinux2014}"
portable=0
sdist=0
pythons=()
for arg in "$@"; do
    case "$arg" in
        --portable) portable=1 ;;
        --sdist) sdist=1 ;;
        -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
        -*) echo "wheels.sh: unknown option $arg" >&2; exit 2 ;;
        *) pythons+=("$arg") ;;
    esac
done
if [[ $sdist == 0 && ${#pythons[@]} == 0 ]]; then
    echo "usage: scripts/wheels.sh [--portable] [--sdist] [PYTHON...]" >&2
    exit 2
fi

packaging_tools
mkdir -p "$out"
if [[ $sdist == 1 ]]; then
    maturin sdist --out "$out"
fi

args=(build --release --strip --out "$out")
if [[ "$(uname -s)" == Linux ]]; then
    args+=(--zig --compatibility "$policy")
fi
if [[ $portable == 1 ]]; then
    # The bindings' default feature holds the CPython-internals fast paths; without it the
    # module keeps to the limited API, so one abi3 wheel serves every CPython from 3.10 on.
    args+=(--no-default-features --features pyo3/abi3-py310)
fi
for spec in "${pythons[@]}"; do
    python="$(find_python "$spec")"
    echo "== wheel for $spec ($python)$([[ $portable == 1 ]] && echo ', portable') =="
    start=$SECONDS
    maturin "${args[@]}" --interpreter "$python"
    echo "== built in $((SECONDS - start)) s =="
done
ls -l "$out"
