"""GEMM tile configurations side by side: tilec's matmul.tile and Triton's kernel (bench/gemm.py's)
compiled for the same BM x BN x BK, warps and stages, one process, same inputs, results
checked.  Where bench/gemm.py compares each compiler's best, this shows whether a gap is the
code generated for a configuration or the configurations tried.

    DISABLE_MMA_V3=1 python3 bench/gemm_configs.py [--size 4096] [--dtype f16|bf16]
        [--configs 128x128x64w8s3,...] [--sass DIR]

--sass DIR writes each tilec configuration's cubin and its SASS (cuobjdump -sass, when on
PATH) there.  Reports TFLOP/s (median of triton.testing.do_bench) and each tilec variant's
registers and spills (tilec --report).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.testing  # noqa: E402

import tilec  # noqa: E402
import gemm  # noqa: E402  (bench/gemm.py: the Triton kernel)

DEFAULT = ("128x256x64w8s3,128x128x64w8s3,128x128x32w8s4,128x128x64w4s3,128x128x32w4s4,"
           "128x64x64w4s3,128x64x32w4s4,64x128x64w4s3,64x64x64w4s3")


def parse(cfg):
    m = re.fullmatch(r"(\d+)x(\d+)x(\d+)w(\d+)s(\d+)", cfg)
    if not m:
        raise SystemExit(f"bad config '{cfg}': write BMxBNxBKwWARPSsSTAGES, e.g. 128x128x64w8s3")
    return tuple(int(x) for x in m.groups())


def one_variant(src, bm, bn, bk, w, s):
    """matmul.tile with its tune lists narrowed to one configuration (no where clauses)."""
    out = []
    for line in src.splitlines():
        t = line.strip()
        if t.startswith("tune BM"):
            line = f"    tune BM in [{bm}], BN in [{bn}], BK in [{bk}]"
        elif t.startswith("tune warps"):
            line = f"    tune warps in [{w}], stages in [{s}]"
        elif t.startswith("where "):
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--dtype", default="f16", choices=["f16", "bf16"])
    ap.add_argument("--configs", default=DEFAULT)
    ap.add_argument("--sass")
    args = ap.parse_args()
    mode = "mma.sync" if os.environ.get("DISABLE_MMA_V3") == "1" else "default"
    dt = torch.float16 if args.dtype == "f16" else torch.bfloat16
    n = args.size
    torch.manual_seed(0)
    a = torch.randn(n, n, device="cuda", dtype=dt)
    b = torch.randn(n, n, device="cuda", dtype=dt)
    ref = torch.matmul(a.float(), b.float())
    src = open(os.path.join(REPO, "examples/matmul.tile")).read()
    if args.dtype == "bf16":
        src = src.replace("*f16", "*bf16").replace("as f16", "as bf16")
    tmp = tempfile.mkdtemp()
    tilec_bin = os.environ.get("TILEC", os.path.join(REPO, "build-gpu", "bin", "tilec"))
    print(f"GEMM {args.dtype} {n}^3, Triton {mode}; TFLOP/s (median of do_bench)")
    print(f"{'config':>16} {'tilec':>8} {'triton':>8} {'ratio':>6}  tilec variant")
    for cfg in args.configs.split(","):
        bm, bn, bk, w, s = parse(cfg)
        path = os.path.join(tmp, f"matmul_{cfg}.tile")
        with open(path, "w") as f:
            f.write(one_variant(src, bm, bn, bk, w, s))
        rep = ""
        if os.path.exists(tilec_bin):
            r = subprocess.run([tilec_bin, path, "--kernel", "matmul", "--div16",
                                "--assume-one=stride_ak,stride_bn,stride_cn", "--report"],
                               capture_output=True, text=True)
            m = re.search(r"regs=(\d+) smem=(\d+) spill_stores=(\d+)", r.stdout + r.stderr)
            rep = f"regs={m.group(1)} smem={m.group(2)} spills={m.group(3)}" if m else \
                (r.stdout + r.stderr).strip().splitlines()[-1][:80]
            if args.sass:
                os.makedirs(args.sass, exist_ok=True)
                cub = os.path.join(args.sass, f"{cfg}.cubin")
                subprocess.run([tilec_bin, path, "--kernel", "matmul", "--div16",
                                "--assume-one=stride_ak,stride_bn,stride_cn", "--emit=cubin",
                                "-o", cub], capture_output=True)
                if shutil.which("cuobjdump") and os.path.exists(cub):
                    with open(os.path.join(args.sass, f"{cfg}.sass"), "w") as f:
                        subprocess.run(["cuobjdump", "-sass", cub], stdout=f)
        t_ms = tr_ms = float("nan")
        try:
            k = tilec.load(path).matmul
            c = torch.empty(n, n, device="cuda", dtype=dt)

            def run_t():
                k(a, b, c, n, n, n, *gemm.strides(a, b, c))
            run_t()
            torch.cuda.synchronize()
            err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
            if err > 2e-2:
                rep += f" WRONG (max rel err {err:.3g})"
            t_ms = triton.testing.do_bench(run_t)
        except Exception as e:  # a configuration that does not compile or launch
            rep += f" tilec failed: {str(e).splitlines()[0][:100]}"
        try:
            c2 = torch.empty(n, n, device="cuda", dtype=dt)
            grid = (triton.cdiv(n, bm) * triton.cdiv(n, bn),)

            def run_tr():
                gemm._tr_matmul.fn[grid](a, b, c2, n, n, n, a.stride(0), b.stride(0), c2.stride(0),
                                         BM=bm, BN=bn, BK=bk, GROUP=8, num_warps=w, num_stages=s)
            run_tr()
            tr_ms = triton.testing.do_bench(run_tr)
        except Exception as e:
            rep += f" triton failed: {str(e).splitlines()[0][:80]}"
        tt, tr = gemm.tflops(n, n, n, t_ms), gemm.tflops(n, n, n, tr_ms)
        print(f"{cfg:>16} {tt:8.1f} {tr:8.1f} {tt / tr:6.2f}  {rep}", flush=True)


if __name__ == "__main__":
    main()
