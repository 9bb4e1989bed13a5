"""What a simulator of a finite-N model is: its interface, its result, its registry.

Every simulator of mfstein estimates stationary time averages of the finite-N
chain of a density-dependent population process (Section 3 of "Beyond
Scaling: Calculable Error Bound of the Power-of-Two-Choices Mean-Field Model
in Heavy-Traffic") by batch means over independent replications
(:mod:`sim.stats`, :mod:`sim.runner`).  Like PySB's ``SimulatorBase``, a
:class:`Simulator` is built for one model and its parameters, says what it
supports (:attr:`Simulator.capabilities`), and ``run`` returns one result type,
:class:`SimulationResult`, whatever the engine.

Engines:

``generic``      :class:`sim.generic.GenericSimulator`: any model, compiled
                 from its generated kernels (``jumps``, ``rates_into``);
``supermarket``  :class:`mfstein.families.supermarket.fast_path.SupermarketFastPath`: the aggregated
                 simulator of :mod:`mfstein.families.supermarket.aggregated`, the ``simulation``
                 route
                 of the supermarket family in the one fast-path table
                 :data:`mfstein.ground.fast_paths.FAST_PATHS`.

:func:`fast_simulator` finds a model's fast path (one registered at run time
with :func:`mfstein.ground.fast_paths.register` first, then the built-in table);
:func:`sim.api.choose` picks the engine for a model.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from mfstein.ground.arguments import renamed_attribute
from mfstein.ground.display import (
    FamilyField,
    Presentable,
    count_row,
    heading_rows,
    measured,
    shape_text,
)
from mfstein.ground.errors import ParameterError
from mfstein.ground.fast_paths import families, load
from sim.summary import status_fields, status_rows

#: Capabilities a simulator may declare.
CAPABILITIES = (
    "any-model",  # runs any derive.Model
    "workers",  # local worker processes
    "dask",  # a Dask scheduler
    "checkpoint",  # resumable JSON checkpoints, identical to an uninterrupted run
    "interrupt",  # Ctrl-C keeps completed batches
    "marginals",  # marginal pmfs P(n_k = j)
    "conservation",  # models with conservation laws
)


@dataclass(frozen=True, repr=False)
class SimulationResult(Presentable):
    """Estimates of one simulated model, each an :class:`sim.stats.Estimate` (95% CI).

    The one result type of :func:`sim.simulate`, whatever the engine.
    """

    #: The simulated model's name.
    model: str
    #: The engine that ran it (``simulator`` is its deprecated name, warns;
    #: ``"simulator"`` its key in :meth:`to_dict`, the documented ``--json`` output).
    engine: str
    #: The population size (number of servers).
    N: int
    #: The parameter values, as strings.
    params: dict[str, str]
    #: The state's dimension (``b`` is its deprecated name, warns; ``"b"`` its key in
    #: :meth:`to_dict`, the documented ``--json`` output).
    n: int
    #: Events per replication.
    steps: int
    #: The number of replications.
    reps: int
    #: The seed.
    seed: int
    #: Batches per replication.
    batches: int
    #: Events discarded as warm-up.
    warmup: int
    #: The centre ``s*`` (mean-field fixed point of :func:`numeric.solve`).
    s_star: list[float]
    #: The lattice start of the chain (``None`` when the engine does not report it).
    start: list[int] | None
    #: ``N E||S - s*||^2`` (the core paper's Tables 1 and 2).
    n_mse: Any
    #: ``E[S]``.
    mean: Any
    #: ``N (E[S] - s*)`` (compare with the refined mean field ``V``).
    n_bias: Any
    #: ``N Cov(S)``.
    n_cov: Any
    #: ``P(n_k = j)`` as an Estimate of shape ``(b, m)``, or ``None``.
    marginal_pmf: Any
    #: The queue-length law, for the queueing (monotone) models; ``None`` otherwise.
    queue_length_pmf: Any
    #: The mean number of jobs per server, for the queueing (monotone) models; ``None``
    #: otherwise.
    mean_jobs: Any
    #: The fraction of arrivals blocked, for the queueing (monotone) models; ``None``
    #: otherwise.
    blocking: Any
    #: The number of jumps simulated.
    events: int
    #: Jumps per second per core (CPU time).
    events_per_second: float
    #: The run's elapsed (wall-clock) time in seconds, workers included.
    wall_seconds: float
    #: Whether every batch ran.
    complete: bool
    #: Whether Ctrl-C stopped the run.
    interrupted: bool
    #: The lag-1 autocorrelation of the batch means of ``N E||S - s*||^2`` (near 0 when
    #: the batches are long enough).
    lag1_autocorrelation: float
    #: What the run found doubtful, one sentence each (batches not all completed,
    #: batch means correlated at lag 1, a blocking fraction that distorts the
    #: comparison: :mod:`sim.summary`); printed under the table.
    warnings: list[str] = field(default_factory=list)
    #: What only the model's family defines, name -> value.  For the supermarket's
    #: engines ``lam`` (the arrival rate as a float), ``lam_text`` (as given), ``d`` (the
    #: servers sampled per arrival), ``replacement`` (whether they are sampled with
    #: replacement) and ``policy`` (the dispatch policy); empty for other engines.  Read
    #: through the properties of the same names (``None`` when absent).
    family_fields: dict[str, Any] = field(default_factory=dict)
    #: The mean response time (CI), its quantiles and histogram, from the per-server
    #: engine only.
    response_time: dict | None = None
    #: Name -> Estimate of ``E[g(S_N)]`` for the observables requested
    #: (:mod:`sim.observables`); empty when none (then absent from
    #: :meth:`to_dict`, else its ``"observables"``: name -> ``{"mean", "ci95"}``).
    observables: dict[str, Any] = field(default_factory=dict)
    #: The generic engine's event loop that ran, ``"compiled"`` (generated and compiled
    #: for the model, :mod:`sim.generic_kernels`) or ``"interpreted"`` (compiled once for
    #: every model, :mod:`sim.table_loop`); ``None`` for the other engines (then absent
    #: from :meth:`to_dict`).
    loop: str | None = None

    simulator = renamed_attribute("SimulationResult", "simulator", "engine")
    b = renamed_attribute("SimulationResult", "b", "n")

    lam = FamilyField("The family's arrival rate as a float (:attr:`family_fields`).")
    lam_text = FamilyField("The family's arrival rate as given (:attr:`family_fields`).")
    d = FamilyField("The family's servers sampled per arrival (:attr:`family_fields`).")
    replacement = FamilyField(
        "Whether the family samples its ``d`` servers with replacement (:attr:`family_fields`)."
    )
    policy = FamilyField("The family's dispatch policy (:attr:`family_fields`).")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the keys of ``mfstein simulate --json`` (estimates as
        ``{"mean", "ci95"}`` of plain floats; ``lam`` as the decimal string given)."""
        from sim.stats import plain, printed, printed_response_time

        def est(e: Any) -> Any:
            return None if e is None else e.to_dict()

        mean, mean_ci = printed(self.mean.mean, self.mean.ci95)
        bias, bias_ci = printed(self.n_bias.mean, self.n_bias.ci95)

        out: dict[str, Any] = {"model": self.model, "N": self.N}
        if self.lam_text is not None:
            out.update(
                {"lam": self.lam_text, "d": self.d, "replacement": self.replacement,
                 "policy": self.policy}
            )  # fmt: skip
        out.update(
            {
                "simulator": self.engine,
                "params": dict(self.params),
                "b": self.n,  # the documented key of --json (the dimension, `n`)
                "steps": self.steps,
                "reps": self.reps,
                "seed": self.seed,
                "batches": self.batches,
                "warmup": self.warmup,
                "s_star": list(self.s_star),
                "start": self.start,
                "n_mse": self.n_mse.to_dict(),
                "mean": plain(mean),
                "mean_ci95": plain(mean_ci),
                "n_bias": plain(bias),
                "n_bias_ci95": plain(bias_ci),
                "n_cov": self.n_cov.to_dict(),
                "marginal_pmf": est(self.marginal_pmf),
                "queue_length_pmf": est(self.queue_length_pmf),
                "mean_jobs": est(self.mean_jobs),
                **_blocking(self.blocking),
            }
        )
        if self.lam_text is not None:
            out["response_time"] = printed_response_time(self.response_time)
        if self.loop is not None:
            out["loop"] = self.loop
        if self.observables:
            out["observables"] = {k: e.to_dict() for k, e in self.observables.items()}
        out.update(events=self.events, events_per_second=measured(self.events_per_second))
        return out | status_fields(self)

    def to_text(self, *, short_form: bool = False) -> str:
        """What ``mfstein simulate`` prints (:func:`sim.result_text.simulation_text`): the
        heading and the run, ``N E||S - s*||^2``, the queueing numbers, per coordinate
        ``s*_k``, ``E[S_k]``, ``N(E[S_k] - s*_k)`` and ``N Var(S_k)`` with 95% CIs, the
        :attr:`observables` and the speed.  ``short_form=True``: the layout of the
        family's short form (``mfstein simulate --N --lam --b``), its heading from
        :attr:`family_fields` (a :class:`ParameterError` when they are empty)."""
        from sim.result_text import simulation_text

        return simulation_text(self, short_form=short_form)

    def _rows(self) -> list[tuple[str, str]]:
        rows = [
            *heading_rows(f"{self.model}, N = {self.N} ({self._engine_text()})", self.params),
            ("N E||S-s*||^2", self.n_mse.text()),
        ]
        if self.blocking is not None:
            rows.append(("blocking", self.blocking.text()))
        for name, e in list(self.observables.items())[:3]:
            rows.append((f"E[{name}]", e.text()))
        if len(self.observables) > 3:
            rows.append(count_row("observables", self.observables))
        rows += [
            ("mean, n_bias", f"{shape_text(self.mean.mean)}, {shape_text(self.n_bias.mean)}"),
            ("run", f"seed {self.seed}, {self.reps} x {self.steps:,} events, {self.batches} "
                    f"batches"),
            ("speed", f"{self.events_per_second:.3g} events/s, {self.wall_seconds:.3g} s wall"),
        ]  # fmt: skip
        return rows + status_rows(self.complete, self.warnings)

    def _engine_text(self) -> str:
        loop = f", {self.loop} loop" if self.loop else ""
        return f"{self.engine} engine{loop}"

    _MORE = "estimates: .n_mse, .mean, .n_bias, .n_cov (mean, ci95); .to_dict() for JSON"


