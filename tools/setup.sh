#!/usr/bin/env bash
# One command from a fresh clone to a built tilec and every example compiled and run:
# installs what is missing with apt (sudo only when not root), configures, builds,
# then runs tools/run-examples.sh (on the GPU where there is one, else the interpreter).
#
#   tools/setup.sh [BUILD_DIR]        (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}

# cmake, a C compiler, re2c and bison build the compiler; LLVM 22 (the C API with
# the NVPTX target, and FileCheck from llvm-22-tools for the pass tests) builds the
# GPU backend and its tests; zlib, zstd and libxml2 are what LLVM's static archives link
# against (LLVM is linked statically when they are here: a faster-starting compiler).
packages=(cmake build-essential re2c bison llvm-22-dev llvm-22-tools zlib1g-dev libzstd-dev libxml2-dev)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    SUDO=
    [ "$(id -u)" = 0 ] || SUDO=sudo
    echo "setup: installing ${missing[*]}"
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$BUILD" -j"$(nproc)"
tools/run-examples.sh "$BUILD"
