"""``simulate(model, params, *, N, ...)``: the one entry of simulation.

:func:`choose` picks the engine for a model (:mod:`sim.base` holds the
interface and finds a family's fast path in :data:`mfstein.ground.fast_paths.FAST_PATHS`,
:mod:`sim.generic` the engines).  No model family is named here: the
supermarket's short form ``simulate_supermarket(N, lam, b, d)`` lives in
:mod:`mfstein.families.supermarket.simulate_short_form` (``sim.simulate_supermarket``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from mfstein.ground.arguments import check_keywords, check_params, check_path, check_start
from mfstein.ground.errors import ParameterError, check_choice, check_int
from sim import warm_runs
from sim.base import (
    RunOptions,
    SimulationResult,
    Simulator,
    dispatch_policies,
    fast_simulator,
    fast_simulators,
    simulation_problem,
)
from sim.generic import GenericSimulator

#: Values of ``engine=`` in :func:`simulate`: ``auto`` (the model's fast path when
#: it accepts the model, else generic), ``generic`` (any model, on its own compiled
#: event loop), ``fast`` (the fast path, or an error), the engines of a fast path by
#: name (:attr:`sim.base.Simulator.engines`: the supermarket family's two), and
#: ``interpreted`` (any model, on the event loop compiled once for every model:
#: :mod:`sim.interpreted`).
ENGINES = ("auto", "generic", "fast", "aggregated", "per-server", "interpreted")


def _owners(offers: Callable[[type[Simulator]], bool]) -> list[tuple[str, type[Simulator]]]:
    """The families (and their fast-path simulators) whose simulator ``offers`` something."""
    return [(f, cls) for f, cls in fast_simulators().items() if offers(cls)]


def choose(model: Any, params: Mapping[str, Any], engine: str = "auto") -> type[Simulator]:
    """The engine for ``model``: its fast path (:func:`sim.base.fast_simulator`) when
    ``engine`` is ``"auto"`` or ``"fast"`` and the fast path accepts the model, else
    the generic one; any other name is an engine of a fast path's own
    (:attr:`sim.base.Simulator.engines`), refused for a model of another family."""
    check_choice("engine", engine, ENGINES)
    if engine == "interpreted":
        from sim.interpreted import InterpretedSimulator

        return InterpretedSimulator
    if engine == "generic":
        return GenericSimulator
    fast = fast_simulator(model)
    if fast is not None and fast.accepts(model, params):
        if engine in ("auto", "fast") or engine in fast.engines:
            return fast
    if engine not in ("auto", "fast"):
        owners = " or ".join(f for f, _ in _owners(lambda c: engine in c.engines))
        raise ParameterError(
            f"engine {engine!r} runs the {owners} family only, not model {model.name}; "
            "use engine='auto' or 'generic'."
        )
    if engine == "fast":
        raise ParameterError(
            f"model {model.name} has no fast-path simulator for these parameters; "
            "use engine='auto' or 'generic'."
        )
    return GenericSimulator


def _engine_for(model: Any, engine: str, policy: str, given_start: bool, observing: bool) -> str:
    """The engine ``engine="auto"`` stands for, after checking that ``policy`` (a dispatch
    rule of a fast path's own engine, :attr:`sim.base.Simulator.policy_engine`) and
    observables (the generic engine's) fit the model and the engine asked for."""
    if policy != "pod":
        fast = fast_simulator(model)
        runner = None if fast is None else fast.policy_engine
        if runner is None:
            owners = " or ".join(
                f"the {f}'s {c.policy_engine} engine"
                for f, c in _owners(lambda c: c.policy_engine is not None)
            )
            raise ParameterError(
                f"policy {policy!r} is a dispatch rule of {owners}; "
                f"model {model.name} runs its own transitions (policy='pod')."
            )
        if engine == "auto" and not given_start:
            engine = runner
        if engine != runner:
            raise ParameterError(
                f"policy {policy!r} is run by the {model.info.fast_path}'s {runner} engine; "
                f"use engine='{runner}' (or policy='pod')."
            )
    if engine == "auto" and given_start:
        engine = "generic"
    if engine == "interpreted":
        return engine
    if observing:
        if engine not in ("auto", "generic"):
            raise ParameterError("observables need engine='generic' (or 'auto').")
        engine = "generic"
    return engine


@check_keywords
def simulate(
    model: Any,
    params: Mapping[str, Any] | None = None,
    *,
    N: int,
    steps: int = 10**7,
    reps: int = 4,
    seed: int = 0,
    workers: int | None = None,
    engine: str = "auto",
    policy: str = "pod",
    start: Sequence[Any] | str | None = None,
    truncation: Any = None,
    scheduler: str | None = None,
    checkpoint: str | os.PathLike | None = None,
    batches: int = 20,
    warmup_fraction: float = 0.1,
    progress: bool = False,
    max_units: int | None = None,
    observables: Sequence[Any] | str = (),
) -> SimulationResult:
    """Simulate the finite-N chain of ``model`` and estimate its stationary statistics.

    Parameters
    ----------
    model, params:
        The model and its parameter values, as :func:`derive.models.as_model`
        takes them (a model name such as ``"sir"`` or ``"file.py:factory"`` is
        built from the entries of ``params`` that are factory keywords).
    N:
        Population size, ``1 <= N <= 2^31 - 1`` (:data:`mfstein.ground.limits.SIM_MAX_N`;
        the model's own range for an ``N`` parameter).
    steps, reps, seed, workers:
        Events (jumps) per replication, the first ``warmup_fraction`` of them
        discarded; independent replications from ``SeedSequence(seed)``; local
        processes (default the cores, at most ``reps``).  The same seed gives
        the same numbers whatever ``workers`` or ``scheduler``.
    engine:
        One of :data:`ENGINES`.  ``auto`` picks the model's registered fast path
        (for the supermarket family the aggregated CTMC on the counts) unless a
        ``start`` or ``truncation`` is given, else the generic engine on the
        loop :func:`sim.interpreted.pick_loop` picks; ``aggregated`` and ``per-server``
        (explicit FIFO servers, with response times) are the supermarket
        family's engines.
    policy:
        Dispatch of the supermarket's per-server engine: ``"pod"``
        (power-of-``d``), ``"jsq"`` or ``"random"``; another policy than
        ``"pod"`` selects that engine under ``auto``.
    start, truncation:
        Initial state in fractions (fixes the conservation laws) and the
        truncation of an unbounded state space (see :func:`numeric.exact.solve`);
        generic engine only.
    scheduler, checkpoint, batches, warmup_fraction, progress, max_units:
        A Dask scheduler address; a JSON checkpoint written atomically and
        resumed from; batches per replication (batch-means CIs); the warm-up
        fraction; a progress bar; stop after this many units of work.
    observables:
        Observables ``g`` (declared names, expressions or strings; see
        :mod:`sim.observables` for those the statistics support) whose
        ``E[g(S_N)]`` is estimated with a 95% CI in ``result.observables``;
        they run on the generic engine.

    Returns
    -------
    SimulationResult
        Every size is checked (:mod:`mfstein.ground.limits`) before any work.
    """
    check_params(params)
    check_path("checkpoint", checkpoint)
    check_start(start)
    from mfstein.ground.limits import SIM_MAX_N

    opts = RunOptions(  # checked before any symbolic or compiled work
        steps=steps, reps=reps, seed=seed, workers=workers, scheduler=scheduler,
        checkpoint=checkpoint, batches=batches, warmup_fraction=warmup_fraction,
        progress=progress, max_units=max_units,
    ).checked()  # fmt: skip
    check_choice("engine", engine, ENGINES)
    if policy != "pod":  # every engine runs the model's own transitions: nothing to load
        check_choice("policy", policy, dispatch_policies())
    key, kept = _kept_run(model, params, N, start, truncation, engine, policy, observables, opts)
    if kept is not None:  # prepared by an earlier process: no SymPy, no mean-field solve
        return _rented(kept, opts)._run(opts)
    from derive.model import Model

    warm = warm_runs.run_key(model, params, N, start, truncation, engine, policy, observables)
    if (hit := warm_runs.kept(warm)) is not None:  # prepared by an earlier call: one lookup
        return hit._run(opts)
    from numeric.heterogeneous.entry import is_heterogeneous  # (mpmath: not on the kept path)

    if isinstance(model, str):
        from derive.models import as_model

        model, params = as_model(model, params)
    if is_heterogeneous(model):  # K objects, one event at a time
        return _heterogeneous(model, params, N, opts, start, observables)
    if not isinstance(model, Model):
        from numeric.exact.prepared import prepare

        prepare(model, N, params)  # the one-sentence refusal of a non-model
    check_int("N", N, 1, SIM_MAX_N)
    if isinstance(observables, str):
        observables = [observables]
    given_start = bool(start) or truncation is not None
    picked = _engine_for(model, engine, policy, given_start, bool(observables))
    prepared = _observables(model, params, observables)
    chosen = _simulator(model, params, (engine, picked), prepared, opts)
    problem = simulation_problem(model, N, params, start)  # prepared once, read by the engine
    engine, sim = picked, chosen.from_problem(problem, N, truncation=truncation)
    if engine in type(sim).engines:  # one of the fast path's own engines, by name
        sim.engine, sim.policy = engine, policy
    if prepared:
        sim.observe(prepared)
    if key is not None and isinstance(sim, GenericSimulator):  # (no key with observables)
        from sim import prepared_runs

        prepared_runs.save(key, sim.record())
    warm_runs.keep(warm, sim)
    return _rented(sim, opts)._run(opts)


def _rented(sim: Simulator, opts: RunOptions) -> Simulator:
    """``sim``, after counting its events when ``engine="auto"`` put the run on the
    interpreted loop in place of the model's compiled one (:func:`sim.rent.pay`: the
    rent that decides when ``auto`` compiles it, :func:`sim.interpreted.pick_loop`)."""
    rented = getattr(sim, "rented_chain", None)
    if rented is not None:
        from sim import rent

        rent.pay(rented(), opts.steps * opts.reps)
    return sim


def _simulator(
    model: Any, params: Any, engines: tuple[str, str], prepared: tuple, opts: RunOptions
) -> Any:
    """The simulator class of ``engines = (asked, engine)`` (:func:`choose` of ``engine``);
    when ``auto`` was asked for and it is the generic engine, on the loop
    :func:`sim.interpreted.pick_loop` picks for the run (the interpreted loop's
    simulator remembers the most events for which that pick holds, kept with the run)."""
    asked, engine = engines
    chosen = choose(model, params or {}, engine)
    if asked != "auto" or chosen is not GenericSimulator:
        return chosen
    from sim.interpreted import pick_loop

    chosen, limit = pick_loop(model, [o.expr for o in prepared], opts)
    return chosen if limit is None else _Limited(chosen, limit)


class _Limited(NamedTuple):
    """A simulator class whose simulators get
    :attr:`sim.interpreted.InterpretedSimulator.max_events`."""

    cls: type[Simulator]
    limit: int

    def from_problem(self, *args: Any, **kwargs: Any) -> Simulator:
        """``cls.from_problem(*args, **kwargs)`` with ``max_events = limit``."""
        sim = self.cls.from_problem(*args, **kwargs)
        sim.max_events = self.limit
        return sim


def _compiled_since(chain: Any) -> bool:
    """Whether the model's compiled loop that an ``auto`` run put on the interpreted loop
    (the chain module ``chain`` of its record) has been compiled since, by a run asking
    for ``engine="generic"`` or by a longer run."""
    if not isinstance(chain, str):
        return False
    from sim.generic_kernels import chain_compiled

    return chain_compiled(chain)


def _paid(record: dict) -> int:
    """The events ``auto`` ran on the interpreted loop in place of the compiled loop the
    kept ``record`` names (:func:`sim.rent.spent`)."""
    from sim import rent

    chain = record.get("chain")
    return rent.spent(chain if isinstance(chain, str) else None)


def _observables(model: Any, params: Any, observables: Sequence[Any]) -> tuple:
    """Each observable prepared for the simulator (:func:`sim.observables.prepare`)."""
    if not observables:
        return ()
    from sim.observables import prepare

    values = dict(params or {})
    return tuple(prepare(model, g, values) for g in observables)


def _heterogeneous(
    model: Any, params: Any, N: int, opts: RunOptions, start: Any, observables: Sequence[Any] | str
) -> Any:
    """:func:`simulate` of a heterogeneous population (:mod:`sim.heterogeneous`), with
    its declared ``observables`` (:mod:`numeric.heterogeneous.observables`)."""
    from numeric.heterogeneous.observables import find, observe
    from sim.heterogeneous import simulate_heterogeneous

    find(model, observables or None)  # an unknown name: one sentence before the run
    r = simulate_heterogeneous(
        model, params, N=N, steps=opts.steps, reps=opts.reps, seed=opts.seed,
        batches=opts.batches, warmup_fraction=opts.warmup_fraction, start=start,
    )  # fmt: skip
    return replace(r, observables=observe(model, params, r, observables or None))


def _kept_run(
    model: Any,
    params: Any,
    N: Any,
    start: Any,
    truncation: Any,
    engine: str,
    policy: str,
    observables: Any,
    opts: RunOptions,
) -> tuple[str | None, GenericSimulator | None]:
    """The key of a run of a model given by name on the generic engine
    (:mod:`sim.prepared_runs`; ``None`` for another run) and the simulator an
    earlier process prepared for it (``None`` when there is none, or when ``auto``
    kept a run on the interpreted loop and this one, with the events run there before
    in place of the model's compiled loop, is too long for it: :mod:`sim.rent`)."""
    if not isinstance(model, str) or observables:
        return None, None
    if policy != "pod" or engine not in ("auto", "generic", "interpreted"):
        return None, None
    from sim import prepared_runs
    from sim.interpreted import InterpretedSimulator

    key = prepared_runs.run_key(model, params, N, start, truncation, engine)
    record = prepared_runs.load(key)
    if isinstance(record, dict) and record.get("loop") == "interpreted":
        limit = record.get("max_events")
        if engine == "auto" and not (
            isinstance(limit, int) and _paid(record) + opts.steps * opts.reps <= limit
        ):
            return key, None  # rented long enough: choose afresh (sim.rent)
        if engine == "auto" and _compiled_since(record.get("chain")):
            return key, None  # the model's own loop is compiled now: choose afresh
        cls: type[GenericSimulator] = InterpretedSimulator
    else:
        cls = GenericSimulator
    return key, prepared_runs.simulator(
        key, record, lambda r: cls.from_record(r, model, params), lambda s: s.loadable()
    )
