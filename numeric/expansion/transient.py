"""Transient system-size expansion of any model: ``E[S(t)]`` to order ``1/N^2``.

The finite-N chain of a density-dependent population process (jumps
``s -> s + l/N`` at rate ``N beta_l(s)``; Section 3 of "Beyond Scaling:
Calculable Error Bound of the Power-of-Two-Choices Mean-Field Model in
Heavy-Traffic") starts from the deterministic state ``S(0) = s0``.  With
``x(t)`` the mean-field solution and ``Y = S(t) - x(t)``, the moments expand as
(N. Gast, L. Bortolussi and M. Tribastone, "Size expansions of mean field
approximation: transient and steady-state analysis", Performance Evaluation
129, 2019)

    E[Y]             = V(t)/N + A(t)/N^2 + O(1/N^3),
    E[Y Y^T]         = W(t)/N + B(t)/N^2 + O(1/N^3),
    E[Y (x) Y (x) Y] = C(t)/N^2 + O(1/N^3),

and the coefficients solve the triangular system of ODEs

    dx/dt = f(x),                                        x(0) = s0,
    dV/dt = J V + 1/2 H : W,                             V(0) = 0,
    dW/dt = J W + W J^T + Q(x),                          W(0) = 0,
    dC/dt = (J (+) J (+) J) C + D(x, V, W),              C(0) = 0,
    dB/dt = J B + B J^T + G(x, V, W, C),                 B(0) = 0,
    dA/dt = J A + 1/2 H : B + 1/6 T3 : C + 1/24 T4 : E4(W),  A(0) = 0,

where ``J, H, T3, T4`` are the first four derivatives of the drift and ``Q``
the diffusion matrix, all evaluated at ``x(t)``, and ``D``, ``G``, ``E4`` are
exactly the right-hand sides of the stationary equations of
:mod:`derive.expansion` (which are the ``d/dt = 0`` versions of these, at
``s*``).  They follow from ``d/dt E[g(S, t)] = E[L g + dg/dt]`` with
``g = y_i, y_i y_j, y_i y_j y_k`` and the generator expanded as in Lemma 7 of
"Beyond Scaling".  Hence

    E[S(t)] = x(t) + V(t)/N + A(t)/N^2 + O(1/N^3)

(order 0: ``x``; order 1: ``x + V/N``; order 2: ``x + V/N + A/N^2``), and the
transient converges to the stationary ``s*, V, W, A, B`` of
:func:`numeric.solve` when the fixed point reached from ``s0`` is stable.

Conservation laws.  The jumps' linear invariants (:mod:`numeric.invariants`)
are removed as in :mod:`numeric.meanfield.general`: the start fixes the conserved values
``q = C s0``, the system is integrated on the free coordinates (reduced
``J_r = J[F, :] T`` and the derivative tensors contracted with ``T``), and the
results are mapped back exactly: ``x``, ``V``, ``A`` by ``s = complete(x)``
and ``T``; ``W``, ``B`` by ``T W T^T``.

Routes and accuracy.

* ``float64`` (default): SciPy's :func:`scipy.integrate.solve_ivp` on the
  state vector ``(x, V, vec W [, vec C, vec B, A])``.  The Jacobian handed to
  the stiff methods is the exact generated ``J_r(x)`` for the ``x`` part, the
  exact linear operators ``J``, ``J (+) J``, ``J (+) J (+) J`` on the moment
  blocks and the exact couplings ``1/2 H`` of ``V`` to ``W`` and of ``A`` to
  ``B`` (a sparse matrix; the remaining couplings of the moments to ``x`` are
  left out, which only slows the simplified Newton iteration, never the
  accuracy).  ``integrator="auto"`` picks ``LSODA`` (stiff-capable, switching
  between Adams and BDF; dense Jacobian) up to :data:`LSODA_MAX_STATE` state
  entries, ``BDF`` with the sparse Jacobian above, and at order 2 with more
  than :data:`STIFF_ORDER2_MAX_N` free coordinates the explicit ``DOP853``
  (the sparse LU of the ``n^3`` block of ``C`` would cost minutes; mean-field
  models are rarely stiff, and a note says which integrator ran).  The error is
  controlled locally by ``rtol`` and ``atol`` (default ``1e-10`` and
  ``1e-12``): for a well-conditioned model expect a global error of a few
  times ``rtol`` relative to the largest entry over ``[0, t]`` (``1e-11`` to
  ``1e-10`` against the mpmath route in the tests); no digits are claimed.
* ``mpmath`` (``precision="dps"``, or when ``dps`` is given; at most :data:`MP_MAX_N` free
  coordinates, :data:`MP_ORDER2_MAX_N` at order 2): :func:`mpmath.odefun`
  (Taylor series of degree ``3 + 1.5 wp``, generated at ``wp (1 + degree)``
  bits) with the generated mpmath kernels, run at two working precisions
  ``dps + 10`` and ``dps + 20``.  The right-hand side is the float64 route's
  (:class:`numeric.expansion.transient_moments.MomentSystem` over ``mpf``
  object arrays), so the two routes integrate the same equations.
  ``digits`` is the number of significant digits on which the two runs agree,
  norm-wise for each of ``x, V, W (, A, B)`` at each time; if it falls short of
  ``dps`` after one retry with more guard digits,
  :class:`mfstein.ground.errors.NumericalError` is raised and nothing is returned.

Layout.  This module checks the arguments, runs a route and checks the path
(:func:`transient`); the transient's own state is read from the prepared problem
(:mod:`numeric.expansion.transient_setup`), the moment equations are
:mod:`numeric.expansion.transient_moments` and the two integrators
:mod:`numeric.expansion.transient_routes`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from mfstein.ground.arguments import check_keywords, check_start, renamed_keywords
from mfstein.ground.errors import ParameterError, caller_level
from mfstein.ground.limits import TRANSIENT_MAX_TIMES
from numeric.expansion.transient_result import TransientResult
from numeric.expansion.transient_routes import (
    LSODA_MAX_STATE,
    MAX_RHS_EVALS,
    MP_MAX_N,
    MP_MAX_RHS_EVALS,
    MP_ORDER2_MAX_N,
    STIFF_ORDER2_MAX_N,
    Progress,
    check_taylor_cost,
    integrate64,
    integrate_mp,
)
from numeric.expansion.transient_setup import TransientSetup, transient_setup

__all__ = [
    "DEFAULT_DPS",
    "FLOAT_MAX_N",
    "LSODA_MAX_STATE",
    "MAX_RHS_EVALS",
    "MAX_TIME",
    "MAX_TIMES",
    "METHODS",
    "MP_MAX_N",
    "MP_MAX_RHS_EVALS",
    "MP_ORDER2_MAX_N",
    "ORDER2_MAX_N",
    "STIFF_ORDER2_MAX_N",
    "TransientResult",
    "check_times",
    "transient",
]

#: Largest number of free coordinates of the float64 order-2 route (``C`` has ``n^3`` entries).
ORDER2_MAX_N = 80
#: Largest number of free coordinates of the float64 orders 0 and 1.
FLOAT_MAX_N = 400
#: Digits of the mpmath route when ``precision="dps"`` is given without ``dps``.
DEFAULT_DPS = 30
#: ``solve_ivp`` methods accepted by the float64 route (``auto``: LSODA up to
#: :data:`LSODA_MAX_STATE` state entries, BDF with the sparse Jacobian above;
#: :func:`numeric.expansion.transient_routes.integrate64`).
METHODS = ("auto", "LSODA", "BDF", "Radau", "RK45", "DOP853")
#: Largest number of output times (:data:`mfstein.ground.limits.TRANSIENT_MAX_TIMES`).
MAX_TIMES = TRANSIENT_MAX_TIMES
#: Latest output time: far beyond any relaxation time a mean-field model of
#: interest has (in heavy traffic at 1 - lam = 1e-6 it is ~1e6), and a horizon
#: the integrators can cross in a bounded number of steps.
MAX_TIME = 1e12



# --------------------------------------------------------------------------
# input validation
# --------------------------------------------------------------------------
def check_times(times: Any) -> np.ndarray:
    """``times`` as a non-empty, non-decreasing float array of finite values ``>= 0``."""
    try:
        t = np.asarray(times, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(
            f"times must be an array of real numbers >= 0, got {times!r}."
        ) from None
    if t.ndim == 0:
        t = t.reshape(1)
    if t.ndim != 1 or t.size == 0:
        raise ParameterError("times must be a non-empty one-dimensional array of times >= 0.")
    if t.size > MAX_TIMES:
        raise ParameterError(f"times must hold at most {MAX_TIMES} values, got {t.size}.")
    if not np.all(np.isfinite(t)) or np.any(t < 0):
        raise ParameterError("times must be finite and >= 0 (the chain starts at t = 0).")
    if np.any(t > MAX_TIME):
        raise ParameterError(
            f"times must be at most {MAX_TIME:g} (got {float(np.max(t)):g}); beyond the "
            "relaxation time the moments are stationary: use numeric.solve for them."
        )
    if np.any(np.diff(t) < 0):
        raise ParameterError("times must be non-decreasing.")
    return t


def _check_order(order: Any) -> int:
    if isinstance(order, bool) or order not in (0, 1, 2):
        raise ParameterError(f"order must be 0, 1 or 2, got {order!r}.")
    return int(order)


#: Transient setups kept in this process (least recently used dropped first).

def _check_path(st: TransientSetup, times: np.ndarray, x: np.ndarray) -> None:
    """Refuse a solution ``x(t)`` that leaves the declared state space or reaches a
    state with a negative or non-finite rate (one sentence naming the time): the
    moment equations then describe no population process."""
    from numeric.rate_signs import check_rates

    model = st.model
    space = model.info.state_space
    with mpmath.workdps(30):
        p, s0, _ = st.values_mp()
        check_rates(model, s0, p, "the start")
        for k, t in enumerate(times):
            s = [mpf(v) if not isinstance(v, mpf) else v for v in x[k]]
            scale = max([mpf(1)] + [abs(v) for v in s])
            if not all(mpmath.isfinite(v) for v in s) or not space.contains(
                s, tol=mpf(10) ** -8 * scale
            ):
                shown = ", ".join(mpmath.nstr(v, 6) for v in s)
                raise ParameterError(
                    f"the mean-field solution of model {model.name} leaves its state space "
                    f"{space.describe(model.n)} at t = {float(t):g} (x = ({shown})); no "
                    "transient is reported (check the parameters, the start and the rates)."
                )
            check_rates(model, s, p, f"x(t) at t = {float(t):g}")


def _check_arguments(
    order: Any, times: Any, precision: Any, dps: Any, integrator: Any, rtol: Any, atol: Any
) -> tuple[int, np.ndarray, int | None]:
    """``order``, ``times`` and ``dps`` validated (one sentence each otherwise), and
    ``integrator``, ``rtol``, ``atol`` checked.  ``dps`` comes back ``None`` for the
    float64 route: ``precision="float64"``, or no ``precision`` and no ``dps``;
    ``precision="dps"`` without ``dps`` takes :data:`DEFAULT_DPS` digits (the one rule
    of every task, ``docs/design.md``, "One rule for choosing float64").  A ``dps``
    out of ``MIN_DPS .. TRANSIENT_MAX_DPS`` is refused in the command line's sentence."""
    from mfstein.ground.errors import check_int
    from numeric.precision import MIN_DPS, check_precision

    order = _check_order(order)
    times = check_times(times)
    if precision is None:
        precision = "float64" if dps is None else "dps"
    if check_precision(precision) == "float64":
        dps = None  # ignored, as in numeric.solve
    elif dps is None:
        dps = DEFAULT_DPS
    if dps is not None:
        from mfstein.ground.limits import TRANSIENT_MAX_DPS

        # the sentence of ``mfstein transient --dps`` (the Taylor route's cost grows
        # like dps^2: mfstein.ground.limits.TRANSIENT_MAX_DPS)
        dps = check_int("dps", dps, MIN_DPS, TRANSIENT_MAX_DPS)
    if integrator not in METHODS:
        raise ParameterError(
            f"integrator must be one of {', '.join(METHODS)}, got {integrator!r}."
        )
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if not (isinstance(tol, int | float) and 0 < tol < 1):
            raise ParameterError(f"{name} must be a number in (0, 1), got {tol!r}.")
    return order, times, dps


