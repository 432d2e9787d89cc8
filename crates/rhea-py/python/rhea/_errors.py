"""The exception hierarchy of Rhea, mirroring the Rust enum ``rhea::Error``.

Every error raised by Rhea is a :class:`RheaError`; its message is the Rust message, which says
what to do. ``err.variant`` names the Rust variant (``"LevelUnderflow"``, ...). Classes that
describe a bad argument also derive from :class:`ValueError`, the out-of-memory one from
:class:`MemoryError`, so generic ``except ValueError`` code keeps working.
"""


class RheaError(Exception):
    """Base class of every error raised by Rhea (``rhea::Error``)."""

    variant: str = ""


class InvalidInputError(RheaError, ValueError):
    """An argument of the wrong size or out of its domain (``InvalidInput``, ``SlotMismatch``,
    ``CiphertextDegree``, ``PlaintextOutOfRange``, ``InvalidGaloisElement``, ``FormMismatch``,
    ``ShapeMismatch``)."""


class InvalidParametersError(RheaError, ValueError):
    """Parameters that cannot work (``InvalidParameters``, ``ParameterIntent``, ``Math``)."""


class InsecureParametersError(InvalidParametersError):
    """Parameters below 128-bit security without the explicit opt-in (``InsecureParameters``)."""


class ParameterMismatchError(RheaError, ValueError):
    """Objects of different parameter sets combined (``ParametersMismatch``)."""


class DeviceMismatchError(RheaError, ValueError):
    """Operands on different devices (``DeviceMismatch``): move one with ``to_device``."""


class LevelUnderflowError(RheaError):
    """An operation needs more levels than the ciphertext has left (``LevelUnderflow``)."""


class ScaleError(RheaError, ValueError):
    """A CKKS scale that does not fit or does not match (``ScaleOverflow``, ``ScaleMismatch``,
    ``InvalidScale``)."""


class NoiseBudgetExhaustedError(RheaError):
    """A BGV ciphertext whose noise has used up the modulus (``NoiseBudgetExhausted``)."""


class MissingKeyError(RheaError):
    """An evaluation key that was not generated or not given to the evaluator."""


class MissingRelinearizationKeyError(MissingKeyError):
    """A product or relinearisation without the relinearisation key."""


class MissingRotationKeyError(MissingKeyError):
    """A rotation whose Galois key was not generated."""


class MissingConjugationKeyError(MissingKeyError):
    """A conjugation without the conjugation key."""


class DeviceError(RheaError):
    """A device that cannot be used, or any other GPU error (``DeviceNotSupported``,
    ``UnsupportedComputeCapability``, ``Gpu``)."""


class DeviceOutOfMemoryError(DeviceError, MemoryError):
    """A device allocation failed for lack of memory (``DeviceOutOfMemory``)."""


class SerializationError(RheaError):
    """Bytes or a file that cannot be read as the requested object (``rhea::serial::SerialError``:
    truncated, bad magic, wrong kind, checksum, malformed, I/O)."""


class InternalError(RheaError):
    """A bug in Rhea (a panic caught at the Python boundary); please report it."""


__all__ = [name for name in dir() if name.endswith("Error")]

for _name in __all__:
    globals()[_name].__module__ = "rhea"
del _name
