#!/usr/bin/env python3
"""The math builtins' modes on the GPU: tilec accurate (default) vs tilec fast (fast=true)
vs Triton, same inputs, one process (issue 11).

    python3 bench/math_bench.py [--quick] [--json PATH]

Kernels (bench/math.tile, FAST a const parameter):
  chain    an elementwise chain bound by the math functions: SiLU, GELU (erf), SiLU,
           GELU (tanh form), twice, data in registers; 2^26 f32 (one load, one store each).
  softmax  rows x cols f32, exp in the chosen mode (memory-bound).
Triton runs the same formulas (tl.sigmoid, tl.math.erf, a tanh from tl.exp, tl.exp).
Every output is checked against float64 PyTorch first; then the median of
triton.testing.do_bench per implementation, as GB/s of the bytes moved and, for the chain,
G elements/s.

Without a GPU (or without torch/triton) it still checks what it can before stopping: both
tilec modes of both kernels compile and run on the interpreter device (small inputs, no
numpy needed), and their results are compared with each other and with a float64
reference in Python; then it says why it stops before timing and exits 0 (2 when a check
failed).
"""
import argparse
import ctypes
import json
import math
import os
import random
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
TILE = os.path.join(REPO, "bench", "math.tile")

import tilec  # noqa: E402

INV_SQRT2 = 0.7071067811865476
SQRT_2_OVER_PI = 0.7978845608028654


# ---- float64 references -------------------------------------------------------------
def _sigmoid(v):
    return 1.0 / (1.0 + math.exp(-v)) if v >= 0 else math.exp(v) / (1.0 + math.exp(v))


def chain_ref(v):
    for _ in range(2):
        v = v * _sigmoid(v)
        v = 0.5 * v * (1.0 + math.erf(v * INV_SQRT2))
        v = v * _sigmoid(v)
        v = 0.5 * v * (1.0 + math.tanh(SQRT_2_OVER_PI * (0.044715 * v * v * v + v)))
    return v


def softmax_ref(row):
    m = max(row)
    e = [math.exp(v - m) for v in row]
    s = sum(e)
    return [v / s for v in e]


# ---- host buffers for the interpreter device, without numpy --------------------------
class HostF32:
    """n f32 in host memory, passed to tilec as numpy would be (__array_interface__)."""

    def __init__(self, values):
        self.buf = (ctypes.c_float * len(values))(*values)
        self.nbytes = ctypes.sizeof(self.buf)
        self.__array_interface__ = {"data": (ctypes.addressof(self.buf), False), "shape": (len(values),),
                                    "typestr": "<f4", "version": 3}

    def tolist(self):
        return list(self.buf)


def rel_err(got, want):
    return abs(got - want) / max(abs(want), 1e-30)


def cpu_checks():
    """Both modes of both kernels on the interpreter: False when a check fails."""
    ok = True
    dev = tilec.Device("interp")
    mod = dev.load_source(TILE)
    rnd = random.Random(1)
    n = 4096
    xs = [rnd.uniform(-8, 8) for _ in range(n)]
    x = HostF32(xs)
    want = [chain_ref(v) for v in xs]
    outs = {}
    for fast in (0, 1):
        k = mod.kernel("chain")
        k.set_const("FAST", fast)
        y = HostF32([0.0] * n)
        k(y, x, n)
        outs[fast] = y.tolist()
        # relative error where the result is not tiny (the GELU of a very negative x cancels)
        err = max(rel_err(g, w) for g, w in zip(outs[fast], want) if abs(w) > 1e-3)
        bound = 2e-3 if fast else 1e-5
        print(f"interp chain   {'fast    ' if fast else 'accurate'}: max relative error {err:.2e} "
              f"(|y| > 1e-3; bound {bound:g})")
        ok &= err < bound
    differ = sum(a != b for a, b in zip(outs[0], outs[1]))
    print(f"interp chain   fast and accurate differ in {differ} of {n} elements")
    ok &= differ > n // 4
    rows, cols = 8, 1000
    xs = [rnd.gauss(0, 3) for _ in range(rows * cols)]
    x = HostF32(xs)
    want = [v for r in range(rows) for v in softmax_ref(xs[r * cols:(r + 1) * cols])]
    for fast in (0, 1):
        k = mod.kernel("softmax")
        k.set_const("FAST", fast)
        y = HostF32([0.0] * (rows * cols))
        k(y, x, rows, cols)
        err = max(rel_err(g, w) for g, w in zip(y.tolist(), want) if w > 1e-30)
        bound = 5e-4 if fast else 1e-5
        print(f"interp softmax {'fast    ' if fast else 'accurate'}: max relative error {err:.2e} (bound {bound:g})")
        ok &= err < bound
    dev.close()
    return ok


