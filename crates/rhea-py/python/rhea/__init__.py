"""Rhea: fully homomorphic encryption (CKKS and BGV) on NVIDIA GPUs and CPUs, from Python.

numpy arrays in and out; the GPU is found at run time (``Device.best()``), and the same code
runs on the CPU with bit-identical results. Every call that computes releases the GIL, and
every object can be shared between threads.

- :mod:`rhea.ckks`: approximate arithmetic on real/complex vectors (``CkksContext``,
  ``KeyGenerator``, ``Encoder``, ``Encryptor``, ``Decryptor``, ``Evaluator``, ``Ciphertext``,
  ``Polynomial``, ``LinearTransform``, ``Bootstrapper``; :mod:`rhea.ckks.functions`).
- :mod:`rhea.bgv`: exact arithmetic on integers modulo ``t`` (int64 arrays).
- Here: ``Device``, ``CkksParameters``, ``BgvParameters``, the keys, ``Protection`` (LITE's
  memory encryption: :class:`rhea.ckks.ProtectedEvaluator` and friends), ``Codec``
  (serialisation) and the exceptions (``RheaError`` and its subclasses).
"""

from rhea._rhea import (
    BgvParameters,
    CkksParameters,
    Codec,
    Device,
    GaloisKeys,
    ProtectedSecretKey,
    Protection,
    PublicKey,
    RelinearizationKey,
    SecretKey,
    __version__,
)
from rhea._errors import (
    DeviceError,
    DeviceMismatchError,
    DeviceOutOfMemoryError,
    InsecureParametersError,
    InternalError,
    InvalidInputError,
    InvalidParametersError,
    LevelUnderflowError,
    MissingConjugationKeyError,
    MissingKeyError,
    MissingRelinearizationKeyError,
    MissingRotationKeyError,
    NoiseBudgetExhaustedError,
    ParameterMismatchError,
    RheaError,
    ScaleError,
    SerializationError,
)
from rhea import bgv, ckks

__all__ = [
    "BgvParameters",
    "CkksParameters",
    "Codec",
    "Device",
    "GaloisKeys",
    "ProtectedSecretKey",
    "Protection",
    "PublicKey",
    "RelinearizationKey",
    "SecretKey",
    "bgv",
    "ckks",
    "DeviceError",
    "DeviceMismatchError",
    "DeviceOutOfMemoryError",
    "InsecureParametersError",
    "InternalError",
    "InvalidInputError",
    "InvalidParametersError",
    "LevelUnderflowError",
    "MissingConjugationKeyError",
    "MissingKeyError",
    "MissingRelinearizationKeyError",
    "MissingRotationKeyError",
    "NoiseBudgetExhaustedError",
    "ParameterMismatchError",
    "RheaError",
    "ScaleError",
    "SerializationError",
    "__version__",
]
