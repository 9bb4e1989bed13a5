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
are removed as in :mod:`numeric.general`: the start fixes the conserved values
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
  accuracy).  ``method="auto"`` picks ``LSODA`` (stiff-capable, switching
  between Adams and BDF; dense Jacobian) up to :data:`LSODA_MAX_STATE` state
  entries, ``BDF`` with the sparse Jacobian above, and at order 2 with more
  than :data:`STIFF_ORDER2_MAX_N` free coordinates the explicit ``DOP853``
  (the sparse LU of the ``n^3`` block of ``C`` would cost minutes; mean-field
  models are rarely stiff, and a note says which method ran).  The error is
  controlled locally by ``rtol`` and ``atol`` (default ``1e-10`` and
  ``1e-12``): for a well-conditioned model expect a global error of a few
  times ``rtol`` relative to the largest entry over ``[0, t]`` (``1e-11`` to
  ``1e-10`` against the mpmath route in the tests); no digits are claimed.
* ``mpmath`` (when ``dps`` is given; orders 0 and 1, at most
  :data:`MP_MAX_N` free coordinates): :func:`mpmath.odefun` (Taylor series of
  degree ``3 + 1.5 wp``, generated at ``wp (1 + degree)`` bits) with the
  generated mpmath kernels, run at two working precisions ``dps + 10`` and
  ``dps + 20``.  ``digits`` is the number of significant digits on which the
  two runs agree norm-wise over all times and all of ``x, V, W``; if it falls
  short of ``dps`` after one retry with more guard digits,
  :class:`mfstein.errors.NumericalError` is raised and nothing is returned.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import permutations
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from mfstein.errors import NumericalError, ParameterError

#: Largest number of free coordinates accepted by the mpmath (``dps``) route.
MP_MAX_N = 6
#: Largest number of free coordinates of the float64 order-2 route (``C`` has ``n^3`` entries).
ORDER2_MAX_N = 80
#: Largest number of free coordinates of the float64 orders 0 and 1.
FLOAT_MAX_N = 400
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


@dataclass
class TransientResult:
    """The transient expansion at the requested times, in the model's coordinates.

    Attributes
    ----------
    times:
        The requested times, shape ``(m,)``.
    x:
        Mean-field solution ``x(t)``, shape ``(m, b)``.
    V, W:
        First-order coefficients (``None`` for order 0): ``V`` has shape
        ``(m, b)``, ``W`` shape ``(m, b, b)``.
    A, B:
        Second-order coefficients (order 2 only), shapes as ``V`` and ``W``.
    states:
        The state names, in order.
    notes:
        What was computed and how accurate it is.
    order:
        0, 1 or 2.
    route:
        ``"float64"`` (float arrays) or ``"mpmath"`` (object arrays of ``mpf``).
    dps, digits:
        The requested digits and the digits earned (mpmath route), else ``None``.
    model, params:
        The model name and the parameter values as given.
    free:
        The free coordinates the ODEs were integrated on (conservation laws removed).
    method:
        The integrator that ran: a ``solve_ivp`` method, or ``"taylor"`` (mpmath).
    """

    times: np.ndarray
    x: np.ndarray
    V: np.ndarray | None
    W: np.ndarray | None
    A: np.ndarray | None = None
    B: np.ndarray | None = None
    states: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    order: int = 1
    route: str = "float64"
    dps: int | None = None
    digits: int | None = None
    model: str = ""
    params: dict[str, str] = field(default_factory=dict)
    free: list[str] = field(default_factory=list)
    method: str = ""

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
    if np.any(np.diff(t) < 0):
        raise ParameterError("times must be non-decreasing.")
    return t


def _check_order(order: Any) -> int:
    if isinstance(order, bool) or order not in (0, 1, 2):
        raise ParameterError(f"order must be 0, 1 or 2, got {order!r}.")
    return int(order)


