"""Issue 36, "no input breaks it (IV)": Ctrl-C or SIGTERM while numba compiles.

A first run of ``exact`` with an empty cache compiles its kernels for seconds;
a signal that landed inside numba's compiler or LLVM printed a traceback of a
ctypes callback or of llvmlite before ``interrupted`` (4 tries in 10), or the
process died by SIGSEGV on its way out.  The signal is now held back until the
compilation returns (:func:`mfstein.ground.signals.deferred`).

Each try runs the real ``mfstein`` with standard error on a pseudo-terminal (the
compile announcement is printed only there) and an empty cache, waits for the
announcement and then for the n-th compiled function to be stored (an index file
in the cache: the compiler is at work), sends the signal, and checks the end:
status 130 or 143, the announcement and one line, nothing else.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest
from deadlines import deadline
from terminal import on_terminal, read

ROOT = Path(__file__).resolve().parents[2]
ARGV = ["exact", "--N", "150", "--lam", "0.9", "--b", "3"]
#: Seconds (of a quiet machine) to wait for the announcement and the cache files, and
#: for the exit: a guard against a hang only.
TIMEOUT = 60.0

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminal, signals")


def _signal_while_compiling(cache: Path, signum: int, stored: int) -> tuple[int | None, str]:
    """Run ``mfstein exact`` on an empty ``cache``; once the compile announcement is
    shown and ``stored`` functions are in the cache, send ``signum``; return the exit
    status and standard error."""
    env = {**os.environ, "COLUMNS": "120", "MFSTEIN_CACHE_DIR": str(cache)}
    for name in ("MFSTEIN_TRACEBACK", "PYTHONWARNINGS"):
        env.pop(name, None)
    err = ""
    with on_terminal(ARGV, env) as (proc, master):
        give_up = time.monotonic() + deadline(TIMEOUT)

        def compiling() -> bool:
            return "mfstein: compiling" in err and len(list(cache.rglob("*.nbi"))) >= stored

        while not compiling() and proc.poll() is None and time.monotonic() < give_up:
            err += read(master, 0.05)
        assert compiling(), f"no compilation seen: {err[-500:]!r}"
        proc.send_signal(signum)
        proc.wait(timeout=deadline(TIMEOUT))
        while chunk := read(master, 0.5):  # what is left on the terminal
            err += chunk
        return proc.returncode, err


def test_a_signal_while_numba_compiles_ends_in_one_line(tmp_path: Path) -> None:
    """Ctrl-C and SIGTERM at three stages of the first compilation."""
    tries = [(signal.SIGINT, 1), (signal.SIGTERM, 2), (signal.SIGINT, 4)]
    for n, (signum, stored) in enumerate(tries):
        status, err = _signal_while_compiling(tmp_path / f"cache{n}", signum, stored)
        lines = [ln.strip() for ln in re.split(r"[\r\n]+", err) if ln.strip()]
        word = "interrupted" if signum == signal.SIGINT else "terminated"
        assert status == 128 + signum, (signum, stored, status, err[-2000:])
        assert "Traceback" not in err and "Exception ignored" not in err, err[-2000:]
        assert len(lines) == 2, lines
        assert lines[0].startswith("mfstein: compiling") and lines[1] == f"mfstein exact: {word}"
