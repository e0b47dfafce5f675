#!/bin/sh
# PTX of every variant of every example, bench kernel and backend test kernel, for sm_80
# and sm_90a, with and without --div16, one file each: diff two snapshots to show that a
# change leaves the generated code byte-identical.
#   tools/ptx-snapshot.sh BUILD_DIR OUT_DIR      (then: diff -r OLD NEW)
set -eu
build=$1
out=$2
src=$(cd "$(dirname "$0")/.." && pwd)
tbc=$build/tests/backend/tb_compile
mkdir -p "$out"
fail=0
for f in "$src"/examples/*.tile "$src"/bench/*.tile "$src"/tests/backend/kernels/*.tir; do
  name=$(basename "$f")
  defs=""
  [ "$name" = activations.tile ] && defs="-D ACT=0,1,2,3,4"
  for arch in sm_80 sm_90a; do
    for form in div16 generic; do
      flag=""
      [ $form = div16 ] && flag=--div16
      case $name in *.tir) [ $form = div16 ] && continue ;; esac
      # shellcheck disable=SC2086
      if ! "$tbc" --arch=$arch --emit=ptx $flag $defs "$f" >"$out/$name.$arch.$form.ptx" 2>"$out/$name.$arch.$form.err"; then
        echo "failed: $name $arch $form" >&2
        fail=1
      fi
    done
  done
done
exit $fail
