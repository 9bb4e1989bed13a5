"""The lattice of a finite-N chain, without compiled code: bounds, conservation
laws, the start rounded to it, and the reachable states' container.

The finite-N chain of a model with jumps ``l`` and intensities ``beta_l(s)`` lives
on integer vectors ``n = N s`` and jumps ``n -> n + l`` at rate ``N beta_l(n / N)``
(Section 3 of "Beyond Scaling: Calculable Error Bound of the Power-of-Two-Choices
Mean-Field Model in Heavy-Traffic").  :func:`make_lattice` fixes its bounds from
the declared state space (:func:`bounds`) and its conservation laws ``c . l = 0``;
:func:`round_to_lattice` places the start consistently with them.  The search
itself is compiled (:mod:`numeric.exact.lattice`, which re-exports these names) or
in NumPy (:mod:`numeric.exact.small`); this module imports neither numba nor
SymPy, so a small chain and a chain kept on disk (:mod:`numeric.exact.kept`) load
no compiled code before their search (issue 34).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from math import comb, lcm
from typing import TYPE_CHECKING, Any

import numpy as np

from mfstein.ground.errors import ParameterError

if TYPE_CHECKING:  # imported where a value needs it (module docstring)
    from fractions import Fraction

#: Kinds of state space, as the compiled search encodes them.
KIND_CODES = {"monotone": 0, "simplex": 1, "box": 2, "orthant": 3}
#: Without a truncation, an orthant coordinate above ``GUARD * N`` is taken as
#: evidence of an unbounded state space.
GUARD = 1000


def to_fraction(name: str, value: Any) -> Fraction | None:
    """A parameter value as an exact rational (decimal strings, ``p/q``, ints,
    floats by their shortest repr, SymPy rationals); ``None`` if not rational."""
    from fractions import Fraction

    sp = sys.modules.get("sympy")  # a SymPy value exists only once SymPy is imported
    if sp is not None and isinstance(value, sp.Rational):
        return Fraction(int(value.p), int(value.q))
    if isinstance(value, bool):
        return None
    if isinstance(value, int | Fraction):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(repr(value)) if np.isfinite(value) else None
    try:
        return Fraction(str(value).strip())
    except (ValueError, ZeroDivisionError):
        return None


#: Conservation-law reductions by model key.
_REDUCTIONS: dict[Any, Any] = {}


class TooManyStates(ParameterError):
    """The reachable states outnumber what the memory limit allows (one sentence);
    a caller that chose the lattice itself (an automatic truncation) words its own."""


class Lattice:
    """Bounds of the lattice of one finite-N chain.

    Compared field by field (unhashable), as the dataclass it was.  A plain class with
    slots: a dataclass costs every new process some 0.6 ms to create (its methods
    compiled from text), and the first exact call makes this one."""

    __slots__ = ("N", "free", "kind", "laws", "notes", "total", "truncated", "upper", "values")
    #: The fields in the order of :meth:`__init__` (for ``==`` and ``repr``).
    _FIELDS = ("N", "kind", "upper", "total", "truncated", "laws", "free", "values", "notes")

    #: Number of individuals (servers); ``s = n / N``.
    N: int
    #: State-space kind (``monotone``, ``simplex``, ``box``, ``orthant``).
    kind: str
    #: Largest value of any coordinate (``N``, ``floor(N total)``, the
    #: truncation, or the guard ``GUARD * N`` for an untruncated orthant).
    upper: int
    #: ``floor(N total)`` for a simplex (sum bound), else ``upper``.
    total: int
    #: Whether jumps above ``upper`` are blocked (a declared truncation).
    truncated: bool
    #: Conservation laws (RREF rows of rationals: ints or Fractions).
    laws: tuple[tuple[Fraction, ...], ...]
    free: tuple[int, ...]
    #: The conserved values ``c . n`` at the start, one per law (an int when it is one,
    #: :func:`round_to_lattice`).
    values: tuple[Fraction, ...]
    #: Remarks (a new empty list when not given).
    notes: list[str]

    def __init__(
        self, N: int, kind: str, upper: int, total: int, truncated: bool,
        laws: tuple[tuple[Fraction, ...], ...] = (), free: tuple[int, ...] = (),
        values: tuple[Fraction, ...] = (), notes: list[str] | None = None,
    ) -> None:  # fmt: skip
        self.N, self.kind, self.upper, self.total, self.truncated = N, kind, upper, total, truncated
        self.laws, self.free, self.values = laws, free, values
        self.notes = [] if notes is None else notes

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f) for f in self._FIELDS)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={v!r}" for f, v in zip(self._FIELDS, self._values(), strict=True))
        return f"Lattice({inner})"

    def contains(self, n: Sequence[int]) -> bool:
        """Whether the integer vector ``n`` is a point of this lattice."""
        if min(n) < 0 or max(n) > self.upper:
            return False
        if self.kind == "monotone":
            return all(n[i] >= n[i + 1] for i in range(len(n) - 1))
        if self.kind == "simplex":
            return sum(n) <= self.total
        return True

    def count_bound(self, b: int) -> int:
        """An upper bound on the number of lattice points with the start's law values."""
        U = self.upper
        if self.kind == "monotone":
            count = comb(U + b, b)
        elif self.kind == "simplex":
            conserved = any(all(c == 1 for c in row) for row in self.laws)
            count = comb(self.total + b - 1, b - 1) if conserved else comb(self.total + b, b)
        else:
            count = (U + 1) ** b
        return min(count, (U + 1) ** max(len(self.free), 1))

    def describe(self, b: int) -> str:
        """The lattice in words, for messages (a truncated orthant shows its cap)."""
        if self.kind == "orthant" and self.truncated:
            return f"0 <= n_i <= {self.upper}"
        from derive.spec import region_text  # a message only: not imported on every call

        return region_text(self.kind, b, var="n", top=str(self.N), total=str(self.total))


