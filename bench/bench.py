#!/usr/bin/env python3
"""tilec vs Triton vs PyTorch on the GPU, same inputs, one process (docs/performance.md).

    python3 bench/bench.py [--quick] [--json PATH] [--plot PNG] [--only NAME[,NAME]]

Each workload: fresh random inputs; every implementation's output checked against
PyTorch's (exact for vector add); then the median of triton.testing.do_bench (device
events, warm-up, L2 flushed between runs) per implementation, as GB/s of the bytes the
workload must move.  tilec kernels are JIT-compiled from .tile sources through
python/tilec (libtilert: $TILEC_RT_LIB), autotuned on their first launch; the variant
chosen is printed.  A failed check marks the row and the exit status is 1.
Vector add, softmax and layernorm then get paired rounds (tilec, Triton and a copy of the
same bytes timed back to back, the order rotating): the per-round ratios tilec/Triton and
the copy's bandwidth, the ceiling for a kernel that moves those bytes once.
"""
import argparse
import json
import math
import statistics
import os
import sys
import time
import traceback

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))


def parser():
    """The command line, built before torch and triton are imported: --help needs neither."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
    ap.add_argument("--json", help="write every figure here")
    ap.add_argument("--plot", metavar="PNG", help="draw the table and a roofline of tilec's "
                    "kernels (bench/plot.py; skipped with a message without matplotlib)")
    ap.add_argument("--only", help="comma-separated: host,vector_add,softmax,layernorm,row_sum,copy,sweep")
    ap.add_argument("--sweep", action="store_true",
                    help="also softmax and layernorm at every row width their tune lists cover "
                         "(256..16384 columns, 2^25 or 2^26 elements) and at ragged widths")
    return ap


if __name__ == "__main__":
    ARGS = parser().parse_args()     # --help and a bad option answer here

import torch  # noqa: E402
import triton  # noqa: E402
import triton.testing  # noqa: E402

import tilec  # noqa: E402
import triton_kernels as tk  # noqa: E402


def median_ms(fn):
    fn()
    torch.cuda.synchronize()
    return triton.testing.do_bench(fn, warmup=50, rep=300, return_mode="median")


class Row:
    def __init__(self, name, shape, nbytes):
        self.name, self.shape, self.nbytes = name, shape, nbytes
        self.ms, self.ok, self.notes = {}, {}, []

    def gbps(self, impl):
        ms = self.ms.get(impl)
        return self.nbytes / (ms * 1e-3) / 1e9 if ms else None


def check(row, impl, got, want, exact=False, rtol=1e-5, atol=1e-6):
    if exact:
        ok = torch.equal(got, want)
        err = (got.float() - want.float()).abs().max().item() if not ok else 0.0
    else:
        ok = torch.allclose(got.float(), want.float(), rtol=rtol, atol=atol)
        err = (got.float() - want.float()).abs().max().item()
    ok = ok and not torch.isnan(got).any().item()
    row.ok[impl] = ok
    if not ok:
        row.notes.append(f"{impl}: max abs error {err:.3g}")
    return ok


def run_impls(row, impls, want, out, **tol):
    """impls: name -> (launch, output tensor).  Checks each, then times each."""
    row.launch = impls
    for name, launch in impls.items():
        try:
            out[name].fill_(float("nan"))
            launch()
            torch.cuda.synchronize()
            check(row, name, out[name], want, **tol)
            row.ms[name] = median_ms(launch)
        except Exception as e:  # one implementation failing must not stop the others
            row.ok[name] = False
            row.notes.append(f"{name}: {type(e).__name__}: {str(e).splitlines()[0][:160]}")
            traceback.print_exc()


def note_tilec(row, k):
    """The variant tilec's last launch ran, and its static flops and global bytes over the
    grid (what --report counts per program), for the roofline of --plot."""
    row.variant = k.last_variant
    try:
        li = k.last_launch_info()
    except tilec.Error:
        return
    programs = li["grid"][0] * li["grid"][1] * li["grid"][2]
    row.flops = li["flops_per_program"] * programs or None
    row.static_bytes = li["bytes_per_program"] * programs or None


class Tilec:
    def __init__(self):
        self.dev = tilec.Device("cuda")
        self.kernels = {}

    def kernel(self, path, name):
        if (path, name) not in self.kernels:
            t0 = time.time()
            mod = self.dev.load_source(os.path.join(REPO, path))
            self.kernels[(path, name)] = mod.kernel(name)
            print(f"  tilec: loaded {path}:{name} in {time.time() - t0:.2f} s", flush=True)
        return self.kernels[(path, name)]

    def launcher(self, path, name, *args):
        k = self.kernel(path, name)
        bound = k.bind(*args)

        def launch():
            bound()
        launch.kernel = k
        return launch


def paired(row, src, tilec_shared, rounds=12):
    """Rounds that time tilec, Triton and a copy of the same bytes (src into a new tensor of
    its shape: as many bytes read and written as the row moves) back to back, in an order
    that rotates each round: the ratio tilec/triton of each round cancels the machine's
    drift between rounds.  tilec_shared: tilec's launch writing Triton's output buffer, so
    that both kernels read and write the very same memory (with separate output buffers the
    same cubin measured 1-2% apart from one process to the next).  row.pair: the ratios;
    row.copy_gbps: the copy's median."""
    if not (row.ok.get("tilec") and row.ok.get("triton")):
        return
    dst = torch.empty_like(src)
    fns = [("tilec", tilec_shared), ("triton", row.launch["triton"]),
           ("copy", lambda: dst.copy_(src))]
    ratios, copy_ms = [], []
    for r in range(rounds):
        ms = {}
        for name, fn in fns[r % 3:] + fns[:r % 3]:
            ms[name] = triton.testing.do_bench(fn, warmup=10, rep=100, return_mode="median")
        ratios.append(ms["triton"] / ms["tilec"])
        copy_ms.append(ms["copy"])
    row.pair = sorted(ratios)
    row.copy_gbps = row.nbytes / (statistics.median(copy_ms) * 1e-3) / 1e9


