"""Peer for `rhea bench linalg|poly` on the CPU: OpenFHE's polynomial evaluation and a
baby-step/giant-step linear transform at parameters matched to a Rhea preset.

usage: python3.10 openfhe_machinery.py LOGN DEPTH SCALE_BITS FIRST_BITS DNUM [REPS] [--poly-only]
Prints one JSON object per line (same fields as Rhea's JSON: case, latency_ms, precision_bits,
approx_error_bits, levels_used), like `rhea bench linalg|poly --json`.

- sigmoid63 / exp15 / tanh31: `EvalChebyshevFunction` (OpenFHE's Paterson-Stockmeyer Chebyshev
  evaluation) on [-8, 8] / [-1, 1] / [-4, 4]; precision against the degree-d Chebyshev
  interpolant at the first-kind nodes evaluated in f64 (the polynomial Rhea evaluates; OpenFHE
  interpolates at the same nodes), approx_error_bits against the function.
- lt64: the 64-diagonal transform (diagonals 0..63, entries uniform in [-1, 1]) by the diagonal
  method with baby-step/giant-step as an OpenFHE user writes it: baby-step rotations hoisted
  (`EvalFastRotationPrecompute` / `EvalFastRotation`), plaintext products, giant-step rotations
  (`EvalRotate`); OpenFHE's Python API has no general linear transform. lt64_naive: one
  `EvalRotate` per diagonal.
- sum_slots / inner_product: `EvalSum`, `EvalInnerProduct`.
Data: numpy's default_rng(33), uniform; FLEXIBLEAUTO scaling, HYBRID key switching.
"""
import json
import math
import statistics
import sys
import time

import numpy as np
from openfhe import *

poly_only = "--poly-only" in sys.argv
args = [a for a in sys.argv[1:] if not a.startswith("--")]
logn, depth, scale_bits, first_bits, dnum = (int(a) for a in args[:5])
reps = int(args[5]) if len(args) > 5 else 3
slots = 1 << (logn - 1)
p = CCParamsCKKSRNS()
p.SetRingDim(1 << logn)
p.SetSecurityLevel(HEStd_128_classic if logn >= 15 else HEStd_NotSet)
p.SetMultiplicativeDepth(depth)
p.SetScalingModSize(scale_bits)
p.SetFirstModSize(first_bits)
p.SetScalingTechnique(FLEXIBLEAUTO)
p.SetKeySwitchTechnique(HYBRID)
p.SetNumLargeDigits(dnum)
p.SetBatchSize(slots)
cc = GenCryptoContext(p)
for f in (PKE, KEYSWITCH, LEVELEDSHE, ADVANCEDSHE):
    cc.Enable(f)
kp = cc.KeyGen()
cc.EvalMultKeyGen(kp.secretKey)
cc.EvalSumKeyGen(kp.secretKey)
rng = np.random.default_rng(33)
n1, n2 = 8, 8
rot_steps = sorted(set(list(range(1, 64)) + [j * n1 for j in range(1, n2)]))
cc.EvalRotateKeyGen(kp.secretKey, rot_steps)
base = {"peer": "openfhe", "logN": logn, "slots": slots, "depth": depth, "dnum": dnum,
        "threads": __import__("os").cpu_count()}


def encrypt(v):
    return cc.Encrypt(kp.publicKey, cc.MakeCKKSPackedPlaintext(list(v)))


def decrypt(ct):
    pt = cc.Decrypt(kp.secretKey, ct)
    pt.SetLength(slots)
    return np.array(pt.GetRealPackedValue())


def timed(fn):
    out = fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return out, statistics.median(times) * 1e3


def used(out, ct):
    """Levels consumed, counting a rescale that FLEXIBLEAUTO has deferred (noise degree 2)."""
    return (out.GetLevel() + out.GetNoiseScaleDeg()) - (ct.GetLevel() + ct.GetNoiseScaleDeg())


def report(case, detail, ms, err, levels, approx=None):
    row = dict(base, case=case, detail=detail, latency_ms=round(ms, 3),
               precision_bits=round(-math.log2(err), 2), levels_used=levels,
               approx_error_bits=None if approx is None else round(-math.log2(approx), 2))
    print(json.dumps(row), flush=True)


