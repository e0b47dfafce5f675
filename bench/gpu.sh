#!/bin/bash
# The one script to run on the GPU machine, from the repository root:
#     bash bench/gpu.sh [BUILD_DIR]        (default build-gpu, carried from the build machine)
# Make BUILD_DIR on the build machine with tools/gpu-pack.sh (a -DTILEC_LLVM_STATIC=ON build
# packed stripped: runtime/libtilert.so.N, tests/gpu/*, embed/embed_demo), and carry it.
# Builds nothing.  Runs the GPU test suite (tests/gpu/run.sh), the embedded-kernels demo
# on the GPU (when the carried build has run the embed test), then bench/bench.py
# (tilec vs Triton vs PyTorch); prints a short summary table last.  Full logs go to $OUT
# (gpu_tests.log, embed.log, bench.log, bench.json, summary.txt).
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
OUT=${OUT:-/tmp/tilec-gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
# a pack (tools/gpu-pack.sh) holds the library under its SONAME only
export TILEC_RT_LIB=$PWD/$BUILD/runtime/libtilert.so
if [ ! -f "$TILEC_RT_LIB" ] && [ -f "$BUILD/runtime/SONAME" ]; then
    TILEC_RT_LIB=$PWD/$BUILD/runtime/$(cat "$BUILD/runtime/SONAME")
fi
export TILE_CACHE_DIR=${TILE_CACHE_DIR:-/tmp/tilec-cache}
[ -f "$TILEC_RT_LIB" ] || { echo "gpu.sh: $TILEC_RT_LIB missing: carry the build dir $BUILD"; exit 2; }

summary=()
note() { summary+=("$1"); echo "== $1"; }

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader \
    > "$OUT/summary.txt" 2>&1 || true

# 1. GPU tests (written by the runtime's owner).
if [ -x tests/gpu/run.sh ] || [ -f tests/gpu/run.sh ]; then
    t0=$SECONDS
    bash tests/gpu/run.sh "$BUILD" > "$OUT/gpu_tests.log" 2>&1
    rc=$?
    note "GPU tests (tests/gpu/run.sh): exit $rc in $((SECONDS - t0)) s; last lines:"
    tail -n 5 "$OUT/gpu_tests.log" | sed 's/^/    /'
else
    note "GPU tests: tests/gpu/run.sh not found (skipped)"
fi

# 2. The embed demo: the kernels compiled into a header at build time, on the GPU.
# (a pack: embed/embed_demo, finding libtilert through its $ORIGIN rpath; a whole build
# dir: the embed test's work dir)
DEMO=$BUILD/embed/embed_demo
[ -x "$DEMO" ] || DEMO=$BUILD/tests/embed/work/build/embed_demo
if [ -x "$DEMO" ]; then
    TILE_DEVICE=cuda "$DEMO" > "$OUT/embed.log" 2>&1
    rc=$?
    note "embed demo (cuda): exit $rc; $(tail -n 1 "$OUT/embed.log")"
    TILE_DEVICE=interp "$DEMO" > "$OUT/embed_interp.log" 2>&1
    note "embed demo (interp): exit $?; $(tail -n 1 "$OUT/embed_interp.log")"
else
    note "embed demo: $BUILD/embed/embed_demo missing (make the carry dir with tools/gpu-pack.sh)"
fi

# 3. Benchmarks.
t0=$SECONDS
python3 bench/bench.py --json "$OUT/bench.json" > "$OUT/bench.log" 2>&1
rc=$?
note "bench.py: exit $rc in $((SECONDS - t0)) s (log: bench.log, figures: bench.json)"

{
    echo
    for s in "${summary[@]}"; do echo "$s"; done
    echo
    # the table bench.py prints last
    awk '/^workload/{p=1} p' "$OUT/bench.log"
} | tee -a "$OUT/summary.txt"
