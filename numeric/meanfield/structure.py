"""Structure found from the model itself: sparse drift and Jacobian, a float64
fixed point by sparse solves, and the coordinates that are negligible there.

Nothing here is declared by a family: the jump matrix ``L`` and the sparsity of
``d beta / ds`` come from the transitions (:mod:`derive.sparse`), so
``f = L^T beta``, ``J = L^T (d beta/ds)`` and ``Q = L^T diag(beta) L`` are sparse
matrices whenever each rate involves few coordinates, and the fixed point is
found by the mean-field ODE (SciPy's BDF with the sparse Jacobian) polished by
Newton steps with a sparse LU (``scipy.sparse.linalg.splu``).

Negligible coordinates (docs/design.md, "Negligible coordinates").  A set ``D``
of free coordinates is dropped at the fixed point ``s*`` when, relative to the
largest state, rate and Jacobian entry,

* ``|s*_i| <= delta`` for ``i in D``,
* every transition that moves a coordinate of ``D`` has intensity ``<= delta``,
* ``|J_ij| <= delta`` for ``i in D``, ``j`` kept (the kept block drives the
  dropped one only through ``delta``),
* no conservation law involves a coordinate of ``D``.

Then ``Q_DD``, ``Q_DK`` and ``J_DK`` are ``O(delta)``: with them set to zero,
``J`` is block upper triangular, ``W`` and ``V`` vanish on ``D`` and their kept
blocks solve the kept block's own equations -- exactly the tail argument of the
supermarket model, made for any model.  A relative perturbation ``delta`` of
``J`` and ``Q`` moves the stable Lyapunov solutions by at most
``2 delta ||J|| ||X|| ||L^{-1}||`` (``||L^{-1}|| <= tr(P_I)``), which is how the
callers choose ``delta``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import mpmath
import numpy as np

from mfstein.ground.errors import NumericalError
from numeric.invariants import Reduction, reduction
from numeric.linalg.small import csr_product, solve_vector_quiet
from numeric.meanfield.acceptance import max_abs

if TYPE_CHECKING:  # SciPy's sparse matrices are imported where they are made: the
    # dense routes (the working precision's float64 search) never load them
    import scipy.sparse as sps

#: ODE horizons tried in turn by :func:`fixed_point64`.
HORIZONS = (10.0, 40.0, 160.0, 640.0, 2560.0, 10240.0)
#: The ODE search stops when ``max |s|`` exceeds this times ``max(1, max |start|)``.
RUNAWAY = 1e12
#: Up to this many free coordinates the fixed point's linear algebra is dense.
DENSE_MAX = 32


def linear_solver(dense: bool) -> Any:
    """``solve(A, b)`` for the implicit steps: LAPACK for dense ``A``
    (:func:`numeric.linalg.small.solve_vector_quiet`: every caller steps inside
    ``np.errstate(all="ignore")``), SuperLU for sparse; a singular ``A`` raises
    :class:`RuntimeError` either way."""
    if not dense:
        from scipy.sparse.linalg import splu

        return lambda A, b: splu(A.tocsc()).solve(b)

    def solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
        try:
            return solve_vector_quiet(A, b)  # the callers' steps run with warnings off
        except np.linalg.LinAlgError as exc:
            raise RuntimeError(str(exc)) from exc

    return solve


def _reduction(model: Any, sr: Any) -> Reduction:
    """The conservation laws of ``model``: none, without exact linear algebra, when
    every coordinate has a unit jump of its own (the jump matrix then has full
    column rank), else :func:`numeric.invariants.reduction` of the jump
    matrix ``L`` (read from ``sr``: no kernel module is generated for it)."""
    b = model.n
    rows, cols, vals = sr.jumps
    counts = np.bincount(rows, minlength=sr.n_transitions)
    unit = np.zeros(b, dtype=bool)
    single = counts[rows] == 1
    unit[cols[single & (np.abs(vals) == 1)]] = True
    if unit.all() and not model.info.conservation:
        return Reduction(b=b, laws=(), free=tuple(range(b)), dependent=())
    dense = np.zeros((sr.n_transitions, b), dtype=np.int64)
    dense[rows, cols] = vals
    return reduction(model, dense)


@dataclass
class SparseSystem:
    """A model's float64 drift, sparse Jacobian and diffusion at given parameters.

    ``shared`` holds what depends only on the model (``L^T``, the dense forms of
    small systems, the Hessian's layout), made once and shared by every system of
    the same model (:func:`prepared_system`)."""

    model: Any
    sr: Any
    p: np.ndarray
    red: Reduction
    L: sps.csr_matrix
    T: sps.csr_matrix  # b x n: ds/dx on the free coordinates
    shared: dict[str, Any] = field(default_factory=dict, repr=False)
    #: what depends on ``p`` too, made once for this system (the evaluation
    #: functions :meth:`jac_reduced_dense_of` and :meth:`_dbeta_dense_of` return)
    own: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(cls, model: Any, p: Sequence[float]) -> SparseSystem:
        """The system of ``model`` at the float64 parameter vector ``p``; what depends
        only on the model is prepared once per model key (:func:`prepared_system`)."""
        return prepared_system(model, p)

    def _shared(self, name: str, make: Any) -> Any:
        """The model-level object ``name``, made once for all systems of the model."""
        hit = self.shared.get(name)
        if hit is None:
            hit = self.shared[name] = make()
        return hit

    @property
    def LT(self) -> sps.csr_matrix:
        """``L^T`` in CSR, formed once per model."""
        return self._shared("LT", lambda: self.L.T.tocsr())

    @property
    def LT_times(self) -> Callable[[np.ndarray], np.ndarray]:
        """``x -> L^T x`` (:func:`numeric.linalg.small.csr_product`: the checks on
        ``L^T`` made once per model)."""
        return self._shared("LT_times", lambda: csr_product(self.LT))

    @property
    def T_dense(self) -> np.ndarray:
        """``T`` as a dense ``b x n`` array."""
        return self._shared("T_dense", lambda: self.T.toarray())

    def rates(self, s: np.ndarray) -> np.ndarray:
        return self.sr.rates(s, self.p)

    def f(self, s: np.ndarray) -> np.ndarray:
        """``f(s) = L^T beta(s)`` (``L^T`` in CSR formed once: the same sums in the
        same order as the transposed view, without rebuilding it per call)."""
        return self.LT_times(self.rates(s))

    def dbeta(self, s: np.ndarray) -> sps.csr_matrix:
        """``d beta / ds`` (transitions x b), sparse."""
        gi = self.sr.grad_index
        import scipy.sparse as sps

        return sps.csr_matrix((self.sr.grad(s, self.p), (gi[:, 0], gi[:, 1])), shape=self.L.shape)

    def jac(self, s: np.ndarray) -> sps.csr_matrix:
        """``J(s) = L^T d beta/ds``, sparse ``b x b``."""
        return (self.L.T @ self.dbeta(s)).tocsr()

    def Q(self, s: np.ndarray) -> sps.csr_matrix:
        """``Q(s) = L^T diag(beta) L``, sparse ``b x b``."""
        return self.Q_from_rates(self.rates(s))

    def Q_from_rates(self, rates: np.ndarray) -> sps.csr_matrix:
        """``Q = L^T diag(beta) L`` from evaluated rates (sparse ``b x b``)."""
        import scipy.sparse as sps

        return (self.L.T @ sps.diags(rates) @ self.L).tocsr()

    def _hess_gather(self) -> tuple[tuple[np.ndarray, np.ndarray], Any]:
        """For every nonzero-structure entry ``(n, j, k)`` of the rates' Hessian and
        every coordinate ``i`` the jump ``l_n`` moves: the entry's position, ``l_ni``,
        and ``(i, j, k)`` with the weight of ``1/2 sum_jk H_ijk W_jk`` over ``j <= k``."""
        rows, cols, vals = self.sr.jumps
        hi = np.asarray(self.sr.hess_index, dtype=np.int64).reshape(-1, 3)
        moves: dict[int, list[int]] = {}
        for pos, n in enumerate(rows.tolist()):
            moves.setdefault(n, []).append(pos)
        pairs = [(a, c) for a, n in enumerate(hi[:, 0].tolist()) for c in moves.get(n, [])]
        src = np.array([a for a, _ in pairs], dtype=np.int64)
        jump = np.array([c for _, c in pairs], dtype=np.int64)
        i, j, k = cols[jump], hi[src, 1], hi[src, 2]
        weight = np.where(j == k, 0.5, 1.0)
        return (src, vals[jump].astype(float)), ((i, j, k), weight)

    @property
    def hess_layout(self) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
        """``((i, j, k), weight)`` of the entries of :meth:`hess_values`."""
        return self._shared("hess", self._hess_gather)[1]

    def hess_values(self, s: np.ndarray) -> np.ndarray:
        """``l_ni d^2 beta_n/ds_j ds_k`` at ``s``, one per entry of :attr:`hess_layout`."""
        src, li = self._shared("hess", self._hess_gather)[0]
        return li * self.sr.hess(s, self.p)[src]

    # reduced coordinates -------------------------------------------------
    def laws64(self, s: np.ndarray) -> np.ndarray:
        return np.array(
            [sum(float(c) * s[j] for j, c in enumerate(row) if c) for row in self.red.laws]
        )

    def full(self, x: np.ndarray, q: np.ndarray) -> np.ndarray:
        """The full state from the free coordinates ``x`` and the conserved values
        ``q`` (each dependent coordinate summed over its law's free terms in order)."""

        def terms() -> Any:
            free = list(self.red.free)
            return (
                free,
                [
                    (d, [(j, float(row[j])) for j in free if row[j]])
                    for row, d in zip(self.red.laws, self.red.dependent, strict=True)
                ],
            )

        if not self.red.laws:  # every coordinate free, in order
            return np.array(x, dtype=float)
        free, law_terms = self._shared("law_terms", terms)
        s = np.zeros(self.red.b)
        s[free] = x
        for (d, row), qi in zip(law_terms, q, strict=True):
            s[d] = qi - sum(c * s[j] for j, c in row)
        return s

    def jac_reduced(self, s: np.ndarray) -> sps.csr_matrix:
        """``J_r = J[F, :] T`` (sparse ``n x n``)."""
        return self.reduce_jac(self.jac(s))

    def reduce_jac(self, J: sps.csr_matrix) -> sps.csr_matrix:
        """``J_r = J[F, :] T`` of an evaluated ``J`` (sparse ``n x n``)."""
        return (J[list(self.red.free), :] @ self.T).tocsr()

    def _dbeta_dense(self, s: np.ndarray) -> np.ndarray:
        """``d beta / ds`` (transitions x b) as a dense array."""
        return self._dbeta_dense_of()(s)

    def _dbeta_dense_of(self) -> Callable[[np.ndarray], np.ndarray]:
        """``s ->`` :meth:`_dbeta_dense` ``(s)`` with the model-level look-ups made once
        (the function made once for this system)."""
        hit = self.own.get("dbeta")
        if hit is None:
            hit = self.own["dbeta"] = self._make_dbeta_dense()
        return hit

    def _make_dbeta_dense(self) -> Callable[[np.ndarray], np.ndarray]:
        """The function of :meth:`_dbeta_dense_of`."""
        flat, at, distinct = self._shared("grad_places", self._grad_places)
        grad, p, shape = self.sr.evaluator("grad"), self.p, self.L.shape
        size = shape[0] * shape[1]

        def dbeta(s: np.ndarray) -> np.ndarray:
            if distinct:  # each entry once: the sum of one term
                D = np.zeros(size)
                D[flat] = grad(s, p)
                return D.reshape(shape)
            D = np.zeros(shape)
            np.add.at(D, at, grad(s, p))
            return D

        return dbeta

    def _grad_places(self) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray], bool]:
        """Where the entries of :meth:`SparseRates.grad` go in ``d beta / ds``: their
        row-major positions, their ``(row, column)`` arrays, and whether no position
        repeats (then each entry is written, else the entries are summed in order)."""
        gi = self.sr.grad_index
        at = (gi[:, 0], gi[:, 1])
        flat = at[0] * self.L.shape[1] + at[1]
        return flat, at, len(np.unique(flat)) == len(gi)

    def jac_reduced_dense(self, s: np.ndarray) -> np.ndarray:
        """``J_r = L^T[F, :] (d beta/ds) T`` as a dense array, for small systems
        (:data:`DENSE_MAX`), where SciPy's sparse bookkeeping costs more than the
        arithmetic."""
        return self.jac_reduced_dense_of()(s)

    def jac_reduced_dense_of(self) -> Callable[[np.ndarray], np.ndarray]:
        """``s ->`` :meth:`jac_reduced_dense` ``(s)`` with the model-level look-ups made
        once (a fixed-point search evaluates it at every step; the function made once
        for this system)."""
        hit = self.own.get("jac_reduced")
        if hit is None:
            hit = self.own["jac_reduced"] = self._make_jac_reduced_dense()
        return hit

    def _make_jac_reduced_dense(self) -> Callable[[np.ndarray], np.ndarray]:
        """The function of :meth:`jac_reduced_dense_of`."""
        LtF, T = self._shared(
            "dense", lambda: (self.L.T.toarray()[list(self.red.free), :], self.T.toarray())
        )
        dbeta = self._dbeta_dense_of()
        if not self.red.laws:  # T is the identity: the product is J itself
            return lambda s: LtF @ dbeta(s)
        return lambda s: LtF @ dbeta(s) @ T

    def jac_dense(self, s: np.ndarray) -> np.ndarray:
        """``J(s) = L^T d beta/ds`` as a dense ``b x b`` array (small systems)."""
        return self._shared("LT_dense", lambda: self.L.T.toarray()) @ self._dbeta_dense(s)

    def reduce_jac_dense(self, J: np.ndarray) -> np.ndarray:
        """``J_r = J[F, :] T`` of a dense evaluated ``J``."""
        if not self.red.laws:
            return J
        return J[list(self.red.free), :] @ self.T_dense

    def Q_dense(self, rates: np.ndarray) -> np.ndarray:
        """``Q = L^T diag(beta) L`` from evaluated rates, dense (small systems)."""
        LT = self._shared("LT_dense", lambda: self.L.T.toarray())
        return (LT * rates) @ self._shared("L_dense", lambda: self.L.toarray())