class _Setup:
    """Model, reduction, parameters and start, validated once."""

    def __init__(self, model: Any, params: Mapping[str, Any] | None, start: Any) -> None:
        from derive.model import Model
        from derive.spec import Truncated
        from numeric import fixed_point as fp
        from numeric.general import start_point
        from numeric.invariants import reduction
        from numeric.model_params import check_names, kernel_vector, parse_params

        if isinstance(model, Truncated):
            raise ParameterError(
                f"model {model.name} has an unbounded state; give a finite buffer "
                "(e.g. --param b=10) for the transient."
            )
        if not isinstance(model, Model):
            raise ParameterError(f"model must be a derive.Model, got {type(model).__name__}.")
        self.model = model
        self.params = check_names(model, params)
        with mpmath.workdps(30):
            values = parse_params(model, self.params)
            s0 = start_point(model, start, values)
            self.p64 = np.array([float(v) for v in kernel_vector(model, values)])
            self.s0_64 = np.array([float(v) for v in s0])
        self.start = start
        self.red = reduction(model, model.kernels("numba").jumps)
        self.rm = fp.ReducedModel(model, self.red)
        self.free = list(self.red.free)
        self.n = self.red.n
        self.T64 = self.rm.T64
        self.Tfrac: list[list[Fraction]] = self.red.T()
        self.q64 = np.array(
            [sum(float(c) * self.s0_64[j] for j, c in enumerate(row)) for row in self.red.laws]
        )
        self.states = [str(s) for s in model.states]

    def values_mp(self) -> tuple[list[mpf], list[mpf], list[mpf]]:
        """Parameters, start and conserved values at the current precision."""
        from numeric.general import start_point
        from numeric.model_params import kernel_vector, parse_params

        values = parse_params(self.model, self.params)
        s0 = start_point(self.model, self.start, values)
        return kernel_vector(self.model, values), s0, self.red.values(s0)

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
class _Float64System:
    """Right side and sparse Newton Jacobian of the concatenated moment system."""

    def __init__(self, st: _Setup, order: int) -> None:
        self.st, self.order, self.n = st, order, st.n
        k64 = st.rm.k64
        self.k64 = k64
        n = self.n
        self.H = _float_map(
            _build_map(k64.hess_index.tolist(), "H", st.Tfrac, st.free), len(k64.hess_index)
        )
        self.objs: dict[str, _Map] = {}
        if order == 2:
            from derive.kernels import kernels

            self.k2 = kernels(st.model, "numba", "order2")
            for name in ("d3f", "d4f", "dQ", "d2Q", "R"):
                idx = self.k2.index[name].tolist()
                self.objs[name] = _float_map(_build_map(idx, name, st.Tfrac, st.free), len(idx))
        sizes = [n]
        if order >= 1:
            sizes += [n, n * n]
        if order == 2:
            sizes += [n**3, n * n, n]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self.size = int(self.offsets[-1])
        self.F = np.array(st.free, dtype=int)

    # helpers ------------------------------------------------------------------
    def full(self, x: np.ndarray) -> np.ndarray:
        return self.st.rm.full64(x, self.st.q64)

    def jac_r(self, s: np.ndarray) -> np.ndarray:
        return self.k64.jac(s, self.st.p64)[self.F, :] @ self.st.T64

    def block(self, y: np.ndarray, k: int) -> np.ndarray:
        return y[self.offsets[k] : self.offsets[k + 1]]

    def _h_contract(self, Hv: np.ndarray, X: np.ndarray) -> np.ndarray:
        """``(1/2) H : X`` on the free coordinates."""
        keys = self.H.keys
        if not len(keys):
            return np.zeros(self.n)
        return (
            np.bincount(keys[:, 0], weights=Hv * X[keys[:, 1], keys[:, 2]], minlength=self.n) / 2.0
        )

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        n, p = self.n, self.st.p64
        x = y[:n]
        s = self.full(x)
        fx = self.k64.f(s, p)[self.F]
        if self.order == 0:
            return fx
        J = self.jac_r(s)
        Hv = self.H.M @ self.k64.hess_values(s, p)
        Q = self.k64.Q(s, p)[np.ix_(self.F, self.F)]
        V = self.block(y, 1)
        W = self.block(y, 2).reshape(n, n)
        JW = J @ W
        dV = J @ V + self._h_contract(Hv, W)
        dW = JW + JW.T + Q
        if self.order == 1:
            return np.concatenate([fx, dV, dW.ravel()])
        from numeric.expansion import _Arith, _assemble_D, _G_and_A_terms, _sym3

        C = self.block(y, 3).reshape(n, n, n)
        B = self.block(y, 4).reshape(n, n)
        A = self.block(y, 5)
        objs: dict[str, list] = {"H": list(zip(self.H.tuples(), Hv, strict=True))}
        for name, m in self.objs.items():
            vals = m.M @ getattr(self.k2, f"{name}_values")(s, p)
            objs[name] = list(zip(m.tuples(), vals, strict=True))
        ar = _Arith(None)
        D = _assemble_D(ar, n, W, V, Q, objs)
        # C is symmetric, so (J (+) J (+) J) C = sym3(J x1 C): one matrix product
        LC = _sym3((J @ C.reshape(n, n * n)).reshape(n, n, n))
        G, a_part = _G_and_A_terms(ar, n, W, V, C, objs)
        G = (G + G.T) / 2
        JB = J @ B
        dB = JB + JB.T + G
        dA = J @ A + self._h_contract(Hv, B) + a_part
        return np.concatenate([fx, dV, dW.ravel(), (LC + D).ravel(), dB.ravel(), dA])

    def jac(self, t: float, y: np.ndarray) -> Any:
        """Sparse Newton matrix: exact ``J_r(x)`` for ``x``, exact linear parts of
        the moment blocks, exact ``1/2 H`` couplings ``V <- W`` and ``A <- B``."""
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


