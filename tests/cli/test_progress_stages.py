"""Long order-2 solves show their stages on a terminal (``mfstein.ground.progress``), and
the stage line is gone before the answer is printed."""

from __future__ import annotations

import io
import os
import re
import sys
import time

import pytest
from deadlines import deadline
from terminal import on_terminal, read

from mfstein.ground.progress import stage, stages

SOLVE = "solve --model supermarket --param b=20 --param lam=0.9 --order 2".split()


def test_order_two_names_its_working_precisions_and_the_grown_tail() -> None:
    import numeric
    from derive.models import load_model

    with stages("solve", show=False) as seen:
        sol = numeric.solve(load_model("supermarket", b=20), {"lam": "0.9"}, dps=30, order=2)
    assert seen[:2] == ["mean field at 30 digits", "order 2"]
    solves = [re.fullmatch(r"order 2 on (\d+) coordinates at (\d+) digits", s) for s in seen[2:]]
    assert solves and all(solves), seen
    sizes = [int(m.group(1)) for m in solves]
    assert sizes == sorted(sizes) and sizes[-1] <= 20  # the tail grows ring by ring
    # each size is solved at the two working precisions whose agreement earns the digits
    assert all(sizes.count(n) == 2 for n in set(sizes)), seen
    assert sol.digits2 >= 20


def test_a_stage_outside_a_display_is_silent_and_the_display_clears_its_line() -> None:
    stage("nobody listens")  # no display open: nothing happens, nothing fails
    out = io.StringIO()
    with stages("work", show=True, file=out, delay=0) as seen:
        stage("first")
        stage("second")
    text = out.getvalue()
    assert seen == ["first", "second"]
    assert "work: second" in text
    assert text.endswith("\r")  # the line is blanked when the block ends
    assert text.rstrip("\r").rsplit("\r", 1)[-1].strip() == ""


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminal")
def test_the_solve_command_shows_its_stages_on_a_terminal_only() -> None:
    env = {**os.environ, "COLUMNS": "120", "MFSTEIN_PROGRESS_DELAY": "0"}
    env.pop("MFSTEIN_TRACEBACK", None)
    err = ""
    with on_terminal(SOLVE, env) as (proc, master):
        until = time.monotonic() + deadline(120)
        while proc.poll() is None and time.monotonic() < until:
            err += read(master, 0.2)
        assert proc.poll() == 0, err[-500:]
        err += read(master, 0.5)
        out = proc.stdout.read().decode()
    assert "mfstein solve: order 2 on " in err
    assert err.rstrip("\r").rsplit("\r", 1)[-1].strip() == ""  # cleared at the end
    assert "c2 = tr(M B)" in out and "order 2 on" not in out
