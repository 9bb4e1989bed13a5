"""Exact chains prepared by an earlier process, kept on disk (issue 34).

``numeric.exact.solve("sir", params, N=100)`` in a new process spent most of its
first call before any state was enumerated: the SymPy import and the model
built in it, the parameters parsed at 30 digits, the lattice and its start
placed (:func:`numeric.exact.prepared.prepare`), the exact rate evaluator lambdified
and the mean field solved at 20 digits for the centre ``s*`` (and ``V``, ``W``,
``c`` of the result).  None of it depends on the chain's numbers, and all of it
fits in a record of a few hundred bytes: the lattice (bounds, conservation laws
and their values), the start ``n0``, the parameters in float64, the generated
kernel module's name (loaded by :func:`mfstein.ground.generated.load_generated`,
without SymPy) and the mean field's ``s*, V, W, c`` in float64 (the precision the
result reports them in).  This module keeps that record under the key of the
call (:func:`call_key`: the model's library name, the parameters, ``N``, the start,
the truncation and its tolerance, the route, and the digest of the code,
:mod:`mfstein.ground.records`), so that a later process asking the same question
reads it and starts the search at once.

A call at a new ``N`` reads the record of the same call at another ``N`` (kept
under :func:`model_key`, the key without ``N``; :func:`at_size`): the lattice's
bounds are recomputed for ``N`` (:func:`numeric.exact.space.sized`), the start
``N s0`` rounded to it from the recorded ``s0``
(:func:`numeric.exact.space.round_to_lattice`), and the mean field is the
recorded one when it cannot depend on ``N``: it was solved from its own start (no
conservation law, no start given), or the model declares a unique fixed point
(``unique_fixed_point``) and the values of the laws per individual, ``c . n0 /
N``, are those recorded; otherwise the call is prepared afresh.  A model with a
parameter ``N`` (its rates depend on ``N``) keeps no such record.

What the record does not hold is built from the call's own arguments when it is
first needed (:class:`KeptModel`): the :class:`derive.model.Model` itself (for
:meth:`numeric.exact.result.ExactResult.expect`, or an attribute the exact route
does not read; :func:`derive.models.as_model` gives the one this process built for
the same name and options, when it prepared the call afresh), the call's prepared problem
(:meth:`KeptModel.problem`, from the cache
:func:`numeric.prepared.problem.prepare_problem`: the problem that call prepared,
never a second one) and the exact rate evaluator
(:class:`numeric.exact.lattice.ExactRates` on that problem's parameters, for a state
whose float64 intensities are ambiguous).  A record is written only after a general-route solve that
succeeded (a refusal is never kept), and never for a chain whose truncation was
chosen (an unbounded orthant), a heterogeneous population or a family's fast path.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from mfstein.ground import records
from mfstein.ground.arguments import renamed_attribute

#: Format of a record (part of the key: a new format never reads an old file).  3: the
#: arrays file is checked by its CRC-32 (:func:`mfstein.ground.records.arrays_check`).
VERSION = 3
#: A chain of at most this many states keeps its assembled generator beside its record
#: (:func:`assembly_arrays`: some 70 bytes per state for SIR), so that the next
#: process at the same call skips the search and the closed classes.
ASSEMBLY_STATES = 20_000


def call_key(
    model: Any, params: Mapping[str, Any] | None, N: int, *given: Any, route: str
) -> str | None:
    """The key of the exact solve of the library model named ``model`` with ``params``,
    ``N`` and ``given`` (the start, the truncation and its tolerance, as given); ``None``
    when it cannot be kept (a model object or file, a value without a stable ``repr``)."""
    if route == "fast":
        return None
    return records.call_key([VERSION, "exact"], model, params, [N, *given], [route])


def model_key(model: Any, params: Mapping[str, Any] | None, *given: Any, route: str) -> str | None:
    """The key of the same call at any ``N`` (:func:`call_key` without ``N``)."""
    if route == "fast":
        return None
    return records.call_key([VERSION, "exact", "any N"], model, params, list(given), [route])


class Keys:
    """The keys of an exact call's records: at its ``N`` (:func:`call_key`) and at any
    ``N`` (:func:`model_key`), and the call's start and truncation as given (the
    record at any ``N`` keeps them).  A plain class: a named tuple costs a new process
    some 0.15 ms to create, a dataclass 0.4 ms."""

    __slots__ = ("any_n", "call", "start", "truncation")

    def __init__(self, call: str | None, any_n: str | None, start: Any, truncation: Any) -> None:
        self.call, self.any_n, self.start, self.truncation = call, any_n, start, truncation


def keys(
    model: Any, params: Mapping[str, Any] | None, N: int, start: Any, truncation: Any,
    truncation_tol: Any, *, route: str,
) -> Keys:  # fmt: skip
    """The :class:`Keys` of the exact solve of ``model`` with these arguments."""
    given = (start, truncation, truncation_tol)
    return Keys(
        call_key(model, params, N, *given, route=route),
        model_key(model, params, *given, route=route),
        start,
        truncation,
    )


def _tuple(v: Any) -> Any:
    """JSON's lists back to the tuples they were written from."""
    return tuple(_tuple(x) for x in v) if isinstance(v, list) else v


