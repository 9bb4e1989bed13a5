"""A kernel that only reads its arrays is compiled once, for writable and read-only
arrays alike (``mfstein.ground.read_inputs``; issue 34: every generated kernel of a model
above 12 states was compiled twice in one solve)."""

from __future__ import annotations

import numpy as np
import pytest
from plain_models.thirty import thirty

from mfstein.ground.jit import numba, reads_inputs


def _arrays() -> tuple[np.ndarray, np.ndarray]:
    writable = np.array([1.5, -2.0, 0.25])
    frozen = np.array([0.5, 3.0, -1.0])
    frozen.flags.writeable = False
    return writable, frozen


def test_one_version_serves_writable_and_read_only_arrays():
    @reads_inputs
    @numba.njit
    def dot(s, p):
        return s[0] * p[0] + s[1] * p[1] + s[2] * p[2]

    @numba.njit
    def caller(s, p):  # compiled code calling the marked kernel with a writable array
        s[2] = 4.0
        return dot(s, p)

    w, r = _arrays()
    plain = float(w @ r)
    for s, p in [(w, r), (w, w.copy()), (r, w), (r, r), (w, r)]:
        assert dot(s, p) == float(s @ p)
    assert dot(w, r) == plain
    assert caller(w.copy(), r) == 1.5 * 0.5 + -2.0 * 3.0 + 4.0 * -1.0
    assert len(dot.signatures) == 1
    assert all(not a.mutable for a in dot.signatures[0])


def test_an_unmarked_kernel_still_compiles_a_version_per_writeability():
    @numba.njit
    def dot(s, p):
        return s[0] * p[0]

    w, r = _arrays()
    dot(w, r), dot(w, w)
    assert len(dot.signatures) == 2  # numba's own behaviour, which the mark changes


def test_a_marked_kernel_that_writes_its_argument_is_refused_when_compiled():
    @reads_inputs
    @numba.njit
    def scale(s):
        s[0] = 2.0 * s[0]
        return s[0]

    with pytest.raises(numba.core.errors.TypingError, match="setitem"):
        scale(np.ones(3))


def test_a_plain_model_above_the_lambdified_size_compiles_each_kernel_once():
    """A ring of 13 sites (13 states: numba's kernels, ``LAMBDA_MAX_B = 12``) solved at
    working precision: the search reads the prepared problem's read-only parameters,
    Newton's polish arrays of its own; before the mark, ``rates`` and ``jac`` were
    compiled twice."""
    import mfstein as mf
    from numeric.prepared.reduced import LAMBDA_MAX_B

    model = thirty(LAMBDA_MAX_B + 1)
    sol = mf.solve(model, {"lam": "0.8"}, start=",".join(["0.3"] * model.n), dps=20)
    assert len(sol.s_star) == LAMBDA_MAX_B + 1
    k = model.kernels("numba")
    counts = {name: len(getattr(k, name).signatures) for name in ("f", "jac", "rates")}
    assert counts == {"f": 1, "jac": 1, "rates": 1}
    s = np.array([float(v) for v in sol.s_star])
    w = np.array([0.8])
    r = w.copy()
    r.flags.writeable = False
    for name in ("f", "jac", "rates"):
        kernel = getattr(k, name)
        assert np.array_equal(kernel(s, w), kernel(s, r))
        assert len(kernel.signatures) == 1
