"""The exact solver's route without compiled code, for small chains (issue 34).

The compiled route (:func:`numeric.exact.lattice.explore`,
:mod:`numeric.exact.rate_blocks`, :mod:`numeric.exact.assembly`) is loaded from
numba's cache in a new process, and that load alone (numba's target context and
seven functions) costs about 0.3 s of one core: some 20 times a direct sparse
solve of a chain of a few thousand states.  For a chain whose lattice bound is
at most :data:`SMALL_STATES` this module does the same work in NumPy and SciPy:

* **rates**: the model's generated kernel ``rates_into`` is pure arithmetic, so
  its Python source (``py_func``, not the compiled dispatcher) evaluates a whole
  layer at once when ``s[k]`` is the column of coordinate ``k`` and ``math`` is
  read as NumPy (:func:`vector_rates`); a kernel that does not vectorise (a
  branch, a function NumPy lacks) leaves the chain to the compiled route;
* **search**: breadth-first, one layer of the search at a time
  (:func:`reachable`), states keyed by their mixed-radix code in a sorted
  array; the states come out in the compiled search's order (the order in
  which a queue meets them), the same intensities are recomputed exactly (the
  same rule: negative, NaN, infinite or nonzero below ``1e-9`` of the state's
  largest), the same jumps are blocked by a truncation or refused;
* **generator**: ``Q^T`` in CSR form from the targets by :mod:`scipy.sparse`
  (:func:`transposed_generator`); the closed classes and the pinned state by
  NumPy (:func:`all_reach`, :func:`leaving`, :func:`nearest`, :func:`quadratic_forms`).

A first call in a new process does not import :mod:`scipy.sparse.csgraph` (some
2.5 ms of CPU, a fifth of a direct solve at 5,151 states) for a chain of at most
:data:`PYTHON_BFS_JUMPS` jumps: the breadth-first order is a queue in Python
(:func:`queue_order`) and an irreducible chain is recognised by NumPy
(:func:`all_reach`); the strong components are computed only for a chain that
:func:`all_reach` does not show irreducible.

Both routes give the same chain (tests/numeric/exact/test_small_chains.py
compares the laws to 1e-12 on several models); which one runs is decided by
:func:`numeric.exact.general.Chain` from the lattice bound before any state is
enumerated.
"""

from __future__ import annotations

import math
import sys
import types
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import scipy.sparse as sps

from mfstein.ground import signals
from mfstein.ground.errors import ParameterError
from numeric.exact.space import GUARD, KIND_CODES, Reachable, TooManyStates

#: Chains whose lattice bound is at most this many states take this route.  Measured
#: on SIR (one process, CPU): the NumPy search and assembly take 0.03 s at 5,151
#: states, 0.16 s at 45,451 and 0.27 s at 180,901, the compiled route 0.003 s, 0.02 s
#: and 0.09 s once loaded, and its load costs 0.25-0.35 s in a new process: the two
#: meet near 2e5 states.
SMALL_STATES = 200_000
#: After this many chains searched in NumPy, a process loads the compiled route (a
#: sweep of small chains pays its load once, then runs several times faster).
COMPILED_AFTER = 10
#: The search's table has one 32-bit slot per point of the box of the free
#: coordinates (pages never touched are never allocated); above, compiled route.
TABLE_SLOTS = 1 << 26
#: A lattice whose box of free coordinates has at most this many points times jumps
#: times coordinates (the candidates' int64 entries, 8 bytes each), and at most
#: :data:`ONE_PASS_SPARE` times its bound on the states, is searched in one pass
#: (:func:`one_pass`: every point's rates at once); others one layer at a time.
ONE_PASS_POINTS = 1 << 23
ONE_PASS_SPARE = 8
#: A jump graph of at most this many jumps is ordered by a queue in Python
#: (:func:`queue_order`: some 2 ms of CPU at 15,000 jumps in a new process) while
#: :mod:`scipy.sparse.csgraph` is not loaded (its import, the graph it reads and its
#: search cost a new process some 3.3 ms there); larger ones, or once it is loaded, by
#: :func:`scipy.sparse.csgraph.breadth_first_order`.
PYTHON_BFS_JUMPS = 25_000
#: Rounds of :func:`all_reach` before it leaves the verdict to the strong components.
REACH_ROUNDS = 24