#: The model-level parts of :class:`SparseSystem` by model key and declared
#: conservation laws (this process).
_PREPARED: dict[Any, SparseSystem] = {}


def prepared_system(model: Any, p: Sequence[float]) -> SparseSystem:
    """``model``'s :class:`SparseSystem` at the float64 parameters ``p``: the sparse
    rate kernels (:func:`derive.sparse.sparse_rates`), the conservation laws, ``L``,
    ``T`` and the ``shared`` model-level objects are made once per model key (a
    digest of the transitions: any change to the model gives a new key) and reused;
    a new parameter vector costs nothing more."""
    key = (model.key, repr(model.info.conservation))  # the declared laws shape the reduction
    base = _PREPARED.get(key)
    if base is None:
        stored = getattr(model, "sparse_rates", None)  # read from disk (derive.models.stored)
        if stored is None:
            from derive.sparse import sparse_rates

            stored = partial(sparse_rates, model)
        sr = stored()
        import scipy.sparse as sps

        red = _reduction(model, sr)
        rows, cols, vals = sr.jumps
        L = sps.csr_matrix((vals, (rows, cols)), shape=(sr.n_transitions, model.n))
        if red.laws:
            T = sps.csr_matrix(np.array([[float(v) for v in row] for row in red.T()]))
        else:
            T = sps.identity(model.n, format="csr")
        base = _PREPARED[key] = SparseSystem(model, sr, np.zeros(0), red, L, T)
    # dataclasses.replace's copy, without its per-call look at the fields
    return SparseSystem(
        model, base.sr, np.asarray(p, dtype=float), base.red, base.L, base.T, base.shared
    )