class KeptKernels(SimpleNamespace):
    """The generated ``numba`` kernels of a kept model: what the record says of them
    (``b``, ``params``, ``jumps``, ``path``), and the module with its compiled
    functions (``module``, ``rates_into``) loaded when first read -- a small chain
    evaluates the module's source in NumPy (:mod:`numeric.exact.small`) and never
    makes numba's dispatchers."""

    b = renamed_attribute("KeptKernels", "b", "n")

    def __getattr__(self, name: str) -> Any:
        if name not in ("module", "rates_into"):
            raise AttributeError(name)
        from mfstein.ground.generated import load_generated

        self.module = load_generated(self.path.stem, self.path)
        self.rates_into = self.module.rates_into
        return getattr(self, name)


class KeptModel:
    """What the exact route reads of a model (name, key, dimension, generated kernels,
    structure), from a record; anything else is read from the model itself, built on
    first use from the call's arguments by :func:`derive.models.as_model`, which gives
    the model this process built for the same name and options, if any: so a call
    read from its record reaches the problem an earlier call prepared."""

    def __init__(
        self, record: dict, spec: str, params: Mapping[str, Any] | None, keys: Keys, N: int
    ) -> None:
        self.name = record["name"]
        self.key = _tuple(record["key"])
        self.n = int(record["b"])
        self._record, self._spec, self._params = record, spec, params
        self._keys, self._N = keys, N
        self._kernels: Any = None
        self._real: Any = None
        self._problem: Any = None
        #: whether the record's assembled generator was read (:func:`load`)
        self.assembled = False
        #: whether the record was made here for this ``N`` (:func:`at_size`) and is
        #: not on disk yet: :func:`keep_assembly` writes it after the solve
        self.unsaved = False
        self.rest: dict[str, Any] = {}

    def real(self) -> Any:
        """The :class:`derive.model.Model` (built once; :attr:`rest` its parameters, the
        call's others being the factory's options)."""
        if self._real is None:
            from derive.models import as_model

            self._real, self.rest = as_model(self._spec, self._params)
        return self._real

    def problem(self) -> Any:
        """The prepared problem of the call this record answers
        (:class:`numeric.prepared.problem.PreparedProblem` of the model, the parameters
        with ``N`` filled in and the start as given): the chain's own steps,
        :func:`numeric.exact.prepared.prepare` and
        :meth:`~numeric.exact.prepared.PreparedModel.problem`, whose caches give the
        problem this process prepared for the same call, else prepare it once."""
        if self._problem is None:
            from numeric.exact.prepared import prepare

            prepared = prepare(self.real(), self._N, self.rest)
            self._problem = prepared.problem(self._keys.start)
        return self._problem

    def structure(self, name: str) -> Any:
        """The model's structural declaration ``name`` (the record holds ``arrival``)."""
        if name == "arrival":
            return self._record["arrival"]
        return self.real().structure(name)

    def kernels(self, backend: str = "numba") -> Any:
        """The generated ``numba`` kernels, loaded without SymPy; other back ends are
        the model's own."""
        if backend != "numba":
            return self.real().kernels(backend)
        if self._kernels is None:
            from mfstein.ground.generated import load_generated, load_plain

            path = Path(self._record["kernel"])
            if load_plain(path.stem, path) is None:  # missing or damaged: ParameterError
                load_generated(path.stem, path)
            self._kernels = KeptKernels(
                backend="numba",
                n=self.n,
                params=tuple(self._record["param_names"]),
                jumps=np.asarray(self._record["jumps"], dtype=np.int64).reshape(-1, self.n),
                path=path,
            )
        return self._kernels

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.real(), name)


