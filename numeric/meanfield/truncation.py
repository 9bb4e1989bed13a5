"""The general route at working precision on the coordinates that matter.

For a model without a fast path, the float64 fixed point
(:func:`numeric.meanfield.structure.fixed_point64`) names the coordinates that are
negligible at the requested precision (:func:`numeric.meanfield.structure.negligible`
with ``delta = 10^-(dps + 10) / (b^2 kappa_L)``, ``kappa_L = 2 ||J|| ||P_I||``
from a float64 solve: the tail bound of docs/design.md, "Negligible
coordinates").  The model restricted to the other coordinates
(:func:`numeric.meanfield.structure.restricted_model`) is solved by the general route of
:mod:`numeric.meanfield.general` (and :mod:`numeric.expansion.stationary` for ``order=2``) with its
digits earned as usual, and the choice is then *verified at working
precision*: at the padded point (the restricted fixed point, zeros on the
dropped coordinates) the intensities that move a dropped coordinate and the
Jacobian's coupling into them must be below ``delta``
(:func:`numeric.meanfield.structure.padded_residual`).  The head drift vanishes there
exactly, so the padded point is a fixed point of the whole model up to that
residual.  If the check fails, the whole model is solved instead.

At order 2 the kept set is then grown ring by ring until ``A`` and ``B`` no
longer change (:func:`_settle_second_order`): the tail argument bounds the
first-order objects only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from mfstein.errors import NumericalError, ParameterError
from numeric.meanfield.params import kernel_vector, parse_params
from numeric.precision import row_major
from numeric.solution import MeanFieldSolution

#: Models with fewer coordinates are always solved whole.
MIN_B = 16


def _negligible_for(model: Any, params: Mapping[str, Any], dps: int, start: Any) -> tuple:
    """``(dropped, delta)`` from the float64 structure, or ``([], 0)``."""
    import scipy.linalg as sla

    from numeric.meanfield.general import start_point
    from numeric.meanfield.structure import SparseSystem, fixed_point64, negligible

    with mpmath.workdps(30):
        values = parse_params(model, params)
        s0 = np.array([float(v) for v in start_point(model, start, values)])
        p64 = np.array([float(v) for v in kernel_vector(model, values)])
    sysm = SparseSystem.build(model, p64)
    s = fixed_point64(sysm, s0)
    F = list(sysm.red.free)
    rough = set(negligible(sysm, s, 1e-20))
    kr = [a for a, i in enumerate(F) if i not in rough]
    JK = sysm.jac_reduced(s)[kr, :][:, kr].toarray()
    try:
        PI = sla.solve_continuous_lyapunov(JK.T, -np.eye(len(kr)))
        kappa = max(1.0, 2 * np.linalg.norm(JK, 2) * np.linalg.norm(PI, 2))
    except (ValueError, np.linalg.LinAlgError):
        return [], 0.0
    if not np.isfinite(kappa):
        return [], 0.0
    delta = 10.0 ** -(dps + 10) / (model.b**2 * kappa)
    if delta < 1e-300:
        return [], 0.0
    return negligible(sysm, s, delta), delta


def solve_truncated(
    model: Any,
    params: Mapping[str, Any],
    *,
    dps: int,
    M: Any,
    start: Sequence[Any] | str | None,
    order: int,
) -> MeanFieldSolution | None:
    """The solution of ``model`` from its kept coordinates (module docstring), or
    ``None`` when nothing is negligible or the check at working precision fails."""
    b = model.b
    if b < MIN_B:
        return None
    dropped, delta = _negligible_for(model, params, dps, start)
    if not dropped:
        return None
    kept = [i for i in range(b) if i not in set(dropped)]
    problem = _Restriction(model, params, dps, M, start, delta)
    out = problem.solve(kept, order)
    if out is None:
        return None  # the whole model is solved instead, and answers for itself
    if order == 2:
        out = _settle_second_order(problem, out, kept)
    return out


@dataclass(frozen=True)
class _Restriction:
    """One problem (``model`` at ``params``, ``dps`` digits, observable ``M``, start)
    solved on a chosen set of kept coordinates, dropped with tolerance ``delta``."""

    model: Any
    params: Mapping[str, Any]
    dps: int
    M: Any
    start: Any
    delta: float

    def solve(self, kept: list[int], order: int) -> MeanFieldSolution | None:
        """The solution restricted to ``kept``, padded to all coordinates (:func:`_pad`),
        or ``None`` when the restricted model cannot be solved or the padded residual
        (:func:`numeric.meanfield.structure.padded_residual`) exceeds ``delta``
        (checked before the order-2 terms are computed)."""
        from numeric.meanfield.general import solve_general, start_point
        from numeric.meanfield.structure import padded_residual, restricted_model
        from numeric.quadratic_form import quadratic_form

        model, params, dps = self.model, self.params, self.dps
        sub = restricted_model(model, [i for i in range(model.b) if i not in set(kept)])
        Msub = None
        if self.M is not None:
            Mb = quadratic_form(self.M)(model.b)
            Msub = mpmath.matrix([[Mb[i, j] for j in kept] for i in kept])
        sub_start = None
        if self.start is not None:
            with mpmath.workdps(dps + 20):
                full = start_point(model, self.start, parse_params(model, params))
            sub_start = [full[i] for i in kept]
        try:
            sol = solve_general(sub, params, dps=dps, M=Msub, start=sub_start)
        except (ParameterError, NumericalError):
            return None
        with mpmath.workdps(dps + 20):
            p = kernel_vector(model, parse_params(model, params))
            bad = padded_residual(model, kept, sol.s_star, p)
        if bad > self.delta:
            return None
        if order == 2:
            add_second_order(sol, sub, params, dps=dps, M=Msub, start=sub_start)
        return _pad(sol, model, kept, bad, self.delta)


#: Most rings of coordinates :func:`_settle_second_order` adds back to the kept set.
MAX_RINGS = 4


def ring(model: Any, kept: Sequence[int]) -> list[int]:
    """The coordinates outside ``kept`` one transition away from it: moved by a
    transition whose rate depends on a kept coordinate (ascending)."""
    import sympy as sp

    inside = set(kept)
    symbols = {model.states[i] for i in inside}
    out: set[int] = set()
    for t in model.transitions:
        if sp.sympify(t.rate).free_symbols & symbols:
            out.update(i for i, step in enumerate(t.jump) if step and i not in inside)
    return sorted(out)


def _settle_second_order(
    problem: _Restriction, sol: MeanFieldSolution, kept: list[int]
) -> MeanFieldSolution:
    """The order-2 solution on ``kept`` grown ring by ring (:func:`ring`) until adding a
    ring changes no entry of ``A`` and ``B`` by more than its own error estimate.

    Dropping coordinates where ``s*``, the intensities and the coupling ``J`` are
    below ``delta`` leaves ``s*``, ``V``, ``W`` right to ``O(delta)`` (docs/design.md,
    "Negligible coordinates"), but not the ``1/N^2`` terms: the Hessian couples the
    second moments of the kept coordinates into the means of the dropped ones
    without a small factor (the supermarket's ``lam s_K^2`` gives
    ``H_{K+1,K,K} = 2 lam``), so ``A`` and ``B`` on the first dropped level are of
    the size of ``s*`` two levels up: at 30 digits and ``lam = 0.95``, 11 kept
    levels leave ``A`` wrong by ``1.5e-23``.  Each step solves the model on one
    ring more and compares; it stops when no entry moved by more than ``delta``
    times the largest entry of its array (the tolerance the coordinates were
    dropped with).  The reported solution is the largest one solved, each
    entry's error at least its change in the last step (so a tail still moving
    after :data:`MAX_RINGS` rings is stated, not hidden), and ``digits2`` at most
    the digits on which the last two ``c2`` agree.
    """
    from numeric.precision import agreeing_digits

    for _ in range(MAX_RINGS):
        more = ring(problem.model, kept)
        if not more:
            return sol
        kept = sorted([*kept, *more])
        nxt = problem.solve(kept, 2)
        if nxt is None:
            return sol
        settled = True
        with mpmath.workdps(problem.dps + 20):
            for name, old, new in (("A", sol.A, nxt.A), ("B", row_major(sol.B), row_major(nxt.B))):
                errs = nxt.errors[name]
                tol = mpf(problem.delta) * max(abs(v) for v in new)
                for k, (a, c) in enumerate(zip(old, new, strict=True)):
                    change = abs(a - c)
                    errs[k] = max(errs[k], change)
                    settled = settled and change <= tol
            nxt.digits2 = min(nxt.digits2, agreeing_digits(sol.c2, nxt.c2))
        sol = nxt
        if settled:
            break
    return sol


def _pad_vec(v: Sequence[Any], kept: list[int], b: int, fill: Any = 0) -> list[Any]:
    out = [fill if isinstance(fill, str) else mpf(fill)] * b
    for a, i in enumerate(kept):
        out[i] = v[a]
    return out


def _pad_mat(X: Any, kept: list[int], b: int) -> mpmath.matrix:
    out = mpmath.matrix(b, b)
    for a, i in enumerate(kept):
        for c, j in enumerate(kept):
            v = X[a, c]
            if v:
                out[i, j] = v
    return out


def _pad(
    sol: MeanFieldSolution, model: Any, kept: list[int], bad: Any, delta: float
) -> MeanFieldSolution:
    """``sol`` of the restricted model in ``model``'s coordinates: ``s*``, ``V``,
    ``W``, ``f~`` (and ``A``, ``B``) padded with zeros on the dropped coordinates,
    whose error estimate is ``delta``; ``J``, ``Q``, ``P`` padded with zero rows
    and columns; eigenvalues those of the kept block."""
    b, K = model.b, len(kept)
    bound = mpf(delta)
    sub_b = len(kept)

    def vec_err(name: str) -> list[Any]:
        return _pad_vec(sol.errors[name], kept, b, bound) if name in sol.errors else []

    def mat_err(name: str) -> list[Any]:
        if name not in sol.errors:
            return []
        e = sol.errors[name]
        out = [bound] * (b * b)
        for a, i in enumerate(kept):
            for c, j in enumerate(kept):
                out[i * b + j] = e[a * sub_b + c]
        return out

    errors = {"s_star": vec_err("s_star"), "V": vec_err("V"), "W": mat_err("W")}
    if sol.A is not None:
        errors["A"] = vec_err("A")
        errors["B"] = mat_err("B")
    prefix = kept == list(range(K))
    dropped = [str(model.states[i]) for i in range(b) if i not in set(kept)]
    shown = ", ".join(dropped[:3]) + (", ..." if len(dropped) > 3 else "")
    note = (
        f"{b - K} of {b} coordinates ({shown}) are negligible at the requested precision "
        f"(at the padded fixed point the intensities moving them and the coupling into them "
        f"are {mpmath.nstr(bad, 2)} <= {delta:.2g} relative): solved on the other {K}; s*, W, V "
        "vanish there; J, Q, P act on the kept coordinates."
    )
    out = MeanFieldSolution(
        lam=sol.lam,
        b=b,
        d=model.structure("d"),
        dps=sol.dps,
        s_star=_pad_vec(sol.s_star, kept, b),
        J=_pad_mat(sol.J, kept, b),
        ftilde=_pad_vec(sol.ftilde, kept, b),
        Q=_pad_mat(sol.Q, kept, b),
        P=_pad_mat(sol.P, kept, b),
        W=_pad_mat(sol.W, kept, b),
        V=_pad_vec(sol.V, kept, b),
        eigenvalues=sol.eigenvalues,
        constant=sol.constant,
        digits=sol.digits,
        methods=dict(sol.methods),
        model=model.name,
        params=dict(sol.params),
        free=[kept[i] for i in (sol.free or range(K))],
        conservation=[_pad_vec(row, kept, b, "0") for row in sol.conservation],
        fixed_points=[[float(v) for v in _pad_vec(t, kept, b, 0)] for t in sol.fixed_points],
        notes=[*sol.notes, note],
        truncated_at=K if prefix else None,
        note=note,
        errors=errors,
    )
    if sol.A is not None:
        out.A = _pad_vec(sol.A, kept, b)
        out.B = _pad_mat(sol.B, kept, b)
        out.c2, out.digits2, out.C = sol.c2, sol.digits2, sol.C
        if sol.free_map is not None:
            n = len(sol.free_map[0]) if sol.free_map else 0
            rows: list[Any] = [[mpf(0)] * n for _ in range(b)]
            for a, i in enumerate(kept):
                rows[i] = list(sol.free_map[a])
            out.free_map = rows
    return out


def add_second_order(
    sol: MeanFieldSolution, model: Any, params: Mapping[str, Any], *, dps: int, M: Any, start: Any
) -> MeanFieldSolution:
    """Fill ``sol.A``, ``sol.B``, ``sol.c2``, ``sol.digits2`` (:mod:`numeric.expansion.stationary`;
    on the coordinates that matter when some are negligible, :func:`solve_truncated`)."""
    from numeric.expansion.stationary import second_order

    cut = solve_truncated(model, params, dps=dps, M=M, start=start, order=2)
    if cut is not None:
        sol.A, sol.B, sol.c2, sol.digits2 = cut.A, cut.B, cut.c2, cut.digits2
        sol.errors.update({k: cut.errors[k] for k in ("A", "B")})
        sol.C, sol.free_map = cut.C, cut.free_map
        sol.methods.update({k: v for k, v in cut.methods.items() if k.startswith("c2:")})
        sol.notes.append(f"order 2: {cut.note}")
        return sol

    so = second_order(model, params, dps=dps, M=M, start=start)
    sol.A, sol.B, sol.c2, sol.digits2 = so.A, so.B, so.c2, so.digits
    sol.errors.update(so.errors)
    sol.C, sol.free_map = so.C, so.free_map
    sol.methods.update({f"c2:{k}": v for k, v in so.methods.items()})
    return sol
