"""Issue 15, the remaining gaps: Ctrl-C during start-up, one-line warnings, and the
heavy-traffic rate that rounds to 1 named as such.

The signal and warning tests run the real ``mfstein`` in a subprocess (the signal
handling and the warning formatter live in the console entry point); the refusals of a
heavy-traffic rate are sentences of the dispatcher, and a library caller's view of the
signal state is that of the caller's process: these run in this process
(:func:`in_process.run_main`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from deadlines import deadline
from in_process import run_main

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "COLUMNS": "200", **extra}
    for name in ("PYTHONWARNINGS", "MFSTEIN_TRACEBACK"):
        env.pop(name, None)
    return env


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=_env(**env),
        capture_output=True,
        text=True,
        timeout=deadline(TIMEOUT),
    )


def _mfstein(*argv: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mfstein", *argv],
        cwd=ROOT,
        env=_env(**env),
        capture_output=True,
        text=True,
        timeout=deadline(TIMEOUT),
    )


# ------------------------------------------------------------------- Ctrl-C at start-up
def test_ctrl_c_right_after_the_package_is_imported_is_one_line() -> None:
    """The guard is the package's first code: a press right after ``import mfstein``
    (the console script's first import) ends with one line and 130."""
    code = (
        "import sys; sys.argv[0] = '/somewhere/bin/mfstein'\n"
        "import mfstein, os, signal, time\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "time.sleep(10)\n"
        "print('not interrupted')\n"
    )
    proc = _python(code)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.strip() == "mfstein: interrupted"
    assert "not interrupted" not in proc.stdout


def test_sigterm_during_start_up_is_one_line_and_143() -> None:
    """SIGTERM while the command starts ends like Ctrl-C there: one line, 128 + 15."""
    code = (
        "import sys; sys.argv[0] = '/somewhere/bin/mfstein'\n"
        "import mfstein, os, signal, time\n"
        "os.kill(os.getpid(), signal.SIGTERM)\n"
        "time.sleep(10)\n"
        "print('not terminated')\n"
    )
    proc = _python(code)
    assert proc.returncode == 143, proc.stderr
    assert proc.stderr.strip() == "mfstein: terminated"
    assert "not terminated" not in proc.stdout


def test_sigterm_is_handled_when_the_command_ignores_ctrl_c() -> None:
    """A background job of a script starts with SIGINT ignored; SIGTERM (a batch
    system's stop) must still reach mfstein's handler (status 143, one line), and
    SIGINT stays ignored."""
    code = (
        "import signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "sys.argv[0] = '/somewhere/bin/mfstein'\n"
        "import mfstein.cli as cli, os\n"
        "class Parser:\n"
        "    def parse_args(self, argv):\n"
        "        import argparse\n"
        "        return argparse.Namespace(command='run', handler=work)\n"
        "def work(args):\n"
        "    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    import time; time.sleep(10)\n"
        "    print('not terminated')\n"
        "cli.build_parser = Parser\n"
        "sys.exit(cli.main([]))\n"
    )
    proc = _python(code)
    assert proc.returncode == 143, (proc.returncode, proc.stderr)
    assert proc.stderr.strip() == "mfstein run: terminated"
    assert "not terminated" not in proc.stdout


def test_library_import_leaves_ctrl_c_alone() -> None:
    """Imported by another program, mfstein installs nothing: Ctrl-C raises
    ``KeyboardInterrupt`` there as usual."""
    code = (
        "import mfstein, os, signal, time\n"
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGINT); time.sleep(10)\n"
        "except KeyboardInterrupt:\n"
        "    print('caught')\n"
    )
    proc = _python(code)
    assert proc.returncode == 0 and proc.stdout.strip() == "caught", proc.stderr


def test_ctrl_c_while_the_parser_is_built_is_one_line() -> None:
    """A press while the subcommands are registered (the slowest part of start-up
    before any work) ends with one line and 130, in the console script and for a
    library caller of ``mfstein.cli.main`` alike."""
    for argv0 in ("/somewhere/bin/mfstein", "caller.py"):
        code = (
            f"import sys; sys.argv = [{argv0!r}, 'bound', '--lam', '0.9', '--N', '10']\n"
            "import os, signal, importlib\n"
            "import mfstein.cli as cli\n"
            "real = importlib.import_module\n"
            "def import_module(name, *a):\n"
            "    if name == 'mfstein.cli.bound':\n"
            "        os.kill(os.getpid(), signal.SIGINT)\n"
            "    return real(name, *a)\n"
            "cli.importlib.import_module = import_module\n"
            "sys.exit(cli.main())\n"
        )
        proc = _python(code)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert proc.returncode == 130, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
        assert proc.stderr.strip().endswith("interrupted")