class KeptRates:
    """:class:`numeric.exact.lattice.ExactRates` of a kept chain, made when a state first
    needs an exact evaluation: on the parameters of the call's prepared problem
    (:meth:`KeptModel.problem`, names checked and ``N`` filled in), as a chain
    prepared afresh makes them."""

    def __init__(self, model: KeptModel) -> None:
        self.model = model
        self._rates: Any = None

    def __call__(self, n: Any, N: int) -> Any:
        if self._rates is None:
            from numeric.exact.lattice import ExactRates

            self._rates = ExactRates(self.model.real(), self.model.problem().params)
        return self._rates(n, N)


def assembly_arrays(ch: Any) -> dict[str, np.ndarray] | None:
    """What the general route assembled for the chain ``ch`` (its last solve,
    :class:`numeric.exact.general.Chain`): the states, their up-rates, ``Q^T`` (CSR),
    the exit rates, the closed classes, the route (compiled or NumPy) and how many
    states needed exact rates; ``None`` for none or more than :data:`ASSEMBLY_STATES`
    states.  A later process reads them back (:func:`load`) and pins and solves the
    same generator, so its law is the same bit for bit.  (The route that assembled
    them is not kept: both give the same chain, and a process reading them chooses
    its own for what follows, :meth:`numeric.exact.general.Chain._takes_compiled_route`.)"""
    last = getattr(ch, "last", None)
    if last is None or ch.compiled is None or last.reach.up_rates is None:
        return None
    if last.reach.states.shape[0] > ASSEMBLY_STATES:
        return None
    return {
        "states": last.reach.states,
        "up_rates": last.reach.up_rates,
        "exact_states": np.int64(last.reach.exact_states),
        "indptr": last.QT.indptr,
        "indices": last.QT.indices,
        "data": last.QT.data,
        "exit_rate": last.exit_rate,
        "classes": last.classes,
    }


def _fractions(v: Any) -> list[str]:
    """``str(Fraction(x))`` of each ``x`` of ``v``: an int's own text (the same) without
    importing :mod:`fractions` (a chain kept on disk reads and writes its laws' values as
    ints, :func:`numeric.exact.space.ratio`)."""
    if all(type(x) is int for x in v):
        return [str(x) for x in v]
    from fractions import Fraction

    return [str(Fraction(x)) for x in v]


