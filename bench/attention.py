"""FlashAttention forward on the GPU: tilec's bench/attention.tile against a Triton kernel of the
same algorithm and torch's scaled_dot_product_attention, one process, same inputs, results
checked.

    python3 bench/attention.py [--quick] [--rounds N] [--json PATH]
    DISABLE_MMA_V3=1 python3 bench/attention.py ...   (Triton restricted to mma.sync, the
                                                     instructions tilec uses today)

Both kernels run the FlashAttention-2 forward: one program per BM query rows of one head,
keys and values walked in BN steps, the online softmax in base 2 (exp2, the scale folded
into the scores), f32 accumulation, O and the row log-sum-exp stored.  Q, K, V and O are
contiguous [Z, H, N, D].  Every output is compared with SDPA's (and the log-sum-exp with
torch.logsumexp of the scaled scores on a smaller case).  The first tilec call at each shape
compiles and tunes every variant: its time is printed as the cold first call.
TFLOP/s count 4 * Z * H * N^2 * D flops (half of it with causal masking), as Triton's
tutorial does.  Timing as in bench/gemm.py (rounds, rotating order, medians).
"""
import argparse
import json
import math
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))


def _parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="D=128, N=4096 only")
    ap.add_argument("--rounds", type=int, default=3, help="timing rounds (see bench/gemm.py)")
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--no-triton", action="store_true", help="tilec and SDPA only")
    return ap.parse_args()


