#!/bin/bash
# The one script to run on the GPU machine, from the repository root:
#     bash bench/gpu.sh [BUILD_DIR]        (default build-gpu, carried from the build machine)
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
export TILEC_RT_LIB=$PWD/$BUILD/runtime/libtilert.so
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
EMBED=$BUILD/tests/embed/work
if [ -x "$EMBED/build/embed_demo" ]; then
    LD_LIBRARY_PATH=$PWD/$BUILD/runtime:$PWD/$EMBED/prefix/lib:${LD_LIBRARY_PATH:-} TILE_DEVICE=cuda \
        "$EMBED/build/embed_demo" > "$OUT/embed.log" 2>&1
    rc=$?
    note "embed demo (cuda): exit $rc; $(tail -n 1 "$OUT/embed.log")"
else
    note "embed demo: $EMBED/build/embed_demo not built (run ctest -R embed in $BUILD first)"
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
