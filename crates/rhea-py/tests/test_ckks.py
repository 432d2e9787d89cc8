"""CKKS from Python: precision against numpy, operators, in-place forms, levels."""

import numpy as np
import pytest

import rhea
from conftest import precision_bits


def test_presets_listed_and_built():
    names = [name for name, _ in rhea.CkksParameters.presets()]
    assert "n13_logqp200_levels2" in names and "n16_logqp1560_levels24" in names
    p = rhea.CkksParameters.preset("n13_logqp200_levels2")
    assert p.n == 8192 and p.slots == 4096 and p.max_level == 2 and p.secure
    assert "CkksParameters(" in repr(p)


def test_parameters_by_intent():
    p = rhea.CkksParameters.for_depth(5, scale_bits=40)
    assert p.max_level >= 5 and p.secure
    assert p.log_default_scale == 40


def test_encode_decode_float_and_complex(small, rng):
    x = rng.uniform(-1, 1, small.encoder.slots)
    out = small.encoder.decode(small.encoder.encode(x))
    assert out.dtype == np.float64 and out.shape == x.shape
    assert precision_bits(out, x) > 30
    z = rng.uniform(-1, 1, 100) + 1j * rng.uniform(-1, 1, 100)
    outz = small.encoder.decode_complex(small.encoder.encode(z))
    assert outz.dtype == np.complex128
    assert precision_bits(outz[:100], z) > 30
    assert precision_bits(outz[100:], 0) > 30  # zero-padded


def test_lists_are_accepted(small):
    out = small.decrypt(small.encrypt([0.5, -0.25, 1]))
    assert precision_bits(out[:3], [0.5, -0.25, 1.0]) > 20


def test_quickstart_computation(small, rng):
    n = small.encoder.slots
    x, y = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    cx, cy = small.encrypt(x), small.encrypt(y)
    z = small.ev.add(small.ev.mul(cx, cy), small.ev.rotate(cx, 1))
    want = x * y + np.roll(x, -1)
    assert precision_bits(small.decrypt(z), want) > 18
    # The same with operators.
    z2 = cx * cy + (cx << 1)
    assert precision_bits(small.decrypt(z2), want) > 18
    assert z2.level == small.ctx.params.default_level - 1


def test_operators(small, rng):
    n = small.encoder.slots
    x, y = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    cx, cy = small.encrypt(x), small.encrypt(y)
    d = small.decrypt
    assert precision_bits(d(cx + cy), x + y) > 20
    assert precision_bits(d(cx - cy), x - y) > 20
    assert precision_bits(d(-cx), -x) > 20
    assert precision_bits(d(cx + 0.5), x + 0.5) > 20
    assert precision_bits(d(2 + cx), x + 2) > 20
    assert precision_bits(d(1.5 - cx), 1.5 - x) > 20
    assert precision_bits(d(cx * 3), 3 * x) > 20
    assert (cx * 3).level == cx.level  # integer product: no level
    assert precision_bits(d(cx * 0.25), 0.25 * x) > 18
    assert precision_bits(d(cx >> 1), np.roll(x, 1)) > 18
    pt = small.encoder.encode(y)
    assert precision_bits(d(cx + pt), x + y) > 20
    assert precision_bits(d(cx * pt), x * y) > 18
    assert precision_bits(small.decrypt_complex(cx * 1j), 1j * x) > 18


def test_repr_len_and_attributes(small):
    ct = small.encrypt([1.0])
    assert len(ct) == small.encoder.slots
    r = repr(ct)
    assert "level=2" in r and "scale=2^40.00" in r and "device=cpu" in r
    assert ct.size == 2 and ct.device == rhea.Device.cpu()


def test_conjugate_and_complex(small, rng):
    z = rng.uniform(-1, 1, 64) + 1j * rng.uniform(-1, 1, 64)
    ct = small.encrypt(z)
    out = small.decrypt_complex(small.ev.conjugate(ct))
    assert precision_bits(out[:64], np.conj(z)) > 18


def test_in_place_forms(small, rng):
    x = rng.uniform(-1, 1, small.encoder.slots)
    ct = small.encrypt(x)
    small.ev.add_assign(ct, ct)  # the same object on both sides
    small.ev.mul_const_assign(ct, 0.5)
    small.ev.rotate_assign(ct, 2)
    assert precision_bits(small.decrypt(ct), np.roll(x, -2)) > 18
    ct2 = small.encrypt(x)
    ct2 += ct2
    ct2 -= 1.0
    assert precision_bits(small.decrypt(ct2), 2 * x - 1) > 18


def test_manual_rescale_and_levels(small, rng):
    ev = rhea.ckks.Evaluator(small.ctx, small.keygen.relinearization_key(small.sk),
                             auto_rescale=False)
    x = rng.uniform(-1, 1, small.encoder.slots)
    cx = small.encrypt(x)
    sq = ev.mul_relin(cx, cx)
    assert sq.level == cx.level and sq.log_scale > 79
    r = ev.rescale(sq)
    assert r.level == cx.level - 1 and abs(r.log_scale - 40) < 1
    assert precision_bits(small.decrypt(r), x * x) > 18
    low = ev.drop_to_level(cx, 0)
    assert low.level == 0
    assert precision_bits(small.decrypt(low), x) > 20
    three = ev.mul_no_relin(cx, cx)
    assert three.size == 3
    assert precision_bits(small.decrypt(ev.rescale(ev.relinearize(three))), x * x) > 18


def test_hoisted_rotations(small, rng):
    x = rng.uniform(-1, 1, small.encoder.slots)
    outs = small.ev.rotate_hoisted(small.encrypt(x), [1, 2])
    assert precision_bits(small.decrypt(outs[0]), np.roll(x, -1)) > 18
    assert precision_bits(small.decrypt(outs[1]), np.roll(x, -2)) > 18


def test_encode_at_level_and_scale(small):
    pt = small.encoder.encode([1.0, 2.0], level=1, scale=2.0**30)
    assert pt.level == 1 and pt.scale == 2.0**30
    assert "level=1" in repr(pt)