def _float64(
    st: _Setup, times: np.ndarray, order: int, method: str, rtol: float, atol: float
) -> tuple[dict[str, np.ndarray], str]:
    from scipy.integrate import solve_ivp

    from numeric.precision import limited_blas

    sys_ = _Float64System(st, order)
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
        with limited_blas():
            sol = solve_ivp(
                sys_.rhs,
                (0.0, tmax),
                y0,
                method=method,
                t_eval=uniq,
                rtol=rtol,
                atol=atol,
                **kwargs,
            )
        if not sol.success or not np.all(np.isfinite(sol.y)):
            raise NumericalError(
                f"the transient of model {st.model.name} could not be integrated up to "
                f"t = {tmax:g} ({sol.message})."
            )
        Y = sol.y
    Y = Y[:, inverse]
    T = st.T64
    out: dict[str, np.ndarray] = {}
    out["x"] = np.array([sys_.full(Y[:n, k]) for k in range(Y.shape[1])])
    m = Y.shape[1]
    if order >= 1:
        o = sys_.offsets
        Vr = Y[o[1] : o[2]].T
        Wr = Y[o[2] : o[3]].T.reshape(m, n, n)
        Wr = (Wr + Wr.transpose(0, 2, 1)) / 2
        out["V"] = Vr @ T.T
        out["W"] = np.einsum("ia,tab,jb->tij", T, Wr, T)
    if order == 2:
        Br = Y[o[4] : o[5]].T.reshape(m, n, n)
        Br = (Br + Br.transpose(0, 2, 1)) / 2
        out["B"] = np.einsum("ia,tab,jb->tij", T, Br, T)
        out["A"] = Y[o[5] : o[6]].T @ T.T
    return out, method


