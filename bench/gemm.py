"""GEMM on the H200: tilec's examples/matmul.tile against Triton and cuBLAS, one process,
same inputs, results checked.

    python3 bench/gemm.py [--quick] [--json PATH]
    DISABLE_MMA_V3=1 python3 bench/gemm.py ...   (Triton restricted to mma.sync, the
                                                 instructions tilec uses today)

DISABLE_MMA_V3 is read when Triton compiles a kernel, so one process measures one Triton
mode; run it twice for both columns.  Every output is compared with torch.matmul in f32
(relative error of the f16/bf16 result, bounded by the inputs' rounding and the
accumulation order).  Timing: --rounds rounds (default 5), each timing tilec, Triton and
cuBLAS one after the other (triton.testing.do_bench, median of 100 ms of launches), the
order rotating from round to round, so that a drift of the GPU's clocks over the run falls on
all three alike; each column is the median over the rounds, and the ratio tilec/Triton is the
median of the rounds' own ratios, printed with its lowest and highest.
The bf16 kernel is matmul.tile with its element type replaced (written to a temporary
file), so both types run the same code.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
import triton.testing  # noqa: E402

import tilec  # noqa: E402


def _configs():
    out = []
    for bm, bn, bk, w, s in [(128, 256, 64, 8, 3), (256, 128, 64, 8, 3), (128, 128, 64, 4, 4),
                             (128, 128, 32, 4, 4), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4),
                             (128, 128, 64, 8, 3), (64, 64, 32, 4, 4)]:
        out.append(triton.Config({"BM": bm, "BN": bn, "BK": bk, "GROUP": 8}, num_warps=w, num_stages=s))
    return out


@triton.autotune(configs=_configs(), key=["M", "N", "K"])
@triton.jit
def _tr_matmul(a, b, c, M, N, K, lda, ldb, ldc, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
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
        acc = tl.dot(av, bv, acc)
        pa += BK
        pb += BK * ldb
    pc = c + rm[:, None].to(tl.int64) * ldc + rn[None, :]
    tl.store(pc, acc.to(c.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def strides(a, b, c):
    """matmul.tile's stride arguments (stride_am, stride_ak, ..., in elements) of a, b, c."""
    return (a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))


def triton_matmul(a, b, c):
    M, K = a.shape
    N = b.shape[1]
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)  # noqa: E731
    _tr_matmul[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0))


def tflops(M, N, K, ms):
    return 2.0 * M * N * K / (ms * 1e-3) / 1e12


def check_args(prog, args, shapes):
    """The shapes to run (args.shapes parsed, else `shapes`), or None after saying what is
    wrong with --shapes or --rounds."""
    if args.shapes:
        try:
            shapes = [tuple(int(x) for x in sh.split("x")) for sh in args.shapes.split(",")]
        except ValueError:
            shapes = []
        if not shapes or any(len(sh) != 3 or min(sh) < 1 for sh in shapes):
            print(f"{prog}: --shapes wants MxNxK[,MxNxK...] of positive sizes, got '{args.shapes}'",
                  file=sys.stderr)
            return None
    if args.rounds < 1:
        print(f"{prog}: --rounds wants a positive count, got {args.rounds}", file=sys.stderr)
        return None
    return shapes


