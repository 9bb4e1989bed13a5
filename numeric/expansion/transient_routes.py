"""The two integrators of the transient's moment equations (module docstring of
:mod:`numeric.expansion.transient`): SciPy's ``solve_ivp`` in float64
(:func:`integrate64`) and mpmath's Taylor series at two working precisions
(:func:`integrate_mp`), each with a budget of right-hand-side evaluations
(:class:`Budget`) and an optional progress bar (:class:`Progress`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from mfstein.ground.errors import NumericalError, ParameterError
from numeric.expansion.transient_moments import MomentSystem
from numeric.expansion.transient_setup import TransientSetup

#: Largest number of free coordinates accepted by the mpmath (``dps``) route.
MP_MAX_N = 6
#: ... at order 2 (the state holds the ``n^3`` entries of ``C``).
MP_ORDER2_MAX_N = 3
#: ``LSODA`` needs a dense Jacobian: refused above this state length.
LSODA_MAX_STATE = 2000
#: Stiff methods (sparse LU of the ``n^3 x n^3`` block of ``C``) at order 2 up to
#: this many free coordinates; ``auto`` integrates larger order-2 systems with
#: the explicit DOP853 (the LU's fill-in grows like ``n^5``: 0.4 s at n = 20,
#: minutes at n = 50).
STIFF_ORDER2_MAX_N = 20
#: Right-hand-side evaluations one float64 integration may spend (a few seconds
#: for small models; ordinary horizons need hundreds to a few thousand).  An
#: integration that needs more -- a horizon like 1e300, or rates so large that
#: the problem overflows or is hopelessly stiff -- stops with one sentence
#: instead of running without end.
MAX_RHS_EVALS = 100_000
#: The same budget for one mpmath (Taylor) integration, whose evaluations are
#: far costlier.
MP_MAX_RHS_EVALS = 20_000


class Budget:
    """A right-hand side that counts its calls and refuses non-finite values."""

    def __init__(
        self, rhs: Any, limit: int, st: TransientSetup, tmax: float, bar: Any = None
    ) -> None:
        self.rhs, self.limit, self.model, self.tmax = rhs, limit, st.model.name, tmax
        self.st = st
        self.calls = 0
        self.bar = bar

    def guarded(self, fn: Any, t: Any, y: Any) -> Any:
        """``fn(t, y)``; rates that cannot be evaluated at ``x = y[:n]`` (a division by
        zero, a logarithm of 0) are refused in the sentence of
        :func:`numeric.rate_signs.unevaluable`."""
        try:
            return fn(t, y)
        except (ZeroDivisionError, ValueError, OverflowError):
            from numeric.rate_signs import state_text, unevaluable

            st = self.st
            s = st.rm.full64(np.array([float(v) for v in y[: st.n]]), st.q64)
            raise unevaluable(
                st.model, f"x(t) at t = {float(t):g}", state_text(st.model, s.tolist())
            ) from None

    def __call__(self, t: Any, y: Any) -> Any:
        self.calls += 1
        if self.bar is not None:
            self.bar.reached(t)
        if self.calls > self.limit:
            raise NumericalError(
                f"the transient of model {self.model} up to t = {self.tmax:g} needs more than "
                f"{self.limit} right-hand-side evaluations (a very long horizon or very large "
                "rates); give a shorter time grid or smaller rates."
            )
        out = self.guarded(self.rhs, t, y)
        if out.dtype != object and not np.all(np.isfinite(out)):
            raise NumericalError(
                f"the moment equations of model {self.model} overflow at t = {float(t):g}: "
                "the mean field grows without bound from this start (no stable fixed point "
                "attracts it) or its rates are too large for float64; give another start or "
                "smaller rates."
            )
        return out


class Progress:
    """Progress bars of the integrated time ``0 .. tmax`` (tqdm on standard error),
    one per integration; nothing when ``show`` is false."""

    def __init__(self, show: bool, tmax: float) -> None:
        self.show, self.tmax = show, tmax
        self.bar: Any = None

    def start(self, what: str) -> Progress:
        self.close()
        if self.show and self.tmax > 0:
            import sys

            from tqdm import tqdm

            self.bar = tqdm(
                total=self.tmax, desc=what, unit="t", file=sys.stderr, leave=False,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| t = {n:.4g}/{total:.4g} "
                "[{elapsed}<{remaining}]",
            )  # fmt: skip
        return self

    def reached(self, t: Any) -> None:
        """The integrator evaluated the right-hand side at time ``t``."""
        if self.bar is not None:
            t = min(float(t), self.tmax)
            if t > self.bar.n:
                self.bar.update(t - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def check_taylor_cost(st: TransientSetup, times: np.ndarray, order: int, dps: int) -> None:
    """Refuse an mpmath transient whose estimated time exceeds the budget
    (:func:`mfstein.ground.limits.transient_taylor_seconds`), before any Taylor step."""
    from mfstein.ground.limits import check_time, transient_taylor_seconds

    n = st.n
    state = (n, 2 * n + n * n, 3 * n + 2 * n * n + n**3)[order]
    J = st.rm.jac64(st.s0_64[st.free], st.q64, st.p64)
    rate = float(np.max(np.abs(J).sum(axis=1), initial=0.0)) if J.size else 0.0
    if not np.isfinite(rate):
        rate = 1.0
    horizon = float(times[-1])
    check_time(
        f"the mpmath transient of model {st.model.name} (order {order}, dps {dps}, {n} free "
        f"coordinates, up to t = {horizon:g})",
        transient_taylor_seconds(state, dps, horizon, rate),
        "give a smaller dps, a shorter horizon or a lower order, or omit dps for the float64 "
        "route.",
    )


def integrate64(
    st: TransientSetup,
    times: np.ndarray,
    order: int,
    integrator: str,
    rtol: float,
    atol: float,
    bar: Progress | None = None,
) -> tuple[dict[str, np.ndarray], str]:
    from scipy.integrate import solve_ivp

    from numeric.precision import limited_blas

    sys_ = MomentSystem(st, order)
    n = st.n
    y0 = np.zeros(sys_.size)
    y0[:n] = st.s0_64[st.free]
    uniq, inverse = np.unique(times, return_inverse=True)
    tmax = float(uniq[-1])
    if integrator == "auto":
        if sys_.size <= LSODA_MAX_STATE:
            integrator = "LSODA"
        elif order < 2 or n <= STIFF_ORDER2_MAX_N:
            integrator = "BDF"
        else:
            integrator = "DOP853"
    if integrator in ("BDF", "Radau") and order == 2 and n > STIFF_ORDER2_MAX_N:
        raise ParameterError(
            f"integrator {integrator} at order 2 needs a sparse LU of the n^3 third-moment "
            f"block; it handles at most {STIFF_ORDER2_MAX_N} free coordinates (model "
            f"{st.model.name} has {n}); use integrator auto or DOP853."
        )
    if tmax == 0.0:
        Y = y0[:, None].repeat(len(uniq), axis=1)
    else:
        kwargs: dict[str, Any] = {}
        if integrator in ("BDF", "Radau"):
            kwargs["jac"] = sys_.jac
        elif integrator == "LSODA":
            if sys_.size > LSODA_MAX_STATE:
                raise ParameterError(
                    f"integrator LSODA needs a dense Jacobian; the state has {sys_.size} entries "
                    f"(at most {LSODA_MAX_STATE}); use BDF."
                )
            kwargs["jac"] = lambda t, y: sys_.jac(t, y).toarray()
        budget = Budget(sys_.rhs, MAX_RHS_EVALS, st, tmax)
        if "jac" in kwargs:
            jac = kwargs["jac"]
            kwargs["jac"] = lambda t, y: budget.guarded(jac, t, y)
        # An overflow is reported by _Budget in one sentence: NumPy's own
        # RuntimeWarning would only add a second line, so it is silenced here.
        shown = bar.start(f"transient ({integrator})") if bar is not None else None
        budget.bar = shown
        with limited_blas(), np.errstate(over="ignore", invalid="ignore"):
            try:
                sol = solve_ivp(
                    budget,
                    (0.0, tmax),
                    y0,
                    method=integrator,
                    t_eval=uniq,
                    rtol=rtol,
                    atol=atol,
                    **kwargs,
                )
            finally:
                if shown is not None:
                    shown.close()
        if not sol.success or not np.all(np.isfinite(sol.y)):
            raise NumericalError(
                f"the transient of model {st.model.name} could not be integrated up to "
                f"t = {tmax:g} ({sol.message})."
            )
        Y = sol.y
    return sys_.outputs(Y[:, inverse]), integrator


# --------------------------------------------------------------------------
# mpmath route
# --------------------------------------------------------------------------
def _mp_run(
    st: TransientSetup, times: np.ndarray, order: int, wp: int, bar: Progress | None = None
) -> dict[str, np.ndarray]:
    """``x, V, W (, A, B)`` at each time (object arrays of ``mpf``), at ``wp`` digits."""
    with mpmath.workdps(wp):
        p, s0, q = st.values_mp()
        sys_ = MomentSystem(st, order, mp=True)
        sys_.p, sys_.q = p, q
        y0 = [s0[j] for j in st.free] + [mpf(0)] * (sys_.size - st.n)

        shown = bar.start(f"transient (mpmath, {wp} digits)") if bar is not None else None
        rhs = Budget(sys_.rhs, MP_MAX_RHS_EVALS, st, float(max(times)), shown)

        def deriv(t: mpf, y: list[mpf]) -> list[mpf]:
            return list(rhs(t, np.array(y, dtype=object)))

        try:
            sol = mpmath.odefun(deriv, 0, y0)
            Y = np.array([sol(mpf(float(t))) for t in times], dtype=object).T
        finally:
            if shown is not None:
                shown.close()
        return sys_.outputs(Y)


@dataclass(frozen=True)
class MpTrajectories:
    """What the mpmath route (:func:`integrate_mp`) returns."""

    #: The higher working precision's run: ``x, V, W (, A, B)`` by name, each an
    #: object array of ``mpf`` with time last.
    out: dict[str, np.ndarray]
    #: The significant digits on which the two runs agree (at most ``dps``), norm-wise
    #: for each object at each time.
    digits: int
    #: The two working precisions (decimal digits), lower first.
    wp_low: int
    wp_high: int
    #: The per-entry errors (same names and shapes as ``out``,
    #: :func:`numeric.precision.entry_errors`): what printing uses.
    errors: dict[str, np.ndarray]

    def note(self) -> str:
        """The result's note on this route: the two precisions and their agreement."""
        return (
            f"mpmath: odefun (Taylor) at {self.wp_low} and {self.wp_high} digits; they agree on "
            f"{self.digits} significant digits (norm-wise for each of x, V, W (A, B) at each "
            "time)."
        )


