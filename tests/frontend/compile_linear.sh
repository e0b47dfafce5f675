#!/bin/sh
# compile_linear.sh TILEC WORKDIR KIND N: a compile that must stay linear in the size of
# its input (issue 35): N statements `s += 1.0;` on a constant-initialized var (KIND
# stmts: canonicalize's CSE buckets), N kernels (kernels) or N unused device functions
# (fns: sema's duplicate-name check), N device functions each called once (calls: the
# module's and the file's function lookups, the verifier's callee lookup) and N file
# constants each used once (consts).  Each takes a few seconds at these sizes; the
# quadratic versions took minutes, past the CTest TIMEOUT set on these tests.
set -e
T=$1 W=$2 KIND=$3 N=$4
mkdir -p "$W"
F="$W/linear_$KIND.tile"
case $KIND in
stmts) awk -v N="$N" 'BEGIN {
    print "kernel k(out: *f32) grid(1) {"
    print "    var s = 0.0;"
    for (i = 0; i < N; i++) print "    s += 1.0;"
    print "    store(out, s);"
    print "}" }' > "$F"
    EXPECT="constant {value=$N.0}" ;;
kernels) awk -v N="$N" 'BEGIN {
    for (i = 0; i < N; i++) printf "kernel k%d(out: *f32) grid(1) { store(out, 1.0); }\n", i }' > "$F"
    EXPECT="kernel @k$((N - 1)) " ;;
fns) awk -v N="$N" 'BEGIN {
    for (i = 0; i < N; i++) printf "fn g%d(x) { return x + 1.0; }\n", i
    printf "kernel k(out: *f32) grid(1) { store(out, g%d(1.0)); }\n", N - 1 }' > "$F"
    EXPECT="constant {value=2.0}" ;;
calls) awk -v N="$N" 'BEGIN {
    for (i = 0; i < N; i++) printf "fn g%d(x) { return x + 1.0; }\n", i
    print "kernel k(out: *f32, a: f32) grid(1) {"
    print "    var s = a;"
    for (i = 0; i < N; i++) printf "    s = g%d(s);\n", i
    print "    store(out, s);"
    print "}" }' > "$F"
    EXPECT="kernel @k " ;;
consts) awk -v N="$N" 'BEGIN {
    for (i = 0; i < N; i++) printf "const C%d = %d;\n", i, i % 2
    print "kernel k(out: *i32) grid(1) {"
    print "    var s = 0;"
    for (i = 0; i < N; i++) printf "    s += C%d;\n", i
    print "    store(out, s);"
    print "}" }' > "$F"
    EXPECT="constant {value=$((N / 2))}" ;;
*) echo "unknown kind $KIND" >&2; exit 2 ;;
esac
"$T" "$F" --emit=tir -o "$W/linear_$KIND.tir"
grep -q -F "$EXPECT" "$W/linear_$KIND.tir" || { echo "FAIL: $KIND: no '$EXPECT' in the IR" >&2; exit 1; }
rm -f "$F" "$W/linear_$KIND.tir"
echo "ok: $KIND x $N"