def fixed_point64(
    system: SparseSystem,
    start: np.ndarray,
    *,
    near: bool = False,
    newton_only: bool = False,
    jac_start: np.ndarray | None = None,
    evaluated: dict[str, Any] | None = None,
) -> np.ndarray:
    """The fixed point reached from ``start`` (full coordinates), float64.

    ``near``: ``start`` is a neighbouring parameter point's fixed point (a sweep's
    continuation), so Newton's steps are tried first, alone; when they do not bring
    the drift below ``1e-8`` of the largest intensity the search below runs, or,
    with ``newton_only``, :class:`mfstein.ground.errors.NumericalError` is raised (the
    caller searches from its own start).

    The mean-field ODE on the invariant set of ``start``, followed by
    pseudo-transient continuation (:func:`pseudo_transient`) or, when that does
    not converge, integrated by BDF with the sparse reduced Jacobian (horizons
    :data:`HORIZONS` until ``||f|| < 1e-8``), then Newton steps solved by a
    sparse LU until the step is below ``1e-14`` relative to ``s`` (or ``J`` is
    singular).  Systems of at most
    :data:`DENSE_MAX` free coordinates use dense arrays and LAPACK instead of
    SciPy's sparse matrices and SuperLU (the same iteration, without the sparse
    bookkeeping that dominates small systems).  ``jac_start``: the reduced
    Jacobian at ``start`` when the caller has evaluated it (dense, read only).
    ``evaluated``: a dict that receives ``"rates"``, the rates at the returned
    point, when the search's last evaluation was there (Newton's steps from a
    neighbour end with the test of the drift at that point), and ``"f"``, the drift
    ``L^T beta`` there, when every coordinate is free (the full drift is then the
    one the test evaluated).
    """
    red = system.red
    free = list(red.free)
    q = system.laws64(start)
    # the free coordinates (all of them, in order, without a conservation law)
    x = np.array(start, dtype=float)[free] if red.laws else np.array(start, dtype=float)
    dense = len(free) <= DENSE_MAX
    solve = linear_solver(dense)

    last: list[Any] = [None, None]  # the state whose rates were evaluated last, and them
    last_f: list[Any] = [None, None]  # the state whose drift was evaluated last, and it
    fr, jr, scale, drift = _search_functions(system, q, dense, last, last_f)

    if near:
        with np.errstate(all="ignore"):
            y = newton_polish(lambda y: solve(jr(0, y), fr(0, y)), x)
            if np.isfinite(y).all() and max_abs(fr(0, y)) < (1e-8 * scale(y)):
                if newton_only:  # no trajectory kept the small coordinates near theirs
                    y = refine_small(lambda y: solve(jr(0, y), fr(0, y)), y)
                if evaluated is not None and last[0] == y.tobytes():
                    evaluated["rates"] = last[1]  # at system.full(y, q): the same numbers
                    if not red.laws and last_f[0] == last[0]:  # f = L^T beta, every
                        evaluated["f"] = last_f[1]  # coordinate free: the full drift
                return system.full(y, q)
        if newton_only:
            raise NumericalError(
                f"Newton's method for the fixed point of model {system.model.name} did not "
                "converge from the neighbouring fixed point."
            )
    ptc = pseudo_transient(fr, jr, x, scale, solve, J0=jac_start if dense else None, drift=drift)
    bound = RUNAWAY * max(1.0, max_abs(x))

    def runaway(t: float, y: np.ndarray) -> float:
        return bound - max_abs(y)

    runaway.terminal = True  # type: ignore[attr-defined]
    if ptc is None:  # SciPy's integrators only when pseudo-transient continuation failed
        from scipy.integrate import solve_ivp
    for horizon in HORIZONS if ptc is None else ():
        try:
            with np.errstate(all="ignore"):  # a non-finite step is reported below
                sol = solve_ivp(
                    fr,
                    (0.0, horizon),
                    x,
                    method="BDF",
                    jac=jr,
                    rtol=1e-7,
                    atol=1e-10,
                    events=runaway,
                )
        except ValueError as exc:  # LAPACK refuses a Jacobian with inf or NaN entries
            raise NumericalError(
                f"the mean-field ODE of model {system.model.name} could not be integrated "
                "from the start: its rates or Jacobian overflow float64 on the way "
                "(rates too large for the float64 route; try the default route)."
            ) from exc
        if sol.status == 1:
            raise NumericalError(
                f"the mean-field ODE of model {system.model.name} grows without bound from "
                f"the start (|s| > {bound:.3g} at t = {sol.t[-1]:.3g}): no fixed point is reached."
            )
        if not sol.success or not np.all(np.isfinite(sol.y[:, -1])):
            raise NumericalError(
                f"the mean-field ODE of model {system.model.name} could not be integrated "
                f"from the start ({sol.message})."
            )
        x = sol.y[:, -1]
        if max_abs(fr(0, x)) < 1e-8 * scale(x):
            break
    if ptc is not None:
        x = ptc
    return system.full(newton_polish(lambda y: solve(jr(0, y), fr(0, y)), x), q)


