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
   evaluates every intensity exactly where float64 is ambiguous (a small chain:
   the same search one layer at a time in NumPy, :mod:`numeric.exact.small`, so
   that a first call loads no compiled code).  An upper
   bound on the number of states and the memory limit are known before any
   array grows; beyond the limit the solve is refused with one sentence.
2. **Uniqueness**: the strongly connected components of the transition graph
   are computed; a chain with more than one closed class has no unique
   stationary law and is refused (transient states are allowed and get
   probability zero).
3. **Balance equations** ``pi Q = 0``, ``sum pi = 1``: sparse LU with
   iterative refinement (:mod:`numeric.exact.pinned`), or preconditioned BiCGSTAB /
   GMRES (:mod:`numeric.exact.solvers`, imported only when one runs); if the relative residual
   ``||pi Q||_1 / max_i q_i`` is above the tolerance, the next solver is tried,
   and if none reaches it :class:`mfstein.ground.errors.NumericalError` is raised:
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
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

import numpy as np

from mfstein.ground import signals
from mfstein.ground.arguments import check_keywords, check_params, check_start, renamed_keywords
from mfstein.ground.errors import NumericalError, ParameterError
from mfstein.ground.limits import TRUNCATION_TOL
from mfstein.ground.read_only import ReadOnly
from numeric.exact import kept
from numeric.exact.fast_paths import fast_path
from numeric.exact.law_error import half_range, kept_system, remember_factor
from numeric.exact.memory import bytes_per_state, check_exact_N, memory_limit_bytes
from numeric.exact.pinned import METHODS, exit_rates
from numeric.exact.prepared import Placement, prepare
from numeric.exact.result import ExactResult
from numeric.meanfield.result_tasks import EXACT_TASKS

if TYPE_CHECKING:  # the truncation module is imported where a truncation is asked for
    from numeric.exact.truncation import Cut

#: Default tolerance on the relative residual ``||pi Q||_1 / max_i q_i``.
TOL = 1e-10
#: Sparse LU is tried first up to this many states (any dimension) ...
DIRECT_MAX_STATES = 5000
#: ... and up to this many when at most two coordinates are free (planar lattices
#: factor with little fill).
DIRECT_MAX_PLANAR = 400_000
#: Direct solves of at most this many states run without limiting BLAS threads
#: (:func:`mfstein.ground.blas.limited_blas`: threadpoolctl scans the loaded
#: libraries in a new process, some 10 ms, about a whole factorisation of SIR at
#: N = 100; SuperLU's supernodes there are too small for BLAS to start threads).
DIRECT_UNLIMITED = 20_000
#: Values of ``route`` (:func:`solve`).
ROUTES = ("auto", "general", "fast")


def _param_text(v: Any) -> str:
    if isinstance(v, float):
        return repr(v)
    return str(v).strip()


def _params_text(params: Mapping[str, Any]) -> dict[str, str]:
    """The parameters as a result prints them (a float by ``repr``, else ``str``)."""
    return {k: _param_text(v) for k, v in params.items()}


def _closed_classes(QT: Any, compiled: bool = True) -> tuple[np.ndarray, int]:
    """Labels of the closed communicating classes (``-1`` for transient states) and
    their number, from the transposed generator (CSR: row ``j``, column ``i`` is the
    jump ``i -> j``; reversing every edge keeps the strong components); the jumps
    between classes are found by a compiled loop, or by NumPy (``compiled=False``,
    :func:`numeric.exact.small.routines`).

    State 0 is the search's start, from which every state is reachable; so when
    every state reaches it too (one compiled search against the jumps,
    :func:`numeric.exact.assembly.all_reach`, or its NumPy twin
    :func:`numeric.exact.small.all_reach`) the chain is irreducible: one closed
    class, found without the strong components (at 5.6e6 states 0.2 s against 1.9 s;
    a small chain does not import :mod:`scipy.sparse.csgraph` for it).
    """
    from numeric.exact.small import routines

    S = QT.shape[0]
    tools = routines(compiled)
    if tools.all_reach(QT.indptr, QT.indices, 0):
        return np.zeros(S, dtype=np.int32), 1
    from scipy.sparse.csgraph import connected_components  # not for the check above

    n, labels = connected_components(QT, directed=True, connection="strong")
    out_of = tools.leaving(QT.indptr, QT.indices, labels, n)
    closed = np.flatnonzero(~out_of)
    out = np.full(S, -1, dtype=np.int32)
    for c, lab in enumerate(closed):
        out[labels == lab] = c
    return out, int(closed.shape[0])


