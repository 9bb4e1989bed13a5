"""The generic engine on the interpreted event loop (:mod:`sim.table_loop`).

:class:`InterpretedSimulator` is :class:`sim.generic.GenericSimulator` with the
model read from tables instead of compiled into a loop of its own: the same
chain, centre, lattice, statistics and result (``result.loop ==
"interpreted"``), with no per-model numba compilation (the one loop is
compiled once per installation) and no generated kernel module.  The loop
costs more per event than the model's compiled one, so :func:`interpreted_pays`
says when it is the quicker of the two: ``simulate(..., engine="auto")``
takes it while the extra it costs, this run's and the earlier runs' in place of the
same compiled loop (:mod:`sim.rent`), stays below the time compiling the model's
loop would take (rent or buy), ``engine="interpreted"`` always.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mfstein.ground.arguments import renamed_keywords
from sim.base import RunOptions
from sim.generic import (
    GenericSimulator,
    GenericSpec,
    by_spec,
    loop_buffers,
    loop_sums,
    no_refusal,
    sparse_jumps,
)

#: Extra CPU nanoseconds per event of the interpreted loop over the model's compiled
#: one: ``EXTRA_NS + NS_PER_OP * ops`` with ``ops`` the program operations it evaluates
#: after a jump (:func:`interpreted_ops`).  Measured (CPU time, 1e6 events, best of 3,
#: ``benchmarks/bench_sim_overhead.py --break-even``): SIR N = 1000 58 against 25 ns
#: (7.7 operations), the tandem line of 4 stations 51 against 29 ns (3.2), the
#: supermarket b = 10 84 against 28 ns (14.9); the fit, rounded up.
EXTRA_NS = 14.0
NS_PER_OP = 3.0


@dataclass(frozen=True)
class TableSpec(GenericSpec):
    """A :class:`GenericSpec` (``kernel`` and ``update`` empty) with the model as tables."""

    #: The programs' rows of ``(op, arg)`` pairs (:class:`derive.rate_program.Programs`),
    #: program ``i`` being ``code[ptr[i]:ptr[i + 1]]``. The programs are the intensities,
    #: their rounding allowances (:func:`numeric.rate_signs.allowance_exprs`), the
    #: observables, then the monomials' coefficients (from ``coef_base`` on).
    code: tuple[tuple[int, int], ...] = ()
    #: Where each program starts in ``code`` (program ``i`` is
    #: ``code[ptr[i]:ptr[i + 1]]``).
    ptr: tuple[int, ...] = ()
    #: The constants the programs' ``const`` rows index.
    consts: tuple[float, ...] = ()
    #: The deepest stack any program needs.
    depth: int = 1
    #: Transition ``t`` changes the intensities ``aff_idx[aff_ptr[t]:aff_ptr[t + 1]]``
    #: (those that read a coordinate its jump moves).
    aff_ptr: tuple[int, ...] = ()
    #: The intensities each transition changes, transition ``t``'s being
    #: ``aff_idx[aff_ptr[t]:aff_ptr[t + 1]]``.
    aff_idx: tuple[int, ...] = ()
    #: Whether each intensity is a polynomial in the densities
    #: (:class:`derive.rate_program.PolynomialForms`), held as monomials whose
    #: coefficients are the programs from ``coef_base`` on.
    poly: tuple[bool, ...] = ()
    #: Intensity ``i``'s monomials are ``m in range(poly_ptr[i], poly_ptr[i + 1])``.
    poly_ptr: tuple[int, ...] = (0,)
    #: Monomial ``m`` is its coefficient times ``prod s[k] ** e`` over the pairs
    #: ``(k, e)`` of ``factors[fac_ptr[m]:fac_ptr[m + 1]]``.
    fac_ptr: tuple[int, ...] = (0,)
    #: The monomials' factors as pairs ``(k, e)``, each meaning ``s[k] ** e``.
    factors: tuple[tuple[int, int], ...] = ()
    #: The first coefficient program (monomial ``m``'s coefficient is program
    #: ``coef_base + m``).
    coef_base: int = 0


TableSpec.__init__ = renamed_keywords(b="n")(TableSpec.__init__)  # type: ignore[method-assign]


#: :func:`model_tables` by model key and observables, for this process.
_TABLES: dict[tuple, dict[str, Any]] = {}


def model_tables(model: Any, observables: Sequence[Any] = ()) -> dict[str, Any]:
    """The :class:`TableSpec` fields of ``model`` with ``observables`` (SymPy expressions
    in its states and parameters): the programs of its intensities, their allowances,
    the observables and the coefficients of the intensities that are polynomials, in
    that order (:mod:`derive.rate_program`; one sentence for what the interpreter does
    not evaluate), and the intensities each transition changes."""
    import sympy as sp

    from derive.rate_program import compile_programs, polynomial_forms
    from numeric.rate_signs import allowance_exprs

    key = (model.key, tuple(sp.srepr(g) for g in observables))
    if key in _TABLES:
        return _TABLES[key]
    rates = [sp.sympify(tr.rate) for tr in model.transitions]
    forms = polynomial_forms(rates, model.states)
    head = [*rates, *allowance_exprs(model), *observables]
    programs = compile_programs([*head, *forms.coefficients], model.states, model.params)
    jumps = [[int(x) for x in tr.jump] for tr in model.transitions]
    aff_ptr, aff_idx = affected(programs, jumps)
    _TABLES[key] = {
        "code": programs.code,
        "ptr": programs.ptr,
        "consts": programs.consts,
        "depth": programs.depth,
        "aff_ptr": tuple(aff_ptr),
        "aff_idx": tuple(aff_idx),
        "poly": forms.flags,
        "poly_ptr": forms.ptr,
        "fac_ptr": forms.fac_ptr,
        "factors": forms.factors,
        "coef_base": len(head),
        "n_obs": len(observables),
    }
    return _TABLES[key]


def affected(programs: Any, jumps: Sequence[Sequence[int]]) -> tuple[list[int], list[int]]:
    """For each transition, the intensities that read a coordinate its jump moves
    (CSR pointers and indices, each intensity once)."""
    nt = len(jumps)
    readers: dict[int, set[int]] = {}
    for t in range(nt):
        for k in programs.reads(t):
            readers.setdefault(k, set()).add(t)
    ptr, idx = [0], []
    for row in jumps:
        mine = set().union(*(readers.get(k, set()) for k, v in enumerate(row) if v))
        idx += sorted(mine)
        ptr.append(len(idx))
    return ptr, idx


def interpreted_ops(tables: dict[str, Any]) -> float:
    """Mean work units the interpreted loop does after a jump, over the transitions
    (unweighted): program operations, or monomial factors plus one per monomial, of
    the intensities it recomputes (``tables`` from :func:`model_tables`)."""
    aff_ptr, ptr = tables["aff_ptr"], tables["ptr"]
    nt = len(aff_ptr) - 1
    if nt <= 0:
        return 0.0
    ops = 0
    for t in tables["aff_idx"]:
        if tables["poly"][t]:
            lo, hi = tables["poly_ptr"][t], tables["poly_ptr"][t + 1]
            ops += hi - lo + tables["fac_ptr"][hi] - tables["fac_ptr"][lo]
        else:
            ops += ptr[t + 1] - ptr[t]
    return ops / nt


@by_spec
def _tables(spec: TableSpec) -> tuple[np.ndarray, ...]:
    """The loop's read-only arrays of ``spec``, built once per process
    (:func:`sim.generic.by_spec`)."""
    code = np.asarray(spec.code, dtype=np.int64).reshape(-1, 2)
    poly_tabs = (
        np.asarray(spec.poly, dtype=np.int64),
        np.asarray(spec.poly_ptr, dtype=np.int64),
        np.asarray(spec.fac_ptr, dtype=np.int64),
        np.asarray(spec.factors, dtype=np.int64).reshape(-1, 2),
    )
    return (
        code,
        np.asarray(spec.ptr, dtype=np.int64),
        np.asarray(spec.consts, dtype=np.float64),
        np.asarray(spec.aff_ptr, dtype=np.int64),
        np.asarray(spec.aff_idx, dtype=np.int64),
        poly_tabs,
        np.asarray(spec.params, dtype=np.float64),
        *sparse_jumps(spec.jumps),
        spec.N * np.asarray(spec.s_star, dtype=np.float64),
    )


def advance(spec: TableSpec, state: dict, steps: int) -> tuple[dict, dict]:
    """Run ``steps`` jumps from ``state`` (not modified) on the interpreted loop; the
    new state and the sums of :func:`sim.generic.advance`."""
    from sim.table_loop import rates_into, run_table_chain

    code, ptr, consts, aff_ptr, aff_idx, poly_tabs, p, jk, jv, jl, up, target = _tables(spec)
    b, nt = spec.n, len(spec.jumps)
    buf = loop_buffers(spec, state)
    new = buf.state
    t0 = time.thread_time()
    scalars = run_table_chain(
        code, ptr, consts, spec.depth, nt, aff_ptr, aff_idx, poly_tabs, spec.coef_base, p,
        new["n"], spec.N, jk, jv,
        jl, up, target, new["rng"], int(steps), spec.thin_bits, spec.kind, spec.upper,
        spec.total, buf.corr, buf.cov, buf.hist, buf.obs,
    )  # fmt: skip
    seconds = time.thread_time() - t0
    from sim.generic_kernels import EVENTS

    refused = no_refusal(b)
    if scalars[EVENTS] < steps:  # stopped: an absorbing state, or a rate that is no rate
        s = new["n"] / spec.N
        R = np.empty(nt)
        rates_into(code, ptr, consts, spec.depth, nt, s, p, poly_tabs, spec.coef_base, R)
        if not np.all(np.isfinite(R)):
            refused = new["n"].astype(float)
    return new, loop_sums(buf, scalars, seconds, refused)


#: Prepared runs kept per process (model key, N, parameters, start, truncation -> spec,
#: lattice, notes), as :mod:`sim.generic` keeps its own.
_PREPARED: dict[tuple, tuple] = {}


class InterpretedSimulator(GenericSimulator):
    """The generic engine on the interpreted loop (module docstring)."""

    loop = "interpreted"
    _advance = staticmethod(advance)
    #: The most events ``engine="auto"`` runs on this loop in place of the model's
    #: compiled one, the earlier runs' (:mod:`sim.rent`) and this one's together
    #: (:func:`pick_loop`); ``None`` when it was asked for by name.
    max_events: int | None = None
    #: The name of the compiled loop a run from a record stands in for (:meth:`record`).
    chain: str | None = None

    def _prepare(self) -> None:
        params = tuple(sorted((str(k), repr(v)) for k, v in self.params.items()))
        key = (self.model.key, self.N, params, repr(self.start), repr(self.truncation))
        hit = _PREPARED.get(key)
        if hit is None:
            jumps = tuple(tuple(int(x) for x in tr.jump) for tr in self.model.transitions)
            self.spec = TableSpec(
                kernel="", update="", jumps=jumps, **self._centre(), **model_tables(self.model)
            )
            if len(_PREPARED) >= 64:
                _PREPARED.pop(next(iter(_PREPARED)))
            _PREPARED[key] = (self.spec, self.lattice, tuple(self.notes))
        else:
            self.spec, self.lattice, notes = hit
            self.notes = list(notes)
        arrival = self.model.structure("arrival")
        self.arrival = str(arrival) if arrival and arrival in self.params else None

    def loadable(self) -> bool:
        """Always: the interpreted loop is compiled once for every model, and a run reads
        no generated module."""
        return True

    def _loaded_loop(self) -> Any:
        """The interpreted loop (:func:`sim.table_loop.run_table_chain`): one compiled
        function for every model, which a unit loads for good."""
        from sim.table_loop import run_table_chain

        return run_table_chain

    def observe(self, observables: Sequence[Any]) -> None:
        """Estimate ``E[g(S_N)]`` of each of ``observables`` too: their programs follow
        the intensities' and the loop evaluates them at every state visited."""
        self.observables = tuple(observables)
        tables = model_tables(self.model, [o.expr for o in self.observables])
        self.spec = dataclasses.replace(self.spec, **tables)

    def record(self) -> dict:
        """What :meth:`from_record` needs, JSON-ready (:mod:`sim.prepared_runs`), with the
        loop, the most events ``engine="auto"`` runs on it (:attr:`max_events`) and the
        name of the model's compiled loop it stands in for (``chain``), whose compiled
        code, once there, makes ``auto`` choose afresh (:func:`sim.api.simulate`)."""
        return {**super().record(), "loop": self.loop, "max_events": self.max_events,
                "chain": self.rented_chain()}  # fmt: skip

    def rented_chain(self) -> str | None:
        """The name of the model's compiled loop (with the observables) this run stands in
        for when ``engine="auto"`` picked it (:func:`sim.generic_kernels.chain_name`, the
        key of :mod:`sim.rent`); ``None`` when the interpreted loop was asked for by name."""
        if self.max_events is None:
            return None
        if self.model is None:  # from a record
            return self.chain
        from sim.generic_kernels import chain_name

        return chain_name(self.model, [o.expr for o in self.observables])

    @classmethod
    def from_record(
        cls, record: dict | None, model: str, params: Mapping[str, Any] | None
    ) -> InterpretedSimulator | None:
        """The simulator of a run prepared by an earlier process (:meth:`record`) for the
        model named ``model`` with ``params``; ``None`` when the record is unusable."""
        if record is None:
            return None
        try:
            raw = dict(record["spec"])
            for name in ("jumps", "code", "factors"):
                raw[name] = tuple(tuple(int(v) for v in row) for row in raw[name])
            for name in ("ptr", "aff_ptr", "aff_idx", "poly_ptr", "fac_ptr", "start"):
                raw[name] = tuple(int(v) for v in raw[name])
            for name in ("params", "s_star", "consts"):
                raw[name] = tuple(float(v) for v in raw[name])
            raw["poly"] = tuple(bool(v) for v in raw["poly"])
            self = cls.__new__(cls)
            self.spec, self.N = TableSpec(**raw), int(raw["N"])
            self.notes = [str(n) for n in record["notes"]]
            self.params = {str(k): str(v) for k, v in record["params"].items()}
            self.arrival = record["arrival"]
            self.max_events = record.get("max_events")
            chain = record.get("chain")
            self.chain = chain if isinstance(chain, str) else None
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        self.model, self.values, self.start, self.truncation = None, None, None, None
        self._source = (model, dict(params or {}))
        return self

    def _announce_compile(self) -> None:
        """Load (or compile, once for every model) the interpreted loop, saying so when it
        compiles."""
        announce_compile()