class Simulator(ABC):
    """Interface of a simulator of one model at one parameter point.

    Subclasses set :attr:`name` and :attr:`capabilities` and implement
    :meth:`_prepare` and :meth:`_run` (:meth:`run` checks the options first).
    A simulator is built from the prepared problem, as every fast-path route takes it
    (:meth:`from_problem`, the ``simulation`` route of
    :mod:`mfstein.ground.fast_paths`; :func:`sim.simulate` prepares the problem once,
    :func:`simulation_problem`); the constructor ``cls(model, N, params, start=,
    truncation=)`` prepares it first (from this process's cache when prepared before).
    Everything is validated before :meth:`run` (one-sentence
    :class:`mfstein.ground.errors.ParameterError` on bad input) so that ``run`` only
    simulates.

    Parameters
    ----------
    model:
        A :class:`derive.model.Model`.
    N:
        Population size (servers), ``1 <= N <= 2^31 - 1`` (:mod:`mfstein.ground.limits`).
    params:
        Parameter name -> value.
    start:
        Initial state in fractions (fixes the conservation laws); default the
        model's reference point.
    truncation:
        For unbounded state spaces: ``n_k <= floor(N truncation)``.
    """

    name: ClassVar[str] = ""
    capabilities: ClassVar[frozenset[str]] = frozenset()
    #: Engines of its own that ``simulate(engine=...)`` may name (a fast path's).
    engines: ClassVar[tuple[str, ...]] = ()
    #: The engine of :attr:`engines` that runs dispatch policies other than ``"pod"``.
    policy_engine: ClassVar[str | None] = None
    #: The dispatch policies ``simulate(policy=...)`` may name for this simulator:
    #: ``"pod"`` (the model's own transitions, every engine) and the rules its
    #: :attr:`policy_engine` runs (a fast path's, e.g. the supermarket's
    #: ``("pod", "jsq", "random")``).
    policies: ClassVar[tuple[str, ...]] = ("pod",)

    def __init__(
        self,
        model: Any,
        N: int,
        params: Mapping[str, Any] | None = None,
        *,
        start: Sequence[Any] | str | None = None,
        truncation: Any = None,
    ) -> None:
        self._take(simulation_problem(model, N, params, start), N, truncation)

    @classmethod
    def from_problem(cls, problem: Any, N: int, *, truncation: Any = None) -> Simulator:
        """The simulator of the prepared problem ``problem``
        (:class:`numeric.prepared.problem.PreparedProblem`: the model, the parameters as
        given and read, the start) at population ``N``, which reads the problem instead
        of preparing it again; ``problem`` is that of the finite-N call
        (:func:`simulation_problem`: ``N`` filled in for a model with a parameter ``N``).

        A subclass with a constructor of its own (the class protocol before the
        prepared problem) is built by it, ``cls(model, N, params, start=,
        truncation=)``, with a :class:`DeprecationWarning`."""
        from numeric.prepared.problem import PreparedProblem

        if not isinstance(problem, PreparedProblem):
            raise ParameterError(
                "problem must be a prepared problem (sim.base.simulation_problem(model, N, "
                f"params, start)), got {type(problem).__name__}."
            )
        if cls.__init__ is not Simulator.__init__:
            import warnings

            warnings.warn(
                f"{cls.__name__}.__init__(model, N, params, start=, truncation=) is "
                "deprecated; a simulator reads the prepared problem (sim.base.Simulator."
                "from_problem, its _prepare reading self.problem).",
                DeprecationWarning,
                stacklevel=2,
            )
            return cls(
                problem.model, N, dict(problem.params), start=problem.start, truncation=truncation
            )
        sim = cls.__new__(cls)
        sim._take(problem, N, truncation)
        return sim

    def _take(self, problem: Any, N: int, truncation: Any) -> None:
        """Hold ``problem`` (:meth:`from_problem`), ``N`` and ``truncation``, then
        :meth:`_prepare`."""
        from mfstein.ground.errors import check_int
        from mfstein.ground.limits import SIM_MAX_N

        # the finite model, N and the parameter N checked once per problem and N (the
        # parameter point is the problem's own: nothing is read again), kept with it
        N = check_int("N", N, 1, SIM_MAX_N)
        prepared = problem.derived(
            ("finite-N", N), lambda: _finite_n(problem.model, N, problem.params)
        )
        #: The prepared problem (:class:`numeric.prepared.problem.PreparedProblem`) the
        #: simulator reads: its model, parameters, values and start.
        self.problem = problem
        #: The model prepared for ``N`` (:class:`numeric.exact.prepared.PreparedModel`):
        #: a simulator's lattice, start and centre are placed from it
        #: (:meth:`numeric.exact.prepared.PreparedModel.place_problem`).
        self.prepared = prepared
        self.model = problem.model
        self.N = prepared.N
        self.params = self.prepared.params
        self.values = self.prepared.values
        self.start = problem.start
        self.truncation = truncation
        self._prepare()

    @abstractmethod
    def _prepare(self) -> None:
        """Validate and precompute for this engine (after the model, ``N`` and the
        parameters are checked: ``self.params`` by name, ``self.values`` parsed)."""

    def supports(self, feature: str) -> bool:
        """Whether this simulator has the capability ``feature`` (:data:`CAPABILITIES`)."""
        return feature in self.capabilities

    @classmethod
    def accepts(cls, model: Any, params: Mapping[str, Any]) -> bool:
        """Whether this engine can run ``model`` (a fast path checks its structure)."""
        return "any-model" in cls.capabilities

    def run(self, **options: Any) -> SimulationResult:
        """Simulate and estimate.

        ``options`` are those of :class:`RunOptions` (``steps``, ``reps``,
        ``seed``, ``workers``, ``scheduler``, ``checkpoint``, ``batches``,
        ``warmup_fraction``, ``progress``, ``max_units``; see
        :func:`sim.api.simulate`); they are checked against
        :mod:`mfstein.ground.limits` before any work.
        """
        return self._run(RunOptions(**options).checked())

    @abstractmethod
    def _run(self, options: RunOptions) -> SimulationResult:
        """Simulate with checked ``options`` (what each engine implements)."""


