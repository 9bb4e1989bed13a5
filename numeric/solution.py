"""The result record of :func:`numeric.solve` and :func:`numeric.bound`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import mpmath
from mpmath import mpf


@dataclass
class MeanFieldSolution:
    """Mean-field equilibrium, Stein/Lyapunov solution and Theorem 1's constant.

    Attributes
    ----------
    lam, b, d, dps:
        Arrival rate, buffer used (for ``b = "auto"``/``"inf"`` the size actually
        used), choices, requested significant digits.
    s_star:
        Fixed point ``s*_1 .. s*_b``.
    J, ftilde, Q:
        Jacobian at ``s*``, the paper's ``f~(s*)`` and ``Q(s*) = 2 diag(f~)``.
    P:
        Solution of ``P J + J^T P = -M`` (Stein's equation for the linearised model).
    W:
        Solution of ``J W + W J^T + Q = 0`` (Ornstein--Uhlenbeck covariance).
    V:
        Refined mean-field bias, ``E[S] ~ s* + V/N``.
    eigenvalues:
        Eigenvalues of ``J(s*)``, ascending (real and negative).
    constant:
        ``c = tr(P Q) = tr(M W)``; for ``M = I`` this is ``2 tr(P F~)`` of the core paper's
        Theorem 1 (with the sign fixed), so ``E||S - s*||^2 ~ c/N``.
    digits:
        Correct significant digits claimed for ``constant`` (all routes and two
        working precisions agree to at least this many).
    methods:
        Route name -> value of ``constant`` computed by that route (decimal string).
    model:
        Name of the model the solution belongs to.
    params:
        Parameter values used (name -> decimal string).
    free:
        Indices of the coordinates solved for; the others follow from the
        conservation laws (all indices when there are none).
    conservation:
        Linear invariants ``c . s`` of the jump vectors (rows of integers or
        fraction strings), empty when none.
    fixed_points:
        Other stable fixed points found from other starts (float64 accuracy), empty
        when the fixed point is the only one found.
    notes:
        Remarks a reader of the numbers needs (truncations, fallbacks).
    truncated_at, note:
        The supermarket fast path's tail truncation: ``None`` when every level
        was solved, else ``K`` (levels ``K+1..b`` are negligible at the requested
        precision; ``J``, ``Q``, ``P`` and ``eigenvalues`` are then of size ``K``,
        while ``s_star``, ``V``, ``W`` and ``ftilde`` have all ``b`` entries), and
        one sentence saying so.
    A, B, c2, digits2:
        With ``order=2``: the 1/N^2 coefficients ``E[S] = s* + V/N + A/N^2``,
        ``E[(S - s*)(S - s*)^T] = W/N + B/N^2`` and ``c2 = tr(M B)``, so
        ``N E[(S - s*)^T M (S - s*)] = c + c2/N + O(1/N^2)``, with the digits
        claimed for them (:mod:`numeric.expansion`); ``None`` otherwise.
    errors:
        Per-entry absolute error estimates earned by the two working precisions
        (:func:`numeric.precision.entry_errors`): ``"s_star"``, ``"V"``, ``"W"``
        (row-major), and with ``order=2`` also ``"A"``, ``"B"``.  Printing goes
        through :func:`numeric.precision.solution_entries`, which keeps only the
        digits these errors allow and states a bound valid for every entry.
    C, free_map:
        With ``order=2``: the third-moment coefficient ``E[Y (x) Y (x) Y] = C/N^2``
        (``Y = S - s*``) on the free coordinates (nested lists), and the map
        ``free_map`` (``b x n`` rows) from free to all coordinates, so that in
        the model's coordinates ``C_ijk = sum T_ia T_jb T_kc C_abc``
        (:mod:`numeric.observables` contracts it); ``None`` otherwise.

    For a model without a ``lam``/``d`` (any model but the supermarket family)
    ``lam`` and ``d`` are ``None``; ``P`` is then reported on the free
    coordinates (zero rows and columns for the others, so that
    ``(s - s*)^T P (s - s*)`` is the quadratic form of the reduced model on the
    invariant set), while ``W`` and ``V`` are in all coordinates.
    """

    lam: mpf | None
    b: int
    d: int | None
    dps: int
    s_star: list[mpf]
    J: mpmath.matrix
    ftilde: list[mpf]
    Q: mpmath.matrix
    P: mpmath.matrix
    W: mpmath.matrix
    V: list[mpf]
    eigenvalues: list[Any]
    constant: mpf
    digits: int
    methods: dict[str, str] = field(default_factory=dict)
    model: str = "supermarket"
    params: dict[str, str] = field(default_factory=dict)
    free: list[int] | None = None
    conservation: list[list[str]] = field(default_factory=list)
    fixed_points: list[list[float]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    truncated_at: int | None = None
    note: str = ""
    A: list[mpf] | None = None
    B: mpmath.matrix | None = None
    c2: mpf | None = None
    digits2: int | None = None
    errors: dict[str, list[mpf]] = field(default_factory=dict)
    C: Any = None
    free_map: list[list[mpf]] | None = None

    def observable(self, model: Any, g: Any, params: Any = None) -> Any:
        """The expansion of ``E[g(S_N)]`` (:func:`numeric.observables.expand`)."""
        from numeric.observables import expand

        return expand(self, model, g, params)
