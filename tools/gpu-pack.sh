#!/bin/bash
# Packs what the GPU machine runs into a carry directory (default build-gpu/):
#     tools/gpu-pack.sh BUILD_DIR [CARRY_DIR]
# BUILD_DIR must be configured with -DTILEC_LLVM_STATIC=ON (the compiler, LLVM included,
# lives inside libtilert.so, so the other machine needs no LLVM).  Builds libtilert.so,
# tilec (it compiles the embed demo's kernels at build time), the tests/gpu programs, then
# installs BUILD_DIR into BUILD_DIR/gpu-pack/prefix and builds examples/embed against that
# package (cubins and PTX for sm_90a).  The carry directory gets stripped copies:
#     runtime/libtilert.so.N       the one copy of the compiler and runtime
#     tests/gpu/gpu_examples, gpu_bench   (rpath $ORIGIN/../../runtime)
#     embed/embed_demo             (rpath $ORIGIN/../runtime: libtilert linked dynamically)
# and fails when the result is 60 MiB or more.  bench/gpu.sh runs from it.
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
cmake --build "$B" -j"$JOBS" --target tilert tilec tilec_compiler gpu_examples gpu_bench

W=$B/gpu-pack
rm -rf "$W"
mkdir -p "$W"
echo "gpu-pack: installing the package into $W/prefix"
cmake --install "$B" --prefix "$W/prefix" > "$W/install.log"
echo "gpu-pack: building examples/embed against it (sm_90a)"
# Only the $ORIGIN-relative rpath: the prefix does not exist on the GPU machine.
cmake -S "$ROOT/examples/embed" -B "$W/embed" -DCMAKE_PREFIX_PATH="$W/prefix" \
    -DCMAKE_BUILD_TYPE=Release -DTILEC_ARCH=sm_90a -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON \
    -DCMAKE_INSTALL_RPATH='$ORIGIN/../runtime' > "$W/embed-configure.log"
cmake --build "$W/embed" -j"$JOBS" > "$W/embed-build.log"

lib=$(readlink -f "$B/runtime/libtilert.so")
soname=$(objdump -p "$lib" | awk '/SONAME/ {print $2}')
[ -n "$soname" ] || { echo "gpu-pack: $lib has no SONAME" >&2; exit 1; }
rm -rf "$C"
mkdir -p "$C/runtime" "$C/tests/gpu" "$C/embed"
# One real file under the SONAME the programs ask for (a symlink might not travel).
strip --strip-unneeded -o "$C/runtime/$soname" "$lib"
for t in gpu_examples gpu_bench; do
    strip -o "$C/tests/gpu/$t" "$B/tests/gpu/$t"
done
strip -o "$C/embed/embed_demo" "$W/embed/embed_demo"

# The demo must use the carried libtilert, not a copy of its own.
if ! objdump -p "$C/embed/embed_demo" | grep -q "NEEDED.*$soname"; then
    echo "gpu-pack: embed_demo does not link $soname dynamically" >&2
    exit 1
fi
if ! objdump -p "$C/embed/embed_demo" | grep -E 'R(UN)?PATH' | grep -q 'ORIGIN/../runtime'; then
    echo "gpu-pack: embed_demo lacks the rpath \$ORIGIN/../runtime" >&2
    exit 1
fi
for p in "$C/tests/gpu/gpu_examples" "$C/tests/gpu/gpu_bench" "$C/embed/embed_demo"; do
    found=$(LD_LIBRARY_PATH= ldd "$p" | awk '/libtilert/ {print $3}')
    [ -n "$found" ] && [ "$(readlink -f "$found")" = "$(readlink -f "$C/runtime/$soname")" ] || {
        echo "gpu-pack: $p does not find the carried libtilert through its rpath" >&2
        ldd "$p" >&2
        exit 1
    }
done
echo "$soname" > "$C/runtime/SONAME"
kib=$(du -sk "$C" | cut -f1)
echo "gpu-pack: $C holds $((kib / 1024)) MiB:"
(cd "$C" && find . -type f -printf '    %p %s\n' | sort)
if [ "$kib" -ge $((60 * 1024)) ]; then
    echo "gpu-pack: $C is over the 60 MiB carry limit" >&2
    exit 1
fi
echo "gpu-pack: done.  On the GPU machine (carry ${C#$ROOT/}): bash bench/gpu.sh ${C#$ROOT/}"
