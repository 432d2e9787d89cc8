"""The GPU: skipped without one, FAILS without one when RHEA_REQUIRE_GPU=1."""

import numpy as np
import pytest

import rhea
from rhea import bgv, ckks
from conftest import gpu_required, make_ckks, precision_bits


@pytest.fixture(scope="module")
def gpu():
    dev = rhea.Device.best()
    if dev.is_cpu:
        if gpu_required():
            pytest.fail("RHEA_REQUIRE_GPU=1 but Device.best() found no usable GPU")
        pytest.skip("no GPU (set RHEA_REQUIRE_GPU=1 to make this a failure)")
    return dev


def test_gpu_matches_cpu_bit_for_bit(gpu, rng):
    params = rhea.CkksParameters.preset("n13_logqp200_levels2")
    g = make_ckks(params, gpu)
    c = make_ckks(params, rhea.Device.cpu())
    assert "cuda" in repr(g.ctx) and g.ctx.device.is_gpu
    x = rng.uniform(-1, 1, g.encoder.slots)
    seed = bytes(32)
    eg = ckks.Encryptor(g.ctx, g.pk, seed=seed, evaluator=g.ev)
    ec = ckks.Encryptor(c.ctx, c.pk, seed=seed, evaluator=c.ev)
    zg = (lambda a: a * a + (a << 1))(eg.encrypt(g.encoder.encode(x)))
    zc = (lambda a: a * a + (a << 1))(ec.encrypt(c.encoder.encode(x)))
    assert "cuda" in repr(zg)
    assert rhea.Codec(g.ctx).to_bytes(zg) == rhea.Codec(c.ctx).to_bytes(zc)
    assert precision_bits(g.decrypt(zg), x * x + np.roll(x, -1)) > 18
    back = zg.to_device(c.ctx)
    assert back.device.is_cpu


def test_gpu_n16_quickstart(gpu, rng):
    g = make_ckks(rhea.CkksParameters.preset("n16_logqp1560_levels24"), gpu, steps=(1,),
                  conjugation=False)
    x, y = rng.uniform(-1, 1, g.encoder.slots), rng.uniform(-1, 1, g.encoder.slots)
    z = g.encrypt(x) * g.encrypt(y) + (g.encrypt(x) << 1)
    assert precision_bits(g.decrypt(z), x * y + np.roll(x, -1)) > 20


def test_gpu_bootstrap(gpu, rng):
    preset = ckks.BootstrapPreset.by_name("boot_test_n14_insecure")
    ctx = ckks.CkksContext(preset.params, gpu)
    kg = ckks.KeyGenerator(ctx)
    sk = kg.secret_key()
    boot = ckks.Bootstrapper(ctx, kg, sk, preset)
    enc, encr = ckks.Encoder(ctx), ckks.Encryptor(ctx, sk)
    x = rng.uniform(-1, 1, enc.slots)
    ev = ckks.Evaluator(ctx)
    fresh = boot.bootstrap(ev.drop_to_level(encr.encrypt(enc.encode(x)), 0))
    out = enc.decode(ckks.Decryptor(ctx, sk).decrypt(fresh))
    assert precision_bits(out, x) > 12


def test_gpu_bgv(gpu, rng):
    ctx = bgv.BgvContext(rhea.BgvParameters.preset("test_n12_levels5_insecure"), gpu)
    kg = bgv.KeyGenerator(ctx)
    sk = kg.secret_key()
    ev = bgv.Evaluator(ctx, kg.relinearization_key(sk))
    e = bgv.Encoder(ctx)
    x = rng.integers(0, 100, e.slots)
    c = bgv.Encryptor(ctx, kg.public_key(sk), evaluator=ev).encrypt(e.encode(x))
    np.testing.assert_array_equal(e.decode(bgv.Decryptor(ctx, sk).decrypt(c * c)), x * x % ctx.t)
