"""BGV: exact arithmetic on encrypted integers modulo the plaintext modulus ``t``, with int64
numpy arrays in and out. Operators as for CKKS: ``a + b``, ``a - b``, ``a * b``, ``-a``,
integer constants, plaintexts, ``a << k`` / ``a >> k`` (row rotations).
"""

from rhea._rhea import bgv as _m

BgvContext = _m.BgvContext
KeyGenerator = _m.KeyGenerator
Encoder = _m.Encoder
Encryptor = _m.Encryptor
Decryptor = _m.Decryptor
Decrypted = _m.Decrypted
Evaluator = _m.Evaluator
Plaintext = _m.Plaintext
Ciphertext = _m.Ciphertext

__all__ = [
    "BgvContext",
    "KeyGenerator",
    "Encoder",
    "Encryptor",
    "Decryptor",
    "Decrypted",
    "Evaluator",
    "Plaintext",
    "Ciphertext",
]