def _search_functions(
    system: SparseSystem,
    q: np.ndarray,
    dense: bool,
    last: list[Any] | None = None,
    last_f: list[Any] | None = None,
) -> tuple[Any, Any, Any, Any]:
    """``(fr, jr, scale, drift)`` of :func:`fixed_point64` on the invariant set with
    the conserved values ``q``: the drift and the reduced Jacobian on the free
    coordinates as functions ``(t, y)`` (dense arrays or CSC), ``max(1, max
    |beta(y)|)``, and ``y -> (fr(0, y), scale(y))`` from one evaluation of the rates
    (:func:`pseudo_transient`'s step, which meets each state once: no look-up of
    the last state).  The last state each was evaluated at is kept with its value:
    the drift and the scale of a state share one evaluation of the rates, and the
    last implicit step's drift and ``J`` are the first Newton step's (every caller
    only reads them).  ``last``, ``last_f``: the caller's lists that hold the last
    state's key (``y.tobytes()``) and rates, and the last drift's state and value."""
    red = system.red
    free = list(red.free)
    if last is None:
        last = [None, None]
    if last_f is None:
        last_f = [None, None]
    last_j: list[Any] = [None, None]
    every = not red.laws  # every coordinate free, in order: no selection needed
    times = system.LT_times  # f = L^T beta, the checks on L^T made once
    rate_of, p = system.sr.evaluator("rates"), system.p  # system.rates, looked up once
    jac_dense = system.jac_reduced_dense_of() if dense else None
    # the full state of y: y itself when every coordinate is free (the evaluations
    # below only read it; system.full would copy it)
    full = (lambda y: y) if every else (lambda y: system.full(y, q))
    # each function computes y's key once and hands it to the shared rates

    def rates(y: np.ndarray, key: bytes) -> np.ndarray:  # key: y.tobytes()
        if last[0] != key:
            last[:] = [key, rate_of(y if every else full(y), p)]
        return last[1]

    def drift_at(y: np.ndarray, key: bytes) -> np.ndarray:
        if last_f[0] != key:
            f = times(rates(y, key))
            last_f[:] = [key, f if every else f[free]]
        return last_f[1]

    def fr(t: float, y: np.ndarray) -> np.ndarray:
        return drift_at(y, y.tobytes())

    def jr(t: float, y: np.ndarray) -> Any:
        if jac_dense is None:
            return system.jac_reduced(full(y)).tocsc()
        key = y.tobytes()
        if last_j[0] != key:
            last_j[:] = [key, jac_dense(y if every else full(y))]
        return last_j[1]

    def scale(y: np.ndarray) -> float:
        return max(1.0, max_abs(rates(y, y.tobytes())))

    def drift(y: np.ndarray) -> tuple[np.ndarray, float]:
        key = y.tobytes()  # once for both: the drift and the scale share the rates
        return drift_at(y, key), max(1.0, max_abs(rates(y, key)))

    return fr, jr, scale, drift


