"""bench/plot.py on made-up results (this file's, not measurements): with matplotlib, a PNG
with the table and a roofline; without it (or with --hide-matplotlib, which makes its import
fail), a message, no file, and exit 0.  Exit 77 when matplotlib is wanted but absent."""
import importlib.abc
import os
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
hide = "--hide-matplotlib" in sys.argv
if hide:
    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "matplotlib" or name.startswith("matplotlib."):
                raise ImportError(f"{name} hidden by the test")
            return None
    sys.meta_path.insert(0, Block())
sys.path.insert(0, os.path.join(REPO, "bench"))
import plot  # noqa: E402

results = {"gpu": "made-up GPU", "date": "test", "rows": [
    {"workload": "softmax f32", "shape": "4x1024", "gbps": {"tilec": 100, "triton": 90, "torch": 80},
     "ms": {"tilec": 0.01}, "flops": 5 * 4096, "static_bytes": 2 * 4 * 4096},
    {"workload": "copy", "shape": "2^20", "gbps": {"torch": 1000}, "ms": {"torch": 0.01}}]}
pts = plot.roofline_points(results["rows"])
assert len(pts) == 1 and abs(pts[0][1] - 5 / 8) < 1e-12, pts
out = os.path.join(tempfile.mkdtemp(), "bench.png")
drawn = plot.plot_results(results, out)
if hide or not plot.have_matplotlib():
    assert drawn is False and not os.path.exists(out)
    if not hide:
        print("SKIP: matplotlib is not installed: only the message was checked")
        sys.exit(77)
    print("without matplotlib: no plot, a message, fine")
else:
    assert drawn and open(out, "rb").read(8) == b"\x89PNG\r\n\x1a\n", out
    print("plot written:", out)
