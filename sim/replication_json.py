"""A replication's state and batch sums as JSON and back, exactly: what a
checkpoint of :mod:`sim.runner` holds, whatever the engine (NumPy arrays as dtype,
shape and data; uint64 words as exact integers; floats round-trip through
``repr``).  They were part of the supermarket's :mod:`mfstein.families.supermarket.engine`, which
re-exports them."""

from __future__ import annotations

import numpy as np

__all__ = ["state_from_json", "state_to_json", "sums_from_json", "sums_to_json"]


def state_to_json(state: dict) -> dict:
    """A JSON-ready copy of a replication state (uint64 words as exact integers)."""
    out = {}
    for k, v in state.items():
        if isinstance(v, np.ndarray):
            out[k] = {"dtype": str(v.dtype), "shape": list(v.shape), "data": v.ravel().tolist()}
        else:
            out[k] = v
    return out


def state_from_json(data: dict) -> dict:
    """Inverse of :func:`state_to_json` (exact: floats round-trip through ``repr``)."""
    out = {}
    for k, v in data.items():
        if isinstance(v, dict) and "dtype" in v:
            out[k] = np.asarray(v["data"], dtype=v["dtype"]).reshape(v["shape"])
        else:
            out[k] = v
    return out


def sums_to_json(sums: dict) -> dict:
    """A JSON-ready copy of one batch's sums."""
    return {
        k: (np.asarray(v).tolist() if isinstance(v, np.ndarray) else v) for k, v in sums.items()
    }


def sums_from_json(data: dict) -> dict:
    """Inverse of :func:`sums_to_json`."""
    return {k: (v if k == "seconds" else np.asarray(v, dtype=float)) for k, v in data.items()}
