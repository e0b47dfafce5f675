"""The numpy side of the Python module on the interpreter (CTest: python.numpy; skipped,
exit 77, where numpy is not installed).  bf16 through ml_dtypes is checked where it is."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import numpy as np
except ImportError:
    print("SKIP: numpy is not installed (apt-get install python3-numpy, or pip install numpy)")
    sys.exit(77)
import tilec  # noqa: E402
from test_tilec import expect  # noqa: E402

EX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


def main():
    k = tilec.load(os.path.join(EX, "vector_add.tile")).vector_add
    rng = np.random.default_rng(1)
    n = 1000
    x = rng.standard_normal(2 * n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    # issue 10, item 1: float64 for *f32 ran and returned garbage; float16 failed as an
    # out-of-bounds load; a[::2] silently read the base buffer
    expect(TypeError, lambda: k(x[:n].astype(np.float64), y, out, n), "'x'", "*f32", "float64")
    expect(TypeError, lambda: k(x[:n].astype(np.float16), y, out, n), "'x'", "*f32", "float16")
    expect(ValueError, lambda: k(x[::2], y, out, n), "'x'", "not contiguous")
    assert not out.any(), "a rejected launch wrote its output"
    k(x[::2].copy(), y, out, n)
    assert np.array_equal(out, x[::2] + y)
    k(tilec.strided(x[::2]), y, out, n)          # the first element's address, as documented
    assert np.array_equal(out, x[:n] + y)
    m = np.zeros((2, 2 * n), np.float32)
    expect(ValueError, lambda: k(m[:, :n], y, out, n), "not contiguous")
    k(x[:n], y, out, np.int32(n))                # numpy scalars are scalars
    assert np.array_equal(out, x[:n] + y)
    # issue 35: np.frombuffer(bytes) is read-only: refused as an output, not written through
    ro = np.frombuffer(bytes(4 * n), dtype=np.float32)
    expect(ValueError, lambda: k(x[:n], y, ro, n), "'out'", "read-only")
    assert not ro.any(), "a read-only output was written through"
    k(ro, y, out, n)                             # as an input it is fine
    assert np.array_equal(out, y)
    # a 0-size array where the kernel leaves it alone; else refused in Python's words
    from test_tilec import TRITON_USER
    user = tilec.load(TRITON_USER, name="user.tile")
    empty = np.zeros(0, np.float32)
    user.twice(empty, empty, 0)
    expect(ValueError, lambda: user.twice(empty, out, 1), "'x'", "empty array")
    # u64 from numpy: 2^64 - 1 as an argument and a constant
    o = np.zeros(2, np.int32)
    user.scaled(o, np.uint64(2**64 - 1), S=np.int32(3), C=np.uint64(2**64 - 2))
    assert list(o) == [3, 3]
    try:
        import ml_dtypes
    except ImportError:
        print("ml_dtypes not installed: bf16 arrays not tried")
    else:
        src = ("kernel up(out: *f32, x: *bf16, n: i32) grid(cdiv(n, 256)) { let o = "
               "program_id(0) * 256 + arange(0, 256); let m = o < n; "
               "store(out + o, load(x + o, mask=m) as f32, mask=m); }")
        up = tilec.load(src, name="up.tile").up
        xb = x[:n].astype(ml_dtypes.bfloat16)
        up(out, xb, n)
        assert np.array_equal(out, xb.astype(np.float32))
        expect(TypeError, lambda: up(out, x[:n], n), "'x'", "*bf16", "float32")
        print("bf16 (ml_dtypes): ok")
    print("python/tilec with numpy: all checks passed")


if __name__ == "__main__":
    main()