@dataclass(frozen=True)
class RunOptions:
    """How to run a simulation: the options every engine shares, with their defaults."""

    #: Events per replication (jumps of the chain); the first ``warmup_fraction`` of them
    #: is discarded.
    steps: int = 10**7
    #: The number of independent replications.
    reps: int = 4
    #: The seed; each replication draws from its own child of
    #: ``SeedSequence(seed).spawn(reps)``.
    seed: int = 0
    #: The number of local processes (by default one per core, at most ``reps``); results
    #: do not depend on it.
    workers: int | None = None
    #: A Dask scheduler address to run on instead of local processes; results do not
    #: depend on it.
    scheduler: str | None = None
    #: JSON file written after every unit of work and resumed from.
    checkpoint: str | os.PathLike | None = None
    #: Batches per replication (batch-means confidence intervals).
    batches: int = 20
    #: The fraction of each replication's events discarded as warm-up, in ``[0, 1)``.
    warmup_fraction: float = 0.1
    #: Whether to show a tqdm progress bar.
    progress: bool = False
    #: Stop after this many units of work (warm-ups and batches).
    max_units: int | None = None

    def checked(self) -> RunOptions:
        """These options with the sizes checked (:func:`sim.runner.check_run`) and
        ``workers`` resolved."""
        import dataclasses

        from sim.runner import check_run

        run = check_run(
            self.steps, self.reps, self.seed, self.workers, self.warmup_fraction,
            batches=self.batches,
        )  # fmt: skip
        # CheckedRun's fields are options of the same names (numbers: no deep copy needed)
        fields = {f.name: getattr(run, f.name) for f in dataclasses.fields(run)}
        return dataclasses.replace(self, **fields)

    def runner_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :func:`sim.runner.run` and :func:`sim.api.simulate`
        that pass through unchanged."""
        return {
            "reps": self.reps,
            "seed": self.seed,
            "workers": self.workers,
            "scheduler": self.scheduler,
            "checkpoint": self.checkpoint,
            "progress": self.progress,
            "max_units": self.max_units,
        }


def simulation_problem(
    model: Any, N: int, params: Mapping[str, Any] | None, start: Sequence[Any] | str | None = None
) -> Any:
    """The prepared problem of a simulation of ``model`` at ``params`` from ``start`` at
    population ``N``, ``1 <= N <= 2^31 - 1`` (:data:`mfstein.ground.limits.SIM_MAX_N`):
    the finite-N chain's (:func:`numeric.exact.prepared.prepare`, ``N`` filled in for a
    model with a parameter ``N``; :meth:`numeric.exact.prepared.PreparedModel.problem`),
    from this process's cache when prepared before."""
    return _finite_n(model, N, params).problem(start)


