#!/bin/sh
# npy.sh CASE TILEC TOOLS_CHECK NPY_TILE SCRATCH: one test of `tilec run`'s .npy files
# (tests/tools/CMakeLists.txt).  Input files are written by tools_check (write-npy PATH N
# TYPE MAJOR TRIM DICT V...), not by tilec's writer; output files are checked by it
# (npy PATH N TYPE DICT V...).  Fails (exit 1, with the output) unless the case holds.
set -u
case_=$1 T=$2 C=$3 F=$4 W=$5/npy-$1
rm -rf "$W"; mkdir -p "$W"
fail() { echo "FAIL: $*"; echo "--- stdout:"; cat "$W/out" 2>/dev/null; echo "--- stderr:"; cat "$W/err" 2>/dev/null; exit 1; }
# run KERNEL ARG...: tilec run on the interpreter, output in $W/out and $W/err
run() { k=$1; shift; "$T" run "$F" --device=interp --kernel "$k" "$@" >"$W/out" 2>"$W/err"; }
# good TYPE MAJOR DICT V1 V2 V3 W1 W2 W3: the file's three values V reach the kernel,
# which stores W = 2 V as f64
good() {
    t=$1; major=$2; dict=$3; shift 3
    "$C" write-npy "$W/x.npy" 3 "$t" "$major" 0 "$dict" "$1" "$2" "$3" || exit 1
    run "twice_$t" x=@"$W/x.npy" n=3 out=zeros:3 --save out="$W/y.bin" || fail "run failed"
    test ! -s "$W/out" -a ! -s "$W/err" || fail "output from a good run"
    "$C" f64 "$W/y.bin" 3 "$4" "$5" "$6" || fail "values"
}
# bad MESSAGE KERNEL ARG...: exit 1, nothing on stdout, MESSAGE (a fixed string) on stderr
bad() {
    msg=$1; shift
    run "$@"
    rc=$?
    test $rc = 1 || fail "exit status $rc, expected 1"
    test ! -s "$W/out" || fail "stdout is not empty"
    grep -qF -- "$msg" "$W/err" || fail "stderr lacks: $msg"
}
d() { echo "{'descr': '$1', 'fortran_order': False, 'shape': $2, }"; }
X=x=@"$W/x.npy"
case $case_ in
good_f32) good f32 1 "$(d '<f4' '(3,)')" 1.5 -2 3  3 -4 6 ;;
good_f16) good f16 1 "$(d '<f2' '(3,)')" 0.5 -1 2048  1 -2 4096 ;;
good_f64) good f64 2 "$(d '<f8' '(1, 3)')" 0.1 -1e300 7  0.2 -2e300 14 ;;
good_bf16) good bf16 1 "$(d '<V2' '(3,)')" 1 -0.5 256  2 -1 512 ;;
good_i8) good i8 1 "$(d '|i1' '(3,)')" -128 5 127  -256 10 254 ;;
good_u8) good u8 3 "$(d '|u1' '(3,)')" 0 200 255  0 400 510 ;;
good_i32) good i32 1 "{\"descr\":\"<i4\",\"shape\":(3L,),\"fortran_order\":False}" -7 0 2147483647  -14 0 4294967294 ;;
good_i64) good i64 1 "$(d '<i8' '(3, 1)')" -9 1 123456789012  -18 2 246913578024 ;;
good_u16) good u16 1 "$(d '<u2' '(3,)')" 65535 1 2  131070 2 4 ;;
good_u32) good u32 2 "$(d '<u4' '(3,)')" 4294967295 0 9  8589934590 0 18 ;;
good_bool) good bool 1 "$(d '|b1' '(3,)')" 1 0 1  2 0 2 ;;
# the output keeps the input's shape; a generated buffer is saved with one dimension
save_npy_shape)
    "$C" write-npy "$W/x.npy" 6 f32 1 0 "$(d '<f4' '(2, 3)')" 1 2 3 4 5 6 || exit 1
    run scale "$X" n=6 --save x="$W/y.npy" || fail "run failed"
    "$C" npy "$W/y.npy" 6 f32 "$(d '<f4' '(2, 3)')" 2 4 6 8 10 12 || fail "saved .npy" ;;
