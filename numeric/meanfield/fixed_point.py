"""The mean-field fixed point of any model: a global float64 search, then Newton
at working precision.

0. *Continuation.*  Inside :func:`continuing` (a sweep, :mod:`numeric.meanfield.sweep`)
   the fixed point is first sought by float64 Newton steps alone from the
   neighbouring grid point's ``s*`` (:func:`continued`); the point reached is kept
   only when it passes the same checks as the search's (below), else the search
   runs as for a single solve.  It skips the random starts, so a stable fixed point
   that appears between two grid points is not reported there.
1. *Global start.*  From each start the mean-field ODE ``ds/dt = f(s)`` is
   followed in float64 on the invariant set fixed by the start's conservation
   laws: first by pseudo-transient continuation (implicit Euler steps that
   lengthen as the drift falls, :func:`numeric.meanfield.structure.pseudo_transient`;
   tens of steps), kept when it ends at a stable fixed point; otherwise the ODE
   is integrated (SciPy's ``solve_ivp``, LSODA with the generated Jacobian) over
   horizons ``10, 40, 160, ...`` until ``||f|| < 1e-8``.  A float64 Newton
   iteration then polishes the end point.  Besides the caller's start (or the
   model's declared reference point, or the origin) a few random starts in the
   model's state space with the same conserved quantities are tried (NumPy
   generator with seed 0, so the list is reproducible), and every distinct
   stable fixed point found is reported.  The point reached from the caller's
   start must pass the checks of :mod:`numeric.meanfield.acceptance` (relative
   drift residual, state space, rates, kink, stability); when it does not, the
   first stable point found from the other starts that passes is used (with a
   note), else the start's refusal is raised.
2. *Working precision.*  Newton's method on the reduced coordinates, with the
   drift and Jacobian from the generated mpmath kernels and each step solved
   by :func:`numeric.linalg.refinement.solve_linear`; it stops when a step is below
   ``10^-(wp + 5)`` and the drift then vanishes to ``10^-(wp - 2)`` relative to
   the size of its terms (:func:`numeric.meanfield.acceptance.term_scale`), otherwise
   :class:`mfstein.ground.errors.NumericalError` is raised.
3. *Stability.*  The fixed point must be hyperbolic and stable: every
   eigenvalue of the reduced Jacobian must have a negative real part
   (float64 eigenvalues, below ``-1e-9`` times the largest ``|J_ij|`` at the
   fixed point and at the start); otherwise the
   mean-field error constants do not exist and a
   :class:`mfstein.ground.errors.ParameterError` says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from mfstein.ground.errors import NumericalError
from numeric.invariants import Reduction
from numeric.linalg.refinement import solve_linear
from numeric.meanfield import acceptance
from numeric.precision import limited_blas

# the reduced model moved to numeric.prepared.reduced (one per model, read by every
# prepared problem); its names stay here for old imports
from numeric.prepared.reduced import LAMBDA_MAX_B as LAMBDA_MAX_B
from numeric.prepared.reduced import ReducedModel as ReducedModel
from numeric.prepared.reduced import float64_kernels as float64_kernels

#: Random starts tried besides the caller's start (seed 0).
RANDOM_STARTS = 4
#: ODE horizons tried in turn.
HORIZONS = (10.0, 40.0, 160.0, 640.0, 2560.0, 10240.0)
#: After this many horizons without convergence, look for an unstable fixed point.
UNSTABLE_PROBE = 2
#: Most drift evaluations of one ODE search (:func:`_ode`).  A drift that jumps where
#: the flow would stop (a discontinuous rate such as ``x (1 + sign(x - 3))``) makes the
#: integrator chatter there with ever smaller steps: without a bound, it never ends.
#: Smooth models of the library use a few thousand.
ODE_MAX_EVALUATIONS = 200_000
#: A chattering integrator is usually caught much earlier: over each window of this
#: many drift evaluations of one horizon, the ODE's time must advance by at least
#: :data:`STALL_FRACTION` of the horizon.  Chattering at a jump of size ``j`` takes
#: steps of about ``atol / j`` (``1e-8`` for ``x (1 + sign(x - 3))``: ``5e-5`` of time
#: in 5,000 evaluations, where the test asks for ``1e-3``); a smooth flow, even stiff,
#: takes steps that grow as it settles (LSODA switches to BDF with the Jacobian).  A
#: jump too small to be caught this way still ends at :data:`ODE_MAX_EVALUATIONS`.
STALL_WINDOW = 5_000
#: See :data:`STALL_WINDOW`.
STALL_FRACTION = 1e-4


@dataclass
class Float64Search:
    """Fixed points found by the float64 search."""

    primary: np.ndarray  # reduced coordinates, reached from the main start
    stable: list[np.ndarray]  # every distinct stable fixed point (full coordinates)
    notes: list[str]


def random_starts(model: Any, red: Reduction, q: np.ndarray, rng: np.random.Generator) -> list:
    """Random points of the state space with the same conserved values ``q``."""
    space = model.info.state_space
    b = red.b
    out = []
    for _ in range(RANDOM_STARTS):
        if not red.laws:
            if space.kind == "monotone":
                s = np.sort(rng.random(b))[::-1]
            elif space.kind == "simplex":
                s = rng.dirichlet(np.ones(b + 1))[:b] * space.total
            else:
                s = rng.random(b)
            out.append(s)
        elif (
            space.kind == "simplex"
            and len(red.laws) == 1
            and all(c == 1 for c in red.laws[0])
            and 0 < q[0] <= space.total
        ):
            out.append(rng.dirichlet(np.ones(b)) * q[0])
    return out


@limited_blas()
def _integrate(rm: ReducedModel, x0: np.ndarray, q: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The float64 fixed point reached from ``x0``: pseudo-transient continuation
    (:func:`numeric.meanfield.structure.pseudo_transient`, tens of implicit Euler
    steps) when it ends at a stable fixed point, else the ODE over the horizons;
    then Newton polish."""
    x = _pseudo_transient(rm, x0, q, p)
    if x is None:
        x = _ode(rm, x0, q, p)
    from numeric.meanfield.structure import newton_polish

    return newton_polish(
        lambda y: np.linalg.lstsq(rm.jac64(y, q, p), rm.f64(y, q, p), rcond=None)[0], x
    )


