"""The general route at working precision on the coordinates that matter.

For a model without a fast path, the float64 fixed point
(:func:`numeric.meanfield.structure.fixed_point64`) names the coordinates that are
negligible at the requested precision (:func:`numeric.meanfield.structure.negligible`
with ``delta = 10^-(dps + 10) / (b^2 kappa_L)``, ``kappa_L = 2 ||J|| ||P_I||``
from a float64 solve: the tail bound of docs/design.md, "Negligible
coordinates").  The model restricted to the other coordinates
(:func:`numeric.meanfield.structure.restricted_model`) is solved by the general route of
:mod:`numeric.meanfield.general` (and :mod:`numeric.meanfield.stationary` for ``order=2``) with its
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
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import mpmath
import numpy as np
from mpmath import mpf

from mfstein.ground.display import family_fields
from mfstein.ground.errors import NumericalError, ParameterError
from numeric.meanfield.solution import MeanFieldSolution
from numeric.params import kernel_vector
from numeric.precision import row_major

if TYPE_CHECKING:
    from numeric.prepared.problem import PreparedProblem

#: Models with fewer coordinates are always solved whole.
MIN_B = 16


def negligible_at(model: Any, params: Mapping[str, Any], dps: int, start: Any) -> tuple:
    """``(dropped, delta)`` at ``dps`` digits of the prepared problem of these inputs
    (:func:`negligible_of`)."""
    from numeric.prepared.problem import prepare_problem

    return negligible_of(prepare_problem(model, params, start), dps)


def negligible_of(problem: PreparedProblem, dps: int) -> tuple:
    """``(dropped, delta)`` at ``dps`` digits (:func:`_negligible_for`), the truncation
    rule of a prepared problem: made once and kept with it
    (:meth:`numeric.prepared.problem.PreparedProblem.derived`), so order 2 after
    order 1 and a warm call read it instead of searching and solving in float64 again."""

    def rule() -> tuple[tuple[int, ...], float]:
        dropped, delta = _negligible_for(problem, dps)
        return tuple(dropped), delta  # kept with the problem: never changed by a caller

    return problem.derived(("truncation", dps), rule)


def _negligible_for(problem: PreparedProblem, dps: int) -> tuple:
    """``(dropped, delta)`` from the float64 structure -- the prepared problem's own
    float64 system (:func:`numeric.meanfield.problem.system64`, kept with it and read
    by the float64 route too) -- or ``([], 0)``."""
    import scipy.linalg as sla

    from numeric.meanfield.fast_paths import fast_fixed_point
    from numeric.meanfield.problem import system64
    from numeric.meanfield.structure import fixed_point64, negligible

    model, start = problem.model, problem.start
    s0 = np.array(problem.s64)
    problem.check_start_rates()  # the route's own check (30 digits) before the float64 one
    sysm = system64(problem)  # the problem's float64 system, kept with it
    # the family's own float64 fixed point when it has one (the supermarket's O(b)
    # shooting instead of the ODE on all b coordinates)
    s = fast_fixed_point(problem) if start is None else None
    if s is None:
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
    delta = 10.0 ** -(dps + 10) / (model.n**2 * kappa)
    if delta < 1e-300:
        return [], 0.0
    return negligible(sysm, s, delta), delta


def solve_truncated(
    problem: PreparedProblem, *, dps: int, M: Any, order: int
) -> MeanFieldSolution | None:
    """The solution of the prepared problem's model from its kept coordinates (module
    docstring), or ``None`` when nothing is negligible or the check at working
    precision fails."""
    found = _restriction(problem, dps, M)
    if found is None:
        return None
    cut, kept = found
    out = cut.solve(kept)
    if out is None:
        return None  # the whole model is solved instead, and answers for itself
    if order == 2:
        second = _settle_second_order(cut, kept)
        if second is None:
            return None
        out = second.attach(out)
    return out


def second_order_truncated(
    problem: PreparedProblem, *, dps: int, M: Any
) -> _SecondOrderPart | None:
    """The order-2 terms of the prepared problem's model on its kept coordinates grown
    until ``A`` and ``B`` settle (:func:`_settle_second_order`; the first-order objects
    are not recomputed), or ``None`` when nothing is negligible or a check fails."""
    found = _restriction(problem, dps, M)
    if found is None:
        return None
    cut, kept = found
    return _settle_second_order(cut, kept)


def _restriction(
    problem: PreparedProblem, dps: int, M: Any
) -> tuple[_Restriction, list[int]] | None:
    """The problem restricted to the coordinates not negligible at ``dps`` digits and
    those coordinates, or ``None`` when the model is solved whole."""
    model = problem.model
    if model.n < MIN_B:
        return None
    dropped, delta = negligible_of(problem, dps)
    if not dropped:
        return None
    kept = [i for i in range(model.n) if i not in set(dropped)]
    return _Restriction(problem, dps, M, delta), kept


@dataclass(frozen=True)
class _Restriction:
    """One prepared problem (model, parameters, start) at ``dps`` digits with the
    observable ``M``, solved on a chosen set of kept coordinates, dropped with
    tolerance ``delta``."""

    problem: PreparedProblem
    dps: int
    M: Any
    delta: float

    @property
    def model(self) -> Any:
        """The prepared problem's model."""
        return self.problem.model

    def _parts(self, kept: list[int]) -> tuple[Any, Any, Any]:
        """The restricted model (:func:`restricted`), observable and start on ``kept``."""
        from numeric.quadratic_form import quadratic_form

        Msub = None
        if self.M is not None:
            Mb = quadratic_form(self.M)(self.model.n)
            Msub = mpmath.matrix([[Mb[i, j] for j in kept] for i in kept])
        sub_start = None
        if self.problem.start is not None:
            with mpmath.workdps(self.dps + 20):
                full = self.problem.start_now()
            sub_start = [full[i] for i in kept]
        return restricted(self.problem, kept), Msub, sub_start

    def _residual(self, kept: list[int], s_kept: Sequence[Any]) -> Any:
        """The padded residual (:func:`numeric.meanfield.structure.padded_residual`) of
        the restricted fixed point ``s_kept``, or ``None`` when it exceeds ``delta``."""
        from numeric.meanfield.structure import padded_residual

        with mpmath.workdps(self.dps + 20):
            p = kernel_vector(self.model, self.problem.values_now())
            bad = padded_residual(self.model, kept, s_kept, p)
        return None if bad > self.delta else bad

    def _restricted(self, kept: list[int], route: Any) -> tuple[Any, Any] | None:
        """``route(model, params, dps=, M=, start=)`` (the first- or second-order solve)
        on the model restricted to ``kept`` and the padded residual of its fixed
        point, or ``None`` when the restricted model cannot be solved or the residual
        exceeds ``delta``."""
        sub, Msub, sub_start = self._parts(kept)
        try:
            out = route(sub, self.problem.params, dps=self.dps, M=Msub, start=sub_start)
        except (ParameterError, NumericalError):
            return None
        bad = self._residual(kept, out.s_star)
        return None if bad is None else (out, bad)

    def solve(self, kept: list[int]) -> MeanFieldSolution | None:
        """The first-order solution restricted to ``kept``, padded to all coordinates
        (:func:`_pad`), or ``None`` when the restricted model cannot be solved or the
        padded residual exceeds ``delta``."""
        from numeric.meanfield.general import solve_general

        found = self._restricted(kept, solve_general)
        if found is None:
            return None
        sol, bad = found
        return _pad(sol, self.model, kept, bad, self.delta)

    def second(self, kept: list[int]) -> _SecondOrderPart | None:
        """The order-2 terms of the model restricted to ``kept`` (its fixed point from
        the same computation, checked as in :meth:`solve`), padded to all
        coordinates, or ``None``.  The restricted model is not truncated again."""
        from numeric.meanfield.stationary import second_order

        found = self._restricted(kept, second_order)
        if found is None:
            return None
        so, bad = found
        return _SecondOrderPart.padded(so, self.model, kept, bad, self.delta)


