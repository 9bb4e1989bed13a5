"""The steps around the iterative solve of a large exact chain, each against an
independent computation: the search allocates a full monotone lattice once, the
irreducibility check is the strong components' answer, and the monotone order
of the reachable states is the enumeration's."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
import scipy.sparse as sps
from scipy.sparse.csgraph import breadth_first_order

from derive import supermarket
from numeric.exact import general, lattice
from numeric.exact.assembly import all_reach
from numeric.exact.general import Chain
from numeric.exact.states import monotone_positions, monotone_states


def test_the_search_of_a_full_monotone_lattice_never_grows_its_arrays(monkeypatch) -> None:
    """The arrays are sized once by the lattice's bound, with the room the search
    checks for; before, the last states of a full lattice copied every array."""
    grown: list[int] = []
    grow = lattice._Frontier.grow

    def counted(self, cap, nt):
        grown.append(cap)
        return grow(self, cap, nt)

    monkeypatch.setattr(lattice._Frontier, "grow", counted)
    monkeypatch.setattr(lattice, "FIRST_ROWS", 64)  # the lattices below are above it
    for N in (20, 41):
        ch = Chain.setup(supermarket(3, 2), N, {"lam": "0.9"}, None, None, None)
        reach = lattice.reachable(ch.kern, ch.exact, ch.lattice, ch.p64, ch.start, 10**7)
        assert reach.states.shape[0] == comb(N + 3, 3)
    assert grown == []


def _random_transposed_generator(n: int, density: float, seed: int) -> sps.csr_matrix:
    Q = sps.random(n, n, density=density, random_state=seed, format="csr")
    Q = Q + sps.diags(-np.asarray(Q.sum(axis=1)).ravel())
    QT = Q.T.tocsr()
    QT.sort_indices()
    return QT


@pytest.mark.parametrize("density", [0.002, 0.005, 0.02, 0.1])
def test_all_reach_is_reachability_against_the_jumps(density) -> None:
    """``all_reach(Q^T, 0)`` is whether SciPy's breadth-first search from state 0 on
    the graph of ``Q^T`` (its edges are the jumps reversed) finds every state."""
    answers = set()
    for seed in range(12):
        QT = _random_transposed_generator(300, density, seed)
        want = breadth_first_order(QT, 0, directed=True, return_predecessors=False).size == 300
        assert all_reach(QT.indptr, QT.indices, 0) == want
        answers.add(want)
    if density in (0.002, 0.1):  # sparse graphs are reducible, dense ones irreducible
        assert answers == {density == 0.1}


@pytest.mark.parametrize("density", [0.003, 0.005, 0.05])
def test_the_closed_classes_are_the_strong_components_answer(density) -> None:
    """The compiled check, when it applies, gives the labels and the count of the
    strong-component analysis (the NumPy route, ``compiled=False``)."""
    for seed in range(8):
        QT = _random_transposed_generator(200, density, seed)
        fast = general._closed_classes(QT, True)
        slow = general._closed_classes(QT, False)
        assert fast[1] == slow[1]
        assert np.array_equal(fast[0], slow[0])


@pytest.mark.parametrize(("N", "b"), [(1, 1), (7, 1), (5, 2), (9, 3), (6, 4)])
def test_monotone_positions_put_any_order_into_the_enumeration_order(N, b) -> None:
    want = monotone_states(N, b).states
    rng = np.random.default_rng(N * 10 + b)
    shuffled = want[rng.permutation(want.shape[0])]
    pos = monotone_positions(shuffled, N)
    assert pos is not None
    ordered = np.empty_like(shuffled)
    ordered[pos] = shuffled
    assert np.array_equal(ordered, want)


def test_monotone_positions_refuse_what_is_not_the_monotone_space() -> None:
    states = monotone_states(6, 3).states
    assert monotone_positions(states[:-1], 6) is None  # one state missing
    twice = states.copy()
    twice[3] = twice[4]  # one state twice, one missing
    assert monotone_positions(twice, 6) is None
    rising = states.copy()
    rising[5] = [1, 2, 0]  # not monotone
    assert monotone_positions(rising, 6) is None
    assert monotone_positions(states, 7) is None  # the space of another N


def test_the_next_check_comes_when_the_rate_predicts_a_tenth_of_the_target() -> None:
    """After a check the Krylov monitor waits ``log(tol / (10 res)) / log(rho)``
    iterations (``rho`` the residual's rate per iteration since the last check), at
    least 1 and at most ``check_every``; while the residual does not fall, or once it
    is at the target, it waits ``check_every``."""
    from numeric.exact import triangles
    from numeric.exact.solvers import _Monitor

    with triangles.split(_random_transposed_generator(50, 0.1, 1)) as m:
        mon = _Monitor(m, np.ones(50), 1e-11, 20, 1000, 400, None)
    mon.last = 1e-4
    assert mon._next_gap(1e-9, 20) == 12  # 10^-0.25 per iteration, 10^-3 to go
    assert mon._next_gap(1e-10, 20) == 7  # 10^-0.3 per iteration, 10^-2 to go: 6.7
    assert mon._next_gap(1e-11 * 1.0001, 4) == 1  # 10^-7 in 4: one more iteration
    assert mon._next_gap(1e-5, 40) == 20  # 10^-0.025 per iteration: the longest wait
    assert mon._next_gap(2e-4, 20) == 20  # rising
    assert mon._next_gap(1e-12, 20) == 20  # at the target
    assert mon._next_gap(1e-9, 0) == 20  # a check with no iteration since the last
