#!/usr/bin/env python3
"""Where the polynomial coefficients in ir/math_consts.h come from: Chebyshev fits
(mpmath.chebyfit, near-minimax) of each kernel function on its reduced interval, printed
as f32 constants.  Run by hand (needs mpmath); the C test tests/math/math_ref.c measures
what the rounded coefficients give, so nothing here is trusted."""
import mpmath as mp

mp.mp.dps = 40

def f32(v):
    import struct
    return struct.unpack('f', struct.pack('f', float(v)))[0]

def fit(name, f, a, b, n):
    poly, err = mp.chebyfit(f, [a, b], n, error=True)
    c = [f32(x) for x in reversed(poly)]  # c[0] + c[1] u + ...
    print('/* %s on [%s, %s], degree %d, fit error %.3g */' % (name, mp.nstr(a, 6), mp.nstr(b, 6), n - 1, err))
    print('#define TB_%s_N %d' % (name.upper(), n))
    print('static const float tb_%s[TB_%s_N] = {%s};' % (name, name.upper(), ', '.join(repr(x) + 'f' for x in c)))

ln2 = mp.log(2)
# e^r = 1 + r P(r), |r| <= ln2/2
fit('exp_p', lambda r: mp.expm1(r) / r if r else mp.mpf(1), -ln2 / 2, ln2 / 2, 6)
# 2^f = 1 + f P(f), |f| <= 1/2
fit('exp2_p', lambda f: mp.expm1(f * ln2) / f if f else ln2, -0.5, 0.5, 6)
# log(1+f) = f + f^2 Q(f), f in [sqrt(1/2)-1, sqrt(2)-1]
fit('log_q', lambda f: (mp.log1p(f) - f) / f**2 if f else mp.mpf(-0.5), mp.sqrt(0.5) - 1, mp.sqrt(2) - 1, 10)
# tanh x = x + x^3 P(x^2), |x| < 0.625
fit('tanh_p', lambda u: (mp.tanh(mp.sqrt(u)) - mp.sqrt(u)) / mp.sqrt(u)**3 if u else mp.mpf(-1) / 3, 0, mp.mpf(0.625)**2, 6)
# erf x = x + x R(x^2), |x| < 0.875
fit('erf_r', lambda u: mp.erf(mp.sqrt(u)) / mp.sqrt(u) - 1 if u else 2 / mp.sqrt(mp.pi) - 1, 0, mp.mpf(0.875)**2, 7)
# erf x = 1 - e^(P(x)), 0.875 <= x <= 4
fit('erfc_lp', lambda t: mp.log(mp.erfc(t)), mp.mpf(0.875), 4, 12)
# fast mode: 2^f on |f| <= 1/2, degree 4
fit('fexp2_p', lambda f: mp.power(2, f), -0.5, 0.5, 4)
# fast tanh x = x + x^3 P(x^2), |x| < 0.625
fit('ftanh_p', lambda u: (mp.tanh(mp.sqrt(u)) - mp.sqrt(u)) / mp.sqrt(u)**3 if u else mp.mpf(-1) / 3, 0, mp.mpf(0.625)**2, 3)
# fast erf x = x + x R(x^2), |x| < 0.875
fit('ferf_r', lambda u: mp.erf(mp.sqrt(u)) / mp.sqrt(u) - 1 if u else 2 / mp.sqrt(mp.pi) - 1, 0, mp.mpf(0.875)**2, 4)
# fast erfc t = e^(P(t)), 0.875 <= t <= 4
fit('ferfc_lp', lambda t: mp.log(mp.erfc(t)), mp.mpf(0.875), 4, 7)
