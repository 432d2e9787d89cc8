"""BGV from Python: exact integer results, operators, errors."""

import numpy as np
import pytest

import rhea


def test_bgv_exact(bgv_setup, rng):
    s = bgv_setup
    n, t = s["encoder"].slots, s["t"]
    x = rng.integers(0, 100, n)
    y = rng.integers(0, 100, n)
    cx = s["encryptor"].encrypt(s["encoder"].encode(x))
    cy = s["encryptor"].encrypt(s["encoder"].encode(y))
    z = s["ev"].add(s["ev"].mul(cx, cy), s["ev"].rotate_rows(cx, 1))
    out = s["encoder"].decode(s["decryptor"].decrypt(z))
    assert out.dtype == np.int64
    half = n // 2
    rot = np.concatenate([np.roll(x[:half], -1), np.roll(x[half:], -1)])
    np.testing.assert_array_equal(out, (x * y + rot) % t)


def test_bgv_operators_and_signed(bgv_setup, rng):
    s = bgv_setup
    enc, dec, e = s["encryptor"], s["decryptor"], s["encoder"]
    x = rng.integers(-50, 50, e.slots)
    y = rng.integers(-50, 50, e.slots)
    cx, cy = enc.encrypt(e.encode(x)), enc.encrypt(e.encode(y))
    got = e.decode_signed(dec.decrypt(cx * cy - cx + 7 - (2 * cy)))
    np.testing.assert_array_equal(got, x * y - x + 7 - 2 * y)
    d = dec.decrypt(-cx)
    np.testing.assert_array_equal(e.decode_signed(d), -x)
    assert d.noise_budget is not None and d.noise_budget > 0


def test_bgv_refuses_floats_and_out_of_range(bgv_setup):
    s = bgv_setup
    with pytest.raises(rhea.InvalidInputError, match="integers"):
        s["encoder"].encode(np.array([1.5]))
    with pytest.raises(rhea.InvalidInputError, match="outside"):
        s["encoder"].encode(np.array([s["t"]]))


def test_bgv_presets_and_intent():
    names = [n for n, _ in rhea.BgvParameters.presets()]
    assert "test_n12_levels5_insecure" in names
    p = rhea.BgvParameters.for_depth(2, plaintext_bits=20)
    assert p.batching and p.t.bit_length() >= 20
