"""The result of a transient expansion (:func:`numeric.expansion.transient.transient`
and the heterogeneous populations' transient): ``x(t)``, ``V(t)``, ``W(t)`` and at
order 2 ``A(t)``, ``B(t)`` at the requested times, with their error estimates.

Its own module so that every route that builds one -- the general moment system
of :mod:`numeric.expansion.transient` and the population route of
:mod:`numeric.heterogeneous` -- imports the class and not each other.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mfstein.ground.arguments import renamed_attribute
from mfstein.ground.display import (
    Presentable,
    claimed_to_place,
    count_row,
    error_figure,
    params_text,
    printed_to_error,
    shape_text,
)
from mfstein.ground.errors import ParameterError


@dataclass(frozen=True, repr=False)
class TransientResult(Presentable):
    """The transient expansion at the requested times, in the model's coordinates.

    A frozen record (assigning a field raises ``dataclasses.FrozenInstanceError``);
    its first fields are the task's inputs (model, parameters, start), keyword-only.
    """

    #: The model name.
    model: str = field(default="", kw_only=True)
    #: The parameter values as given.
    params: dict[str, str] = field(default_factory=dict, kw_only=True)
    #: The start the expansion began from, as given; ``None`` for the model's reference
    #: point.
    start: Any = field(default=None, kw_only=True, repr=False, compare=False)
    #: The requested times, shape ``(m,)``.
    times: np.ndarray
    #: Mean-field solution ``x(t)``, shape ``(m, b)``.
    x: np.ndarray
    #: The first-order coefficient ``V(t)`` of ``E[S(t)] - x(t)`` (``None`` for order 0),
    #: shape ``(m, b)``.
    V: np.ndarray | None
    #: The first-order coefficient ``W(t)`` of ``E[Y Y^T]``, ``Y = S(t) - x(t)`` (``None``
    #: for order 0), shape ``(m, b, b)``.
    W: np.ndarray | None
    #: The second-order coefficient ``A(t)`` of ``E[S(t)] - x(t)`` (order 2 only), shape
    #: as ``V``.
    A: np.ndarray | None = None
    #: The second-order coefficient ``B(t)`` of ``E[Y Y^T]`` (order 2 only), shape as
    #: ``W``.
    B: np.ndarray | None = None
    #: The state names, in order.
    states: list[str] = field(default_factory=list)
    #: What was computed and how accurate it is.
    notes: list[str] = field(default_factory=list)
    #: The order of the expansion (0, 1 or 2).
    order: int = 1
    #: ``"float64"`` (float arrays) or ``"mpmath"`` (object arrays of ``mpf``).
    route: str = "float64"
    #: The requested digits (mpmath route), else ``None``.
    dps: int | None = None
    #: The digits earned (mpmath route), else ``None``.
    digits: int | None = None
    #: The free coordinates the ODEs were integrated on (conservation laws removed).
    free: list[str] = field(default_factory=list)
    #: The integrator that ran (a ``solve_ivp`` method, ``"taylor"`` for mpmath or
    #: ``"extrapolation"`` for a population's Gragg-Bulirsch-Stoer); ``method`` is its
    #: deprecated name (warns), ``"method"`` its key in :meth:`to_dict` (the documented
    #: ``--json`` output).
    integrator: str = ""
    #: The mpmath route's per-entry absolute error estimates of ``x, V, W (, A, B)`` (same
    #: shapes; the difference of the two working precisions), which printing uses to keep
    #: only correct digits; empty for float64.
    errors: dict[str, np.ndarray] = field(default_factory=dict)
    #: The fixed point the mean field approaches after the last time (float64, model
    #: coordinates; :func:`numeric.expansion.basin.fate`), ``None`` if none. It is printed
    #: to its error :attr:`limit_abs_error`
    #: (:func:`mfstein.ground.display.printed_to_error`).
    limit: np.ndarray | None = None
    #: ``None`` when the mean field converges to the stable hyperbolic fixed point
    #: :func:`numeric.solve` reports, else one sentence saying what happens
    #: instead (also issued as a :class:`mfstein.ground.errors.StabilityWarning`).
    warning: str | None = None
    #: Name -> trajectory of each observable asked for with the result
    #: (``dataclasses.replace(res, observables=...)``, as ``mfstein transient
    #: --observable`` does); ``to_dict()`` adds them under ``"observables"``.
    observables: dict[str, Any] = field(default_factory=dict)
    #: The float64 route's relative tolerance (its global error is a few ``rtol``
    #: relative to the largest entry; print keeps the digits above that).
    rtol: float = 1e-10
    #: The estimate of the error of :attr:`limit`, shared by every entry (one more Newton
    #: step and the drift's rounding, :func:`numeric.expansion.basin.limit_error`);
    #: ``None`` when there is no estimate.
    limit_abs_error: float | None = None

    method = renamed_attribute("TransientResult", "method", "integrator")

    # ------------------------------------------------------------------
    # presentation
    # ------------------------------------------------------------------
    def precision(self) -> str:
        """One sentence: what the numbers are and how accurate."""
        if self.route == "float64":
            return (
                f"float64 numbers from SciPy solve_ivp ({self.integrator}, local error control "
                f"rtol {self.rtol:g}); expect a global error of a few {self.rtol:g} relative to "
                "the largest entry; each array is printed down to that place (its largest "
                f"entry with {self._float64_digits()} significant digits), no digits are claimed"
            )
        return (
            f"decimal strings with at most {self.dps} significant digits, each keeping only "
            "the digits on which two working precisions of mpmath's Taylor ODE solver agree "
            "for that entry (within one unit of its last digit; <name>_abs_error holds for "
            f"every entry); {self.digits} digits agree norm-wise"
        )

    def _float64_digits(self) -> int:
        """The digits the largest entry of a float64 array keeps in print: its global
        error, a few ``rtol`` relative to it, is below half a unit of the last one
        (9 for the default ``rtol = 1e-10``)."""
        return max(1, math.floor(-math.log10(self.rtol)) - 1)

    def _float64_place(self, a: Any) -> int:
        """The decimal place a float64 array is printed to (:meth:`_float64_digits`
        digits of its largest entry)."""
        top = float(np.max(np.abs(a))) if a.size else 0.0
        if not np.isfinite(top) or top == 0:
            return 0
        return math.floor(math.log10(top)) - self._float64_digits() + 1

    def printed(self, name: str) -> Any:
        """The array ``name`` (``x``, ``V``, ``W``, ``A``, ``B``) as :meth:`to_dict`
        prints it, nested lists (the command line's text table shows the same)."""
        import mpmath

        with mpmath.workdps((self.dps or 15) + 20):
            return self._strings(name)[0]

    def _strings(self, name: str) -> tuple[Any, str | None]:
        """The array ``name`` as nested lists: floats on the float64 route; on the
        mpmath route decimal strings keeping only the digits each entry's error
        allows (:func:`numeric.precision.format_entries`), with the absolute error
        that holds for every one of them."""
        a = getattr(self, name)
        if self.route == "float64":
            return claimed_to_place(a.tolist(), self._float64_place(a)), None
        from numeric.precision import format_entries

        strings, bound = format_entries(
            list(a.flat), list(self.errors[name].flat), self.dps or 15
        )
        return np.array(strings, dtype=object).reshape(a.shape).tolist(), bound

    def printed_limit(self) -> list[float] | None:
        """:attr:`limit` as printed: each entry down to the place ``limit_abs_error``
        allows (:data:`mfstein.ground.display.UNBOUNDED_DIGITS` digits without it)."""
        if self.limit is None:
            return None
        return printed_to_error([float(v) for v in self.limit], self.limit_abs_error)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the keys of ``mfstein transient --json``: floats on the
        float64 route; on the mpmath route decimal strings that keep only the digits
        each entry earned, with ``<name>_abs_error`` valid for every entry, whatever
        ``mpmath.mp.dps`` is."""
        import mpmath

        out: dict[str, Any] = {
            "model": self.model,
            "params": self.params,
            "states": self.states,
            "order": self.order,
            "route": self.route,
            "method": self.integrator,
            "free": self.free,
            "precision": self.precision(),
            "times": [float(t) for t in self.times],
        }
        names = ["x"] + (["V", "W"] if self.V is not None else [])
        names += ["A", "B"] if self.A is not None else []
        with mpmath.workdps((self.dps or 15) + 20):
            for name in names:
                out[name], bound = self._strings(name)
                if bound is not None:
                    out[f"{name}_abs_error"] = bound
        if self.digits is not None:
            out["digits"] = self.digits
        out["limit"] = self.printed_limit()
        if self.limit is not None:
            out["limit_abs_error"] = error_figure(self.limit_abs_error)
        out["warning"] = self.warning
        out["notes"] = self.notes
        if self.observables:
            out["observables"] = {k: v.to_dict() for k, v in self.observables.items()}
        return out

    def _rows(self) -> list[tuple[str, str]]:
        def fmt(v: Any) -> str:
            if self.route == "float64":
                return repr(claimed_to_place(float(v), self._float64_place(self.x)))
            from numeric.precision import to_str

            return to_str(v, self.digits or self.dps or 15)

        t0, t1 = float(self.times[0]), float(self.times[-1])
        last = ", ".join(fmt(v) for v in self.x[-1][:4]) + (", ..." if self.x.shape[1] > 4 else "")
        rows = [
            ("model", f"{self.model} ({', '.join(self.states[:6])})"),
            ("params", params_text(self.params)),
            ("times", f"{len(self.times)} from {t0:g} to {t1:g}"),
            (f"x({t1:g})", last),
            ("order", f"{self.order} (x, V, W: {shape_text(self.x)}, {shape_text(self.V)}, "
                      f"{shape_text(self.W)})"),
            ("route", f"{self.route} ({self.integrator})"
             + (f", {self.digits} digits earned" if self.digits is not None else "")),
        ]  # fmt: skip
        if self.limit is not None:
            rows.append(("limit", ", ".join(repr(v) for v in self.printed_limit()[:4])
                         + (", ..." if len(self.limit) > 4 else "")))  # fmt: skip
        if self.warning is not None:
            rows.append(("warning", self.warning))
        if self.notes:
            rows.append(count_row("notes", self.notes))
        return rows

    _MORE = "arrays: .times, .x, .V, .W, .A, .B; .mean(N); .to_dict() for JSON"

    def to_text(self) -> str:
        """What ``mfstein transient`` prints: the table of ``x``, ``V`` (and ``A``) at up
        to 11 times, the limit, the notes and the observables
        (:func:`numeric.expansion.transient_text.transient_text`)."""
        from numeric.expansion.transient_text import transient_text

        return transient_text(self)

    def mean(self, N: float) -> np.ndarray:
        """The expansion of ``E[S(t)]`` for ``N`` objects: ``x + V/N (+ A/N^2)``."""
        if isinstance(N, bool) or not isinstance(N, numbers.Real) or not N > 0:
            raise ParameterError(f"N must be a positive number, got {N!r}.")
        out = self.x.copy()
        if self.V is not None:
            out = out + self.V / N
        if self.A is not None:
            out = out + self.A / (N * N)
        return out
