#!/usr/bin/env python3
"""The tutorials' kernels (docs/tutorials) on the GPU beside PyTorch and, where bench/ has
the same kernel written in Triton, Triton: one process, same inputs, each result checked
against PyTorch's, the median of triton.testing.do_bench per column.

    python3 bench/tutorials.py [--only vector_add,softmax,matmul_naive,matmul,epilogue,int8,attention]
                               [--json PATH]

Triton columns: vector add and softmax (bench/triton_kernels.py), matmul (bench/gemm.py's
kernel); the others have no Triton kernel in bench/ and print "-".  PyTorch columns:
x + y, torch.softmax, a @ b, gelu(a @ b + bias), torch._int_mm followed by the same
power-of-two scaling, and torch's scaled_dot_product_attention (FlashAttention) for
examples/attention.tile.  Needs torch and triton; --help does not.
"""
import argparse
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUTORIALS = ("vector_add", "softmax", "matmul_naive", "matmul", "epilogue", "int8", "attention")


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated: " + ",".join(TUTORIALS))
    ap.add_argument("--json", metavar="PATH", help="write the rows as JSON")
    return ap.parse_args(argv)


def main(argv):
    a = parse_args(argv)
    sys.path.insert(0, os.path.join(REPO, "python"))
    sys.path.insert(0, os.path.join(REPO, "bench"))
    import torch
    import torch.nn.functional as F
    import triton.testing
    import tilec

    dev = tilec.Device("cuda")
    only = set(a.only.split(",")) if a.only else set(TUTORIALS)

    def kernel(path, name):
        return dev.load_source(os.path.join(REPO, path)).kernel(name)

    def ms(fn):
        fn()
        torch.cuda.synchronize()
        return triton.testing.do_bench(fn, warmup=50, rep=300, return_mode="median")

    rows = []

    def row(name, shape, flops, nbytes, fns, check):
        r = {"tutorial": name, "shape": shape, "flops": flops, "bytes": nbytes, "ms": {}}
        for impl, fn in fns.items():
            if fn is not None:
                r["ms"][impl] = ms(fn)
        r["max_err"] = check()
        rows.append(r)
        cols = "  ".join(f"{impl} {r['ms'][impl]:.4f} ms" if impl in r["ms"] else f"{impl} -"
                         for impl in ("tilec", "triton", "torch"))
        rate = (f"{flops / (r['ms']['tilec'] * 1e-3) / 1e12:.1f} TFLOP/s" if flops
                else f"{nbytes / (r['ms']['tilec'] * 1e-3) / 1e9:.0f} GB/s")
        print(f"{name:10s} {shape:22s} {cols}  tilec {rate}  max err {r['max_err']:.3g}", flush=True)

    cuda = "cuda"
    if "vector_add" in only:
        import triton_kernels as tk
        n = 1 << 28
        x, y = torch.randn(n, device=cuda), torch.randn(n, device=cuda)
        out, out_t = torch.empty_like(x), torch.empty_like(x)
        k = kernel("examples/vector_add.tile", "vector_add").bind(x, y, out, n)
        row("vector_add", "f32 2^28", 0, 3 * n * 4,
            {"tilec": k, "triton": lambda: tk.vector_add(x, y, out_t), "torch": lambda: torch.add(x, y)},
            lambda: (out - (x + y)).abs().max().item())
    if "softmax" in only:
        import triton_kernels as tk
        rows_, cols = 16384, 4096
        x = torch.randn(rows_, cols, device=cuda)
        out, out_t = torch.empty_like(x), torch.empty_like(x)
        k = kernel("examples/softmax.tile", "softmax").bind(out, x, rows_, cols)
        row("softmax", f"f32 {rows_}x{cols}", 0, 2 * rows_ * cols * 4,
            {"tilec": k, "triton": lambda: tk.softmax(x, out_t), "torch": lambda: torch.softmax(x, dim=1)},
            lambda: (out - torch.softmax(x, dim=1)).abs().max().item())
    if only & {"matmul_naive", "matmul", "epilogue", "int8"}:
        M = N = K = 4096
        a16 = torch.randn(M, K, device=cuda, dtype=torch.float16)
        b16 = torch.randn(K, N, device=cuda, dtype=torch.float16)
        strides = (K, 1, N, 1, N, 1)
    if "matmul_naive" in only:
        c = torch.empty(M, N, device=cuda, dtype=torch.float16)
        k = kernel("examples/matmul_naive.tile", "matmul_naive").bind(a16, b16, c, M, N, K, *strides)
        row("matmul_naive", f"f16 {M}^3", 2 * M * N * K, 2 * (M * K + K * N + M * N),
            {"tilec": k, "triton": None, "torch": lambda: a16 @ b16},
            lambda: ((c.float() - (a16 @ b16).float()).abs().max() / (a16 @ b16).float().abs().max()).item())
    if "matmul" in only:
        from gemm import triton_matmul
        c, c_t = torch.empty(M, N, device=cuda, dtype=torch.float16), torch.empty(M, N, device=cuda, dtype=torch.float16)
        k = kernel("examples/matmul.tile", "matmul").bind(a16, b16, c, M, N, K, *strides)
        row("matmul", f"f16 {M}^3", 2 * M * N * K, 2 * (M * K + K * N + M * N),
            {"tilec": k, "triton": lambda: triton_matmul(a16, b16, c_t), "torch": lambda: a16 @ b16},
            lambda: ((c.float() - (a16 @ b16).float()).abs().max() / (a16 @ b16).float().abs().max()).item())
    if "epilogue" in only:
        bias = torch.randn(N, device=cuda, dtype=torch.float16)
        c = torch.empty(M, N, device=cuda, dtype=torch.float16)
        k = kernel("examples/matmul_gelu.tile", "matmul_gelu").bind(a16, b16, bias, c, M, N, K, *strides)
        ref = lambda: F.gelu(a16 @ b16 + bias)  # noqa: E731
        row("epilogue", f"f16 {M}^3 + gelu", 2 * M * N * K, 2 * (M * K + K * N + M * N + N),
            {"tilec": k, "triton": None, "torch": ref},
            lambda: ((c.float() - ref().float()).abs().max() / ref().float().abs().max()).item())
    if "int8" in only:
        a8 = torch.randint(-128, 128, (M, K), device=cuda, dtype=torch.int8)
        b8 = torch.randint(-128, 128, (K, N), device=cuda, dtype=torch.int8)
        ea = torch.randint(-8, 8, (M,), device=cuda, dtype=torch.int8)
        eb = torch.randint(-8, 8, (N,), device=cuda, dtype=torch.int8)
        c32 = torch.empty(M, N, device=cuda, dtype=torch.float32)
        k = kernel("examples/gemm_i8_scaled.tile", "gemm_i8_scaled").bind(a8, b8, ea, eb, c32, M, N, K, *strides)
        sa, sb = torch.exp2(ea.float())[:, None], torch.exp2(eb.float())[None, :]
        ref = lambda: torch._int_mm(a8, b8).float() * sa * sb  # noqa: E731
        # |sums| <= 4096 * 128 * 128 = 2^26 > 2^24: exact in i32, and the f32 scaling of
        # the i32 rounds the same way in both (one rounding), so this is exact too
        row("int8", f"i8 {M}^3, 2^e scales", 2 * M * N * K, M * K + K * N + 4 * M * N + M + N,
            {"tilec": k, "triton": None, "torch": ref},
            lambda: float((c32 - ref()).abs().max().item()))
    if "attention" in only:
        # the DESIGN anchor's shape: Z4 H32 N4096 D128, causal off
        Z, H, S, D = 4, 32, 4096, 128
        q = torch.randn(Z, H, S, D, device=cuda, dtype=torch.float16)
        kk, v = torch.randn_like(q), torch.randn_like(q)
        o = torch.empty_like(q)
        scale = D ** -0.5
        kern = kernel("examples/attention.tile", "attention")
        kern.set_const("D", D)
        k = kern.bind(q, kk, v, o, Z * H, S, scale)
        ref = lambda: F.scaled_dot_product_attention(q, kk, v, scale=scale)  # noqa: E731
        row("attention", f"f16 Z{Z} H{H} N{S} D{D}", 4 * Z * H * S * S * D, 4 * Z * H * S * D * 2,
            {"tilec": k, "triton": None, "torch": ref},
            lambda: (o.float() - ref().float()).abs().max().item())
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
