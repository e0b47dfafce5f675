#!/usr/bin/env bash
# Compiles every examples/*.tile (to PTX where the GPU backend is built) and runs each
# example listed in examples/run.txt, on the GPU where there is one and this build has a
# GPU backend, else on the interpreter (it says which).
#
#   tools/run-examples.sh [BUILD_DIR]        (default: build)
#
# examples/run.txt: one run a line, `FILE KERNEL [tilec run options and ARGs...]`;
# blank lines and lines starting with # are skipped.  Exit status 1 when anything
# failed; the last line is "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
TILEC=$BUILD/tools/tilec
[ -x "$TILEC" ] || [ ! -x "$BUILD/bin/tilec" ] || TILEC=$BUILD/bin/tilec   # a tools/gpu-pack.sh pack
[ -x "$TILEC" ] || { echo "run-examples: $TILEC not built (run tools/setup.sh)" >&2; exit 1; }
LOG=$(mktemp -d)
trap 'rm -rf "$LOG"' EXIT
pass=0 fail=0

# PTX where the GPU backend is built (every op, dot included), else the tile IR.
emit=tir
if "$TILEC" examples/vector_add.tile --emit=ptx -o /dev/null 2>/dev/null; then emit=ptx; fi
echo "== compiling examples/*.tile (--emit=$emit)"
for f in examples/*.tile; do
    # Kernels with const parameters need a value: take the -D of the file's first
    # line in run.txt, if it has one.
    defs=()
    if [ -f examples/run.txt ]; then
        read -r -a line < <(grep -E "^$f " examples/run.txt | head -1) || true
        for ((i = 0; i < ${#line[@]}; i++)); do
            case "${line[i]}" in
            -D) defs+=(-D "${line[i+1]}") ;;
            -D?*) defs+=("${line[i]}") ;;
            esac
        done
    fi
    if "$TILEC" "$f" --emit=$emit ${defs[@]+"${defs[@]}"} -o "$LOG/out" 2>"$LOG/err"; then
        echo "ok    compile $f ($emit)"; pass=$((pass + 1))
    else
        echo "FAIL  compile $f"; sed 's/^/      /' "$LOG/err"; fail=$((fail + 1))
    fi
done

# The device: cuda where a GPU is visible and tilec can drive it.
device=interp
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    if "$TILEC" run examples/vector_add.tile --kernel vector_add --device=cuda \
        x=zeros:16 y=zeros:16 out=zeros:16 n=16 >/dev/null 2>"$LOG/err"; then
        device=cuda
    else
        echo "note: a GPU is present but this tilec cannot run on it: $(head -1 "$LOG/err")"
    fi
fi
if [ "$device" = cuda ]; then
    echo "== running examples on the GPU (--device=cuda)"
else
    echo "== running examples on the interpreter (--device=interp): no GPU backend or no GPU here"
fi
if [ -f examples/run.txt ]; then
    while read -r file kernel rest; do
        case "$file" in ''|'#'*) continue ;; esac
        read -r -a args <<<"$rest"
        dev=$device note=""
        if "$TILEC" run "$file" --kernel "$kernel" --device="$dev" ${args[@]+"${args[@]}"} \
            >"$LOG/out" 2>"$LOG/err" </dev/null; then
            echo "ok    run $file $kernel$note"; pass=$((pass + 1))
        else
            echo "FAIL  run $file $kernel $rest"; sed 's/^/      /' "$LOG/err" | head -20
            fail=$((fail + 1))
        fi
    done <examples/run.txt
else
    echo "note: no examples/run.txt: nothing to run"
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
