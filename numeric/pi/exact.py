"""Exact stationary statistics of the Persistent-Idle chain for ``n <= 3`` servers.

The chain is the one of "On the Persistent-Idle Load Distribution Policy Under
Batch Arrivals and Random Service Capacity": state ``X = (Q_1, ..., Q_n, LI)``
with the PI recursion (4) (or PI-Split, eq. (9), with the default split rule:
``floor(a / k)`` jobs to each of the ``k`` idle servers and one more to each of
``a mod k`` of them chosen uniformly), or JIQ / JSQ / Random dispatch of the
whole batch (then ``LI`` records the server that received the last batch).

Truncation.  Queues are capped at ``K``: ``Q_i(t) = min(K, [Q_i(t-1) + a_i(t) -
s_i(t)]^+)``, a chain on ``n (K + 1)^n`` states (the unreachable ones are
transient and get probability zero).  The truncated and the original chain
agree until the first slot in which the cap bites, so the *truncated mass* --
the stationary probability per slot that some queue would exceed ``K`` -- is
reported with every result.  With ``cap=None`` the cap is chosen automatically:
it grows (extrapolating the geometric decay of the truncated mass) until that
mass is at most ``mass_tol``.  The state count is computed before anything is
allocated and a :class:`~mfstein.ground.errors.ParameterError` refuses a problem that
needs more than ``max_states`` states or ``max_entries`` matrix entries.

Solve.  The transition matrix ``P`` is assembled sparse (SciPy), and
``pi (P - I) = 0``, ``sum pi = 1`` is solved with :mod:`numeric.exact.solvers`
(``P - I`` is a generator): sparse LU, or BiCGSTAB for large chains.  The
residual ``||pi (P - I)||_1`` is recomputed; above ``residual_tol`` a
:class:`~mfstein.ground.errors.NumericalError` is raised and no result is returned.

Statistics (queues at the end of a slot): ``E[Q_i]``, ``E[Q_total]``, the mean
delay ``E[Q_total] / E[a]`` (Little's law), ``P(Q_i = 0)``, ``P(I != {})`` and the
messages per slot / job / batch with the token accounting of
:class:`sim.pi.PIResult` (a server sends its token when it becomes idle:
``Q_i(t-1) + a_i(t) > 0`` and ``Q_i(t) = 0``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from itertools import combinations, product
from typing import Any, ClassVar

import numpy as np

from derive.models.persistent_idle import PIModel, check_load, make_model
from mfstein.ground.arguments import renamed_attribute
from mfstein.ground.display import (
    INPUT_DIGITS,
    Presentable,
    claimed,
    error_figure,
    measured,
    printed_to_error,
)
from mfstein.ground.errors import NumericalError, ParameterError, check_int

#: Policies the exact solver handles.
POLICIES: tuple[str, ...] = ("pi", "pi-split", "jiq", "jsq", "random")
#: Largest number of servers.
MAX_N = 3
#: Default limits (states of the truncated chain, stored transition entries).
MAX_STATES = 250_000
MAX_ENTRIES = 20_000_000
#: Default tolerances: truncated mass per slot, and ``||pi (P - I)||_1``.
MASS_TOL = 1e-12
RESIDUAL_TOL = 1e-10
#: States up to which the sparse LU solver is used (BiCGSTAB beyond).
DIRECT_MAX = 45_000


@dataclass(frozen=True, repr=False)
class PIExactResult(Presentable):
    """Stationary statistics of the truncated chain (plain floats, no error bars:
    ``truncated_mass`` and ``residual`` state how far they are from the chain's).

    Each statistic is printed down to the place its absolute error allows
    (:meth:`errors`, :func:`mfstein.ground.display.printed_to_error`): the error of the
    truncated chain's law, ``||pi - pi_true||_1 <= 2 kappa ||pi (P - I)||_1``
    (:attr:`law_error`, module :mod:`numeric.exact.law_error`), times half the range
    of the statistic's function of the state (queues lie in ``[0, cap]``).  The
    truncation's own effect is stated by ``truncated_mass`` (printed, like
    ``residual``, with 3 digits rounded up), beside.
    """

    #: The Persistent-Idle model (batch law, servers' capacity laws, ``n``).
    model: PIModel
    #: The dispatch policy (one of :data:`POLICIES`).
    policy: str
    #: Queue cap ``K`` used.
    cap: int
    #: States of the truncated chain (queue vectors with every queue at most ``cap``).
    states: int
    #: Non-zero entries of its one-slot transition matrix ``P``.
    entries: int
    #: Stationary probability per slot that the cap bites.
    truncated_mass: float
    #: Jobs per slot the cap removes (the truncated chain is a finite buffer).
    dropped_jobs_per_slot: float
    #: ``||pi (P - I)||_1`` of the returned solution.
    residual: float
    #: The linear solver that ran (``method`` is its deprecated name, warns;
    #: ``"solver"`` its key in :meth:`to_dict`, whose ``"method"`` is the route,
    #: ``"exact"``).
    solver: str
    #: ``E[Q_i]`` per server under the truncated chain's law.
    mean_queue: np.ndarray
    #: ``E[Q_total] = sum_i E[Q_i]``.
    mean_total: float
    #: The mean delay in slots by Little's law, ``E[Q_total] / E[a]``.
    delay: float
    #: ``P(Q_i = 0)`` per server.
    p_idle: np.ndarray
    #: The probability that some server is idle, ``P(min_i Q_i = 0)``.
    p_some_idle: float
    #: Tokens sent per slot; a server sends one in each slot it had work in and ends
    #: empty, whatever the policy; they are the messages of PI, PI-Split and JIQ.
    tokens_per_slot: float
    #: Messages per slot, the tokens under PI, PI-Split and JIQ, ``n P(a > 0)`` under
    #: JSQ (every server polled per non-empty batch), none under Random.
    messages_per_slot: float
    #: :attr:`messages_per_slot` divided by ``E[a]``.
    messages_per_job: float
    #: :attr:`messages_per_slot` divided by ``P(a > 0)``.
    messages_per_batch: float
    #: Seconds the whole solve took (every cap tried).
    seconds: float
    #: ``(K, truncated mass)`` of every solve made to choose the cap.
    caps_tried: list[tuple[int, float]] = field(default_factory=list)
    #: ``P - I`` transposed and pinned (:class:`numeric.exact.law_error.LawSystem`,
    #: ``None`` above its limit), an input of :meth:`errors`.
    law_system: Any = field(default=None, repr=False, compare=False)
    #: Half the range over the states of the per-slot tokens and of the dropped jobs, the
    #: other input of :meth:`errors`.
    ranges: dict[str, float] = field(default_factory=dict, repr=False, compare=False)

    _MORE: ClassVar[str] = "per-server E[Q_i], P(Q_i = 0) and the caps tried in to_dict()"

    method = renamed_attribute("PIExactResult", "method", "solver")

    @property
    def law_error(self) -> float | None:
        """The estimate of ``||pi - pi_true||_1`` of the truncated chain's law."""
        system = self.law_system
        return None if system is None else system.law_error(self.residual, self.states)

    def errors(self) -> dict[str, float]:
        """The absolute error of each printed statistic (class docstring); empty
        without an estimate.  Messages of JSQ and Random are computed from the inputs
        (no error of the law)."""
        L = self.law_error
        if L is None:
            return {}
        ea = self.model.mean_arrival
        queue = self.cap / 2.0 * L
        tokens = self.ranges.get("tokens", 0.0) * L
        msgs = tokens if self.policy not in ("jsq", "random") else 0.0
        p_batch = self.messages_per_slot / self.messages_per_batch if msgs else 1.0
        return {
            "mean_queue": queue,
            "mean_total": self.model.n * queue,
            "delay": self.model.n * queue / ea,
            "p_idle": L / 2.0,
            "p_some_idle": L / 2.0,
            "tokens_per_slot": tokens,
            "messages_per_slot": msgs,
            "messages_per_job": msgs / ea,
            "messages_per_batch": msgs / p_batch,
            "dropped_jobs_per_slot": self.ranges.get("drop", 0.0) * L,
        }

    def printed(self, name: str) -> Any:
        """The statistic ``name`` as :meth:`to_dict` prints it (:meth:`errors`)."""
        value = getattr(self, name)
        error = self.errors().get(name)
        if error == 0.0:  # from the inputs alone: float arithmetic on them
            return claimed(float(value), INPUT_DIGITS)
        return printed_to_error(float(value) if np.ndim(value) == 0 else value, error)

    def to_dict(self) -> dict[str, Any]:
        """The command line's JSON object: each statistic with the digits its error in
        ``errors`` allows (class docstring); ``law_error``, ``truncated_mass`` and
        ``residual`` state its precision."""
        stats = ("dropped_jobs_per_slot", "mean_queue", "mean_total",
                 "delay", "p_idle", "p_some_idle", "tokens_per_slot", "messages_per_slot",
                 "messages_per_job", "messages_per_batch")  # fmt: skip
        out = {
            "method": "exact",
            **self.model.to_dict(),
            "policy": self.policy,
            "cap": self.cap,
            "states": self.states,
            "entries": self.entries,
            "truncated_mass": error_figure(self.truncated_mass),
            "residual": error_figure(self.residual),
            "law_error": error_figure(self.law_error),
            "errors": error_figure(self.errors()),
            "solver": self.solver,
            **{k: self.printed(k) for k in stats},
            "drift": 0.0,
            "seconds": measured(self.seconds),
            "caps_tried": [[k, error_figure(m)] for k, m in self.caps_tried],
        }
        order = ["method", *self.model.to_dict(), "policy", "cap", "states", "entries",
                 "truncated_mass", "dropped_jobs_per_slot", "residual", "law_error", "errors",
                 "solver", *stats[1:], "drift", "seconds", "caps_tried"]  # fmt: skip
        return {k: out[k] for k in order}

    def _rows(self) -> list[tuple[str, str]]:
        return [
            ("model", self.model.summary()),
            ("policy", self.policy),
            ("E[Q_total]", repr(self.printed("mean_total"))),
            ("mean delay", repr(self.printed("delay"))),
            ("messages/job", repr(self.printed("messages_per_job"))),
            ("chain", f"cap {self.cap}, {self.states:,} states, {self.solver}"),
            ("truncated mass", f"{self.truncated_mass:.2e} per slot"),
            ("residual", f"{self.residual:.1e} (||pi (P - I)||_1)"),
            ("law error", f"{error_figure(self.law_error)!r} (||pi - pi_true||_1, estimated)"),
        ]

    def to_text(self) -> str:
        """What ``mfstein pi --exact`` prints (:func:`numeric.pi.text.exact_text`)."""
        from numeric.pi.text import exact_text

        return exact_text(self)