def main():
    args = _parse()
    import torch
    import triton
    import triton.language as tl
    import triton.testing
    import tilec
    from gemm import timed_rounds

    @triton.jit
    def _tr_attention(q, k, v, o, lse, N, sm_scale, D: tl.constexpr, CAUSAL: tl.constexpr,
                      BM: tl.constexpr, BN: tl.constexpr):
        bh = tl.program_id(1)
        start = tl.program_id(0) * BM
        base = bh.to(tl.int64) * N * D
        rm = start + tl.arange(0, BM)
        rn = tl.arange(0, BN)
        rd = tl.arange(0, D)
        qv = tl.load(q + base + rm[:, None].to(tl.int64) * D + rd[None, :], mask=rm[:, None] < N, other=0.0)
        qk_scale = sm_scale * 1.4426950408889634
        m_i = tl.full([BM], float("-inf"), tl.float32)
        l_i = tl.zeros([BM], tl.float32)
        acc = tl.zeros([BM, D], tl.float32)
        hi = N
        if CAUSAL:
            hi = tl.minimum(N, start + BM)
        for n0 in range(0, hi, BN):
            cols = n0 + rn
            kt = tl.load(k + base + cols[None, :].to(tl.int64) * D + rd[:, None], mask=cols[None, :] < N, other=0.0)
            s = tl.dot(qv, kt) * qk_scale
            keep = (cols[None, :] < N) & (rm[:, None] >= 0)
            if CAUSAL:
                keep = keep & (cols[None, :] <= rm[:, None])
            s = tl.where(keep, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.math.exp2(m_i - m_new)
            p = tl.math.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            vv = tl.load(v + base + cols[:, None].to(tl.int64) * D + rd[None, :], mask=cols[:, None] < N, other=0.0)
            acc = tl.dot(p.to(vv.dtype), vv, acc * alpha[:, None])
            m_i = m_new
        tl.store(o + base + rm[:, None].to(tl.int64) * D + rd[None, :], (acc / l_i[:, None]).to(o.dtype.element_ty),
                 mask=rm[:, None] < N)
        tl.store(lse + bh.to(tl.int64) * N + rm, (m_i + tl.math.log2(l_i)) * 0.6931471805599453, mask=rm < N)

    configs = [triton.Config({"BM": bm, "BN": bn}, num_warps=w, num_stages=s)
               for bm, bn, w, s in [(128, 64, 8, 3), (128, 64, 4, 3), (128, 32, 4, 3), (64, 64, 4, 3),
                                    (128, 128, 8, 3), (64, 32, 4, 2), (128, 64, 8, 4), (64, 64, 4, 4)]]
    tr_attention = triton.autotune(configs=configs, key=["N", "D", "CAUSAL"])(_tr_attention)

    def triton_fwd(q, k, v, o, lse, causal):
        Z, H, N, D = q.shape
        grid = lambda meta: (triton.cdiv(N, meta["BM"]), Z * H)  # noqa: E731
        tr_attention[grid](q, k, v, o, lse, N, 1.0 / math.sqrt(D), D=D, CAUSAL=causal)

    mode = "mma.sync" if os.environ.get("DISABLE_MMA_V3") == "1" else "default"
    dev = tilec.Device("cuda")
    kerns = {}

    def kernel_for(D, causal):
        """One runtime kernel per (D, CAUSAL), its const parameters set once: a module of its
        own each, since a module's kernel handle (and so its constants) is one per name."""
        if (D, causal) not in kerns:
            k = dev.load_source(os.path.join(REPO, "bench/attention.tile")).kernel("attention")
            k.set_const("D", D)
            k.set_const("CAUSAL", int(causal))
            kerns[(D, causal)] = k
        return kerns[(D, causal)]

    def tilec_call(q, k, v, o, lse, causal):
        Z, H, N, D = q.shape
        return kernel_for(D, causal).bind(q, k, v, o, lse, Z * H, N, 1.0 / math.sqrt(D))

    torch.manual_seed(0)
    bad = 0
    # correctness: ragged N, both masks, against SDPA in f32 and torch.logsumexp
    for (Z, H, N, D, causal) in [(1, 2, 1, 64, False), (1, 2, 17, 64, True), (2, 3, 128, 64, False),
                                 (1, 2, 1000, 128, True), (1, 1, 300, 128, False)]:
        q, k, v = (torch.randn(Z, H, N, D, device="cuda", dtype=torch.float16) for _ in range(3))
        o = torch.full_like(q, float("nan"))
        lse = torch.full((Z * H, N), float("nan"), device="cuda", dtype=torch.float32)
        tilec_call(q, k, v, o, lse, causal)()
        torch.cuda.synchronize()
        s = (q.float() @ k.float().transpose(-1, -2)) / math.sqrt(D)
        if causal:
            s = s.masked_fill(torch.ones(N, N, device="cuda", dtype=torch.bool).triu(1), float("-inf"))
        want = torch.softmax(s, -1) @ v.float()
        want_lse = torch.logsumexp(s, -1).reshape(Z * H, N)
        eo = (o.float() - want).abs().max().item()
        el = (lse - want_lse).abs().max().item()
        okc = eo < 2e-2 and el < 1e-3
        bad += not okc
        print(f"  check Z{Z} H{H} N{N} D{D}{' causal' if causal else ''}: {'ok' if okc else 'FAILED'} "
              f"max err O {eo:.2e} lse {el:.2e} [{kernel_for(D, causal).last_variant}]", flush=True)

    shapes = [(4, 32, 4096, 128), (4, 32, 4096, 64), (2, 32, 8192, 128), (1, 32, 16384, 128)]
    if args.quick:
        shapes = shapes[:1]
    rows = []
    print(f"attention forward TFLOP/s, f16 (Triton mode: {mode}); tilec / Triton / SDPA")
    for (Z, H, N, D) in shapes:
        for causal in (False, True):
            q, k, v = (torch.randn(Z, H, N, D, device="cuda", dtype=torch.float16) for _ in range(3))
            outs = {n: torch.full_like(q, float("nan")) for n in ("tilec", "triton", "sdpa")}
            lses = {n: torch.empty((Z * H, N), device="cuda", dtype=torch.float32) for n in ("tilec", "triton")}
            t0 = time.perf_counter()
            launch = tilec_call(q, k, v, outs["tilec"], lses["tilec"], causal)
            launch()
            torch.cuda.synchronize()
            cold = time.perf_counter() - t0
            fns = {"tilec": launch,
                   "sdpa": lambda: outs["sdpa"].copy_(torch.nn.functional.scaled_dot_product_attention(
                       q, k, v, is_causal=causal))}
            if not args.no_triton:
                fns["triton"] = lambda: triton_fwd(q, k, v, outs["triton"], lses["triton"], causal)
                t0 = time.perf_counter()
                fns["triton"]()
                torch.cuda.synchronize()
                cold_tr = time.perf_counter() - t0
            res = {"Z": Z, "H": H, "N": N, "D": D, "causal": causal, "triton_mode": mode,
                   "tilec_cold_s": cold, "triton_cold_s": None if args.no_triton else cold_tr}
            for name, fn in fns.items():
                fn()
            torch.cuda.synchronize()
            want = outs["sdpa"].float()
            for name in fns:
                res[name + "_err"] = (outs[name].float() - want).abs().max().item()
            # flops as M*N*K triples for timed_rounds: 2 * (Z*H*N) * (N or N/2) * (2*D)
            timed_rounds(fns, list(fns), args.rounds, Z * H * N, N * (0.5 if causal else 1.0), 2 * D, res)
            res["tilec_variant"] = kernel_for(D, causal).last_variant
            res["ok"] = res["tilec_err"] < 2e-2
            rows.append(res)
            ratio = f"ratio tilec/triton {res['ratio']:.3f} ({res['ratio_min']:.3f}-{res['ratio_max']:.3f})" \
                if "ratio" in res else ""
            print(f"  Z{Z} H{H} N{N} D{D} {'causal ' if causal else 'full   '}: tilec {res['tilec']:6.1f}  "
                  f"triton {res.get('triton', float('nan')):6.1f}  sdpa {res['sdpa']:6.1f}  {ratio}  "
                  f"cold tilec {cold:.1f} s"
                  + (f" triton {cold_tr:.1f} s" if not args.no_triton else "")
                  + f"  err {res['tilec_err']:.1e}  {'ok' if res['ok'] else 'FAILED CHECK'}  "
                  f"[{res['tilec_variant']}]", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if all(r["ok"] for r in rows) and not bad else 1


if __name__ == "__main__":
    sys.exit(main())