#: Newton polish: at most this many steps (a root where ``J`` is singular is
#: approached only linearly, each step a fixed fraction of the distance).
POLISH_STEPS = 2000
#: The first steps are taken even when they grow (a start not yet in the basin).
POLISH_FREE_STEPS = 5


def newton_polish(step_at: Any, x0: np.ndarray) -> np.ndarray:
    """Newton steps ``x <- x - step_at(x)`` until a step is below ``1e-14`` relative
    to ``x`` (relative: a fixed point near 0 is resolved to its own size), a step
    grows after the first :data:`POLISH_FREE_STEPS` (round-off reached, or no root
    here: the callers' checks judge the point) or ``step_at`` finds ``J`` singular
    (:class:`RuntimeError`)."""
    return _newton_steps(
        step_at,
        x0,
        POLISH_STEPS,
        POLISH_FREE_STEPS,
        lambda size, step, x: size <= 1e-14 * max_abs(x),
    )


#: :func:`refine_small`: at most this many further Newton steps.
REFINE_STEPS = 10


def refine_small(step_at: Any, x0: np.ndarray) -> np.ndarray:
    """Newton steps after :func:`newton_polish` from a neighbour's fixed point, until
    every coordinate's step is below ``1e-14`` relative to that coordinate (or 0):
    :func:`newton_polish` stops when the step is small relative to the largest
    coordinate, which leaves coordinates many orders smaller than it (a queue's
    far tail) at the distance the neighbour's values had, possibly of the wrong
    sign; while the steps keep shrinking (at most :data:`REFINE_STEPS`) they are
    resolved to their own size.  A step that does not shrink is not taken."""
    return _newton_steps(
        step_at,
        x0,
        REFINE_STEPS,
        0,
        lambda size, step, x: bool(np.all(np.abs(step) <= 1e-14 * np.abs(x))),
    )


