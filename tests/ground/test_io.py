"""atomic_write leaves no temporary file behind, even when the writer is killed (issue 23)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from deadlines import deadline

from mfstein.ground.io import atomic_write


def _unnamed_files_work(directory) -> bool:
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not os.path.isdir("/proc/self/fd"):
        return False
    try:
        os.close(os.open(directory, flag | os.O_WRONLY, 0o600))
    except OSError:
        return False
    return True


def test_the_file_being_written_has_no_name(tmp_path) -> None:
    if not _unnamed_files_work(tmp_path):
        pytest.skip("no O_TMPFILE here: the temporary file is a hidden .NAME.*.tmp")
    target = tmp_path / "ck.json"
    atomic_write(target, "old")
    seen: list[list[str]] = []

    def write(fh) -> None:
        fh.write(b"new")
        seen.append(sorted(os.listdir(tmp_path)))

    atomic_write(target, write)
    assert seen == [["ck.json"]]
    assert target.read_text() == "new" and sorted(os.listdir(tmp_path)) == ["ck.json"]


def test_kill_9_in_the_middle_of_a_write_leaves_nothing_behind(tmp_path) -> None:
    if not _unnamed_files_work(tmp_path):
        pytest.skip("no O_TMPFILE here: a kill -9 mid-write leaves the hidden temporary file")
    target = tmp_path / "ck.json"
    target.write_text("old")
    code = (
        "import sys, time\n"
        "from mfstein.ground.io import atomic_write\n"
        "def write(fh):\n"
        "    fh.write(b'half')\n"
        "    fh.flush()\n"
        "    print('writing', flush=True)\n"
        "    time.sleep(60)\n"
        "atomic_write(sys.argv[1], write)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(target)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "writing"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=deadline(30))
    time.sleep(0.05)
    assert sorted(os.listdir(tmp_path)) == ["ck.json"]
    assert target.read_text() == "old"


def test_without_unnamed_files_the_hidden_temporary_is_removed_on_error(
    tmp_path, monkeypatch
) -> None:
    """The portable route (no ``O_TMPFILE``): same content, mode and clean-up."""
    monkeypatch.delattr(os, "O_TMPFILE", raising=False)
    target = tmp_path / "out.txt"
    names: list[list[str]] = []

    def write(fh) -> None:
        fh.write(b"x")
        names.append(sorted(os.listdir(tmp_path)))
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(target, write)
    assert len(names[0]) == 1 and names[0][0].startswith(".out.txt.")  # the visible temporary
    assert os.listdir(tmp_path) == []
    atomic_write(target, "y")
    assert target.read_text() == "y" and os.listdir(tmp_path) == ["out.txt"]


@pytest.mark.parametrize("durable", [True, False])
def test_a_write_flushes_to_disk_only_when_durable(tmp_path, monkeypatch, durable) -> None:
    """``durable=False`` (a file its reader checks) writes the same file, atomically,
    without waiting for the disk; the default waits (one ``fsync``)."""
    flushed: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:  # the real flush, counted
        flushed.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    target = tmp_path / "record.json"
    target.write_text("old")
    atomic_write(target, "new content", durable=durable)
    assert target.read_text() == "new content" and os.listdir(tmp_path) == ["record.json"]
    assert len(flushed) == (1 if durable else 0)
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask
