"""The exact solver's compact assembly and compiled BiCGSTAB (issue 34, "Exact chains"):
``Q^T`` written from the search's targets equals the generator built entry by entry
with SciPy; the iterative law equals a closed form; and the peak memory of a large
chain stays within the plan (:func:`numeric.exact.memory.bytes_per_state`)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sps
from deadlines import deadline

import numeric.exact
from numeric.exact.assembly import transposed_generator


def test_transposed_generator_is_the_generator_built_by_scipy() -> None:
    rng = np.random.default_rng(5)
    S, nt, N = 60, 5, 7
    target = rng.integers(-1, S, size=(S, nt)).astype(np.int32)
    for i in range(S):  # no self-loops (the search drops them); two equal targets kept
        target[i][target[i] == i] = -1
    target[3, 1] = target[3, 0] = 11  # two transitions from 3 to 11: one entry, summed
    R = rng.uniform(0.1, 2.0, size=(S, nt))
    QT, q = transposed_generator(target, R, N)
    rows, cols = np.nonzero(target >= 0)
    Q = sps.coo_matrix((N * R[rows, cols], (rows, target[rows, cols])), shape=(S, S)).tocsr()
    Q.sum_duplicates()
    exit_rate = np.asarray(Q.sum(axis=1)).ravel()
    want = (Q - sps.diags(exit_rate)).T.toarray()
    assert np.allclose(QT.toarray(), want, rtol=1e-15, atol=0)
    assert np.allclose(q, exit_rate, rtol=1e-15, atol=0)
    assert QT.indices.dtype == np.int32
    assert QT.nnz == Q.nnz + S  # duplicates summed, every diagonal stored
    for j in range(S):  # columns ascending within each row
        row = QT.indices[QT.indptr[j] : QT.indptr[j + 1]]
        assert np.all(np.diff(row) > 0)


@pytest.mark.parametrize("method", ["bicgstab", "gmres"])
def test_iterative_law_of_the_one_level_supermarket_is_the_closed_form(method: str) -> None:
    """b = 1: a birth-death chain on 0..N, births N lam (1 - (n/N)^2), deaths n."""
    N, lam = 80, 0.9
    r = numeric.exact.solve("supermarket", {"b": 1, "lam": "0.9"}, N=N, solver=method)
    logs = [0.0]
    for n in range(1, N + 1):
        logs.append(logs[-1] + math.log(N * lam * (1 - ((n - 1) / N) ** 2)) - math.log(n))
    law = np.exp(np.array(logs) - max(logs))
    law /= law.sum()
    got = np.zeros(N + 1)
    got[np.asarray(r.state_array)[:, 0]] = np.asarray(r.pi)
    assert r.solver == method
    assert np.abs(got - law).sum() < 1e-10


CHILD = """
import json, resource, sys
import numeric.exact
from numeric.exact.memory import bytes_per_state

numeric.exact.solve_exact(8, "0.9", 3, 2)  # compiled code loaded, interpreter settled
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
r = numeric.exact.solve_exact(int(sys.argv[1]), "0.9", 3, 2)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"states": r.states, "grew": peak - before, "plan": bytes_per_state(3, 6)}))
"""


@pytest.mark.slow
def test_peak_memory_of_a_large_chain_is_within_the_plan() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, "200"],
        capture_output=True, text=True, env=dict(os.environ), timeout=deadline(1200), check=True,
    )  # fmt: skip
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["states"] == math.comb(203, 3)
    assert got["grew"] <= got["plan"] * got["states"]
