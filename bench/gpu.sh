#!/bin/bash
# The one script to run on the GPU machine, from the repository root:
#     bash bench/gpu.sh [BUILD_DIR]        (default build-gpu, carried from the build machine)
# Make BUILD_DIR on the build machine with tools/gpu-pack.sh (a -DTILEC_LLVM_STATIC=ON build
# packed stripped: lib/libtilec.so.N, lib/libtilert.so.N, bin/tilec, tests/gpu/*,
# embed/embed_demo), and carry it; a whole build directory works too.
# Builds nothing.  Runs the GPU test suite (tests/gpu/run.sh), the embedded-kernels demo
# on the GPU, the tilec CLI on the GPU (`tilec run --bench`, vector_add checked byte for
# byte against the interpreter), then bench/bench.py (tilec vs Triton vs PyTorch); prints
# a short summary table last, then the steps that failed (a non-zero exit, a FAIL line,
# a program missing: tests/gpu/steps.sh); exit 1 when any did.  Full logs go to $OUT
# (gpu_tests.log, embed.log, cli.log, bench.log, bench.json, summary.txt).
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
OUT=${OUT:-/tmp/tilec-gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
# a pack (tools/gpu-pack.sh) holds the libraries in lib/ under their SONAMEs only; a
# build directory has runtime/libtilert.so and tools/tilec
export TILEC_RT_LIB=$PWD/$BUILD/runtime/libtilert.so
TILEC=$PWD/$BUILD/tools/tilec
if [ -f "$BUILD/lib/SONAME" ]; then
    TILEC_RT_LIB=$PWD/$BUILD/lib/$(cat "$BUILD/lib/SONAME")
    TILEC=$PWD/$BUILD/bin/tilec
fi
export TILE_CACHE_DIR=${TILE_CACHE_DIR:-/tmp/tilec-cache}
[ -f "$TILEC_RT_LIB" ] || { echo "gpu.sh: $TILEC_RT_LIB missing: carry the build dir $BUILD"; exit 2; }

summary=()
note() { summary+=("$1"); echo "== $1"; }
. tests/gpu/steps.sh

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader \
    > "$OUT/summary.txt" 2>&1 || true

# 1. GPU tests (written by the runtime's owner).
if [ -x tests/gpu/run.sh ] || [ -f tests/gpu/run.sh ]; then
    t0=$SECONDS
    run_step "GPU tests (tests/gpu/run.sh)" "$OUT/gpu_tests.log" bash tests/gpu/run.sh "$BUILD"
    rc=$?
    note "GPU tests (tests/gpu/run.sh): exit $rc in $((SECONDS - t0)) s; last lines:"
    tail -n 5 "$OUT/gpu_tests.log" | sed 's/^/    /'
else
    note "GPU tests: tests/gpu/run.sh not found (skipped)"
    step_failed "GPU tests" "tests/gpu/run.sh not found"
fi

# 2. The embed demo: the kernels compiled into a header at build time, on the GPU.
# (a pack: embed/embed_demo, finding libtilert through its $ORIGIN rpath; a whole build
# dir: the embed test's work dir)
DEMO=$BUILD/embed/embed_demo
[ -x "$DEMO" ] || DEMO=$BUILD/tests/embed/work/build/embed_demo
if [ -x "$DEMO" ]; then
    run_step "embed demo (cuda)" "$OUT/embed.log" env TILE_DEVICE=cuda "$DEMO"
    rc=$?
    note "embed demo (cuda): exit $rc; $(tail -n 1 "$OUT/embed.log")"
    run_step "embed demo (interp)" "$OUT/embed_interp.log" env TILE_DEVICE=interp "$DEMO"
    note "embed demo (interp): exit $?; $(tail -n 1 "$OUT/embed_interp.log")"
else
    note "embed demo: $BUILD/embed/embed_demo missing (make the carry dir with tools/gpu-pack.sh)"
    step_failed "embed demo" "$BUILD/embed/embed_demo missing"
fi

# 3. The CLI on the GPU: `tilec run --bench` (autotune, then the median time and GB/s).
# vector_add is exact, so its saved output must equal the interpreter's byte for byte.
if [ -x "$TILEC" ]; then
    N=16777216
    T=$(mktemp -d)   # 64 MiB outputs: not under $OUT, which travels back
    : > "$OUT/cli.log"
    cli() { echo "\$ tilec $*" >> "$OUT/cli.log"; "$TILEC" "$@" >> "$OUT/cli.log" 2>&1; }
    cli run examples/vector_add.tile --kernel vector_add --device=cuda --bench \
        x=randn:$N:1 y=randn:$N:2 out=zeros:$N n=$N --save out="$T/vadd_cuda.bin"
    rc_va=$?
    cli run examples/vector_add.tile --kernel vector_add --device=interp \
        x=randn:$N:1 y=randn:$N:2 out=zeros:$N n=$N --save out="$T/vadd_interp.bin"
    rc_vi=$?
    if [ $rc_va != 0 ] || [ $rc_vi != 0 ]; then
        va_cmp="FAILED (cuda rc $rc_va, interp rc $rc_vi)"
        step_failed "tilec CLI vector_add" "cuda rc $rc_va, interp rc $rc_vi (cli.log)"
    elif cmp -s "$T/vadd_cuda.bin" "$T/vadd_interp.bin"; then
        va_cmp="output == interp output, byte for byte"
    else
        va_cmp="MISMATCH: output differs from the interpreter's"
        step_failed "tilec CLI vector_add" "cuda output differs from the interpreter's"
    fi
    M=$((4096 * 4096))
    cli run examples/softmax.tile --kernel softmax --device=cuda --bench \
        out=zeros:$M x=randn:$M:1 rows=4096 cols=4096
    rc_sm=$?
    [ $rc_sm = 0 ] || step_failed "tilec CLI softmax" "exit $rc_sm (cli.log)"
    rm -rf "$T"
    # the --bench lines (best variant, median time, GB/s) of each GPU run
    perf=$(grep -iE 'GB/s|best' "$OUT/cli.log" | tr '\n' ' ' | cut -c1-300)
    note "tilec CLI (cli.log): vector_add 2^24 cuda: $va_cmp; softmax 4096x4096 cuda rc $rc_sm; $perf"
else
    note "tilec CLI: $TILEC missing (skipped)"
    step_failed "tilec CLI" "$TILEC missing"
fi

# 4. Benchmarks.
t0=$SECONDS
run_step bench.py "$OUT/bench.log" python3 bench/bench.py --json "$OUT/bench.json"
rc=$?
note "bench.py: exit $rc in $((SECONDS - t0)) s (log: bench.log, figures: bench.json)"
# the math builtins: accurate vs fast vs Triton (chain of activations, softmax)
t0=$SECONDS
run_step math_bench.py "$OUT/math_bench.log" python3 bench/math_bench.py --json "$OUT/math_bench.json"
rc=$?
note "math_bench.py: exit $rc in $((SECONDS - t0)) s (log: math_bench.log)
$(grep -E '^(chain|softmax) ' "$OUT/math_bench.log")"

{
    echo
    for s in "${summary[@]}"; do echo "$s"; done
    echo
    # the table bench.py prints last
    awk '/^workload/{p=1} p' "$OUT/bench.log"
    echo
    steps_finish
} | tee -a "$OUT/summary.txt"
# the exit status of steps_finish, run again outside the pipe's subshell
steps_finish > /dev/null