# ---- GPU ------------------------------------------------------------------------------
def gpu_bench(args, torch, triton, tl):
    @triton.jit
    def _chain(y, x, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        v = tl.load(x + i, mask=m, other=0.0)
        for _ in tl.static_range(2):
            v = v * tl.sigmoid(v)
            v = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
            v = v * tl.sigmoid(v)
            u = 0.7978845608028654 * tl.fma(0.044715 * v, v * v, v)
            t = 1.0 - 2.0 / (tl.exp(2.0 * u) + 1.0)  # tanh(u); tl has no tanh of its own
            v = 0.5 * v * (1.0 + t)
        tl.store(y + i, v, mask=m)

    @triton.jit
    def _softmax(out, x, cols, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        c = tl.arange(0, BLOCK)
        m = c < cols
        v = tl.load(x + row * cols + c, mask=m, other=-float("inf"))
        e = tl.exp(v - tl.max(v, 0))
        tl.store(out + row * cols + c, e / tl.sum(e, 0), mask=m)

    def bench(fn):
        fn()
        torch.cuda.synchronize()
        return triton.testing.do_bench(fn, warmup=50, rep=300, return_mode="median")

    dev = tilec.Device("cuda")
    # one module per mode: a module has one kernel object per name, and FAST is its state
    mods = {fast: dev.load_source(TILE) for fast in (0, 1)}
    rows_out = []

    # chain
    n = 1 << (22 if args.quick else 26)
    x = torch.randn(n, device="cuda") * 3
    want = x.double()
    for _ in range(2):
        want = want * torch.sigmoid(want)
        want = 0.5 * want * (1.0 + torch.erf(want * INV_SQRT2))
        want = want * torch.sigmoid(want)
        want = 0.5 * want * (1.0 + torch.tanh(SQRT_2_OVER_PI * (0.044715 * want ** 3 + want)))
    impls = {}
    for fast in (0, 1):
        k = mods[fast].kernel("chain")
        k.set_const("FAST", fast)
        y = torch.empty(n, device="cuda")
        impls["tilec fast" if fast else "tilec accurate"] = (k.bind(y, x, n), y, k)
    yt = torch.empty(n, device="cuda")
    impls["triton"] = (lambda: _chain[(triton.cdiv(n, 1024),)](yt, x, n, BLOCK=1024, num_warps=4), yt, None)
    big = want.abs() > 1e-3
    for name, (fn, y, k) in impls.items():
        fn()
        torch.cuda.synchronize()
        err = ((y.double() - want).abs() / want.abs())[big].max().item()
        ms = bench(fn)
        gbs = 8 * n / (ms * 1e-3) / 1e9
        variant = f" [{k.last_variant}]" if k else ""
        print(f"chain   2^{int(math.log2(n))} f32  {name:15s} {ms * 1e3:9.1f} us  {gbs:7.1f} GB/s  "
              f"{n / (ms * 1e-3) / 1e9:6.2f} Gelem/s  max rel err {err:.1e}{variant}", flush=True)
        rows_out.append({"kernel": "chain", "n": n, "impl": name, "ms": ms, "gbps": gbs, "max_rel_err": err})

    # softmax
    rows, cols = (1024, 4096) if args.quick else (4096, 16384)
    x = torch.randn(rows, cols, device="cuda")
    want = torch.softmax(x.double(), dim=1)
    impls = {}
    for fast in (0, 1):
        k = mods[fast].kernel("softmax")
        k.set_const("FAST", fast)
        y = torch.empty_like(x)
        impls["tilec fast" if fast else "tilec accurate"] = (k.bind(y, x, rows, cols), y, k)
    yt = torch.empty_like(x)
    block = triton.next_power_of_2(cols)
    impls["triton"] = (lambda: _softmax[(rows,)](yt, x, cols, BLOCK=block, num_warps=16 if block >= 8192 else 8),
                       yt, None)
    for name, (fn, y, k) in impls.items():
        fn()
        torch.cuda.synchronize()
        err = ((y.double() - want).abs() / want).max().item()
        ms = bench(fn)
        gbs = 8 * rows * cols / (ms * 1e-3) / 1e9
        variant = f" [{k.last_variant}]" if k else ""
        print(f"softmax {rows}x{cols} f32 {name:15s} {ms * 1e3:9.1f} us  {gbs:7.1f} GB/s  "
              f"max rel err {err:.1e}{variant}", flush=True)
        rows_out.append({"kernel": "softmax", "shape": [rows, cols], "impl": name, "ms": ms, "gbps": gbs,
                         "max_rel_err": err})
    dev.close()
    return rows_out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller inputs")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    t0 = time.time()
    ok = cpu_checks()
    print(f"interpreter checks: {'ok' if ok else 'FAILED'} ({time.time() - t0:.1f} s)", flush=True)
    try:
        import torch
        import triton
        import triton.language as tl
        import triton.testing  # noqa: F401
    except ImportError as e:
        print(f"stopping before the GPU timing: {e}")
        return 0 if ok else 2
    if not torch.cuda.is_available():
        print("stopping before the GPU timing: torch sees no CUDA device")
        return 0 if ok else 2
    rows = gpu_bench(args, torch, triton, tl)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
