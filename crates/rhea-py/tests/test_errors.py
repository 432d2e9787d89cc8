"""Errors: each Rust variant raised as its Python class, with the Rust message."""

import numpy as np
import pytest

import rhea
from rhea import ckks


def test_hierarchy():
    assert issubclass(rhea.LevelUnderflowError, rhea.RheaError)
    assert issubclass(rhea.MissingRotationKeyError, rhea.MissingKeyError)
    assert issubclass(rhea.MissingKeyError, rhea.RheaError)
    assert issubclass(rhea.InvalidInputError, ValueError)
    assert issubclass(rhea.DeviceOutOfMemoryError, MemoryError)
    assert issubclass(rhea.DeviceOutOfMemoryError, rhea.DeviceError)
    assert issubclass(rhea.InsecureParametersError, rhea.InvalidParametersError)


def test_level_underflow(small):
    ct = small.encrypt([0.5])
    ct = ct * ct * ct  # two levels used
    with pytest.raises(rhea.LevelUnderflowError, match="needs 1 more level") as e:
        small.ev.mul(ct, ct)
    assert e.value.variant == "LevelUnderflow"
    assert "bootstrap" in str(e.value)  # the Rust message says what to do


def test_missing_keys(small):
    bare = ckks.Evaluator(small.ctx)
    ct = small.encrypt([0.5])
    with pytest.raises(rhea.MissingRelinearizationKeyError, match="relinearization key"):
        bare.mul(ct, ct)
    with pytest.raises(rhea.MissingRotationKeyError, match="rotation by 5"):
        small.ev.rotate(ct, 5)
    with pytest.raises(rhea.MissingConjugationKeyError):
        bare.conjugate(ct)
    # Operators of a fresh ciphertext without an evaluator with keys.
    enc = ckks.Encryptor(small.ctx, small.pk)
    c2 = enc.encrypt(small.encoder.encode([1.0]))
    with pytest.raises(rhea.MissingRelinearizationKeyError):
        c2 * c2


def test_parameter_mismatch(small, deep):
    a, b = small.encrypt([1.0]), deep.encrypt([1.0])
    with pytest.raises(rhea.ParameterMismatchError, match="different parameters"):
        small.ev.add(a, b)


def test_invalid_inputs(small):
    with pytest.raises(rhea.InvalidInputError):
        small.encoder.encode(np.zeros(small.encoder.slots + 1))
    with pytest.raises(rhea.InvalidInputError):
        small.encoder.encode(np.zeros((2, 2)))
    with pytest.raises(rhea.InvalidInputError):
        ckks.KeyGenerator(small.ctx, seed=b"short")
    with pytest.raises(rhea.InvalidInputError, match="no CKKS preset"):
        rhea.CkksParameters.preset("nope")
    with pytest.raises(ValueError):  # InvalidInputError is a ValueError
        small.encoder.encode(np.array(["a", "b"]))


def test_scale_error(small):
    with pytest.raises(rhea.ScaleError):
        small.encoder.encode([1.0], scale=0.5)


def test_insecure_parameters_refused():
    with pytest.raises(rhea.InsecureParametersError, match="insecure"):
        rhea.CkksParameters.custom(12, [60, 50, 50, 50], [61], 50, dnum=4)
    p = rhea.CkksParameters.custom(12, [60, 50, 50, 50], [61], 50, dnum=4, insecure=True)
    assert not p.secure


def test_intent_that_cannot_be_met():
    with pytest.raises(rhea.InvalidParametersError):
        rhea.CkksParameters.for_depth(200, log_n=12)


def test_bad_device():
    with pytest.raises(rhea.DeviceError):
        rhea.Device.cuda(97).check_supported()
