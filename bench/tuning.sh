#!/bin/sh
# GPU measurements of issue 34's tuning work, for the lent GPU machine (H200):
#   1. cold tuning of matmul (f16 4096^3) and attention (f16 Z4 H32 N4096 D128): the wall
#      time of a cold `tilec run --bench` (compiles and trials) and the median it reaches,
#      under TILE_TUNE_POLICY=exhaustive, model:K and random:K.  model:K learns from a log
#      of other sizes of the same kernel (recorded first, exhaustive); each measured run
#      starts from an empty cache holding only that log, so compiles are counted;
#   2. the joint search over ptxas controls: TILE_TUNE_PTXAS on vector add, softmax,
#      layernorm and matmul, the variant chosen and the median, against without;
#   3. the replay of everything recorded: tilec tune --replay, every policy;
#   4. roofline points of the runs (tilec report FILE.tile ... --ms) and the SVG.
#
#     bench/tuning.sh [BUILD_DIR] [K]         (default build, K=4)
#
# Logs and the SVG go to $OUT (if set) else ./tuning-logs.  Compare numbers only within
# one run of this script on one machine.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$ROOT/build}" && pwd)
K=${2:-4}
T="$B/tools/tilec"
LOG=${OUT:-$ROOT/tuning-logs}
mkdir -p "$LOG"
EX="$ROOT/examples"
POINTS="$LOG/points.csv"
: >"$POINTS"

now() { date +%s.%N; }

# mm N: matmul N^3 f16 arguments
mm() { n=$1; echo "a=randn:$((n * n)):1 b=randn:$((n * n)):2 c=zeros:$((n * n)) M=$n N=$n K=$n" \
    "stride_am=$n stride_ak=1 stride_bk=$n stride_bn=1 stride_cm=$n stride_cn=1"; }
# att S: attention Z4 H32 S D128 arguments
att() { s=$1; e=$((128 * s * 128)); echo "-D D=128 q=randn:$e:1 k=randn:$e:2 v=randn:$e:3 o=zeros:$e" \
    "heads=128 S=$s scale=0.08838834764831845"; }

# cold NAME CACHE ENV... -- tilec run ARGS: one cold run, its wall time and median
cold() {
    name=$1; cache=$2; shift 2
    envs=""
    while [ "$1" != "--" ]; do envs="$envs $1"; shift; done
    shift
    t0=$(now)
    env TILE_CACHE_DIR="$cache" TILE_TUNE_LOG=1 $envs "$T" run "$@" --bench >"$LOG/$name.txt" 2>&1
    rc=$?
    t1=$(now)
    med=$(sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' "$LOG/$name.txt" | tail -1)
    best=$(sed -n 's/.*best variant \[\(.*\)\] on.*/\1/p' "$LOG/$name.txt" | tail -1)
    printf '%-34s rc=%s cold %.1f s  median %s ms  [%s]\n' "$name" "$rc" "$(awk "BEGIN { print $t1 - $t0 }")" \
        "${med:-?}" "$best" | tee -a "$LOG/summary.txt"
    [ -f "$cache/tune.log" ] && cat "$cache/tune.log" >>"$LOG/all.tune.log"
}

nvidia-smi -L >"$LOG/nvidia-smi.txt" 2>&1
: >"$LOG/summary.txt"
: >"$LOG/all.tune.log"

# ---- 1. cold tuning under each policy -------------------------------------------------------
for kern in matmul attention; do
    train="$LOG/train-$kern"
    rm -rf "$train"
    if [ $kern = matmul ]; then
        for n in 1024 2048 3072; do cold "train-matmul-$n" "$train" -- $EX/matmul.tile --kernel matmul $(mm $n); done
        target="$EX/matmul.tile --kernel matmul $(mm 4096)"
    else
        for s in 1024 2048; do cold "train-attention-$s" "$train" -- $EX/attention.tile --kernel attention $(att $s); done
        target="$EX/attention.tile --kernel attention $(att 4096)"
    fi
    for pol in exhaustive "model:$K" "random:$K"; do
        c="$LOG/cold-$kern-$(echo $pol | tr : _)"
        rm -rf "$c"; mkdir -p "$c"
        cp "$train/tune.log" "$c/tune.log"      # the model's history, nothing compiled
        cold "$kern-$pol" "$c" TILE_TUNE_POLICY=$pol -- $target
    done
done

# ---- 2. the joint search over ptxas controls --------------------------------------------------
PTXAS_SETS="-O1|-O2|--def-load-cache=cg|--register-usage-level=10|--allow-expensive-optimizations=true"
for case in \
    "vector_add $EX/vector_add.tile --kernel vector_add x=randn:268435456:1 y=randn:268435456:2 out=zeros:268435456 n=268435456" \
    "softmax $EX/softmax.tile --kernel softmax x=randn:67108864:1 out=zeros:67108864 rows=16384 cols=4096" \
    "layernorm $EX/layernorm.tile --kernel layernorm x=randn:67108864:1 w=randn:4096:2 b=randn:4096:3 y=zeros:67108864 rows=16384 cols=4096 eps=1e-5" \
    "matmul $EX/matmul.tile --kernel matmul $(mm 4096)"; do
    set -- $case
    name=$1; shift
    rm -rf "$LOG/joint-$name-off" "$LOG/joint-$name-on"
    cold "joint-$name-off" "$LOG/joint-$name-off" -- "$@"
    cold "joint-$name-on" "$LOG/joint-$name-on" TILE_TUNE_PTXAS="$PTXAS_SETS" -- "$@"
    # the same choice again from the cache, timed warm: the gain without the tuning noise
    for mode in off on; do
        env TILE_CACHE_DIR="$LOG/joint-$name-$mode" TILE_TUNE_PTXAS="$PTXAS_SETS" "$T" run "$@" --bench=200 \
            >"$LOG/joint-$name-$mode-warm.txt" 2>&1
        printf '%-34s warm %s\n' "joint-$name-$mode" "$(grep median "$LOG/joint-$name-$mode-warm.txt")" |
            tee -a "$LOG/summary.txt"
    done
    # roofline point of the warm run with the joint choice
    ms=$(sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' "$LOG/joint-$name-on-warm.txt" | tail -1)
    [ -n "$ms" ] && "$T" report "$@" --ms="$ms" | sed -n 's/^point: //p' >>"$POINTS"
done

# ---- 3. replay -----------------------------------------------------------------------------------
"$T" tune --replay "$LOG/all.tune.log" --k "$K" >"$LOG/replay.txt" 2>&1
sed -n '/^summary/,$p' "$LOG/replay.txt" | tee -a "$LOG/summary.txt"

# ---- 4. roofline ---------------------------------------------------------------------------------
"$T" report --roofline "$LOG/roofline.svg" --gpu h200 "$POINTS" | tee -a "$LOG/summary.txt"
echo "logs in $LOG"
