#!/bin/sh
# One answer to "which thread holds which element" (docs/layouts.md): outside ir/ and
# analysis/ no source reads the blocked form or a TirLinear's fields, and in backend/ only
# lower_threadmap.c turns lane and warp ids into coordinates (lower.c makes the ids).
#   one_answer.sh SOURCE_DIR
src=$1
cd "$src" || exit 2
fail=0
dirs="backend passes frontend driver interp runtime tools python"
found=$(grep -rnE 'TirBlockedForm|tir_layout_blocked_form|tir_blocked_(span|distinct)' $dirs --include='*.c' --include='*.h' 2>/dev/null)
if [ -n "$found" ]; then
    echo "the blocked form read outside ir/ and analysis/ (ask analysis_blocked):"
    echo "$found"
    fail=1
fi
found=$(grep -rnE '(->|\.)(inbits|outbits|basis|in_kind|out_kind|nin|nout)\b' $dirs --include='*.c' --include='*.h' 2>/dev/null)
if [ -n "$found" ]; then
    echo "a TirLinear field read outside ir/ and analysis/ (ask analysis_thread_map):"
    echo "$found"
    fail=1
fi
found=$(grep -nE 'L->(lane|warp)\b' backend/*.c | grep -vE '^backend/(lower_threadmap|lower)\.c:')
if [ -n "$found" ]; then
    echo "a thread coordinate computed outside backend/lower_threadmap.c:"
    echo "$found"
    fail=1
fi
for f in mma_base tb_mma_base_at tb_mma_offset ring_offset_at ring_linear ldmatrix_offset_at; do
    found=$(grep -rnw "$f" backend passes 2>/dev/null)
    if [ -n "$found" ]; then
        echo "a numeric twin of a layout map ($f) is back: the map's numbers are analysis/'s"
        echo "$found"
        fail=1
    fi
done
[ $fail = 0 ] && echo ok
exit $fail
