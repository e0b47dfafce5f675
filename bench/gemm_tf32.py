"""tf32 GEMM on the H200: tilec's examples/gemm_tf32.tile against Triton (tl.dot with
input_precision="tf32", the same autotuned configs as bench/gemm.py) and cuBLAS
(torch.matmul with TF32 allowed), one process, same f32 inputs, results checked.

    DISABLE_MMA_V3=1 python3 bench/gemm_tf32.py   (Triton restricted to mma.sync)

Each output is compared with torch.matmul in f64 of the same inputs: tf32 rounds every
input to 10 mantissa bits, so the bound is 2^-10 relative per product, summed over K.
The median of triton.testing.do_bench is reported as TFLOP/s.
"""
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
import triton.testing  # noqa: E402

import tilec  # noqa: E402
from gemm import _configs, strides, tflops  # noqa: E402


@triton.autotune(configs=_configs(), key=["M", "N", "K"])
@triton.jit
def _tr_tf32(a, b, c, M, N, K, lda, ldb, ldc, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
             GROUP: tl.constexpr):
    pid = tl.program_id(0)
    per_group = GROUP * tl.cdiv(N, BN)
    first_m = (pid // per_group) * GROUP
    group_m = tl.minimum(tl.cdiv(M, BM) - first_m, GROUP)
    pm = first_m + (pid % per_group) % group_m
    pn = (pid % per_group) // group_m
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    pa = a + rm[:, None].to(tl.int64) * lda + rk[None, :]
    pb = b + rk[:, None].to(tl.int64) * ldb + rn[None, :]
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        av = tl.load(pa, mask=(rm[:, None] < M) & (rk[None, :] < K - k), other=0.0)
        bv = tl.load(pb, mask=(rk[:, None] < K - k) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(av, bv, acc, input_precision="tf32")
        pa += BK
        pb += BK * ldb
    tl.store(c + rm[:, None].to(tl.int64) * ldc + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def main():
    mode = "mma.sync" if os.environ.get("DISABLE_MMA_V3") == "1" else "default"
    torch.backends.cuda.matmul.allow_tf32 = True
    dev = tilec.Device("cuda")
    kern = dev.load_source(os.path.join(REPO, "examples/gemm_tf32.tile")).kernel("gemm_tf32")
    print(f"tf32 GEMM TFLOP/s (Triton mode: {mode}); tilec / Triton / cuBLAS, max error / bound")
    bad = 0
    for (M, N, K) in [(4096, 4096, 4096), (8192, 8192, 8192), (4000, 3000, 5000)]:
        a = torch.randn(M, K, device="cuda", dtype=torch.float32)
        b = torch.randn(K, N, device="cuda", dtype=torch.float32)
        want = torch.matmul(a.double(), b.double())
        bound = (2.0 ** -10 * torch.matmul(a.abs().double(), b.abs().double())).max().item()
        outs = {k: torch.full((M, N), float("nan"), device="cuda") for k in ("tilec", "triton", "cublas")}
        grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)  # noqa: E731
        fns = {"tilec": kern.bind(a, b, outs["tilec"], M, N, K, *strides(a, b, outs["tilec"])),
               "triton": lambda: _tr_tf32[grid](a, b, outs["triton"], M, N, K, K, N, N),
               "cublas": lambda: torch.matmul(a, b, out=outs["cublas"])}
        line = f"  {M}x{N}x{K}:"
        res = {}
        for name, fn in fns.items():
            fn()
            torch.cuda.synchronize()
            err = (outs[name].double() - want).abs().max().item()
            ok = err <= bound
            bad += not ok
            res[name] = tflops(M, N, K, triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median"))
            line += f" {name} {res[name]:6.1f} ({err / bound:.2f}{'' if ok else ' FAILED'})"
        print(f"{line}  ratio tilec/triton {res['tilec'] / res['triton']:.3f}  [{kern.last_variant}]", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