def save(
    keys: Keys, ch: Any, centre: Mapping[str, Any] | None, note: str | None,
    params: Mapping[str, str],
) -> None:  # fmt: skip
    """Keep the record of the chain ``ch`` (a :class:`numeric.exact.general.Chain` the
    general route prepared and solved; this module does not import it) centred at the
    mean field ``centre`` (``s_star, V, W, constant`` in float64, or ``None``) with
    ``note``; ``params`` are the parameters as the result prints them.  It is kept
    under ``keys.call`` and, for a call at another ``N`` (:func:`at_size`), under
    ``keys.any_n``.  A chain solved from a record (:class:`KeptModel`) writes no record;
    its assembled generator is added to the record that had none
    (:func:`keep_assembly`)."""
    key = keys.call
    if isinstance(ch.model, KeptModel):  # solved from a record: add its arrays if missing
        if not ch.model.assembled:
            keep_assembly(keys, ch)
        return
    if key is None:
        return
    model, lat, kern = ch.model, ch.lattice, ch.kern
    if not all(isinstance(k, str) for k in model.key) or not isinstance(model.key, tuple):
        return  # a key JSON does not give back
    record = {
        "name": model.name,
        "key": list(model.key),
        "b": model.n,
        "param_names": list(kern.params),
        "jumps": np.asarray(kern.jumps).tolist(),
        "kernel": str(kern.path),
        "arrival": model.structure("arrival"),
        "params": dict(params),
        "values": {k: float(v) for k, v in ch.values.items()},
        "p64": ch.p64.tolist(),
        "lattice": {
            "kind": lat.kind,
            "upper": lat.upper,
            "total": lat.total,
            "truncated": lat.truncated,
            "laws": [_fractions(r) for r in lat.laws],
            "free": list(lat.free),
            "values": _fractions(lat.values),
            "notes": list(lat.notes),
        },
        "start": [int(x) for x in ch.start],
        "start_given": bool(ch.placement.start_given),
        "mean_field": None if centre is None else {
            k: np.asarray(v, dtype=np.float64).tolist() for k, v in centre.items()
        },
        "note": note,
    }  # fmt: skip
    arrays = assembly_arrays(ch)
    if arrays is not None:
        record["assembly"] = records.save_arrays(key, arrays)
    records.save(key, record)
    record.pop("assembly", None)  # the arrays are this N's only
    if keys.any_n is not None and "N" not in kern.params:
        from numeric.exact.space import to_fraction

        cut = None if keys.truncation is None else to_fraction("truncation", keys.truncation)
        record["any_n"] = {
            "N": ch.N,
            "s0": _fractions(ch.placement.prepared.start_fractions(keys.start)),
            "space_total": str(to_fraction("total", model.info.state_space.total) or 1),
            "truncation": None if cut is None else str(cut),
            "unique_fixed_point": bool(model.info.unique_fixed_point),
        }
        records.save(keys.any_n, record)


def at_size(rec: dict | None, N: int) -> dict | None:
    """The record of the call at ``N`` made from ``rec``, the same call's record at
    another ``N`` (module docstring), or ``None`` when ``rec`` cannot serve ``N``:
    none, no size-free part, the start off the lattice at ``N`` or the mean field
    possibly moved."""
    from mfstein.ground.errors import ParameterError
    from numeric.exact.space import rational, round_to_lattice, sized

    size_free = None if rec is None else rec.get("any_n")
    if size_free is None:
        return None
    lat = rec["lattice"]
    laws = tuple(tuple(map(rational, r)) for r in lat["laws"])
    try:
        lattice = sized(
            lat["kind"], rational(size_free["space_total"]), N, size_free["truncation"],
            laws, tuple(lat["free"]),
        )  # fmt: skip
        n0 = round_to_lattice(lattice, size_free["s0"])  # the texts "p/q", read in integers
    except ParameterError:  # the call prepared afresh says why, in its own words
        return None
    if rec["start_given"] or laws:  # the mean field was solved from the start n0 / N
        was = size_free["N"]  # n / N == m / was, and v / N == u / was, cross-multiplied
        same_start = all(int(n) * was == m * N for n, m in zip(n0, rec["start"], strict=True))
        same_laws = all(
            v * was == rational(u) * N for v, u in zip(lattice.values, lat["values"], strict=True)
        )
        if not (same_start or (size_free["unique_fixed_point"] and same_laws)):
            return None
    out = dict(rec)
    out.pop("assembly", None)
    out["lattice"] = dict(
        lat, upper=lattice.upper, total=lattice.total, truncated=lattice.truncated,
        values=_fractions(lattice.values),
    )  # fmt: skip
    out["start"] = [int(x) for x in n0]
    out["any_n"] = dict(size_free, N=N)
    return out


