#!/bin/sh
# The GPU test run, for the lent GPU machine.  Builds nothing: give it a build directory
# made on the build machine (carried over), e.g.
#     tests/gpu/run.sh build-runtime
# Runs the runtime tests and the GPU tests (ctest -L 'runtime|gpu'), the GPU example
# comparison directly (its per-case lines), the runtime benchmarks, then compute-sanitizer
# memcheck and racecheck on a few examples through `tilec run --device=cuda`.
# Logs go to $OUT (if set) else ./gpu-logs; a short summary is printed last.
set -u
B=${1:-build-runtime}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LOG=${OUT:-$ROOT/gpu-logs}
mkdir -p "$LOG"
export TILE_CACHE_DIR="$LOG/cache"
summary=""
note() { summary="$summary
$1"; }

if [ ! -x "$B/tests/gpu/gpu_examples" ]; then
  echo "no $B/tests/gpu/gpu_examples: build first (cmake --build $B)"; exit 2
fi
nvidia-smi -L > "$LOG/nvidia-smi.txt" 2>&1

(cd "$B" && ctest -L 'runtime|gpu' --output-on-failure) > "$LOG/ctest.txt" 2>&1
note "ctest runtime|gpu: $(grep -E 'tests passed|tests failed' "$LOG/ctest.txt" | tail -1)"

"$B/tests/gpu/gpu_examples" > "$LOG/gpu_examples.txt" 2>&1
note "gpu_examples: $(tail -1 "$LOG/gpu_examples.txt")"
grep -E '^(FAIL|SKIP)' "$LOG/gpu_examples.txt" | head -20 > "$LOG/gpu_examples_failures.txt"

"$B/tests/gpu/gpu_bench" > "$LOG/gpu_bench.txt" 2>&1
note "gpu_bench:
$(grep -E 'launch overhead|first launch|new key|again|startup' "$LOG/gpu_bench.txt")"

TILEC="$B/tools/tilec"
if command -v compute-sanitizer >/dev/null 2>&1; then
  for tool in memcheck racecheck; do
    for ex in "examples/vector_add.tile vector_add x=randn:5000:1 y=randn:5000:2 out=zeros:5000 n=5000" \
              "examples/softmax.tile softmax x=randn:3000:1 out=zeros:3000 rows=3 cols=1000" \
              "examples/layernorm.tile layernorm x=randn:3000:1 w=randn:1000:2 b=randn:1000:3 y=zeros:3000 rows=3 cols=1000 eps=1e-5" \
              "examples/cumsum.tile cumsum_rows x=randn:3000:1 out=zeros:3000 rows=3 cols=1000" \
              "examples/histogram.tile histogram --grid=3 x=rand:5000:1 hist=zeros:16 bounds=zeros:2 n=5000 nbins=16"; do
      set -- $ex
      f=$1; k=$2; shift 2
      name=$(basename "$f" .tile)_$k
      (cd "$ROOT" && TILE_TUNE=0 compute-sanitizer --tool $tool --error-exitcode 3 \
         "$TILEC" run "$f" --kernel "$k" --device=cuda "$@") > "$LOG/sanitizer_${tool}_$name.txt" 2>&1
      rc=$?
      errs=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOG/sanitizer_${tool}_$name.txt" | tail -1)
      note "$tool $name: rc=$rc $errs"
    done
  done
else
  note "compute-sanitizer not found: sanitizer runs skipped"
fi
echo "==== summary (logs in $LOG) ===="
echo "$summary"