def make_lattice(model: Any, N: int, truncation: Any = None) -> Lattice:
    """The :class:`Lattice` of ``model`` at size ``N`` (``truncation`` in state units,
    ``n_k <= floor(N truncation)``, allowed for every kind; needed for an unbounded
    orthant whose reachable set is infinite): :func:`sized` with the model's declared
    state space and its conservation laws."""
    from numeric.invariants import model_reduction

    space = model.info.state_space
    red = _REDUCTIONS.get(model.key)
    if red is None:  # from the transitions: the interpreted event loop generates no kernels
        red = _REDUCTIONS[model.key] = model_reduction(model)
    return sized(space.kind, space.total, N, truncation, red.laws, red.free)


def sized(
    kind: str,
    total: Any,
    N: int,
    truncation: Any,
    laws: tuple[tuple[Fraction, ...], ...] = (),
    free: tuple[int, ...] = (),
) -> Lattice:
    """The :class:`Lattice` at size ``N`` of a state space of ``kind`` (``total``: a
    simplex's declared sum bound, ``None`` for 1) with the conservation ``laws`` and
    ``free`` coordinates: every coordinate ``<= N`` (``<= floor(N total)`` on a
    simplex, ``<= GUARD N`` on an orthant) and ``<= floor(N truncation)`` when a
    truncation is given (refused below ``1 / N``)."""
    trunc = None
    if truncation is not None:
        t = to_fraction("truncation", truncation)
        if t is None or t <= 0:
            raise ParameterError(f"truncation must be a positive number, got {truncation!r}.")
        trunc = int(t * N)
        if trunc < 1:
            raise ParameterError(
                f"truncation must be at least 1/N = 1/{N} to leave room for a jump, "
                f"got {truncation!r}."
            )
    total_frac = total if (type(total) is int and total) else (to_fraction("total", total) or 1)
    if kind == "orthant":
        upper = trunc if trunc is not None else GUARD * N
    elif kind == "simplex":
        upper = int(total_frac * N)
    else:
        upper = N
    truncated = trunc is not None and trunc < upper if kind != "orthant" else trunc is not None
    if trunc is not None:
        upper = min(upper, trunc)
    top = int(total_frac * N) if kind == "simplex" else upper
    return Lattice(
        N=N, kind=kind, upper=upper, total=top, truncated=truncated, laws=laws, free=free
    )


