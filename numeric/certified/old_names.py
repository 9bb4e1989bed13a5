"""Old public names of the certification, kept as thin deprecated wrappers.

The one certification entry is :meth:`numeric.MeanFieldSolution.certify`
(``numeric.certify(model, params, ...)`` is ``numeric.solve(...).certify()``).
``numeric.certify_float_solution(solution, ...)`` named the function that method
runs (:func:`numeric.certified.enclosures.certify_float_solution`, which stays the
implementation); called through the package it warns, pointing at the caller's
line, and gives the same certificate.
"""

from __future__ import annotations

import warnings
from typing import Any

from mfstein.ground.errors import caller_level

__all__ = ["certify_float_solution"]


def certify_float_solution(solution: Any, **options: Any) -> Any:
    """Deprecated: ``solution.certify(**options)`` (the same computation,
    :func:`numeric.certified.enclosures.certify_float_solution`)."""
    from numeric.certified.enclosures import certify_float_solution as certify

    warnings.warn(
        "numeric.certify_float_solution(solution, ...) is deprecated; use solution.certify(...).",
        DeprecationWarning,
        stacklevel=caller_level(),
    )
    return certify(solution, **options)