def chebyshev_interpolant(f, a, b, d):
    m = d + 1
    k = np.arange(m)
    y = np.cos(np.pi * (k + 0.5) / m)
    vals = f((a + b) / 2 + (b - a) / 2 * y)
    c = np.array([2.0 / m * np.sum(vals * np.cos(np.pi * j * (k + 0.5) / m)) for j in range(m)])
    c[0] /= 2
    return lambda x: np.polynomial.chebyshev.chebval((2 * x - a - b) / (b - a), c)


for case, f, a, b, d in [("sigmoid63", lambda x: 1 / (1 + np.exp(-x)), -8.0, 8.0, 63),
                         ("exp15", np.exp, -1.0, 1.0, 15),
                         ("tanh31", np.tanh, -4.0, 4.0, 31)]:
    x = rng.uniform(a, b, slots)
    ct = encrypt(x)
    try:
        out, ms = timed(lambda: cc.EvalChebyshevFunction(lambda t: float(f(t)), ct, a, b, d))
    except Exception as e:  # e.g. not enough levels for OpenFHE's evaluation at this depth
        print(json.dumps(dict(base, case=case, error=str(e).splitlines()[0][:200])), flush=True)
        continue
    got = decrypt(out)
    poly = chebyshev_interpolant(f, a, b, d)
    levels = used(out, ct)
    report(case, f"EvalChebyshevFunction on [{a:g}, {b:g}], degree {d}", ms,
           np.max(np.abs(got - poly(x))), levels, np.max(np.abs(poly(x) - f(x))))

if poly_only:
    sys.exit(0)
x = rng.uniform(-1, 1, slots)
y = rng.uniform(-1, 1, slots)
cx, cy = encrypt(x), encrypt(y)
diags = [rng.uniform(-1, 1, slots) for _ in range(64)]
want = sum(diags[k] * np.roll(x, -k) for k in range(64))
# Giant step j holds diag_{j n1 + i} rotated right by j n1, so that rot_{j n1} of the inner sum
# is sum_i diag_{j n1 + i} * rot_{j n1 + i}(x).
pts = [[cc.MakeCKKSPackedPlaintext(list(np.roll(diags[j * n1 + i], j * n1))) for i in range(n1)]
       for j in range(n2)]
m2 = 2 * (1 << logn)


def lt_bsgs():
    pre = cc.EvalFastRotationPrecompute(cx)
    babies = [cx] + [cc.EvalFastRotation(cx, i, m2, pre) for i in range(1, n1)]
    acc = None
    for j in range(n2):
        inner = None
        for i in range(n1):
            t = cc.EvalMult(babies[i], pts[j][i])
            inner = t if inner is None else cc.EvalAdd(inner, t)
        if j:
            inner = cc.EvalRotate(inner, j * n1)
        acc = inner if acc is None else cc.EvalAdd(acc, inner)
    return acc


plain_naive = [cc.MakeCKKSPackedPlaintext(list(d)) for d in diags]


def lt_naive():
    acc = cc.EvalMult(cx, plain_naive[0])
    for k in range(1, 64):
        acc = cc.EvalAdd(acc, cc.EvalMult(cc.EvalRotate(cx, k), plain_naive[k]))
    return acc


for case, fn, detail in [("lt64", lt_bsgs, "64 diagonals, BSGS 8x8, hoisted baby steps (Python)"),
                         ("lt64_naive", lt_naive, "64 diagonals, one EvalRotate per diagonal")]:
    out, ms = timed(fn)
    report(case, detail, ms, np.max(np.abs(decrypt(out) - want)), used(out, cx))

out, ms = timed(lambda: cc.EvalSum(cx, slots))
report("sum_slots", "EvalSum", ms, np.max(np.abs(decrypt(out) - np.sum(x))), used(out, cx))
out, ms = timed(lambda: cc.EvalInnerProduct(cx, cy, slots))
report("inner_product", "EvalInnerProduct", ms, np.max(np.abs(decrypt(out) - np.dot(x, y))),
       used(out, cx))