def _options_per_state(policy: str, n: int) -> int:
    """Most dispatch outcomes (new LI, allocation pattern) one state can have."""
    if policy == "pi-split":
        return n * max(math.comb(n, r) for r in range(n + 1))
    return n


def uses_li(policy: str) -> bool:
    """Whether ``LI`` is part of the state: PI and PI-Split.  JIQ, JSQ and Random
    dispatch without it, so their chain lives on the queue vectors alone."""
    return policy in ("pi", "pi-split")


def count_states(n: int, cap: int, policy: str = "pi") -> int:
    """``n (cap + 1)^n`` (PI, PI-Split) or ``(cap + 1)^n``: the states of the truncated chain."""
    return (n if uses_li(policy) else 1) * (cap + 1) ** n


def planned_entries(model: PIModel, policy: str, cap: int) -> int:
    """Upper bound on the transition entries assembled for one value of ``LI``
    (the assembly merges duplicates one ``LI`` at a time)."""
    combos = math.prod(len(s.values) for s in model.services)
    return (
        (cap + 1) ** model.n
        * len(model.arrivals.values)
        * _options_per_state(policy, model.n)
        * combos
    )


def _check_size(model: PIModel, policy: str, cap: int, max_states: int, max_entries: int) -> None:
    states = count_states(model.n, cap, policy)
    if states > max_states:
        raise ParameterError(
            f"cap must keep the truncated chain within max_states = {max_states:,} states "
            f"(n (cap + 1)^n = {states:,} for n = {model.n}, cap = {cap}); lower the load "
            "or raise max_states."
        )
    entries = planned_entries(model, policy, cap)
    if entries > max_entries:
        raise ParameterError(
            f"cap must keep the transition matrix within max_entries = {max_entries:,} "
            f"entries ({entries:,} planned for n = {model.n}, cap = {cap}); lower the load "
            "or raise max_entries."
        )


