#!/bin/sh
# pip_install.sh PYTHON PYDIR TILEC_BINDIR SCRATCH: `pip install` the module into SCRATCH
# (offline: no build isolation, no dependencies), then, from another directory and with no
# TILEC_* variable set, import it with only the build's tilec on PATH and run a kernel.
set -e
py=$1 src=$2 bindir=$3 w=$4
here=$(cd "$(dirname "$0")" && pwd)   # twice.py, the kernel run at the end
have_wheel() {
    "$py" -c "import wheel" 2>/dev/null || "$py" -c "import setuptools.command.bdist_wheel" 2>/dev/null
}
if ! "$py" -m pip --version >/dev/null 2>&1 || ! "$py" -c "import setuptools" 2>/dev/null ||
   ! have_wheel; then
    echo "SKIP: pip, setuptools or wheel (a setuptools without bdist_wheel) is missing for $py"
    exit 77
fi
rm -rf "$w"; mkdir -p "$w/site" "$w/elsewhere"
cp -r "$src" "$w/src"          # pip builds in the source folder: keep the clone clean
"$py" -m pip install --quiet --no-build-isolation --no-deps --no-index --target "$w/site" "$w/src"
[ -f "$w/site/tilec/__init__.py" ] || { echo "FAIL: nothing installed"; exit 1; }
cd "$w/elsewhere"
unset TILEC_RT_LIB TILEC_PREFIX
PATH="$bindir:$PATH" PYTHONPATH="$w/site:$here" "$py" - <<'PY'
import tilec, twice
print("tilec from", tilec.__file__)
assert "/site/tilec/" in tilec.__file__, tilec.__file__
twice.check(tilec)
print("installed module: ok")
PY