@dataclass
class _SecondOrderPart:
    """The order-2 terms of a restricted model in the whole model's coordinates:
    ``A``, ``B`` padded with zeros (error estimate ``delta`` there), ``C`` and
    ``free_map`` of the restricted model (rows padded), ``c2`` and its digits."""

    A: list[Any]
    B: Any
    c2: Any
    digits2: int
    errors: dict[str, list[Any]]
    C: Any
    free_map: Any
    methods: dict[str, str]
    kept: list[int]
    note: str

    @classmethod
    def padded(
        cls, so: Any, model: Any, kept: list[int], bad: Any, delta: float
    ) -> _SecondOrderPart:
        """``so`` (a :class:`numeric.meanfield.stationary.SecondOrder` on ``kept``) padded."""
        b, K = model.n, len(kept)
        bound = mpf(delta)
        errB = [bound] * (b * b)
        for a, i in enumerate(kept):
            for c, j in enumerate(kept):
                errB[i * b + j] = so.errors["B"][a * K + c]
        free_map = None
        if so.free_map is not None:
            n = len(so.free_map[0]) if so.free_map else 0
            free_map = [[mpf(0)] * n for _ in range(b)]
            for a, i in enumerate(kept):
                free_map[i] = list(so.free_map[a])
        return cls(
            A=_pad_vec(so.A, kept, b),
            B=_pad_mat(so.B, kept, b),
            c2=so.c2,
            digits2=so.digits,
            errors={"A": _pad_vec(so.errors["A"], kept, b, bound), "B": errB},
            C=so.C,
            free_map=free_map,
            methods={f"c2:{k}": v for k, v in so.methods.items()},
            kept=list(kept),
            note=_note(model, kept, bad, delta),
        )

    def attach(self, sol: MeanFieldSolution) -> MeanFieldSolution:
        """``sol`` (the whole model's first-order solution) with these terms."""
        return _with_order2(sol, self, self.digits2, self.methods, [f"order 2: {self.note}"])


