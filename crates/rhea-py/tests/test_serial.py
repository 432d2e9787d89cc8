"""Serialisation round trips (bytes and files), and corrupted input."""

import numpy as np
import pytest

import rhea
from rhea import bgv, ckks
from conftest import precision_bits


def test_ciphertext_and_keys_round_trip(small, rng, tmp_path):
    codec = rhea.Codec(small.ctx)
    x = rng.uniform(-1, 1, small.encoder.slots)
    ct = small.encrypt(x)
    for comp in ["none", "seeded", "packed", "seeded_packed"]:
        data = codec.to_bytes(ct, compression=comp)
        back = codec.from_bytes(ckks.Ciphertext, data)
        assert isinstance(back, ckks.Ciphertext)
        assert codec.to_bytes(back, compression=comp) == data  # bit for bit
        assert precision_bits(small.decrypt(back), x) > 20
    assert len(codec.to_bytes(ct, "packed")) < len(codec.to_bytes(ct, "none"))
    path = tmp_path / "x.ct"
    n = codec.save(ct, path)
    assert path.stat().st_size == n
    back = codec.load(ckks.Ciphertext, str(path))
    back.evaluator = small.ev
    assert precision_bits(small.decrypt(back * back), x * x) > 18
    # Keys.
    rlk = codec.from_bytes(rhea.RelinearizationKey, codec.to_bytes(small.keygen.relinearization_key(small.sk)))
    gk = codec.from_bytes(rhea.GaloisKeys, codec.to_bytes(small.keygen.galois_keys(small.sk, [3])))
    pk = codec.from_bytes(rhea.PublicKey, codec.to_bytes(small.pk))
    sk = codec.secret_key_from_bytes(codec.secret_key_to_bytes(small.sk))
    ev = ckks.Evaluator(small.ctx, rlk, gk)
    enc = ckks.Encryptor(small.ctx, pk, evaluator=ev)
    c = enc.encrypt(small.encoder.encode(x))
    out = small.encoder.decode(ckks.Decryptor(small.ctx, sk).decrypt((c * c) << 3))
    assert precision_bits(out, np.roll(x * x, -3)) > 18
    pt = codec.from_bytes(ckks.Plaintext, codec.to_bytes(small.encoder.encode(x)))
    assert precision_bits(small.encoder.decode(pt), x) > 20


def test_corrupted_and_wrong_kind(small):
    codec = rhea.Codec(small.ctx)
    data = bytearray(codec.to_bytes(small.encrypt([1.0])))
    data[len(data) // 2] ^= 0xFF
    with pytest.raises(rhea.SerializationError):
        codec.from_bytes(ckks.Ciphertext, bytes(data))
    with pytest.raises(rhea.SerializationError):
        codec.from_bytes(ckks.Ciphertext, b"not rhea")
    good = codec.to_bytes(small.encrypt([1.0]))
    with pytest.raises(rhea.SerializationError):
        codec.from_bytes(rhea.PublicKey, good)
    with pytest.raises(rhea.SerializationError):
        codec.load(ckks.Ciphertext, "/nonexistent/file")
    with pytest.raises(rhea.InvalidInputError, match="compression"):
        codec.to_bytes(small.encrypt([1.0]), compression="zip")


def test_other_parameters_refused(small, deep):
    data = rhea.Codec(small.ctx).to_bytes(small.encrypt([1.0]))
    with pytest.raises(rhea.RheaError):
        rhea.Codec(deep.ctx).from_bytes(ckks.Ciphertext, data)


def test_bgv_round_trip(bgv_setup, rng):
    s = bgv_setup
    codec = rhea.Codec(s["ctx"])
    x = rng.integers(0, 1000, s["encoder"].slots)
    ct = s["encryptor"].encrypt(s["encoder"].encode(x))
    back = codec.from_bytes(bgv.Ciphertext, codec.to_bytes(ct))
    np.testing.assert_array_equal(s["encoder"].decode(s["decryptor"].decrypt(back)), x)
