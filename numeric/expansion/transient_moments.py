"""The moment equations of the transient expansion, written once over two back ends.

:class:`MomentSystem` is the right-hand side (and the float64 route's sparse
Newton matrix) of the triangular system of ODEs of
:mod:`numeric.expansion.transient` on the free coordinates ``x`` of the
reduction ``s = complete(x)``:

    dx/dt = f(x),
    dV/dt = J V + 1/2 H : W,
    dW/dt = J W + W J^T + Q(x),
    dC/dt = (J (+) J (+) J) C + D(x, V, W),
    dB/dt = J B + B J^T + G(x, V, W, C),
    dA/dt = J A + 1/2 H : B + 1/6 T3 : C + 1/24 T4 : E4(W),

with the derivative tensors of the drift and of ``Q`` contracted with ``T = ds/dx``
by exact rational maps (:func:`build_map`) from the generated kernels' values;
``D``, ``G`` and the ``A`` terms are the stationary solver's
(:func:`numeric.meanfield.stationary.assemble_D`,
:func:`numeric.meanfield.stationary.G_and_A_terms`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import permutations
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from numeric.expansion.transient_setup import TransientSetup

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
class MomentSystem:
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

    def __init__(self, st: TransientSetup, order: int, *, mp: bool = False) -> None:
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