def restricted(problem: PreparedProblem, kept: list[int]) -> Any:
    """The prepared problem's model on the coordinates ``kept``, the others zero
    (:func:`numeric.meanfield.structure.restricted_model`): the family's own member
    when its fast path has a restriction ``r(problem, kept)`` with the same transitions
    (whose compiled kernels are then cached under the member's key), else the
    restricted model itself.  A restriction is structural (the coordinates of the
    model, not the parameter point), so the answer is kept per model object."""
    from numeric.meanfield.fast_paths import family_restriction
    from numeric.meanfield.structure import restricted_model

    model = problem.model
    key = (id(model), tuple(kept))
    seen = _RESTRICTIONS.get(key)
    if seen is not None and seen[0] is model:  # the same model object: the same answer
        return seen[1]
    sub = restricted_model(model, [i for i in range(model.n) if i not in set(kept)])
    member = family_restriction(problem, kept)
    out = member if member is not None and _same_transitions(member, sub) else sub
    _RESTRICTIONS[key] = (model, out)  # held with its model, so that its id is not reused
    while len(_RESTRICTIONS) > RESTRICTIONS:
        _RESTRICTIONS.pop(next(iter(_RESTRICTIONS)))
    return out


#: Restricted models kept (oldest dropped first): a warm call, and order 2 after
#: order 1, solve the same restricted model object, so its route record is found again.
RESTRICTIONS = 64
_RESTRICTIONS: dict[tuple[int, tuple[int, ...]], tuple[Any, Any]] = {}