def test_an_error_raised_because_of_ctrl_c_is_reported_as_the_interruption() -> None:
    """NumPy turns a Ctrl-C inside its C extension's import into an ImportError;
    the dispatcher reports the press, not an internal error."""
    from mfstein.cli import _caused_by_interrupt

    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise ImportError("multiarray failed to import") from exc
    except ImportError as exc:
        assert _caused_by_interrupt(exc)
    assert not _caused_by_interrupt(ImportError("no numpy"))


# ------------------------------------------------------------------ one-line warnings
def test_a_warning_is_one_line(tmp_path: Path) -> None:
    """A damaged kernel cache is regenerated with a warning: one line in the
    dispatcher's format (not Python's two-line ``file:line: RuntimeWarning``)."""
    cache = tmp_path / "cache"
    argv = ("bound", "--lam", "0.9", "--N", "10", "--b", "2")
    first = _mfstein(*argv, MFSTEIN_CACHE_DIR=str(cache))
    assert first.returncode == 0, first.stderr
    files = list(cache.glob("*.py"))
    assert files
    for f in files:
        f.write_text(f.read_text()[:50])
    again = _mfstein(*argv, MFSTEIN_CACHE_DIR=str(cache))
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout  # regenerated: the same answer
    lines = again.stderr.strip().splitlines()
    # one warning however many files were damaged (mfstein.ground.cache.report_damaged)
    assert len(files) >= 1 and len(lines) == 1, again.stderr
    assert lines[0].startswith("mfstein bound: warning: damaged cache files in ")


# ------------------------------------------------------------ a rate that rounds to 1
def test_heavy_traffic_rate_that_rounds_to_one_is_named(capsys) -> None:
    """gamma/N^alpha = 5e-100 is below 30 digits: lam is 1 in the working precision;
    the sentence says so (not "lam must be < mu") and what would work."""
    for cmd in ("lemmas", "bound"):
        proc = run_main(
            [cmd, "--gamma", "0.5", "--alpha", "0.99", "--N", "1e100"],
            ROOT,
            capsys,
            timeout=TIMEOUT,
        )
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in proc.stderr
        msg = lines[0]
        assert "lam must be < mu" not in msg
        assert "1 - 5.0e-100 at N = 1e+100" in msg and "to 30 digits" in msg
        assert "give an integer b" in msg and "N <= 9.98e+29" in msg


