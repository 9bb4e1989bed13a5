"""Homogeneous population processes written object by object (rmftool's ``HomPP``).

A population of ``N`` identical objects, each in one of ``S`` states; ``x_s`` is
the fraction of objects in state ``s`` (the occupancy, ``x_0 + ... + x_{S-1} = 1``).
:func:`population` takes the model the way rmftool 0.5's ``HomPP.add_rate_tensors``
does -- rate tensors -- or as a per-object transition table, and returns an
ordinary :class:`derive.model.Model` on the simplex, so that every task of
mfstein (solve, exact, simulate, transient, table, LaTeX) applies unchanged.

Conventions (those of rmftool 0.5, checked against its source):

* **unilateral moves** ``A[s, s']``: an object in ``s`` moves to ``s'`` at rate
  ``A[s, s']`` (a number or a SymPy expression in the occupancy and the
  parameters).  In densities: the jump ``e_{s'} - e_s`` with intensity
  ``A[s, s'] x_s``; the chain of ``N`` objects makes it at rate ``N A[s, s'] x_s``,
  i.e. ``A[s, s']`` per object in ``s``.
* **pairwise interactions** ``B[s, s1, s', s1']``: an ordered pair in states
  ``(s, s1)`` becomes ``(s', s1')``: the jump ``e_{s'} - e_s + e_{s1'} - e_{s1}``
  with intensity ``B[s, s1, s', s1'] x_s x_s1`` (the density-dependent
  convention, also for ``s = s1``: the pair is drawn with replacement).  The
  entries ``B[s, s1, ...]`` and ``B[s1, s, ...]`` are two ordered pairs and both
  count.
* **the transition table** ``transitions=[(s, s', r), ...]``: "an object moves
  ``s -> s'`` at rate ``r(x)``", ``r`` the per-object rate, the intensity is
  ``x_s r(x)`` -- the same as ``A[s, s'] = r``.  A pair entry
  ``((s, s1), (s', s1'), r)`` is the same as ``B[s, s1, s', s1'] = r``.  States
  are named by index, by symbol or by name.
* **a pair of two objects in the same state that both leave it** (``B[s, s, s', s1']``
  with ``s' != s`` and ``s1' != s``) is refused: its intensity ``B x_s^2`` stays
  positive with one object in ``s``, where the chain of ``N`` objects cannot lose
  two (rmftool accepts it for the mean field; mfstein's model must also define the
  finite-N chain that ``exact`` and ``simulate`` run).  A pair in which one object
  stays (``B[s, s, s, s1']``) is accepted.
* **moves that move nothing are ignored**: the diagonal ``A[s, s]`` and the
  entries ``B[s, s1, s, s1]``, ``B[s, s1, s1, s]`` (any value, so a generator
  matrix with its negative diagonal is accepted as ``A``), as rmftool ignores
  them (their jump is zero); a table entry ``(s, s, r)`` is refused instead,
  since it was written on purpose.
* **coinciding jumps are merged**: ``A[S, I]`` and the contact ``B[S, I, I, I]``
  both move one object from ``S`` to ``I``; the model holds one transition with
  the summed intensity.

Every off-diagonal entry is checked like a :class:`derive.model.Transition`'s rate
(a real SymPy expression or number, finite, not a negative constant); the error
names the entry (``A[0, 1]``).  The state space is the simplex with the
conserved sum 1 (:class:`derive.spec.StateSpace`), the reference point the
uniform occupancy ``1/S`` unless ``reference`` is given.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sympy as sp

from derive.model import Model, Transition
from derive.spec import ModelInfo, Parameter, StateSpace
from mfstein.ground.arguments import check_keywords
from mfstein.ground.errors import ParameterError

#: The citation of a population built here (the conventions' source).
CITATION = (
    "homogeneous population process with the HomPP conventions of rmftool 0.5 (N. Gast and "
    "S. Allmeier, rmf tool - A library to compute (refined) mean field approximation(s))"
)

#: Largest number of states (B alone has S^4 entries).
MAX_STATES = 60


@check_keywords
def population(
    A: Any = None,
    B: Any = None,
    *,
    states: Sequence[Any] | None = None,
    params: Sequence[Any] = (),
    transitions: Iterable[Any] = (),
    name: str = "population",
    parameters: Sequence[Parameter] = (),
    reference: Sequence[Any] | None = None,
    observables: Mapping[str, Any] | None = None,
    citation: str = CITATION,
) -> Model:
    """A homogeneous population of identical objects as a :class:`derive.model.Model`.

    Parameters
    ----------
    A:
        ``S x S`` per-object rates of unilateral moves (nested lists, a NumPy
        array or a SymPy matrix; entries numbers or SymPy expressions); the
        diagonal is ignored.
    B:
        ``S x S x S x S`` rates of pairwise interactions (see the module docstring).
    states:
        The ``S`` state names or SymPy symbols; default ``x0 .. x{S-1}``.  Needed
        when neither ``A`` nor ``B`` gives ``S``.
    params:
        The parameters (SymPy symbols or names) that the entries use.
    transitions:
        A per-object table ``[(s, s', r), ...]`` or ``[((s, s1), (s', s1'), r), ...]``.
    name, parameters, reference, observables, citation:
        The model's name, declared parameter ranges (:class:`derive.spec.Parameter`),
        start occupancy (default uniform), named observables and citation.

    Examples
    --------
    >>> import sympy as sp
    >>> beta = sp.Symbol("beta")
    >>> m = population([[0, 1], [1, 0]], states=("S", "I"), params=(beta,),
    ...                transitions=[("S", "I", beta * sp.Symbol("I"))])
    >>> [(t.jump, t.rate) for t in m.transitions]
    [((-1, 1), I*S*beta + S), ((1, -1), I)]
    """
    if not isinstance(name, str) or not name:
        raise ParameterError(f"name must be a non-empty string, got {name!r}.")
    tensors = {what: _tensor(what, value, rank) for what, value, rank in (("A", A, 2), ("B", B, 4))}
    S = _size(tensors, states)
    symbols = _states(states, S)
    pars = tuple(sp.Symbol(q) if isinstance(q, str) else q for q in _sequence("params", params))
    moves: dict[tuple[int, ...], list[sp.Expr]] = {}
    for what, (_, entries) in tensors.items():
        for index, entry in entries:
            _add(moves, symbols, f"{what}[{', '.join(map(str, index))}]", index, entry)
    for k, row in enumerate(_sequence("transitions", transitions)):
        index, entry = _table_entry(k, row, symbols)
        _add(moves, symbols, f"transitions[{k}]", index, entry)
    if not moves:
        raise ParameterError(
            f"population {name} has no transition: every off-diagonal entry of A and B is zero "
            "and transitions is empty."
        )
    model_transitions = [
        Transition(jump, sp.Add(*rates), _label(jump, symbols)) for jump, rates in moves.items()
    ]
    info = ModelInfo(
        parameters=_parameters(parameters),
        state_space=StateSpace("simplex", total=1.0),
        conservation=((1,) * S,),
        reference=_reference(reference, S),
        observables=dict(observables or {}),
        citation=citation,
    )
    return Model(name, symbols, pars, model_transitions, info=info)


def _sequence(what: str, value: Any) -> list[Any]:
    """``value`` as a list, or one sentence why it is no sequence."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise ParameterError(f"{what} must be a sequence, got {type(value).__name__} {value!r}.")
    return list(value)


def _tensor(what: str, value: Any, rank: int) -> tuple[int, list[tuple[tuple[int, ...], Any]]]:
    """``(S, entries)``: the size and the entries ``(index, value)`` of a square rate
    tensor of ``rank`` axes (``(0, [])`` for ``None``), or one sentence on its shape."""
    if value is None:
        return 0, []
    import numpy as np

    if isinstance(value, sp.MatrixBase | sp.NDimArray):
        value = value.tolist()
    shape_text = " x ".join(["S"] * rank)
    try:
        array = np.asarray(value, dtype=object)
    except ValueError:
        array = None
    if array is None or array.ndim != rank or len(set(array.shape)) != 1 or array.size == 0:
        got = "a ragged sequence" if array is None else f"shape {array.shape}"
        raise ParameterError(
            f"{what} must be an {shape_text} array of rates (S >= 1 states), got {got}."
        )
    if array.shape[0] > MAX_STATES:
        raise ParameterError(
            f"{what} has {array.shape[0]} states; a population takes at most {MAX_STATES}."
        )
    entries = [(tuple(int(i) for i in index), entry) for index, entry in np.ndenumerate(array)]
    return array.shape[0], entries


def _size(tensors: Mapping[str, tuple[int, list]], states: Any) -> int:
    """The number of states ``S``: from ``A`` and ``B`` (which must agree), else from
    ``states``; at least 2."""
    found = {what: size for what, (size, _) in tensors.items() if size}
    if len(set(found.values())) > 1:
        raise ParameterError(
            f"A is {found['A']} x {found['A']} but B is for S = {found['B']} states; "
            "both must have the same number of states S."
        )
    if found:
        S = next(iter(found.values()))
    elif states is None:
        raise ParameterError(
            "give the states (states=('S', 'I', ...)) when the population is given by "
            "transitions alone."
        )
    else:
        S = len(_sequence("states", states))
    if S < 2:
        raise ParameterError(f"a population needs at least S = 2 states, got S = {S}.")
    return S


def _states(states: Any, S: int) -> tuple[sp.Symbol, ...]:
    """The state symbols: ``states`` as symbols (names accepted), default ``x0 ..``."""
    if states is None:
        return tuple(sp.Symbol(f"x{s}") for s in range(S))
    out = tuple(sp.Symbol(v) if isinstance(v, str) else v for v in _sequence("states", states))
    if len(out) != S:
        raise ParameterError(f"states names {len(out)} states, but the rate tensors have S = {S}.")
    return out


def _reference(reference: Any, S: int) -> Any:
    """The start occupancy: ``reference`` (a sequence of ``S`` fractions, or a function
    of the parameters returning one), default the uniform ``1/S``."""
    if reference is None:
        return (sp.Rational(1, S),) * S
    if callable(reference):
        return reference
    out = tuple(_sequence("reference", reference))
    if len(out) != S:
        raise ParameterError(
            f"reference must hold one fraction per state (S = {S}), got {len(out)}."
        )
    return out


def _parameters(parameters: Any) -> tuple[Parameter, ...]:
    """The declared parameter ranges, each a :class:`derive.spec.Parameter`."""
    out = tuple(_sequence("parameters", parameters))
    for p in out:
        if not isinstance(p, Parameter):
            raise ParameterError(
                "parameters must be derive.Parameter objects (e.g. Parameter('beta', low=0)), "
                f"got {type(p).__name__} {p!r}."
            )
    return out


def _state_index(where: str, value: Any, symbols: tuple[sp.Symbol, ...]) -> int:
    """A state named by index, symbol or name, as its index."""
    if not isinstance(value, bool) and hasattr(value, "__index__"):
        index = operator.index(value)
        if 0 <= index < len(symbols):
            return index
    names = [str(x) for x in symbols]
    if isinstance(value, str | sp.Symbol) and str(value) in names:
        return names.index(str(value))
    raise ParameterError(
        f"{where}: a state must be an index 0 .. {len(symbols) - 1} or one of "
        f"{', '.join(names)}, got {value!r}."
    )


def _table_entry(k: int, row: Any, symbols: tuple[sp.Symbol, ...]) -> tuple[tuple[int, ...], Any]:
    """Row ``k`` of the transition table as the index of the tensor entry it stands for."""
    where = f"transitions[{k}]"
    items = _sequence(where, row) if not isinstance(row, str | bytes) else None
    if items is None or len(items) != 3:
        raise ParameterError(
            f"{where} must be (s, s', rate) or ((s, s1), (s', s1'), rate), got {row!r}."
        )
    before, after, rate = items
    pair = isinstance(before, tuple | list)
    if pair != isinstance(after, tuple | list):
        raise ParameterError(
            f"{where}: both sides must be single states or both pairs of states, got {row!r}."
        )
    sides = (list(before), list(after)) if pair else ([before], [after])
    if pair and (len(sides[0]) != 2 or len(sides[1]) != 2):
        raise ParameterError(f"{where}: a pair must hold two states, got {row!r}.")
    source = [_state_index(where, v, symbols) for v in sides[0]]
    target = [_state_index(where, v, symbols) for v in sides[1]]
    if sorted(source) == sorted(target):
        raise ParameterError(
            f"{where} moves no object ({before!r} -> {after!r}); an entry must change a state."
        )
    return tuple(source + target), rate


def _add(
    moves: dict[tuple[int, ...], list[sp.Expr]],
    symbols: tuple[sp.Symbol, ...],
    what: str,
    index: tuple[int, ...],
    entry: Any,
) -> None:
    """Add the intensity of one tensor entry (``index`` of length 2 or 4) to ``moves``."""
    S = len(symbols)
    half = len(index) // 2
    jump = [0] * S
    for s in index[:half]:
        jump[s] -= 1
    for s in index[half:]:
        jump[s] += 1
    if not any(jump):
        return  # A[s, s], B[s, s1, s, s1], B[s, s1, s1, s]: nothing moves
    if not isinstance(entry, sp.Basic) and callable(getattr(entry, "item", None)):
        entry = entry.item()  # a NumPy scalar
    rate = Transition(tuple(jump), entry, what).rate  # the one check of a rate
    if rate.is_zero:
        return  # (0.0 == 0 is False in SymPy)
    if half == 2 and index[0] == index[1] and jump[index[0]] == -2:
        x = symbols[index[0]]
        raise ParameterError(
            f"{what} takes both objects of a pair out of state {x} at the rate {rate * x**2}, "
            f"which stays positive when a single object is in {x} (N*{x} = 1) and the chain of "
            f"N objects cannot lose two, so no finite-N chain (exact, simulate) would exist; "
            "such a pair is refused."
        )
    occupancy = sp.Mul(*(symbols[s] for s in index[:half]))
    moves.setdefault(tuple(jump), []).append(rate * occupancy)


def _label(jump: tuple[int, ...], symbols: tuple[sp.Symbol, ...]) -> str:
    """A jump in reaction notation: ``"S -> I"``, ``"I + I -> S + R"``."""

    def side(sign: int) -> str:
        return " + ".join(
            str(x) for x, n in zip(symbols, jump, strict=True) for _ in range(max(0, sign * n))
        )

    return f"{side(-1)} -> {side(1)}"