def _newton_steps(step_at: Any, x0: np.ndarray, limit: int, free: int, done: Any) -> np.ndarray:
    """At most ``limit`` steps ``x <- x - step_at(x)``: stop when ``step_at`` finds ``J``
    singular (:class:`RuntimeError`), a step is not finite or, after the first ``free``
    steps, does not shrink (not taken), or ``done(size, step, x)`` holds after the step
    (``size``: the step's largest entry)."""
    x = np.array(x0, dtype=float)
    prev = np.inf
    with np.errstate(all="ignore"):
        for k in range(limit):
            try:
                step = step_at(x)
            except RuntimeError:
                break
            size = max_abs(step)
            if not math.isfinite(size) or (k >= free and size >= prev):
                break
            x = x - step
            if done(size, step, x):
                break
            prev = size
    return x


#: Pseudo-transient continuation: at most this many implicit Euler steps.
PTC_STEPS = 200
#: The first step times the largest Jacobian entry: ``h |J| = 1`` still follows the
#: fastest mode (implicit Euler damps it, does not overshoot), and the steps grow
#: from there (SIR: 12 steps where ``h |J| = 0.1`` took 121).
PTC_FIRST_STEP = 1.0


def pseudo_transient(
    fr: Any, jr: Any, x0: np.ndarray, scale: Any, solve: Any, J0: Any = None, drift: Any = None
) -> np.ndarray | None:
    """Follow the mean-field ODE from ``x0`` by implicit Euler steps
    ``(I/h - J) dx = f`` whose length ``h`` grows as the drift falls (switched
    evolution relaxation, ``h_(k+1) = h_k ||f_k|| / ||f_(k+1)||``), so that the
    iteration tracks the trajectory while it moves and becomes Newton's method
    near the fixed point.  ``None`` when it has not reached ``||f|| < 1e-8`` of
    the largest intensity within :data:`PTC_STEPS` steps, or a step left the
    finite numbers (the caller then integrates with BDF).  ``jr`` gives dense or
    sparse matrices, ``solve`` solves with them (:func:`linear_solver`); ``J0``:
    ``jr(0, x0)`` when the caller has it; ``drift``: ``y -> (fr(0, y), scale(y))``
    when the caller evaluates both at once (the same numbers; each state's scale is
    then taken with its drift, not at the next step's start)."""
    x = np.array(x0, dtype=float)
    if drift is None:
        drift = partial(_drift_and_scale, fr, scale)
    f, size = drift(x)  # size: scale(x)
    J = jr(0, x) if J0 is None else J0
    norm = max_abs(f)
    dense = isinstance(J, np.ndarray)
    entries = J[J != 0] if dense else J.data
    jmax = max_abs(entries) if entries.size else 1.0
    h = PTC_FIRST_STEP / max(jmax, 1e-300)
    if dense:
        ident = np.eye(x.size)
    else:
        import scipy.sparse as sps

        ident = sps.identity(x.size, format="csc")
    with np.errstate(all="ignore"):
        for _ in range(PTC_STEPS):
            if norm < 1e-8 * size:
                return x
            try:
                dx = solve(ident / h - J, f)
            except RuntimeError:  # singular: shorten the step
                h /= 4
                continue
            y = x + dx
            g, size_y = drift(y)
            new = max_abs(g)  # NaN when an entry is NaN, inf when one is infinite
            if not math.isfinite(new):
                h /= 4
                continue
            h = min(h * max(norm / max(new, 1e-300), 0.25), 1e12)
            x, f, norm, size = y, g, new, size_y
            J = jr(0, x)
    return None


