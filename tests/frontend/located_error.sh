#!/bin/sh
# located_error.sh TILEC FILE.tile 'LINE:COL: error: TEXT' [TILEC ARGS...]: compiling FILE
# fails, and its first error is located there (issue 35: errors the passes raise about a
# kernel carry FILE:LINE:COL like the front end's, with the source line and a caret).
T=$1 F=$2 WANT=$3
shift 3
ERR=$("$T" "$F" "$@" -o /dev/null 2>&1) && { echo "FAIL: $F compiled" >&2; exit 1; }
case $ERR in
*"$(basename "$F"):$WANT"*) ;;
*) printf 'FAIL: no "%s:%s" in:\n%s\n' "$(basename "$F")" "$WANT" "$ERR" >&2; exit 1 ;;
esac
printf '%s\n' "$ERR" | grep -q '^ *\^' || { printf 'FAIL: no caret in:\n%s\n' "$ERR" >&2; exit 1; }
echo ok