def _finite_n(model: Any, N: int, params: Mapping[str, Any] | None) -> Any:
    """:func:`numeric.exact.prepared.prepare` of ``N`` checked against
    :data:`mfstein.ground.limits.SIM_MAX_N` (the parameter point from this process's
    cache when read before)."""
    from mfstein.ground.errors import check_int
    from mfstein.ground.limits import SIM_MAX_N
    from numeric.exact.prepared import prepare

    return prepare(model, check_int("N", N, 1, SIM_MAX_N), params)


def register_simulator(fast_path: str, cls: type[Simulator]) -> None:
    """Deprecated: ``mfstein.ground.fast_paths.register(fast_path, FastPath(simulation=cls))``,
    which registers every task of a family at once.  Uses ``cls`` for models whose
    ``info.fast_path`` is ``fast_path`` (when it accepts them), keeping the other
    tasks of an earlier registration of that name."""
    import warnings
    from dataclasses import replace

    from mfstein.ground.fast_paths import register, registered

    warnings.warn(
        "sim.base.register_simulator is deprecated; use mfstein.ground.fast_paths.register("
        "name, FastPath(simulation=cls)).",
        DeprecationWarning,
        stacklevel=2,
    )
    if not (isinstance(cls, type) and issubclass(cls, Simulator)):
        raise ParameterError(f"a simulator must subclass sim.base.Simulator, got {cls!r}.")
    register(fast_path, replace(registered(fast_path), simulation=cls))


