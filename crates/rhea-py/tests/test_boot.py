"""Bootstrapping at the INSECURE test preset (N = 2^12: about a second a bootstrap here)."""

import numpy as np
import pytest

import rhea
from rhea import ckks
from conftest import precision_bits


@pytest.fixture(scope="module")
def boot_setup():
    preset = ckks.BootstrapPreset.by_name("boot_test_n12_insecure")
    ctx = ckks.CkksContext(preset.params, rhea.Device.cpu())
    kg = ckks.KeyGenerator(ctx)
    sk = kg.secret_key()
    boot = ckks.Bootstrapper(ctx, kg, sk, preset)
    ev = ckks.Evaluator(ctx, kg.relinearization_key(sk), bootstrapper=boot)
    encoder = ckks.Encoder(ctx)
    encryptor = ckks.Encryptor(ctx, sk, evaluator=ev)
    return dict(ctx=ctx, boot=boot, ev=ev, encoder=encoder, encryptor=encryptor,
                decryptor=ckks.Decryptor(ctx, sk))


def test_presets_listed():
    names = [n for n, _ in ckks.BootstrapPreset.presets()]
    assert "boot_n16_levels13" in names and "boot_test_n12_insecure" in names


def test_bootstrap(boot_setup, rng):
    s = boot_setup
    x = rng.uniform(-1, 1, s["encoder"].slots)
    ct = s["encryptor"].encrypt(s["encoder"].encode(x))
    low = s["ev"].drop_to_level(ct, s["boot"].input_level)
    fresh = s["boot"].bootstrap(low)
    assert fresh.level == s["boot"].output_level > s["boot"].input_level == 3
    assert s["boot"].user_levels == 2
    with pytest.raises(rhea.LevelUnderflowError):
        s["boot"].bootstrap(s["ev"].drop_to_level(ct, 2))
    out = s["encoder"].decode(s["decryptor"].decrypt(fresh))
    assert precision_bits(out, x) > 12


def test_auto_bootstrap(boot_setup):
    s = boot_setup
    x = s["encryptor"].encrypt(s["encoder"].encode([0.5, -0.25]))
    before = s["ev"].bootstraps
    for _ in range(4):
        x = x * x * 0.5 + 0.25
    assert s["ev"].bootstraps > before
    want = np.array([0.5, -0.25])
    for _ in range(4):
        want = want * want * 0.5 + 0.25
    out = s["encoder"].decode(s["decryptor"].decrypt(x))
    assert precision_bits(out[:2], want) > 10


def test_many_real_two_per_bootstrapping(boot_setup, rng):
    s = boot_setup
    xs = [rng.uniform(-1, 1, s["encoder"].slots) for _ in range(3)]
    cts = [s["ev"].drop_to_level(s["encryptor"].encrypt(s["encoder"].encode(x)), s["boot"].input_level) for x in xs]
    fresh = s["boot"].bootstrap_many_real(cts)
    assert len(fresh) == 3
    for ct, x in zip(fresh, xs):
        assert ct.level == s["boot"].output_level
        out = s["encoder"].decode(s["decryptor"].decrypt(ct))
        assert precision_bits(out, x) > 12
    a, b = s["boot"].bootstrap_two_real(cts[0], cts[1])
    assert precision_bits(s["encoder"].decode(s["decryptor"].decrypt(b)), xs[1]) > 12
    many = s["boot"].bootstrap_many(cts[:2])
    assert precision_bits(s["encoder"].decode(s["decryptor"].decrypt(many[1])), xs[1]) > 12


def test_fewest_keys_is_smaller_and_as_precise(boot_setup, rng):
    s = boot_setup
    preset = ckks.BootstrapPreset.by_name("boot_test_n12_insecure")
    kg = ckks.KeyGenerator(s["ctx"])
    sk = kg.secret_key()
    small = ckks.Bootstrapper(s["ctx"], kg, sk, preset, fewest_keys=True)
    assert small.key_bytes * 2 < s["boot"].key_bytes
    x = rng.uniform(-1, 1, s["encoder"].slots)
    enc = ckks.Encryptor(s["ctx"], sk)
    low = s["ev"].drop_to_level(enc.encrypt(s["encoder"].encode(x)), small.input_level)
    out = s["encoder"].decode(ckks.Decryptor(s["ctx"], sk).decrypt(small.bootstrap(low)))
    assert precision_bits(out, x) > 12


def test_compact_matrices_give_the_same_ciphertext(boot_setup, rng):
    s = boot_setup
    preset = ckks.BootstrapPreset.by_name("boot_test_n12_insecure")
    # Two generators from one seed: the same secret and the same keys for both.
    boots = []
    for compact_matrices in (False, True):
        kg = ckks.KeyGenerator(s["ctx"], seed=bytes(range(32)))
        sk = kg.secret_key()
        boots.append(ckks.Bootstrapper(s["ctx"], kg, sk, preset, compact_matrices=compact_matrices))
    whole, compact = boots
    x = rng.uniform(-1, 1, s["encoder"].slots)
    enc = ckks.Encryptor(s["ctx"], sk)
    low = s["ev"].drop_to_level(enc.encrypt(s["encoder"].encode(x)), whole.input_level)
    a, b = whole.bootstrap(low), compact.bootstrap(low)
    assert compact.matrix_bytes * 8 < whole.matrix_bytes
    codec = rhea.Codec(s["ctx"])
    assert codec.to_bytes(a, "none") == codec.to_bytes(b, "none")
    out = s["encoder"].decode(ckks.Decryptor(s["ctx"], sk).decrypt(b))
    assert precision_bits(out, x) > 12
