#!/usr/bin/env bash
# Check a built wheel the way a user meets it: a fresh venv of the given Python with no Rust
# toolchain on PATH, the wheel and the test extras installed from binary wheels only; then the
# wheel's tags, its size, `bytepair --help`, `python -m bytepair --help`, the README's main job
# and the tests, run against the installed package.
#
#   scripts/check-wheel.sh dist/bytepair-0.1.0-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl 3.10
#   scripts/check-wheel.sh dist 3.13      # the one wheel in dist/ for that Python
#   BYTEPAIR_WHEEL_TESTS=all scripts/check-wheel.sh dist 3.13      # the whole suite
#
# The tests run from a copy of the repository without python/, so `import bytepair` can only
# find the installed package (checked before they start). The default selection is the CI
# subset below; `all` runs everything. Environment: BYTEPAIR_SHARED (the shared data; the
# README job and the data tests need it, and BYTEPAIR_REQUIRE_SHARED=1 makes its absence an
# error), BYTEPAIR_WHEEL_BUDGET_KIB (size budget), BYTEPAIR_MANYLINUX (the expected policy).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/scripts/packaging-env.sh"

if [[ $# != 2 ]]; then
    echo "usage: scripts/check-wheel.sh WHEEL|FOLDER PYTHON" >&2
    exit 2
fi
python="$(find_python "$2")"
if [[ -d "$1" ]]; then
    # The folder's wheel for this Python: its own version's, else a portable (abi3) one.
    abi="$("$python" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')"
    found=("$1"/bytepair-*-"$abi"-"$abi"-*.whl)
    [[ -f "${found[0]}" ]] || found=("$1"/bytepair-*-abi3-*.whl)
    if [[ ${#found[@]} != 1 || ! -f "${found[0]}" ]]; then
        echo "check-wheel: want one wheel for $abi in $1, found: ${found[*]}" >&2
        exit 1
    fi
    set -- "${found[0]}" "$2"
fi
wheel="$(native_path "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")")"
# About half as much again as the linux x86_64 wheel weighs (see docs/install.md).
budget_kib="${BYTEPAIR_WHEEL_BUDGET_KIB:-2450}"
policy="${BYTEPAIR_MANYLINUX:-manylinux2014}"
shared="${BYTEPAIR_SHARED:-$(cd "$root/.." && pwd)/shared}"
require_shared="${BYTEPAIR_REQUIRE_SHARED:-0}"
tests="${BYTEPAIR_WHEEL_TESTS:-subset}"
work="$(mktemp -d "${TMPDIR:-/tmp}/bytepair-check-wheel.XXXXXX")"
trap 'rm -rf "$work"' EXIT
pyver="$("$python" -c 'import platform; print(platform.python_version())')"
step() { echo "== $(basename "$wheel") on Python $pyver: $1 (at $SECONDS s) =="; }
step "size and tags"

size_kib=$(( $(wc -c <"$wheel") / 1024 ))
echo "size: $size_kib KiB (budget $budget_kib KiB)"
if (( size_kib > budget_kib )); then
    echo "check-wheel: $size_kib KiB is over the budget of $budget_kib KiB" >&2
    exit 1
fi
# The tags pip will match: this Python must accept the wheel, a Linux wheel must be manylinux
# at the policy it was built for, and a per-version wheel must be for this very version.
"$python" - "$wheel" "$policy" <<'PY'
import sys
from pip._vendor.packaging.tags import sys_tags
from pip._vendor.packaging.utils import parse_wheel_filename

wheel, policy = sys.argv[1], sys.argv[2]
_, _, _, tags = parse_wheel_filename(wheel.rsplit("/", 1)[-1])
if not tags & set(sys_tags()):
    sys.exit(f"check-wheel: this Python accepts none of the tags {sorted(map(str, tags))}")
version = f"cp{sys.version_info.major}{sys.version_info.minor}"
for tag in tags:
    if tag.abi != "abi3" and tag.interpreter != version:
        sys.exit(f"check-wheel: {tag} is not for {version}")
    if tag.abi == "abi3" and tag.interpreter != "cp310":
        sys.exit(f"check-wheel: {tag}: the portable wheel should start at cp310")
    if sys.platform == "linux":
        legacy = {"manylinux2014": "manylinux_2_17", "manylinux2010": "manylinux_2_12"}
        expected = legacy.get(policy, policy)
        if not tag.platform.startswith(("manylinux", "musllinux")):
            sys.exit(f"check-wheel: {tag} is not a manylinux tag")
        if not any(t.platform.startswith(expected) for t in tags):
            sys.exit(f"check-wheel: no {expected} tag in {sorted(map(str, tags))}")
print("tags:", " ".join(sorted(map(str, tags))))
PY
if [[ "$(uname -s)" == Linux ]]; then
    # auditwheel reads the .so's symbol versions: the policy must hold, not only the name.
    packaging_tools
    audit="$(auditwheel show "$wheel")"
    echo "$audit"
    expected="${policy/manylinux2014/manylinux_2_17}"
    if ! tr -s ' \n' ' ' <<<"$audit" | grep -q "consistent with the following platform tag: \"${expected}_"; then
        echo "check-wheel: auditwheel does not find the wheel consistent with $expected" >&2
        exit 1
    fi
fi

step "fresh venv without a Rust toolchain"
"$python" -m venv "$work/venv"
bin="$(venv_bin "$work/venv")"
no_rust_path="$bin"
IFS=: read -r -a entries <<<"$PATH"
for entry in "${entries[@]}"; do
    [[ -z "$entry" || "$entry" == "$HOME/.cargo/bin" || "$entry" == */packaging-tools/* ]] && continue
    [[ -e "$entry/cargo" || -e "$entry/cargo.exe" || -e "$entry/rustc" || -e "$entry/rustc.exe" ]] && continue
    no_rust_path="$no_rust_path:$entry"
done
export PATH="$no_rust_path"
unset CARGO RUSTC RUSTUP_TOOLCHAIN CARGO_TARGET_DIR
if command -v cargo >/dev/null || command -v rustc >/dev/null; then
    echo "check-wheel: a Rust toolchain is still on PATH: $(command -v cargo rustc)" >&2
    exit 1
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1
# Binary wheels only: with no toolchain nothing may be compiled, the wheel included.
python -m pip install --quiet --only-binary=:all: "${wheel}[test]"

step "the command line and the README's main job"
mkdir "$work/job"
cd "$work/job"
bytepair --help >/dev/null
python -m bytepair --help >/dev/null
corpus=("$shared"/corpus/english/*.txt)
if [[ -f "${corpus[0]}" ]]; then
    bytepair train "${corpus[@]}" --vocab-size 8192 --pattern cl100k -o my.tiktoken
    bytepair show -t my.tiktoken --pattern cl100k "How many r's are in strawberry?"
    [[ -s my.tiktoken ]]
elif [[ "$require_shared" != 0 ]]; then
    echo "check-wheel: no corpus under $shared/corpus/english (set BYTEPAIR_SHARED)" >&2
    exit 1
else
    echo "skipped the README's main job: no corpus under $shared/corpus/english"
fi

step "tests against the installed package ($tests)"
"$python" - "$(native_path "$root")" "$(native_path "$work/src")" <<'PY'
# A copy of the repository's files (tracked and new), without the package's source.
import shutil, subprocess, sys
from pathlib import Path

root, dest = Path(sys.argv[1]), Path(sys.argv[2])
listed = subprocess.run(
    ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    capture_output=True, check=True,
).stdout.decode().split("\0")
for name in listed:
    if name and not name.startswith("python/") and (root / name).is_file():
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, dest / name)
PY
cd "$work/src"
site="$(python - <<'PY'
import sys
from pathlib import Path

import bytepair

package = Path(bytepair.__file__).resolve().parent
if not package.is_relative_to(Path(sys.prefix).resolve()):
    sys.exit(f"check-wheel: bytepair imports from {package}, not from the venv {sys.prefix}")
print(package)
PY
)"
echo "bytepair imports from $site"
export BYTEPAIR_SHARED="$shared" BYTEPAIR_TEST_INSTALLED="$site"
if [[ "$tests" == all ]]; then
    # (The sdist test builds from a source tree, which this copy is not.)
    selection=(tests --deselect tests/test_packaging.py::test_sdist_has_what_the_build_needs_and_no_test_data)
    # test_layering.py reads the package's source tree, which an installed wheel is not.
    selection+=(--ignore tests/test_layering.py)
else
    # The CI subset: every test file, so every module and the extension's whole surface, with
    # one or a few members of each corpus-wide parametrization instead of all of them, no
    # `slow` tests and no Ray cluster. The editable run of .ci/run runs them all.
    heavy=(
        "test_formats_hf_json.py::test_corpus_ids_and_text[olmo1]"
        "test_formats_hf_json.py::test_corpus_ids_and_text[olmo2-dolma2]"
        "test_formats_hf_json.py::test_corpus_ids_and_text[smollm]"
        "test_formats_hf_json.py::test_corpus_ids_and_text[roberta-base]"
        "test_formats_hf_json.py::test_corpus_ids_and_text[phi-2]"
        "test_formats_hf_json.py::test_corpus_ids_and_text[gpt2-hf]"
        "test_formats_hf_json.py::test_corpus_ids_and_text[gpt-neox-20b]"
        "test_formats_hf_json.py::test_corpus_ids_and_text[falcon]"
        "test_formats_hf_files.py::test_corpus_ids_and_text[qwen2]"
        "test_formats_hf_files.py::test_corpus_ids_and_text[smollm]"
        "test_formats_roundtrip.py::test_tiktoken_to_tokenizer_json[o200k_base]"
        "test_formats_roundtrip.py::test_tiktoken_to_tokenizer_json[cl100k_base]"
        "test_formats_roundtrip.py::test_tiktoken_to_tokenizer_json[llama3]"
        "test_formats_roundtrip.py::test_tiktoken_to_tokenizer_json[p50k_base]"
        "test_formats_roundtrip.py::test_tiktoken_and_gpt2_formats_round_trip[o200k_base]"
        "test_formats_roundtrip.py::test_tiktoken_and_gpt2_formats_round_trip[cl100k_base]"
        "test_formats_roundtrip.py::test_tiktoken_and_gpt2_formats_round_trip[llama3]"
        "test_formats_roundtrip.py::test_tokenizer_json_round_trip[olmo1]"
        "test_formats_roundtrip.py::test_tokenizer_json_round_trip[olmo2-dolma2]"
        "test_formats_roundtrip.py::test_tokenizer_json_round_trip[claude-legacy]"
        "test_formats_roundtrip.py::test_tokenizer_json_round_trip[falcon]"
        "test_formats_roundtrip.py::test_tokenizer_json_round_trip[phi-2]"
        "test_formats_roundtrip.py::test_tokenizer_json_round_trip[roberta-base]"
        "test_formats_roundtrip.py::test_tokenizer_json_round_trip[smollm]"
        "test_formats_roundtrip.py::test_hf_files_to_tokenizer_json[qwen2-options0]"
        "test_formats_roundtrip.py::test_hf_files_to_tokenizer_json[smollm-options1]"
        "test_reference_conformance.py::test_ids_equal_tiktoken_on_corpus[o200k_base]"
        "test_reference_conformance.py::test_ids_equal_tiktoken_on_corpus[cl100k_base]"
        "test_reference_load.py::test_qwen2_crlf_merges_and_hash_lines"
        "test_distributed.py::test_tokenize_ray_matches_one_process"
        "test_distributed.py::test_ray_worker_killed_mid_job_is_retried"
        "test_distributed.py::test_train_ray_matches_bytepair_train"
        "test_packaging.py::test_sdist_has_what_the_build_needs_and_no_test_data"
    )
    selection=(tests -m "not slow")
    for test in "${heavy[@]}"; do selection+=(--deselect "tests/$test"); done
    # test_layering.py reads the package's source tree, which an installed wheel is not.
    selection+=(--ignore tests/test_layering.py)
fi
pytest=(python -m pytest)
if [[ "${BYTEPAIR_WHEEL_COVERAGE:-0}" != 0 ]]; then
    # Proof that the selection reaches every module: coverage, then no module left at zero.
    # Subprocesses are measured too: `python -m bytepair` runs only in one.
    python -m pip install --quiet --only-binary=:all: "coverage>=7.10"
    printf '[run]\nsource = bytepair\nparallel = true\npatch = subprocess\n' >"$work/coveragerc"
    export COVERAGE_RCFILE="$(native_path "$work/coveragerc")" COVERAGE_FILE="$(native_path "$work/.coverage")"
    pytest=(python -m coverage run -m pytest)
fi
# shellcheck disable=SC2086 # BYTEPAIR_PYTEST_ARGS is a list of words (e.g. "-x --durations=20")
"${pytest[@]}" -q -p no:cacheprovider -c pyproject.toml --rootdir . "${selection[@]}" "$site" \
    ${BYTEPAIR_PYTEST_ARGS:-}
if [[ "${BYTEPAIR_WHEEL_COVERAGE:-0}" != 0 ]]; then
    python -m coverage combine --quiet
    python -m coverage json --quiet -o "$work/coverage.json"
    python - "$(native_path "$work/coverage.json")" "$site" <<'PY'
import json
import sys
from pathlib import Path

report, package = json.loads(Path(sys.argv[1]).read_text()), Path(sys.argv[2])
measured = {Path(name).resolve(): data for name, data in report["files"].items()}
modules = sorted(p.resolve() for p in package.rglob("*.py"))
untouched = [str(p.relative_to(package)) for p in modules if not measured.get(p, {}).get("executed_lines")]
for p in modules:
    summary = measured.get(p, {}).get("summary", {})
    print(f"{summary.get('percent_covered', 0):5.1f}%  {p.relative_to(package)}")
if untouched:
    sys.exit(f"check-wheel: the tests never ran these modules: {untouched}")
PY
fi
step "done"
