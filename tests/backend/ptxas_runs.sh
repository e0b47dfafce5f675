#!/bin/sh
# ptxas_runs.sh N PTXAS CMD...: runs CMD (a compile) with $TILEC_PTXAS set to a stand-in
# that counts its runs and then runs the real PTXAS; fails unless CMD succeeds and ptxas
# ran exactly N times (N+: at least N times).  The register budget (backend/cubin.c) compiles some kernels again
# under a register cap: this counts those compiles without timing anything.
want=$1; real=$2; shift 2
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
cat >"$dir/ptxas" <<EOS
#!/bin/sh
echo run >>"$dir/runs"
exec "$real" "\$@"
EOS
chmod +x "$dir/ptxas"
TILEC_PTXAS="$dir/ptxas" "$@" -o "$dir/out.cubin" >"$dir/out" 2>&1 || {
    echo "FAIL: the compile failed:"; cat "$dir/out"; exit 1; }
got=0
[ -f "$dir/runs" ] && got=$(wc -l <"$dir/runs" | tr -d " ")
case "$want" in
*+) ok=$([ "$got" -ge "${want%+}" ] && echo y) ;;
*) ok=$([ "$got" = "$want" ] && echo y) ;;
esac
if [ -z "$ok" ]; then
    echo "FAIL: ptxas ran $got times, expected $want"; cat "$dir/out"; exit 1
fi
echo "ptxas ran $got times, as expected"
