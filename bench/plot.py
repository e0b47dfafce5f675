#!/usr/bin/env python3
"""A picture of bench.py's results: the table (tilec, Triton, PyTorch side by side, GB/s)
and a roofline of tilec's kernels from their static flops and bytes (what --report counts)
against the H200's memory bandwidth and dense tensor-core peak.

    python3 bench/plot.py RESULTS.json OUT.png      # RESULTS.json from bench.py --json
    python3 bench/bench.py --plot OUT.png           # the same after a run

matplotlib is optional: without it nothing is drawn, a message says so, and the exit
status is 0 (bench.py's figures do not depend on it).
"""
import json
import sys

# H200 SXM data-sheet figures (NVIDIA): HBM3e bandwidth and dense FP16/BF16 tensor-core
# throughput.  The copy row of a run, where there is one, draws the measured bandwidth too.
H200_BANDWIDTH_GBPS = 4800.0
H200_TENSOR_TFLOPS = 989.0
IMPLS = ("tilec", "triton", "torch")


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


def roofline_points(rows):
    """(label, flops per byte, TFLOP/s) of each row whose tilec kernel reported flops."""
    pts = []
    for r in rows:
        flops, nbytes, ms = r.get("flops"), r.get("static_bytes"), (r.get("ms") or {}).get("tilec")
        if flops and nbytes and ms:
            pts.append((f"{r['workload']} {r['shape']}", flops / nbytes, flops / (ms * 1e-3) / 1e12))
    return pts


def tilec_binary():
    """build/tools/tilec of this checkout, else tilec on PATH, else None."""
    import os
    import shutil
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "tools", "tilec")
    return here if os.access(here, os.X_OK) else shutil.which("tilec")


def write_roofline_svg(results, svg_path, gpu="h200"):
    """tilec report --roofline: tilec's kernels (flops and bytes per launch, median time)
    against the GPU's data-sheet ceilings (the one table of them, tools/roofline.c).
    Needs no matplotlib.  False with a message when tilec or the points are missing."""
    import subprocess
    import tempfile
    rows = [r for r in results.get("rows", []) if r.get("workload") != "copy"]
    lines = []
    for r in rows:
        flops, nbytes, ms = r.get("flops"), r.get("static_bytes"), (r.get("ms") or {}).get("tilec")
        if flops and nbytes and ms:
            label = f"{r['workload']} {r['shape']}".replace(",", " ")
            lines.append(f"{label},{flops},{nbytes},{ms}\n")
    exe = tilec_binary()
    if not lines or not exe:
        print("bench: no roofline SVG (%s)" % ("no tilec binary" if not exe else "no kernel reported flops"),
              file=sys.stderr)
        return False
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.writelines(lines)
    title = f"tilec on {results.get('gpu', gpu)}, {results.get('date', '')}"
    subprocess.run([exe, "report", "--roofline", svg_path, "--gpu", gpu, "--title", title, f.name], check=True)
    print(f"bench: wrote {svg_path}", file=sys.stderr)
    return True


def plot_results(results, path):
    """Draws `results` (bench.py's JSON) to `path`, and the roofline to PATH's stem + .svg
    through tilec report --roofline; False (with a message) when matplotlib is missing."""
    import os
    gpu = "h100" if "H100" in str(results.get("gpu", "")) else "h200"
    write_roofline_svg(results, os.path.splitext(path)[0] + ".roofline.svg", gpu)
    if not have_matplotlib():
        print("bench: matplotlib is not installed (pip install matplotlib): no plot written",
              file=sys.stderr)
        return False
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in results.get("rows", []) if r.get("workload") != "copy"]
    fig, (ax, rf) = plt.subplots(1, 2, figsize=(15, 6), gridspec_kw={"width_ratios": [3, 2]})
    width = 0.8 / len(IMPLS)
    for i, impl in enumerate(IMPLS):
        vals = [(r.get("gbps") or {}).get(impl) or 0 for r in rows]
        ax.bar([j + (i - 1) * width for j in range(len(rows))], vals, width, label=impl)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([f"{r['workload']}\n{r['shape']}" for r in rows], rotation=45, ha="right",
                       fontsize=8)
    ax.set_ylabel("GB/s (median of do_bench)")
    ax.set_title(f"{results.get('gpu', 'GPU')}, {results.get('date', '')}")
    ax.legend()

    copy = [r for r in results.get("rows", []) if r.get("workload") == "copy"]
    xs = [10 ** (k / 10) for k in range(-20, 41)]                 # 0.01 .. 10^4 flops/byte
    roof = [min(H200_TENSOR_TFLOPS, H200_BANDWIDTH_GBPS * x / 1e3) for x in xs]
    rf.plot(xs, roof, "k-", label=f"H200: {H200_BANDWIDTH_GBPS:.0f} GB/s, "
                                   f"{H200_TENSOR_TFLOPS:.0f} TFLOP/s")
    if copy and (copy[0].get("gbps") or {}).get("torch"):
        bw = copy[0]["gbps"]["torch"]
        rf.plot(xs, [min(H200_TENSOR_TFLOPS, bw * x / 1e3) for x in xs], "k:",
                label=f"measured copy {bw:.0f} GB/s")
    pts = roofline_points(results.get("rows", []))
    for label, x, y in pts:
        rf.plot([x], [y], "o")
        rf.annotate(label, (x, y), fontsize=7, xytext=(4, 4), textcoords="offset points")
    if not pts:
        rf.text(0.05, 0.5, "no kernel reported flops", transform=rf.transAxes)
    rf.set_xscale("log")
    rf.set_yscale("log")
    rf.set_xlabel("flops per byte (static counts, as --report)")
    rf.set_ylabel("TFLOP/s")
    rf.set_title("roofline (tilec)")
    rf.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"bench: wrote {path}", file=sys.stderr)
    return True


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        results = json.load(f)
    plot_results(results, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
