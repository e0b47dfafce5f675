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
import array  # noqa: E402
k = tilec.load("kernel twice(out: *i32, n: i32) grid(1) { let i = arange(0, 64); "
               "store(out + i, i * 2, mask=i < n); }", name="twice.tile").twice
buf = array.array("i", [0] * 64)


class A:
    __array_interface__ = {"data": (buf.buffer_info()[0], False), "shape": (64,),
                           "typestr": "<i4", "version": 3}


k(A(), 64)
assert list(buf) == [2 * i for i in range(64)], list(buf)[:8]
print("libtilert.so.0 under TILEC_PREFIX: found and run")