#: ``math`` functions whose NumPy namesakes differ in name.
_RENAMED = {"pow": "power", "fabs": "abs", "atan2": "arctan2", "asin": "arcsin",
            "acos": "arccos", "atan": "arctan", "asinh": "arcsinh", "acosh": "arccosh",
            "atanh": "arctanh"}  # fmt: skip


class _ArrayMath(types.ModuleType):
    """``math`` as the vectorised kernel reads it: NumPy's function of the same name
    (or its namesake, :data:`_RENAMED`), else ``math``'s own (which refuses arrays)."""

    def __getattr__(self, name: str) -> Any:
        value = getattr(np, _RENAMED.get(name, name), None)
        return value if value is not None else getattr(math, name)


_SEARCHES = [0]


def prefer_compiled(model: Any, bound: int) -> bool:
    """Whether a chain of at most ``bound`` states takes the compiled route: above
    :data:`SMALL_STATES`, when this process has loaded the model's compiled rate
    loop already (:func:`numeric.exact.rate_blocks.is_loaded`), or after
    :data:`COMPILED_AFTER` searches in NumPy (a sweep), since the compiled search,
    once loaded, is several times faster than NumPy's.  (No rate loop is loaded
    before :mod:`numeric.exact.rate_blocks` is imported: a first call does not
    import it to ask.)"""
    if bound > SMALL_STATES or _SEARCHES[0] >= COMPILED_AFTER:
        return True
    blocks = sys.modules.get("numeric.exact.rate_blocks")
    return blocks is not None and blocks.is_loaded(model)


def _as_python(globals_: dict[str, Any]) -> dict[str, Any]:
    """A copy of a generated module's globals with every function of the module (its
    Python source, of a compiled one) bound to the copy, and ``math`` replaced by
    :class:`_ArrayMath`."""
    out = dict(globals_)
    out["math"] = _ArrayMath("math")
    for name, value in globals_.items():
        py = getattr(value, "py_func", value)
        if isinstance(py, types.FunctionType) and py.__globals__ is globals_:
            out[name] = types.FunctionType(py.__code__, out, py.__name__, py.__defaults__)
    return out


def _python_rates_into(kern: Any) -> Any:
    """The Python source of the kernel ``rates_into``: from the generated module run as
    plain Python (:func:`mfstein.ground.generated.load_plain`, no numba dispatcher made),
    else the compiled function's ``py_func``; ``None`` when neither is there."""
    from pathlib import Path

    from mfstein.ground.generated import load_plain

    path = Path(kern.path)
    plain = load_plain(path.stem, path)
    if plain is not None and isinstance(getattr(plain, "rates_into", None), types.FunctionType):
        return plain.rates_into
    return getattr(getattr(kern.module, "rates_into", None), "py_func", None)


_VECTOR: dict[Any, Any] = {}


def vector_rates(model: Any) -> Callable[[np.ndarray, float, np.ndarray], np.ndarray] | None:
    """``rates(states, N, p)``: the ``(M, n_transitions)`` intensities
    ``beta_t(states[i] / N)`` of a block of lattice points, from the Python source of
    the model's kernel ``rates_into`` (module docstring); ``None`` when that source
    does not evaluate a block (then the compiled route runs).  Entries where float64
    fails (a division by zero) are ``inf`` or ``NaN``, for the exact evaluation."""
    kern = model.kernels("numba")
    key = (model.key, str(kern.path))
    if key in _VECTOR:
        return _VECTOR[key]
    py = _python_rates_into(kern)
    fn = None
    if isinstance(py, types.FunctionType):
        g = _as_python(py.__globals__)
        fn = g.get(py.__name__)
        scalar = py  # the same source with the scalar ``math``: the cross-check
    nt = int(kern.jumps.shape[0])

    def rates(states: np.ndarray, N: float, p: np.ndarray) -> np.ndarray:
        out = np.zeros((nt, states.shape[0]))
        with np.errstate(all="ignore"):
            fn(np.ascontiguousarray(states.T / N), p, out)
        return out.T.copy()

    if fn is not None and _vectorises(rates, scalar, kern, nt):
        _VECTOR[key] = rates
        return rates
    _VECTOR[key] = None
    return None


