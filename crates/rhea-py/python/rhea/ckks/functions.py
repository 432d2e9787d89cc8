"""Approximations of non-polynomial functions on CKKS ciphertexts: ``Inverse``, ``InvSqrt``,
``Sqrt``, ``Sign`` (with ``relu`` and ``max``) and ``SmoothFunction`` (sigmoid, exp, tanh).

Each has ``evaluate(ev, ct, target_scale=None)`` (or ``sign``/``relu``/``max``),
``evaluate_plain(x)`` (the floating-point reference) and ``depth`` (levels consumed).
"""

from rhea._rhea import ckks as _ckks

_m = _ckks.functions
Inverse = _m.Inverse
InvSqrt = _m.InvSqrt
Sqrt = _m.Sqrt
Sign = _m.Sign
SmoothFunction = _m.SmoothFunction

__all__ = ["Inverse", "InvSqrt", "Sqrt", "Sign", "SmoothFunction"]