def bench_vector_add(tc, n):
    row = Row("vector add f32", f"2^{int(math.log2(n))}", 3 * n * 4)
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = {k: torch.empty(n, device="cuda") for k in ("tilec", "triton", "torch")}
    want = x + y
    t = tc.launcher("examples/vector_add.tile", "vector_add", x, y, out["tilec"], n)
    run_impls(row, {"tilec": t,
                    "triton": lambda: tk.vector_add(x, y, out["triton"]),
                    "torch": lambda: torch.add(x, y, out=out["torch"])}, want, out, exact=True)
    note_tilec(row, t.kernel)
    paired(row, torch.cat([x, y[: n // 2]]),
           tc.launcher("examples/vector_add.tile", "vector_add", x, y, out["triton"], n))
    return row


def bench_softmax(tc, rows, cols):
    row = Row("softmax f32", f"{rows}x{cols}", 2 * rows * cols * 4)
    x = torch.randn(rows, cols, device="cuda")
    out = {k: torch.empty_like(x) for k in ("tilec", "triton", "torch")}
    want = torch.softmax(x.double(), dim=1).float()
    t = tc.launcher("examples/softmax.tile", "softmax", out["tilec"], x, rows, cols)
    run_impls(row, {"tilec": t,
                    "triton": lambda: tk.softmax(x, out["triton"]),
                    "torch": lambda: torch.softmax(x, dim=1, out=out["torch"])},
              want, out, rtol=1e-4, atol=1e-7)
    note_tilec(row, t.kernel)
    paired(row, x, tc.launcher("examples/softmax.tile", "softmax", out["triton"], x, rows, cols))
    return row


def bench_layernorm(tc, rows, cols, eps=1e-5):
    row = Row("layernorm f16", f"{rows}x{cols}", 2 * rows * cols * 2 + 2 * cols * 2)
    x = torch.randn(rows, cols, device="cuda", dtype=torch.float16)
    w = torch.randn(cols, device="cuda", dtype=torch.float16)
    b = torch.randn(cols, device="cuda", dtype=torch.float16)
    out = {k: torch.empty_like(x) for k in ("tilec", "triton", "torch")}
    want = torch.nn.functional.layer_norm(x.float(), (cols,), w.float(), b.float(), eps).half()
    t = tc.launcher("examples/layernorm.tile", "layernorm", out["tilec"], x, w, b, rows, cols, eps)

    def torch_ln():
        out["torch"].copy_(torch.nn.functional.layer_norm(x, (cols,), w, b, eps))
    run_impls(row, {"tilec": t,
                    "triton": lambda: tk.layernorm(x, w, b, eps, out["triton"]),
                    "torch": torch_ln}, want, out, rtol=1e-2, atol=2e-2)
    row.notes.append("torch: layer_norm plus a copy into the output")
    note_tilec(row, t.kernel)
    paired(row, x, tc.launcher("examples/layernorm.tile", "layernorm", out["triton"], x, w, b, rows,
                               cols, eps))
    return row


def bench_row_sum(tc, rows, cols):
    row = Row("row sum f32", f"{rows}x{cols}", rows * cols * 4 + rows * 4)
    x = torch.randn(rows, cols, device="cuda")
    out = {k: torch.empty(rows, device="cuda") for k in ("tilec", "triton", "torch")}
    want = x.double().sum(1).float()
    t = tc.launcher("bench/row_sum.tile", "row_sum", out["tilec"], x, rows, cols)
    run_impls(row, {"tilec": t,
                    "triton": lambda: tk.row_sum(x, out["triton"]),
                    "torch": lambda: torch.sum(x, 1, out=out["torch"])},
              want, out, rtol=1e-4, atol=1e-3)
    note_tilec(row, t.kernel)
    return row


def bench_copy(n):
    row = Row("copy ceiling (torch) f32", f"2^{int(math.log2(n))}", 2 * n * 4)
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    run_impls(row, {"torch": lambda: y.copy_(x)}, x, {"torch": y}, exact=True)
    row.variant = ""
    return row


TRITON_TINY = """
import triton
import triton.language as tl


@triton.jit
def KNAME(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)
"""


def _triton_tiny(tmp, name):
    """A Triton kernel never seen by this process (a fresh module), so its first call
    compiles (with TRITON_CACHE_DIR empty: nothing on disk either)."""
    import importlib.util
    path = os.path.join(tmp, f"{name}.py")
    with open(path, "w") as f:
        f.write(TRITON_TINY.replace("KNAME", name))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def host_launch_us(launch, batch=128, batches=61):
    """Host time per launch: batches small enough not to fill the launch queue, the device
    drained between them, only the launch loop timed; median over batches (us)."""
    for _ in range(20):
        launch()
    torch.cuda.synchronize()
    per = []
    for _ in range(batches):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(batch):
            launch()
        per.append((time.perf_counter() - t0) / batch * 1e6)
    torch.cuda.synchronize()
    per.sort()
    return per[len(per) // 2]


def bench_host(tc):
    """Launch overhead from Python (a tiny kernel, n = 1) and the cold compile of one
    variant, tilec against Triton."""
    import tempfile
    res = {}
    x, y, out = (torch.zeros(128, device="cuda") for _ in range(3))
    t = tc.launcher("examples/vector_add.tile", "vector_add", x, y, out, 1)
    res["launch_us_tilec"] = host_launch_us(t)
    tmp = tempfile.mkdtemp(prefix="tilec-bench-")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(tmp, "triton-cache")
    tiny = _triton_tiny(tmp, "tiny_add_launch")

    def tri():
        tiny[(1,)](x, y, out, 1, BLOCK=128)
    res["launch_us_triton"] = host_launch_us(tri)
    # cold compile of one variant: an empty cache for both
    dev = tilec.Device("cuda", cache_dir=os.path.join(tmp, "tilec-cache"), tune=False)
    k = dev.load_source(os.path.join(REPO, "examples/vector_add.tile")).kernel("vector_add")
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    k(x, y, out, 1)
    dev.synchronize()
    res["compile_s_tilec"] = time.perf_counter() - t0
    dev.close()
    tiny2 = _triton_tiny(tmp, "tiny_add_compile")
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    tiny2[(1,)](x, y, out, 1, BLOCK=128)
    torch.cuda.synchronize()
    res["compile_s_triton"] = time.perf_counter() - t0
    print(f"host launch overhead from Python (batches of 128, median per launch): "
          f"tilec bind() {res['launch_us_tilec']:.2f} us, triton {res['launch_us_triton']:.2f} us",
          flush=True)
    print(f"cold compile of one variant (empty caches, first call to done): "
          f"tilec {res['compile_s_tilec'] * 1e3:.0f} ms, triton {res['compile_s_triton'] * 1e3:.0f} ms",
          flush=True)
    return res


def fmt(v, width=8):
    return f"{v:{width}.0f}" if v is not None else f"{'-':>{width}}"


def table(rows):
    lines = [f"{'workload':<26}{'shape':>12} {'tilec':>8} {'triton':>8} {'torch':>8}  "
             f"{'tilec/triton':>12}  check   (GB/s, median of do_bench)"]
    for r in rows:
        a, b = r.gbps("tilec"), r.gbps("triton")
        ratio = f"{a / b:12.3f}" if a and b else f"{'-':>12}"
        ok = "ok" if r.ok and all(r.ok.values()) else "FAIL"
        lines.append(f"{r.name:<26}{r.shape:>12} {fmt(a)} {fmt(b)} {fmt(r.gbps('torch'))}  "
                     f"{ratio}  {ok}")
    paired_rows = [r for r in rows if getattr(r, "pair", None)]
    if paired_rows:
        lines.append("paired rounds (tilec, triton and a copy of the same bytes back to back, "
                     "order rotating; tilec and triton write the same buffer): tilec/triton per round")
        for r in paired_rows:
            p = r.pair
            lines.append(f"{r.name:<26}{r.shape:>12}  median {statistics.median(p):.3f}  "
                         f"min {p[0]:.3f}  max {p[-1]:.3f}  above 1: {sum(x > 1 for x in p)}/{len(p)}  "
                         f"copy {r.copy_gbps:.0f} GB/s, tilec/copy {r.gbps('tilec') / r.copy_gbps:.3f}")
    return "\n".join(lines)


def main():
    a = ARGS if __name__ == "__main__" else parser().parse_args()
    only = set(a.only.split(",")) if a.only else None
    q = 16 if a.quick else 1

    print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}  "
          f"triton {triton.__version__}", flush=True)
    tc = Tilec()
    print(f"tilec device: {tc.dev.name}", flush=True)
    torch.manual_seed(0)
    plan = [("vector_add", lambda: bench_vector_add(tc, (1 << 28) // q)),
            ("softmax", lambda: bench_softmax(tc, 32768 // q, 1024)),
            ("softmax", lambda: bench_softmax(tc, 16384 // q, 4096)),
            ("softmax", lambda: bench_softmax(tc, 4096 // q, 16384)),
            ("layernorm", lambda: bench_layernorm(tc, 16384 // q, 4096)),
            ("layernorm", lambda: bench_layernorm(tc, 8192 // q, 8192)),
            ("row_sum", lambda: bench_row_sum(tc, 32768 // q, 4096)),
            ("copy", lambda: bench_copy((1 << 28) // q))]
    if a.sweep:
        for cols in (256, 512, 1000, 2048, 3000, 8192, 12000, 16384):
            plan.append(("sweep", lambda c=cols: bench_softmax(tc, (1 << 25) // q // c, c)))
        for cols in (1024, 2048, 3000, 8192, 12000, 16384):
            plan.append(("sweep", lambda c=cols: bench_layernorm(tc, (1 << 26) // q // c, c)))
    host = {}
    if not only or "host" in only:
        try:
            host = bench_host(tc)
        except Exception:  # the throughput table must still come
            traceback.print_exc()
    rows = []
    for name, fn in plan:
        if only and name not in only:
            continue
        r = fn()
        rows.append(r)
        ms = "  ".join(f"{k} {v * 1e3:.1f} us" for k, v in r.ms.items())
        print(f"{r.name} {r.shape}: {ms}  [tilec variant: {getattr(r, 'variant', '')}]"
              + ("".join(f"\n    {n}" for n in r.notes)), flush=True)
        torch.cuda.empty_cache()

    results = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
               "triton": triton.__version__, "date": time.strftime("%Y-%m-%d"),
               "host": host,
               "rows": [{"workload": r.name, "shape": r.shape, "bytes": r.nbytes,
                         "ms": r.ms, "gbps": {k: r.gbps(k) for k in r.ms},
                         "ok": r.ok, "notes": r.notes,
                         "paired_ratios": getattr(r, "pair", None),
                         "copy_gbps": getattr(r, "copy_gbps", None),
                         "flops": getattr(r, "flops", None),
                         "static_bytes": getattr(r, "static_bytes", None),
                         "tilec_variant": getattr(r, "variant", "")} for r in rows]}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    if a.plot:
        import plot
        plot.plot_results(results, a.plot)
    print()
    print(table(rows))
    if host:
        print(f"host launch (us, from Python): tilec {host['launch_us_tilec']:.2f}  "
              f"triton {host['launch_us_triton']:.2f};  cold compile of one variant (ms): "
              f"tilec {host['compile_s_tilec'] * 1e3:.0f}  triton {host['compile_s_triton'] * 1e3:.0f}")
    return 0 if all(all(r.ok.values()) and r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
