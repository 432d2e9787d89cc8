"""Polynomials, functions and linear transforms."""

import numpy as np
import pytest

import rhea
from rhea import ckks
from rhea.ckks import functions
from conftest import precision_bits

COEFFS = [0.5, 0.75, -0.3, 0.25, -0.1, 0.05, -0.02, 0.01]


def test_polynomial_monomial(deep, rng):
    x = rng.uniform(-1, 1, deep.encoder.slots)
    p = ckks.Polynomial.monomial(COEFFS)
    assert p.degree == 7 and p.depth == 3
    out = deep.decrypt(deep.ev.evaluate_polynomial(deep.encrypt(x), p))
    want = np.polynomial.polynomial.polyval(x, COEFFS)
    assert precision_bits(out, want) > 15
    assert abs(p(0.5) - np.polynomial.polynomial.polyval(0.5, COEFFS)) < 1e-12


def test_polynomial_interpolate(deep, rng):
    p, err = ckks.Polynomial.interpolate(np.sin, -1.0, 1.0, 15)
    assert err < 1e-10 and p.basis == ("chebyshev", -1.0, 1.0)
    x = rng.uniform(-1, 1, deep.encoder.slots)
    out = deep.decrypt(deep.ev.evaluate_polynomial(deep.encrypt(x), p))
    assert precision_bits(out, np.sin(x)) > 14
    with pytest.raises(ZeroDivisionError):
        ckks.Polynomial.interpolate(lambda t: 1 / 0, -1.0, 1.0, 3)


def test_functions(deep, rng):
    x = rng.uniform(-4, 4, deep.encoder.slots)
    sig = functions.SmoothFunction.sigmoid(-4, 4, 31)
    out = deep.decrypt(sig.evaluate(deep.ev, deep.encrypt(x)))
    assert precision_bits(out, 1 / (1 + np.exp(-x))) > 12
    inv = functions.Inverse(1.0, 4.0, 4)
    y = rng.uniform(1, 4, deep.encoder.slots)
    out = deep.decrypt(inv.evaluate(deep.ev, deep.encrypt(y)))
    want = np.array([inv.evaluate_plain(v) for v in y])
    assert precision_bits(out, want) > 12
    assert precision_bits(want, 1 / y) > 3
    for f, exact in [(functions.InvSqrt(1.0, 4.0, 7, 2), 1 / np.sqrt(y)),
                     (functions.Sqrt(1.0, 4.0, 7, 2), np.sqrt(y))]:
        assert f.depth > 0
        out = deep.decrypt(f.evaluate(deep.ev, deep.encrypt(y)))
        want = np.array([f.evaluate_plain(v) for v in y])
        assert precision_bits(out, want) > 12
        assert precision_bits(want, exact) > 8


def test_linear_transform(small, rng):
    n = small.encoder.slots
    m = rng.uniform(-1, 1, (8, 8))
    lt = ckks.LinearTransform.from_dense(n, m)
    keys = small.keygen.galois_keys(small.sk, lt.rotations())
    ev = ckks.Evaluator(small.ctx, galois_keys=keys)
    v = np.zeros(n)
    v[:8] = rng.uniform(-1, 1, 8)
    out = small.decrypt(ev.linear_transform(small.encrypt(v), lt))
    assert precision_bits(out[:8], m @ v[:8]) > 15
    assert precision_bits(lt.apply(v)[:8].real, m @ v[:8]) > 40
    diag = ckks.LinearTransform.from_diagonals(n, {0: np.full(n, 2.0), 1: np.ones(n)})
    ev2 = ckks.Evaluator(small.ctx, galois_keys=small.keygen.galois_keys(small.sk, diag.rotations()))
    out = small.decrypt(ev2.linear_transform(small.encrypt(v), diag))
    assert precision_bits(out, 2 * v + np.roll(v, -1)) > 15


def test_compact_linear_transform_gives_the_same_ciphertext(small, rng):
    n = small.encoder.slots
    m = rng.uniform(-1, 1, (8, 8))
    whole = ckks.LinearTransform.from_dense(n, m)
    compact = ckks.LinearTransform.from_dense(n, m, compact=True)
    assert compact.compact and not whole.compact
    ev = ckks.Evaluator(small.ctx, galois_keys=small.keygen.galois_keys(small.sk, whole.rotations()))
    v = np.zeros(n)
    v[:8] = rng.uniform(-1, 1, 8)
    ct = small.encrypt(v)
    a, b = ev.linear_transform(ct, whole), ev.linear_transform(ct, compact)
    codec = rhea.Codec(small.ctx)
    assert codec.to_bytes(a, "none") == codec.to_bytes(b, "none")
    assert 0 < compact.cached_bytes * 2 < whole.cached_bytes
    assert precision_bits(small.decrypt(b)[:8], m @ v[:8]) > 15


def test_q_only_linear_transform(small, rng):
    n = small.encoder.slots
    m = rng.uniform(-1, 1, (8, 8))
    whole = ckks.LinearTransform.from_dense(n, m)
    q_only = ckks.LinearTransform.from_dense(n, m, storage="q-only")
    assert (whole.storage, q_only.storage) == ("whole", "q-only") and not q_only.compact
    assert ckks.LinearTransform.from_dense(n, m, compact=True).storage == "compact"
    ev = ckks.Evaluator(small.ctx, galois_keys=small.keygen.galois_keys(small.sk, whole.rotations()))
    v = np.zeros(n)
    v[:8] = rng.uniform(-1, 1, 8)
    ct = small.encrypt(v)
    b = ev.linear_transform(ct, q_only)
    ev.linear_transform(ct, whole)
    assert 0 < q_only.cached_bytes < whole.cached_bytes
    assert precision_bits(small.decrypt(b)[:8], m @ v[:8]) > 15
    for bad in ({"storage": "dense"}, {"storage": "whole", "compact": True}):
        with pytest.raises(rhea.InvalidInputError):
            ckks.LinearTransform.from_dense(n, m, **bad)


def test_slot_sums(small, rng):
    n = small.encoder.slots
    x = rng.uniform(-1, 1, n)
    keys = small.keygen.galois_keys(small.sk, ckks.Evaluator.sum_slots_rotations(n))
    ev = ckks.Evaluator(small.ctx, galois_keys=keys)
    out = small.decrypt(ev.sum_slots(small.encrypt(x)))
    assert precision_bits(out, np.full(n, x.sum())) > 10
