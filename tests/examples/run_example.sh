#!/usr/bin/env bash
# Runs one example of examples/ on the interpreter at several sizes (ragged ones included)
# with fresh random inputs, and checks every output against the plain C reference (ref.c).
#
#   run_example.sh TILEC EXAMPLE_REF EXAMPLES_DIR WORK_DIR EXAMPLE
#
# For each size: outputs start poisoned (0xff bytes: NaN for floats, -1 for ints), so a
# kernel that writes nothing, or misses lanes, fails; every buffer is saved after the run
# (--save NAME=DIR/NAME.bin), buffers the kernel updates keep their initial contents in
# DIR/NAME.in, and `example_ref check KERNEL DIR ...` compares. Exit 0 only if every case
# passes; each failure prints the command and the first mismatch.
set -u
if [ $# -ne 5 ]; then
    echo "usage: $0 TILEC EXAMPLE_REF EXAMPLES_DIR WORK_DIR EXAMPLE" >&2
    exit 2
fi
TILEC=$1 REF=$2 SRC=$3 WORK=$4 EX=$5
if [ ! -x "$TILEC" ]; then
    echo "FAIL: tilec not built ($TILEC)" >&2
    exit 1
fi
FAILS=0
CASES=0
OUT=""    # stdout+stderr of the last tilec run

# case_dir NAME: a fresh directory for one case, in $D
case_dir() {
    D="$WORK/$EX/$1"
    rm -rf "$D"
    mkdir -p "$D"
    CASE=$1
    CASES=$((CASES + 1))
}

fail() {
    echo "FAIL [$EX/$CASE]: $*"
    FAILS=$((FAILS + 1))
}

# gen FILE ARGS...: an input file from example_ref's generators
gen() {
    local f=$1
    shift
    "$REF" gen "$@" >"$f" || { echo "example_ref gen $* failed" >&2; exit 1; }
}
poison() { gen "$1" poison "$2"; }

# tc FILE KERNEL ARGS...: tilec run on the interpreter; fails the case on a non-zero exit
tc() {
    local file=$1 kernel=$2
    shift 2
    if ! OUT=$("$TILEC" run "$SRC/$file" --kernel "$kernel" --device=interp "$@" 2>&1); then
        fail "tilec run $file --kernel $kernel --device=interp $*"
        printf '%s\n' "$OUT" | head -n 40
        return 1
    fi
}

# ref KERNEL ARGS...: the C reference on the saved buffers of $D
ref() {
    if ! "$REF" check "$1" "$D" "${@:2}"; then
        fail "reference check of $1 ($*)"
        return 1
    fi
}

# tc_fails FILE KERNEL PATTERN ARGS...: tilec run must fail, saying PATTERN
tc_fails() {
    local file=$1 kernel=$2 pattern=$3
    shift 3
    if OUT=$("$TILEC" run "$SRC/$file" --kernel "$kernel" --device=interp "$@" 2>&1); then
        fail "tilec run $file --kernel $kernel $* succeeded; it must fail with '$pattern'"
        return 1
    fi
    if ! printf '%s' "$OUT" | grep -q -- "$pattern"; then
        fail "tilec run $file --kernel $kernel $* failed without saying '$pattern':"
        printf '%s\n' "$OUT" | head -n 20
        return 1
    fi
}

sv() { # sv NAME...: --save NAME=$D/NAME.bin for each
    local n
    for n in "$@"; do printf -- '--save\n%s=%s/%s.bin\n' "$n" "$D" "$n"; done
}
save() { mapfile -t SAVES < <(sv "$@"); }

# rows_cols FILE KERNEL SEED OUT BYTES RxC...: the kernels of one R x C input x and one
# output OUT, run with rows= cols=: per case x = randn (seeds from SEED + 1 on), OUT
# poisoned with BYTES bytes (an arithmetic expression in r and c), then the reference.
rows_cols() {
    local file=$1 kernel=$2 seed=$3 out=$4 bytes=$5 rc
    shift 5
    for rc in "$@"; do
        local r=${rc%x*} c=${rc#*x}
        case_dir "$rc"; seed=$((seed + 1))
        poison "$D/$out.poison" $((bytes))
        save x "$out"
        tc "$file" "$kernel" x=randn:$((r * c)):$seed "$out"=@"$D/$out.poison" rows=$r cols=$c \
            "${SAVES[@]}" && ref "$kernel" rows=$r cols=$c
    done
}

t_vector_add() {
    local n seed=1
    for n in 1 1000 4097; do
        case_dir "n$n"; seed=$((seed + 2))
        poison "$D/out.poison" $((n * 4))
        save x y out
        tc vector_add.tile vector_add x=randn:$n:$seed y=randn:$n:$((seed + 1)) \
            out=@"$D/out.poison" n=$n "${SAVES[@]}" && ref vector_add n=$n
    done
}

t_softmax() { rows_cols softmax.tile softmax 10 out 'r * c * 4' 1x1 3x1000 17x4096 4x257; }

t_layernorm() {
    local rc seed=20
    for rc in 1x1 3x1000 5x4097; do
        local r=${rc%x*} c=${rc#*x}
        case_dir "$rc"; seed=$((seed + 3))
        poison "$D/y.poison" $((r * c * 2))
        save x w b y
        tc layernorm.tile layernorm x=randn:$((r * c)):$seed w=randn:$c:$((seed + 1)) \
            b=randn:$c:$((seed + 2)) y=@"$D/y.poison" rows=$r cols=$c eps=1e-5 "${SAVES[@]}" &&
            ref layernorm rows=$r cols=$c eps=1e-5
    done
}

# strided VAR ROWS COLS T PAD: a ROWS x COLS matrix stored row-major with PAD spare elements
# per row (T=n: element (i, j) at i * (COLS + PAD) + j) or transposed, as the row-major
# COLS x ROWS matrix it is the transpose of (T=t: at j * (ROWS + PAD) + i); sets VAR_sr and
# VAR_sc (its strides) and VAR_n (the elements of its buffer).
strided() {
    local v=$1 r=$2 c=$3 t=$4 p=$5
    if [ "$t" = t ]; then
        eval "${v}_sr=1 ${v}_sc=$((r + p)) ${v}_n=$((c * (r + p)))"
    else
        eval "${v}_sr=$((c + p)) ${v}_sc=1 ${v}_n=$((r * (c + p)))"
    fi
}

# The shapes of the dot examples' cases: "M N K LAYOUT PAD", LAYOUT one letter per matrix
# (A, B, C: n row-major, t transposed, see strided), PAD spare elements per stored row.
# Ragged shapes (not multiples of any BM, BN, BK), K tails shorter than BK, one-element
# matrices, transposed operands and outputs, padded rows whose padding must stay poisoned.
GEMM_SHAPES=("1 1 1 nnn 0" "16 16 16 nnn 0" "100 70 130 nnn 3" "65 129 40 tnn 1"
             "33 17 200 ntt 5" "130 64 65 ttn 0")

# gemm FILE KERNEL SEED IN CSIZE EXTRA: the GEMM kernels (a: M x K, b: K x N, c: M x N with
# the stride arguments of matmul.tile) over GEMM_SHAPES: a and b fresh (IN=randn: randn in
# the parameter's type; IN=bytes: i8 over the whole range), c poisoned (CSIZE bytes an
# element); EXTRA, if not "-", is a function of M N SEED that sets the array EXTRA_ARGS
# (more inputs) and EXTRA_SAVES (their names).
gemm() {
    local file=$1 kernel=$2 seed=$3 in=$4 csz=$5 extra=$6 spec
    for spec in "${GEMM_SHAPES[@]}"; do
        set -- $spec
        local M=$1 N=$2 K=$3 lay=$4 pad=$5
        strided A $M $K ${lay:0:1} $pad
        strided B $K $N ${lay:1:1} $pad
        strided C $M $N ${lay:2:1} $pad
        case_dir "${M}x${N}x${K}_$lay"; seed=$((seed + 2))
        local ins
        if [ "$in" = bytes ]; then
            "$REF" gen bytes $A_n $seed -128 127 >"$D/a.in"
            "$REF" gen bytes $B_n $((seed + 1)) -128 127 >"$D/b.in"
            ins=(a=@"$D/a.in" b=@"$D/b.in")
        else
            ins=(a=randn:$A_n:$seed b=randn:$B_n:$((seed + 1)))
        fi
        EXTRA_ARGS=() EXTRA_SAVES=()
        [ "$extra" = - ] || "$extra" $M $N $seed
        poison "$D/c.poison" $((C_n * csz))
        local strides=(M=$M N=$N K=$K stride_am=$A_sr stride_ak=$A_sc stride_bk=$B_sr
                       stride_bn=$B_sc stride_cm=$C_sr stride_cn=$C_sc)
        save a b c "${EXTRA_SAVES[@]}"
        tc "$file" "$kernel" "${ins[@]}" "${EXTRA_ARGS[@]}" c=@"$D/c.poison" "${strides[@]}" \
            "${SAVES[@]}" && ref "$kernel" "${strides[@]}"
    done
}

gelu_bias() { EXTRA_ARGS=(bias=randn:$2:$(($3 + 7))); EXTRA_SAVES=(bias); }
f8_scales() {
    EXTRA_ARGS=(scale_a=rand:$1:$(($3 + 7)) scale_b=rand:$2:$(($3 + 8)))
    EXTRA_SAVES=(scale_a scale_b)
}

t_matmul() { gemm matmul.tile matmul 30 randn 2 -; }
t_matmul_naive() { gemm matmul_naive.tile matmul_naive 320 randn 2 -; }
t_matmul_gelu() { gemm matmul_gelu.tile matmul_gelu 220 randn 2 gelu_bias; }
t_gemm_tf32() { gemm gemm_tf32.tile gemm_tf32 240 randn 4 -; }
t_gemm_i8() { gemm gemm_i8.tile gemm_i8 260 bytes 4 -; }
t_gemm_f8() { gemm gemm_f8.tile gemm_f8 280 randn 2 f8_scales; }
i8_exponents() { EXTRA_ARGS=(ea=rand:$1:$(($3 + 7)) eb=rand:$2:$(($3 + 8))); EXTRA_SAVES=(ea eb); }
t_attention() {
    # "HEADS S D": one row; S ragged against every BM and BN; the head widths
    local spec seed=310
    for spec in "1 1 16" "2 200 64" "1 130 32"; do
        set -- $spec
        local h=$1 s=$2 d=$3 n=$(($1 * $2 * $3))
        case_dir "h${h}_s${s}_d$d"; seed=$((seed + 3))
        poison "$D/o.poison" $((n * 2))
        save q k v o
        tc attention.tile attention -D D=$d q=randn:$n:$seed k=randn:$n:$((seed + 1)) \
            v=randn:$n:$((seed + 2)) o=@"$D/o.poison" heads=$h S=$s scale=0.125 "${SAVES[@]}" &&
            ref attention heads=$h S=$s D=$d scale=0.125
    done
}
t_gemm_i8_scaled() { gemm gemm_i8_scaled.tile gemm_i8_scaled 290 bytes 4 i8_exponents; }

t_batched_matmul() {
    # "BATCH M N K LAYOUT PAD GAP": GAP spare elements between the batches of each operand;
    # GAP=-1 broadcasts one B to every batch (stride_bz = 0)
    local spec seed=300
    for spec in "1 1 1 1 nnn 0 0" "3 16 16 16 nnn 0 0" "4 100 70 130 tnt 2 5" \
                "2 65 129 40 ntn 0 -1" "5 33 17 65 nnn 1 3"; do
        set -- $spec
        local Z=$1 M=$2 N=$3 K=$4 lay=$5 pad=$6 gap=$7
        strided A $M $K ${lay:0:1} $pad
        strided B $K $N ${lay:1:1} $pad
        strided C $M $N ${lay:2:1} $pad
        local g=$gap bz=$((B_n + gap)) bn=$((Z * (B_n + gap)))
        if [ $gap -lt 0 ]; then g=0 bz=0 bn=$B_n; fi
        case_dir "z${Z}_${M}x${N}x${K}_$lay"; seed=$((seed + 2))
        poison "$D/c.poison" $((Z * (C_n + g) * 2))
        local args=(batch=$Z M=$M N=$N K=$K stride_az=$((A_n + g)) stride_am=$A_sr stride_ak=$A_sc
                    stride_bz=$bz stride_bk=$B_sr stride_bn=$B_sc stride_cz=$((C_n + g))
                    stride_cm=$C_sr stride_cn=$C_sc)
        save a b c
        tc batched_matmul.tile batched_matmul a=randn:$((Z * (A_n + g))):$seed \
            b=randn:$bn:$((seed + 1)) c=@"$D/c.poison" "${args[@]}" "${SAVES[@]}" &&
            ref batched_matmul "${args[@]}"
    done
}

t_dot_chain() {
    # "M N K L LAYOUT PAD": LAYOUT one letter for each of A, B, C, D
    local spec seed=320
    for spec in "1 1 1 1 nnnn 0" "16 16 16 16 nnnn 0" "100 70 40 130 nnnn 3" \
                "65 129 17 64 tntn 1" "33 17 100 200 nttt 0"; do
        set -- $spec
        local M=$1 N=$2 K=$3 L=$4 lay=$5 pad=$6
        strided A $M $K ${lay:0:1} $pad
        strided B $K $L ${lay:1:1} $pad
        strided C $L $N ${lay:2:1} $pad
        strided E $M $N ${lay:3:1} $pad
        case_dir "${M}x${N}x${K}x${L}_$lay"; seed=$((seed + 3))
        poison "$D/d.poison" $((E_n * 2))
        local args=(M=$M N=$N K=$K L=$L stride_am=$A_sr stride_ak=$A_sc stride_bk=$B_sr
                    stride_bl=$B_sc stride_cl=$C_sr stride_cn=$C_sc stride_dm=$E_sr stride_dn=$E_sc)
        save a b c d
        tc dot_chain.tile dot_chain a=randn:$A_n:$seed b=randn:$B_n:$((seed + 1)) \
            c=randn:$C_n:$((seed + 2)) d=@"$D/d.poison" "${args[@]}" "${SAVES[@]}" &&
            ref dot_chain "${args[@]}"
    done
}

t_row_stats() {
    local rc seed=40
    for rc in 1x1 5x1000 9x4096 3x64; do
        local r=${rc%x*} c=${rc#*x} o
        case_dir "$rc"; seed=$((seed + 1))
        for o in sums maxs mins norms; do poison "$D/$o.poison" $((r * 4)); done
        save x sums maxs mins norms
        tc row_stats.tile row_stats x=randn:$((r * c)):$seed sums=@"$D/sums.poison" \
            maxs=@"$D/maxs.poison" mins=@"$D/mins.poison" norms=@"$D/norms.poison" \
            rows=$r cols=$c "${SAVES[@]}" && ref row_stats rows=$r cols=$c
    done
}

t_col_sum() { rows_cols col_sum.tile col_sum 50 out 'c * 4' 1x1 3x1000 100x70 33x129; }

t_logsumexp() { rows_cols logsumexp.tile logsumexp 60 out 'r * 4' 1x1 3x1000 5x4097 2x512; }

t_cumsum() {
    local rc seed=70
    for rc in 1x1 3x1000 4x4097 2x256; do
        local r=${rc%x*} c=${rc#*x}
        case_dir "f32_$rc"; seed=$((seed + 1))
        poison "$D/out.poison" $((r * c * 4))
        save x out
        tc cumsum.tile cumsum_rows x=randn:$((r * c)):$seed out=@"$D/out.poison" rows=$r \
            cols=$c "${SAVES[@]}" && ref cumsum_rows rows=$r cols=$c
        case_dir "i32_$rc"
        gen "$D/counts.in" ints $((r * c)) $seed -3 9
        poison "$D/offs.poison" $((r * c * 4))
        save counts offs
        tc cumsum.tile exclusive_scan counts=@"$D/counts.in" offs=@"$D/offs.poison" rows=$r \
            cols=$c "${SAVES[@]}" && ref exclusive_scan rows=$r cols=$c
    done
}

t_argmax() {
    local spec seed=80
    for spec in "1 1 1" "5 1000 8" "33 1024 40" "4 7 4"; do
        set -- $spec
        local r=$1 c=$2 g=$3 o
        case_dir "${r}x${c}_grid$g"; seed=$((seed + 1))
        for o in idx_max idx_min vmax; do poison "$D/$o.poison" $((r * 4)); done
        save x idx_max idx_min vmax
        tc argmax.tile row_argmax --grid=$g x=randn:$((r * c)):$seed idx_max=@"$D/idx_max.poison" \
            idx_min=@"$D/idx_min.poison" vmax=@"$D/vmax.poison" rows=$r cols=$c "${SAVES[@]}" &&
            ref row_argmax rows=$r cols=$c
    done
    # a row longer than BLOCK: the launch-time `where BLOCK >= cols` refuses it
    case_dir "too_wide"
    tc_fails argmax.tile row_argmax "BLOCK" --grid=2 x=randn:2050:1 idx_max=zeros:2 \
        idx_min=zeros:2 vmax=zeros:2 rows=2 cols=1025
}

t_histogram() {
    local spec seed=90
    for spec in "1 1 1" "1000 16 3" "4097 37 2" "300 300 5"; do
        set -- $spec
        local n=$1 nb=$2 g=$3
        case_dir "n${n}_bins${nb}"; seed=$((seed + 1))
        gen "$D/x.in" ints $n $seed -1000 1000
        gen "$D/hist.in" ints $nb $((seed + 50)) 0 3
        { "$REF" gen fill32 1 0x80000000; "$REF" gen fill32 1 0x7fffffff; } >"$D/bounds.in"
        save x hist bounds
        tc histogram.tile histogram --grid=$g x=@"$D/x.in" hist=@"$D/hist.in" \
            bounds=@"$D/bounds.in" n=$n nbins=$nb "${SAVES[@]}" &&
            ref histogram n=$n nbins=$nb || continue
        # drain the counters just computed
        local H=$D/hist.bin
        case_dir "drain_bins$nb"
        cp "$H" "$D/hist.in"
        poison "$D/out.poison" $((nb * 4))
        save hist out
        tc histogram.tile hist_drain hist=@"$D/hist.in" out=@"$D/out.poison" nbins=$nb \
            "${SAVES[@]}" && ref hist_drain nbins=$nb
    done
}

t_distinct() {
    local spec seed=100
    for spec in "1 1" "1000 64" "4097 5000" "700 3"; do
        set -- $spec
        local n=$1 nv=$2
        case_dir "n${n}_vals$nv"; seed=$((seed + 1))
        gen "$D/x.in" ints $n $seed -100000 100000
        gen "$D/first.in" fill32 $nv 0x7fffffff
        gen "$D/count.in" ints 1 $seed 0 5
        save x seen first count
        tc distinct.tile distinct x=@"$D/x.in" seen=zeros:$((nv + 1)) first=@"$D/first.in" \
            count=@"$D/count.in" n=$n nvals=$nv "${SAVES[@]}" && ref distinct n=$n nvals=$nv
    done
}

t_transpose() {
    rows_cols transpose.tile transpose 110 y 'r * c * 4' 1x1 30x100 65x129 16x16
    local n seed=114    # where the four transpose cases left the seeds
    for n in 1 1000 4097; do
        case_dir "interleave_$n"; seed=$((seed + 2))
        poison "$D/out.poison" $((n * 8))
        save re im out
        tc transpose.tile interleave re=randn:$n:$seed im=randn:$n:$((seed + 1)) \
            out=@"$D/out.poison" n=$n "${SAVES[@]}" && ref interleave n=$n
    done
}

t_activations() {
    local act n seed=120
    for act in 0 1 2 3 4; do
        for n in 1 1000 4097; do
            case_dir "act${act}_n$n"; seed=$((seed + 1))
            poison "$D/y.poison" $((n * 4))
            save x y
            tc activations.tile activation -D ACT=$act x=randn:$n:$seed y=@"$D/y.poison" n=$n \
                "${SAVES[@]}" && ref activation n=$n ACT=$act
        done
    done
}

t_posenc() {
    local sd seed=130
    for sd in 1x1 50x128 37x100 16x2; do
        local s=${sd%x*} dm=${sd#*x}
        case_dir "$sd"; seed=$((seed + 1))
        poison "$D/y.poison" $((s * dm * 4))
        save x y
        tc posenc.tile add_posenc x=randn:$((s * dm)):$seed y=@"$D/y.poison" seq=$s dim=$dm \
            base=10000.0 "${SAVES[@]}" && ref add_posenc seq=$s dim=$dm base=10000.0
    done
}

t_quantize() {
    local rc seed=140
    for rc in 1x1 3x1000 4x2048 2x31; do
        local r=${rc%x*} c=${rc#*x} q
        seed=$((seed + 1))
        for q in f8 i8; do    # the same input through both formats
            case_dir "${q}_$rc"
            poison "$D/q.poison" $((r * c))
            poison "$D/scales.poison" $((r * 4))
            save x q scales
            tc quantize.tile quant_$q x=randn:$((r * c)):$seed q=@"$D/q.poison" \
                scales=@"$D/scales.poison" rows=$r cols=$c "${SAVES[@]}" &&
                ref quant_$q rows=$r cols=$c
        done
    done
}

t_convert() {
    local n seed=150 src
    for n in 1 1000 4097 333; do
        case_dir "n$n"; seed=$((seed + 1))
        if [ $n -eq 333 ]; then
            src="x=randn:$n:$seed"
        else
            gen "$D/x.in" wide $n $seed
            src="x=@$D/x.in"
        fi
        poison "$D/h.poison" $((n * 2)); poison "$D/b.poison" $((n * 2))
        poison "$D/e5.poison" $n; poison "$D/e4.poison" $n; poison "$D/bytes.poison" $n
        poison "$D/back.poison" $((n * 4)); poison "$D/ints.poison" $((n * 4))
        save x h b e5 e4 back ints bytes
        tc convert.tile convert "$src" h=@"$D/h.poison" b=@"$D/b.poison" e5=@"$D/e5.poison" \
            e4=@"$D/e4.poison" back=@"$D/back.poison" ints=@"$D/ints.poison" \
            bytes=@"$D/bytes.poison" n=$n "${SAVES[@]}" && ref convert n=$n
    done
}

t_intops() {
    local spec seed=160
    for spec in "1 61 7" "1000 1 -3" "4097 1024 1000003" "500 97 -65536"; do
        set -- $spec
        local n=$1 nb=$2 d=$3 o
        case_dir "n${n}_d$d"; seed=$((seed + 1))
        gen "$D/keys.in" ints $n $seed -2147483648 2147483647
        for o in hash bucket quot rem fmod bits; do poison "$D/$o.poison" $((n * 4)); done
        save keys hash bucket quot rem fmod bits
        tc intops.tile hash_keys keys=@"$D/keys.in" hash=@"$D/hash.poison" \
            bucket=@"$D/bucket.poison" quot=@"$D/quot.poison" rem=@"$D/rem.poison" \
            fmod=@"$D/fmod.poison" bits=@"$D/bits.poison" n=$n nb=$nb d=$d "${SAVES[@]}" &&
            ref hash_keys n=$n nb=$nb d=$d
    done
}

t_axpby() {
    local spec seed=170
    # n grid alpha beta; beta = 0 runs on a NaN-poisoned y, which must not leak through
    for spec in "1 1 2.0 0.5" "1000 2 -1.25 0" "10007 3 0.25 -1.5" "4096 8 3.0 1.0"; do
        set -- $spec
        local n=$1 g=$2 al=$3 be=$4
        case_dir "n${n}_grid${g}_beta$be"; seed=$((seed + 1))
        if [ "$be" = 0 ]; then poison "$D/y.in" $((n * 4)); else gen "$D/y.in" uniform $n $seed 4; fi
        save x y
        tc axpby.tile axpby --grid=$g x=randn:$n:$seed y=@"$D/y.in" alpha=$al beta=$be n=$n \
            "${SAVES[@]}" && ref axpby n=$n alpha=$al beta=$be
    done
}

t_rmsnorm() {
    local rc seed=180
    for rc in 1x1 3x1000 9x4096 5x33 6x65; do
        local r=${rc%x*} c=${rc#*x}
        case_dir "$rc"; seed=$((seed + 2))
        poison "$D/y.poison" $((r * c * 4))
        save x w y
        tc rmsnorm.tile rmsnorm x=randn:$((r * c)):$seed w=randn:$c:$((seed + 1)) \
            y=@"$D/y.poison" rows=$r cols=$c eps=1e-6 "${SAVES[@]}" &&
            ref rmsnorm rows=$r cols=$c eps=1e-6
    done
}

t_bmm() {
    local k b seed=190
    for k in bmm32 bmm32_f32 bmm32_tf32; do
        for b in 1 3; do
            case_dir "${k}_batch$b"; seed=$((seed + 2))
            poison "$D/c.poison" $((b * 1024 * 4))
            save a b c
            tc bmm.tile $k a=randn:$((b * 1024)):$seed b=randn:$((b * 1024)):$((seed + 1)) \
                c=@"$D/c.poison" batch=$b "${SAVES[@]}" && ref $k batch=$b
        done
    done
}

t_tma_transpose() {
    rows_cols tma_transpose.tile tma_transpose 200 y 'r * c * 4' 4x4 36x100 132x260 64x64
}

t_debug() {
    local spec seed=210
    for spec in "1 1" "200 100" "4097 1000"; do
        set -- $spec
        local n=$1 size=$2
        case_dir "n${n}_size$size"; seed=$((seed + 1))
        gen "$D/idx.in" ints $n $seed $((-size)) $((size - 1))
        poison "$D/out.poison" $((n * 4))
        save table idx out
        tc debug.tile gather --debug table=randn:$size:$seed idx=@"$D/idx.in" \
            out=@"$D/out.poison" n=$n size=$size "${SAVES[@]}" || continue
        ref gather n=$n size=$size
        # program 0 prints its indices, labelled
        printf '%s' "$OUT" | grep -q "gather idx" || fail "print(\"gather idx\", ...) printed nothing"
    done
    # an index past the table: the --debug build's assert reports it
    case_dir "bad_index"
    { "$REF" gen ints 10 1 0 9; "$REF" gen fill32 1 50; } >"$D/idx.in"
    tc_fails debug.tile gather "index out of range" --debug table=randn:10:1 idx=@"$D/idx.in" \
        out=zeros:11 n=11 size=10
}

fn="t_$EX"
if ! declare -F "$fn" >/dev/null; then
    echo "run_example.sh: unknown example '$EX'" >&2
    exit 2
fi
mkdir -p "$WORK/$EX"
"$fn"
if [ $FAILS -ne 0 ]; then
    echo "$EX: $FAILS of $CASES cases FAILED"
    exit 1
fi
echo "$EX: all $CASES cases passed"
