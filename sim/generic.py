"""Simulation of any model: the generic simulator.

``sim.simulate(model, params, N=N, ...)`` estimates the stationary statistics
of the finite-N chain ``n -> n + l`` at rate ``N beta_l(n / N)`` (Section 3 of
"Beyond Scaling: Calculable Error Bound of the Power-of-Two-Choices Mean-Field
Model in Heavy-Traffic") -- the same statistics as :func:`numeric.exact.solve`:
``E[S]``, ``N (E[S] - s*)``, ``N Cov(S)``, ``N E||S - s*||^2``, the marginal
pmfs, and for the queueing models the queue-length pmf, the mean number of
jobs and the blocking fraction -- each with a 95% batch-means confidence
interval (:mod:`sim.stats`).

Engines (:mod:`sim.base`):

* :class:`GenericSimulator` runs the jump chain with exact holding-time
  weighting (:mod:`sim.generic_kernels`), compiled from the model's generated
  kernels (``jumps``, ``rates_into``);
* a family's registered simulator (``FAST_PATHS[...].simulation``, e.g. the
  supermarket's :mod:`mfstein.families.supermarket.fast_path`) runs that family on engines of
  its own.

Both kinds use the machinery of :mod:`sim.runner`: replications seeded from
``SeedSequence(seed).spawn(reps)``, local workers or a Dask scheduler, a tqdm
bar, Ctrl-C keeping completed batches, and ``checkpoint`` files from which a
run resumes with the numbers of an uninterrupted run.  Workers find the
model's compiled kernel module in the kernel cache (``$MFSTEIN_CACHE_DIR``; on
a Dask cluster it must be shared).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np

from mfstein.ground.arguments import renamed_attribute, renamed_keywords
from mfstein.ground.errors import ParameterError
from sim import runner, stats, summary
from sim.base import RunOptions, SimulationResult, Simulator

T = TypeVar("T")

#: Largest ``b * (upper + 1)`` for which marginal pmfs are accumulated.
MAX_HIST = 100_000


@dataclass(frozen=True)
class GenericSpec:
    """Everything a worker needs to simulate one model (JSON-ready, picklable)."""

    #: The model's name (for messages and checkpoints).
    model: str
    #: The file stem of the model's generated numba kernel module in the kernel cache (it
    #: embeds a digest of the model and of its generator).
    kernel: str
    #: The file stem of the model's generated event loops
    #: (:func:`sim.generic_kernels.chain_module`) in the kernel cache (it embeds a digest
    #: of the model and of its generator).
    update: str
    #: The population size.
    N: int
    #: The state's dimension.
    n: int
    #: Parameter values (float64, kernel order).
    params: tuple[float, ...]
    #: The jump vectors (the kernels' ``jumps``).
    jumps: tuple[tuple[int, ...], ...]
    #: The centre ``s*``.
    s_star: tuple[float, ...]
    #: Initial counts of every replication.
    start: tuple[int, ...]
    #: The lattice's kind (:mod:`numeric.exact.lattice` codes).
    kind: int
    #: The lattice's largest value of any coordinate; with ``truncated`` jumps above it
    #: are blocked (self-loops), as in the exact solver.
    upper: int
    #: The lattice's bound on the sum of the counts (a simplex's sum bound, else
    #: ``upper``).
    total: int
    #: Whether jumps above ``upper`` are blocked (self-loops), as in the exact solver.
    truncated: bool
    #: The thinning exponent of the second moments.
    thin_bits: int
    #: Values per coordinate kept for the marginal pmfs (``0`` for none).
    hist_len: int
    #: Number of observables the event loops of ``update`` integrate
    #: (:meth:`GenericSimulator.observe`).
    n_obs: int = 0

    b = renamed_attribute("GenericSpec", "b", "n")
    #: Keys of :meth:`config` by their old names, for checkpoints written
    #: before the rename (:func:`sim.runner.run` reads them as the new key).
    RENAMED_CONFIG_KEYS: ClassVar[dict[str, str]] = {"b": "n"}

    def config(self) -> dict:
        """The JSON-ready description a checkpoint of :mod:`sim.runner` is matched against."""
        return {**asdict(self), "s_star": list(self.s_star)}


GenericSpec.__init__ = renamed_keywords(b="n")(GenericSpec.__init__)  # type: ignore[method-assign]


_MODULES: dict[str, Any] = {}


def _kernel_module(name: str) -> Any:
    """The compiled kernel module ``name`` (already loaded, or from the kernel cache:
    :func:`mfstein.ground.generated.load_generated`, as :func:`derive.kernels.load_module`
    loads it, without importing SymPy)."""
    mod = _MODULES.get(name)
    if mod is None:
        from mfstein.ground.generated import load_generated

        mod = _MODULES[name] = load_generated(name)
    return mod


def sparse_jumps(jumps: Sequence[Sequence[int]]) -> tuple[np.ndarray, ...]:
    """The jumps as the event loops read them: transition ``t`` moves coordinates
    ``jump_k[t, :jump_len[t]]`` by ``jump_v[t, :jump_len[t]]``; ``up[t] = 1`` when
    ``sum(l_t) > 0``.  Returns ``(jump_k, jump_v, jump_len, up)``."""
    J = np.asarray(jumps, dtype=np.int64)
    nt, _b = J.shape
    width = max(1, int((J != 0).sum(axis=1).max()) if nt else 1)
    jk = np.zeros((nt, width), dtype=np.int64)
    jv = np.zeros((nt, width), dtype=np.int64)
    jl = np.zeros(nt, dtype=np.int64)
    for t in range(nt):
        nz = np.flatnonzero(J[t])
        jl[t] = nz.shape[0]
        jk[t, : nz.shape[0]] = nz
        jv[t, : nz.shape[0]] = J[t, nz]
    up = (J.sum(axis=1) > 0).astype(np.int64)
    return jk, jv, jl, up


#: The most specs whose arrays a :func:`by_spec` function keeps (the oldest is dropped first).
MAX_SPECS = 64


def by_spec(build: Callable[[Any], T]) -> Callable[[Any], T]:
    """``build(spec)`` made once per spec object and process: what an event loop reads of
    its spec, for every unit of a run (each passes the same spec).

    Found by the spec's identity, not its value: hashing and comparing a spec's fields,
    as :func:`functools.lru_cache` does, costs more than the loop of a short unit.  An
    entry holds its spec, so that no other object takes its ``id`` while it is kept; an
    equal spec that is another object (a worker's unpickled copy) is built once more."""
    kept: dict[int, tuple[Any, T]] = {}

    @functools.wraps(build)
    def get(spec: Any) -> T:
        hit = kept.get(id(spec))
        if hit is not None and hit[0] is spec:
            return hit[1]
        value = build(spec)
        if len(kept) >= MAX_SPECS:
            kept.pop(next(iter(kept)))
        kept[id(spec)] = (spec, value)
        return value

    return get


@by_spec
def _loop_inputs(spec: GenericSpec) -> tuple[np.ndarray, ...]:
    """The event loop's read-only arrays of ``spec``, built once per process for all its
    units (:func:`by_spec`): the parameter values, the sparse jumps (:func:`sparse_jumps`)
    and ``N s*``."""
    p = np.asarray(spec.params, dtype=np.float64)
    target = spec.N * np.asarray(spec.s_star, dtype=np.float64)
    return (p, *sparse_jumps(spec.jumps), target)


def fresh_state(spec: GenericSpec, rng: np.ndarray) -> dict:
    """A replication's initial state: the start counts and its RNG state."""
    return {
        "rng": np.asarray(rng, dtype=np.uint64).copy(),
        "n": np.asarray(spec.start, dtype=np.int64),
    }


@dataclass(frozen=True)
class LoopBuffers:
    """What an event loop writes into (:func:`advance`, :func:`sim.interpreted.advance`),
    made by :func:`loop_buffers`: the record is frozen, its arrays are written in place."""

    #: A copy of the replication's state (``n``, ``rng``), advanced by the loop.
    state: dict
    #: The correction of the time integral (``b``): ``int n_k dt = n_k t - corr_k``.
    corr: np.ndarray
    #: The thinned covariance ``sum w n_j n_k`` (``b x b``, upper triangle).
    cov: np.ndarray
    #: The time at each value of each coordinate (``b x hist_len``).
    hist: np.ndarray
    #: The observables' integrals ``int g_j(S) dt`` (``n_obs``).
    obs: np.ndarray


def loop_buffers(spec: Any, state: dict) -> LoopBuffers:
    """A copy of ``state`` and zeroed sums (:class:`LoopBuffers`) for one run of an
    event loop."""
    b = spec.n
    new = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in state.items()}
    return LoopBuffers(
        new, np.zeros(b), np.zeros((b, b)), np.zeros((b, spec.hist_len)), np.zeros(spec.n_obs)
    )


