"""The problem every route starts from: a model prepared once for (model, params, start).

Every task on a model -- the mean field at working precision and in float64
(:mod:`numeric.meanfield`), the finite-N chain (:mod:`numeric.exact`), the
simulators (:mod:`sim`) -- first does the same four things, written here once:

1. the parameter names are checked against the model's
   (:func:`numeric.params.check_names`: unknown and missing names refused in
   one sentence, the declared state space checked against the jumps);
2. the values are read exactly and rounded once to 30 digits
   (:func:`numeric.params.read_values`: strings such as ``"0.9"`` or ``"1/3"``
   are exact), each within its declared range -- steps 1 and 2 are the parameter
   level (:func:`numeric.prepared.parameters.prepare_params`), kept per
   ``(model, params)`` and shared by every start and by the finite-N chain;
3. the start -- the caller's, else the model's reference point, else the
   origin -- is read at 30 digits and checked against the declared state space
   (:func:`numeric.prepared.start.start_point`); it fixes the values
   ``q = C s(0)`` of the conservation laws;
4. the conservation laws ``C`` (the left null space of the jump matrix, exact
   rationals in reduced row echelon form) and the reduced coordinates
   ``s = s0 + T x`` they give (:mod:`numeric.invariants`);
5. on demand, each made once: the model on its free coordinates (drift and
   Jacobian in float64 and at working precision,
   :class:`numeric.prepared.reduced.ReducedModel`, one per model), the conserved
   values ``q = C s0`` in float64, the stability scale (the largest ``|J_r|`` at the
   start) and the check of the rates at the start.

:func:`prepare_problem` returns them as one frozen :class:`PreparedProblem`,
cached by its inputs (:mod:`numeric.prepared.cache`, counted as
``COUNTS["prepared:problem"]``).  The start enters the key by its exact value,
so ``"0.9"`` and ``"9/10"`` are one problem (the finite-N chain hands its
lattice start back to the mean field as fractions).  The float64 route reads this
problem itself, its float64 system and observable kept with it
(:meth:`PreparedProblem.derived`, :mod:`numeric.meanfield.problem`); the other routes'
problems (:class:`numeric.meanfield.working_route.WorkingRoute`,
:meth:`numeric.exact.prepared.PreparedModel.place`, the generic simulator) are
built from it.  A route at another working precision reads the values and the
start there with :meth:`PreparedProblem.values_now` and
:meth:`PreparedProblem.start_now` (the same correctly rounded reading of the
same exact inputs, so the numbers are those of reading them afresh).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from mfstein.ground.errors import ParameterError
from numeric.invariants import model_reduction
from numeric.params import kernel_vector
from numeric.prepared.cache import PreparedCache, inputs_key, memo, start_key
from numeric.prepared.parameters import PreparedParams, prepare_params
from numeric.prepared.reduced import reduced_model
from numeric.prepared.start import declared_fraction, start_point
from numeric.rate_signs import check_rates

#: Prepared problems kept in this process (least recently used dropped first).
PROBLEMS = 256
#: Digits at which the values and the start are read once (as every route did).
DPS = 30
_PROBLEMS: PreparedCache[PreparedProblem] = PreparedCache("prepared:problem", PROBLEMS)


def read_only64(values: Any) -> np.ndarray:
    """``values`` (numbers, nested sequences of them, or an array) as a new read-only
    float64 array: each entry rounded to nearest by ``float``; the caller's object is
    never shared."""
    out = np.array(values, dtype=float)
    out.flags.writeable = False
    return out


@dataclass(frozen=True)
class PreparedProblem:
    """A model prepared for one parameter point and one start (module docstring)."""

    #: The finite :class:`derive.model.Model`.
    model: Any
    #: Parameter name -> value as given, names checked (read-only).
    params: Mapping[str, Any]
    #: The start as given; ``None`` means the model's reference point, else the origin.
    start: Any
    #: Parameter name -> value read exactly and rounded to 30 digits (read-only).
    values: Mapping[str, mpf]
    #: The parameter level (:class:`numeric.prepared.parameters.PreparedParams`, whose
    #: ``params`` and ``values`` these are), shared by every start.
    point: PreparedParams
    #: The kernels' parameter vector at 30 digits (kernel order).
    p30: tuple[mpf, ...]
    #: The start at 30 digits, in the state space.
    s0: tuple[mpf, ...]
    #: The inputs' key; ``None`` when an input has none (then not cached).
    key: Hashable | None
    _now: dict[tuple[str, Hashable], Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def p64(self) -> np.ndarray:
        """The kernels' parameter vector in float64 (read-only)."""
        return self._memo(("p64", 0), lambda: read_only64(self.p30))

    @property
    def s64(self) -> np.ndarray:
        """The start in float64 (read-only)."""
        return self._memo(("s64", 0), lambda: read_only64(self.s0))

    @property
    def reduction(self) -> Any:
        """The conservation laws and the free coordinates
        (:class:`numeric.invariants.Reduction`, made once per model)."""
        return self._memo(("reduction", 0), lambda: model_reduction(self.model))

    @property
    def reduced(self) -> Any:
        """The drift and Jacobian on the free coordinates, float64 and working precision
        (:class:`numeric.prepared.reduced.ReducedModel`, made once per model)."""
        return self._memo(("reduced", 0), lambda: reduced_model(self.model, self.reduction))

    @property
    def q64(self) -> np.ndarray:
        """The conserved values ``q = C s0`` in float64 (each product and sum rounded in
        float64, in the order of the coordinates; read-only)."""

        def make() -> np.ndarray:
            s0 = self.s0
            laws = self.reduction.laws
            return read_only64(
                [sum(float(c) * float(s0[j]) for j, c in enumerate(row)) for row in laws]
            )

        return self._memo(("q64", 0), make)

    @property
    def jscale(self) -> float:
        """The largest finite ``|J_r|`` entry at the start (the reduced Jacobian in
        float64): the scale of the stability test where ``J`` vanishes at the fixed
        point (:mod:`numeric.meanfield.acceptance`)."""

        def make() -> float:
            rm = self.reduced
            x0 = np.array([float(self.s0[j]) for j in rm.free])
            with np.errstate(all="ignore"):  # sqrt(y) at y = 0: an infinite entry says nothing
                J0 = np.abs(rm.jac64(x0, self.q64, self.p64))
            return float(np.max(J0[np.isfinite(J0)], initial=0.0))

        return self._memo(("jscale", 0), make)

    def check_start_rates(self) -> None:
        """Refuse, in one sentence, a start at which a rate is negative or not finite
        (:func:`numeric.rate_signs.check_rates` at 30 digits); checked once."""

        def check() -> bool:
            with mpmath.workdps(DPS):
                check_rates(self.model, list(self.s0), list(self.p30), "the start")
            return True

        self._memo(("rates", 0), check)

    @property
    def start_exact(self) -> tuple[Fraction, ...] | None:
        """The caller's start as exact fractions, as given (before any snapping onto the
        state space); ``None`` for the reference point or a start of other numbers."""
        exact = exact_start(self.start)
        if isinstance(exact, tuple) and all(isinstance(v, Fraction) for v in exact):
            return exact
        return None

    @property
    def reference_exact(self) -> tuple[Fraction, ...] | None:
        """The model's fixed reference point as exact fractions when no start was given
        (:func:`numeric.prepared.start.declared_fraction`); ``None`` when a start was
        given, the reference depends on the parameters or is not declared, or a
        coordinate is no exact rational."""
        ref = self.model.info.reference
        if self.start is not None or ref is None or callable(ref):
            return None
        exact = [declared_fraction(v) for v in ref]
        return None if any(v is None for v in exact) else tuple(exact)  # type: ignore[arg-type]

    @property
    def reference64(self) -> np.ndarray | None:
        """The model's reference point at these parameters -- the start
        :func:`numeric.solve` takes by default: :attr:`s0` when no start was given --
        in float64 (read-only); ``None`` when the state space refuses it."""

        def make() -> np.ndarray | None:
            if self.start is None:
                return self.s64
            with mpmath.workdps(DPS):
                try:
                    values = dict(self.values)
                    if callable(self.model.info.reference):
                        return read_only64(start_point(self.model, None, values))
                    return _reference_start(self.model, values)[1]
                except ParameterError:
                    return None

        return self._memo(("reference64", 0), make)

    def lattice_start(self) -> list[Fraction]:
        """The start as fractions (25 digits of :attr:`s0`), for the finite-N lattice."""
        return [Fraction(mpmath.nstr(v, 25)) for v in self.s0]

    def values_now(self) -> dict[str, mpf]:
        """The parameter values at the current working precision (read once per precision)."""
        return self.point.values_now()

    def start_now(self) -> list[mpf]:
        """The start at the current working precision, checked against the state space
        (read once per precision)."""
        return list(
            self._memo(
                ("start", mpmath.mp.prec),
                lambda: start_point(self.model, self.start, self.values_now()),
            )
        )

    def derived(self, name: Hashable, make: Callable[[], Any]) -> Any:
        """What a route derives from this problem alone -- ``make()``, made once and
        kept with the problem under ``name`` -- such as the truncation rule of a model
        with many coordinates at ``dps`` digits
        (:func:`numeric.meanfield.truncation.negligible_at`)."""
        return self._memo(("derived", name), make)

    def _memo(self, key: tuple[str, Hashable], make: Any) -> Any:
        return memo(self._now, key, make)