# --------------------------------------------------------------------------
# mpmath route (orders 0 and 1)
# --------------------------------------------------------------------------
class _MpSystem:
    """Right side of ``(x, V, upper triangle of W)`` in mpmath at the current precision."""

    def __init__(self, st: _Setup, order: int, p: list[mpf], q: list[mpf]) -> None:
        self.st, self.order, self.n = st, order, st.n
        self.kmp = st.rm.kmp
        self.p, self.q = p, q
        k64 = st.rm.k64
        self.jac_index = [tuple(ix) for ix in k64.jac_index.tolist()]
        self.H = _build_map(k64.hess_index.tolist(), "H", st.Tfrac, st.free)
        self.Htuples = self.H.tuples()
        n = self.n
        self.upper = [(i, j) for i in range(n) for j in range(i, n)]
        self._conv: dict[int, Any] = {}

    def _consts(self) -> tuple[list[list[mpf]], list[list[tuple[int, mpf]]]]:
        """``T`` and the Hessian map coefficients, rounded at the current precision."""
        prec = mpmath.mp.prec
        hit = self._conv.get(prec)
        if hit is None:

            def c(v: Fraction) -> mpf:
                return mpf(v.numerator) / v.denominator

            T = [[c(v) for v in row] for row in self.st.Tfrac]
            rows = [[(q, c(w)) for q, w in row] for row in self.H.rows]
            hit = self._conv[prec] = (T, rows)
        return hit

    def full(self, x: Sequence[mpf]) -> list[mpf]:
        return self.st.red.complete(list(x), self.q)

    def __call__(self, t: mpf, y: Sequence[mpf]) -> list[mpf]:
        n, p = self.n, self.p
        x = y[:n]
        s = self.full(x)
        fx = self.kmp.f(s, p)
        F = self.st.free
        out = [fx[j] for j in F]
        if self.order == 0:
            return out
        T, hrows = self._consts()
        pos = {j: i for i, j in enumerate(F)}
        J = [[mpf(0)] * n for _ in range(n)]
        for (i, j), v in zip(self.jac_index, self.kmp.jac_values(s, p), strict=True):
            r = pos.get(i)
            if r is None or not v:
                continue
            for m in range(n):
                if T[j][m]:
                    J[r][m] += v * T[j][m]
        hv = self.kmp.hess_values(s, p)
        Q = self.kmp.Q(s, p)
        V = list(y[n : 2 * n])
        W = [[mpf(0)] * n for _ in range(n)]
        for k, (i, j) in enumerate(self.upper):
            W[i][j] = W[j][i] = y[2 * n + k]
        h = [mpf(0)] * n
        for (i, a, b), row in zip(self.Htuples, hrows, strict=True):
            h[i] += mpmath.fsum(c * hv[q] for q, c in row) * W[a][b]
        out += [mpmath.fsum(J[i][m] * V[m] for m in range(n)) + h[i] / 2 for i in range(n)]
        JW = [
            [mpmath.fsum(J[i][m] * W[m][j] for m in range(n)) for j in range(n)] for i in range(n)
        ]
        out += [JW[i][j] + JW[j][i] + Q[F[i], F[j]] for i, j in self.upper]
        return out


def _mp_run(st: _Setup, times: np.ndarray, order: int, wp: int) -> list[list[mpf]]:
    """Full-coordinate ``x, V, W`` (flattened) at each time, at ``wp`` digits."""
    with mpmath.workdps(wp):
        p, s0, q = st.values_mp()
        sys_ = _MpSystem(st, order, p, q)
        n = st.n
        y0 = [s0[j] for j in st.free]
        if order == 1:
            y0 += [mpf(0)] * (n + len(sys_.upper))
        sol = mpmath.odefun(sys_, 0, y0)
        T, _ = sys_._consts()
        b = st.model.b
        rows = []
        for t in times:
            y = sol(mpmath.mpf(float(t)))
            vals = list(sys_.full(y[:n]))
            if order == 1:
                Vr = y[n : 2 * n]
                Wr = [[mpf(0)] * n for _ in range(n)]
                for k, (i, j) in enumerate(sys_.upper):
                    Wr[i][j] = Wr[j][i] = y[2 * n + k]
                vals += [mpmath.fsum(T[i][m] * Vr[m] for m in range(n)) for i in range(b)]
                TW = [
                    [mpmath.fsum(T[i][m] * Wr[m][c] for m in range(n)) for c in range(n)]
                    for i in range(b)
                ]
                vals += [
                    mpmath.fsum(TW[i][c] * T[j][c] for c in range(n))
                    for i in range(b)
                    for j in range(b)
                ]
            rows.append(vals)
    return rows


