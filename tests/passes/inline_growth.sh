#!/bin/sh
# inline_growth.sh TILE_OPT WORKDIR: an exponential call graph past inline's growth limit
# (2^20 copied ops, passes/inline.c) is one located error, not one per remaining call.
# @k calls @f0 once, each @fI calls @fI+1 twice, and the leaf @f14 is one `for` whose body
# has 64 ops: the ops copied into @k are almost all inside that loop (2^14 copies of 67
# ops, 1.1M), so the limit is reached only if ops inside regions count (a count that
# skipped them would see 50K and inline it all), and it is reached in the last round, with
# ~800 calls of @f14 still left (each one used to print the error again: an input of this
# kind printed it 1.5 million times).  A second kernel @k2 calls @f0 as well: the pass stops
# at the first function past the limit rather than grow the next one as far to say the same.
set -e
T=$1 W=$2
mkdir -p "$W"
awk -v N=14 -v K=64 'BEGIN {
    print "kernel @k (%p: ptr<i32>, %x: i32) {"
    print "  %y = call {callee=@f0} %x : i32"
    print "  store %p, %y"
    print "}"
    print "kernel @k2 (%p: ptr<i32>, %x: i32) {"
    print "  %y = call {callee=@f0} %x : i32"
    print "  store %p, %y"
    print "}"
    for (i = 0; i < N; i++) {
        printf "func @f%d (%%x: i32) -> i32 {\n", i
        printf "  %%a = call {callee=@f%d} %%x : i32\n", i + 1
        printf "  %%b = call {callee=@f%d} %%a : i32\n", i + 1
        print "  func_return %b"
        print "}"
    }
    printf "func @f%d (%%x: i32) -> i32 {\n", N
    print "  %zero = constant {value=0} : i32"
    print "  %one = constant {value=1} : i32"
    print "  %r = for %zero, %x, %one, %x : i32 {"
    print "  ^(%i: i32, %acc: i32):"
    printf "    %%m0 = add %%acc, %%i : i32\n"
    for (j = 1; j < K; j++) printf "    %%m%d = add %%m%d, %%i : i32\n", j, j - 1
    printf "    yield %%m%d\n", K - 1
    print "  }"
    print "  func_return %r"
    print "}"
}' > "$W/growth.tir"
rc=0
"$T" --pass=inline "$W/growth.tir" >/dev/null 2>"$W/growth.err" || rc=$?
fail() { echo "FAIL: $*"; echo "--- stderr (first lines):"; head -5 "$W/growth.err"; exit 1; }
[ $rc = 1 ] || fail "tile-opt exited $rc, expected 1 (the growth limit)"
n=$(grep -c 'error' "$W/growth.err" || true)
[ "$n" = 1 ] || fail "$n error lines, expected 1"
grep -q '^inline: @k: error: inlining @f14 (level 15 of inlining) grows the function past 1048576 ops; is the call graph exponential?$' "$W/growth.err" ||
    fail "the error does not name the function, the callee, the level and the limit"
echo "one growth error: ok"