def exact_start(start: Any) -> Any:
    """The start as the key of its exact value (a tuple of fractions) when every entry
    is a plain number or text; else as given (a start with another kind of entry is
    keyed as :func:`numeric.prepared.cache.start_key` keys it)."""
    from mfstein.ground.numbers import parse_real

    if start is None or isinstance(start, np.ndarray):
        return start
    raw = [t for t in start.split(",") if t.strip()] if isinstance(start, str) else start
    try:
        if not all(type(v) in (str, int, float, Fraction) for v in raw):
            return start
        return tuple(parse_real("start", v) for v in raw)
    except ParameterError:  # keyed as given; reading the start refuses it in one sentence
        return start


def prepare_problem(
    model: Any, params: Mapping[str, Any] | None, start: Sequence[Any] | str | None = None
) -> PreparedProblem:
    """The :class:`PreparedProblem` of these inputs (from this process's cache when
    prepared before).

    Raises :class:`mfstein.ground.errors.ParameterError` in one sentence for a
    parameter name or value the model does not take and for a start outside its
    state space.
    """
    return problem_at(prepare_params(model, params), start)


def problem_of_older_call(name: str, model: Any, params: Mapping[str, Any]) -> PreparedProblem:
    """The prepared problem of a call in an older form ``name(model, params)`` of a
    route that now takes the problem (:mod:`mfstein.ground.fast_paths`): prepared
    (:func:`prepare_problem`), with a :class:`DeprecationWarning` at the route's caller."""
    import warnings

    warnings.warn(
        f"{name}(model, params) is deprecated; pass the prepared problem.",
        DeprecationWarning,
        stacklevel=3,
    )
    return prepare_problem(model, params)


