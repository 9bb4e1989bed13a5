"""Issue 15: no input breaks the command line.

Every probe runs ``mfstein`` with a short timeout and must end in one of two ways:
exit status 0 with a correct answer, or exit status 2 (bad input) / 1 (environment,
a failed self-check) with exactly one line on standard error and no traceback.
Nothing half-written may be left on disk.  The probes are the hostile user's inputs
of the issue plus the class each stands for (property-based over the numeric options,
bounded number of examples).

The first probe of each command runs ``mfstein`` as a process; the others call the
same entry point in this process (tests/in_process.py: the same exit status and the
same printed lines, without a Python start and the numeric imports per probe).  The
whole sweep as processes is ``benchmarks/probe_cli.py``.
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
from in_process import run_main

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 40.0  # quiet-machine seconds per probe (deadlines.deadline): a hang fails

OK, INPUT, ENV = 0, 2, 1


def run_cli(argv: list[str], cwd: Path, timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}  # warnings shown: they must be one line too
    env.pop("MFSTEIN_TRACEBACK", None)
    env.pop("PYTHONWARNINGS", None)
    try:
        return subprocess.run(
            [sys.executable, "-m", "mfstein", *argv],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=deadline(timeout),
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"mfstein {' '.join(argv)} did not finish within {deadline(timeout):.0f} s")


def run_here(
    argv: list[str], cwd: Path, capsys: pytest.CaptureFixture[str], timeout: float = TIMEOUT
) -> subprocess.CompletedProcess:
    """``run_cli`` in this process (tests/in_process.py)."""
    return run_main(argv, cwd, capsys, timeout=timeout)


def assert_contract(proc: subprocess.CompletedProcess, expected: int | tuple[int, ...]) -> None:
    """Status as expected; on failure exactly one line on stderr, on success only
    one-line ``mfstein ...`` warnings; never a traceback (argparse's own usage errors
    too: the dispatcher's parser prints them as one line)."""
    allowed = expected if isinstance(expected, tuple) else (expected,)
    cmd = " ".join(proc.args[3:])
    assert "Traceback" not in proc.stderr, f"{cmd}: traceback\n{proc.stderr}"
    assert proc.returncode in allowed, (
        f"{cmd}: status {proc.returncode}, expected {allowed}\n{proc.stderr[-2000:]}"
    )
    lines = proc.stderr.strip().splitlines()
    if proc.returncode != 0:
        assert len(lines) == 1, f"{cmd}: {len(lines)} lines on stderr\n{proc.stderr}"
        assert lines[0].startswith("mfstein "), lines[0]
    else:  # only one-line notes (warnings) in the dispatcher's format
        assert all(line.startswith("mfstein ") for line in lines), f"{cmd}:\n{proc.stderr}"


def assert_nothing_half_written(directory: Path) -> None:
    leftovers = [p.name for p in directory.rglob("*") if p.name.endswith((".tmp", ".probe"))]
    assert not leftovers, f"half-written files left behind: {leftovers}"


# ------------------------------------------------------------------ the probes
SIM = ["--steps", "2000", "--reps", "2", "--workers", "1", "--no-progress"]
TABLE = ["--gamma", "0.1", "--alpha", "0.05", "--sim-steps", "4000", "--reps", "2"]
TABLE += ["--workers", "1", "--no-progress"]

PROBES: list[tuple[list[str], int]] = [
    # hangs: every size that drives cost has a limit or a cost estimate
    (["bound", "--lam", "0.9", "--N", "10", "--b", "1000000"], INPUT),
    (["bound", "--lam", "0.9", "--N", "10", "--dps", "100000"], INPUT),
    (["bound", "--lam", "0.9", "--N", "10", "--b", "5", "--dps", "1000000000"], INPUT),
    (["bound", "--lam", "1.1", "--N", "10", "--b", "2000"], INPUT),  # no truncation: estimate
    (["derive", "--b", "1000000"], INPUT),
    (["derive", "--b", "300"], INPUT),
    (["derive", "--b", "40", "--show", "kron"], INPUT),
    (["derive", "--b", "3", "--d", "1000000"], INPUT),
    (["refined", "--lam", "0.9", "--N", "10", "--b", "1000000"], INPUT),
    (["table", *TABLE, "--N", "10", "--b", "1000000"], INPUT),
    (["exact", "--N", "2", "--lam", "0.9", "--b", "1000000"], INPUT),
    (["exact", "--N", "30000000", "--lam", "0.9", "--b", "1"], INPUT),
    (["simulate", "--N", "10", "--lam", "0.9", "--b", "5", "--d", "1000000", *SIM], INPUT),
    (["bound", "--lam", "0.5", "--N", "10", "--d", "1"], INPUT),
    (["bound", "--lam", "0.9", "--N", "10", "--d", "1"], INPUT),
    (["lemmas", "--lam", "0.5", "--N", "10", "--d", "1"], INPUT),
    (["lemmas", "--lam", "0.9", "--N", "10", "--d", "1"], INPUT),
    (["table", *TABLE, "--N", "10", "--d", "1"], INPUT),
    # tracebacks
    (["bound", "--lam", "1e300", "--N", "10"], INPUT),
    (["refined", "--lam", "1e300", "--N", "10"], INPUT),
    (["simulate", "--N", "10", "--lam", "1e300", "--b", "5", *SIM], INPUT),
    (["exact", "--N", "10", "--lam", "1e300", "--b", "2"], INPUT),
    (["exact", "--N", "100000", "--lam", "0.9", "--b", "200"], INPUT),
    (["simulate", "--N", "10", "--lam", "0.9", "--b", "5", "--steps", "1e30"], INPUT),
    (["simulate", "--N", "10", "--lam", "0.9", "--b", "5", "--scheduler", "bogus", *SIM], INPUT),
    (["simulate", "--N", "2147483648", "--lam", "0.9", "--b", "5", *SIM], INPUT),
    (["simulate", "--N", "2000000000", "--lam", "0.9", "--b", "5", *SIM], INPUT),  # memory
    (["simulate", "--N", "10", "--lam", "0.9", "--b", "5", *SIM[:-3], "--workers", "10**9"], INPUT),
    (["bound", "--lam", "0.9", "--N", "10", "--M", "diag:1,nan"], INPUT),
    (["bound", "--lam", "nan", "--N", "10"], INPUT),
    (["bound", "--lam", "-1", "--N", "10"], INPUT),
    (["bound", "--lam", "1e-400", "--N", "10", "--b", "3"], OK),
    # valid input refused
    (["exact", "--N", "10", "--lam", "0.9", "--b", "3", "--without-replacement", "--d", "8"], OK),
    (["lemmas", "--list"], OK),
    (["lemmas", "--lam", "0.9", "--N", "10", "--only", ","], INPUT),
    # quirks
    (["lemmas", "--lam", "0.9", "--N", "1e15", "--only", "lemma5"], OK),
    (["lemmas", "--lam", "0.9", "--N", "1e16", "--only", "lemma5"], OK),
    (["lemmas", "--lam", "0.9", "--N", "1e101", "--only", "lemma5"], INPUT),
    (["bound", "--gamma", "1", "--alpha", "0", "--N", "10"], INPUT),
]


SLOW_PROBES: list[tuple[list[str], int]] = [
    (["exact", "--N", "10", "--lam", "0.9", "--b", "3", "--without-replacement", "--d", "9"], OK),
    (["refined", "--lam", "1e-400", "--N", "10", "--b", "4", "--dps", "40"], OK),
    (["table", *TABLE, "--N", "10,10"], OK),
]


@pytest.mark.slow
@pytest.mark.parametrize("argv, expected", SLOW_PROBES, ids=[" ".join(a) for a, _ in SLOW_PROBES])
def test_slow_probe(argv: list[str], expected: int, tmp_path: Path) -> None:
    proc = run_cli(argv, tmp_path)
    assert_contract(proc, expected)
    assert_nothing_half_written(tmp_path)


#: the first probe of each command runs as a process, the others in this process
AS_PROCESS = {[a[0] for a, _ in PROBES].index(command) for command in {a[0] for a, _ in PROBES}}


@pytest.mark.parametrize(
    "argv, expected, as_process",
    [(a, e, i in AS_PROCESS) for i, (a, e) in enumerate(PROBES)],
    ids=[" ".join(a) for a, _ in PROBES],
)
def test_probe(argv: list[str], expected: int, as_process: bool, tmp_path: Path, capsys) -> None:
    proc = run_cli(argv, tmp_path) if as_process else run_here(argv, tmp_path, capsys)
    assert_contract(proc, expected)
    assert_nothing_half_written(tmp_path)


def test_gamma_one_alpha_zero_names_the_rate(tmp_path: Path, capsys) -> None:
    proc = run_here(["bound", "--gamma", "1", "--alpha", "0", "--N", "10"], tmp_path, capsys)
    assert_contract(proc, INPUT)
    assert "mpf(" not in proc.stderr and "lam = 1 - gamma/N^alpha = 0" in proc.stderr


def test_size_refusals_say_what_would_be_needed(tmp_path: Path, capsys) -> None:
    proc = run_here(["bound", "--lam", "0.9", "--N", "10", "--d", "1"], tmp_path, capsys)
    assert "would need about 700 levels" in proc.stderr and "give an integer b" in proc.stderr
    proc = run_here(["exact", "--N", "2", "--lam", "0.9", "--b", "1000000"], tmp_path, capsys)
    assert "500,001,500,001 states" in proc.stderr


def test_duplicate_n_is_computed_once_everywhere(tmp_path: Path, capsys) -> None:
    proc = run_here(["bound", "--lam", "0.9", "--N", "10,10,1e1", "--json"], tmp_path, capsys)
    assert_contract(proc, OK)
    assert [r["N"] for r in json.loads(proc.stdout)["results"]] == [10]


def test_refined_prints_no_digit_it_does_not_have(tmp_path: Path, capsys) -> None:
    """W at lam = 1e-10 has entries far below its norm-wise error: printed as 0,
    never as a wrong (e.g. negative) number; the bound is stated."""
    argv = ["refined", "--lam", "1e-10", "--N", "10", "--b", "3", "--json"]
    proc = run_here(argv, tmp_path, capsys)
    assert_contract(proc, OK)
    r = json.loads(proc.stdout)["results"][0]
    err = float(r["W_abs_error"])
    for row in r["W"]:
        for x in row:
            assert x == "0" or float(x) > err  # W is a covariance of positive-ish levels
    assert r["W"][2][2] == "0"
    proc = run_here(["refined", "--lam", "1e-300", "--N", "10", "--b", "3"], tmp_path, capsys)
    assert_contract(proc, OK)
    w_column = [line.split()[-1] for line in proc.stdout.splitlines()[2:5]]
    assert all(not w.startswith("-") for w in w_column), proc.stdout
    assert "entries without a correct digit print as 0" in proc.stdout


@pytest.mark.slow
def test_without_replacement_answers_agree_with_direct_count(tmp_path: Path) -> None:
    proc = run_cli(
        ["exact", "--N", "10", "--lam", "0.9", "--b", "3", "--without-replacement", "--d", "10"],
        tmp_path,
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    # d = N: every arrival sees all servers, i.e. join-the-shortest-queue
    assert "N E||S - s*||^2" in proc.stdout


def test_plot_into_unwritable_places_fails_before_the_run(tmp_path: Path, capsys) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for target in (blocker / "plot.png", Path("/proc/mfstein-no/plot.png")):
        t0 = time.monotonic()
        proc = run_here(["table", *TABLE, "--N", "10", "--plot", str(target)], tmp_path, capsys)
        assert_contract(proc, INPUT)
        assert time.monotonic() - t0 < deadline(15)  # refused before the simulation
    assert blocker.read_text() == "x"
    assert_nothing_half_written(tmp_path)


# ----------------------------------------------------------------- library agreement
def test_library_raises_parameter_error_not_value_error() -> None:
    import numpy as np

    from mfstein.families.supermarket.sweep import constant_float64
    from mfstein.ground.errors import ParameterError
    from numeric import bound
    from numeric.lemmas import check

    with pytest.raises(ParameterError):
        constant_float64("abc", 5)
    with pytest.raises(ParameterError):
        bound("0.9", 2, M=np.diag([1.0, np.nan]))
    with pytest.raises(ParameterError):
        bound("0.9", "inf", dps=10**9)
    with pytest.raises(ParameterError):
        check([], N=[10], lam="0.9")  # the CLI refuses an empty --only too


@pytest.mark.slow
def test_exact_answer_of_the_garbage_case_passes_its_residual_check() -> None:
    """solve_exact(320, "0.9", 2, 3) once ran 86 s and returned n_mse = 14890; a
    returned result now always meets its residual target."""
    from numeric.exact import solve_exact

    r = solve_exact(320, "0.9", 2, 3)
    assert r.residual <= 1e-11
    assert 0.5 < r.n_mse < 1.0  # the mean field's c at b = 2, d = 3 is of this size


def test_exact_refuses_sizes_it_cannot_solve_before_work() -> None:
    from mfstein.ground.errors import ParameterError
    from numeric.exact import solve_exact

    t0 = time.monotonic()
    with pytest.raises(ParameterError, match="states"):
        solve_exact(500, "0.9", 3, 3)  # 21.1 million states (the limit is 20 million)
    with pytest.raises(ParameterError, match="states"):
        solve_exact(2, "0.9", 10**6)  # refused before the model is built symbolically
    assert time.monotonic() - t0 < deadline(5)


def test_exact_never_returns_a_result_that_failed_its_residual_check(monkeypatch) -> None:
    """The chain solver's answer is real; only its residual is made to miss the
    target (a stalled iterative solve cannot be produced cheaply on purpose)."""
    import importlib

    from mfstein.ground.errors import NumericalError

    general = importlib.import_module("numeric.exact.general")
    exact_solve = importlib.import_module("mfstein.families.supermarket.exact")
    real = general.Chain.solve

    def stalled(self, *args, **kwargs):
        s = real(self, *args, **kwargs)
        return general.SolvedChain(s.reach, s.pi, 1e-3, s.solver, s.iterations, s.exit_rate)

    monkeypatch.setattr(general.Chain, "solve", stalled)
    with pytest.raises(NumericalError, match="residual"):
        exact_solve.solve_exact(5, "0.9", 2)


# ------------------------------------------------------------------------- checkpoints
CK_ARGS = ["simulate", "--N", "20", "--lam", "0.9", "--b", "6", "--steps", "20000"]
CK_ARGS += ["--reps", "2", "--batches", "4", "--workers", "1", "--no-progress", "--json"]


@pytest.fixture(scope="module")
def good_checkpoint(tmp_path_factory) -> tuple[Path, dict]:
    d = tmp_path_factory.mktemp("ck")
    path = d / "run.json"
    proc = run_cli([*CK_ARGS, "--checkpoint", str(path)], d)
    assert_contract(proc, OK)
    return path, json.loads(path.read_text())


def _damaged(payload: dict, how: str):
    p = json.loads(json.dumps(payload))
    if how == "list":
        return []
    if how == "null":
        return None
    if how == "short-reps":
        p["reps"] = p["reps"][:1]
    elif how == "bad-batch":
        p["reps"][0]["batches"][0] = "x"
    elif how == "bad-rng":
        p["reps"][0]["state"]["rng"]["data"] = [0, 0, 0, 0]
    elif how == "hand-cut":  # batches removed, RNG state kept: a different answer
        p["reps"][0]["batches"] = p["reps"][0]["batches"][:1]
    elif how == "bad-batch-rechecksummed":
        from sim.runner import _checksum

        p["reps"][1]["batches"][0]["mean"] = [1.0]
        p["checksum"] = _checksum(p["config"], p["reps"])
    elif how == "bad-rng-rechecksummed":
        from sim.runner import _checksum

        p["reps"][0]["state"]["rng"]["data"] = [0, 0, 0, 0]
        p["checksum"] = _checksum(p["config"], p["reps"])
    elif how == "no-checksum":
        del p["checksum"]
    return p


DAMAGE = [
    "list",
    "null",
    "short-reps",
    "bad-batch",
    "bad-rng",
    "hand-cut",
    "bad-batch-rechecksummed",
    "bad-rng-rechecksummed",
    "no-checksum",
]


@pytest.mark.parametrize("how", DAMAGE)
def test_damaged_checkpoint_is_refused_in_one_sentence(
    how, good_checkpoint, tmp_path, capsys
) -> None:
    _, payload = good_checkpoint
    path = tmp_path / "ck.json"
    text = json.dumps(_damaged(payload, how))
    path.write_text(text)
    proc = run_here([*CK_ARGS, "--checkpoint", str(path)], tmp_path, capsys)
    assert_contract(proc, INPUT)
    assert "checkpoint" in proc.stderr
    assert path.read_text() == text  # the user's file is left as it was


@pytest.mark.slow
def test_intact_checkpoint_resumes_to_the_same_answer(good_checkpoint, tmp_path) -> None:
    _path, payload = good_checkpoint
    copy = tmp_path / "ck.json"
    copy.write_text(json.dumps(payload))
    again = run_cli([*CK_ARGS, "--checkpoint", str(copy)], tmp_path)
    fresh = run_cli(CK_ARGS, tmp_path)
    assert_contract(again, OK)
    assert json.loads(again.stdout)["n_mse"] == json.loads(fresh.stdout)["n_mse"]


def test_checkpoint_in_unwritable_place_fails_before_any_batch(tmp_path, capsys) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    t0 = time.monotonic()
    proc = run_here([*CK_ARGS, "--checkpoint", str(blocker / "ck.json")], tmp_path, capsys)
    assert_contract(proc, INPUT)
    assert time.monotonic() - t0 < deadline(15)
    proc = run_here([*CK_ARGS, "--checkpoint", "/proc/mfstein-ck.json"], tmp_path, capsys)
    assert_contract(proc, INPUT)
    assert_nothing_half_written(tmp_path)


# ------------------------------------------------------------------------------ Ctrl-C
LONG = ["simulate", "--N", "100", "--lam", "0.9", "--b", "8", "--steps", "4e9", "--reps", "2"]
LONG += ["--batches", "400", "--no-progress"]
#: LONG with a tenth of the events: the warm-up (a tenth of them, the first unit of work
#: and the first checkpoint) takes a tenth of the time, and the batches still run for
#: tens of seconds after it.
SHORTER = [*LONG[: LONG.index("--steps") + 1], "4e8", *LONG[LONG.index("--steps") + 2 :]]


def _interrupt(argv: list[str], cwd: Path, delay: float, presses: int, wait_for: Path | None):
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "mfstein", *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    until = time.monotonic() + deadline(60)
    if wait_for is not None:
        while not wait_for.exists() and time.monotonic() < until and proc.poll() is None:
            time.sleep(0.05)
    time.sleep(delay)
    t0 = time.monotonic()
    for _ in range(presses):
        proc.send_signal(signal.SIGINT)
        time.sleep(0.1)
    try:
        out, err = proc.communicate(timeout=deadline(15))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"{presses} x Ctrl-C: the process hung")
    return proc.returncode, out, err, time.monotonic() - t0


@pytest.mark.parametrize("workers", [pytest.param("1", marks=pytest.mark.slow), "2"])
def test_ctrl_c_twice_after_a_batch_ends_promptly_and_keeps_the_batches(workers, tmp_path):
    ck = tmp_path / "ck.json"
    rc, _out, err, seconds = _interrupt(
        [*SHORTER, "--workers", workers, "--checkpoint", str(ck)], tmp_path, 0.3, 2, ck
    )
    assert rc == 130, err
    assert "Traceback" not in err and "unlocked lock" not in err
    assert seconds < deadline(10)
    saved = json.loads(ck.read_text())
    assert sum(r["warm"] + len(r["batches"]) for r in saved["reps"]) >= 1
    assert_nothing_half_written(tmp_path)


def _on_terminal(argv: list[str], cwd: Path):
    """Start ``mfstein`` with standard error on a pseudo-terminal (so that it shows its
    progress bar); returns the process, the terminal's master end, the list the bytes
    written there are collected in and the thread collecting them (it ends when every
    writer has closed the terminal)."""
    import fcntl
    import pty
    import struct
    import termios
    import threading

    master, slave = pty.openpty()
    # a new terminal is 0 columns wide, and tqdm draws no bar in 0 columns
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 200, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "mfstein", *argv],
        cwd=cwd,
        env={**os.environ, "PYTHONWARNINGS": "ignore", "COLUMNS": "200"},
        stdout=subprocess.PIPE,
        stderr=slave,
        text=True,
    )
    os.close(slave)  # the child's copies remain: reading ends when the last one closes
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: every writer is gone
                break
            if not data:
                break
            chunks.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return proc, master, chunks, reader