def _drift_and_scale(fr: Any, scale: Any, y: np.ndarray) -> tuple[np.ndarray, float]:
    """``(fr(0, y), scale(y))``: :func:`pseudo_transient`'s ``drift`` from its two
    functions."""
    return fr(0, y), scale(y)


#: ``a.any()`` of a 1-d boolean array, the ufunc reduction without the method's wrapper.
_ANY = np.logical_or.reduce
_MAX = np.maximum.reduce


def negligible(
    system: SparseSystem,
    s: np.ndarray,
    delta: float,
    *,
    J: Any = None,
    rates: Any = None,
    absJ: np.ndarray | None = None,
) -> list[int]:
    """The free coordinates that can be dropped at ``s`` with tolerance ``delta``
    (the four conditions of the module docstring), ascending; ``J`` and ``rates``:
    the Jacobian and the rates at ``s`` when the caller has evaluated them (``absJ``:
    ``|J|`` of a dense ``J``, when taken)."""
    b = system.model.n
    red = system.red
    dense = isinstance(J, np.ndarray) and absJ is not None
    if dense and _short64(s, SHORT) and _short64(rates, 4 * SHORT):
        return _negligible_short(system, s.tolist(), delta, rates.tolist(), absJ)
    rates = np.abs(system.rates(s) if rates is None else rates)
    rmax = max(max_abs(rates), 1e-300)  # (0 without rates)
    smax = max(1.0, max_abs(s))
    cand = np.abs(s) <= delta * smax
    for row in red.laws:
        for j, c in enumerate(row):
            if c:
                cand[j] = False
    for j in red.dependent:
        cand[j] = False
    if not _ANY(cand):  # nothing small enough: the other conditions only remove
        return []
    # coordinates moved by a transition with a non-negligible intensity
    big = rates > delta * rmax
    moved = np.zeros(b, dtype=bool)
    rows, cols, _ = system.sr.jumps
    moved[cols[big[rows]]] = True
    cand &= ~moved
    if not _ANY(cand):  # every candidate is moved: the coupling test only removes
        return []
    J = system.jac(s) if J is None else J
    if isinstance(J, np.ndarray):  # dense (a small system)
        if absJ is None:  # max_abs(J)'s reduction on |J| taken once for both uses
            absJ = np.abs(J)
        jmax = max(float(_MAX(absJ, axis=None)) if J.size else 0.0, 1e-300)
        ii, jj = (absJ > delta * jmax).nonzero()
    else:
        J = J.tocoo()
        jmax = max(max_abs(J.data), 1e-300)
        strong = np.abs(J.data) > delta * jmax
        ii, jj = J.row[strong], J.col[strong]
    while True:  # drop only what the kept block drives at most through delta
        bad = cand[ii] & ~cand[jj]
        if not _ANY(bad):
            break
        cand[ii[bad]] = False
    return cand.nonzero()[0].tolist()


#: :func:`negligible` of a state of at most this many coordinates (with its rates and
#: ``|J|`` at hand) is computed on Python floats: the same comparisons, without the
#: fixed cost of about twenty NumPy calls on arrays of ten entries.
SHORT = 64


def _short64(x: Any, most: int) -> bool:
    """Whether ``x`` is a 1-d float64 NumPy array of at most ``most`` entries."""
    return type(x) is np.ndarray and x.ndim == 1 and x.dtype == np.float64 and x.shape[0] <= most


def _negligible_short(
    system: SparseSystem, s: list[float], delta: float, rates: list[float], absJ: np.ndarray
) -> list[int]:
    """:func:`negligible` of a short state ``s`` with its ``rates`` (Python floats) and
    ``|J|`` (dense): each test compares the same float64 numbers as the array form
    (a comparison is exact, and false with a NaN), so the same coordinates.  A NaN
    among the rates or in ``|J|`` makes the array form's largest entry NaN (no
    intensity is large, no coupling strong); here the rates' is read from their sum,
    NaN exactly when an entry is NaN (their absolute values have no ``-inf`` to meet
    an ``inf``), and ``|J|``'s largest entry and strong couplings are the array
    form's."""
    red = system.red
    r = list(map(abs, rates))
    rmax = max(_nan_or_max(r), 1e-300)  # max_abs of the rates (0 without rates)
    smax = max(1.0, _nan_or_max(list(map(abs, s))))
    small = delta * smax
    cand = [abs(v) <= small for v in s]
    for row in red.laws:
        for j, c in enumerate(row):
            if c:
                cand[j] = False
    for j in red.dependent:
        cand[j] = False
    if not any(cand):
        return []
    rows, cols = system._shared(
        "jump_lists", lambda: (system.sr.jumps[0].tolist(), system.sr.jumps[1].tolist())
    )
    big = delta * rmax
    for row, col in zip(rows, cols, strict=True):
        if r[row] > big:
            cand[col] = False
    if not any(cand):
        return []
    jmax = max(float(_MAX(absJ, axis=None)) if absJ.size else 0.0, 1e-300)
    ii, jj = (absJ > delta * jmax).nonzero()  # row-major
    edges = list(zip(ii.tolist(), jj.tolist(), strict=True))
    while True:  # the array form's loop: every row driven by a kept column, then dropped
        bad = [i for i, j in edges if cand[i] and not cand[j]]
        if not bad:
            break
        for i in bad:
            cand[i] = False
    return [j for j, c in enumerate(cand) if c]