def _dispatch(policy: str, q: np.ndarray, l: int, a: int, n: int):
    """Yield ``(weight[M], add[M, n], new_li)`` for every dispatch outcome.

    ``q`` holds the ``M`` queue vectors (all with ``LI = l``); ``weight`` is the
    conditional probability of the outcome given the state and the batch ``a``.
    """
    M = q.shape[0]
    idle = q == 0
    k = idle.sum(axis=1)
    any_idle = k > 0
    safe_k = np.maximum(k, 1)
    if policy == "pi-split":
        # no idle server: the batch joins LI(t) = LI(t-1) = l
        add = np.zeros((M, n), dtype=np.int64)
        add[:, l] = a
        yield (~any_idle).astype(float), add, l
        base = a // safe_k
        rem = a - base * safe_k
        comb = np.array([[math.comb(m, r) for r in range(n + 1)] for m in range(n + 1)])
        for j in range(n):
            w_li = np.where(idle[:, j], 1.0 / safe_k, 0.0)
            for r in range(n + 1):
                for subset in combinations(range(n), r):
                    in_sub = np.zeros(n, dtype=bool)
                    in_sub[list(subset)] = True
                    ok = any_idle & (rem == r) & np.all(idle[:, in_sub], axis=1)
                    w = np.where(ok, w_li / np.maximum(comb[safe_k, r], 1), 0.0)
                    if not w.any():
                        continue
                    add = idle * base[:, None] + in_sub[None, :] * 1
                    yield w, add.astype(np.int64), j
        return
    if policy == "pi":
        for j in range(n):
            w = np.where(any_idle, idle[:, j] / safe_k, 1.0 if j == l else 0.0)
            add = np.zeros((M, n), dtype=np.int64)
            add[:, j] = a
            yield w, add, j
        return
    if policy == "jiq":
        pick = lambda j: np.where(any_idle, idle[:, j] / safe_k, 1.0 / n)  # noqa: E731
    elif policy == "jsq":
        shortest = q == q.min(axis=1, keepdims=True)
        ties = shortest.sum(axis=1)
        pick = lambda j: shortest[:, j] / ties  # noqa: E731
    else:  # random
        pick = lambda j: np.full(M, 1.0 / n)  # noqa: E731
    for j in range(n):
        add = np.zeros((M, n), dtype=np.int64)
        add[:, j] = a
        yield pick(j).astype(float), add, j