def _vectorises(rates: Callable, scalar: Callable, kern: Any, nt: int) -> bool:
    """Whether ``rates`` evaluates a block of points as the scalar source does one at
    a time (four points of the box ``{0, ..., 7}^b`` over ``N = 8``, ``n_k = (3 i + 5 k)
    mod 8`` for point ``i``: zeros and other values in every coordinate, fixed without a
    random generator, whose seeding cost a first call 0.2 ms; parameters ``0.3, 0.7,
    ...``); the points where the scalar source raises are not compared."""
    b = kern.n
    i, k = np.indices((4, b))
    pts = (3 * i + 5 * k) % 8
    p = 0.3 + 0.4 * (np.arange(len(kern.params)) % 3)
    try:
        block = rates(pts, 8.0, p)
    except Exception:  # a branch on an array, a function NumPy lacks: not vectorisable
        return False
    if block.shape != (4, nt):
        return False
    one = np.zeros((4, nt))
    ran = np.zeros(4, dtype=bool)
    for i in range(4):
        try:
            with np.errstate(all="ignore"):
                scalar(pts[i] / 8.0, p, one[i])
        except Exception:
            continue
        ran[i] = True
    return bool(np.allclose(block[ran], one[ran], rtol=1e-13, atol=0.0, equal_nan=True))


def _status(cand: np.ndarray, kind: int, upper: int, total: int) -> np.ndarray:
    """:func:`numeric.exact.lattice._inside` of every candidate ``(..., b)``: 1 inside,
    2 above the upper bound (at the first offending coordinate), 0 outside.  The
    coordinates are read last to first, so that the first offending one decides (one
    pass of 2-D operations per coordinate: a third of the time of ``argmax`` over a
    short last axis)."""
    status = np.ones(cand.shape[:-1], dtype=np.int8)
    total_of = None
    for k in range(cand.shape[-1] - 1, -1, -1):
        c = cand[..., k]
        high = c > upper
        off = high | (c < 0)
        if kind == 0 and k:  # monotone: n_k <= n_{k-1}
            off |= c > cand[..., k - 1]
        status = np.where(off, np.where(high, np.int8(2), np.int8(0)), status)
        if kind == 1:
            total_of = c.copy() if total_of is None else total_of + c
    if kind == 1:
        status[(status == 1) & (total_of > total)] = 0
    return status


def _needs_exact(R: np.ndarray) -> np.ndarray:
    """Which rows of ``R`` the exact evaluation recomputes (:func:`_fix_rates`' rule).
    Column by column (a reduction along a row of a few transitions costs NumPy some 6
    times more: 0.3 against 0.05 ms at 5,151 states)."""
    m = np.zeros(R.shape[0])
    for c in R.T:  # NaN in a row makes m NaN: the row is exact
        m = np.maximum(m, np.abs(c))
    limit = 1e-9 * m
    need = np.zeros(R.shape[0], dtype=bool)
    for c in R.T:  # NaN, -x, inf (against m = inf) are not clear
        need |= ~((c == 0.0) | (c > limit))
    return need


def _fix_rates(R: np.ndarray, states: np.ndarray, N: int, exact: Any) -> int:
    """Recompute exactly (``exact``, :class:`numeric.exact.lattice.ExactRates`) the rows
    of ``R`` the compiled search would: a NaN or infinite entry (float64 failed), or a
    nonzero entry that is negative or at most ``1e-9`` of the row's largest; returns
    how many rows."""
    rows = np.flatnonzero(_needs_exact(R))
    for i in rows:
        R[i] = exact(states[i], N)
    return int(rows.shape[0])