def test_rate_just_inside_the_working_precision_is_not_refused_by_that_check(capsys) -> None:
    """The refusal is exactly "lam rounds to 1": with an integer b the same grid is
    computed, and a size whose gamma/N^alpha stays above 10^-dps is not named."""
    from mfstein.ground.errors import ParameterError
    from numeric.precision import check_heavy_traffic_below_one

    check_heavy_traffic_below_one("0.5", "0.99", [10**29], 30)  # 9.7e-30 >= 1e-30
    with pytest.raises(ParameterError, match=r"1 - 1\.02e-31 at N = 1e\+31"):
        check_heavy_traffic_below_one("0.5", "0.99", [10, 10**31], 30)
    argv = ["--gamma", "0.5", "--alpha", "0.99", "--N", "1e100", "--b", "3", "--only", "lemma5"]
    proc = run_main(["lemmas", *argv], ROOT, capsys, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr


def test_missing_half_of_the_heavy_traffic_pair_is_named(capsys) -> None:
    proc = run_main(["lemmas", "--alpha", "0.99", "--N", "1e100"], ROOT, capsys, timeout=TIMEOUT)
    assert proc.returncode == 2
    assert "gamma is missing" in proc.stderr


def test_signal_module_state_is_restored_for_library_callers(capsys) -> None:
    """``mfstein.cli.main`` called from Python (here, this test's process) leaves SIGINT
    and the warning display as it found them."""
    import signal
    import warnings

    before = (signal.getsignal(signal.SIGINT), warnings.showwarning)
    proc = run_main(["lemmas", "--list"], ROOT, capsys, timeout=TIMEOUT)
    after = (signal.getsignal(signal.SIGINT), warnings.showwarning)
    assert proc.returncode == 0, proc.stderr
    assert before == after


def test_a_press_recorded_by_an_earlier_command_does_not_stop_the_next(capsys) -> None:
    """``mfstein.cli.main`` called again in the same process (this test's): a Ctrl-C
    recorded during the first command is not raised by the second one's polls
    (``signals.check``)."""
    import signal

    from mfstein.ground import signals

    signals.note(signal.SIGINT)  # as the handler of an interrupted first command
    try:
        proc = run_main(["exact", "--N", "4", "--lam", "0.9", "--b", "2"], ROOT, capsys, TIMEOUT)
        assert (proc.returncode, signals.stop_requested()) == (0, False), proc.stderr
    finally:
        signals.forget()  # a failure here must not stop the next test of this process


def test_a_press_after_an_interrupted_command_returned_still_exits_130() -> None:
    """A command that kept what a Ctrl-C left returns 130 itself (``simulate``
    saves its completed batches); a second press landing after ``main`` returned,
    on the way out, must not turn that into death by the signal (status -2, no
    message): ``main`` ignores further presses once the status is 130."""
    code = (
        "import argparse, os, signal, sys\n"
        "import mfstein.cli as cli\n"
        "class Parser:\n"
        "    def parse_args(self, argv):\n"
        "        return argparse.Namespace(command='run', handler=lambda args: 130)\n"
        "cli.build_parser = Parser\n"
        "status = cli.main([])\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "sys.exit(status)\n"
    )
    proc = _python(code)
    assert proc.returncode == 130, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr


#: A stand-in ``mfstein`` command (the start-up guard installed, as for the console
#: script) whose subcommand prints ``done``; the test appends what happens at exit.
_FINISHED_COMMAND = (
    "import sys; sys.argv[0] = '/somewhere/bin/mfstein'\n"
    "import argparse, atexit, os, signal, time\n"
    "import mfstein.cli as cli\n"
    "class Parser:\n"
    "    def parse_args(self, argv):\n"
    "        return argparse.Namespace(command='run', handler=lambda a: print('done'))\n"
    "cli.build_parser = Parser\n"
)


@pytest.mark.parametrize(
    ("signame", "status", "word"), [("SIGTERM", 143, "terminated"), ("SIGINT", 130, "interrupted")]
)
def test_a_signal_while_a_finished_command_exits_is_one_line(signame, status, word) -> None:
    """After the command printed its result, a signal while it leaves (here from an
    exit function: they still run) ends it at once: the output kept, one line,
    128 + n -- not a traceback, and not death by the signal."""
    code = _FINISHED_COMMAND + (
        f"atexit.register(lambda: (os.kill(os.getpid(), signal.{signame}), time.sleep(10)))\n"
        "cli.main([])\n"
        "print('main returned')\n"
    )
    proc = _python(code)
    assert proc.returncode == status, (proc.returncode, proc.stderr)
    assert proc.stdout.strip() == "done"
    assert proc.stderr.strip() == f"mfstein run: {word}"


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_the_command_leaves_before_the_interpreter_is_torn_down(signame) -> None:
    """CPython resets every Python signal handler to the default action before it
    tears the modules down (tenths of a second with SymPy and numba loaded), so a
    signal then killed a finished command by the signal (-15/-2, no line; the signal
    sweep's last failures).  The command now ends before that stage: an object whose
    finaliser sends the signal at teardown never gets to send it."""
    # the collector is off before the cycle is made: an automatic collection between
    # `del cycle` and `gc.disable()` (how many objects an import allocates depends on
    # sys.path, e.g. benchmarks/ added by suite_profile.py) ran the finaliser before
    # the command, and the test failed by its own set-up
    code = _FINISHED_COMMAND + (
        "class Late:\n"
        "    def __del__(self):\n"
        f"        os.kill(os.getpid(), signal.{signame}); time.sleep(10)\n"
        "import gc; gc.disable()\n"
        "cycle = [Late()]; cycle.append(cycle)\n"  # collected at teardown only
        "del cycle\n"
        "cli.main([])\n"
    )
    proc = _python(code)
    assert (proc.returncode, proc.stdout.strip(), proc.stderr.strip()) == (0, "done", "")


def test_the_command_runs_exit_functions_and_flushes_its_output(tmp_path) -> None:
    """Leaving by itself, the command still runs the :mod:`atexit` functions (e.g. the
    removal of a private cache directory) and writes all of its buffered output."""
    marker = tmp_path / "ran"
    code = _FINISHED_COMMAND + (
        f"atexit.register(lambda: open({str(marker)!r}, 'w').close())\n"
        "sys.stdout = open(sys.stdout.fileno(), 'w', buffering=1 << 16, closefd=False)\n"
        "cli.main([])\n"
    )
    proc = _python(code)
    assert (proc.returncode, proc.stdout.strip(), proc.stderr) == (0, "done", "")
    assert marker.exists()
