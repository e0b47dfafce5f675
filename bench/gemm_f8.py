"""FP8 GEMM on the H200: tilec's examples/gemm_f8.tile (e4m3 A and B, per-row and
per-column f32 scales, f16 C) against Triton (the same kernel written in Triton) and
PyTorch's torch._scaled_mm (cuBLASLt, row-wise scales), one process, same inputs, results
checked.

    python3 bench/gemm_f8.py [--rounds N] [--json PATH] [--shapes MxNxK,...] [--source FILE]
    DISABLE_MMA_V3=1 python3 bench/gemm_f8.py ...   (Triton restricted to mma.sync)

Each shape runs with B (K x N) row-major and column-major (--b-major): cuBLASLt takes only
the column-major form, so its column is the same call in both rows.
tilec runs f8 dots on sm_90 as f16 mma.sync (docs/backend.md); cuBLASLt uses wgmma's FP8
tensor cores, which tilec does not use before the Hopper path.  Every output is compared
with the f32 product of the same f8 values, scaled in f32 (the result's f16 rounding and
the accumulation order bound the difference).  Timing as bench/gemm.py: --rounds rounds,
each timing every column once (triton.testing.do_bench, median of 100 ms of launches), the
order rotating; each column is the median over the rounds, the ratio tilec/Triton the median
of the rounds' own ratios.  A column whose library refuses the case (Triton without a
mma.sync FP8 path, a torch without row-wise _scaled_mm) says why instead of a figure.
"""
import argparse
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tilec  # noqa: E402
from gemm import _configs, check_args, timed_rounds  # noqa: E402


@triton.autotune(configs=_configs(), key=["M", "N", "K"])
@triton.jit
def _tr_gemm_f8(a, b, sa, sb, c, M, N, K, lda, sbk, sbn, ldc, BM: tl.constexpr, BN: tl.constexpr,
                BK: tl.constexpr, GROUP: tl.constexpr):
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
    pb = b + rk[:, None].to(tl.int64) * sbk + rn[None, :].to(tl.int64) * sbn
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        av = tl.load(pa, mask=(rm[:, None] < M) & (rk[None, :] < K - k), other=0.0)
        bv = tl.load(pb, mask=(rk[:, None] < K - k) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(av, bv, acc)
        pa += BK
        pb += BK * sbk
    s_a = tl.load(sa + rm, mask=rm < M, other=0.0)
    s_b = tl.load(sb + rn, mask=rn < N, other=0.0)
    acc = acc * s_a[:, None] * s_b[None, :]
    pc = c + rm[:, None].to(tl.int64) * ldc + rn[None, :]
    tl.store(pc, acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def triton_gemm_f8(a, b, sa, sb, c):
    M, K = a.shape
    N = b.shape[1]
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)  # noqa: E731
    _tr_gemm_f8[grid](a, b, sa, sb, c, M, N, K, a.stride(0), b.stride(0), b.stride(1), c.stride(0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--shapes", help="MxNxK,... instead of the default rows")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--b-major", choices=["row", "col", "both"], default="both",
                    help="B (K x N) stored row-major (N contiguous), column-major (K contiguous, "
                         "what cuBLASLt takes), or both rows")
    ap.add_argument("--source", default=os.path.join(REPO, "examples/gemm_f8.tile"),
                    help="the .tile file of kernel gemm_f8 (an experiment's tune space)")
    args = ap.parse_args()
    shapes = check_args("gemm_f8.py", args, [(4096, 4096, 4096), (8192, 8192, 8192), (4000, 3000, 5000)])
    if shapes is None:
        return 2
    mode = "mma.sync" if os.environ.get("DISABLE_MMA_V3") == "1" else "default"
    dev = tilec.Device("cuda")
    kern = dev.load_source(args.source).kernel("gemm_f8")
    f8 = torch.float8_e4m3fn
    rows = []
    ok_all = True
    print(f"FP8 GEMM TFLOP/s (Triton mode: {mode}); max rel. error vs the f32 product of the f8 values")
    majors = ["row", "col"] if args.b_major == "both" else [args.b_major]
    for (M, N, K, major) in [(M, N, K, mj) for (M, N, K) in shapes for mj in majors]:
        a = (torch.randn(M, K, device="cuda") * 2).to(f8)
        b = (torch.randn(K, N, device="cuda") * 2).to(f8)
        sa = torch.rand(M, device="cuda") + 0.5
        sb = torch.rand(N, device="cuda") + 0.5
        want = (a.float() @ b.float()) * sa[:, None] * sb[None, :]
        outs = {k: torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
                for k in ("tilec", "triton", "torch")}
        c = outs["tilec"]
        bt = b.t().contiguous().t()   # column-major B: cuBLASLt's only form
        bk = b if major == "row" else bt   # tilec's and Triton's B
        fns = {"tilec": kern.bind(a, bk if bk.is_contiguous() else tilec.strided(bk), sa, sb, c, M, N, K,
                                  a.stride(0), a.stride(1), bk.stride(0), bk.stride(1), c.stride(0), c.stride(1)),
               "triton": lambda: triton_gemm_f8(a, bk, sa, sb, outs["triton"]),
               "torch": lambda: torch._scaled_mm(a, bt, scale_a=sa[:, None].contiguous(),
                                                 scale_b=sb[None, :].contiguous(), out_dtype=torch.float16,
                                                 out=outs["torch"])}
        res = {"dtype": "f8e4m3", "M": M, "N": N, "K": K, "b_major": major, "triton_mode": mode}
        names = []
        for name, fn in fns.items():
            try:
                fn()
                torch.cuda.synchronize()
            except Exception as e:  # a library without this case: say so, time the others
                res[name + "_refused"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
                print(f"  {name}: refused: {res[name + '_refused']}", flush=True)
                continue
            res[name + "_err"] = ((outs[name].float() - want).abs().max() / want.abs().max()).item()
            names.append(name)
        timed_rounds(fns, names, args.rounds, M, N, K, res)
        res["tilec_variant"] = kern.last_variant
        ok = "tilec" in names and res["tilec_err"] < 1e-2
        res["ok"] = ok
        ok_all &= ok
        rows.append(res)
        cols = "  ".join(f"{n} {res[n]:6.1f} (err {res[n + '_err']:.1e})" for n in names)
        ratio = f"  ratio tilec/triton {res['ratio']:.3f} ({res['ratio_min']:.3f}-{res['ratio_max']:.3f})" \
            if "ratio" in res else ""
        print(f"  {M}x{N}x{K} B {major}-major: {cols}{ratio}  {'ok' if ok else 'FAILED CHECK'}  [{res['tilec_variant']}]",
              flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
