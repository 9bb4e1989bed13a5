"""The Python functions a call runs, seen by a profile hook (tests that a warm call runs
no SymPy).

The hook sees every Python-level call while ``fn()`` runs.  The garbage collector is
emptied before and held off during the call: otherwise it may finalise an object left
over by an earlier test in the same worker (a SymPy generator closed by ``gc``, seen as
a call of SymPy's ``cse_main.<genexpr>``), which is no work of ``fn``.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from typing import Any


def functions_called(fn: Callable[[], Any]) -> tuple[Any, list[str]]:
    """``fn()``'s value and the functions it called, as ``file:name`` in call order."""
    seen: list[str] = []

    def hook(frame, event, arg):
        if event == "call":
            seen.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")

    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    sys.setprofile(hook)
    try:
        value = fn()
    finally:
        sys.setprofile(None)
        if was_enabled:
            gc.enable()
    return value, seen
