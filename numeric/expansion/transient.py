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
  (:class:`_MomentSystem` over ``mpf`` object arrays), so the two routes
  integrate the same equations.  ``digits`` is the number of significant
  digits on which the two runs agree, norm-wise for each of ``x, V, W (, A,
  B)`` at each time; if it falls short of ``dps`` after one retry with more
  guard digits, :class:`mfstein.ground.errors.NumericalError` is raised and nothing
  is returned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import permutations
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from mfstein.ground.arguments import check_keywords, check_start, renamed_keywords
from mfstein.ground.errors import NumericalError, ParameterError, caller_level
from numeric.expansion.transient_result import TransientResult
from numeric.prepared.cache import PreparedCache, inputs_key

#: Largest number of free coordinates accepted by the mpmath (``dps``) route.
MP_MAX_N = 6
#: ... at order 2 (the state holds the ``n^3`` entries of ``C``).
MP_ORDER2_MAX_N = 3
#: Largest number of free coordinates of the float64 order-2 route (``C`` has ``n^3`` entries).
ORDER2_MAX_N = 80
#: Largest number of free coordinates of the float64 orders 0 and 1.
FLOAT_MAX_N = 400
#: Digits of the mpmath route when ``precision="dps"`` is given without ``dps``.
DEFAULT_DPS = 30
#: ``solve_ivp`` methods accepted by the float64 route (``auto``: LSODA up to
#: :data:`LSODA_MAX_STATE` state entries, BDF with the sparse Jacobian above).
METHODS = ("auto", "LSODA", "BDF", "Radau", "RK45", "DOP853")
#: ``LSODA`` needs a dense Jacobian: refused above this state length.
LSODA_MAX_STATE = 2000
#: Stiff methods (sparse LU of the ``n^3 x n^3`` block of ``C``) at order 2 up to
#: this many free coordinates; ``auto`` integrates larger order-2 systems with
#: the explicit DOP853 (the LU's fill-in grows like ``n^5``: 0.4 s at n = 20,
#: minutes at n = 50).
STIFF_ORDER2_MAX_N = 20
#: Largest number of output times.
MAX_TIMES = 100_000
#: Latest output time: far beyond any relaxation time a mean-field model of
#: interest has (in heavy traffic at 1 - lam = 1e-6 it is ~1e6), and a horizon
#: the integrators can cross in a bounded number of steps.
MAX_TIME = 1e12
#: Right-hand-side evaluations one float64 integration may spend (a few seconds
#: for small models; ordinary horizons need hundreds to a few thousand).  An
#: integration that needs more -- a horizon like 1e300, or rates so large that
#: the problem overflows or is hopelessly stiff -- stops with one sentence
#: instead of running without end.
MAX_RHS_EVALS = 100_000
#: The same budget for one mpmath (Taylor) integration, whose evaluations are
#: far costlier.
MP_MAX_RHS_EVALS = 20_000