def _refuse(
    lattice: Any, jumps: np.ndarray, state: np.ndarray, t: int, unbounded: bool
) -> ParameterError:
    """The compiled search's sentence for a positive-rate jump off the lattice."""
    where, tr, b = tuple(int(x) for x in state), jumps[t].tolist(), state.shape[0]
    if unbounded:
        return ParameterError(
            f"model has the unbounded state space s_i >= 0 and its chain at N = {lattice.N} "
            f"climbs above s_i = {GUARD} (transition {tr} from state {where}); give a "
            "truncation (truncation=T keeps n_i <= N T)."
        )
    return ParameterError(
        f"transition {tr} has a positive rate at state {where} but leads out of the "
        f"declared state space {lattice.describe(b)}; the model's transitions and its "
        "state space disagree."
    )


def _layer(
    frontier: np.ndarray, R: np.ndarray, jumps: np.ndarray, lattice: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The candidates ``(M, nt, b)`` of a block of states, which of them are jumps of
    the chain (positive rate, inside) and which are refused (a positive rate off the
    lattice, :func:`_first_refusal`); blocked and self-loop rates are set to zero in
    ``R``."""
    kind = KIND_CODES[lattice.kind]
    cand = frontier[:, None, :] + jumps[None, :, :]
    R[:, ~jumps.any(axis=1)] = 0.0  # a self-loop does not move the chain
    status = _status(cand, kind, lattice.upper, lattice.total)
    positive = R > 0.0
    if lattice.truncated:
        R[positive & (status == 2)] = 0.0  # blocked by the truncation
        positive &= status != 2
    return cand, positive & (status == 1), positive & (status != 1)


def _first_refusal(
    bad: np.ndarray, frontier: np.ndarray, cand: np.ndarray, jumps: np.ndarray, lattice: Any
) -> ParameterError:
    """The refusal (:func:`_refuse`) of the first refused jump, in queue order, of a
    block of states."""
    i, t = np.argwhere(bad)[0]
    kind = KIND_CODES[lattice.kind]
    high = _status(cand[i : i + 1, t : t + 1], kind, lattice.upper, lattice.total)[0, 0] == 2
    unbounded = bool(high) and lattice.kind == "orthant"
    return _refuse(lattice, jumps, frontier[i], int(t), unbounded)


def _too_many(start: np.ndarray, max_states: int, lattice: Any) -> TooManyStates:
    """The search's sentence for more than ``max_states`` reachable states."""
    return TooManyStates(
        f"the state space reachable from {tuple(int(x) for x in start)} at N = {lattice.N} "
        f"has more than {max_states:,} states (the lattice bound is "
        f"{lattice.count_bound(start.shape[0]):,}), above the memory limit; reduce N or "
        "raise the memory limit."
    )


def lattice_points(lattice: Any, b: int, nt: int) -> np.ndarray | None:
    """Every point of ``lattice`` with its laws' values ``lattice.values`` (rows in the
    mixed-radix order of the free coordinates; each law's pivot solved from it, as
    :func:`numeric.exact.space.round_to_lattice` does), ``None`` when the box of the
    free coordinates is too large for one pass (:data:`ONE_PASS_POINTS`, ``nt``
    transitions)."""
    free, base = list(lattice.free), lattice.upper + 1
    box = base ** len(free)
    if box * nt * b > ONE_PASS_POINTS or box > ONE_PASS_SPARE * lattice.count_bound(b):
        return None
    pts = np.zeros((box, b), dtype=np.int64)
    code = np.arange(box, dtype=np.int64)
    for k, j in enumerate(free):  # the digits of the code, the last free coordinate fastest
        pts[:, j] = code // base ** (len(free) - 1 - k) % base
    keep = np.ones(box, dtype=bool)
    for row, value in zip(lattice.laws, lattice.values, strict=True):
        d = next(j for j, c in enumerate(row) if c)
        scale = math.lcm(*(c.denominator for c in (*row, value)))  # ints or Fractions
        coef = [int(c * scale) for c in row]
        rest = np.full(box, int(value * scale), dtype=np.int64)
        for j in free:  # integers: the same sum in any order; a unit weight adds no product
            if coef[j]:
                rest -= pts[:, j] if coef[j] == 1 else coef[j] * pts[:, j]
        if abs(coef[d]) != 1:  # a unit pivot divides every integer
            keep &= rest % coef[d] == 0
        pts[:, d] = rest if coef[d] == 1 else rest // coef[d]
    inside = _status(pts[:, None, :], KIND_CODES[lattice.kind], lattice.upper, lattice.total)
    return pts[keep & (inside[:, 0] == 1)]


def one_pass(
    rates: Callable, jumps: np.ndarray, lattice: Any, p: np.ndarray, start: np.ndarray,
    max_states: int,
) -> Any:  # fmt: skip
    """The reachable states as :func:`reachable` finds them, from one evaluation of the
    rates at every point of the lattice (:func:`lattice_points`) and the breadth-first
    order of the jump graph (:func:`scipy.sparse.csgraph.breadth_first_order`: a queue
    that meets each state's targets in the order of the transitions, as the compiled
    search does); ``None`` when the lattice is too large, or a reached state needs an
    exact rate or has a jump refused, or the states are too many (the layered search
    then runs, and refuses in its words)."""
    pts = lattice_points(lattice, start.shape[0], jumps.shape[0])
    if pts is None:
        return None
    free, base = list(lattice.free), lattice.upper + 1
    weights = base ** np.arange(len(free) - 1, -1, -1, dtype=np.int64)
    index = np.full(base ** len(free), -1, dtype=np.int64)
    codes_of = pts[:, free] @ weights
    index[codes_of] = np.arange(pts.shape[0])
    R = rates(pts, float(lattice.N), p)
    _, jump, bad = _layer(pts, R, jumps, lattice)
    signals.check()
    # the code of ``pts[i] + jumps[t]`` is code(pts[i]) + code(jumps[t]) (the code is
    # linear), read where the jump stays on the lattice
    codes = codes_of[:, None] + (jumps[:, free] @ weights)[None, :]
    to = np.where(jump, index[np.where(jump, codes, 0)], -1)
    head = int(index[start[free] @ weights])
    order = _breadth_first(to, jump, head)
    R = R[order]
    if order.shape[0] > max_states or (bad.any() and bad[order].any()) or _needs_exact(R).any():
        return None
    renumber = np.full(pts.shape[0], -1, dtype=np.int32)
    renumber[order] = np.arange(order.shape[0], dtype=np.int32)
    to = to[order]
    target = np.where(to >= 0, renumber[to], -1).astype(np.int32)
    return Reachable(states=pts[order], rates=R, target=target, exact_states=0)


def _breadth_first(to: np.ndarray, jump: np.ndarray, head: int) -> np.ndarray:
    """The breadth-first order from ``head`` of the graph whose row ``i`` of ``to``
    holds the targets of point ``i`` (``-1``: none; ``jump`` marks the others), each
    row's in the order of the transitions: :func:`queue_order` for a small graph while
    :mod:`scipy.sparse.csgraph` is not loaded (:data:`PYTHON_BFS_JUMPS`), else
    :func:`scipy.sparse.csgraph.breadth_first_order` of the same graph."""
    jumps = int(np.count_nonzero(jump))
    if jumps <= PYTHON_BFS_JUMPS and not _graph_routines_loaded():
        return np.array(queue_order(to, head), dtype=np.int32)
    from scipy.sparse.csgraph import breadth_first_order

    indptr = np.concatenate([[0], np.cumsum(jump.sum(axis=1))])
    graph = sps.csr_matrix((np.ones(jumps), to[jump], indptr), shape=(to.shape[0],) * 2)
    return breadth_first_order(graph, head, directed=True, return_predecessors=False)


def _graph_routines_loaded() -> bool:
    """Whether this process has imported :mod:`scipy.sparse.csgraph` already."""
    return "scipy.sparse.csgraph" in sys.modules


def queue_order(to: np.ndarray, head: int) -> list[int]:
    """The order in which a queue started at ``head`` meets the points of the graph whose
    row ``to[i]`` holds the targets of point ``i`` (``-1``: none), each row in its order:
    the order :func:`scipy.sparse.csgraph.breadth_first_order` gives of the same graph,
    and the compiled search's (:func:`numeric.exact.lattice.explore`).  The targets are
    read as one Python list per transition (some 2 ms at 15,000 jumps in a new process,
    against 3.3 ms by one list per point)."""
    columns = [c.tolist() for c in np.ascontiguousarray(to.T)]
    seen = bytearray(to.shape[0] + 1)
    seen[-1] = 1  # the target -1 (none) reads this sentinel: seen, never pushed
    seen[head] = 1
    order = [head]
    push = order.append
    for i in order:  # the list is the queue: it grows while it is read
        for c in columns:
            j = c[i]
            if not seen[j]:
                seen[j] = 1
                push(j)
    return order


def reachable(
    model: Any,
    exact: Any,
    lattice: Any,
    p: np.ndarray,
    start: np.ndarray,
    max_states: int,
) -> Any:
    """The states reachable from ``start`` (:class:`numeric.exact.lattice.Reachable`,
    as :func:`numeric.exact.lattice.reachable` finds them: same order, same targets),
    in one pass (:func:`one_pass`) or else one breadth-first layer at a time in NumPy;
    ``None`` when the model's kernel does
    not vectorise or the lattice's codes would not fit in int64 (the compiled route
    then runs).

    Raises
    ------
    ParameterError
        As the compiled search: too many states, a jump leaving the state space, a
        negative intensity.
    """
    rates = vector_rates(model)
    base, free = lattice.upper + 1, list(lattice.free)
    if rates is None or base ** len(free) > TABLE_SLOTS:
        return None
    jumps = np.ascontiguousarray(model.kernels("numba").jumps, dtype=np.int64)
    N = lattice.N
    _SEARCHES[0] += 1
    start = np.asarray(start, dtype=np.int64)
    found = one_pass(rates, jumps, lattice, p, start, max_states)
    if found is not None:
        return found
    # a state is fixed by its free coordinates (the laws give the others): their
    # mixed-radix code indexes a table of state index + 1 (0: not found yet)
    weights = base ** np.arange(len(free) - 1, -1, -1, dtype=np.int64)
    table = np.zeros(base ** len(free), dtype=np.int32)
    table[start[free] @ weights] = 1
    frontier, count, n_exact = start[None, :], 1, 0
    states, rate_rows, targets = [frontier], [], []
    while frontier.shape[0]:
        signals.check()  # between layers: Ctrl-C is seen at once
        R = rates(frontier, float(N), p)
        n_exact += _fix_rates(R, frontier, N, exact)
        cand, jump, bad = _layer(frontier, R, jumps, lattice)
        if bad.any():
            raise _first_refusal(bad, frontier, cand, jumps, lattice)
        moves = cand[jump]  # row-major: the order a queue meets them
        codes = moves[:, free] @ weights
        found = table[codes] - 1
        new = np.flatnonzero(found < 0)
        first = new[np.sort(np.unique(codes[new], return_index=True)[1])]
        table[codes[first]] = np.arange(count + 1, count + 1 + first.shape[0])
        found[new] = table[codes[new]] - 1
        target = np.full(R.shape, -1, dtype=np.int32)
        target[jump] = found
        rate_rows.append(R)
        targets.append(target)
        frontier = moves[first]
        count += first.shape[0]
        if count > max_states:
            raise _too_many(start, max_states, lattice)
        states.append(frontier)
    return Reachable(
        states=np.concatenate(states),
        rates=np.concatenate(rate_rows),
        target=np.concatenate(targets),
        exact_states=n_exact,
    )


def transposed_generator(target: np.ndarray, R: np.ndarray, N: int) -> sps.csr_matrix:
    """``Q^T`` as :func:`numeric.exact.assembly.transposed_generator` writes it
    (CSR, int32 columns ascending within rows, the diagonal ``-q_i`` in every row,
    two transitions between the same states summed), by :mod:`scipy.sparse`."""
    S = target.shape[0]
    jump = target >= 0
    NR = float(N) * R
    exit_rate = np.where(jump, NR, 0.0).sum(axis=1)
    src = np.broadcast_to(np.arange(S, dtype=np.int32)[:, None], target.shape)[jump]
    diag = np.arange(S, dtype=np.int32)
    rows = np.concatenate([target[jump], diag])
    cols = np.concatenate([src, diag])
    data = np.concatenate([NR[jump], -exit_rate])
    QT = sps.coo_matrix((data, (rows, cols)), shape=(S, S)).tocsr()
    QT.sum_duplicates()  # sorts the columns of each row, too
    return QT


def leaving(indptr: np.ndarray, indices: np.ndarray, labels: np.ndarray, n: int) -> np.ndarray:
    """``out[c]``: whether a jump leaves component ``c`` (as
    :func:`numeric.exact.assembly.leaving`, for a chain of :data:`SMALL_STATES` states)."""
    rows = np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr))
    cross = labels[indices] != labels[rows]
    out = np.zeros(n, dtype=bool)
    out[labels[indices[cross]]] = True
    return out