def _heterogeneous(model: Any, params: Any, **options: Any) -> Any:
    """The transient of a heterogeneous population (its own route,
    :func:`numeric.expansion.transient_heterogeneous.transient_heterogeneous`)."""
    from numeric.expansion.transient_heterogeneous import transient_heterogeneous

    return transient_heterogeneous(model, params, **options)


# --------------------------------------------------------------------------
# public entry point
# --------------------------------------------------------------------------
@renamed_keywords(method="integrator")
@check_keywords
def transient(
    model: Any,
    params: Mapping[str, Any] | None = None,
    *,
    times: Any,
    start: Sequence[Any] | str | None = None,
    order: int = 1,
    precision: str | None = None,
    dps: int | None = None,
    integrator: str = "auto",
    rtol: float = 1e-10,
    atol: float = 1e-12,
    progress: bool = False,
) -> TransientResult:
    """The transient expansion ``x(t)``, ``V(t)``, ``W(t)`` (``A(t)``, ``B(t)``).

    Parameters
    ----------
    model:
        A :class:`derive.model.Model`, or a name :func:`derive.models.load_model`
        takes (``"sir"``, ``"file.py:factory"``; entries of ``params`` that are
        factory keywords build it).
    params:
        Parameter name -> value (strings parsed exactly; ``{}`` for none).
    times:
        Non-decreasing times ``>= 0``.
    start:
        The deterministic initial state ``s0`` in the model's coordinates (a
        sequence or ``"x1,x2,..."``); ``None`` is the model's reference point.
        It must lie in the model's state space and fixes the conserved values.
    order:
        0 (``x``), 1 (also ``V``, ``W``; default) or 2 (also ``A``, ``B``).
    precision:
        ``"float64"`` (SciPy's ``solve_ivp``) or ``"dps"``: the mpmath route (at
        most :data:`MP_MAX_N` free coordinates, :data:`MP_ORDER2_MAX_N` at order
        2) with ``dps`` digits earned by two working precisions.  Default ``None``:
        ``"dps"`` when ``dps`` is given, else ``"float64"`` (kept: ``solve``'s is
        ``"dps"``; ``docs/design.md``, "One rule for choosing float64").
    dps:
        Significant digits of the mpmath route, ``5 .. TRANSIENT_MAX_DPS`` (default
        :data:`DEFAULT_DPS` with ``precision="dps"``; ignored with ``"float64"``).
    integrator:
        ``solve_ivp`` method of the float64 route (one of :data:`METHODS`;
        ``method=`` is its deprecated alias).
    rtol, atol:
        Local error tolerances of the float64 route.
    progress:
        Show a tqdm bar of the integrated time on standard error (one per
        integration: the float64 route, or each working precision of mpmath's).
        Before the mpmath route starts, its estimated cost
        (:func:`mfstein.ground.limits.transient_taylor_seconds`) is compared with
        :data:`mfstein.ground.limits.TIME_BUDGET_SECONDS`.

    Returns
    -------
    TransientResult
        Everything in the model's own coordinates.
    """
    from numeric.heterogeneous.entry import is_heterogeneous

    check_start(start)
    order, times, dps = _check_arguments(order, times, precision, dps, integrator, rtol, atol)
    if isinstance(model, str):
        from derive.models import as_model

        model, params = as_model(model, params)
    if is_heterogeneous(model):  # K objects each with its own rates
        return _heterogeneous(
            model, params, times=times, start=start, order=order, dps=dps,
            integrator=integrator, rtol=rtol, atol=atol,
        )  # fmt: skip
    st = transient_setup(model, params, start)
    bar = Progress(progress, float(times[-1]))
    notes = st.notes()
    digits = None
    errors: dict[str, np.ndarray] = {}
    if dps is None:
        limit = ORDER2_MAX_N if order == 2 else FLOAT_MAX_N
        if st.n > limit:
            raise ParameterError(
                f"the float64 transient of order {order} handles at most {limit} free "
                f"coordinates; model {st.model.name} has {st.n}."
            )
        out, integrator = integrate64(st, times, order, integrator, rtol, atol, bar)
        route = "float64"
        notes.append(
            f"float64: solve_ivp {integrator}, rtol = {rtol:g}, atol = {atol:g} (local error "
            "control; expect a global error of a few rtol relative to the largest entry, "
            "no digits claimed)."
        )
    else:
        check_taylor_cost(st, times, order, dps)
        mp = integrate_mp(st, times, order, dps, bar)
        out, digits, errors = mp.out, mp.digits, mp.errors
        route, integrator = "mpmath", "taylor"
        notes.append(mp.note())
    _check_path(st, times, out["x"])
    where = _fate(st, times, out["x"])
    return TransientResult(
        times=times,
        x=out["x"],
        V=out.get("V"),
        W=out.get("W"),
        A=out.get("A"),
        B=out.get("B"),
        states=st.states,
        notes=notes,
        order=order,
        route=route,
        dps=dps,
        digits=digits,
        model=st.model.name, params={k: str(v) for k, v in st.params.items()}, start=start,
        free=[st.states[j] for j in st.free],
        integrator=integrator,
        errors=errors,
        limit=where.limit, limit_abs_error=where.limit_error, rtol=float(rtol),
        warning=where.warning,
    )


def _fate(st: TransientSetup, times: np.ndarray, x: np.ndarray) -> Any:
    """Where the mean field goes after the last time (:func:`numeric.expansion.basin.fate`);
    a :class:`mfstein.ground.errors.StabilityWarning` when not to the stable ``s*``."""
    import warnings

    from mfstein.ground.errors import StabilityWarning
    from numeric.expansion.basin import fate

    model = st.model
    xT = np.array([float(v) for v in x[-1]])
    where = fate(
        st.rm, st.q64, st.p64, model.info.state_space, model.name, xT, float(times[-1]),
        st.s0_64, st.ref64,
    )  # fmt: skip
    if where.warning is not None:
        warnings.warn(where.warning, StabilityWarning, stacklevel=caller_level())
    return where
