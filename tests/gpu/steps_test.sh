#!/bin/sh
# tests/gpu/run.sh's step machinery without a GPU: run.sh is run on a copy of the tree
# whose build directory holds fake GPU programs (shell scripts that pass), once with every
# input present (exit 0, "all N steps passed") and once with tests/gpu/casts.txt missing,
# the case that once ended "3 of 3 failed" with exit 0: now exit 1, and the failed step
# is listed last.  Then bench/gpu.sh's use of the same runner: a failing step is exit 1.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

R=$T/root
mkdir -p "$R/tests/gpu/kernels" "$R/examples" "$R/bench" "$R/build/tests/gpu" "$R/build/runtime" "$T/bin"
: > "$R/build/runtime/libtilert.so"   # bench/gpu.sh checks that it is there
cp "$SRC/tests/gpu/run.sh" "$SRC/tests/gpu/steps.sh" "$SRC/tests/gpu/big_variants.txt" \
   "$SRC/tests/gpu/casts.txt" "$SRC/tests/gpu/barriers.txt" "$R/tests/gpu/"
cp "$SRC/bench/gpu.sh" "$R/bench/"
cp "$SRC/examples/run.txt" "$SRC/examples/matmul.tile" "$SRC/examples/gemm_f8.tile" "$R/examples/"

# One fake for every GPU program: a file argument must exist (as the real programs read
# it); gpu_dot names the pinned variant, as the real one does.
cat > "$R/build/tests/gpu/fake" <<'EOF'
#!/bin/sh
for a in "$@"; do
  case $a in
    -*) ;;
    *) [ -f "$a" ] || { echo "FAIL: cannot read $a"; echo "summary: 0 passed, 3 failed"; exit 1; } ;;
  esac
done
case $(basename "$0") in
  gpu_dot) echo "PASS matmul_f16 (variant BM=128, BN=256, BK=64)" ;;
esac
echo "summary: 3 passed, 0 failed"
EOF
chmod +x "$R/build/tests/gpu/fake"
for p in gpu_examples gpu_math gpu_special gpu_atomics gpu_dot gpu_bench; do
  ln -s fake "$R/build/tests/gpu/$p"
done
# no GPU tools here: hide any compute-sanitizer or nvidia-smi of this machine
for t in compute-sanitizer nvidia-smi; do
  printf '#!/bin/sh\nexit 127\n' > "$T/bin/$t"
done
# no compute-sanitizer: its loops are skipped (command -v finds nothing)
rm "$T/bin/compute-sanitizer"
export PATH="$T/bin:$PATH"

OUT=$T/logs1 sh "$R/tests/gpu/run.sh" "$R/build" > "$T/pass.txt" 2>&1
rc=$?
[ $rc = 0 ] || { cat "$T/pass.txt"; fail "run.sh with every step passing: exit $rc, want 0"; }
tail -1 "$T/pass.txt" | grep -q '^==== all [0-9]* steps passed ====$' ||
  { cat "$T/pass.txt"; fail "run.sh: no 'all N steps passed' line last"; }

rm "$R/tests/gpu/casts.txt"
OUT=$T/logs2 sh "$R/tests/gpu/run.sh" "$R/build" > "$T/fail.txt" 2>&1
rc=$?
[ $rc = 1 ] || { cat "$T/fail.txt"; fail "run.sh with a failing step: exit $rc, want 1"; }
tail -2 "$T/fail.txt" | head -1 | grep -q '^==== FAILED: 1 of [0-9]* steps ====$' ||
  { cat "$T/fail.txt"; fail "run.sh: the failure count is not second to last"; }
tail -1 "$T/fail.txt" | grep -q '^  gpu_examples casts.txt: exit 1, log ' ||
  { cat "$T/fail.txt"; fail "run.sh: the failed step is not listed last"; }

# bench/gpu.sh: the GPU tests fail (casts.txt still missing), the rest is absent
(cd "$R" && OUT=$T/bench TILE_CACHE_DIR=$T/cache bash bench/gpu.sh build > "$T/bench.txt" 2>&1)
rc=$?
[ $rc = 1 ] || { cat "$T/bench.txt"; fail "bench/gpu.sh with a failing step: exit $rc, want 1"; }
grep -q '^  GPU tests (tests/gpu/run.sh): exit 1' "$T/bench.txt" ||
  { cat "$T/bench.txt"; fail "bench/gpu.sh: the failed GPU tests are not listed"; }
echo "PASS: run.sh and bench/gpu.sh exit 1 on a failed step and list it last"