def ratio(value: Any) -> tuple[int, int] | None:
    """``value`` as integers ``(p, q)``, ``q > 0``, when it is an int, a
    :class:`fractions.Fraction` or a text ``"p"`` or ``"p/q"`` of ASCII digits (as
    ``str`` writes a Fraction, :mod:`numeric.exact.kept`'s records); ``None`` for
    anything else (:func:`to_fraction` reads it).  Without :mod:`fractions`, whose
    import (with :mod:`decimal`'s) costs a new process some 2 ms: a chain kept on disk
    places its start at a new ``N`` in integers."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value, 1
    fractions = sys.modules.get("fractions")  # a Fraction exists only once it is imported
    if fractions is not None and isinstance(value, fractions.Fraction):
        return value.numerator, value.denominator
    if not isinstance(value, str) or not value.isascii():
        return None
    p, slash, q = value.partition("/")
    if not p.removeprefix("-").isdigit() or (slash and not (q.isdigit() and int(q))):
        return None
    return int(p), int(q) if slash else 1


def rational(value: Any) -> Any:
    """An exact rational (:func:`ratio`, else :func:`to_fraction`) as an int when it is
    one, else a :class:`fractions.Fraction` (imported then only)."""
    pq = ratio(value)
    return to_fraction("value", value) if pq is None else _of_ratio(*pq)


def _of_ratio(p: int, q: int) -> Any:
    """``p / q`` (``q > 0``) as an int when it is one, else a Fraction."""
    if p % q == 0:
        return p // q
    from fractions import Fraction

    return Fraction(p, q)


def _round_div(a: int, b: int) -> int:
    """``round(a / b)`` (``b != 0``), a half to even, as Python rounds a Fraction."""
    if b < 0:
        a, b = -a, -b
    q, r = divmod(a, b)
    return q + (2 * r > b or (2 * r == b and q % 2 == 1))


def round_to_lattice(lattice: Lattice, s: Sequence[Any], what: str = "start") -> np.ndarray:
    """The lattice point nearest ``N s`` with the conservation laws kept.

    Free coordinates are rounded to the nearest integer; each dependent one
    (the pivot of a law in reduced row echelon form) is then solved from its
    law, ``n_d = N (c . s) - sum_{j free} c_j n_j``, and rounded; so
    ``c . n = N c . s`` exactly whenever that is attainable on the lattice.
    In integers (:func:`ratio`: ``s`` and each law over a common denominator), the
    values of the laws an int each when they are integers.
    Raises :class:`ParameterError` if the point is not in the state space.
    """
    N = lattice.N
    exact = [ratio(v) for v in s]
    if None in exact:  # decimal strings, floats, SymPy numbers: as Fractions
        from fractions import Fraction

        fr = [to_fraction(what, v) for v in s]
        fr = [Fraction(str(float(v))) if e is None else e for e, v in zip(fr, s, strict=True)]
        exact = [(f.numerator, f.denominator) for f in fr]
    b = len(exact)
    n = [0] * b
    for j in lattice.free:
        n[j] = _round_div(exact[j][0] * N, exact[j][1])
    rows = []
    for law in lattice.laws:
        coef = [ratio(c) for c in law]
        scale = lcm(*(q for _, q in coef))
        row = [p * (scale // q) for p, q in coef]  # the law times its denominators: integers
        rows.append((row, scale))
        used = [j for j, c in enumerate(row) if c]
        D = lcm(*(exact[j][1] for j in used))
        cs = sum(row[j] * exact[j][0] * (D // exact[j][1]) for j in used)  # D (c . s)
        rest = sum(row[j] * n[j] for j in lattice.free if row[j])
        n[used[0]] = _round_div(N * cs - D * rest, D * row[used[0]])
    if not lattice.contains(n):
        raise ParameterError(
            f"{what} rounds to the lattice point {tuple(n)} (N = {N}), outside the state space "
            f"{lattice.describe(b)}; give a {what} inside it."
        )
    lattice.values = tuple(
        _of_ratio(sum(c * x for c, x in zip(row, n, strict=True)), scale) for row, scale in rows
    )
    return np.asarray(n, dtype=np.int64)


class Reachable:
    """The reachable states and the generator's off-diagonal part.

    Compared by identity (its fields are arrays, as :class:`numeric.exact.general.SolvedChain`).
    A plain class with slots: a dataclass costs every new process some 0.3 ms to create."""

    __slots__ = ("exact_states", "rates", "states", "target", "up_rates")

    #: ``(S, b)`` int64, in breadth-first order from the start (index 0).
    states: np.ndarray
    #: ``(S, n_transitions)`` float64 intensities ``beta_t(n / N)`` (exact zeros
    #: exact; blocked and self-loop transitions zeroed); ``None`` once the
    #: generator is assembled (:meth:`release`).
    rates: np.ndarray | None
    #: ``(S, n_transitions)`` int32 array, the index of the state transition ``t`` leads
    #: to, ``-1`` for none (the generator's entry is ``N rates[i, t]``,
    #: :func:`numeric.exact.assembly.transposed_generator`); ``None`` once released.
    target: np.ndarray | None
    #: How many states needed exact rate evaluation.
    exact_states: int
    #: ``(S,)`` the sum of the intensities of the transitions that raise the total
    #: ``sum(n)``, kept by :meth:`release`.
    up_rates: np.ndarray | None

    def __init__(
        self, states: np.ndarray, rates: np.ndarray | None, target: np.ndarray | None,
        exact_states: int, up_rates: np.ndarray | None = None,
    ) -> None:  # fmt: skip
        self.states, self.rates, self.target = states, rates, target
        self.exact_states, self.up_rates = exact_states, up_rates

    def release(self, up: np.ndarray) -> None:
        """Keep the sum of the intensities of the transitions ``up`` (a mask) per state
        and drop the intensities and the targets (the generator holds them now)."""
        assert self.rates is not None
        self.target = None  # first: the generator's peak is the search's arrays and Q^T
        total = np.zeros(len(self.states))
        for t in np.flatnonzero(up):
            total += self.rates[:, t]  # column by column: no (S, n_up) copy at the peak
        self.up_rates, self.rates = total, None
