"""What a model's rate may be built from: one sentence shared by the model's checks
(:mod:`derive.model`) and the code printers (:mod:`derive.backends`), which both
import it from here (``derive.model.RATE_FUNCTIONS`` still names it)."""

from __future__ import annotations

__all__ = ["RATE_FUNCTIONS"]

#: What a rate may be built from (every back end prints it, SymPy differentiates it).
RATE_FUNCTIONS = (
    "polynomials, rational functions, powers, sqrt, exp, log, Min, Max, Abs, sign, "
    "Heaviside and Piecewise"
)