class _Budget:
    """A right-hand side that counts its calls and refuses non-finite values."""

    def __init__(
        self, rhs: Any, limit: int, st: _Setup, tmax: float, bar: Any = None
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


class _Progress:
    """Progress bars of the integrated time ``0 .. tmax`` (tqdm on standard error),
    one per integration; nothing when ``show`` is false."""

    def __init__(self, show: bool, tmax: float) -> None:
        self.show, self.tmax = show, tmax
        self.bar: Any = None

    def start(self, what: str) -> _Progress:
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


def _check_taylor_cost(st: _Setup, times: np.ndarray, order: int, dps: int) -> None:
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
SETUPS = 16
_SETUPS: PreparedCache[_Setup] = PreparedCache("prepared:transient", SETUPS)


def _setup(model: Any, params: Mapping[str, Any] | None, start: Any) -> _Setup:
    """The :class:`_Setup` of these inputs, from this process's cache when made before
    (:mod:`numeric.prepared.cache`): a warm transient prepares nothing."""
    key = inputs_key(model, dict(params or {}), start, None)
    keep = key is not None and model.n <= 256  # no key: a family, refused when built
    return _SETUPS.get(key, lambda: _Setup(model, params, start), keep=keep)


class _Setup:
    """Model, reduction, parameters and start, validated once."""

    def __init__(self, model: Any, params: Mapping[str, Any] | None, start: Any) -> None:
        from numeric.meanfield import fixed_point as fp
        from numeric.params import check_finite_model, kernel_vector
        from numeric.prepared.problem import prepare_problem
        from numeric.prepared.start import start_point
        from numeric.rate_signs import check_rates

        check_finite_model(
            model,
            f"model {getattr(model, 'name', '?')} has an unbounded state; give a finite "
            "buffer (e.g. --param b=10) for the transient.",
        )
        self.model = model
        #: the problem every route starts from (:mod:`numeric.prepared.problem`): the
        #: names checked, the values and the start read, the conservation laws
        self.problem = prepare_problem(model, params, start)
        self.params = dict(self.problem.params)
        values, s0 = dict(self.problem.values), list(self.problem.s0)
        self.p64 = np.array(self.problem.p64)
        self.s0_64 = np.array(self.problem.s64)
        with mpmath.workdps(30):
            try:  # the start numeric.solve uses by default (numeric.expansion.basin)
                ref = s0 if start is None else start_point(model, None, values)
                self.ref64: np.ndarray | None = np.array([float(v) for v in ref])
            except ParameterError:
                self.ref64 = None
        self.start = start
        k64 = model.kernels("numba")
        self.red = self.problem.reduction
        self.rm = fp.ReducedModel(model, self.red, k64)
        self.free = list(self.red.free)
        self.n = self.red.n
        self.T64 = self.rm.T64
        self.Tfrac: list[list[Fraction]] = self.red.T()
        self.q64 = np.array(
            [sum(float(c) * self.s0_64[j] for j, c in enumerate(row)) for row in self.red.laws]
        )
        self.states = [str(s) for s in model.states]
        with mpmath.workdps(30):
            check_rates(model, s0, kernel_vector(model, values), "the start")
        self._check_smooth_start()

    def _check_smooth_start(self) -> None:
        """Refuse, in one sentence, a start where the drift has no finite Jacobian (a
        rate ``sqrt(y)`` at ``y = 0``): every moment equation and every stiff solver
        needs ``J(x(t))``, from ``t = 0`` on."""
        from numeric.rate_signs import singular_derivative, state_text

        try:
            with np.errstate(all="ignore"):
                J = self.rm.jac64(self.s0_64[self.free], self.q64, self.p64)
            finite = bool(np.all(np.isfinite(J)))
        except (ZeroDivisionError, ValueError, OverflowError):
            finite = False
        if not finite:
            s0 = self.s0_64.tolist()
            why = singular_derivative(self.model, s0, self.p64.tolist())
            raise ParameterError(
                f"the drift of model {self.model.name} has no finite derivative at the start "
                f"({state_text(self.model, s0)}): "
                f"{why or 'a rate such as sqrt(y) at y = 0 has none'}; the transient needs the "
                "Jacobian along x(t) from t = 0, so give a start inside the state space."
            )

    def values_mp(self) -> tuple[list[mpf], list[mpf], list[mpf]]:
        """Parameters, start and conserved values at the current precision."""
        from numeric.params import kernel_vector

        s0 = self.problem.start_now()
        return kernel_vector(self.model, self.problem.values_now()), s0, self.red.values(s0)

    def notes(self) -> list[str]:
        out = []
        if self.red.laws:
            kept = ", ".join(self.states[j] for j in self.free)
            out.append(
                f"{len(self.red.laws)} conservation law(s) removed: integrated on {kept}; "
                "x, V, W (A, B) are exact images in all coordinates."
            )
        return out


# --------------------------------------------------------------------------
# sparse maps: kernel values -> tensors on the free coordinates
# --------------------------------------------------------------------------
#: How the stored indices of each object expand: (output indices, symmetry).
_SPECS = {
    "H": (1, "none"),  # HESS_INDEX lists every (i, j, k)
    "d3f": (1, "tail"),
    "d4f": (1, "tail"),
    "dQ": (2, "pair_tail"),
    "d2Q": (2, "pair_tail"),
    "R": (3, "all"),
}


def _variants(ix: tuple[int, ...], nout: int, sym: str) -> set[tuple[int, ...]]:
    if sym == "none":
        return {ix}
    if sym == "all":
        return set(permutations(ix))
    tails = set(permutations(ix[nout:]))
    heads = {ix[:nout]}
    if sym == "pair_tail":
        heads.add((ix[1], ix[0]))
    return {(*h, *t) for h in heads for t in tails}


@dataclass
class _Map:
    """``reduced values = M @ kernel values`` on the index tuples ``keys``."""

    keys: np.ndarray  # (nkeys, rank) int
    rows: list[list[tuple[int, Fraction]]]  # per key: (value position, coefficient)
    M: Any = None  # scipy.sparse csr (float64)
    _tuples: list[tuple[int, ...]] | None = None

    def tuples(self) -> list[tuple[int, ...]]:
        if self._tuples is None:
            self._tuples = [tuple(int(v) for v in k) for k in self.keys]
        return self._tuples


def _build_map(
    index: Sequence[Sequence[int]], name: str, Tfrac: list[list[Fraction]], free: list[int]
) -> _Map:
    """Restrict output indices to the free coordinates and contract the derivative
    indices with ``T`` (exact rational coefficients)."""
    nout, sym = _SPECS[name]
    pos = {j: i for i, j in enumerate(free)}
    Trows = [[(a, t) for a, t in enumerate(row) if t] for row in Tfrac]
    acc: dict[tuple[int, ...], dict[int, Fraction]] = {}
    for q, raw in enumerate(index):
        for ix in _variants(tuple(int(v) for v in raw), nout, sym):
            if any(h not in pos for h in ix[:nout]):
                continue
            head = tuple(pos[h] for h in ix[:nout])
            tails: list[tuple[tuple[int, ...], Fraction]] = [((), Fraction(1))]
            for j in ix[nout:]:
                tails = [((*t, a), w * ta) for t, w in tails for a, ta in Trows[j]]
            for tail, w in tails:
                slot = acc.setdefault((*head, *tail), {})
                slot[q] = slot.get(q, Fraction(0)) + w
    keys = [k for k, row in acc.items() if any(row.values())]
    rows = [[(q, c) for q, c in acc[k].items() if c] for k in keys]
    rank = nout + (len(index[0]) - nout if len(index) else 0)
    arr = np.array(keys, dtype=np.int64).reshape(len(keys), rank if keys else 0)
    return _Map(keys=arr, rows=rows)


def _float_map(m: _Map, nvals: int) -> _Map:
    from scipy.sparse import csr_matrix

    r, c, d = [], [], []
    for k, row in enumerate(m.rows):
        for q, w in row:
            r.append(k)
            c.append(q)
            d.append(float(w))
    m.M = csr_matrix((d, (r, c)), shape=(len(m.rows), nvals))
    return m


# --------------------------------------------------------------------------
# float64 route
# --------------------------------------------------------------------------
class _MomentSystem:
    """Right side of the concatenated moment ODEs ``(x, V, vec W [, vec C, vec B, A])``,
    written once over two back ends:

    * ``mp=False``: float64 arrays and the numba kernels (SciPy's ``solve_ivp``);
    * ``mp=True``: object arrays of ``mpf`` at the working precision of
      ``mpmath.mp`` and the mpmath kernels (``mpmath.odefun``).

    Only the kernel evaluations and the rounding of the exact rational maps
    (``T`` and the reduction of the derivative tensors) differ; the moment
    equations themselves are :func:`numeric.meanfield.stationary.assemble_D` and
    :func:`numeric.meanfield.stationary.G_and_A_terms`, the same as the stationary solver's.
    """

    def __init__(self, st: _Setup, order: int, *, mp: bool = False) -> None:
        from numeric.meanfield.stationary import Arith

        self.st, self.order, self.n, self.mp = st, order, st.n, mp
        self.ar = Arith(None, mp=mp)
        backend = "mpmath" if mp else "numba"
        k64 = st.rm.k64
        self.k64 = k64
        self.kern = st.rm.kmp if mp else k64
        n = self.n
        self.H = _build_map(k64.hess_index.tolist(), "H", st.Tfrac, st.free)
        self.objs: dict[str, _Map] = {}
        if order == 2:
            from derive.kernels import kernels

            self.k2 = kernels(st.model, backend, "order2")
            for name in ("d3f", "d4f", "dQ", "d2Q", "R"):
                idx = self.k2.index[name].tolist()
                self.objs[name] = _build_map(idx, name, st.Tfrac, st.free)
        if not mp:
            _float_map(self.H, len(k64.hess_index))
            for name, m in self.objs.items():
                _float_map(m, len(self.k2.index[name]))
        sizes = [n]
        if order >= 1:
            sizes += [n, n * n]
        if order == 2:
            sizes += [n**3, n * n, n]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self.size = int(self.offsets[-1])
        self.F = np.array(st.free, dtype=int)
        self.jac_index = k64.jac_index
        self._rounded: dict[int, dict[str, Any]] = {}
        self.p = self.q = None  # mpmath parameters and conserved values (set by _mp_run)

    # back-end specific pieces ------------------------------------------------
    def _exact(self) -> dict[str, Any]:
        """``T`` and the rational map coefficients rounded at the current precision."""
        prec = mpmath.mp.prec
        hit = self._rounded.get(prec)
        if hit is None:

            def c(v: Fraction) -> mpf:
                return mpf(v.numerator) / v.denominator

            T = np.array([[c(v) for v in row] for row in self.st.Tfrac], dtype=object)
            maps = {"H": self.H, **self.objs}
            rows = {k: [[(q, c(w)) for q, w in row] for row in m.rows] for k, m in maps.items()}
            hit = self._rounded[prec] = {"T": T, "rows": rows}
        return hit

    def full(self, x: np.ndarray) -> np.ndarray:
        if self.mp:
            return np.array(self.st.red.complete(list(x), self.q), dtype=object)
        return self.st.rm.full64(x, self.st.q64)

    def _params(self) -> Any:
        return self.p if self.mp else self.st.p64

    def _kernel_input(self, s: np.ndarray) -> Any:
        return list(s) if self.mp else s

    def jac_r(self, s: np.ndarray) -> np.ndarray:
        """``J_r = J[F, :] T`` at the full state ``s``."""
        if not self.mp:
            return self.k64.jac(s, self.st.p64)[self.F, :] @ self.st.T64
        vals = self.kern.jac_values(list(s), self.p)
        Jfull = self.ar.zeros((self.st.model.n, self.st.model.n))
        for (i, j), v in zip(self.jac_index.tolist(), vals, strict=True):
            Jfull[i, j] += v
        return Jfull[self.F, :] @ self._exact()["T"]

    def _reduce(self, name: str, values: Any) -> np.ndarray:
        """Kernel values of one object mapped to its entries on the free coordinates."""
        m = self.H if name == "H" else self.objs[name]
        if not self.mp:
            return m.M @ values
        rows = self._exact()["rows"][name]
        return np.array([mpmath.fsum(c * values[q] for q, c in row) for row in rows], dtype=object)

    def _Q(self, s: np.ndarray) -> np.ndarray:
        Q = self.kern.Q(self._kernel_input(s), self._params())
        if self.mp:
            b = self.st.model.n
            Q = np.array([[Q[i, j] for j in range(b)] for i in range(b)], dtype=object)
        return Q[np.ix_(self.F, self.F)]

    # helpers ------------------------------------------------------------------
    def block(self, y: np.ndarray, k: int) -> np.ndarray:
        return y[self.offsets[k] : self.offsets[k + 1]]

    def _h_contract(self, Hv: np.ndarray, X: np.ndarray) -> np.ndarray:
        """``(1/2) H : X`` on the free coordinates."""
        keys = self.H.keys
        if not self.mp:
            if not len(keys):
                return np.zeros(self.n)
            w = Hv * X[keys[:, 1], keys[:, 2]]
            return np.bincount(keys[:, 0], weights=w, minlength=self.n) / 2.0
        out = self.ar.zeros((self.n,))
        if len(keys):
            np.add.at(out, keys[:, 0], Hv * X[keys[:, 1], keys[:, 2]])
        return out / 2

    def rhs(self, t: Any, y: np.ndarray) -> np.ndarray:
        from numeric.meanfield.stationary import G_and_A_terms, assemble_D, sym3

        n, p, ar = self.n, self._params(), self.ar
        x = y[:n]
        s = self.full(x)
        si = self._kernel_input(s)
        fx = ar.array(self.kern.f(si, p))[self.F]
        if self.order == 0:
            return fx
        J = self.jac_r(s)
        Hv = self._reduce("H", self.kern.hess_values(si, p))
        Q = self._Q(s)
        V = self.block(y, 1)
        W = self.block(y, 2).reshape(n, n)
        JW = J @ W
        dV = J @ V + self._h_contract(Hv, W)
        dW = JW + JW.T + Q
        if self.order == 1:
            return np.concatenate([fx, dV, dW.ravel()])
        C = self.block(y, 3).reshape(n, n, n)
        B = self.block(y, 4).reshape(n, n)
        A = self.block(y, 5)
        objs: dict[str, list] = {"H": list(zip(self.H.tuples(), Hv, strict=True))}
        for name, m in self.objs.items():
            vals = self._reduce(name, getattr(self.k2, f"{name}_values")(si, p))
            objs[name] = list(zip(m.tuples(), vals, strict=True))
        D = assemble_D(ar, n, W, V, Q, objs)
        # C is symmetric, so (J (+) J (+) J) C = sym3(J x1 C): one matrix product
        LC = sym3((J @ C.reshape(n, n * n)).reshape(n, n, n))
        G, a_part = G_and_A_terms(ar, n, W, V, C, objs)
        G = (G + G.T) / 2
        JB = J @ B
        dB = JB + JB.T + G
        dA = J @ A + self._h_contract(Hv, B) + a_part
        return np.concatenate([fx, dV, dW.ravel(), (LC + D).ravel(), dB.ravel(), dA])

    def jac(self, t: float, y: np.ndarray) -> Any:
        """Sparse Newton matrix (float64): exact ``J_r(x)`` for ``x``, exact linear
        parts of the moment blocks, exact ``1/2 H`` couplings ``V <- W`` and ``A <- B``."""
        import scipy.sparse as sps

        n = self.n
        s = self.full(y[:n])
        J = sps.csr_matrix(self.jac_r(s))
        if self.order == 0:
            return J.tocsc()
        eye = sps.identity(n, format="csr")
        two = sps.kron(J, eye) + sps.kron(eye, J)
        blocks = [J, J, two]
        if self.order == 2:
            ee = sps.identity(n * n, format="csr")
            three = sps.kron(J, ee) + sps.kron(eye, two)
            blocks += [three, two, J]
        out = sps.block_diag(blocks, format="lil")
        Hv = self.H.M @ self.k64.hess_values(s, self.st.p64)
        keys = self.H.keys
        if len(keys):
            cols = keys[:, 1] * n + keys[:, 2]
            coup = sps.csr_matrix((Hv / 2.0, (keys[:, 0], cols)), shape=(n, n * n))
            o = self.offsets
            out[o[1] : o[2], o[2] : o[3]] = coup
            if self.order == 2:
                out[o[5] : o[6], o[4] : o[5]] = coup
        return out.tocsc()

    def outputs(self, Y: np.ndarray) -> dict[str, np.ndarray]:
        """``x, V, W (, A, B)`` in the model's coordinates from the states ``Y``
        (one column per time): ``x = complete(x_r)``, ``V = T V_r``, ``W = T W_r T^T``."""
        n, m = self.n, Y.shape[1]
        T = self._exact()["T"] if self.mp else self.st.T64
        out: dict[str, np.ndarray] = {"x": np.array([self.full(Y[:n, k]) for k in range(m)])}
        if self.order == 0:
            return out
        o = self.offsets

        def sym(block: np.ndarray) -> np.ndarray:
            X = block.T.reshape(m, n, n)
            X = (X + X.transpose(0, 2, 1)) / 2
            if not self.mp:
                return np.einsum("ia,tab,jb->tij", T, X, T)
            return np.array([T @ X[k] @ T.T for k in range(m)])

        out["V"] = Y[o[1] : o[2]].T @ T.T
        out["W"] = sym(Y[o[2] : o[3]])
        if self.order == 2:
            out["B"] = sym(Y[o[4] : o[5]])
            out["A"] = Y[o[5] : o[6]].T @ T.T
        return out


def _float64(
    st: _Setup,
    times: np.ndarray,
    order: int,
    method: str,
    rtol: float,
    atol: float,
    bar: _Progress | None = None,
) -> tuple[dict[str, np.ndarray], str]:
    from scipy.integrate import solve_ivp

    from numeric.precision import limited_blas

    sys_ = _MomentSystem(st, order)
    n = st.n
    y0 = np.zeros(sys_.size)
    y0[:n] = st.s0_64[st.free]
    uniq, inverse = np.unique(times, return_inverse=True)
    tmax = float(uniq[-1])
    if method == "auto":
        if sys_.size <= LSODA_MAX_STATE:
            method = "LSODA"
        elif order < 2 or n <= STIFF_ORDER2_MAX_N:
            method = "BDF"
        else:
            method = "DOP853"
    if method in ("BDF", "Radau") and order == 2 and n > STIFF_ORDER2_MAX_N:
        raise ParameterError(
            f"method {method} at order 2 needs a sparse LU of the n^3 third-moment block; it "
            f"handles at most {STIFF_ORDER2_MAX_N} free coordinates (model {st.model.name} has "
            f"{n}); use method auto or DOP853."
        )
    if tmax == 0.0:
        Y = y0[:, None].repeat(len(uniq), axis=1)
    else:
        kwargs: dict[str, Any] = {}
        if method in ("BDF", "Radau"):
            kwargs["jac"] = sys_.jac
        elif method == "LSODA":
            if sys_.size > LSODA_MAX_STATE:
                raise ParameterError(
                    f"method LSODA needs a dense Jacobian; the state has {sys_.size} entries "
                    f"(at most {LSODA_MAX_STATE}); use BDF."
                )
            kwargs["jac"] = lambda t, y: sys_.jac(t, y).toarray()
        budget = _Budget(sys_.rhs, MAX_RHS_EVALS, st, tmax)
        if "jac" in kwargs:
            jac = kwargs["jac"]
            kwargs["jac"] = lambda t, y: budget.guarded(jac, t, y)
        # An overflow is reported by _Budget in one sentence: NumPy's own
        # RuntimeWarning would only add a second line, so it is silenced here.
        shown = bar.start(f"transient ({method})") if bar is not None else None
        budget.bar = shown
        with limited_blas(), np.errstate(over="ignore", invalid="ignore"):
            try:
                sol = solve_ivp(
                    budget,
                (0.0, tmax),
                y0,
                    method=method,
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
    return sys_.outputs(Y[:, inverse]), method


# --------------------------------------------------------------------------
# mpmath route
# --------------------------------------------------------------------------
def _mp_run(
    st: _Setup, times: np.ndarray, order: int, wp: int, bar: _Progress | None = None
) -> dict[str, np.ndarray]:
    """``x, V, W (, A, B)`` at each time (object arrays of ``mpf``), at ``wp`` digits."""
    with mpmath.workdps(wp):
        p, s0, q = st.values_mp()
        sys_ = _MomentSystem(st, order, mp=True)
        sys_.p, sys_.q = p, q
        y0 = [s0[j] for j in st.free] + [mpf(0)] * (sys_.size - st.n)

        shown = bar.start(f"transient (mpmath, {wp} digits)") if bar is not None else None
        rhs = _Budget(sys_.rhs, MP_MAX_RHS_EVALS, st, float(max(times)), shown)

        def deriv(t: mpf, y: list[mpf]) -> list[mpf]:
            return list(rhs(t, np.array(y, dtype=object)))

        try:
            sol = mpmath.odefun(deriv, 0, y0)
            Y = np.array([sol(mpf(float(t))) for t in times], dtype=object).T
        finally:
            if shown is not None:
                shown.close()
        return sys_.outputs(Y)


def _mpmath(
    st: _Setup, times: np.ndarray, order: int, dps: int, bar: _Progress | None = None
) -> tuple[dict, int, tuple[int, int], dict]:
    """The mpmath route at two working precisions; ``digits`` is the smallest
    number of significant digits on which the two runs agree, norm-wise for each
    of ``x, V, W (, A, B)`` at each time; the per-entry errors (same shapes,
    :func:`numeric.precision.entry_errors`) are what printing uses."""
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
    return high, min(earned.digits, dps), (earned.wp_low, earned.wp_high), errors


def _check_path(st: _Setup, times: np.ndarray, x: np.ndarray) -> None:
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
    ``precision="dps"`` without ``dps`` takes :data:`DEFAULT_DPS` digits."""
    from numeric.precision import check_dps, check_precision

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

        dps = check_dps(dps)
        if dps > TRANSIENT_MAX_DPS:
            raise ParameterError(
                f"dps of transient must be at most {TRANSIENT_MAX_DPS} (the Taylor "
                f"integration's cost grows like dps^2; see mfstein.ground.limits), got {dps}."
            )
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
        2) with ``dps`` digits earned by two working precisions.  Default:
        ``"dps"`` when ``dps`` is given, else ``"float64"``.
    dps:
        Significant digits of the mpmath route, an integer ``>= 5`` (default
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
    st = _setup(model, params, start)
    bar = _Progress(progress, float(times[-1]))
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
        out, integrator = _float64(st, times, order, integrator, rtol, atol, bar)
        route = "float64"
        notes.append(
            f"float64: solve_ivp {integrator}, rtol = {rtol:g}, atol = {atol:g} (local error "
            "control; expect a global error of a few rtol relative to the largest entry, "
            "no digits claimed)."
        )
    else:
        _check_taylor_cost(st, times, order, dps)
        out, digits, (wp1, wp2), errors = _mpmath(st, times, order, dps, bar)
        route, integrator = "mpmath", "taylor"
        notes.append(
            f"mpmath: odefun (Taylor) at {wp1} and {wp2} digits; they agree on "
            f"{digits} significant digits (norm-wise for each of x, V, W (A, B) at each time)."
        )
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
        model=st.model.name,
        params={k: str(v) for k, v in st.params.items()},
        free=[st.states[j] for j in st.free],
        integrator=integrator,
        errors=errors,
        limit=where.limit, limit_abs_error=where.limit_error, rtol=float(rtol),
        warning=where.warning,
    )


def _fate(st: _Setup, times: np.ndarray, x: np.ndarray) -> Any:
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
