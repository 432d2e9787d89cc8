"""CKKS: approximate arithmetic on encrypted vectors of real or complex numbers.

A ciphertext remembers the evaluator that produced it, and its Python operators run on it:
``a + b``, ``a - b``, ``a * b`` (multiply, relinearise, rescale), ``-a``, constants
(``a * 0.5``, ``1 + a``, ``a * 1j``; ``a * 3`` is an exact integer product), plaintexts, and
rotations ``a << k`` (left by ``k`` slots) and ``a >> k``.
"""

from rhea._rhea import ckks as _m
from rhea.ckks import functions

CkksContext = _m.CkksContext
KeyGenerator = _m.KeyGenerator
Encoder = _m.Encoder
Encryptor = _m.Encryptor
Decryptor = _m.Decryptor
Evaluator = _m.Evaluator
Plaintext = _m.Plaintext
Ciphertext = _m.Ciphertext
Polynomial = _m.Polynomial
LinearTransform = _m.LinearTransform
BootstrapPreset = _m.BootstrapPreset
Bootstrapper = _m.Bootstrapper
ProtectedKeyGenerator = _m.ProtectedKeyGenerator
ProtectedPlaintext = _m.ProtectedPlaintext
ProtectedEncryptor = _m.ProtectedEncryptor
ProtectedDecryptor = _m.ProtectedDecryptor
ProtectedEvaluator = _m.ProtectedEvaluator
ProtectedCiphertext = _m.ProtectedCiphertext

__all__ = [
    "CkksContext",
    "KeyGenerator",
    "Encoder",
    "Encryptor",
    "Decryptor",
    "Evaluator",
    "Plaintext",
    "Ciphertext",
    "Polynomial",
    "LinearTransform",
    "BootstrapPreset",
    "Bootstrapper",
    "ProtectedKeyGenerator",
    "ProtectedPlaintext",
    "ProtectedEncryptor",
    "ProtectedDecryptor",
    "ProtectedEvaluator",
    "ProtectedCiphertext",
    "functions",
]
