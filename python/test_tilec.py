"""Checks of the Python module on the interpreter device, without numpy (CTest: python.tilec).

    TILEC_RT_LIB=build/runtime/libtilert.so python3 python/test_tilec.py

Host buffers are array.array objects behind an __array_interface__, so each element type,
stride and shape can be described exactly; python/test_numpy.py repeats the essentials with
numpy where it is installed.
"""
import array
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tilec  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EX = os.path.join(REPO, "examples")


class HostArray:
    """A host buffer with __array_interface__: `typestr` describes its elements as numpy
    would ('<f4', '<f8', '<f2'), `strides` (bytes) makes a strided view of it."""

    def __init__(self, values, code="f", typestr="<f4", shape=None, strides=None):
        self.a = array.array(code, values)
        addr, n = self.a.buffer_info()
        self.__array_interface__ = {"data": (addr, False), "shape": shape or (n,),
                                    "typestr": typestr, "version": 3, "strides": strides}


def expect(exc, fn, *words):
    """fn() raises exc, and its message holds every one of `words`."""
    try:
        fn()
    except exc as e:
        msg = str(e)
        for w in words:
            assert w in msg, f"{w!r} not in {msg!r}"
        return msg
    raise AssertionError(f"no {exc.__name__} (expected one mentioning {words})")


def check_device_api():
    dev = tilec.Device("interp")
    assert dev.name == "interpreter", dev.name
    k = dev.load_source(os.path.join(EX, "vector_add.tile")).kernel("vector_add")
    assert k.params == ["x", "y", "out", "n"], k.params
    n = 3001
    x = HostArray([math.sin(i) for i in range(n)])
    y = HostArray([math.cos(i) for i in range(n)])
    out = HostArray([float("nan")] * n)
    k(x, y, out, n)
    want = array.array("f", [x.a[i] + y.a[i] for i in range(n)])   # rounded to f32
    assert out.a == want, "vector_add on the interpreter"
    out2 = HostArray([float("nan")] * n)
    k.bind(x, y, out2, n, grid=(math.ceil(n / 1024),))()
    assert out2.a == want, "bound launch with an explicit grid"
    out3 = HostArray([float("nan")] * n)
    k.bind(x, y, out3, n, grid=lambda meta: (tilec.cdiv(meta["n"], meta["BLOCK"]),))()
    assert out3.a == want and k.last_launch_info()["grid"] == (3, 1, 1), "bound, grid from META"
    expect(TypeError, lambda: k(x, y, out), "takes 4 arguments", "got 3")
    info = k.last_launch_info()
    assert info["grid"] == (3, 1, 1), info          # the bound launch's grid
    fill = dev.load_source("kernel fill(out: *f32) { store(out + arange(0, 16), "
                           "zeros([16], f32)); }", name="fill.tile").kernel("fill")
    msg = expect(tilec.Error, lambda: fill(HostArray([1.0] * 16)), "kernel[grid](...)")
    assert "--grid" not in msg, msg
    dev.close()


def check_types_and_strides():
    """Issue 10, item 1: the element type must be the pointee's, views must be contiguous."""
    k = tilec.load(os.path.join(EX, "vector_add.tile")).vector_add
    n = 64
    y = HostArray([1.0] * n)
    out = HostArray([0.0] * n)
    f64 = HostArray([2.0] * n, code="d", typestr="<f8")
    expect(TypeError, lambda: k(f64, y, out, n), "'x'", "*f32", "float64", "astype(np.float32)")
    f16 = HostArray([0] * n, code="H", typestr="<f2")
    expect(TypeError, lambda: k(y, f16, out, n), "'y'", "*f32", "float16")
    i32 = HostArray([0] * n, code="i", typestr="<i4")
    expect(TypeError, lambda: k(y, y, i32, n), "'out'", "int32")
    # every second element of a 2n buffer: not contiguous
    base = HostArray([float(i) for i in range(2 * n)])
    view = HostArray([], shape=(n,), strides=(8,))
    view.a = base.a
    view.__array_interface__["data"] = base.__array_interface__["data"]
    view.__array_interface__["shape"] = (n,)
    expect(ValueError, lambda: k(view, y, out, n), "'x'", "not contiguous", "tilec.strided")
    assert list(out.a) == [0.0] * n, "a rejected launch wrote its output"
    # strided(): the address of the first element; this kernel then reads the first n
    k(tilec.strided(view), y, out, n)
    assert list(out.a) == [float(i) + 1.0 for i in range(n)], list(out.a)[:4]
    # a C-contiguous 2-D view with explicit strides is contiguous
    m = HostArray([1.0] * n, shape=(8, 8), strides=(32, 4))
    out2 = HostArray([0.0] * n)
    k(m, y, out2, n)
    assert list(out2.a) == [2.0] * n
    expect(TypeError, lambda: k(y, y, out, 2.5), "'n'", "integer", "int(")
    expect(TypeError, lambda: k(y, 3, out, n), "'y'", "pointer", "*f32")
    expect(TypeError, lambda: k(y, y, out, y), "'n'", "scalar")
    expect(ValueError, lambda: k(y, y, out, 1 << 40), "'n'", "outside")


