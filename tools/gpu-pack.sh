#!/bin/bash
# Packs what the GPU machine runs into a carry directory (default build-gpu/):
#     tools/gpu-pack.sh BUILD_DIR [CARRY_DIR]
# BUILD_DIR must be configured with -DTILEC_LLVM_STATIC=ON (the compiler, LLVM included,
# lives inside libtilec.so, so the other machine needs no LLVM).  Builds the libraries,
# tilec and the tests/gpu programs, installs BUILD_DIR into BUILD_DIR/gpu-pack/prefix and
# builds examples/embed against that package (cubins and PTX for sm_90a).  The carry
# directory gets stripped copies, each library once, under the SONAME its users ask for:
#     lib/libtilec.so.N            the one copy of the compiler and LLVM
#     lib/libtilert.so.N           the runtime (rpath $ORIGIN: finds libtilec next to it)
#     bin/tilec                    the CLI, as installed (rpath $ORIGIN/../lib)
#     tests/gpu/gpu_examples, gpu_bench, gpu_math, gpu_special, gpu_atomics, gpu_dot   (rpath $ORIGIN/../../lib)
#     embed/embed_demo             (rpath $ORIGIN/../lib: libtilert linked dynamically)
#     lib/SONAME                   libtilert's SONAME, for bench/gpu.sh
# checks that every program resolves both libraries inside the carry directory, and fails
# when the result is 60 MiB or more.  bench/gpu.sh runs from it.
# TILEC_PACK_ANY=1 skips the static-LLVM check (to try the script on a development build;
# such a pack does not run elsewhere).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: tools/gpu-pack.sh BUILD_DIR [CARRY_DIR]" >&2; exit 2; }
B=$(cd "$1" && pwd)
C=${2:-$ROOT/build-gpu}
case $C in /*) ;; *) C=$PWD/$C ;; esac
if ! grep -q '^TILEC_LLVM_STATIC:BOOL=ON' "$B/CMakeCache.txt" && [ "${TILEC_PACK_ANY:-0}" != 1 ]; then
    echo "gpu-pack: $B is not configured with -DTILEC_LLVM_STATIC=ON:" >&2
    echo "    cmake -S $ROOT -B $B -DCMAKE_BUILD_TYPE=Release -DTILEC_LLVM_STATIC=ON" >&2
    exit 2
fi
JOBS=$(nproc 2>/dev/null || echo 4)
echo "gpu-pack: building in $B"
cmake --build "$B" -j"$JOBS" --target tilec_compiler tilert tilec gpu_examples gpu_bench gpu_math gpu_special gpu_atomics gpu_dot

W=$B/gpu-pack
rm -rf "$W"
mkdir -p "$W"
P=$W/prefix
echo "gpu-pack: installing the package into $P"
cmake --install "$B" --prefix "$P" > "$W/install.log"
echo "gpu-pack: building examples/embed against it (sm_90a)"
# Only the $ORIGIN-relative rpath: the prefix does not exist on the GPU machine.
cmake -S "$ROOT/examples/embed" -B "$W/embed" -DCMAKE_PREFIX_PATH="$P" \
    -DCMAKE_BUILD_TYPE=Release -DTILEC_ARCH=sm_90a -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON \
    -DCMAKE_INSTALL_RPATH='$ORIGIN/../lib' > "$W/embed-configure.log"
cmake --build "$W/embed" -j"$JOBS" > "$W/embed-build.log"

soname_of() {
    local s
    s=$(objdump -p "$1" | awk '/SONAME/ {print $2}')
    [ -n "$s" ] || { echo "gpu-pack: $1 has no SONAME" >&2; exit 1; }
    echo "$s"
}
# The installed libraries and tilec carry the $ORIGIN rpaths of the install layout,
# which the carry directory repeats (lib/, bin/).
libdir=$(dirname "$(find "$P" -name 'libtilert.so' | head -n 1)")
rt=$(readlink -f "$libdir/libtilert.so")
cc=$(readlink -f "$libdir/libtilec.so")
rt_soname=$(soname_of "$rt")
cc_soname=$(soname_of "$cc")
rm -rf "$C"
mkdir -p "$C/lib" "$C/bin" "$C/tests/gpu" "$C/embed"
# One real file under each SONAME (a symlink might not travel).
strip --strip-unneeded -o "$C/lib/$rt_soname" "$rt"
strip --strip-unneeded -o "$C/lib/$cc_soname" "$cc"
strip -o "$C/bin/tilec" "$P/bin/tilec"
for t in gpu_examples gpu_bench gpu_math gpu_special gpu_atomics gpu_dot; do
    strip -o "$C/tests/gpu/$t" "$B/tests/gpu/$t"
done
strip -o "$C/embed/embed_demo" "$W/embed/embed_demo"
echo "$rt_soname" > "$C/lib/SONAME"

# Every program (and libtilert) must find both libraries inside the carry directory
# through its own rpath, with no help from the environment, and only one copy of LLVM
# may travel: no program may link LLVM or carry the compiler itself.
fail=0
for p in "$C/bin/tilec" "$C/tests/gpu/gpu_examples" "$C/tests/gpu/gpu_bench" "$C/tests/gpu/gpu_math" "$C/tests/gpu/gpu_special" "$C/tests/gpu/gpu_atomics" "$C/tests/gpu/gpu_dot" \
         "$C/embed/embed_demo" "$C/lib/$rt_soname"; do
    deps=$(env -u LD_LIBRARY_PATH ldd "$p")
    if echo "$deps" | grep -q 'not found'; then
        echo "gpu-pack: $p has unresolved libraries:" >&2
        echo "$deps" >&2
        fail=1
    fi
    for want in "$rt_soname" "$cc_soname"; do
        [ "$p" = "$C/lib/$rt_soname" ] && [ "$want" = "$rt_soname" ] && continue
        [ "$p" = "$C/embed/embed_demo" ] && [ "$want" = "$cc_soname" ] && continue
        found=$(echo "$deps" | awk -v w="$want" '$1 == w {print $3}')
        if [ -z "$found" ] || [ "$(readlink -f "$found")" != "$(readlink -f "$C/lib/$want")" ]; then
            echo "gpu-pack: $p does not find the carried $want through its rpath:" >&2
            echo "$deps" >&2
            fail=1
        fi
    done
    if echo "$deps" | grep -qi 'libLLVM'; then
        echo "gpu-pack: $p links a shared libLLVM (configure with -DTILEC_LLVM_STATIC=ON)" >&2
        fail=1
    fi
done
# The demo links libtilert dynamically (libtilec comes in through it).
if ! objdump -p "$C/embed/embed_demo" | grep -q "NEEDED.*$rt_soname"; then
    echo "gpu-pack: embed_demo does not link $rt_soname dynamically" >&2
    fail=1
fi
# Only libtilec holds LLVM: a program or libtilert over 8 MiB carries a copy of its own.
for p in "$C/bin/tilec" "$C/tests/gpu/gpu_examples" "$C/tests/gpu/gpu_bench" "$C/tests/gpu/gpu_math" "$C/tests/gpu/gpu_special" "$C/tests/gpu/gpu_atomics" "$C/tests/gpu/gpu_dot" \
         "$C/embed/embed_demo" "$C/lib/$rt_soname"; do
    if [ "$(stat -c %s "$p")" -gt $((8 * 1024 * 1024)) ]; then
        echo "gpu-pack: $p is over 8 MiB: it should not hold the compiler" >&2
        fail=1
    fi
done
[ "$fail" = 0 ] || exit 1

kib=$(du -sk "$C" | cut -f1)
echo "gpu-pack: $C holds $((kib / 1024)) MiB:"
(cd "$C" && find . -type f -printf '    %p %s\n' | sort)
if [ "$kib" -ge $((60 * 1024)) ]; then
    echo "gpu-pack: $C is over the 60 MiB carry limit" >&2
    exit 1
fi
echo "gpu-pack: done.  On the GPU machine (carry ${C#$ROOT/}): bash bench/gpu.sh ${C#$ROOT/}"