def loop_sums(buf: LoopBuffers, scalars: np.ndarray, seconds: float, refused: np.ndarray) -> dict:
    """The sums an event loop returns from its buffers, in the layout :func:`advance`
    documents (``mean`` is ``int n_k dt``: the state times the elapsed time, less
    ``corr``)."""
    return {
        "scalars": scalars,
        "mean": buf.state["n"] * scalars[0] - buf.corr,
        "cov": buf.cov,
        "hist": buf.hist,
        "obs": buf.obs,
        "seconds": seconds,
        "refused": refused,
    }


@functools.cache
def no_refusal(b: int) -> np.ndarray:
    """The ``refused`` sum of a unit whose loop did not stop on a rate that is no jump
    rate: ``-1`` in each of the ``b`` coordinates (one read-only array, shared by every
    such unit of this process)."""
    out = np.full(b, -1.0)
    out.flags.writeable = False
    return out


@functools.cache
def _kernels() -> Any:
    """:mod:`sim.generic_kernels` (imported on the first unit: it imports numba)."""
    import sim.generic_kernels

    return sim.generic_kernels


def advance(spec: GenericSpec, state: dict, steps: int) -> tuple[dict, dict]:
    """Run ``steps`` jumps from ``state`` (not modified); return ``(new_state, sums)``.

    ``sums``: ``scalars`` (:mod:`sim.generic_kernels` layout), ``mean``
    (``int n_k dt``), ``cov`` (thinned ``sum w n_j n_k``, upper triangle),
    ``hist`` (time at each value of each coordinate), ``obs`` (``int g_j(S) dt``
    of each observable), ``seconds`` (CPU time) and ``refused`` (the state at which
    the loop stopped on a rate that is no jump rate, else ``-1`` each: :func:`no_refusal`).
    """
    gk = _kernels()
    _kernel_module(spec.kernel)  # the chain module takes rates_into from it
    chain = gk.load_chain(spec.update)
    p, jk, jv, jl, up, target = _loop_inputs(spec)
    buf = loop_buffers(spec, state)
    new = buf.state
    t0 = time.thread_time()
    try:
        scalars = gk.event_loop(chain)(
            p,
            new["n"],
            spec.N,
            jk,
            jv,
            jl,
            up,
            target,
            new["rng"],
            int(steps),
            spec.thin_bits,
            spec.kind,
            spec.upper,
            spec.total,
            buf.corr,
            buf.cov,
            buf.hist,
            buf.obs,
        )
    except ZeroDivisionError:  # rates_into divided by zero at the state new["n"]
        scalars = np.zeros(gk.N_SCALARS)
    seconds = time.thread_time() - t0
    refused = no_refusal(spec.n)
    if scalars[gk.EVENTS] < steps and not _rates_finite(chain, spec, new["n"], p):
        refused = new["n"].astype(float)
    return new, loop_sums(buf, scalars, seconds, refused)