def check_triton_call():
    mod = tilec.load(os.path.join(EX, "softmax.tile"))
    assert "softmax" in mod.kernels, mod.kernels
    k = mod.softmax
    assert k.params == ["out", "x", "rows", "cols"], k.params
    rows, cols = 3, 300
    xs = [math.sin(0.37 * i) * 4 for i in range(rows * cols)]
    x = HostArray(xs)
    ref = []
    for r in range(rows):
        row = xs[r * cols:(r + 1) * cols]
        mx = max(row)
        e = [math.exp(v - mx) for v in row]
        ref += [v / sum(e) for v in e]

    def close(out):
        return all(abs(a - b) <= 1e-6 + 1e-5 * abs(b) for a, b in zip(out.a, ref))
    out = HostArray([float("nan")] * (rows * cols))
    k[(rows,)](out, x, rows, cols)
    assert close(out), "k[grid](...)"
    out = HostArray([float("nan")] * (rows * cols))
    k[lambda meta: (meta["rows"],)](out, x, cols=cols, rows=rows)     # keywords, callable grid
    assert close(out), "keyword arguments and a callable grid"
    out = HostArray([float("nan")] * (rows * cols))
    k[rows](out, x, rows, cols, BLOCK=1024)                          # a tuned constant pinned
    assert close(out) and "BLOCK=1024" in k.last_variant, k.last_variant
    k(out, x, rows, cols)                                            # the grid clause, no pin
    assert "BLOCK=1024" not in k.last_variant, "a pin of the last call held: " + k.last_variant
    k(out, x, rows, cols, BLOCK=2048, warps=8)
    assert "BLOCK=2048" in k.last_variant and "warps=8" in k.last_variant, k.last_variant
    # a tuned constant may be pinned outside its tune list, as -D BLOCK=128 on the CLI
    k(out, x, rows, cols, BLOCK=32768, warps=2)
    assert "BLOCK=32768" in k.last_variant and close(out), k.last_variant
    expect(TypeError, lambda: k(out, x, rows, cols, BLOCK="1024"), "'BLOCK'", "number")
    expect(TypeError, lambda: k(out, x, rows, colz=cols), "unexpected keyword", "'colz'",
           "did you mean 'cols'")
    expect(TypeError, lambda: k(out, x, rows, cols, BLCOK=1024), "did you mean 'BLOCK'")
    expect(TypeError, lambda: k(out, x, rows), "missing argument 'cols'")
    expect(TypeError, lambda: k(out, x, rows, cols, rows=rows), "twice")
    expect(AttributeError, lambda: mod.softmx, "no kernel 'softmx'", "did you mean 'softmax'")
    # no variant admits cols > 16384: the runtime's error, raised as tilec.Error
    big = HostArray([0.0] * 20000)
    expect(tilec.Error, lambda: k(big, big, 1, 20000), "ERR_NO_VARIANT", "BLOCK >= cols")

    act = tilec.load(os.path.join(EX, "activations.tile")).activation
    n = 100
    xv = HostArray([i / 10 - 5 for i in range(n)])
    yv = HostArray([0.0] * n)
    msg = expect(TypeError, lambda: act(yv, xv, n), "'ACT'", "ACT=...", "keyword")
    assert "-D" not in msg and "tile_rt" not in msg, msg
    act(yv, xv, n, ACT=4)
    hs = [v * min(max(v + 3.0, 0.0), 6.0) / 6.0 for v in xv.a]
    assert all(abs(a - b) <= 1e-6 for a, b in zip(yv.a, hs)), "ACT=4 is hardswish"
    # a second call must say ACT again: nothing is remembered
    expect(TypeError, lambda: act(yv, xv, n), "'ACT'")

    nogrid = tilec.load("kernel fill(out: *f32, v: f32) { store(out + arange(0, 16), "
                        "zeros([16], f32) + v); }", name="fill.tile").fill
    o = HostArray([0.0] * 16)
    msg = expect(TypeError, lambda: nogrid(o, 2.0), "fill[grid](...)")
    assert "tile_rt" not in msg, msg
    nogrid[1](o, 2.0)
    assert list(o.a) == [2.0] * 16
    ms = tilec.do_bench(lambda: nogrid[1](o, 3.0), warmup=1, rep=5)
    assert ms > 0 and list(o.a) == [3.0] * 16, ms
    lo, mid = tilec.do_bench(lambda: nogrid[1](o, 3.0), warmup=1, rep=5, quantiles=[0.2, 0.5])
    assert 0 < lo <= mid


