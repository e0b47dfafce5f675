#!/bin/sh
# expect.sh EXIT [--out RE]... [--err RE]... [--not-out RE] [--not-err RE] [--no-out]
#           [--count-out RE N] [--count-err RE N] -- CMD...
# Runs CMD and fails unless its exit status is EXIT and its output matches every
# check: --out (stdout), --err (stderr), both extended regular expressions.
want=$1; shift
checks=$(mktemp); trap 'rm -f "$checks" "$checks.out" "$checks.err"' EXIT
while [ "$1" != "--" ]; do
    case "$1" in
    --out|--err|--not-out|--not-err) printf '%s\n%s\n' "$1" "$2" >>"$checks"; shift 2 ;;
    --no-out) printf '%s\n\n' "$1" >>"$checks"; shift ;;
    --count-out|--count-err) printf '%s\n%s\t%s\n' "$1" "$2" "$3" >>"$checks"; shift 3 ;;
    *) echo "expect.sh: bad option $1" >&2; exit 2 ;;
    esac
done
shift
"$@" >"$checks.out" 2>"$checks.err"
got=$?
fail=0
if [ "$got" != "$want" ]; then
    echo "FAIL: exit status $got, expected $want"; fail=1
fi
while IFS= read -r kind && IFS= read -r re; do
    case "$kind" in
    --out) grep -Eq -- "$re" "$checks.out" || { echo "FAIL: stdout lacks /$re/"; fail=1; } ;;
    --err) grep -Eq -- "$re" "$checks.err" || { echo "FAIL: stderr lacks /$re/"; fail=1; } ;;
    --not-out) grep -Eq -- "$re" "$checks.out" && { echo "FAIL: stdout has /$re/"; fail=1; } ;;
    --not-err) grep -Eq -- "$re" "$checks.err" && { echo "FAIL: stderr has /$re/"; fail=1; } ;;
    --no-out) [ -s "$checks.out" ] && { echo "FAIL: stdout is not empty"; fail=1; } ;;
    --count-out|--count-err)
        pat=$(printf '%s' "$re" | cut -f1); n=$(printf '%s' "$re" | cut -f2)
        f="$checks.err"; what=stderr
        [ "$kind" = --count-out ] && { f="$checks.out"; what=stdout; }
        c=$(grep -Ec -- "$pat" "$f")
        [ "$c" = "$n" ] || { echo "FAIL: $what has $c lines matching /$pat/, expected $n"; fail=1; } ;;
    esac
done <"$checks"
if [ $fail != 0 ]; then
    echo "--- command: $*"; echo "--- stdout:"; cat "$checks.out"; echo "--- stderr:"; cat "$checks.err"
fi
exit $fail
