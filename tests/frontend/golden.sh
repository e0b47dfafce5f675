#!/bin/sh
# golden.sh DRIVER CASE EXPECTED [ARGS...]
# Runs DRIVER CASE ARGS in the current directory and compares its stdout with the
# EXPECTED file byte for byte.  An .ast or an empty .err expects exit status 0, a
# non-empty .err a failing one.
driver=$1 case=$2 expected=$3
shift 3
actual=$(mktemp) || exit 2
trap 'rm -f "$actual"' EXIT
"$driver" "$case" "$@" >"$actual"
rc=$?
if [ "$rc" -gt 1 ]; then
    echo "FAIL: $driver $case exited with $rc (crash or usage error)"
    exit 1
fi
if ! cmp -s "$expected" "$actual"; then
    echo "FAIL: output of $driver $case differs from $expected:"
    diff -u "$expected" "$actual"
    exit 1
fi
case $expected in
*.err) if grep -q ": error:" "$expected"; then want=1; else want=0; fi ;;
*) want=0 ;;
esac
if [ "$rc" -ne "$want" ]; then
    echo "FAIL: $driver $case exited with $rc, expected $want"
    exit 1
fi
exit 0
