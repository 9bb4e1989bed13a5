"""Model files under a time limit, and whatever they raise as one sentence (issue 23)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest
from deadlines import deadline

from derive.models import factory, load_model
from mfstein.ground.errors import ParameterError

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX time limit")


def _file(tmp_path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


def test_python_loop_on_import_stops_at_the_limit(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MFSTEIN_MODEL_TIMEOUT", "0.5")
    path = _file(tmp_path, "loop.py", "while True:\n    pass\n")
    t0 = time.monotonic()
    with pytest.raises(ParameterError, match=r"loop\.py could not be imported: it ran past"):
        factory(f"{path}:f")
    assert time.monotonic() - t0 < deadline(2.0)


def test_sleeping_factory_stops_at_the_limit(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MFSTEIN_MODEL_TIMEOUT", "0.5")
    path = _file(tmp_path, "slow.py", "import time\ndef f():\n    time.sleep(60)\n")
    t0 = time.monotonic()
    with pytest.raises(ParameterError, match=r"factory .*slow\.py:f.* ran past the time limit"):
        load_model(f"{path}:f")
    assert time.monotonic() - t0 < deadline(2.0)


def test_user_except_exception_does_not_swallow_the_limit(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MFSTEIN_MODEL_TIMEOUT", "0.5")
    body = """
    while True:
        try:
            sum(range(10**5))
        except Exception:
            pass
    """
    path = _file(tmp_path, "stubborn.py", body)
    with pytest.raises(ParameterError, match="ran past the time limit"):
        factory(f"{path}:f")


def test_the_limit_is_released_after_loading(tmp_path, monkeypatch) -> None:
    import signal

    monkeypatch.setenv("MFSTEIN_MODEL_TIMEOUT", "0.3")
    path = _file(tmp_path, "ok.py", "def f():\n    return 1\n")
    before = signal.getsignal(signal.SIGALRM)
    with pytest.raises(ParameterError, match="returned int"):
        load_model(f"{path}:f")
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    time.sleep(0.5)  # no alarm goes off later


@pytest.mark.parametrize(
    ("body", "call", "pattern"),
    [
        ("import sys\nsys.exit(3)\n", False, r"could not be imported: it called sys\.exit\(3\)"),
        ("raise SystemExit\n", False, r"could not be imported: it called sys\.exit\(None\)"),
        ("class B(BaseException):\n    pass\nraise B('x')\n", False, r"imported \(B: x\)"),
        ("raise GeneratorExit\n", False, r"imported \(GeneratorExit\)"),
        ("import sys\ndef f():\n    sys.exit('bye')\n", True, r"failed: it called sys\.exit"),
        ("class B(BaseException):\n    pass\ndef f():\n    raise B\n", True, r"failed \(B\)"),
        ("def f():\n    raise RuntimeError('r')\n", True, r"failed \(RuntimeError: r\)"),
    ],
)
def test_anything_raised_is_one_sentence_naming_the_file(tmp_path, body, call, pattern) -> None:
    path = _file(tmp_path, "bad.py", body)
    with pytest.raises(ParameterError, match=pattern) as info:
        load_model(f"{path}:f")
    assert "bad.py" in str(info.value) and "\n" not in str(info.value)


def test_keyboard_interrupt_still_means_ctrl_c(tmp_path) -> None:
    path = _file(tmp_path, "ctrlc.py", "def f():\n    raise KeyboardInterrupt\n")
    with pytest.raises(KeyboardInterrupt):
        load_model(f"{path}:f")


def test_bad_timeout_setting_is_one_sentence(tmp_path, monkeypatch) -> None:
    path = _file(tmp_path, "ok.py", "def f():\n    return 1\n")
    for bad in ("0", "-1", "soon", "nan"):
        monkeypatch.setenv("MFSTEIN_MODEL_TIMEOUT", bad)
        with pytest.raises(ParameterError, match="MFSTEIN_MODEL_TIMEOUT must be"):
            factory(f"{path}:f")


def test_cli_loop_in_python_is_exit_2_and_one_line(tmp_path) -> None:
    path = _file(tmp_path, "loop.py", "while True:\n    pass\n")
    env = {**__import__("os").environ, "MFSTEIN_MODEL_TIMEOUT": "1"}
    r = subprocess.run(
        [sys.executable, "-m", "mfstein", "solve", "--model", f"{path}:f", "--param", "lam=0.5"],
        capture_output=True,
        text=True,
        timeout=deadline(60),
        env=env,
    )
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "ran past the time limit of 1 s" in r.stderr


def test_loop_inside_c_code_is_stopped_by_the_watchdog(tmp_path) -> None:
    """``sum(itertools.count())`` never returns to the interpreter: no Python
    signal handler runs, the watchdog process prints the sentence and kills it."""
    from mfstein.ground.time_limit import GRACE_SECONDS

    path = _file(tmp_path, "cloop.py", "import itertools\nsum(itertools.count())\n")
    env = {**__import__("os").environ, "MFSTEIN_MODEL_TIMEOUT": "0.5"}
    code = f"from derive.models import factory\nfactory({path + ':f'!r})\n"
    t0 = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=deadline(60), env=env
    )
    took = time.monotonic() - t0
    assert r.returncode == -9
    assert r.stderr.count("\n") == 1 and "cloop.py could not be imported" in r.stderr
    assert took < deadline(0.5 + GRACE_SECONDS + 10)


# ------------------------------------------------- issue 36: code that ends the process
@pytest.mark.parametrize(
    ("body", "pattern"),
    [
        ("import os\ndef f():\n    os._exit(0)\n", r"bad\.py:f.* failed: it called os\._exit\(0\)"),
        ("import os\nos._exit(3)\n", r"bad\.py could not be imported: it called os\._exit\(3\)"),
        ("import posix\ndef f():\n    posix._exit(0)\n", r"failed: it called os\._exit\(0\)"),
        ("from os import _exit\ndef f():\n    _exit(0)\n", r"failed: it called os\._exit\(0\)"),
    ],
)
def test_os_exit_in_user_code_is_one_sentence(tmp_path, body, pattern) -> None:
    """``os._exit`` would end the process on the spot with status 0 and no word."""
    import os

    real = os._exit
    path = _file(tmp_path, "bad.py", body)
    with pytest.raises(ParameterError, match=pattern) as info:
        load_model(f"{path}:f")
    assert "\n" not in str(info.value)
    assert os._exit is real  # the guard is gone once the user's code returned


def test_a_forked_child_of_user_code_still_exits(tmp_path) -> None:
    """Only this process's ``os._exit`` is guarded: a child the factory forks leaves."""
    body = (
        "import os\ndef f():\n    pid = os.fork()\n    if pid == 0:\n        os._exit(7)\n"
        "    raise RuntimeError(f'child {os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])}')\n"
    )
    path = _file(tmp_path, "forks.py", body)
    with pytest.raises(ParameterError, match=r"RuntimeError: child 7"):
        load_model(f"{path}:f")