#: How the one-line notice of a first compilation starts
#: (:func:`mfstein.ground.jit.announce_compile`).
COMPILING = "mfstein: compiling "


def _terminal_lines(raw: bytes) -> list[str]:
    """The non-blank lines a terminal shows for ``raw``: a progress bar rewrites its line
    with carriage returns, so of each line only what follows the last one remains."""
    text = raw.decode(errors="replace").replace("\r\n", "\n")
    shown = (line.rsplit("\r", 1)[-1] for line in text.split("\n"))
    return [line for line in shown if line.strip()]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a pseudo-terminal")
@pytest.mark.parametrize("delay", [0.0, 0.5, 1.0])
def test_ctrl_c_twice_before_any_batch_ends_promptly(delay, tmp_path):
    """Ctrl-C twice, ``delay`` seconds after the run has started (its progress bar's first
    line; the warm-up, the first unit of work, lasts several seconds): the run stops
    promptly with one line and status 130.  (Ctrl-C during Python's own start-up, before
    mfstein runs, is outside mfstein's reach; during mfstein's start-up it is tested in
    test_signals_and_messages.py.)"""
    argv = [a for a in LONG if a != "--no-progress"]
    proc, master, chunks, reader = _on_terminal([*argv, "--workers", "2"], tmp_path)
    try:
        until = time.monotonic() + deadline(120)
        while b"batch" not in b"".join(chunks):  # tqdm's unit: the bar is on the screen
            assert proc.poll() is None, b"".join(chunks).decode(errors="replace")
            assert time.monotonic() < until, "no progress bar within the deadline"
            time.sleep(0.02)
        time.sleep(delay)
        t0 = time.monotonic()
        for _ in range(2):
            proc.send_signal(signal.SIGINT)
            time.sleep(0.1)
        try:
            proc.communicate(timeout=deadline(15))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            pytest.fail("2 x Ctrl-C: the process hung")
        seconds = time.monotonic() - t0
        reader.join(timeout=deadline(5))  # the rest written, up to the last writer's end
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    err = b"".join(chunks).decode(errors="replace")
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "unlocked lock" not in err
    # one line besides the first-compile notice of an empty cache
    # (mfstein.ground.jit.announce_compile)
    shown = [ln for ln in _terminal_lines(b"".join(chunks)) if not ln.startswith(COMPILING)]
    assert len(shown) <= 1, err
    assert seconds < deadline(10)


