"""Exact stationary distribution of the finite-N chain of *any* model, and its moments.

``solve(model, N, params, *, start=None)`` solves the chain that jumps
``n -> n + l`` at rate ``N beta_l(n / N)`` on the states reachable from the
start (Section 3 of "Beyond Scaling: Calculable Error Bound of the
Power-of-Two-Choices Mean-Field Model in Heavy-Traffic"), for every model
of :mod:`derive.models` and every user model:

1. **Lattice** (:mod:`numeric.exact.lattice`): bounds from the declared state
   space, the start (``start`` in fractions, else the model's reference point,
   else the origin) times ``N`` rounded consistently with the conservation laws,
   the reachable states found by a compiled breadth-first search that
   evaluates every intensity exactly where float64 is ambiguous.  An upper
   bound on the number of states and the memory limit are known before any
   array grows; beyond the limit the solve is refused with one sentence.
2. **Uniqueness**: the strongly connected components of the transition graph
   are computed; a chain with more than one closed class has no unique
   stationary law and is refused (transient states are allowed and get
   probability zero).
3. **Balance equations** ``pi Q = 0``, ``sum pi = 1``: sparse LU with
   iterative refinement, or preconditioned BiCGSTAB / GMRES
   (:mod:`numeric.exact.solvers`); if the relative residual
   ``||pi Q||_1 / max_i q_i`` is above the tolerance, the next method is tried,
   and if none reaches it :class:`mfstein.errors.NumericalError` is raised:
   **a result is never returned with a residual above the tolerance**.
4. **Statistics**, centred at the mean-field fixed point ``s*`` of
   :func:`numeric.solve` for the same parameters and the same values of the
   conservation laws: ``E[S]``, ``N (E[S] - s*)`` (tends to the refined bias
   ``V``: ``E[S] = s* + V/N + A/N^2 + ...``, N. Gast and B. Van Houdt, "A
   Refined Mean Field Approximation"), ``N Cov(S)`` (tends to ``W``),
   ``N E||S - s*||^2`` (tends to Theorem 1's ``c = tr(W)``), the marginal
   pmfs ``P(n_k = j)``, and for the queueing models the queue-length pmf,
   the mean number of jobs and the blocking probability.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from mfstein.errors import NumericalError, ParameterError, check_int

# Imported here, not lazily: binding the submodule numeric.exact.solve to the package
# must happen before the package binds this module's ``solve`` (numeric.exact.solve is
# then the function; see numeric/exact/__init__.py).
from numeric.exact.result import ExactResult
from numeric.exact.solve import bytes_per_state, memory_limit_bytes

#: Default tolerance on the relative residual ``||pi Q||_1 / max_i q_i``.
TOL = 1e-10
#: Sparse LU is tried first up to this many states (any dimension) ...
DIRECT_MAX_STATES = 5000
#: ... and up to this many when at most two coordinates are free (planar lattices
#: factor with little fill).
DIRECT_MAX_PLANAR = 400_000
#: Digits of the mean-field solution used as the centre.
DPS = 20
#: Values of ``route`` (:func:`solve`).
ROUTES = ("auto", "general", "fast")


def _param_text(v: Any) -> str:
    if isinstance(v, float):
        return repr(v)
    return str(v).strip()


def prepare(
    model: Any, N: int, params: Mapping[str, Any] | None
) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """Check the model, ``N`` and the parameters; fill ``N`` for N-dependent models.

    Returns ``(model, params, values)`` with ``values`` the parsed ``mpf``
    parameters (declared ranges enforced, so ``N < d`` without replacement is
    refused here with the model's own sentence).
    """
    import mpmath

    from derive.model import Model
    from derive.spec import Truncated
    from numeric.model_params import check_names, parse_params

    if isinstance(model, Truncated):
        raise ParameterError(
            f"model {model.name} has infinite buffers (an unbounded state space) and no "
            "truncation for the finite-N chain; give a finite buffer (e.g. b=20)."
        )
    if not isinstance(model, Model):
        raise ParameterError(f"model must be a derive.Model, got {type(model).__name__}.")
    N = check_int("N", N, 1)
    given = dict(params or {})
    names = [str(q) for q in model.params]
    if "N" in names:
        if "N" in given and str(given["N"]).strip() != str(N):
            raise ParameterError(
                f"the parameter N of model {model.name} must equal the lattice size N = {N}, "
                f"got {given['N']!r}."
            )
        given["N"] = N
    given = check_names(model, given)
    with mpmath.workdps(30):
        values = parse_params(model, given)
    return model, given, values


def _closed_classes(S: int, rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, int]:
    """Labels of the closed communicating classes (``-1`` for transient states) and
    their number."""
    import scipy.sparse as sps
    from scipy.sparse.csgraph import connected_components

    A = sps.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(S, S))
    n, labels = connected_components(A, directed=True, connection="strong")
    leaving = np.zeros(n, dtype=bool)
    cross = labels[rows] != labels[cols]
    leaving[labels[rows[cross]]] = True
    closed = np.flatnonzero(~leaving)
    out = np.full(S, -1, dtype=np.int64)
    for c, lab in enumerate(closed):
        out[labels == lab] = c
    return out, int(closed.shape[0])


def _direct(QT: Any, r: int, qmax: float, tol: float) -> tuple[np.ndarray, float]:
    """Sparse LU on the pinned system with up to four steps of iterative refinement."""
    import scipy.sparse.linalg as spla

    from numeric.exact.solvers import _normalise, _pinned, residual

    A = _pinned(QT, r).tocsc()
    lu = spla.splu(A)
    rhs = np.zeros(QT.shape[0])
    rhs[r] = 1.0
    x = lu.solve(rhs)
    pi = _normalise(x)
    res = residual(QT, pi)
    for _ in range(4):
        if res <= tol * qmax:
            break
        x = x + lu.solve(rhs - A @ x)
        cand = _normalise(x)
        cres = residual(QT, cand)
        if not cres < res:
            break
        pi, res = cand, cres
    return pi, res


def stationary_checked(
    QT: Any,
    r: int,
    *,
    free_dims: int,
    method: str = "auto",
    tol: float = TOL,
    x0: np.ndarray | None = None,
    progress: bool = False,
) -> tuple[np.ndarray, float, str, int, list[str]]:
    """``pi`` with ``||pi Q||_1 <= tol * max_i q_i``, trying methods in turn.

    ``"auto"`` tries sparse LU first for small or planar chains, then
    BiCGSTAB, then GMRES (and LU last if it was not first and the chain is not
    too large).  ``x0`` is the iterative solvers' start (a guess of ``pi``, e.g.
    :func:`numeric.exact.solvers.gaussian_start`).  Returns ``(pi, residual,
    method, iterations, notes)``.

    Raises
    ------
    NumericalError
        When no method reaches the tolerance (naming the best residual).
    """
    from numeric.exact.solvers import solve_krylov
    from numeric.precision import limited_blas

    S = QT.shape[0]
    qmax = float(-QT.diagonal().min()) if S else 0.0
    if S == 1 or qmax == 0.0:
        return np.ones(S) / S, 0.0, "trivial", 0, []
    small = S <= DIRECT_MAX_STATES or (free_dims <= 2 and S <= DIRECT_MAX_PLANAR)
    if method == "auto":
        order = ["direct", "bicgstab", "gmres"] if small else ["bicgstab", "gmres"]
        if not small and (free_dims <= 2 or S <= 20 * DIRECT_MAX_STATES):
            order.append("direct")  # the last resort: slow, but exact up to rounding
    else:
        order = [method]
    best: tuple[np.ndarray, float, str, int] | None = None
    notes: list[str] = []
    with limited_blas():
        for m in order:
            try:
                if m == "direct":
                    pi, res = _direct(QT, r, qmax, tol)
                    it = 0
                else:
                    sol = solve_krylov(QT, r, solver=m, tol=tol * qmax, x0=x0, progress=progress)
                    pi, res, it = sol.pi, sol.residual, sol.iterations
            except (MemoryError, RuntimeError) as exc:
                notes.append(f"{m} failed ({type(exc).__name__}); trying the next method")
                continue
            if not np.isfinite(res):
                continue
            if best is None or res < best[1]:
                best = (pi, res, m, it)
            if res <= tol * qmax:
                if m != order[0]:
                    notes.append(f"{order[0]} missed the tolerance; {m} reached it")
                return pi, res, m, it, notes
            notes.append(f"{m} reached relative residual {res / qmax:.1e} only")
    got = "no finite residual" if best is None else f"{best[1] / qmax:.2e}"
    raise NumericalError(
        f"the balance equations of this chain ({S:,} states) reached a relative residual "
        f"||pi Q||_1 / max q = {got}, above the tolerance {tol:.0e} (methods tried: "
        f"{', '.join(order)}); no result is returned."
    )


_LIMITS: dict[Any, Any] = {}


def limit_model(model: Any) -> Any:
    """The ``N -> infinity`` limit of an N-dependent model: every intensity replaced by
    its limit (e.g. ``C(N x, d) / C(N, d) -> x^d``), ``N`` removed from the parameters."""
    hit = _LIMITS.get(model.key)
    if hit is None:
        hit = _LIMITS[model.key] = _limit_model(model)
    return hit


def _limit_model(model: Any) -> Any:
    import dataclasses

    import sympy as sp

    from derive.model import Model, Transition
    from derive.model import N as N_SYM

    transitions = [
        Transition(t.jump, sp.simplify(sp.limit(t.rate, N_SYM, sp.oo)), t.label)
        for t in model.transitions
    ]
    info = dataclasses.replace(
        model.info,
        parameters=tuple(p for p in model.info.parameters if p.name != "N"),
        fast_path=None,
    )
    params = [q for q in model.params if q != N_SYM]
    return Model(f"{model.name}-limit", model.states, params, transitions, info=info)


def _mean_field(
    model: Any, params: Mapping[str, Any], start: np.ndarray, N: int, laws: bool, given: bool
) -> tuple[Any, str | None]:
    """The mean-field solution used as the centre (same law values as the chain), and a
    note when it is the ``N -> infinity`` fallback of an N-dependent model."""
    import numeric

    frac = None if not laws and not given else [str(Fraction(int(v), N)) for v in start]
    try:
        return numeric.solve(model, params, dps=DPS, start=frac), None
    except ParameterError as exc:
        if "N" not in [str(q) for q in model.params]:
            raise
        lim = limit_model(model)
        rest = {k: v for k, v in params.items() if k != "N"}
        note = f"{exc} Statistics are centred at the N -> infinity mean field instead."
        return numeric.solve(lim, rest, dps=DPS, start=frac), note


@dataclass
class Chain:
    """The finite-N chain of a model on its lattice, before and after solving.

    :meth:`setup` checks the input and fixes the lattice, the start and the
    memory bound (nothing large allocated); :meth:`solve` finds the reachable
    states, checks that there is one closed class, assembles ``Q^T`` and solves
    the balance equations to the tolerance (:func:`stationary_checked`).  Used
    by :func:`solve` and by :func:`numeric.exact.solve._solve_chain`.
    """

    model: Any
    N: int
    params: dict[str, Any]
    values: dict[str, Any]
    kern: Any
    exact: Any
    p64: np.ndarray
    lattice: Any
    start: np.ndarray
    max_states: int
    notes: list[str]
    #: the last solve (centre key, reach, Q^T, classes, exit rates, pinned state, pi)
    last: Any = field(default=None, repr=False)

    @classmethod
    def setup(
        cls,
        model: Any,
        N: int,
        params: Mapping[str, Any] | None,
        start: Sequence[Any] | str | None,
        truncation: Any,
        memory_limit: float | None,
    ) -> Chain:
        import mpmath

        from numeric.exact.lattice import ExactRates, make_lattice, round_to_lattice
        from numeric.general import start_point

        model, given, values = prepare(model, N, params)
        N = int(N)
        kern = model.kernels("numba")
        b, nt = model.b, int(kern.jumps.shape[0])
        with mpmath.workdps(30):
            s0 = start_point(model, start, values)
        p64 = np.array([float(values[str(q)]) for q in model.params])
        exact = ExactRates(model, given)
        if all(f is not None for f in exact.fractions):
            p64 = np.array([float(f) for f in exact.fractions])
        lattice = make_lattice(model, N, truncation)
        n0 = round_to_lattice(lattice, [Fraction(mpmath.nstr(v, 25)) for v in s0])
        per_state = bytes_per_state(b, nt) + 8 * nt + 40
        max_states = max(1, memory_limit_bytes(memory_limit) // per_state)
        notes = list(lattice.notes)
        if lattice.truncated:
            notes.append(f"truncated at n_k <= {lattice.upper} (jumps above are blocked)")
        return cls(model, N, given, values, kern, exact, p64, lattice, n0, max_states, notes)

    def solve(
        self,
        centre: np.ndarray,
        method: str,
        tol: float,
        progress: bool,
        spread: np.ndarray | None = None,
    ) -> tuple[Any, np.ndarray, float, str, int, np.ndarray]:
        """``(reach, pi, residual, method, iterations, exit_rate)``; the balance
        equation of the recurrent state nearest ``centre`` (counts) is pinned.
        ``spread``, the mean field's ``W``, gives the iterative solvers a
        Gaussian start around ``centre`` (:func:`~numeric.exact.solvers.gaussian_start`)."""
        from numeric.exact.solvers import gaussian_start

        key = tuple(np.asarray(centre, dtype=np.float64).tolist())
        if self.last is not None and self.last[0] == key:
            # asked again (a tighter target): the same chain, from the last answer
            _, reach, QT, classes, exit_rate, r, x0 = self.last
        else:
            reach, QT, classes, exit_rate, r = self._assemble(centre)
            x0 = None
            if spread is not None:
                x0 = gaussian_start(reach.states, centre, self.N, spread)
                if x0 is not None:
                    x0[classes != 0] = 0.0  # transient states have probability 0
                    if not x0[r] > 1e-200:
                        x0 = None
        pi, res, used, iters, more = stationary_checked(
            QT,
            r,
            free_dims=len(self.lattice.free),
            method=method,
            tol=tol,
            x0=x0,
            progress=progress,
        )
        self.notes += more
        self.last = (key, reach, QT, classes, exit_rate, r, pi)
        return reach, pi, res, used, iters, exit_rate

    def _assemble(self, centre: np.ndarray) -> tuple[Any, Any, np.ndarray, np.ndarray, int]:
        """Reachable states, ``Q^T``, closed classes, exit rates and the pinned state
        (the recurrent state nearest ``centre``)."""
        import scipy.sparse as sps

        from numeric.exact.lattice import reachable

        bound = self.lattice.bound(self.model.b)
        reach = reachable(
            self.kern, self.exact, self.lattice, self.p64, self.start,
            min(self.max_states, max(bound, 1)),
        )  # fmt: skip
        S = reach.states.shape[0]
        classes, n_closed = _closed_classes(S, reach.rows, reach.cols)
        if n_closed != 1:
            ex = [
                tuple(int(x) for x in reach.states[np.flatnonzero(classes == c)[0]]) for c in (0, 1)
            ]
            raise ParameterError(
                f"the chain from {tuple(int(x) for x in self.start)} has {n_closed} closed "
                f"classes (e.g. states {ex[0]} and {ex[1]}), so its stationary law is not "
                "unique; change the parameters or the start."
            )
        if (classes < 0).any():
            self.notes.append(f"{int((classes < 0).sum())} transient states (probability 0)")
        indptr = np.zeros(S + 1, dtype=np.int64)
        np.cumsum(np.bincount(reach.rows, minlength=S), out=indptr[1:])
        off = sps.csr_matrix((reach.vals, reach.cols, indptr), shape=(S, S))
        exit_rate = np.asarray(off.sum(axis=1)).ravel()
        QT = (off.T - sps.diags(exit_rate)).tocsr()
        QT.sort_indices()
        # pin the balance equation of a probable recurrent state
        recurrent = np.flatnonzero(classes == 0)
        dist = ((reach.states[recurrent] - centre) ** 2).sum(axis=1)
        r = int(recurrent[np.argmin(dist)])
        return reach, QT, classes, exit_rate, r


def solve(
    model: Any,
    params: Mapping[str, Any] | None,
    *,
    N: int,
    start: Sequence[Any] | str | None = None,
    truncation: Any = None,
    route: str = "auto",
    method: str = "auto",
    tol: float | None = None,
    memory_limit: float | None = None,
    progress: bool = False,
) -> ExactResult:
    """Exact stationary distribution of the finite-N chain of ``model`` and its moments.

    The one implementation of the exact task.  A model whose family registered
    an exact fast path (:mod:`numeric.exact.fast_paths`; the supermarket's,
    :func:`numeric.exact.solve.supermarket_fast`, on its monotone space) is solved
    by it when ``route`` is ``"auto"`` and neither ``start`` nor ``truncation``
    is given; otherwise the general chain below runs.

    Parameters
    ----------
    model:
        A :class:`derive.model.Model`, or a name :func:`derive.models.load_model`
        takes (``"sir"``, ``"file.py:factory"``; entries of ``params`` that are
        factory keywords build it).
    params:
        Parameter name -> value (strings are parsed exactly; ``{}`` for none).
    N:
        Population size (number of servers), ``N >= 1``; for models with an
        ``N`` parameter (sampling without replacement) it is filled in, and the
        model's range for it (e.g. ``N >= d``) is enforced.
    start:
        Initial state in fractions (as in :func:`numeric.solve`); ``N start``
        rounded to the lattice gives the start of the reachability search and
        the values of the conservation laws.  Default: the model's reference
        point, else the origin.
    truncation:
        For unbounded state spaces: keep ``n_k <= floor(N truncation)`` (jumps
        above are blocked).
    route:
        ``"auto"`` (the family's fast path when it has one and can honour the
        call, else the general chain), ``"general"`` (always the general chain)
        or ``"fast"`` (the fast path, refused with one sentence when there is
        none for this model or call).
    method:
        The linear solver: ``"auto"``, ``"direct"``, ``"bicgstab"`` or ``"gmres"``.
    tol:
        Tolerance on ``||pi Q||_1 / max_i q_i``, in ``(0, 1e-3]`` (default
        :data:`TOL`).  The supermarket's fast path meets it on the absolute
        residual ``||pi Q||_1`` (default ``1e-11``), which is stricter there
        (``max_i q_i >= N``).
    memory_limit:
        Bytes the solve may plan to use (default: half the available memory).
    progress:
        Show solver progress on standard error.

    Returns
    -------
    ExactResult

    Raises
    ------
    ParameterError
        Bad input (one sentence): unknown or out-of-range parameters, a start
        outside the state space, ``N`` below the model's range, an unbounded
        state space without truncation, too many states for the memory limit,
        a chain without a unique stationary law, a negative intensity.
    NumericalError
        The balance equations could not be solved to the tolerance.
    """
    from numeric.exact.fast_paths import fast_path
    from numeric.exact.solvers import METHODS
    from numeric.refinement import to_float64

    t0 = time.perf_counter()
    if route not in ROUTES:
        raise ParameterError(f"route must be one of {', '.join(ROUTES)}, got {route!r}.")
    if method not in METHODS:
        raise ParameterError(f"method must be one of {', '.join(METHODS)}, got {method!r}.")
    if isinstance(model, str):
        from derive.models import as_model

        model, params = as_model(model, params)
    fast = fast_path(model) if route != "general" else None
    if fast is not None and start is None and truncation is None:
        r = fast(
            model, params, N=N, method=method, tol=tol, memory_limit=memory_limit,
            progress=progress,
        )  # fmt: skip
        if r is not None:
            return r
    if route == "fast":
        why = "a start or a truncation" if fast is not None else "this model"
        raise ParameterError(
            f"route='fast': the exact task has no fast path for {why} (model "
            f"{getattr(model, 'name', model)!r}); use route='auto' or 'general'."
        )
    if tol is None:
        tol = TOL
    if not (isinstance(tol, float | int) and 0 < tol <= 1e-3):
        raise ParameterError(f"tol must be a number in (0, 1e-3], got {tol!r}.")
    ch = Chain.setup(model, N, params, start, truncation, memory_limit)
    model, N, given, values, kern, lattice, n0 = (
        ch.model,
        ch.N,
        ch.params,
        ch.values,
        ch.kern,
        ch.lattice,
        ch.start,
    )
    b = model.b
    # the mean field first: it is cheap and its failure should cost nothing
    try:
        mf, note = _mean_field(model, given, n0, N, bool(lattice.laws), start is not None)
    except ParameterError as exc:
        # a finite chain has a stationary law even when the mean field's fixed point
        # is unstable (a limit cycle): answer it, without the statistics centred at s*
        if "is not stable" not in str(exc) and "not hyperbolic" not in str(exc):
            raise
        mf = None
        note = (
            f"{exc} The exact stationary law is reported; s*, V, W, c and the statistics "
            "centred at s* (n_bias, n_mse) are NaN."
        )
    if note:
        ch.notes.append(note)
    if mf is None:
        s_star = np.full(b, np.nan)
        W = None
        centre = np.asarray(n0, dtype=np.float64)
    else:
        s_star = np.array([float(v) for v in mf.s_star])
        W = to_float64(mf.W)
        centre = N * s_star
    reach, pi, res, used, iters, exit_rate = ch.solve(centre, method, tol, progress, W)
    notes = ch.notes
    S = reach.states.shape[0]
    qmax = float(exit_rate.max()) if S else 0.0
    X = reach.states / N
    mean = pi @ X
    centred = X - mean
    cov = (centred * pi[:, None]).T @ centred
    dev = X - s_star
    n_mse = N * float(pi @ np.einsum("ij,ij->i", dev, dev))
    marg = [
        np.bincount(reach.states[:, k], weights=pi, minlength=int(reach.states[:, k].max()) + 1)
        for k in range(b)
    ]
    up = kern.jumps.sum(axis=1) > 0
    up_rate = float(pi @ reach.rates[:, up].sum(axis=1)) if up.any() else 0.0
    pmf = mean_jobs = blocking = None
    if lattice.kind == "monotone":
        padded = np.concatenate([[1.0], mean, [0.0]])
        pmf = padded[:-1] - padded[1:]
        mean_jobs = float(mean.sum())
    arrival = model.structure("arrival")
    if arrival and arrival in given:
        blocking = 1.0 - up_rate / float(values[arrival])
    if reach.exact_states:
        notes.append(f"{reach.exact_states} states needed exact rate evaluation")
    return ExactResult(
        model=model.name,
        N=N,
        params={k: _param_text(v) for k, v in given.items()},
        b=b,
        states=S,
        residual=float(res),
        relative_residual=float(res / qmax) if qmax else 0.0,
        tolerance=float(tol),
        pi=pi,
        state_array=reach.states,
        start=[int(x) for x in n0],
        law_values=[str(v) for v in lattice.values],
        s_star=s_star,
        V=np.full(b, np.nan) if mf is None else np.array([float(v) for v in mf.V]),
        W=np.full((b, b), np.nan) if W is None else W,
        constant=float("nan") if mf is None else float(mf.constant),
        mean=mean,
        n_bias=N * (mean - s_star),
        n_mse=n_mse,
        n_cov=N * cov,
        marginal_pmf=marg,
        queue_length_pmf=pmf,
        mean_jobs=mean_jobs,
        blocking=blocking,
        up_rate=up_rate,
        seconds=time.perf_counter() - t0,
        method=used,
        iterations=iters,
        exact_states=reach.exact_states,
        notes=notes,
        source_model=model,
    )