def all_reach(indptr: np.ndarray, indices: np.ndarray, root: int) -> bool:
    """Whether every state is shown to reach ``root`` (``0``, the search's start), in
    NumPy: ``True`` as :func:`numeric.exact.assembly.all_reach` says it (row ``j`` of
    ``Q^T`` lists the states ``i`` that jump to ``j``); ``False`` when some state does
    not reach it, or when :data:`REACH_ROUNDS` rounds did not show it (the strong
    components then decide, :func:`numeric.exact.general._closed_classes`).

    ``low[i]`` is the least state known to be reachable from ``i`` (at first ``i``
    itself); a round lowers it to ``low[j]`` for each jump ``i -> j``, then three times
    to ``low[low[i]]`` (reachable from ``low[i]``, hence from ``i``), so that chains
    of states are followed by doubling.  Every state reaches ``0`` once ``low`` is
    zero; a round that lowers nothing leaves the least reachable state of each, and
    some state does not reach ``0``.  SIR at N = 100 (5,151 states): 4 rounds, 0.35 ms,
    without importing :mod:`scipy.sparse.csgraph`."""
    S = indptr.shape[0] - 1
    if root != 0:
        return False
    rows = np.repeat(np.arange(S), np.diff(indptr))
    low = np.arange(S)
    for _ in range(REACH_ROUNDS):
        lower = low.copy()
        np.minimum.at(lower, indices, low[rows])
        for _ in range(3):
            lower = np.minimum(lower, lower[lower])
        if not lower.any():
            return True
        if np.array_equal(lower, low):
            return False
        low = lower
    return False


