#!/bin/sh
# bundle_lowering.sh TILEC ARGS...: a bundle of a variant whose lowering-0 cubin spills
# (tests/backend/CMakeLists.txt names one) stores, beside each form's cubin, the PTX of the
# lowering it kept (tb_emit_cubin_ptx): here one that reads %tid.x again after the dot loop
# (lowerings 1 and 3, docs/backend.md "Lowerings"); with $TILEC_LOWERING=0 none does.
tilec=$1; shift
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
"$tilec" "$@" --emit=bundle -o "$dir/b.bin" >"$dir/out" 2>&1 || { echo "FAIL: the bundle failed:"; cat "$dir/out"; exit 1; }
TILEC_LOWERING=0 "$tilec" "$@" --emit=bundle -o "$dir/b0.bin" >"$dir/out0" 2>&1 || {
    echo "FAIL: the lowering-0 bundle failed:"; cat "$dir/out0"; exit 1; }
kept=$(grep -c -a 'mov.u32 t, %tid.x' "$dir/b.bin")
forced=$(grep -c -a 'mov.u32 t, %tid.x' "$dir/b0.bin")
if [ "$kept" -lt 1 ] || [ "$forced" != 0 ]; then
    echo "FAIL: PTX with the thread id read again: $kept in the bundle (want >= 1), $forced with TILEC_LOWERING=0 (want 0)"
    exit 1
fi
echo "the bundle's PTX is the kept lowering's ($kept forms; none with TILEC_LOWERING=0)"
