"""Simulation of the Persistent-Idle (PI) policy under batch arrivals and random capacities.

Model and policies are those of "On the Persistent-Idle Load Distribution Policy
Under Batch Arrivals and Random Service Capacity": ``n`` servers in discrete time,
i.i.d. batches ``a(t)`` with ``P(a = 0) > 0``, i.i.d. capacities ``s_i(t) >= 1``;

* ``"pi"``: eq. (4), ``Q_i(t) = [Q_i(t-1) + a(t) 1{LI(t) = i} - s_i(t)]^+`` with
  ``LI(t)`` uniform on ``I(t-1)`` (eq. (3)) when some server is idle, else
  ``LI(t) = LI(t-1)``;
* ``"pi-split"``: eq. (9), the batch split over the idle servers by a rule ``f``
  satisfying (7) and (8) (default: equal shares, the remainder one job each to a
  uniformly chosen subset of the idle servers);
* ``"jiq"``, ``"jsq"``, ``"random"`` for comparison (whole batch to one server).

The compiled loop is :func:`sim.pi_kernels.run_slots`.  Replications, workers,
the progress bar, Ctrl-C handling and checkpoints reuse :mod:`sim.runner`'s
pieces; seeds come from :func:`sim.rng.seed_states` (one
``SeedSequence(seed).spawn(reps)`` child per replication feeding a xoshiro256**
stream), and confidence intervals are :mod:`sim.stats`'s batch means over the
pooled batches of all replications.  Every number is a function of ``seed``
(and the parameters) only, whatever the number of workers or interruptions.

>>> r = simulate_pi("0:.4,2:.2,4:.3,6:.1", ["1:1", "1:.5,2:.3,3:.2"],
...                 slots=10**6, reps=2, seed=1)                    # doctest: +SKIP
>>> r.mean_total.mean, r.mean_total.ci95                             # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import inspect
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from derive.models.persistent_idle import PIModel, check_load, make_model
from mfstein.ground import jit
from mfstein.ground.display import Presentable, measured
from mfstein.ground.errors import ParameterError, check_choice
from sim import pi_kernels as K
from sim import runner, stats, summary

#: Checkpoint format of this simulator (part of the run's configuration).
CHECKPOINT_KIND = "pi-v1"
#: Seconds of one core numba takes to compile :func:`sim.pi_kernels.run_slots` on a
#: first run (measured: a two-server ``pi`` run 7.1 s with an empty cache; with a warm
#: one 1.0 s since session 41, when every process stopped compiling it again).
PI_COMPILE_SECONDS = 3.0
#: Origins the path-bound check may hold while waiting for ``Omega`` (see pi_kernels).
PENDING_CAPACITY = 1 << 14

#: Counters accumulated over the whole path of a replication (warm-up included).
PATH_COUNTERS = (
    K.BOUND_CHECKS,
    K.BOUND_VIOL,
    K.EQ37_VIOL,
    K.EQ37_VIOL_PROOF,
    K.UNCHECKED,
    K.BUSY_WHILE_IDLE,
)

SplitRule = Callable[[np.ndarray, int, float, np.ndarray], None]


@dataclass(frozen=True)
class PISpec:
    """Everything a worker needs to simulate one system (hashable, picklable)."""

    #: The validated model (:func:`derive.models.persistent_idle.make_model`).
    model: PIModel
    #: One of :data:`sim.pi_kernels.POLICIES`.
    policy: str
    #: Evaluate the path-bound counters (eq. (37)).
    check_bound: bool = True
    #: ``"module:function"`` of a user split rule, or ``""`` for the default.
    rule_name: str = ""

    def config(self) -> dict[str, Any]:
        """The JSON description a checkpoint is matched against."""
        return {
            "kind": CHECKPOINT_KIND,
            "model": self.model.to_dict(),
            "policy": self.policy,
            "check_bound": self.check_bound,
            "split_rule": self.rule_name,
        }


def _rule_name(rule: Any) -> str:
    fn = getattr(rule, "py_func", rule)
    return f"{fn.__module__}:{fn.__qualname__}"


def load_rule(name: str) -> SplitRule:
    """Import a split rule given as ``"module:function"`` and compile it with numba if needed.

    Raises
    ------
    ParameterError
        The name does not resolve to a callable.
    """
    from mfstein.ground.jit import numba
    from mfstein.ground.streams import user_output_to_stderr

    mod, _, attr = name.partition(":")
    try:
        with user_output_to_stderr():  # a print() in the user's module: not on stdout
            obj: Any = importlib.import_module(mod)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError, ValueError):
        raise ParameterError(
            f"split-rule must name an importable function as module:function, got {name!r}."
        ) from None
    if not callable(obj):
        raise ParameterError(f"split-rule must name a callable, got {name!r}.")
    if not hasattr(obj, "py_func"):
        if not inspect.isfunction(obj):  # numba compiles Python functions only
            raise ParameterError(
                f"split-rule must name a Python function f(q, a, b, out), got {name!r} "
                f"(a {type(obj).__name__})."
            )
        obj = numba.njit(obj)
    return obj


@lru_cache(maxsize=16)
def _tables(model: PIModel) -> dict[str, np.ndarray]:
    """Alias tables of the batch pmf and of every server's capacity pmf.

    Each distinct pmf object is tabulated once and its row copied to the servers
    that share it (identical servers share one object, :func:`make_model`): with
    10^6 identical servers this is one table and a gather, not 10^6 calls of
    :func:`sim.pi_kernels.alias_table` (15 s per unit of work before)."""
    a_thr, a_alias = K.alias_table(model.arrivals.probs)
    n = model.n
    rows: dict[int, int] = {}  # id of a pmf object -> its row
    pmfs: list[Any] = []
    which = np.empty(n, dtype=np.int64)
    for i, s in enumerate(model.services):
        row = rows.get(id(s))
        if row is None:
            row = rows[id(s)] = len(pmfs)
            pmfs.append(s)
        which[i] = row
    width = max(len(s.values) for s in pmfs)
    val = np.zeros((len(pmfs), width), dtype=np.int64)
    thr = np.ones((len(pmfs), width))
    alias = np.zeros((len(pmfs), width), dtype=np.int64)
    k = np.zeros(len(pmfs), dtype=np.int64)
    for r, s in enumerate(pmfs):
        m = len(s.values)
        thr[r, :m], alias[r, :m] = K.alias_table(s.probs)
        val[r, :m] = s.values
        k[r] = m
    return {
        "a_val": np.asarray(model.arrivals.values, dtype=np.int64),
        "a_thr": a_thr,
        "a_alias": a_alias,
        "s_val": val[which],
        "s_thr": thr[which],
        "s_alias": alias[which],
        "s_k": k[which],
    }


_RULES: dict[str, SplitRule] = {}
#: The registered rules as :func:`sim.pi_kernels.rule_pointer` gives them to the kernel.
_POINTERS: dict[str, Any] = {}


def _rule(spec: PISpec) -> tuple[bool, Any]:
    """``(custom, rule)`` for :func:`sim.pi_kernels.run_slots`: the user's rule as a
    first-class function, or the placeholder :data:`sim.pi_kernels.no_rule`."""
    if not spec.rule_name:
        return False, K.no_rule
    if spec.rule_name not in _POINTERS:
        if spec.rule_name not in _RULES:
            _RULES[spec.rule_name] = load_rule(spec.rule_name)
        _POINTERS[spec.rule_name] = K.rule_pointer(_RULES[spec.rule_name])
    return True, _POINTERS[spec.rule_name]


def fresh_state(spec: PISpec, rng: np.ndarray) -> dict:
    """An empty system, ``X(0) = (0, ..., 0, 1)`` (server 1 is ``LI(0)``), RNG state ``rng``."""
    chain = np.zeros(4, dtype=np.int64)
    return {
        "rng": np.asarray(rng, dtype=np.uint64).copy(),
        "q": np.zeros(spec.model.n, dtype=np.int64),
        "chain": chain,
        "pending": np.zeros((0, K.PENDING_COLUMNS), dtype=np.int64),
        "counters": np.zeros(len(PATH_COUNTERS), dtype=np.int64),
    }


def advance(spec: PISpec, state: dict, steps: int) -> tuple[dict, dict]:
    """Run ``steps`` slots from ``state`` (not modified); return ``(new_state, sums)``.

    ``sums`` holds ``scalars`` (layout :data:`sim.pi_kernels.SLOTS` ...),
    ``qsum`` and ``idle`` (per server) and ``seconds`` (CPU time of this unit).

    Raises
    ------
    ParameterError
        The user split rule returned an allocation violating (7) or (8).
    """
    t = _tables(spec.model)
    custom, rule = _rule(spec)
    n = spec.model.n
    q = np.array(state["q"], dtype=np.int64)
    chain = np.array(state["chain"], dtype=np.int64)
    rng = np.array(state["rng"], dtype=np.uint64)
    pending = np.zeros((PENDING_CAPACITY, K.PENDING_COLUMNS), dtype=np.int64)
    old = np.asarray(state["pending"], dtype=np.int64).reshape(-1, K.PENDING_COLUMNS)
    pending[: len(old)] = old
    chain[K.NPEND] = len(old)
    scal = np.zeros(K.N_SCALARS, dtype=np.int64)
    qsum = np.zeros(n, dtype=np.int64)
    idle = np.zeros(n, dtype=np.int64)
    alloc = np.zeros(n, dtype=np.int64)
    t0 = time.thread_time()
    status = K.run_slots(
        K.POLICIES[spec.policy],
        custom,
        q,
        chain,
        rng,
        int(steps),
        t["a_val"],
        t["a_thr"],
        t["a_alias"],
        t["s_val"],
        t["s_thr"],
        t["s_alias"],
        t["s_k"],
        pending,
        spec.check_bound,
        scal,
        qsum,
        idle,
        rule,
        alloc,
    )
    seconds = time.thread_time() - t0
    if status == K.RULE_ERROR:
        raise ParameterError(
            f"split-rule must return an allocation for every state with an idle server; for "
            f"queues {q.tolist()} and batch {int(chain[K.BAD_BATCH])} it raised an exception."
        )
    if status == K.RULE_VIOLATION:
        raise ParameterError(
            f"split-rule must satisfy eq. (7) (shares summing to the batch) and eq. (8) "
            f"(nothing to a busy server while one is idle); for queues {q.tolist()} and "
            f"batch {int(chain[K.BAD_BATCH])} it returned {alloc.tolist()}."
        )
    new = {
        "rng": rng,
        "q": q,
        "chain": chain,
        "pending": pending[: chain[K.NPEND]].copy(),
        "counters": np.asarray(state["counters"], dtype=np.int64) + scal[list(PATH_COUNTERS)],
    }
    sums = {
        "scalars": scal.astype(float),
        "qsum": qsum.astype(float),
        "idle": idle.astype(float),
        "seconds": seconds,
    }
    return new, sums


def _register_rule(split_rule: SplitRule | str, policy: str, model: PIModel, seed: int) -> str:
    """Compile (if needed), probe (:func:`probe_rule`) and register a user split rule for
    the workers; return its ``"module:function"`` name (what a checkpoint records)."""
    if policy != "pi-split":
        raise ParameterError(f"split-rule applies to policy pi-split only, got {policy!r}.")
    if isinstance(split_rule, str):
        rule_name = split_rule
        rule = load_rule(split_rule)
    else:
        rule_name = _rule_name(split_rule)
        rule = split_rule if hasattr(split_rule, "py_func") else load_rule(rule_name)
    _RULES[rule_name] = rule
    _POINTERS.pop(rule_name, None)
    probe_rule(rule, model, seed)
    return rule_name


def probe_rule(rule: SplitRule, model: PIModel, seed: int = 0, trials: int = 200) -> None:
    """Call a split rule on random states with an idle server and check (7) and (8).

    A quick check before a run (the simulator checks every call as well).

    Raises
    ------
    ParameterError
        An allocation that does not sum to the batch, is negative, or sends jobs
        to a busy server.
    """
    gen = np.random.default_rng(seed)
    n = model.n
    sizes = [v for v in model.arrivals.values if v > 0] or [1]
    for _ in range(trials):
        q = gen.integers(0, 4, size=n).astype(np.int64)
        q[gen.integers(n)] = 0
        a = int(gen.choice(sizes))
        out = np.zeros(n, dtype=np.int64)
        rule(q, a, float(gen.random()), out)
        if out.sum() != a or (out < 0).any() or (out[q > 0] != 0).any():
            raise ParameterError(
                f"split-rule must satisfy eq. (7) (shares summing to the batch) and eq. (8) "
                f"(nothing to a busy server while one is idle); for queues {q.tolist()} and "
                f"batch {a} it returned {out.tolist()}."
            )


@dataclass(frozen=True, repr=False)
class PIResult(Presentable):
    """Estimates with 95% confidence half-widths (batch means over replications)."""

    #: The Persistent-Idle model (batch law, servers' capacity laws, ``n``).
    model: PIModel
    #: The dispatch policy.
    policy: str
    #: The name of the rule that splits a batch among the idle servers (PI-Split).
    split_rule: str
    #: Slots per replication.
    slots: int
    #: The number of replications.
    reps: int
    #: The seed; every number of the result is a function of it.
    seed: int
    #: Batches per replication.
    batches: int
    #: Slots discarded as warm-up per replication.
    warmup: int
    #: ``E[Q_i]`` per server (queues recorded at the end of a slot).
    mean_queue: stats.Estimate
    #: ``E[Q_total] = E[sum_i Q_i]``.
    mean_total: stats.Estimate
    #: The mean delay in slots by Little's law, ``E[Q_total] / E[a]``, the mean number of
    #: slot ends a job spends in the system (0 if served in its arrival slot).
    delay: stats.Estimate
    #: ``P(Q_i = 0)`` per server.
    p_idle: stats.Estimate
    #: The communication cost in messages per slot. Under PI, PI-Split and JIQ the
    #: messages are tokens (a server sends one when it becomes idle; the dispatcher
    #: returns it with the next jobs it sends there), i.e. one message for server ``i`` in
    #: slot ``t`` iff ``Q_i(t-1) + a_i(t) > 0`` and ``Q_i(t) = 0``. Under PI a token is
    #: returned only by a non-empty batch, so in steady state at most one message per
    #: non-empty batch, ``messages_per_slot = P(a > 0) P(I(t-1) != {}) <= P(a > 0)``.
    #: Under JSQ there are ``n`` queue-length messages per non-empty batch (the dispatcher
    #: polls every server); under Random none.
    messages_per_slot: stats.Estimate
    #: The communication cost in messages per job, :attr:`messages_per_slot` divided by
    #: ``E[a]``.
    messages_per_job: stats.Estimate
    #: The communication cost in messages per non-empty batch, :attr:`messages_per_slot`
    #: divided by ``P(a > 0)``.
    messages_per_batch: stats.Estimate
    #: Tokens sent per slot, whatever the policy (the messages of PI, PI-Split and JIQ).
    tokens_per_slot: stats.Estimate
    #: Fraction of slots with ``a(t) > 0`` (estimates ``P(a > 0)``).
    batch_fraction: stats.Estimate
    #: ``E[Q_total(t) - Q_total(t-1)]`` per slot over the measured batches; about
    #: ``0`` when stable, positive when ``E[a] >= sum_i E[s_i]``.
    drift: stats.Estimate
    #: Origins ``u`` at which ``tau_0 <= max(1, max_{i != LI(u+1)} Q_i(u))`` was
    #: checked.
    bound_checks: int
    #: Violations of the bound checked at the :attr:`bound_checks` origins (0 for PI; see
    #: :mod:`sim.pi_kernels`).
    bound_violations: int
    #: Violations of (37) exactly as printed, ``tau_0 <= max_{i != LI(0)} Q_i(0)``, over
    #: all origins.
    eq37_violations: int
    #: Violations of (37) as printed over the origins where no server other than ``LI(u)``
    #: is idle (the case the paper's proof treats; 0 for PI).
    eq37_violations_proof_case: int
    #: Origins not checked (pending buffer full).
    unchecked: int
    #: Slots in which a job joined a busy server while some server was idle
    #: (0 for PI, PI-Split, JIQ and JSQ by construction; checked every slot).
    busy_while_idle: int
    #: Slots measured, over every replication (warm-up excluded).
    measured_slots: int
    #: Server-slots simulated per second per core (CPU time).
    server_slots_per_second: float
    #: The run's elapsed (wall-clock) time in seconds, workers included.
    wall_seconds: float
    #: Whether every batch ran.
    complete: bool
    #: Whether Ctrl-C stopped the run.
    interrupted: bool
    #: The lag-1 autocorrelation of the batch means of ``Q_total``.
    lag1_autocorrelation: float
    #: What the run found doubtful, one sentence each; printed under the table.
    warnings: list[str] = field(default_factory=list)

    _MORE: ClassVar[str] = "per-server estimates and path-bound counters in to_dict()"

    def to_dict(self) -> dict[str, Any]:
        """``mfstein pi --json``'s object; each estimate as :meth:`sim.stats.Estimate.to_dict`."""
        est = {
            k: getattr(self, k).to_dict()
            for k in (
                "mean_queue",
                "mean_total",
                "delay",
                "p_idle",
                "messages_per_slot",
                "messages_per_job",
                "messages_per_batch",
                "tokens_per_slot",
                "batch_fraction",
                "drift",
            )
        }
        return {
            "method": "simulation",
            **self.model.to_dict(),
            "policy": self.policy,
            "split_rule": self.split_rule,
            "slots": self.slots,
            "reps": self.reps,
            "seed": self.seed,
            "batches": self.batches,
            "warmup": self.warmup,
            **est,
            "path_bound": {
                "checks": self.bound_checks,
                "violations": self.bound_violations,
                "eq37_as_printed_violations": self.eq37_violations,
                "eq37_as_printed_violations_proof_case": self.eq37_violations_proof_case,
                "unchecked": self.unchecked,
            },
            "busy_while_idle": self.busy_while_idle,
            "measured_slots": self.measured_slots,
            "server_slots_per_second": measured(self.server_slots_per_second),
            **summary.status_fields(self),
        }

    def _rows(self) -> list[tuple[str, str]]:
        rule = f" (split rule {self.split_rule})" if self.split_rule else ""
        rows = [
            ("model", self.model.summary()),
            ("policy", self.policy + rule),
            ("E[Q_total]", self.mean_total.text()),
            ("mean delay", self.delay.text()),
            ("messages/job", self.messages_per_job.text()),
            ("drift", self.drift.text()),
            ("path bound", f"{self.bound_checks:,} origins, {self.bound_violations:,} violations"),
            ("run", f"seed {self.seed}, {self.reps} x {self.slots:,} slots, "
                    f"{self.batches} batches"),
        ]  # fmt: skip
        return rows + summary.status_rows(self.complete, self.warnings)

    def to_text(self) -> str:
        """What ``mfstein pi`` prints: the heading (:func:`numeric.pi.text.heading`), the
        run, ``E[Q_i]`` and ``P(idle)`` per server and the totals with 95% CIs, the
        path-bound and eq. (37) counters and the speed."""
        from numeric.pi.text import heading

        rule = f" (split rule {self.split_rule})" if self.split_rule else ""
        out = [
            heading(self.model, self.policy + rule),
            f"seed = {self.seed}, {self.reps} replications x {self.slots:.3g} slots (warm-up "
            f"{self.warmup:.3g}, {self.batches} batches), 95% CIs",
            f"{'server':>6} {'E[Q_i]':>22} {'P(idle)':>22}",
        ]
        q, idle = self.mean_queue, self.p_idle
        for i in range(self.model.n):
            out.append(
                f"{i + 1:>6} {q.mean[i]:>12.5f} ± {q.ci95[i]:<8.2g}"
                f"{idle.mean[i]:>12.5f} ± {idle.ci95[i]:<8.2g}"
            )
        totals = (
            ("E[Q_total]", self.mean_total),
            ("mean delay (slots)", self.delay),
            ("messages / job", self.messages_per_job),
            ("messages / batch", self.messages_per_batch),
            ("drift of Q_total", self.drift),
        )
        out += [f"{name:<18}= {float(e.mean):.6g} ± {float(e.ci95):.2g}" for name, e in totals]
        out += [
            f"path bound tau_0 <= max(1, max_(i != LI(1)) Q_i(0)): {self.bound_checks:,} "
            f"origins, {self.bound_violations:,} violations",
            f"eq. (37) as printed: {self.eq37_violations:,} violations "
            f"({self.eq37_violations_proof_case:,} where no server but LI(0) is idle)",
            f"jobs sent to a busy server while one was idle: {self.busy_while_idle:,} slots",
            f"{self.server_slots_per_second:.3g} server-slots/s per core",
        ]
        return "\n".join(out)


