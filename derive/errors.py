"""Re-export of :mod:`mfstein.errors` (the one home of mfstein's error types)."""

from mfstein.errors import ParameterError, check_int

__all__ = ["ParameterError", "check_int"]