def _rates_finite(chain: Any, spec: GenericSpec, n: np.ndarray, p: np.ndarray) -> bool:
    """Whether the loop's intensities at ``n`` are jump rates: a loop that stopped
    early stopped at an absorbing state, or at a rate negative beyond its round-off
    or not finite (:func:`sim.generic_kernels.clamp_rates` stores NaN there)."""
    s = np.asarray(n, dtype=np.float64) / spec.N
    R = np.empty(len(spec.jumps))
    try:
        with np.errstate(all="ignore"):
            chain.clamp_rates(s, p, chain.rates_into(s, p, R))
    except ZeroDivisionError:
        return False
    return bool(np.all(np.isfinite(R)))


def announce_compile(chain: Any) -> None:
    """One line on standard error before a first compilation of the event loop of
    ``chain`` that takes more than a few seconds (:func:`sim.loop_prices.compile_seconds`,
    :func:`mfstein.ground.jit.announce_compile`), so that the wait before the progress bar
    is not taken for a hang."""
    from mfstein.ground import jit
    from sim.loop_prices import compile_seconds

    jit.announce_compile("the simulator for this model", compile_seconds(chain))


#: The specs whose event loop this process made ready (:meth:`GenericSimulator._make_ready`),
#: by identity: ``id(spec) -> (spec, the loop it loaded)``.
_READY: dict[int, tuple] = {}

#: Prepared runs kept per process (:func:`_prepared_key` -> spec, lattice, notes): a
#: second ``simulate`` of the same model, parameters, ``N``, start and truncation
#: skips the mean-field solve (at :data:`numeric.exact.prepared.CENTRE_DPS` digits) and
#: the lattice.
_PREPARED: dict[tuple, tuple] = {}
#: The most prepared runs kept (the oldest is dropped first).
MAX_PREPARED = 64