def summarise(spec: PISpec, out: runner.RunOutput, *, slots: int, seed: int) -> PIResult:
    """Pool the batches of every replication into :class:`PIResult`."""
    batches = summary.completed_batches(out, "slots")
    model = spec.model
    sc = np.array([b["scalars"] for b in batches])
    T = sc[:, K.SLOTS]
    qsum = np.array([b["qsum"] for b in batches])
    idle = np.array([b["idle"] for b in batches])
    mean_queue = stats.ratio(qsum, T)
    total = qsum.sum(axis=1)
    mean_total = stats.ratio(total, T)
    ea = model.mean_arrival
    delay = stats.Estimate(mean_total.mean / ea, mean_total.ci95 / ea)
    p_idle = stats.ratio(idle, T)
    tokens = stats.ratio(sc[:, K.TOKENS], T)
    if spec.policy == "jsq":
        msgs = stats.ratio(model.n * sc[:, K.NONEMPTY], T)
    elif spec.policy == "random":
        msgs = stats.Estimate(0.0, 0.0)
    else:
        msgs = tokens
    p_batch = 1.0 - model.arrivals.prob(0)
    per_job = stats.Estimate(msgs.mean / ea, msgs.ci95 / ea)
    per_batch = stats.Estimate(msgs.mean / p_batch, msgs.ci95 / p_batch)
    drift = stats.ratio(sc[:, K.Q_END] - sc[:, K.Q_START], T)
    rho = stats.lag1_autocorrelation(total, T)

    def count(idx: int) -> int:
        # whole paths, warm-up included (kept in each replication's state)
        j = PATH_COUNTERS.index(idx)
        return int(sum(int(r.state["counters"][j]) for r in out.reps))

    warnings = []
    if model.load >= 1.0:
        warnings.append(
            f"load {model.load:.6g} >= 1: the system is unstable (E[a] >= sum E[s_i]); the "
            "estimates are time averages of a transient run, not stationary quantities."
        )
    warnings += summary.run_warnings(
        out, len(batches), rho, statistic="Q_total", steps_name="slots",
        correlation=model.load < 1.0,
    )  # fmt: skip
    if model.load < 1.0 and float(drift.mean) > 3 * float(drift.ci95):
        warnings.append(
            f"Q_total grows by {float(drift.mean):.3g} +- {float(drift.ci95):.2g} per slot: "
            f"policy {spec.policy} appears unstable here although E[a] < sum E[s_i]."
        )
    unchecked = count(K.UNCHECKED)
    if unchecked:
        warnings.append(f"{unchecked} origins of the path-bound check were not checked.")
    return PIResult(
        model=model,
        policy=spec.policy,
        split_rule=spec.rule_name or ("equal" if spec.policy == "pi-split" else ""),
        slots=slots,
        reps=len(out.reps),
        seed=seed,
        batches=out.plan.batches,
        warmup=out.plan.warmup,
        mean_queue=mean_queue,
        mean_total=mean_total,
        delay=delay,
        p_idle=p_idle,
        messages_per_slot=msgs,
        messages_per_job=per_job,
        messages_per_batch=per_batch,
        tokens_per_slot=tokens,
        batch_fraction=stats.ratio(sc[:, K.NONEMPTY], T),
        drift=drift,
        bound_checks=count(K.BOUND_CHECKS),
        bound_violations=count(K.BOUND_VIOL),
        eq37_violations=count(K.EQ37_VIOL),
        eq37_violations_proof_case=count(K.EQ37_VIOL_PROOF),
        unchecked=unchecked,
        busy_while_idle=count(K.BUSY_WHILE_IDLE),
        measured_slots=int(T.sum()),
        server_slots_per_second=summary.per_second(float(T.sum()) * model.n, batches),
        wall_seconds=out.wall_seconds,
        complete=out.complete,
        interrupted=out.interrupted,
        lag1_autocorrelation=rho,
        warnings=warnings,
    )


