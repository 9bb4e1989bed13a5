"""Signals during a checkpointed simulation, with real processes (issue 23).

``kill -9`` of the main process must not leave a worker behind; SIGTERM is
handled like Ctrl-C (completed batches saved, no temporary file, status 143).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from deadlines import deadline

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads /proc to find the workers"
)

CMD = [
    "simulate",
    "--N",
    "1000",
    "--lam",
    "0.9",
    "--b",
    "3",
    "--steps",
    "100000000",
    "--reps",
    "2",
    "--batches",
    "200",
    "--no-progress",
    "--checkpoint",
    "ck.json",
]


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _start(
    tmp_path: Path, workers: int, cmd: list[str] = CMD
) -> tuple[subprocess.Popen, list[int]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mfstein", *cmd, "--workers", str(workers)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (tmp_path / "ck.json").exists():  # the first unit is done, workers run
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no checkpoint within 60 s"
        time.sleep(0.05)
    while not (workers_now := [c for c in _children(proc.pid) if _alive(c)]):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run has no worker process"
        time.sleep(0.05)
    return proc, workers_now


def _wait_gone(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [p for p in pids if _alive(p)]
        if not left:
            return []
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


@pytest.mark.parametrize("workers", [1, 2])
def test_workers_die_with_a_killed_parent(tmp_path, workers) -> None:
    proc, kids = _start(tmp_path, workers)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=deadline(10))
    left = _wait_gone(kids, 5.0)
    for p in left:  # clean up before failing
        os.kill(p, signal.SIGKILL)
    assert not left, f"workers {left} outlived their killed parent"


def test_sigterm_saves_batches_removes_temporaries_exits_143(tmp_path) -> None:
    proc, kids = _start(tmp_path, 2)
    time.sleep(0.5)
    os.kill(proc.pid, signal.SIGTERM)
    _out, err = proc.communicate(timeout=deadline(30))
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1] == "mfstein simulate: terminated"
    assert not _wait_gone(kids, 5.0)
    assert not list(tmp_path.glob(".ck.json.*"))
    saved = json.loads((tmp_path / "ck.json").read_text())
    assert any(r["warm"] for r in saved["reps"])  # the completed units were saved
    # the saved run resumes: a second SIGTERM'd start reads it back without complaint
    proc2, _ = _start(tmp_path, 1)
    os.kill(proc2.pid, signal.SIGTERM)
    _, err2 = proc2.communicate(timeout=deadline(30))
    assert proc2.returncode == 143, err2
    again = json.loads((tmp_path / "ck.json").read_text())
    done = sum(len(r["batches"]) for r in saved["reps"])
    assert sum(len(r["batches"]) for r in again["reps"]) >= done


def test_sigterm_keeps_the_completed_units_of_the_tail_simulator(tmp_path) -> None:
    """sim.tails runs on the same runner: SIGTERM saves a checksummed checkpoint."""
    cmd = ["tail", "--simulate", "--n", "20", "--eps", "0.1", "--events", "3e8", "--reps", "2"]
    proc, kids = _start(tmp_path, 2, [*cmd, "--no-progress", "--checkpoint", "ck.json"])
    os.kill(proc.pid, signal.SIGTERM)
    _out, err = proc.communicate(timeout=deadline(30))
    assert proc.returncode == 143, err
    assert not _wait_gone(kids, 5.0)
    assert not list(tmp_path.glob(".ck.json.*"))
    saved = json.loads((tmp_path / "ck.json").read_text())
    assert saved["config"]["kind"] == "jsq-tails-v2" and len(saved["checksum"]) == 64
    assert any(r["warm"] for r in saved["reps"])  # the completed warm-up was saved


def test_ctrl_c_before_two_tail_replications_complete_is_an_interruption(tmp_path) -> None:
    """Not the bad-input sentence "reps must complete at least 2 replications" with
    status 2: an interruption (status 130, one line), the warm-ups saved."""
    cmd = ["tail", "--simulate", "--n", "20", "--eps", "0.1", "--events", "3e8", "--reps", "2"]
    proc, kids = _start(tmp_path, 2, [*cmd, "--no-progress", "--checkpoint", "ck.json"])
    os.kill(proc.pid, signal.SIGINT)
    _out, err = proc.communicate(timeout=deadline(30))
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["mfstein tail: interrupted"]
    assert not _wait_gone(kids, 5.0)
    saved = json.loads((tmp_path / "ck.json").read_text())
    assert not any(r["batches"] for r in saved["reps"])  # no replication had completed