def _direct(QT: Any, r: int, qmax: float, tol: float) -> tuple[np.ndarray, float]:
    """Sparse LU on the pinned system with up to four steps of iterative refinement."""
    from numeric.exact.pinned import factor, normalise, residual

    A, lu = factor(QT, r)
    remember_factor(QT, r, lu)  # the law's error estimate reads the same factor
    rhs = np.zeros(QT.shape[0])
    rhs[r] = 1.0
    x = lu.solve(rhs)
    pi = normalise(x)
    res = residual(QT, pi)
    for _ in range(4):
        if res <= tol * qmax:
            break
        x = x + lu.solve(rhs - A @ x)
        cand = normalise(x)
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
    solver: str = "auto",
    tol: float = TOL,
    x0: np.ndarray | Callable[[], np.ndarray | None] | None = None,
    progress: bool = False,
    atol: float | None = None,
) -> tuple[np.ndarray, float, str, int, list[str]]:
    """``pi`` with ``||pi Q||_1 <= tol * max_i q_i``, trying linear solvers in turn.

    ``"auto"`` tries sparse LU first for small or planar chains, then
    BiCGSTAB, then GMRES (and LU last if it was not first and the chain is not
    too large).  ``x0`` is the iterative solvers' start (a guess of ``pi``, e.g.
    :func:`numeric.exact.solvers.gaussian_start`), or a function making it, called
    by each iterative solver that runs (a direct solve never reads it), which keeps
    its best iterate in the start's buffer then: a vector of ``S`` floats less at the
    solve's peak (issue 34).  ``atol``, when given, is an
    absolute target the iterative solvers run to as well (``||pi Q||_1 <= min(tol
    max_i q_i, atol)``: one run, where asking again once ``max_i q_i`` is known
    restarted the Krylov space).  ``solver`` is ``"auto"`` or one linear solver
    (``"direct"``, ``"bicgstab"``, ``"gmres"``).  Returns ``(pi, residual, solver,
    iterations, notes)``, ``solver`` the one that reached the tolerance.

    Raises
    ------
    NumericalError
        When no solver reaches the tolerance (naming the best residual).
    """
    S = QT.shape[0]
    qmax = float(-QT.diagonal().min()) if S else 0.0
    if S == 1 or qmax == 0.0:
        return np.ones(S) / S, 0.0, "trivial", 0, []
    small = S <= DIRECT_MAX_STATES or (free_dims <= 2 and S <= DIRECT_MAX_PLANAR)
    if solver == "auto":
        order = ["direct", "bicgstab", "gmres"] if small else ["bicgstab", "gmres"]
        if not small and (free_dims <= 2 or S <= 20 * DIRECT_MAX_STATES):
            order.append("direct")  # the last resort: slow, but exact up to rounding
    else:
        order = [solver]
    best: tuple[np.ndarray, float, str, int] | None = None
    notes: list[str] = []
    limited = False
    with ExitStack() as blas:
        for m in order:
            signals.check()  # between solvers: a Ctrl-C a library lost is raised here
            if (m != "direct" or S > DIRECT_UNLIMITED) and not limited:
                from mfstein.ground.blas import limited_blas  # not for a small direct solve

                limited = bool(blas.enter_context(limited_blas()))  # from here on
            try:
                if m == "direct":
                    pi, res = _direct(QT, r, qmax, tol)
                    it = 0
                else:
                    from numeric.exact.solvers import solve_krylov

                    target = tol * qmax if atol is None else min(tol * qmax, atol)
                    sol = solve_krylov(QT, r, solver=m, tol=target, x0=x0, progress=progress)
                    pi, res, it = sol.pi, sol.residual, sol.iterations
            except (MemoryError, RuntimeError) as exc:
                notes.append(f"{m} failed ({type(exc).__name__}); trying the next solver")
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
        f"||pi Q||_1 / max q = {got}, above the tolerance {tol:.0e} (solvers tried: "
        f"{', '.join(order)}); no result is returned."
    )


#: Seconds of one core numba takes to compile the exact solver's search and solver
#: kernels on a first run (measured, empty cache against a warm one: ``exact --N 10
#: --lam 0.9 --b 3`` 7.6 s against 2.7 s, the SIR model at N = 10 4.6 s against 3.4 s).
COMPILE_SECONDS = 3.0


def _announce_compile(model: Any) -> None:
    """The one line of :func:`mfstein.ground.jit.announce_compile` before a first run of the
    exact solver's compiled code for ``model``: its generated kernel ``rates_into``,
    its generated rate loop (:mod:`numeric.exact.rate_blocks`) and the search
    (:func:`numeric.exact.lattice.explore`, compiled once per installation)."""
    from mfstein.ground import jit
    from numeric.exact.lattice import explore
    from numeric.exact.rate_blocks import rate_module

    kern = model.kernels("numba")
    seconds = jit.first_compile_seconds(
        COMPILE_SECONDS, kern.rates_into, rate_module(model).rates_block, explore
    )
    jit.announce_compile("the exact solver's kernels for this model", seconds)