def simulator_of(family: str | None) -> type[Simulator] | None:
    """The fast-path simulator of a family name: its ``simulation`` route in the one
    table (:mod:`mfstein.ground.fast_paths`: registered at run time, else built in),
    else ``None``; a registered route that is not a :class:`Simulator` subclass is
    refused in one sentence."""
    cls = load(family, "simulation")
    if cls is not None and not (isinstance(cls, type) and issubclass(cls, Simulator)):
        raise ParameterError(
            f"the simulation route of family {family!r} must subclass sim.base.Simulator, "
            f"got {cls!r}."
        )
    return cls


def fast_simulator(model: Any) -> type[Simulator] | None:
    """The fast-path simulator of ``model``'s family (``info.fast_path``), or ``None``."""
    return simulator_of(model.info.fast_path)


def fast_simulators() -> dict[str, type[Simulator]]:
    """Every fast-path simulator by family: the table's, then the registered ones."""
    return {family: cls for family in families("simulation") if (cls := simulator_of(family))}


def dispatch_policies() -> tuple[str, ...]:
    """The policies ``simulate(policy=...)`` accepts: ``"pod"`` (the model's own
    transitions), then those of every fast-path simulator (:attr:`Simulator.policies`,
    in the order of :func:`fast_simulators`), each once."""
    names = dict.fromkeys(Simulator.policies)
    for cls in fast_simulators().values():
        names.update(dict.fromkeys(cls.policies))
    return tuple(names)


def __getattr__(name: str) -> Any:
    """``POLICIES``: the deprecated name of :func:`dispatch_policies` (warns)."""
    if name == "POLICIES":
        from mfstein.ground.arguments import warn_renamed

        warn_renamed("sim.base", "POLICIES", "dispatch_policies()")
        return dispatch_policies()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _blocking(blocking: Any) -> dict[str, Any]:
    """``blocking`` and ``blocking_ci95`` as printed (``None`` without a buffer)."""
    if blocking is None:
        return {"blocking": None, "blocking_ci95": None}
    out = blocking.to_dict()
    return {"blocking": out["mean"], "blocking_ci95": out["ci95"]}