def announce_compile() -> None:
    """One line on standard error before the first compilation of the interpreted loop
    (once per installation: :func:`mfstein.ground.jit.announce_compile`), with its
    estimate (:func:`sim.loop_prices.interpreted_seconds`)."""
    from mfstein.ground import jit
    from sim.loop_prices import interpreted_seconds

    seconds = interpreted_seconds()
    jit.announce_compile("the interpreted event loop (once for every model)", seconds or None)


def extra_seconds(tables: dict[str, Any], events: int) -> float:
    """Estimated extra CPU seconds of ``events`` events on the interpreted loop over the
    model's compiled one (:data:`EXTRA_NS`, :data:`NS_PER_OP`; ``tables`` from
    :func:`model_tables`)."""
    return events * (EXTRA_NS + NS_PER_OP * interpreted_ops(tables)) * 1e-9


def pick_loop(
    model: Any, observables: Sequence[Any], options: RunOptions
) -> tuple[type, int | None]:
    """The simulator ``engine="auto"`` runs a model on when the generic engine is chosen,
    and the most events ``auto`` runs on the interpreted loop in place of the model's
    compiled one, this run's and the earlier ones' together (``None``: any).

    :class:`InterpretedSimulator` when the model's compiled loop (with ``observables``)
    is not compiled yet and the extra already paid on the interpreted loop in its place
    (:func:`sim.rent.spent`) plus this run's (:func:`extra_seconds`) stays within what
    buying it still costs: compiling it and the helpers while they are not compiled
    (:func:`sim.loop_prices.compile_seconds`) and generating what the cache lacks of its source
    (:func:`sim.loop_prices.generate_seconds`); else
    :class:`sim.generic.GenericSimulator`: rent or buy (:mod:`sim.rent`), within about
    twice the best choice in hindsight.  This run's rent includes the interpreted
    loop's own compilation when it is not compiled yet
    (:func:`sim.loop_prices.interpreted_seconds`: an installation's first run), so that
    a first run in an empty cache takes the compiled loop when that costs less; the
    limit returned is the one of later runs, which find the interpreted loop compiled.
    When the loop was never compiled
    (:func:`sim.generic_kernels.chain_never_compiled`), a run within the limit of the
    least price is placed without generating the loop's source (:func:`_short_enough`).
    A run resumed from a checkpoint continues on the loop it started with; a model the
    interpreter does not evaluate (:mod:`derive.rate_program`) runs compiled."""
    from sim import rent
    from sim.generic_kernels import (
        MIN_COMPILE_SECONDS,
        chain_module,
        chain_name,
        chain_never_compiled,
    )
    from sim.loop_prices import (
        compile_seconds,
        generate_seconds,
        helpers_seconds,
        interpreted_seconds,
    )

    resumed = _checkpoint_loop(options.checkpoint)
    if resumed is not None:
        return resumed, None
    paid = rent.spent(chain_name(model, observables))
    pending = interpreted_seconds()  # this run's, on the interpreted loop only
    generate = generate_seconds(model, observables)  # before chain_module writes it
    if chain_never_compiled(model, observables):  # decided without printing its source
        least = MIN_COMPILE_SECONDS + helpers_seconds() + generate
        floor = _short_enough(model, observables, options, least, paid, pending)
        if floor is not None:
            return InterpretedSimulator, floor
    seconds = compile_seconds(chain_module(model, observables)[1])  # the helpers' too
    limit = (
        None
        if seconds is None
        else _short_enough(model, observables, options, seconds + generate, paid, pending)
    )
    return (GenericSimulator, None) if limit is None else (InterpretedSimulator, limit)