save_npy_flat)
    run twice_i32 x=zeros:5 n=5 out=rand:5:1 --save out="$W/y.npy" --save x="$W/x.npy" || fail "run failed"
    "$C" npy "$W/x.npy" 5 i32 "$(d '<i4' '(5,)')" 0 0 0 0 0 || fail "saved .npy of i32"
    "$C" npy "$W/y.npy" 5 f64 "$(d '<f8' '(5,)')" 0 0 0 0 0 || fail "saved .npy of f64" ;;
save_npy_shape_given)
    "$C" write-seq-f32 "$W/x.bin" 6 || exit 1
    run scale x=@"$W/x.bin":3x2 n=6 --save x="$W/y.npy" || fail "run failed"
    "$C" npy "$W/y.npy" 6 f32 "$(d '<f4' '(3, 2)')" 2 4 6 8 10 12 || fail "saved .npy" ;;
save_npy_round_trip)   # tilec's own output read back as an input
    run twice_f32 x=randn:3:4 n=3 out=zeros:3 --save x="$W/x.npy" || fail "first run failed"
    run scale "$X" n=3 --save x="$W/z.bin" || fail "second run failed" ;;
# the dtype and the shape against the parameter and the command line
dtype_mismatch)
    "$C" write-npy "$W/x.npy" 3 f64 1 0 "$(d '<f8' '(3,)')" 1 2 3 || exit 1
    bad "argument 'x': '$W/x.npy' holds dtype '<f8' (f64), the parameter is *f32 (dtype '<f4')" \
        twice_f32 "$X" n=3 out=zeros:3 ;;
dtype_unknown)
    "$C" write-npy "$W/x.npy" 3 i32 1 0 "$(d '<c8' '(3,)')" 1 2 3 || exit 1
    bad "holds dtype '<c8' (no tile type), the parameter is *i32 (dtype '<i4')" twice_i32 "$X" n=3 out=zeros:3 ;;
dtype_big_endian)
    "$C" write-npy "$W/x.npy" 3 f32 1 0 "$(d '>f4' '(3,)')" 1 2 3 || exit 1
    bad "holds dtype '>f4', big-endian; tilec reads little-endian data (save a.astype('<f4'))" twice_f32 "$X" n=3 out=zeros:3 ;;
shape_count_mismatch)
    "$C" write-npy "$W/x.npy" 3 f32 1 0 "$(d '<f4' '(3,)')" 1 2 3 || exit 1
    bad "argument 'x': '$W/x.npy' has 3 elements of f32, the command line says 4" twice_f32 "$X":4 n=3 out=zeros:3 ;;
shape_mismatch)
    "$C" write-npy "$W/x.npy" 6 f32 1 0 "$(d '<f4' '(2, 3)')" 1 2 3 4 5 6 || exit 1
    bad "argument 'x': '$W/x.npy' has shape (2, 3), the command line says (3, 2)" scale "$X":3x2 n=6 ;;
shape_given_matches)
    "$C" write-npy "$W/x.npy" 6 f32 1 0 "$(d '<f4' '(2, 3)')" 1 2 3 4 5 6 || exit 1
    run scale "$X":2x3 n=6 || fail "shape 2x3 refused"
    run scale "$X":6 n=6 || fail "count 6 refused" ;;
shape_raw_mismatch)
    "$C" write-seq-f32 "$W/x.bin" 5 || exit 1
    bad "argument 'x': '$W/x.bin' has 5 elements of f32, the command line says shape (2, 3)" scale x=@"$W/x.bin":2x3 n=6 ;;
# a file whose name ends in :N is that file, not a shape
colon_in_name)
    "$C" write-seq-f32 "$W/x:4" 3 || exit 1
    run twice_f32 x=@"$W/x:4" n=3 out=zeros:3 || fail "x:4 not read as a file" ;;
