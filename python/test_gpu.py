"""The Python module on the GPU (CTest: python.gpu, label gpu; exit 77 without a GPU or
numpy): device arrays from tilec.to_device, then, where torch is installed, CUDA tensors on
torch's current stream, bf16 tensors, and the element-type and contiguity checks."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import numpy as np
except ImportError:
    print("SKIP: numpy is not installed")
    sys.exit(77)
import tilec  # noqa: E402
from test_tilec import expect  # noqa: E402

EX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
if not tilec.cuda_available():
    print("SKIP: no GPU (the cuda device does not open here)")
    sys.exit(77)


def ref_softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


sm = tilec.load(os.path.join(EX, "softmax.tile")).softmax
rows, cols = 64, 3000
x = np.random.default_rng(3).standard_normal((rows, cols), dtype=np.float32)
xd, od = tilec.to_device(x), tilec.to_device(np.full_like(x, np.nan))
sm[(rows,)](od, xd, rows, cols)
assert np.allclose(od.numpy(), ref_softmax(x), rtol=1e-5, atol=1e-7), "softmax, device arrays"
print("device arrays:", sm.last_variant)
expect(TypeError, lambda: sm(od, x, rows, cols), "host memory", "GPU")

try:
    import torch
except ImportError:
    print("torch not installed: the torch checks were not run")
else:
    xt = torch.from_numpy(x).cuda()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        ot = torch.full_like(xt, float("nan"))
        sm[(rows,)](ot, xt, rows, cols)          # on s, torch's current stream here
        res = ot.cpu()                           # ordered after the launch on s
    assert torch.allclose(res, torch.from_numpy(ref_softmax(x)), rtol=1e-5, atol=1e-7)
    expect(TypeError, lambda: sm(ot, xt.double(), rows, cols), "'x'", "*f32", "torch.float64")
    expect(ValueError, lambda: sm(ot, xt[:, ::2], rows, cols // 2), "'x'", "not contiguous")
    up = tilec.load("kernel up(out: *f32, x: *bf16, n: i32) grid(cdiv(n, 256)) { let o = "
                    "program_id(0) * 256 + arange(0, 256); let m = o < n; "
                    "store(out + o, load(x + o, mask=m) as f32, mask=m); }", name="up.tile").up
    xb = xt.flatten()[:1000].to(torch.bfloat16)
    of = torch.empty(1000, device="cuda")
    up(of, xb, 1000)
    assert torch.equal(of, xb.float()), "bf16 tensor"
    ms = tilec.do_bench(lambda: sm[(rows,)](ot, xt, rows, cols))
    print(f"torch tensors: ok (softmax {ms * 1e3:.1f} us by tilec.do_bench)")
# Issue 34 on the GPU: the grid callable sees each tuned variant's constants (the tuner
# times every BLOCK with its own grid), variants pinned one by one, print and debug=True.
from test_tilec import TRITON_USER  # noqa: E402
user = tilec.load(TRITON_USER, name="user.tile")
n = 100000
xs = np.arange(n, dtype=np.float32)
xd2 = tilec.to_device(xs)
seen = []


def grid(meta):
    seen.append(meta["BLOCK"])
    return (tilec.cdiv(n, meta["BLOCK"]),)


outd = tilec.to_device(np.zeros(n, np.float32))
user.add1[grid](xd2, outd, n, CAUSAL=True)
assert np.array_equal(outd.numpy(), xs + 1), "add1 on the GPU, grid from META"
assert set(seen) >= {64, 128} or len(seen) == 1, seen   # tuning: every BLOCK saw its grid
for v in user.add1.variants(CAUSAL=False):
    outd = tilec.to_device(np.zeros(n, np.float32))
    user.add1[grid](xd2, outd, n, **v)
    assert np.array_equal(outd.numpy(), xs) and user.add1.last_config["BLOCK"] == v["BLOCK"], v
o2 = tilec.to_device(np.zeros(2, np.int32))
user.scaled(o2, (1 << 64) - 1, S=3, C=(1 << 64) - 2)
assert list(o2.numpy()) == [3, 3], "u64 arguments and constants on the GPU"
dbg = tilec.load(TRITON_USER, name="user.tile", debug=True).scaled
dbg(o2, (1 << 64) - 1, S=1, C=(1 << 64) - 2)
tilec.device("cuda", True).synchronize()
print("grid from META, variants, u64: ok; an assert that fails on the GPU runs last")
import subprocess  # noqa: E402
code = ("import sys; sys.path.insert(0, %r); import tilec, test_tilec; "
        "m = tilec.load(test_tilec.TRITON_USER, name='user.tile'); m.shout[2](42, warps=1); "
        "tilec.device('cuda').synchronize()" % os.path.dirname(os.path.abspath(__file__)))
r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
assert r.returncode == 0 and "tile says" in r.stdout and "42" in r.stdout, (r.stdout, r.stderr)
code = ("import sys; sys.path.insert(0, %r); import tilec, test_tilec, numpy as np; "
        "k = tilec.load(test_tilec.TRITON_USER, name='user.tile', debug=True).scaled; "
        "o = tilec.to_device(np.zeros(2, np.int32)); k(o, 1, S=1, C=2); "
        "tilec.device('cuda', True).synchronize()" % os.path.dirname(os.path.abspath(__file__)))
r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
assert r.returncode != 0 and "Error" in r.stderr, ("a failed assert with debug=True", r.stderr)
print("print and debug=True on the GPU: ok")
print("python on the GPU: all checks passed")