def _pseudo_transient(rm: ReducedModel, x0: np.ndarray, q: np.ndarray, p: np.ndarray) -> Any:
    """The end point of pseudo-transient continuation from ``x0`` when it is a stable
    fixed point, else ``None`` (the caller integrates the ODE: a point reached this
    way that is not stable may be a saddle the trajectory only passes)."""
    from numeric.meanfield.structure import linear_solver, pseudo_transient

    def scale(y: np.ndarray) -> float:
        rates = rm.k64.rates(rm.full64(y, q), p)
        return max(1.0, float(np.max(np.abs(rates), initial=0.0)))

    x = pseudo_transient(
        lambda t, y: rm.f64(y, q, p),
        lambda t, y: rm.jac64(y, q, p),
        np.array(x0, dtype=float),
        scale,
        linear_solver(dense=True),
    )
    if x is None or not stability(rm.jac64(x, q, p))[1]:
        return None
    return x


def _ode(rm: ReducedModel, x0: np.ndarray, q: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The end point of the mean-field ODE from ``x0`` over :data:`HORIZONS` (or an
    unstable fixed point the trajectory circles, see below)."""
    from scipy.integrate import solve_ivp

    x = np.array(x0, dtype=float)
    unstable = None
    watch = _Watch()

    def drift(t: float, y: np.ndarray) -> np.ndarray:
        watch(t)
        return rm.f64(y, q, p)

    for n_horizon, horizon in enumerate(HORIZONS):
        if n_horizon == UNSTABLE_PROBE:
            # still moving after the first horizons: an unstable fixed point with a
            # limit cycle around it would keep the ODE going through every horizon;
            # Newton from here finds such a point, returned (and then refused by the
            # caller) if the ODE has not converged after one more horizon either
            probe = newton64(rm, x, q, p)
            if probe is not None and not stability(rm.jac64(probe, q, p))[1]:
                unstable = probe
        watch.start(horizon)
        try:
            sol = solve_ivp(
                drift,
                (0.0, horizon),
                x,
                method="LSODA",
                jac=lambda t, y: rm.jac64(y, q, p),
                rtol=1e-7,  # only the basin matters: Newton polishes below
                atol=1e-10,
            )
        except _Chattering as stuck:
            raise NumericalError(
                f"the mean-field ODE of model {rm.model.name} did not settle within "
                f"{stuck} (a rate that jumps where the flow would stop, such as sign or "
                "Heaviside at the fixed point, has no fixed point the expansion can use); "
                "no result is returned."
            ) from None
        if not sol.success or not np.all(np.isfinite(sol.y[:, -1])):
            raise NumericalError(
                f"the mean-field ODE of model {rm.model.name} could not be integrated from the "
                f"start ({sol.message})."
            )
        x = sol.y[:, -1]
        if np.max(np.abs(rm.f64(x, q, p))) < 1e-8:
            break
        if unstable is not None:
            return unstable
    return x


class _Chattering(Exception):
    """Raised inside :func:`_ode`'s right-hand side by :class:`_Watch`; its text says
    what the search spent (it completes "did not settle within ...")."""


class _Watch:
    """Counts the drift evaluations of one ODE search and watches its time: raises
    :class:`_Chattering` past :data:`ODE_MAX_EVALUATIONS` evaluations in all, or when a
    window of :data:`STALL_WINDOW` evaluations of one horizon advanced the time by less
    than :data:`STALL_FRACTION` of the horizon."""

    def __init__(self) -> None:
        self.calls = 0
        self.horizon = 0.0
        self.window_calls = 0
        self.window_t = 0.0

    def start(self, horizon: float) -> None:
        """A new integration over ``[0, horizon]``."""
        self.horizon, self.window_calls, self.window_t = horizon, 0, 0.0

    def __call__(self, t: float) -> None:
        self.calls += 1
        if self.calls > ODE_MAX_EVALUATIONS:
            raise _Chattering(f"{ODE_MAX_EVALUATIONS:,} drift evaluations")
        self.window_calls += 1
        if self.window_calls < STALL_WINDOW:
            return
        advanced = t - self.window_t
        if advanced < STALL_FRACTION * self.horizon:
            raise _Chattering(
                f"{self.calls:,} drift evaluations: its time advanced by only {advanced:.1e} "
                f"over the last {STALL_WINDOW:,}, at t = {t:.6g} of a horizon of "
                f"{self.horizon:g}"
            )
        self.window_calls, self.window_t = 0, t


def newton64(rm: ReducedModel, x0: np.ndarray, q: np.ndarray, p: np.ndarray) -> Any:
    """A float64 Newton iteration from ``x0``: the fixed point (drift below ``1e-12``
    of the size of its terms, :func:`numeric.meanfield.acceptance.term_scale`) or
    ``None`` when it does not converge."""
    x = np.array(x0, dtype=float)
    with np.errstate(all="ignore"):
        for _ in range(50):
            f = rm.f64(x, q, p)
            if not np.all(np.isfinite(f)):
                return None
            step = np.linalg.lstsq(rm.jac64(x, q, p), f, rcond=None)[0]
            x = x - step
            if np.max(np.abs(step)) <= 1e-14 * float(np.max(np.abs(x))):  # relative
                break
        else:
            return None
        s = rm.full64(x, q)
        scale = acceptance.term_scale(rm.k64.rates(s, p), rm.k64.jac(s, p), s)
        if not np.max(np.abs(rm.f64(x, q, p))) <= 1e-12 * scale:
            return None
    return x


#: The model a sweep is continuing along and its neighbouring fixed point (full
#: coordinates, float64), set by :func:`continuing`.
_NEIGHBOUR: ContextVar[tuple[Any, np.ndarray] | None] = ContextVar("neighbour", default=None)


@contextmanager
def continuing(model: Any, guess: np.ndarray | None) -> Iterator[None]:
    """Within this block the working-precision route's search for ``model``'s fixed
    point starts from ``guess`` (a neighbouring grid point's ``s*``; ``None``: no
    continuation), read by :func:`neighbour`."""
    token = _NEIGHBOUR.set(None if guess is None else (model, np.array(guess, dtype=float)))
    try:
        yield
    finally:
        _NEIGHBOUR.reset(token)


def neighbour(model: Any) -> np.ndarray | None:
    """The guess :func:`continuing` set for this very ``model`` (a copy), else ``None``."""
    hit = _NEIGHBOUR.get()
    if hit is None or hit[0] is not model or hit[1].shape != (model.n,):
        return None
    return hit[1].copy()


def continued(rm: ReducedModel, guess: np.ndarray, q: np.ndarray, p: np.ndarray) -> Any:
    """The free coordinates of the fixed point reached by :func:`newton64` alone from
    ``guess`` (full coordinates, completed on the invariant set of the conserved
    values ``q``), or ``None`` when Newton's steps do not converge there."""
    with np.errstate(all="ignore"):
        try:
            return newton64(rm, np.asarray(guess, dtype=float)[rm.free], q, p)
        except np.linalg.LinAlgError:  # a Jacobian that is not finite on the way
            return None


def stability(J: np.ndarray) -> tuple[np.ndarray, bool]:
    """Eigenvalues of ``J`` (by increasing real part: largest last) and whether all
    have real part below ``-1e-9 max |J_ij|``
    (:func:`numeric.meanfield.acceptance.stability_verdict`: relative to the scale
    of ``J``)."""
    eig = acceptance.sorted_eigenvalues(J)
    jmax = float(np.max(np.abs(J), initial=0.0))
    return eig, acceptance.stability_verdict(eig, jmax, False) is None


def search(
    rm: ReducedModel, start: np.ndarray, p: np.ndarray, *, extra_starts: bool = True
) -> Float64Search:
    """Integrate from ``start`` (full coordinates) and from random starts; classify."""
    red = rm.red
    q = np.array([sum(float(c) * start[j] for j, c in enumerate(row)) for row in red.laws])
    notes: list[str] = []
    failed: NumericalError | None = None
    found: list[np.ndarray] = []
    try:
        with np.errstate(divide="ignore", invalid="ignore"):  # checked: finite or raised
            primary = _integrate(rm, start[rm.free], q, p)
        found.append(rm.full64(primary, q))
    except NumericalError as exc:
        # the flow cannot be followed from this start (a rate such as sqrt(y) has
        # no finite derivative on the face y = 0 where the origin lies): the
        # points of the state space below are searched instead.  Any other failure
        # (a flow that chatters on a jump of the drift and never settles) would only
        # repeat from every random start, each to the evaluation limit: refused now.
        from numeric.rate_signs import singular_derivative

        if not extra_starts or singular_derivative(rm.model, list(start), list(p)) is None:
            raise
        failed = exc
    if extra_starts:
        rng = np.random.default_rng(0)
        for s0 in random_starts(rm.model, red, q, rng):
            try:
                with np.errstate(divide="ignore", invalid="ignore"):
                    x = _integrate(rm, s0[rm.free], q, p)
            except NumericalError:
                continue
            found.append(rm.full64(x, q))
    stable: list[np.ndarray] = []
    for s in found:
        x = s[rm.free]
        if np.max(np.abs(rm.f64(x, q, p))) > 1e-9:
            continue
        _, ok = stability(rm.jac64(x, q, p))
        if ok and not any(np.max(np.abs(s - t)) <= 1e-6 * (1 + np.max(np.abs(t))) for t in stable):
            stable.append(s)
    if failed is not None:
        if not stable:
            raise failed
        primary = stable[0][rm.free]
        from numeric.rate_signs import singular_derivative

        why = singular_derivative(rm.model, list(start), list(p)) or str(failed).rstrip(".")
        notes.append(
            f"the mean-field ODE could not be followed from the start: {why}; the fixed "
            "point is the stable one reached from random starts in the state space (seed 0)."
        )
    if len(stable) > 1:
        notes.append(
            f"{len(stable)} distinct stable fixed points were found from {len(found)} starts "
            "(random starts with seed 0); the solution is the one reached from the given start."
        )
    return Float64Search(primary=primary, stable=stable, notes=notes)


def newton(rm: ReducedModel, x0: Sequence[float], q: list[mpf], p: list[mpf], wp: int) -> list[mpf]:
    """The fixed point's full coordinates at ``wp`` digits (iterated with 10 guard
    digits, returned rounded to the current precision)."""
    red = rm.red
    with mpmath.workdps(wp + 10):
        x = [mpf(float(v)) for v in x0]
        q = [+v for v in q]
        tol = mpf(10) ** (-wp - 3)
        for _ in range(60 + wp // 5):
            s = red.complete(x, q)
            f = rm.kmp.f(s, p)
            step = solve_linear(rm.jac_mp(s, p), [f[j] for j in rm.free])
            x = [a - b for a, b in zip(x, step, strict=True)]
            size = max((abs(v) for v in step), default=mpf(0))
            if size <= tol * max([mpf(1)] + [abs(v) for v in x]):
                break
        else:
            raise NumericalError(
                f"Newton's method for the fixed point of model {rm.model.name} did not converge."
            )
    s = [+v for v in red.complete(x, q)]
    s64 = np.array([float(v) for v in s])
    p64 = np.array([float(v) for v in p])
    scale = acceptance.term_scale(rm.k64.rates(s64, p64), rm.k64.jac(s64, p64), s64)
    res = max(abs(v) for v in rm.kmp.f(s, p))
    # relative to the size of the drift's terms, compared in mpmath (the tolerance
    # 10^-(wp - 2) is below the float64 range at high precision)
    if res > mpf(10) ** (-wp + 2) * mpf(scale):
        words = (
            acceptance.residual_words(float(res), scale, float(mpf(10) ** (-wp + 2)))
            or "is not a fixed point: its drift does not vanish at the working precision"
        )
        raise acceptance.refuse(rm.model, s64, words)
    return s


def instability(
    rm: ReducedModel, x: np.ndarray, q64: np.ndarray, p64: np.ndarray, jscale: float = 0.0
) -> str | None:
    """``None`` when the fixed point at the free coordinates ``x`` is stable and
    hyperbolic, else the words saying why not, to follow "the fixed point ... "
    (:func:`numeric.meanfield.acceptance.stability_verdict`; ``jscale``: the largest
    ``|J_ij|`` at the start)."""
    J = rm.jac64(x, q64, p64)
    eig = acceptance.sorted_eigenvalues(J)
    jmax = max(float(np.max(np.abs(J), initial=0.0)), jscale)
    return acceptance.stability_verdict(eig, jmax, bool(rm.red.laws))


def check_stable(
    rm: ReducedModel, s: Sequence[Any], p64: np.ndarray, q64: np.ndarray, jscale: float = 0.0
) -> np.ndarray:
    """Eigenvalues of the reduced Jacobian at ``s``; ParameterError unless stable
    (``jscale``: the largest ``|J_ij|`` at the start, :func:`instability`)."""
    x = np.array([float(s[j]) for j in rm.free])
    what = instability(rm, x, q64, p64, jscale)
    if what is not None:
        raise acceptance.refuse(rm.model, s, what)
    return stability(rm.jac64(x, q64, p64))[0]


def check_fixed_point64(
    rm: ReducedModel,
    s: Sequence[Any],
    p64: np.ndarray,
    q64: np.ndarray,
    check_rates: Callable[[], None],
    jscale: float,
) -> None:
    """The checks of :mod:`numeric.meanfield.acceptance` at the full state ``s``
    (float64): drift residual relative to the size of its terms, state space, the
    rates (``check_rates``), no kink, stability (``jscale``: the largest ``|J_ij|``
    at the start); the first that fails is raised in one sentence."""
    s64 = np.array([float(v) for v in s])
    x = s64[rm.free]
    J = rm.jac64(x, q64, p64)
    acceptance.check(
        rm.model,
        s64,
        p64,
        residual=float(np.max(np.abs(rm.f64(x, q64, p64)), initial=0.0)),
        scale=acceptance.term_scale(rm.k64.rates(s64, p64), rm.k64.jac(s64, p64), s64),
        eig=acceptance.sorted_eigenvalues(J),
        jmax=max(float(np.max(np.abs(J), initial=0.0)), jscale),
        has_laws=bool(rm.red.laws),
        check_rates=check_rates,
    )
