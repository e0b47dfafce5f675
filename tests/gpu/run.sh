#!/bin/sh
# The GPU test run, for the lent GPU machine.  Builds nothing: give it a build directory
# made on the build machine (carried over), e.g.
#     tests/gpu/run.sh build-runtime
# or a carry directory of tools/gpu-pack.sh (tests/gpu/* find lib/libtilert.so.N and
# lib/libtilec.so.N through their $ORIGIN rpaths; ctest is skipped there).
# Runs the runtime tests and the GPU tests (ctest -L 'runtime|gpu'), the GPU example
# comparison directly (its per-case lines; then tests/gpu/big_variants.txt, the biggest
# variants pinned, tests/gpu/casts.txt and, under a timeout, tests/gpu/barriers.txt), the dot
# examples (gpu_dot, under a timeout; again under each of the backend's other lowerings,
# $TILEC_LOWERING), the runtime benchmarks, then compute-sanitizer
# memcheck and racecheck on a few examples (gpu_examples --only=K --given-size; gpu_dot
# --only=K --max-macs=N for matmul and batched_matmul).
# Logs go to $OUT (if set) else ./gpu-logs; a short summary is printed, then the failed
# steps (tests/gpu/steps.sh: a non-zero exit, a timeout or a FAIL line in the step's log);
# the exit status is 1 when any step failed, 2 when there is nothing to run.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "${1:-$ROOT/build-runtime}" && pwd)
LOG=${OUT:-$ROOT/gpu-logs}
mkdir -p "$LOG"
export TILE_CACHE_DIR="${TILE_CACHE_DIR:-/tmp/tilec-gpu-cache}"
export TILEC_EXAMPLES_DIR="$ROOT/examples"
summary=""
note() { summary="$summary
$1"; }
. "$ROOT/tests/gpu/steps.sh"

if [ ! -x "$B/tests/gpu/gpu_examples" ]; then
  echo "no $B/tests/gpu/gpu_examples: build first (cmake --build $B)"; exit 2
fi
nvidia-smi -L > "$LOG/nvidia-smi.txt" 2>&1

# ctest only where the whole build directory came along (its paths are this machine's)
if [ -f "$B/CTestTestfile.cmake" ] && command -v ctest >/dev/null 2>&1; then
  run_step "ctest runtime|gpu" "$LOG/ctest.txt" sh -c 'cd "$1" && ctest -L "runtime|gpu" --output-on-failure' sh "$B"
  note "ctest runtime|gpu: $(grep -E 'tests passed|tests failed' "$LOG/ctest.txt" | tail -1)"
fi

run_step gpu_examples "$LOG/gpu_examples.txt" "$B/tests/gpu/gpu_examples" "$ROOT/examples/run.txt"
note "gpu_examples: $(tail -1 "$LOG/gpu_examples.txt")"
grep -E '^(FAIL|SKIP)' "$LOG/gpu_examples.txt" | head -20 > "$LOG/gpu_examples_failures.txt"
# the biggest variants, pinned (codegen at CodeGenOpt::None; unaligned forms at ragged sizes)
run_step "gpu_examples big_variants.txt" "$LOG/gpu_big_variants.txt" \
  "$B/tests/gpu/gpu_examples" "$ROOT/tests/gpu/big_variants.txt"
note "gpu_examples big variants: $(tail -1 "$LOG/gpu_big_variants.txt")"
grep -E '^FAIL' "$LOG/gpu_big_variants.txt" | head -20 >> "$LOG/gpu_examples_failures.txt"
# casts done inside loads and stores (bf16/f16 widened, narrowed), scalar and vector forms
run_step "gpu_examples casts.txt" "$LOG/gpu_casts.txt" "$B/tests/gpu/gpu_examples" "$ROOT/tests/gpu/casts.txt"
note "gpu_examples casts: $(tail -1 "$LOG/gpu_casts.txt")"
grep -E '^FAIL' "$LOG/gpu_casts.txt" | head -20 >> "$LOG/gpu_examples_failures.txt"
# the atomics kernel that hung (issue 10 item 11: a barrier copied into both sides of a
# branch on the thread), under a timeout so that a hang is a FAIL line, not a stuck run
run_step "gpu_examples barriers.txt" "$LOG/gpu_barriers.txt" \
  timeout 120 "$B/tests/gpu/gpu_examples" "$ROOT/tests/gpu/barriers.txt"
[ $? = 124 ] && echo "FAIL tests/gpu/barriers.txt: no result after 120 s (a hang)" >> "$LOG/gpu_barriers.txt"
note "gpu_examples barriers: $(tail -1 "$LOG/gpu_barriers.txt")"
grep -E '^FAIL' "$LOG/gpu_barriers.txt" | head -20 >> "$LOG/gpu_examples_failures.txt"
# the math builtins, GPU against the interpreter bit for bit (10^7 inputs per f32 function)
run_step gpu_math "$LOG/gpu_math.txt" "$B/tests/gpu/gpu_math"
note "gpu_math: $(tail -1 "$LOG/gpu_math.txt")"
grep -E '^FAIL|^  ' "$LOG/gpu_math.txt" | head -40 >> "$LOG/gpu_examples_failures.txt"

# special values (NaN, +-0, +-inf, subnormals, type limits), bit for bit against the interpreter
if [ -x "$B/tests/gpu/gpu_special" ]; then
  run_step gpu_special "$LOG/gpu_special.txt" env \
    TILEC_SPECIAL_KERNEL="$ROOT/tests/gpu/kernels/special_values.tile" "$B/tests/gpu/gpu_special"
  note "gpu_special: $(tail -1 "$LOG/gpu_special.txt")"
  grep -E '^FAIL' "$LOG/gpu_special.txt" | head -40 > "$LOG/gpu_special_failures.txt"
fi

# atomics: the spin lock over 200 programs (acq_rel by default); timeout: a hang guard
run_step gpu_atomics "$LOG/gpu_atomics.txt" timeout 300 "$B/tests/gpu/gpu_atomics"
note "gpu_atomics: rc=$? $(grep -E '^(PASS|FAIL|SKIP)' "$LOG/gpu_atomics.txt" | head -3 | tr '\n' ' ')"

# every dot example against the C reference and the interpreter (gpu_dot.c), tuning off
if [ -x "$B/tests/gpu/gpu_dot" ]; then
  run_step gpu_dot "$LOG/gpu_dot.txt" timeout 600 "$B/tests/gpu/gpu_dot"
  [ $? = 124 ] && echo "FAIL gpu_dot: no result after 600 s (a hang)" >> "$LOG/gpu_dot.txt"
  note "gpu_dot: $(tail -1 "$LOG/gpu_dot.txt")"
  grep -E '^FAIL' "$LOG/gpu_dot.txt" | head -20 >> "$LOG/gpu_examples_failures.txt"
  # the backend's other lowerings (docs/backend.md, "Lowerings"), each alone for every
  # cubin: the 4096^3 cases left out; a cache of their own (the key has the lowering too)
  for low in 1 2 3; do
    run_step "gpu_dot, lowering $low" "$LOG/gpu_dot_lowering$low.txt" \
      env TILEC_LOWERING=$low TILE_CACHE_DIR="$TILE_CACHE_DIR-lowering$low" timeout 600 \
      "$B/tests/gpu/gpu_dot" --max-macs=1073741824
    note "gpu_dot, lowering $low: $(tail -1 "$LOG/gpu_dot_lowering$low.txt")"
    grep -E '^FAIL' "$LOG/gpu_dot_lowering$low.txt" | sed "s/^/lowering $low: /" | head -20 \
      >> "$LOG/gpu_examples_failures.txt"
  done
  # the tuned GEMM tiles, pinned (128x256x64 on 8 warps: 128 accumulators a thread, the
  # grouped epilogue of gemm_f8 with B row-major): gpu_dot runs the first variant only
  P="$LOG/pinned"; mkdir -p "$P"
  for f in matmul gemm_f8; do
    sed -E 's/^( *)tune BM in \[[^]]*\], BN in \[[^]]*\], BK in \[[^]]*\]/\1tune BM in [128], BN in [256], BK in [64]/;
            s/^( *)tune warps in \[[^]]*\]/\1tune warps in [8]/' "$ROOT/examples/$f.tile" > "$P/$f.tile"
  done
  run_step "gpu_dot 128x256x64 pinned" "$LOG/gpu_dot_pinned.txt" \
    env TILEC_EXAMPLES_DIR="$P" TILE_CACHE_DIR="$TILE_CACHE_DIR-pinned" timeout 600 \
    "$B/tests/gpu/gpu_dot" --only=matmul_f16,gemm_f8
  note "gpu_dot, 128x256x64 pinned: $(tail -1 "$LOG/gpu_dot_pinned.txt")"
  if ! grep -q 'variant BM=128, BN=256, BK=64' "$LOG/gpu_dot_pinned.txt"; then
    echo "FAIL gpu_dot pinned: the variant ran is not 128x256x64" >> "$LOG/gpu_dot_pinned.txt"
    step_failed "gpu_dot 128x256x64 pinned" "the variant ran is not 128x256x64"
  fi
  grep -E '^FAIL' "$LOG/gpu_dot_pinned.txt" | sed "s/^/pinned: /" | head -20 >> "$LOG/gpu_examples_failures.txt"
