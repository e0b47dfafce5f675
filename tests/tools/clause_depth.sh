#!/bin/sh
# clause_depth.sh TILEC WORKDIR: a grid clause nested 200 levels deep (200 binary operators
# right-nested, the parameter at the bottom) is accepted, and the error of its run lists the
# parameter's value; at 201 levels the checker refuses the clause, located.  The checker's
# bound (frontend/sema.c) is what keeps every later walk of a clause expression (the
# evaluator, the parameter list of the run's grid error, driver/run.c) inside its own bound
# of 200, so those bounds are never reached.
set -u
T=$1 W=$2
mkdir -p "$W"
deep() {   # deep LEVELS FILE: grid(1 + (1 + (... (n)...)))
    awk -v d="$1" 'BEGIN {
        e = "n"
        for (i = 0; i < d; i++) e = "1 + (" e ")"
        print "kernel k(x: *f32, n: i32) grid(" e ") { store(x, 1.0); }"
    }' > "$2"
}
fail() { echo "FAIL: $*"; echo "--- stderr:"; cut -c1-300 "$W/err"; exit 1; }
deep 200 "$W/d200.tile"
"$T" run "$W/d200.tile" --device=interp --kernel k x=zeros:1 n=-200 >/dev/null 2>"$W/err"
rc=$?
[ $rc = 1 ] || fail "200 levels, n = -200: exit $rc, expected 1 (a grid of 0)"
grep -q "of kernel 'k' is 0 with n = -200; the grid needs 1\.\." "$W/err" ||
    fail "200 levels: the grid error does not list n = -200"
"$T" run "$W/d200.tile" --device=interp --kernel k x=zeros:1 n=0 >/dev/null 2>"$W/err" ||
    fail "200 levels, n = 0: the run failed"
deep 201 "$W/d201.tile"
"$T" "$W/d201.tile" --emit=tir -o "$W/d201.tir" 2>"$W/err"
rc=$?
[ $rc = 1 ] || fail "201 levels: exit $rc, expected 1"
grep -q "^$W/d201.tile:1:1032: error: expression too deeply nested" "$W/err" ||
    fail "201 levels: no located 'expression too deeply nested'"
echo "clause depth: 200 levels run, 201 refused: ok"