def problem_at(point: PreparedParams, start: Sequence[Any] | str | None = None) -> PreparedProblem:
    """The :class:`PreparedProblem` of the parameter point ``point`` (names and values
    already read, :func:`numeric.prepared.parameters.prepare_params`) from ``start``:
    :func:`prepare_problem` without reading the parameters again (from this process's
    cache when prepared before).  Raises ``ParameterError`` in one sentence for a start
    outside the state space."""
    if start is None:  # the inputs are the point's own: its key (the same tuple, made once)
        key = point.key
    else:
        key = inputs_key(point.model, point.params, _exact_key(start), None)
    return _PROBLEMS.get(key, lambda: _build(point, start, key))


#: The key of each start's exact value by the start as given (:func:`_exact_key`).
_EXACT_KEYS: OrderedDict[Hashable, Any] = OrderedDict()


def _exact_key(start: Any) -> Any:
    """The key of the start's exact value (:func:`exact_start`), a fraction as its
    ``(numerator, denominator)`` in lowest terms (a tuple of ints hashes much faster
    than one of fractions, and a warm call hashes its key at every cache it reads);
    kept by the start as given, so a warm call reads no text again."""
    try:
        given = start_key(start)
        hash(given)
    except TypeError:
        given = None
    if given is not None:
        seen = _EXACT_KEYS.get(given)
        if seen is not None:
            _EXACT_KEYS.move_to_end(given)
            return seen
    exact = exact_start(start)
    if isinstance(exact, tuple) and all(isinstance(v, Fraction) for v in exact):
        exact = ("fractions", tuple((v.numerator, v.denominator) for v in exact))
    if given is not None:
        _EXACT_KEYS[given] = exact
        while len(_EXACT_KEYS) > PROBLEMS:
            _EXACT_KEYS.popitem(last=False)
    return exact


def _build(point: PreparedParams, start: Any, key: Hashable | None) -> PreparedProblem:
    model, values = point.model, dict(point.values)
    now: dict[tuple[str, int], Any] = {}
    if start is None and not callable(model.info.reference):
        s0, now[("s64", 0)] = _reference_start(model, values)  # read once per model
    else:
        with mpmath.workdps(DPS):
            s0 = tuple(start_point(model, start, values))
    p30 = tuple(kernel_vector(model, values))  # the values in kernel order (no arithmetic)
    return PreparedProblem(
        model=model,
        params=point.params,
        start=start,
        values=point.values,
        point=point,
        p30=p30,
        s0=s0,
        key=key,
        _now=now,
    )


#: The 30-digit reference starts of models whose reference point is fixed, with their
#: float64 values, by model object (held with its declarations, so that its id is not
#: reused): a problem at new parameter values (a sweep's next point) reads no
#: declaration again and converts no start to float64 again.
_STARTS: OrderedDict[int, tuple[Any, Any, tuple[mpf, ...], np.ndarray]] = OrderedDict()


def _reference_start(model: Any, values: Mapping[str, mpf]) -> tuple[tuple[mpf, ...], np.ndarray]:
    """The model's fixed reference point (or the origin) at 30 digits and in float64
    (read-only: :attr:`PreparedProblem.s64`), read and checked against the state space
    once per model."""
    info = model.info
    seen = _STARTS.get(id(model))
    if seen is not None and seen[0] is model and seen[1] is info:  # the same declarations
        return seen[2], seen[3]
    with mpmath.workdps(DPS):
        s0 = tuple(start_point(model, None, values))
    s64 = read_only64(s0)
    _STARTS[id(model)] = (model, info, s0, s64)
    while len(_STARTS) > PROBLEMS:
        _STARTS.popitem(last=False)
    return s0, s64