def assemble(model: PIModel, policy: str, cap: int):
    """Transition matrix ``P`` (CSR) of the chain truncated at ``cap``, with per-state
    expected tokens, truncation probability and dropped jobs of the next slot."""
    import scipy.sparse as sps

    n = model.n
    side = cap + 1
    M = side**n
    blocks = n if uses_li(policy) else 1
    S = blocks * M
    grid = np.indices((side,) * n).reshape(n, -1).T[:, ::-1].copy()  # q_1 fastest
    weights = side ** np.arange(n)
    pa = model.arrivals
    svc = [list(zip(s.values, s.probs, strict=True)) for s in model.services]
    tokens = np.zeros(S)
    clip = np.zeros(S)
    drop = np.zeros(S)
    P = sps.csr_matrix((S, S))
    base_rows = np.arange(M)
    for l in range(blocks):
        rows_l, cols_l, vals_l = [], [], []
        row_idx = l * M + base_rows
        for a, p_a in zip(pa.values, pa.probs, strict=True):
            for w, add, j in _dispatch(policy, grid, l, int(a), n):
                keep = w > 0
                if not keep.any():
                    continue
                x = (grid + add)[keep]
                wk = w[keep] * p_a
                rk = row_idx[keep]
                for combo in product(*svc):
                    s_vals = np.array([c[0] for c in combo])
                    p_s = math.prod(c[1] for c in combo)
                    y = np.maximum(x - s_vals, 0)
                    over = np.maximum(y - cap, 0)
                    y = np.minimum(y, cap)
                    prob = wk * p_s
                    rows_l.append(rk)
                    cols_l.append((j if blocks > 1 else 0) * M + y @ weights)
                    vals_l.append(prob)
                    sent = ((x > 0) & (y == 0)).sum(axis=1)
                    np.add.at(tokens, rk, prob * sent)
                    np.add.at(clip, rk, prob * (over.sum(axis=1) > 0))
                    np.add.at(drop, rk, prob * over.sum(axis=1))
        if rows_l:
            P = P + sps.csr_matrix(
                (np.concatenate(vals_l), (np.concatenate(rows_l), np.concatenate(cols_l))),
                shape=(S, S),
            )
    return P.tocsr(), grid, tokens, clip, drop


