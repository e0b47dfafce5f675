#!/usr/bin/env bash
# One command from a fresh clone to a built tilec and every example compiled and run:
# installs what is missing with apt (sudo only when not root), configures, builds,
# then runs tools/run-examples.sh (on the GPU where there is one, else the interpreter).
#
#   tools/setup.sh [BUILD_DIR]        (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}

# cmake, a C compiler, re2c and bison build the compiler; LLVM (19 or newer: the C API with
# the NVPTX target, and FileCheck from llvm-N-tools for the pass tests) builds the GPU
# backend and its tests; zlib, zstd and libxml2 are what LLVM's static archives link
# against (LLVM is linked statically when they are here: a faster-starting compiler).
# The newest LLVM the package manager offers is taken (Debian 12: 22 from apt.llvm.org
# or 19; Ubuntu 24.04: 19 or 20), or the one already installed; TILEC_LLVM=N insists.
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
newest_llvm() {
    for v in 30 29 28 27 26 25 24 23 22 21 20 19; do
        if command -v "llvm-config-$v" >/dev/null 2>&1 ||
           apt-cache show "llvm-$v-dev" >/dev/null 2>&1; then
            echo "$v"
            return
        fi
    done
}
llvm=${TILEC_LLVM:-$(newest_llvm)}
if [ -z "$llvm" ]; then      # a fresh machine's package lists may be empty
    $SUDO apt-get update
    llvm=$(newest_llvm)
fi
if [ -z "$llvm" ]; then
    echo "setup: apt offers no LLVM 19 or newer (add apt.llvm.org, or set TILEC_LLVM=N);" \
         "building without the GPU backend" >&2
    llvm_pkgs=()
else
    echo "setup: LLVM $llvm"
    llvm_pkgs=("llvm-$llvm-dev" "llvm-$llvm-tools")
fi
# What the Python tests import (ctest's python.*): numpy (python.numpy, python.readme),
# pip, setuptools and wheel (python.pip_install), matplotlib (python.bench_plot).
python_pkgs=(python3 python3-numpy python3-pip python3-setuptools python3-wheel python3-matplotlib)
packages=(cmake build-essential re2c bison "${llvm_pkgs[@]}" zlib1g-dev libzstd-dev libxml2-dev "${python_pkgs[@]}")
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

llvm_config=()
[ -n "$llvm" ] && llvm_config=("-DTILEC_LLVM_CONFIG=$(command -v "llvm-config-$llvm" || echo "/usr/bin/llvm-config-$llvm")")
# The Python tests run with the python3 that has apt's numpy: the first python3 on PATH
# (a pyenv or a virtual environment) may lack it, then the system's is named to CMake.
py=$(command -v python3 || echo /usr/bin/python3)
if ! "$py" -c "import numpy" 2>/dev/null && /usr/bin/python3 -c "import numpy" 2>/dev/null; then
    py=/usr/bin/python3
fi
echo "setup: Python tests with $py"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${llvm_config[@]}" "-DPython3_EXECUTABLE=$py"
cmake --build "$BUILD" -j"$(nproc)"
tools/run-examples.sh "$BUILD"
