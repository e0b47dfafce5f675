"""The kernel the packaging tests (find_versioned.py, pip_install.sh) run once they have
found the module and its runtime: out[i] = 2 i for i < n, through an __array_interface__
buffer (no numpy), on whatever device the runtime picks."""
import array


def check(tilec):
    k = tilec.load("kernel twice(out: *i32, n: i32) grid(1) { let i = arange(0, 64); "
                   "store(out + i, i * 2, mask=i < n); }", name="twice.tile").twice
    buf = array.array("i", [0] * 64)

    class A:
        __array_interface__ = {"data": (buf.buffer_info()[0], False), "shape": (64,),
                               "typestr": "<i4", "version": 3}

    k(A(), 64)
    assert list(buf) == [2 * i for i in range(64)], list(buf)[:8]
