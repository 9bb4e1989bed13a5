"""numba's type of an array argument with mfstein's lean ``typeof`` for ``np.ndarray``
(:func:`mfstein.ground.jit._lean_typeof_ndarray`): the same types and errors as
numba's own function, without importing ``numpy.ma`` (issue 34: some 15 ms of a first
call's first array)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from deadlines import deadline

CHILD = r"""
import json, sys
import numpy as np
from mfstein.ground.jit import numba
from numba.core.typing.typeof import Purpose, typeof, typeof_impl

ours = typeof_impl.dispatch(np.ndarray)
real = ours.__wrapped__
base = np.arange(24.0).reshape(4, 6)
frozen = np.arange(5)
frozen.flags.writeable = False
record = np.zeros(3, dtype=[("a", "<f8"), ("b", "<i4")])
arrays = [
    base, np.asfortranarray(base), base[:, ::2], base[::2], frozen,
    np.zeros(3, np.int32), np.ones(2, bool), np.zeros(2, np.complex128), record,
    np.array(["2020-01-01"], dtype="datetime64[D]"), np.ones(()),
    np.empty((0, 3)), np.zeros(4, np.uint8),
]
UNSUPPORTED = (np.zeros(2, dtype="V8"),)


def outcome(fn, a):
    try:
        return str(fn(a, Purpose.argument))
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


got = [outcome(typeof, a) for a in arrays]
masked_before = "numpy.ma" in sys.modules
got += [outcome(typeof, a) for a in UNSUPPORTED]  # numba's own code, errors and all
want = [outcome(real, a) for a in arrays + list(UNSUPPORTED)]
try:
    typeof(np.ma.masked_array([1.0, 2.0]), Purpose.argument)
    masked = "accepted"
except Exception as exc:
    masked = type(exc).__name__
f = numba.njit(lambda a: a.sum())
print(json.dumps({"got": got, "want": want, "masked_before": masked_before, "masked": masked,
                  "sum": float(f(base)) == float(base.sum())}))
"""


def test_array_types_match_numbas_without_importing_numpy_ma(tmp_path) -> None:
    """Thirteen arrays (layouts C, F and A, read-only, integer, boolean, complex,
    record, datetime, 0-d, empty) get numba's own types before ``numpy.ma`` is
    imported; an unsupported element type (raw bytes) gets numba's own error; a masked
    array is still refused and a compiled call on an array still runs."""
    env = {**os.environ, "MFSTEIN_CACHE_DIR": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD],
        env=env,
        capture_output=True,
        text=True,
        timeout=deadline(120),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["got"] == out["want"] and len(out["got"]) == 14, out
    assert out["got"][13].startswith("NumbaValueError: Unsupported array dtype"), out
    assert out["masked_before"] is False, out
    assert out["masked"] == "NumbaTypeError" and out["sum"] is True, out