def _short_enough(
    model: Any,
    observables: Sequence[Any],
    options: RunOptions,
    seconds: float,
    paid: int = 0,
    pending: float = 0.0,
) -> int | None:
    """The most events worth running on the interpreted loop when buying the model's
    loop costs at least ``seconds``, when the run's events, the ``paid`` events run
    there before in its place (:mod:`sim.rent`) and the ``pending`` seconds of the
    interpreted loop's own compilation this run would pay are within it together
    (``None`` otherwise, or when the interpreter does not evaluate the model).  The
    limit does not count ``pending``: a later run finds the interpreted loop compiled.

    Buying costs at least :data:`sim.generic_kernels.MIN_COMPILE_SECONDS` and what
    :func:`pick_loop` adds to it for the helpers and the generation, so a run within
    that floor's limit is one :func:`pick_loop` puts on the interpreted loop whatever
    the model's loop would cost to compile: the choice is made without generating the
    loop's source (0.05-0.1 s of SymPy's CPU for SIR, 0.4 s for a model of 20
    transitions).  The floor's limit is kept with a prepared run
    (:mod:`sim.prepared_runs`): never more than the exact one, so a later, longer run
    is chosen afresh."""
    from mfstein.ground.errors import ParameterError

    try:
        per_event = extra_seconds(model_tables(model, observables), 1)
    except ParameterError:
        return None
    if per_event <= 0:  # no extra per event: only the interpreted loop's compilation
        return 2**62 if pending <= seconds else None
    limit = int(seconds / per_event)
    return limit if paid + options.steps * options.reps + pending / per_event <= limit else None


def _checkpoint_loop(path: Any) -> type | None:
    """The simulator of the loop that wrote the checkpoint at ``path`` (its configuration
    holds the interpreted loop's tables or not); ``None`` when there is no readable one
    (the runner then starts afresh, or refuses the file in its own sentence)."""
    import json
    from pathlib import Path

    if path is None:
        return None
    try:
        config = json.loads(Path(path).read_text(encoding="utf-8"))["config"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(config, dict):
        return None
    return InterpretedSimulator if "coef_base" in config else GenericSimulator
