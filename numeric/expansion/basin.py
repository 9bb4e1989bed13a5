"""Where the mean field of a transient goes: the fixed point it approaches, and
whether that is the stable fixed point :func:`numeric.solve` reports.

The transient expansion ``E[S(t)] = x(t) + V(t)/N + A(t)/N^2`` tends to the
stationary expansion at ``s*`` only when the mean field ``x(t)`` started at
``s0`` converges to ``s*`` and ``s*`` is stable and hyperbolic (every eigenvalue
of the reduced Jacobian ``J_r(s*)`` has a negative real part).  Otherwise the
moments grow with ``t`` (``W`` like ``exp(2 Re(lambda) t)`` near an unstable
point) and the finite-N chain leaves the mean-field path on a time scale of
order ``log N``.  :func:`fate` finds out which case holds, in float64, after
the transient has been integrated up to its last time ``T``:

1. *The stationary fixed point* ``s*``: the float64 search of
   :mod:`numeric.meanfield.fixed_point` from the model's reference point (the
   start :func:`numeric.solve` uses by default) when it has the same conserved
   values as ``s0``, else from ``s0``.
2. *The path's limit.*  From ``x(T)`` the mean-field ODE alone (order 0) is
   followed further over the horizons
   :data:`numeric.meanfield.fixed_point.HORIZONS` (LSODA with the generated
   Jacobian, at most :data:`CONTINUE_MAX_RHS_EVALS` evaluations).  After each
   horizon (and at ``x(T)`` itself) the path has *settled* at a fixed point
   ``L`` when its drift is below ``1e-8`` of the largest rate (``L`` is then
   the Newton-polished point), or when Newton's method from it converges to a
   stable hyperbolic ``L`` at most ``1e-3 (1 + |L|)`` away (the path is in the
   linear part of ``L``'s basin).  It *grows without bound* when some
   coordinate exceeds :data:`UNBOUNDED` times the size of ``x(T)`` and ``s*``
   (a terminal event, so nothing overflows), *leaves the state space* when a
   point of its sampled path is outside it, and *does not settle* when the
   horizons or the evaluations run out first (a limit cycle, or an approach
   slower than any power of ``t`` allows in time, as at a non-hyperbolic point).
3. *The sentence.*  Nothing is said when ``L = s*`` (within ``1e-6`` relative)
   and ``L`` is stable and hyperbolic.  Otherwise one sentence says where the
   path goes and why the transient does not tend to the stationary expansion
   at ``s*``: another basin, an unstable or non-hyperbolic limit, unbounded
   growth, the boundary of the state space, or no limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mfstein.ground.errors import NumericalError

#: Right-hand-side evaluations the continuation of the mean field may spend
#: (order 0: a fraction of a second with the compiled kernels).
CONTINUE_MAX_RHS_EVALS = 20_000
#: A path whose largest coordinate exceeds this factor times the size of
#: ``x(T)`` and ``s*`` grows without bound.
UNBOUNDED = 1e8
#: Relative distance within which a path is in the linear part of a stable
#: fixed point's basin (Newton from it converges to that point).
NEAR = 1e-3
#: Relative distance within which two fixed points are the same.
SAME = 1e-6
#: Newton's method looks for a fixed point near the path only once its drift is
#: below this fraction of the largest rate (each try costs a few dense solves).
ROOT_DRIFT = 1e-4
#: Points of the path sampled per horizon to check the state space.
SAMPLES = 64


@dataclass
class Fate:
    """Where the mean field goes after the last time ``T`` of a transient."""

    #: The fixed point the path approaches (full coordinates), ``None`` when it
    #: approaches none (unbounded growth, the boundary, no limit).
    limit: np.ndarray | None
    #: ``s*`` as the float64 search of :func:`numeric.solve` finds it (full
    #: coordinates), ``None`` if that search failed.
    stationary: np.ndarray | None
    #: ``None`` when the path converges to a stable hyperbolic ``s*``, else one
    #: sentence saying what happens instead.
    warning: str | None
    #: The estimate of ``max_i |limit_i - limit*_i|`` (:func:`limit_error`), with
    #: ``limit``.
    limit_error: float | None = None


def limit_error(rm: Any, x: np.ndarray, q: np.ndarray, p: np.ndarray) -> float:
    """The error of a float64 fixed point ``x`` (free coordinates) of the drift ``f``,
    in full coordinates: one more Newton step ``|J^+ f(x)|`` (whatever found ``x``:
    Newton, whose last step is below ``1e-14``, the settled path when Newton failed,
    or the float64 search's ``s*``) plus the rounding of ``f(x)``, ``8 u`` times the
    size of its terms (:func:`numeric.meanfield.acceptance.term_scale`), through
    ``|J^+|``; mapped to every coordinate by the conservation laws (``full`` is affine:
    ``|d full / dx| e``).  First order in the residual.  The SVD of ``J^+`` runs on one
    BLAS thread (:func:`numeric.precision.limited_blas`): threads waiting for busy cores
    made it 70 ms instead of 0.3 ms at n = 50 on a shared 2-core machine."""
    from numeric.meanfield import acceptance
    from numeric.precision import limited_blas

    with limited_blas(), np.errstate(all="ignore"):
        f, J = rm.f64(x, q, p), rm.jac64(x, q, p)
        pinv = np.abs(np.linalg.pinv(J))
        s = rm.full64(x, q)
        scale = acceptance.term_scale(rm.k64.rates(s, p), rm.k64.jac(s, p), s)
        e = pinv @ np.abs(f) + pinv.sum(axis=1) * 8 * np.finfo(float).eps / 2 * scale
        base = rm.full64(x, q)
        spread = np.abs([rm.full64(x + unit, q) - base for unit in np.eye(x.size)])
        error = float(np.max(e @ spread, initial=0.0)) if x.size else 0.0
    return error if np.isfinite(error) else float("inf")


def _near(x: np.ndarray, y: np.ndarray, rel: float) -> bool:
    """``max |x - y| <= rel (1 + max |y|)``."""
    return float(np.max(np.abs(x - y), initial=0.0)) <= rel * (
        1 + float(np.max(np.abs(y), initial=0.0))
    )


def _point(s: np.ndarray) -> str:
    return "(" + ", ".join(f"{float(v):.6g}" for v in s) + ")"


class _Path:
    """The mean-field ODE on the free coordinates, continued from ``x(T)``."""

    def __init__(self, rm: Any, q: np.ndarray, p: np.ndarray, space: Any) -> None:
        self.rm, self.q, self.p, self.space = rm, q, p, space
        self.calls = 0

    def f(self, x: np.ndarray) -> np.ndarray:
        return self.rm.f64(x, self.q, self.p)

    def full(self, x: np.ndarray) -> np.ndarray:
        return self.rm.full64(x, self.q)

    def scale(self, x: np.ndarray) -> float:
        rates = self.rm.k64.rates(self.full(x), self.p)
        return max(1.0, float(np.max(np.abs(rates), initial=0.0)))

    def settled(self, x: np.ndarray, star: np.ndarray | None) -> np.ndarray | None:
        """The fixed point ``x`` has settled at (free coordinates), else ``None``;
        ``star`` is ``s*`` on the free coordinates when it is stable and hyperbolic."""
        from numeric.meanfield import fixed_point as fp

        with np.errstate(all="ignore"):
            drift = float(np.max(np.abs(self.f(x)), initial=0.0)) / self.scale(x)
        if drift < 1e-8:
            root = fp.newton64(self.rm, x, self.q, self.p)
            return x if root is None else root
        if star is not None and _near(x, star, NEAR):
            return star
        if not drift < ROOT_DRIFT:
            return None
        root = fp.newton64(self.rm, x, self.q, self.p)
        if root is None or not _near(x, root, NEAR):
            return None
        return root if fp.instability(self.rm, root, self.q, self.p) is None else None

    def follow(self, x: np.ndarray, horizon: float, bound: float) -> tuple[np.ndarray, str]:
        """The path over ``horizon`` from ``x``: its end and ``"ok"``, ``"unbounded"``,
        ``"outside"`` or ``"budget"``."""
        from scipy.integrate import solve_ivp

        from numeric.precision import limited_blas

        def rhs(t: float, y: np.ndarray) -> np.ndarray:
            self.calls += 1
            if self.calls > CONTINUE_MAX_RHS_EVALS:
                raise _OutOfBudget
            return self.f(y)

        def escape(t: float, y: np.ndarray) -> float:
            return bound - float(np.max(np.abs(y), initial=0.0))

        escape.terminal = True  # type: ignore[attr-defined]
        try:
            with limited_blas(), np.errstate(all="ignore"):
                sol = solve_ivp(
                    rhs,
                    (0.0, horizon),
                    x,
                    method="LSODA",
                    jac=lambda t, y: self.rm.jac64(y, self.q, self.p),
                    t_eval=np.linspace(0.0, horizon, SAMPLES + 1),
                    events=escape,
                    rtol=1e-7,  # only where the path goes matters
                    atol=1e-10,
                )
        except _OutOfBudget:
            return x, "budget"
        ends = sol.y[:, -1] if sol.y.shape[1] else x
        if sol.status == 1 or not np.all(np.isfinite(sol.y)):
            return ends, "unbounded"
        for k in range(sol.y.shape[1]):
            s = self.full(sol.y[:, k])
            if not self.space.contains(list(s), tol=1e-8 * max(1.0, float(np.max(np.abs(s))))):
                return s[self.rm.free], "outside"
        if not sol.success:
            return ends, "unbounded"
        return ends, "ok"


class _OutOfBudget(Exception):
    """The continuation spent :data:`CONTINUE_MAX_RHS_EVALS` evaluations."""


def stationary_point(
    rm: Any, q: np.ndarray, p: np.ndarray, s0: np.ndarray, reference: np.ndarray | None
) -> np.ndarray | None:
    """``s*`` as :func:`numeric.solve` finds it: the float64 search from the model's
    reference point when it has the conserved values of ``s0``, else from ``s0``
    (full coordinates); ``None`` when the search fails."""
    from numeric.meanfield import fixed_point as fp

    start = s0
    if reference is not None:
        laws = np.array([[float(c) for c in row] for row in rm.red.laws]).reshape(-1, rm.red.b)
        if np.allclose(laws @ reference, laws @ s0, rtol=1e-12, atol=1e-12):
            start = reference
    try:
        with np.errstate(all="ignore"):
            found = fp.search(rm, np.asarray(start, dtype=float), p, extra_starts=False)
    except (NumericalError, np.linalg.LinAlgError):
        return None
    s = rm.full64(found.primary, q)
    return s if np.all(np.isfinite(s)) else None


def fate(
    rm: Any,
    q: np.ndarray,
    p: np.ndarray,
    space: Any,
    model: str,
    xT: np.ndarray,
    tT: float,
    s0: np.ndarray,
    reference: np.ndarray | None = None,
) -> Fate:
    """Where the mean field goes after ``x(tT) = xT`` (full coordinates), see the
    module docstring; ``q`` and ``p`` are the float64 conserved values and kernel
    parameters, ``s0`` the start and ``reference`` the model's reference point."""
    from numeric.meanfield import fixed_point as fp

    star = stationary_point(rm, q, p, s0, reference)
    star_bad = None if star is None else fp.instability(rm, star[rm.free], q, p)
    good_star = star[rm.free] if star is not None and star_bad is None else None
    path = _Path(rm, q, p, space)
    x = np.asarray(xT, dtype=float)[rm.free]
    size = max(1.0, float(np.max(np.abs(xT))))
    if star is not None:
        size = max(size, float(np.max(np.abs(star))))
    bound = UNBOUNDED * size
    t, outcome, limit = tT, "budget", None
    for horizon in (0.0, *fp.HORIZONS):
        if horizon:
            x, outcome = path.follow(x, horizon, bound)
            if outcome != "ok":
                break
            t += horizon
        limit = path.settled(x, good_star)
        if limit is not None:
            outcome = "settled"
            break
    star_text = ""
    if star is not None:
        star_text = f"s* = {_point(star)}" + (
            f", which {star_bad}" if star_bad else ", the fixed point numeric.solve reports"
        )
    head = f"the mean field of model {model}, continued beyond t = {tT:g},"
    if outcome == "settled":
        L = path.full(limit)
        same = star is not None and _near(L, star, SAME)
        bad = star_bad if same else fp.instability(rm, limit, q, p)
        if bad is None and (same or star is None):
            # a stable limit; with no s* (the search from the reference point failed,
            # as numeric.solve's does) there is no other basin to speak of
            return Fate(L, star, None, limit_error(rm, limit, q, p))
        if bad is not None:
            text = (
                f"{head} approaches the fixed point {_point(L)}, which {bad}; the finite-N "
                "chain does not stay near it, so the transient does not tend to a stationary "
                "expansion."
            )
        else:
            text = (
                f"{head} converges to the stable fixed point {_point(L)}, not to "
                f"{star_text}: the start lies in another basin of attraction."
            )
        return Fate(L, star, text, limit_error(rm, limit, q, p))
    if outcome == "unbounded":
        what = "grows without bound (it leaves the basin of every fixed point)"
    elif outcome == "outside":
        what = f"leaves its state space {space.describe(rm.red.b)} near {_point(path.full(x))}"
    else:
        what = (
            f"does not settle at a fixed point by t = {t:g} (a limit cycle or a very slow "
            "approach)"
        )
    tail = f"; {star_text}" if star is not None and (star_bad or outcome != "budget") else ""
    return Fate(None, star, f"{head} {what}{tail}.")