def timed_rounds(fns, names, rounds, M, N, K, res):
    """TFLOP/s of each of `names` over `rounds` rounds (each timing every one once, the order
    rotating), into res: each name's median, and the median tilec/triton ratio of the
    rounds with its lowest and highest where both ran."""
    times = {name: [] for name in names}
    for r in range(rounds if names else 0):
        for name in names[r % len(names):] + names[:r % len(names)]:
            times[name].append(tflops(M, N, K, triton.testing.do_bench(
                fns[name], warmup=25, rep=100, return_mode="median")))
    for name in names:
        res[name] = statistics.median(times[name])
    if "tilec" in times and "triton" in times:
        ratios = sorted(x / y for x, y in zip(times["tilec"], times["triton"]))
        res["ratio"] = statistics.median(ratios)
        res["ratio_min"], res["ratio_max"] = ratios[0], ratios[-1]
    res["rounds"] = rounds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--shapes", help="MxNxK,... instead of the default rows (row-major operands)")
    ap.add_argument("--rounds", type=int, default=5, help="timing rounds (see above)")
    args = ap.parse_args()
    shapes = [(4096, 4096, 4096), (8192, 8192, 8192), (4000, 3000, 5000)]
    if args.quick:
        shapes = shapes[:1]
    shapes = check_args("gemm.py", args, shapes)
    if shapes is None:
        return 2
    mode = "mma.sync" if os.environ.get("DISABLE_MMA_V3") == "1" else "default"
    dev = tilec.Device("cuda")
    src = open(os.path.join(REPO, "examples/matmul.tile")).read()
    tmp = tempfile.mkdtemp()
    bf16_path = os.path.join(tmp, "matmul_bf16.tile")
    with open(bf16_path, "w") as f:
        f.write(src.replace("*f16", "*bf16").replace("as f16", "as bf16"))
    kernels = {torch.float16: dev.load_source(os.path.join(REPO, "examples/matmul.tile")).kernel("matmul"),
               torch.bfloat16: dev.load_source(bf16_path).kernel("matmul")}
    # correctness first: ragged and tiny shapes (unaligned ones run the form without
    # alignment facts), B row-major and transposed (a (N, K) tensor's .t(), through the strides)
    bad = 0
    for dt in (torch.float16, torch.bfloat16):
        for (M, N, K, bt) in [(1, 16, 17, False), (16, 17, 100, True), (17, 100, 1000, False),
                              (100, 1000, 4095, True), (1000, 4095, 16, False), (4095, 1, 1, True),
                              (64, 64, 64, False), (256, 192, 320, True), (1000, 1000, 1000, False),
                              (1000, 1000, 1000, True)]:
            a = torch.randn(M, K, device="cuda", dtype=dt)
            b = (torch.randn(N, K, device="cuda", dtype=dt).t() if bt
                 else torch.randn(K, N, device="cuda", dtype=dt))
            c = torch.full((M, N), float("nan"), device="cuda", dtype=dt)
            kernels[dt](a, b if b.is_contiguous() else tilec.strided(b), c, M, N, K, *strides(a, b, c))
            torch.cuda.synchronize()
            want = torch.matmul(a.float(), b.float())
            # f32 accumulation in another order, then one rounding to f16/bf16
            tol = (2.0 ** -8 if dt == torch.float16 else 2.0 ** -7) * want.abs() + 1e-3 * K ** 0.5
            okc = bool(((c.float() - want).abs() <= tol).all().item())
            bad += not okc
            print(f"  check {str(dt)[6:]:8s} {M}x{N}x{K}{' B^T' if bt else ''}: {'ok' if okc else 'FAILED'} "
                  f"max err {(c.float() - want).abs().max().item():.3g} [{kernels[dt].last_variant}]", flush=True)
    rows = []
    print(f"GEMM TFLOP/s (Triton mode: {mode}); tilec / Triton / cuBLAS, max rel. error vs f32 matmul")
    for dt in (torch.float16, torch.bfloat16):
        for (M, N, K) in shapes:
            a = torch.randn(M, K, device="cuda", dtype=dt)
            b = torch.randn(K, N, device="cuda", dtype=dt)
            want = torch.matmul(a.float(), b.float())
            outs = {k: torch.full((M, N), float("nan"), device="cuda", dtype=dt) for k in ("tilec", "triton", "cublas")}
            k = kernels[dt]
            launch = k.bind(a, b, outs["tilec"], M, N, K, *strides(a, b, outs["tilec"]))
            fns = {"tilec": launch,
                   "triton": lambda: triton_matmul(a, b, outs["triton"]),
                   "cublas": lambda: torch.matmul(a, b, out=outs["cublas"])}
            res = {"dtype": str(dt).replace("torch.", ""), "M": M, "N": N, "K": K, "triton_mode": mode}
            for name, fn in fns.items():
                fn()
                torch.cuda.synchronize()
                res[name + "_err"] = ((outs[name].float() - want).abs().max() / want.abs().max()).item()
            timed_rounds(fns, list(fns), args.rounds, M, N, K, res)
            res["tilec_variant"] = k.last_variant
            ok = res["tilec_err"] < 2e-2 and res["tilec_err"] == res["tilec_err"]
            res["ok"] = ok
            rows.append(res)
            print(f"  {res['dtype']:9s} {M}x{N}x{K}: tilec {res['tilec']:6.1f}  triton {res['triton']:6.1f}  "
                  f"cublas {res['cublas']:6.1f}  ratio tilec/triton {res['ratio']:.3f} "
                  f"({res['ratio_min']:.3f}-{res['ratio_max']:.3f}, {args.rounds} rounds)  "
                  f"err {res['tilec_err']:.1e}/{res['triton_err']:.1e}/{res['cublas_err']:.1e}  "
                  f"{'ok' if ok else 'FAILED CHECK'}  [{res['tilec_variant']}]", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if all(r["ok"] for r in rows) and not bad else 1


if __name__ == "__main__":
    sys.exit(main())