TRITON_USER = """
kernel add1(x: *f32, out: *f32, n: i32, const CAUSAL: bool) tune BLOCK in [64, 128] {
    let o = program_id(0) * BLOCK + arange(0, BLOCK);
    let m = o < n;
    store(out + o, load(x + o, mask=m) + (CAUSAL as f32), mask=m);
}
kernel scaled(out: *i32, const S: i32, v: u64, const C: u64) grid(1) {
    store(out + arange(0, 2), full([2], S, i32));
    assert(v > C, "v must exceed C");
}
kernel twice(x: *f32, out: *f32, n: i32) grid(1) {
    let o = arange(0, 4);
    if n > 0 { store(out + o, load(x + o) * 2.0); }
}
kernel shout(n: i32) grid(2) { print("tile says", n); }
"""


def check_triton_user():
    """Issue 34: what a Triton user expects of the grid, constants and variants."""
    assert tilec.cdiv(300, 128) == 3 and tilec.cdiv(256, 128) == 2 and tilec.cdiv(0, 64) == 0
    assert [tilec.next_power_of_2(n) for n in (0, 1, 2, 3, 64, 65)] == [1, 1, 2, 4, 64, 128]
    mod = tilec.load(TRITON_USER, name="user.tile")
    k = mod.add1
    n = 300
    x = HostArray([float(i) for i in range(n)])

    def run(**consts):
        out = HostArray([-1.0] * n)
        seen = []

        def grid(meta):
            seen.append(dict(meta))
            return (tilec.cdiv(meta["n"], meta["BLOCK"]),)
        k[grid](x, out, n, **consts)
        return out, seen
    # the grid callable sees the constants of the variant that runs (KeyError before)
    out, seen = run(CAUSAL=True)
    assert list(out.a) == [float(i) + 1 for i in range(n)], "add1 with CAUSAL=True"
    assert seen[-1]["BLOCK"] == 64 and seen[-1]["warps"] == 4 and seen[-1]["CAUSAL"] is True, seen
    assert k.last_config == {"CAUSAL": True, "BLOCK": 64, "warps": 4, "stages": 2}, k.last_config
    out, _ = run(CAUSAL=False, BLOCK=128)
    assert list(out.a) == [float(i) for i in range(n)] and k.last_config["BLOCK"] == 128
    expect(TypeError, lambda: run(CAUSAL=1), "'CAUSAL'", "bool", "True or False")
    # the variants and the tune lists' values are named; each variant runs when pinned
    assert k.tune_values == {"BLOCK": [64, 128]}, k.tune_values
    vs = k.variants(CAUSAL=True)
    assert vs == [{"CAUSAL": True, "BLOCK": 64, "warps": 4, "stages": 2},
                  {"CAUSAL": True, "BLOCK": 128, "warps": 4, "stages": 2}], vs
    ran = []
    for v in vs:
        out, seen = run(**v)
        assert list(out.a) == [float(i) + 1 for i in range(n)], v
        ran.append(k.last_config["BLOCK"])
        assert seen[-1]["BLOCK"] == v["BLOCK"], (seen, v)
    assert ran == [64, 128], ran
    assert len(k.variants(CAUSAL=False, BLOCK=128)) == 1
    expect(TypeError, lambda: k.variants(), "'CAUSAL'")
    expect(TypeError, lambda: k.variants(CAUSAL=True, BLOK=64), "did you mean 'BLOCK'")
    # a grid callable's own error comes back as it was raised
    expect(KeyError, lambda: k[lambda m: (m["NOPE"],)](x, x, n, CAUSAL=True), "NOPE")
    # constants are checked as strictly as arguments (issue 35): 1.5 for i32 was run as 1
    s = mod.scaled
    o = HostArray([0, 0], code="i", typestr="<i4")
    expect(TypeError, lambda: s(o, 1 << 63, S=1.5, C=0), "'S'", "integer", "float")
    expect(ValueError, lambda: s(o, 1 << 63, S=1 << 31, C=0), "'S'", "outside")
    # u64 of 2^63 and up, as an argument and as a constant
    s(o, (1 << 64) - 1, S=7, C=(1 << 64) - 2)
    assert list(o.a) == [7, 7], list(o.a)
    expect(ValueError, lambda: s(o, 1 << 64, S=7, C=0), "'v'", "outside")
    expect(ValueError, lambda: s(o, -1, S=7, C=0), "'v'", "outside")
    # warps the compiler refuses are refused on the interpreter too
    expect(ValueError, lambda: s(o, 5, S=1, C=0, warps=3), "warps=3", "power of two")
    expect(ValueError, lambda: s(o, 5, S=1, C=0, warps=64), "warps=64")
    s(o, 5, S=1, C=0, warps=32)
    # asserts: unchecked by default, checked with debug=True
    s(o, 1, S=1, C=(1 << 64) - 2)
    dbg = tilec.load(TRITON_USER, name="user.tile", debug=True).scaled
    dbg(o, (1 << 64) - 1, S=1, C=(1 << 64) - 2)
    expect(tilec.Error, lambda: dbg(o, 1, S=1, C=(1 << 64) - 2), "v must exceed C")
    # a read-only array is refused as an output, and left as it was
    t = mod.twice
    src = HostArray([1.0, 2.0, 3.0, 4.0])
    ro = HostArray([5.0, 6.0, 7.0, 8.0])
    ro.__array_interface__["data"] = (ro.__array_interface__["data"][0], True)
    out = HostArray([0.0] * 4)
    t(ro, out, 1)                                        # read-only input: fine
    assert list(out.a) == [10.0, 12.0, 14.0, 16.0], list(out.a)
    expect(ValueError, lambda: t(src, ro, 1), "'out'", "read-only", "writes it")
    assert list(ro.a) == [5.0, 6.0, 7.0, 8.0], "a read-only output was written through"
    # an empty array: fine where the kernel leaves it alone, else refused in Python's words
    e = HostArray([], shape=(0,))
    t(e, e, 0)
    msg = expect(ValueError, lambda: t(e, out, 1), "'x'", "empty array")
    assert "tile_rt" not in msg and "buf.bytes" not in msg, msg


def check_print_visible():
    """A kernel's print() reaches the process's stdout (it was discarded)."""
    import subprocess
    code = ("import sys; sys.path.insert(0, %r); import tilec, test_tilec; "
            "tilec.load(test_tilec.TRITON_USER, name='user.tile').shout(42)"
            % os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("tile says: 42") == 2, repr(r.stdout)


def main():
    check_device_api()
    check_types_and_strides()
    check_triton_call()
    check_triton_user()
    check_print_visible()
    print("python/tilec: all checks passed")


if __name__ == "__main__":
    main()
