# Sourced by scripts/wheels.sh and scripts/check-wheel.sh: the pinned packaging tools and
# how a Python is found from a version number.

# maturin >= 1.9.4 writes PEP 639 metadata; ziglang is the linker for manylinux on any Linux.
PACKAGING_TOOLS=("maturin==1.16.0" "ziglang==0.17.1; sys_platform == 'linux'" "auditwheel==6.8.2; sys_platform == 'linux'")
PACKAGING_VENV="${BYTEPAIR_PACKAGING_VENV:-$root/target/packaging-tools}"

# The bin folder of a venv: Scripts on Windows.
venv_bin() {
    if [[ -d "$1/Scripts" ]]; then echo "$1/Scripts"; else echo "$1/bin"; fi
}

# A path as the native tools read it (Windows' Git Bash hands them /d/a/... otherwise).
native_path() {
    if command -v cygpath >/dev/null; then cygpath -m "$1"; else echo "$1"; fi
}

# A Python interpreter from a version ("3.12"), a command ("python") or a path: PATH first,
# then pyenv's versions.
find_python() {
    local spec="$1" candidate
    if [[ "$spec" != */* && "$spec" =~ ^[0-9]+\.[0-9]+$ ]]; then
        for candidate in "python$spec" "py -$spec"; do
            if $candidate -c 'import sys' >/dev/null 2>&1; then
                $candidate -c 'import sys; print(sys.executable)'
                return
            fi
        done
        local pyenv_root="${PYENV_ROOT:-$HOME/.pyenv}"
        for candidate in "$pyenv_root"/versions/"$spec".*/bin/python; do
            if [[ -x "$candidate" ]]; then echo "$candidate"; return; fi
        done
        echo "no Python $spec found (on PATH or under pyenv)" >&2
        return 1
    fi
    "$spec" -c 'import sys; print(sys.executable)'
}

# Creates the tools' venv once and puts it first on PATH (maturin runs zig as `python -m ziglang`).
packaging_tools() {
    local bin
    bin="$(venv_bin "$PACKAGING_VENV")"
    if [[ ! -f "$PACKAGING_VENV/.installed" ]]; then
        local python
        # `python3` is not always there on Windows; `python` is.
        python="$(find_python "${BYTEPAIR_TOOLS_PYTHON:-python3}" 2>/dev/null || find_python python)"
        "$python" -m venv "$PACKAGING_VENV"
        bin="$(venv_bin "$PACKAGING_VENV")"
        "$bin/python" -m pip install --quiet --disable-pip-version-check "${PACKAGING_TOOLS[@]}"
        touch "$PACKAGING_VENV/.installed"
    fi
    export PATH="$bin:$PATH"
}
