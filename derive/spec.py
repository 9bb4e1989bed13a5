"""What the numeric, exact and simulation layers need to know about a model,
declared once, next to the model's transitions.

A :class:`ModelInfo` travels with a :class:`derive.model.Model` (``model.info``)
and records

* the parameters with their allowed ranges (:class:`Parameter`),
* the state space (:class:`StateSpace`: monotone, simplex, box or orthant),
* linear conservation laws ``c . s = const`` that the modeller declares (numeric
  also detects every linear invariant of the jump vectors itself and checks the
  declared ones against them),
* a reference point: the initial state used when the caller gives none,
* an optional *fast path*: the name of a structure-aware solver registered in
  :mod:`numeric` and the structural facts it needs (e.g. ``d`` and the
  sampling scheme of the supermarket model).

Nothing here computes: the information is read by the numeric layers.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from numbers import Real
from typing import Any, Self

from mfstein.ground.errors import ParameterError

#: State-space kinds understood by numeric (membership checks, random starts)
#: and by the exact solver (lattice enumeration).
STATE_SPACE_KINDS = ("monotone", "simplex", "box", "orthant")


@dataclass(frozen=True)
class Parameter:
    """A model parameter and its allowed range ``low (<|<=) value (<|<=) high``.

    ``None`` bounds are unbounded; ``integer`` parameters (such as the number of
    servers ``N`` of an N-dependent model) must be whole numbers.
    """

    #: The parameter's name, an identifier.
    name: str
    #: The lower end of the allowed range; ``None`` for no lower bound.
    low: float | None = None
    #: The upper end of the allowed range; ``None`` for no upper bound.
    high: float | None = None
    #: Whether ``low`` itself is allowed (``low <= value``, else ``low < value``).
    low_inclusive: bool = False
    #: Whether ``high`` itself is allowed (``value <= high``, else ``value < high``).
    high_inclusive: bool = False
    #: Whether the value must be a whole number (such as the number of servers ``N``).
    integer: bool = False
    #: What the parameter is, in one phrase (``mfstein models`` shows it); ``""`` for none.
    doc: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ParameterError(f"a parameter's name must be an identifier, got {self.name!r}.")
        for side in ("low", "high"):
            v = getattr(self, side)
            if v is not None and (isinstance(v, bool) or not isinstance(v, Real) or v != v):
                raise ParameterError(
                    f"parameter {self.name}: {side} must be a real number or None, got {v!r}."
                )
        lo, hi = self.low, self.high
        if lo is not None and hi is not None and (
            lo > hi or (lo == hi and not (self.low_inclusive and self.high_inclusive))
        ):
            raise ParameterError(
                f"parameter {self.name}: the range {self.describe()} is empty (low = "
                f"{_num(lo)}, high = {_num(hi)})."
            )

    def describe(self) -> str:
        """The allowed range in words, e.g. ``"> 0"`` or ``"an integer >= 2"``."""
        parts = []
        if self.low is not None:
            parts.append(f"{'>=' if self.low_inclusive else '>'} {_num(self.low)}")
        if self.high is not None:
            parts.append(f"{'<=' if self.high_inclusive else '<'} {_num(self.high)}")
        text = " and ".join(parts) if parts else "any real number"
        return f"an integer {text}" if self.integer else text

    def contains(self, value: Any) -> bool:
        """Whether ``value`` (a real number of any numeric type) is allowed."""
        if self.integer and value != int(value):
            return False
        if self.low is not None and (
            value < self.low or (value == self.low and not self.low_inclusive)
        ):
            return False
        if self.high is not None and (
            value > self.high or (value == self.high and not self.high_inclusive)
        ):
            return False
        return True


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


def region_text(kind: str, b: int, *, var: str, top: str, total: str) -> str:
    """A state-space kind as inequalities in ``var_1 .. var_b``, for messages.

    ``top`` bounds every coordinate (``1`` for densities ``s``, ``N`` for the
    counts ``n = N s`` of the finite-N lattice) and ``total`` is the simplex's
    bound on the sum:

    * ``monotone``: ``top >= var_1 >= ... >= var_b >= 0``;
    * ``simplex``: ``var_i >= 0, var_1 + ... + var_b <= total``;
    * ``box``: ``0 <= var_i <= top``;
    * ``orthant``: ``var_i >= 0``.
    """
    if kind == "monotone":
        return f"{top} >= {var}_1 >= ... >= {var}_{b} >= 0"
    if kind == "simplex":
        return f"{var}_i >= 0, {var}_1 + ... + {var}_{b} <= {total}"
    if kind == "box":
        return f"0 <= {var}_i <= {top}"
    return f"{var}_i >= 0"


@dataclass(frozen=True)
class StateSpace:
    """The set the state ``s`` lives in.

    ``monotone``
        ``1 >= s_1 >= s_2 >= ... >= s_b >= 0`` (fractions of servers with at
        least k jobs: the supermarket and JSQ models);
    ``simplex``
        ``s >= 0`` and ``sum(s) <= total`` (``== total`` when the sum is
        conserved, as for SIR);
    ``box``
        ``0 <= s_i <= 1``;
    ``orthant``
        ``s >= 0``.
    """

    #: ``"monotone"``, ``"simplex"``, ``"box"`` or ``"orthant"`` (class docstring).
    kind: str = "orthant"
    #: The bound ``sum(s) <= total`` of a ``"simplex"`` (the sum's value when it is conserved).
    total: float = 1.0
    #: ``False`` for the default of a :class:`ModelInfo` that names no state space:
    #: :class:`derive.model.Model` then infers one from the jumps
    #: (:func:`derive.model.infer_state_space`), also marked ``declared=False``.
    declared: bool = field(default=True, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in STATE_SPACE_KINDS:
            raise ParameterError(
                f"state space kind must be one of {', '.join(STATE_SPACE_KINDS)}, "
                f"got {self.kind!r}."
            )

    def describe(self, b: int) -> str:
        """The state space as a formula in ``s_1 .. s_b``."""
        return region_text(self.kind, b, var="s", top="1", total=_num(self.total))

    def contains(self, s: Sequence[Any], tol: float = 0.0) -> bool:
        """Whether ``s`` lies in the state space (up to ``tol``)."""
        if any(x < -tol for x in s):
            return False
        if self.kind == "monotone":
            return s[0] <= 1 + tol and all(s[i] >= s[i + 1] - tol for i in range(len(s) - 1))
        if self.kind == "simplex":
            return sum(s) <= self.total + tol
        if self.kind == "box":
            return all(x <= 1 + tol for x in s)
        return True


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    """The field names of the dataclass ``cls``, in order (read once per class)."""
    return tuple(f.name for f in fields(cls))


@dataclass(frozen=True)
class Structure(Mapping[str, Any]):
    """The base of a family's structural facts as a typed, frozen record (``ModelInfo.
    structure``): a subclass declares its facts as dataclass fields, its solvers read
    them as attributes.  It is also a read-only mapping of its fields (``st["d"]``,
    ``st.get("d")``, ``dict(st)``), so general code reading a fact by name
    (:meth:`derive.model.Model.structure`) reads it, and a user model's structure
    declared as a plain mapping, alike."""

    def __getitem__(self, name: str) -> Any:
        if name not in _field_names(type(self)):
            raise KeyError(name)
        return getattr(self, name)

    def get(self, name: str, default: Any = None) -> Any:
        """The fact ``name``, or ``default`` when the record has no such field."""
        return getattr(self, name) if name in _field_names(type(self)) else default

    def __iter__(self) -> Iterator[str]:
        return iter(_field_names(type(self)))

    def __len__(self) -> int:
        return len(_field_names(type(self)))

    @classmethod
    def _names(cls) -> tuple[str, ...]:
        return _field_names(cls)

    @classmethod
    def declared(cls, structure: Mapping[str, Any]) -> bool:
        """Whether ``structure`` declares this record's facts: an instance, or a mapping
        holding every field without a default."""
        if isinstance(structure, cls):
            return True
        needed = {f.name for f in fields(cls) if f.default is MISSING}
        return needed <= set(structure)

    @classmethod
    def read(cls, structure: Mapping[str, Any]) -> Self:
        """``structure`` as this record: itself, or the record of a mapping that declares
        its facts (:meth:`declared`; other keys are ignored); one sentence naming the
        missing facts otherwise."""
        if isinstance(structure, cls):
            return structure
        if not cls.declared(structure):
            needed = [f.name for f in fields(cls) if f.default is MISSING]
            missing = ", ".join(n for n in needed if n not in structure)
            raise ParameterError(
                f"structure must declare {', '.join(needed)} for this fast path; "
                f"missing {missing}."
            )
        return cls(**{n: structure[n] for n in cls._names() if n in structure})


@dataclass(frozen=True)
class ModelInfo:
    """Metadata of a model family, declared by its factory."""

    #: One :class:`Parameter` per symbol in ``model.params`` (others are
    #: accepted with any real value).
    parameters: tuple[Parameter, ...] = ()
    #: Where ``s`` lives (:class:`StateSpace`); when none is given, the model
    #: infers it from its jumps (:func:`derive.model.infer_state_space`).
    state_space: StateSpace = field(default_factory=lambda: StateSpace(declared=False))
    #: Declared linear invariants ``c . s`` (integer coefficient vectors).
    conservation: tuple[tuple[int, ...], ...] = ()
    #: The initial state used when none is given. It is a sequence of numbers or a
    #: function of the parameter values (a mapping name -> number) returning one; ``None``
    #: means the origin (the empty system).
    reference: Sequence[Any] | Callable[[Mapping[str, Any]], Sequence[Any]] | None = None
    #: Name of a structure-aware solver registered in :mod:`numeric`, or ``None``.
    fast_path: str | None = None
    #: Structural facts that solver needs: a family's typed record (a :class:`Structure`,
    #: e.g. :class:`derive.models.supermarket.SupermarketStructure`) or a plain mapping
    #: (e.g. ``{"d": 2, "replacement": True}``); read by name either way.
    structure: Mapping[str, Any] = field(default_factory=dict)
    #: The paper the model comes from (authors and title), for reports.
    citation: str = ""
    #: ``True`` when the factory can prove that the mean-field ODE has exactly
    #: one fixed point in the state space for every allowed parameter value; the
    #: general fixed-point search then integrates from the start only, without
    #: the extra random starts that look for other stable points.
    unique_fixed_point: bool = False
    #: The model's usual performance measures by name (name -> a SymPy expression or a
    #: string in the state symbols and parameters), e.g. ``{"queue_length": s1 + s2}``
    #: (:mod:`derive.observables`).
    observables: Mapping[str, Any] = field(default_factory=dict)

    def parameter(self, name: str) -> Parameter | None:
        """The declared :class:`Parameter` called ``name``, if any."""
        for p in self.parameters:
            if p.name == name:
                return p
        return None


@dataclass(frozen=True)
class Truncated:
    """A model family with an unbounded state (e.g. infinite buffers), resolved to a
    finite :class:`derive.model.Model` once the parameters and the precision are
    known.

    ``levels(params, digits)`` returns the dimension beyond which the
    neglected part of the fixed point is below ``10^-digits`` (raising
    :class:`mfstein.ground.errors.ParameterError` when no finite truncation exists,
    e.g. an unstable load), and ``build(b)`` the model of that dimension.
    """

    #: The family's name.
    name: str
    #: ``build(b)``, the finite :class:`derive.model.Model` of dimension ``b``.
    build: Callable[[int], Any]
    #: ``levels(params, digits)``, the dimension beyond which the neglected part of the fixed point
    #: is below ``10^-digits``.
    levels: Callable[[Mapping[str, Any], int], int]
    #: The family's parameter names.
    params: tuple[str, ...] = ()
    #: The family's :class:`ModelInfo` (parameter ranges, state space, ...).
    info: ModelInfo = field(default_factory=ModelInfo)

    def __repr__(self) -> str:
        return f"<Truncated {self.name} params=({', '.join(self.params)})>"

    def resolve(self, params: Mapping[str, Any], digits: int) -> Any:
        """The finite model that represents this family to ``digits`` digits."""
        return self.build(self.levels(params, digits))
