#!/bin/sh
# gpu_check.sh TILEC [WORKDIR]: issue35_cases.tile on the interpreter and on the GPU; every
# stored element must agree (the folded constants are what the GPU computes at run time).
# Needs a GPU; the lead runs it on the lent machine.  DEVICES=interp runs only the
# interpreter's half (CTest's random.issue35_cases).
set -e
T=$1 W=${2:-/tmp/issue35_gpu}
D=$(dirname "$0")
mkdir -p "$W"
ARGS="x100=100 big=2147483647 one=1 s32=32 two=2 seven=7 zero=0 fa=16777216.0 fb=1.0 fhuge=1e30 fnan=nan fone=1.0 ftwo=2.0 m1=-1"
for dev in ${DEVICES:-interp cuda}; do
    "$T" run "$D/issue35_cases.tile" --kernel consts --device=$dev out=zeros:8 f=zeros:10 u=zeros:2 $ARGS \
        --save out="$W/out.$dev" --save f="$W/f.$dev" --save u="$W/u.$dev"
done
case " ${DEVICES:-interp cuda} " in
*" cuda "*)
    for b in out f u; do
        cmp "$W/$b.interp" "$W/$b.cuda" || { echo "FAIL: $b differs between the interpreter and the GPU" >&2; exit 1; }
    done ;;
esac
# the folded slots equal the run-time slots (pairs 0/1, 2/3, ...)
od -An -v -tx4 -w4 "$W/out.interp" | paste - - | awk '$1 != $2 { print "FAIL: out pair " NR - 1 ": " $0; bad = 1 } END { exit bad }'
od -An -v -tx4 -w4 "$W/f.interp" | paste - - | awk '$1 != $2 { print "FAIL: f pair " NR - 1 ": " $0; bad = 1 } END { exit bad }'
od -An -v -tx4 -w4 "$W/u.interp" | paste - - | awk '$1 != $2 { print "FAIL: u pair " NR - 1 ": " $0; bad = 1 } END { exit bad }'
echo "ok: issue 35's folded constants equal their run-time values on: ${DEVICES:-interp cuda}"
