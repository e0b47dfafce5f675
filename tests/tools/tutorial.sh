#!/bin/sh
# tutorial.sh TILEC DEVICE FILE KERNEL ARGS...: the tutorial's kernel checked with
# `tilec check` (every variant against the interpreter) on DEVICE; on cuda without a
# GPU it prints SKIP and exits 77 (CTest's skip code for the gpu label).
T=$1; DEV=$2; F=$3; K=$4; shift 4
out=$("$T" check "$F" --kernel "$K" --device="$DEV" "$@" 2>&1); rc=$?
if [ "$DEV" = cuda ] && [ $rc -ne 0 ] && printf '%s' "$out" | grep -q -- "--device=cuda:"; then
    echo "SKIP: no CUDA device"; exit 77
fi
printf '%s\n' "$out"
[ $rc -eq 0 ] && printf '%s' "$out" | grep -Eq "check: [1-9][0-9]* passed, 0 failed"
