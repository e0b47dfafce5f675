#!/bin/sh
# many_statements.sh TILEC WORKDIR: a kernel of 100,000 statements (50,000 `let`s, each read
# by the next assignment of a `var`) compiles to tile IR and runs on the interpreter with the
# right result.  The front end once looked names up along the whole scope chain: 100,000
# statements took 259 s (issue 10, item 6); the test's TIMEOUT is a hang guard, not a limit
# on speed.
set -e
T=$1 W=$2
mkdir -p "$W"
awk 'BEGIN {
    print "kernel big(out: *i32) grid(1) {"
    print "    var x = arange(0, 64);"
    for (i = 0; i < 50000; i++) { printf "    let t%d = x + 1;\n", i; printf "    x = t%d + 1;\n", i }
    print "    store(out + arange(0, 64), x);"
    print "}"
}' > "$W/many.tile"
"$T" "$W/many.tile" --emit=tir -o "$W/many.tir"
grep -q "store" "$W/many.tir"
# 64 lanes, lane i ends at i + 100000: the first and the last
"$T" run "$W/many.tile" --device=interp --kernel big out=zeros:64 --save out="$W/many.bin"
od -An -t d4 -v "$W/many.bin" | tr -s ' \n' '\n\n' | sed '/^$/d' > "$W/many.txt"
[ "$(sed -n 1p "$W/many.txt")" = 100000 ] || { echo "FAIL: out[0] = $(sed -n 1p "$W/many.txt"), want 100000"; exit 1; }
[ "$(sed -n 64p "$W/many.txt")" = 100063 ] || { echo "FAIL: out[63] = $(sed -n 64p "$W/many.txt"), want 100063"; exit 1; }
echo "100,000 statements: ok"
