"""Writing files atomically: a reader sees the old file or the new one, never half of one.

:func:`atomic_write` is the one implementation mfstein uses (simulation
checkpoints, plots, generated sources).  It writes to a temporary file in the
target's own directory (so that the final rename stays on one file system),
flushes it to disk, gives it the mode a freshly created file would have (the
process umask applied to ``0o666``, not ``mkstemp``'s ``0o600``) and moves it
into place with :func:`os.replace`, which is atomic on POSIX and Windows.  On
any error, Ctrl-C included, the temporary file is removed and the old file is
left untouched.  On Linux the temporary file has no name while it is written
(``O_TMPFILE``) and is named only for the instant of the rename, so that even
a ``kill -9`` mid-write leaves nothing behind (elsewhere, or on a file system
without such files, it is an ordinary hidden ``.NAME.*.tmp`` file).

A symbolic link is written through: its target (followed to the end of a
chain of links, created if the link dangles) receives the new content and the
link stays a link; a link that loops is refused with one sentence
(:class:`mfstein.ground.errors.ParameterError`).  Standard library only, so it is
cheap to import.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

__all__ = ["atomic_write", "write_target"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_target(path: str | os.PathLike) -> Path:
    """The file a write to ``path`` must replace: ``path`` itself, or, for a
    symbolic link (dangling or not), the file at the end of its chain of links.

    Raises :class:`ParameterError` for a link that loops (or a chain too long
    to follow).
    """
    target = Path(path)
    if not target.is_symlink():
        return target
    resolved = Path(os.path.realpath(target))
    if resolved.is_symlink():
        from mfstein.ground.errors import ParameterError

        raise ParameterError(
            f"{str(path)!r} is a symbolic link that loops; point it at a file or remove it."
        )
    return resolved


def atomic_write(
    path: str | os.PathLike,
    data: str | bytes | Callable[[IO], None],
    *,
    binary: bool | None = None,
    durable: bool = True,
) -> Path:
    """Write ``data`` to ``path`` atomically and return the path.

    Parameters
    ----------
    path:
        Target file; missing parent directories are created.
    data:
        Text, bytes, or a callable that writes to the open file object (e.g.
        ``lambda fh: json.dump(obj, fh)`` or ``lambda fh: fig.savefig(fh,
        format="png")``).
    binary:
        Open the temporary file in binary mode; by default binary for bytes,
        text for str, and binary for a callable.
    durable:
        Flush the new content to disk (``fsync``) before it takes the name, so that
        it survives a power loss or a system crash (the default).  ``False`` for a
        file its reader checks (a record ending with its digest,
        :mod:`mfstein.ground.records`): the rename is as atomic, but after a crash of
        the system the file may be empty or torn, which the check turns into a
        miss; the write then waits for no disk (for a 580 KB file some 1.5 ms of
        CPU and 5-10 ms of wall time less).
    """
    target = write_target(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if binary is None:
        binary = not isinstance(data, str)
    mode = {"mode": "wb"} if binary else {"mode": "w", "encoding": "utf-8"}

    def fill(fd: int, closefd: bool) -> None:
        with os.fdopen(fd, **mode, closefd=closefd) as fh:
            if callable(data):
                data(fh)
            else:
                fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
            os.chmod(fh.fileno(), 0o666 & ~_umask())

    fd = _unnamed_file(target.parent)
    if fd is not None:
        try:
            fill(fd, closefd=False)
            if _link_into_place(fd, target):
                return target
        finally:
            os.close(fd)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    with _removed_on_error(tmp):
        fill(fd, closefd=True)
        os.replace(tmp, target)
    return target


@contextmanager
def _removed_on_error(tmp: str | Path) -> Iterator[None]:
    """Remove the temporary file ``tmp`` when the block fails (Ctrl-C included)."""
    try:
        yield
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def _unnamed_file(directory: Path) -> int | None:
    """A new file in ``directory`` that has no name yet (Linux ``O_TMPFILE``), open for
    writing; ``None`` where the system or the file system has no such files."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None:
        return None
    try:
        return os.open(directory, flag | os.O_WRONLY, 0o600)
    except OSError:  # EOPNOTSUPP, EISDIR, EINVAL: a file system without them
        return None


def _link_into_place(fd: int, target: Path) -> bool:
    """Give the unnamed file ``fd`` the name ``target`` (replacing it atomically);
    ``False``, with nothing changed, where it cannot be linked (no ``/proc``).

    The file gets a temporary name first (a link cannot replace a file), for
    the two system calls from link to rename only.
    """
    import secrets

    tmp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
    try:
        # a directory descriptor makes os.link call linkat(), which follows the magic
        # link /proc/self/fd/N to the file (link() would link the symbolic link itself)
        here = os.open(tmp.parent, os.O_RDONLY)
    except OSError:
        return False
    try:
        os.link(f"/proc/self/fd/{fd}", tmp.name, src_dir_fd=here, dst_dir_fd=here)
    except OSError:
        return False
    finally:
        os.close(here)
    with _removed_on_error(tmp):
        os.replace(tmp, target)
    return True
