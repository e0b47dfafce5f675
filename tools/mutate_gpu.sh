#!/bin/bash
# One mutant against a GPU test, which the CPU suite (tools/mutate.py) cannot run.  The GPU
# machine has no LLVM, so the mutant is built and packed on the build machine and carried:
#
#   tools/mutate_gpu.sh pack FILE:LINE:INDEX BUILD_DIR CARRY_DIR     (on the build machine)
#       plants the mutant (tools/mutate.py --apply: the numbering of `tools/mutate.py --list
#       --per-file 0 FILE`), packs BUILD_DIR into CARRY_DIR with tools/gpu-pack.sh (BUILD_DIR
#       configured with -DTILEC_LLVM_STATIC=ON, as for any GPU pack), and restores FILE byte
#       for byte, also when the build fails.  CARRY_DIR/MUTANT names the mutant.  BUILD_DIR
#       is left holding the mutant's build: the next build there rebuilds FILE.
#   tools/mutate_gpu.sh run CARRY_DIR CMD...                          (on the GPU machine)
#       runs CMD (a GPU test of the pack, e.g. CARRY_DIR/tests/gpu/gpu_math) with a kernel
#       cache of its own, and prints one line: "killed" (CMD failed), "survived" (CMD passed)
#       or "not run" (exit 77: no GPU), with the mutant.  Exit 0 when killed, 1 when it
#       survived, 2 when nothing was decided.  CMD's output goes to $OUT/mutant.log (if $OUT
#       is set) else CARRY_DIR/mutant.log.
#
# A mutant counts as killed only if the same CMD passes on the unmutated pack: the regular
# GPU run (tests/gpu/run.sh on tools/gpu-pack.sh's build-gpu) shows that.  Both packs do not
# fit in one carry of 64 MiB, so they travel in separate calls.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
usage() {
    sed -n '2,16p' "$0" >&2
    exit 2
}
[ $# -ge 1 ] || usage
mode=$1
shift
case $mode in
pack)
    [ $# = 3 ] || usage
    spec=$1 B=$2 C=$3
    file=${spec%:*:*}
    case $file in /*) ;; *) file=$ROOT/$file ;; esac
    [ -f "$file" ] || { echo "mutate_gpu: no file $file" >&2; exit 2; }
    backup=$(mktemp)
    cp -p "$file" "$backup"
    trap 'cp "$backup" "$file"; rm -f "$backup"' EXIT
    what=$(cd "$ROOT" && python3 tools/mutate.py --apply "$spec") || exit 2
    echo "mutate_gpu: planted $what"
    if ! bash "$ROOT/tools/gpu-pack.sh" "$B" "$C"; then
        echo "mutate_gpu: the mutant did not build or pack (a stillborn mutant, or see above)" >&2
        exit 1
    fi
    echo "$what" > "$C/MUTANT"
    echo "mutate_gpu: $C holds the mutant's pack; on the GPU machine (carry $C):"
    echo "    bash tools/mutate_gpu.sh run $C $C/tests/gpu/gpu_math"
    ;;
run)
    [ $# -ge 2 ] || usage
    C=$1
    shift
    [ -f "$C/MUTANT" ] || { echo "mutate_gpu: $C/MUTANT missing: not a pack of tools/mutate_gpu.sh pack" >&2; exit 2; }
    what=$(cat "$C/MUTANT")
    log=${OUT:-$C}/mutant.log
    cache=$(mktemp -d)
    TILE_CACHE_DIR=$cache "$@" > "$log" 2>&1
    rc=$?
    rm -rf "$cache"
    tail -n 5 "$log"
    case $rc in
    0) echo "survived: $what ($* passed)"; exit 1 ;;
    77) echo "not run: $what ($*: no GPU, exit 77)"; exit 2 ;;
    *) echo "killed: $what ($* exited $rc; log $log)"; exit 0 ;;
    esac
    ;;
*) usage ;;
esac
