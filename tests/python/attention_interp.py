"""bench/attention.tile (FlashAttention forward) on the interpreter against a numpy reference:
ragged N (1, 17, 100), both masks, head dims 16 and 64, O and the row log-sum-exp.
Exit 77 (skipped) without numpy."""
import math
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))
try:
    import numpy as np
except ImportError:
    print("numpy is not installed: skipped")
    sys.exit(77)
import tilec  # noqa: E402


def reference(q, k, v, causal):
    n, d = q.shape[-2:]
    s = q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2) / math.sqrt(d)
    if causal:
        s = np.where(np.triu(np.ones((n, n), dtype=bool), 1), -np.inf, s)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - m)
    lse = (m + np.log(e.sum(-1, keepdims=True)))[..., 0]
    return (e / e.sum(-1, keepdims=True)) @ v.astype(np.float64), lse


def main():
    kern = tilec.load(os.path.join(REPO, "bench/attention.tile")).attention
    rng = np.random.default_rng(7)
    bad = 0
    for (zh, n, d, causal) in [(2, 1, 16, False), (1, 17, 16, True), (2, 100, 64, False), (1, 100, 64, True),
                               (1, 70, 16, True)]:
        q, k, v = (rng.standard_normal((zh, n, d)).astype(np.float16) for _ in range(3))
        o = np.full((zh, n, d), np.nan, dtype=np.float16)
        lse = np.full((zh, n), np.nan, dtype=np.float32)
        kern(q, k, v, o, lse, zh, n, 1.0 / math.sqrt(d), D=d, CAUSAL=causal)
        want, want_lse = reference(q, k, v, causal)
        eo = float(np.abs(o.astype(np.float64) - want).max())
        el = float(np.abs(lse.astype(np.float64) - want_lse).max())
        # O: P rounded to f16 before the second product, O rounded to f16: a few f16 ulps of
        # values below 4; lse: f32 sums of up to 100 terms
        ok = eo < 1e-2 and el < 1e-4
        bad += not ok
        print(f"ZH{zh} N{n} D{d}{' causal' if causal else ''}: max err O {eo:.2e} lse {el:.2e} "
              f"{'ok' if ok else 'FAILED'} [{kern.last_variant}]")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