def load(
    keys: Keys, spec: str, params: Mapping[str, Any] | None, N: int, memory_limit: Any
) -> tuple[tuple, Any, str | None, dict | None] | None:
    """``(chain, mean field, note, arrays)`` of the record kept under ``keys.call``, else of the
    record under ``keys.any_n`` made for ``N`` (:func:`at_size`), else ``None``:
    the arguments of :class:`numeric.exact.general.Chain` (placement on a
    :class:`KeptModel`, kernels, exact rates, ``p64``, state limit, notes), the mean
    field ``s*, V, W, c`` in float64 (or ``None``, with the note why), and the chain's
    assembled generator (:func:`assembly_arrays`, ``None`` when not kept)."""
    rec = records.load(keys.call)
    made = rec is None
    if made:  # not asked at this N: the same call at another N, if it serves
        rec = at_size(records.load(keys.any_n), N)
        if rec is None:
            return None
    from mfstein.ground.errors import ParameterError

    model = KeptModel(rec, spec, params, keys, N)
    model.unsaved = made  # written with its arrays after the solve (keep_assembly)
    try:
        kern = model.kernels("numba")
    except ParameterError:  # the kernel module is gone from the cache: prepare afresh
        return None
    from numeric.exact.memory import bytes_per_state, memory_limit_bytes
    from numeric.exact.prepared import Placement, PreparedModel
    from numeric.exact.space import Lattice, rational

    lat = rec["lattice"]
    lattice = Lattice(
        N=N, kind=lat["kind"], upper=lat["upper"], total=lat["total"],
        truncated=lat["truncated"], laws=tuple(tuple(map(rational, r)) for r in lat["laws"]),
        free=tuple(lat["free"]), values=tuple(map(rational, lat["values"])),
        notes=list(lat["notes"]),
    )  # fmt: skip
    prepared = PreparedModel(model, N, _in_call_order(rec["params"], params), dict(rec["values"]))
    start = np.asarray(rec["start"], dtype=np.int64)
    placement = Placement(prepared, lattice, start, rec["start_given"])
    nt = len(rec["jumps"])
    max_states = max(1, memory_limit_bytes(memory_limit) // bytes_per_state(model.n, nt))
    p64 = np.asarray(rec["p64"], dtype=np.float64)
    chain = (placement, kern, KeptRates(model), p64, max_states,
             list(lattice.notes))  # fmt: skip
    mf = rec["mean_field"]
    if mf is not None:
        mf = SimpleNamespace(**{k: np.asarray(v, dtype=np.float64) for k, v in mf.items()})
        mf.constant = float(mf.constant)
    arrays = records.load_arrays(keys.call, rec.get("assembly"))
    model.assembled = arrays is not None
    return chain, mf, rec["note"], arrays


def _in_call_order(kept: Mapping[str, str], params: Mapping[str, Any] | None) -> dict:
    """The record's parameter texts ``kept`` (written with sorted keys) in the order of the
    call's ``params``, as the result of a call that found no record lists them."""
    given = [str(k) for k in (params or {}) if str(k) in kept]
    return {**{k: kept[k] for k in given}, **kept}


def keep_assembly(keys: Keys, ch: Any) -> None:
    """Keep the record the chain ``ch`` was solved from (:class:`KeptModel`) under
    ``keys.call`` with the chain's arrays (:func:`assembly_arrays`) when it had none
    (damaged, or made at a new ``N`` by :func:`at_size`: then written here, once, after
    the solve, so that a refused call keeps nothing)."""
    rec = dict(ch.model._record)
    arrays = assembly_arrays(ch)
    if arrays is not None:
        rec["assembly"] = records.save_arrays(keys.call, arrays)
    elif not ch.model.unsaved:
        return
    records.save(keys.call, rec)