# corrupted files: a located error
truncated_data)
    "$C" write-npy "$W/x.npy" 3 f32 1 2 "$(d '<f4' '(3,)')" 1 2 3 || exit 1
    bad "argument 'x': '$W/x.npy' has 10 bytes of data after its header (byte 128), shape (3,) of '<f4' needs 12 (truncated)" \
        twice_f32 "$X" n=3 out=zeros:3 ;;
extra_data)
    "$C" write-npy "$W/x.npy" 3 f32 1 -4 "$(d '<f4' '(3,)')" 1 2 3 || exit 1
    bad "has 16 bytes of data after its header (byte 128), shape (3,) of '<f4' needs 12" twice_f32 "$X" n=3 out=zeros:3 ;;
truncated_header)
    "$C" write-npy "$W/full.npy" 3 f32 1 0 "$(d '<f4' '(3,)')" 1 2 3 || exit 1
    head -c 40 "$W/full.npy" >"$W/x.npy"
    bad "argument 'x': '$W/x.npy': byte 40: truncated in the header (118 bytes from byte 10)" twice_f32 "$X" n=3 out=zeros:3 ;;
truncated_magic)
    printf '\223NUMPY\001' >"$W/x.npy"
    bad "'$W/x.npy': byte 7: truncated in the version" twice_f32 "$X" n=3 out=zeros:3 ;;
bad_version)
    printf '\223NUMPY\004\000\010\000{}      \n' >"$W/x.npy"
    bad "'$W/x.npy': byte 6: format version 4.0; tilec reads 1.0, 2.0 and 3.0" twice_f32 "$X" n=3 out=zeros:3 ;;
bad_key)
    "$C" write-npy "$W/x.npy" 3 f32 1 0 "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'extra': 1, }" 1 2 3 || exit 1
    bad "'$W/x.npy': byte 66: unknown key 'extra' (descr, fortran_order and shape)" twice_f32 "$X" n=3 out=zeros:3 ;;
bad_bool)
    "$C" write-npy "$W/x.npy" 3 f32 1 0 "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (3,), }" 1 2 3 || exit 1
    bad "'$W/x.npy': byte 44: expected True or False for 'fortran_order', saw 'M'" twice_f32 "$X" n=3 out=zeros:3 ;;
missing_key)
    "$C" write-npy "$W/x.npy" 3 f32 1 0 "{'descr': '<f4', 'fortran_order': False}" 1 2 3 || exit 1
    bad "'$W/x.npy': byte 10: the header has no 'shape'" twice_f32 "$X" n=3 out=zeros:3 ;;
structured)
    "$C" write-npy "$W/x.npy" 3 f32 1 0 "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }" 1 2 3 || exit 1
    bad "a structured dtype (a list of fields); tilec reads arrays of one scalar type" twice_f32 "$X" n=3 out=zeros:3 ;;
header_too_long)
    "$C" write-npy "$W/x.npy" 3 f32 2 0 "$(d '<f4' '(3,)')$(printf '%20000s' '')" 1 2 3 || exit 1
    bad "'$W/x.npy': byte 8: a header of 20084 bytes, more than the 16384 read" twice_f32 "$X" n=3 out=zeros:3 ;;
not_npy)
    "$C" write-seq-f32 "$W/x.npy" 3 || exit 1
    bad "'$W/x.npy': byte 0: not a .npy file (it does not start with \\x93NUMPY)" twice_f32 "$X" n=3 out=zeros:3 ;;
fortran_order)
    "$C" write-npy "$W/x.npy" 6 f32 1 0 "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }" 1 2 3 4 5 6 || exit 1
    bad "argument 'x': '$W/x.npy' is in Fortran order; tilec reads C order (save np.ascontiguousarray(a))" scale "$X" n=6 ;;
*) echo "npy.sh: unknown case $case_"; exit 2 ;;
esac
exit 0
