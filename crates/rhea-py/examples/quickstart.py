"""Rhea quick start from Python: the computation of the Rust quick start (examples/quickstart.rs).

CKKS at N = 2^16 (24 levels, 128-bit secure): encrypt two random vectors, evaluate
x*y + rotate(x, 1) and a degree-7 polynomial of x, decrypt, print the precision in bits against
numpy and the device that ran it (the GPU when one is usable, else the CPU).

    pip install ./crates/rhea-py && python crates/rhea-py/examples/quickstart.py
"""

import os

import numpy as np

import rhea
from rhea import ckks

preset = os.environ.get("RHEA_QUICKSTART_PRESET", "n16_logqp1560_levels24")
ctx = ckks.CkksContext(rhea.CkksParameters.preset(preset), rhea.Device.best())
keygen = ckks.KeyGenerator(ctx)
sk = keygen.secret_key()
ev = ckks.Evaluator(ctx, keygen.relinearization_key(sk), keygen.galois_keys(sk, [1]))
encoder = ckks.Encoder(ctx)
encryptor = ckks.Encryptor(ctx, keygen.public_key(sk), evaluator=ev)
decryptor = ckks.Decryptor(ctx, sk)

rng = np.random.default_rng()
x, y = rng.uniform(-1, 1, encoder.slots), rng.uniform(-1, 1, encoder.slots)
cx, cy = encryptor.encrypt(encoder.encode(x)), encryptor.encrypt(encoder.encode(y))

z = cx * cy + (cx << 1)  # x·y + rotate(x, 1): multiply, relinearise, rescale, rotate, add
coeffs = [0.5, 0.75, -0.3, 0.25, -0.1, 0.05, -0.02, 0.01]
p = ev.evaluate_polynomial(cx, ckks.Polynomial.monomial(coeffs))  # degree 7, depth 3


def bits(ct, want):
    return -np.log2(np.max(np.abs(encoder.decode(decryptor.decrypt(ct)) - want)))


print(f"x·y + rotate(x, 1): {bits(z, x * y + np.roll(x, -1)):.1f} bits, {z!r}")
print(f"p(x), degree 7:     {bits(p, np.polynomial.polynomial.polyval(x, coeffs)):.1f} bits, {p!r}")
print(f"ran on: {ctx.device.name}")