def _solve(P, level: np.ndarray, residual_tol: float, progress: bool):
    """Solve ``pi (P - I) = 0`` with the states in level order (total queue length),
    pinned at the empty state (state 0, recurrent): the solution and the pinned system
    (:func:`numeric.exact.law_error.kept_system`, for the law's error)."""
    import scipy.sparse as sps

    from numeric.exact.law_error import kept_system
    from numeric.exact.solvers import Stationary, residual, solve_direct, solve_krylov

    S = P.shape[0]
    order = np.argsort(level, kind="stable")
    QT = (P - sps.identity(S, format="csr")).T.tocsr()[order][:, order].tocsr()
    reference = int(np.flatnonzero(order == 0)[0])
    if S <= DIRECT_MAX:
        sol = solve_direct(QT, reference)
    else:
        sol = solve_krylov(QT, reference, tol=residual_tol / 10, progress=progress)
    pi = np.empty(S)
    pi[order] = sol.pi
    QT0 = (P - sps.identity(S, format="csr")).T.tocsr()
    sol = Stationary(pi=pi, residual=residual(QT0, pi), solver=sol.solver)
    if not np.isfinite(sol.residual) or sol.residual > residual_tol:
        raise NumericalError(
            f"the residual ||pi (P - I)||_1 = {sol.residual:.3e} of the stationary solve "
            f"({sol.solver}, {S:,} states) exceeds the tolerance {residual_tol:.1e}; "
            "no result is returned."
        )
    return sol, kept_system(QT, reference, order)


def _at_cap(
    model: PIModel, policy: str, cap: int, residual_tol: float, progress: bool
) -> dict[str, Any]:
    """The chain truncated at queue cap ``cap``, solved: the :class:`PIExactResult`
    fields it decides (all but the model, the policy, the time and the caps tried)."""
    from numeric.exact.law_error import half_range

    P, grid, tokens, clip, drop = assemble(model, policy, cap)
    level = np.tile(grid.sum(axis=1), P.shape[0] // grid.shape[0])
    sol, system = _solve(P, level, residual_tol, progress)
    pi = sol.pi.reshape(-1, grid.shape[0]).sum(axis=0)  # marginal of the queue vector
    return {
        "cap": cap,
        "states": P.shape[0],
        "entries": P.nnz,
        "truncated_mass": float(sol.pi @ clip),
        "dropped_jobs_per_slot": float(sol.pi @ drop),
        "residual": sol.residual,
        "solver": sol.solver,
        "law_system": system,
        "ranges": {k: half_range(v) for k, v in (("tokens", tokens), ("drop", drop))},
        **_statistics(model, policy, pi, grid, float(sol.pi @ tokens)),
    }


def _initial_cap(model: PIModel) -> int:
    """A first cap: a few maximal batches, more in heavy traffic."""
    amax = max(model.arrivals.values)
    return int(max(8, 2 * amax, math.ceil(2 * amax / max(1e-3, 1 - model.load))))


def solve_pi_exact(
    arrivals: Any,
    services: Any,
    *,
    policy: str = "pi",
    n: int | None = None,
    cap: int | None = None,
    mass_tol: float = MASS_TOL,
    residual_tol: float = RESIDUAL_TOL,
    max_states: int = MAX_STATES,
    max_entries: int = MAX_ENTRIES,
    progress: bool = False,
) -> PIExactResult:
    """Stationary statistics of the truncated PI (or PI-Split, JIQ, JSQ, Random) chain.

    Parameters
    ----------
    arrivals, services, n:
        The model, as for :func:`sim.pi.simulate_pi` (``n <= 3``; load ``< 1``).
    policy:
        ``"pi"`` (eq. (4)), ``"pi-split"`` (eq. (9), default split rule),
        ``"jiq"``, ``"jsq"`` or ``"random"``.
    cap:
        Queue cap ``K``; default: chosen so that the truncated mass is at most
        ``mass_tol``.
    residual_tol:
        Largest accepted ``||pi (P - I)||_1``.
    max_states, max_entries:
        Refuse larger problems (checked before allocating).

    Returns
    -------
    PIExactResult

    Raises
    ------
    ParameterError
        Invalid model, ``n > 3``, load ``>= 1``, or a problem too large.
    NumericalError
        The stationary solve failed its residual check.
    """
    model = _checked_model(arrivals, services, n, policy)
    max_states = check_int("max_states", max_states, 1)
    max_entries = check_int("max_entries", max_entries, 1)
    if not 0 < mass_tol < 1:
        raise ParameterError(f"mass_tol must lie in (0, 1), got {mass_tol!r}.")
    t0 = time.perf_counter()
    tried: list[tuple[int, float]] = []
    if cap is not None:
        cap = check_int("cap", cap, 1)
        _check_size(model, policy, cap, max_states, max_entries)
        best = _at_cap(model, policy, cap, residual_tol, progress)
        tried.append((cap, best["truncated_mass"]))
    else:
        best = _choose_cap(
            model, policy, tried, mass_tol=mass_tol, residual_tol=residual_tol,
            max_states=max_states, max_entries=max_entries, progress=progress,
        )  # fmt: skip
    return PIExactResult(
        model=model,
        policy=policy,
        seconds=time.perf_counter() - t0,
        caps_tried=tried,
        **best,
    )


def _checked_model(arrivals: Any, services: Any, n: int | None, policy: str) -> PIModel:
    """The validated model (:func:`derive.models.persistent_idle.make_model`) with the
    exact solver's own conditions: a known policy, ``n <= MAX_N``, load below one, and
    for Random dispatch every server loaded below one."""
    if policy not in POLICIES:
        raise ParameterError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}.")
    model = make_model(arrivals, services, n)
    if model.n > MAX_N:
        raise ParameterError(
            f"n must be <= {MAX_N} for the exact solver (states n (cap + 1)^n), got {model.n}."
        )
    check_load(model, allow_unstable=False)
    if policy == "random":
        worst = max(model.mean_arrival / model.n / s.mean for s in model.services)
        if worst >= 1:
            raise ParameterError(
                f"policy 'random' must load every server below one for a stationary solution "
                f"(E[a] / (n E[s_i]) < 1), got {worst:.6g}."
            )
    return model


