"""The parameter level of a prepared problem: one model and one parameter point, read once.

Every task on a model reads its parameters the same way, written here once and
kept per ``(model, params)`` (:func:`prepare_params`, counted as
``COUNTS["prepared:params"]``, :mod:`numeric.prepared.cache`):

1. for an N-dependent model (a parameter ``N``, e.g. sampling without
   replacement) asked at a population ``N``, the value of ``N`` is filled in
   (a different value given for it is refused);
2. the names are checked against the model's (:func:`numeric.params.check_names`);
3. the values are read exactly and rounded once to 30 digits, each within its
   declared range (:func:`numeric.params.read_values`).

The problem every route starts from (:func:`numeric.prepared.problem.prepare_problem`)
and the finite-N chain's preparation (:func:`numeric.exact.prepared.prepare`) both
read this record, so a parameter point is parsed once across solve, exact,
simulate and certify.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import mpmath
from mpmath import mpf

from mfstein.ground.errors import ParameterError
from numeric.params import check_names, parameter_names, read_values, values_read
from numeric.prepared.cache import PreparedCache, inputs_key, memo

#: The bits of a double's significand: at a working precision of this many bits or more
#: :func:`numeric.precision.to_mpf` reads a finite float as its exact value.
FLOAT_BITS = 53
#: Parameter points kept in this process (least recently used dropped first).
POINTS = 256
#: Digits at which the values are read once (as every route did).
DPS = 30
#: :data:`DPS` in bits (mpmath's ``workdps(DPS)`` sets this precision).
PREC = mpmath.libmp.dps_to_prec(DPS)


@dataclass(frozen=True)
class PreparedParams:
    """One model's parameters at one point, names checked and values read (module docstring)."""

    #: The :class:`derive.model.Model`.
    model: Any
    #: Parameter name -> value as given, names checked, ``N`` filled in for an
    #: N-dependent model asked at a population (read-only).
    params: Mapping[str, Any]
    #: Parameter name -> value read exactly and rounded to 30 digits (read-only).
    values: Mapping[str, mpf]
    #: The inputs' key; ``None`` when a value has none (then not cached).
    key: Hashable | None
    _now: dict[int, dict[str, mpf]] = field(default_factory=dict, compare=False, repr=False)

    def values_now(self) -> dict[str, mpf]:
        """The values at the current working precision (read once per precision: the
        same correctly rounded reading of the same exact inputs)."""
        hit = memo(self._now, mpmath.mp.prec, lambda: read_values(self.model, self.params))
        return dict(hit)


_POINTS: PreparedCache[PreparedParams] = PreparedCache("prepared:params", POINTS)


def prepare_params(
    model: Any, params: Mapping[str, Any] | None, N: int | None = None, *, at: int | None = None
) -> PreparedParams:
    """The :class:`PreparedParams` of ``model`` at ``params`` (from this process's cache
    when read before); ``N``: the population of a finite-N task, filled in as the
    parameter ``N`` of an N-dependent model; ``at``: digits at which the values are
    read too, and their ranges checked, before the 30-digit reading (``numeric.solve``
    reads them at ``dps + 20``; kept with the record, so a warm call reads nothing).

    Raises :class:`mfstein.ground.errors.ParameterError` in one sentence for an
    unknown or missing name, a value outside its declared range, and a parameter
    ``N`` other than the population ``N``.
    """
    if N is not None:
        params = _with_population(model, params, N)
    given = check_names(model, params)
    key = inputs_key(model, given, None, None)
    point = _POINTS.get(key, lambda: _build(model, given, key, at))
    if at is not None:
        with mpmath.workdps(at):
            point.values_now()  # read and checked once per precision (at the build: first)
    return point


def _with_population(model: Any, params: Mapping[str, Any] | None, N: int) -> dict[str, Any]:
    """``params`` with ``N`` filled in when the model has a parameter ``N``."""
    from mfstein.ground.numbers import parse_real

    given = dict(params or {})
    if "N" in parameter_names(model):
        if "N" in given and parse_real("N", given["N"]) != N:
            raise ParameterError(
                f"the parameter N of model {model.name} must equal the lattice size N = {N}, "
                f"got {given['N']!r}."
            )
        given["N"] = N
    return given


def _exact_float(value: Any) -> bool:
    """Whether ``value`` is a finite Python float, which :func:`numeric.precision.to_mpf`
    reads as its exact binary value at every working precision of at least
    :data:`FLOAT_BITS` bits (the 30-digit reading is then
    the ``at``-digit one)."""
    return type(value) is float and math.isfinite(value)


def _build(
    model: Any, given: dict[str, Any], key: Hashable | None, at: int | None
) -> PreparedParams:
    """The :class:`PreparedParams` of checked names ``given``: the values read at
    ``at`` digits first (when given), then at :data:`DPS` digits -- the reading at
    ``at`` digits itself when every value is a finite float (its exact value both
    times, at least 53 bits each)."""
    now: dict[int, dict[str, mpf]] = {}
    first, exact = None, False
    if at is not None:  # the caller's precision first: its refusal is the one a caller sees
        with mpmath.workdps(at):
            first = now[mpmath.mp.prec] = read_values(model, given)
            exact = mpmath.mp.prec >= FLOAT_BITS
    if first is not None and exact and all(_exact_float(v) for v in given.values()):
        values = dict(first)  # the same exact values, so the same range checks
    else:
        known = values_read(model, given, PREC)  # read and checked before at 30 digits
        if known is not None:
            values = known
        else:
            with mpmath.workdps(DPS):
                values = read_values(model, given)
    return PreparedParams(
        model=model,
        params=MappingProxyType(given),  # (check_names made it a new dict)
        values=MappingProxyType(values),
        key=key,
        _now=now,
    )
