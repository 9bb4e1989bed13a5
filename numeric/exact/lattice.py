"""The lattice of a finite-N population process: states, exact rates, reachability.

The finite-N chain of a density-dependent population process with jumps ``l``
and intensities ``beta_l(s)`` lives on integer vectors ``n = N s`` and jumps
``n -> n + l`` at rate ``N beta_l(n / N)`` (Section 3 of "Beyond Scaling:
Calculable Error Bound of the Power-of-Two-Choices Mean-Field Model in
Heavy-Traffic").  This module builds its state space from what the model
declares (:class:`derive.spec.ModelInfo`):

* the *kind* of state space gives the bounds of every lattice point:
  ``monotone`` ``N >= n_1 >= ... >= n_b >= 0``; ``simplex`` ``n >= 0``,
  ``sum n <= N total``; ``box`` ``0 <= n_k <= N``; ``orthant`` ``n >= 0``
  (unbounded: a *truncation* ``n_k <= floor(N t)`` is needed unless the
  reachable set is finite by itself);
* the *conservation laws* ``c . l = 0`` (found exactly by
  :func:`numeric.invariants.reduction`) fix ``c . n`` along every path, so the
  start point is rounded to the lattice *consistently* with them
  (:func:`round_to_lattice`);
* the states are those reachable from the start through transitions of
  positive rate, found by a compiled breadth-first search
  (:func:`explore`, compiled once and cached: the intensities come from the
  model's generated loop, :mod:`numeric.exact.rate_blocks`, one layer at a
  time) that records the target of every jump on the way
  (:mod:`numeric.exact.assembly` writes ``Q^T`` from them).  States are kept
  in an open-addressing hash table keyed by the vector itself, so no
  mixed-radix code (and no ``(N + 1)^b < 2^63`` limit) is needed.

Exact rates.  Intensities are evaluated in float64 by the model's generated
kernel ``rates_into``.  Round-off can turn an exact zero into ``+-1e-17``
(``1 - 0.8 - 0.2``): a spurious negative refused the model, a spurious
positive one would follow a jump off the lattice.  Every intensity that is
negative, NaN, or nonzero but at most :data:`AMBIGUOUS` times the largest
intensity of its state (and every state whose float64 evaluation raises, a
division by zero) is therefore recomputed *exactly*: in rational
arithmetic (:class:`fractions.Fraction`, the rates printed from SymPy with
rationals kept exact) when the rates are rational functions, otherwise in
60-digit ``mpmath`` with values below ``10^-40`` of the state's largest rate
taken as zero.  The exact value decides the sign; a truly negative intensity
(or one that cannot be evaluated) is refused with one sentence naming the
transition and the state, the sentences every route shares
(:mod:`numeric.rate_signs`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from fractions import Fraction
from typing import Any

import numpy as np

from mfstein.ground import signals
from mfstein.ground.errors import ParameterError
from mfstein.ground.jit import numba
from numeric.exact.prefetch import prefetch
from numeric.exact.space import (  # noqa: F401  (the lattice's names, kept here as before)
    GUARD,
    KIND_CODES,
    Lattice,
    Reachable,
    TooManyStates,
    make_lattice,
    round_to_lattice,
    to_fraction,
)

#: Relative size below which a nonzero float64 intensity is recomputed exactly.
AMBIGUOUS = 1e-9

#: Rational-arithmetic rate functions by model key (lambdified once per process).
_LAMBDIFIED: dict[Any, Any] = {}


class ExactRates:
    """The model's intensities evaluated exactly at lattice points ``n / N``.

    Parameters
    ----------
    model:
        A :class:`derive.model.Model`.
    params:
        Parameter name -> value (as the caller gave them).
    """

    def __init__(self, model: Any, params: Mapping[str, Any]) -> None:
        import math

        import sympy as sp
        from sympy.printing.pycode import PythonCodePrinter

        from numeric.params import parameter_names

        class _FractionPrinter(PythonCodePrinter):
            def _print_Rational(self, e: sp.Rational) -> str:
                return f"Fraction({int(e.p)}, {int(e.q)})"

            def _print_Half(self, e: sp.Rational) -> str:
                return "Fraction(1, 2)"

            def _print_Float(self, e: sp.Float) -> str:
                return f"Fraction({str(e)!r})"

        self.model = model
        names = parameter_names(model)
        self.fractions = [to_fraction(n, params[n]) for n in names]
        self.params = [params[n] for n in names]
        self._p60: list[Any] | None = None  # the values at 60 digits (:meth:`_mpmath`)
        exprs = [t.rate for t in model.transitions]
        self._fn = None
        if all(f is not None for f in self.fractions):
            if model.key not in _LAMBDIFIED:
                try:
                    _LAMBDIFIED[model.key] = sp.lambdify(
                        [list(model.states), list(model.params)],
                        exprs,
                        # the printer writes math.exp(...): the module itself is a name
                        modules=[{"Fraction": Fraction, "math": math}, "math"],
                        printer=_FractionPrinter,
                        # the model's names never meet ``Fraction`` or ``math``
                        dummify=True,
                    )
                except Exception:  # exotic expressions: the mpmath route below
                    _LAMBDIFIED[model.key] = None
            self._fn = _LAMBDIFIED[model.key]

    def __call__(self, n: Sequence[int], N: int) -> list[float]:
        """Exact intensities at ``n / N``, rounded to float64 (exact zeros stay zero).

        Raises
        ------
        ParameterError
            If an intensity is negative or undefined there.
        """
        from numeric.rate_signs import negative_rate, not_finite, state_text, unevaluable

        where = f"the lattice state N s = ({', '.join(str(int(x)) for x in n)}) at N = {N}"
        values = self._rational(n, N)
        if values is None:
            values = self._mpmath(n, N)
        state = state_text(self.model, [Fraction(int(x), N) for x in n])
        if values is None:
            raise unevaluable(self.model, where, state)
        out = []
        for t, v in enumerate(values):
            if v is None:
                raise not_finite(self.model, t, where, state)
            if v < 0:  # exact, or zero within 10^-40 of the state's largest rate
                raise negative_rate(self.model, t, v, where, state)
            out.append(float(v))
        return out

    def _rational(self, n: Sequence[int], N: int) -> list[Any] | None:
        if self._fn is None:
            return None
        s = [Fraction(int(x), N) for x in n]
        try:
            vals = self._fn(s, self.fractions)
        except (TypeError, ValueError, OverflowError, ZeroDivisionError):
            return None  # the mpmath route evaluates it, or says it cannot
        out = []
        for v in vals:
            if isinstance(v, int | Fraction) and not isinstance(v, bool):
                out.append(Fraction(v))
            else:
                return None  # a transcendental function: not rational
        return out

    def _mpmath(self, n: Sequence[int], N: int) -> list[Any] | None:
        import mpmath

        from numeric.precision import to_mpf

        kern = self.model.kernels("mpmath")
        with mpmath.workdps(60):
            s = [mpmath.mpf(int(x)) / N for x in n]
            if self._p60 is None:  # the parameters read at 60 digits once, not per state
                names = [str(q) for q in self.model.params]
                self._p60 = [to_mpf(q, v) for q, v in zip(names, self.params, strict=True)]
            p = self._p60
            try:
                vals = list(kern.rates(s, p))
            except (ZeroDivisionError, ValueError, OverflowError):
                return None
            scale = max([abs(v) for v in vals if mpmath.isfinite(v)] + [mpmath.mpf(0)])
            out: list[Any] = []
            for v in vals:
                if not mpmath.isfinite(v):
                    out.append(None)
                elif abs(v) <= scale * mpmath.mpf(10) ** -40:
                    out.append(0)
                else:
                    out.append(v)
        return out


# compiled breadth-first search with on-the-fly assembly
# ---------------------------------------------------------------------------
#: Status codes of :func:`explore`.
DONE, AMBIG, FULL, OUTSIDE, UNBOUNDED, PAUSED, RATES = range(7)
#: States :func:`explore` processes per call before it returns :data:`PAUSED`: compiled
#: code does not see Ctrl-C, so the search hands control back to Python this often
#: (a few milliseconds each) and an interruption takes effect at once.
EXPLORE_CHUNK = 1 << 16
#: States :func:`explore` looks ahead: it asks for the table slots of that state's jumps
#: (:func:`numeric.exact.prefetch.prefetch`) while it handles the current one.
AHEAD = 4
#: Rows the search allocates at least (more when the lattice's bound is exact and larger).
FIRST_ROWS = 1 << 21


@numba.njit(inline="always", cache=True)
def _hash(states, i, b, mask, jumps=None, t=0):
    """The table slot of ``states[i]`` (FNV-1a of its coordinates), or of
    ``states[i] + jumps[t]`` when ``jumps`` is given."""
    h = np.uint64(1469598103934665603)
    for k in range(b):
        v = states[i, k] if jumps is None else states[i, k] + jumps[t, k]
        h = (h ^ np.uint64(v & 0xFFFFFFFFFFFF)) * np.uint64(1099511628211)
    h ^= h >> np.uint64(29)
    return np.int64(h & np.uint64(mask))


@numba.njit(cache=True)
def _find_or_insert(table, states, tail, b, mask):
    """Index of the vector ``states[tail]`` in ``table``; inserts it (returning
    ``tail``) when new.  ``table`` holds state index + 1 (0 = empty)."""
    h = _hash(states, tail, b, mask)
    while True:
        e = table[h]
        if e == 0:
            table[h] = tail + 1
            return tail
        j = e - 1
        same = True
        for k in range(b):
            if states[j, k] != states[tail, k]:
                same = False
                break
        if same:
            return j
        h = (h + 1) & mask


@numba.njit(cache=True)
def rehash(states, count, capacity):
    """A fresh hash table of ``capacity`` slots (a power of two) for ``states[:count]``
    (32-bit: a state's index + 1; the search stops far below ``2^31`` states)."""
    table = np.zeros(capacity, dtype=np.int32)
    b = states.shape[1]
    mask = capacity - 1
    for i in range(count):
        h = _hash(states, i, b, mask)
        while table[h] != 0:
            h = (h + 1) & mask
        table[h] = i + 1
    return table


@numba.njit(cache=True)
def _inside(states, row, kind, upper, total):
    b = states.shape[1]
    acc = 0
    for k in range(b):
        v = states[row, k]
        if v < 0:
            return 0
        if v > upper:
            return 2  # above the upper bound: blocked by a truncation, or unbounded
        if kind == 0 and k > 0 and v > states[row, k - 1]:
            return 0
        acc += v
    if kind == 1 and acc > total:
        return 0
    return 1


@numba.njit(cache=True)
def explore(
    N,
    jumps,
    states,
    R,
    done,
    table,
    target,
    ctr,
    kind,
    upper,
    total,
    trunc,
    budget,
):
    """Breadth-first search from ``states[0]`` over jumps of positive intensity.

    Processes states ``ctr[0] .. ctr[1] - 1`` (head, tail) whose intensities
    ``R[i]`` are evaluated (those below ``ctr[3]``; the model's own loop,
    :mod:`numeric.exact.rate_blocks`, fills the rest when asked by
    :data:`RATES`), writing the index ``j`` of the state each jump leads to
    into ``target[i, t]`` (``-1`` where there is no jump; the generator's entry
    is ``N R[i, t]``, :mod:`numeric.exact.assembly`; ``ctr[2]`` counts them).
    Returns ``(status, i, t)``: :data:`DONE`; :data:`RATES` when the next state's
    intensities are not evaluated yet (the caller evaluates states
    ``ctr[3] .. ctr[1] - 1``, sets ``ctr[3] = ctr[1]`` and calls again);
    :data:`AMBIG` when an intensity of state ``i`` needs exact evaluation (the
    caller fills ``R[i]``, sets ``done[i]`` and calls again); :data:`FULL` when
    the arrays must grow; :data:`OUTSIDE` / :data:`UNBOUNDED` when transition
    ``t`` of state ``i`` leaves the state space / exceeds the guard;
    :data:`PAUSED` after ``budget`` states since the last pause (``ctr[4]``
    counts them; the caller calls again: the search goes on where it stopped).
    The model is not an argument, so this function is compiled once and cached.
    """
    b = states.shape[1]
    nt = jumps.shape[0]
    cap = states.shape[0]
    mask = table.shape[0] - 1
    head, tail, nnz, rated, since = ctr[0], ctr[1], ctr[2], ctr[3], ctr[4]
    status, bad_i, bad_t = 0, -1, -1
    while head < tail:
        i = head
        if since >= budget:
            status = 5
            since = 0
            break
        if i >= rated:
            status = 6
            break
        if tail + nt > cap or 2 * (tail + nt) > table.shape[0]:
            status = 2
            break
        ahead = i + AHEAD
        if ahead < rated and ahead < tail:
            for t in range(nt):
                if R[ahead, t] > 0.0:
                    prefetch(table, _hash(states, ahead, b, mask, jumps, t))
        if done[i] == 0:
            m = 0.0
            for t in range(nt):
                a = abs(R[i, t])
                if a > m:
                    m = a
            amb = -1
            for t in range(nt):
                r = R[i, t]
                if r != 0.0 and (not r > 0.0 or r <= 1e-9 * m):
                    amb = t
                    break
            if amb >= 0:
                status, bad_i, bad_t = 1, i, amb
                break
            done[i] = 1
        stop = False
        for t in range(nt):
            target[i, t] = -1
            r = R[i, t]
            if r <= 0.0:
                continue
            zero = True
            for k in range(b):
                states[tail, k] = states[i, k] + jumps[t, k]
                if jumps[t, k] != 0:
                    zero = False
            if zero:
                R[i, t] = 0.0  # a self-loop does not move the chain
                continue
            where = _inside(states, tail, kind, upper, total)
            if where == 2 and trunc:
                R[i, t] = 0.0  # blocked by the truncation
                continue
            if where != 1:
                # above the guard of an untruncated orthant: evidence of an unbounded
                # state space; anything else leaves the declared state space
                status, bad_i, bad_t = (4 if where == 2 and kind == 3 else 3), i, t
                stop = True
                break
            j = _find_or_insert(table, states, tail, b, mask)
            if j == tail:
                done[tail] = 0
                tail += 1
            target[i, t] = j
            nnz += 1
        if stop:
            # undo this state's partial entries so that a retry is clean
            for t in range(nt):
                if target[i, t] >= 0:
                    target[i, t] = -1
                    nnz -= 1
            break
        head += 1
        since += 1
    ctr[0], ctr[1], ctr[2], ctr[3], ctr[4] = head, tail, nnz, rated, since
    return status, bad_i, bad_t


@dataclass
class _Frontier:
    """The breadth-first search's growable arrays, :func:`explore`'s arguments from
    ``states`` to ``ctr``: the states found, their intensities and whether those are
    evaluated, the hash table of the states, the targets of the jumps found and the
    counters ``(head, tail, nnz, evaluated, since the last pause)``."""

    states: np.ndarray
    R: np.ndarray
    done: np.ndarray
    table: np.ndarray
    target: np.ndarray
    ctr: np.ndarray

    @classmethod
    def allocate(cls, start: np.ndarray, cap: int, nt: int) -> _Frontier:
        """Room for ``cap`` states of ``nt`` transitions each, the first one ``start``."""
        states = np.zeros((cap, start.shape[0]), dtype=np.int64)
        states[0] = start
        return cls(
            states=states,
            R=np.zeros((cap, nt)),
            done=np.zeros(cap, dtype=np.uint8),
            table=rehash(states, 1, _pow2(2 * cap)),
            # written row by row as the search reaches each state: pages never
            # reached are never touched
            target=np.empty((cap, nt), dtype=np.int32),
            ctr=np.array([0, 1, 0, 0, 0], dtype=np.int64),
        )

    def rate(self, model: Any, N: int, p: np.ndarray, exact: ExactRates) -> int:
        """Evaluate the intensities of the states found but not evaluated yet (by the
        model's generated loop, :mod:`numeric.exact.rate_blocks`; exactly where float64
        raised); returns how many states needed the exact evaluation."""
        from numeric.exact.rate_blocks import rate_module

        block = rate_module(model).rates_block
        lo, hi, n_exact = int(self.ctr[3]), int(self.ctr[1]), 0
        while lo < hi:
            bad = int(block(self.states, lo, hi, N, p, self.R))
            if bad < 0:
                break
            self.R[bad] = exact(self.states[bad], N)  # a division by zero: exactly
            self.done[bad] = 1
            n_exact += 1
            lo = bad + 1
        self.ctr[3] = hi
        return n_exact

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The arrays in :func:`explore`'s order (the order of the fields)."""
        return tuple(getattr(self, f.name) for f in fields(self))

    def grow(self, cap: int, nt: int) -> None:
        """Room for ``cap`` states, the states found kept (and hashed again)."""
        self.states = _grow(self.states, cap)
        self.R = _grow(self.R, cap)
        self.done = _grow(self.done, cap)
        self.target = _grow(self.target, cap)
        self.table = None  # type: ignore[assignment]  # the old table goes first
        self.table = rehash(self.states, int(self.ctr[1]), _pow2(2 * cap))


def reachable(
    kern: Any,
    exact: ExactRates,
    lattice: Lattice,
    p: np.ndarray,
    start: np.ndarray,
    max_states: int,
) -> Reachable:
    """States reachable from ``start`` (see :func:`explore`), at most ``max_states``.

    Raises
    ------
    ParameterError
        More than ``max_states`` states; a positive-rate jump leaving the state
        space; an unbounded orthant without a truncation; a negative intensity.
    """
    b = kern.n
    jumps = np.ascontiguousarray(kern.jumps, dtype=np.int64)
    nt = jumps.shape[0]
    N = lattice.N
    # sized before allocation: the lattice's own bound on the number of states
    # (exact for the monotone and simplex kinds: then allocated at once, since pages
    # never reached are never touched), capped by the memory limit; with the room of
    # one state's jumps beyond it that the search checks for (without it the last
    # states of a full lattice copied every array once more: 0.8 s at 5.6e6 states)
    most = lattice.count_bound(b)
    first = most + 2 * nt if lattice.kind in ("monotone", "simplex") else FIRST_ROWS
    cap = int(min(max(64, most + 2 * nt), max_states + 2 * nt, max(first, FIRST_ROWS)))
    work = _Frontier.allocate(np.asarray(start), cap, nt)
    kind = KIND_CODES[lattice.kind]
    n_exact = 0
    while True:
        status, i, t = explore(
            N,
            jumps,
            *work.arrays(),
            kind,
            lattice.upper,
            lattice.total,
            lattice.truncated,
            EXPLORE_CHUNK,
        )
        if status == PAUSED:
            signals.check()  # a Ctrl-C a library lost is raised again here
            continue
        if status == DONE:
            break
        if status == RATES:
            signals.check()  # between layers of the search too
            n_exact += work.rate(exact.model, N, p, exact)
            continue
        if status == AMBIG:
            work.R[i] = exact(work.states[i], N)
            work.done[i] = 1
            n_exact += 1
            continue
        if status == FULL:
            if work.ctr[1] > max_states:
                raise TooManyStates(
                    f"the state space reachable from {tuple(int(x) for x in start)} at N = {N} "
                    f"has more than {max_states:,} states (the lattice bound is "
                    f"{lattice.count_bound(b):,}), above the memory limit; reduce N or raise the "
                    "memory limit."
                )
            new = int(min(2 * cap, max_states + 2 * nt))
            if new <= cap:
                new = cap + 2 * nt
            work.grow(new, nt)
            cap = new
            continue
        state = tuple(int(x) for x in work.states[i])
        tr = kern.jumps[t].tolist()
        if status == UNBOUNDED:
            raise ParameterError(
                f"model has the unbounded state space s_i >= 0 and its chain at N = {N} "
                f"climbs above s_i = {GUARD} (transition {tr} from state {state}); give a "
                "truncation (truncation=T keeps n_i <= N T)."
            )
        raise ParameterError(
            f"transition {tr} has a positive rate at state {state} but leads out of the "
            f"declared state space {lattice.describe(b)}; the model's transitions and its "
            "state space disagree."
        )
    S = int(work.ctr[1])
    work.table = None  # type: ignore[assignment]  # not needed any more: memory back
    return Reachable(
        states=_shrink(work.states, S),
        rates=_shrink(work.R, S),
        target=_shrink(work.target, S),
        exact_states=n_exact,
    )


def _shrink(a: np.ndarray, rows: int) -> np.ndarray:
    """The first ``rows`` rows of ``a`` (a view, contiguous: no copy at the peak)."""
    return a[:rows]


def _pow2(n: int) -> int:
    return 1 << max(4, int(n - 1).bit_length())


def _grow(a: np.ndarray, rows: int) -> np.ndarray:
    out = np.zeros((rows, *a.shape[1:]), dtype=a.dtype)
    out[: a.shape[0]] = a
    return out