class SolvedChain(ReadOnly):
    """The stationary law of a chain, as :meth:`Chain.solve` found it.

    ``pi`` solves the balance equations ``pi Q = 0``, ``sum pi = 1`` (module
    docstring, step 3) on the reachable states ``reach.states`` with
    ``||pi Q||_1 = residual``.  Read-only (an assignment raises
    :class:`dataclasses.FrozenInstanceError`) and compared by identity: a comparison field
    by field would ask NumPy for the truth of an array (an error).  A plain class with
    slots: a dataclass costs every new process some 0.5 ms to create.
    """

    __slots__ = ("exit_rate", "iterations", "pi", "reach", "residual", "solver")

    #: The reachable states (:class:`numeric.exact.lattice.Reachable`).
    reach: Any
    #: The stationary law, aligned with ``reach.states``.
    pi: np.ndarray
    #: ``||pi Q||_1`` (absolute).
    residual: float
    #: The linear solver that reached the tolerance.
    solver: str
    #: The linear solver's iterations (``0`` for a direct solve).
    iterations: int
    #: ``q_i = -Q_ii`` per state.
    exit_rate: np.ndarray

    def __init__(
        self, reach: Any, pi: np.ndarray, residual: float, solver: str, iterations: int,
        exit_rate: np.ndarray,
    ) -> None:  # fmt: skip
        put = object.__setattr__
        put(self, "reach", reach)
        put(self, "pi", pi)
        put(self, "residual", residual)
        put(self, "solver", solver)
        put(self, "iterations", iterations)
        put(self, "exit_rate", exit_rate)

    def __reduce__(self) -> tuple[Any, ...]:
        fields = (self.reach, self.pi, self.residual, self.solver, self.iterations)
        return (SolvedChain, (*fields, self.exit_rate))

    @property
    def max_exit_rate(self) -> float:
        """``max_i q_i`` (``0.0`` for a chain without states)."""
        return float(self.exit_rate.max()) if self.exit_rate.size else 0.0


class _Assembled:
    """What :meth:`Chain.solve` keeps of its last run, to start again from it: the
    centre it pinned at (``key``), the reachable states, ``Q^T``, the closed classes,
    the exit rates, the pinned state ``r`` and the last law ``pi`` (a plain class: a
    named tuple costs a new process some 0.15 ms to create, a dataclass 0.4 ms)."""

    __slots__ = ("QT", "classes", "exit_rate", "key", "pi", "r", "reach")

    def __init__(
        self, key: tuple[float, ...], reach: Any, QT: Any, classes: np.ndarray,
        exit_rate: np.ndarray, r: int, pi: np.ndarray,
    ) -> None:  # fmt: skip
        self.key, self.reach, self.QT, self.classes = key, reach, QT, classes
        self.exit_rate, self.r, self.pi = exit_rate, r, pi


