"""LITE's protected and all-data modes (``rhea.Protection``, ``rhea.ckks.Protected*``).

The CPU test runs everywhere; the GPU test is skipped without a GPU and FAILS without one
when RHEA_REQUIRE_GPU=1."""

import numpy as np
import pytest

import rhea
from rhea import ckks
from conftest import gpu_required, precision_bits


def test_protection_needs_a_gpu_context():
    ctx = ckks.CkksContext(rhea.CkksParameters.preset("n13_logqp200_levels2"), rhea.Device.cpu())
    with pytest.raises(rhea.InvalidInputError):
        rhea.Protection(ctx)


@pytest.fixture(scope="module")
def gpu():
    dev = rhea.Device.best()
    if dev.is_cpu:
        if gpu_required():
            pytest.fail("RHEA_REQUIRE_GPU=1 but Device.best() found no usable GPU")
        pytest.skip("no GPU (set RHEA_REQUIRE_GPU=1 to make this a failure)")
    return dev


def test_all_data_mode_matches_the_evaluator(gpu, rng):
    params = rhea.CkksParameters.preset("n13_logqp200_levels2")
    ctx = ckks.CkksContext(params, gpu)
    host = ckks.CkksContext(params, rhea.Device.cpu())
    protection = rhea.Protection(ctx)
    assert protection.device.is_gpu and protection.is_same_session(protection)
    kg = ckks.ProtectedKeyGenerator(ctx, protection, seed=bytes(range(32)))
    sk = kg.secret_key()
    rlk = kg.relinearization_key(sk)
    gk = kg.galois_keys(sk, [1])
    enc = ckks.Encoder(host)
    x, y = rng.uniform(-1, 1, enc.slots), rng.uniform(-1, 1, enc.slots)
    encryptor = ckks.ProtectedEncryptor(ctx, sk, seed=bytes(32))
    ca = encryptor.encrypt(ckks.ProtectedPlaintext(ctx, protection, enc.encode(x)))
    cb = encryptor.encrypt(ckks.ProtectedPlaintext(ctx, protection, enc.encode(y)))
    plain = ckks.Evaluator(ctx, rlk, gk, auto_rescale=False)
    want = plain.rotate(plain.rescale(plain.mul_relin(ca, cb)), 1)

    ev = ckks.ProtectedEvaluator(ctx, protection, relinearization_key=rlk, galois_keys=gk)
    pa, pb = ev.protect(ca), ev.protect(cb)
    got = ev.rotate(ev.mul_relin_rescale(pa, pb), 1)
    assert "ProtectedCiphertext" in repr(got) and got.level == want.level
    codec = rhea.Codec(ctx)
    assert codec.to_bytes(ev.unprotect(got)) == codec.to_bytes(want)
    dec = ckks.ProtectedDecryptor(ctx, sk)
    z = enc.decode(dec.decrypt_protected(got))
    assert precision_bits(z, np.roll(x * y, -1)) > 15
    assert precision_bits(enc.decode(dec.decrypt(want)), z) > 30
    # Another session cannot read these ciphertexts.
    other = ckks.ProtectedEvaluator(ctx, rhea.Protection(ctx))
    with pytest.raises(rhea.InvalidInputError):
        other.add(pa, pb)
    with pytest.raises(rhea.MissingRelinearizationKeyError):
        ckks.ProtectedEvaluator(ctx, protection).mul_relin(pa, pb)