def _same_transitions(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` have the same states and parameters and the same total
    rate for every jump (symbolically)."""
    import sympy as sp

    if tuple(a.states) != tuple(b.states) or tuple(a.params) != tuple(b.params):
        return False

    def totals(m: Any) -> dict[tuple[int, ...], Any]:
        out: dict[tuple[int, ...], Any] = {}
        for t in m.transitions:
            out[tuple(t.jump)] = out.get(tuple(t.jump), 0) + sp.sympify(t.rate)
        return out

    ta, tb = totals(a), totals(b)
    return ta.keys() == tb.keys() and all(sp.expand(ta[k] - tb[k]) == 0 for k in ta)


#: Rings of coordinates added to the first-order kept set before the first order-2
#: solve (:func:`_settle_second_order`): the Hessian carries the second moments of
#: the last kept coordinate into the first dropped one and its mean into the next.
FIRST_RINGS = 2
#: Most rings :func:`_settle_second_order` adds after that to check the terms.
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


def grown(model: Any, kept: Sequence[int], rings: int) -> list[int]:
    """``kept`` with up to ``rings`` rings (:func:`ring`) added, ascending."""
    out = sorted(kept)
    for _ in range(rings):
        more = ring(model, out)
        if not more:
            break
        out = sorted([*out, *more])
    return out


def _settle_second_order(problem: _Restriction, kept: list[int]) -> _SecondOrderPart | None:
    """The order-2 terms on ``kept`` grown by :data:`FIRST_RINGS` rings, then ring by
    ring until adding a ring changes no entry of ``A`` and ``B`` by more than its
    own error estimate; ``None`` when the first solve fails its check.

    Dropping coordinates where ``s*``, the intensities and the coupling ``J`` are
    below ``delta`` leaves ``s*``, ``V``, ``W`` right to ``O(delta)`` (docs/design.md,
    "Negligible coordinates"), but not the ``1/N^2`` terms: the Hessian couples the
    second moments of the kept coordinates into the means of the dropped ones
    without a small factor (the supermarket's ``lam s_K^2`` gives
    ``H_{K+1,K,K} = 2 lam``), so ``A`` and ``B`` on the first dropped level are of
    the size of ``s*`` two levels up: at 30 digits and ``lam = 0.95``, 11 kept
    levels leave ``A`` wrong by ``1.5e-23``.  The first solve therefore keeps two
    rings more (one solve instead of two that are known to be short); each further
    step solves the model on one ring more and compares; it stops when no entry
    moved by more than ``delta`` times the largest entry of its array (the
    tolerance the coordinates were dropped with).  The reported terms are the
    largest ones solved, each entry's error at least its change in the last step
    (so a tail still moving after :data:`MAX_RINGS` rings is stated, not hidden),
    and ``digits2`` at most the digits on which the last two ``c2`` agree.  The
    restricted models of the supermarket family are its members with a smaller
    buffer (:func:`restricted`), whose compiled kernels are cached.
    """
    from numeric.meanfield.stationary import check_order2_cost
    from numeric.precision import agreeing_digits

    kept = grown(problem.model, kept, FIRST_RINGS)
    # the first solve and the one that checks it, refused together before either starts
    check_order2_cost(problem.model.name, len(kept) + 1, problem.dps, solves=2)
    sol = problem.second(kept)
    if sol is None:
        return None
    for _ in range(MAX_RINGS):
        more = ring(problem.model, kept)
        if not more:
            return sol  # every coordinate reachable is kept: nothing was dropped
        kept = sorted([*kept, *more])
        nxt = problem.second(kept)
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
    ``W``, ``f~`` padded with zeros on the dropped coordinates,
    whose error estimate is ``delta``; ``J``, ``Q``, ``P`` padded with zero rows
    and columns; eigenvalues those of the kept block."""
    b, K = model.n, len(kept)
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
    prefix = kept == list(range(K))
    note = _note(model, kept, bad, delta)
    out = MeanFieldSolution(
        model=model.name,
        params=dict(sol.params),
        dps=sol.dps,
        n=b,
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
        routes=dict(sol.routes),
        free=[kept[i] for i in (sol.free or range(K))],
        conservation=[_pad_vec(row, kept, b, "0") for row in sol.conservation],
        fixed_points=[[float(v) for v in _pad_vec(t, kept, b, 0)] for t in sol.fixed_points],
        notes=[*sol.notes, note],
        truncated_at=K if prefix else None,
        note=note,
        errors=errors,
        family_fields=family_fields(lam=sol.lam, d=model.structure("d")),
    )
    return out


def _note(model: Any, kept: list[int], bad: Any, delta: float) -> str:
    """The sentence that says which coordinates were dropped, and why that is safe."""
    b, K = model.n, len(kept)
    dropped = [str(model.states[i]) for i in range(b) if i not in set(kept)]
    shown = ", ".join(dropped[:3]) + (", ..." if len(dropped) > 3 else "")
    return (
        f"{b - K} of {b} coordinates ({shown}) are negligible at the requested precision "
        f"(at the padded fixed point the intensities moving them and the coupling into them "
        f"are {mpmath.nstr(bad, 2)} <= {delta:.2g} relative): solved on the other {K}; s*, W, V "
        "vanish there; J, Q, P act on the kept coordinates."
    )


def add_second_order(
    sol: MeanFieldSolution, model: Any, params: Mapping[str, Any], *, dps: int, M: Any, start: Any
) -> MeanFieldSolution:
    """:func:`second_order_of` the prepared problem of these inputs."""
    from numeric.prepared.problem import prepare_problem

    return second_order_of(sol, prepare_problem(model, params, start), dps=dps, M=M)


def second_order_of(
    sol: MeanFieldSolution, problem: PreparedProblem, *, dps: int, M: Any
) -> MeanFieldSolution:
    """Fill ``sol.A``, ``sol.B``, ``sol.c2``, ``sol.digits2`` of the prepared problem's
    model (:mod:`numeric.meanfield.stationary`; on the coordinates that matter when
    some are negligible, :func:`second_order_truncated`)."""
    from numeric.meanfield.stationary import order2_working

    cut = second_order_truncated(problem, dps=dps, M=M)
    if cut is not None:
        return cut.attach(sol)
    return attach_second_order(sol, order2_working(problem, dps=dps, M=M))


def attach_second_order(sol: MeanFieldSolution, so: Any) -> MeanFieldSolution:
    """``sol`` with the order-2 terms of ``so`` (a
    :class:`numeric.meanfield.stationary.SecondOrder` of the same model) filled in."""
    return _with_order2(sol, so, so.digits, {f"c2:{k}": v for k, v in so.methods.items()}, [])


def _with_order2(
    sol: MeanFieldSolution, terms: Any, digits2: int, methods: Mapping[str, str], notes: list[str]
) -> MeanFieldSolution:
    """A copy of ``sol`` with the order-2 terms ``A``, ``B``, ``c2``, ``C``,
    ``free_map`` and ``errors`` of ``terms`` (``digits2`` claimed for ``c2``), the
    routes ``methods`` and ``notes`` added."""
    return replace(
        sol,
        A=terms.A,
        B=terms.B,
        c2=terms.c2,
        digits2=digits2,
        errors={**sol.errors, **terms.errors},
        C=terms.C,
        free_map=terms.free_map,
        routes={**sol.routes, **methods},
        notes=[*sol.notes, *notes],
    )
