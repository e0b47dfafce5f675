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
print("python on the GPU: all checks passed")