def _prepared_key(sim: Simulator) -> tuple:
    """What a prepared run depends on: the model's key, ``N``, the parameters as given
    (after :func:`numeric.exact.prepared.prepare` checked them), the start and the truncation."""
    params = tuple(sorted((str(k), repr(v)) for k, v in sim.params.items()))
    return (sim.model.key, sim.N, params, repr(sim.start), repr(sim.truncation))


class GenericSimulator(Simulator):
    """Any model's jump chain, compiled from its generated kernels (module docstring)."""

    name = "generic"
    #: The event loop (:attr:`sim.base.SimulationResult.loop`).
    loop = "compiled"
    #: Observables to estimate (:func:`sim.observables.prepare`), set by :meth:`observe`.
    observables: tuple = ()
    #: The finite-N chain's placement this run is centred by (:meth:`_centre`); ``None``
    #: when the run was prepared before (in this process or an earlier one).
    placement: Any = None
    capabilities = frozenset(
        {"any-model", "workers", "dask", "checkpoint", "interrupt", "marginals", "conservation"}
    )
    #: The unit of work of :func:`sim.runner.run` on :attr:`loop` (a module-level
    #: function, so that worker processes can unpickle it).
    _advance = staticmethod(advance)

    @classmethod
    def from_record(
        cls, record: dict | None, model: str, params: Mapping[str, Any] | None
    ) -> GenericSimulator | None:
        """The simulator of a run prepared by an earlier process (:meth:`record`, kept by
        :mod:`sim.prepared_runs`) for the model named ``model`` with ``params`` (as given
        to :func:`sim.simulate`); ``None`` when the record or the generated modules it
        names are unusable (then the run is prepared afresh)."""
        if record is None:
            return None
        from mfstein.ground.errors import ParameterError

        try:
            raw = record["spec"]
            spec = GenericSpec(
                **{
                    **raw,
                    "params": tuple(float(x) for x in raw["params"]),
                    "jumps": tuple(tuple(int(x) for x in row) for row in raw["jumps"]),
                    "s_star": tuple(float(x) for x in raw["s_star"]),
                    "start": tuple(int(x) for x in raw["start"]),
                }
            )
            self = cls.__new__(cls)
            self.spec, self.N, self.notes = spec, spec.N, [str(n) for n in record["notes"]]
            self.params = {str(k): str(v) for k, v in record["params"].items()}
            self.arrival = record["arrival"]
        except (KeyError, TypeError, ValueError, AttributeError, ParameterError):
            return None
        if not self.loadable():
            return None
        self.model, self.values, self.start, self.truncation = None, None, None, None
        self.problem = None
        self._source = (model, dict(params or {}))
        return self

    def loadable(self) -> bool:
        """Whether the generated modules :attr:`spec` names (kernels and event loops) are
        held by this process or load from the kernel cache (a damaged or missing one: the
        run is prepared afresh, which generates it again)."""
        from sim.generic_kernels import load_chain

        try:
            _kernel_module(self.spec.kernel)
            load_chain(self.spec.update)
        except (KeyError, TypeError, ValueError, AttributeError, ParameterError):
            return False
        return True

    def record(self) -> dict:
        """What :meth:`from_record` needs, JSON-ready (:mod:`sim.prepared_runs`)."""
        import dataclasses

        return {
            "spec": dataclasses.asdict(self.spec),
            "notes": list(self.notes),
            "params": {k: str(v) for k, v in self.params.items()},
            "arrival": self.arrival,
        }

    def _model(self) -> Any:
        """The model (built again from its name when this simulator came from a record)."""
        if self.model is None:
            from derive.models import as_model

            self.model, _ = as_model(*self._source)
        return self.model

    def _prepare(self) -> None:
        key = _prepared_key(self)
        hit = _PREPARED.get(key)
        if hit is None:
            self._prepare_afresh()
            if len(_PREPARED) >= MAX_PREPARED:
                _PREPARED.pop(next(iter(_PREPARED)))
            _PREPARED[key] = (self.spec, self.lattice, tuple(self.notes))
        else:
            from sim.generic_kernels import chain_module

            self.spec, self.lattice, notes = hit
            self.notes = list(notes)
            # the chain module through the loader that can generate it (at once when it
            # is loaded): a cached file damaged since is generated again here, where
            # load_chain in _run, which has no model, could only refuse it
            chain_module(self.model)
        kern = self.model.kernels("numba")
        _MODULES[self.spec.kernel] = kern.module
        arrival = self.model.structure("arrival")
        self.arrival = str(arrival) if arrival and arrival in self.params else None

    def _prepare_afresh(self) -> None:
        from sim.generic_kernels import chain_module

        kern = self.model.kernels("numba")
        update, _ = chain_module(self.model)
        self.spec = GenericSpec(
            kernel=Path(kern.path).stem,
            update=update,
            jumps=tuple(tuple(int(x) for x in row) for row in kern.jumps),
            **self._centre(),
        )

    def _centre(self) -> dict[str, Any]:
        """The fields of :class:`GenericSpec` every event loop shares: the model's name and
        size, the parameter values, the mean-field centre ``s*`` (:data:`self.notes` gets
        its note), the start ``N s*`` on the lattice (:attr:`lattice`) and its bounds: the
        lattice and the centre are those of the finite-N chain,
        :meth:`numeric.exact.prepared.PreparedModel.place_problem` of the simulator's
        problem (:attr:`problem`) and :meth:`numeric.exact.prepared.Placement.centre`
        (kept as :attr:`placement`)."""
        import mpmath

        from numeric.exact.lattice import KIND_CODES, round_to_lattice
        from sim.thinning import thin_bits

        model, N, values = self.model, self.N, self.values
        # the lattice, the start n0 and the centre as the exact chain's (one implementation)
        self.placement = placement = self.prepared.place_problem(self.problem, self.truncation)
        lattice = placement.lattice
        mf, note = placement.centre()  # from the simulator's problem when it is the centre's
        self.notes = [note] if note else []
        s_star = [float(v) for v in mf.s_star]
        init = round_to_lattice(lattice, [Fraction(mpmath.nstr(v, 25)) for v in mf.s_star], "N s*")
        hist_len = lattice.upper + 1 if model.n * (lattice.upper + 1) <= MAX_HIST else 0
        self.lattice = lattice
        return {
            "model": model.name,
            "N": N,
            "n": model.n,
            "params": tuple(float(values[str(q)]) for q in model.params),
            "s_star": tuple(s_star),
            "start": tuple(int(x) for x in init),
            "kind": KIND_CODES[lattice.kind],
            "upper": int(lattice.upper),
            "total": int(lattice.total),
            "truncated": bool(lattice.truncated),
            "thin_bits": thin_bits(model.n),
            "hist_len": hist_len,
        }

    def observe(self, observables: Sequence[Any]) -> None:
        """Estimate ``E[g(S_N)]`` of each of ``observables`` (:func:`sim.observables.prepare`)
        too: the event loops are those of the chain module compiled with them
        (:func:`sim.generic_kernels.chain_module`), which evaluate every ``g`` at
        every state visited, so any expression is estimated at any N."""
        import dataclasses

        from sim.generic_kernels import chain_module

        self.observables = tuple(observables)
        update, _ = chain_module(self.model, [o.expr for o in self.observables])
        self.spec = dataclasses.replace(self.spec, update=update, n_obs=len(self.observables))

    def _announce_compile(self) -> None:
        """Load (or compile) the model's event loop, saying so when it compiles."""
        from sim.generic_kernels import load_chain

        announce_compile(load_chain(self.spec.update))

    def _run(self, options: RunOptions) -> SimulationResult:
        """Run the replications (:func:`sim.runner.run`) on :attr:`loop` and pool their
        batches."""
        o = options
        plan = runner.Plan.make(o.steps, o.batches, o.warmup_fraction)
        # compile the event loop here: worker processes forked from this one inherit it
        if o.progress:
            self._announce_compile()
        self._make_ready()
        return runner.run_and_pool(
            self.spec,
            plan,
            lambda out: self._summarise(out, steps=o.steps, reps=o.reps, seed=o.seed),
            **o.runner_kwargs(),
            advance=self._advance,
            fresh_state=fresh_state,
        )

    def _loaded_loop(self) -> Any:
        """The event loop of :attr:`spec` as this process holds it: its chain module
        (:func:`sim.generic_kernels.load_chain`, which reads it from the cache when this
        process holds none)."""
        from sim.generic_kernels import load_chain

        return load_chain(self.spec.update)

    def _make_ready(self) -> None:
        """Load (or compile) the event loop of :attr:`spec` by a unit of no event, unless
        this process ran one for the same spec and still holds the loop it loaded
        (:meth:`_loaded_loop`): a warm call skips it."""
        spec = self.spec
        loop = self._loaded_loop()
        if loop is not None and _READY.get(id(spec)) == (spec, loop):
            return
        self._advance(spec, fresh_state(spec, np.ones(4, dtype=np.uint64)), 0)
        if len(_READY) >= MAX_SPECS:
            _READY.pop(next(iter(_READY)))
        _READY[id(spec)] = (spec, self._loaded_loop())

    def _blocking(self, sc: np.ndarray, T: np.ndarray) -> stats.Estimate | None:
        """``1 - (accepted arrival rate) / (offered rate)`` when the model names its
        arrival rate (a queueing model); ``None`` otherwise."""
        from sim.generic_kernels import UP

        arrival = self.arrival
        if arrival is None:
            return None
        rate = float(Fraction(str(self.params[arrival]).strip()))
        accepted = stats.ratio(sc[:, UP], T)
        return stats.Estimate(1.0 - accepted.mean / rate, accepted.ci95 / rate)

    def _rejected_warnings(self, rejected: int) -> list[str]:
        """What the jumps blocked at the truncation or rejected at the lattice's edge mean."""
        if rejected and self.spec.truncated:
            return [
                f"{rejected} jumps above the truncation n_k <= {self.spec.upper} were blocked "
                "(self-loops), as in the exact solver."
            ]
        if rejected:
            return [
                f"{rejected} jumps would have left the lattice and were rejected (round-off "
                "of an exactly zero intensity, or the guard of an unbounded state space)."
            ]
        return []

    def _refuse(self, n: list[int]) -> None:
        """The sentence for the state ``n`` at which the chain's loop stopped on a rate
        that is no jump rate: exact's own check of that lattice state
        (:class:`numeric.exact.lattice.ExactRates`), else the float64 evaluation's."""
        from numeric.exact.lattice import ExactRates
        from numeric.rate_signs import state_text, unevaluable

        N = self.N
        model = self._model()
        ExactRates(model, self.params)(n, N)
        raise unevaluable(
            model,
            f"the lattice state N s = ({', '.join(map(str, n))}) at N = {N} in float64",
            state_text(model, [Fraction(k, N) for k in n]),
        )

    def _summarise(self, out: Any, *, steps: int, reps: int, seed: int) -> SimulationResult:
        """Pool the batches of every replication into estimates with 95% CIs."""
        from sim.generic_kernels import EVENTS, REJECTED, SUMSQ, THIN_TIME, TIME

        spec = self.spec
        batches = summary.completed_batches(out)
        N, b = spec.N, spec.n
        sc = np.array([s["scalars"] for s in batches])
        T = sc[:, TIME]
        for s in batches:
            if s["refused"][0] >= 0:
                self._refuse([round(float(v)) for v in s["refused"]])
        if not (T > 0).all():
            raise ParameterError(
                f"the chain of model {spec.model} reached an absorbing state (no transition "
                "of positive rate); it has no stationary law to estimate."
            )
        m = summary.moments(
            batches, sc[:, SUMSQ], T, sc[:, THIN_TIME], N, np.asarray(spec.s_star),
            "N Var(S) and N Cov(S)",
        )  # fmt: skip
        marg = None
        if spec.hist_len:
            marg = stats.sparse_ratio(np.array([s["hist"] for s in batches]), T)
        pmf = mean_jobs = None
        if spec.kind == 0:
            pmf, mean_jobs = summary.queue_length_pmf(batches, T, N)
        blocking = self._blocking(sc, T)
        warnings: list[str] = list(self.notes) + ([m.cov_note] if m.cov_note else [])
        if blocking is not None:
            warnings += summary.blocking_warning(float(blocking.mean), b)
        warnings += self._rejected_warnings(int(sc[:, REJECTED].sum()))
        observed = {}
        if self.observables:
            from sim.observables import estimate

            observed = estimate(self.observables, batches, T)
        return SimulationResult(
            model=spec.model,
            engine=self.name,
            N=N,
            params={k: str(v) for k, v in self.params.items()},
            n=b,
            start=list(spec.start),
            marginal_pmf=marg,
            queue_length_pmf=pmf,
            mean_jobs=mean_jobs,
            blocking=blocking,
            observables=observed,
            loop=self.loop,
            **summary.result_fields(
                out, batches, m, sumsq=sc[:, SUMSQ], T=T, events=sc[:, EVENTS],
                s_star=spec.s_star, steps=steps, reps=reps, seed=seed, warnings=warnings,
            ),
        )  # fmt: skip