def integrate_mp(
    st: TransientSetup, times: np.ndarray, order: int, dps: int, bar: Progress | None = None
) -> MpTrajectories:
    """The mpmath route at two working precisions (:class:`MpTrajectories`): the
    digits are the smallest number of significant digits on which the two runs agree,
    norm-wise for each of ``x, V, W (, A, B)`` at each time."""
    from numeric.precision import agreeing_digits, earn_digits

    limit = MP_ORDER2_MAX_N if order == 2 else MP_MAX_N
    if st.n > limit:
        raise ParameterError(
            f"the mpmath route (dps) of order {order} handles at most {limit} free "
            f"coordinates; model {st.model.name} has {st.n}; omit dps for the float64 route."
        )

    def run(wp: int) -> dict[str, np.ndarray]:
        return _mp_run(st, times, order, wp, bar)

    def agreement(low: dict, high: dict) -> int:
        return min(
            agreeing_digits(list(high[name][k].flat), list(low[name][k].flat))
            for name in high
            for k in range(len(times))
        )

    # the guard g = 10, then 10 + dps: (dps + g, dps + 2 g)
    ladder = [(dps + g, dps + 2 * g) for g in (10, 10 + dps)]
    earned = earn_digits(
        dps,
        ladder,
        run,
        run,
        agreement,
        who="the two working precisions of the mpmath transient",
        where=f"model {st.model.name}",
    )
    high, low = earned.high, earned.low
    errors = {
        name: np.array(
            earned.errors(list(high[name].flat), list(low[name].flat)), dtype=object
        ).reshape(high[name].shape)
        for name in high
    }
    return MpTrajectories(high, min(earned.digits, dps), earned.wp_low, earned.wp_high, errors)
