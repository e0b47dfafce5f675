"""tf32 GEMM on the H200: tilec's examples/gemm_tf32.tile against Triton (bench/gemm.py's
kernel on f32 inputs: tl.dot's input_precision defaults to the NVIDIA backend's
default_dot_input_precision, "tf32", checked below) and cuBLAS (torch.matmul with TF32 allowed), one process,
same f32 inputs, results checked.

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
import triton.testing  # noqa: E402

import tilec  # noqa: E402
from gemm import strides, tflops, triton_matmul  # noqa: E402


def main():
    mode = "mma.sync" if os.environ.get("DISABLE_MMA_V3") == "1" else "default"
    from triton.backends.nvidia.compiler import CUDAOptions
    if CUDAOptions.default_dot_input_precision != "tf32":
        print("this Triton's f32 dot is not tf32 by default", file=sys.stderr)
        return 2
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
        fns = {"tilec": kern.bind(a, b, outs["tilec"], M, N, K, *strides(a, b, outs["tilec"])),
               "triton": lambda: triton_matmul(a, b, outs["triton"]),
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
