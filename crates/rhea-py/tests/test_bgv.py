"""BGV from Python: exact integer results, operators, errors."""

import numpy as np
import pytest

import rhea
from rhea import bgv, ckks


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


def test_bgv_in_place_forms_match_the_functional_ones(bgv_setup, rng):
    s = bgv_setup
    ev, e, enc = s["ev"], s["encoder"], s["encryptor"]
    codec = rhea.Codec(s["ctx"])
    x = rng.integers(-40, 40, e.slots)
    y = rng.integers(-40, 40, e.slots)
    cx, cy = enc.encrypt(e.encode(x)), enc.encrypt(e.encode(y))
    py_ = e.encode(y)
    cases = [
        ("add_assign", (cy,), ev.add(cx, cy)),
        ("sub_assign", (cy,), ev.sub(cx, cy)),
        ("mul_assign", (cy,), ev.mul(cx, cy)),
        ("square_assign", (), ev.square(cx)),
        ("neg_assign", (), ev.neg(cx)),
        ("add_plain_assign", (py_,), ev.add_plain(cx, py_)),
        ("sub_plain_assign", (py_,), ev.sub_plain(cx, py_)),
        ("mul_plain_assign", (py_,), ev.mul_plain(cx, py_)),
        ("add_const_assign", (7,), ev.add_const(cx, 7)),
        ("sub_const_assign", (-3,), ev.sub_const(cx, -3)),
        ("mul_const_assign", (5,), ev.mul_const(cx, 5)),
        ("mod_switch_assign", (), ev.mod_switch(cx)),
        ("rotate_rows_assign", (1,), ev.rotate_rows(cx, 1)),
    ]
    for name, args, want in cases:
        got = codec.from_bytes(bgv.Ciphertext, codec.to_bytes(cx))  # a fresh copy of cx
        getattr(ev, name)(got, *args)
        assert codec.to_bytes(got) == codec.to_bytes(want), name
    # relinearize_assign on an unrelinearised product; add_assign with itself
    got = ev.mul_no_relin(cx, cy)
    ev.relinearize_assign(got)
    assert codec.to_bytes(got) == codec.to_bytes(ev.relinearize(ev.mul_no_relin(cx, cy)))
    twice = codec.from_bytes(bgv.Ciphertext, codec.to_bytes(cx))
    ev.add_assign(twice, twice)
    np.testing.assert_array_equal(e.decode_signed(s["decryptor"].decrypt(twice)), 2 * x)
    # the in-place form keeps the evaluator for operators, and refuses what the functional one does
    np.testing.assert_array_equal(e.decode_signed(s["decryptor"].decrypt(twice + 1)), 2 * x + 1)
    with pytest.raises(rhea.MissingRotationKeyError):
        ev.rotate_rows_assign(twice, 3)


def test_bgv_and_keys_to_device(bgv_setup, rng):
    s = bgv_setup
    e = s["encoder"]
    x = rng.integers(0, 1000, e.slots)
    other = bgv.BgvContext(s["ctx"].params, rhea.Device.cpu())
    ct = s["encryptor"].encrypt(e.encode(x)).to_device(other)
    pt = e.encode(x).to_device(other)
    sk = s["sk"].to_device(other)
    assert repr(sk).startswith("SecretKey(") and sk.device.is_cpu
    got = bgv.Encoder(other).decode(bgv.Decryptor(other, sk).decrypt(ct))
    np.testing.assert_array_equal(got, x)
    assert pt.level == ct.level
    with pytest.raises(TypeError, match="CkksContext or a bgv.BgvContext"):
        s["sk"].to_device(42)
    small = rhea.CkksParameters.preset("n13_logqp200_levels2")
    with pytest.raises(rhea.ParameterMismatchError):
        s["sk"].to_device(ckks.CkksContext(small, rhea.Device.cpu()))
