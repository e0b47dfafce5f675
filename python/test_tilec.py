"""A check of the ctypes module without a GPU (not part of ctest: CI runs no Python).

    python3 python/test_tilec.py      # interp device; numpy if present, else ctypes arrays
"""
import array
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tilec  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class HostArray:
    """A float32 host buffer with __array_interface__, for machines without numpy."""

    def __init__(self, values):
        self.a = array.array("f", values)
        self.nbytes = len(self.a) * 4
        addr, _ = self.a.buffer_info()
        self.__array_interface__ = {"data": (addr, False), "shape": (len(self.a),),
                                    "typestr": "<f4", "version": 3}


def main():
    dev = tilec.Device("interp")
    assert dev.name == "interpreter", dev.name
    mod = dev.load_source(os.path.join(REPO, "examples", "vector_add.tile"))
    k = mod.kernel("vector_add")
    assert k.params == ["x", "y", "out", "n"], k.params
    n = 3001
    x = HostArray([math.sin(i) for i in range(n)])
    y = HostArray([math.cos(i) for i in range(n)])
    out = HostArray([float("nan")] * n)
    k(x, y, out, n)
    want = array.array("f", [x.a[i] + y.a[i] for i in range(n)])   # rounded to f32
    bad = sum(1 for i in range(n) if out.a[i] != want[i])
    assert bad == 0, f"{bad} wrong elements"
    print("vector_add on interp:", k.last_variant, "ok")
    out2 = HostArray([float("nan")] * n)
    launch = k.bind(x, y, out2, n, grid=(math.ceil(n / 1024),))
    launch()
    assert list(out2.a) == list(want), "bound launch with an explicit grid"
    try:
        k(x, y, out)
    except tilec.Error as e:
        assert e.status == "ERR_ARGS", e
        print("wrong argument count:", e)
    else:
        raise AssertionError("a launch with 3 of 4 arguments succeeded")
    try:
        import numpy as np
    except ImportError:
        print("numpy not installed: numpy path not tried")
    else:
        sm = dev.load_source(os.path.join(REPO, "examples", "softmax.tile")).kernel("softmax")
        xs = np.random.default_rng(0).standard_normal((3, 1000)).astype(np.float32)
        o = np.full_like(xs, np.nan)
        sm(o, xs, 3, 1000)
        e = np.exp(xs - xs.max(1, keepdims=True))
        ref = e / e.sum(1, keepdims=True)
        assert np.allclose(o, ref, rtol=1e-5, atol=1e-7), np.abs(o - ref).max()
        print("softmax on interp (numpy): ok")
    dev.close()
    print("python/tilec: all checks passed")


if __name__ == "__main__":
    main()
