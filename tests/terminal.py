"""Run ``mfstein`` with its standard error on a pseudo-terminal, as a user at a
terminal sees it: progress bars and stage lines are drawn only there."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def read(fd: int, seconds: float) -> str:
    """What the terminal ``fd`` shows within ``seconds`` ("" when nothing, or closed)."""
    ready, _, _ = select.select([fd], [], [], seconds)
    if not ready:
        return ""
    try:
        return os.read(fd, 65536).decode(errors="replace")
    except OSError:  # the terminal closed: the process has ended
        return ""


@contextmanager
def on_terminal(argv: list[str], env: Mapping[str, str]) -> Iterator[tuple[subprocess.Popen, int]]:
    """``python -m mfstein argv`` with standard error on a new 24 x 120 pseudo-terminal
    (standard output a pipe): yields the process and the terminal's reading end;
    the process is killed if still running when the block ends."""
    master, slave = pty.openpty()
    # a new pseudo-terminal is 0 x 0, on which tqdm draws nothing: give it a size
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "mfstein", *argv],
        cwd=ROOT,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
    )
    os.close(slave)
    try:
        yield proc, master
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
