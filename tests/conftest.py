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
    Without pytest's cache plugin a temporary directory is used, one for the whole
    run: xdist's workers receive the controller's (:func:`pytest_configure_node`),
    so that a model compiled by one worker is loaded, not compiled again, by the
    other, as with pytest's cache directory.
    """
    import os

    _hear_ctrl_c()
    _whole_files_to_a_worker(config)
    os.environ["MFSTEIN_CACHE_DIR"] = _run_directory(config, "mfstein-kernels")
    # notebooks executed by the tests, rendered by the documentation build (tests/test_docs.py)
    os.environ["MFSTEIN_EXECUTED_NOTEBOOKS"] = _run_directory(config, "executed-notebooks")


def _whole_files_to_a_worker(config: pytest.Config) -> None:
    """With ``-n`` (pytest-xdist) and no ``--dist`` of the caller's: each test file runs
    whole on one worker (``--dist loadfile``) instead of test by test (``load``).

    The tests of a file share their models: SymPy's derivation, the in-process
    memos and the numba kernels compiled for one model then serve the file's other
    tests, instead of both workers preparing the same model at once (a kernel one
    worker has finished is loaded from the shared cache by the other, but two that
    start it together both compile it).  An explicit ``--dist`` wins.
    """
    import os

    if getattr(config.option, "dist", "no") != "load" or getattr(config.option, "distload", False):
        return  # not distributed, or --dist load / -d asked for by name
    words = [*config.invocation_params.args, *os.environ.get("PYTEST_ADDOPTS", "").split()]
    if not any(str(w) == "--dist" or str(w).startswith("--dist=") for w in words):
        config.option.dist = "loadfile"


#: directories whose files share a session fixture worth building once: one xdist unit
SHARED_SCOPES = {
    "tests/packaging": "the wheel and sdist built from the tree (tests/packaging/conftest.py)",
}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """xdist with ``--dist loadfile``: a file is one unit of work, and so is each
    directory of :data:`SHARED_SCOPES` (its session fixture is then built once)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FileOrSharedDirectory(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            folder = path.rsplit("/", 1)[0]
            return folder if folder in SHARED_SCOPES else path

    return FileOrSharedDirectory(config, log)


def _run_directory(config: pytest.Config, name: str) -> str:
    """The directory ``name`` of this test run: in pytest's cache directory when its
    plugin is on, else the controller's temporary directory (an xdist worker) or a
    new one."""
    import tempfile

    cache = getattr(config, "cache", None)
    if cache is not None:
        return str(cache.mkdir(name))
    given = getattr(config, "workerinput", {}).get(f"mfstein-{name}")
    if given:
        return given
    path = tempfile.mkdtemp(prefix=f"mfstein-test-{name}-")
    _RUN_DIRECTORIES[name] = path
    return path


#: the temporary directories this process made for the run (handed to xdist's workers)
_RUN_DIRECTORIES: dict[str, str] = {}


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """xdist: hand each worker the run's temporary directories (:func:`_run_directory`)."""
    for name, path in _RUN_DIRECTORIES.items():
        node.workerinput[f"mfstein-{name}"] = path


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