def test_cli_factory_calling_os_exit_is_exit_2_and_one_line(tmp_path) -> None:
    path = _file(tmp_path, "quits.py", "import os\ndef f():\n    os._exit(0)\n")
    argv = ["solve", "--model", f"{path}:f", "--param", "lam=0.5"]
    r = subprocess.run(
        [sys.executable, "-m", "mfstein", *argv],
        capture_output=True,
        text=True,
        timeout=deadline(60),
    )
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1 and "it called os._exit(0)" in r.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_watchdog_dies_with_the_process_it_watches(tmp_path) -> None:
    """A process that ends inside the block by a way no guard sees (the C library's
    ``_exit``) takes its watchdog with it: a caller reading its standard error gets
    the end at once (it waited the whole limit before), and no watchdog is left to
    kill a process number that may be reused."""
    import os
    import uuid

    marker = f"watchdog-{uuid.uuid4().hex}"
    code = (
        "import ctypes\nfrom mfstein.ground.time_limit import time_limited\n"
        f"with time_limited(3600, {marker!r}):\n"
        "    ctypes.CDLL(None)._exit(0)\n"
    )
    # a watchdog holding standard error open would make this wait an hour: time out
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=deadline(60)
    )
    assert r.returncode == 0 and r.stderr == ""

    def watchdogs() -> list[str]:
        found = []
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    if marker.encode() in fh.read():
                        found.append(entry)
            except OSError:
                continue
        return found

    assert watchdogs() == []
