"""The exception and warning classes of mfstein: the bottom of the ground.

Standard library only and importing nothing of the project, so that every
module -- the parsers of :mod:`mfstein.ground.numbers` and the limits of
:mod:`mfstein.ground.limits` included -- can raise them without a circle.
:mod:`mfstein.ground.errors` re-exports them beside the shared checks
(``check_int`` reads integers with :func:`mfstein.ground.numbers.parse_integer`); import
them from there.
"""

from __future__ import annotations

__all__ = ["IllConditionedWarning", "NumericalError", "ParameterError", "StabilityWarning"]


class ParameterError(ValueError):
    """A parameter is outside its allowed range.

    The message is one sentence naming the parameter and the allowed range; the
    ``mfstein`` dispatcher prints it and exits with status 2.
    """


class NumericalError(ArithmeticError):
    """A computation failed its own check (independent routes or two working
    precisions disagree beyond the claimed digits, a residual is too large);
    no result is returned."""


class IllConditionedWarning(RuntimeWarning):
    """A float64 result is not trustworthy to the usual ~1e-10 relative accuracy."""


class StabilityWarning(RuntimeWarning):
    """A mean-field path does not tend to a stable hyperbolic fixed point (another
    basin, an unstable or non-hyperbolic limit, unbounded growth, no limit)."""