def _mpmath(
    st: _Setup, times: np.ndarray, order: int, dps: int
) -> tuple[dict, int, tuple[int, int]]:
    from numeric.general import _norm_digits

    if st.n > MP_MAX_N:
        raise ParameterError(
            f"the mpmath route (dps) handles at most {MP_MAX_N} free coordinates; model "
            f"{st.model.name} has {st.n}; omit dps for the float64 route."
        )
    guard = 10
    digits = 0
    for _ in range(2):
        low = _mp_run(st, times, order, dps + guard)
        high = _mp_run(st, times, order, dps + 2 * guard)
        with mpmath.workdps(dps + 2 * guard):
            digits = min(_norm_digits(h, lo) for h, lo in zip(high, low, strict=True))
        if digits >= dps:
            break
        guard += dps
    else:
        raise NumericalError(
            f"the two working precisions of the mpmath transient agree on only {digits} of "
            f"the {dps} requested digits (model {st.model.name}); no result is reported."
        )
    b, m = st.model.b, len(times)
    arr = np.empty((m, len(high[0])), dtype=object)
    for k, row in enumerate(high):
        arr[k, :] = row
    out = {"x": arr[:, :b]}
    if order == 1:
        out["V"] = arr[:, b : 2 * b]
        out["W"] = arr[:, 2 * b :].reshape(m, b, b)
    return out, min(digits, dps), (dps + guard, dps + 2 * guard)


# --------------------------------------------------------------------------
# public entry point
# --------------------------------------------------------------------------
def transient(
    model: Any,
    params: Mapping[str, Any] | None,
    start: Sequence[Any] | str | None,
    times: Any,
    *,
    order: int = 1,
    dps: int | None = None,
    method: str = "auto",
    rtol: float = 1e-10,
    atol: float = 1e-12,
) -> TransientResult:
    """The transient expansion ``x(t)``, ``V(t)``, ``W(t)`` (``A(t)``, ``B(t)``).

    Parameters
    ----------
    model:
        A :class:`derive.model.Model` (e.g. ``load_model("sir")``).
    params:
        Parameter name -> value (strings parsed exactly).
    start:
        The deterministic initial state ``s0`` in the model's coordinates (a
        sequence or ``"x1,x2,..."``); ``None`` is the model's reference point.
        It must lie in the model's state space and fixes the conserved values.
    times:
        Non-decreasing times ``>= 0``.
    order:
        0 (``x``), 1 (also ``V``, ``W``; default) or 2 (also ``A``, ``B``).
    dps:
        ``None`` for the float64 route; an integer ``>= 5`` for the mpmath route
        (orders 0 and 1, at most :data:`MP_MAX_N` free coordinates) with
        ``dps`` digits earned by two working precisions.
    method:
        ``solve_ivp`` method of the float64 route (one of :data:`METHODS`).
    rtol, atol:
        Local error tolerances of the float64 route.

    Returns
    -------
    TransientResult
        Everything in the model's own coordinates.
    """
    from numeric.precision import check_dps

    order = _check_order(order)
    times = check_times(times)
    if dps is not None:
        dps = check_dps(dps)
        if order == 2:
            raise ParameterError(
                "order must be 0 or 1 on the mpmath route (dps); order 2 runs in float64 "
                "(omit dps)."
            )
    if method not in METHODS:
        raise ParameterError(f"method must be one of {', '.join(METHODS)}, got {method!r}.")
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if not (isinstance(tol, int | float) and 0 < tol < 1):
            raise ParameterError(f"{name} must be a number in (0, 1), got {tol!r}.")
    st = _Setup(model, params, start)
    notes = st.notes()
    digits = None
    if dps is None:
        limit = ORDER2_MAX_N if order == 2 else FLOAT_MAX_N
        if st.n > limit:
            raise ParameterError(
                f"the float64 transient of order {order} handles at most {limit} free "
                f"coordinates; model {st.model.name} has {st.n}."
            )
        out, method = _float64(st, times, order, method, rtol, atol)
        route = "float64"
        notes.append(
            f"float64: solve_ivp {method}, rtol = {rtol:g}, atol = {atol:g} (local error "
            "control; expect a global error of a few rtol relative to the largest entry, "
            "no digits claimed)."
        )
    else:
        out, digits, (wp1, wp2) = _mpmath(st, times, order, dps)
        route, method = "mpmath", "taylor"
        notes.append(
            f"mpmath: odefun (Taylor) at {wp1} and {wp2} digits; they agree on "
            f"{digits} significant digits (norm-wise over all times and entries)."
        )
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
        method=method,
    )
