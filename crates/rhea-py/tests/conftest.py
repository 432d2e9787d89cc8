"""Shared fixtures: small CKKS and BGV contexts on the CPU (fast), with their keys."""

import os
from dataclasses import dataclass

import numpy as np
import pytest

import rhea
from rhea import bgv, ckks


def precision_bits(got, want):
    """-log2 of the largest absolute error."""
    err = float(np.max(np.abs(np.asarray(got) - np.asarray(want))))
    return float("inf") if err == 0 else -np.log2(err)


@dataclass
class Ckks:
    ctx: object
    sk: object
    pk: object
    keygen: object
    ev: object
    encoder: object
    encryptor: object
    decryptor: object

    def encrypt(self, values):
        return self.encryptor.encrypt(self.encoder.encode(values))

    def decrypt(self, ct):
        return self.encoder.decode(self.decryptor.decrypt(ct))

    def decrypt_complex(self, ct):
        return self.encoder.decode_complex(self.decryptor.decrypt(ct))


def make_ckks(params, device, steps=(1, -1, 2), conjugation=True):
    ctx = ckks.CkksContext(params, device)
    kg = ckks.KeyGenerator(ctx, seed=bytes(range(32)))
    sk = kg.secret_key()
    pk = kg.public_key(sk)
    ev = ckks.Evaluator(
        ctx, kg.relinearization_key(sk), kg.galois_keys(sk, list(steps), conjugation)
    )
    return Ckks(
        ctx,
        sk,
        pk,
        kg,
        ev,
        ckks.Encoder(ctx),
        ckks.Encryptor(ctx, pk, evaluator=ev),
        ckks.Decryptor(ctx, sk),
    )


@pytest.fixture(scope="session")
def cpu():
    return rhea.Device.cpu()


@pytest.fixture(scope="session")
def small(cpu):
    """N = 2^13, 2 levels, 128-bit secure."""
    return make_ckks(rhea.CkksParameters.preset("n13_logqp200_levels2"), cpu)


@pytest.fixture(scope="session")
def deep(cpu):
    """N = 2^13, 10 levels, INSECURE (tests only)."""
    return make_ckks(rhea.CkksParameters.preset("test_n13_levels10_insecure"), cpu)


@pytest.fixture(scope="session")
def bgv_setup(cpu):
    params = rhea.BgvParameters.preset("test_n12_levels5_insecure")
    ctx = bgv.BgvContext(params, cpu)
    kg = bgv.KeyGenerator(ctx)
    sk = kg.secret_key()
    pk = kg.public_key(sk)
    ev = bgv.Evaluator(ctx, kg.relinearization_key(sk), kg.galois_keys(sk, [1]))
    return dict(
        ctx=ctx,
        sk=sk,
        ev=ev,
        encoder=bgv.Encoder(ctx),
        encryptor=bgv.Encryptor(ctx, pk, evaluator=ev),
        decryptor=bgv.Decryptor(ctx, sk),
        t=ctx.t,
    )


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def gpu_required():
    return os.environ.get("RHEA_REQUIRE_GPU") == "1"