else
  note "gpu_dot: not built in $B"
  step_failed gpu_dot "not built in $B"
fi

run_step gpu_bench "$LOG/gpu_bench.txt" "$B/tests/gpu/gpu_bench"
note "gpu_bench:
$(grep -E 'launch overhead|^softmax|startup|FAIL' "$LOG/gpu_bench.txt")
tuner samples: $(grep -m1 -oE 'one launch per sample after an L2 flush|batches of launches \(no flush buffer\)' "$LOG/gpu_bench.txt" || echo 'no tuning logged')"

if command -v compute-sanitizer >/dev/null 2>&1; then
  for tool in memcheck racecheck; do
    for k in vector_add softmax layernorm cumsum_rows histogram row_stats; do
      run_step "$tool $k" "$LOG/sanitizer_${tool}_$k.txt" env TILE_TUNE=0 \
        compute-sanitizer --tool $tool --error-exitcode 3 \
        "$B/tests/gpu/gpu_examples" "$ROOT/examples/run.txt" --only=$k --given-size
      rc=$?
      errs=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOG/sanitizer_${tool}_$k.txt" | tail -1)
      note "$tool $k: rc=$rc $errs $(grep -E '^(PASS|FAIL)' "$LOG/sanitizer_${tool}_$k.txt" | cut -c1-4 | tr '\n' ' ')"
    done
    # the dot examples issue 9 names: matmul and batched matmul, the shapes up to 2^22 MACs
    for k in matmul_f16 batched_matmul; do
      run_step "$tool $k" "$LOG/sanitizer_${tool}_$k.txt" \
        compute-sanitizer --tool $tool --error-exitcode 3 \
        "$B/tests/gpu/gpu_dot" --only=$k --max-macs=4194304
      rc=$?
      errs=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOG/sanitizer_${tool}_$k.txt" | tail -1)
      note "$tool $k: rc=$rc $errs $(tail -1 "$LOG/sanitizer_${tool}_$k.txt")"
    done
  done
else
  note "compute-sanitizer not found: sanitizer runs skipped"
fi
echo "==== summary (logs in $LOG) ===="
echo "$summary"
steps_finish
