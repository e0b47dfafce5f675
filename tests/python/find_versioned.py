"""find_versioned.py PYDIR LIBTILERT SCRATCH: a prefix whose lib/ holds only libtilert.so.N
(a runtime-only install, or tools/gpu-pack.sh's folder), named by TILEC_PREFIX, is found,
loaded, and runs a kernel on the interpreter; with lib/ empty, the error names the prefix."""
import os
import shutil
import sys

pydir, lib, w = sys.argv[1:4]
shutil.rmtree(w, ignore_errors=True)
os.makedirs(os.path.join(w, "lib"))
# a copy of the module outside the repository (whose build*/ it would find otherwise)
shutil.copytree(os.path.join(pydir, "tilec"), os.path.join(w, "py", "tilec"))
pydir = os.path.join(w, "py")
os.environ.pop("TILEC_RT_LIB", None)
os.environ["TILEC_PREFIX"] = w
os.chdir(w)                      # no build*/ here, no tilec on PATH needed
os.environ["PATH"] = ""
sys.path.insert(0, pydir)
import tilec  # noqa: E402

try:
    found = tilec._find_library()
except OSError:
    found = None               # nothing anywhere
if found and found.startswith(w):
    sys.exit("FAIL: found " + found + " in an empty prefix")
so = os.path.join(w, "lib", "libtilert.so.0")
shutil.copy(os.path.realpath(lib), so)
assert tilec._find_library() == so, tilec._find_library()
import twice  # noqa: E402  (this script's folder)
twice.check(tilec)
print("libtilert.so.0 under TILEC_PREFIX: found and run")