class Chain:
    """The finite-N chain of a model on its lattice, before and after solving.

    :meth:`setup` prepares the model (:func:`numeric.exact.prepared.prepare`: the
    parameters checked, the lattice, its conservation laws and the start fixed
    by :meth:`numeric.exact.prepared.PreparedModel.place`) and the memory bound
    (nothing large allocated); :meth:`solve` finds the reachable states, checks
    that there is one closed class, assembles ``Q^T`` and solves the balance
    equations to the tolerance (:func:`stationary_checked`).  Used by
    :func:`solve` and by the supermarket's fast path
    (:func:`mfstein.families.supermarket.exact.supermarket_fast`).

    Compared by identity (its fields hold arrays, as :class:`SolvedChain`).  A plain
    class with slots: a dataclass costs every new process some 0.3 ms to create.
    """

    __slots__ = (
        "compiled", "exact", "kept", "kern", "last", "max_states", "notes", "p64", "placement",
    )  # fmt: skip

    placement: Placement
    kern: Any
    exact: Any
    p64: np.ndarray
    max_states: int
    notes: list[str]
    #: the last solve (:class:`_Assembled`), ``None`` before one or once released
    last: _Assembled | None
    #: whether the search and the assembly are compiled (``None``: by the lattice
    #: bound, :data:`numeric.exact.small.SMALL_STATES`; set by :meth:`_assemble`)
    compiled: bool | None
    #: the assembly an earlier process kept (:func:`numeric.exact.kept.assembly_arrays`),
    #: used by the first :meth:`_assemble` instead of the search
    kept: dict[str, np.ndarray] | None

    def __init__(
        self, placement: Placement, kern: Any, exact: Any, p64: np.ndarray, max_states: int,
        notes: list[str], last: _Assembled | None = None, compiled: bool | None = None,
        kept: dict[str, np.ndarray] | None = None,
    ) -> None:  # fmt: skip
        self.placement, self.kern, self.exact, self.p64 = placement, kern, exact, p64
        self.max_states, self.notes, self.last = max_states, notes, last
        self.compiled, self.kept = compiled, kept

    def on(self, placement: Placement) -> Chain:
        """This chain on another placement (the automatic truncation's next lattice):
        nothing solved yet, the notes copied, the kept assembly (if any) still offered."""
        return Chain(placement, self.kern, self.exact, self.p64, self.max_states,
                     list(self.notes), kept=self.kept)  # fmt: skip

    @property
    def model(self) -> Any:
        """The :class:`derive.model.Model`."""
        return self.placement.prepared.model

    @property
    def N(self) -> int:
        """The population size."""
        return self.placement.prepared.N

    @property
    def params(self) -> dict[str, Any]:
        """The checked parameters by name (:attr:`numeric.exact.prepared.PreparedModel.params`)."""
        return self.placement.prepared.params

    @property
    def values(self) -> dict[str, Any]:
        """The parsed parameters (:attr:`numeric.exact.prepared.PreparedModel.values`)."""
        return self.placement.prepared.values

    @property
    def lattice(self) -> Any:
        """The lattice (:attr:`numeric.exact.prepared.Placement.lattice`)."""
        return self.placement.lattice

    @property
    def start(self) -> np.ndarray:
        """The start of the reachability search, in counts."""
        return self.placement.start

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
        """Prepare ``model`` for ``N`` (see the class docstring); no state is enumerated."""
        return cls.of(prepare(model, N, params).place(start, truncation), memory_limit)

    @classmethod
    def of(cls, placement: Placement, memory_limit: float | None) -> Chain:
        """The chain of a model already prepared and placed on its lattice."""
        from numeric.exact.lattice import ExactRates
        from numeric.params import parameter_names

        prepared, lattice = placement.prepared, placement.lattice
        model = prepared.model
        kern = model.kernels("numba")
        b, nt = model.n, int(kern.jumps.shape[0])
        p64 = np.array([float(prepared.values[q]) for q in parameter_names(model)])
        exact = ExactRates(model, prepared.params)
        if all(f is not None for f in exact.fractions):
            p64 = np.array([float(f) for f in exact.fractions])
        per_state = bytes_per_state(b, nt)
        max_states = max(1, memory_limit_bytes(memory_limit) // per_state)
        notes = list(lattice.notes)
        return cls(placement, kern, exact, p64, max_states, notes)

    def solve(
        self,
        centre: np.ndarray,
        solver: str,
        tol: float,
        progress: bool,
        spread: np.ndarray | None = None,
        atol: float | None = None,
    ) -> SolvedChain:
        """The stationary law (:class:`SolvedChain`); the balance equation of the
        recurrent state nearest ``centre`` (counts) is pinned.
        ``spread``, the mean field's ``W``, gives the iterative solvers a
        Gaussian start around ``centre`` (:func:`~numeric.exact.solvers.gaussian_start`);
        ``atol`` an absolute target besides (:func:`stationary_checked`)."""
        key = tuple(np.asarray(centre, dtype=np.float64).tolist())
        if progress and self._takes_compiled_route():
            _announce_compile(self.model)
        if self.last is not None and self.last.key == key:
            # asked again (a tighter target): the same chain, from the last answer
            last = self.last
            reach, QT, classes, r, x0 = last.reach, last.QT, last.classes, last.r, last.pi
        else:
            reach, QT, classes, r = self._assembled(centre)
            x0 = None
            if spread is not None:  # made only if an iterative solver runs

                def x0() -> np.ndarray | None:
                    return self._gaussian_start(reach.states, classes, r, centre, spread)

        pi, res, used, iters, more = stationary_checked(
            QT,
            r,
            free_dims=len(self.lattice.free),
            solver=solver,
            tol=tol,
            x0=x0,
            progress=progress,
            atol=atol,
        )
        self.notes += more
        exit_rate = exit_rates(QT)  # read off the diagonal now: not held during the solve
        self.last = _Assembled(key, reach, QT, classes, exit_rate, r, pi)
        return SolvedChain(reach, pi, res, used, iters, exit_rate)

    def _gaussian_start(
        self, states: np.ndarray, classes: np.ndarray, r: int, centre: np.ndarray, spread: Any
    ) -> np.ndarray | None:
        """The iterative solvers' start (:func:`numeric.exact.solvers.gaussian_start`
        around ``centre`` with covariance ``spread``), zero on the transient states;
        ``None`` when there is none or it vanishes at the pinned state ``r``."""
        from numeric.exact.solvers import gaussian_start

        x0 = gaussian_start(states, centre, self.N, spread, compiled=bool(self.compiled))
        if x0 is not None:
            x0[classes != 0] = 0.0  # transient states have probability 0
            if not x0[r] > 1e-200:
                x0 = None
        return x0

    def _assemble(self, centre: np.ndarray) -> tuple[Any, Any, np.ndarray, np.ndarray, int]:
        """Reachable states, ``Q^T``, closed classes, exit rates and the pinned state
        (the recurrent state nearest ``centre``); :meth:`_assembled` and the exit rates
        (:func:`~numeric.exact.pinned.exit_rates`)."""
        reach, QT, classes, r = self._assembled(centre)
        return reach, QT, classes, exit_rates(QT), r

    def _assembled(self, centre: np.ndarray) -> tuple[Any, Any, np.ndarray, int]:
        """Reachable states, ``Q^T``, closed classes and the pinned state (the recurrent
        state nearest ``centre``)."""
        from numeric.exact.small import routines

        kept_arrays, self.kept = self.kept, None
        if kept_arrays is not None and kept_arrays["states"].shape[0] <= self.max_states:
            if not self._takes_compiled_route():  # a compiled search is as quick as a read
                return self._kept_assembly(kept_arrays, centre)
        reach = self._search()
        tools = routines(bool(self.compiled))
        QT = tools.transposed_generator(reach.target, reach.rates, self.N)
        reach.release(np.asarray(self.kern.jumps).sum(axis=1) > 0)
        signals.check()  # each phase below takes seconds at millions of states
        classes, n_closed = _closed_classes(QT, self.compiled)
        signals.check()
        if n_closed != 1:
            ex = [
                tuple(int(x) for x in reach.states[np.flatnonzero(classes == c)[0]]) for c in (0, 1)
            ]
            raise ParameterError(
                f"the chain from {tuple(int(x) for x in self.start)} has {n_closed} closed "
                f"classes (e.g. states {ex[0]} and {ex[1]}), so its stationary law is not "
                "unique; change the parameters or the start."
            )
        return reach, QT, classes, self._pinned(reach, classes, centre)

    def _pinned(self, reach: Any, classes: np.ndarray, centre: np.ndarray) -> int:
        """The state whose balance equation is pinned: the recurrent state nearest
        ``centre`` (a note counts the transient states)."""
        from numeric.exact.small import routines

        if (classes < 0).any():
            self.notes.append(f"{int((classes < 0).sum())} transient states (probability 0)")
        nearest = routines(bool(self.compiled)).nearest
        return int(nearest(reach.states, np.asarray(centre, dtype=np.float64), classes == 0))

    def _kept_assembly(
        self, a: dict[str, np.ndarray], centre: np.ndarray
    ) -> tuple[Any, Any, np.ndarray, int]:
        """:meth:`_assembled`'s answer from the arrays an earlier process kept of this
        chain (:func:`numeric.exact.kept.assembly_arrays`): no search, no classes (on
        the NumPy route only: where this process takes the compiled one, it searches)."""
        import scipy.sparse as sps

        from numeric.exact.space import Reachable

        S = a["states"].shape[0]
        reach = Reachable(a["states"], None, None, int(a["exact_states"]), a["up_rates"])
        QT = sps.csr_matrix((a["data"], a["indices"], a["indptr"]), shape=(S, S))
        classes = a["classes"]
        return reach, QT, classes, self._pinned(reach, classes, centre)

    def _takes_compiled_route(self) -> bool:
        """Whether the search and the assembly run compiled (decided once per chain,
        :func:`numeric.exact.small.prefer_compiled`); the NumPy route compiles nothing,
        so only the compiled one announces a first compile."""
        if self.compiled is None:
            from numeric.exact import small

            self.compiled = small.prefer_compiled(
                self.model, self.lattice.count_bound(self.model.n)
            )
        return self.compiled

    def _search(self) -> Any:
        """The reachable states (:class:`numeric.exact.lattice.Reachable`): in NumPy
        (:mod:`numeric.exact.small`) when the chain is small
        (:func:`~numeric.exact.small.prefer_compiled`) and the model's kernel
        vectorises, else by the compiled search; :attr:`compiled` says which ran."""
        from numeric.exact import small

        bound = self.lattice.count_bound(self.model.n)
        limit = min(self.max_states, max(bound, 1))
        if not self._takes_compiled_route():
            found = small.reachable(
                self.model, self.exact, self.lattice, self.p64, self.start, limit
            )
            if found is not None:
                return found
            self.compiled = True  # a kernel that does not vectorise
        from numeric.exact.lattice import reachable

        return reachable(self.kern, self.exact, self.lattice, self.p64, self.start, limit)


@renamed_keywords(method="solver")
@check_keywords
def solve(
    model: Any,
    params: Mapping[str, Any] | None = None,
    *,
    N: int,
    start: Sequence[Any] | str | None = None,
    truncation: Any = None,
    truncation_tol: Any = None,
    route: str = "auto",
    solver: str = "auto",
    tol: float | None = None,
    memory_limit: float | None = None,
    progress: bool = False,
) -> ExactResult:
    """Exact stationary distribution of the finite-N chain of ``model`` and its moments.

    The one implementation of the exact task.  A model whose family registered
    an exact fast path (:mod:`numeric.exact.fast_paths`; the supermarket's,
    :func:`mfstein.families.supermarket.exact.supermarket_fast`, on its monotone space) is solved
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
        above are blocked).  Without it, a chain on the orthant gets a truncation
        chosen by :func:`numeric.exact.truncation.choose_level`; the result's
        ``truncation`` reports the level and the stationary mass cut, which bounds
        the law's error.
    truncation_tol:
        The largest stationary mass a chosen truncation may cut (default
        ``1e-12``, allowed ``1e-15 .. 0.01``); not with ``truncation``.
    route:
        ``"auto"`` (the family's fast path when it has one and can honour the
        call, else the general chain), ``"general"`` (always the general chain)
        or ``"fast"`` (the fast path, refused with one sentence when there is
        none for this model or call).
    solver:
        The linear solver: ``"auto"``, ``"direct"``, ``"bicgstab"`` or ``"gmres"``
        (``method=`` is its deprecated alias).
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
    t0 = time.perf_counter()
    check_params(params)
    check_start(start)
    N = check_exact_N(N)
    if route not in ROUTES:
        raise ParameterError(f"route must be one of {', '.join(ROUTES)}, got {route!r}.")
    if solver not in METHODS:
        raise ParameterError(f"solver must be one of {', '.join(METHODS)}, got {solver!r}.")
    keys = kept.keys(model, params, N, start, truncation, truncation_tol, route=route)
    found = kept.load(keys, model, params, N, memory_limit)
    if found is None:  # not prepared by an earlier process: the model, its fast path
        if isinstance(model, str):  # the one model of that name (a later kept call reaches it)
            from derive.models import as_model

            model, params = as_model(model, params)
        r = _elsewhere(model, params, N, start, truncation, route, solver, tol, memory_limit,
                       progress)  # fmt: skip
        if r is not None:
            return r
    if tol is None:
        tol = TOL
    if not (isinstance(tol, float | int) and 0 < tol <= 1e-3):
        raise ParameterError(f"tol must be a number in (0, 1e-3], got {tol!r}.")
    cut_tol = _cut_tol(truncation_tol, truncation)
    if found is None:
        ch = Chain.setup(model, N, params, start, truncation, memory_limit)
        # the mean field first: it is cheap and its failure should cost nothing
        mf, note = _centre(ch.placement)
    else:
        ch, mf, note = Chain(*found[0], kept=found[3]), found[1], found[2]
    placed, chosen = ch, ch.lattice.kind == "orthant" and not ch.lattice.truncated
    if note:
        ch.notes.append(note)
    centre = ch.start.astype(np.float64) if mf is None else ch.N * _floats(mf.s_star)
    W = None if mf is None else _w64(mf)
    ch, solved, cut = _solved(ch, centre, (solver, tol, progress, W), cut_tol)
    if not chosen:  # kept for the next process (:mod:`numeric.exact.kept`)
        centre_fields = None if mf is None else _mean_field_fields(mf, ch.model.n)
        kept.save(keys, placed, centre_fields, note, _params_text(ch.params))
    return _result(ch, solved, mf, tol=tol, t0=t0, cut=cut)


def _cut_tol(truncation_tol: Any, truncation: Any) -> float:
    """:func:`numeric.exact.truncation.check_tol` of ``truncation_tol``; its default
    (``None``) without importing that module (a first call in a new process)."""
    if truncation_tol is None:
        return TRUNCATION_TOL
    from numeric.exact.truncation import check_tol

    return check_tol(truncation_tol, truncation)


def _elsewhere(
    model: Any, params: Any, N: int, start: Any, truncation: Any, route: str, *options: Any
) -> ExactResult | None:
    """The answer when the general chain does not give it: a heterogeneous population's
    product chain, or the family's fast path (:func:`_by_fast_path`; ``options`` are
    ``solver, tol, memory_limit, progress``); ``None`` for the general chain."""
    from numeric.heterogeneous.entry import is_heterogeneous

    if is_heterogeneous(model):  # the product chain of K objects
        return _heterogeneous(model, params, N, start, truncation)
    if route == "general":
        return None
    solver, tol, memory_limit, progress = options
    general_call = start is not None or truncation is not None
    return _by_fast_path(
        model, params, N=N, route=route, general_call=general_call, solver=solver,
        tol=tol, memory_limit=memory_limit, progress=progress,
    )  # fmt: skip


def _heterogeneous(model: Any, params: Any, N: int, start: Any, truncation: Any) -> Any:
    """The exact law of a heterogeneous population of ``N`` objects (its product chain)."""
    from numeric.exact.product import exact_heterogeneous

    if start is not None or truncation is not None:
        raise ParameterError(
            "start and truncation are not available for a heterogeneous population."
        )
    return exact_heterogeneous(model, params, N=N)


def _solved(
    ch: Chain, centre: np.ndarray, how: tuple, cut_tol: float
) -> tuple[Chain, SolvedChain, Cut | None]:
    """``(chain, solved, cut)``: ``ch`` solved (``how`` is :meth:`Chain.solve`'s
    ``(solver, tol, progress, spread)``), under a chosen truncation on an unbounded
    orthant (:func:`_truncated`), with the mass a given truncation cuts, or whole."""
    if ch.lattice.kind == "orthant" and not ch.lattice.truncated:
        return _truncated(ch, centre, how, cut_tol)
    solved = ch.solve(centre, *how)
    if not ch.lattice.truncated:
        return ch, solved, None
    from numeric.exact.truncation import Cut, cut_mass

    level = ch.lattice.upper
    return ch, solved, Cut(level, *cut_mass(solved.reach.states, solved.pi, level), chosen=False)


def _truncated(
    ch: Chain, centre: np.ndarray, how: tuple, cut_tol: float
) -> tuple[Chain, SolvedChain, Cut | None]:
    """The chain ``ch`` on an unbounded orthant solved under the truncation
    :func:`numeric.exact.truncation.choose_level` picks (``how`` is
    :meth:`Chain.solve`'s ``(solver, tol, progress, spread)``): ``(chain, solved,
    cut)``, with ``cut`` ``None`` when the chain never reaches the level (its
    reachable set is finite by itself: nothing is cut)."""
    from fractions import Fraction

    from numeric.exact.space import make_lattice
    from numeric.exact.truncation import choose_level, first_level

    runs: dict[int, tuple[Chain, SolvedChain]] = {}

    def solve_at(level: int) -> tuple[np.ndarray, np.ndarray]:
        lattice = make_lattice(ch.model, ch.N, Fraction(level, ch.N))
        lattice.values = ch.lattice.values
        # the same chain under the level: its kernels, exact rates, p64 and state limit
        # as prepared (not prepared again per level), nothing of a solve
        placement = ch.placement._replace(lattice=lattice)
        placed = ch.on(placement)
        solved = placed.solve(centre, *how)
        runs[level] = (placed, solved)
        return solved.reach.states, solved.pi

    name = f"the exact chain of model {ch.model.name} at N = {ch.N}"
    cut = choose_level(solve_at, first_level(ch.start, centre, ch.N), cut_tol, name)
    chain, solved = runs[cut.level]
    if cut.boundary == 0.0:
        return chain, solved, None
    return chain, solved, cut


def _result(
    ch: Chain, solved: SolvedChain, mf: Any, *, tol: float, t0: float, cut: Cut | None = None
) -> ExactResult:
    """The :class:`ExactResult` of the chain ``ch`` solved (``solved`` is what
    :meth:`Chain.solve` returns), centred at the mean field ``mf`` (or ``None``),
    with the truncation ``cut`` (``None``: nothing cut)."""
    reach, pi, res = solved.reach, solved.pi, solved.residual
    if reach.exact_states:
        ch.notes.append(f"{reach.exact_states} states needed exact rate evaluation")
    if cut is not None:
        ch.notes.append(f"truncated at {cut.text()}")
    qmax = solved.max_exit_rate
    return ExactResult(
        model=ch.model.name,
        N=ch.N,
        params=_params_text(ch.params),
        n=ch.model.n,
        states=reach.states.shape[0],
        residual=float(res),
        relative_residual=float(res / qmax) if qmax else 0.0,
        tolerance=float(tol),
        pi=pi,
        state_array=reach.states,
        start=[int(x) for x in ch.start],
        law_values=[str(v) for v in ch.lattice.values],
        seconds=time.perf_counter() - t0,
        solver=solved.solver,
        iterations=solved.iterations,
        exact_states=reach.exact_states,
        notes=ch.notes,
        truncation=cut,
        source_model=ch.model,
        tasks=EXACT_TASKS,
        law_system=_law_system(ch, pi.shape[0]),
        up_rate_half_range=float(half_range(reach.up_rates)),
        **_mean_field_fields(mf, ch.model.n),
        **_statistics(ch, reach, pi, mf),
    )


def _law_system(ch: Chain, states: int) -> Any:
    """``Q^T`` and the pinned state of ``ch``'s last solve for the law's error estimate
    (:func:`numeric.exact.law_error.kept_system`), ``None`` when not kept."""
    last = ch.last
    if last is None or last.QT.shape[0] != states:
        return None
    return kept_system(last.QT, last.r)


def _by_fast_path(
    model: Any, params: Any, *, N: int, route: str, general_call: bool, **options: Any
) -> ExactResult | None:
    """The answer of ``model``'s registered fast path (:mod:`numeric.exact.fast_paths`)
    on the prepared problem of the call (:meth:`numeric.exact.prepared.PreparedModel.problem`,
    ``N`` filled in), or ``None`` for the general chain: there is no fast path, the call
    asks for what it cannot honour (``general_call``: a start or a truncation), or it
    declines this member of its family.  With ``route="fast"`` the ``None`` cases are
    refused."""
    fast = fast_path(model)
    if fast is not None and not general_call:
        r = fast(prepare(model, N, params).problem(), N=N, **options)
        if r is not None:
            return r
    if route == "fast":
        why = "a start or a truncation" if fast is not None else "this model"
        raise ParameterError(
            f"route='fast': the exact task has no fast path for {why} (model "
            f"{getattr(model, 'name', model)!r}); use route='auto' or 'general'."
        )
    return None


def _floats(v: Any) -> np.ndarray:
    return np.array([float(x) for x in v])


def _w64(mf: Any) -> np.ndarray:
    """``W`` in float64 (a kept mean field, :mod:`numeric.exact.kept`, holds it so)."""
    if isinstance(mf.W, np.ndarray):
        return mf.W
    from numeric.linalg.refinement import to_float64

    return to_float64(mf.W)


def _centre(placement: Placement) -> tuple[Any, str | None]:
    """The mean field the statistics are centred at (:meth:`Placement.centre`: on the
    chain's own prepared problem where that gives the same numbers), or
    ``None`` with a note when its fixed point is unstable, or lies on a kink of a
    piecewise rate (no expansion there), or when the expansion fails its own check
    (e.g. rates of size 1e-300, beyond float64's refinement): a finite chain has a
    stationary law even then (a limit cycle; the chain needs only the rates),
    reported without the statistics centred at ``s*``."""
    try:
        return placement.centre()
    except ParameterError as exc:
        if not any(w in str(exc) for w in ("is not stable", "not hyperbolic", "on the kink")):
            raise
        reason = str(exc)
    except NumericalError as exc:  # the expansion failed its own check; the law needs none
        reason = f"the mean-field expansion could not be computed: {exc}"
    return None, (
        f"{reason} The exact stationary law is reported; s*, V, W, c and the statistics "
        "centred at s* (n_bias, n_mse) are NaN."
    )


def _mean_field_fields(mf: Any, b: int) -> dict[str, Any]:
    """``s_star``, ``V``, ``W``, ``constant`` of the result (NaN without a mean field)."""
    if mf is None:
        return {
            "s_star": np.full(b, np.nan),
            "V": np.full(b, np.nan),
            "W": np.full((b, b), np.nan),
            "constant": float("nan"),
        }
    return {
        "s_star": _floats(mf.s_star),
        "V": _floats(mf.V),
        "W": _w64(mf),
        "constant": float(mf.constant),
    }


def law_moments(states: np.ndarray, pi: np.ndarray, N: int, s_star: np.ndarray) -> dict[str, Any]:
    """The moments of a stationary law ``pi`` on ``states`` (counts ``n``, ``S = n / N``)
    that every exact result reports (module docstring, step 4): ``mean = E[S]``,
    ``n_bias = N (E[S] - s*)``, ``n_mse = N E||S - s*||^2``, ``n_cov = N Cov(S)`` and
    the marginal pmfs ``P(n_k = j)``, ``j = 0 .. max n_k``."""
    X = states / N
    mean = pi @ X
    centred = X - mean
    cov = (centred * pi[:, None]).T @ centred
    dev = X - s_star
    return {
        "mean": mean,
        "n_bias": N * (mean - s_star),
        "n_mse": N * float(pi @ np.einsum("ij,ij->i", dev, dev)),
        "n_cov": N * cov,
        "marginal_pmf": [
            np.bincount(states[:, k], weights=pi, minlength=int(states[:, k].max()) + 1)
            for k in range(states.shape[1])
        ],
    }


def queue_length_pmf(mean: np.ndarray) -> np.ndarray:
    """``P(Q = k) = E[S_k] - E[S_{k+1}]`` (``S_0 = 1``, ``S_{b+1} = 0``): the queue-length
    pmf of one server of a monotone (supermarket-like) model, by exchangeability."""
    padded = np.concatenate([[1.0], mean, [0.0]])
    return padded[:-1] - padded[1:]


def _statistics(ch: Chain, reach: Any, pi: np.ndarray, mf: Any) -> dict[str, Any]:
    """:func:`law_moments`, the rate of up-jumps, and for the queueing models the
    queue-length pmf, the mean number of jobs and the blocking probability."""
    b = ch.model.n
    s_star = np.full(b, np.nan) if mf is None else _floats(mf.s_star)
    out = law_moments(reach.states, pi, ch.N, s_star)
    up_rate = float(pi @ reach.up_rates)
    pmf = mean_jobs = blocking = None
    if ch.lattice.kind == "monotone":
        pmf = queue_length_pmf(out["mean"])
        mean_jobs = float(out["mean"].sum())
    arrival = ch.model.structure("arrival")
    if arrival and arrival in ch.params:
        blocking = 1.0 - up_rate / float(ch.values[arrival])
    return {
        **out,
        "queue_length_pmf": pmf,
        "mean_jobs": mean_jobs,
        "blocking": blocking,
        "up_rate": up_rate,
    }
