#!/usr/bin/env bash
# A short cargo-fuzz run of every target in fuzz/ (libFuzzer), for CI: a few seconds each.
#
#   scripts/fuzz-smoke.sh            # 6 s per target (4 targets), after the build
#   FUZZ_SECONDS=60 scripts/fuzz-smoke.sh
#   scripts/fuzz-smoke.sh --seeds    # only replay fuzz/seeds (the committed regression inputs)
#
# Works on a stable toolchain: RUSTC_BOOTSTRAP=1 lets stable rustc take the -Z flags that
# cargo-fuzz passes (sanitizer coverage). No sanitizer is used (`-s none`): the code under test
# is safe Rust, where a bug shows as a panic, which libFuzzer reports. Builds keep debug
# assertions and overflow checks. cargo-fuzz is installed from crates.io when missing.
# A crash fails the script and prints the input's path and how to replay it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/fuzz"

seconds="${FUZZ_SECONDS:-6}"
mode="${1:-run}"
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR="${BYTEPAIR_FUZZ_TARGET_DIR:-${CARGO_TARGET_DIR:-$root/target}/fuzz}"
shared="${BYTEPAIR_SHARED:-$(cd "$root/.." && pwd)/shared}"
vocab="$shared/vocab/cl100k_base/cl100k_base.tiktoken"
if [[ -z "${BYTEPAIR_FUZZ_VOCAB:-}" && -f "$vocab" ]]; then
    export BYTEPAIR_FUZZ_VOCAB="$vocab"  # the roundtrip target then uses a real vocabulary
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz from crates.io"
    cargo install cargo-fuzz --locked --version "^0.13"
fi

targets=(pretokenize encode roundtrip tiktoken_parse)
echo "== building ${targets[*]}"
cargo fuzz build -s none

triple="$(rustc -vV | sed -n 's/^host: //p')"
bin="$CARGO_TARGET_DIR/$triple/release"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=0
for t in "${targets[@]}"; do
    mkdir -p "$work/corpus/$t" "$work/artifacts/$t"
    # -timeout: one input may take at most 10 s (a hang is a failure: encoding is linear time);
    # -malloc_limit_mb: one allocation over 512 MB is a failure (hostile files must not do that).
    flags=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 -max_len=4096
        "-artifact_prefix=$work/artifacts/$t/")
    if [[ "$mode" == "--seeds" ]]; then
        flags+=(-runs=0)
    else
        flags+=("-max_total_time=$seconds")
    fi
    echo "== $t"
    if ! "$bin/$t" "${flags[@]}" "$work/corpus/$t" "seeds/$t" >"$work/$t.log" 2>&1; then
        failed=1
        tail -n 40 "$work/$t.log"
        for crash in "$work/artifacts/$t"/*; do
            [[ -e "$crash" ]] || continue
            mkdir -p "$root/fuzz/artifacts/$t"
            cp "$crash" "$root/fuzz/artifacts/$t/"
            echo "FAILED: $t crashed on fuzz/artifacts/$t/$(basename "$crash")"
            echo "replay: RUSTC_BOOTSTRAP=1 cargo fuzz run -s none $t fuzz/artifacts/$t/$(basename "$crash")"
        done
    else
        grep -E "^Done [0-9]+ runs|^INFO: .*inputs" "$work/$t.log" | tail -n 1
    fi
done
if [[ "$failed" == 1 ]]; then
    echo "fuzz smoke: FAILED"
    exit 1
fi
echo "fuzz smoke: ${#targets[@]} targets, no crash"