def simulate_pi(
    arrivals: Any,
    services: Any,
    *,
    policy: str = "pi",
    n: int | None = None,
    slots: int = 10**6,
    reps: int = 4,
    batches: int = 20,
    warmup_fraction: float = 0.1,
    seed: int = 0,
    workers: int | None = None,
    checkpoint: str | os.PathLike | None = None,
    allow_unstable: bool = False,
    split_rule: SplitRule | str | None = None,
    check_bound: bool = True,
    progress: bool = False,
    max_units: int | None = None,
) -> PIResult:
    """Simulate PI, PI-Split, JIQ, JSQ or Random and estimate their stationary statistics.

    Parameters
    ----------
    arrivals:
        Batch-size pmf, e.g. ``"0:.4,2:.2,4:.3,6:.1"`` or ``{0: .4, 2: .2, ...}``;
        ``P(a = 0) > 0``.
    services:
        One capacity pmf for all servers, or a list with one per server; support
        ``>= 1``.
    policy:
        ``"pi"``, ``"pi-split"``, ``"jiq"``, ``"jsq"`` or ``"random"``.
    n:
        Number of servers (default: the number of service pmfs).
    slots:
        Slots per replication; the first ``warmup_fraction`` is discarded.
    reps, batches:
        Independent replications, and batches per replication for the
        batch-means confidence intervals.
    seed:
        Non-negative integer; replication ``i`` uses child ``i`` of
        ``SeedSequence(seed).spawn(reps)``.
    workers:
        Local processes (default: cores, at most ``reps``); results do not depend on it.
    checkpoint:
        JSON file written after every unit of work and resumed from if it exists.
    allow_unstable:
        Accept ``E[a] >= sum_i E[s_i]`` for a transient run (a warning says so).
    split_rule:
        PI-Split only: ``rule(q, a, b, out)`` writing into the int64 array ``out``
        the jobs sent to each server, given the queues ``q``, the batch ``a`` and
        ``b ~ U[0, 1)`` (the i.i.d. ``B(t)`` of eq. (6)); a numba-compiled
        function, a plain Python function (compiled here) or
        ``"module:function"``.  Must satisfy (7) and (8); checked on random
        states first and then in every slot it is used.
    check_bound:
        Evaluate the path-bound counters (cheap; on by default).
    max_units:
        Stop after this many units of work (warm-ups and batches).

    Returns
    -------
    PIResult
    """
    check_choice("policy", policy, K.POLICIES)
    from mfstein.ground.limits import check_memory, simulation_bytes

    model = make_model(arrivals, services, n)
    check_load(model, allow_unstable)
    run = runner.check_run(
        slots, reps, seed, workers, warmup_fraction, batches=batches, steps_name="slots"
    )
    slots, reps, seed, workers = run.steps, run.reps, run.seed, run.workers
    check_memory(
        f"simulating n = {model.n:,} servers ({reps} replications, {workers} workers)",
        simulation_bytes(model.n, 0, True, reps, workers)
        + reps * PENDING_CAPACITY * K.PENDING_COLUMNS * 8,
    )
    rule_name = "" if split_rule is None else _register_rule(split_rule, policy, model, seed)
    plan = runner.Plan.make(slots, run.batches, run.warmup_fraction, "slots")
    spec = PISpec(model, policy, bool(check_bound), rule_name)
    if progress:
        seconds = jit.first_compile_seconds(PI_COMPILE_SECONDS, K.run_slots)
        jit.announce_compile("the persistent-idle simulator", seconds)
    # sim.runner.run with this module's units: checkpoints, workers, Ctrl-C semantics
    return runner.run_and_pool(
        spec,
        plan,
        lambda out: summarise(spec, out, slots=slots, seed=seed),
        reps=reps,
        seed=seed,
        workers=workers,
        checkpoint=checkpoint,
        progress=progress,
        max_units=max_units,
        advance=advance,
        fresh_state=fresh_state,
        desc=f"simulate {policy} n={model.n}",
    )