# --------------------------------------------------------- the class: property-based
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_garbage = st.sampled_from(
    ["", "nan", "inf", "-inf", "-1", "0", "1e400", "1e-400", "abc", "1/0", "0x10", "1e30", "9" * 40]
)
_int_text = st.one_of(
    st.integers(min_value=-5, max_value=40).map(str),
    st.sampled_from(["10**9", "1e6", "2147483648", "1e30", "1.5", "3.0"]),
    _garbage,
)
_lam_text = st.one_of(
    st.floats(min_value=1e-6, max_value=3.0).map(lambda x: f"{x:.6g}"),
    st.sampled_from(["1", "0.999999", "1e300", "1e-300", "2/3", "1e6"]),
    _garbage,
)


#: Seconds per property-based example: every refusal is immediate and every accepted
#: example is small (a hang shows up as a failure, not as a slow pass).
EXAMPLE_TIMEOUT = 20.0


def _contract_any(proc: subprocess.CompletedProcess) -> None:
    assert_contract(proc, (OK, INPUT, ENV))


_small_or_bad = st.one_of(
    st.integers(min_value=-2, max_value=12).map(str),
    st.sampled_from(["10**9", "1e6", "2147483648", "1e30", "1.5", "3.0", "auto", "inf"]),
    _garbage,
)


@settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
@given(lam=_lam_text, N=_int_text, b=_small_or_bad, d=_small_or_bad)
def test_bound_numeric_options_never_break(lam, N, b, d, tmp_path_factory, capsys) -> None:
    cwd = tmp_path_factory.mktemp("h")
    args = ["bound", "--lam", lam, "--N", N, "--b", b, "--d", d, "--dps", "20"]
    _contract_any(run_here(args, cwd, capsys, timeout=EXAMPLE_TIMEOUT))
    assert_nothing_half_written(cwd)


@settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
@given(N=_int_text, b=_int_text, d=_int_text, steps=_int_text, reps=_int_text, lam=_lam_text)
def test_simulate_numeric_options_never_break(N, b, d, steps, reps, lam, tmp_path_factory, capsys):
    cwd = tmp_path_factory.mktemp("h")
    args = ["simulate", "--N", N, "--lam", lam, "--b", b, "--d", d, "--steps", steps]
    args += ["--reps", reps, "--workers", "1", "--no-progress", "--batches", "2"]
    proc = run_here(args, cwd, capsys, timeout=EXAMPLE_TIMEOUT)
    _contract_any(proc)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(N=_int_text, b=_int_text, d=_int_text, lam=_lam_text)
def test_exact_numeric_options_never_break(N, b, d, lam, tmp_path_factory) -> None:
    cwd = tmp_path_factory.mktemp("h")
    _contract_any(run_cli(["exact", "--N", N, "--lam", lam, "--b", b, "--d", d], cwd))


_fraction_text = st.one_of(
    st.floats(min_value=1e-6, max_value=0.999).map(lambda x: f"{x:.4g}"),
    st.sampled_from(["0.5", "1", "1e-30", "2/3"]),
    _garbage,
)


@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
@given(N=_int_text, b=_small_or_bad, d=_small_or_bad, xi=_fraction_text, gamma=_fraction_text)
def test_lemmas_numeric_options_never_break(N, b, d, xi, gamma, tmp_path_factory, capsys) -> None:
    cwd = tmp_path_factory.mktemp("h")
    args = ["lemmas", "--gamma", gamma, "--alpha", "0.5", "--N", N, "--b", b, "--d", d]
    args += ["--xi", xi, "--dps", "20", "--only", "lemma5"]
    _contract_any(run_here(args, cwd, capsys, timeout=EXAMPLE_TIMEOUT))
