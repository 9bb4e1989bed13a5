"""Issue 23, "work with a known size": on a terminal a long run shows a progress bar
and Ctrl-C stops it cleanly, whatever it is in the middle of.

Each test runs the real ``mfstein`` with its standard error on a pseudo-terminal
(the progress bars are drawn only there), waits until the bar shows completed
work, sends SIGINT and checks the exit: status 130 within seconds, one line
naming the interruption, and what the command promises to keep.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path

from deadlines import deadline
from terminal import on_terminal, read

ROOT = Path(__file__).resolve().parents[2]
BIRTH_DEATH = f"{ROOT}/examples/birth_death.py:birth_death"
#: Seconds a run may take to stop after SIGINT (units in flight are cancelled).
STOP_SECONDS = 15.0


def _bar_counts(text: str) -> tuple[int, int] | None:
    """``(done, total)`` of the last tqdm bar drawn in ``text``."""
    found = re.findall(r"(\d+)/(\d+) \[", text)
    return (int(found[-1][0]), int(found[-1][1])) if found else None


def _interrupt_on_terminal(
    argv: list[str], ready: Callable[[str], bool], timeout: float = 180.0
) -> tuple[int | None, str, str, float]:
    """Run ``mfstein argv`` with standard error on a terminal; SIGINT once ``ready(stderr
    so far)``; return ``(status, stdout, stderr, seconds from SIGINT to exit)``."""
    env = {**os.environ, "COLUMNS": "120", "PYTHONWARNINGS": "ignore"}
    env.pop("MFSTEIN_TRACEBACK", None)
    err = ""
    with on_terminal(argv, env) as (proc, master):
        until = time.monotonic() + deadline(timeout)
        while not ready(err) and proc.poll() is None and time.monotonic() < until:
            err += read(master, 0.2)
        assert ready(err), f"no progress within {timeout} s: {err[-500:]!r}"
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        while proc.poll() is None and time.monotonic() < t0 + deadline(STOP_SECONDS + 30):
            err += read(master, 0.2)
        stopped = time.monotonic() - t0
        err += read(master, 0.5)
        out = proc.stdout.read().decode() if proc.poll() is not None else ""
        return proc.poll(), out, err, stopped


def _batches_done(at_least: int) -> Callable[[str], bool]:
    def ready(text: str) -> bool:
        counts = _bar_counts(text)
        return counts is not None and counts[0] >= at_least

    return ready


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in re.split(r"[\r\n]", text) if ln.strip()]
    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", lines[-1]) if lines else ""


def test_ctrl_c_stops_the_model_table_after_its_first_batches():
    """An interrupted simulation keeps its batches, but the table does not go on to
    the next N with a short column: it stops, status 130 (it went on before)."""
    argv = ["table", "--model", BIRTH_DEATH, "--param", "lam=0.5", "--N", "10,20"]
    # 2e8 events a replication (was 1e9: 5x the work before the press, for the same
    # check): the first units end soon after the start, the run's end is far away
    argv += ["--observable", "x", "--simulate", "--sim-steps", "2e8", "--reps", "2"]
    argv += ["--workers", "1", "--seed", "3"]
    # two warm-ups and one batch are done: a simulation that would report numbers
    status, out, err, stopped = _interrupt_on_terminal(argv, _batches_done(3))
    assert status == 130, err[-500:]
    assert stopped < deadline(STOP_SECONDS)
    assert out == ""
    assert _last_line(err) == "mfstein table: interrupted"


def test_ctrl_c_keeps_the_completed_batches_of_a_model_simulation():
    argv = ["simulate", "--model", f"{ROOT}/examples/tandem.py:tandem", "--param", "stations=2"]
    # 2e8 events a replication (was 1e9: the warm-up alone, a tenth, was 1e8 events, 4 s
    # of simulation before the press): the first units end soon after the start, the
    # run's end (4e8 events) is far away
    argv += ["--param", "lam=1", "--param", "mu=1", "--N", "50", "--steps", "2e8"]
    argv += ["--reps", "2", "--workers", "1", "--batches", "50"]
    status, out, err, stopped = _interrupt_on_terminal(argv, _batches_done(4))
    assert status == 130, err[-500:]
    assert stopped < deadline(STOP_SECONDS)
    assert "tandem-2 model, N = 50" in out  # the report of what was completed
    assert "N E||S - s*||^2 = " in out


def test_ctrl_c_of_a_tail_simulation_before_two_replications_is_an_interruption():
    """Fewer than two replications done is what Ctrl-C left, not bad input (it was
    "reps must complete at least 2 replications", status 2)."""
    argv = ["tail", "--model", "jsq", "--n", "3", "--eps", "0.2", "--simulate"]
    argv += ["--events", "1e12", "--reps", "2", "--workers", "1"]
    status, out, err, stopped = _interrupt_on_terminal(argv, lambda e: _bar_counts(e) is not None)
    assert status == 130, err[-500:]
    assert stopped < deadline(STOP_SECONDS)
    assert out == ""
    assert _last_line(err) == "mfstein tail: interrupted"


#: Seconds ``exact`` may take to stop once SIGINT is sent (issue 23 asks ~2 s; the
#: margin is for a loaded machine freeing a chain of half a million states).
EXACT_STOP_SECONDS = 6.0


def test_ctrl_c_stops_the_exact_krylov_solve_within_seconds():
    """SIGINT once the BiCGSTAB bar shows (the search and the assembly are done, the
    iterative solve has started): status 130 within seconds, one line, no numbers."""
    argv = ["exact", "--N", "150", "--lam", "0.9", "--b", "3"]  # 585,276 states
    status, out, err, stopped = _interrupt_on_terminal(
        argv, lambda e: re.search(r"bicgstab: \d+it", e) is not None
    )
    assert status == 130, err[-500:]
    assert stopped < deadline(EXACT_STOP_SECONDS)
    assert out == ""
    assert _last_line(err).endswith("mfstein exact: interrupted")


def _integrated_past_zero(text: str) -> bool:
    """The transient's bar (``t = n/total [``) shows integrated time beyond 0."""
    found = re.findall(r"t = ([0-9.e+-]+)/", text)
    return bool(found) and float(found[-1]) > 0


def test_ctrl_c_stops_a_long_mpmath_transient_within_seconds():
    """The issue's long transient (order 2 at 50 digits, under the time budget, so it
    runs): SIGINT once its bar shows integrated time: status 130, one line, no output."""
    argv = ["transient", "--model", "sir", "--param", "beta=2.5", "--param", "gamma=1"]
    argv += ["--param", "rho=0.5", "--param", "a=0.05", "--start", "0.75,0.25,0"]
    argv += ["--order", "2", "--dps", "50", "--t", "0:10:100"]
    status, out, err, stopped = _interrupt_on_terminal(argv, _integrated_past_zero)
    assert status == 130, err[-500:]
    assert stopped < deadline(STOP_SECONDS)
    assert out == ""
    assert re.fullmatch(r"mfstein( transient)?: interrupted", _last_line(err)), err[-500:]
