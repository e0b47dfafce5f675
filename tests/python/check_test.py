"""check=True of a kernel call (python/tilec/check.py) on the interpreter: variants that
agree pass and the launch runs; a deliberately wrong variant raises CheckError naming it,
before the launch (so the output stays untouched).  Skipped (77) without numpy."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))
try:
    import numpy as np
except ImportError:
    print("SKIP: numpy is not installed")
    sys.exit(77)
import tilec  # noqa: E402
from tilec.check import CheckError  # noqa: E402


def main():
    mod = tilec.load(os.path.join(REPO, "tests", "tools", "check_variants.tile"), device="interp")
    n = 200
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    mod.twice(x, out, n, check=True)
    assert np.array_equal(out, 2 * x), "the launch after a passing check did not run"
    assert "check: 2 passed, 0 failed" in mod.twice.check_report, mod.twice.check_report
    out[:] = 0
    try:
        mod.wrong(x, out, n, check=True)
    except CheckError as e:
        assert "BLOCK=128" in e.report and "out: FAIL" in e.report, e.report
        assert "check: 1 passed, 1 failed" in e.report, e.report
    else:
        raise AssertionError("check=True let a wrong variant pass")
    assert not out.any(), "the launch ran although its check failed"
    # a pinned tuned constant narrows the check to that variant
    mod.wrong(x, out, n, BLOCK=64, check=True)
    assert "check: 1 passed, 0 failed" in mod.wrong.check_report, mod.wrong.check_report
    print("ok")


if __name__ == "__main__":
    main()
