"""numba's extension entry points (``numba_extensions``, ``init``) with mfstein's lean
check (:func:`mfstein.ground.jit._lean_init_all`): run as numba runs them when a
distribution declares the group, and no parse of every distribution's entry points
when none does (issue 34: some 40 ms of CPU before a first call's first load)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from deadlines import deadline

CALL = r"""
import json, sys
import importlib.metadata as md
calls = []
real = md.entry_points

def spy(*args, **kwargs):
    calls.append(1)
    return real(*args, **kwargs)

md.entry_points = spy
from mfstein.ground.jit import numba
from numba.core import entrypoints
f = numba.njit(lambda x: x + 1)
value = f(1)
print(json.dumps({"value": value, "parsed": len(calls), "done": entrypoints._already_initialized,
                  "extension": sys.modules.get("fake_numba_ext") is not None
                  and sys.modules["fake_numba_ext"].CALLED}))
"""


def _call(tmp_path: Path, extra_path: str) -> dict:
    env = {**os.environ, "MFSTEIN_CACHE_DIR": str(tmp_path / "cache")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (extra_path, env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, "-c", CALL],
        env=env,
        capture_output=True,
        text=True,
        timeout=deadline(120),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.splitlines()[-1])


def test_no_extension_declared_no_entry_points_parsed(tmp_path) -> None:
    got = _call(tmp_path, "")
    assert got == {"value": 2, "parsed": 0, "done": True, "extension": False}, got


def test_a_declared_extension_is_initialised_as_numba_does(tmp_path) -> None:
    site = tmp_path / "site"
    info = site / "fake_numba_ext-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-numba-ext\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[numba_extensions]\ninit = fake_numba_ext:init\n")
    (site / "fake_numba_ext.py").write_text(
        "CALLED = False\n\ndef init():\n    global CALLED\n    CALLED = True\n"
    )
    got = _call(tmp_path, str(site))
    assert got == {"value": 2, "parsed": 1, "done": True, "extension": True}, got
