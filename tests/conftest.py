"""Shared test configuration: an opt-in marker for long runs."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", help="also run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="long run: pass --run-slow to include it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def _hear_ctrl_c() -> None:
    """Let the commands the tests start hear SIGINT.

    A shell starts a background job (``pytest ... &``, ``nohup``) with SIGINT
    ignored, and an ignored signal stays ignored across ``exec``: every ``mfstein``
    a test started would then ignore the Ctrl-C the test sends (and rightly so: a
    command started with SIGINT ignored keeps it ignored).  The suite's own
    processes restore Python's handler, so their children start with the default.
    """
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    """Generated kernels and numba's compiled caches go to pytest's cache directory,
    not the user's cache directory.

    Set here, before any test module is imported, because numba fixes the cache
    location of a function when it is decorated (at import).  The directory
    persists between runs like the real cache, so compiled code is reused; tests
    that need an empty cache set ``MFSTEIN_CACHE_DIR`` to a ``tmp_path`` themselves.
    Without pytest's cache plugin a temporary directory is used.
    """
    import os
    import tempfile

    _hear_ctrl_c()
    cache = getattr(config, "cache", None)
    if cache is not None:
        path = cache.mkdir("mfstein-kernels")
    else:
        path = tempfile.mkdtemp(prefix="mfstein-test-cache-")
    os.environ["MFSTEIN_CACHE_DIR"] = str(path)
    # notebooks executed by the tests, rendered by the documentation build (tests/test_docs.py)
    executed = cache.mkdir("executed-notebooks") if cache is not None else tempfile.mkdtemp()
    os.environ["MFSTEIN_EXECUTED_NOTEBOOKS"] = str(executed)


@pytest.fixture(scope="session")
def transposed_generator():
    """``Q^T`` of a finite-N chain on given states, assembled independently of
    numeric.exact's assembly (a dict of the states, the model's float kernel called
    state by state): ``Q[n, n + l] = N beta_l(n / N)``, ``Q[n, n] = -sum_l N beta_l(n / N)``.

    ``build(states, kern, p, N)`` returns ``(QT, up)`` with ``up[i]`` the summed
    intensity ``beta_l(n_i / N)`` of the jumps that raise the total (``sum(l) > 0``).
    """
    import numpy as np
    import scipy.sparse as sps

    def build(states, kern, p, N):
        states = np.asarray(states, dtype=np.int64)
        jumps = np.asarray(kern.jumps, dtype=np.int64)
        index = {tuple(n): i for i, n in enumerate(states.tolist())}
        S = states.shape[0]
        rows, cols, vals = [], [], []
        exit_rate, up = np.zeros(S), np.zeros(S)
        R = np.empty(jumps.shape[0])
        for i, n in enumerate(states):
            kern.rates_into(n / N, np.asarray(p, dtype=np.float64), R)
            for t, jump in enumerate(jumps):
                if R[t] > 0.0:
                    rows.append(index[tuple((n + jump).tolist())])
                    cols.append(i)
                    vals.append(N * R[t])
                    exit_rate[i] += N * R[t]
                    if jump.sum() > 0:
                        up[i] += R[t]
        off = sps.csr_matrix((vals, (rows, cols)), shape=(S, S))
        QT = (off - sps.diags(exit_rate)).tocsr()
        QT.sort_indices()
        return QT, up

    return build