def _nan_or_max(values: list[float]) -> float:
    """``max(values)`` of non-negative floats (0 for none), NaN when one is NaN: the
    value of NumPy's ``maximum`` reduction."""
    if not values:
        return 0.0
    total = sum(values)
    return total if total != total else max(values)


#: Restricted models by (model key, dropped coordinates) (this process).
_RESTRICTED: dict[tuple[Any, tuple[int, ...]], Any] = {}


def restricted_model(model: Any, dropped: Sequence[int]) -> Any:
    """``model`` with the coordinates ``dropped`` set to zero and removed: every rate
    with ``s_i = 0`` there, jumps restricted to the kept coordinates, transitions
    whose restricted jump or rate vanishes left out (made once per model key and
    set of dropped coordinates)."""
    key = (model.key, tuple(sorted(int(i) for i in dropped)))
    hit = _RESTRICTED.get(key)
    if hit is None:
        hit = _RESTRICTED[key] = _restrict(model, key[1])
    return hit


def _restrict(model: Any, dropped: Sequence[int]) -> Any:
    """The model of :func:`restricted_model`, built."""
    import sympy as sp

    from derive.model import Model, Transition
    from derive.spec import ModelInfo

    drop = set(dropped)
    kept = [i for i in range(model.n) if i not in drop]
    zero = {model.states[i]: 0 for i in drop}
    transitions = []
    for t in model.transitions:
        jump = tuple(t.jump[i] for i in kept)
        if not any(jump):
            continue
        rate = sp.sympify(t.rate).xreplace(zero)
        if rate == 0:
            continue
        transitions.append(Transition(jump, rate, t.label))
    info = model.info
    ref = info.reference
    if callable(ref):

        def reference(values: Any, _ref: Any = ref) -> list[Any]:
            full = list(_ref(values))
            return [full[i] for i in kept]

        new_ref: Any = reference
    else:
        new_ref = None if ref is None else [list(ref)[i] for i in kept]
    new_info = ModelInfo(
        parameters=info.parameters,
        state_space=info.state_space,
        reference=new_ref,
        citation=info.citation,
        unique_fixed_point=info.unique_fixed_point,
    )
    return Model(
        f"{model.name}[{len(kept)} of {model.n} coordinates]",
        tuple(model.states[i] for i in kept),
        tuple(model.params),
        transitions,
        info=new_info,
    )


def padded_residual(
    model: Any, kept: Sequence[int], s_kept: Sequence[Any], p: Sequence[Any]
) -> Any:
    """At the padded point (``s_kept`` on ``kept``, zero elsewhere), at the current
    mpmath precision: the largest intensity of a transition that moves a dropped
    coordinate and the largest ``|J_ij|``, ``i`` dropped, ``j`` kept -- each
    relative to the largest intensity and Jacobian entry -- i.e. ``delta`` of
    the module docstring, earned at working precision."""
    from derive.sparse import sparse_rates

    sr = sparse_rates(model)
    s = [mpmath.mpf(0)] * model.n
    for i, v in zip(kept, s_kept, strict=True):
        s[i] = v
    keep = set(kept)
    rates = sr.evaluator("rates", "mpmath")(s, p)
    grads = sr.evaluator("grad", "mpmath")(s, p)
    rows, cols, vals = sr.jumps
    rmax = max([abs(v) for v in rates] + [mpmath.mpf(10) ** -300])
    moving = set(rows[[c not in keep for c in cols.tolist()]].tolist())
    r_bad = max([abs(rates[n]) for n in moving] + [mpmath.mpf(0)]) / rmax
    # J_ij = sum_l L_li dbeta_l/ds_j
    jumps_of: dict[int, list[tuple[int, float]]] = {}
    for n, i, v in zip(rows.tolist(), cols.tolist(), vals.tolist(), strict=True):
        jumps_of.setdefault(n, []).append((i, v))
    J: dict[tuple[int, int], Any] = {}
    for (n, j), g in zip(sr.grad_index.tolist(), grads, strict=True):
        for i, li in jumps_of.get(n, []):
            J[(i, j)] = J.get((i, j), 0) + li * g
    jmax = max([abs(v) for v in J.values()] + [mpmath.mpf(10) ** -300])
    j_bad = max(
        [abs(v) for (i, j), v in J.items() if i not in keep and j in keep] + [mpmath.mpf(0)]
    )
    return max(r_bad, j_bad / jmax)