def _choose_cap(
    model: PIModel,
    policy: str,
    tried: list[tuple[int, float]],
    *,
    mass_tol: float,
    residual_tol: float,
    max_states: int,
    max_entries: int,
    progress: bool,
) -> dict[str, Any]:
    """Solve at growing caps until the truncated mass is at most ``mass_tol`` (module
    docstring): from :func:`_initial_cap`, by 1.5 at first, then to the cap the
    geometric decay of the last two masses predicts (with 10 % to spare).  Appends
    ``(cap, mass)`` of every solve to ``tried``; refuses a mass that does not decay."""
    k = _initial_cap(model)
    while True:
        _check_size(model, policy, k, max_states, max_entries)
        best = _at_cap(model, policy, k, residual_tol, progress)
        mass = best["truncated_mass"]
        tried.append((k, mass))
        if mass <= mass_tol:
            return best
        if len(tried) >= 2 and mass > 0.5 * tried[-2][1]:
            raise ParameterError(
                f"policy {policy!r} must give a stable chain for the exact solver, but the "
                f"truncated mass does not decay with the cap ({tried[-2][1]:.3g} at cap "
                f"{tried[-2][0]}, {mass:.3g} at cap {k}): some server is overloaded."
            )
        nxt = math.ceil(1.5 * k)
        if len(tried) >= 2 and 0 < mass < tried[-2][1]:
            # geometric decay between the last two caps: jump to the predicted cap
            (k1, m1), (k2, m2) = tried[-2], tried[-1]
            rate = math.log(m1 / m2) / (k2 - k1)
            need = k2 + math.log(m2 / mass_tol) / rate
            nxt = max(k + 1, math.ceil(1.1 * need))
        k = nxt


def _statistics(
    model: PIModel, policy: str, pi: np.ndarray, grid: np.ndarray, tokens: float
) -> dict[str, Any]:
    """The module docstring's statistics from the stationary law ``pi`` of the queue
    vectors ``grid`` and the ``tokens`` sent per slot: mean queues, delay (Little's
    law), idle probabilities and messages (JSQ polls all ``n`` servers per batch,
    Random sends none, PI/PI-Split/JIQ send tokens)."""
    mean_queue = pi @ grid
    idle = grid == 0
    ea = model.mean_arrival
    p_batch = 1.0 - model.arrivals.prob(0)
    if policy == "jsq":
        msgs = model.n * p_batch
    elif policy == "random":
        msgs = 0.0
    else:
        msgs = tokens
    return {
        "mean_queue": mean_queue,
        "mean_total": float(mean_queue.sum()),
        "delay": float(mean_queue.sum() / ea),
        "p_idle": pi @ idle,
        "p_some_idle": float(pi @ idle.any(axis=1)),
        "tokens_per_slot": tokens,
        "messages_per_slot": msgs,
        "messages_per_job": msgs / ea,
        "messages_per_batch": msgs / p_batch,
    }
