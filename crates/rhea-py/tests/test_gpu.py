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
    fresh = boot.bootstrap(ev.drop_to_level(encr.encrypt(enc.encode(x)), boot.input_level))
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


def test_gpu_keys_and_bgv_move_between_devices(gpu, rng):
    # keys made on the CPU, moved to a GPU context of the same parameters, used there
    params = rhea.CkksParameters.preset("n13_logqp200_levels2")
    c = make_ckks(params, rhea.Device.cpu())
    gctx = ckks.CkksContext(params, gpu)
    sk, pk = c.sk.to_device(gctx), c.pk.to_device(gctx)
    rlk = c.keygen.relinearization_key(c.sk).to_device(gctx)
    gk = c.keygen.galois_keys(c.sk, [1]).to_device(gctx)
    assert sk.device.is_gpu and pk.device.is_gpu and rlk.device.is_gpu and len(gk) == 1
    ev = ckks.Evaluator(gctx, rlk, gk)
    enc = ckks.Encoder(gctx)
    x = rng.uniform(-1, 1, enc.slots)
    ct = ckks.Encryptor(gctx, pk, evaluator=ev).encrypt(enc.encode(x))
    out = enc.decode(ckks.Decryptor(gctx, sk).decrypt(ct * ct + (ct << 1)))
    assert precision_bits(out, x * x + np.roll(x, -1)) > 18
    # BGV ciphertexts and plaintexts: CPU -> GPU -> CPU, words unchanged
    bparams = rhea.BgvParameters.preset("test_n12_levels5_insecure")
    bc, bg = bgv.BgvContext(bparams, rhea.Device.cpu()), bgv.BgvContext(bparams, gpu)
    kg = bgv.KeyGenerator(bc)
    bsk = kg.secret_key()
    be = bgv.Encoder(bc)
    y = rng.integers(0, 1000, be.slots)
    bct = bgv.Encryptor(bc, bsk).encrypt(be.encode(y))
    there = bct.to_device(bg)
    assert there.device.is_gpu
    codec = rhea.Codec(bc)
    assert codec.to_bytes(there.to_device(bc)) == codec.to_bytes(bct)
    ev_g = bgv.Evaluator(bg)
    ev_g.add_plain_assign(there, be.encode(y).to_device(bg))
    got = bgv.Encoder(bg).decode(bgv.Decryptor(bg, bsk.to_device(bg)).decrypt(there))
    np.testing.assert_array_equal(got, (2 * y) % bc.t)


def test_gpu_out_of_memory_is_a_typed_error(gpu, rng):
    # fill the card with ciphertext copies until the allocator refuses: a DeviceOutOfMemoryError
    # (also a MemoryError), and the card is usable again once they are dropped
    g = make_ckks(rhea.CkksParameters.preset("n16_logqp1560_levels24"), gpu, steps=(),
                  conjugation=False)
    x = rng.uniform(-1, 1, g.encoder.slots)
    ct = g.encrypt(x)
    held = []
    with pytest.raises(rhea.DeviceOutOfMemoryError) as info:
        for _ in range(100_000):  # 25 MB each: far beyond any card's memory
            held.append(ct.copy())
    assert isinstance(info.value, MemoryError) and info.value.variant == "DeviceOutOfMemory"
    assert len(held) > 100
    del held
    assert precision_bits(g.decrypt(ct.copy()), x) > 20
