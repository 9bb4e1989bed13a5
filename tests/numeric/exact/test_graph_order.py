"""The NumPy route's graph steps without SciPy's graph routines
(:mod:`numeric.exact.small`): the queue's order is
:func:`scipy.sparse.csgraph.breadth_first_order`'s, and :func:`~numeric.exact.small.all_reach`
never claims that every state reaches the start when one does not."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sps
from scipy.sparse.csgraph import breadth_first_order, connected_components

from numeric.exact import small
from numeric.exact.general import _closed_classes


def _random_targets(rng: np.random.Generator, S: int, nt: int) -> np.ndarray:
    """``(S, nt)`` targets, ``-1`` for none; repeated targets and self-loops included."""
    to = rng.integers(0, S, size=(S, nt))
    to[rng.random((S, nt)) < 0.3] = -1
    return to


def _graph(to: np.ndarray) -> sps.csr_matrix:
    """The jump graph of ``to`` in CSR, each row's targets in their order."""
    jump = to >= 0
    indptr = np.concatenate([[0], np.cumsum(jump.sum(axis=1))])
    return sps.csr_matrix((np.ones(indptr[-1]), to[jump], indptr), shape=(to.shape[0],) * 2)


def _transposed(to: np.ndarray) -> sps.csr_matrix:
    """``Q^T``'s pattern of the jumps ``to`` (row ``j`` lists the ``i`` that jump to ``j``),
    with the diagonal, as :func:`numeric.exact.small.transposed_generator` stores it."""
    S = to.shape[0]
    src = np.broadcast_to(np.arange(S)[:, None], to.shape)[to >= 0]
    rows = np.concatenate([to[to >= 0], np.arange(S)])
    cols = np.concatenate([src, np.arange(S)])
    QT = sps.coo_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(S, S)).tocsr()
    QT.sum_duplicates()
    return QT


@pytest.mark.parametrize("seed", range(12))
def test_the_queue_meets_the_states_in_scipys_breadth_first_order(seed):
    rng = np.random.default_rng(seed)
    S, nt = int(rng.integers(1, 400)), int(rng.integers(1, 5))
    to = _random_targets(rng, S, nt)
    head = int(rng.integers(0, S))
    want = breadth_first_order(_graph(to), head, directed=True, return_predecessors=False)
    got = small.queue_order(to, head)
    assert got == want.tolist()
    assert np.array_equal(small._breadth_first(to, to >= 0, head), want)


@pytest.mark.parametrize("seed", range(40))
def test_all_reach_says_true_exactly_when_every_state_reaches_the_start(seed):
    """On random graphs, half of them made irreducible by a cycle through every state
    in a random order: the answer is the search's (never a false "yes", and random
    graphs are shown within the rounds)."""
    rng = np.random.default_rng(seed)
    S, nt = int(rng.integers(2, 300)), int(rng.integers(1, 5))
    to = _random_targets(rng, S, nt)
    if seed % 2:
        cycle = rng.permutation(S)
        to[cycle, rng.integers(0, nt)] = np.roll(cycle, -1)
    QT = _transposed(to)
    # the truth: a search from 0 against the jumps (along Q^T's rows)
    truth = breadth_first_order(QT, 0, directed=True, return_predecessors=False).shape[0] == S
    assert truth or not seed % 2
    assert small.all_reach(QT.indptr, QT.indices, 0) == truth


def test_a_chain_all_reach_cannot_show_is_left_to_the_strong_components():
    """A cycle 0 -> 1 -> ... -> S-1 -> 0 lowers the least reachable state of one state a
    round: beyond the rounds, the strong components find the one class."""
    S = 4 * small.REACH_ROUNDS
    to = ((np.arange(S) + 1) % S)[:, None]
    QT = _transposed(to)
    assert not small.all_reach(QT.indptr, QT.indices, 0)
    labels, n = _closed_classes(QT, compiled=False)
    assert n == 1 and not labels.any()


def test_a_reducible_chain_keeps_its_closed_classes():
    """Two absorbing states reached from 0: all_reach says no, and the NumPy route's
    classes are the strong components' closed ones."""
    to = np.array([[1, 2], [-1, -1], [-1, -1]])
    QT = _transposed(to)
    assert not small.all_reach(QT.indptr, QT.indices, 0)
    labels, n = _closed_classes(QT, compiled=False)
    count, comp = connected_components(QT, directed=True, connection="strong")
    assert n == 2 and labels[0] == -1 and sorted(labels[1:].tolist()) == [0, 1]
    assert count == 3 and len(set(comp.tolist())) == 3


@pytest.mark.parametrize("nt", range(1, 7))
def test_the_queue_of_any_number_of_transitions_is_scipys_order(nt):
    """The queue's loop written out for at most three transitions (the missing ones read
    as ``-1``) and its loop over the transitions for more give SciPy's order, on graphs
    with repeated targets, self-loops, no targets and unreachable points."""
    rng = np.random.default_rng(100 + nt)
    for S in (1, 2, 7, 60, 350):
        to = _random_targets(rng, S, nt)
        head = int(rng.integers(0, S))
        want = breadth_first_order(_graph(to), head, directed=True, return_predecessors=False)
        assert small.queue_order(to, head) == want.tolist()