def nearest(states: np.ndarray, centre: np.ndarray, eligible: np.ndarray) -> int:
    """The index of the state nearest ``centre`` among ``eligible`` (the first on a tie),
    ``-1`` if none (as :func:`numeric.exact.fused.nearest`)."""
    if not eligible.any():
        return -1
    d = ((states - centre) ** 2).sum(axis=1)
    d[~eligible] = np.inf
    return int(np.argmin(d))


def quadratic_forms(
    states: np.ndarray, centre: np.ndarray, N: float, inverse: np.ndarray
) -> np.ndarray:
    """``y_i^T inverse y_i`` with ``y_i = (states[i] - centre) / sqrt(N)`` (as
    :func:`numeric.exact.fused.quadratic_forms`)."""
    y = (states - centre) / np.sqrt(N)
    return np.einsum("ij,jk,ik->i", y, inverse, y)


def routines(compiled: bool) -> SimpleNamespace:
    """The search's companions, compiled (:mod:`numeric.exact.assembly`,
    :mod:`numeric.exact.fused`) or in NumPy (this module): ``transposed_generator``,
    ``all_reach``, ``leaving``, ``nearest`` and ``quadratic_forms``."""
    if compiled:
        from numeric.exact.assembly import all_reach as reach
        from numeric.exact.assembly import leaving as leaves
        from numeric.exact.assembly import transposed_generator as generator
        from numeric.exact.fused import nearest as near
        from numeric.exact.fused import quadratic_forms as forms

        return SimpleNamespace(
            transposed_generator=generator, all_reach=reach, leaving=leaves, nearest=near,
            quadratic_forms=forms,
        )  # fmt: skip
    return SimpleNamespace(
        transposed_generator=transposed_generator,
        all_reach=all_reach,
        leaving=leaving,
        nearest=nearest,
        quadratic_forms=quadratic_forms,
    )
