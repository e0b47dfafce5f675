#!/bin/sh
# Formats the tree's C sources with clang-format (.clang-format at the root), or with
# --check lists the files that differ and exits 1.  CI runs the check (.ci/run).
#   tools/format.sh [--check]
# $CLANG_FORMAT names the program (default: clang-format-22, else clang-format).
set -eu
cd "$(dirname "$0")/.."
cf=${CLANG_FORMAT:-}
if [ -z "$cf" ]; then
  if command -v clang-format-22 >/dev/null 2>&1; then cf=clang-format-22; else cf=clang-format; fi
fi
files=$(git ls-files '*.c' '*.h')
if [ "${1:-}" = --check ]; then
  bad=0
  for f in $files; do
    if ! "$cf" --dry-run --Werror "$f" >/dev/null 2>&1; then
      echo "not formatted: $f (run tools/format.sh)" >&2
      bad=1
    fi
  done
  exit $bad
fi
# shellcheck disable=SC2086
"$cf" -i $files
